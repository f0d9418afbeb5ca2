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

/* ---- a text file line by line (dataset files: `attnlab evidence --set FILE`) ----------------------------
 * The file is read in 64 KiB chunks as the lines are asked for, so a reader that stops early (--limit) has
 * read little more than what it used, and memory is one chunk plus the longest line, whatever the file's
 * size. LF, CRLF and a lone CR each end a line (a CR then LF is one break). Every line must be valid UTF-8
 * (no overlong form, no surrogate, nothing above U+10FFFF) without a NUL byte.
 * alab_lines_open opens path (anything it opens to: a regular file, a pipe, /dev/stdin; a directory fails at
 * the first read); max_file caps the bytes read from the file, max_line the bytes of one line (its break not
 * counted). alab_lines_next gives the next line in *line (NUL-terminated, valid until the next call or
 * close) and its length: 1 a line, 0 the end of the file, or an error: ALAB_EFORMAT (a NUL byte, or invalid
 * UTF-8), ALAB_ELIMIT (a line longer than max_line, or more than max_file bytes), ALAB_EIO (a read failed),
 * ALAB_ENOMEM, each with the file, the line number and the byte (1-based) in alab_last_error(); after an
 * error every further call returns it again. alab_lines_number is the number of the line last given or
 * failed (1-based), alab_lines_bytes the bytes read from the file so far. */
typedef struct alab_lines alab_lines;
int alab_lines_open(alab_lines **out, const char *path, uint64_t max_file, size_t max_line);
int alab_lines_next(alab_lines *r, const char **line, size_t *len);
long alab_lines_number(const alab_lines *r);
uint64_t alab_lines_bytes(const alab_lines *r);
void alab_lines_close(alab_lines *r);

/* The length of the valid UTF-8 sequence at s[0..n), 1 to 4, or 0 when it is not one (overlong, a
 * surrogate, above U+10FFFF, cut short, a stray continuation byte). */
int alab_utf8_seq(const unsigned char *s, size_t n);

#endif
