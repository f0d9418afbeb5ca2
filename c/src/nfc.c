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
#include "nfc.h"
#include "nfc_tables.h"

#include <stdint.h>
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

#define CP_MASK UINT64_C(0x1FFFFF)

/* The nfc_decomp entry of cp, or 0 if it has no canonical decomposition. */
static uint64_t decomp_entry(uint32_t cp) {
    if (cp < 0xC0) return 0;
    size_t lo = 0, hi = N_OF(nfc_decomp);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t c = (uint32_t)(nfc_decomp[mid] & CP_MASK);
        if (cp < c) hi = mid;
        else if (cp > c) lo = mid + 1;
        else return nfc_decomp[mid];
    }
    return 0;
}

/* Append the full canonical decomposition of c to out[*m..] (the one-level
 * mappings applied recursively; at most four levels deep). */
static void decompose(uint32_t c, uint32_t *out, size_t *m) {
    if (c >= SBASE && c < SBASE + SCOUNT) {
        uint32_t si = c - SBASE;
        out[(*m)++] = LBASE + si / NCOUNT;
        out[(*m)++] = VBASE + (si % NCOUNT) / TCOUNT;
        if (si % TCOUNT) out[(*m)++] = TBASE + si % TCOUNT;
        return;
    }
    uint64_t e = decomp_entry(c);
    if (!e) { out[(*m)++] = c; return; }
    decompose((uint32_t)((e >> 21) & CP_MASK), out, m);
    uint32_t d2 = (uint32_t)((e >> 42) & CP_MASK);
    if (d2) decompose(d2, out, m);
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
        uint64_t e = nfc_decomp[nfc_compose[mid]];
        uint64_t k = (e >> 21) & ((UINT64_C(1) << 42) - 1); /* d1 | d2 << 21 */
        k = ((k & CP_MASK) << 21) | (k >> 21);                /* d1 << 21 | d2 */
        if (key < k) hi = mid;
        else if (key > k) lo = mid + 1;
        else return (uint32_t)(e & CP_MASK);
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

/* May NFC cut the text just before cp? (nfc_unsafe lists where it may not.) */
static int is_boundary(uint32_t cp) {
    if (cp < 0x300) return 1;
    size_t lo = 0, hi = N_OF(nfc_unsafe);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < nfc_unsafe[mid][0]) hi = mid;
        else if (cp > nfc_unsafe[mid][1]) lo = mid + 1;
        else return 0;
    }
    return 1;
}

typedef struct {
    uint32_t *cp, *tmp;
    size_t cap_cp, cap_tmp;
} nfc_scratch;

/* NFC of one segment s[0..n) (a boundary character and what follows it up
 * to the next boundary, or the text's start before its first boundary),
 * appended at out + *o. 0, or -1 if out of memory. */
static int nfc_segment(const unsigned char *s, size_t n, unsigned char *out, size_t *o, nfc_scratch *w) {
    /* 1. decompose: no character gives more than 1.5 code points per byte
     * of its UTF-8 (U+01D5: 2 bytes, 3 code points; checked when the tables
     * are made), so 2 per byte is room enough. */
    if (2 * n + 1 > w->cap_cp) {
        uint32_t *c = realloc(w->cp, (2 * n + 1) * sizeof *c);
        if (!c) return -1;
        w->cp = c;
        w->cap_cp = 2 * n + 1;
    }
    uint32_t *cp = w->cp;
    size_t m = 0;
    for (size_t k = 0; k < n;) {
        size_t len;
        uint32_t c = utf8_decode(s + k, &len);
        k += len;
        decompose(c, cp, &m);
    }
    /* 2. canonical ordering */
    for (size_t k = 0; k < m;) {
        if (ccc(cp[k]) == 0) { k++; continue; }
        size_t e = k;
        while (e < m && ccc(cp[e]) != 0) e++;
        if (e - k > 1 && sort_run(cp + k, e - k, &w->tmp, &w->cap_tmp)) return -1;
        k = e;
    }
    /* 3. canonical composition, in place */
    if (m > 0) {
        size_t starter = 0, wr = 1;
        int last = ccc(cp[0]) ? 256 : 0;
        for (size_t k = 1; k < m; k++) {
            uint32_t c = cp[k];
            int cc = ccc(c);
            uint32_t comp = (last < cc || last == 0) ? compose(cp[starter], c) : 0;
            if (comp && last != 256) {
                cp[starter] = comp;
            } else {
                if (cc == 0) starter = wr;
                last = cc;
                cp[wr++] = c;
            }
        }
        m = wr;
    }
    for (size_t k = 0; k < m; k++) *o += utf8_encode(out + *o, cp[k]);
    return 0;
}

/* The reference twin: the three steps over the whole text, no cutting. */
unsigned char *bpe_nfc_ref(const unsigned char *s, size_t n, size_t *out_len) {
    unsigned char *out = malloc(3 * n + 1);
    nfc_scratch w = {NULL, NULL, 0, 0};
    size_t o = 0;
    int bad = !out || nfc_segment(s, n, out, &o, &w);
    free(w.cp);
    free(w.tmp);
    if (bad) { free(out); return NULL; }
    *out_len = o;
    return out;
}

unsigned char *bpe_nfc(const unsigned char *s, size_t n, size_t *out_len) {
    /* NFC is at most three times longer than its input in UTF-8. */
    unsigned char *out = malloc(3 * n + 1);
    if (!out) return NULL;
    /* The text is cut before every boundary character; a segment of one
     * boundary character is already in NFC (that is part of being one), the
     * others go through the three steps. Pure ASCII is one memcpy. */
    size_t i = 0;
    while (i < n && s[i] < 0xCC) i++; /* 0xCC 0x80 is U+0300 */
    if (i == n) {
        memcpy(out, s, n);
        *out_len = n;
        return out;
    }
    nfc_scratch w = {NULL, NULL, 0, 0};
    size_t o = 0, seg = 0, seg_chars = 0;
    int ok = 1;
    for (i = 0; i <= n && ok;) {
        size_t len = 0;
        uint32_t c = 0;
        if (i < n) c = utf8_decode(s + i, &len);
        if (i == n || (is_boundary(c) && seg_chars > 0)) {
            /* close the segment s[seg..i) */
            if (seg_chars == 1 && is_boundary(utf8_decode(s + seg, &(size_t){0}))) {
                memcpy(out + o, s + seg, i - seg);
                o += i - seg;
            } else if (nfc_segment(s + seg, i - seg, out, &o, &w)) {
                ok = 0;
            }
            seg = i;
            seg_chars = 0;
            if (i == n) break;
        }
        seg_chars++;
        i += len;
    }
    free(w.cp);
    free(w.tmp);
    if (!ok) { free(out); return NULL; }
    *out_len = o;
    return out;
}
