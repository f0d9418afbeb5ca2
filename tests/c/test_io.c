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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_copy_loads),
        cmocka_unit_test(a_fifo_in_place_of_any_file_is_refused_without_blocking),
        cmocka_unit_test(a_directory_or_a_socket_in_place_of_a_file_is_refused),
        cmocka_unit_test(each_file_kind_is_held_to_its_own_limit),
        cmocka_unit_test(an_empty_or_missing_directory_is_refused),
        cmocka_unit_test(the_whole_file_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
