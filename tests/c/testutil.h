/* testutil.h — what the cmocka suites share: paths, file reading, GPT-2's
 * tokenizer and its case rows, and the golden-fixture reader. Include after
 * <cmocka.h>. The model families: families.h; GPT-2's byte alphabet: gpt2_bytes.h. */
#ifndef ALAB_TESTUTIL_H
#define ALAB_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "io.h"
#include "json.h"

/* Path of a file in the repository: $ATTNLAB_ROOT (default ".") + "/" + rel. */
static inline const char *repo_path(const char *rel) {
    static char buf[4][4096];
    static int slot;
    const char *root = getenv("ATTNLAB_ROOT");
    char *out = buf[slot++ & 3];
    snprintf(out, 4096, "%s/%s", root && *root ? root : ".", rel);
    return out;
}

/* Whole file into malloc'd memory (NUL-terminated, not counted); NULL on failure
 * (alab_read_whole_file of c/src/io.h: regular files only, no size limit). */
static inline char *slurp(const char *path, size_t *len) {
    char *buf = NULL;
    size_t n = 0;
    if (alab_read_whole_file(&buf, &n, path, UINT64_MAX, 0) != ALAB_OK) return NULL;
    if (len) *len = n;
    return buf;
}

/* The built-in model's GPT-2 tokenizer (models/brown-gpt2: vocab.json, merges.txt) into *out; an ALAB_* code. */
static inline int load_gpt2_bpe(alab_bpe **out) {
    size_t vl = 0, ml = 0;
    char *v = slurp(repo_path("models/brown-gpt2/vocab.json"), &vl), *m = slurp(repo_path("models/brown-gpt2/merges.txt"), &ml);
    int rc = v && m ? alab_bpe_load(out, v, vl, m, ml) : ALAB_EIO;
    free(v);
    free(m);
    return rc;
}

/* The ids of text by b into a malloc'd array (*n of them); asserts success. */
static inline int *encode_with(const alab_bpe *b, const char *text, size_t len, int *n) {
    int need = 0;
    int rc = alab_bpe_encode(NULL, 0, &need, b, text, len);
    assert_true(rc == ALAB_OK || rc == ALAB_ELIMIT);
    int *ids = malloc(((size_t)need + 1) * sizeof *ids);
    assert_int_equal(alab_bpe_encode(ids, need, n, b, text, len), ALAB_OK);
    assert_int_equal(*n, need);
    return ids;
}

/* The input bytes of a tokenizer case row (malloc'd, NUL-terminated): "text", or "bytes_hex" decoded. */
static inline char *row_bytes(const json_value *row, size_t *len) {
    const json_value *t = json_get(row, "text");
    if (t) {
        char *s = malloc(t->n + 1);
        memcpy(s, t->u.str, t->n + 1);
        *len = t->n;
        return s;
    }
    const json_value *h = json_get(row, "bytes_hex");
    assert_non_null(h);
    assert_int_equal(h->n % 2, 0);
    char *s = malloc(h->n / 2 + 1);
    for (uint32_t i = 0; i < h->n / 2; i++) {
        unsigned v;
        assert_int_equal(sscanf(h->u.str + 2 * i, "%2x", &v), 1);
        s[i] = (char)v;
    }
    s[h->n / 2] = '\0';
    *len = h->n / 2;
    return s;
}

/* Floats of a JSON array into a malloc'd buffer; *n receives the count. */
static inline float *json_floats_of(const json_value *arr, size_t *n) {
    *n = 0;
    if (!arr || arr->type != JSON_ARRAY) return NULL;
    float *out = malloc((arr->n ? arr->n : 1) * sizeof(float));
    for (uint32_t i = 0; i < arr->n; i++) out[i] = (float)arr->u.items[i].u.num;
    *n = arr->n;
    return out;
}

/* A model directory of the repository (rel to $ATTNLAB_ROOT), loaded or the test fails with the reason. */
static inline alab_model *load_model(const char *rel) {
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, repo_path(rel));
    if (rc) fprintf(stderr, "load %s: %s: %s\n", rel, alab_strerror(rc), alab_last_error());
    assert_int_equal(rc, ALAB_OK);
    return m;
}

static inline double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= m)) m = d; /* NaN propagates as a failure */
    }
    return m;
}

#endif
