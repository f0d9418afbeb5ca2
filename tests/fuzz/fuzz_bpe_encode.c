/* fuzz_bpe_encode.c — the GPT-2 BPE encoder on arbitrary bytes, with the real
 * GPT-2 tokenizer of models/brown-gpt2 (50257 tokens, 50000 merges).
 * Properties: never crashes; every id is in 0..V-1; decode(encode(x)) == x
 * for well-formed UTF-8 x (and for ill-formed x it equals x with each maximal
 * ill-formed subsequence replaced by U+FFFD, so it is well-formed and encodes
 * to the same ids again); a short id buffer gets the same prefix and
 * ALAB_ELIMIT; every id has a display string without raw control bytes. */
#include "fuzz_common.h"

static alab_bpe *bpe;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    size_t vl, ml;
    char *v = fuzz_slurp("models/brown-gpt2/vocab.json", &vl), *m = fuzz_slurp("models/brown-gpt2/merges.txt", &ml);
    if (alab_bpe_load(&bpe, v, vl, m, ml) != ALAB_OK) {
        fprintf(stderr, "fuzz_bpe_encode: %s\n", alab_last_error());
        exit(2);
    }
    free(v);
    free(m);
    return 0;
}

static int utf8_valid(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i], k, lo = 0x80, hi = 0xBF, cp;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) k = 1;
        else if (c >= 0xE0 && c <= 0xEF) { k = 2; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 3; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
        else return 0;
        cp = 0;
        for (unsigned j = 1; j <= k; j++) {
            if (i + j >= n || s[i + j] < lo || s[i + j] > hi) return 0;
            lo = 0x80; hi = 0xBF;
        }
        (void)cp;
        i += k + 1;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16) return 0; /* long inputs only slow the search; the 1 MiB limit is tested in test_bpe */
    char *text = malloc(size ? size : 1); /* exact size: ASan sees a read past the end */
    if (!text) return 0;
    memcpy(text, data, size);
    const int V = alab_bpe_vocab_size(bpe);
    int cap = 3 * (int)size + 1; /* at most one id per byte of the U+FFFD-replaced text */
    int *ids = malloc((size_t)cap * sizeof *ids);
    int n = -1;
    int rc = alab_bpe_encode(ids, cap, &n, bpe, text, size);
    FUZZ_CHECK(rc == ALAB_OK);
    FUZZ_CHECK(n >= 0 && n < cap);
    FUZZ_CHECK((n == 0) == (size == 0));
    for (int i = 0; i < n; i++) FUZZ_CHECK(ids[i] >= 0 && ids[i] < V);

    size_t dlen = 0;
    FUZZ_CHECK(alab_bpe_decode(NULL, 0, &dlen, bpe, ids, n) == (dlen ? ALAB_ELIMIT : ALAB_OK));
    char *dec = malloc(dlen + 1);
    size_t dlen2 = 0;
    FUZZ_CHECK(alab_bpe_decode(dec, dlen + 1, &dlen2, bpe, ids, n) == ALAB_OK && dlen2 == dlen && dec[dlen] == '\0');
    FUZZ_CHECK(utf8_valid((const unsigned char *)dec, dlen));
    if (utf8_valid((const unsigned char *)text, size)) {
        FUZZ_CHECK(dlen == size && memcmp(dec, text, size) == 0);
    } else {
        /* the replaced text encodes to the same ids */
        int *ids2 = malloc((size_t)(n + 1) * sizeof *ids2);
        int n2 = -1;
        FUZZ_CHECK(alab_bpe_encode(ids2, n + 1, &n2, bpe, dec, dlen) == ALAB_OK && n2 == n);
        FUZZ_CHECK(memcmp(ids, ids2, (size_t)n * sizeof *ids) == 0);
        free(ids2);
    }
    /* a short buffer: the same prefix, ALAB_ELIMIT, the full count */
    if (n > 1) {
        int half = n / 2, m = -1;
        int *pre = malloc((size_t)half * sizeof *pre);
        FUZZ_CHECK(alab_bpe_encode(pre, half, &m, bpe, text, size) == ALAB_ELIMIT && m == n);
        FUZZ_CHECK(memcmp(pre, ids, (size_t)half * sizeof *pre) == 0);
        free(pre);
    }
    /* display strings: no raw control characters (they are not allowed in SVG) */
    for (int i = 0; i < n && i < 64; i++) {
        char out[128];
        size_t len = 0;
        int r = alab_bpe_display(out, sizeof out, &len, bpe, ids[i]);
        FUZZ_CHECK(r == ALAB_OK);
        FUZZ_CHECK(utf8_valid((const unsigned char *)out, len));
        for (size_t j = 0; j < len; j++) FUZZ_CHECK((unsigned char)out[j] >= 0x20 && out[j] != 0x7F);
    }
    free(dec);
    free(ids);
    free(text);
    return 0;
}
