/* test_linattn.c — linear attention: the causal prefix sums, the recurrence
 * and the quadratic matrix with the same kernel give the same outputs; FAVOR+
 * approaches softmax attention as the number of random features grows; and
 * the 1/sqrt(d_k) scale keeps var(q.k) at 1 and the softmax entropy steady. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static void random_normal(float *x, int n, float sd, uint64_t *rng) {
    for (int k = 0; k < n; k++) x[k] = sd * (float)alab_rng_normal(rng);
}

/* max_k |a_k - b_k| / (max_k |b_k| + tiny) */
static double rel_err(const float *a, const float *b, int n) {
    double num = 0.0, den = 1e-30;
    for (int k = 0; k < n; k++) {
        double e = fabs((double)a[k] - b[k]);
        if (!(e <= num)) num = e;
        if (fabs(b[k]) > den) den = fabs(b[k]);
    }
    return num / den;
}

static void softmax_attention_matches_a_plain_loop_and_masks_the_future(void **state) {
    (void)state;
    enum { T = 9, d = 4, dv = 3 };
    float Q[T * d], K[T * d], V[T * dv], out[T * dv], full[T * dv];
    uint64_t rng = 1;
    random_normal(Q, T * d, 1, &rng);
    random_normal(K, T * d, 1, &rng);
    random_normal(V, T * dv, 1, &rng);
    assert_int_equal(alab_softmax_attention(out, Q, K, V, T, d, dv, 0.5f, 1), ALAB_OK);
    for (int c = 0; c < dv; c++) assert_true(fabsf(out[c] - V[c]) < 1e-6f); /* row 0 sees only v_0 */
    for (int i = 0; i < T; i++) { /* by hand, in double */
        double s[T], mx = -1e300, z = 0;
        for (int j = 0; j <= i; j++) {
            s[j] = 0;
            for (int k = 0; k < d; k++) s[j] += 0.5 * Q[i * d + k] * K[j * d + k];
            if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j <= i; j++) z += (s[j] = exp(s[j] - mx));
        for (int c = 0; c < dv; c++) {
            double o = 0;
            for (int j = 0; j <= i; j++) o += s[j] / z * V[j * dv + c];
            assert_true(fabs(out[i * dv + c] - o) < 1e-6);
        }
    }
    /* without the mask, the last row is the same (it sees everything either way) */
    assert_int_equal(alab_softmax_attention(full, Q, K, V, T, d, dv, 0.5f, 0), ALAB_OK);
    for (int c = 0; c < dv; c++) assert_true(fabsf(full[(T - 1) * dv + c] - out[(T - 1) * dv + c]) < 1e-6f);
    assert_true(fabsf(full[0] - out[0]) > 1e-4f);
}

static void the_feature_maps_are_positive_and_favor_estimates_the_softmax_kernel(void **state) {
    (void)state;
    enum { d = 8, m = 4096 };
    static float W[m * d], phq[m], phk[m];
    float x[2] = {-1.5f, 2.0f}, e[2], r[2];
    assert_int_equal(alab_feature_map(e, x, 1, 2, ALAB_FEATURE_ELU1, NULL, 0), ALAB_OK);
    assert_true(fabsf(e[0] - expf(-1.5f)) < 1e-7f && e[1] == 3.0f);
    assert_int_equal(alab_feature_map(r, x, 1, 2, ALAB_FEATURE_RELU, NULL, 0), ALAB_OK);
    assert_true(r[0] == 0.0f && r[1] == 2.0f);
    uint64_t rng = 9;
    assert_int_equal(alab_favor_weights(W, m, d, &rng), ALAB_OK);
    float q[d], k[d];
    random_normal(q, d, 1, &rng);
    random_normal(k, d, 1, &rng);
    assert_int_equal(alab_feature_map(phq, q, 1, d, ALAB_FEATURE_FAVOR, W, m), ALAB_OK);
    assert_int_equal(alab_feature_map(phk, k, 1, d, ALAB_FEATURE_FAVOR, W, m), ALAB_OK);
    double est = 0, qk = 0;
    for (int i = 0; i < m; i++) { est += (double)phq[i] * phk[i]; assert_true(phq[i] > 0); }
    for (int i = 0; i < d; i++) qk += (double)q[i] * k[i];
    double want = exp(qk / sqrt((double)d));
    print_message("FAVOR+ m=%d: %.4f vs exp(q.k/sqrt d) = %.4f\n", m, est, want);
    assert_true(fabs(est - want) < 0.15 * want);
    assert_int_equal(alab_feature_dim(ALAB_FEATURE_FAVOR, d, 32), 32);
    assert_int_equal(alab_feature_dim(ALAB_FEATURE_ELU1, d, 32), d);
}

static void causal_prefix_sums_equal_the_recurrence_and_the_quadratic_form(void **state) {
    (void)state;
    enum { T = 37, d = 8, dv = 5, m = 24 };
    float Q[T * d], K[T * d], V[T * dv], W[m * d];
    float pre[T * dv], rnn[T * dv], quad[T * dv], full[T * dv], fquad[T * dv];
    uint64_t rng = 77;
    for (int kind = 0; kind < 3; kind++)
        for (int rep = 0; rep < 5; rep++) {
            random_normal(Q, T * d, 1, &rng);
            random_normal(K, T * d, 1, &rng);
            random_normal(V, T * dv, 1, &rng);
            alab_favor_weights(W, m, d, &rng);
            assert_int_equal(alab_linear_attention(pre, Q, K, V, T, d, dv, kind, W, m, 1, ALAB_LIN_ASSOC), ALAB_OK);
            assert_int_equal(alab_linear_attention(rnn, Q, K, V, T, d, dv, kind, W, m, 1, ALAB_LIN_RNN), ALAB_OK);
            assert_int_equal(alab_linear_attention(quad, Q, K, V, T, d, dv, kind, W, m, 1, ALAB_LIN_QUADRATIC), ALAB_OK);
            assert_true(memcmp(pre, rnn, sizeof pre) == 0); /* same sums in the same order */
            double e = rel_err(pre, quad, T * dv);
            if (kind != ALAB_FEATURE_RELU || rep == 0) print_message("kind %d: prefix vs quadratic %.2e\n", kind, e);
            assert_true(e < 1e-5);
            /* non-causal: global sums == the unmasked matrix */
            assert_int_equal(alab_linear_attention(full, Q, K, V, T, d, dv, kind, W, m, 0, ALAB_LIN_ASSOC), ALAB_OK);
            assert_int_equal(alab_linear_attention(fquad, Q, K, V, T, d, dv, kind, W, m, 0, ALAB_LIN_QUADRATIC), ALAB_OK);
            assert_true(rel_err(full, fquad, T * dv) < 1e-5);
            /* the last causal row sees every key: equal to the non-causal row */
            assert_true(rel_err(pre + (T - 1) * dv, full + (T - 1) * dv, dv) < 1e-5);
        }
}

static void favor_approaches_softmax_attention_as_m_grows(void **state) {
    (void)state;
    enum { T = 64, d = 16, dv = 8 };
    static float Q[T * d], K[T * d], V[T * dv], ref[T * dv], lin[T * dv], W[4096 * d];
    const int ms[] = {4, 32, 256, 2048};
    double err[4] = {0};
    uint64_t rng = 4242;
    for (int rep = 0; rep < 8; rep++) {
        /* |q|, |k| ~ 2 (sd 0.5): the variance of positive random features grows
         * like exp(|q'+k'|^2), so larger inputs need far more features */
        random_normal(Q, T * d, 0.5f, &rng);
        random_normal(K, T * d, 0.5f, &rng);
        random_normal(V, T * dv, 1, &rng);
        assert_int_equal(alab_softmax_attention(ref, Q, K, V, T, d, dv, 1.0f / sqrtf(d), 1), ALAB_OK);
        for (int a = 0; a < 4; a++) {
            alab_favor_weights(W, ms[a], d, &rng);
            assert_int_equal(alab_linear_attention(lin, Q, K, V, T, d, dv, ALAB_FEATURE_FAVOR, W, ms[a], 1, ALAB_LIN_RNN), ALAB_OK);
            double s = 0;
            for (int k = 0; k < T * dv; k++) s += fabs((double)lin[k] - ref[k]);
            err[a] += s / (T * dv) / 8;
        }
    }
    for (int a = 0; a < 4; a++) print_message("FAVOR+ m = %4d: mean |error| %.4f\n", ms[a], err[a]);
    for (int a = 1; a < 4; a++) assert_true(err[a] < err[a - 1]);
    assert_true(err[3] < 0.25 * err[0]);
    /* elu+1 is a different kernel: it does not converge to softmax attention */
    double e_elu = 0;
    alab_linear_attention(lin, Q, K, V, T, d, dv, ALAB_FEATURE_ELU1, NULL, 0, 1, ALAB_LIN_RNN);
    for (int k = 0; k < T * dv; k++) e_elu += fabs((double)lin[k] - ref[k]);
    print_message("elu+1: mean |error| %.4f (last seed)\n", e_elu / (T * dv));
    assert_true(e_elu / (T * dv) > 0.01);
}

static void the_scale_keeps_var_qk_at_one_and_the_entropy_steady(void **state) {
    (void)state;
    const int dks[] = {4, 16, 64, 256};
    double H_scaled[4], H_raw[4];
    uint64_t rng = 12345;
    for (int a = 0; a < 4; a++) {
        double st[4];
        assert_int_equal(alab_qk_stats(st, 20000, dks[a], &rng), ALAB_OK);
        print_message("d_k %3d: mean %.3f var %.2f | scaled mean %.4f var %.3f\n", dks[a], st[0], st[1], st[2], st[3]);
        assert_true(fabs(st[1] / dks[a] - 1.0) < 0.08);  /* var(q.k) = d_k */
        assert_true(fabs(st[3] - 1.0) < 0.08);           /* var(q.k / sqrt d_k) = 1 */
        assert_true(fabs(st[0]) < 4.0 * sqrt(dks[a] / 20000.0));
        assert_int_equal(alab_softmax_entropy_mean(&H_scaled[a], 64, dks[a], 200, 1, &rng), ALAB_OK);
        assert_int_equal(alab_softmax_entropy_mean(&H_raw[a], 64, dks[a], 200, 0, &rng), ALAB_OK);
        print_message("   entropy over 64 keys: scaled %.3f, unscaled %.3f (log 64 = %.3f)\n", H_scaled[a], H_raw[a], log(64.0));
        assert_true(H_scaled[a] <= log(64.0) && H_raw[a] <= H_scaled[a]);
    }
    /* scaled: about the same for every d_k; unscaled: collapses towards one-hot */
    for (int a = 1; a < 4; a++) {
        assert_true(fabs(H_scaled[a] - H_scaled[0]) < 0.2);
        assert_true(H_raw[a] < H_raw[a - 1]);
    }
    assert_true(H_raw[3] < 1.0 && H_scaled[3] > 3.0);
    /* samples: the same stream as the stats */
    float s[5];
    uint64_t a = 5, b = 5;
    assert_int_equal(alab_qk_samples(s, 5, 3, &a), ALAB_OK);
    double st2[4];
    (void)b;
    assert_int_equal(alab_qk_stats(st2, 1, 3, &b), ALAB_EINVAL);
}

static void linear_attention_errors_have_their_codes(void **state) {
    (void)state;
    float Q[4] = {1, 2, 3, 4}, K[4] = {1, 0, 0, 1}, V[4] = {1, 1, 1, 1}, out[4];
    assert_int_equal(alab_linear_attention(out, Q, K, V, 2, 2, 2, ALAB_FEATURE_ELU1, NULL, 0, 0, ALAB_LIN_RNN), ALAB_EINVAL);
    assert_int_equal(alab_linear_attention(out, Q, K, V, 2, 2, 2, 9, NULL, 0, 1, ALAB_LIN_ASSOC), ALAB_EINVAL);
    assert_int_equal(alab_linear_attention(out, Q, K, V, 2, 2, 2, ALAB_FEATURE_ELU1, NULL, 0, 1, 7), ALAB_EINVAL);
    assert_int_equal(alab_linear_attention(out, Q, K, V, 2, 2, 2, ALAB_FEATURE_FAVOR, NULL, 8, 1, ALAB_LIN_ASSOC), ALAB_EINVAL);
    assert_int_equal(alab_linear_attention(out, Q, K, V, 0, 2, 2, ALAB_FEATURE_ELU1, NULL, 0, 1, ALAB_LIN_ASSOC), ALAB_EINVAL);
    assert_int_equal(alab_linear_attention(out, Q, K, V, ALAB_LINATTN_MAX_T + 1, 2, 2, ALAB_FEATURE_ELU1, NULL, 0, 1, ALAB_LIN_ASSOC), ALAB_ELIMIT);
    Q[2] = NAN;
    assert_int_equal(alab_linear_attention(out, Q, K, V, 2, 2, 2, ALAB_FEATURE_ELU1, NULL, 0, 1, ALAB_LIN_ASSOC), ALAB_ENAN);
    assert_int_equal(alab_softmax_attention(out, Q, K, V, 2, 2, 2, 1.0f, 1), ALAB_ENAN);
    Q[2] = 3;
    assert_int_equal(alab_softmax_attention(out, Q, K, V, 2, 2, 2, INFINITY, 1), ALAB_ENAN);
    assert_int_equal(alab_softmax_attention(out, Q, K, V, 2, -2, 2, 1.0f, 1), ALAB_EINVAL);
    /* the prefix form keeps every state: refused when they would not fit */
    {
        enum { BT = 4096, BD = 128 }; /* T*m*(dv+1) = 4096*128*129 > 2^26 */
        float *bq = calloc((size_t)BT * BD, sizeof(float)), *bo = calloc((size_t)BT * BD, sizeof(float));
        assert_int_equal(alab_linear_attention(bo, bq, bq, bq, BT, BD, BD, ALAB_FEATURE_RELU, NULL, 0, 1, ALAB_LIN_ASSOC), ALAB_ELIMIT);
        assert_int_equal(alab_linear_attention(bo, bq, bq, bq, BT, BD, BD, ALAB_FEATURE_RELU, NULL, 0, 1, ALAB_LIN_RNN), ALAB_OK);
        free(bq);
        free(bo);
    }
    uint64_t rng = 1;
    float w[4];
    assert_int_equal(alab_favor_weights(w, 0, 4, &rng), ALAB_EINVAL);
    assert_int_equal(alab_favor_weights(w, 1, 4, NULL), ALAB_EINVAL);
    double H;
    assert_int_equal(alab_softmax_entropy_mean(&H, 0, 4, 10, 1, &rng), ALAB_EINVAL);
    assert_int_equal(alab_qk_samples(w, 4, 0, &rng), ALAB_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(softmax_attention_matches_a_plain_loop_and_masks_the_future),
        cmocka_unit_test(the_feature_maps_are_positive_and_favor_estimates_the_softmax_kernel),
        cmocka_unit_test(causal_prefix_sums_equal_the_recurrence_and_the_quadratic_form),
        cmocka_unit_test(favor_approaches_softmax_attention_as_m_grows),
        cmocka_unit_test(the_scale_keeps_var_qk_at_one_and_the_entropy_steady),
        cmocka_unit_test(linear_attention_errors_have_their_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
