/* attention.c — the interventions (a table of kinds), their checks and
 * index, the weight edits of one head, and attention itself: the prefill
 * with the do-operations and the capture, and the cached step of generation.
 *
 * Heads: NH query heads read key/value head h / G (G = NH / NKV, 1 without
 * grouped-query attention). q, k and v are read through a qkv_view, so the
 * fused [q | k | v] rows of GPT-2 and GPT-NeoX and the separate projections
 * of Llama/Qwen take the same code.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static void mask_range(int *lo, int *hi, int mode, int window, int i, int T);

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
        const int mode = o->layer_mask ? o->layer_mask[v->layer] : o->mask;
        const int window = o->layer_mask && o->layer_window ? o->layer_window[v->layer] : o->window;
        int lo, hi;
        mask_range(&lo, &hi, mode, window, v->row, T);
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

/* Rung-3 weight edits of layer l on its q and k, in the order given. Scaling
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

/* ---- attention ------------------------------------------------------------------------- */

float alab_attn_scale(const alab_model *m, int l) {
    float s = m->arch.scale_attn_weights ? 1.0f / sqrtf((float)m->arch.HS) : 1.0f;
    if (m->arch.scale_by_layer) s /= (float)(l + 1);
    return s;
}

/* The positions row i may attend to: [*lo, *hi). */
static void mask_range(int *lo, int *hi, int mode, int window, int i, int T) {
    switch (mode) {
    case ALAB_MASK_FULL: *lo = 0; *hi = T; break;
    case ALAB_MASK_WINDOW: *lo = i - window + 1 > 0 ? i - window + 1 : 0; *hi = i + 1; break;
    default: *lo = 0; *hi = i + 1; break;
    }
}

/* y (T, DQ) = per head softmax(q k^T * scale + soft do, masked) [hard do] v.
 * Writes the probabilities to att (NH, T, T) of this layer.
 *
 * Per head, in blocks of ATT_RB query rows, as two small matrix products with
 * the packed matmul kernel (matmul_forward_ld reads q and v in place):
 *   scores (rows, 0..hi_max) = q_rows @ k^T   written straight into att,
 *   then per row: scale, soft do, mask, softmax, hard do,
 *   y_rows = att_rows (rows, 0..nz) @ v        nz: past the last nonzero column.
 * k^T (HS, T) is transposed once per head into fc, free until the MLP.
 * Columns a causal block cannot see are not computed; entries a row's mask
 * excludes are overwritten with 0. */
#define ATT_RB 32
typedef struct {
    alab_model *m;
    const qkv_view *v;
    int l, T;
    const alab_run_opts *o;
    const intervention_index *ix;
} attention_job;

/* Heads [h0, h1) of layer l. Each head has its own k^T scratch in fc (NH*HS*T
 * floats), so heads can run on different threads. */
static void attention_heads(const attention_job *job, int h0, int h1) {
    alab_model *m = job->m;
    const qkv_view *vw = job->v;
    const int l = job->l, T = job->T;
    const alab_run_opts *o = job->o;
    const intervention_index *ix = job->ix;
    const int NH = m->cfg.n_head, HS = m->arch.HS, G = NH / m->arch.NKV, DQ = NH * HS;
    activations *a = &m->acts;
    const float scale = o->scale_override ? o->scale : alab_attn_scale(m, l);
    const int mode = o->layer_mask ? o->layer_mask[l] : o->mask;
    const int window = o->layer_mask && o->layer_window ? o->layer_window[l] : o->window;
    float *att_l = a->att + (size_t)l * NH * T * T;

    for (int h = h0; h < h1; h++) {
        float *kt = a->fc + (size_t)h * HS * T; /* (HS, T) */
        float *att_h = att_l + (size_t)h * T * T;
        const float *qh = vw->q + h * HS, *kh = vw->k + (h / G) * HS, *vh = vw->v + (h / G) * HS;
        const int ablated = ix->ablated[l * NH + h];
        for (int j = 0; j < T; j++)
            for (int d = 0; d < HS; d++) kt[(size_t)d * T + j] = kh[(size_t)j * vw->ldk + d];
        for (int i0 = 0; i0 < T; i0 += ATT_RB) {
            const int i1 = T - i0 < ATT_RB ? T : i0 + ATT_RB;
            int lo, hi, hi_max = 0, nz = 0;
            for (int i = i0; i < i1; i++) {
                mask_range(&lo, &hi, mode, window, i, T);
                if (hi > hi_max) hi_max = hi;
            }
            matmul_forward_ld(att_h + (size_t)i0 * T, T, qh + (size_t)i0 * vw->ldq, vw->ldq, kt, T, NULL, i1 - i0, HS, hi_max);
            for (int i = i0; i < i1; i++) {
                float *row = att_h + (size_t)i * T;
                mask_range(&lo, &hi, mode, window, i, T);
                for (int j = lo; j < hi; j++) row[j] *= scale;
                const int *g = ix->idx + ix->start[(size_t)l * T + i];
                const int ng = ix->start[(size_t)l * T + i + 1] - ix->start[(size_t)l * T + i];
                for (int s = 0; s < ng; s++) { /* soft do: before the mask, so a masked cell stays masked */
                    const alab_intervention *v = &o->interventions[g[s]];
                    if (v->kind == ALAB_DO_SOFT && (v->head == ALAB_ALL_HEADS || v->head == h) && v->col >= lo && v->col < hi)
                        row[v->col] += v->lambda;
                }
                softmax_forward(row + lo, row + lo, hi - lo);
                for (int j = 0; j < lo; j++) row[j] = 0.0f;
                for (int j = hi; j < T; j++) row[j] = 0.0f;
                if (hi > nz) nz = hi;
                for (int s = 0; s < ng; s++) { /* hard do: after the softmax, the row becomes one-hot */
                    const alab_intervention *v = &o->interventions[g[s]];
                    if (v->kind == ALAB_DO_HARD && (v->head == ALAB_ALL_HEADS || v->head == h)) {
                        memset(row, 0, (size_t)T * sizeof(float));
                        row[v->col] = 1.0f;
                        if (v->col + 1 > nz) nz = v->col + 1;
                    }
                }
                if (o->n_knockouts) alab_knockout_row(row, T, o, l, h, i);
            }
            float *y = a->y + (size_t)i0 * DQ + h * HS;
            if (ablated) { /* the head's output is zeroed before the output projection */
                for (int i = i0; i < i1; i++) memset(y + (size_t)(i - i0) * DQ, 0, (size_t)HS * sizeof(float));
                continue;
            }
            matmul_forward_ld(y, DQ, att_h + (size_t)i0 * T, T, vh, vw->ldv, NULL, i1 - i0, nz, HS);
        }
    }
}

static void attention_part(void *ctx, int part, int nparts) {
    const attention_job *job = ctx;
    int h0, h1;
    alab_split(&h0, &h1, job->m->cfg.n_head, part, nparts);
    attention_heads(job, h0, h1);
}

void alab_attention_prefill(alab_model *m, const qkv_view *v, int l, int T, const alab_run_opts *o,
                            const intervention_index *ix) {
    const int NH = m->cfg.n_head, DQ = NH * m->arch.HS;
    attention_job job = {m, v, l, T, o, ix};
    const int parts = NH > 1 ? alab_parts_for(m, (double)T * T * DQ) : 1; /* q k^T and att v, causal halves */
    if (parts <= 1) attention_heads(&job, 0, NH);
    else alab_run_job(m, parts, attention_part, &job);
}

/* The cached step: Tn new rows at positions kv->n.., their keys and values
 * appended to layer l's cache (layout (L, NKV, cap, HS): per head the rows are
 * contiguous, so a new row's scores are one matmul_nt over the cache and its
 * output one matmul over the cached values). No interventions, no capture. */
void alab_attention_cached(alab_model *m, const qkv_view *vw, int l, int Tn, kv_cache *kv) {
    const int NH = m->cfg.n_head, NKV = m->arch.NKV, HS = m->arch.HS, G = NH / NKV, DQ = NH * HS;
    const int P0 = kv->n;
    const float scale = alab_attn_scale(m, l);
    activations *a = &m->acts;
    for (int j = 0; j < NKV; j++) {
        float *kh = kv->k + ((size_t)l * NKV + j) * kv->cap * HS, *vh = kv->v + ((size_t)l * NKV + j) * kv->cap * HS;
        for (int t = 0; t < Tn; t++) {
            memcpy(kh + (size_t)(P0 + t) * HS, vw->k + (size_t)t * vw->ldk + j * HS, (size_t)HS * sizeof(float));
            memcpy(vh + (size_t)(P0 + t) * HS, vw->v + (size_t)t * vw->ldv + j * HS, (size_t)HS * sizeof(float));
        }
    }
    for (int h = 0; h < NH; h++) {
        const float *kh = kv->k + ((size_t)l * NKV + h / G) * kv->cap * HS;
        const float *vh = kv->v + ((size_t)l * NKV + h / G) * kv->cap * HS;
        for (int t = 0; t < Tn; t++) { /* causal: position P0 + t sees 0..P0 + t */
            const int n = P0 + t + 1;
            matmul_nt_forward(kv->scores, vw->q + (size_t)t * vw->ldq + h * HS, kh, 1, HS, n);
            for (int j = 0; j < n; j++) kv->scores[j] *= scale;
            softmax_forward(kv->scores, kv->scores, n);
            matmul_forward_ld(a->y + (size_t)t * DQ + h * HS, DQ, kv->scores, n, vh, HS, NULL, 1, n, HS);
        }
    }
}
