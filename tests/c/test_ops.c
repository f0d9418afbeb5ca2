/* test_ops.c — every fast kernel of c/src/ops.c against its reference twin,
 * on odd sizes (scalar tails, partial tiles, partial C blocks) and on the real
 * distilgpt2 sizes, plus special values and the accuracy of simd.h's exp.
 *
 * Tolerances are stated beside each check. For sums (matmul, dot) the error is
 * measured relative to the magnitude of the sum, sum_c |inp[c] * w[c]| (+|bias|):
 * f32 accumulation of C terms is off by a few ulp of that, whatever the order.
 *
 * The same file also runs on the scalar path:
 *   gcc -std=c11 -O3 -march=native -DALAB_NO_SIMD -Ic/include -Ic/src -Itests/c \
 *       tests/c/test_ops.c c/src/ops.c -lcmocka -lm -o build/tests/test_ops_scalar */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "simd.h"

#define assert_le(val, tol, what)                                                              \
    do {                                                                                       \
        double v_ = (val);                                                                     \
        if (!(v_ <= (double)(tol))) fail_msg("%s: %.3g exceeds tolerance %.3g", what, v_, (double)(tol)); \
    } while (0)

/* Tolerances. eps = 2^-23 = 1.19e-7. */
#define TOL_SUM 2e-6       /* matmul, matmul_nt, dot: |fast - ref| / sum|terms| (~17 eps) */
#define TOL_EXP 2.4e-7     /* alab_vf_exp relative error (2 eps); measured about 1.2e-7 */
#define TOL_TANH 1e-6      /* tanh implied by the gelu identity vs tanhf, absolute */
#define TOL_GELU 3e-7      /* |fast - ref| / max(1, |x|) */
#define TOL_SOFTMAX 4e-6   /* |fast - ref| / ref, per entry, for rows up to V = 50257 */
#define TOL_LN 4e-6        /* |fast - ref| / max(1, |ref|) with w ~ 1, b ~ 0.1 */

/* ------------------------------------------------------------ helpers */

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float frand(void) { /* uniform in [-1, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) * (2.0 / 16777216.0) - 1.0);
}
static float *randvec(size_t n, float scale) {
    float *x = malloc(n * sizeof(float));
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) x[i] = scale * frand();
    return x;
}
static float *zeros(size_t n) {
    float *x = calloc(n, sizeof(float));
    assert_non_null(x);
    return x;
}

/* max over outputs of |a - b| / (sum_c |inp[t][c] w(c, o)| + |bias[o]|);
 * w_nt: w is (OC, C) instead of (C, OC). NaN counts as failure (returns inf). */
static double matmul_err(const float *a, const float *b, const float *inp, const float *w,
                         const float *bias, int T, int C, int OC, int w_nt) {
    double worst = 0.0;
    for (int t = 0; t < T; t++) {
        for (int o = 0; o < OC; o++) {
            double mag = bias ? fabs(bias[o]) : 0.0;
            for (int c = 0; c < C; c++)
                mag += fabs((double)inp[(size_t)t * C + c] *
                            (w_nt ? w[(size_t)o * C + c] : w[(size_t)c * OC + o]));
            double e = fabs((double)a[(size_t)t * OC + o] - b[(size_t)t * OC + o]) / (mag > 0 ? mag : 1.0);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
    }
    return worst;
}

/* ------------------------------------------------------------ exp */

static void test_exp_is_within_2_eps_relative_of_exp_over_the_finite_range(void **state) {
    (void)state;
    enum { N = 400000 };
    float x[ALAB_SIMD_WIDTH], y[ALAB_SIMD_WIDTH];
    double worst = 0.0, worst_x = 0.0;
    for (int i = 0; i < N; i += ALAB_SIMD_WIDTH) {
        for (int k = 0; k < ALAB_SIMD_WIDTH; k++) x[k] = -87.33f + 175.7f * (float)(i + k) / N;
        alab_vf_store(y, alab_vf_exp(alab_vf_load(x)));
        for (int k = 0; k < ALAB_SIMD_WIDTH; k++) {
            double t = exp((double)x[k]), e = fabs(y[k] - t) / t;
            if (!(e <= worst)) worst = e, worst_x = x[k];
        }
    }
    print_message("exp (%s): max relative error %.3g (%.2f eps) at x = %g\n", ALAB_SIMD_NAME, worst,
                  worst / 1.1920929e-7, worst_x);
    assert_le(worst, TOL_EXP, "exp relative error");
}

static void test_exp_maps_minus_infinity_and_underflow_to_exact_zero(void **state) {
    (void)state;
    const float in[8] = {-INFINITY, -1e30f, -104.0f, -87.4f, 0.0f, 1.0f, -1.0f, 88.0f};
    float x[ALAB_SIMD_WIDTH], y[ALAB_SIMD_WIDTH];
    for (int i = 0; i < 8; i++) {
        for (int k = 0; k < ALAB_SIMD_WIDTH; k++) x[k] = in[i];
        alab_vf_store(y, alab_vf_exp(alab_vf_load(x)));
        if (i < 4) assert_true(y[0] == 0.0f);
        else assert_true(fabs(y[0] - exp((double)in[i])) <= TOL_EXP * exp((double)in[i]));
        for (int k = 1; k < ALAB_SIMD_WIDTH; k++) assert_true(y[k] == y[0]);
    }
    /* exp(0) is exactly 1, so softmax of a lone finite entry is exactly 1 */
    for (int k = 0; k < ALAB_SIMD_WIDTH; k++) x[k] = 0.0f;
    alab_vf_store(y, alab_vf_exp(alab_vf_load(x)));
    assert_true(y[0] == 1.0f);
    /* above the clamp it saturates at a finite value instead of overflowing */
    for (int k = 0; k < ALAB_SIMD_WIDTH; k++) x[k] = 1000.0f;
    alab_vf_store(y, alab_vf_exp(alab_vf_load(x)));
    assert_true(isfinite(y[0]) && y[0] > 1e38f);
    /* NaN propagates */
    for (int k = 0; k < ALAB_SIMD_WIDTH; k++) x[k] = NAN;
    alab_vf_store(y, alab_vf_exp(alab_vf_load(x)));
    assert_true(isnan(y[0]));
}

static void test_reductions_sum_and_max_every_lane(void **state) {
    (void)state;
    float x[ALAB_SIMD_WIDTH];
    for (int j = 0; j < ALAB_SIMD_WIDTH; j++) { /* the max in each lane in turn */
        float s = 0.0f;
        for (int k = 0; k < ALAB_SIMD_WIDTH; k++) x[k] = k == j ? 100.0f + k : (float)k, s += x[k];
        assert_true(alab_vf_reduce_max(alab_vf_load(x)) == 100.0f + j);
        assert_true(alab_vf_reduce_sum(alab_vf_load(x)) == s);
    }
}

/* ------------------------------------------------------------ matmul */

static void check_matmul(int T, int C, int OC, int with_bias) {
    float *inp = randvec((size_t)T * C, 1.0f), *w = randvec((size_t)C * OC, 0.1f);
    float *bias = with_bias ? randvec(OC, 0.5f) : NULL;
    float *a = randvec((size_t)T * OC, 9.0f), *b = randvec((size_t)T * OC, 9.0f); /* garbage in out */
    matmul_forward(a, inp, w, bias, T, C, OC);
    matmul_forward_ref(b, inp, w, bias, T, C, OC);
    double e = matmul_err(a, b, inp, w, bias, T, C, OC, 0);
    if (!(e <= TOL_SUM))
        fail_msg("matmul T=%d C=%d OC=%d bias=%d: error %.3g > %.3g", T, C, OC, with_bias, e, TOL_SUM);
    free(inp), free(w), free(bias), free(a), free(b);
}

static void test_matmul_matches_ref_on_odd_sizes(void **state) {
    (void)state;
    static const int Ts[] = {1, 3, 4, 5, 7, 11}, Cs[] = {1, 5, 33, 768}, OCs[] = {1, 3, 17, 2304};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) check_matmul(Ts[i], Cs[j], OCs[k], (i + j + k) % 2);
}

static void test_matmul_matches_ref_across_c_blocks_and_partial_strips(void **state) {
    (void)state;
    /* C beyond one cache block (and one more element), OC with a partial strip, a partial
     * vector and a scalar tail, T with full and partial row blocks */
    check_matmul(9, 257, 61, 1);
    check_matmul(13, 513, 100, 0);
    check_matmul(6, 1031, 45, 1);
    check_matmul(130, 300, 131, 1);
}

static void test_matmul_matches_ref_at_distilgpt2_shapes(void **state) {
    (void)state;
    static const int shapes[][3] = {{11, 768, 2304}, {11, 768, 768}, {11, 768, 3072}, {11, 3072, 768},
                                    {1, 768, 2304}, {1, 3072, 768}, {64, 768, 768}};
    for (int s = 0; s < 7; s++) check_matmul(shapes[s][0], shapes[s][1], shapes[s][2], 1);
}

/* matmul_forward_ld on views: inp, w and out are sub-blocks of wider rows (as the attention
 * uses it inside qkv (T, 3C) and att (T, T)); what lies outside the view must not change. */
static void check_matmul_ld(int T, int C, int OC, int ldi, int ldw, int ldo, int with_bias) {
    float *inp = randvec((size_t)T * ldi, 1.0f), *w = randvec((size_t)C * ldw, 0.1f);
    float *bias = with_bias ? randvec(OC, 0.5f) : NULL;
    float *a = randvec((size_t)T * ldo, 9.0f), *b = malloc((size_t)T * ldo * sizeof(float));
    assert_non_null(b);
    memcpy(b, a, (size_t)T * ldo * sizeof(float));
    matmul_forward_ld(a, ldo, inp, ldi, w, ldw, bias, T, C, OC);
    matmul_forward_ld_ref(b, ldo, inp, ldi, w, ldw, bias, T, C, OC);
    /* compact copies for matmul_err */
    float *ic = malloc((size_t)T * C * sizeof(float)), *wc = malloc((size_t)C * OC * sizeof(float));
    float *ac = malloc((size_t)T * OC * sizeof(float)), *bc = malloc((size_t)T * OC * sizeof(float));
    assert_true(ic && wc && ac && bc);
    for (int t = 0; t < T; t++) memcpy(ic + (size_t)t * C, inp + (size_t)t * ldi, (size_t)C * sizeof(float));
    for (int c = 0; c < C; c++) memcpy(wc + (size_t)c * OC, w + (size_t)c * ldw, (size_t)OC * sizeof(float));
    for (int t = 0; t < T; t++) {
        memcpy(ac + (size_t)t * OC, a + (size_t)t * ldo, (size_t)OC * sizeof(float));
        memcpy(bc + (size_t)t * OC, b + (size_t)t * ldo, (size_t)OC * sizeof(float));
        for (int o = OC; o < ldo; o++) /* outside the view: untouched (the same garbage in both) */
            if (a[(size_t)t * ldo + o] != b[(size_t)t * ldo + o]) fail_msg("matmul_ld wrote outside its view");
    }
    double e = matmul_err(ac, bc, ic, wc, bias, T, C, OC, 0);
    if (!(e <= TOL_SUM))
        fail_msg("matmul_ld T=%d C=%d OC=%d ld %d %d %d: error %.3g > %.3g", T, C, OC, ldi, ldw, ldo, e, TOL_SUM);
    free(inp), free(w), free(bias), free(a), free(b), free(ic), free(wc), free(ac), free(bc);
}

static void test_matmul_ld_matches_ref_on_strided_views(void **state) {
    (void)state;
    /* attention-like: scores (T x T) from q (ld 3C) and a transposed k (ld T); values from v (ld 3C) */
    check_matmul_ld(11, 64, 11, 192, 11, 11, 0);
    check_matmul_ld(37, 64, 37, 2304, 40, 37, 0);
    check_matmul_ld(32, 40, 64, 128, 2304, 768, 0);
    check_matmul_ld(3, 64, 29, 2304, 29, 29, 0); /* the few-rows path */
    check_matmul_ld(130, 300, 131, 301, 133, 140, 1);
    check_matmul_ld(9, 257, 61, 260, 70, 64, 1);
    /* the ordinary strides give exactly matmul_forward */
    float *inp = randvec(7 * 33, 1.0f), *w = randvec(33 * 20, 0.1f), *bias = randvec(20, 0.5f);
    float *a = zeros(7 * 20), *b = zeros(7 * 20);
    matmul_forward(a, inp, w, bias, 7, 33, 20);
    matmul_forward_ld(b, 20, inp, 33, w, 20, bias, 7, 33, 20);
    assert_memory_equal(a, b, 7 * 20 * sizeof(float));
    free(inp), free(w), free(bias), free(a), free(b);
}

/* packed weights: the fast kernel against the twin that reads the packed layout by index, and
 * both against matmul_forward_ref on the unpacked w (so the layout itself is checked) */
static void check_matmul_packed(int T, int C, int OC, int with_bias) {
    float *inp = randvec((size_t)T * C, 1.0f), *w = randvec((size_t)C * OC, 0.1f);
    float *wp = randvec((size_t)C * OC, 7.0f);
    float *bias = with_bias ? randvec(OC, 0.5f) : NULL;
    float *a = randvec((size_t)T * OC, 9.0f), *b = randvec((size_t)T * OC, 9.0f), *r = zeros((size_t)T * OC);
    matmul_pack_weights(wp, w, C, OC);
    { /* in place, one block at a time: the same layout */
        float *wi = malloc((size_t)C * OC * sizeof(float)), *scratch = malloc(matmul_pack_scratch_floats(OC) * sizeof(float));
        assert_true(wi && scratch);
        memcpy(wi, w, (size_t)C * OC * sizeof(float));
        matmul_pack_weights_inplace(wi, C, OC, scratch);
        assert_memory_equal(wi, wp, (size_t)C * OC * sizeof(float));
        free(wi), free(scratch);
    }
    { /* from the transpose (OC, C): the same layout */
        float *wt = malloc((size_t)C * OC * sizeof(float)), *wq = malloc((size_t)C * OC * sizeof(float));
        assert_true(wt && wq);
        for (int c = 0; c < C; c++)
            for (int o = 0; o < OC; o++) wt[(size_t)o * C + c] = w[(size_t)c * OC + o];
        matmul_pack_weights_t(wq, wt, C, OC);
        assert_memory_equal(wq, wp, (size_t)C * OC * sizeof(float));
        free(wt), free(wq);
    }
    matmul_packed_forward(a, inp, wp, bias, T, C, OC);
    matmul_packed_forward_ref(b, inp, wp, bias, T, C, OC);
    matmul_forward_ref(r, inp, w, bias, T, C, OC);
    double e = matmul_err(a, b, inp, w, bias, T, C, OC, 0), e2 = matmul_err(b, r, inp, w, bias, T, C, OC, 0);
    if (!(e <= TOL_SUM))
        fail_msg("matmul_packed T=%d C=%d OC=%d: error %.3g > %.3g", T, C, OC, e, TOL_SUM);
    if (!(e2 <= 1e-7)) fail_msg("packed layout T=%d C=%d OC=%d: ref twin off by %.3g", T, C, OC, e2);
    free(inp), free(w), free(wp), free(bias), free(a), free(b), free(r);
}

static void test_matmul_packed_matches_ref_on_odd_and_real_sizes(void **state) {
    (void)state;
    static const int Ts[] = {1, 2, 3, 4, 5, 11}, Cs[] = {1, 5, 257, 768}, OCs[] = {1, 3, 17, 61};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) check_matmul_packed(Ts[i], Cs[j], OCs[k], (i + j + k) % 2);
    check_matmul_packed(130, 300, 131, 1);
    check_matmul_packed(11, 3072, 768, 1);
    check_matmul_packed(1, 768, 2304, 1);
    check_matmul_packed(33, 768, 3072, 1);
}

static void test_matmul_of_zero_length_c_is_the_bias(void **state) {
    (void)state;
    float bias[5] = {1, 2, 3, 4, 5}, out[10], inp[1] = {0}, w[1] = {0};
    matmul_forward(out, inp, w, bias, 2, 0, 5);
    for (int i = 0; i < 10; i++) assert_true(out[i] == bias[i % 5]);
    matmul_forward(out, inp, w, NULL, 2, 0, 5);
    for (int i = 0; i < 10; i++) assert_true(out[i] == 0.0f);
}

static void check_matmul_nt(int T, int C, int OC) {
    float *inp = randvec((size_t)T * C, 1.0f), *w = randvec((size_t)OC * C, 0.1f);
    float *a = randvec((size_t)T * OC, 9.0f), *b = randvec((size_t)T * OC, 9.0f);
    matmul_nt_forward(a, inp, w, T, C, OC);
    matmul_nt_forward_ref(b, inp, w, T, C, OC);
    double e = matmul_err(a, b, inp, w, NULL, T, C, OC, 1);
    if (!(e <= TOL_SUM)) fail_msg("matmul_nt T=%d C=%d OC=%d: error %.3g > %.3g", T, C, OC, e, TOL_SUM);
    free(inp), free(w), free(a), free(b);
}

static void test_matmul_nt_matches_ref_on_odd_sizes(void **state) {
    (void)state;
    /* OC 13 = one 8-row tile of w (single rows), one 4-row tile, one left over */
    static const int Ts[] = {1, 2, 3, 7, 11}, Cs[] = {1, 5, 33, 768}, OCs[] = {1, 3, 13, 17, 2304};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 5; k++) check_matmul_nt(Ts[i], Cs[j], OCs[k]);
}

static void test_matmul_nt_matches_ref_for_the_tied_lm_head(void **state) {
    (void)state;
    check_matmul_nt(1, 768, 50257); /* one position: the last token's logits */
    check_matmul_nt(3, 768, 50257);
}

/* ------------------------------------------------------------ layernorm */

static void check_layernorm(int T, int C, float offset, int in_place) {
    float *x = randvec((size_t)T * C, 1.0f), *w = randvec(C, 0.2f), *b = randvec(C, 0.1f);
    float *a = zeros((size_t)T * C), *r = zeros((size_t)T * C);
    for (int i = 0; i < T * C; i++) x[i] += offset;
    for (int i = 0; i < C; i++) w[i] += 1.0f;
    layernorm_forward_ref(r, x, w, b, T, C, 1e-5f);
    if (in_place) {
        layernorm_forward(x, x, w, b, T, C, 1e-5f);
        memcpy(a, x, sizeof(float) * T * C);
    } else {
        layernorm_forward(a, x, w, b, T, C, 1e-5f);
    }
    double worst = 0.0;
    for (int i = 0; i < T * C; i++) {
        double e = fabs((double)a[i] - r[i]) / fmax(1.0, fabs(r[i]));
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    if (!(worst <= TOL_LN)) fail_msg("layernorm T=%d C=%d offset=%g: error %.3g", T, C, offset, worst);
    free(x), free(w), free(b), free(a), free(r);
}

static void test_layernorm_matches_ref_on_odd_sizes_and_offset_rows(void **state) {
    (void)state;
    static const int Cs[] = {2, 5, 17, 33, 768, 769};
    for (int j = 0; j < 6; j++) {
        check_layernorm(3, Cs[j], 0.0f, 0);
        check_layernorm(2, Cs[j], 50.0f, 0); /* mean >> std: a one-pass variance would cancel */
    }
}

static void test_layernorm_works_in_place(void **state) {
    (void)state;
    check_layernorm(11, 768, 0.0f, 1);
    check_layernorm(3, 37, 3.0f, 1);
}

static void test_layernorm_of_a_constant_row_is_the_bias(void **state) {
    (void)state;
    float x[19], w[19], b[19], y[19];
    for (int i = 0; i < 19; i++) x[i] = 7.25f, w[i] = 2.0f, b[i] = 0.1f * i;
    layernorm_forward(y, x, w, b, 1, 19, 1e-5f);
    for (int i = 0; i < 19; i++) assert_true(y[i] == b[i]);
}

/* ------------------------------------------------------------ gelu */

static void test_gelu_matches_ref_over_minus_12_to_12(void **state) {
    (void)state;
    enum { N = 240001 };
    float *x = zeros(N), *a = zeros(N), *r = zeros(N);
    for (int i = 0; i < N; i++) x[i] = -12.0f + 24.0f * (float)i / (N - 1);
    gelu_forward(a, x, N);
    gelu_forward_ref(r, x, N);
    double worst = 0.0;
    for (int i = 0; i < N; i++) {
        double e = fabs((double)a[i] - r[i]) / fmax(1.0, fabs(x[i]));
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    print_message("gelu (%s): max |fast - ref| / max(1,|x|) = %.3g\n", ALAB_SIMD_NAME, worst);
    assert_le(worst, TOL_GELU, "gelu error");
    /* known values: gelu_new(1) = 0.841192, gelu_new(-1) = -0.158808, gelu_new(0) = 0 */
    float v[3] = {1.0f, -1.0f, 0.0f};
    gelu_forward(v, v, 3); /* in place, N < W: only the tail path */
    assert_true(fabsf(v[0] - 0.8411920f) < 1e-6f && fabsf(v[1] + 0.1588080f) < 1e-6f && v[2] == 0.0f);
    free(x), free(a), free(r);
}

static void test_gelu_tanh_identity_is_within_1e6_of_tanhf(void **state) {
    (void)state;
    /* the kernel uses 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)); the tanh it implies,
     * 2 / (1 + exp(-2u)) - 1, must be within 1e-6 abs of tanhf */
    float u[ALAB_SIMD_WIDTH], t[ALAB_SIMD_WIDTH];
    double worst = 0.0;
    for (int i = 0; i < 200000; i += ALAB_SIMD_WIDTH) {
        for (int k = 0; k < ALAB_SIMD_WIDTH; k++) u[k] = -10.0f + 20.0f * (float)(i + k) / 200000;
        alab_vf e = alab_vf_exp(alab_vf_mul(alab_vf_set1(-2.0f), alab_vf_load(u)));
        alab_vf s = alab_vf_div(alab_vf_set1(2.0f), alab_vf_add(alab_vf_set1(1.0f), e));
        alab_vf_store(t, alab_vf_sub(s, alab_vf_set1(1.0f)));
        for (int k = 0; k < ALAB_SIMD_WIDTH; k++) {
            double d = fabs(t[k] - tanhf(u[k]));
            if (!(d <= worst)) worst = d;
        }
    }
    print_message("implied tanh (%s): max |t - tanhf| = %.3g\n", ALAB_SIMD_NAME, worst);
    assert_le(worst, TOL_TANH, "implied tanh error");
}

/* ------------------------------------------------------------ softmax */

static double softmax_err(const float *a, const float *r, int N) {
    double worst = 0.0;
    for (int i = 0; i < N; i++) {
        if (r[i] == 0.0f) { /* exact zeros must stay exact zeros */
            if (a[i] != 0.0f) return INFINITY;
            continue;
        }
        double e = fabs((double)a[i] - r[i]) / r[i];
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

static void test_softmax_matches_ref_on_odd_sizes_with_masked_entries(void **state) {
    (void)state;
    for (int N = 1; N <= 70; N++) {
        float *x = randvec(N, 8.0f), *a = zeros(N), *r = zeros(N);
        for (int i = 0; i < N; i++)
            if (i % 3 == 1) x[i] = -INFINITY; /* causal-mask style holes */
        softmax_forward(a, x, N);
        softmax_forward_ref(r, x, N);
        double e = softmax_err(a, r, N), s = 0.0;
        if (!(e <= TOL_SOFTMAX)) fail_msg("softmax N=%d: error %.3g", N, e);
        for (int i = 0; i < N; i++) {
            if (x[i] == -INFINITY) assert_true(a[i] == 0.0f);
            s += a[i];
        }
        assert_true(fabs(s - 1.0) < 1e-5);
        free(x), free(a), free(r);
    }
}

static void test_softmax_over_the_vocabulary_matches_ref(void **state) {
    (void)state;
    int N = 50257;
    float *x = randvec(N, 15.0f), *a = zeros(N), *r = zeros(N);
    softmax_forward(a, x, N);
    softmax_forward_ref(r, x, N);
    double e = softmax_err(a, r, N);
    print_message("softmax N=50257 (%s): max relative error %.3g\n", ALAB_SIMD_NAME, e);
    assert_le(e, TOL_SOFTMAX, "softmax V error");
    softmax_forward(x, x, N); /* in place gives the same bits */
    for (int i = 0; i < N; i++) assert_true(x[i] == a[i]);
    free(x), free(a), free(r);
}

static void test_softmax_of_an_all_masked_row_is_all_zeros(void **state) {
    (void)state;
    for (int N = 1; N <= 19; N += 6) {
        float x[19], y[19];
        for (int i = 0; i < N; i++) x[i] = -INFINITY, y[i] = 42.0f;
        softmax_forward(y, x, N);
        for (int i = 0; i < N; i++) assert_true(y[i] == 0.0f);
        softmax_forward(x, x, N);
        for (int i = 0; i < N; i++) assert_true(x[i] == 0.0f);
    }
}

static void test_softmax_does_not_overflow_on_large_inputs(void **state) {
    (void)state;
    /* a naive exp(x) overflows to inf at x > 88.7 */
    float x[13] = {1e4f, 3e38f, -3e38f, 1e4f, 500.0f, 3e38f, 0.0f, -INFINITY, 89.0f, 3e38f - 1e32f,
                   1e30f, 2e38f, 3e38f};
    float a[13], r[13];
    softmax_forward(a, x, 13);
    softmax_forward_ref(r, x, 13);
    double s = 0.0;
    for (int i = 0; i < 13; i++) assert_true(isfinite(a[i])), s += a[i];
    assert_true(fabs(s - 1.0) < 1e-6);
    assert_le(softmax_err(a, r, 13), TOL_SOFTMAX, "softmax large");
    assert_true(fabsf(a[1] - 1.0f / 3.0f) < 1e-6f && a[0] == 0.0f && a[7] == 0.0f);
    /* one finite entry among masked ones gets exactly 1 */
    float y[9] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 123.0f, -INFINITY, -INFINITY};
    softmax_forward(y, y, 9);
    for (int i = 0; i < 9; i++) assert_true(y[i] == (i == 6 ? 1.0f : 0.0f));
}

/* ------------------------------------------------------------ vectors */

static void test_dot_axpy_add_match_ref_on_odd_lengths(void **state) {
    (void)state;
    static const int ns[] = {0, 1, 3, 7, 8, 9, 31, 33, 64, 767, 768, 3079};
    for (int j = 0; j < 12; j++) {
        int n = ns[j];
        float *x = randvec(n + 1, 1.0f), *y = randvec(n + 1, 1.0f), *a = zeros(n + 1), *b = zeros(n + 1);
        double mag = 0.0;
        for (int i = 0; i < n; i++) mag += fabs((double)x[i] * y[i]);
        double e = fabs((double)dot_f32(x, y, n) - dot_f32_ref(x, y, n));
        if (!(e <= TOL_SUM * mag)) fail_msg("dot n=%d: error %.3g > %.3g", n, e, TOL_SUM * mag);
        memcpy(a, y, sizeof(float) * (n + 1)), memcpy(b, y, sizeof(float) * (n + 1));
        axpy_f32(a, -0.37f, x, n);
        axpy_f32_ref(b, -0.37f, x, n);
        for (int i = 0; i < n; i++) /* y + alpha x, fused or not: 1 ulp of |y| + |alpha x| */
            assert_true(fabs((double)a[i] - b[i]) <= 1.2e-7 * (fabs(y[i]) + fabs(0.37 * x[i])));
        assert_true(a[n] == y[n]); /* nothing written past n */
        add_f32(b, x, y, n);
        for (int i = 0; i < n; i++) assert_true(b[i] == x[i] + y[i]);
        add_f32(x, x, y, n); /* in place: out == a */
        for (int i = 0; i < n; i++) assert_true(x[i] == b[i]);
        free(x), free(y), free(a), free(b);
    }
}

/* ------------------------------------------------------------ argmax */

/* the first index of the largest value, checked from the definition */
static int first_largest(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static void test_argmax_gives_the_first_largest_like_its_twin(void **state) {
    (void)state;
    static const int ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 1000, 50257};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        const int n = ns[a];
        float *x = randvec((size_t)n, 10.0f);
        for (int trial = 0; trial < 6; trial++) {
            if (trial == 1 && n > 2) { x[n / 3] = 100.0f; x[n - 1] = 100.0f; }     /* a tie: the first wins */
            if (trial == 2) for (int i = 0; i < n; i += 3) x[i] = NAN;            /* NaN never wins ... */
            if (trial == 3) x[0] = NAN;                                             /* ... except at index 0 */
            if (trial == 4) for (int i = 0; i < n; i++) x[i] = i % 2 ? 0.0f : -0.0f; /* -0 == +0: the first */
            if (trial == 5) { for (int i = 0; i < n; i++) x[i] = -INFINITY; if (n > 4) x[n - 2] = INFINITY; }
            const int want = first_largest(x, n);
            assert_int_equal(argmax_f32_ref(x, n), want);
            assert_int_equal(argmax_f32(x, n), want);
        }
        free(x);
    }
    assert_int_equal(argmax_f32(NULL, 0), 0);
}

/* ------------------------------------------------------------ top-k */

/* ids (k of them) are the k best of x: in rank order, distinct, and no id
 * left out ranks before the last one kept. Checked from the definition in O(n). */
static int ranks_before(const float *x, int a, int b) {
    int an = isnan(x[a]), bn = isnan(x[b]);
    if (an != bn) return bn;
    if (!an && x[a] != x[b]) return x[a] > x[b];
    return a < b;
}
static void assert_topk(const int *ids, const float *x, int n, int k) {
    char *kept = calloc((size_t)n, 1);
    for (int i = 0; i < k; i++) {
        assert_true(ids[i] >= 0 && ids[i] < n);
        assert_false(kept[ids[i]]);
        kept[ids[i]] = 1;
        if (i) assert_true(ranks_before(x, ids[i - 1], ids[i]));
    }
    for (int i = 0; i < n; i++)
        if (!kept[i]) assert_true(ranks_before(x, ids[k - 1], i));
    free(kept);
}

static void test_topk_matches_its_twin_with_ties_nan_and_every_k(void **state) {
    (void)state;
    static const int ns[] = {1, 2, 3, 7, 64, 1000, 50257};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        const int n = ns[a];
        float *x = randvec((size_t)n, 10.0f);
        int *got = malloc((size_t)n * sizeof(int)), *want = malloc((size_t)n * sizeof(int));
        for (int trial = 0; trial < 5; trial++) {
            if (trial == 1) for (int i = 0; i < n; i++) x[i] = (float)(i % 5);             /* many ties */
            if (trial == 2) for (int i = 0; i < n; i += 3) x[i] = NAN;                      /* NaN ranks last */
            if (trial == 3) for (int i = 0; i < n; i++) x[i] = i % 2 ? 0.0f : -0.0f;        /* -0 == +0 */
            if (trial == 4) for (int i = 0; i < n; i++) x[i] = i % 7 ? -INFINITY : INFINITY;
            const int ks[] = {1, 2, 5, 40, n / 2, n - 1, n};
            for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++) {
                const int k = ks[b];
                if (k < 1 || k > n) continue;
                if (n == 50257 && k > 40) continue; /* the O(n k) twin: keep the suite short */
                topk_f32(got, x, n, k);
                topk_f32_ref(want, x, n, k);
                for (int i = 0; i < k; i++) assert_int_equal(got[i], want[i]);
                assert_topk(got, x, n, k);
            }
        }
        /* k above n gives all n */
        topk_f32(got, x, n, n + 5);
        assert_topk(got, x, n, n);
        free(x);
        free(got);
        free(want);
    }
}

/* Issue 21: the insertion sort took 10.8 s for k = 100 000 of a 1 M
 * vocabulary; the heap is O(n log k). Checked from the definition (the twin
 * would be the slow one here). */
static void test_topk_of_a_million_keeps_the_hundred_thousand_best(void **state) {
    (void)state;
    const int n = 1000000, k = 100000;
    float *x = randvec((size_t)n, 10.0f);
    for (int i = 0; i < n; i += 1000) x[i] = 3.0f; /* some ties */
    int *ids = malloc((size_t)k * sizeof(int));
    topk_f32(ids, x, n, k);
    assert_topk(ids, x, n, k);
    free(ids);
    free(x);
}

/* ------------------------------------------------------------ finite check */

static void test_first_nonfinite_finds_the_first_inf_or_nan_anywhere(void **state) {
    (void)state;
    static const size_t ns[] = {0, 1, 3, 7, 8, 9, 1023, 1024, 1025, 3000};
    const float bad[] = {INFINITY, -INFINITY, NAN};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        size_t n = ns[a];
        float *x = randvec(n + 1, 3.0e38f); /* large but finite: x - x must still be 0 */
        assert_int_equal(first_nonfinite_f32(x, n), n);
        assert_int_equal(first_nonfinite_f32_ref(x, n), n);
        for (size_t pos = 0; pos < n; pos += (n > 40 ? n / 13 + 1 : 1)) {
            for (int b = 0; b < 3; b++) {
                float keep = x[pos];
                x[pos] = bad[b];
                if (pos + 5 < n) x[pos + 5] = NAN; /* a later one must not be reported */
                assert_int_equal(first_nonfinite_f32(x, n), pos);
                assert_int_equal(first_nonfinite_f32_ref(x, n), pos);
                x[pos] = keep;
                if (pos + 5 < n) x[pos + 5] = 1.0f;
            }
        }
        x[n] = NAN; /* just past the end: not looked at */
        assert_int_equal(first_nonfinite_f32(x, n), n);
        free(x);
    }
}

/* The 16-bit scan reads exponent bits: every F16 / BF16 inf and NaN pattern is found at its place (the first
 * of several), the largest finite values and subnormals are not, across block edges; the twin converts. */
static void test_first_nonfinite_16_finds_inf_and_nan_bits(void **state) {
    (void)state;
    static const size_t ns[] = {0, 1, 7, 8, 9, 1023, 1024, 1025, 3000};
    static const uint16_t bad[2][4] = {{0x7c00, 0xfc00, 0x7e00, 0x7c01}, {0x7f80, 0xff80, 0x7fc0, 0x7f81}};
    static const uint16_t fine[2][4] = {{0x7bff, 0xfbff, 0x0001, 0x8000}, {0x7f7f, 0xff7f, 0x0001, 0x8000}};
    for (int bf = 0; bf < 2; bf++)
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
            size_t n = ns[a];
            uint16_t *h = malloc((n + 1) * sizeof *h);
            assert_non_null(h);
            for (size_t i = 0; i <= n; i++) h[i] = fine[bf][i % 4];
            assert_int_equal(first_nonfinite_16(h, n, bf), n);
            assert_int_equal(first_nonfinite_16_ref(h, n, bf), n);
            for (size_t pos = 0; pos < n; pos += (n > 40 ? n / 13 + 1 : 1))
                for (int b = 0; b < 4; b++) {
                    uint16_t keep = h[pos];
                    h[pos] = bad[bf][b];
                    if (pos + 3 < n) h[pos + 3] = bad[bf][(b + 1) % 4]; /* a later one is not the answer */
                    assert_int_equal(first_nonfinite_16(h, n, bf), pos);
                    assert_int_equal(first_nonfinite_16_ref(h, n, bf), pos);
                    h[pos] = keep;
                    if (pos + 3 < n) h[pos + 3] = fine[bf][0];
                }
            h[n] = bad[bf][0]; /* just past the end: not looked at */
            assert_int_equal(first_nonfinite_16(h, n, bf), n);
            free(h);
        }
}

/* kl_block + kl_finish against the double twin: changes from rounding-sized to large, with a common shift
 * (which KL ignores: 0 within rounding), blocks of odd sizes, no change at all (exactly 0) and a p that sums to 1 only in float */
static void test_kl_blocks_match_ref(void **state) {
    (void)state;
    const int V = 5003; /* not a multiple of the vector width or of a block */
    float *z = randvec(V, 4.0f), *x = malloc(V * sizeof(float)), *p = malloc(V * sizeof(float));
    double mx = -INFINITY, s = 0.0;
    for (int v = 0; v < V; v++) mx = z[v] > mx ? z[v] : mx;
    for (int v = 0; v < V; v++) s += exp((double)z[v] - mx);
    for (int v = 0; v < V; v++) p[v] = (float)(exp((double)z[v] - mx) / s);
    const float scales[] = {0.0f, 1e-6f, 1e-4f, 1e-2f, 0.3f, 3.0f, 30.0f};
    const int blocks[] = {264, 256, 7, 5003};
    kl_part parts[800];
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++)
        for (int shift = 0; shift < 2; shift++) {
            float *d = randvec(V, scales[k]);
            for (int v = 0; v < V; v++) x[v] = d[v] + (shift ? 0.7f * (scales[k] > 1.0f ? 10.0f : 1.0f) : 0.0f);
            const double r = kl_ref(p, x, V);
            for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
                int nb = 0;
                for (int v0 = 0; v0 < V; v0 += blocks[b], nb++)
                    kl_block(&parts[nb], p + v0, x + v0, V - v0 < blocks[b] ? V - v0 : blocks[b]);
                const double f = kl_finish(parts, nb);
                if (scales[k] == 0.0f && !shift && f != 0.0) fail_msg("kl of no change is %.17g, not 0", f);
                if (!(fabs(f - r) <= 1e-5 * r + 1e-13))
                    fail_msg("kl scale %g shift %d block %d: %.17g against %.17g", scales[k], shift, blocks[b], f, r);
            }
            free(d);
        }
    free(z), free(x), free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_is_within_2_eps_relative_of_exp_over_the_finite_range),
        cmocka_unit_test(test_exp_maps_minus_infinity_and_underflow_to_exact_zero),
        cmocka_unit_test(test_reductions_sum_and_max_every_lane),
        cmocka_unit_test(test_matmul_matches_ref_on_odd_sizes),
        cmocka_unit_test(test_matmul_matches_ref_across_c_blocks_and_partial_strips),
        cmocka_unit_test(test_matmul_matches_ref_at_distilgpt2_shapes),
        cmocka_unit_test(test_matmul_of_zero_length_c_is_the_bias),
        cmocka_unit_test(test_matmul_ld_matches_ref_on_strided_views),
        cmocka_unit_test(test_matmul_packed_matches_ref_on_odd_and_real_sizes),
        cmocka_unit_test(test_kl_blocks_match_ref),
        cmocka_unit_test(test_first_nonfinite_finds_the_first_inf_or_nan_anywhere),
        cmocka_unit_test(test_first_nonfinite_16_finds_inf_and_nan_bits),
        cmocka_unit_test(test_argmax_gives_the_first_largest_like_its_twin),
        cmocka_unit_test(test_topk_matches_its_twin_with_ties_nan_and_every_k),
        cmocka_unit_test(test_topk_of_a_million_keeps_the_hundred_thousand_best),
        cmocka_unit_test(test_matmul_nt_matches_ref_on_odd_sizes),
        cmocka_unit_test(test_matmul_nt_matches_ref_for_the_tied_lm_head),
        cmocka_unit_test(test_layernorm_matches_ref_on_odd_sizes_and_offset_rows),
        cmocka_unit_test(test_layernorm_works_in_place),
        cmocka_unit_test(test_layernorm_of_a_constant_row_is_the_bias),
        cmocka_unit_test(test_gelu_matches_ref_over_minus_12_to_12),
        cmocka_unit_test(test_gelu_tanh_identity_is_within_1e6_of_tanhf),
        cmocka_unit_test(test_softmax_matches_ref_on_odd_sizes_with_masked_entries),
        cmocka_unit_test(test_softmax_over_the_vocabulary_matches_ref),
        cmocka_unit_test(test_softmax_of_an_all_masked_row_is_all_zeros),
        cmocka_unit_test(test_softmax_does_not_overflow_on_large_inputs),
        cmocka_unit_test(test_dot_axpy_add_match_ref_on_odd_lengths),
    };
    print_message("simd path: %s (ALAB_SIMD_WIDTH %d)\n", ALAB_SIMD_NAME, ALAB_SIMD_WIDTH);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
