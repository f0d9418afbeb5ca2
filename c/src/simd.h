/* simd.h — a small vector vocabulary, after ggml's simd-mappings.h.
 *
 * Kernels in ops.c are written once against these names; this header maps
 * them to one instruction set. It is the only file with ISA #ifdefs.
 *
 *   wasm SIMD128      when __wasm_simd128__           ALAB_SIMD_WIDTH 4
 *     + relaxed SIMD  when also __wasm_relaxed_simd__ (clang-19 -mrelaxed-simd):
 *                     alab_vf_fma is f32x4.relaxed_madd (attnlab-relaxed.wasm)
 *   x86 AVX2 + FMA    when __AVX2__ and __FMA__       ALAB_SIMD_WIDTH 8
 *   x86 SSE2          other x86-64 (or __SSE2__)      ALAB_SIMD_WIDTH 4
 *   scalar            anything else, or ALAB_NO_SIMD  ALAB_SIMD_WIDTH 1
 *
 * The vocabulary (alab_vf is one vector of ALAB_SIMD_WIDTH floats):
 *   alab_vf_load(p) alab_vf_store(p, v)   unaligned load / store of W floats
 *   alab_vf_set1(x) alab_vf_zero()        broadcast / all zeros
 *   alab_vf_load1(p)                      broadcast *p (one load-and-splat instruction)
 *   alab_vf_add sub mul div min max       lane-wise; min/max follow x86 minps/maxps on
 *                                         every path: a NaN in either operand gives b
 *   alab_vf_fma(a, b, c)                  a*b + c (fused on AVX2+FMA; relaxed_madd on wasm
 *                                         relaxed SIMD, fused where the CPU has FMA; mul then
 *                                         add elsewhere)
 *   alab_vf_reduce_sum(v) reduce_max(v)   horizontal sum / max of the lanes
 *   alab_vf_exp(v)                        fast exp, see below
 *   alab_cpu_relax()                      spin-wait hint (x86 pause; nothing elsewhere),
 *                                         for the thread pool's waits (parallel.c)
 * Tuning hints for ops.c (numbers, not ISA tests):
 *   ALAB_MM_NV   vectors of output columns per matmul micro-kernel, chosen so that
 *                4 rows x NV accumulators + NV weights + 1 broadcast fit the register file.
 *   ALAB_MM_KC   rows of w per block of the matmuls (measured: 64 on wasm, where a
 *                distilgpt2 forward at T = 11 takes 28 ms instead of 33.5 with 256;
 *                256 natively, where 64 is 15 % slower; docs/BENCHMARKS.md).
 *
 * alab_vf_exp: Cephes-style expf. n = round(x log2 e); r = x - n ln2 (ln2 split
 * into an exactly-representable high part and a correction); exp(r) = 1 + r +
 * r^2 P(r), P the Cephes degree-5 minimax polynomial on |r| <= ln2/2; result =
 * exp(r) * 2^n, 2^n built in the exponent field. Inputs are clamped to
 * [ln(FLT_MIN), 88.37]: x < ln(FLT_MIN) = -87.3365 (and -inf) gives exactly 0
 * (outputs below FLT_MIN are flushed), x > 88.37 saturates at about 2.4e38
 * rather than inf. NaN propagates. Max relative error on [-87.3, 88.3], measured
 * by tests/c/test_ops.c: 1.17e-7 (1.3 ulp), the same on every path. */
#ifndef ALAB_SIMD_H
#define ALAB_SIMD_H

#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- choose */
#if defined(ALAB_NO_SIMD)
#define ALAB_SIMD_SCALAR 1
#elif defined(__wasm_simd128__)
#define ALAB_SIMD_WASM 1
#elif defined(__AVX2__) && defined(__FMA__)
#define ALAB_SIMD_AVX2 1
#elif defined(__SSE2__) || defined(__x86_64__) || defined(_M_X64)
#define ALAB_SIMD_SSE2 1
#else
#define ALAB_SIMD_SCALAR 1
#endif

/* exp constants shared by every path */
#define ALAB_EXP_LO (-87.33654475f)     /* ln(FLT_MIN): below this, exp flushes to 0 */
#define ALAB_EXP_HI (88.37f)            /* n stays <= 127 so 2^n is a normal float */
#define ALAB_EXP_LOG2E 1.44269504088896341f
#define ALAB_EXP_LN2_HI 0.693359375f    /* 9 significant bits: n * LN2_HI is exact */
#define ALAB_EXP_LN2_LO (-2.12194440e-4f)
/* Minimax coefficients of (exp(r) - 1 - r) / r^2 on [-ln2/2, ln2/2] (Cephes expf). */
#define ALAB_EXP_P0 1.9875691500e-4f
#define ALAB_EXP_P1 1.3981999507e-3f
#define ALAB_EXP_P2 8.3334519073e-3f
#define ALAB_EXP_P3 4.1665795894e-2f
#define ALAB_EXP_P4 1.6666665459e-1f
#define ALAB_EXP_P5 5.0000001201e-1f

/* ------------------------------------------------------------ wasm SIMD128 */
#if defined(ALAB_SIMD_WASM)
#include <wasm_simd128.h>
#define ALAB_SIMD_WIDTH 4
#if defined(__wasm_relaxed_simd__)
#define ALAB_SIMD_NAME "wasm-relaxed-simd"
#else
#define ALAB_SIMD_NAME "wasm-simd128"
#endif
#define ALAB_MM_NV 2 /* V8 keeps 15 xmm registers: 4x3 tiles spill */
#define ALAB_MM_KC 64
typedef v128_t alab_vf;

static inline alab_vf alab_vf_load(const float *p) { return wasm_v128_load(p); }
static inline void alab_vf_store(float *p, alab_vf v) { wasm_v128_store(p, v); }
static inline alab_vf alab_vf_set1(float x) { return wasm_f32x4_splat(x); }
static inline alab_vf alab_vf_load1(const float *p) { return wasm_v128_load32_splat(p); }
static inline alab_vf alab_vf_zero(void) { return wasm_f32x4_splat(0.0f); }
static inline alab_vf alab_vf_add(alab_vf a, alab_vf b) { return wasm_f32x4_add(a, b); }
static inline alab_vf alab_vf_sub(alab_vf a, alab_vf b) { return wasm_f32x4_sub(a, b); }
static inline alab_vf alab_vf_mul(alab_vf a, alab_vf b) { return wasm_f32x4_mul(a, b); }
static inline alab_vf alab_vf_div(alab_vf a, alab_vf b) { return wasm_f32x4_div(a, b); }
/* pmin/pmax are the "pseudo" min/max that lower to one minps/maxps on x86;
 * pmax(b, a) = b < a ? a : b, which is x86's maxps(a, b): a NaN gives b. */
static inline alab_vf alab_vf_min(alab_vf a, alab_vf b) { return wasm_f32x4_pmin(b, a); }
static inline alab_vf alab_vf_max(alab_vf a, alab_vf b) { return wasm_f32x4_pmax(b, a); }
#if defined(__wasm_relaxed_simd__)
/* attnlab-relaxed.wasm (clang-19 -mrelaxed-simd): f32x4.relaxed_madd, which the
 * engine may run fused (one rounding: vfmadd on x86 with FMA3, fmla on arm64) or
 * as mul then add. Within one machine and engine the choice is fixed, so every
 * kernel that calls this computes each output value by the same instruction
 * whichever thread or tile holds it (the thread-count identity still holds). */
static inline alab_vf alab_vf_fma(alab_vf a, alab_vf b, alab_vf c) { return wasm_f32x4_relaxed_madd(a, b, c); }
#else
static inline alab_vf alab_vf_fma(alab_vf a, alab_vf b, alab_vf c) {
    return wasm_f32x4_add(wasm_f32x4_mul(a, b), c);
}
#endif
static inline float alab_vf_reduce_sum(alab_vf v) {
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}
static inline float alab_vf_reduce_max(alab_vf v) {
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}
/* exp helpers: round to nearest integer (as float); 2^n for integral n in [-126, 127];
 * v where keep is false -> 0 (keep: x >= lo). */
static inline alab_vf alab_vf__round(alab_vf x) { return wasm_f32x4_nearest(x); }
static inline alab_vf alab_vf__pow2i(alab_vf n) {
    v128_t i = wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127));
    return wasm_i32x4_shl(i, 23);
}
static inline alab_vf alab_vf__zero_below(alab_vf v, alab_vf x, alab_vf lo) {
    return wasm_v128_andnot(v, wasm_f32x4_lt(x, lo));
}

/* -------------------------------------------------------------- AVX2 + FMA */
#elif defined(ALAB_SIMD_AVX2)
#include <immintrin.h>
#define ALAB_SIMD_WIDTH 8
#define ALAB_SIMD_NAME "avx2-fma"
#define ALAB_MM_NV 3
typedef __m256 alab_vf;

static inline alab_vf alab_vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void alab_vf_store(float *p, alab_vf v) { _mm256_storeu_ps(p, v); }
static inline alab_vf alab_vf_set1(float x) { return _mm256_set1_ps(x); }
static inline alab_vf alab_vf_load1(const float *p) { return _mm256_broadcast_ss(p); }
static inline alab_vf alab_vf_zero(void) { return _mm256_setzero_ps(); }
static inline alab_vf alab_vf_add(alab_vf a, alab_vf b) { return _mm256_add_ps(a, b); }
static inline alab_vf alab_vf_sub(alab_vf a, alab_vf b) { return _mm256_sub_ps(a, b); }
static inline alab_vf alab_vf_mul(alab_vf a, alab_vf b) { return _mm256_mul_ps(a, b); }
static inline alab_vf alab_vf_div(alab_vf a, alab_vf b) { return _mm256_div_ps(a, b); }
static inline alab_vf alab_vf_min(alab_vf a, alab_vf b) { return _mm256_min_ps(a, b); }
static inline alab_vf alab_vf_max(alab_vf a, alab_vf b) { return _mm256_max_ps(a, b); }
static inline alab_vf alab_vf_fma(alab_vf a, alab_vf b, alab_vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline float alab_vf_reduce_sum(alab_vf v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
    return _mm_cvtss_f32(s);
}
static inline float alab_vf_reduce_max(alab_vf v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 0x55));
    return _mm_cvtss_f32(s);
}
static inline alab_vf alab_vf__round(alab_vf x) {
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline alab_vf alab_vf__pow2i(alab_vf n) {
    __m256i i = _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(i, 23));
}
static inline alab_vf alab_vf__zero_below(alab_vf v, alab_vf x, alab_vf lo) {
    return _mm256_andnot_ps(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), v);
}

/* -------------------------------------------------------------------- SSE2 */
#elif defined(ALAB_SIMD_SSE2)
#include <emmintrin.h>
#define ALAB_SIMD_WIDTH 4
#define ALAB_SIMD_NAME "sse2"
#define ALAB_MM_NV 2
typedef __m128 alab_vf;

static inline alab_vf alab_vf_load(const float *p) { return _mm_loadu_ps(p); }
static inline void alab_vf_store(float *p, alab_vf v) { _mm_storeu_ps(p, v); }
static inline alab_vf alab_vf_set1(float x) { return _mm_set1_ps(x); }
static inline alab_vf alab_vf_load1(const float *p) { return _mm_load1_ps(p); }
static inline alab_vf alab_vf_zero(void) { return _mm_setzero_ps(); }
static inline alab_vf alab_vf_add(alab_vf a, alab_vf b) { return _mm_add_ps(a, b); }
static inline alab_vf alab_vf_sub(alab_vf a, alab_vf b) { return _mm_sub_ps(a, b); }
static inline alab_vf alab_vf_mul(alab_vf a, alab_vf b) { return _mm_mul_ps(a, b); }
static inline alab_vf alab_vf_div(alab_vf a, alab_vf b) { return _mm_div_ps(a, b); }
static inline alab_vf alab_vf_min(alab_vf a, alab_vf b) { return _mm_min_ps(a, b); }
static inline alab_vf alab_vf_max(alab_vf a, alab_vf b) { return _mm_max_ps(a, b); }
static inline alab_vf alab_vf_fma(alab_vf a, alab_vf b, alab_vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
static inline float alab_vf_reduce_sum(alab_vf v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 0x55));
    return _mm_cvtss_f32(v);
}
static inline float alab_vf_reduce_max(alab_vf v) {
    v = _mm_max_ps(v, _mm_movehl_ps(v, v));
    v = _mm_max_ss(v, _mm_shuffle_ps(v, v, 0x55));
    return _mm_cvtss_f32(v);
}
/* cvtps_epi32 rounds to nearest-even under the default MXCSR; |x| <= 128 here. */
static inline alab_vf alab_vf__round(alab_vf x) { return _mm_cvtepi32_ps(_mm_cvtps_epi32(x)); }
static inline alab_vf alab_vf__pow2i(alab_vf n) {
    __m128i i = _mm_add_epi32(_mm_cvttps_epi32(n), _mm_set1_epi32(127));
    return _mm_castsi128_ps(_mm_slli_epi32(i, 23));
}
static inline alab_vf alab_vf__zero_below(alab_vf v, alab_vf x, alab_vf lo) {
    return _mm_andnot_ps(_mm_cmplt_ps(x, lo), v);
}

/* ------------------------------------------------------------------ scalar */
#else
#include <math.h>
#define ALAB_SIMD_WIDTH 1
#define ALAB_SIMD_NAME "scalar"
#define ALAB_MM_NV 4
typedef float alab_vf;

static inline alab_vf alab_vf_load(const float *p) { return *p; }
static inline void alab_vf_store(float *p, alab_vf v) { *p = v; }
static inline alab_vf alab_vf_set1(float x) { return x; }
static inline alab_vf alab_vf_load1(const float *p) { return *p; }
static inline alab_vf alab_vf_zero(void) { return 0.0f; }
static inline alab_vf alab_vf_add(alab_vf a, alab_vf b) { return a + b; }
static inline alab_vf alab_vf_sub(alab_vf a, alab_vf b) { return a - b; }
static inline alab_vf alab_vf_mul(alab_vf a, alab_vf b) { return a * b; }
static inline alab_vf alab_vf_div(alab_vf a, alab_vf b) { return a / b; }
static inline alab_vf alab_vf_min(alab_vf a, alab_vf b) { return a < b ? a : b; }
static inline alab_vf alab_vf_max(alab_vf a, alab_vf b) { return a > b ? a : b; }
static inline alab_vf alab_vf_fma(alab_vf a, alab_vf b, alab_vf c) { return a * b + c; }
static inline float alab_vf_reduce_sum(alab_vf v) { return v; }
static inline float alab_vf_reduce_max(alab_vf v) { return v; }
/* Callers (alab_vf_exp) have replaced NaN before these run: (int)NaN is undefined. */
static inline alab_vf alab_vf__round(alab_vf x) { return floorf(x + 0.5f); }
static inline alab_vf alab_vf__pow2i(alab_vf n) {
    uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
static inline alab_vf alab_vf__zero_below(alab_vf v, alab_vf x, alab_vf lo) { return x < lo ? 0.0f : v; }
#endif

#ifndef ALAB_MM_KC
#define ALAB_MM_KC 256
#endif

/* --------------------------------------------------- exp, written once */
static inline alab_vf alab_vf_exp(alab_vf x) {
    const alab_vf lo = alab_vf_set1(ALAB_EXP_LO);
#if defined(ALAB_SIMD_SCALAR)
    if (x != x) return x; /* NaN: keep it, and keep (int)NaN out of __pow2i */
#endif
    /* constants first, so a NaN x (second operand) passes through min/max */
    alab_vf xc = alab_vf_min(alab_vf_set1(ALAB_EXP_HI), alab_vf_max(lo, x));
    alab_vf n = alab_vf__round(alab_vf_mul(xc, alab_vf_set1(ALAB_EXP_LOG2E)));
    alab_vf r = alab_vf_fma(n, alab_vf_set1(-ALAB_EXP_LN2_HI), xc);
    r = alab_vf_fma(n, alab_vf_set1(-ALAB_EXP_LN2_LO), r);
    alab_vf p = alab_vf_set1(ALAB_EXP_P0);
    p = alab_vf_fma(p, r, alab_vf_set1(ALAB_EXP_P1));
    p = alab_vf_fma(p, r, alab_vf_set1(ALAB_EXP_P2));
    p = alab_vf_fma(p, r, alab_vf_set1(ALAB_EXP_P3));
    p = alab_vf_fma(p, r, alab_vf_set1(ALAB_EXP_P4));
    p = alab_vf_fma(p, r, alab_vf_set1(ALAB_EXP_P5));
    p = alab_vf_fma(p, alab_vf_mul(r, r), alab_vf_add(r, alab_vf_set1(1.0f)));
    return alab_vf__zero_below(alab_vf_mul(p, alab_vf__pow2i(n)), x, lo);
}

/* --------------------------------------------------- spin-wait hint */
#if defined(ALAB_SIMD_AVX2) || defined(ALAB_SIMD_SSE2)
static inline void alab_cpu_relax(void) { _mm_pause(); }
#else
static inline void alab_cpu_relax(void) {}
#endif

#endif
