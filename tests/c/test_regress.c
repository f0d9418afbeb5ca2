/* test_regress.c — every input the fuzzers ever flagged (tests/regress/TARGET/FILE)
 * goes through the same entry point as its fuzz target (tests/fuzz/<target>.c,
 * same framing) and must end in a clean result: ALAB_OK or one of the
 * documented ALAB_E* codes with a message, never a crash (the ASan build of
 * this suite, `make test-asan`, also catches invalid reads and leaks).
 *
 * tests/regress/README.md lists each file, what it found and the fix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>

#include "internal.h"
#include "safetensors.h"
#include "testutil.h"

#define IS_CLEAN(rc) ((rc) <= 0 && (rc) >= ALAB_ESTATE)

/* ---- the entry points, framed as in tests/fuzz/<target>.c --------------- */

static int via_json(const char *d, size_t n) {
    json_doc doc;
    int rc = json_parse(&doc, d, n, 0);
    json_free(&doc);
    return rc;
}

static int via_safetensors(const char *d, size_t n) {
    st_file f;
    int rc = st_parse(&f, (const uint8_t *)d, n);
    if (rc == ALAB_OK) st_free(&f);
    return rc;
}

/* Bytes before the first NUL are vocab.json and the rest merges.txt; without
 * a NUL the input is merges.txt for the tiny fixture's vocab.json. */
static int via_bpe_load(const char *d, size_t n) {
    size_t vl = 0;
    char *tiny = NULL;
    const char *v = d, *m = d, *nul = memchr(d, 0, n);
    size_t ml = n;
    if (nul) { vl = (size_t)(nul - d); m = nul + 1; ml = n - vl - 1; }
    else { tiny = slurp(repo_path("tests/fixtures/tiny/vocab.json"), &vl); assert_non_null(tiny); v = tiny; }
    alab_bpe *bpe = NULL;
    int rc = alab_bpe_load(&bpe, v, vl, m, ml);
    alab_bpe_free(bpe);
    free(tiny);
    return rc;
}

static alab_bpe *gpt2_bpe; /* the real GPT-2 tokenizer, loaded once */

static int via_bpe_encode(const char *d, size_t n) {
    alab_bpe *bpe = gpt2_bpe;
    if (!bpe) {
        assert_int_equal(load_gpt2_bpe(&bpe), ALAB_OK);
        gpt2_bpe = bpe;
    }
    int *ids = malloc((3 * n + 1) * sizeof *ids), n_ids = -1;
    int rc = alab_bpe_encode(ids, (int)(3 * n + 1), &n_ids, bpe, d, n);
    if (rc == ALAB_OK) {
        size_t len = 0;
        alab_bpe_decode(NULL, 0, &len, bpe, ids, n_ids);
        for (int i = 0; i < n_ids; i++) assert_true(ids[i] >= 0 && ids[i] < alab_bpe_vocab_size(bpe));
    }
    free(ids);
    return rc;
}

/* First byte 0..3: that file replaces the one of tests/fuzz/mini; 4..: all four
 * files separated by "\n--attnlab-fuzz--\n". An accepted model runs once. */
static int via_model_load(const char *d, size_t n) {
    static const char *names[4] = {"tests/fuzz/mini/config.json", "tests/fuzz/mini/model.safetensors",
                                   "tests/fuzz/mini/vocab.json", "tests/fuzz/mini/merges.txt"};
    static const char SEP[] = "\n--attnlab-fuzz--\n";
    if (n < 1) return ALAB_OK;
    char *buf[4];
    size_t len[4];
    const char *rest = d + 1;
    size_t left = n - 1;
    for (int i = 0; i < 4; i++) {
        const char *part = NULL;
        size_t plen = 0;
        if ((unsigned char)d[0] < 4) {
            if (i == (unsigned char)d[0]) { part = rest; plen = left; }
        } else {
            const char *cut = NULL;
            if (i < 3)
                for (size_t k = 0; k + sizeof SEP - 1 <= left; k++)
                    if (memcmp(rest + k, SEP, sizeof SEP - 1) == 0) { cut = rest + k; break; }
            part = rest;
            plen = cut ? (size_t)(cut - rest) : left;
            size_t used = cut ? plen + sizeof SEP - 1 : left;
            rest += used;
            left -= used;
        }
        if (part) {
            buf[i] = malloc(plen ? plen : 1);
            memcpy(buf[i], part, plen);
            len[i] = plen;
        } else {
            buf[i] = slurp(repo_path(names[i]), &len[i]);
            assert_non_null(buf[i]);
        }
    }
    alab_model *m = NULL;
    int rc = alab_model_load_buffers(&m, buf[0], len[0], buf[1], len[1], buf[2], len[2], buf[3], len[3]);
    assert_true((rc == ALAB_OK) == (m != NULL));
    if (m) {
        const alab_config *c = alab_model_config(m);
        int T = c->n_positions < 4 ? c->n_positions : 4, ids[4];
        for (int t = 0; t < T; t++) ids[t] = (t * 97) % c->vocab_size;
        int frc = alab_forward(m, ids, T, NULL);
        assert_true(frc == ALAB_OK || frc == ALAB_ENOMEM);
        if (frc == ALAB_OK) { /* each attention row: a distribution, or all zero / NaN for overflowing weights */
            const float *att = alab_result_attention(m);
            for (size_t r = 0; r < (size_t)c->n_layer * c->n_head * T; r++) {
                double s = 0;
                for (int j = 0; j < T; j++) s += att[r * T + j];
                assert_true(isnan(s) || s == 0.0 || fabs(s - 1.0) < 1e-3);
            }
        }
        alab_model_free(m);
    }
    free(buf[0]);
    free(buf[2]);
    free(buf[3]); /* buf[1] belongs to the loader */
    return rc;
}

/* ---- run every file of one target's directory ----------------------------- */

static int run_dir(const char *target, int (*entry)(const char *, size_t)) {
    char dir[512];
    snprintf(dir, sizeof dir, "tests/regress/%s", target);
    DIR *dp = opendir(repo_path(dir));
    if (!dp) return 0; /* no findings for this target */
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (e->d_name[0] == '.') continue;
        char rel[1024];
        snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
        size_t n = 0;
        char *d = slurp(repo_path(rel), &n);
        assert_non_null(d);
        alab_clear_error();
        int rc = entry(d, n);
        if (!IS_CLEAN(rc)) fail_msg("%s: rc %d is not a documented code", rel, rc);
        if (rc != ALAB_OK && alab_last_error()[0] == '\0') fail_msg("%s: rc %d without a message", rel, rc);
        free(d);
        count++;
    }
    closedir(dp);
    return count;
}

static void json_findings_end_cleanly(void **state) { run_dir("fuzz_json", via_json); }
static void safetensors_findings_end_cleanly(void **state) { run_dir("fuzz_safetensors", via_safetensors); }
static void bpe_load_findings_end_cleanly(void **state) { run_dir("fuzz_bpe_load", via_bpe_load); }
static void bpe_encode_findings_end_cleanly(void **state) { run_dir("fuzz_bpe_encode", via_bpe_encode); }
static void model_load_findings_end_cleanly(void **state) {
    assert_true(run_dir("fuzz_model_load", via_model_load) >= 1); /* huge-weights-nan-attention at least */
}

/* The first finding, by name: a valid model whose finite weights are ~1e38
 * loads, and its forward pass overflows to non-finite scores; softmax then
 * gives all-zero rows (NaN scores count as masked) — garbage, not a crash. */
static void a_model_with_huge_finite_weights_runs_without_crashing(void **state) {
    size_t n = 0;
    char *d = slurp(repo_path("tests/regress/fuzz_model_load/huge-weights-nan-attention"), &n);
    assert_non_null(d);
    assert_int_equal(via_model_load(d, n), ALAB_OK);
    free(d);
}

/* The cases the fuzzers reach only by luck, made by hand: the loaders refuse them
 * with their documented code before touching memory they do not have. */
static void hand_made_hostile_files_get_their_codes(void **state) {
    /* a safetensors header that declares a 3 GB tensor in an 8 KB file */
    const char hdr[] = "{\"wte.weight\":{\"dtype\":\"F32\",\"shape\":[750000000],\"data_offsets\":[0,3000000000]}}";
    size_t n = 8 + sizeof hdr - 1 + 8192;
    uint8_t *buf = calloc(1, n);
    uint64_t hl = sizeof hdr - 1;
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(hl >> (8 * i));
    memcpy(buf + 8, hdr, sizeof hdr - 1);
    assert_int_equal(via_safetensors((const char *)buf, n), ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "truncated"));
    /* header length 2^63: refused before any allocation */
    memset(buf, 0, 8);
    buf[7] = 0x80;
    assert_int_equal(via_safetensors((const char *)buf, n), ALAB_EFORMAT);
    free(buf);
    /* shape whose element count overflows size_t */
    const char ovf[] = "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,0]}}";
    uint8_t b2[8 + sizeof ovf];
    hl = sizeof ovf - 1;
    for (int i = 0; i < 8; i++) b2[i] = (uint8_t)(hl >> (8 * i));
    memcpy(b2 + 8, ovf, sizeof ovf - 1);
    assert_int_equal(via_safetensors((const char *)b2, 8 + sizeof ovf - 1), ALAB_EFORMAT);
    /* 65 levels of nesting */
    char deep[131];
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    assert_int_equal(via_json(deep, 130), ALAB_EJSON);
    /* a PNG as merges.txt */
    const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    assert_int_equal(via_bpe_load(png, sizeof png - 1), ALAB_EJSON); /* the NUL splits: the PNG signature is vocab.json */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_findings_end_cleanly),
        cmocka_unit_test(safetensors_findings_end_cleanly),
        cmocka_unit_test(bpe_load_findings_end_cleanly),
        cmocka_unit_test(bpe_encode_findings_end_cleanly),
        cmocka_unit_test(model_load_findings_end_cleanly),
        cmocka_unit_test(a_model_with_huge_finite_weights_runs_without_crashing),
        cmocka_unit_test(hand_made_hostile_files_get_their_codes),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    alab_bpe_free(gpt2_bpe);
    return failed;
}
