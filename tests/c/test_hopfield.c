/* test_hopfield.c — classical and modern Hopfield networks: the energy never
 * rises under asynchronous updates, stored patterns are fixed points and are
 * retrieved from corrupted inputs at low load, the capacity collapses near
 * 0.138 N, and one modern Hopfield update is exactly one step of attention. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static void random_patterns(float *p, int P, int N, uint64_t *rng) {
    for (int k = 0; k < P * N; k++) p[k] = (alab_rng_u32(rng) & 1) ? 1.0f : -1.0f;
}

static void random_normal(float *x, int n, float sd, uint64_t *rng) {
    for (int k = 0; k < n; k++) x[k] = sd * (float)alab_rng_normal(rng);
}

/* ---- classical --------------------------------------------------------- */

static void the_hebbian_matrix_is_symmetric_with_a_zero_diagonal(void **state) {
    (void)state;
    const float p[2 * 3] = {1, -1, 1, 1, 1, -1};
    float W[9];
    assert_int_equal(alab_hopfield_hebbian(W, p, 2, 3), ALAB_OK);
    /* W = (p1 p1^T + p2 p2^T) / 3 off the diagonal */
    const float want[9] = {0, 0, 0, 0, 0, -2.0f / 3, 0, -2.0f / 3, 0};
    for (int k = 0; k < 9; k++) assert_true(fabsf(W[k] - want[k]) < 1e-7f);
}

static void asynchronous_updates_never_raise_the_energy(void **state) {
    (void)state;
    enum { N = 64, P = 10 };
    static float pats[P * N], W[N * N], s[N];
    double energies[51];
    uint64_t rng = 7;
    int rises = 0, checked = 0;
    for (int run = 0; run < 200; run++) {
        random_patterns(pats, P, N, &rng);
        assert_int_equal(alab_hopfield_hebbian(W, pats, P, N), ALAB_OK);
        random_patterns(s, 1, N, &rng); /* a random start */
        /* unit by unit, in a random order */
        double e0, e1;
        assert_int_equal(alab_hopfield_energy(&e0, W, s, N), ALAB_OK);
        for (int u = 0; u < 4 * N; u++) {
            int i = (int)(alab_rng_u32(&rng) % N);
            assert_true(alab_hopfield_update_unit(s, W, N, i) >= 0);
            assert_int_equal(alab_hopfield_energy(&e1, W, s, N), ALAB_OK);
            rises += e1 > e0 + 1e-9;
            checked++;
            e0 = e1;
        }
        /* and sweep by sweep through alab_hopfield_run, both asynchronous modes */
        random_patterns(s, 1, N, &rng);
        int n = 0, conv = 0;
        int mode = run % 2 ? ALAB_HOPFIELD_ASYNC_RANDOM : ALAB_HOPFIELD_ASYNC_SEQ;
        assert_int_equal(alab_hopfield_run(s, energies, &n, &conv, W, N, mode, 50, &rng), ALAB_OK);
        assert_true(conv == 1 && n >= 1 && n <= 50);
        for (int k = 1; k <= n; k++) rises += energies[k] > energies[k - 1] + 1e-9;
        assert_true(energies[n] == energies[n - 1]); /* the last sweep changed nothing */
    }
    assert_int_equal(rises, 0);
    assert_int_equal(checked, 200 * 4 * N);
}

static void a_stored_pattern_is_a_fixed_point_at_low_load(void **state) {
    (void)state;
    enum { N = 200, P = 6 }; /* load 0.03 */
    static float pats[P * N], W[N * N], s[N];
    uint64_t rng = 11;
    random_patterns(pats, P, N, &rng);
    assert_int_equal(alab_hopfield_hebbian(W, pats, P, N), ALAB_OK);
    for (int mu = 0; mu < P; mu++)
        for (int mode = 0; mode < 3; mode++) {
            memcpy(s, pats + mu * N, sizeof s);
            int flipped = -1;
            assert_int_equal(alab_hopfield_step(s, &flipped, W, N, mode, &rng), ALAB_OK);
            assert_int_equal(flipped, 0);
            assert_true(memcmp(s, pats + mu * N, sizeof s) == 0);
        }
}

static void corruption_flips_exactly_the_asked_fraction(void **state) {
    (void)state;
    enum { N = 100 };
    float p[N], c[N];
    uint64_t rng = 3;
    random_patterns(p, 1, N, &rng);
    const float fr[] = {0.0f, 0.1f, 0.25f, 0.5f, 1.0f};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(alab_hopfield_corrupt(c, p, N, fr[k], &rng), ALAB_OK);
        int flips = 0;
        for (int i = 0; i < N; i++) flips += c[i] != p[i];
        assert_int_equal(flips, (int)lrintf(fr[k] * N));
    }
    /* seeded: the same seed, the same corruption */
    float c2[N];
    uint64_t a = 99, b = 99;
    alab_hopfield_corrupt(c, p, N, 0.3f, &a);
    alab_hopfield_corrupt(c2, p, N, 0.3f, &b);
    assert_true(memcmp(c, c2, sizeof c) == 0);
}

static void a_pattern_is_retrieved_from_ten_percent_corruption_at_low_load(void **state) {
    (void)state;
    enum { N = 200, P = 10 }; /* load 0.05 */
    static float pats[P * N], W[N * N], s[N];
    double energies[21];
    uint64_t rng = 5;
    random_patterns(pats, P, N, &rng);
    assert_int_equal(alab_hopfield_hebbian(W, pats, P, N), ALAB_OK);
    for (int mu = 0; mu < P; mu++)
        for (int mode = 0; mode < 3; mode++) {
            assert_int_equal(alab_hopfield_corrupt(s, pats + mu * N, N, 0.1f, &rng), ALAB_OK);
            assert_true(fabs(alab_hopfield_overlap(s, pats + mu * N, N) - 0.8) < 1e-12);
            int n = 0, conv = 0;
            assert_int_equal(alab_hopfield_run(s, energies, &n, &conv, W, N, mode, 20, &rng), ALAB_OK);
            assert_int_equal(conv, 1);
            assert_true(alab_hopfield_overlap(s, pats + mu * N, N) == 1.0);
            assert_true(energies[n] < energies[0]);
        }
}

static void three_distinct_glyphs_are_retrieved_from_ten_percent_corruption(void **state) {
    (void)state;
    const int store[3] = {0, 1, 4};
    float pats[3 * 100], W[100 * 100], s[100];
    for (int k = 0; k < 3; k++) assert_int_equal(alab_glyph(pats + 100 * k, store[k]), ALAB_OK);
    assert_int_equal(alab_hopfield_hebbian(W, pats, 3, 100), ALAB_OK);
    uint64_t rng = 1;
    for (int k = 0; k < 3; k++)
        for (int rep = 0; rep < 20; rep++) {
            alab_hopfield_corrupt(s, pats + 100 * k, 100, 0.1f, &rng);
            int n = 0, conv = 0;
            assert_int_equal(alab_hopfield_run(s, NULL, &n, &conv, W, 100, ALAB_HOPFIELD_ASYNC_RANDOM, 20, &rng), ALAB_OK);
            assert_true(alab_hopfield_overlap(s, pats + 100 * k, 100) == 1.0);
        }
    /* the glyphs are what they say: a "1" has its stem in columns 4-5 */
    float one[100];
    alab_glyph(one, 1);
    for (int r = 0; r < 8; r++) assert_true(one[r * 10 + 4] == 1.0f && one[r * 10 + 5] == 1.0f);
    assert_int_equal(alab_glyph(one, 10), ALAB_ERANGE);
    assert_int_equal(alab_glyph(one, -1), ALAB_ERANGE);
}

static void the_capacity_curve_collapses_near_0_14(void **state) {
    (void)state;
    const float loads[] = {0.05f, 0.10f, 0.12f, 0.14f, 0.16f, 0.18f, 0.20f, 0.25f, 0.30f};
    enum { L = sizeof loads / sizeof loads[0] };
    float succ[L], ov[L];
    uint64_t rng = 2024;
    assert_int_equal(alab_hopfield_capacity(succ, ov, loads, L, 200, 0.05f, 0.95f, 3, &rng), ALAB_OK);
    for (int l = 0; l < L; l++) print_message("load %.2f  success %.3f  overlap %.3f\n", loads[l], succ[l], ov[l]);
    assert_true(succ[0] >= 0.99f && succ[1] >= 0.9f); /* well below alpha_c */
    assert_true(succ[7] <= 0.25f && succ[8] <= 0.1f); /* well above */
    /* the curve crosses 1/2 between 0.12 and 0.22 */
    int cross = -1;
    for (int l = 0; l < L && cross < 0; l++) if (succ[l] < 0.5f) cross = l;
    assert_true(cross >= 3 && loads[cross] <= 0.22f);
    assert_true(ov[0] > 0.999f && ov[8] < 0.7f);
    /* exact retrieval (threshold 1) is stricter: never above the 0.95 curve */
    float exact[L];
    rng = 2024;
    assert_int_equal(alab_hopfield_capacity(exact, NULL, loads, L, 200, 0.05f, 1.0f, 3, &rng), ALAB_OK);
    for (int l = 0; l < L; l++) assert_true(exact[l] <= succ[l] + 1e-6f);
}

static void classical_errors_have_their_codes(void **state) {
    (void)state;
    float W[16], s[4] = {1, -1, 1, -1}, bad[4] = {1, 0, 1, -1}, nan[4] = {1, NAN, 1, 1};
    double E;
    int n, c;
    uint64_t rng = 1;
    assert_int_equal(alab_hopfield_hebbian(W, s, 1, 0), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_hebbian(W, s, 0, 4), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_hebbian(W, bad, 1, 4), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_hebbian(W, nan, 1, 4), ALAB_ENAN);
    assert_int_equal(alab_hopfield_hebbian(NULL, s, 1, 4), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_hebbian(W, s, 1, ALAB_HOPFIELD_MAX_N + 1), ALAB_ELIMIT);
    assert_int_equal(alab_hopfield_hebbian(W, s, 1, 4), ALAB_OK);
    assert_int_equal(alab_hopfield_energy(&E, W, s, -1), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_step(s, NULL, W, 4, 7, &rng), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_step(s, NULL, W, 4, ALAB_HOPFIELD_ASYNC_RANDOM, NULL), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_step(bad, NULL, W, 4, ALAB_HOPFIELD_SYNC, NULL), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_update_unit(s, W, 4, 4), ALAB_ERANGE);
    assert_int_equal(alab_hopfield_run(s, NULL, &n, &c, W, 4, ALAB_HOPFIELD_SYNC, -1, NULL), ALAB_EINVAL);
    assert_int_equal(alab_hopfield_corrupt(s, s, 4, 1.5f, &rng), ALAB_ERANGE);
    assert_int_equal(alab_hopfield_corrupt(s, s, 4, NAN, &rng), ALAB_ENAN);
    float succ[1], load[1] = {NAN};
    assert_int_equal(alab_hopfield_capacity(succ, NULL, load, 1, 50, 0.05f, 0.95f, 1, &rng), ALAB_ENAN);
    load[0] = 0.1f;
    assert_int_equal(alab_hopfield_capacity(succ, NULL, load, 1, 50, 0.7f, 0.95f, 1, &rng), ALAB_ERANGE);
    assert_int_equal(alab_hopfield_capacity(succ, NULL, load, 0, 50, 0.05f, 0.95f, 1, &rng), ALAB_EINVAL);
    assert_true(strstr(alab_last_error(), "n_loads") != NULL);
}

/* ---- modern ------------------------------------------------------------ */

/* softmax(scale K q) V by plain double loops, independent of the library */
static void attention_by_hand(double *out, const float *q, const float *K, const float *V,
                              int T, int d, int dv, double scale) {
    double s[64], mx = -1e300, z = 0.0;
    for (int j = 0; j < T; j++) {
        s[j] = 0.0;
        for (int k = 0; k < d; k++) s[j] += (double)q[k] * K[j * d + k];
        s[j] *= scale;
        if (s[j] > mx) mx = s[j];
    }
    for (int j = 0; j < T; j++) z += (s[j] = exp(s[j] - mx));
    for (int c = 0; c < dv; c++) {
        out[c] = 0.0;
        for (int j = 0; j < T; j++) out[c] += s[j] / z * V[j * dv + c];
    }
}

static void one_modern_hopfield_update_is_one_step_of_attention(void **state) {
    (void)state;
    uint64_t rng = 17;
    const int Ns[] = {1, 5, 16, 33}, ds[] = {1, 8, 16, 64};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int N = Ns[a], d = ds[b];
            float X[33 * 64], xi[64], up[64], att[64], p1[33], p2[33];
            double ref[64];
            random_normal(X, N * d, 1.0f, &rng);
            random_normal(xi, d, 1.0f, &rng);
            float beta = 1.0f / sqrtf((float)d);
            /* xi <- X^T softmax(beta X xi)  vs  softmax(q K^T / sqrt(d_k)) V with q = xi, K = V = X */
            assert_int_equal(alab_mhopfield_step(up, p1, X, xi, N, d, beta), ALAB_OK);
            assert_int_equal(alab_attention_single(att, p2, xi, X, X, N, d, d, beta), ALAB_OK);
            attention_by_hand(ref, xi, X, X, N, d, d, 1.0 / sqrt((double)d));
            for (int k = 0; k < d; k++) {
                assert_true(fabsf(up[k] - att[k]) <= 1e-6f);
                assert_true(fabs(up[k] - ref[k]) <= 1e-6 * (1.0 + fabs(ref[k])));
            }
            for (int j = 0; j < N; j++) assert_true(fabsf(p1[j] - p2[j]) <= 1e-7f);
        }
    /* in place (out == xi) gives the same */
    float X[4 * 3] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, xi[3] = {0.5f, -1, 2}, out[3], p[4];
    alab_mhopfield_step(out, p, X, xi, 4, 3, 0.7f);
    alab_mhopfield_step(xi, p, X, xi, 4, 3, 0.7f);
    for (int k = 0; k < 3; k++) assert_true(out[k] == xi[k]);
}

static void iteration_converges_and_the_energy_decreases(void **state) {
    (void)state;
    uint64_t rng = 23;
    enum { N = 12, d = 16 };
    float X[N * d], xi[d], p[N];
    double E[201];
    const float betas[] = {0.05f, 0.3f, 1.0f, 4.0f};
    for (int rep = 0; rep < 20; rep++)
        for (int b = 0; b < 4; b++) {
            random_normal(X, N * d, 1.0f, &rng);
            random_normal(xi, d, 1.0f, &rng);
            int n = 0, conv = 0;
            assert_int_equal(alab_mhopfield_run(xi, E, p, &n, &conv, X, N, d, betas[b], 200, 1e-6f), ALAB_OK);
            assert_int_equal(conv, 1);
            for (int k = 1; k <= n; k++) assert_true(E[k] <= E[k - 1] + 1e-6 * (1 + fabs(E[k - 1])));
            assert_true(E[n] >= -1e-6); /* the constants make E >= 0 */
            /* a fixed point: one more update moves it by at most tol-ish */
            float up[d], pp[N];
            alab_mhopfield_step(up, pp, X, xi, N, d, betas[b]);
            for (int k = 0; k < d; k++) assert_true(fabsf(up[k] - xi[k]) < 1e-5f);
        }
}

static void small_beta_averages_all_patterns_large_beta_retrieves_the_nearest(void **state) {
    (void)state;
    uint64_t rng = 31;
    enum { N = 8, d = 32 };
    float X[N * d], xi[d], p[N], mean[d] = {0};
    random_normal(X, N * d, 1.0f, &rng);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < d; k++) mean[k] += X[i * d + k] / N;
    /* beta -> 0: the global average, whatever the start */
    random_normal(xi, d, 1.0f, &rng);
    float out[d];
    assert_int_equal(alab_mhopfield_step(out, p, X, xi, N, d, 1e-4f), ALAB_OK);
    for (int k = 0; k < d; k++) assert_true(fabsf(out[k] - mean[k]) < 1e-2f);
    for (int i = 0; i < N; i++) assert_true(fabsf(p[i] - 1.0f / N) < 1e-2f);
    /* beta large: start near pattern 3 (30 % noise), end on it */
    for (int k = 0; k < d; k++) xi[k] = X[3 * d + k] + 0.3f * (float)alab_rng_normal(&rng);
    int n = 0, conv = 0;
    assert_int_equal(alab_mhopfield_run(xi, NULL, p, &n, &conv, X, N, d, 8.0f, 50, 1e-6f), ALAB_OK);
    assert_true(conv == 1 && n <= 3); /* separated patterns: retrieved in one step */
    for (int k = 0; k < d; k++) assert_true(fabsf(xi[k] - X[3 * d + k]) < 1e-4f);
    assert_true(p[3] > 0.9999f);
}

static void modern_errors_have_their_codes(void **state) {
    (void)state;
    float X[4] = {1, 2, 3, 4}, xi[2] = {1, 1}, out[2], p[2];
    double E;
    int n, c;
    assert_int_equal(alab_mhopfield_step(out, p, X, xi, 2, 2, NAN), ALAB_ENAN);
    assert_int_equal(alab_mhopfield_step(out, p, X, xi, 2, 2, 0.0f), ALAB_ERANGE);
    assert_int_equal(alab_mhopfield_step(out, p, X, xi, 0, 2, 1.0f), ALAB_EINVAL);
    assert_int_equal(alab_mhopfield_step(out, NULL, X, xi, 2, 2, 1.0f), ALAB_EINVAL);
    xi[1] = INFINITY;
    assert_int_equal(alab_mhopfield_energy(&E, X, xi, 2, 2, 1.0f), ALAB_ENAN);
    xi[1] = 1;
    assert_int_equal(alab_mhopfield_run(xi, NULL, NULL, &n, &c, X, 2, 2, 1.0f, 10, -1.0f), ALAB_EINVAL);
    assert_int_equal(alab_mhopfield_energy(&E, X, xi, 2, 2, 1.0f), ALAB_OK);
    /* E = -lse + 1/2 |xi|^2 + log N / beta + 1/2 M^2, by hand: X xi = (3, 7) */
    double lse = log(exp(3.0) + exp(7.0));
    assert_true(fabs(E - (-lse + 1.0 + log(2.0) + 12.5)) < 1e-9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_hebbian_matrix_is_symmetric_with_a_zero_diagonal),
        cmocka_unit_test(asynchronous_updates_never_raise_the_energy),
        cmocka_unit_test(a_stored_pattern_is_a_fixed_point_at_low_load),
        cmocka_unit_test(corruption_flips_exactly_the_asked_fraction),
        cmocka_unit_test(a_pattern_is_retrieved_from_ten_percent_corruption_at_low_load),
        cmocka_unit_test(three_distinct_glyphs_are_retrieved_from_ten_percent_corruption),
        cmocka_unit_test(the_capacity_curve_collapses_near_0_14),
        cmocka_unit_test(classical_errors_have_their_codes),
        cmocka_unit_test(one_modern_hopfield_update_is_one_step_of_attention),
        cmocka_unit_test(iteration_converges_and_the_energy_decreases),
        cmocka_unit_test(small_beta_averages_all_patterns_large_beta_retrieves_the_nearest),
        cmocka_unit_test(modern_errors_have_their_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
