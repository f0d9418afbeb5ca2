/* bpe.c — GPT-2's byte-level BPE tokenizer: load, encode, decode, display.
 *
 * encode(text) runs three stages, exactly as OpenAI's encoder.py does:
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
#include "internal.h"
#include "json.h"
#include "unicode_tables.h"

#include <stdlib.h>
#include <string.h>

/* vocab.json of 1M tokens is ~30 MB, GPT-2's merges.txt 0.5 MB; refuse
 * anything far beyond that. */
#define MAX_VOCAB_JSON_BYTES (256u << 20)
#define MAX_MERGES_BYTES (256u << 20)

typedef struct {
    uint64_t key;  /* (left id << 32) | right id */
    int32_t rank;  /* line number among the merges, 0-based; -1: empty slot */
    int32_t id;    /* id of the merged token */
} merge_slot;

struct alab_bpe {
    int V;               /* vocabulary size                                    */
    uint32_t *off;       /* (V+1) token i is bytes[off[i] .. off[i+1]-1), NUL-terminated */
    char *bytes;         /* every token's bytes, each followed by a NUL        */
    int byte_id[256];    /* id of the token of each single byte                */
    merge_slot *merges;  /* open addressing, (left, right) -> (rank, id)       */
    uint32_t merge_mask; /* capacity - 1 (a power of two)                      */
    int n_merges;
};

/* ------------------------------------------------------------------------ */
/* GPT-2's byte <-> unicode alphabet                                          */
/* ------------------------------------------------------------------------ */

/* encoder.py bytes_to_unicode(): vocab.json spells each byte as a printable
 * character. Bytes that are printable already ('!'..'~', U+00A1..U+00AC,
 * U+00AE..U+00FF) stand for themselves; the other 68 (controls, space, DEL,
 * U+00A0, U+00AD, ...) become U+0100, U+0101, ... in byte order. So a space
 * is "Ġ" (U+0120) and a newline "Ċ" (U+010A). */
#define N_BYTE_CHARS (256 + 68)

static void byte_alphabet(int16_t char_to_byte[N_BYTE_CHARS]) {
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

static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t x) { /* splitmix64 finaliser */
    x ^= x >> 30; x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27; x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static uint32_t pow2_at_least(uint64_t n) {
    uint32_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* Token bytes -> id, used while loading (ids stored + 1; 0 is empty). */
typedef struct {
    int32_t *slots;
    uint32_t mask;
} vocab_index;

static int vocab_find(const vocab_index *ix, const alab_bpe *b, const unsigned char *s, size_t n) {
    for (uint32_t i = (uint32_t)hash_bytes(s, n) & ix->mask;; i = (i + 1) & ix->mask) {
        int32_t id = ix->slots[i] - 1;
        if (id < 0) return -1;
        if (b->off[id + 1] - b->off[id] - 1 == n && memcmp(b->bytes + b->off[id], s, n) == 0) return id;
    }
}

/* Insert token id; returns the id already holding the same bytes, or -1. */
static int vocab_insert(vocab_index *ix, const alab_bpe *b, int id) {
    const unsigned char *s = (const unsigned char *)b->bytes + b->off[id];
    size_t n = b->off[id + 1] - b->off[id] - 1;
    uint32_t i = (uint32_t)hash_bytes(s, n) & ix->mask;
    for (;; i = (i + 1) & ix->mask) {
        int32_t other = ix->slots[i] - 1;
        if (other < 0) break;
        if (b->off[other + 1] - b->off[other] - 1 == n && memcmp(b->bytes + b->off[other], s, n) == 0) return other;
    }
    ix->slots[i] = id + 1;
    return -1;
}

static inline uint64_t pair_key(int left, int right) {
    return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

/* The merge of (left, right), or NULL if the pair never merges. */
static inline const merge_slot *merge_find(const alab_bpe *b, int left, int right) {
    uint64_t key = pair_key(left, right);
    for (uint32_t i = (uint32_t)hash_u64(key) & b->merge_mask;; i = (i + 1) & b->merge_mask) {
        const merge_slot *m = &b->merges[i];
        if (m->rank < 0) return NULL;
        if (m->key == key) return m;
    }
}

/* ------------------------------------------------------------------------ */
/* Loading vocab.json                                                         */
/* ------------------------------------------------------------------------ */

/* Bytes spelled by a vocab.json key (valid UTF-8, as json.c guarantees):
 * writes them to out (if not NULL), returns how many, or -1 if a character
 * is outside GPT-2's byte alphabet. */
static long key_to_bytes(unsigned char *out, const char *key, size_t len, const int16_t *char_to_byte) {
    const unsigned char *s = (const unsigned char *)key;
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

static int load_vocab(alab_bpe *b, vocab_index *ix, const char *text, size_t len, const int16_t *char_to_byte) {
    json_doc doc;
    int rc = json_parse(&doc, text, len, MAX_VOCAB_JSON_BYTES);
    if (rc == ALAB_EJSON) return alab_fail(ALAB_EJSON, "vocab.json: %s", doc.err);
    if (rc == ALAB_ELIMIT)
        return alab_fail(ALAB_EVOCAB, "vocab.json: %zu bytes is over the limit of %u", len, MAX_VOCAB_JSON_BYTES);
    if (rc) return alab_fail(rc, "vocab.json: %s", doc.err);

    int32_t *member_of_id = NULL;
    const json_value *root = doc.root;
    if (root->type != JSON_OBJECT) {
        rc = alab_fail(ALAB_EVOCAB, "vocab.json: expected an object of token -> id");
        goto done;
    }
    if (root->n < 256 || root->n > ALAB_MAX_VOCAB) {
        rc = alab_fail(ALAB_EVOCAB, "vocab.json: %u tokens; a byte-level vocabulary has 256 to %d",
                       root->n, ALAB_MAX_VOCAB);
        goto done;
    }
    int V = (int)root->n;
    member_of_id = malloc((size_t)V * sizeof *member_of_id);
    b->off = malloc(((size_t)V + 1) * sizeof *b->off);
    if (!member_of_id || !b->off) { rc = alab_fail(ALAB_ENOMEM, "vocab.json: out of memory"); goto done; }
    for (int i = 0; i < V; i++) member_of_id[i] = -1;

    /* Ids: each 0..V-1 exactly once. Keys: GPT-2 alphabet, non-empty. */
    uint64_t total = 0;
    for (int i = 0; i < V; i++) {
        const json_value *v = &root->u.items[i];
        int64_t id;
        if (json_int64(v, &id) != 0) {
            rc = alab_fail(ALAB_EVOCAB, "vocab.json: the id of token \"%.40s\" is not an integer", v->key);
            goto done;
        }
        if (id < 0 || id >= V) {
            rc = alab_fail(ALAB_EVOCAB, "vocab.json: id %lld of token \"%.40s\" is outside 0..%d "
                           "(ids must be 0..V-1 without gaps)", (long long)id, v->key, V - 1);
            goto done;
        }
        if (member_of_id[id] >= 0) {
            rc = alab_fail(ALAB_EVOCAB, "vocab.json: id %lld is given to both \"%.40s\" and \"%.40s\"",
                           (long long)id, root->u.items[member_of_id[id]].key, v->key);
            goto done;
        }
        long n = key_to_bytes(NULL, v->key, v->key_len, char_to_byte);
        if (n <= 0) {
            rc = alab_fail(ALAB_EVOCAB, "vocab.json: token \"%.40s\" %s", v->key,
                           n == 0 ? "is empty" : "has a character outside GPT-2's byte alphabet");
            goto done;
        }
        member_of_id[id] = i;
        total += (uint64_t)n + 1;
    }
    if (total > UINT32_MAX) { rc = alab_fail(ALAB_EVOCAB, "vocab.json: tokens too long"); goto done; }

    /* Token bytes, in id order, each NUL-terminated. */
    b->bytes = malloc((size_t)total);
    ix->mask = pow2_at_least(2 * (uint64_t)V) - 1;
    ix->slots = calloc((size_t)ix->mask + 1, sizeof *ix->slots);
    if (!b->bytes || !ix->slots) { rc = alab_fail(ALAB_ENOMEM, "vocab.json: out of memory"); goto done; }
    uint32_t o = 0;
    for (int id = 0; id < V; id++) {
        const json_value *v = &root->u.items[member_of_id[id]];
        long n = key_to_bytes((unsigned char *)b->bytes + o, v->key, v->key_len, char_to_byte);
        b->off[id] = o;
        o += (uint32_t)n;
        b->bytes[o++] = '\0';
    }
    b->off[V] = o;
    b->V = V;
    for (int id = 0; id < V; id++) {
        int other = vocab_insert(ix, b, id);
        if (other >= 0) {
            rc = alab_fail(ALAB_EVOCAB, "vocab.json: tokens %d and %d spell the same bytes \"%.40s\"",
                           other, id, root->u.items[member_of_id[id]].key);
            goto done;
        }
    }
    /* Every byte needs a token, or some text could not be encoded. */
    for (int c = 0; c < 256; c++) {
        unsigned char byte = (unsigned char)c;
        b->byte_id[c] = vocab_find(ix, b, &byte, 1);
        if (b->byte_id[c] < 0) {
            rc = alab_fail(ALAB_EVOCAB, "vocab.json: no token for the byte 0x%02X", c);
            goto done;
        }
    }
    rc = ALAB_OK;
done:
    free(member_of_id);
    json_free(&doc);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Loading merges.txt                                                         */
/* ------------------------------------------------------------------------ */

/* Id of the token spelled by the characters s[0..n) of merges.txt, or -1
 * (with *why set) if they are not valid UTF-8 in the alphabet or no token. */
static int merge_part(const vocab_index *ix, const alab_bpe *b, const unsigned char *s, size_t n,
                      unsigned char *scratch, size_t *n_bytes, const int16_t *char_to_byte, const char **why) {
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next(s + i, n - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && s[i] == 0xEF)) { *why = "is not valid UTF-8"; return -1; }
        if (cp >= N_BYTE_CHARS || char_to_byte[cp] < 0) { *why = "has a character outside GPT-2's byte alphabet"; return -1; }
        scratch[m++] = (unsigned char)char_to_byte[cp];
        i += k;
    }
    *n_bytes = m;
    int id = vocab_find(ix, b, scratch, m);
    if (id < 0) *why = "is not a token of vocab.json";
    return id;
}

static int load_merges(alab_bpe *b, const vocab_index *ix, const char *text, size_t len,
                       const int16_t *char_to_byte) {
    const unsigned char *s = (const unsigned char *)text;
    if (len > MAX_MERGES_BYTES)
        return alab_fail(ALAB_EMERGES, "merges.txt: %zu bytes is over the limit of %u", len, MAX_MERGES_BYTES);
    /* Capacity: at most one merge per line. */
    size_t n_lines = 1;
    for (size_t i = 0; i < len; i++) n_lines += s[i] == '\n';
    b->merge_mask = pow2_at_least(2 * (uint64_t)n_lines) - 1;
    b->merges = malloc(((size_t)b->merge_mask + 1) * sizeof *b->merges);
    int32_t *made_at = malloc((size_t)b->V * sizeof *made_at); /* rank that first made each token */
    unsigned char *scratch = malloc(len + 1);
    int rc = ALAB_OK;
    if (!b->merges || !made_at || !scratch) { rc = alab_fail(ALAB_ENOMEM, "merges.txt: out of memory"); goto done; }
    for (uint32_t i = 0; i <= b->merge_mask; i++) b->merges[i].rank = -1;
    for (int i = 0; i < b->V; i++) made_at[i] = INT32_MAX; /* not made by any merge (yet) */
    for (int c = 0; c < 256; c++) made_at[b->byte_id[c]] = -1;

    int first_merge_line = 1;
    size_t pos = 0;
    for (long line = 1; pos < len; line++) {
        const unsigned char *nl = memchr(s + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - s) : len;
        const unsigned char *ln = s + pos;
        size_t n = end - pos;
        pos = nl ? end + 1 : len;
        if (n > 0 && ln[n - 1] == '\r') n--;

        if (line == 1 && n >= 8 && memcmp(ln, "#version", 8) == 0) { first_merge_line = 2; continue; }
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
        const char *why = NULL;
        size_t nl_bytes = 0, nr_bytes = 0;
        size_t left_len = (size_t)(sp - ln), right_len = n - left_len - 1;
        int left = merge_part(ix, b, ln, left_len, scratch, &nl_bytes, char_to_byte, &why);
        int right = left < 0 ? -1 : merge_part(ix, b, sp + 1, right_len, scratch + nl_bytes, &nr_bytes, char_to_byte, &why);
        if (left < 0 || right < 0) {
            rc = alab_fail(ALAB_EMERGES, "merges.txt line %ld: \"%.*s\" %s", line,
                           (int)(left < 0 ? left_len : right_len), (const char *)(left < 0 ? ln : sp + 1), why);
            goto done;
        }
        /* scratch now holds left's bytes then right's: the merged token. */
        int merged = vocab_find(ix, b, scratch, nl_bytes + nr_bytes);
        if (merged < 0) {
            rc = alab_fail(ALAB_EMERGES, "merges.txt line %ld: the merge \"%.*s\" is not a token of vocab.json",
                           line, (int)(n < 60 ? n : 60), (const char *)ln);
            goto done;
        }
        int rank = b->n_merges;
        if (made_at[left] >= rank || made_at[right] >= rank) {
            rc = alab_fail(ALAB_EMERGES, "merges.txt line %ld: \"%.*s\" is neither a byte nor made by an earlier line",
                           line, (int)(made_at[left] >= rank ? left_len : right_len),
                           (const char *)(made_at[left] >= rank ? ln : sp + 1));
            goto done;
        }
        const merge_slot *dup = merge_find(b, left, right);
        if (dup) {
            rc = alab_fail(ALAB_EMERGES, "merges.txt line %ld repeats the merge of line %d", line,
                           dup->rank + first_merge_line);
            goto done;
        }
        uint64_t key = pair_key(left, right);
        uint32_t i = (uint32_t)hash_u64(key) & b->merge_mask;
        while (b->merges[i].rank >= 0) i = (i + 1) & b->merge_mask;
        b->merges[i] = (merge_slot){key, rank, merged};
        if (made_at[merged] == INT32_MAX) made_at[merged] = rank;
        b->n_merges++;
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
    alab_bpe *b = calloc(1, sizeof *b);
    if (!b) return alab_fail(ALAB_ENOMEM, "alab_bpe_load: out of memory");
    int16_t char_to_byte[N_BYTE_CHARS];
    byte_alphabet(char_to_byte);
    vocab_index ix = {NULL, 0};
    int rc = load_vocab(b, &ix, vocab, vocab_len, char_to_byte);
    if (rc == ALAB_OK) rc = load_merges(b, &ix, merges ? merges : "", merges_len, char_to_byte);
    free(ix.slots); /* only loading looks tokens up by their bytes */
    if (rc) {
        alab_bpe_free(b);
        return rc;
    }
    *out = b;
    return ALAB_OK;
}

void alab_bpe_free(alab_bpe *b) {
    if (!b) return;
    free(b->off);
    free(b->bytes);
    free(b->merges);
    free(b);
}

int alab_bpe_vocab_size(const alab_bpe *b) {
    return b ? b->V : alab_fail(ALAB_EINVAL, "alab_bpe_vocab_size: bpe is NULL");
}

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

/* ------------------------------------------------------------------------ */
/* (3) Byte-pair merges                                                       */
/* ------------------------------------------------------------------------ */

/* A piece is a doubly linked list of symbols: a symbol is one token, first
 * one byte, growing as its right neighbour is merged into it. */
typedef struct {
    int32_t id;         /* token id; -1 once merged into its left neighbour */
    int32_t prev, next; /* neighbours, -1 at the ends                       */
} symbol;

/* Output ids and scratch space of one encode call. */
typedef struct {
    int *ids;
    int max_ids;
    size_t count;             /* ids produced (may exceed max_ids)        */
    symbol *sym;              /* the symbols of the current piece         */
    uint64_t *heap;           /* (rank << 32) | index of the left symbol  */
    size_t cap_sym, cap_heap, n_heap;
} encoder;

static inline void emit(encoder *e, int id) {
    if (e->count < (size_t)e->max_ids) e->ids[e->count] = id;
    e->count++;
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
    if (j < 0) return 0;
    const merge_slot *m = merge_find(b, e->sym[i].id, e->sym[j].id);
    return m ? heap_push(e, ((uint64_t)(uint32_t)m->rank << 32) | (uint32_t)i) : 0;
}

/* BPE on the bytes p[0..m) of one piece; emits its ids. Scratch: 12 bytes
 * of symbols and at most 24 bytes of heap per byte of the longest piece
 * (1 MiB of invalid bytes is one 3 MiB piece of U+FFFD: ~56 MB peak). */
static int bpe_piece(encoder *e, const alab_bpe *b, const unsigned char *p, size_t m) {
    if (m == 1) { emit(e, b->byte_id[p[0]]); return 0; }
    if (grow((void **)&e->sym, &e->cap_sym, m, sizeof *e->sym)) return -1;
    symbol *sym = e->sym;
    for (size_t i = 0; i < m; i++) {
        sym[i].id = b->byte_id[p[i]];
        sym[i].prev = (int32_t)i - 1;
        sym[i].next = i + 1 < m ? (int32_t)i + 1 : -1;
    }
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
    for (int32_t i = 0; i >= 0; i = sym[i].next) emit(e, sym[i].id); /* symbol 0 never dies */
    return 0;
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
    int rc = ALAB_OK;
    for (size_t i = 0; i < n;) {
        size_t end = next_piece(s, i, n);
        if (bpe_piece(&e, b, s + i, end - i)) {
            rc = alab_fail(ALAB_ENOMEM, "alab_bpe_encode: out of memory");
            break;
        }
        i = end;
    }
    free(e.sym);
    free(e.heap);
    free(fixed);
    if (rc) return rc;
    *n_ids = (int)e.count; /* at most 3 * ALAB_MAX_TEXT_BYTES */
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
