/*
 * hopfield.c — the first two steps of the chapter's lineage.
 *
 *   random numbers   xorshift64* with the state passed in (also used by linattn.c)
 *   glyphs           10x10 digits, the patterns a reader recognises
 *   classical        Hopfield 1982: +-1 units, Hebbian W, sign updates, energy,
 *                    corruption, the capacity experiment (alpha_c ~ 0.138)
 *   modern           Ramsauer et al. 2020: continuous patterns, the lse energy,
 *                    xi <- X^T softmax(beta X xi) — one step of attention
 *
 * Letters: N units (classical) or stored patterns (modern), P patterns,
 * d pattern size. Everything is row-major float32; sums run in double where
 * the result is compared across forms. No allocation inside loops: a
 * function that needs scratch space allocates it once on entry.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "internal.h"
#include "ops.h"

/* ------------------------------------------------------------------------ */
/* Random numbers                                                             */
/* ------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    if (*s == 0) *s = 0x9E3779B97F4A7C15ULL; /* xorshift must not start at 0 */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

uint32_t alab_rng_u32(uint64_t *state) { return (uint32_t)(rng_next(state) >> 32); }

double alab_rng_uniform(uint64_t *state) {
    return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

double alab_rng_normal(uint64_t *state) {
    /* Box-Muller; 1 - u is in (0, 1], so the log is finite */
    double u1 = 1.0 - alab_rng_uniform(state);
    double u2 = alab_rng_uniform(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* uniform integer in [0, n) (n >= 1), without modulo bias worth mentioning
 * at these sizes (n <= 2^20): 32 random bits times n, top bits. */
static int rng_below(uint64_t *rng, int n) {
    return (int)(((uint64_t)alab_rng_u32(rng) * (uint64_t)n) >> 32);
}

/* ------------------------------------------------------------------------ */
/* Glyphs                                                                     */
/* ------------------------------------------------------------------------ */

static const char *const GLYPHS[ALAB_N_GLYPHS][ALAB_GLYPH_SIDE] = {
    {"..######..", ".##....##.", ".##...###.", ".##..#.##.", ".##.#..##.",
     ".###...##.", ".##....##.", ".##....##.", "..######..", ".........."},
    {"....##....", "...###....", "..####....", "....##....", "....##....",
     "....##....", "....##....", "....##....", "..######..", ".........."},
    {"..######..", ".##....##.", ".......##.", "......##..", "....##....",
     "...##.....", "..##......", ".##.......", ".########.", ".........."},
    {".#######..", ".......##.", ".......##.", "...#####..", ".......##.",
     ".......##.", ".......##.", ".##....##.", "..######..", ".........."},
    {"......##..", ".....###..", "....####..", "...##.##..", "..##..##..",
     ".##...##..", ".########.", "......##..", "......##..", ".........."},
    {".########.", ".##.......", ".##.......", ".#######..", ".......##.",
     ".......##.", ".......##.", ".##....##.", "..######..", ".........."},
    {"...#####..", "..##......", ".##.......", ".#######..", ".##....##.",
     ".##....##.", ".##....##.", ".##....##.", "..######..", ".........."},
    {".########.", ".......##.", "......##..", ".....##...", "....##....",
     "....##....", "...##.....", "...##.....", "...##.....", ".........."},
    {"..######..", ".##....##.", ".##....##.", "..######..", ".##....##.",
     ".##....##.", ".##....##.", ".##....##.", "..######..", ".........."},
    {"..######..", ".##....##.", ".##....##.", ".##....##.", "..#######.",
     ".......##.", ".......##.", "......##..", "..#####...", ".........."},
};

int alab_glyph(float *out, int g) {
    if (!out) return alab_fail(ALAB_EINVAL, "glyph: NULL output");
    if (g < 0 || g >= ALAB_N_GLYPHS) return alab_fail(ALAB_ERANGE, "glyph: %d is not in 0..9", g);
    for (int r = 0; r < ALAB_GLYPH_SIDE; r++)
        for (int c = 0; c < ALAB_GLYPH_SIDE; c++)
            out[r * ALAB_GLYPH_SIDE + c] = GLYPHS[g][r][c] == '#' ? 1.0f : -1.0f;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Classical Hopfield                                                         */
/* ------------------------------------------------------------------------ */

static int check_n(const char *who, int N) {
    if (N < 1) return alab_fail(ALAB_EINVAL, "%s: N = %d must be >= 1", who, N);
    if (N > ALAB_HOPFIELD_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: N = %d exceeds the limit of %d", who, N, ALAB_HOPFIELD_MAX_N);
    return ALAB_OK;
}

static int check_pm1(const char *who, const float *s, int N) {
    for (int i = 0; i < N; i++)
        if (s[i] != 1.0f && s[i] != -1.0f)
            return alab_fail(isfinite(s[i]) ? ALAB_EINVAL : ALAB_ENAN,
                             "%s: unit %d is %g, not +1 or -1", who, i, (double)s[i]);
    return ALAB_OK;
}

int alab_hopfield_hebbian(float *W, const float *patterns, int P, int N) {
    int rc;
    if (!W || !patterns) return alab_fail(ALAB_EINVAL, "hebbian: NULL argument");
    if ((rc = check_n("hebbian", N)) != ALAB_OK) return rc;
    if (P < 1) return alab_fail(ALAB_EINVAL, "hebbian: P = %d must be >= 1", P);
    if ((int64_t)P * N > (1 << 26)) return alab_fail(ALAB_ELIMIT, "hebbian: P*N = %lld too large", (long long)P * N);
    if ((rc = check_pm1("hebbian", patterns, P * N)) != ALAB_OK) return rc;
    /* W (N,N): sum of outer products, then / N; products of +-1 are exact */
    memset(W, 0, (size_t)N * N * sizeof(float));
    for (int mu = 0; mu < P; mu++) {
        const float *p = patterns + (size_t)mu * N;
        for (int i = 0; i < N; i++) axpy_f32(W + (size_t)i * N, p[i], p, N);
    }
    const float inv = 1.0f / (float)N;
    for (size_t k = 0; k < (size_t)N * N; k++) W[k] *= inv;
    for (int i = 0; i < N; i++) W[(size_t)i * N + i] = 0.0f;
    return ALAB_OK;
}

/* sum_j W_ij s_j in double: the field of unit i (the sign test must not
 * depend on float rounding order) */
static double field(const float *W, const float *s, int N, int i) {
    const float *w = W + (size_t)i * N;
    double h = 0.0;
    for (int j = 0; j < N; j++) h += (double)w[j] * s[j];
    return h;
}

int alab_hopfield_energy(double *E, const float *W, const float *s, int N) {
    int rc;
    if (!E || !W || !s) return alab_fail(ALAB_EINVAL, "energy: NULL argument");
    if ((rc = check_n("energy", N)) != ALAB_OK) return rc;
    double e = 0.0;
    for (int i = 0; i < N; i++) e += (double)s[i] * field(W, s, N, i);
    if (!isfinite(e)) return alab_fail(ALAB_ENAN, "energy: not finite (NaN in W or s?)");
    *E = -0.5 * e;
    return ALAB_OK;
}

double alab_hopfield_overlap(const float *a, const float *b, int N) {
    if (!a || !b || N < 1) return 0.0;
    double m = 0.0;
    for (int i = 0; i < N; i++) m += (double)a[i] * b[i];
    return m / N;
}

/* unit i from the current s; 1 if it flipped */
static int update_unit(float *s, const float *W, int N, int i) {
    double h = field(W, s, N, i);
    float v = h > 0.0 ? 1.0f : h < 0.0 ? -1.0f : s[i];
    int flipped = v != s[i];
    s[i] = v;
    return flipped;
}

int alab_hopfield_update_unit(float *s, const float *W, int N, int i) {
    int rc;
    if (!s || !W) return alab_fail(ALAB_EINVAL, "update_unit: NULL argument");
    if ((rc = check_n("update_unit", N)) != ALAB_OK) return rc;
    if (i < 0 || i >= N) return alab_fail(ALAB_ERANGE, "update_unit: unit %d is not in 0..%d", i, N - 1);
    return update_unit(s, W, N, i);
}

/* One step with caller-provided scratch: tmp (N) floats, order (N) ints. */
static int step_with(float *s, const float *W, int N, int mode, uint64_t *rng,
                     float *tmp, int *order) {
    int flipped = 0;
    if (mode == ALAB_HOPFIELD_SYNC) {
        for (int i = 0; i < N; i++) {
            double h = field(W, s, N, i);
            tmp[i] = h > 0.0 ? 1.0f : h < 0.0 ? -1.0f : s[i];
        }
        for (int i = 0; i < N; i++) {
            flipped += tmp[i] != s[i];
            s[i] = tmp[i];
        }
    } else if (mode == ALAB_HOPFIELD_ASYNC_SEQ) {
        for (int i = 0; i < N; i++) flipped += update_unit(s, W, N, i);
    } else { /* ASYNC_RANDOM: a fresh random permutation each sweep (Fisher-Yates) */
        for (int i = 0; i < N; i++) order[i] = i;
        for (int i = N - 1; i > 0; i--) {
            int j = rng_below(rng, i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < N; k++) flipped += update_unit(s, W, N, order[k]);
    }
    return flipped;
}

static int check_step_args(const char *who, const float *s, const float *W, int N, int mode,
                           const uint64_t *rng) {
    int rc;
    if (!s || !W) return alab_fail(ALAB_EINVAL, "%s: NULL argument", who);
    if ((rc = check_n(who, N)) != ALAB_OK) return rc;
    if (mode != ALAB_HOPFIELD_SYNC && mode != ALAB_HOPFIELD_ASYNC_RANDOM && mode != ALAB_HOPFIELD_ASYNC_SEQ)
        return alab_fail(ALAB_EINVAL, "%s: unknown update mode %d", who, mode);
    if (mode == ALAB_HOPFIELD_ASYNC_RANDOM && !rng)
        return alab_fail(ALAB_EINVAL, "%s: random asynchronous updates need an RNG state", who);
    return check_pm1(who, s, N);
}

int alab_hopfield_step(float *s, int *n_flipped, const float *W, int N, int mode, uint64_t *rng) {
    int rc = check_step_args("step", s, W, N, mode, rng);
    if (rc != ALAB_OK) return rc;
    float *tmp = malloc((size_t)N * (sizeof(float) + sizeof(int)));
    if (!tmp) return alab_fail(ALAB_ENOMEM, "step: no memory for N = %d", N);
    int f = step_with(s, W, N, mode, rng, tmp, (int *)(tmp + N));
    free(tmp);
    if (n_flipped) *n_flipped = f;
    return ALAB_OK;
}

int alab_hopfield_run(float *s, double *energies, int *n_steps, int *converged,
                      const float *W, int N, int mode, int max_steps, uint64_t *rng) {
    int rc = check_step_args("run", s, W, N, mode, rng);
    if (rc != ALAB_OK) return rc;
    if (!n_steps || !converged) return alab_fail(ALAB_EINVAL, "run: NULL n_steps or converged");
    if (max_steps < 0 || max_steps > 100000)
        return alab_fail(ALAB_EINVAL, "run: max_steps = %d is not in 0..100000", max_steps);
    float *tmp = malloc((size_t)N * (sizeof(float) + sizeof(int)));
    if (!tmp) return alab_fail(ALAB_ENOMEM, "run: no memory for N = %d", N);
    if (energies && (rc = alab_hopfield_energy(&energies[0], W, s, N)) != ALAB_OK) {
        free(tmp);
        return rc;
    }
    int k = 0, done = 0;
    while (k < max_steps && !done) {
        int f = step_with(s, W, N, mode, rng, tmp, (int *)(tmp + N));
        k++;
        if (energies) alab_hopfield_energy(&energies[k], W, s, N);
        done = f == 0;
    }
    free(tmp);
    *n_steps = k;
    *converged = done;
    return ALAB_OK;
}

int alab_hopfield_corrupt(float *out, const float *pattern, int N, float frac, uint64_t *rng) {
    int rc;
    if (!out || !pattern || !rng) return alab_fail(ALAB_EINVAL, "corrupt: NULL argument");
    if ((rc = check_n("corrupt", N)) != ALAB_OK) return rc;
    if (!isfinite(frac)) return alab_fail(ALAB_ENAN, "corrupt: fraction is not finite");
    if (frac < 0.0f || frac > 1.0f) return alab_fail(ALAB_ERANGE, "corrupt: fraction %g is not in [0, 1]", (double)frac);
    /* exactly k distinct units, by selection sampling (Knuth's Algorithm S):
     * unit i is chosen with probability (still needed) / (still left) */
    int k = (int)lrint((double)frac * N);
    for (int i = 0; i < N; i++) {
        int flip = rng_below(rng, N - i) < k;
        out[i] = flip ? -pattern[i] : pattern[i];
        k -= flip;
    }
    return ALAB_OK;
}

int alab_hopfield_capacity(float *success, float *overlap, const float *loads, int n_loads,
                           int N, float noise, float threshold, int trials, uint64_t *rng) {
    int rc;
    if (!success || !loads || !rng) return alab_fail(ALAB_EINVAL, "capacity: NULL argument");
    if ((rc = check_n("capacity", N)) != ALAB_OK) return rc;
    if (n_loads < 1 || n_loads > 1000) return alab_fail(ALAB_EINVAL, "capacity: n_loads = %d is not in 1..1000", n_loads);
    if (trials < 1 || trials > 10000) return alab_fail(ALAB_EINVAL, "capacity: trials = %d is not in 1..10000", trials);
    if (!isfinite(noise) || !isfinite(threshold)) return alab_fail(ALAB_ENAN, "capacity: noise or threshold is not finite");
    if (noise < 0.0f || noise > 0.5f) return alab_fail(ALAB_ERANGE, "capacity: noise %g is not in [0, 0.5]", (double)noise);
    if (threshold < -1.0f || threshold > 1.0f) return alab_fail(ALAB_ERANGE, "capacity: threshold %g is not in [-1, 1]", (double)threshold);
    int maxP = 1;
    for (int l = 0; l < n_loads; l++) {
        if (!isfinite(loads[l])) return alab_fail(ALAB_ENAN, "capacity: load %d is not finite", l);
        if (loads[l] < 0.0f || loads[l] > 2.0f) return alab_fail(ALAB_ERANGE, "capacity: load %g is not in [0, 2]", (double)loads[l]);
        int P = (int)lrint((double)loads[l] * N);
        if (P > maxP) maxP = P;
    }
    /* one allocation: W (N,N), patterns (maxP,N), state (N), scratch (N) + order (N) */
    size_t nf = (size_t)N * N + (size_t)maxP * N + 2 * (size_t)N;
    float *buf = malloc(nf * sizeof(float) + (size_t)N * sizeof(int));
    if (!buf) return alab_fail(ALAB_ENOMEM, "capacity: no memory for N = %d, P = %d", N, maxP);
    float *W = buf, *pats = W + (size_t)N * N, *s = pats + (size_t)maxP * N, *tmp = s + N;
    int *order = (int *)(tmp + N);
    const double thr = (double)threshold - 1e-9; /* 1 means: every unit right */

    for (int l = 0; l < n_loads; l++) {
        int P = (int)lrint((double)loads[l] * N);
        if (P < 1) P = 1;
        long ok = 0, total = 0;
        double msum = 0.0;
        for (int t = 0; t < trials; t++) {
            for (size_t k = 0; k < (size_t)P * N; k++) pats[k] = (alab_rng_u32(rng) >> 31) ? 1.0f : -1.0f;
            alab_hopfield_hebbian(W, pats, P, N);
            for (int mu = 0; mu < P; mu++) {
                const float *p = pats + (size_t)mu * N;
                alab_hopfield_corrupt(s, p, N, noise, rng);
                for (int sweep = 0; sweep < 50; sweep++)
                    if (step_with(s, W, N, ALAB_HOPFIELD_ASYNC_RANDOM, rng, tmp, order) == 0) break;
                double m = alab_hopfield_overlap(s, p, N);
                msum += m;
                ok += m >= thr;
                total++;
            }
        }
        success[l] = (float)((double)ok / (double)total);
        if (overlap) overlap[l] = (float)(msum / (double)total);
    }
    free(buf);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Modern Hopfield                                                            */
/* ------------------------------------------------------------------------ */

static int check_modern(const char *who, const float *X, const float *xi, int N, int d, float beta) {
    if (!X || !xi) return alab_fail(ALAB_EINVAL, "%s: NULL argument", who);
    if (N < 1 || d < 1) return alab_fail(ALAB_EINVAL, "%s: N = %d and d = %d must be >= 1", who, N, d);
    if (N > ALAB_LINATTN_MAX_T || d > ALAB_LINATTN_MAX_DIM)
        return alab_fail(ALAB_ELIMIT, "%s: N = %d or d = %d exceeds the limits (%d, %d)", who, N, d,
                         ALAB_LINATTN_MAX_T, ALAB_LINATTN_MAX_DIM);
    if (!isfinite(beta)) return alab_fail(ALAB_ENAN, "%s: beta is not finite", who);
    if (beta <= 0.0f) return alab_fail(ALAB_ERANGE, "%s: beta = %g must be > 0", who, (double)beta);
    for (size_t k = 0; k < (size_t)N * d; k++)
        if (!isfinite(X[k])) return alab_fail(ALAB_ENAN, "%s: X[%zu] is not finite", who, k);
    for (int k = 0; k < d; k++)
        if (!isfinite(xi[k])) return alab_fail(ALAB_ENAN, "%s: xi[%d] is not finite", who, k);
    return ALAB_OK;
}

/* out (d) = X^T p with p (N) = softmax(beta X xi); out may equal xi */
static void modern_step(float *out, float *p, const float *X, const float *xi, int N, int d, float beta) {
    for (int i = 0; i < N; i++) p[i] = beta * dot_f32(X + (size_t)i * d, xi, d);
    softmax_forward(p, p, N);
    /* out is written only after xi has been read */
    memset(out, 0, (size_t)d * sizeof(float));
    for (int i = 0; i < N; i++) axpy_f32(out, p[i], X + (size_t)i * d, d);
}

int alab_mhopfield_step(float *out, float *p, const float *X, const float *xi, int N, int d, float beta) {
    int rc = check_modern("mhopfield_step", X, xi, N, d, beta);
    if (rc != ALAB_OK) return rc;
    if (!out || !p) return alab_fail(ALAB_EINVAL, "mhopfield_step: NULL output");
    /* out may equal xi: every score is computed before out is written */
    modern_step(out, p, X, xi, N, d, beta);
    return ALAB_OK;
}

int alab_mhopfield_energy(double *E, const float *X, const float *xi, int N, int d, float beta) {
    int rc = check_modern("mhopfield_energy", X, xi, N, d, beta);
    if (rc != ALAB_OK) return rc;
    if (!E) return alab_fail(ALAB_EINVAL, "mhopfield_energy: NULL output");
    /* lse(beta, z) = max z + beta^-1 log sum exp(beta (z_i - max z)), in double */
    double zmax = -INFINITY, M2 = 0.0;
    for (int i = 0; i < N; i++) {
        double z = 0.0, n2 = 0.0;
        for (int k = 0; k < d; k++) {
            z += (double)X[(size_t)i * d + k] * xi[k];
            n2 += (double)X[(size_t)i * d + k] * X[(size_t)i * d + k];
        }
        if (z > zmax) zmax = z;
        if (n2 > M2) M2 = n2;
    }
    double sum = 0.0;
    for (int i = 0; i < N; i++) {
        double z = 0.0;
        for (int k = 0; k < d; k++) z += (double)X[(size_t)i * d + k] * xi[k];
        sum += exp((double)beta * (z - zmax));
    }
    double lse = zmax + log(sum) / beta;
    double xx = 0.0;
    for (int k = 0; k < d; k++) xx += (double)xi[k] * xi[k];
    *E = -lse + 0.5 * xx + log((double)N) / beta + 0.5 * M2;
    return ALAB_OK;
}

int alab_mhopfield_run(float *xi, double *energies, float *p, int *n_steps, int *converged,
                       const float *X, int N, int d, float beta, int max_steps, float tol) {
    int rc = check_modern("mhopfield_run", X, xi, N, d, beta);
    if (rc != ALAB_OK) return rc;
    if (!n_steps || !converged) return alab_fail(ALAB_EINVAL, "mhopfield_run: NULL n_steps or converged");
    if (max_steps < 0 || max_steps > 100000)
        return alab_fail(ALAB_EINVAL, "mhopfield_run: max_steps = %d is not in 0..100000", max_steps);
    if (!isfinite(tol) || tol < 0.0f) return alab_fail(ALAB_EINVAL, "mhopfield_run: tol must be finite and >= 0");
    float *buf = malloc(((size_t)N + (size_t)d) * sizeof(float));
    if (!buf) return alab_fail(ALAB_ENOMEM, "mhopfield_run: no memory");
    float *pp = buf, *next = buf + N;
    if (energies) alab_mhopfield_energy(&energies[0], X, xi, N, d, beta);
    int k = 0, done = 0;
    if (p) { /* the weights of the initial state, in case no step is taken */
        for (int i = 0; i < N; i++) pp[i] = beta * dot_f32(X + (size_t)i * d, xi, d);
        softmax_forward(pp, pp, N);
    }
    while (k < max_steps && !done) {
        modern_step(next, pp, X, xi, N, d, beta);
        float diff = 0.0f;
        for (int j = 0; j < d; j++) {
            float a = fabsf(next[j] - xi[j]);
            if (a > diff) diff = a;
        }
        memcpy(xi, next, (size_t)d * sizeof(float));
        k++;
        if (energies) alab_mhopfield_energy(&energies[k], X, xi, N, d, beta);
        done = diff <= tol;
    }
    if (p) memcpy(p, pp, (size_t)N * sizeof(float));
    free(buf);
    *n_steps = k;
    *converged = done;
    return ALAB_OK;
}
