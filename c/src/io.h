/* io.h — reading a whole file (c/src/io.c; native builds only: the wasm builds
 * have no file system and leave io.c out). Used by the model-directory loader,
 * the CLI, the C tests, the benchmarks and the fuzzers. */
#ifndef ALAB_IO_H
#define ALAB_IO_H

#include <stddef.h>
#include <stdint.h>

/* flags of alab_read_whole_file */
enum {
    /* Read whatever the path opens to its end (pipes, FIFOs, /dev/stdin), in chunks; without it only a
     * regular file is read, opened without blocking and checked with fstat before a byte is read. */
    ALAB_READ_STREAMS = 1
};

/* The whole file at path into *out (malloc'd, with a NUL byte after the *len bytes, not counted).
 * At most max_len bytes: more is ALAB_ELIMIT. Failures are ALAB_EIO (cannot open or read it, or it is
 * not a regular file and ALAB_READ_STREAMS is not set), ALAB_ELIMIT or ALAB_ENOMEM, with the file and
 * the reason in alab_last_error(), *out NULL and *len 0, and errno saying why (the failing call's own,
 * else EISDIR / EINVAL for what is not a regular file, EFBIG over max_len, ENOMEM, EIO for a short
 * read). Prints nothing. */
int alab_read_whole_file(char **out, size_t *len, const char *path, uint64_t max_len, unsigned flags);

#endif
