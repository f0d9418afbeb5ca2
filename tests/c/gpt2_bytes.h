/* gpt2_bytes.h — GPT-2's byte alphabet, written independently of c/src/bpe.c, and the made-up
 * vocabularies the tokenizer tests (test_bpe.c, test_tokenizer_json.c) and bench/bench_tokenizer.c
 * build with it. Needs no cmocka. */
#ifndef ALAB_GPT2_BYTES_H
#define ALAB_GPT2_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* encoder.py's bytes_to_unicode: byte b is itself where printable, else 256 + its rank among the rest. */
static inline int gpt2_byte_printable(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

/* The JSON/merges spelling of byte b, UTF-8 encoded into out (NUL-terminated, at most 3 bytes). */
static inline void byte_char(char *out, int b) {
    int cp = b;
    if (!gpt2_byte_printable(b)) {
        int n = 0;
        for (int x = 0; x < b; x++) n += !gpt2_byte_printable(x);
        cp = 256 + n;
    }
    if (cp < 0x80) { out[0] = (char)cp; out[1] = 0; }
    else { out[0] = (char)(0xC0 | (cp >> 6)); out[1] = (char)(0x80 | (cp & 0x3F)); out[2] = 0; }
}

/* Appends the spelling of n bytes at s (json: '"' and '\' escaped); returns the chars written. */
static inline size_t spell_bytes(char *s, const unsigned char *bytes, size_t n, int json) {
    static char table[256][4]; /* byte_char of each byte, made on first use */
    static int ready;
    if (!ready) {
        for (int b = 0; b < 256; b++) byte_char(table[b], b);
        ready = 1;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (json && (bytes[i] == '"' || bytes[i] == '\\')) s[o++] = '\\';
        for (const char *c = table[bytes[i]]; *c; c++) s[o++] = *c;
    }
    return o;
}

/* The 256 byte tokens as JSON members "c": b (no braces), at most cap chars; returns the chars written. */
static inline size_t byte_members(char *s, size_t cap) {
    size_t o = 0;
    for (int b = 0; b < 256 && o < cap; b++) {
        char c[4];
        byte_char(c, b);
        const char *esc = (b == '"' || b == '\\') ? "\\" : "";
        o += (size_t)snprintf(s + o, cap - o, "%s\"%s%s\": %d", b ? ", " : "", esc, c, b);
    }
    return o;
}

/* The old, unkeyed hashes of bpe.c (issue 21 item 2), to craft what collided under them. */
static inline uint64_t old_hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 29);
}
static inline uint64_t old_hash_u64(uint64_t x) {
    x ^= x >> 30; x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27; x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}
/* The old tables' size for n entries: a power of two, at least 16. */
static inline uint32_t pow2_at_least(uint64_t n) {
    uint32_t c = 16;
    while (c < n) c <<= 1;
    return c;
}

/* vocab.json: the 256 bytes, then n five-byte tokens. crafted: tokens whose old FNV-1a slot falls in
 * the first 1024 of the table's slots (issue 21 timed 100k of them at 11.5 s); else every 97th
 * five-byte string. malloc'd; *len is its length. */
static inline char *flood_vocab(int n, int crafted, size_t *len) {
    uint32_t mask = pow2_at_least(2 * (uint64_t)(256 + n)) - 1;
    size_t cap = 8192 + (size_t)n * 32;
    char *s = malloc(cap);
    size_t o = (size_t)snprintf(s, cap, "{");
    o += byte_members(s + o, cap - o);
    int made = 0;
    for (uint64_t k = 0; made < n; k++) {
        unsigned char t[5] = {'q', (unsigned char)(k >> 24), (unsigned char)(k >> 16), (unsigned char)(k >> 8),
                              (unsigned char)k};
        if (crafted ? (((uint32_t)old_hash_bytes(t, 5) & mask) >= 1024) : (k % 97 != 0)) continue;
        o += (size_t)snprintf(s + o, cap - o, ", \"");
        o += spell_bytes(s + o, t, 5, 1);
        o += (size_t)snprintf(s + o, cap - o, "\": %d", 256 + made++);
    }
    o += (size_t)snprintf(s + o, cap - o, "}");
    *len = o;
    return s;
}

#endif
