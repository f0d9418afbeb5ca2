/* bpe.c — the byte-level BPE tokenizer: GPT-2's files (load, encode,
 * decode, display), and the engine that tokenizer_json.c configures for
 * Hugging Face tokenizer.json files (see "tokenizer.json" below).
 *
 * For GPT-2's files, encode(text) runs three stages, exactly as OpenAI's
 * encoder.py does:
 *
 *   bytes ──(1) UTF-8 decode with replacement──▶ well-formed UTF-8
 *         ──(2) pre-tokenizer: GPT-2's regex, written out by hand──▶ pieces
 *         ──(3) BPE on each piece's bytes: merge by rank, lowest first──▶ ids
 *
 * (1) The C API takes raw bytes, the JS side takes strings. A JS string made
 *     from bytes (TextDecoder, a browser's default) has every ill-formed UTF-8
 *     subsequence replaced by U+FFFD, one per "maximal subpart" (WHATWG
 *     Encoding §4, Unicode §3.9): a lead byte and the continuation bytes it
 *     accepted so far become one U+FFFD, the offending byte is then read
 *     again. We do the same, so a byte string and the JS string decoded from
 *     it give the same ids: e.g. "a\xFFb" encodes like "a\uFFFDb", and
 *     "\xE2\x82" (a cut-off "€") like "\uFFFD". decode(encode(x)) then gives
 *     the replaced text, not x. Well-formed UTF-8 is never changed.
 *
 * (2) The pattern is
 *         's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *     tried left to right at each position. \p{L}, \p{N} and \s come from
 *     unicode_tables.h; \s is JavaScript's (js-tiktoken, gpt-3-encoder), which
 *     differs from Python's `regex` on two code points: U+FEFF is \s in JS and
 *     not in Python, U+0085 the other way round. The contractions are
 *     lowercase ASCII only ("'S" is not one) and only U+0020 can be the
 *     optional leading space. The subtle alternative is \s+(?!\S): a run of
 *     whitespace followed by a non-space gives back its last character, which
 *     then starts the next piece (" " + word, or a lone "\n"): "a   b" is
 *     ["a", "  ", " b"].
 *
 * (3) Each piece's bytes start as single-byte tokens; the adjacent pair with
 *     the lowest merge rank is merged, every occurrence left to right, until
 *     no pair has a rank (encoder.py's bpe()). We keep the symbols in a linked
 *     list and the candidate pairs in a min-heap keyed by (rank, position), so
 *     a piece of m bytes costs O(m log m), not O(m^2): a megabyte-long word or
 *     run of spaces is fine. Popping by (rank, position) is the reference's
 *     "all occurrences of the best pair, left to right" because a merge only
 *     creates pairs of higher rank, which alab_bpe_load checks (every merge's
 *     parts are bytes or results of earlier merges).
 *
 * Special tokens: "<|endoftext|>" is in the vocabulary (id 50256), but text is
 * not scanned for it: the characters "<|endoftext|>" encode as ordinary text
 * (like js-tiktoken with no special tokens allowed or disallowed). Callers
 * that want the token put id 50256 in the id list themselves.
 *
 * tokenizer.json (b->hf): between (1) and (2) the text is cut at the added
 * tokens (a byte trie, leftmost then longest, as tokenizers.js and the Rust
 * crate do; lstrip / rstrip eat the whitespace beside them), each stretch
 * between them is NFC-normalized if the file says so (nfc.c) and cut again
 * at the added tokens marked "normalized"; (2) is the family's pre-tokenizer
 * (GPT-2's regex, the same after single ASCII digits for SmolLM2, or Llama
 * 3's / Qwen2's Split pattern: next_piece_split); with ignore_merges a piece
 * that is a whole token skips (3). The merges' order is not checked there:
 * (3) is Hugging Face's own loop (lowest rank, then leftmost) in any order.
 *
 * SentencePiece-style files (b->sp, "SentencePiece-style BPE" below): the
 * same cut at added tokens, then the normalizer's steps on each stretch, the
 * normalized added tokens, Metaspace if any, and (3) over the characters of
 * each piece instead of its bytes, with byte fallback / <unk> for a character
 * that has no token. The whole stretch is one piece when there is no
 * pre-tokenizer, which the heap keeps at O(n log n).
 *
 * Files. vocab.json: a JSON object of token strings (in GPT-2's byte-to-
 * unicode alphabet, below) to ids; the ids must be exactly 0..V-1 (each once,
 * no gaps; V <= ALAB_MAX_VOCAB), every single byte must be a token, and two
 * keys may not spell the same bytes. merges.txt: an optional first line
 * starting with "#version", then one merge per line, "left right" separated
 * by one space (a trailing "\r" is ignored); left, right and left+right must
 * all be tokens of vocab.json, left and right must be single bytes or the
 * results of earlier lines, a pair may appear once, and only the last line
 * may be empty. Anything else is ALAB_EVOCAB / ALAB_EMERGES with the line.
 */
#include "bpe_internal.h"
#include "json.h"
#include "nfc.h"
#include "unicode_tables.h"

#include <stdarg.h>
#include <stddef.h> /* before sys/random.h: Emscripten's needs size_t */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* vocab.json of 1M tokens is ~30 MB, GPT-2's merges.txt 0.5 MB; refuse
 * anything far beyond that. */
#define MAX_VOCAB_JSON_BYTES (256u << 20)
#define MAX_MERGES_BYTES (256u << 20)

/* ------------------------------------------------------------------------ */
/* GPT-2's byte <-> unicode alphabet                                          */
/* ------------------------------------------------------------------------ */

/* encoder.py bytes_to_unicode(): vocab.json spells each byte as a printable
 * character. Bytes that are printable already ('!'..'~', U+00A1..U+00AC,
 * U+00AE..U+00FF) stand for themselves; the other 68 (controls, space, DEL,
 * U+00A0, U+00AD, ...) become U+0100, U+0101, ... in byte order. So a space
 * is "Ġ" (U+0120) and a newline "Ċ" (U+010A). */
void bpe_byte_alphabet(int16_t char_to_byte[N_BYTE_CHARS]) {
    for (int c = 0; c < N_BYTE_CHARS; c++) char_to_byte[c] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        char_to_byte[printable ? b : 256 + n++] = (int16_t)b;
    }
}

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                      */
/* ------------------------------------------------------------------------ */

/* Decode one character of s (n >= 1 bytes available), WHATWG style: returns
 * the bytes consumed and the code point; an ill-formed sequence gives U+FFFD
 * and consumes its maximal subpart (at least one byte). */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t need;
    uint32_t v;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the next byte */
    if (c >= 0xC2 && c <= 0xDF) { need = 1; v = c & 0x1Fu; }
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 2; v = c & 0x0Fu;
        if (c == 0xE0) lo = 0xA0; /* no overlongs  */
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3; v = c & 0x07u;
        if (c == 0xF0) lo = 0x90; /* no overlongs       */
        if (c == 0xF4) hi = 0x8F; /* nothing > U+10FFFF */
    } else { *cp = 0xFFFD; return 1; }
    for (size_t i = 1; i <= need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) { *cp = 0xFFFD; return i; }
        v = (v << 6) | (s[i] & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = v;
    return need + 1;
}

static int hex_digit(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decode one character of text known to be well formed. */
static inline uint32_t utf8_valid(const unsigned char *s, size_t *len) {
    unsigned char c = s[0];
    if (c < 0x80) { *len = 1; return c; }
    if (c < 0xE0) { *len = 2; return ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu); }
    if (c < 0xF0) { *len = 3; return ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu); }
    *len = 4;
    return ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
}

/* Is s[0..n) well-formed UTF-8? */
static int utf8_is_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        /* skip ASCII 8 bytes at a time */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & UINT64_C(0x8080808080808080)) break;
            i += 8;
        }
        if (i >= n) break;
        uint32_t cp;
        size_t k = utf8_next(s + i, n - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && s[i] == 0xEF)) return 0; /* bad, unless a real U+FFFD */
        i += k;
    }
    return 1;
}

/* Copy of s[0..n) with every ill-formed subsequence replaced by U+FFFD
 * (EF BF BD). *out_len receives its length. NULL if out of memory. */
static unsigned char *utf8_replace_invalid(const unsigned char *s, size_t n, size_t *out_len) {
    unsigned char *out = malloc(3 * n + 1); /* each bad byte becomes at most 3 */
    if (!out) return NULL;
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_next(s + i, n - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && s[i] == 0xEF)) {
            out[o++] = 0xEF; out[o++] = 0xBF; out[o++] = 0xBD;
        } else {
            memcpy(out + o, s + i, k);
            o += k;
        }
        i += k;
    }
    *out_len = o;
    return out;
}

/* ------------------------------------------------------------------------ */
/* Hash tables                                                                */
/* ------------------------------------------------------------------------ */

/* Every table that a file fills (token bytes -> id, merge pair -> rank,
 * added-token trie edges) hashes under a key drawn at random for each
 * tokenizer (getentropy; in wasm the host's crypto.getRandomValues):
 * SipHash-1-3 for token bytes, tabulation (below) for 40-bit keys.
 * A file cannot be crafted to collide without knowing the key, so loading
 * stays linear in the number of entries (an unkeyed FNV-1a let 100k
 * chosen tokens share 1,024 slots). */
static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

#define SIPROUND                                                              \
    do {                                                                      \
        v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32);         \
        v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;                              \
        v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;                              \
        v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32);         \
    } while (0)

static uint64_t siphash13(uint64_t k0, uint64_t k1, const unsigned char *s, size_t n) {
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575), v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261), v3 = k1 ^ UINT64_C(0x7465646279746573);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t m = 0;
        for (int j = 7; j >= 0; j--) m = (m << 8) | s[i + j]; /* little endian */
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t last = (uint64_t)n << 56;
    for (size_t j = 0; i + j < n; j++) last |= (uint64_t)s[i + j] << (8 * j);
    v3 ^= last;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-1-3 of one 64-bit word (the same as siphash13 of its 8 bytes). */
static inline uint64_t siphash13_u64(uint64_t k0, uint64_t k1, uint64_t m) {
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575), v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261), v3 = k1 ^ UINT64_C(0x7465646279746573);
    v3 ^= m;
    SIPROUND;
    v0 ^= m;
    uint64_t last = (uint64_t)8 << 56;
    v3 ^= last;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static void random_key(alab_bpe *b) {
    uint64_t k[2] = {0, 0};
    if (getentropy(k, sizeof k) != 0) {
        /* No entropy source (a kernel without getrandom): addresses and a
         * counter, mixed. Weaker, but not written in the file. */
        static uint64_t counter;
        k[0] = (uint64_t)(uintptr_t)b ^ ((uint64_t)(uintptr_t)&counter << 20);
        k[1] = (uint64_t)(uintptr_t)&k ^ (++counter * UINT64_C(0x9e3779b97f4a7c15));
        k[0] = siphash13_u64(k[0], k[1], k[1] ^ UINT64_C(0x5851f42d4c957f2d));
    }
    b->k0 = k[0];
    b->k1 = k[1];
    for (int i = 0; i < 5 * 256; i++) b->tab[i >> 8][i & 255] = siphash13_u64(b->k0, b->k1, (uint64_t)i);
}

static inline uint64_t hash_bytes(const alab_bpe *b, const unsigned char *s, size_t n) {
    return siphash13(b->k0, b->k1, s, n);
}

/* 40-bit keys (merge pairs, trie edges), looked up in the encoder's inner
 * loop, use simple tabulation hashing: five tables of 256 random words,
 * one per byte of the key, XORed. It is nearly as fast as an unkeyed mixer, and
 * with random tables linear probing takes O(1) expected probes whatever the
 * keys (Patrascu and Thorup, "The power of simple tabulation hashing",
 * 2012); the tables come from this tokenizer's SipHash key. */
static inline uint64_t hash_u64(const alab_bpe *b, uint64_t x) {
    return b->tab[0][x & 255] ^ b->tab[1][(x >> 8) & 255] ^ b->tab[2][(x >> 16) & 255] ^
           b->tab[3][(x >> 24) & 255] ^ b->tab[4][(x >> 32) & 255];
}

static uint32_t pow2_at_least(uint64_t n) {
    uint32_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

static int vocab_find(const vocab_index *ix, const alab_bpe *b, const unsigned char *s, size_t n) {
    for (uint32_t i = (uint32_t)hash_bytes(b, s, n) & ix->mask;; i = (i + 1) & ix->mask) {
        int32_t id = ix->slots[i] - 1;
        if (id < 0) return -1;
        if (b->off[id + 1] - b->off[id] - 1 == n && memcmp(b->bytes + b->off[id], s, n) == 0) return id;
    }
}

/* Insert token id; returns the id already holding the same bytes, or -1. */
static int vocab_insert(vocab_index *ix, alab_bpe *b, int id) {
    const unsigned char *s = (const unsigned char *)b->bytes + b->off[id];
    size_t n = b->off[id + 1] - b->off[id] - 1;
    uint32_t i = (uint32_t)hash_bytes(b, s, n) & ix->mask;
    for (;; i = (i + 1) & ix->mask) {
        b->probes++;
        int32_t other = ix->slots[i] - 1;
        if (other < 0) break;
        if (b->off[other + 1] - b->off[other] - 1 == n && memcmp(b->bytes + b->off[other], s, n) == 0) return other;
    }
    ix->slots[i] = id + 1;
    return -1;
}

/* Token ids are < ALAB_MAX_VOCAB < 2^20, so a pair fits in 40 bits. */
static inline uint64_t pair_key(int left, int right) {
    return ((uint64_t)(uint32_t)left << 20) | (uint32_t)right;
}

/* The merge of (left, right), or NULL if the pair never merges. */
static inline const merge_slot *merge_find(const alab_bpe *b, int left, int right) {
    uint64_t key = pair_key(left, right);
    for (uint32_t i = (uint32_t)hash_u64(b, key) & b->merge_mask;; i = (i + 1) & b->merge_mask) {
        const merge_slot *m = &b->merges[i];
        if (m->rank < 0) return NULL;
        if (m->key == key) return m;
    }
}

/* ------------------------------------------------------------------------ */
/* Loading the vocabulary (vocab.json, or tokenizer.json's model.vocab)       */
/* ------------------------------------------------------------------------ */

/* Bytes spelled by a vocabulary key (valid UTF-8, as json.c guarantees):
 * writes them to out (if not NULL), returns how many, or -1 if a character
 * is outside GPT-2's byte alphabet. */
static long key_to_bytes(unsigned char *out, const char *key, size_t len, const int16_t *char_to_byte) {
    const unsigned char *s = (const unsigned char *)key;
    if (!char_to_byte) { /* sp: the key's own UTF-8 */
        if (out) memcpy(out, s, len);
        return (long)len;
    }
    long n = 0;
    for (size_t i = 0; i < len;) {
        size_t k;
        uint32_t cp = utf8_valid(s + i, &k);
        if (cp >= N_BYTE_CHARS || char_to_byte[cp] < 0) return -1;
        if (out) out[n] = (unsigned char)char_to_byte[cp];
        n++;
        i += k;
    }
    return n;
}

int bpe_init(alab_bpe *b) {
    memset(b, 0, sizeof *b);
    random_key(b);
    b->bos = -1;
    b->unk = -1;
    b->min_raw_in = b->min_norm = SIZE_MAX;
    b->max_ids_per_byte = 3; /* vocab.json + merges.txt: one id per byte of U+FFFD-repaired text at most */
    return ALAB_OK;
}

int bpe_load_vocab_object(alab_bpe *b, const json_value *root, const char *label, const int16_t *char_to_byte) {
    vocab_index *ix = &b->ix;
    int rc;
    int32_t *member_of_id = NULL;
    if (root->type != JSON_OBJECT) {
        rc = alab_fail(ALAB_EVOCAB, "%s: expected an object of token -> id", label);
        goto done;
    }
    if (!char_to_byte && (root->n < 1 || root->n > ALAB_MAX_VOCAB)) {
        rc = alab_fail(ALAB_EVOCAB, "%s: %u tokens; a vocabulary has 1 to %d", label, root->n, ALAB_MAX_VOCAB);
        goto done;
    }
    if (char_to_byte && (root->n < 256 - 13 || root->n > ALAB_MAX_VOCAB)) { /* 13: the bytes no UTF-8 text holds may be absent */
        rc = alab_fail(ALAB_EVOCAB, "%s: %u tokens; a byte-level vocabulary has 256 (243 without the bytes no UTF-8 text holds) to %d",
                       label, root->n, ALAB_MAX_VOCAB);
        goto done;
    }
    int V = (int)root->n;
    member_of_id = malloc((size_t)V * sizeof *member_of_id);
    b->off = malloc(((size_t)V + 1) * sizeof *b->off);
    if (!member_of_id || !b->off) { rc = alab_fail(ALAB_ENOMEM, "%s: out of memory", label); goto done; }
    for (int i = 0; i < V; i++) member_of_id[i] = -1;

    /* Ids: each 0..V-1 exactly once. Keys: GPT-2 alphabet, non-empty. */
    uint64_t total = 0;
    for (int i = 0; i < V; i++) {
        const json_value *v = &root->u.items[i];
        int64_t id;
        if (json_int64(v, &id) != 0) {
            rc = alab_fail(ALAB_EVOCAB, "%s: the id of token \"%.40s\" is not an integer", label, v->key);
            goto done;
        }
        if (id < 0 || id >= V) {
            rc = alab_fail(ALAB_EVOCAB, "%s: id %lld of token \"%.40s\" is outside 0..%d "
                           "(ids must be 0..V-1 without gaps)", label, (long long)id, v->key, V - 1);
            goto done;
        }
        if (member_of_id[id] >= 0) {
            rc = alab_fail(ALAB_EVOCAB, "%s: id %lld is given to both \"%.40s\" and \"%.40s\"",
                           label, (long long)id, root->u.items[member_of_id[id]].key, v->key);
            goto done;
        }
        long n = key_to_bytes(NULL, v->key, v->key_len, char_to_byte);
        if (n <= 0) {
            rc = alab_fail(ALAB_EVOCAB, "%s: token \"%.40s\" %s", label, v->key,
                           n == 0 ? "is empty" : "has a character outside GPT-2's byte alphabet");
            goto done;
        }
        member_of_id[id] = i;
        total += (uint64_t)n + 1;
    }
    if (total > UINT32_MAX / 2) { rc = alab_fail(ALAB_EVOCAB, "%s: tokens too long", label); goto done; }

    /* Token bytes, in id order, each NUL-terminated. */
    b->bytes = malloc((size_t)total);
    ix->mask = pow2_at_least(2 * (uint64_t)V) - 1;
    ix->slots = calloc((size_t)ix->mask + 1, sizeof *ix->slots);
    if (!b->bytes || !ix->slots) { rc = alab_fail(ALAB_ENOMEM, "%s: out of memory", label); goto done; }
    uint32_t o = 0;
    for (int id = 0; id < V; id++) {
        const json_value *v = &root->u.items[member_of_id[id]];
        long n = key_to_bytes((unsigned char *)b->bytes + o, v->key, v->key_len, char_to_byte);
        b->off[id] = o;
        o += (uint32_t)n;
        b->bytes[o++] = '\0';
    }
    b->off[V] = o;
    b->V = b->V_model = V;
    for (int id = 0; id < V; id++) {
        int other = vocab_insert(ix, b, id);
        if (other >= 0) {
            rc = alab_fail(ALAB_EVOCAB, "%s: tokens %d and %d spell the same bytes \"%.40s\"",
                           label, other, id, root->u.items[member_of_id[id]].key);
            goto done;
        }
    }
    /* Every byte that text can hold needs a token, or some text could not be encoded. Encoding replaces
     * ill-formed UTF-8 by U+FFFD first, so 0xC0, 0xC1 and 0xF5..0xFF never reach the pieces: a vocabulary may
     * lack them (GPT-NeoX's, Pythia's, does), and their byte_id is -1. */
    if (!char_to_byte) { /* sp: the byte tokens "<0x00>" .. "<0xFF>" (as tokenizers.js spells them), any subset */
        for (int c = 0; c < 256; c++) {
            char name[8];
            snprintf(name, sizeof name, "<0x%02X>", c);
            b->byte_id[c] = vocab_find(ix, b, (const unsigned char *)name, 6);
        }
        rc = ALAB_OK;
        goto done;
    }
    for (int c = 0; c < 256; c++) {
        unsigned char byte = (unsigned char)c;
        b->byte_id[c] = vocab_find(ix, b, &byte, 1);
        if (b->byte_id[c] < 0 && !bpe_byte_unreachable(c)) {
            rc = alab_fail(ALAB_EVOCAB, "%s: no token for the byte 0x%02X", label, c);
            goto done;
        }
    }
    rc = ALAB_OK;
done:
    free(member_of_id);
    return rc;
}

static int load_vocab(alab_bpe *b, const char *text, size_t len, const int16_t *char_to_byte) {
    json_doc doc;
    int rc = json_parse(&doc, text, len, MAX_VOCAB_JSON_BYTES);
    if (rc == ALAB_EJSON) return alab_fail(ALAB_EJSON, "vocab.json: %s", doc.err);
    if (rc == ALAB_ELIMIT)
        return alab_fail(ALAB_EVOCAB, "vocab.json: %zu bytes is over the limit of %u", len, MAX_VOCAB_JSON_BYTES);
    if (rc) return alab_fail(rc, "vocab.json: %s", doc.err);
    rc = bpe_load_vocab_object(b, doc.root, "vocab.json", char_to_byte);
    json_free(&doc);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Loading the merges (merges.txt, or tokenizer.json's model.merges)          */
/* ------------------------------------------------------------------------ */

/* Id of the token spelled by the characters s[0..n), or -1 (with *why set)
 * if they are not valid UTF-8 in the alphabet or no token. */
static int merge_part(const alab_bpe *b, const unsigned char *s, size_t n,
                      unsigned char *scratch, size_t *n_bytes, const int16_t *char_to_byte, const char **why) {
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next(s + i, n - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && s[i] == 0xEF)) { *why = "is not valid UTF-8"; return -1; }
        if (!char_to_byte) { /* sp: the characters themselves */
            memcpy(scratch + m, s + i, k);
            m += k;
            i += k;
            continue;
        }
        if (cp >= N_BYTE_CHARS || char_to_byte[cp] < 0) { *why = "has a character outside GPT-2's byte alphabet"; return -1; }
        scratch[m++] = (unsigned char)char_to_byte[cp];
        i += k;
    }
    *n_bytes = m;
    int id = vocab_find(&b->ix, b, scratch, m);
    if (id < 0) *why = "is not a token of the vocabulary";
    return id;
}

int bpe_merges_begin(alab_bpe *b, size_t n, int32_t **made_at) {
    *made_at = NULL;
    if (n > (size_t)INT32_MAX / 4) return alab_fail(ALAB_EMERGES, "merges: %zu merges is too many", n);
    b->merge_mask = pow2_at_least(2 * (uint64_t)n) - 1;
    b->merges = malloc(((size_t)b->merge_mask + 1) * sizeof *b->merges);
    *made_at = malloc((size_t)b->V * sizeof **made_at); /* rank that first made each token */
    if (!b->merges || !*made_at) return alab_fail(ALAB_ENOMEM, "merges: out of memory");
    for (uint32_t i = 0; i <= b->merge_mask; i++) b->merges[i].rank = -1;
    for (int i = 0; i < b->V; i++) (*made_at)[i] = INT32_MAX; /* not made by any merge (yet) */
    for (int c = 0; c < 256; c++)
        if (b->byte_id[c] >= 0) (*made_at)[b->byte_id[c]] = -1;
    return ALAB_OK;
}

/* One merge "l r" (both in GPT-2's alphabet); scratch holds ll + rl bytes.
 * where: "merges.txt line 7" or "tokenizer.json model.merges[6]". */
int bpe_add_merge(alab_bpe *b, int32_t *made_at, int strict, const unsigned char *l, size_t ll,
                  const unsigned char *r, size_t rl, unsigned char *scratch, const int16_t *char_to_byte,
                  const char *where) {
    const char *why = NULL;
    size_t nl_bytes = 0, nr_bytes = 0;
    int left = merge_part(b, l, ll, scratch, &nl_bytes, char_to_byte, &why);
    int right = left < 0 ? -1 : merge_part(b, r, rl, scratch + nl_bytes, &nr_bytes, char_to_byte, &why);
    if (left < 0 || right < 0)
        return alab_fail(ALAB_EMERGES, "%s: \"%.*s\" %s", where, (int)(left < 0 ? (ll < 60 ? ll : 60) : (rl < 60 ? rl : 60)),
                         (const char *)(left < 0 ? l : r), why);
    /* scratch now holds left's bytes then right's: the merged token. */
    int merged = vocab_find(&b->ix, b, scratch, nl_bytes + nr_bytes);
    if (merged < 0)
        return alab_fail(ALAB_EMERGES, "%s: the merge \"%.*s\" + \"%.*s\" is not a token of the vocabulary", where,
                         (int)(ll < 40 ? ll : 40), (const char *)l, (int)(rl < 40 ? rl : 40), (const char *)r);
    int rank = b->n_merges;
    if (strict && (made_at[left] >= rank || made_at[right] >= rank))
        return alab_fail(ALAB_EMERGES, "%s: \"%.*s\" is neither a byte nor made by an earlier line", where,
                         (int)(made_at[left] >= rank ? (ll < 60 ? ll : 60) : (rl < 60 ? rl : 60)),
                         (const char *)(made_at[left] >= rank ? l : r));
    uint64_t key = pair_key(left, right);
    uint32_t i = (uint32_t)hash_u64(b, key) & b->merge_mask;
    for (;; i = (i + 1) & b->merge_mask) {
        b->probes++;
        if (b->merges[i].rank < 0) break;
        if (b->merges[i].key == key)
            return alab_fail(ALAB_EMERGES, "%s repeats the merge number %d (0-based)", where, b->merges[i].rank);
    }
    if ((uint32_t)b->n_merges >= b->merge_mask) return alab_fail(ALAB_EMERGES, "%s: more merges than announced", where);
    b->merges[i] = (merge_slot){key, rank, merged};
    if (made_at[merged] == INT32_MAX) made_at[merged] = rank;
    b->n_merges++;
    return ALAB_OK;
}

/* merges.txt: lines end in LF, CRLF or a lone CR (old Mac files), all read
 * alike. */
static int load_merges(alab_bpe *b, const char *text, size_t len, const int16_t *char_to_byte) {
    const unsigned char *s = (const unsigned char *)text;
    if (len > MAX_MERGES_BYTES)
        return alab_fail(ALAB_EMERGES, "merges.txt: %zu bytes is over the limit of %u", len, MAX_MERGES_BYTES);
    /* Capacity: at most one merge per line. */
    size_t n_lines = 1;
    for (size_t i = 0; i < len; i++) n_lines += s[i] == '\n' || s[i] == '\r';
    int32_t *made_at = NULL;
    unsigned char *scratch = malloc(len + 1);
    int rc = scratch ? bpe_merges_begin(b, n_lines, &made_at) : alab_fail(ALAB_ENOMEM, "merges.txt: out of memory");
    if (rc) goto done;

    size_t pos = 0;
    char where[48];
    for (long line = 1; pos < len; line++) {
        size_t end = pos;
        while (end < len && s[end] != '\n' && s[end] != '\r') end++;
        const unsigned char *ln = s + pos;
        size_t n = end - pos;
        pos = end;
        if (pos < len) pos += (s[pos] == '\r' && pos + 1 < len && s[pos + 1] == '\n') ? 2 : 1;

        if (line == 1 && n >= 8 && memcmp(ln, "#version", 8) == 0) continue;
        if (n == 0) {
            if (pos >= len) break; /* the file's final newline */
            rc = alab_fail(ALAB_EMERGES, "merges.txt line %ld is empty", line);
            goto done;
        }
        const unsigned char *sp = memchr(ln, ' ', n);
        if (!sp || sp == ln || sp == ln + n - 1 || memchr(sp + 1, ' ', n - (size_t)(sp - ln) - 1)) {
            rc = alab_fail(ALAB_EMERGES, "merges.txt line %ld: expected two tokens separated by one space, got \"%.*s\"",
                           line, (int)(n < 60 ? n : 60), (const char *)ln);
            goto done;
        }
        snprintf(where, sizeof where, "merges.txt line %ld", line);
        rc = bpe_add_merge(b, made_at, 1, ln, (size_t)(sp - ln), sp + 1, n - (size_t)(sp - ln) - 1, scratch,
                           char_to_byte, where);
        if (rc) goto done;
    }
done:
    free(made_at);
    free(scratch);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Build / free                                                               */
/* ------------------------------------------------------------------------ */

int alab_bpe_load(alab_bpe **out, const char *vocab, size_t vocab_len, const char *merges, size_t merges_len) {
    if (!out) return alab_fail(ALAB_EINVAL, "alab_bpe_load: out is NULL");
    *out = NULL;
    if (!vocab || (!merges && merges_len > 0))
        return alab_fail(ALAB_EINVAL, "alab_bpe_load: vocab or merges is NULL");
    alab_bpe *b = malloc(sizeof *b);
    if (!b) return alab_fail(ALAB_ENOMEM, "alab_bpe_load: out of memory");
    bpe_init(b);
    int16_t char_to_byte[N_BYTE_CHARS];
    bpe_byte_alphabet(char_to_byte);
    int rc = load_vocab(b, vocab, vocab_len, char_to_byte);
    if (rc == ALAB_OK) rc = load_merges(b, merges ? merges : "", merges_len, char_to_byte);
    if (rc) {
        alab_bpe_free(b);
        return rc;
    }
    free(b->ix.slots); /* without ignore_merges only loading looks tokens up by their bytes */
    b->ix.slots = NULL;
    *out = b;
    return ALAB_OK;
}

static void matcher_free(token_matcher *t);

void alab_bpe_free(alab_bpe *b) {
    if (!b) return;
    free(b->off);
    free(b->bytes);
    free(b->merges);
    free(b->ix.slots);
    free(b->added);
    matcher_free(&b->trie_raw);
    matcher_free(&b->trie_norm);
    for (int i = 0; i < b->n_norm; i++) {
        free(b->norm[i].pat);
        free(b->norm[i].with);
    }
    for (int i = 0; i < b->dec.n_replace; i++) {
        free(b->dec.replace[i].pat);
        free(b->dec.replace[i].with);
    }
    free(b->doff);
    free(b->dbytes);
    free(b);
}

int alab_bpe_vocab_size(const alab_bpe *b) {
    return b ? b->V : alab_fail(ALAB_EINVAL, "alab_bpe_vocab_size: bpe is NULL");
}

int alab_bpe_bos_to_add(const alab_bpe *b) {
    return b ? b->bos : alab_fail(ALAB_EINVAL, "alab_bpe_bos_to_add: bpe is NULL");
}

uint64_t alab_bpe_load_probes(const alab_bpe *b) { return b ? b->probes : 0; }

/* ------------------------------------------------------------------------ */
/* (2) Pre-tokenizer                                                          */
/* ------------------------------------------------------------------------ */

static inline int in_ranges(const uint32_t (*r)[2], int n, uint32_t cp) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        if (cp < r[mid][0]) hi = mid - 1;
        else if (cp > r[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

#define N_RANGES(t) ((int)(sizeof(t) / sizeof((t)[0])))

/* UNI_LETTER (\p{L}), UNI_NUMBER (\p{N}), UNI_SPACE (\s) or UNI_OTHER. */
static inline int cp_class(uint32_t cp) {
    if (cp < 256) return uni_latin1_class[cp];
    if (in_ranges(uni_letter_ranges, N_RANGES(uni_letter_ranges), cp)) return UNI_LETTER;
    if (in_ranges(uni_number_ranges, N_RANGES(uni_number_ranges), cp)) return UNI_NUMBER;
    if (in_ranges(uni_space_ranges, N_RANGES(uni_space_ranges), cp)) return UNI_SPACE;
    return UNI_OTHER;
}

static inline int class_at(const unsigned char *s, size_t i, size_t *len) {
    if (s[i] < 0x80) { *len = 1; return uni_latin1_class[s[i]]; }
    return cp_class(utf8_valid(s + i, len));
}

/* End of the run of characters of class k starting at i. */
static size_t run_end(const unsigned char *s, size_t i, size_t n, int k) {
    while (i < n) {
        size_t len;
        if (class_at(s, i, &len) != k) break;
        i += len;
    }
    return i;
}

/* End of the piece that starts at i (< n) in well-formed UTF-8 s[0..n). */
static size_t next_piece(const unsigned char *s, size_t i, size_t n) {
    /* 's|'t|'re|'ve|'m|'ll|'d */
    if (s[i] == '\'' && i + 1 < n) {
        unsigned char a = s[i + 1], c = i + 2 < n ? s[i + 2] : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if ((a == 'r' && c == 'e') || (a == 'v' && c == 'e') || (a == 'l' && c == 'l')) return i + 3;
    }
    size_t len;
    int k = class_at(s, i, &len);
    /*  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+ */
    if (k != UNI_SPACE) return run_end(s, i + len, n, k);
    if (s[i] == ' ' && i + 1 < n) {
        size_t len1;
        int k1 = class_at(s, i + 1, &len1);
        if (k1 != UNI_SPACE) return run_end(s, i + 1 + len1, n, k1);
    }
    /* \s+(?!\S) | \s+ : the whole run at the end of the text; otherwise the
     * run minus its last character, unless that leaves nothing. */
    size_t j = i, last = i;
    while (j < n) {
        size_t l;
        if (class_at(s, j, &l) != UNI_SPACE) break;
        last = j;
        j += l;
    }
    return (j == n || last == i) ? j : last;
}

/* The pre-tokenizers of tokenizer.json's Split patterns (Llama 3, Qwen2/3):
 *
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 *   | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * (Qwen: \p{N} instead of \p{N}{1,3}). Hugging Face's Rust tokenizers run it
 * with Oniguruma, tokenizers.js rewrites it for JavaScript with \s as
 * \p{White_Space}: unlike JavaScript's \s, U+0085 is a space and U+FEFF is
 * not; hf_class_at() follows that. (?i:) folds ASCII only ("'S", "'LL"; the
 * long s U+017F is no "s" there). Alternatives are tried left to right at
 * each position; written out, a piece starting at i is:
 *   a contraction;
 *   else a letter run, optionally after one character that is neither CR/LF,
 *     a letter nor a number (a space, a tab, punctuation);
 *   else 1..3 (Qwen: 1) numbers;
 *   else a run of "other" characters (optionally after one U+0020) and the
 *     CR/LF characters that follow it;
 *   else (a whitespace run) up to and including its last CR or LF, if any;
 *   else the run, minus its last character if a non-space follows it. */
static inline int hf_class_at(const unsigned char *s, size_t i, size_t *len) {
    if (s[i] < 0x80) { *len = 1; return uni_latin1_class[s[i]]; }
    uint32_t cp = utf8_valid(s + i, len);
    if (cp == 0x85) return UNI_SPACE;
    if (cp == 0xFEFF) return UNI_OTHER;
    return cp_class(cp);
}

static size_t hf_run_end(const unsigned char *s, size_t i, size_t n, int k) {
    while (i < n) {
        size_t len;
        if (hf_class_at(s, i, &len) != k) break;
        i += len;
    }
    return i;
}

static size_t next_piece_split(const unsigned char *s, size_t i, size_t n, int max_digits) {
    if (s[i] == '\'' && i + 1 < n) {
        unsigned char a = s[i + 1] | 0x20, c = i + 2 < n ? (s[i + 2] | 0x20) : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if ((a == 'r' && c == 'e') || (a == 'v' && c == 'e') || (a == 'l' && c == 'l')) return i + 3;
    }
    size_t len;
    int k = hf_class_at(s, i, &len);
    if (k == UNI_LETTER) return hf_run_end(s, i + len, n, UNI_LETTER);
    if (k != UNI_NUMBER && s[i] != '\r' && s[i] != '\n' && i + len < n) {
        size_t len1;
        if (hf_class_at(s, i + len, &len1) == UNI_LETTER) return hf_run_end(s, i + len + len1, n, UNI_LETTER);
    }
    if (k == UNI_NUMBER) {
        size_t j = i + len;
        for (int d = 1; d < max_digits && j < n; d++) {
            size_t l;
            if (hf_class_at(s, j, &l) != UNI_NUMBER) break;
            j += l;
        }
        return j;
    }
    size_t start = i;
    if (s[i] == ' ' && i + 1 < n) {
        size_t l;
        if (hf_class_at(s, i + 1, &l) == UNI_OTHER) { start = i + 1; k = UNI_OTHER; }
    }
    if (k == UNI_OTHER) {
        size_t j = hf_run_end(s, start, n, UNI_OTHER);
        while (j < n && (s[j] == '\r' || s[j] == '\n')) j++;
        return j;
    }
    /* a whitespace run s[i..j) */
    size_t j = i, last = i, after_crlf = 0;
    while (j < n) {
        size_t l;
        if (hf_class_at(s, j, &l) != UNI_SPACE) break;
        if (s[j] == '\r' || s[j] == '\n') after_crlf = j + 1;
        last = j;
        j += l;
    }
    if (after_crlf) return after_crlf;
    return (j == n || last == i) ? j : last;
}

/* ------------------------------------------------------------------------ */
/* Added tokens: a byte trie, leftmost-longest matches                        */
/* ------------------------------------------------------------------------ */

/* Child of v along byte c, or -1: a binary search of v's children (sorted by label). */
static int32_t ac_child(const token_matcher *t, int32_t v, unsigned char c) {
    int32_t lo = t->kid_start[v], hi = t->kid_start[v + 1];
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        const unsigned char l = t->label[t->kids[mid]];
        if (l < c) lo = mid + 1;
        else if (l > c) hi = mid;
        else return t->kids[mid];
    }
    return -1;
}

static size_t matcher_bytes(const token_matcher *t, int n_added) {
    if (!t->n) return 0;
    return ((size_t)t->n + 1) * sizeof *t->kid_start + (size_t)t->n * (sizeof *t->kids + 1 + sizeof *t->fail + sizeof *t->out) +
           ((size_t)n_added + 1) * sizeof *t->tok_len;
}

size_t alab_bpe_added_table_bytes(const alab_bpe *b) {
    return b ? matcher_bytes(&b->trie_raw, b->n_added) + matcher_bytes(&b->trie_norm, b->n_added) : 0;
}

static void matcher_free(token_matcher *t) {
    free(t->kid_start);
    free(t->kids);
    free(t->label);
    free(t->fail);
    free(t->out);
    free(t->tok_len);
    memset(t, 0, sizeof *t);
}

/* One token to build a matcher from: its bytes as matched and its index into added[]. */
typedef struct {
    const unsigned char *s;
    size_t n;
    int32_t idx;
    unsigned char *rev; /* s reversed (built here) */
} matcher_token;

static int cmp_rev(const void *x, const void *y) {
    const matcher_token *a = x, *c = y;
    const size_t n = a->n < c->n ? a->n : c->n;
    const int r = memcmp(a->rev, c->rev, n);
    return r ? r : (a->n > c->n) - (a->n < c->n);
}

/* Build t from tok[0..k) (n_added: the size of tok_len). The trie of the reversed tokens is laid out from
 * their sorted order (each token shares its longest common prefix with the one before it), so the children of
 * every node come out sorted by label; failure links in breadth-first order. ALAB_OK, ALAB_ENOMEM, or
 * ALAB_EVOCAB with *dup_a, *dup_b the indices of two tokens with the same bytes. */
static int matcher_build(token_matcher *t, matcher_token *tok, int k, int n_added, int *dup_a, int *dup_b) {
    memset(t, 0, sizeof *t);
    if (k == 0) return ALAB_OK;
    size_t total = 0;
    for (int i = 0; i < k; i++) total += tok[i].n;
    unsigned char *revbuf = malloc(total);
    const int32_t cap = (int32_t)total + 1;
    int32_t *parent = malloc((size_t)cap * sizeof *parent), *term = malloc((size_t)cap * sizeof *term);
    t->kid_start = calloc((size_t)cap + 1, sizeof *t->kid_start);
    t->kids = malloc((size_t)cap * sizeof *t->kids);
    t->label = malloc((size_t)cap);
    t->fail = malloc((size_t)cap * sizeof *t->fail);
    t->out = malloc((size_t)cap * sizeof *t->out);
    t->tok_len = calloc((size_t)n_added + 1, sizeof *t->tok_len);
    size_t longest = 0;
    for (int i = 0; i < k; i++) if (tok[i].n > longest) longest = tok[i].n;
    int32_t *path = malloc((longest + 1) * sizeof *path);
    int rc = ALAB_OK;
    if (!revbuf || !parent || !term || !path || !t->kid_start || !t->kids || !t->label || !t->fail || !t->out || !t->tok_len) {
        rc = ALAB_ENOMEM;
        goto done;
    }
    size_t o = 0;
    for (int i = 0; i < k; i++) {
        tok[i].rev = revbuf + o;
        for (size_t j = 0; j < tok[i].n; j++) tok[i].rev[j] = tok[i].s[tok[i].n - 1 - j];
        o += tok[i].n;
        t->tok_len[tok[i].idx] = (int32_t)tok[i].n;
    }
    qsort(tok, (size_t)k, sizeof *tok, cmp_rev);
    /* the trie in preorder: nodes are created in the order of the sorted tokens */
    int32_t n = 1, depth = 0;
    parent[0] = -1;
    term[0] = -1;
    t->label[0] = 0;
    path[0] = 0;
    for (int i = 0; i < k; i++) {
        size_t l = 0; /* common prefix with the token before */
        if (i > 0) {
            const size_t m = tok[i - 1].n < tok[i].n ? tok[i - 1].n : tok[i].n;
            while (l < m && tok[i - 1].rev[l] == tok[i].rev[l]) l++;
            if (l == tok[i].n && l == tok[i - 1].n) {
                *dup_a = tok[i - 1].idx;
                *dup_b = tok[i].idx;
                rc = ALAB_EVOCAB;
                goto done;
            }
        }
        depth = (int32_t)l;
        for (size_t j = l; j < tok[i].n; j++) {
            parent[n] = path[depth];
            term[n] = -1;
            t->label[n] = tok[i].rev[j];
            path[++depth] = n++;
        }
        term[path[depth]] = tok[i].idx;
    }
    t->n = n;
    /* children lists: counted, then filled in preorder (so each list is sorted by label) */
    for (int32_t v = 1; v < n; v++) t->kid_start[parent[v] + 1]++;
    for (int32_t v = 0; v < n; v++) t->kid_start[v + 1] += t->kid_start[v];
    for (int32_t v = 1; v < n; v++) t->kids[t->kid_start[parent[v]]++] = v;
    for (int32_t v = n; v > 0; v--) t->kid_start[v] = t->kid_start[v - 1]; /* back to the starts */
    t->kid_start[0] = 0;
    /* failure links and the longest token ending at each node, breadth first (parent[] becomes the queue) */
    int32_t *queue = parent, head = 0, tail = 0;
    t->fail[0] = 0;
    t->out[0] = -1;
    queue[tail++] = 0;
    while (head < tail) {
        const int32_t v = queue[head++];
        for (int32_t e = t->kid_start[v]; e < t->kid_start[v + 1]; e++) {
            const int32_t u = t->kids[e];
            const unsigned char c = t->label[u];
            int32_t f = 0;
            if (v != 0) {
                f = t->fail[v];
                int32_t g;
                while ((g = ac_child(t, f, c)) < 0 && f != 0) f = t->fail[f];
                f = g >= 0 ? g : 0;
            }
            t->fail[u] = f;
            t->out[u] = term[u] >= 0 ? term[u] : t->out[f];
            queue[tail++] = u;
        }
    }
done:
    free(revbuf);
    free(parent);
    free(term);
    free(path);
    if (rc) matcher_free(t);
    return rc;
}

/* at[p] (n) = the index of the longest added token of t that starts at s[p], or -1: the automaton of the
 * reversed tokens run over the text from its end. */
static void matcher_scan(const token_matcher *t, const unsigned char *s, size_t n, int32_t *at) {
    int32_t v = 0;
    for (size_t p = n; p-- > 0;) {
        const unsigned char c = s[p];
        int32_t g;
        while ((g = ac_child(t, v, c)) < 0 && v != 0) v = t->fail[v];
        v = g >= 0 ? g : 0;
        at[p] = t->out[v];
    }
}

/* JavaScript's trimStart / trimEnd (tokenizers.js's lstrip / rstrip): its
 * \s (the UNI_SPACE class). */
static size_t skip_space_fwd(const unsigned char *s, size_t i, size_t n) { return run_end(s, i, n, UNI_SPACE); }

static size_t skip_space_back(const unsigned char *s, size_t lo, size_t j) {
    while (j > lo) {
        size_t k = j - 1;
        while (k > lo && (s[k] & 0xC0) == 0x80) k--; /* start of the last character */
        size_t len;
        if (class_at(s, k, &len) != UNI_SPACE) break;
        j = k;
    }
    return j;
}

/* ------------------------------------------------------------------------ */
/* (3) Byte-pair merges                                                       */
/* ------------------------------------------------------------------------ */

/* A piece is a doubly linked list of symbols: a symbol is one token, first
 * one byte, growing as its right neighbour is merged into it. */
typedef struct {
    int32_t id;         /* token id; -1 once merged into its left neighbour; sp: SYM_NO_TOKEN for a character
                         * without a token (it never merges)                */
    int32_t prev, next; /* neighbours, -1 at the ends                       */
    int32_t pos;        /* sp: byte offset of the symbol's first character in its piece */
} symbol;
#define SYM_NO_TOKEN (-2)

/* Output ids and scratch space of one encode call. */
typedef struct {
    int *ids;
    int max_ids;
    size_t count;             /* ids produced (may exceed max_ids)        */
    symbol *sym;              /* the symbols of the current piece         */
    uint64_t *heap;           /* (rank << 32) | index of the left symbol  */
    size_t cap_sym, cap_heap, n_heap;
    int section0;             /* sp: the text being encoded is the input's first section (Metaspace "first") */
    int last_unk;             /* sp, fuse_unk: the last id this model call emitted is the unknown token */
    size_t budget;            /* bytes of pieces (and added tokens) this call may still handle (BPE_MAX_ENCODE_BYTES) */
    int too_long;             /* the budget ran out: ALAB_ETOOLONG, not ALAB_ENOMEM */
} encoder;

static inline void emit(encoder *e, int id) {
    if (e->count < (size_t)e->max_ids) e->ids[e->count] = id;
    e->count++;
}

/* Take n bytes of the call's budget before the work (or the buffer) they stand for; -1 when they are not there.
 * Every id comes from a claimed byte, so a call returns at most BPE_MAX_ENCODE_BYTES ids. */
static int claim(encoder *e, size_t n) {
    if (n > e->budget) {
        e->too_long = 1;
        return -1;
    }
    e->budget -= n;
    return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int heap_push(encoder *e, uint64_t key) {
    if (e->n_heap == e->cap_heap && grow((void **)&e->heap, &e->cap_heap, e->n_heap + 1, sizeof *e->heap))
        return -1;
    size_t i = e->n_heap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (e->heap[parent] <= key) break;
        e->heap[i] = e->heap[parent];
        i = parent;
    }
    e->heap[i] = key;
    return 0;
}

static uint64_t heap_pop(encoder *e) {
    uint64_t top = e->heap[0], key = e->heap[--e->n_heap];
    size_t n = e->n_heap, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && e->heap[c + 1] < e->heap[c]) c++;
        if (key <= e->heap[c]) break;
        e->heap[i] = e->heap[c];
        i = c;
    }
    if (n > 0) e->heap[i] = key;
    return top;
}

/* Push the pair that starts at symbol i, if it has a merge. */
static int push_pair(encoder *e, const alab_bpe *b, int32_t i) {
    int32_t j = e->sym[i].next;
    if (j < 0 || e->sym[i].id < 0 || e->sym[j].id < 0) return 0;
    const merge_slot *m = merge_find(b, e->sym[i].id, e->sym[j].id);
    return m ? heap_push(e, ((uint64_t)(uint32_t)m->rank << 32) | (uint32_t)i) : 0;
}

/* BPE on the bytes p[0..m) of one piece; emits its ids. Scratch: 12 bytes
 * of symbols and at most 24 bytes of heap per byte of the longest piece
 * (1 MiB of invalid bytes is one 3 MiB piece of U+FFFD: ~56 MB peak). */
/* The merges over the m symbols e->sym[0..m), linked in order: lowest rank first, then leftmost. */
static int merge_symbols(encoder *e, const alab_bpe *b, size_t m) {
    symbol *sym = e->sym;
    e->n_heap = 0;
    for (size_t i = 0; i + 1 < m; i++)
        if (push_pair(e, b, (int32_t)i)) return -1;

    while (e->n_heap > 0) {
        uint64_t top = heap_pop(e);
        int32_t rank = (int32_t)(top >> 32), i = (int32_t)(uint32_t)top;
        int32_t j = sym[i].next;
        if (sym[i].id < 0 || j < 0) continue;                   /* stale: i merged away */
        const merge_slot *mg = merge_find(b, sym[i].id, sym[j].id);
        if (!mg || mg->rank != rank) continue;                  /* stale: a neighbour changed */
        sym[i].id = mg->id;                                     /* i absorbs j */
        sym[j].id = -1;
        sym[i].next = sym[j].next;
        if (sym[j].next >= 0) sym[sym[j].next].prev = i;
        if (sym[i].prev >= 0 && push_pair(e, b, sym[i].prev)) return -1;
        if (push_pair(e, b, i)) return -1;
    }
    return 0;
}

static int bpe_piece(encoder *e, const alab_bpe *b, const unsigned char *p, size_t m) {
    if (claim(e, m)) return -1;
    if (m == 1) { emit(e, b->byte_id[p[0]]); return 0; }
    if (grow((void **)&e->sym, &e->cap_sym, m, sizeof *e->sym)) return -1;
    symbol *sym = e->sym;
    for (size_t i = 0; i < m; i++) {
        sym[i].id = b->byte_id[p[i]];
        sym[i].prev = (int32_t)i - 1;
        sym[i].next = i + 1 < m ? (int32_t)i + 1 : -1;
    }
    if (merge_symbols(e, b, m)) return -1;
    for (int32_t i = 0; i >= 0; i = sym[i].next) emit(e, sym[i].id); /* symbol 0 never dies */
    return 0;
}

/* ------------------------------------------------------------------------ */
/* tokenizer.json: added tokens, normalizer, pre-tokenizer, merges            */
/* ------------------------------------------------------------------------ */

/* Pieces of one section of text (no added token inside), each merged. */
static int hf_pieces(encoder *e, const alab_bpe *b, const unsigned char *s, size_t n) {
    unsigned char *tmp = NULL;
    if (b->add_prefix_space && n > 0 && s[0] != ' ') {
        if (n + 1 > e->budget) { e->too_long = 1; return -1; }
        tmp = malloc(n + 1);
        if (!tmp) return -1;
        tmp[0] = ' ';
        memcpy(tmp + 1, s, n);
        s = tmp;
        n++;
    }
    int rc = 0;
    size_t stop = 0; /* GPT2_DIGITS: end of the current run of non-digits */
    for (size_t i = 0; i < n && rc == 0;) {
        size_t end;
        if (b->pretok == BPE_PRE_GPT2_DIGITS) {
            if (s[i] >= '0' && s[i] <= '9') { /* tokenizers.js: \d, ASCII only */
                if (claim(e, 1)) { rc = -1; break; }
                emit(e, b->byte_id[s[i]]);
                i++;
                continue;
            }
            if (stop <= i) {
                stop = i;
                while (stop < n && !(s[stop] >= '0' && s[stop] <= '9')) stop++;
            }
            end = next_piece(s, i, stop);
        } else if (b->pretok == BPE_PRE_GPT2) {
            end = next_piece(s, i, n);
        } else {
            end = next_piece_split(s, i, n, b->pretok == BPE_PRE_LLAMA3 ? 3 : 1);
        }
        int whole = b->ignore_merges && end - i > 1 ? vocab_find(&b->ix, b, s + i, end - i) : -1;
        if (whole >= 0) rc = claim(e, end - i) ? -1 : (emit(e, whole), 0);
        else rc = bpe_piece(e, b, s + i, end - i);
        i = end;
    }
    free(tmp);
    return rc;
}

/* Split s[0..n) at the added tokens of trie t (leftmost, longest); the text
 * between them goes to text_fn. lstrip / rstrip tokens eat the whitespace
 * next to them. */
typedef int (*section_fn)(encoder *e, const alab_bpe *b, const unsigned char *s, size_t n);

static int split_added(encoder *e, const alab_bpe *b, const token_matcher *t, const unsigned char *s, size_t n,
                       section_fn text_fn, int outer) {
    if (outer) e->section0 = 1;
    if (t->n == 0) return n ? text_fn(e, b, s, n) : 0;
    int32_t *at = malloc((n ? n : 1) * sizeof *at);
    if (!at) return -1;
    matcher_scan(t, s, n, at);
    size_t text_start = 0;
    int prev_rstrip = 0, rc = 0;
    for (size_t i = 0; i <= n;) {
        const int idx = i < n ? at[i] : -1;
        if (idx < 0 && i < n) { i++; continue; }
        /* the text before the token (or the end) */
        size_t a = text_start, z = i;
        if (prev_rstrip) a = skip_space_fwd(s, a, z);
        if (idx >= 0 && b->added[idx].lstrip) z = skip_space_back(s, a, z);
        if (z > a && text_fn(e, b, s + a, z - a)) { rc = -1; break; }
        if (idx < 0) break;
        if (claim(e, 1)) { rc = -1; break; }
        emit(e, b->added[idx].id);
        if (outer) e->section0 = 0; /* tokenizers.js: the text after a token is not section 0 */
        prev_rstrip = b->added[idx].rstrip;
        text_start = i = i + (size_t)t->tok_len[idx];
    }
    free(at);
    return rc;
}

static int hf_normalized(encoder *e, const alab_bpe *b, const unsigned char *s, size_t n) {
    if (b->normalizer != BPE_NORM_NFC) return hf_pieces(e, b, s, n);
    size_t m = 0;
    unsigned char *t = bpe_nfc(s, n, &m);
    if (!t) return -1;
    int rc = split_added(e, b, &b->trie_norm, t, m, hf_pieces, 0);
    free(t);
    return rc;
}

static int hf_encode(encoder *e, const alab_bpe *b, const unsigned char *s, size_t n) {
    return split_added(e, b, &b->trie_raw, s, n, hf_normalized, 1);
}

/* ------------------------------------------------------------------------ */
/* SentencePiece-style BPE (b->sp), as tokenizers.js's BPE with byte_fallback */
/* ------------------------------------------------------------------------ */

/* One id of a model call; fuse_unk: a run of unknown tokens gives one (tokenizers.js's fuse_unk, per call). */
static inline void sp_emit(encoder *e, const alab_bpe *b, int id) {
    if (b->unk >= 0 && id == b->unk) {
        if (b->fuse_unk && e->last_unk) return;
        e->last_unk = 1;
    } else {
        e->last_unk = 0;
    }
    emit(e, id);
}

/* A character with no token: its bytes' "<0xNN>" tokens if all exist (byte_fallback), else the unknown token,
 * else nothing (tokenizers.js's BPE.encode). */
static void sp_no_token(encoder *e, const alab_bpe *b, const unsigned char *c, size_t k) {
    if (b->byte_fallback) {
        size_t i = 0;
        while (i < k && b->byte_id[c[i]] >= 0) i++;
        if (i == k) {
            for (i = 0; i < k; i++) sp_emit(e, b, b->byte_id[c[i]]);
            return;
        }
    }
    if (b->unk >= 0) sp_emit(e, b, b->unk);
}

/* BPE over the characters of one piece p[0..m) (valid UTF-8): each character starts as its token (or as a
 * symbol that never merges), merged by rank then leftmost, as bpe_piece does with bytes. */
static int sp_piece(encoder *e, const alab_bpe *b, const unsigned char *p, size_t m) {
    if (b->ignore_merges) {
        int whole = vocab_find(&b->ix, b, p, m);
        if (whole >= 0) { sp_emit(e, b, whole); return 0; }
    }
    size_t nc = 0, k;
    for (size_t i = 0; i < m; i += k) { utf8_valid(p + i, &k); nc++; }
    if (grow((void **)&e->sym, &e->cap_sym, nc, sizeof *e->sym)) return -1;
    symbol *sym = e->sym;
    size_t c = 0;
    for (size_t i = 0; i < m; i += k, c++) {
        utf8_valid(p + i, &k);
        const int id = vocab_find(&b->ix, b, p + i, k);
        sym[c].id = id >= 0 ? id : SYM_NO_TOKEN;
        sym[c].pos = (int32_t)i;
        sym[c].prev = (int32_t)c - 1;
        sym[c].next = c + 1 < nc ? (int32_t)c + 1 : -1;
    }
    if (merge_symbols(e, b, nc)) return -1;
    for (int32_t i = 0; i >= 0; i = sym[i].next) {
        if (sym[i].id >= 0) sp_emit(e, b, sym[i].id);
        else {
            utf8_valid(p + sym[i].pos, &k);
            sp_no_token(e, b, p + sym[i].pos, k);
        }
    }
    return 0;
}

/* One stretch of normalized text between added tokens: the pre-tokenizer, then one model call. Metaspace:
 * every " " becomes the replacement, which is put in front unless the text starts with it already, when the
 * scheme is "always", or "first" and the text is in the input's first section (tokenizers.js's section_index
 * 0, which every stretch of that section shares). */
static int sp_text(encoder *e, const alab_bpe *b, const unsigned char *s, size_t n) {
    e->last_unk = 0;
    if (b->sp_pretok == SP_PRE_NONE) return claim(e, n) ? -1 : sp_piece(e, b, s, n);
    const size_t r = b->meta_n;
    size_t spaces = 0;
    for (size_t i = 0; i < n; i++) spaces += s[i] == ' ';
    if (claim(e, r + n + spaces * (r - 1))) return -1; /* the piece, with the replacement put in front or not */
    unsigned char *buf = malloc(r + n + spaces * (r - 1));
    if (!buf) return -1;
    size_t o = r;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') { memcpy(buf + o, b->meta, r); o += r; }
        else buf[o++] = s[i];
    }
    const int starts = o - r >= r && memcmp(buf + r, b->meta, r) == 0;
    const int prepend = !starts && (b->meta_prepend == SP_PREPEND_ALWAYS ||
                                    (b->meta_prepend == SP_PREPEND_FIRST && e->section0));
    if (prepend) memcpy(buf, b->meta, r);
    int rc = prepend ? sp_piece(e, b, buf, o) : sp_piece(e, b, buf + r, o - r);
    free(buf);
    return rc;
}

/* One section of the input between raw added tokens: normalized, then cut at the normalized added tokens. */
static int sp_section(encoder *e, const alab_bpe *b, const unsigned char *s, size_t n) {
    if (b->n_norm == 0) return sp_text(e, b, s, n);
    size_t m = 0;
    unsigned char *t = bpe_normalize(b, s, n, &m, e->budget);
    if (!t) {
        if (m == SIZE_MAX) e->too_long = 1;
        return -1;
    }
    int rc = m ? split_added(e, b, &b->trie_norm, t, m, sp_text, 0) : 0;
    free(t);
    return rc;
}

/* Literal replace-all of pat by with in s[0..n), left to right without overlaps (JS replaceAll of a string). */
static unsigned char *replace_all(const unsigned char *s, size_t n, const char *pat, size_t pn, const char *with,
                                  size_t wn, size_t *out_len, size_t max) {
    size_t hits = 0;
    for (size_t i = 0; i + pn <= n;) {
        if (memcmp(s + i, pat, pn) == 0) { hits++; i += pn; }
        else i++;
    }
    size_t cap = n - hits * pn + hits * wn;
    if (cap > max) { *out_len = SIZE_MAX; return NULL; }
    unsigned char *out = malloc(cap ? cap : 1);
    if (!out) return NULL;
    size_t o = 0, i = 0;
    while (i < n) {
        if (i + pn <= n && memcmp(s + i, pat, pn) == 0) {
            memcpy(out + o, with, wn);
            o += wn;
            i += pn;
        } else {
            out[o++] = s[i++];
        }
    }
    *out_len = o;
    return out;
}

unsigned char *bpe_normalize(const alab_bpe *b, const unsigned char *s, size_t n, size_t *out_len, size_t max) {
    *out_len = 0;
    if (!b->sp) {
        if (b->normalizer == BPE_NORM_NFC) return bpe_nfc(s, n, out_len);
        unsigned char *c = malloc(n ? n : 1);
        if (c) { memcpy(c, s, n); *out_len = n; }
        return c;
    }
    unsigned char *cur = malloc(n ? n : 1);
    if (!cur) return NULL;
    memcpy(cur, s, n);
    size_t cn = n;
    for (int i = 0; i < b->n_norm && cur; i++) {
        const sp_norm_step *st = &b->norm[i];
        unsigned char *next = NULL;
        size_t nn = 0;
        if (st->kind == SP_NORM_PREPEND && st->with_n + cn > max) {
            nn = SIZE_MAX;
        } else if (st->kind == SP_NORM_PREPEND) { /* tokenizers.js prepends to any text it is given */
            next = malloc(st->with_n + cn);
            if (next) {
                memcpy(next, st->with, st->with_n);
                memcpy(next + st->with_n, cur, cn);
                nn = st->with_n + cn;
            }
        } else if (st->kind == SP_NORM_REPLACE) {
            next = replace_all(cur, cn, st->pat, st->pat_n, st->with, st->with_n, &nn, max);
        } else {
            next = bpe_nfc(cur, cn, &nn); /* at most 3 times cn, which is at most max */
            if (next && nn > max) {
                free(next);
                next = NULL;
                nn = SIZE_MAX;
            }
        }
        free(cur);
        cur = next;
        cn = nn;
    }
    *out_len = cur ? cn : cn == SIZE_MAX ? SIZE_MAX : 0;
    return cur;
}

/* ---- the worst case of a file ------------------------------------------------------------------------ */

/* Ids the characters of s[0..n) (valid UTF-8) give at most when none of them merges: one for a character with a
 * token, its bytes for one that falls back to "<0xNN>" tokens, one (the unknown token) or none otherwise. */
static double sp_ids_of(const alab_bpe *b, const unsigned char *s, size_t n) {
    double ids = 0;
    size_t k;
    for (size_t i = 0; i < n; i += k) {
        utf8_valid(s + i, &k);
        size_t j = 0;
        if (vocab_find(&b->ix, b, s + i, k) < 0 && b->byte_fallback)
            while (j < k && b->byte_id[s[i + j]] >= 0) j++;
        ids += j == k ? (double)k : 1;
    }
    return ids;
}

static void say(char *buf, size_t cap, size_t *w, const char *fmt, ...) {
    if (*w >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *w, cap - *w, fmt, ap);
    va_end(ap);
    if (n > 0) *w += (size_t)n;
}

/* The most ids a text of n bytes can give, as B * n + C, from the file alone (the merges only lower it):
 *   a byte of input is at most 3 bytes of repaired text (an ill-formed byte becomes U+FFFD), which NFC does not
 *   lengthen further (NFC makes valid text at most 3 times longer and leaves U+FFFD alone); each normalizer step
 *   then maps a length x to g x + c: Prepend adds its bytes (c), Replace multiplies by its content over its
 *   pattern (g, when that is above 1), NFC (after a Replace) by 3; the text is cut at added tokens into sections,
 *   each normalized on its own, so each section pays the constant once;
 *   a normalized byte is at most one id (a token, an <unk>, or one "<0xNN>" byte token), except a space under
 *   Metaspace, which becomes the replacement (its characters' ids, above), put once more in front of each stretch
 *   between normalized added tokens (ByteLevel's add_prefix_space: one byte);
 *   an added token is one id for its bytes, and starts a new section (or stretch).
 * Over k bytes of one section that is A k + Cs ids, a section and the token after it at most (A k + Cs + 1) for
 * k + L bytes (L the shortest token), so per byte max(A, (A + Cs + 1) / (1 + L), 1 / L); the same at the level of
 * the stretches with the normalized tokens. */
int bpe_expansion(alab_bpe *b, const char *label) {
    char why[400];
    size_t w = 0;
    double a = 3, c = 0;
    int replaced = 0, prepends = 0;
    size_t prepend_bytes = 0;
    for (int i = 0; b->sp && i < b->n_norm; i++) {
        const sp_norm_step *st = &b->norm[i];
        if (st->kind == SP_NORM_PREPEND) {
            c += (double)st->with_n;
            prepends++;
            prepend_bytes += st->with_n;
        } else if (st->kind == SP_NORM_REPLACE) {
            const double g = st->with_n > st->pat_n ? (double)st->with_n / (double)st->pat_n : 1;
            a *= g;
            c *= g;
            replaced = 1;
            if (g > 1)
                say(why, sizeof why, &w, ", normalizer Replace \"%.*s\" -> %zu bytes (x%.3g)", (int)(st->pat_n < 8 ? st->pat_n : 8),
                    st->pat, st->with_n, g);
        } else {
            if (replaced) a *= 3; /* before any Replace, NFC works on repaired input: no more than its 3 */
            c *= 3;
            if (replaced) say(why, sizeof why, &w, ", NFC after a Replace (x3)");
        }
    }
    if (prepends) say(why, sizeof why, &w, ", %d Prepend step%s of %zu bytes in all (once per section)", prepends,
                      prepends > 1 ? "s" : "", prepend_bytes);
    double r1 = 1, rho = 0;
    if (b->sp && b->sp_pretok == SP_PRE_METASPACE) {
        const double mi = sp_ids_of(b, (const unsigned char *)b->meta, b->meta_n);
        r1 = mi > 1 ? mi : 1;
        rho = b->meta_prepend != SP_PREPEND_NEVER ? mi : 0;
        if (mi > 1)
            say(why, sizeof why, &w, ", Metaspace \"%s\" (%zu bytes, no token%s: %.0f ids for each space%s)", b->meta,
                b->meta_n, b->byte_fallback ? ", byte_fallback" : "", mi, rho > 0 ? " and in front of each stretch" : "");
    } else if (!b->sp && b->add_prefix_space) {
        rho = 1;
    }
    double alpha = r1;
    if (b->min_norm != SIZE_MAX) {
        const double ln = (double)b->min_norm, t = (r1 + rho + 1) / (1 + ln);
        if (t > alpha) alpha = t;
        if (1 / ln > alpha) alpha = 1 / ln;
        if (t > r1) say(why, sizeof why, &w, ", a normalized added token of %zu bytes", b->min_norm);
    }
    const double A = alpha * a, Cs = alpha * c + rho;
    double B = A;
    if (b->min_raw_in != SIZE_MAX) {
        const double l = b->min_raw_in ? (double)b->min_raw_in : 1, t = (A + Cs + 1) / (1 + l);
        if (t > B) B = t;
        if (1 / l > B) B = 1 / l;
        if (t > A) say(why, sizeof why, &w, ", an added token of %.0f byte%s (a new section every %.0f bytes)", l,
                       l == 1 ? "" : "s", l + 1);
    }
    b->max_ids_per_byte = B;
    b->max_ids_const = Cs;
    if (B > BPE_MAX_IDS_PER_BYTE)
        return alab_fail(ALAB_ELIMIT, "%s: one byte of text can need up to %.0f ids, over the limit of %d "
                         "(ill-formed UTF-8 x3%s)", label, B, BPE_MAX_IDS_PER_BYTE, w ? why : "");
    return ALAB_OK;
}

/* Each token decoded alone: the decoder's replace steps in order, then a "<0xNN>" token (two hex digits)
 * becomes the byte NN when the decoder has ByteFallback. */
int bpe_sp_finish(alab_bpe *b, const char *label) {
    size_t total = 0;
    for (int id = 0; id < b->V; id++) total += b->off[id + 1] - b->off[id] - 1;
    /* a replace step may lengthen a token: size the buffer by each step's worst growth */
    size_t grow_num = 1;
    for (int i = 0; i < b->dec.n_replace; i++) {
        const sp_norm_step *st = &b->dec.replace[i];
        grow_num *= st->with_n > st->pat_n ? (st->with_n + st->pat_n - 1) / st->pat_n : 1;
    }
    if (total > (UINT32_MAX / 2) / grow_num) return alab_fail(ALAB_ELIMIT, "%s: tokens too long", label);
    b->doff = malloc(((size_t)b->V + 1) * sizeof *b->doff);
    b->dbytes = malloc(total * grow_num + 1);
    if (!b->doff || !b->dbytes) return alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
    uint32_t o = 0;
    for (int id = 0; id < b->V; id++) {
        const unsigned char *t = (const unsigned char *)b->bytes + b->off[id];
        size_t n = b->off[id + 1] - b->off[id] - 1;
        unsigned char *cur = malloc(n ? n : 1);
        if (!cur) return alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
        memcpy(cur, t, n);
        for (int i = 0; i < b->dec.n_replace && cur; i++) {
            const sp_norm_step *st = &b->dec.replace[i];
            size_t nn = 0;
            unsigned char *next = replace_all(cur, n, st->pat, st->pat_n, st->with, st->with_n, &nn, SIZE_MAX);
            free(cur);
            cur = next;
            n = nn;
        }
        if (!cur) return alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
        b->doff[id] = o;
        int hi, lo;
        if (b->dec.byte_fallback && n == 6 && memcmp(cur, "<0x", 3) == 0 && cur[5] == '>' &&
            (hi = hex_digit(cur[3])) >= 0 && (lo = hex_digit(cur[4])) >= 0) {
            b->dbytes[o++] = (char)(hi * 16 + lo);
        } else {
            memcpy(b->dbytes + o, cur, n);
            o += (uint32_t)n;
        }
        free(cur);
    }
    b->doff[b->V] = o;
    return ALAB_OK;
}

static int cmp_added_id(const void *x, const void *y) {
    const bpe_token_spec *a = x, *c = y;
    return a->id < c->id ? -1 : a->id > c->id;
}

int bpe_add_tokens(alab_bpe *b, bpe_token_spec *spec, int n, const char *label) {
    qsort(spec, (size_t)n, sizeof *spec, cmp_added_id);
    size_t extra_bytes = 0, raw_bytes = 0, norm_bytes = 0;
    int V = b->V;
    for (int i = 0; i < n; i++) {
        const bpe_token_spec *t = &spec[i];
        if (t->len == 0) return alab_fail(ALAB_EVOCAB, "%s: added token %lld is empty", label, (long long)t->id);
        if (t->len > BPE_MAX_ADDED_BYTES)
            return alab_fail(ALAB_ELIMIT, "%s: added token %lld has %zu bytes, over the limit of %d", label,
                             (long long)t->id, t->len, BPE_MAX_ADDED_BYTES);
        if (t->id < 0 || t->id > V)
            return alab_fail(ALAB_EVOCAB, "%s: added token \"%.40s\" has id %lld; ids must continue the vocabulary "
                             "without gaps (next free id %d)", label, t->content, (long long)t->id, V);
        if (t->id == V) {
            if (V >= ALAB_MAX_VOCAB)
                return alab_fail(ALAB_ELIMIT, "%s: more than %d tokens", label, ALAB_MAX_VOCAB);
            V++;
            extra_bytes += t->len + 1;
        } else if (i > 0 && spec[i - 1].id == t->id) {
            return alab_fail(ALAB_EVOCAB, "%s: two added tokens have the id %lld", label, (long long)t->id);
        } else {
            size_t have = b->off[t->id + 1] - b->off[t->id] - 1;
            if (have != t->len || memcmp(b->bytes + b->off[t->id], t->content, have) != 0)
                return alab_fail(ALAB_EVOCAB, "%s: added token \"%.40s\" has the id %lld of another token", label,
                                 t->content, (long long)t->id);
        }
    }
    /* the bytes each token is matched as: its content, or its normalized form for a normalized one (tokenizers.js
     * normalizes the content with the whole normalizer, so a Prepend step puts its text in front of it too) */
    matcher_token *mt = calloc((size_t)n + 1, sizeof *mt);
    if (!mt) return alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
    int n_raw = 0, n_norm = 0, rc = ALAB_OK;
    for (int i = 0; i < n && rc == ALAB_OK; i++) {
        const bpe_token_spec *t = &spec[i];
        if (t->flags.normalized && (b->normalizer != BPE_NORM_NONE || b->n_norm > 0)) {
            size_t m = 0;
            unsigned char *c = bpe_normalize(b, (const unsigned char *)t->content, t->len, &m, SIZE_MAX);
            if (!c) rc = alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
            else if (m == 0) free(c);
            else {
                mt[n - 1 - n_norm++] = (matcher_token){c, m, i, NULL}; /* normalized ones fill mt from the end */
                norm_bytes += m;
                if (m < b->min_norm) b->min_norm = m;
            }
        } else {
            mt[n_raw++] = (matcher_token){(const unsigned char *)t->content, t->len, i, NULL};
            raw_bytes += t->len;
            /* matched in text whose ill-formed bytes became U+FFFD: each U+FFFD of the token may be one input byte */
            size_t in = t->len;
            for (size_t k = 0; k + 3 <= t->len; k++)
                if (memcmp(t->content + k, "\xef\xbf\xbd", 3) == 0) in -= 2;
            if (in < b->min_raw_in) b->min_raw_in = in;
        }
    }
    if (rc == ALAB_OK && raw_bytes + norm_bytes > BPE_MAX_ADDED_TOTAL)
        rc = alab_fail(ALAB_ELIMIT, "%s: the added tokens hold %zu bytes together, over the limit of %u", label,
                       raw_bytes + norm_bytes, (unsigned)BPE_MAX_ADDED_TOTAL);
    if (rc == ALAB_OK && extra_bytes > UINT32_MAX / 2 - b->off[b->V])
        rc = alab_fail(ALAB_ELIMIT, "%s: added tokens too long", label);
    uint32_t *off = NULL;
    char *bytes = NULL;
    if (rc == ALAB_OK) {
        off = realloc(b->off, ((size_t)V + 1) * sizeof *off);
        if (off) b->off = off;
        bytes = off ? realloc(b->bytes, b->off[b->V] + extra_bytes) : NULL;
        if (bytes) b->bytes = bytes;
        b->added = calloc((size_t)n + 1, sizeof *b->added);
        if (!off || !bytes || !b->added) rc = alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
    }
    if (rc == ALAB_OK) {
        uint32_t o = b->off[b->V];
        for (int i = 0; i < n; i++) {
            const bpe_token_spec *t = &spec[i];
            b->added[i] = t->flags;
            b->added[i].id = (int32_t)t->id;
            if (t->id == b->V) {
                memcpy(b->bytes + o, t->content, t->len);
                o += (uint32_t)t->len;
                b->bytes[o++] = '\0';
                b->off[++b->V] = o;
            }
        }
        int da = -1, db = -1;
        int r = matcher_build(&b->trie_raw, mt, n_raw, n, &da, &db);
        if (r == ALAB_OK) r = matcher_build(&b->trie_norm, mt + n - n_norm, n_norm, n, &da, &db);
        if (r == ALAB_EVOCAB)
            rc = alab_fail(ALAB_EVOCAB, "%s: added tokens %d and %d have the same content \"%.40s\"", label,
                           b->added[da < db ? da : db].id, b->added[da < db ? db : da].id, spec[da].content);
        else if (r) rc = alab_fail(ALAB_ENOMEM, "%s: out of memory", label);
    }
    for (int i = 0; i < n_norm; i++) free((void *)(uintptr_t)mt[n - 1 - i].s);
    free(mt);
    if (rc) return rc;
    b->n_added = n;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Encode / decode                                                            */
/* ------------------------------------------------------------------------ */

int alab_bpe_encode(int *ids, int max_ids, int *n_ids, const alab_bpe *b, const char *text, size_t text_len) {
    if (n_ids) *n_ids = 0;
    if (!b || !n_ids || max_ids < 0 || (!ids && max_ids > 0) || (!text && text_len > 0))
        return alab_fail(ALAB_EINVAL, "alab_bpe_encode: bad arguments");
    if (text_len > ALAB_MAX_TEXT_BYTES)
        return alab_fail(ALAB_ELIMIT, "alab_bpe_encode: %zu bytes of text is over the limit of %u",
                         text_len, ALAB_MAX_TEXT_BYTES);

    /* (1) well-formed UTF-8 */
    const unsigned char *s = (const unsigned char *)text;
    size_t n = text_len;
    unsigned char *fixed = NULL;
    if (!utf8_is_valid(s, n)) {
        fixed = utf8_replace_invalid(s, n, &n);
        if (!fixed) return alab_fail(ALAB_ENOMEM, "alab_bpe_encode: out of memory");
        s = fixed;
    }

    /* (2) pieces, (3) merges */
    encoder e;
    memset(&e, 0, sizeof e);
    e.ids = ids;
    e.max_ids = max_ids;
    e.budget = BPE_MAX_ENCODE_BYTES;
    int failed = 0;
    if (b->sp) {
        failed = split_added(&e, b, &b->trie_raw, s, n, sp_section, 1);
    } else if (b->hf) {
        failed = hf_encode(&e, b, s, n);
    } else {
        for (size_t i = 0; i < n && !failed;) {
            size_t end = next_piece(s, i, n);
            failed = bpe_piece(&e, b, s + i, end - i);
            i = end;
        }
    }
    free(e.sym);
    free(e.heap);
    free(fixed);
    if (failed && e.too_long)
        return alab_fail(ALAB_ETOOLONG, "alab_bpe_encode: %zu bytes of text grow past %u bytes of normalized text "
                         "and ids, the limit of one call (this tokenizer makes up to %.3g ids of a byte)", text_len,
                         (unsigned)BPE_MAX_ENCODE_BYTES, b->max_ids_per_byte);
    if (failed) return alab_fail(ALAB_ENOMEM, "alab_bpe_encode: out of memory");
    *n_ids = (int)e.count; /* at most BPE_MAX_ENCODE_BYTES: every id comes from a claimed byte */
    if (e.count > (size_t)max_ids)
        return alab_fail(ALAB_ELIMIT, "alab_bpe_encode: the text needs %zu ids, room for %d", e.count, max_ids);
    return ALAB_OK;
}

static int check_id(const alab_bpe *b, int id, const char *fn) {
    if (id < 0 || id >= b->V)
        return alab_fail(ALAB_ERANGE, "%s: token id %d is outside 0..%d", fn, id, b->V - 1);
    return ALAB_OK;
}

int alab_bpe_token_bytes(const char **bytes, size_t *len, const alab_bpe *b, int id) {
    if (!bytes || !len || !b) return alab_fail(ALAB_EINVAL, "alab_bpe_token_bytes: bad arguments");
    int rc = check_id(b, id, "alab_bpe_token_bytes");
    if (rc) return rc;
    if (b->sp) { /* the token decoded alone (not NUL-terminated) */
        *bytes = b->dbytes + b->doff[id];
        *len = b->doff[id + 1] - b->doff[id];
        return ALAB_OK;
    }
    *bytes = b->bytes + b->off[id]; /* NUL-terminated, the NUL not counted */
    *len = b->off[id + 1] - b->off[id] - 1;
    return ALAB_OK;
}

/* Both decode and display write at most cap bytes, report the full size in
 * *len, add a NUL when there is room for it (len < cap), and return
 * ALAB_ELIMIT when the output did not fit (out then holds a prefix). */
typedef struct {
    char *out;
    size_t cap, len;
} sink;

static void put(sink *k, const void *p, size_t n) {
    if (k->len < k->cap) memcpy(k->out + k->len, p, k->len + n <= k->cap ? n : k->cap - k->len);
    k->len += n;
}

static int finish(sink *k, size_t *len, const char *fn) {
    *len = k->len;
    if (k->len < k->cap) k->out[k->len] = '\0';
    if (k->len > k->cap) return alab_fail(ALAB_ELIMIT, "%s: needs %zu bytes, room for %zu", fn, k->len, k->cap);
    return ALAB_OK;
}

int alab_bpe_decode(char *out, size_t cap, size_t *len, const alab_bpe *b, const int *ids, int n_ids) {
    if (len) *len = 0;
    if (!len || !b || n_ids < 0 || (!ids && n_ids > 0) || (!out && cap > 0))
        return alab_fail(ALAB_EINVAL, "alab_bpe_decode: bad arguments");
    for (int i = 0; i < n_ids; i++)
        if (ids[i] < 0 || ids[i] >= b->V)
            return alab_fail(ALAB_ERANGE, "alab_bpe_decode: token id %d at position %d is outside 0..%d",
                             ids[i], i, b->V - 1);
    sink k = {out, cap, 0};
    if (b->sp) { /* the tokens decoded alone, joined; Strip then cuts the joined text's ends */
        const char *d = b->dbytes;
        const uint32_t *o = b->doff;
        const char c = (char)b->dec.strip_char;
        size_t lead = 0, trail = 0; /* bytes of the strip character cut at each end */
        for (int i = 0; i < n_ids && lead < (size_t)b->dec.strip_start; i++) {
            uint32_t j = o[ids[i]];
            while (j < o[ids[i] + 1] && lead < (size_t)b->dec.strip_start && d[j] == c) { j++; lead++; }
            if (j < o[ids[i] + 1]) break;
        }
        size_t total = 0;
        for (int i = 0; i < n_ids; i++) total += o[ids[i] + 1] - o[ids[i]];
        for (int i = n_ids - 1; i >= 0 && trail < (size_t)b->dec.strip_stop && lead + trail < total; i--) {
            uint32_t j = o[ids[i] + 1];
            while (j > o[ids[i]] && trail < (size_t)b->dec.strip_stop && lead + trail < total && d[j - 1] == c) {
                j--;
                trail++;
            }
            if (j > o[ids[i]]) break;
        }
        size_t skip = lead, keep = total - lead - trail;
        for (int i = 0; i < n_ids && keep > 0; i++) {
            size_t a = o[ids[i]], z = o[ids[i] + 1];
            if (skip >= z - a) { skip -= z - a; continue; }
            a += skip;
            skip = 0;
            size_t m = z - a < keep ? z - a : keep;
            put(&k, d + a, m);
            keep -= m;
        }
        return finish(&k, len, "alab_bpe_decode");
    }
    for (int i = 0; i < n_ids; i++) put(&k, b->bytes + b->off[ids[i]], b->off[ids[i] + 1] - b->off[ids[i]] - 1);
    return finish(&k, len, "alab_bpe_decode");
}

/* The token's bytes as UTF-8 for a figure label: ill-formed bytes (a token
 * may hold part of a character) become U+FFFD as in (1); "\n", "\t" and "\r"
 * are shown as the two characters backslash-n, backslash-t, backslash-r, and
 * the other C0 controls and DEL as "\xNN" (they are invisible, and not
 * allowed in the XML of an SVG). A leading space stays a space. */
int alab_bpe_display(char *out, size_t cap, size_t *len, const alab_bpe *b, int id) {
    if (len) *len = 0;
    if (!len || !b || (!out && cap > 0)) return alab_fail(ALAB_EINVAL, "alab_bpe_display: bad arguments");
    int rc = check_id(b, id, "alab_bpe_display");
    if (rc) return rc;
    const unsigned char *s = (const unsigned char *)b->bytes + b->off[id];
    size_t n = b->off[id + 1] - b->off[id] - 1;
    /* sp: the token decoded alone ("\u2581" as a space), but a byte token keeps its name "<0xNN>" */
    if (b->sp && !(n == 6 && b->doff[id + 1] - b->doff[id] == 1)) {
        s = (const unsigned char *)b->dbytes + b->doff[id];
        n = b->doff[id + 1] - b->doff[id];
    }
    sink k = {out, cap, 0};
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t m = utf8_next(s + i, n - i, &cp);
        if (cp == '\n') put(&k, "\\n", 2);
        else if (cp == '\t') put(&k, "\\t", 2);
        else if (cp == '\r') put(&k, "\\r", 2);
        else if (cp < 0x20 || cp == 0x7F) {
            static const char hex[] = "0123456789ABCDEF";
            char esc[4] = {'\\', 'x', hex[cp >> 4], hex[cp & 15]};
            put(&k, esc, 4);
        } else if (cp == 0xFFFD) put(&k, "\xEF\xBF\xBD", 3);
        else put(&k, s + i, m);
        i += m;
    }
    return finish(&k, len, "alab_bpe_display");
}
