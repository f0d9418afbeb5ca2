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
#include "io.h"

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

/* The whole file ROOT/rel in malloc'd memory (alab_read_whole_file of c/src/io.h);
 * exits if it cannot be read (a set-up error, not a finding). */
static char *fuzz_slurp(const char *rel, size_t *len) {
    const char *root = getenv("ATTNLAB_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root && *root ? root : ALAB_ROOT, rel);
    char *buf = NULL;
    if (alab_read_whole_file(&buf, len, path, UINT64_MAX, 0) != ALAB_OK) {
        fprintf(stderr, "fuzz: %s\n", alab_last_error());
        exit(2);
    }
    return buf;
}

#endif
