/* fuzz_common.h — what the libFuzzer targets share: reading a fixture once at
 * start-up, and a check that aborts (so libFuzzer records the input) when a
 * property fails. ALAB_ROOT is the repository root, set by tests/fuzz/fuzz.mk
 * (or the environment variable ATTNLAB_ROOT at run time, which wins). */
#ifndef ALAB_FUZZ_COMMON_H
#define ALAB_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"

#ifndef ALAB_ROOT
#define ALAB_ROOT "."
#endif

/* A property the library promises; a failure is a finding, like a crash. */
#define FUZZ_CHECK(cond)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

/* Every failure must be one of the documented codes, with a message. */
#define FUZZ_CHECK_RC(rc)                                                                 \
    do {                                                                                  \
        FUZZ_CHECK((rc) <= 0 && (rc) >= ALAB_ESTATE);                                     \
        if ((rc) != 0) FUZZ_CHECK(alab_last_error()[0] != '\0');                          \
    } while (0)

/* The whole file ROOT/rel in malloc'd memory; exits if it is missing (a
 * set-up error, not a finding). */
static char *fuzz_slurp(const char *rel, size_t *len) {
    const char *root = getenv("ATTNLAB_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root && *root ? root : ALAB_ROOT, rel);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "fuzz: cannot open %s\n", path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "fuzz: cannot read %s\n", path); exit(2); }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

#endif
