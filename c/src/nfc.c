/* nfc.c — Unicode Normalization Form C of well-formed UTF-8 (UAX #15), the
 * normalizer of Qwen2/3's tokenizer.json.
 *
 * Three steps over the code points, as the standard describes them:
 *   1. full canonical decomposition (tables; Hangul syllables by formula);
 *   2. canonical ordering: each run of non-starters (combining class != 0)
 *      sorted by class, stably;
 *   3. canonical composition: each character joins the last starter when
 *      not blocked (no character in between of class 0 or >= its own) and
 *      the pair is a primary composite (tables; Hangul LV / LVT by formula).
 * The data come from Python's unicodedata (scripts/gen_nfc_tables.py; the
 * version is NFC_UNICODE_VERSION). JavaScript's String.prototype.normalize
 * (what tokenizers.js calls) may know newer characters; the composites added
 * since then belong to a few recent scripts (docs/api.md).
 *
 * Cost: linear in the text, plus sorting each run of combining marks
 * (insertion sort for short runs, a counting sort by class for long ones, so
 * a megabyte of combining marks stays linear).
 */
#include "bpe_internal.h"
#include "nfc_tables.h"

#include <stdlib.h>
#include <string.h>

#define N_OF(t) (sizeof(t) / sizeof((t)[0]))

enum { SBASE = 0xAC00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11A7,
       LCOUNT = 19, VCOUNT = 21, TCOUNT = 28, NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT };

static int ccc(uint32_t cp) {
    if (cp < 0x300) return 0;
    size_t lo = 0, hi = N_OF(nfc_ccc);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < nfc_ccc[mid][0]) hi = mid;
        else if (cp > nfc_ccc[mid][1]) lo = mid + 1;
        else return (int)nfc_ccc[mid][2];
    }
    return 0;
}

/* The decomposition of cp (NULL if none), *n its length. */
static const uint32_t *decomposition(uint32_t cp, size_t *n) {
    if (cp < 0xC0) return NULL;
    size_t lo = 0, hi = N_OF(nfc_decomp);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < nfc_decomp[mid][0]) hi = mid;
        else if (cp > nfc_decomp[mid][0]) lo = mid + 1;
        else { *n = nfc_decomp[mid][2]; return nfc_decomp_cps + nfc_decomp[mid][1]; }
    }
    return NULL;
}

/* The primary composite of (a, b), or 0. */
static uint32_t compose(uint32_t a, uint32_t b) {
    if (a >= LBASE && a < LBASE + LCOUNT && b >= VBASE && b < VBASE + VCOUNT)
        return SBASE + ((a - LBASE) * VCOUNT + (b - VBASE)) * TCOUNT;
    if (a >= SBASE && a < SBASE + SCOUNT && (a - SBASE) % TCOUNT == 0 && b > TBASE && b < TBASE + TCOUNT)
        return a + (b - TBASE);
    uint64_t key = ((uint64_t)a << 21) | b;
    size_t lo = 0, hi = N_OF(nfc_compose);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (key < nfc_compose[mid][0]) hi = mid;
        else if (key > nfc_compose[mid][0]) lo = mid + 1;
        else return (uint32_t)nfc_compose[mid][1];
    }
    return 0;
}

static uint32_t utf8_decode(const unsigned char *s, size_t *len) {
    unsigned char c = s[0];
    if (c < 0x80) { *len = 1; return c; }
    if (c < 0xE0) { *len = 2; return ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu); }
    if (c < 0xF0) { *len = 3; return ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu); }
    *len = 4;
    return ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
}

static size_t utf8_encode(unsigned char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = (unsigned char)(0xC0 | (cp >> 6)); o[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Stable sort of cp[0..n) (all non-starters) by combining class. */
static int sort_run(uint32_t *cp, size_t n, uint32_t **tmp, size_t *cap) {
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = cp[i];
            int k = ccc(x);
            size_t j = i;
            while (j > 0 && ccc(cp[j - 1]) > k) { cp[j] = cp[j - 1]; j--; }
            cp[j] = x;
        }
        return 0;
    }
    if (n > *cap) {
        uint32_t *t = realloc(*tmp, n * sizeof *t);
        if (!t) return -1;
        *tmp = t;
        *cap = n;
    }
    size_t count[257] = {0};
    for (size_t i = 0; i < n; i++) count[ccc(cp[i]) + 1]++;
    for (int k = 1; k < 257; k++) count[k] += count[k - 1];
    for (size_t i = 0; i < n; i++) (*tmp)[count[ccc(cp[i])]++] = cp[i];
    memcpy(cp, *tmp, n * sizeof *cp);
    return 0;
}

unsigned char *bpe_nfc(const unsigned char *s, size_t n, size_t *out_len) {
    /* Fast path: nothing below U+0300 decomposes or combines with what
     * precedes it (the first combining marks are U+0300..), except that a
     * character < U+0300 may be followed by one; pure ASCII is common. */
    size_t i = 0;
    while (i < n && s[i] < 0xCC) i++; /* 0xCC 0x80 is U+0300 */
    if (i == n) {
        unsigned char *copy = malloc(n + 1);
        if (!copy) return NULL;
        memcpy(copy, s, n);
        *out_len = n;
        return copy;
    }
    /* 1. decompose: no character gives more than 1.5 code points per byte
     * of its UTF-8 (U+01D5: 2 bytes, 3 code points; checked when the tables
     * are made), so 2 per byte is room enough. */
    size_t cap_cp = 2 * n + 1;
    uint32_t *cp = malloc(cap_cp * sizeof *cp), *tmp = NULL;
    size_t m = 0, tmp_cap = 0;
    unsigned char *out = NULL;
    if (!cp) return NULL;
    for (size_t k = 0; k < n;) {
        size_t len;
        uint32_t c = utf8_decode(s + k, &len);
        k += len;
        if (c >= SBASE && c < SBASE + SCOUNT) {
            uint32_t si = c - SBASE;
            cp[m++] = LBASE + si / NCOUNT;
            cp[m++] = VBASE + (si % NCOUNT) / TCOUNT;
            if (si % TCOUNT) cp[m++] = TBASE + si % TCOUNT;
            continue;
        }
        size_t dn;
        const uint32_t *d = decomposition(c, &dn);
        if (d) { memcpy(cp + m, d, dn * sizeof *cp); m += dn; }
        else cp[m++] = c;
    }
    /* 2. canonical ordering */
    for (size_t k = 0; k < m;) {
        if (ccc(cp[k]) == 0) { k++; continue; }
        size_t e = k;
        while (e < m && ccc(cp[e]) != 0) e++;
        if (e - k > 1 && sort_run(cp + k, e - k, &tmp, &tmp_cap)) goto oom;
        k = e;
    }
    /* 3. canonical composition, in place */
    if (m > 0) {
        size_t starter = 0, w = 1;
        int last = ccc(cp[0]) ? 256 : 0;
        for (size_t k = 1; k < m; k++) {
            uint32_t c = cp[k];
            int cc = ccc(c);
            uint32_t comp = (last < cc || last == 0) ? compose(cp[starter], c) : 0;
            if (comp && last != 256) {
                cp[starter] = comp;
            } else {
                if (cc == 0) starter = w;
                last = cc;
                cp[w++] = c;
            }
        }
        m = w;
    }
    out = malloc(4 * m + 1);
    if (!out) goto oom;
    size_t o = 0;
    for (size_t k = 0; k < m; k++) o += utf8_encode(out + o, cp[k]);
    *out_len = o;
    free(cp);
    free(tmp);
    return out;
oom:
    free(cp);
    free(tmp);
    return NULL;
}
