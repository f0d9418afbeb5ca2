/* backward.c — reverse mode: the gradient of one scalar of a run (a metric of its logits) with respect to the
 * run's inputs and internals, for every family, with the run's interventions differentiated as applied.
 *
 * Two calls. alab_tape_forward runs the model (alab_forward itself, with the options' interventions and masks:
 * its result is a normal run's, bit for bit) and keeps a tape: the residual stream entering every layer and
 * leaving the last one, (L + 1, T, C), and q, k, v as each layer's attention read them, captured through the
 * forward's own hooks, and the last position's logits. alab_backward then goes down the layers: for layer l it
 * recomputes what it needs of the layer's insides with the same kernel calls in the same order as forward.c's
 * block (alab_attention_prefill on the tape's q, k, v with its do-operations, masks and ablations, the output
 * projection, norm, the MLP's up/gate products; for the q/k-norm families also norm1, the projections, weight
 * edits, q/k norms and rotary positions, since their norms' backward needs q and k before the norm: the same
 * numbers bit for bit), then runs the layer backwards. Keeping only the layer inputs and q/k/v and recomputing
 * the rest is the classic checkpointing trade: the tape is 4 T ((L + 1) C + L (DQ + 2 DKV)) bytes instead of
 * every activation, for one more pass of some layer products (the backward needs no weight gradients, so a
 * layer's backward costs about one forward of its products: dX = dY W^T).
 *
 * The block backwards, for one layer (the forward in forward.c's header):
 *   MLP        d out -> [post_mlp_norm] -> down^T -> act' -> up^T (+ gate^T) -> norm2'
 *   residual   sequential: d x_mid = d x_{l+1} + norm2'(...); parallel: d x_l += norm2'(...)
 *   attention  [post_attn_norm] -> o^T = d y (the head outputs) -> per head:
 *                dA = dy v^T; dv += A^T dy; dS = A (dA - rowsum(A dA)) on the mask's keys (0 on a row a hard do
 *                replaced, and for an ablated head everything is 0: its output no longer depends on A or v);
 *                dq = scale dS k, dk += scale dS^T q
 *              -> rotary^T -> q/k norm' -> weight edits^T (in reverse order) -> projections^T -> norm1'
 * Norms, activations and the metric's softmax are differentiated in double; the products in f32 with the
 * forward's kernels: a product with W^T unpacks W (the weights are stored packed for the forward) and, from
 * BW_PACKED_MIN_T rows on, packs W^T into a second scratch for the forward's packed kernel (below that,
 * matmul_nt_forward reads the unpacked W).
 *
 * Threads: the products are split by output columns (matmul_nt_forward_part, whole strips for the LM head) and
 * the attention by key/value heads (each part owns its heads' dq and its key/value heads' dk, dv); every value
 * is computed by the same instructions whichever thread holds it, so gradients are bit for bit those of one
 * thread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "mask.h"
#include "model.h"
#include "ops.h"

/* The helpers called from several places stay functions: the wasm module is size-budgeted (wasm-forward.test.js). */
#define ALAB_NOINLINE __attribute__((noinline))

struct alab_tape {
    const alab_model *m;
    int T;
    int *ids;
    alab_run_opts o;          /* a copy, with its own arrays below */
    alab_intervention *iv;
    int *layer_mask, *layer_window;
    int plain;                /* the options change nothing: this run is the unmodified run */
    float *x;                 /* (L + 1, T, C) the residual entering layer l; [L] the one leaving the last layer */
    float *qkv;               /* (L, T, DQ + 2 DKV) q, k, v as each layer's attention read them (the qkv buffer's
                                 layout), or NULL (q/k-norm families) */
    float *logits;            /* (V) the last position's */
    float *base;              /* (V) the unmodified run's last logits (KL), filled by the first KL backward */
    int has_base;
    void *block;
};

/* ---- sizes ------------------------------------------------------------------------------ */

typedef struct {
    uint64_t C, L, NH, NKV, HS, DQ, DKV, DQKV, F, V, T;
    int keep_qkv; /* the tape keeps q, k, v as attention read them (not for q/k-norm families: their norms'
                     backward needs q and k before the norm, so those recompute the projections) */
} dims;

static dims dims_of(const alab_model *m, int T) {
    dims d;
    d.C = (uint64_t)m->cfg.n_embd;
    d.L = (uint64_t)m->cfg.n_layer;
    d.NH = (uint64_t)m->cfg.n_head;
    d.NKV = (uint64_t)m->arch.NKV;
    d.HS = (uint64_t)m->arch.HS;
    d.DQ = d.NH * d.HS;
    d.DKV = d.NKV * d.HS;
    d.DQKV = d.DQ + 2 * d.DKV;
    d.F = (uint64_t)m->arch.F;
    d.V = (uint64_t)m->cfg.vocab_size;
    d.T = (uint64_t)T;
    d.keep_qkv = !m->arch.qk_norm;
    return d;
}

#define HEAD_ROWS 32 /* rows of the LM head at a time in the loss metric */

static uint64_t tape_floats(const dims *d) {
    return (d->L + 1) * d->T * d->C + (d->keep_qkv ? d->L * d->T * d->DQKV : 0) + 2 * d->V + d->T;
}

/* The backward's scratch, in floats (see the buffers of alab_backward). */
static uint64_t scratch_floats(const dims *d) {
    const uint64_t T = d->T, C = d->C, F = d->F, R = T < HEAD_ROWS ? T : HEAD_ROWS;
    uint64_t w = d->C * d->DQKV;
    if (d->DQ * C > w) w = d->DQ * C;
    if (C * F > w) w = C * F;
    return T * (9 * C + 6 * F + 2 * d->DQKV + d->DQ) + 2 * w + (uint64_t)ALAB_MAX_THREADS * 2 * T + R * (d->V + 2 * C) +
           64 * 24;
}

/* The model's own activations for T tokens (forward.c's alab_ensure_activations, approximately from above):
 * the backward uses them as the forward does, the attention (L, NH, T, T) among them. */
static uint64_t act_floats(const dims *d) {
    const uint64_t fc = 2 * d->F > d->DQ ? 2 * d->F : d->DQ;
    return d->L * d->NH * d->T * d->T + d->T * (3 * d->C + d->DQKV + d->DQ + fc + 2 * d->HS + 1) + d->C + d->V + 12 * 16;
}

/* ALAB_ELIMIT when the tape, the backward's scratch and the model's activations would pass the limit. */
static int check_limit(const dims *d) {
    const uint64_t tf = tape_floats(d), sf = scratch_floats(d), af = act_floats(d);
    if ((tf + sf + af) * 4 <= ALAB_BACKWARD_MAX_BYTES) return ALAB_OK;
    return alab_fail(ALAB_ELIMIT, "the backward of %llu tokens needs %llu MB (tape %llu MB + backward scratch %llu MB + "
                     "the model's activations %llu MB), over ALAB_BACKWARD_MAX_BYTES (%llu MB)", (unsigned long long)d->T,
                     (unsigned long long)(((tf + sf + af) * 4 + (1u << 20) - 1) >> 20), (unsigned long long)((tf * 4) >> 20),
                     (unsigned long long)((sf * 4) >> 20), (unsigned long long)((af * 4) >> 20),
                     (unsigned long long)(ALAB_BACKWARD_MAX_BYTES >> 20));
}

static uint64_t part_floats(const dims *d, int p) {
    switch (p) {
    case ALAB_GRAD_EMBED: return d->T * d->C;
    case ALAB_GRAD_RESID: return (d->L + 1) * d->T * d->C;
    case ALAB_GRAD_HEAD_OUT: case ALAB_GRAD_Q: return d->L * d->T * d->DQ;
    case ALAB_GRAD_ATTN: case ALAB_GRAD_SCORES: return d->L * d->NH * d->T * d->T;
    case ALAB_GRAD_K: case ALAB_GRAD_V: return d->L * d->T * d->DKV;
    case ALAB_GRAD_MLP_OUT: return d->L * d->T * d->C;
    default: return 0;
    }
}


int alab_grad_layout(size_t *offsets, const alab_model *m, int T, int want) {
    if (!offsets || !m) return alab_fail(ALAB_EINVAL, "alab_grad_layout: NULL argument");
    if (want & ~ALAB_GRAD_ALL) return alab_fail(ALAB_EINVAL, "alab_grad_layout: want 0x%x names no part", want);
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "alab_grad_layout: no tokens");
    if (T > m->cfg.n_positions)
        return alab_fail(ALAB_ETOOLONG, "%d tokens, but the model's context is %d", T, m->cfg.n_positions);
    const dims d = dims_of(m, T);
    uint64_t off = 0;
    for (int p = 0; p < ALAB_GRAD_PARTS; p++) {
        if (off * 4 > ALAB_BACKWARD_MAX_BYTES) break;
        offsets[p] = (size_t)off;
        if (want & (1 << p)) off += part_floats(&d, p);
    }
    if (off * 4 > ALAB_BACKWARD_MAX_BYTES)
        return alab_fail(ALAB_ELIMIT, "the gradient block of %d tokens needs %llu MB, over ALAB_BACKWARD_MAX_BYTES (%llu MB)",
                         T, (unsigned long long)((off * 4 + (1u << 20) - 1) >> 20),
                         (unsigned long long)(ALAB_BACKWARD_MAX_BYTES >> 20));
    offsets[ALAB_GRAD_PARTS] = (size_t)off;
    return ALAB_OK;
}

/* ---- the tape ------------------------------------------------------------------------------ */

void alab_tape_free(alab_tape *tp) {
    if (!tp) return;
    free(tp->block);
    free(tp);
}

size_t alab_tape_bytes(const alab_tape *tp) {
    if (!tp) return 0;
    const dims d = dims_of(tp->m, tp->T);
    return (size_t)(tape_floats(&d) * 4);
}

int alab_tape_forward(alab_tape **out, alab_model *m, const int *ids, int T, const alab_run_opts *opts) {
    if (!out) return alab_fail(ALAB_EINVAL, "alab_tape_forward: NULL out");
    *out = NULL;
    if (!m || (!ids && T > 0)) return alab_fail(ALAB_EINVAL, "alab_tape_forward: NULL argument");
    alab_run_opts defaults;
    if (!opts) { alab_run_opts_init(&defaults); opts = &defaults; }
    if (opts->n_knockouts || opts->n_head_patches || opts->n_resid_patches || opts->capture_resid ||
        opts->capture_head_out || opts->start_layer)
        return alab_fail(ALAB_EINVAL, "alab_tape_forward: knockouts, patches, captures of the residual or head "
                         "outputs and start_layer are not differentiated (do, ablation, weight edits and masks are)");
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "no tokens to run");
    if (T > m->cfg.n_positions)
        return alab_fail(ALAB_ETOOLONG, "%d tokens, but the model's context is %d (n_positions)", T, m->cfg.n_positions);
    if (opts->n_interventions < 0 || opts->n_interventions > ALAB_MAX_INTERVENTIONS ||
        (opts->n_interventions && !opts->interventions))
        return alab_fail(opts->n_interventions > ALAB_MAX_INTERVENTIONS ? ALAB_ELIMIT : ALAB_EINVAL,
                         "n_interventions is %d (at most %d, with an array)", opts->n_interventions,
                         ALAB_MAX_INTERVENTIONS);
    const dims d = dims_of(m, T);
    const uint64_t tf = tape_floats(&d);
    int rc = check_limit(&d);
    if (rc) return rc;
    const int L = m->cfg.n_layer, n_iv = opts->n_interventions;
    const size_t lm = opts->layer_mask ? (size_t)L : 0, lw = opts->layer_mask && opts->layer_window ? (size_t)L : 0;
    alab_tape *tp = calloc(1, sizeof *tp);
    if (!tp) return alab_fail(ALAB_ENOMEM, "out of memory for the tape");
    const size_t bytes = (size_t)tf * sizeof(float) + (size_t)n_iv * sizeof(alab_intervention) + (lm + lw) * sizeof(int) + 64;
    tp->block = malloc(bytes);
    if (!tp->block) {
        free(tp);
        return alab_fail(ALAB_ENOMEM, "cannot allocate %llu MB for the tape of %d tokens",
                         (unsigned long long)(bytes >> 20), T);
    }
    tp->m = m;
    tp->T = T;
    tp->x = tp->block;
    tp->qkv = d.keep_qkv ? tp->x + (size_t)(d.L + 1) * T * d.C : NULL;
    tp->logits = tp->x + (size_t)(d.L + 1) * T * d.C + (d.keep_qkv ? (size_t)d.L * T * d.DQKV : 0);
    tp->base = tp->logits + d.V;
    tp->ids = (int *)(void *)(tp->base + d.V);
    tp->iv = (alab_intervention *)(void *)(tp->ids + T); /* ints and floats are 4 bytes: aligned as alab_intervention */
    tp->layer_mask = (int *)(void *)(tp->iv + n_iv);
    tp->layer_window = tp->layer_mask + lm;
    memcpy(tp->ids, ids, (size_t)T * sizeof(int));
    if (n_iv) memcpy(tp->iv, opts->interventions, (size_t)n_iv * sizeof(alab_intervention));
    if (lm) memcpy(tp->layer_mask, opts->layer_mask, lm * sizeof(int));
    if (lw) memcpy(tp->layer_window, opts->layer_window, lw * sizeof(int));
    tp->o = *opts;
    tp->o.interventions = n_iv ? tp->iv : NULL;
    tp->o.layer_mask = lm ? tp->layer_mask : NULL;
    tp->o.layer_window = lw ? tp->layer_window : NULL;
    tp->o.no_logits = 0;
    tp->plain = n_iv == 0 && opts->mask == ALAB_MASK_CAUSAL && !opts->layer_mask && !opts->scale_override &&
                !opts->embed_rows;
    tp->o.embed_rows = NULL; /* read by the forward below only: the backward starts from the tape's x */

    alab_run_opts run = tp->o;
    run.embed_rows = opts->embed_rows;
    run.capture_resid = tp->x; /* the forward's own hooks: x_l entering layer l, (L, T, C), and q, k, v */
    rc = alab_forward_rows(m, ids, T, &run, tp->qkv, NULL, 0, T); /* = alab_forward, with the q/k/v capture */
    if (rc != ALAB_OK) {
        alab_tape_free(tp);
        return rc;
    }
    memcpy(tp->x + (size_t)d.L * T * d.C, m->acts.x, (size_t)T * d.C * sizeof(float));
    memcpy(tp->logits, m->acts.logits, (size_t)d.V * sizeof(float));
    *out = tp;
    return ALAB_OK;
}

/* ---- pieces of the forward, as forward.c computes them -------------------------------------------------- */

static void norm_fwd(const alab_model *m, float *out, const float *inp, const float *w, const float *b, int T) {
    if (m->arch.fam->norm == NORM_LAYERNORM) layernorm_forward(out, inp, w, b, T, m->cfg.n_embd, m->arch.eps);
    else rmsnorm_forward(out, inp, w, T, m->cfg.n_embd, m->arch.eps);
}

/* forward.c's rope_apply (positions from 0), and its transpose (dir -1: the inverse rotation). */
static ALAB_NOINLINE void rope_rows(const alab_model *m, float *x, int ld, int rows, int nh, int l, int dir) {
    const int HS = m->arch.HS, half = m->arch.rot_dims / 2;
    const ptrdiff_t table = m->arch.rope_local[l] && m->arch.rope_local_theta > 0 ? 2 * (m->rope_sin - m->rope_cos) : 0;
    for (int t = 0; t < rows; t++) {
        const float *c = m->rope_cos + table + (size_t)t * half, *s = m->rope_sin + table + (size_t)t * half;
        for (int h = 0; h < nh; h++) {
            float *v = x + (size_t)t * ld + h * HS;
            for (int i = 0; i < half; i++) {
                const float x1 = v[i], x2 = v[i + half];
                if (dir > 0) {
                    v[i] = x1 * c[i] - x2 * s[i];
                    v[i + half] = x2 * c[i] + x1 * s[i];
                } else {
                    v[i] = x1 * c[i] + x2 * s[i];
                    v[i + half] = x2 * c[i] - x1 * s[i];
                }
            }
        }
    }
}

/* Where q, k and v of T rows are in the qkv buffer (forward.c's layout: fused [q | k | v] rows, or q, k, v one
 * after the other). */
static qkv_view qkv_view_of(alab_model *m, const layer_weights *w, int T) {
    const int DQ = m->cfg.n_head * m->arch.HS, DKV = m->arch.NKV * m->arch.HS;
    float *qkv = m->acts.qkv;
    if (w->qkv_w) {
        const int D3 = DQ + 2 * DKV;
        return (qkv_view){qkv, qkv + DQ, qkv + DQ + DKV, D3, D3, D3, w->qkv_b, w->qkv_b ? w->qkv_b + DQ : NULL};
    }
    float *k = qkv + (size_t)T * DQ, *v = k + (size_t)T * DKV;
    return (qkv_view){qkv, k, v, DQ, DKV, DKV, w->q_b, w->k_b};
}

static qkv_view project(alab_model *m, const layer_weights *w, const float *h, int T) {
    const int C = m->cfg.n_embd, DQ = m->cfg.n_head * m->arch.HS, DKV = m->arch.NKV * m->arch.HS;
    const qkv_view v = qkv_view_of(m, w, T);
    if (w->qkv_w) alab_layer_matmul(m, v.q, h, w->qkv_w, w->qkv_b, T, C, DQ + 2 * DKV);
    else {
        alab_layer_matmul(m, v.q, h, w->q_w, w->q_b, T, C, DQ);
        alab_layer_matmul(m, v.k, h, w->k_w, w->k_b, T, C, DKV);
        alab_layer_matmul(m, v.v, h, w->v_w, w->v_b, T, C, DKV);
    }
    return v;
}

static void activation_fwd(int kind, float *out, const float *inp, const float *up, int n) {
    switch (kind) {
    case MLP_GELU_TANH: gelu_forward(out, inp, n); break;
    case MLP_GELU_EXACT: gelu_exact_forward(out, inp, n); break;
    case MLP_GEGLU: geglu_forward(out, inp, up, n); break;
    default: swiglu_forward(out, inp, up, n); break;
    }
}

/* ---- derivatives of the elementwise pieces (double) ------------------------------------------------------ */

/* dx (+)= the gradient through LayerNorm / RMSNorm of rows x (rows, n), gain w, given dy. */
static ALAB_NOINLINE void norm_bwd(int layer_norm, float *dx, const float *x, const float *w, const float *dy, int rows, int n,
                     float eps, int accumulate) {
    for (int t = 0; t < rows; t++) {
        const float *xr = x + (size_t)t * n, *gr = dy + (size_t)t * n;
        float *out = dx + (size_t)t * n;
        double mean = 0.0, var = 0.0;
        if (layer_norm) {
            for (int c = 0; c < n; c++) mean += xr[c];
            mean /= n;
        }
        for (int c = 0; c < n; c++) var += ((double)xr[c] - mean) * ((double)xr[c] - mean);
        var /= n;
        const double rstd = 1.0 / sqrt(var + (double)eps);
        double mg = 0.0, mgx = 0.0;
        for (int c = 0; c < n; c++) {
            const double g = (double)gr[c] * w[c], xh = ((double)xr[c] - mean) * rstd;
            mg += g;
            mgx += g * xh;
        }
        mg /= n;
        mgx /= n;
        if (!layer_norm) mg = 0.0;
        for (int c = 0; c < n; c++) {
            const double g = (double)gr[c] * w[c], xh = ((double)xr[c] - mean) * rstd;
            const float v = (float)(rstd * (g - mg - xh * mgx));
            out[c] = accumulate ? out[c] + v : v;
        }
    }
}

static double gelu_tanh_d(double x, double *val) {
    const double k = 0.7978845608028654, u = k * (x + 0.044715 * x * x * x), th = tanh(u);
    if (val) *val = 0.5 * x * (1.0 + th);
    return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * k * (1.0 + 3.0 * 0.044715 * x * x);
}

/* d up (and d gate for the gated kinds) from d act; up / gate as the products left them. */
static ALAB_NOINLINE void activation_bwd(int kind, float *dup, float *dgate, const float *dact, const float *up, const float *gate,
                           size_t n) {
    for (size_t i = 0; i < n; i++) {
        const double g = dact[i];
        switch (kind) {
        case MLP_GELU_TANH: dup[i] = (float)(g * gelu_tanh_d(up[i], NULL)); break;
        case MLP_GELU_EXACT: {
            const double x = up[i];
            dup[i] = (float)(g * (0.5 * (1.0 + erf(x * 0.7071067811865476)) + x * exp(-0.5 * x * x) * 0.3989422804014327));
            break;
        }
        case MLP_GEGLU: {
            double val;
            const double d = gelu_tanh_d(gate[i], &val);
            dup[i] = (float)(g * val);
            dgate[i] = (float)(g * up[i] * d);
            break;
        }
        default: { /* SwiGLU: silu(gate) * up */
            const double x = gate[i], s = 1.0 / (1.0 + exp(-x));
            dup[i] = (float)(g * x * s);
            dgate[i] = (float)(g * up[i] * s * (1.0 + x * (1.0 - s)));
            break;
        }
        }
    }
}

/* ---- products with the transposed weights ----------------------------------------------------------------- */

typedef struct {
    float *out;
    const float *inp, *w;
    int T, C, OC;
} nt_job;

static void nt_part(void *ctx, int part, int nparts) {
    const nt_job *j = ctx;
    matmul_nt_forward_part(j->out, j->inp, j->w, j->T, j->C, j->OC, part, nparts);
}

/* w (C, OC), as the model keeps it (packed, 16-bit or plain), as a plain row-major matrix. */
static const float *plain_weights(alab_model *m, const float *w, int C, int OC, float *buf) {
    if (m->half) return alab_half_matrix(m, w, (size_t)C * OC);
    if (m->packed) {
        matmul_unpack_weights(buf, w, C, OC);
        return buf;
    }
    return w;
}

typedef struct {
    float *out;
    const float *inp, *wp;
    int T, C, OC;
} mm_job;

static void mm_part(void *ctx, int part, int nparts) {
    const mm_job *j = ctx;
    matmul_packed_forward_part(j->out, j->inp, j->wp, NULL, j->T, j->C, j->OC, part, nparts);
}

/* From this many rows on, a product with w^T packs w^T first (two copies of the matrix) and runs the packed
 * kernel of the forward pass; below, matmul_nt_forward reads the unpacked w directly (measured at T = 128 on
 * distilgpt2's shapes: the packed kernel with its copies takes ~0.6 of the nt kernel's time; BENCHMARKS.md). */
#define BW_PACKED_MIN_T 32

/* din (T, C) (+)= dout (T, OC) @ w^T, w (C, OC) one of the layer's matrices; tmp (T, C) when accumulating;
 * wbuf, wbuf2 room for one matrix each. */
static void back_product(alab_model *m, float *din, const float *dout, const float *w, int T, int C, int OC,
                         float *wbuf, float *wbuf2, float *tmp, int accumulate) {
    const float *plain = plain_weights(m, w, C, OC, wbuf);
    float *out = accumulate ? tmp : din;
    if (T >= BW_PACKED_MIN_T) {
        matmul_pack_weights_t(wbuf2, plain, OC, C); /* w^T (OC, C) packed, from its transpose w */
        mm_job j = {out, dout, wbuf2, T, OC, C};
        alab_run_job(m, alab_parts_for(m, (double)T * C * OC), mm_part, &j);
    } else {
        nt_job j = {out, dout, plain, T, OC, C};
        alab_run_job(m, alab_parts_for(m, (double)T * C * OC), nt_part, &j);
    }
    if (accumulate) add_f32(din, din, tmp, T * C);
}

/* dh (R, C) = dz (R, V) @ head (V, C): split by output columns in whole strips of the packed kernel's width, so
 * every column is the same instructions on any number of threads. */
typedef struct {
    float *out;
    const float *dz, *w;
    int R, V, C;
} head_job;

static void head_part(void *ctx, int part, int nparts) {
    const head_job *j = ctx;
    const int unit = matmul_packed_strip(), units = (j->C + unit - 1) / unit;
    int c0 = (int)((long long)units * part / nparts) * unit, c1 = (int)((long long)units * (part + 1) / nparts) * unit;
    if (c1 > j->C) c1 = j->C;
    if (c0 < c1) matmul_forward_ld(j->out + c0, j->C, j->dz, j->V, j->w + c0, j->C, NULL, j->R, j->V, c1 - c0);
}

static void head_backward(alab_model *m, float *dh, const float *dz, int R, float *tmp) {
    const int C = m->cfg.n_embd, V = m->cfg.vocab_size;
    if (m->half) { /* blocks of rows converted to f32 in turn, as alab_lm_head reads them */
        const uint16_t *w16 = (const uint16_t *)(const void *)m->lm_head;
        for (int v0 = 0; v0 < V; v0 += ALAB_HEAD_BLOCK) {
            const int nb = V - v0 < ALAB_HEAD_BLOCK ? V - v0 : ALAB_HEAD_BLOCK;
            const float *blk = alab_half_matrix(m, (const float *)(const void *)(w16 + (size_t)v0 * C), (size_t)nb * C);
            matmul_forward_ld(v0 ? tmp : dh, C, dz + v0, V, blk, C, NULL, R, nb, C);
            if (v0) add_f32(dh, dh, tmp, R * C);
        }
        return;
    }
    head_job j = {dh, dz, m->lm_head, R, V, C};
    alab_run_job(m, alab_parts_for(m, (double)R * V * C), head_part, &j);
}

/* ---- attention backwards ------------------------------------------------------------------------------------- */

typedef struct {
    alab_model *m;
    const qkv_view *v;      /* q, k, v as attention read them */
    const qkv_view *dv;     /* their gradients, the same layout */
    const float *att;       /* (NH, T, T) of this layer */
    const float *dy;        /* (T, DQ) */
    float *dA, *dS;         /* (NH, T, T) of this layer, or NULL */
    float *rows;            /* ALAB_MAX_THREADS x 2T */
    const alab_run_opts *o;
    const intervention_index *ix;
    int l, T, mode, window;
    float scale;
} attn_bw_job;

static int hard_row(const attn_bw_job *j, int h, int i) {
    const intervention_index *ix = j->ix;
    const size_t g = (size_t)j->l * j->T + i;
    for (int s = ix->start[g]; s < ix->start[g + 1]; s++) {
        const alab_intervention *v = &j->o->interventions[ix->idx[s]];
        if (v->kind == ALAB_DO_HARD && (v->head == ALAB_ALL_HEADS || v->head == h)) return 1;
    }
    return 0;
}

static void attn_bw_groups(const attn_bw_job *j, int g0, int g1, float *rows) {
    const alab_model *m = j->m;
    const int T = j->T, NH = m->cfg.n_head, HS = m->arch.HS, G = NH / m->arch.NKV, DQ = NH * HS;
    const qkv_view *v = j->v, *d = j->dv;
    for (int g = g0; g < g1; g++) {
        for (int t = 0; t < T; t++) {
            memset(d->k + (size_t)t * d->ldk + g * HS, 0, (size_t)HS * sizeof(float));
            memset(d->v + (size_t)t * d->ldv + g * HS, 0, (size_t)HS * sizeof(float));
        }
        for (int h = g * G; h < (g + 1) * G; h++) {
            const int ablated = j->ix->ablated[j->l * NH + h];
            for (int i = 0; i < T; i++) {
                float *dA = j->dA ? j->dA + ((size_t)h * T + i) * T : rows;
                float *dS = j->dS ? j->dS + ((size_t)h * T + i) * T : rows + T;
                float *dq = d->q + (size_t)i * d->ldq + h * HS;
                const float *dyi = j->dy + (size_t)i * DQ + h * HS, *A = j->att + ((size_t)h * T + i) * T;
                const float *qi = v->q + (size_t)i * v->ldq + h * HS;
                memset(dq, 0, (size_t)HS * sizeof(float));
                memset(dS, 0, (size_t)T * sizeof(float));
                if (ablated) { /* y_h := 0: nothing of A, q, k or v reaches the output */
                    memset(dA, 0, (size_t)T * sizeof(float));
                    continue;
                }
                for (int k = 0; k < T; k++) dA[k] = dot_f32(dyi, v->v + (size_t)k * v->ldv + g * HS, HS);
                for (int k = 0; k < T; k++)
                    if (A[k] != 0.0f) axpy_f32(d->v + (size_t)k * d->ldv + g * HS, A[k], dyi, HS);
                if (hard_row(j, h, i)) continue; /* the row was replaced after the softmax: no path to the scores */
                int lo, hi;
                alab_mask_range(&lo, &hi, j->mode, j->window, i, T);
                double s = 0.0;
                for (int k = lo; k < hi; k++) s += (double)A[k] * dA[k];
                for (int k = lo; k < hi; k++) dS[k] = (float)((double)A[k] * ((double)dA[k] - s));
                for (int k = lo; k < hi; k++) {
                    if (dS[k] == 0.0f) continue;
                    const float c = j->scale * dS[k];
                    axpy_f32(dq, c, v->k + (size_t)k * v->ldk + g * HS, HS);
                    axpy_f32(d->k + (size_t)k * d->ldk + g * HS, c, qi, HS);
                }
            }
        }
    }
}

static void attn_bw_part(void *ctx, int part, int nparts) {
    const attn_bw_job *j = ctx;
    int g0, g1;
    alab_split(&g0, &g1, j->m->arch.NKV, part, nparts);
    attn_bw_groups(j, g0, g1, j->rows + (size_t)part * 2 * j->T);
}

/* The weight edits of layer l backwards (interventions.c's alab_apply_head_edits, in reverse order). */
static ALAB_NOINLINE void edits_backward(const alab_model *m, const qkv_view *d, int l, int T, const alab_run_opts *o) {
    const int NH = m->cfg.n_head, HS = m->arch.HS, NKV = m->arch.NKV, G = NH / NKV;
    float tmp[1024]; /* HS <= 1024 (family.c) */
    for (int s = o->n_interventions - 1; s >= 0; s--) {
        const alab_intervention *v = &o->interventions[s];
        if (v->layer != l || alab_iv_kind_of(v->kind)->acts_on != IV_ON_WEIGHTS) continue;
        if (v->kind != ALAB_SWAP_QK && v->alpha == 1.0f) continue;
        for (int jj = 0; jj < NKV; jj++) {
            if (v->head != ALAB_ALL_HEADS && v->head / G != jj) continue;
            const int h_lo = v->head == ALAB_ALL_HEADS ? jj * G : v->head;
            const int h_hi = v->head == ALAB_ALL_HEADS ? (jj + 1) * G : v->head + 1;
            for (int t = 0; t < T; t++) {
                float *dk = d->k + (size_t)t * d->ldk + jj * HS;
                if (v->kind == ALAB_SCALE_K) {
                    for (int c = 0; c < HS; c++) dk[c] *= v->alpha;
                    continue;
                }
                if (v->kind == ALAB_SCALE_Q) {
                    for (int h = h_lo; h < h_hi; h++) {
                        float *dq = d->q + (size_t)t * d->ldq + h * HS;
                        for (int c = 0; c < HS; c++) dq[c] *= v->alpha;
                    }
                    continue;
                }
                /* swap: q_h := k_j (h in [h_lo, h_hi)), k_j := q_{h_lo} */
                memcpy(tmp, dk, (size_t)HS * sizeof(float));
                memset(dk, 0, (size_t)HS * sizeof(float));
                for (int h = h_lo; h < h_hi; h++) {
                    float *dq = d->q + (size_t)t * d->ldq + h * HS;
                    for (int c = 0; c < HS; c++) dk[c] += dq[c];
                    memset(dq, 0, (size_t)HS * sizeof(float));
                }
                memcpy(d->q + (size_t)t * d->ldq + h_lo * HS, tmp, (size_t)HS * sizeof(float));
            }
        }
    }
}

/* ---- the metric ---------------------------------------------------------------------------------------------- */

/* log sum exp of z (V), in double. */
static ALAB_NOINLINE double log_sum_exp(const float *z, int V) {
    double mx = -INFINITY, s = 0.0;
    for (int v = 0; v < V; v++) if (z[v] > mx) mx = z[v];
    for (int v = 0; v < V; v++) s += exp((double)z[v] - mx);
    return mx + log(s);
}

/* ---- alab_backward -------------------------------------------------------------------------------------------- */

/* One backward's state: its model and tape, sizes, scratch (one block) and the caller's parts (NULL: not asked). */
typedef struct {
    alab_model *m;
    alab_tape *tp;
    const alab_run_opts *o;
    intervention_index ix;
    int T, C, L, NH, HS, DQ, DKV, DQKV, F, V, R, glu, ln;
    size_t TC, TF;
    /* the layer's recomputed insides */
    float *xm, *ao, *ao_pre, *h2, *up, *gate, *act, *down_pre, *pre;
    /* gradients: dx the residual's (entering the layer below once a layer is done), dxm the one between the
       sublayers, the rest within a layer */
    float *dx, *dxm, *dtmp, *dh, *dup, *dgate, *dact, *dqkv, *dY;
    float *wbuf, *wbuf2, *rows, *zb, *hb, *dhb;
    float *g[ALAB_GRAD_PARTS];
    void *block;
} bw_state;

static int bw_setup(bw_state *s, float *grads, const size_t *off, int want, uint64_t sf) {
    alab_model *m = s->m;
    const dims d = dims_of(m, s->T);
    int rc = alab_build_index(&s->ix, s->o, m->cfg.n_layer, m->cfg.n_head, s->T);
    if (rc) return rc;
    s->block = malloc((size_t)sf * sizeof(float));
    if (!s->block) {
        free(s->ix.block);
        return alab_fail(ALAB_ENOMEM, "cannot allocate %llu MB for the backward of %d tokens",
                         (unsigned long long)((sf * 4) >> 20), s->T);
    }
    s->C = (int)d.C, s->L = (int)d.L, s->NH = (int)d.NH, s->HS = (int)d.HS, s->DQ = (int)d.DQ, s->DKV = (int)d.DKV;
    s->DQKV = (int)d.DQKV, s->F = (int)d.F, s->V = (int)d.V, s->R = s->T < HEAD_ROWS ? s->T : HEAD_ROWS;
    s->glu = m->arch.mlp == MLP_SWIGLU || m->arch.mlp == MLP_GEGLU;
    s->ln = m->arch.fam->norm == NORM_LAYERNORM;
    s->TC = (size_t)s->T * s->C;
    s->TF = (size_t)s->T * s->F;
    uint64_t wn = d.C * d.DQKV;
    if (d.DQ * d.C > wn) wn = d.DQ * d.C;
    if (d.C * d.F > wn) wn = d.C * d.F;
    float *p = s->block; /* each buffer 64-byte aligned: scratch_floats counts 16 floats of slack per buffer */
#define TAKE(n) (p += ((size_t)(n) + 15) / 16 * 16, p - ((size_t)(n) + 15) / 16 * 16)
    s->dx = TAKE(s->TC), s->dxm = TAKE(s->TC), s->xm = TAKE(s->TC), s->ao = TAKE(s->TC), s->ao_pre = TAKE(s->TC);
    s->h2 = TAKE(s->TC), s->dtmp = TAKE(s->TC), s->dh = TAKE(s->TC), s->down_pre = TAKE(s->TC);
    s->up = TAKE(s->TF), s->gate = TAKE(s->TF), s->act = TAKE(s->TF), s->dup = TAKE(s->TF), s->dgate = TAKE(s->TF);
    s->dact = TAKE(s->TF);
    s->pre = TAKE((size_t)s->T * s->DQKV), s->dqkv = TAKE((size_t)s->T * s->DQKV), s->dY = TAKE((size_t)s->T * s->DQ);
    s->wbuf = TAKE(wn), s->wbuf2 = TAKE(wn), s->rows = TAKE((size_t)ALAB_MAX_THREADS * 2 * s->T);
    s->zb = TAKE((size_t)s->R * s->V), s->hb = TAKE((size_t)s->R * s->C), s->dhb = TAKE((size_t)s->R * s->C);
#undef TAKE
    for (int k = 0; k < ALAB_GRAD_PARTS; k++) s->g[k] = want & (1 << k) ? grads + off[k] : NULL;
    return ALAB_OK;
}

/* The metric's value, and its gradient with respect to the residual leaving the last layer into s->dx. */
static double metric_backward(bw_state *s, int metric, int a, int b) {
    alab_model *m = s->m;
    const alab_tape *tp = s->tp;
    const int T = s->T, C = s->C, V = s->V, R = s->R;
    const float *xL = tp->x + (size_t)s->L * s->TC;
    double val = 0.0;
    memset(s->dx, 0, s->TC * sizeof(float));
    if (metric == ALAB_METRIC_LOSS) { /* R rows of the LM head at a time */
        for (int t0 = 0; t0 < T - 1 && !m->pool_rc; t0 += R) {
            const int nr = T - 1 - t0 < R ? T - 1 - t0 : R;
            alab_final_norm(m, s->hb, xL + (size_t)t0 * C, nr);
            alab_lm_head(m, s->zb, s->hb, nr);
            for (int r = 0; r < nr; r++) { /* -log q[y] / (T - 1): d/dz = (q - e_y) / (T - 1) */
                float *z = s->zb + (size_t)r * V;
                const int y = tp->ids[t0 + r + 1];
                const double lse = log_sum_exp(z, V);
                val -= (double)z[y] - lse;
                for (int v = 0; v < V; v++) z[v] = (float)(exp((double)z[v] - lse) / (T - 1));
                z[y] -= (float)(1.0 / (T - 1));
            }
            head_backward(m, s->dhb, s->zb, nr, s->hb);
            norm_bwd(s->ln, s->dx + (size_t)t0 * C, xL + (size_t)t0 * C, m->lnf_w, s->dhb, nr, C, m->arch.eps, 0);
        }
        return val / (T - 1);
    }
    const float *z = tp->logits;
    float *dz = s->zb;
    memset(dz, 0, (size_t)V * sizeof(float));
    if (metric == ALAB_METRIC_LOGIT_DIFF) {
        val = (double)z[a] - z[b];
        dz[a] += 1.0f;
        dz[b] -= 1.0f;
    } else if (metric == ALAB_METRIC_LOGPROB) { /* log q[a]: d/dz = e_a - q */
        const double lse = log_sum_exp(z, V);
        val = (double)z[a] - lse;
        for (int v = 0; v < V; v++) dz[v] = (float)-exp((double)z[v] - lse);
        dz[a] += 1.0f;
    } else { /* KL(p_base || q) = sum p (log p - log q); d/dz = q - p */
        const double lq = log_sum_exp(z, V), lp = log_sum_exp(tp->base, V);
        for (int v = 0; v < V; v++) {
            const double pl = (double)tp->base[v] - lp, ql = (double)z[v] - lq, pv = exp(pl);
            if (pv > 0.0) val += pv * (pl - ql);
            dz[v] = (float)(exp(ql) - pv);
        }
    }
    head_backward(m, s->dhb, dz, 1, s->hb);
    norm_bwd(s->ln, s->dx + (size_t)(T - 1) * C, xL + (size_t)(T - 1) * C, m->lnf_w, s->dhb, 1, C, m->arch.eps, 0);
    return val;
}

/* Layer l again from the tape's x_l, with forward.c's block's calls in its order (so the same numbers): q, k, v
 * as attention reads them (*v, in m->acts.qkv), the attention (m->acts.att, m->acts.y) and what the backward
 * reads of the rest (s->pre, ao_pre, xm, up, gate, down_pre). */
static void recompute_layer(bw_state *s, int l, qkv_view *v) {
    alab_model *m = s->m;
    const layer_weights *w = &m->layers[l];
    const alab_arch *ar = &m->arch;
    activations *acts = &m->acts;
    const int T = s->T, C = s->C, HS = s->HS;
    const float *xl = s->tp->x + (size_t)l * s->TC;
    if (s->tp->qkv) { /* q, k, v from the tape: no norm, projections, edits or rotary positions to redo */
        const size_t n = (size_t)T * s->DQKV;
        memcpy(acts->qkv, s->tp->qkv + (size_t)l * n, n * sizeof(float));
        *v = qkv_view_of(m, w, T);
    } else {
        norm_fwd(m, acts->h, xl, w->ln1_w, w->ln1_b, T);
        *v = project(m, w, acts->h, T);
        if (s->ix.has_edits) alab_apply_head_edits(m, v, l, T, s->o);
    }
    if (ar->qk_norm) {
        memcpy(s->pre, acts->qkv, (size_t)T * s->DQKV * sizeof(float));
        for (int t = 0; t < T; t++) {
            for (int hd = 0; hd < s->NH; hd++) {
                float *q = v->q + (size_t)t * v->ldq + hd * HS;
                rmsnorm_forward(q, q, w->q_norm, 1, HS, ar->eps);
            }
            for (int hd = 0; hd < ar->NKV; hd++) {
                float *k = v->k + (size_t)t * v->ldk + hd * HS;
                rmsnorm_forward(k, k, w->k_norm, 1, HS, ar->eps);
            }
        }
    }
    if (ar->fam->pos == POS_ROTARY && ar->rot_dims && !s->tp->qkv) {
        rope_rows(m, v->q, v->ldq, T, s->NH, l, 1);
        rope_rows(m, v->k, v->ldk, T, ar->NKV, l, 1);
    }
    alab_attention_prefill(m, v, l, T, s->o, &s->ix, 0, T);
    alab_layer_matmul(m, s->ao, acts->y, w->o_w, w->o_b, T, s->DQ, C);
    if (w->post_attn_norm) {
        memcpy(s->ao_pre, s->ao, s->TC * sizeof(float));
        rmsnorm_forward(s->ao, s->ao, w->post_attn_norm, T, C, ar->eps);
    }
    if (!ar->parallel_residual) add_f32(s->xm, xl, s->ao, (int)s->TC);
    norm_fwd(m, s->h2, ar->parallel_residual ? xl : s->xm, w->ln2_w, w->ln2_b, T);
    alab_layer_matmul(m, s->up, s->h2, w->up_w, w->up_b, T, C, s->F);
    if (s->glu) alab_layer_matmul(m, s->gate, s->h2, w->gate_w, w->gate_b, T, C, s->F);
    if (w->post_mlp_norm) {
        activation_fwd(ar->mlp, s->act, s->glu ? s->gate : s->up, s->up, (int)s->TF);
        alab_layer_matmul(m, s->down_pre, s->act, w->down_w, w->down_b, T, s->F, C);
    }
}

/* The MLP of layer l backwards from s->dx (the residual leaving the layer); leaves s->dxm = the gradient of the
 * residual between the sublayers (sequential) or, parallel, the part of d x_l that comes through the MLP and
 * the skip. */
static void mlp_backward(bw_state *s, int l) {
    alab_model *m = s->m;
    const layer_weights *w = &m->layers[l];
    const alab_arch *ar = &m->arch;
    const int T = s->T, C = s->C, F = s->F;
    if (s->g[ALAB_GRAD_MLP_OUT]) memcpy(s->g[ALAB_GRAD_MLP_OUT] + (size_t)l * s->TC, s->dx, s->TC * sizeof(float));
    const float *ddown = s->dx;
    if (w->post_mlp_norm) {
        norm_bwd(0, s->dtmp, s->down_pre, w->post_mlp_norm, s->dx, T, C, ar->eps, 0);
        ddown = s->dtmp;
    }
    back_product(m, s->dact, ddown, w->down_w, T, F, C, s->wbuf, s->wbuf2, NULL, 0);
    activation_bwd(ar->mlp, s->dup, s->dgate, s->dact, s->up, s->gate, s->TF);
    back_product(m, s->dh, s->dup, w->up_w, T, C, F, s->wbuf, s->wbuf2, NULL, 0);
    if (s->glu) back_product(m, s->dh, s->dgate, w->gate_w, T, C, F, s->wbuf, s->wbuf2, s->dtmp, 1);
    memcpy(s->dxm, s->dx, s->TC * sizeof(float));
    const float *x2 = ar->parallel_residual ? s->tp->x + (size_t)l * s->TC : s->xm;
    norm_bwd(s->ln, s->dxm, x2, w->ln2_w, s->dh, T, C, ar->eps, 1);
}

/* The attention of layer l backwards, from the gradient of its output (what it adds to the residual) to
 * s->dh, the gradient of norm1's output; q, k, v (*v) as recompute_layer left them. */
static void attention_backward(bw_state *s, int l, const qkv_view *v) {
    alab_model *m = s->m;
    const layer_weights *w = &m->layers[l];
    const alab_arch *ar = &m->arch;
    activations *acts = &m->acts;
    const int T = s->T, C = s->C, NH = s->NH, HS = s->HS, DQ = s->DQ, DKV = s->DKV;
    const float *dao = ar->parallel_residual ? s->dx : s->dxm;
    if (w->post_attn_norm) {
        norm_bwd(0, s->dtmp, s->ao_pre, w->post_attn_norm, dao, T, C, ar->eps, 0);
        dao = s->dtmp;
    }
    back_product(m, s->dY, dao, w->o_w, T, DQ, C, s->wbuf, s->wbuf2, NULL, 0);
    if (s->g[ALAB_GRAD_HEAD_OUT]) memcpy(s->g[ALAB_GRAD_HEAD_OUT] + (size_t)l * T * DQ, s->dY, (size_t)T * DQ * sizeof(float));
    qkv_view dv = *v; /* the gradients of q, k, v in the qkv buffer's layout */
    dv.q = s->dqkv + (v->q - acts->qkv);
    dv.k = s->dqkv + (v->k - acts->qkv);
    dv.v = s->dqkv + (v->v - acts->qkv);
    float *g_att = s->g[ALAB_GRAD_ATTN], *g_sc = s->g[ALAB_GRAD_SCORES];
    const size_t lat = (size_t)l * NH * T * T;
    attn_bw_job job = {m, v, &dv, acts->att + lat, s->dY, g_att ? g_att + lat : NULL, g_sc ? g_sc + lat : NULL,
                       s->rows, s->o, &s->ix, l, T, 0, 0, s->o->scale_override ? s->o->scale : alab_attn_scale(m, l)};
    alab_layer_mask(m, s->o, l, &job.mode, &job.window);
    alab_run_job(m, ar->NKV > 1 ? alab_parts_for(m, 2.0 * T * T * DQ) : 1, attn_bw_part, &job);
    for (int t = 0; t < T; t++) {
        float *gq = s->g[ALAB_GRAD_Q], *gk = s->g[ALAB_GRAD_K], *gv = s->g[ALAB_GRAD_V];
        if (gq) memcpy(gq + ((size_t)l * T + t) * DQ, dv.q + (size_t)t * dv.ldq, (size_t)DQ * sizeof(float));
        if (gk) memcpy(gk + ((size_t)l * T + t) * DKV, dv.k + (size_t)t * dv.ldk, (size_t)DKV * sizeof(float));
        if (gv) memcpy(gv + ((size_t)l * T + t) * DKV, dv.v + (size_t)t * dv.ldv, (size_t)DKV * sizeof(float));
    }
    /* rotary positions, q/k norms and weight edits, backwards */
    if (ar->fam->pos == POS_ROTARY && ar->rot_dims) {
        rope_rows(m, dv.q, dv.ldq, T, NH, l, -1);
        rope_rows(m, dv.k, dv.ldk, T, ar->NKV, l, -1);
    }
    if (ar->qk_norm)
        for (int t = 0; t < T; t++)
            for (int hd = 0; hd < NH + ar->NKV; hd++) { /* the query heads, then the key heads */
                const float *base = hd < NH ? v->q + (size_t)t * v->ldq + hd * HS : v->k + (size_t)t * v->ldk + (hd - NH) * HS;
                const size_t o1 = (size_t)(base - acts->qkv);
                norm_bwd(0, s->dtmp, s->pre + o1, hd < NH ? w->q_norm : w->k_norm, s->dqkv + o1, 1, HS, ar->eps, 0);
                memcpy(s->dqkv + o1, s->dtmp, (size_t)HS * sizeof(float));
            }
    if (s->ix.has_edits) edits_backward(m, &dv, l, T, s->o);
    if (w->qkv_w) back_product(m, s->dh, s->dqkv, w->qkv_w, T, C, s->DQKV, s->wbuf, s->wbuf2, NULL, 0);
    else {
        back_product(m, s->dh, dv.q, w->q_w, T, C, DQ, s->wbuf, s->wbuf2, NULL, 0);
        back_product(m, s->dh, dv.k, w->k_w, T, C, DKV, s->wbuf, s->wbuf2, s->dtmp, 1);
        back_product(m, s->dh, dv.v, w->v_w, T, C, DKV, s->wbuf, s->wbuf2, s->dtmp, 1);
    }
}

int alab_backward(float *grads, size_t n_grads, double *value, alab_model *m, alab_tape *tp, int metric, int a, int b,
                  int want) {
    if (!m || !tp) return alab_fail(ALAB_EINVAL, "alab_backward: NULL model or tape");
    if (tp->m != m) return alab_fail(ALAB_EINVAL, "alab_backward: the tape was made by another model");
    if (want & ~ALAB_GRAD_ALL) return alab_fail(ALAB_EINVAL, "alab_backward: want 0x%x names no part", want);
    if (metric < ALAB_METRIC_LOGIT_DIFF || metric > ALAB_METRIC_LOSS)
        return alab_fail(ALAB_EINVAL, "alab_backward: unknown metric %d", metric);
    const int T = tp->T, V = m->cfg.vocab_size;
    if (metric == ALAB_METRIC_LOGIT_DIFF || metric == ALAB_METRIC_LOGPROB) {
        if (a < 0 || a >= V) return alab_fail(ALAB_ERANGE, "alab_backward: answer %d is outside [0, %d)", a, V);
        if (metric == ALAB_METRIC_LOGIT_DIFF && (b < 0 || b >= V))
            return alab_fail(ALAB_ERANGE, "alab_backward: answer %d is outside [0, %d)", b, V);
    }
    if (metric == ALAB_METRIC_LOSS && T < 2)
        return alab_fail(ALAB_EEMPTY, "alab_backward: the mean next-token loss needs 2 tokens (got %d)", T);
    size_t off[ALAB_GRAD_PARTS + 1];
    int rc = alab_grad_layout(off, m, T, want);
    if (rc) return rc;
    if (off[ALAB_GRAD_PARTS] && !grads) return alab_fail(ALAB_EINVAL, "alab_backward: NULL gradient block");
    if (n_grads < off[ALAB_GRAD_PARTS])
        return alab_fail(ALAB_ERANGE, "alab_backward: the gradient block holds %zu floats, the layout needs %zu",
                         n_grads, off[ALAB_GRAD_PARTS]);
    const dims d = dims_of(m, T);
    const uint64_t sf = scratch_floats(&d);
    if ((rc = check_limit(&d))) return rc;
    if ((rc = alab_ensure_activations(m, T)) || (rc = alab_ensure_positions(m, T))) return rc;
    if (metric == ALAB_METRIC_KL && !tp->has_base) { /* the unmodified run's distribution, once per tape */
        if (tp->plain) memcpy(tp->base, tp->logits, (size_t)V * sizeof(float));
        else {
            if ((rc = alab_forward(m, tp->ids, T, NULL))) return rc;
            memcpy(tp->base, m->acts.logits, (size_t)V * sizeof(float));
        }
        tp->has_base = 1;
    }
    bw_state s = {.m = m, .tp = tp, .o = &tp->o, .T = T};
    if ((rc = bw_setup(&s, grads, off, want, sf))) return rc;
    m->T = 0; /* the model's buffers are the backward's now: no run result afterwards */
    m->win0 = m->win1 = 0;
    m->pool_rc = 0;

    const double val = metric_backward(&s, metric, a, b);
    if (s.g[ALAB_GRAD_RESID]) memcpy(s.g[ALAB_GRAD_RESID] + (size_t)s.L * s.TC, s.dx, s.TC * sizeof(float));
    for (int l = s.L - 1; l >= 0 && !m->pool_rc; l--) {
        const layer_weights *w = &m->layers[l];
        qkv_view v;
        recompute_layer(&s, l, &v);
        mlp_backward(&s, l);
        attention_backward(&s, l, &v);
        /* d x_l = dxm (sequential: d x_mid; parallel: d x_{l+1} + the MLP's part) + norm1's part */
        norm_bwd(s.ln, s.dxm, s.tp->x + (size_t)l * s.TC, w->ln1_w, s.dh, T, s.C, m->arch.eps, 1);
        memcpy(s.dx, s.dxm, s.TC * sizeof(float));
        if (s.g[ALAB_GRAD_RESID]) memcpy(s.g[ALAB_GRAD_RESID] + (size_t)l * s.TC, s.dx, s.TC * sizeof(float));
    }
    if (s.g[ALAB_GRAD_EMBED] && !m->pool_rc) {
        const float sc = m->arch.embed_scale != 0.0f ? m->arch.embed_scale : 1.0f;
        for (size_t i = 0; i < s.TC; i++) s.g[ALAB_GRAD_EMBED][i] = s.dx[i] * sc;
    }
    free(s.block);
    free(s.ix.block);
    if (m->pool_rc) return m->pool_rc;
    if (value) *value = val;
    return ALAB_OK;
}
