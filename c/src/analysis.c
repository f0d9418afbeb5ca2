/* analysis.c — what the chapter reads off an attention matrix: the DAG score
 * and its null, the asymmetry A - A^T, the outer product q ⊗ k whose trace is
 * the score, entropy, and the chapter's display-level do on a drawn matrix.
 * Pure functions on plain arrays; A is (T, T), row = query (effect). */
#include <math.h>
#include <string.h>

#include "internal.h"

double alab_dag_score(const float *A, int T) {
    double below = 0.0, total = 0.0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            total += A[(size_t)i * T + j];
            if (j < i) below += A[(size_t)i * T + j];
        }
    return total > 0.0 ? below / total : 0.0;
}

/* Uniform causal attention puts i/(i+1) of row i strictly below the diagonal. */
double alab_null_dag_score(int T) {
    if (T <= 0) return 0.0;
    double s = 0.0;
    for (int i = 0; i < T; i++) s += (double)i / (i + 1);
    return s / T;
}

/* The null of a mask: uniform attention over the keys the mask lets row i see.
 * Causal and window masks show row i the n_i keys ending at i itself (n_i =
 * i + 1, or min(i + 1, W)), all but one strictly below the diagonal, so the row
 * puts (n_i - 1)/n_i there; without a mask row i sees all T keys, i of them
 * below, and the mean over rows is (T - 1)/(2T). */
double alab_mask_null_dag_score(int mode, int window, int T) {
    if (mode != ALAB_MASK_CAUSAL && mode != ALAB_MASK_FULL && mode != ALAB_MASK_WINDOW) {
        alab_fail(ALAB_EINVAL, "alab_mask_null_dag_score: unknown mask mode %d", mode);
        return NAN;
    }
    if (mode == ALAB_MASK_WINDOW && window < 1) {
        alab_fail(ALAB_ERANGE, "alab_mask_null_dag_score: window must be at least 1 (got %d)", window);
        return NAN;
    }
    if (T <= 0) return 0.0;
    if (mode == ALAB_MASK_FULL) return (double)(T - 1) / (2.0 * T);
    if (mode == ALAB_MASK_CAUSAL) return alab_null_dag_score(T);
    double s = 0.0;
    for (int i = 0; i < T; i++) {
        const int n = i + 1 < window ? i + 1 : window; /* keys i-n+1 .. i */
        s += (double)(n - 1) / n;
    }
    return s / T;
}

void alab_asymmetry(float *out, const float *A, int T) {
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            out[(size_t)i * T + j] = A[(size_t)i * T + j] - A[(size_t)j * T + i];
}

void alab_head_average(float *out, const float *att, int NH, int T) {
    const size_t TT = (size_t)T * T;
    for (size_t e = 0; e < TT; e++) {
        double s = 0.0;
        for (int h = 0; h < NH; h++) s += att[h * TT + e];
        out[e] = (float)(s / NH);
    }
}

double alab_outer_product(float *out, const float *q, const float *k, int HS) {
    double trace = 0.0;
    for (int a = 0; a < HS; a++) {
        for (int b = 0; b < HS; b++) out[(size_t)a * HS + b] = q[a] * k[b];
        trace += (double)q[a] * k[a];
    }
    return trace;
}

double alab_attention_entropy(const float *A, int T) {
    if (T <= 0) return 0.0;
    double total = 0.0;
    for (int i = 0; i < T; i++) {
        double h = 0.0;
        for (int j = 0; j < T; j++) {
            double p = A[(size_t)i * T + j];
            if (p > 0.0) h -= p * log(p);
        }
        total += h;
    }
    return total / T;
}

int alab_display_do(float *out, const float *A, int T, int row, int col, int hard, float lambda) {
    if (!out || !A) return alab_fail(ALAB_EINVAL, "alab_display_do: NULL argument");
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "alab_display_do: empty matrix");
    if (row < 0 || row >= T || col < 0 || col >= T)
        return alab_fail(ALAB_ERANGE, "alab_display_do: (row %d, col %d) is outside a %dx%d matrix", row, col, T, T);
    if (!hard && !isfinite(lambda)) return alab_fail(ALAB_ENAN, "alab_display_do: lambda is not finite");
    if (out != A) memcpy(out, A, (size_t)T * T * sizeof(float));
    float *r = out + (size_t)row * T;
    if (hard) {
        memset(r, 0, (size_t)T * sizeof(float));
        r[col] = 1.0f;
        return ALAB_OK;
    }
    /* The chapter's soft do: l = log(row + 1e-9); l[col] += λ; softmax(l). */
    double mx = -INFINITY, sum = 0.0;
    for (int j = 0; j < T; j++) {
        double v = log((double)r[j] + 1e-9) + (j == col ? lambda : 0.0);
        if (v > mx) mx = v;
    }
    for (int j = 0; j < T; j++) sum += exp(log((double)r[j] + 1e-9) + (j == col ? lambda : 0.0) - mx);
    for (int j = 0; j < T; j++) r[j] = (float)(exp(log((double)r[j] + 1e-9) + (j == col ? lambda : 0.0) - mx) / sum);
    return ALAB_OK;
}
