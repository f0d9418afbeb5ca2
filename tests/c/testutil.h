/* testutil.h — what the cmocka suites share: paths, file reading, and the
 * golden-fixture reader. Include after <cmocka.h>. */
#ifndef ALAB_TESTUTIL_H
#define ALAB_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
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

/* Whole file into malloc'd memory (NUL-terminated, not counted). NULL on failure. */
static inline char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) { buf[n] = '\0'; if (len) *len = (size_t)n; }
    return buf;
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
