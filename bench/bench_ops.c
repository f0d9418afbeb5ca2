/* bench_ops.c — micro-benchmark of the matmul kernels at distilgpt2 shapes,
 * plus a self-check of every fast kernel against its reference twin.
 *
 * The same file builds natively (main() prints a markdown table, or TSV with
 * --tsv for bench_ops_wasm.mjs to merge) and to WebAssembly with
 * -sSTANDALONE_WASM --no-entry, where bench_ops_wasm.mjs calls the exported
 * functions below. Timing is clock_gettime(CLOCK_MONOTONIC); in wasm that is
 * the WASI clock_time_get import, which the Node runner provides.
 *
 *   bench_simd_width()                  lanes of alab_vf in this build (1 = scalar)
 *   bench_selfcheck()                   fast vs ref on odd and real sizes: failures (0 = ok)
 *   bench_check_error(kind, T, C, OC)   max |fast - ref| / (sum |inp*w| + |bias|)
 *   bench_time_ms(kind, T, C, OC, reps) median ms of reps runs after one warm-up
 *   bench_last_min_ms()                 the fastest of those runs
 *   bench_peak_gflops(iters)            register-only fma throughput (independent chains)
 *   bench_use_cpu_time(on)              time with the process CPU clock instead of the wall clock
 * kind: 0 matmul_forward, 1 matmul_forward_ref, 2 matmul_nt_forward, 3 matmul_nt_forward_ref */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "ops.h"
#include "simd.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__wasm__)
#define BENCH_EXPORT(name) __attribute__((export_name(name), used))
#else
#define BENCH_EXPORT(name)
#endif

enum { K_MM = 0, K_MM_REF = 1, K_NT = 2, K_NT_REF = 3, K_MMP = 4 /* matmul on packed weights */ };

/* ------------------------------------------------------------ helpers */

/* Wall clock by default; CPU time of the process with bench_use_cpu_time(1) (native:
 * --cpu-time), which is steadier on a machine shared with other jobs. */
static clockid_t bench_clock = CLOCK_MONOTONIC;
BENCH_EXPORT("bench_use_cpu_time") void bench_use_cpu_time(int on) {
    bench_clock = on ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float frand(void) { /* uniform in [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) * (2.0 / 16777216.0) - 1.0);
}
static void fill(float *x, size_t n, float scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * frand();
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run_kind(int kind, float *out, const float *inp, const float *w, const float *bias,
                     int T, int C, int OC) {
    switch (kind) {
    case K_MM: matmul_forward(out, inp, w, bias, T, C, OC); break;
    case K_MM_REF: matmul_forward_ref(out, inp, w, bias, T, C, OC); break;
    case K_NT: matmul_nt_forward(out, inp, w, T, C, OC); break;
    case K_MMP: matmul_packed_forward(out, inp, w, bias, T, C, OC); break; /* w already packed */
    default: matmul_nt_forward_ref(out, inp, w, T, C, OC); break;
    }
}

/* ---------------------------------------------------------- checking */

BENCH_EXPORT("bench_simd_width") int bench_simd_width(void) { return ALAB_SIMD_WIDTH; }

/* kind 0: matmul_forward vs ref; kind 2: matmul_nt_forward vs ref.
 * Returns the max error relative to the magnitude of the sum, or -1 on OOM. */
BENCH_EXPORT("bench_check_error") double bench_check_error(int kind, int T, int C, int OC) {
    size_t nw = (size_t)C * OC;
    float *inp = malloc(sizeof(float) * (size_t)T * C), *w = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * OC);
    float *a = malloc(sizeof(float) * (size_t)T * OC), *b = malloc(sizeof(float) * (size_t)T * OC);
    double worst = -1.0;
    if (inp && w && bias && a && b) {
        fill(inp, (size_t)T * C, 1.0f), fill(w, nw, 0.1f), fill(bias, OC, 0.1f);
        worst = 0.0;
        int nt = kind == K_NT || kind == K_NT_REF;
        if (kind == K_MMP) { /* packed copy through a, then the fast packed kernel vs the plain ref */
            float *wp = malloc(sizeof(float) * nw);
            if (!wp) { worst = -1.0; goto done; }
            matmul_pack_weights(wp, w, C, OC);
            run_kind(K_MMP, a, inp, wp, bias, T, C, OC);
            free(wp);
        } else {
            run_kind(nt ? K_NT : K_MM, a, inp, w, bias, T, C, OC);
        }
        run_kind(nt ? K_NT_REF : K_MM_REF, b, inp, w, bias, T, C, OC);
        for (int t = 0; t < T; t++) {
            for (int o = 0; o < OC; o++) {
                double mag = nt ? 0.0 : fabs(bias[o]);
                for (int c = 0; c < C; c++)
                    mag += fabs(inp[(size_t)t * C + c] * (nt ? w[(size_t)o * C + c] : w[(size_t)c * OC + o]));
                double e = fabs((double)a[(size_t)t * OC + o] - b[(size_t)t * OC + o]) / (mag > 0 ? mag : 1.0);
                if (!(e <= worst)) worst = e; /* NaN counts as worst */
            }
        }
    }
done:
    free(inp), free(w), free(bias), free(a), free(b);
    return worst;
}

/* max |a-b| / max(|b|, floor) */
static double max_rel(const float *a, const float *b, int n, double floor_) {
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / fmax(fabs((double)b[i]), floor_);
        if (!(d <= worst)) worst = d;
    }
    return worst;
}

/* Every fast kernel against its twin on odd sizes, with the tolerances of
 * tests/c/test_ops.c. Returns a bit mask of the failed checks (0 = all pass):
 *   1 matmul  2 matmul_nt  4 exp  8 gelu  16 softmax  32 softmax all -inf
 *   64 layernorm  128 dot  256 axpy  512 add  1024 argmax */
BENCH_EXPORT("bench_selfcheck") int bench_selfcheck(void) {
    static const int Ts[] = {1, 3, 7, 11}, Cs[] = {1, 5, 33, 768}, OCs[] = {1, 3, 17, 2304};
    int fails = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) {
                if (!(bench_check_error(K_MM, Ts[i], Cs[j], OCs[k]) <= 2e-6)) fails |= 1;
                if (!(bench_check_error(K_NT, Ts[i], Cs[j], OCs[k]) <= 2e-6)) fails |= 2;
                if (!(bench_check_error(K_MMP, Ts[i], Cs[j], OCs[k]) <= 2e-6)) fails |= 1; /* packed: matmul's bit */
            }
    if (!(bench_check_error(K_MM, 130, 300, 131) <= 2e-6)) fails |= 1;
    /* more than 16 rows: the packed kernel's passes over several blocks of w (MMP_SUPER),
     * with a partial last block, leftover vectors and scalar columns */
    if (!(bench_check_error(K_MMP, 130, 300, 131) <= 2e-6)) fails |= 1;
    if (!(bench_check_error(K_MMP, 17, 257, 61) <= 2e-6)) fails |= 1;
    if (!(bench_check_error(K_MMP, 33, 768, 3072) <= 2e-6)) fails |= 1;
    if (!(bench_check_error(K_NT, 1, 768, 50257) <= 2e-6)) fails |= 2;
    enum { N = 3080 };
    static float x[N], y[N], z[N], g[N], bb[N];
    /* exp: relative error over [-87.3, 88.3], 2 eps */
    for (int i = 0; i < N; i++) x[i] = -87.3f + 175.6f * i / (N - 1);
    for (int i = 0; i + ALAB_SIMD_WIDTH <= N; i += ALAB_SIMD_WIDTH)
        alab_vf_store(y + i, alab_vf_exp(alab_vf_load(x + i)));
    for (int i = 0; i < N; i++) z[i] = (float)exp((double)x[i]);
    if (!(max_rel(y, z, N, 0.0) <= 2.4e-7)) fails |= 4;
    /* gelu over [-12, 12] */
    for (int i = 0; i < N; i++) x[i] = -12.0f + 24.0f * i / (N - 1);
    gelu_forward(y, x, N - 1), gelu_forward_ref(z, x, N - 1);
    for (int i = 0; i < N - 1; i++)
        if (!(fabsf(y[i] - z[i]) <= 3e-7f * fmaxf(1.0f, fabsf(x[i])))) fails |= 8;
    /* softmax with -inf entries, odd lengths */
    for (int n = 1; n <= 67; n += 11) {
        for (int i = 0; i < n; i++) x[i] = (i % 5 == 2) ? -INFINITY : 40.0f * frand();
        softmax_forward(y, x, n), softmax_forward_ref(z, x, n);
        for (int i = 0; i < n; i++)
            if (!(fabsf(y[i] - z[i]) <= 4e-6f * z[i])) fails |= 16;
    }
    for (int i = 0; i < 9; i++) x[i] = -INFINITY;
    softmax_forward(y, x, 9);
    for (int i = 0; i < 9; i++) if (y[i] != 0.0f) fails |= 32;
    /* layernorm on rows with a large mean */
    for (int i = 0; i < 3 * 769; i++) x[i] = 50.0f + frand();
    for (int i = 0; i < 769; i++) g[i] = 1.0f + 0.2f * frand(), bb[i] = 0.1f * frand();
    layernorm_forward(y, x, g, bb, 3, 769, 1e-5f), layernorm_forward_ref(z, x, g, bb, 3, 769, 1e-5f);
    if (!(max_rel(y, z, 3 * 769, 1.0) <= 4e-6)) fails |= 64;
    /* dot, axpy, add on an odd length */
    fill(x, N - 1, 1.0f), fill(g, N - 1, 1.0f);
    double mag = 0.0;
    for (int i = 0; i < N - 1; i++) mag += fabs(x[i] * g[i]);
    if (!(fabs(dot_f32(x, g, N - 1) - dot_f32_ref(x, g, N - 1)) <= 2e-6 * mag)) fails |= 128;
    memcpy(y, g, sizeof y), memcpy(z, g, sizeof z);
    axpy_f32(y, 0.37f, x, N - 1), axpy_f32_ref(z, 0.37f, x, N - 1);
    for (int i = 0; i < N - 1; i++)
        if (!(fabsf(y[i] - z[i]) <= 1.2e-7f * (fabsf(g[i]) + fabsf(0.37f * x[i])))) fails |= 256;
    add_f32(y, x, g, N - 1);
    for (int i = 0; i < N - 1; i++) if (y[i] != x[i] + g[i]) fails |= 512;
    /* argmax: plain, a tie of the maximum, NaNs in the way, NaN first; odd lengths */
    static const int an[] = {1, 5, 33, N - 1};
    for (int a = 0; a < 4; a++) {
        const int n = an[a];
        fill(x, n, 1.0f);
        if (argmax_f32(x, n) != argmax_f32_ref(x, n)) fails |= 1024;
        x[n / 2] = 5.0f, x[n - 1] = 5.0f;
        if (argmax_f32(x, n) != argmax_f32_ref(x, n)) fails |= 1024;
        for (int i = 0; i < n; i += 4) x[i] = NAN;
        if (argmax_f32(x, n) != argmax_f32_ref(x, n)) fails |= 1024;
        x[0] = NAN;
        if (argmax_f32(x, n) != 0) fails |= 1024;
    }
    return fails;
}

/* ------------------------------------------------------------ timing */

static double last_min_ms = -1.0;
/* the fastest of the runs of the last bench_time_ms: on a shared machine, the
 * closest to what the kernel does alone */
BENCH_EXPORT("bench_last_min_ms") double bench_last_min_ms(void) { return last_min_ms; }

BENCH_EXPORT("bench_time_ms") double bench_time_ms(int kind, int T, int C, int OC, int reps) {
    size_t nw = (size_t)C * OC;
    float *inp = malloc(sizeof(float) * (size_t)T * C), *w = malloc(sizeof(float) * nw);
    float *bias = malloc(sizeof(float) * OC), *out = malloc(sizeof(float) * (size_t)T * OC);
    double *ms = malloc(sizeof(double) * (reps > 0 ? reps : 1)), med = -1.0;
    if (inp && w && bias && out && ms && reps > 0) {
        fill(inp, (size_t)T * C, 1.0f), fill(w, nw, 0.1f), fill(bias, OC, 0.1f);
        if (kind == K_MMP) { /* pack once, as the model does at load (out is scratch) */
            float *wp = malloc(sizeof(float) * nw);
            if (!wp) { free(inp), free(w), free(bias), free(out), free(ms); return -1.0; }
            matmul_pack_weights(wp, w, C, OC);
            free(w);
            w = wp;
        }
        run_kind(kind, out, inp, w, bias, T, C, OC); /* warm-up */
        for (int r = 0; r < reps; r++) {
            double t0 = now_ms();
            run_kind(kind, out, inp, w, bias, T, C, OC);
            ms[r] = now_ms() - t0;
        }
        qsort(ms, reps, sizeof(double), cmp_double);
        med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
        last_min_ms = ms[0];
    }
    free(inp), free(w), free(bias), free(out), free(ms);
    return med;
}

/* Register-only throughput of alab_vf_fma: 12 independent chains acc = acc*m + a
 * (fused on AVX2+FMA, mul then add on SIMD128/SSE/scalar), 2 flops per lane. */
BENCH_EXPORT("bench_peak_gflops") double bench_peak_gflops(int iters) {
    enum { NACC = 12 };
    alab_vf acc[NACC];
    volatile float seed = 0.999f; /* opaque to the compiler */
    alab_vf m = alab_vf_set1(seed), a = alab_vf_set1(seed * 1e-3f);
    for (int k = 0; k < NACC; k++) acc[k] = alab_vf_set1(seed + (float)k);
    double t0 = now_ms();
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < NACC; k++) acc[k] = alab_vf_fma(acc[k], m, a);
    double dt = now_ms() - t0;
    alab_vf s = acc[0];
    for (int k = 1; k < NACC; k++) s = alab_vf_add(s, acc[k]);
    volatile float sink = alab_vf_reduce_sum(s);
    (void)sink;
    return 2.0 * NACC * ALAB_SIMD_WIDTH * (double)iters / (dt * 1e6);
}

/* ------------------------------------------------------------- native */

#if !defined(__wasm__)
/* kernel, T, C, OC: the same rows as bench_ops_wasm.mjs's SHAPES */
static const struct { int kind, T, C, OC; } shapes[] = {
    {K_MM, 11, 768, 2304}, {K_MM, 11, 768, 768}, {K_MM, 11, 768, 3072}, {K_MM, 11, 3072, 768},
    {K_MM, 128, 768, 2304}, {K_MM, 128, 768, 768}, {K_MM, 128, 768, 3072}, {K_MM, 128, 3072, 768},
    {K_MMP, 1, 768, 2304}, {K_MMP, 1, 3072, 768},
    {K_MMP, 11, 768, 2304}, {K_MMP, 11, 768, 768}, {K_MMP, 11, 768, 3072}, {K_MMP, 11, 3072, 768},
    {K_MMP, 128, 768, 2304}, {K_MMP, 128, 768, 768}, {K_MMP, 128, 768, 3072}, {K_MMP, 128, 3072, 768},
    {K_NT, 1, 768, 50257},
};
#define NSHAPES (int)(sizeof shapes / sizeof shapes[0])
static const char *kind_name(int kind) {
    return kind == K_NT ? "matmul_nt" : kind == K_MMP ? "matmul_packed" : "matmul";
}

int main(int argc, char **argv) {
    int tsv = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tsv") == 0) tsv = 1;
        else if (strcmp(argv[i], "--cpu-time") == 0) bench_use_cpu_time(1);
        else {
            fprintf(stderr, "usage: %s [--tsv] [--cpu-time]\n", argv[0]);
            return 2;
        }
    }
    int reps = 15;
    int fails = bench_selfcheck();
    double peak = 0.0; /* best of 5 */
    for (int i = 0; i < 5; i++) {
        double g = bench_peak_gflops(20000000);
        if (g > peak) peak = g;
    }
    if (tsv) {
        printf("simd\t%s\t%d\nselfcheck_failures\t%d\npeak_gflops\t%.2f\n", ALAB_SIMD_NAME,
               ALAB_SIMD_WIDTH, fails, peak);
    } else {
        printf("native %s (W=%d): selfcheck failure mask %d, peak fma %.1f GFLOP/s\n\n", ALAB_SIMD_NAME,
               ALAB_SIMD_WIDTH, fails, peak);
        printf("| kernel | T | C | OC | max rel err | fast ms | fast GFLOP/s (best) | ref GFLOP/s | fast/ref |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    for (int s = 0; s < NSHAPES; s++) {
        int kind = shapes[s].kind, T = shapes[s].T, C = shapes[s].C, OC = shapes[s].OC;
        int nt = kind == K_NT;
        double flop = 2.0 * T * C * OC;
        double err = bench_check_error(kind, T, C, OC);
        double fast = bench_time_ms(kind, T, C, OC, reps), fast_min = bench_last_min_ms();
        double ref = bench_time_ms(nt ? K_NT_REF : K_MM_REF, T, C, OC, 10);
        if (tsv)
            printf("%s\t%d\t%d\t%d\t%.3g\t%.4f\t%.4f\t%.4f\n", kind_name(kind), T, C, OC, err, fast, ref, fast_min);
        else
            printf("| %s | %d | %d | %d | %.1e | %.3f | %.1f (%.1f) | %.2f | %.0fx |\n", kind_name(kind), T, C, OC, err,
                   fast, flop / (fast * 1e6), flop / (fast_min * 1e6), flop / (ref * 1e6), ref / fast);
        fflush(stdout);
    }
    return fails != 0;
}
#endif
