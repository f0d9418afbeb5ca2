/* test_io.c — the native model-directory loader (c/src/io.c) reads regular
 * files only, each within the limit of its kind, and refuses everything else
 * before reading a byte (issue 21: a FIFO in the model folder blocked the
 * CLI forever; a directory as config.json was reported as
 * "9223372036854775807 bytes"). */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"

static const char *FILES[4] = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};

/* A temporary copy of tests/fixtures/tiny. */
static char *copy_tiny(void) {
    char *dir = strdup("/tmp/attnlab-test-io-XXXXXX");
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 4; i++) {
        char rel[256], dst[512];
        snprintf(rel, sizeof rel, "tests/fixtures/tiny/%s", FILES[i]);
        size_t n = 0;
        char *b = slurp(repo_path(rel), &n);
        assert_non_null(b);
        snprintf(dst, sizeof dst, "%s/%s", dir, FILES[i]);
        FILE *f = fopen(dst, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b, 1, n, f), n);
        fclose(f);
        free(b);
    }
    return dir;
}

static void remove_tree(char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static char *file_in(const char *dir, const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static void expect_load(const char *dir, int want, const char *in_message) {
    alab_model *m = (alab_model *)&m;
    int rc = alab_model_load_dir(&m, dir);
    if (rc != want) print_error("load gave %d: %s\n", rc, alab_last_error());
    assert_int_equal(rc, want);
    if (want == ALAB_OK) {
        assert_non_null(m);
        alab_model_free(m);
        return;
    }
    assert_null(m);
    if (!strstr(alab_last_error(), in_message)) print_error("message lacks '%s': %s\n", in_message, alab_last_error());
    assert_non_null(strstr(alab_last_error(), in_message));
}

static void the_copy_loads(void **state) {
    char *dir = copy_tiny();
    expect_load(dir, ALAB_OK, "");
    remove_tree(dir);
}

/* Before the fix this test never returned (open() of a FIFO waits for a writer). */
static void a_fifo_in_place_of_any_file_is_refused_without_blocking(void **state) {
    for (int i = 0; i < 4; i++) {
        char *dir = copy_tiny();
        assert_int_equal(unlink(file_in(dir, FILES[i])), 0);
        assert_int_equal(mkfifo(file_in(dir, FILES[i]), 0600), 0);
        expect_load(dir, ALAB_EIO, "is a FIFO, not a regular file");
        remove_tree(dir);
    }
}

static void a_directory_or_a_socket_in_place_of_a_file_is_refused(void **state) {
    char *dir = copy_tiny();
    assert_int_equal(unlink(file_in(dir, "config.json")), 0);
    assert_int_equal(mkdir(file_in(dir, "config.json"), 0700), 0);
    expect_load(dir, ALAB_EIO, "config.json is a directory, not a regular file");
    remove_tree(dir);

    dir = copy_tiny();
    assert_int_equal(unlink(file_in(dir, "vocab.json")), 0);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%.100s", file_in(dir, "vocab.json"));
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    expect_load(dir, ALAB_EIO, "vocab.json: No such device or address"); /* open() itself refuses a socket */
    close(s);
    remove_tree(dir);

    /* a character device through a symlink: the target is what counts */
    dir = copy_tiny();
    assert_int_equal(unlink(file_in(dir, "merges.txt")), 0);
    assert_int_equal(symlink("/dev/zero", file_in(dir, "merges.txt")), 0);
    expect_load(dir, ALAB_EIO, "is a character device");
    remove_tree(dir);
}

/* Each kind has its own limit, checked on the size before any read (the
 * files here are sparse: nothing of them is ever written or read). */
static void each_file_kind_is_held_to_its_own_limit(void **state) {
    static const struct { const char *name; uint64_t limit; } K[4] = {
        {"config.json", ALAB_MAX_CONFIG_BYTES},
        {"vocab.json", ALAB_MAX_VOCAB_BYTES},
        {"merges.txt", ALAB_MAX_MERGES_BYTES},
        {"model.safetensors", ALAB_MAX_WEIGHTS_FILE_BYTES},
    };
    for (int i = 0; i < 4; i++) {
        char *dir = copy_tiny();
        assert_int_equal(truncate(file_in(dir, K[i].name), (off_t)(K[i].limit + 1)), 0);
        expect_load(dir, ALAB_ELIMIT, "over the limit of");
        remove_tree(dir);
    }
    /* exactly at the limit is read (config.json of 1 MiB: the JSON then has
     * trailing NULs, which the parser refuses, so the read happened) */
    char *dir = copy_tiny();
    assert_int_equal(truncate(file_in(dir, "config.json"), (off_t)ALAB_MAX_CONFIG_BYTES), 0);
    expect_load(dir, ALAB_EJSON, "");
    remove_tree(dir);
}

static void an_empty_or_missing_directory_is_refused(void **state) {
    expect_load("", ALAB_EINVAL, "empty string");
    expect_load("/nonexistent-attnlab-dir", ALAB_EIO, "cannot open /nonexistent-attnlab-dir/config.json");
}

/* alab_read_whole_file (c/src/io.h), which the CLI, the tests, the benchmarks and the fuzzers read files with:
 * the bytes plus a NUL, the cap, what it refuses, and errno for the CLI's message. */
static void the_whole_file_reader(void **state) {
    char *dir = copy_tiny(), *buf = (char *)&buf;
    size_t len = 7;
    FILE *f = fopen(file_in(dir, "ten"), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite("0123456789", 1, 10, f), 10);
    fclose(f);
    for (unsigned flags = 0; flags <= ALAB_READ_STREAMS; flags++) {
        assert_int_equal(alab_read_whole_file(&buf, &len, file_in(dir, "ten"), 10, flags), ALAB_OK);
        assert_int_equal(len, 10);
        assert_memory_equal(buf, "0123456789", 11);
        free(buf);
        assert_int_equal(alab_read_whole_file(&buf, &len, file_in(dir, "ten"), 9, flags), ALAB_ELIMIT);
        assert_int_equal(errno, EFBIG);
        assert_null(buf);
        assert_int_equal(len, 0);
        assert_int_equal(alab_read_whole_file(&buf, &len, file_in(dir, "none"), 10, flags), ALAB_EIO);
        assert_int_equal(errno, ENOENT);
        assert_non_null(strstr(alab_last_error(), "cannot open"));
        assert_int_equal(alab_read_whole_file(&buf, &len, dir, 10, flags), ALAB_EIO);
        assert_int_equal(errno, EISDIR);
    }
    assert_non_null(strstr(alab_last_error(), "cannot read")); /* streams: read() refuses the directory */
    /* a pipe: refused, or with ALAB_READ_STREAMS read to its end */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "hello", 5), 5);
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    assert_int_equal(alab_read_whole_file(&buf, &len, path, 100, 0), ALAB_EIO);
    assert_non_null(strstr(alab_last_error(), "is a FIFO, not a regular file"));
    assert_int_equal(alab_read_whole_file(&buf, &len, path, 100, ALAB_READ_STREAMS), ALAB_OK);
    assert_int_equal(len, 5);
    assert_string_equal(buf, "hello");
    free(buf);
    close(fds[0]);
    /* an endless stream stops at the cap */
    assert_int_equal(alab_read_whole_file(&buf, &len, "/dev/zero", 200000, ALAB_READ_STREAMS), ALAB_ELIMIT);
    assert_int_equal(errno, EFBIG);
    assert_int_equal(alab_read_whole_file(&buf, &len, "/dev/null", 10, ALAB_READ_STREAMS), ALAB_OK);
    assert_int_equal(len, 0);
    assert_int_equal(buf[0], '\0');
    free(buf);
    remove_tree(dir);
}

/* ---- the dataset reader: a text file line by line (issue 53) --------------------------------------------- */

static char *write_file(const char *dir, const char *name, const void *data, size_t n) {
    char *path = file_in(dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}

/* Every line of data (n bytes) read back: the lines joined by '|' into out; the last result. */
static int read_lines(char *out, size_t cap, const char *dir, const void *data, size_t n, uint64_t max_file,
                      size_t max_line, long *number) {
    alab_lines *r;
    assert_int_equal(alab_lines_open(&r, write_file(dir, "lines", data, n), max_file, max_line), ALAB_OK);
    out[0] = '\0';
    const char *line;
    size_t len;
    int rc, k = 0;
    while ((rc = alab_lines_next(r, &line, &len)) == 1) {
        assert_int_equal(strlen(line), len);
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", k++ ? "|" : "", line);
    }
    *number = alab_lines_number(r);
    if (rc < 0) assert_int_equal(alab_lines_next(r, &line, &len), rc); /* the error again */
    alab_lines_close(r);
    return rc;
}

static void the_line_reader(void **state) {
    char *dir = copy_tiny(), got[4096];
    long num;
    /* LF, CRLF and a lone CR are each one break; a CRLF split across no boundary is one break */
    assert_int_equal(read_lines(got, sizeof got, dir, "a\nb\r\nc\rd", 8, 100, 100, &num), 0);
    assert_string_equal(got, "a|b|c|d");
    assert_int_equal(num, 4);
    assert_int_equal(read_lines(got, sizeof got, dir, "a\r\r\nb\n\n", 7, 100, 100, &num), 0);
    assert_string_equal(got, "a||b|");
    assert_int_equal(read_lines(got, sizeof got, dir, "", 0, 100, 100, &num), 0);
    assert_string_equal(got, "");
    assert_int_equal(num, 0);
    /* UTF-8: every valid form passes; a NUL, an overlong form, a surrogate, a cut sequence, a stray byte do not */
    const char *good = "\x7f \xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xf0\x90\x80\x80 \xf4\x8f\xbf\xbf";
    assert_int_equal(read_lines(got, sizeof got, dir, good, strlen(good), 100, 100, &num), 0);
    assert_string_equal(got, good);
    static const struct { const char *bytes; size_t n; long line; const char *what; } bad[] = {
        {"ok\nx\0y\n", 7, 2, "a NUL byte"},
        {"\xc0\x80", 2, 1, "invalid UTF-8"},            /* overlong NUL */
        {"\xe0\x9f\xbf", 3, 1, "invalid UTF-8"},        /* overlong */
        {"a\n\xed\xa0\x80", 5, 2, "invalid UTF-8"},     /* a surrogate */
        {"\xf4\x90\x80\x80", 4, 1, "invalid UTF-8"},    /* above U+10FFFF */
        {"\xe2\x82\n", 3, 1, "invalid UTF-8"},          /* cut by a break */
        {"ab\xe2\x82", 4, 1, "invalid UTF-8"},          /* cut by the end */
        {"\x80", 1, 1, "invalid UTF-8"},                /* a stray continuation */
        {"\xff", 1, 1, "invalid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(read_lines(got, sizeof got, dir, bad[i].bytes, bad[i].n, 100, 100, &num), ALAB_EFORMAT);
        assert_int_equal(num, bad[i].line);
        assert_non_null(strstr(alab_last_error(), bad[i].what));
        char where[32];
        snprintf(where, sizeof where, "line %ld", bad[i].line);
        assert_non_null(strstr(alab_last_error(), where));
    }
    /* a line of exactly max_line bytes passes, one byte more (or a multi-byte character across it) does not */
    assert_int_equal(read_lines(got, sizeof got, dir, "abcd\nabc", 8, 100, 4, &num), 0);
    assert_int_equal(read_lines(got, sizeof got, dir, "abc\nabcde\n", 10, 100, 4, &num), ALAB_ELIMIT);
    assert_int_equal(num, 2);
    assert_non_null(strstr(alab_last_error(), "line 2 is longer than 4 bytes"));
    assert_int_equal(read_lines(got, sizeof got, dir, "abc\xc3\xa9", 5, 100, 4, &num), ALAB_ELIMIT);
    /* the file's cap: more bytes than max_file is ELIMIT, exactly max_file is not */
    assert_int_equal(read_lines(got, sizeof got, dir, "a\nb\nc\n", 6, 6, 100, &num), 0);
    assert_int_equal(read_lines(got, sizeof got, dir, "a\nb\nc\nd", 7, 6, 100, &num), ALAB_ELIMIT);
    assert_int_equal(errno, EFBIG);
    /* lines and characters across the 64 KiB chunks: 70 000 lines of "é\r\n" (a CRLF and a 2-byte character
     * cut at 65 536), read back whole */
    const size_t N = 70000;
    char *big = malloc(4 * N);
    assert_non_null(big);
    for (size_t i = 0; i < N; i++) memcpy(big + 4 * i, "\xc3\xa9\r\n", 4);
    alab_lines *r;
    assert_int_equal(alab_lines_open(&r, write_file(dir, "big", big, 4 * N), 4 * N, 8), ALAB_OK);
    const char *line;
    size_t len, count = 0;
    int rc;
    while ((rc = alab_lines_next(r, &line, &len)) == 1) {
        assert_int_equal(len, 2);
        assert_memory_equal(line, "\xc3\xa9", 3);
        count++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(count, N);
    assert_int_equal(alab_lines_bytes(r), 4 * N);
    alab_lines_close(r);
    free(big);
    /* a reader that stops early has read one chunk, not the file */
    assert_int_equal(alab_lines_open(&r, file_in(dir, "big"), 4 * N, 8), ALAB_OK);
    assert_int_equal(alab_lines_next(r, &line, &len), 1);
    assert_true(alab_lines_bytes(r) <= 65536);
    alab_lines_close(r);
    /* endless input: /dev/zero is a NUL at line 1, at once; a pipe is read like a file; a directory fails */
    assert_int_equal(alab_lines_open(&r, "/dev/zero", (uint64_t)1 << 40, 1 << 20), ALAB_OK);
    assert_int_equal(alab_lines_next(r, &line, &len), ALAB_EFORMAT);
    assert_true(alab_lines_bytes(r) <= 65536);
    alab_lines_close(r);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "x\ny", 3), 3);
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    assert_int_equal(alab_lines_open(&r, path, 100, 100), ALAB_OK);
    assert_int_equal(alab_lines_next(r, &line, &len), 1);
    assert_string_equal(line, "x");
    assert_int_equal(alab_lines_next(r, &line, &len), 1);
    assert_string_equal(line, "y");
    assert_int_equal(alab_lines_next(r, &line, &len), 0);
    alab_lines_close(r);
    close(fds[0]);
    assert_int_equal(alab_lines_open(&r, dir, 100, 100), ALAB_OK);
    assert_int_equal(alab_lines_next(r, &line, &len), ALAB_EIO);
    alab_lines_close(r);
    assert_int_equal(alab_lines_open(&r, file_in(dir, "none"), 100, 100), ALAB_EIO);
    assert_null(r);
    remove_tree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_copy_loads),
        cmocka_unit_test(a_fifo_in_place_of_any_file_is_refused_without_blocking),
        cmocka_unit_test(a_directory_or_a_socket_in_place_of_a_file_is_refused),
        cmocka_unit_test(each_file_kind_is_held_to_its_own_limit),
        cmocka_unit_test(an_empty_or_missing_directory_is_refused),
        cmocka_unit_test(the_whole_file_reader),
        cmocka_unit_test(the_line_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
