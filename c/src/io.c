/* io.c — loading a model directory from the file system (native builds only;
 * the browser hands the same files over as buffers). */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read a whole file into a malloc'd buffer (plus a NUL byte not counted in
 * *len, so text files can be treated as C strings by the caller if needed). */
static int read_file(char **out, size_t *len, const char *path, size_t max_len) {
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return alab_fail(ALAB_EIO, "cannot open %s: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return alab_fail(ALAB_EIO, "cannot seek in %s", path);
    }
    long size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return alab_fail(ALAB_EIO, "cannot tell the size of %s", path);
    }
    if ((unsigned long)size > max_len) {
        fclose(f);
        return alab_fail(ALAB_ELIMIT, "%s is %ld bytes, over the limit of %zu", path, size, max_len);
    }
    char *buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        return alab_fail(ALAB_ENOMEM, "cannot allocate %ld bytes for %s", size, path);
    }
    size_t got = fread(buf, 1, (size_t)size, f);
    fclose(f);
    if (got != (size_t)size) {
        free(buf);
        return alab_fail(ALAB_EIO, "short read on %s (%zu of %ld bytes)", path, got, size);
    }
    buf[size] = '\0';
    *out = buf;
    *len = (size_t)size;
    return ALAB_OK;
}

#define TEXT_FILE_MAX ((size_t)64 << 20)    /* config, vocab and merges */
#define WEIGHTS_FILE_MAX ((size_t)16 << 30) /* model.safetensors        */

int alab_model_load_dir(alab_model **out, const char *dir) {
    if (!out || !dir) return alab_fail(ALAB_EINVAL, "alab_model_load_dir: NULL argument");
    *out = NULL;
    static const char *names[4] = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};
    char *bufs[4] = {0};
    size_t lens[4] = {0};
    int rc = ALAB_OK;
    for (int i = 0; i < 4 && rc == ALAB_OK; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(plen);
        if (!path) { rc = alab_fail(ALAB_ENOMEM, "out of memory"); break; }
        snprintf(path, plen, "%s/%s", dir, names[i]);
        rc = read_file(&bufs[i], &lens[i], path, i == 1 ? WEIGHTS_FILE_MAX : TEXT_FILE_MAX);
        free(path);
    }
    if (rc == ALAB_OK) {
        rc = alab_model_load_buffers(out, bufs[0], lens[0], bufs[1], lens[1], bufs[2], lens[2],
                                     bufs[3], lens[3]);
        bufs[1] = NULL; /* ownership passed to the model, on success and on failure */
    }
    for (int i = 0; i < 4; i++) free(bufs[i]);
    return rc;
}
