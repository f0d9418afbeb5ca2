/* forward.c — the forward pass of every family: the big products split over
 * the model's threads (jobs.c), activations, the rotary positions, ONE block
 * (used by the prefill with its interventions and by the cached step of
 * generation) and alab_forward.
 *
 * The block, as the family description says:
 *   h = norm1(x)                          LayerNorm (+bias) | RMSNorm
 *   q, k, v = projections of h            fused [q|k|v] | separate (+biases)
 *   weight edits of heads                 (interventions.c)
 *   q, k = q_norm(q), k_norm(k)           per head RMSNorm (Qwen3)
 *   q, k = rotary(q, k, positions)        rotary families, on rot_dims of each head
 *   capture q, k of one head
 *   y = attention(q, k, v)                prefill (do, masks, ablation) | cached
 *   a = y @ W_o + b_o
 *   a = post_attn_norm(a)                 Gemma 3
 *   sequential: x += a; x += mlp(norm2(x))   (Gemma 3: x += post_mlp_norm(mlp(norm2(x))))
 *   parallel:   x += a + mlp(norm2(x_in)) (GPT-NeoX)
 *   mlp(h) = down(act(up h)) | down(silu(gate h) * up h) | down(gelu_tanh(gate h) * up h)
 * Gemma's norms are RMSNorms with the gains 1 + w (load.c adds the 1) and its embeddings are scaled by
 * sqrt(hidden_size); the rotary tables of Gemma 3's sliding layers have their own base (rope_local). The mask
 * of a layer with a sliding window is applied by attention.c (mask.c's alab_layer_mask says which).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "model.h"
#include "ops.h"

/* ---- the big products, split by output columns over the model's threads (jobs.c) ---- */

typedef struct {
    float *out;
    const float *inp, *w, *b;
    int T, C, OC, T_plan;
} mm_job;

static void mm_packed_part(void *ctx, int part, int nparts) {
    const mm_job *j = ctx;
    matmul_packed_forward_plan(j->out, j->inp, j->w, j->b, j->T, j->C, j->OC, part, nparts, j->T_plan);
}

static void mm_nt_part(void *ctx, int part, int nparts) {
    const mm_job *j = ctx;
    matmul_nt_forward_part(j->out, j->inp, j->w, j->T, j->C, j->OC, part, nparts);
}

typedef struct {
    float *out;
    const float *inp, *up;
    int n, kind;
} act_job;

static void act_range(const act_job *j, int lo, int hi) {
    if (hi <= lo) return;
    switch (j->kind) {
    case MLP_GELU_TANH: gelu_forward(j->out + lo, j->inp + lo, hi - lo); break;
    case MLP_GELU_EXACT: gelu_exact_forward(j->out + lo, j->inp + lo, hi - lo); break;
    case MLP_GEGLU: geglu_forward(j->out + lo, j->inp + lo, j->up + lo, hi - lo); break;
    default: swiglu_forward(j->out + lo, j->inp + lo, j->up + lo, hi - lo); break;
    }
}

static void act_part(void *ctx, int part, int nparts) {
    const act_job *j = ctx;
    int lo, hi;
    alab_split(&lo, &hi, j->n, part, nparts);
    act_range(j, lo, hi);
}

void alab_layer_matmul(alab_model *m, float *out, const float *inp, const float *w, const float *b,
                       int T, int C, int OC) {
    alab_layer_matmul_plan(m, out, inp, w, b, T, C, OC, T);
}

void alab_layer_matmul_plan(alab_model *m, float *out, const float *inp, const float *w, const float *b,
                            int T, int C, int OC, int T_plan) {
    if (m->half) { /* 16-bit weights: the matrix converted to f32, then the unpacked product */
        matmul_forward(out, inp, alab_half_matrix(m, w, (size_t)C * OC), b, T, C, OC);
        return;
    }
    if (!m->packed) { /* (ALAB_NO_PACK builds) single-threaded */
        matmul_forward(out, inp, w, b, T, C, OC);
        return;
    }
    const int parts = alab_parts_for(m, (double)T * C * OC);
    mm_job j = {out, inp, w, b, T, C, OC, T_plan};
    alab_run_job(m, parts, mm_packed_part, &j);
}

/* out (T, V) = inp (T, C) @ lm_head^T. */
void alab_lm_head(alab_model *m, float *out, const float *inp, int T) {
    const int C = m->cfg.n_embd, V = m->cfg.vocab_size;
    if (m->half) { /* blocks of rows converted to f32 in turn */
        const uint16_t *w16 = (const uint16_t *)(const void *)m->lm_head;
        for (int v0 = 0; v0 < V; v0 += ALAB_HEAD_BLOCK) {
            const int nb = V - v0 < ALAB_HEAD_BLOCK ? V - v0 : ALAB_HEAD_BLOCK;
            const float *blk = alab_half_matrix(m, (const float *)(const void *)(w16 + (size_t)v0 * C), (size_t)nb * C);
            for (int t = 0; t < T; t++) matmul_nt_forward(out + (size_t)t * V + v0, inp + (size_t)t * C, blk, 1, C, nb);
        }
        return;
    }
    const int parts = alab_parts_for(m, (double)T * C * V);
    if (parts <= 1) {
        matmul_nt_forward(out, inp, m->lm_head, T, C, V);
        return;
    }
    mm_job j = {out, inp, m->lm_head, NULL, T, C, V, T};
    alab_run_job(m, parts, mm_nt_part, &j);
}

/* out = act(inp) (n), or for SwiGLU / GeGLU out = silu(inp) * up / gelu_tanh(inp) * up. */
static void activation(alab_model *m, float *out, const float *inp, const float *up, int n) {
    act_job j = {out, inp, up, n, m->arch.mlp};
    const int parts = alab_parts_for(m, 8.0 * n); /* a tanh is worth about 8 multiply-adds */
    if (parts <= 1) act_range(&j, 0, n);
    else alab_run_job(m, parts, act_part, &j);
}

static void norm(const alab_model *m, float *out, const float *inp, const float *w, const float *b, int T) {
    /* NORM_RMSNORM_UNIT is an RMSNorm too: its gains are 1 + w since the load */
    if (m->arch.fam->norm == NORM_LAYERNORM) layernorm_forward(out, inp, w, b, T, m->cfg.n_embd, m->arch.eps);
    else rmsnorm_forward(out, inp, w, T, m->cfg.n_embd, m->arch.eps);
}

void alab_final_norm(const alab_model *m, float *out, const float *inp, int T) {
    norm(m, out, inp, m->lnf_w, m->lnf_b, T);
}

const alab_config *alab_model_config(const alab_model *m) { return m ? &m->cfg : NULL; }
const alab_bpe *alab_model_bpe(const alab_model *m) { return m ? m->bpe : NULL; }

/* ---- activations: one block, grown when a longer text comes ---------------------- */

int alab_ensure_activations(alab_model *m, int T) {
    activations *a = &m->acts;
    if (a->block && T <= a->T_cap) return ALAB_OK;
    /* Sizes in 64-bit arithmetic: on wasm32 size_t is 32 bits and L*NH*T*T
     * overflows for long texts; such a request must be ENOMEM, not a wrap. */
    const alab_arch *ar = &m->arch;
    const uint64_t C = (uint64_t)m->cfg.n_embd, L = (uint64_t)m->cfg.n_layer, NH = (uint64_t)m->cfg.n_head;
    const uint64_t HS = (uint64_t)ar->HS, V = (uint64_t)m->cfg.vocab_size, t = (uint64_t)T;
    const uint64_t DQ = NH * HS, DKV = (uint64_t)ar->NKV * HS;
    uint64_t fcw = (uint64_t)ar->F * (ar->mlp == MLP_SWIGLU || ar->mlp == MLP_GEGLU ? 2 : 1);
    if (DQ > fcw) fcw = DQ; /* k^T scratch of every head */
    uint64_t sizes[12] = {t * C, t * C, t * (DQ + 2 * DKV), t * DQ, t * fcw, L * NH * t * t, t * HS, t * HS, C, V, t,
                          ar->parallel_residual ? t * C : 0};
    uint64_t total = 0;
    for (int i = 0; i < 12; i++) total += (sizes[i] + 15) & ~(uint64_t)15; /* keep each 64-byte aligned */
    if (total > (uint64_t)SIZE_MAX / sizeof(float))
        return alab_fail(ALAB_ENOMEM, "activations for %d tokens need %llu MB, more than this address space holds", T,
                         (unsigned long long)(total * 4 >> 20));
    float *block = aligned_alloc(64, (size_t)total * sizeof(float));
    if (!block)
        return alab_fail(ALAB_ENOMEM, "cannot allocate %llu MB of activations for %d tokens", (unsigned long long)(total * 4 >> 20), T);
    free(a->block);
    a->block = block;
    float **ptrs[12] = {&a->x, &a->h, &a->qkv, &a->y, &a->fc, &a->att, &a->q, &a->k, &a->lnf, &a->logits,
                        (float **)(void *)&a->ids, &a->h2}; /* ints share the float-sized slots */
    float *p = block;
    for (int i = 0; i < 12; i++) {
        *ptrs[i] = p;
        p += (size_t)((sizes[i] + 15) & ~(uint64_t)15);
    }
    a->T_cap = T;
    return ALAB_OK;
}

/* ---- rotary positions --------------------------------------------------------------- */

/* cos and sin of positions [0, P) for every pair, grown when a longer run comes:
 * [cos | sin] of the global frequencies, then (rope_local_theta > 0) [cos | sin]
 * of the local ones, each (cap, half). */
static int ensure_rope(alab_model *m, int P) {
    const int half = m->arch.rot_dims / 2;
    if (m->arch.fam->pos != POS_ROTARY || half == 0) return ALAB_OK;
    static const int step = 256;
    if (m->rope_cos && m->rope_sin - m->rope_cos >= (ptrdiff_t)P * half) return ALAB_OK;
    int cap = ((P + step - 1) / step) * step;
    if (cap > m->cfg.n_positions) cap = m->cfg.n_positions;
    if (cap < P) cap = P;
    const int tables = m->arch.rope_local_theta > 0 ? 2 : 1;
    float *buf = malloc((size_t)cap * half * 2 * tables * sizeof(float));
    if (!buf) return alab_fail(ALAB_ENOMEM, "out of memory for the rotary tables");
    for (int k = 0; k < tables; k++) {
        float *tab = buf + (size_t)k * 2 * cap * half;
        for (int i = 0; i < half; i++) {
            const double f = alab_rope_inv_freq(&m->arch, i, k);
            for (int p = 0; p < cap; p++) {
                const double ang = (double)p * f;
                tab[(size_t)p * half + i] = (float)cos(ang);
                tab[(size_t)cap * half + (size_t)p * half + i] = (float)sin(ang);
            }
        }
    }
    free(m->rope_cos);
    m->rope_cos = buf;
    m->rope_sin = buf + (size_t)cap * half;
    return ALAB_OK;
}

/* x: rows rows of nh heads (row stride ld), rotated at positions P0.. with layer l's tables:
 * pairs (i, i + half) of the first rot_dims of each head (rotate_half). */
static void rope_apply(const alab_model *m, float *x, int ld, int rows, int nh, int P0, int l) {
    const int HS = m->arch.HS, half = m->arch.rot_dims / 2;
    const ptrdiff_t table = m->arch.rope_local[l] && m->arch.rope_local_theta > 0 ? 2 * (m->rope_sin - m->rope_cos) : 0;
    for (int t = 0; t < rows; t++) {
        const float *c = m->rope_cos + table + (size_t)(P0 + t) * half, *s = m->rope_sin + table + (size_t)(P0 + t) * half;
        for (int h = 0; h < nh; h++) {
            float *v = x + (size_t)t * ld + h * HS;
            for (int i = 0; i < half; i++) {
                const float x1 = v[i], x2 = v[i + half];
                v[i] = x1 * c[i] - x2 * s[i];
                v[i + half] = x2 * c[i] + x1 * s[i];
            }
        }
    }
}

/* ---- the block --------------------------------------------------------------------- */

void alab_embed(alab_model *m, const int *ids, int Tn, int P0) {
    const int C = m->cfg.n_embd;
    activations *a = &m->acts;
    for (int t = 0; t < Tn; t++) {
        if (m->half) { /* the row converted, then the position added */
            const uint16_t *row = (const uint16_t *)(const void *)m->wte + (size_t)ids[t] * C;
            float *x = a->x + (size_t)t * C;
            alab_half_to_f32_n(x, row, (size_t)C, m->half == ST_F16);
            if (m->wpe) add_f32(x, x, m->wpe + (size_t)(P0 + t) * C, C);
        } else if (m->wpe) /* x = wte[ids] + wpe[pos] */
            add_f32(a->x + (size_t)t * C, m->wte + (size_t)ids[t] * C, m->wpe + (size_t)(P0 + t) * C, C);
        else
            memcpy(a->x + (size_t)t * C, m->wte + (size_t)ids[t] * C, (size_t)C * sizeof(float));
        if (m->arch.embed_scale != 0.0f) /* Gemma: embed * sqrt(hidden_size), in f32 */
            for (int k = 0; k < C; k++) a->x[(size_t)t * C + k] *= m->arch.embed_scale;
    }
}

/* alab_embed from given rows (T, C) in place of wte[ids] (alab_run_opts.embed_rows): the same position add and
 * scale, so rows equal to wte[ids] give alab_embed's x bit for bit. */
static void embed_given(alab_model *m, const float *rows, int Tn) {
    const int C = m->cfg.n_embd;
    float *x = m->acts.x;
    for (int t = 0; t < Tn; t++) {
        if (m->wpe) add_f32(x + (size_t)t * C, rows + (size_t)t * C, m->wpe + (size_t)t * C, C);
        else memcpy(x + (size_t)t * C, rows + (size_t)t * C, (size_t)C * sizeof(float));
        if (m->arch.embed_scale != 0.0f)
            for (int k = 0; k < C; k++) x[(size_t)t * C + k] *= m->arch.embed_scale;
    }
}

int alab_embedding_rows(float *out, const alab_model *m, const int *ids, int T) {
    if (!out || !m || !ids) return alab_fail(ALAB_EINVAL, "alab_embedding_rows: NULL argument");
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "alab_embedding_rows: no tokens");
    const int C = m->cfg.n_embd, V = m->cfg.vocab_size;
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V)
            return alab_fail(ALAB_ERANGE, "token id %d at position %d is outside [0, %d)", ids[t], t, V);
    for (int t = 0; t < T; t++) {
        if (m->half)
            alab_half_to_f32_n(out + (size_t)t * C, (const uint16_t *)(const void *)m->wte + (size_t)ids[t] * C,
                               (size_t)C, m->half == ST_F16);
        else
            memcpy(out + (size_t)t * C, m->wte + (size_t)ids[t] * C, (size_t)C * sizeof(float));
    }
    return ALAB_OK;
}

/* q, k, v of rows [r0, r0 + nr) of h into qkv, laid out for Tn rows; *v says where they are. */
static void project_qkv(alab_model *m, const layer_weights *w, int Tn, int r0, int nr, qkv_view *v) {
    const int C = m->cfg.n_embd, DQ = m->cfg.n_head * m->arch.HS, DKV = m->arch.NKV * m->arch.HS;
    float *qkv = m->acts.qkv;
    const float *h = m->acts.h + (size_t)r0 * C;
    if (w->qkv_w) {
        const int D3 = DQ + 2 * DKV;
        alab_layer_matmul_plan(m, qkv + (size_t)r0 * D3, h, w->qkv_w, w->qkv_b, nr, C, D3, Tn);
        *v = (qkv_view){qkv, qkv + DQ, qkv + DQ + DKV, D3, D3, D3, w->qkv_b, w->qkv_b ? w->qkv_b + DQ : NULL};
    } else {
        float *k = qkv + (size_t)Tn * DQ, *vv = k + (size_t)Tn * DKV;
        alab_layer_matmul_plan(m, qkv + (size_t)r0 * DQ, h, w->q_w, w->q_b, nr, C, DQ, Tn);
        alab_layer_matmul_plan(m, k + (size_t)r0 * DKV, h, w->k_w, w->k_b, nr, C, DKV, Tn);
        alab_layer_matmul_plan(m, vv + (size_t)r0 * DKV, h, w->v_w, w->v_b, nr, C, DKV, Tn);
        *v = (qkv_view){qkv, k, vv, DQ, DKV, DKV, w->q_b, w->k_b};
    }
}

/* q/k norms and rotary positions of rows [r0, r0 + nr) of a projected qkv view. */
static void finish_qkv(alab_model *m, int l, const layer_weights *w, const qkv_view *v, int r0, int nr, int P0) {
    const alab_arch *ar = &m->arch;
    const int NH = m->cfg.n_head, HS = ar->HS, NKV = ar->NKV;
    if (ar->qk_norm)
        for (int t = r0; t < r0 + nr; t++) {
            for (int hd = 0; hd < NH; hd++) {
                float *q = v->q + (size_t)t * v->ldq + hd * HS;
                rmsnorm_forward(q, q, w->q_norm, 1, HS, ar->eps);
            }
            for (int hd = 0; hd < NKV; hd++) {
                float *k = v->k + (size_t)t * v->ldk + hd * HS;
                rmsnorm_forward(k, k, w->k_norm, 1, HS, ar->eps);
            }
        }
    if (ar->fam->pos == POS_ROTARY && ar->rot_dims) {
        rope_apply(m, v->q + (size_t)r0 * v->ldq, v->ldq, nr, NH, P0 + r0, l);
        rope_apply(m, v->k + (size_t)r0 * v->ldk, v->ldk, nr, NKV, P0 + r0, l);
    }
}

void alab_block_forward(alab_model *m, int l, int Tn, int P0, const alab_run_opts *o,
                        const intervention_index *ix, kv_cache *kv, const block_rows *br) {
    const alab_arch *ar = &m->arch;
    const int C = m->cfg.n_embd, NH = m->cfg.n_head, HS = ar->HS, NKV = ar->NKV, DQ = NH * HS, F = ar->F;
    const int DQKV = DQ + 2 * NKV * HS;
    const layer_weights *w = &m->layers[l];
    const circuit_hooks *ck = kv ? NULL : m->ck;
    activations *a = &m->acts;
    qkv_view v;
    /* the rows computed: all Tn, or (a windowed run) [r0, r0 + nr) with every other row's q, k, v from a plain run */
    const int r0 = br && br->plain_qkv ? br->w0 : 0, nr = br && br->plain_qkv ? br->w1 - br->w0 : Tn;
    float *x = a->x + (size_t)r0 * C, *h = a->h + (size_t)r0 * C;

    if (o) alab_resid_hooks(a->x, o, l, Tn, C); /* evidence: residual positions replaced / captured */
    if (ck && ck->y_frozen && l >= ck->freeze_from) {
        /* path patching: every head's output is the base run's (the patches below put the sender's on top) */
        memcpy(a->y, ck->y_frozen + (size_t)l * Tn * DQ, (size_t)Tn * DQ * sizeof(float));
    } else {
        if (ck && ck->rcv_x && l == ck->rcv_layer) { /* the receiver's inputs, from the other residual */
            norm(m, h, ck->rcv_x, w->ln1_w, w->ln1_b, Tn);
            project_qkv(m, w, Tn, 0, Tn, &v);
            finish_qkv(m, l, w, &v, 0, Tn, P0);
            memcpy(ck->rcv_qkv, a->qkv, (size_t)Tn * DQKV * sizeof(float));
        }
        norm(m, h, x, w->ln1_w, w->ln1_b, nr);
        if (br && br->plain_qkv) memcpy(a->qkv, br->plain_qkv + (size_t)l * Tn * DQKV, (size_t)Tn * DQKV * sizeof(float));
        project_qkv(m, w, Tn, r0, nr, &v);
        if (ix && ix->has_edits) alab_apply_head_edits(m, &v, l, Tn, o);
        finish_qkv(m, l, w, &v, r0, nr, P0);
        if (o && l == o->capture_layer) { /* q and k of the captured head, before scaling */
            const int hd = o->capture_head, j = hd / (NH / NKV);
            for (int t = 0; t < Tn; t++) {
                memcpy(a->q + (size_t)t * HS, v.q + (size_t)t * v.ldq + hd * HS, (size_t)HS * sizeof(float));
                memcpy(a->k + (size_t)t * HS, v.k + (size_t)t * v.ldk + j * HS, (size_t)HS * sizeof(float));
            }
        }
        if (br && br->capture_qkv) memcpy(br->capture_qkv + (size_t)l * Tn * DQKV, a->qkv, (size_t)Tn * DQKV * sizeof(float));
        if (kv) alab_attention_cached(m, &v, l, Tn, kv);
        else alab_attention_prefill(m, &v, l, Tn, o, ix, r0, r0 + nr);
    }
    if (o) alab_head_out_hooks(a->y, o, l, Tn, DQ, HS); /* evidence: head outputs replaced / captured */

    float *attn_out = (ar->parallel_residual ? a->h2 : a->h) + (size_t)r0 * C;
    alab_layer_matmul_plan(m, attn_out, a->y + (size_t)r0 * DQ, w->o_w, w->o_b, nr, DQ, C, Tn);
    if (w->post_attn_norm) rmsnorm_forward(attn_out, attn_out, w->post_attn_norm, nr, C, ar->eps);
    if (ck) { /* the attention block's output: replaced at one position, captured */
        if (ck->comp_layer == l && ck->comp_kind == 0)
            memcpy(attn_out + (size_t)ck->comp_pos * C, ck->comp_vec, (size_t)C * sizeof(float));
        if (ck->cap_attn) memcpy(ck->cap_attn + (size_t)l * Tn * C, attn_out, (size_t)Tn * C * sizeof(float));
    }
    if (!ar->parallel_residual) add_f32(x, x, h, nr * C);
    if (ck && ck->mlp_frozen && l >= ck->freeze_from) {
        memcpy(h, ck->mlp_frozen + (size_t)l * Tn * C, (size_t)Tn * C * sizeof(float));
    } else {
        norm(m, h, x, w->ln2_w, w->ln2_b, nr);
        alab_layer_matmul_plan(m, a->fc, h, w->up_w, w->up_b, nr, C, F, Tn);
        if (ar->mlp == MLP_SWIGLU || ar->mlp == MLP_GEGLU) {
            float *gate = a->fc + (size_t)nr * F;
            alab_layer_matmul_plan(m, gate, h, w->gate_w, w->gate_b, nr, C, F, Tn);
            activation(m, a->fc, gate, a->fc, nr * F);
        } else {
            activation(m, a->fc, a->fc, NULL, nr * F);
        }
        alab_layer_matmul_plan(m, h, a->fc, w->down_w, w->down_b, nr, F, C, Tn);
        if (w->post_mlp_norm) rmsnorm_forward(h, h, w->post_mlp_norm, nr, C, ar->eps);
    }
    if (ck) { /* the MLP's output: replaced at one position, captured */
        if (ck->comp_layer == l && ck->comp_kind == 1)
            memcpy(h + (size_t)ck->comp_pos * C, ck->comp_vec, (size_t)C * sizeof(float));
        if (ck->cap_mlp) memcpy(ck->cap_mlp + (size_t)l * Tn * C, h, (size_t)Tn * C * sizeof(float));
    }
    if (ar->parallel_residual) add_f32(x, x, a->h2 + (size_t)r0 * C, nr * C);
    add_f32(x, x, h, nr * C);
}

/* ---- alab_forward ------------------------------------------------------------------ */

/* What a windowed run may carry: knockouts of its own rows under a causal (or sliding-window) mask; nothing that
 * would change a row outside the window, and no capture (the other rows are not recomputed). */
static int check_window(const alab_run_opts *o, int T, int r0, int r1) {
    if (r0 < 0 || r1 > T || r0 >= r1) return alab_fail(ALAB_ERANGE, "row window [%d, %d) outside [0, %d)", r0, r1, T);
    if (o->mask == ALAB_MASK_FULL) return alab_fail(ALAB_EINVAL, "a row window needs a causal mask");
    if (o->layer_mask)
        return alab_fail(ALAB_EINVAL, "a row window takes no per-layer masks");
    if (o->n_interventions || o->n_head_patches || o->n_resid_patches || o->capture_resid || o->capture_head_out ||
        o->capture_layer >= 0 || o->embed_rows)
        return alab_fail(ALAB_EINVAL, "a row window takes knockouts only (no do, ablation, edit, patch or capture)");
    for (int k = 0; k < o->n_knockouts; k++)
        if (o->knockouts[k].row < r0 || o->knockouts[k].row >= r1)
            return alab_fail(ALAB_EINVAL, "knockout %d: row %d outside the window [%d, %d)", k, o->knockouts[k].row, r0, r1);
    return ALAB_OK;
}

int alab_forward_rows(alab_model *m, const int *ids, int T, const alab_run_opts *opts, float *capture_qkv,
                      const float *plain_qkv, int r0, int r1) {
    if (!m || (!ids && T > 0)) return alab_fail(ALAB_EINVAL, "alab_forward: NULL argument");
    alab_run_opts defaults;
    if (!opts) { alab_run_opts_init(&defaults); opts = &defaults; }
    const alab_config *c = &m->cfg;
    const int C = c->n_embd, L = c->n_layer, NH = c->n_head, V = c->vocab_size;
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "no tokens to run");
    if (T > c->n_positions)
        return alab_fail(ALAB_ETOOLONG, "%d tokens, but the model's context is %d (n_positions)", T, c->n_positions);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V)
            return alab_fail(ALAB_ERANGE, "token id %d at position %d is outside [0, %d)", ids[t], t, V);
    int rc = alab_check_opts(m, opts, T);
    if (rc) return rc;
    if ((rc = alab_check_evidence_opts(opts, L, NH, T, C, NH * m->arch.HS))) return rc;
    if (opts->embed_rows && opts->start_layer > 0)
        return alab_fail(ALAB_EINVAL, "embed_rows and start_layer: a run starts from one or the other");
    if (plain_qkv && (rc = check_window(opts, T, r0, r1))) return rc;
    if ((rc = alab_ensure_activations(m, T))) return rc;
    if ((rc = ensure_rope(m, T))) return rc;
    intervention_index ix = {0};
    if ((rc = alab_build_index(&ix, opts, L, NH, T))) return rc;
    m->T = 0; /* no valid result until this run completes */
    m->win0 = m->win1 = 0;
    m->pool_rc = 0;
    block_rows br = {capture_qkv, plain_qkv, 0, T};
    if (plain_qkv) { /* rounded out to groups of 4 rows, as the products group them */
        br.w0 = r0 / 4 * 4;
        br.w1 = (r1 + 3) / 4 * 4 < T ? (r1 + 3) / 4 * 4 : T;
    }

    activations *a = &m->acts;
    if (opts->start_layer > 0) /* the layers below are those of an earlier run of these ids */
        memcpy(a->x, opts->start_x, (size_t)T * C * sizeof(float));
    else if (opts->embed_rows)
        embed_given(m, opts->embed_rows, T);
    else
        alab_embed(m, ids, T, 0);
    for (int l = opts->start_layer; l < L; l++) {
        alab_block_forward(m, l, T, 0, opts, &ix, NULL, capture_qkv || plain_qkv ? &br : NULL);
        if (m->pool_rc) break;
    }
    /* Only the last position's logits are needed: the LM head is the largest matmul. */
    if (!plain_qkv || br.w1 == T) {
        alab_final_norm(m, a->lnf, a->x + (size_t)(T - 1) * C, 1);
        if (!m->pool_rc && !opts->no_logits) alab_lm_head(m, a->logits, a->lnf, 1);
    }
    free(ix.block);
    if (m->pool_rc) return m->pool_rc; /* a helper thread died: no result */
    memcpy(a->ids, ids, (size_t)T * sizeof(int));
    m->T = T;
    if (plain_qkv) {
        m->win0 = r0;
        m->win1 = r1;
    }
    m->has_qk = opts->capture_layer >= 0;
    return ALAB_OK;
}

int alab_forward(alab_model *m, const int *ids, int T, const alab_run_opts *opts) {
    return alab_forward_rows(m, ids, T, opts, NULL, NULL, 0, T);
}

/* The rotary tables for positions [0, P) (generate.c, before a cached run). */
int alab_ensure_positions(alab_model *m, int P) { return ensure_rope(m, P); }
