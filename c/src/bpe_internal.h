/* bpe_internal.h — what bpe.c (the byte-level BPE engine, GPT-2's files) and
 * tokenizer_json.c (Hugging Face tokenizer.json) share. Not public. */
#ifndef ALAB_BPE_INTERNAL_H
#define ALAB_BPE_INTERNAL_H

#include "internal.h"
#include "json.h"

#include <stddef.h>
#include <stdint.h>

/* GPT-2's byte <-> unicode alphabet: 256 printable characters, U+0021..U+0143. */
#define N_BYTE_CHARS (256 + 68)
void bpe_byte_alphabet(int16_t char_to_byte[N_BYTE_CHARS]);

/* Pre-tokenizers (the regex that cuts text into pieces before the merges). */
enum {
    BPE_PRE_GPT2 = 0,   /* 's|'t|...| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ (JS \s) */
    BPE_PRE_LLAMA3 = 1, /* (?i:'s|'t|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|... */
    BPE_PRE_QWEN2 = 2,  /* the same with \p{N} (single digits) */
    BPE_PRE_GPT2_DIGITS = 3, /* each ASCII digit alone, GPT-2's regex between (SmolLM2) */
};
enum { BPE_NORM_NONE = 0, BPE_NORM_NFC = 1 };

/* SentencePiece-style BPE (b->sp; tokenizer.json with byte_fallback, "\u2581" for spaces: Llama 2, Gemma):
 * tokens are plain UTF-8 strings, a piece is merged character by character, a character without a token
 * becomes its bytes' "<0xNN>" tokens (byte_fallback) or the unknown token. The normalizer is a list of steps
 * run in order on each stretch of text between added tokens. */
enum { SP_NORM_PREPEND = 1, SP_NORM_REPLACE = 2, SP_NORM_NFC = 3 };
typedef struct {
    int kind;
    char *pat;      /* REPLACE: the literal pattern (non-empty)     */
    size_t pat_n;
    char *with;     /* PREPEND: the text put in front; REPLACE: the replacement */
    size_t with_n;
} sp_norm_step;
#define SP_MAX_NORM_STEPS 8
enum { SP_PRE_NONE = 0, SP_PRE_METASPACE = 1 };
enum { SP_PREPEND_ALWAYS = 0, SP_PREPEND_FIRST = 1, SP_PREPEND_NEVER = 2 };
/* The decoder, per token then on the joined text: replace steps, then byte tokens -> bytes, then strip. */
#define SP_MAX_DEC_STEPS 4
typedef struct {
    int n_replace;
    sp_norm_step replace[SP_MAX_DEC_STEPS]; /* literal pattern -> text, per token, in order */
    int byte_fallback;                       /* "<0xNN>" tokens decode to the byte NN         */
    unsigned char strip_char;                /* Strip: this ASCII character ...              */
    int strip_start, strip_stop;             /* ... at most this many from the text's start / end */
} sp_decoder;

typedef struct {
    uint64_t key;  /* (left id << 20) | right id */
    int32_t rank;  /* 0-based order among the merges; -1: empty slot */
    int32_t id;    /* id of the merged token */
} merge_slot;

/* Token bytes -> id (ids stored + 1; 0 is empty). */
typedef struct {
    int32_t *slots;
    uint32_t mask;
} vocab_index;

/* Added tokens ("<|begin_of_text|>", "<think>", ...) are found in text by an
 * Aho-Corasick automaton over the tokens' bytes REVERSED, run over the text
 * from its end: at each position p it gives the longest added token that
 * starts at p, for every p in one pass (leftmost-longest matching is then a
 * forward walk). Linear in the text whatever the tokens; 17 bytes per trie
 * node (at most one node per byte of the tokens). Node 0 is the root. */
typedef struct {
    int32_t id;        /* token id                                            */
    uint8_t lstrip;    /* eat the whitespace before it (tokenizers.js: trimEnd) */
    uint8_t rstrip;    /* eat the whitespace after it                          */
    uint8_t normalized;/* matched in normalized text (only with a normalizer)  */
    uint8_t special;
} added_token;

typedef struct {
    int32_t n;           /* nodes (0: no tokens)                               */
    int32_t *kid_start;  /* (n + 1) children of v: kids[kid_start[v] .. kid_start[v + 1]), sorted by label */
    int32_t *kids;       /* (n)                                                 */
    uint8_t *label;      /* (n) the byte on the edge into v                     */
    int32_t *fail;       /* (n) the longest proper suffix of v that is a node   */
    int32_t *out;        /* (n) the token (index into added[]) of the longest suffix of v that is one, or -1 */
    int32_t *tok_len;    /* (n_added) each token's length as matched (after NFC for a normalized one) */
} token_matcher;

struct alab_bpe {
    int V;               /* ids 0..V-1 (model vocabulary + added tokens)        */
    int V_model;         /* ids 0..V_model-1 are the BPE model's vocabulary     */
    uint32_t *off;       /* (V+1) token i is bytes[off[i] .. off[i+1]-1), NUL-terminated */
    char *bytes;         /* every token's bytes, each followed by a NUL        */
    int byte_id[256];    /* id of the token of each single byte                */
    merge_slot *merges;  /* open addressing, (left, right) -> (rank, id)       */
    uint32_t merge_mask; /* capacity - 1 (a power of two)                      */
    int n_merges;
    uint64_t k0, k1;     /* this tokenizer's random SipHash key                 */
    uint64_t tab[5][256];/* tabulation hashing of 40-bit keys, drawn from k0, k1 */
    uint64_t probes;     /* hash-table probes made while loading (tests)        */
    vocab_index ix;      /* model token bytes -> id (kept: ignore_merges)       */
    /* tokenizer.json only (zero for vocab.json + merges.txt) */
    int hf;
    int pretok;          /* BPE_PRE_*                                           */
    int add_prefix_space;
    int normalizer;      /* BPE_NORM_*                                          */
    int ignore_merges;
    int bos;             /* id to prepend, or -1                               */
    int n_added;
    added_token *added;
    token_matcher trie_raw; /* added tokens matched in the raw text             */
    token_matcher trie_norm;/* added tokens matched after normalization         */
    /* SentencePiece-style (sp = 1); byte_id[] then holds the ids of the "<0xNN>" tokens (-1: none) */
    int sp;
    int n_norm;
    sp_norm_step norm[SP_MAX_NORM_STEPS];
    int sp_pretok;       /* SP_PRE_*                                            */
    char meta[8];        /* Metaspace: the replacement (UTF-8, NUL-terminated)  */
    size_t meta_n;
    int meta_prepend;    /* SP_PREPEND_*                                        */
    int byte_fallback, fuse_unk;
    int unk;             /* id of the unknown token, or -1                     */
    sp_decoder dec;
    uint32_t *doff;      /* (V+1) each token decoded alone: dbytes[doff[i] .. doff[i+1]) */
    char *dbytes;
    /* the shortest added token of each matcher: in input bytes for trie_raw (a U+FFFD in it may stand for one
     * ill-formed byte), in normalized bytes for trie_norm; SIZE_MAX when the matcher is empty */
    size_t min_raw_in, min_norm;
    double max_ids_per_byte; /* worst case (bpe_expansion): ids <= this * text bytes + max_ids_const */
    double max_ids_const;
};

/* The worst case a tokenizer can reach, computed from the file at load (bpe_expansion): a file over
 * BPE_MAX_IDS_PER_BYTE ids per byte of text is refused (ALAB_ELIMIT naming the steps). Real files need at most
 * 3 (1 MiB of ill-formed UTF-8 is 3 MiB of U+FFFD); the bound is reckoned without the vocabulary's merges, so
 * Llama 2's Prepend + Replace counts 9. */
#define BPE_MAX_IDS_PER_BYTE 16
/* One encode call handles at most this many bytes of text after normalization and Metaspace (each added token
 * counts one), counted as it goes: a buffer that would pass it is not allocated (ALAB_ETOOLONG). So one call
 * returns at most this many ids. Real files need at most 3 MiB + a few bytes (ALAB_MAX_TEXT_BYTES of ill-formed
 * UTF-8, or of spaces each made a 3-byte U+2581). */
#define BPE_MAX_ENCODE_BYTES (4u << 20)
/* Computes b->max_ids_per_byte / max_ids_const; ALAB_ELIMIT over BPE_MAX_IDS_PER_BYTE. */
int bpe_expansion(alab_bpe *b, const char *label);

/* A byte no well-formed UTF-8 holds (0xC0, 0xC1, 0xF5..0xFF): encoding turns it into U+FFFD first, so a
 * byte-level vocabulary may lack its token. */
static inline int bpe_byte_unreachable(int c) { return c == 0xC0 || c == 0xC1 || c >= 0xF5; }

/* Builders used by both loaders. label names the file in error messages. */
int bpe_init(alab_bpe *b);
int bpe_load_vocab_object(alab_bpe *b, const json_value *root, const char *label, const int16_t *char_to_byte);
/* Capacity for n merges; then bpe_add_merge for each, rank = call order.
 * strict: parts must be bytes or made by an earlier merge (merges.txt). */
int bpe_merges_begin(alab_bpe *b, size_t n, int32_t **made_at);
int bpe_add_merge(alab_bpe *b, int32_t *made_at, int strict, const unsigned char *l, size_t ll,
                  const unsigned char *r, size_t rl, unsigned char *scratch, const int16_t *char_to_byte,
                  const char *where);
/* Added tokens, after the vocabulary (and b->normalizer) are set: ids equal
 * to a vocabulary token's must spell the same bytes; the others continue
 * the ids without gaps. Sorts spec by id. */
#define BPE_MAX_ADDED_BYTES 1024
/* all added tokens together, in bytes (after NFC for the normalized ones): real files hold a few KB */
#define BPE_MAX_ADDED_TOTAL (1u << 20)
typedef struct {
    int64_t id;
    const char *content; /* UTF-8, NUL-terminated */
    size_t len;
    added_token flags;
} bpe_token_spec;
int bpe_add_tokens(alab_bpe *b, bpe_token_spec *spec, int n, const char *label);

/* The tokenizer's normalizer over valid UTF-8 s[0..n) (NFC for a byte-level one, the steps for an sp one):
 * malloc'd, *out_len set; NULL if out of memory, or with *out_len = SIZE_MAX when a step's output would pass
 * max bytes (nothing that large is allocated). */
unsigned char *bpe_normalize(const alab_bpe *b, const unsigned char *s, size_t n, size_t *out_len, size_t max);
/* sp: the decoded bytes of every token (after the added tokens are in). */
int bpe_sp_finish(alab_bpe *b, const char *label);

#endif
