/*
 * linattn.c — the third step of the chapter's lineage: attention without
 * softmax, where associativity turns the O(T^2) matrix into prefix sums.
 *
 *   softmax attention   the O(T^2 d) reference, causal or not, and its
 *                       single-query form (= one modern Hopfield update)
 *   feature maps        elu(x)+1, relu, positive random features (FAVOR+)
 *   linear attention    three forms of the same numbers:
 *                         ASSOC      phi(Q) (phi(K)^T V); causal: prefix sums S_t, z_t
 *                         RNN        one running state (S, z), updated per token
 *                         QUADRATIC  the T x T matrix phi(Q) phi(K)^T, masked, normalised
 *   sqrt(d_k)           the statistics of q.k for random q, k, and the
 *                       softmax entropy as d_k grows
 *
 * Letters: T tokens, d query/key size, dv value size, m feature size.
 * Q, K (T,d), V (T,dv), out (T,dv), row-major. Scratch is allocated once
 * per call, never inside a loop.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "internal.h"
#include "ops.h"

/* ------------------------------------------------------------------------ */
/* Argument checks                                                            */
/* ------------------------------------------------------------------------ */

static int check_sizes(const char *who, int T, int d, int dv) {
    if (T < 1 || d < 1 || dv < 1)
        return alab_fail(ALAB_EINVAL, "%s: T = %d, d = %d, dv = %d must be >= 1", who, T, d, dv);
    if (T > ALAB_LINATTN_MAX_T || d > ALAB_LINATTN_MAX_DIM || dv > ALAB_LINATTN_MAX_DIM)
        return alab_fail(ALAB_ELIMIT, "%s: T = %d, d = %d, dv = %d exceed the limits (%d, %d)", who, T,
                         d, dv, ALAB_LINATTN_MAX_T, ALAB_LINATTN_MAX_DIM);
    return ALAB_OK;
}

static int check_finite(const char *who, const char *name, const float *x, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (!isfinite(x[k])) return alab_fail(ALAB_ENAN, "%s: %s[%zu] is not finite", who, name, k);
    return ALAB_OK;
}

static int check_qkv(const char *who, const float *Q, const float *K, const float *V, int T, int d, int dv) {
    int rc;
    if (!Q || !K || !V) return alab_fail(ALAB_EINVAL, "%s: NULL input", who);
    if ((rc = check_sizes(who, T, d, dv)) != ALAB_OK) return rc;
    if ((rc = check_finite(who, "Q", Q, (size_t)T * d)) != ALAB_OK) return rc;
    if ((rc = check_finite(who, "K", K, (size_t)T * d)) != ALAB_OK) return rc;
    return check_finite(who, "V", V, (size_t)T * dv);
}

/* ------------------------------------------------------------------------ */
/* Softmax attention                                                          */
/* ------------------------------------------------------------------------ */

/* out (dv) = sum_j p_j v_j with p = softmax(scale K[0..n) q); p (n) scratch/output */
static void attend_one(float *out, float *p, const float *q, const float *K, const float *V,
                       int n, int d, int dv, float scale) {
    for (int j = 0; j < n; j++) p[j] = scale * dot_f32(q, K + (size_t)j * d, d);
    softmax_forward(p, p, n);
    memset(out, 0, (size_t)dv * sizeof(float));
    for (int j = 0; j < n; j++) axpy_f32(out, p[j], V + (size_t)j * dv, dv);
}

int alab_softmax_attention(float *out, const float *Q, const float *K, const float *V,
                           int T, int d, int dv, float scale, int causal) {
    int rc = check_qkv("softmax_attention", Q, K, V, T, d, dv);
    if (rc != ALAB_OK) return rc;
    if (!out) return alab_fail(ALAB_EINVAL, "softmax_attention: NULL output");
    if (!isfinite(scale)) return alab_fail(ALAB_ENAN, "softmax_attention: scale is not finite");
    float *p = malloc((size_t)T * sizeof(float));
    if (!p) return alab_fail(ALAB_ENOMEM, "softmax_attention: no memory for T = %d", T);
    for (int i = 0; i < T; i++) /* row i sees keys 0..i (causal) or all of them */
        attend_one(out + (size_t)i * dv, p, Q + (size_t)i * d, K, V, causal ? i + 1 : T, d, dv, scale);
    free(p);
    return ALAB_OK;
}

int alab_attention_single(float *out, float *p, const float *q, const float *K,
                          const float *V, int T, int d, int dv, float scale) {
    int rc;
    if (!out || !p || !q || !K || !V) return alab_fail(ALAB_EINVAL, "attention_single: NULL argument");
    if ((rc = check_sizes("attention_single", T, d, dv)) != ALAB_OK) return rc;
    if ((rc = check_finite("attention_single", "q", q, (size_t)d)) != ALAB_OK) return rc;
    if ((rc = check_finite("attention_single", "K", K, (size_t)T * d)) != ALAB_OK) return rc;
    if ((rc = check_finite("attention_single", "V", V, (size_t)T * dv)) != ALAB_OK) return rc;
    if (!isfinite(scale)) return alab_fail(ALAB_ENAN, "attention_single: scale is not finite");
    attend_one(out, p, q, K, V, T, d, dv, scale);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Feature maps                                                               */
/* ------------------------------------------------------------------------ */

int alab_favor_weights(float *W, int m, int d, uint64_t *rng) {
    if (!W || !rng) return alab_fail(ALAB_EINVAL, "favor_weights: NULL argument");
    if (m < 1 || d < 1) return alab_fail(ALAB_EINVAL, "favor_weights: m = %d and d = %d must be >= 1", m, d);
    if (m > 16 * ALAB_LINATTN_MAX_DIM || d > ALAB_LINATTN_MAX_DIM)
        return alab_fail(ALAB_ELIMIT, "favor_weights: m = %d or d = %d too large", m, d);
    for (size_t k = 0; k < (size_t)m * d; k++) W[k] = (float)alab_rng_normal(rng);
    return ALAB_OK;
}

int alab_feature_dim(int kind, int d, int m) {
    if (d < 1) return alab_fail(ALAB_EINVAL, "feature map: d = %d must be >= 1", d);
    switch (kind) {
    case ALAB_FEATURE_ELU1:
    case ALAB_FEATURE_RELU: return d;
    case ALAB_FEATURE_FAVOR:
        if (m < 1) return alab_fail(ALAB_EINVAL, "feature map: FAVOR+ needs m >= 1 random features, got %d", m);
        if (m > 16 * ALAB_LINATTN_MAX_DIM) return alab_fail(ALAB_ELIMIT, "feature map: m = %d too large", m);
        return m;
    default: return alab_fail(ALAB_EINVAL, "feature map: unknown kind %d", kind);
    }
}

/* phi of one row x (d) into out (feature dim) */
static void phi_row(float *out, const float *x, int d, int kind, const float *W, int m) {
    if (kind == ALAB_FEATURE_ELU1) {
        for (int k = 0; k < d; k++) out[k] = x[k] > 0.0f ? x[k] + 1.0f : expf(x[k]);
    } else if (kind == ALAB_FEATURE_RELU) {
        for (int k = 0; k < d; k++) out[k] = x[k] > 0.0f ? x[k] : 0.0f;
    } else { /* FAVOR+: x' = x d^-1/4, phi_r = exp(w_r.x' - |x'|^2 / 2) / sqrt(m) */
        const float c = 1.0f / sqrtf(sqrtf((float)d));
        float n2 = c * c * dot_f32(x, x, d);
        float inv = 1.0f / sqrtf((float)m);
        for (int r = 0; r < m; r++) out[r] = expf(c * dot_f32(W + (size_t)r * d, x, d) - 0.5f * n2) * inv;
    }
}

int alab_feature_map(float *out, const float *x, int T, int d, int kind, const float *W, int m) {
    int rc;
    if (!out || !x) return alab_fail(ALAB_EINVAL, "feature_map: NULL argument");
    if ((rc = check_sizes("feature_map", T, d, 1)) != ALAB_OK) return rc;
    int M = alab_feature_dim(kind, d, m);
    if (M < 0) return M;
    if (kind == ALAB_FEATURE_FAVOR && !W) return alab_fail(ALAB_EINVAL, "feature_map: FAVOR+ needs W (m,d)");
    if ((rc = check_finite("feature_map", "x", x, (size_t)T * d)) != ALAB_OK) return rc;
    for (int t = 0; t < T; t++) phi_row(out + (size_t)t * M, x + (size_t)t * d, d, kind, W, m);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Linear attention                                                           */
/* ------------------------------------------------------------------------ */

/* out (dv) = phi_q^T S / (phi_q.z + eps), S (m,dv), z (m) */
static void readout(float *out, const float *phi_q, const float *S, const float *z, int m, int dv) {
    memset(out, 0, (size_t)dv * sizeof(float));
    for (int r = 0; r < m; r++) axpy_f32(out, phi_q[r], S + (size_t)r * dv, dv);
    float inv = 1.0f / (dot_f32(phi_q, z, m) + ALAB_LINATTN_EPS);
    for (int c = 0; c < dv; c++) out[c] *= inv;
}

/* S (m,dv) += phi_k v^T, z (m) += phi_k */
static void accumulate(float *S, float *z, const float *phi_k, const float *v, int m, int dv) {
    for (int r = 0; r < m; r++) axpy_f32(S + (size_t)r * dv, phi_k[r], v, dv);
    axpy_f32(z, 1.0f, phi_k, m);
}

void alab_linattn_cell(float *out, float *S, float *z, const float *phi_q, const float *phi_k,
                       const float *v, int m, int dv) {
    accumulate(S, z, phi_k, v, m, dv);
    readout(out, phi_q, S, z, m, dv);
}

int alab_linear_attention(float *out, const float *Q, const float *K, const float *V,
                          int T, int d, int dv, int kind, const float *W, int m,
                          int causal, int form) {
    int rc = check_qkv("linear_attention", Q, K, V, T, d, dv);
    if (rc != ALAB_OK) return rc;
    if (!out) return alab_fail(ALAB_EINVAL, "linear_attention: NULL output");
    int M = alab_feature_dim(kind, d, m);
    if (M < 0) return M;
    if (kind == ALAB_FEATURE_FAVOR) {
        if (!W) return alab_fail(ALAB_EINVAL, "linear_attention: FAVOR+ needs W (m,d)");
        if ((rc = check_finite("linear_attention", "W", W, (size_t)m * d)) != ALAB_OK) return rc;
    }
    if (form != ALAB_LIN_ASSOC && form != ALAB_LIN_RNN && form != ALAB_LIN_QUADRATIC)
        return alab_fail(ALAB_EINVAL, "linear_attention: unknown form %d", form);
    if (form == ALAB_LIN_RNN && !causal)
        return alab_fail(ALAB_EINVAL, "linear_attention: the recurrent form is causal only");
    causal = causal != 0;

    /* scratch: phi(Q) (T,M), phi(K) (T,M), then per form:
     *   ASSOC non-causal / RNN: S (M,dv), z (M)
     *   ASSOC causal: all prefix states S_t (T,M,dv), z_t (T,M)
     *   QUADRATIC: one row of A (T) */
    size_t phis = 2 * (size_t)T * M, extra;
    if (form == ALAB_LIN_QUADRATIC) extra = (size_t)T;
    else if (form == ALAB_LIN_ASSOC && causal) {
        extra = (size_t)T * M * (dv + 1);
        if (extra > ((size_t)1 << 26))
            return alab_fail(ALAB_ELIMIT, "linear_attention: the prefix sums need T*m*(dv+1) = %zu floats "
                             "(> 2^26); use the recurrent form", extra);
    } else extra = (size_t)M * (dv + 1);
    float *buf = malloc((phis + extra) * sizeof(float));
    if (!buf) return alab_fail(ALAB_ENOMEM, "linear_attention: no memory (T = %d, m = %d, dv = %d)", T, M, dv);
    float *pq = buf, *pk = buf + (size_t)T * M, *x = buf + phis;
    for (int t = 0; t < T; t++) {
        phi_row(pq + (size_t)t * M, Q + (size_t)t * d, d, kind, W, m);
        phi_row(pk + (size_t)t * M, K + (size_t)t * d, d, kind, W, m);
    }

    if (form == ALAB_LIN_QUADRATIC) {
        /* A_ij = phi(q_i).phi(k_j) for j in mask(i); out_i = sum_j A_ij v_j / (sum_j A_ij + eps) */
        for (int i = 0; i < T; i++) {
            int n = causal ? i + 1 : T;
            float den = 0.0f;
            for (int j = 0; j < n; j++) {
                x[j] = dot_f32(pq + (size_t)i * M, pk + (size_t)j * M, M);
                den += x[j];
            }
            float *o = out + (size_t)i * dv;
            memset(o, 0, (size_t)dv * sizeof(float));
            for (int j = 0; j < n; j++) axpy_f32(o, x[j], V + (size_t)j * dv, dv);
            float inv = 1.0f / (den + ALAB_LINATTN_EPS);
            for (int c = 0; c < dv; c++) o[c] *= inv;
        }
    } else if (form == ALAB_LIN_ASSOC && causal) {
        /* prefix sums: S_t = S_{t-1} + phi(k_t) v_t^T, z_t = z_{t-1} + phi(k_t), every one kept */
        float *S = x, *Z = x + (size_t)T * M * dv;
        const size_t sz = (size_t)M * dv;
        memset(S, 0, sz * sizeof(float));
        memset(Z, 0, (size_t)M * sizeof(float));
        for (int t = 0; t < T; t++) {
            if (t > 0) {
                memcpy(S + t * sz, S + (t - 1) * sz, sz * sizeof(float));
                memcpy(Z + (size_t)t * M, Z + (size_t)(t - 1) * M, (size_t)M * sizeof(float));
            }
            accumulate(S + t * sz, Z + (size_t)t * M, pk + (size_t)t * M, V + (size_t)t * dv, M, dv);
        }
        for (int t = 0; t < T; t++)
            readout(out + (size_t)t * dv, pq + (size_t)t * M, S + t * sz, Z + (size_t)t * M, M, dv);
    } else {
        float *S = x, *z = x + (size_t)M * dv;
        memset(S, 0, (size_t)M * (dv + 1) * sizeof(float));
        if (form == ALAB_LIN_RNN) { /* the recurrence: one state, one token at a time */
            for (int t = 0; t < T; t++)
                alab_linattn_cell(out + (size_t)t * dv, S, z, pq + (size_t)t * M, pk + (size_t)t * M,
                                  V + (size_t)t * dv, M, dv);
        } else { /* non-causal: the global sums once, then every query reads them */
            for (int t = 0; t < T; t++) accumulate(S, z, pk + (size_t)t * M, V + (size_t)t * dv, M, dv);
            for (int t = 0; t < T; t++) readout(out + (size_t)t * dv, pq + (size_t)t * M, S, z, M, dv);
        }
    }
    free(buf);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* The sqrt(d_k) statistics                                                   */
/* ------------------------------------------------------------------------ */

static int check_stats(const char *who, int n, int dk, const uint64_t *rng) {
    if (!rng) return alab_fail(ALAB_EINVAL, "%s: NULL RNG state", who);
    if (n < 1 || dk < 1) return alab_fail(ALAB_EINVAL, "%s: n = %d and dk = %d must be >= 1", who, n, dk);
    if (n > (1 << 24) || dk > ALAB_LINATTN_MAX_DIM)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d or dk = %d exceeds the limits", who, n, dk);
    return ALAB_OK;
}

/* q.k of one fresh pair q, k ~ N(0, I) */
static double random_dot(int dk, uint64_t *rng) {
    double s = 0.0;
    for (int k = 0; k < dk; k++) s += alab_rng_normal(rng) * alab_rng_normal(rng);
    return s;
}

int alab_qk_samples(float *out, int n, int dk, uint64_t *rng) {
    int rc = check_stats("qk_samples", n, dk, rng);
    if (rc != ALAB_OK) return rc;
    if (!out) return alab_fail(ALAB_EINVAL, "qk_samples: NULL output");
    for (int i = 0; i < n; i++) out[i] = (float)random_dot(dk, rng);
    return ALAB_OK;
}

int alab_qk_stats(double *stats, int n, int dk, uint64_t *rng) {
    int rc = check_stats("qk_stats", n, dk, rng);
    if (rc != ALAB_OK) return rc;
    if (!stats) return alab_fail(ALAB_EINVAL, "qk_stats: NULL output");
    if (n < 2) return alab_fail(ALAB_EINVAL, "qk_stats: a variance needs n >= 2");
    /* Welford's running mean and variance */
    double mean = 0.0, m2 = 0.0;
    for (int i = 0; i < n; i++) {
        double x = random_dot(dk, rng), delta = x - mean;
        mean += delta / (i + 1);
        m2 += delta * (x - mean);
    }
    double var = m2 / (n - 1);
    stats[0] = mean;
    stats[1] = var;
    stats[2] = mean / sqrt((double)dk);
    stats[3] = var / dk;
    return ALAB_OK;
}

int alab_softmax_entropy_mean(double *H, int T, int dk, int n_queries, int scaled, uint64_t *rng) {
    int rc = check_stats("softmax_entropy_mean", n_queries, dk, rng);
    if (rc != ALAB_OK) return rc;
    if (!H) return alab_fail(ALAB_EINVAL, "softmax_entropy_mean: NULL output");
    if (T < 1 || T > ALAB_LINATTN_MAX_T) return alab_fail(ALAB_EINVAL, "softmax_entropy_mean: T = %d is not in 1..%d", T, ALAB_LINATTN_MAX_T);
    if ((int64_t)T * n_queries > (1 << 24)) return alab_fail(ALAB_ELIMIT, "softmax_entropy_mean: T * n_queries too large");
    float *buf = malloc(((size_t)T + (size_t)dk * (T + 1)) * sizeof(float));
    if (!buf) return alab_fail(ALAB_ENOMEM, "softmax_entropy_mean: no memory");
    float *p = buf, *q = buf + T, *K = q + dk;
    const float scale = scaled ? 1.0f / sqrtf((float)dk) : 1.0f;
    double total = 0.0;
    for (int n = 0; n < n_queries; n++) {
        for (int k = 0; k < dk; k++) q[k] = (float)alab_rng_normal(rng);
        for (size_t k = 0; k < (size_t)T * dk; k++) K[k] = (float)alab_rng_normal(rng);
        for (int j = 0; j < T; j++) p[j] = scale * dot_f32(q, K + (size_t)j * dk, dk);
        softmax_forward(p, p, T);
        double h = 0.0;
        for (int j = 0; j < T; j++)
            if (p[j] > 0.0f) h -= (double)p[j] * log((double)p[j]);
        total += h;
    }
    free(buf);
    *H = total / n_queries;
    return ALAB_OK;
}
