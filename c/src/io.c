/* io.c — loading a model directory from the file system (native builds only;
 * the browser hands the same files over as buffers).
 *
 * Each file is opened without blocking (O_NONBLOCK: opening a FIFO for reading
 * would otherwise wait for a writer forever), checked with fstat to be a
 * regular file no larger than the limit of its kind, and only then read. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* Read a whole regular file into a malloc'd buffer (plus a NUL byte not
 * counted in *len, so text files can be treated as C strings if needed). */
static int read_file(char **out, size_t *len, const char *path, uint64_t max_len) {
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return alab_fail(ALAB_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return alab_fail(ALAB_EIO, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return alab_fail(ALAB_EIO, "%s is %s, not a regular file", path, kind_of(st.st_mode));
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max_len) {
        close(fd);
        return alab_fail(ALAB_ELIMIT, "%s is %lld bytes, over the limit of %llu for this file", path,
                         (long long)st.st_size, (unsigned long long)max_len);
    }
    if ((uint64_t)st.st_size >= SIZE_MAX) {
        close(fd);
        return alab_fail(ALAB_ENOMEM, "%s is %lld bytes, more than this process can address", path, (long long)st.st_size);
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return alab_fail(ALAB_ENOMEM, "cannot allocate %zu bytes for %s", size, path);
    }
    size_t got = 0;
    while (got < size) {
        size_t want = size - got > ((size_t)1 << 30) ? ((size_t)1 << 30) : size - got;
        ssize_t r = read(fd, buf + got, want);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        free(buf);
        return alab_fail(ALAB_EIO, "short read on %s (%zu of %zu bytes; did it change while it was read?)", path, got, size);
    }
    buf[size] = '\0';
    *out = buf;
    *len = size;
    return ALAB_OK;
}

int alab_model_load_dir(alab_model **out, const char *dir) {
    if (!out || !dir) return alab_fail(ALAB_EINVAL, "alab_model_load_dir: NULL argument");
    *out = NULL;
    if (!dir[0]) return alab_fail(ALAB_EINVAL, "alab_model_load_dir: the directory is an empty string");
    static const char *names[4] = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};
    static const uint64_t limits[4] = {ALAB_MAX_CONFIG_BYTES, ALAB_MAX_WEIGHTS_FILE_BYTES, ALAB_MAX_VOCAB_BYTES,
                                       ALAB_MAX_MERGES_BYTES};
    char *bufs[4] = {0};
    size_t lens[4] = {0};
    int rc = ALAB_OK;
    for (int i = 0; i < 4 && rc == ALAB_OK; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(plen);
        if (!path) { rc = alab_fail(ALAB_ENOMEM, "out of memory"); break; }
        snprintf(path, plen, "%s/%s", dir, names[i]);
        rc = read_file(&bufs[i], &lens[i], path, limits[i]);
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
