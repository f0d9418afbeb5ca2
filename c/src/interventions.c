/* interventions.c — the one home of everything that changes a forward pass:
 * the table of intervention kinds (do, ablation, weight edits), their checks
 * and index, the weight edits of one head, and the evidence hooks (knockouts
 * on an attention row, head-output and residual patches, captures). The
 * forward pass (forward.c, attention.c) calls this file; this file calls
 * nothing above it (a layer's mask is mask.c's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mask.h"
#include "model.h"
#include "ops.h"

/* ---- the kinds ------------------------------------------------------------------ */

static const alab_iv_kind IV_KINDS[] = {
    {ALAB_DO_HARD, "hard", IV_ON_CELL, IV_PARAM_NONE},       /* row one-hot at col after the softmax */
    {ALAB_DO_SOFT, "soft", IV_ON_CELL, IV_PARAM_LAMBDA},     /* + lambda on the score (row, col) */
    {ALAB_ABLATE, "ablate", IV_ON_HEAD_OUT, IV_PARAM_NONE},  /* the head's output zeroed */
    {ALAB_SCALE_Q, "scaleQ", IV_ON_WEIGHTS, IV_PARAM_ALPHA}, /* W_Q <- alpha W_Q */
    {ALAB_SCALE_K, "scaleK", IV_ON_WEIGHTS, IV_PARAM_ALPHA}, /* W_K <- alpha W_K */
    {ALAB_SWAP_QK, "swapQK", IV_ON_WEIGHTS, IV_PARAM_NONE},  /* W_Q <-> W_K */
};

const alab_iv_kind *alab_iv_kind_of(int k) {
    for (size_t i = 0; i < sizeof IV_KINDS / sizeof IV_KINDS[0]; i++)
        if (IV_KINDS[i].kind == k) return &IV_KINDS[i];
    return NULL;
}

/* ---- options ------------------------------------------------------------------------ */

void alab_run_opts_init(alab_run_opts *o) {
    memset(o, 0, sizeof *o);
    o->mask = ALAB_MASK_CAUSAL;
    o->capture_layer = -1;
    o->capture_head = -1;
}

static int check_mask(int mode, int window, const char *where) {
    if (mode != ALAB_MASK_CAUSAL && mode != ALAB_MASK_FULL && mode != ALAB_MASK_WINDOW)
        return alab_fail(ALAB_EINVAL, "%s: unknown mask mode %d", where, mode);
    if (mode == ALAB_MASK_WINDOW && window < 1)
        return alab_fail(ALAB_ERANGE, "%s: window must be at least 1 (got %d)", where, window);
    return ALAB_OK;
}

/* The SCALE_Q / SCALE_K edits of a head multiply its scores by the product
 * of their alphas (a swap moves factors between q and k, it does not change
 * the product). That product is held to |gain| <= ALAB_MAX_SCALE per head, so
 * finite inputs cannot overflow q, k or a score to inf (and then NaN). */
static int check_edit_gains(const alab_run_opts *o, int L, int NH) {
    int any = 0;
    for (int i = 0; i < o->n_interventions && !any; i++)
        any = o->interventions[i].kind == ALAB_SCALE_Q || o->interventions[i].kind == ALAB_SCALE_K;
    if (!any) return ALAB_OK;
    double *gain = malloc((size_t)L * NH * sizeof *gain);
    if (!gain) return alab_fail(ALAB_ENOMEM, "out of memory");
    for (int i = 0; i < L * NH; i++) gain[i] = 1.0;
    int rc = ALAB_OK;
    for (int i = 0; i < o->n_interventions && rc == ALAB_OK; i++) {
        const alab_intervention *v = &o->interventions[i];
        if (v->kind != ALAB_SCALE_Q && v->kind != ALAB_SCALE_K) continue;
        for (int h = 0; h < NH; h++) {
            if (v->head != ALAB_ALL_HEADS && v->head != h) continue;
            double *g = &gain[v->layer * NH + h];
            *g *= fabs((double)v->alpha);
            if (*g > ALAB_MAX_SCALE) {
                rc = alab_fail(ALAB_ERANGE, "intervention %d: the alphas of layer %d head %d multiply to %g, outside [-%g, %g]",
                               i, v->layer, h, *g, (double)ALAB_MAX_SCALE, (double)ALAB_MAX_SCALE);
                break;
            }
        }
    }
    free(gain);
    return rc;
}

int alab_check_opts(const alab_model *m, const alab_run_opts *o, int T) {
    const int L = m->cfg.n_layer, NH = m->cfg.n_head;
    int rc;
    if (o->n_interventions < 0 || (o->n_interventions > 0 && !o->interventions))
        return alab_fail(ALAB_EINVAL, "n_interventions is %d with %s interventions", o->n_interventions,
                         o->interventions ? "an array of" : "no");
    if (o->n_interventions > ALAB_MAX_INTERVENTIONS)
        return alab_fail(ALAB_ELIMIT, "%d interventions, the limit is %d", o->n_interventions, ALAB_MAX_INTERVENTIONS);
    for (int i = 0; i < o->n_interventions; i++) {
        const alab_intervention *v = &o->interventions[i];
        const alab_iv_kind *k = alab_iv_kind_of(v->kind);
        if (!k) return alab_fail(ALAB_EINVAL, "intervention %d: unknown kind %d", i, v->kind);
        if (v->layer < 0 || v->layer >= L)
            return alab_fail(ALAB_ERANGE, "intervention %d: layer %d is outside [0, %d)", i, v->layer, L);
        if (v->head < ALAB_ALL_HEADS || v->head >= NH)
            return alab_fail(ALAB_ERANGE, "intervention %d: head %d is outside [0, %d) (or -1 for all heads)", i, v->head, NH);
        if (k->param == IV_PARAM_ALPHA && !isfinite(v->alpha))
            return alab_fail(ALAB_ENAN, "intervention %d: the scale alpha is not a finite number", i);
        if (k->acts_on != IV_ON_CELL) continue;
        if (v->row < 0 || v->row >= T)
            return alab_fail(ALAB_ERANGE, "intervention %d: row %d is outside [0, %d)", i, v->row, T);
        if (v->col < 0 || v->col >= T)
            return alab_fail(ALAB_ERANGE, "intervention %d: col %d is outside [0, %d)", i, v->col, T);
        if (k->param == IV_PARAM_LAMBDA && !isfinite(v->lambda))
            return alab_fail(ALAB_ENAN, "intervention %d: lambda is not a finite number", i);
        /* finite inputs must give finite scores: |lambda| <= 1e30, so even
         * ALAB_MAX_INTERVENTIONS of them on one cell sum to a finite float */
        if (k->param == IV_PARAM_LAMBDA && fabsf(v->lambda) > ALAB_MAX_SOFT_LAMBDA)
            return alab_fail(ALAB_ERANGE, "intervention %d: lambda %g is outside [-%g, %g]", i, (double)v->lambda,
                             (double)ALAB_MAX_SOFT_LAMBDA, (double)ALAB_MAX_SOFT_LAMBDA);
    }
    if ((rc = check_edit_gains(o, L, NH))) return rc;
    if ((rc = check_mask(o->mask, o->window, "mask"))) return rc;
    if (o->layer_mask)
        for (int l = 0; l < L; l++)
            if ((rc = check_mask(o->layer_mask[l], o->layer_window ? o->layer_window[l] : o->window, "layer mask")))
                return rc;
    for (int i = 0; i < o->n_interventions; i++) { /* a soft do adds to a score: the mask must let it through */
        const alab_intervention *v = &o->interventions[i];
        if (v->kind != ALAB_DO_SOFT) continue;
        int mode, window, lo, hi;
        alab_layer_mask(m, o, v->layer, &mode, &window);
        alab_mask_range(&lo, &hi, mode, window, v->row, T);
        if (v->col < lo || v->col >= hi)
            return alab_fail(ALAB_EMASKED, "intervention %d: a soft do on (row %d, col %d) in layer %d, a cell its mask "
                             "hides (row %d sees columns %d..%d): it would change nothing", i, v->row, v->col, v->layer,
                             v->row, lo, hi - 1);
    }
    if (o->scale_override && !isfinite(o->scale))
        return alab_fail(ALAB_ENAN, "scale is not a finite number");
    if (o->scale_override && fabsf(o->scale) > ALAB_MAX_SCALE)
        return alab_fail(ALAB_ERANGE, "scale %g is outside [-%g, %g]", (double)o->scale, (double)ALAB_MAX_SCALE,
                         (double)ALAB_MAX_SCALE);
    if (o->capture_layer != -1 || o->capture_head != -1) {
        if (o->capture_layer < 0 || o->capture_layer >= L)
            return alab_fail(ALAB_ERANGE, "capture layer %d is outside [0, %d)", o->capture_layer, L);
        if (o->capture_head < 0 || o->capture_head >= NH)
            return alab_fail(ALAB_ERANGE, "capture head %d is outside [0, %d)", o->capture_head, NH);
    }
    return ALAB_OK;
}

/* Interventions grouped by (layer, row) for O(1) lookup in the inner loop;
 * ablations as a per-(layer, head) flag. Built once per forward. */
int alab_build_index(intervention_index *ix, const alab_run_opts *o, int L, int NH, int T) {
    size_t groups = (size_t)L * T;
    size_t n = (size_t)o->n_interventions;
    size_t bytes = (groups + 1) * sizeof(int) + (n + 1) * sizeof(int) + (size_t)L * NH;
    ix->block = calloc(1, bytes);
    if (!ix->block) return alab_fail(ALAB_ENOMEM, "out of memory");
    ix->start = ix->block;
    ix->idx = ix->start + groups + 1;
    ix->ablated = (unsigned char *)(ix->idx + n + 1);
    for (size_t i = 0; i < n; i++) {
        const alab_intervention *v = &o->interventions[i];
        const int on = alab_iv_kind_of(v->kind)->acts_on;
        if (on == IV_ON_HEAD_OUT) {
            for (int h = 0; h < NH; h++)
                if (v->head == ALAB_ALL_HEADS || v->head == h) ix->ablated[v->layer * NH + h] = 1;
        } else if (on == IV_ON_CELL) {
            ix->start[(size_t)v->layer * T + v->row + 1]++;
        } else {
            ix->has_edits = 1;
        }
    }
    for (size_t g = 0; g < groups; g++) ix->start[g + 1] += ix->start[g];
    int *fill = calloc(groups + 1, sizeof(int));
    if (!fill) { free(ix->block); return alab_fail(ALAB_ENOMEM, "out of memory"); }
    for (size_t i = 0; i < n; i++) { /* stable: kept in the order given */
        const alab_intervention *v = &o->interventions[i];
        if (alab_iv_kind_of(v->kind)->acts_on != IV_ON_CELL) continue;
        size_t g = (size_t)v->layer * T + v->row;
        ix->idx[ix->start[g] + fill[g]++] = (int)i;
    }
    free(fill);
    return ALAB_OK;
}

/* ---- weight edits ---------------------------------------------------------------------- */

/* Weight edits of layer l on its q and k, in the order given. Scaling
 * or swapping W_Q / W_K with the biases kept is linear in the pre-bias
 * projections, so the edit is exact on the activations:
 *   W_Q <- a W_Q:  q <- a (q - b_q) + b_q;  swap: q <- k - b_k + b_q, k <- q - b_q + b_k.
 * Grouped-query attention: head h's key is key/value head j = h / G, shared by
 * the G query heads of its group. A K edit of h acts on j (so on the whole
 * group); scaleK of every head scales each j once; swapQK of h gives h the
 * key j's weights and j the weights of q_h; swapQK of every head gives each
 * query head the weights of its group's key and key j those of query head j*G. */
void alab_apply_head_edits(alab_model *m, const qkv_view *vw, int l, int T, const alab_run_opts *o) {
    const int NH = m->cfg.n_head, HS = m->arch.HS, NKV = m->arch.NKV, G = NH / NKV;
    float tmp[1024]; /* HS <= 1024 (family.c) */
    for (int s = 0; s < o->n_interventions; s++) {
        const alab_intervention *v = &o->interventions[s];
        if (v->layer != l || alab_iv_kind_of(v->kind)->acts_on != IV_ON_WEIGHTS) continue;
        if (v->kind != ALAB_SWAP_QK && v->alpha == 1.0f) continue; /* the identity, exactly */
        for (int j = 0; j < NKV; j++) {
            const int hsel0 = v->head == ALAB_ALL_HEADS ? j * G : v->head;
            if (v->head != ALAB_ALL_HEADS && v->head / G != j) continue;
            const float *bk = vw->bk ? vw->bk + j * HS : NULL;
            for (int t = 0; t < T; t++) {
                float *k = vw->k + (size_t)t * vw->ldk + j * HS;
                if (v->kind == ALAB_SCALE_K) {
                    for (int d = 0; d < HS; d++) {
                        const float b = bk ? bk[d] : 0.0f;
                        k[d] = v->alpha * (k[d] - b) + b;
                    }
                    continue;
                }
                const int h_lo = v->head == ALAB_ALL_HEADS ? j * G : v->head;
                const int h_hi = v->head == ALAB_ALL_HEADS ? (j + 1) * G : v->head + 1;
                if (v->kind == ALAB_SCALE_Q) {
                    for (int h = h_lo; h < h_hi; h++) {
                        float *q = vw->q + (size_t)t * vw->ldq + h * HS;
                        const float *bq = vw->bq ? vw->bq + h * HS : NULL;
                        for (int d = 0; d < HS; d++) {
                            const float b = bq ? bq[d] : 0.0f;
                            q[d] = v->alpha * (q[d] - b) + b;
                        }
                    }
                    continue;
                }
                /* ALAB_SWAP_QK */
                const float *q0 = vw->q + (size_t)t * vw->ldq + hsel0 * HS;
                const float *bq0 = vw->bq ? vw->bq + hsel0 * HS : NULL;
                for (int d = 0; d < HS; d++) tmp[d] = q0[d] - (bq0 ? bq0[d] : 0.0f) + (bk ? bk[d] : 0.0f);
                for (int h = h_lo; h < h_hi; h++) {
                    float *q = vw->q + (size_t)t * vw->ldq + h * HS;
                    const float *bq = vw->bq ? vw->bq + h * HS : NULL;
                    for (int d = 0; d < HS; d++) q[d] = k[d] - (bk ? bk[d] : 0.0f) + (bq ? bq[d] : 0.0f);
                }
                memcpy(k, tmp, (size_t)HS * sizeof(float));
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Hooks inside the forward pass                                              */
/* ------------------------------------------------------------------------ */

static int all_finite(const float *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

int alab_check_evidence_opts(const alab_run_opts *o, int L, int NH, int T, int C, int DQ) {
    const int HS = DQ / NH;
    if (o->n_knockouts < 0 || o->n_knockouts > ALAB_MAX_INTERVENTIONS || (o->n_knockouts && !o->knockouts))
        return alab_fail(ALAB_EINVAL, "knockouts: %d entries (at most %d, with an array)", o->n_knockouts,
                         ALAB_MAX_INTERVENTIONS);
    for (int k = 0; k < o->n_knockouts; k++) {
        const alab_knockout *v = &o->knockouts[k];
        if (v->layer < -1 || v->layer >= L || v->head < -1 || v->head >= NH || v->row < -1 || v->row >= T ||
            v->col < 0 || v->col >= T)
            return alab_fail(ALAB_ERANGE, "knockout %d: (layer %d, head %d, row %d, col %d) outside L = %d, NH = %d, T = %d",
                             k, v->layer, v->head, v->row, v->col, L, NH, T);
        if (v->mode != ALAB_KO_RENORM && v->mode != ALAB_KO_ZERO && v->mode != ALAB_KO_NOOP)
            return alab_fail(ALAB_EINVAL, "knockout %d: mode %d is not renorm (0), zero (1) or noop (2)", k, v->mode);
    }
    if (o->n_head_patches < 0 || o->n_head_patches > ALAB_MAX_LAYERS * ALAB_MAX_HEADS ||
        (o->n_head_patches && !o->head_patches))
        return alab_fail(ALAB_EINVAL, "head patches: %d entries", o->n_head_patches);
    for (int k = 0; k < o->n_head_patches; k++) {
        const alab_head_patch *p = &o->head_patches[k];
        if (p->layer < 0 || p->layer >= L || p->head < 0 || p->head >= NH)
            return alab_fail(ALAB_ERANGE, "head patch %d: (layer %d, head %d) outside L = %d, NH = %d", k, p->layer,
                             p->head, L, NH);
        if (!p->values || p->stride < 0) return alab_fail(ALAB_EINVAL, "head patch %d: no values or a negative stride", k);
        for (int t = 0; t < (p->stride ? T : 1); t++)
            if (!all_finite(p->values + (size_t)t * p->stride, (size_t)HS))
                return alab_fail(ALAB_ENAN, "head patch %d: a value at position %d is not finite", k, t);
    }
    if (o->n_resid_patches < 0 || o->n_resid_patches > ALAB_MAX_INTERVENTIONS || (o->n_resid_patches && !o->resid_patches))
        return alab_fail(ALAB_EINVAL, "residual patches: %d entries", o->n_resid_patches);
    for (int k = 0; k < o->n_resid_patches; k++) {
        const alab_resid_patch *p = &o->resid_patches[k];
        if (p->layer < 0 || p->layer >= L || p->pos < 0 || p->pos >= T)
            return alab_fail(ALAB_ERANGE, "residual patch %d: (layer %d, position %d) outside L = %d, T = %d", k,
                             p->layer, p->pos, L, T);
        if (!p->values) return alab_fail(ALAB_EINVAL, "residual patch %d: no values", k);
        if (!all_finite(p->values, (size_t)C)) return alab_fail(ALAB_ENAN, "residual patch %d: a value is not finite", k);
    }
    if (o->start_layer < 0 || o->start_layer >= L)
        return alab_fail(ALAB_ERANGE, "start_layer %d is outside [0, %d)", o->start_layer, L);
    if (o->start_layer > 0) {
        if (!o->start_x) return alab_fail(ALAB_EINVAL, "start_layer %d without start_x", o->start_layer);
        if (!all_finite(o->start_x, (size_t)T * C)) return alab_fail(ALAB_ENAN, "start_x holds a value that is not finite");
    }
    return ALAB_OK;
}

int alab_knockout_row(float *row, int T, const alab_run_opts *o, int l, int h, int i) {
    int touched = 0, renorm = 0;
    for (int k = 0; k < o->n_knockouts; k++) {
        const alab_knockout *v = &o->knockouts[k];
        if ((v->layer == -1 || v->layer == l) && (v->head == -1 || v->head == h) && (v->row == -1 || v->row == i)) {
            if (v->mode != ALAB_KO_NOOP) row[v->col] = 0.0f;
            touched = 1;
            renorm |= v->mode != ALAB_KO_ZERO;
        }
    }
    if (!touched || !renorm) return touched;
    double s = 0.0;
    for (int j = 0; j < T; j++) s += row[j];
    for (int j = 0; j < T; j++) row[j] = s > 0.0 ? (float)(row[j] / s) : 0.0f;
    return 1;
}

void alab_head_out_hooks(float *y, const alab_run_opts *o, int l, int T, int D, int HS) {
    for (int k = 0; k < o->n_head_patches; k++) {
        const alab_head_patch *p = &o->head_patches[k];
        if (p->layer != l) continue;
        for (int t = 0; t < T; t++)
            memcpy(y + (size_t)t * D + (size_t)p->head * HS, p->values + (size_t)t * p->stride, (size_t)HS * sizeof(float));
    }
    if (o->capture_head_out) memcpy(o->capture_head_out + (size_t)l * T * D, y, (size_t)T * D * sizeof(float));
}

void alab_resid_hooks(float *x, const alab_run_opts *o, int l, int T, int C) {
    for (int k = 0; k < o->n_resid_patches; k++) {
        const alab_resid_patch *p = &o->resid_patches[k];
        if (p->layer == l) memcpy(x + (size_t)p->pos * C, p->values, (size_t)C * sizeof(float));
    }
    if (o->capture_resid) memcpy(o->capture_resid + (size_t)l * T * C, x, (size_t)T * C * sizeof(float));
}
