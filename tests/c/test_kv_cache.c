/* test_kv_cache.c — generation with the key/value cache (issue 8) against generation by a full
 * forward per token: the same ids (greedy and seeded sampling) and, at every step, the logits the
 * token was chosen from within 1e-4 — on the tiny fixtures (f32, f16) and the built-in model,
 * up to the end of the context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "testutil.h"

/* c/src/generate.c: alab_generate with (use_cache = 1) or without the cache, logging each step's logits */
int alab_generate_impl(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                       float temperature, int top_k, uint64_t *rng_state, int use_cache, float *step_logits);

#define TOL_LOGITS 1e-4

/* cached vs uncached: identical ids, logits within TOL_LOGITS at every step */
static void compare(alab_model *m, const int *ids, int T, int max_new, float temperature, int top_k, uint64_t seed) {
    const int V = alab_model_config(m)->vocab_size;
    int *a = malloc((size_t)max_new * sizeof(int)), *b = malloc((size_t)max_new * sizeof(int));
    float *la = malloc((size_t)max_new * V * sizeof(float)), *lb = malloc((size_t)max_new * V * sizeof(float));
    assert_true(a && b && la && lb);
    int na = -1, nb = -1;
    uint64_t ra = seed, rb = seed;
    assert_int_equal(alab_generate_impl(a, &na, m, ids, T, max_new, temperature, top_k, &ra, 1, la), ALAB_OK);
    assert_int_equal(alab_generate_impl(b, &nb, m, ids, T, max_new, temperature, top_k, &rb, 0, lb), ALAB_OK);
    assert_int_equal(na, max_new);
    assert_int_equal(nb, max_new);
    assert_memory_equal(a, b, (size_t)max_new * sizeof(int));
    assert_true(ra == rb); /* the same number of draws */
    double worst = max_abs_diff(la, lb, (size_t)max_new * V);
    if (!(worst <= TOL_LOGITS))
        fail_msg("T=%d max_new=%d temp=%g: cached logits differ by %.3g (> %g)", T, max_new, temperature, worst, TOL_LOGITS);
    free(a), free(b), free(la), free(lb);
}

static void cached_greedy_generation_equals_full_forwards_on_tiny(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    int ids[11] = {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50};
    compare(m, ids, 1, 12, 0.0f, 0, 1);   /* from a single token */
    compare(m, ids, 4, 20, 0.0f, 0, 1);
    compare(m, ids, 11, 53, 0.0f, 0, 1);  /* to the end of the context (P = 64) */
    alab_model_free(m);
}

static void cached_sampling_equals_full_forwards_with_the_same_seed(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    int ids[4] = {40, 41, 42, 43};
    compare(m, ids, 4, 30, 1.0f, 20, 7);
    compare(m, ids, 4, 30, 0.7f, 0, 12345);
    alab_model_free(m);
}

static void cached_generation_equals_full_forwards_on_f16_weights(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny-f16");
    int ids[5] = {100, 7, 300, 12, 999};
    compare(m, ids, 5, 25, 0.0f, 0, 1);
    alab_model_free(m);
}

static void cached_generation_equals_full_forwards_on_the_builtin_model(void **state) {
    (void)state;
    alab_model *m = load_model("models/brown-gpt2");
    int ids[64];
    const char *text = "The quick brown fox jumps over the lazy dog because";
    int n = 0;
    assert_int_equal(alab_bpe_encode(ids, 64, &n, alab_model_bpe(m), text, strlen(text)), ALAB_OK);
    assert_true(n > 0 && n <= 64);
    compare(m, ids, n, 24, 0.0f, 0, 1);
    alab_model_free(m);
}

static void a_run_after_generation_is_unaffected_by_the_cache(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    int ids[6] = {40, 41, 42, 43, 44, 45}, out[8], n = 0;
    uint64_t rng = 1;
    assert_int_equal(alab_forward(m, ids, 6, NULL), ALAB_OK);
    const int V = alab_model_config(m)->vocab_size;
    float *before = malloc((size_t)V * sizeof(float));
    assert_non_null(before);
    memcpy(before, alab_result_logits(m), (size_t)V * sizeof(float));
    assert_int_equal(alab_generate(out, &n, m, ids, 6, 8, 0.0f, 0, &rng), ALAB_OK);
    assert_int_equal(n, 8);
    assert_int_equal(alab_result_T(m), 0); /* generation leaves no result */
    assert_null(alab_result_logits(m));
    assert_int_equal(alab_forward(m, ids, 6, NULL), ALAB_OK);
    assert_memory_equal(before, alab_result_logits(m), (size_t)V * sizeof(float));
    free(before);
    alab_model_free(m);
}

static void generation_rejects_bad_prompts_with_codes(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    int bad[2] = {40, 5000}, out[4], n = 7;
    uint64_t rng = 1;
    assert_int_equal(alab_generate(out, &n, m, bad, 2, 4, 0.0f, 0, &rng), ALAB_ERANGE);
    assert_int_equal(n, 0);
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 64, 0.0f, 0, &rng), ALAB_ETOOLONG);
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 0, 0.0f, 0, &rng), ALAB_OK);
    assert_int_equal(n, 0);
    /* a temperature out of range is ERANGE (an infinite one too: a huge double becomes inf as a float); NaN is ENAN */
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 1, INFINITY, 0, &rng), ALAB_ERANGE);
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 1, 2e6f, 0, &rng), ALAB_ERANGE);
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 1, -1.0f, 0, &rng), ALAB_ERANGE);
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 1, NAN, 0, &rng), ALAB_ENAN);
    assert_int_equal(alab_generate(out, &n, m, bad, 1, 1, 1e6f, 0, &rng), ALAB_OK);
    alab_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cached_greedy_generation_equals_full_forwards_on_tiny),
        cmocka_unit_test(cached_sampling_equals_full_forwards_with_the_same_seed),
        cmocka_unit_test(cached_generation_equals_full_forwards_on_f16_weights),
        cmocka_unit_test(cached_generation_equals_full_forwards_on_the_builtin_model),
        cmocka_unit_test(a_run_after_generation_is_unaffected_by_the_cache),
        cmocka_unit_test(generation_rejects_bad_prompts_with_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
