/* test_analysis.c — the chapter's quantities, checked on hand-computed cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static void the_dag_score_is_the_mass_strictly_below_the_diagonal(void **state) {
    (void)state;
    const float A[9] = {1, 0, 0,
                        0.5f, 0.5f, 0,
                        0.2f, 0.3f, 0.5f};
    /* below: 0.5 + 0.2 + 0.3 = 1.0 of a total 3.0 */
    assert_true(fabs(alab_dag_score(A, 3) - 1.0 / 3.0) < 1e-7);
    const float up[4] = {0, 1, 0, 1};
    assert_true(alab_dag_score(up, 2) == 0.0);
    const float down[4] = {1, 0, 1, 0};
    assert_true(fabs(alab_dag_score(down, 2) - 0.5) < 1e-12);
    const float zero[4] = {0, 0, 0, 0};
    assert_true(alab_dag_score(zero, 2) == 0.0);
}

static void the_null_dag_score_is_that_of_uniform_causal_attention(void **state) {
    (void)state;
    assert_true(fabs(alab_null_dag_score(10) - 0.70710317) < 1e-7); /* the chapter's null: 0.7071 for T = 10 */
    assert_true(alab_null_dag_score(1) == 0.0);
    assert_true(fabs(alab_null_dag_score(2) - 0.25) < 1e-12);
    for (int T = 1; T <= 40; T++) { /* equal to the DAG score of the uniform causal matrix */
        float *A = calloc((size_t)T * T, sizeof(float));
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++) A[i * T + j] = 1.0f / (i + 1);
        assert_true(fabs(alab_dag_score(A, T) - alab_null_dag_score(T)) < 1e-6);
        free(A);
    }
    assert_true(alab_null_dag_score(0) == 0.0);
}

/* The DAG score of the uniform matrix a mask allows, built by hand. */
static double uniform_dag(int mode, int W, int T) {
    float *A = calloc((size_t)T * T, sizeof(float));
    for (int i = 0; i < T; i++) {
        int lo = mode == ALAB_MASK_FULL ? 0 : mode == ALAB_MASK_WINDOW && i - W + 1 > 0 ? i - W + 1 : 0;
        int hi = mode == ALAB_MASK_FULL ? T : i + 1;
        for (int j = lo; j < hi; j++) A[i * T + j] = 1.0f / (hi - lo);
    }
    double d = alab_dag_score(A, T);
    free(A);
    return d;
}

static void the_null_follows_the_mask(void **state) {
    (void)state;
    /* by hand: causal T = 10: (1/10)(0 + 1/2 + 2/3 + ... + 9/10) = 0.70710317 */
    assert_true(alab_mask_null_dag_score(ALAB_MASK_CAUSAL, 0, 10) == alab_null_dag_score(10));
    /* full: row i has i of T keys below: (1/T) sum i/T = (T-1)/(2T) = 0.45 at T = 10 */
    assert_true(fabs(alab_mask_null_dag_score(ALAB_MASK_FULL, 0, 10) - 0.45) < 1e-15);
    /* window 3, T = 10: rows 0, 1, 2..9 see 1, 2, 3 keys: (0 + 1/2 + 8 * 2/3) / 10 = 0.58333 */
    assert_true(fabs(alab_mask_null_dag_score(ALAB_MASK_WINDOW, 3, 10) - 35.0 / 60.0) < 1e-15);
    /* window 1: every row sees itself only; a window as long as the text is the causal mask */
    assert_true(alab_mask_null_dag_score(ALAB_MASK_WINDOW, 1, 10) == 0.0);
    assert_true(fabs(alab_mask_null_dag_score(ALAB_MASK_WINDOW, 10, 10) - alab_null_dag_score(10)) < 1e-15);
    assert_true(fabs(alab_mask_null_dag_score(ALAB_MASK_WINDOW, 50, 10) - alab_null_dag_score(10)) < 1e-15);
    for (int T = 1; T <= 24; T++) { /* each equals the DAG score of its uniform matrix */
        assert_true(fabs(alab_mask_null_dag_score(ALAB_MASK_FULL, 0, T) - uniform_dag(ALAB_MASK_FULL, 0, T)) < 1e-6);
        for (int W = 1; W <= T + 1; W++)
            assert_true(fabs(alab_mask_null_dag_score(ALAB_MASK_WINDOW, W, T) - uniform_dag(ALAB_MASK_WINDOW, W, T)) < 1e-6);
    }
    assert_true(alab_mask_null_dag_score(ALAB_MASK_FULL, 0, 0) == 0.0);
    assert_true(isnan(alab_mask_null_dag_score(7, 0, 10)));
    assert_non_null(strstr(alab_last_error(), "mode"));
    assert_true(isnan(alab_mask_null_dag_score(ALAB_MASK_WINDOW, 0, 10)));
    assert_non_null(strstr(alab_last_error(), "window"));
}

static void the_asymmetry_is_antisymmetric_with_a_zero_diagonal(void **state) {
    (void)state;
    float A[16], D[16];
    for (int i = 0; i < 16; i++) A[i] = (float)((i * 7919) % 13) / 13.0f;
    alab_asymmetry(D, A, 4);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            assert_true(D[i * 4 + j] == A[i * 4 + j] - A[j * 4 + i]);
            assert_true(D[i * 4 + j] == -D[j * 4 + i]);
        }
}

static void the_trace_of_the_outer_product_is_the_dot_product(void **state) {
    (void)state;
    float q[5] = {1, -2, 3, 0.5f, 4}, k[5] = {2, 1, -1, 8, 0.25f}, M[25];
    double tr = alab_outer_product(M, q, k, 5);
    assert_true(fabs(tr - (2 - 2 - 3 + 4 + 1)) < 1e-9);
    assert_true(M[1 * 5 + 3] == q[1] * k[3]);
    double diag = 0;
    for (int a = 0; a < 5; a++) diag += M[a * 5 + a];
    assert_true(fabs(diag - tr) < 1e-6);
}

static void the_head_average_is_the_mean_over_heads(void **state) {
    (void)state;
    float att[2 * 4] = {1, 0, 0.5f, 0.5f, 0, 1, 0.25f, 0.75f}, avg[4];
    alab_head_average(avg, att, 2, 2);
    assert_true(avg[0] == 0.5f && avg[1] == 0.5f && avg[2] == 0.375f && avg[3] == 0.625f);
}

static void entropy_is_zero_for_one_hot_rows_and_log_t_for_uniform(void **state) {
    (void)state;
    float I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, U[9];
    for (int i = 0; i < 9; i++) U[i] = 1.0f / 3.0f;
    assert_true(fabs(alab_attention_entropy(I, 3)) < 1e-12);
    assert_true(fabs(alab_attention_entropy(U, 3) - log(3.0)) < 1e-6);
}

static void the_display_do_is_the_chapters_operation(void **state) {
    (void)state;
    float A[9] = {1, 0, 0, 0.6f, 0.4f, 0, 0.2f, 0.3f, 0.5f}, out[9];
    assert_int_equal(alab_display_do(out, A, 3, 2, 0, 1, 0), ALAB_OK);
    assert_true(out[6] == 1.0f && out[7] == 0.0f && out[8] == 0.0f);
    assert_memory_equal(out, A, 6 * sizeof(float)); /* other rows untouched */
    /* soft: row 2 = softmax(log(row + 1e-9) + λ e_col), computed by hand */
    const float lambda = 3.0f;
    assert_int_equal(alab_display_do(out, A, 3, 2, 0, 0, lambda), ALAB_OK);
    double w0 = (0.2 + 1e-9) * exp(3.0), w1 = 0.3 + 1e-9, w2 = 0.5 + 1e-9, s = w0 + w1 + w2;
    assert_true(fabs(out[6] - w0 / s) < 1e-6);
    assert_true(fabs(out[7] - w1 / s) < 1e-6);
    assert_true(fabs(out[8] - w2 / s) < 1e-6);
    /* a masked zero cell can be raised by a soft do (the 1e-9 floor): λ = 30 */
    assert_int_equal(alab_display_do(out, A, 3, 1, 2, 0, 30.0f), ALAB_OK);
    assert_true(out[5] > 0.9f);
    /* in place works */
    float B[9];
    memcpy(B, A, sizeof B);
    assert_int_equal(alab_display_do(B, B, 3, 2, 0, 0, lambda), ALAB_OK);
    assert_true(fabs(B[6] - w0 / s) < 1e-6);
}

static void the_display_do_rejects_bad_indices_and_lambda(void **state) {
    (void)state;
    float A[4] = {1, 0, 0.5f, 0.5f}, out[4];
    assert_int_equal(alab_display_do(out, A, 2, 2, 0, 1, 0), ALAB_ERANGE);
    assert_int_equal(alab_display_do(out, A, 2, 0, -1, 1, 0), ALAB_ERANGE);
    assert_int_equal(alab_display_do(out, A, 2, 0, 0, 0, NAN), ALAB_ENAN);
    assert_int_equal(alab_display_do(out, A, 0, 0, 0, 1, 0), ALAB_EEMPTY);
    assert_int_equal(alab_display_do(NULL, A, 2, 0, 0, 1, 0), ALAB_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_dag_score_is_the_mass_strictly_below_the_diagonal),
        cmocka_unit_test(the_null_dag_score_is_that_of_uniform_causal_attention),
        cmocka_unit_test(the_null_follows_the_mask),
        cmocka_unit_test(the_asymmetry_is_antisymmetric_with_a_zero_diagonal),
        cmocka_unit_test(the_trace_of_the_outer_product_is_the_dot_product),
        cmocka_unit_test(the_head_average_is_the_mean_over_heads),
        cmocka_unit_test(entropy_is_zero_for_one_hot_rows_and_log_t_for_uniform),
        cmocka_unit_test(the_display_do_is_the_chapters_operation),
        cmocka_unit_test(the_display_do_rejects_bad_indices_and_lambda),
    };
    return cmocka_run_group_tests_name("analysis", tests, NULL, NULL);
}
