/* test_finite.c — finite inputs never give NaN (issue 21 item 12): the
 * interventions and options that used to overflow a score to inf, and then
 * softmax to NaN, are refused with ALAB_ERANGE; up to the limits the
 * attention is finite and every row a distribution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static alab_model *M;
static const int IDS[6] = {10, 200, 31, 4, 500, 77};
enum { T = 6 };

static int setup(void **state) { M = load_model("tests/fixtures/tiny"); return 0; }
static int teardown(void **state) { alab_model_free(M); return 0; }

static int run(const alab_intervention *v, int n, int scale_override, float scale) {
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.interventions = v;
    o.n_interventions = n;
    o.scale_override = scale_override;
    o.scale = scale;
    return alab_forward(M, IDS, T, &o);
}

/* every attention value finite, every row summing to 1, logits finite */
static void assert_finite_result(void) {
    const alab_config *c = alab_model_config(M);
    const float *att = alab_result_attention(M);
    assert_non_null(att);
    size_t rows = (size_t)c->n_layer * c->n_head * T;
    for (size_t r = 0; r < rows; r++) {
        double sum = 0;
        for (int j = 0; j < T; j++) {
            assert_true(isfinite(att[r * T + j]));
            sum += att[r * T + j];
        }
        assert_true(fabs(sum - 1.0) < 1e-4);
    }
    const float *lg = alab_result_logits(M);
    for (int v = 0; v < c->vocab_size; v++) assert_true(isfinite(lg[v]));
}

static void expect_erange(const alab_intervention *v, int n, int so, float scale, const char *msg) {
    int rc = run(v, n, so, scale);
    if (rc != ALAB_ERANGE) print_error("gave %d: %s\n", rc, alab_last_error());
    assert_int_equal(rc, ALAB_ERANGE);
    if (!strstr(alab_last_error(), msg)) print_error("message lacks '%s': %s\n", msg, alab_last_error());
    assert_non_null(strstr(alab_last_error(), msg));
    /* the model is unchanged: a plain run works */
    assert_int_equal(run(NULL, 0, 0, 0), ALAB_OK);
    assert_finite_result();
}

/* The cases of the issue: each gave NaN attention without an error. */
static void the_listed_cases_are_refused(void **state) {
    alab_intervention two_soft[2] = {{ALAB_DO_SOFT, 1, 0, 3, 1, 3e38f, 0.0f}, {ALAB_DO_SOFT, 1, 0, 3, 1, 3e38f, 0.0f}};
    expect_erange(two_soft, 2, 0, 0, "lambda 3e+38 is outside");
    for (int kind = ALAB_SCALE_Q; kind <= ALAB_SCALE_K; kind++)
        for (int sign = -1; sign <= 1; sign += 2) {
            alab_intervention e = {kind, 0, 1, 0, 0, 0.0f, sign * 3e38f};
            expect_erange(&e, 1, 0, 0, "multiply to 3e+38");
        }
    expect_erange(NULL, 0, 1, 3e38f, "scale 3e+38 is outside");
    expect_erange(NULL, 0, 1, -3e38f, "scale -3e+38 is outside");
}

/* The alphas of one head multiply: 1e3 * 1e3 is the limit, a third factor of
 * 10 is over it, also when it comes through ALL_HEADS. */
static void the_edit_gain_of_a_head_is_the_product_of_its_alphas(void **state) {
    alab_intervention ok[3] = {{ALAB_SCALE_Q, 2, 3, 0, 0, 0.0f, 1e3f}, {ALAB_SWAP_QK, 2, 3, 0, 0, 0.0f, 0}, {ALAB_SCALE_K, 2, 3, 0, 0, 0.0f, -1e3f}};
    assert_int_equal(run(ok, 3, 1, ALAB_MAX_SCALE), ALAB_OK);
    assert_finite_result();
    alab_intervention over[3] = {{ALAB_SCALE_Q, 2, 3, 0, 0, 0.0f, 1e3f}, {ALAB_SCALE_K, 2, 3, 0, 0, 0.0f, 1e3f}, {ALAB_SCALE_Q, 2, ALAB_ALL_HEADS, 0, 0, 0.0f, 10.f}};
    expect_erange(over, 3, 0, 0, "layer 2 head 3 multiply to");
    /* other heads and layers have their own products */
    alab_intervention apart[2] = {{ALAB_SCALE_Q, 2, 3, 0, 0, 0.0f, 1e6f}, {ALAB_SCALE_Q, 1, 3, 0, 0, 0.0f, 1e6f}};
    assert_int_equal(run(apart, 2, 0, 0), ALAB_OK);
    assert_finite_result();
    /* alpha 0 (and tiny alphas) are fine: they only shrink */
    alab_intervention zero[2] = {{ALAB_SCALE_Q, 0, ALAB_ALL_HEADS, 0, 0, 0.0f, 0.0f}, {ALAB_SCALE_K, 0, 0, 0, 0, 0.0f, 1e-30f}};
    assert_int_equal(run(zero, 2, 0, 0), ALAB_OK);
    assert_finite_result();
}

/* The worst that the limits allow is still finite: ALAB_MAX_INTERVENTIONS
 * soft do's of +-1e30 on one cell, at the largest scale. */
static void the_limits_themselves_give_finite_attention(void **state) {
    alab_intervention *v = malloc(ALAB_MAX_INTERVENTIONS * sizeof *v);
    for (int sign = -1; sign <= 1; sign += 2) {
        for (int i = 0; i < ALAB_MAX_INTERVENTIONS; i++)
            v[i] = (alab_intervention){ALAB_DO_SOFT, 1, ALAB_ALL_HEADS, 5, 2, sign * ALAB_MAX_SOFT_LAMBDA, 0.0f};
        assert_int_equal(run(v, ALAB_MAX_INTERVENTIONS, 1, sign * ALAB_MAX_SCALE), ALAB_OK);
        assert_finite_result();
        const float *att = alab_result_attention(M);
        /* layer 1, head 0, row 5: all weight on col 2 (+) or none on it (-) */
        const alab_config *c = alab_model_config(M);
        float a = att[(((size_t)1 * c->n_head + 0) * T + 5) * T + 2];
        if (sign > 0) assert_true(a > 0.999f);
        else assert_true(a < 1e-6f);
    }
    free(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_listed_cases_are_refused),
        cmocka_unit_test(the_edit_gain_of_a_head_is_the_product_of_its_alphas),
        cmocka_unit_test(the_limits_themselves_give_finite_attention),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
