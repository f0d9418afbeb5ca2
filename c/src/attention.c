/* attention.c — attention itself: the scores, the masks (mask.c says which),
 * the softmax with the do-operations and knockouts applied through
 * interventions.c, the capture, and the cached step of generation.
 *
 * Heads: NH query heads read key/value head h / G (G = NH / NKV, 1 without
 * grouped-query attention). q, k and v are read through a qkv_view, so the
 * fused [q | k | v] rows of GPT-2 and GPT-NeoX and the separate projections
 * of Llama/Qwen take the same code.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "mask.h"
#include "model.h"
#include "ops.h"

/* ---- attention ------------------------------------------------------------------------- */

float alab_arch_attn_scale(const alab_arch *a, int l) {
    if (a->attn_scale > 0) return (float)a->attn_scale; /* Gemma 3: query_pre_attn_scalar^-0.5 */
    float s = a->scale_attn_weights ? 1.0f / sqrtf((float)a->HS) : 1.0f;
    if (a->scale_by_layer) s /= (float)(l + 1);
    return s;
}

float alab_attn_scale(const alab_model *m, int l) { return alab_arch_attn_scale(&m->arch, l); }

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
    int l, T, q0, q1;
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
    int mode, window;
    alab_layer_mask(m, o, l, &mode, &window);
    float *att_l = a->att + (size_t)l * NH * T * T;

    for (int h = h0; h < h1; h++) {
        float *kt = a->fc + (size_t)h * HS * T; /* (HS, T) */
        float *att_h = att_l + (size_t)h * T * T;
        const float *qh = vw->q + h * HS, *kh = vw->k + (h / G) * HS, *vh = vw->v + (h / G) * HS;
        int ldq = vw->ldq, ldk = vw->ldk, ldv = vw->ldv;
        const float *pattern = NULL; /* circuits.c: this head's probabilities, taken from another run */
        const circuit_hooks *ck = m->ck;
        if (ck && ck->rcv_x && ck->rcv_layer == l && ck->rcv_head == h) { /* path patching's receiver */
            const ptrdiff_t d = ck->rcv_qkv - a->qkv; /* the same layout, in the receiver's scratch */
            if (ck->rcv_input == 0) qh += d;
            else if (ck->rcv_input == 1) kh += d;
            else vh += d;
        }
        if (ck && ck->layer == l && ck->head == h) {
            pattern = ck->pattern;
            if (ck->values) { vh = ck->values; ldv = ck->ldv; }
        }
        const int ablated = ix->ablated[l * NH + h];
        for (int j = 0; j < T; j++)
            for (int d = 0; d < HS; d++) kt[(size_t)d * T + j] = kh[(size_t)j * ldk + d];
        /* blocks of the full run's grid; a window computes its rows of each with the block's column count, so
           every product is the full run's (a row's values do not depend on the other rows computed) */
        for (int b0 = job->q0 / ATT_RB * ATT_RB; b0 < job->q1; b0 += ATT_RB) {
            const int b1 = T - b0 < ATT_RB ? T : b0 + ATT_RB;
            const int i0 = b0 > job->q0 ? b0 : job->q0, i1 = b1 < job->q1 ? b1 : job->q1;
            int lo, hi, hi_max = 0;
            for (int i = b0; i < b1; i++) {
                alab_mask_range(&lo, &hi, mode, window, i, T);
                if (hi > hi_max) hi_max = hi;
            }
            int nz = hi_max; /* the block's last key column with a nonzero weight, + 1 */
            matmul_forward_ld(att_h + (size_t)i0 * T, T, qh + (size_t)i0 * ldq, ldq, kt, T, NULL, i1 - i0, HS, hi_max);
            for (int i = i0; i < i1; i++) {
                float *row = att_h + (size_t)i * T;
                alab_mask_range(&lo, &hi, mode, window, i, T);
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
                for (int s = 0; s < ng; s++) { /* hard do: after the softmax, the row becomes one-hot */
                    const alab_intervention *v = &o->interventions[g[s]];
                    if (v->kind == ALAB_DO_HARD && (v->head == ALAB_ALL_HEADS || v->head == h)) {
                        memset(row, 0, (size_t)T * sizeof(float));
                        row[v->col] = 1.0f;
                        if (v->col + 1 > nz) nz = v->col + 1;
                    }
                }
                if (o->n_knockouts) alab_knockout_row(row, T, o, l, h, i);
                if (pattern) { /* the other run's row, whatever this one computed */
                    memcpy(row, pattern + (size_t)i * T, (size_t)T * sizeof(float));
                    nz = T;
                }
            }
            float *y = a->y + (size_t)i0 * DQ + h * HS;
            if (ablated) { /* the head's output is zeroed before the output projection */
                for (int i = i0; i < i1; i++) memset(y + (size_t)(i - i0) * DQ, 0, (size_t)HS * sizeof(float));
                continue;
            }
            matmul_forward_ld(y, DQ, att_h + (size_t)i0 * T, T, vh, ldv, NULL, i1 - i0, nz, HS);
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
                            const intervention_index *ix, int q0, int q1) {
    const int NH = m->cfg.n_head, DQ = NH * m->arch.HS;
    attention_job job = {m, v, l, T, q0, q1, o, ix};
    const int parts = NH > 1 ? alab_parts_for(m, (double)(q1 - q0) * T * DQ) : 1; /* q k^T and att v, causal halves */
    if (parts <= 1) attention_heads(&job, 0, NH);
    else alab_run_job(m, parts, attention_part, &job);
}

/* The cached step: Tn new rows at positions kv->n.., their keys and values
 * appended to layer l's cache (layout (L, NKV, cap, HS): per head the rows are
 * contiguous, so a new row's scores are one matmul_nt over the cache and its
 * output one matmul over the cached values). No interventions, no capture; the
 * layer's own mask (causal, or within its sliding window). */
void alab_attention_cached(alab_model *m, const qkv_view *vw, int l, int Tn, kv_cache *kv) {
    const int NH = m->cfg.n_head, NKV = m->arch.NKV, HS = m->arch.HS, G = NH / NKV, DQ = NH * HS;
    const int P0 = kv->n;
    const float scale = alab_attn_scale(m, l);
    const int W = m->arch.layer_window[l];
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
        for (int t = 0; t < Tn; t++) { /* causal: position P0 + t sees 0..P0 + t (the last W of them with a window) */
            const int hi = P0 + t + 1, lo = W > 0 && hi > W ? hi - W : 0, n = hi - lo;
            matmul_nt_forward(kv->scores, vw->q + (size_t)t * vw->ldq + h * HS, kh + (size_t)lo * HS, 1, HS, n);
            for (int j = 0; j < n; j++) kv->scores[j] *= scale;
            softmax_forward(kv->scores, kv->scores, n);
            matmul_forward_ld(a->y + (size_t)t * DQ + h * HS, DQ, kv->scores, n, vh + (size_t)lo * HS, HS, NULL, 1, n, HS);
        }
    }
}
