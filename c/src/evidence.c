/* evidence.c — the interventional measurements of docs/evidence.md: each
 * effect a real forward pass of the engine with a knockout, an ablation or a
 * patch inside it (interventions.c applies them; the forward pass knows
 * nothing of this file). Above the forward pass: this file calls it, it
 * never calls this file. Letters: L layers, NH heads, T tokens, V vocabulary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "jobs.h"
#include "model.h"
#include "ops.h"

/* ------------------------------------------------------------------------ */
/* The interventional measurements                                            */
/* ------------------------------------------------------------------------ */

/* lp (V) = log softmax(z), in double. */
static void log_softmax64(double *lp, const float *z, int V) {
    double mx = -INFINITY, s = 0.0;
    for (int v = 0; v < V; v++) if (z[v] > mx) mx = z[v];
    for (int v = 0; v < V; v++) s += exp((double)z[v] - mx);
    const double lse = mx + log(s);
    for (int v = 0; v < V; v++) lp[v] = (double)z[v] - lse;
}

/* KL(p || q) of the base distribution lp (log-probabilities) and logits zq. */
static double kl_from(const double *lp, const float *zq, double *lq, int V) {
    log_softmax64(lq, zq, V);
    double k = 0.0;
    for (int v = 0; v < V; v++) k += exp(lp[v]) * (lp[v] - lq[v]);
    return k > 0.0 ? k : 0.0; /* rounding can leave -1e-17 for identical distributions */
}

/* A plain run's distribution at one position, kept for many KLs against it:
 * p (V) its probabilities, y (C) the final-norm hidden state it came from. */
typedef struct {
    float *p, *y;
} base_dist;

/* p = softmax(z), the forward pass's own vectorised softmax (kl_finish divides by p's own sum, so a p summing
 * to 1 only within rounding costs nothing). */
static void base_set(base_dist *b, const float *z, int V) { softmax_forward(b->p, z, V); }

/* Floats of one row of a layer's q | k | v (block_rows' capture). */
static int qkv_width(const alab_model *m) { return (m->cfg.n_head + 2 * m->arch.NKV) * m->arch.HS; }

static int check_run_input(alab_model *m, const int *ids, int T, const char *where) {
    if (!m || !ids) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (T < 2) return alab_fail(ALAB_EEMPTY, "%s: needs at least 2 tokens, got %d", where, T);
    return ALAB_OK;
}

/* The LM head of many runs at once. Each knockout run leaves, for each
 * position it is measured at, the change of the final-norm hidden state from
 * the plain run's, d = y - y_base, in one row of H; the head maps it to the
 * change of the logits x = W d (the head has no bias, and a difference of two
 * rounded logit vectors is never formed, so a change of one rounding step stays
 * one). Every LH_BATCH rows one matrix product gives x for all of them, block
 * by block of LH_VB vocabulary rows of the head (a multiple of the packed
 * kernel's strip), each block packed from its rows while it is in cache (the
 * layers' own kernel, ops.c), so the head is read from memory once a batch;
 * each row's share of the KL against its base is taken from the block while
 * it is in cache (ops.c's kl_block), so no batch of logits is ever written
 * out; kl_finish sums the shares in block order. Blocks are split over the
 * model's threads; the result does not depend on how. 16-bit heads take
 * alab_lm_head into Z, then the same shares. The base distributions
 * themselves come through the same product in "logits" mode (H holds y). */
#define LH_BATCH 128
#define LH_VB_MIN 256
typedef struct {
    alab_model *m;
    int C, V, n, parts, vb, nblk, logits;
    float *H, *Z, *scratch;             /* (LH_BATCH, C), (LH_BATCH, V), per part vb * C + LH_BATCH * vb */
    kl_part *kp;                        /* (LH_BATCH, nblk) */
    const base_dist *base[LH_BATCH];
    float *out[LH_BATCH];
} lm_batch;

/* A head up to this size (the built-in model's 25.7 MB) is packed once and kept with the model; a larger one
 * (distilgpt2's 154 MB) is packed block by block in each batch, as it is multiplied. */
#define LH_PACK_MAX (64.0 * 1024 * 1024)

/* Blocks part, part + nparts, ... of the head packed into m->head_packed, block k at k * vb * C. */
static void pack_head_part(void *ctx, int part, int nparts) {
    const lm_batch *b = ctx;
    for (int k = part; k < b->nblk; k += nparts) {
        const int v0 = k * b->vb, nb = b->V - v0 < b->vb ? b->V - v0 : b->vb;
        matmul_pack_weights_t(b->m->head_packed + (size_t)v0 * b->C, b->m->lm_head + (size_t)v0 * b->C, b->C, nb);
    }
}

/* a part's scratch: one packed block of the head, then the block's products for the batch */
static size_t batch_scratch_floats(const lm_batch *b) { return (size_t)b->vb * b->C + (size_t)LH_BATCH * b->vb; }

static int batch_open(lm_batch *b, alab_model *m) {
    const alab_config *c = alab_model_config(m);
    const int strip = matmul_packed_strip();
    b->m = m;
    b->C = c->n_embd;
    b->V = c->vocab_size;
    b->n = 0;
    b->vb = (LH_VB_MIN + strip - 1) / strip * strip;
    b->nblk = (b->V + b->vb - 1) / b->vb;
    b->parts = alab_model_threads(m);
    if (b->parts < 1) b->parts = 1;
    b->H = malloc((size_t)LH_BATCH * b->C * sizeof *b->H);
    b->Z = malloc((size_t)LH_BATCH * b->V * sizeof *b->Z);
    b->kp = malloc((size_t)LH_BATCH * b->nblk * sizeof *b->kp);
    b->scratch = m->half ? NULL : malloc(b->parts * batch_scratch_floats(b) * sizeof *b->scratch);
    if (!b->H || !b->Z || !b->kp || (!m->half && !b->scratch))
        return alab_fail(ALAB_ENOMEM, "evidence: no memory for a batch of %d logit rows", LH_BATCH);
    if (!m->half && (!m->head_packed || m->head_vb != b->vb) && (double)b->V * b->C * sizeof(float) <= LH_PACK_MAX) {
        free(m->head_packed); /* packed once for the model's life: every later batch reads it as it is */
        m->head_packed = malloc((size_t)b->V * b->C * sizeof(float));
        m->head_vb = b->vb;
        if (m->head_packed) { /* without memory: packed per batch */
            m->pool_rc = 0;
            alab_run_job(m, b->parts, pack_head_part, b);
            if (m->pool_rc) { /* a helper died mid-pack: a half-packed head is never kept */
                int rc = m->pool_rc;
                free(m->head_packed);
                m->head_packed = NULL;
                return rc;
            }
        }
    }
    return ALAB_OK;
}

static void batch_close(lm_batch *b) {
    free(b->H);
    free(b->Z);
    free(b->kp);
    free(b->scratch);
    b->H = b->Z = b->scratch = NULL;
    b->kp = NULL;
}

/* Row r's share of the KL from block k (columns v0.. of the vocabulary, nb of them, at x with stride 1). */
static void batch_share(lm_batch *b, int r, int k, int v0, const float *x, int nb) {
    kl_block(&b->kp[(size_t)r * b->nblk + k], b->base[r]->p + v0, x, nb);
}

/* Vocabulary blocks part, part + nparts, ... of the product H (n, C) @ lm_head^T: into Z (logits mode) or
 * as the rows' KL shares. */
static void batch_logits_part(void *ctx, int part, int nparts) {
    lm_batch *b = ctx;
    const int C = b->C, V = b->V, n = b->n, vb = b->vb;
    float *wp = b->scratch + (size_t)part * batch_scratch_floats(b), *tile = wp + (size_t)vb * C;
    for (int k = part; k < b->nblk; k += nparts) {
        const int v0 = k * vb, nb = V - v0 < vb ? V - v0 : vb;
        const float *w = b->m->head_packed ? b->m->head_packed + (size_t)v0 * C : wp;
        if (!b->m->head_packed) matmul_pack_weights_t(wp, b->m->lm_head + (size_t)v0 * C, C, nb);
        matmul_packed_forward(tile, b->H, w, NULL, n, C, nb);
        for (int r = 0; r < n; r++) {
            if (b->logits) memcpy(b->Z + (size_t)r * V + v0, tile + (size_t)r * nb, (size_t)nb * sizeof(float));
            else batch_share(b, r, k, v0, tile + (size_t)r * nb, nb);
        }
    }
}

/* The product of the n rows of H: logits into Z, or each row's KL shares into kp. */
static int batch_run(lm_batch *b) {
    b->m->pool_rc = 0;
    if (b->m->half) {
        alab_lm_head(b->m, b->Z, b->H, b->n);
        if (!b->logits)
            for (int r = 0; r < b->n; r++)
                for (int k = 0; k < b->nblk; k++) {
                    const int v0 = k * b->vb, nb = b->V - v0 < b->vb ? b->V - v0 : b->vb;
                    batch_share(b, r, k, v0, b->Z + (size_t)r * b->V + v0, nb);
                }
    } else {
        alab_run_job(b->m, b->parts, batch_logits_part, b);
    }
    return b->m->pool_rc;
}

/* The base distributions of positions pos[0..n) of the last run, through the
 * same batched product (n <= LH_BATCH). */
static int batch_bases(lm_batch *b, base_dist *const *bd, const int *pos, int n) {
    int rc = ALAB_OK;
    for (int r = 0; r < n && rc == ALAB_OK; r++) {
        rc = alab_result_hidden(bd[r]->y, b->m, pos[r]);
        if (rc == ALAB_OK) memcpy(b->H + (size_t)r * b->C, bd[r]->y, (size_t)b->C * sizeof(float));
    }
    b->n = n;
    b->logits = 1;
    if (rc == ALAB_OK) rc = batch_run(b);
    for (int r = 0; r < n && rc == ALAB_OK; r++) base_set(bd[r], b->Z + (size_t)r * b->V, b->V);
    b->n = 0;
    b->logits = 0;
    return rc;
}

static int batch_flush(lm_batch *b) {
    if (!b->n) return ALAB_OK;
    int rc = batch_run(b);
    if (rc) return rc;
    for (int r = 0; r < b->n; r++) *b->out[r] = (float)kl_finish(b->kp + (size_t)r * b->nblk, b->nblk);
    b->n = 0;
    return ALAB_OK;
}

/* Queue the KL at position pos of the last run against base, written to *out. */
static int batch_add(lm_batch *b, int pos, const base_dist *base, float *out) {
    float *d = b->H + (size_t)b->n * b->C;
    int rc = alab_result_hidden(d, b->m, pos);
    if (rc != ALAB_OK) return rc;
    for (int c = 0; c < b->C; c++) d[c] -= base->y[c];
    b->base[b->n] = base;
    b->out[b->n] = out;
    return ++b->n == LH_BATCH ? batch_flush(b) : ALAB_OK;
}

int alab_edge_knockout(float *A, float *E, float *E_last, alab_model *m, const int *ids, int T, int layer, int head,
                       int row0, int row1, int mode) {
    int rc = check_run_input(m, ids, T, "alab_edge_knockout");
    if (rc != ALAB_OK) return rc;
    if (!A || !E || !E_last) return alab_fail(ALAB_EINVAL, "alab_edge_knockout: NULL output");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, C = c->n_embd, V = c->vocab_size;
    if (layer < 0 || layer >= L) return alab_fail(ALAB_ERANGE, "alab_edge_knockout: layer %d outside [0, %d)", layer, L);
    if (head < -1 || head >= NH)
        return alab_fail(ALAB_ERANGE, "alab_edge_knockout: head %d outside [0, %d) (or -1 for all)", head, NH);
    if (row0 < 0 || row1 > T || row0 > row1)
        return alab_fail(ALAB_ERANGE, "alab_edge_knockout: rows [%d, %d) outside [0, %d)", row0, row1, T);
    if (mode != ALAB_KO_RENORM && mode != ALAB_KO_ZERO && mode != ALAB_KO_NOOP)
        return alab_fail(ALAB_EINVAL, "alab_edge_knockout: mode %d is not renorm (0), zero (1) or noop (2)", mode);
    /* base distributions of the rows asked for and of T-1: (row1 - row0 + 1) of them */
    const int nb = row1 - row0 + 1;
    size_t n_base, n_x, n_qkv;
    if (alab_mul_size(&n_base, (size_t)nb, (size_t)V + C) || alab_mul_size(&n_x, (size_t)L * T, (size_t)C) ||
        alab_mul_size(&n_qkv, (size_t)L * T, (size_t)qkv_width(m)))
        return alab_fail(ALAB_ENOMEM, "alab_edge_knockout: sizes overflow");
    float *bufd = malloc(n_base * sizeof *bufd);
    base_dist *bd = malloc((size_t)nb * sizeof *bd);
    float *xs = malloc(n_x * sizeof *xs);
    float *qkv = malloc(n_qkv * sizeof *qkv);
    lm_batch batch = {0};
    if (!bufd || !bd || !xs || !qkv) {
        rc = alab_fail(ALAB_ENOMEM, "alab_edge_knockout: no memory for T = %d", T);
        goto done;
    }
    if ((rc = batch_open(&batch, m)) != ALAB_OK) goto done;
    for (int b = 0; b < nb; b++) bd[b] = (base_dist){bufd + (size_t)b * (V + C), bufd + (size_t)b * (V + C) + V};
    base_dist *blast = &bd[nb - 1];
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_resid = xs;
    if ((rc = alab_forward_rows(m, ids, T, &o, qkv, NULL, 0, T)) != ALAB_OK) goto done;
    const float *att = alab_result_attention(m) + (size_t)layer * NH * T * T;
    for (size_t x = 0; x < (size_t)T * T; x++) {
        double s = 0.0;
        if (head >= 0) s = att[(size_t)head * T * T + x];
        else for (int h = 0; h < NH; h++) s += att[(size_t)h * T * T + x] / NH;
        A[x] = (float)s;
    }
    for (int r0 = 0; r0 < nb; r0 += LH_BATCH) { /* rows row0.. and T-1 */
        int pos[LH_BATCH];
        base_dist *pb[LH_BATCH];
        const int n = nb - r0 < LH_BATCH ? nb - r0 : LH_BATCH;
        for (int r = 0; r < n; r++) {
            pos[r] = r0 + r == nb - 1 ? T - 1 : row0 + r0 + r;
            pb[r] = &bd[r0 + r];
        }
        if ((rc = batch_bases(&batch, pb, pos, n)) != ALAB_OK) goto done;
    }
    alab_run_opts_init(&o);
    alab_knockout ko = {layer, head, 0, 0, mode};
    o.knockouts = &ko;
    o.n_knockouts = 1;
    o.start_layer = layer;
    o.start_x = layer > 0 ? xs + (size_t)layer * T * C : NULL;
    o.no_logits = 1;
    /* the layer's own mask decides which pairs exist: j <= i, and i - j < W on a sliding-window layer (Mistral,
     * Gemma 3). A pair outside it has weight 0 by construction and no effect but rounding: no pair, NaN. */
    const int W = alab_model_layer_window(m, layer);
    for (int i = row0; i < row1; i++)
        for (int j = 0; j < T; j++) {
            const size_t x = (size_t)i * T + j;
            if (j > i || (W > 0 && i - j >= W)) {
                E[x] = E_last[x] = NAN;
                continue;
            }
            ko.row = i;
            ko.col = j;
            /* rows before i cannot change; in the last layer rows after i do not either */
            if ((rc = alab_forward_rows(m, ids, T, &o, NULL, qkv, i, layer == L - 1 ? i + 1 : T)) != ALAB_OK) goto done;
            if ((rc = batch_add(&batch, i, &bd[i - row0], &E[x])) != ALAB_OK) goto done;
            if (i == T - 1) continue; /* E_last = E, copied below */
            if (layer == L - 1) E_last[x] = 0.0f; /* row i < T-1 of the last layer cannot reach T-1 */
            else if ((rc = batch_add(&batch, T - 1, blast, &E_last[x])) != ALAB_OK) goto done;
        }
    if ((rc = batch_flush(&batch)) != ALAB_OK) goto done;
    if (row1 == T)
        for (int j = 0; j < T; j++) E_last[(size_t)(T - 1) * T + j] = E[(size_t)(T - 1) * T + j];
done:
    batch_close(&batch);
    free(bufd);
    free(bd);
    free(xs);
    free(qkv);
    return rc;
}

int alab_knockout_noise(double *kl_max, alab_model *m, const int *ids, int T, int layer) {
    int rc = check_run_input(m, ids, T, "alab_knockout_noise");
    if (rc != ALAB_OK) return rc;
    if (!kl_max) return alab_fail(ALAB_EINVAL, "alab_knockout_noise: NULL output");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, C = c->n_embd, V = c->vocab_size;
    if (layer < -1 || layer >= L)
        return alab_fail(ALAB_ERANGE, "alab_knockout_noise: layer %d outside [0, %d) (or -1 for all)", layer, L);
    float *bufd = malloc((size_t)T * (V + C) * sizeof *bufd);
    base_dist *bd = malloc((size_t)T * sizeof *bd);
    float *xs = malloc((size_t)L * T * C * sizeof *xs);
    float *kl = malloc((size_t)T * T * sizeof *kl);
    float *qkv = malloc((size_t)L * T * qkv_width(m) * sizeof *qkv);
    lm_batch batch = {0};
    if (!bufd || !bd || !xs || !kl || !qkv) {
        rc = alab_fail(ALAB_ENOMEM, "alab_knockout_noise: no memory for T = %d", T);
        goto done;
    }
    if ((rc = batch_open(&batch, m)) != ALAB_OK) goto done;
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_resid = xs;
    if ((rc = alab_forward_rows(m, ids, T, &o, qkv, NULL, 0, T)) != ALAB_OK) goto done;
    for (int t = 0; t < T; t++) bd[t] = (base_dist){bufd + (size_t)t * (V + C), bufd + (size_t)t * (V + C) + V};
    for (int t0 = 0; t0 < T; t0 += LH_BATCH) {
        int pos[LH_BATCH];
        base_dist *pb[LH_BATCH];
        const int n = T - t0 < LH_BATCH ? T - t0 : LH_BATCH;
        for (int r = 0; r < n; r++) {
            pos[r] = t0 + r;
            pb[r] = &bd[t0 + r];
        }
        if ((rc = batch_bases(&batch, pb, pos, n)) != ALAB_OK) goto done;
    }
    alab_run_opts_init(&o);
    alab_knockout ko = {layer, -1, 0, 0, ALAB_KO_NOOP};
    o.knockouts = &ko;
    o.n_knockouts = 1;
    o.start_layer = layer > 0 ? layer : 0;
    o.start_x = layer > 0 ? xs + (size_t)layer * T * C : NULL;
    o.no_logits = 1;
    /* one layer: each row in turn (as an edge knockout touches one row); every layer: every row at once
     * (as a token knockout touches every row of every layer), one run */
    const int runs = layer >= 0 ? T : 1;
    for (int t = 0; t < T; t++) kl[t] = 0.0f;
    for (int i = 0; i < runs; i++) {
        ko.row = layer >= 0 ? i : -1;
        /* one layer: the windowed run of an edge knockout (rows i..); every layer: the whole run */
        rc = layer >= 0 ? alab_forward_rows(m, ids, T, &o, NULL, qkv, i, layer == L - 1 ? i + 1 : T)
                        : alab_forward(m, ids, T, &o);
        if (rc != ALAB_OK) goto done;
        /* positions before i cannot change, nor in the last layer those after it (their rows are the plain run's
           bit for bit, test_evidence.c) */
        for (int t = layer >= 0 ? i : 0; t < (layer == L - 1 ? i + 1 : T); t++)
            if ((rc = batch_add(&batch, t, &bd[t], &kl[(size_t)i * T + t])) != ALAB_OK) goto done;
    }
    if ((rc = batch_flush(&batch)) != ALAB_OK) goto done;
    double mx = 0.0;
    for (int i = 0; i < runs; i++)
        for (int t = layer >= 0 ? i : 0; t < (layer == L - 1 ? i + 1 : T); t++)
            if (kl[(size_t)i * T + t] > mx) mx = kl[(size_t)i * T + t];
    *kl_max = mx;
done:
    batch_close(&batch);
    free(bufd);
    free(bd);
    free(xs);
    free(kl);
    free(qkv);
    return rc;
}

int alab_token_knockout(float *effect, alab_model *m, const int *ids, int T, int j0, int j1, int mode, int neutral) {
    int rc = check_run_input(m, ids, T, "alab_token_knockout");
    if (rc != ALAB_OK) return rc;
    if (!effect) return alab_fail(ALAB_EINVAL, "alab_token_knockout: NULL output");
    if (j0 < 0 || j1 > T || j0 > j1)
        return alab_fail(ALAB_ERANGE, "alab_token_knockout: tokens [%d, %d) outside [0, %d)", j0, j1, T);
    const int V = alab_model_config(m)->vocab_size;
    if (mode < ALAB_TOKEN_COLUMN || mode > ALAB_TOKEN_REPLACE)
        return alab_fail(ALAB_EINVAL, "alab_token_knockout: mode %d is not column (0), column-zero (1), delete (2) or "
                         "replace (3)", mode);
    if (mode == ALAB_TOKEN_REPLACE && (neutral < 0 || neutral >= V))
        return alab_fail(ALAB_ERANGE, "alab_token_knockout: the neutral token %d is outside [0, %d)", neutral, V);
    double *lp = malloc(2 * (size_t)V * sizeof *lp);
    int *alt = malloc((size_t)T * sizeof *alt);
    if (!lp || !alt) {
        free(lp);
        free(alt);
        return alab_fail(ALAB_ENOMEM, "alab_token_knockout: no memory");
    }
    if ((rc = alab_forward(m, ids, T, NULL)) == ALAB_OK) {
        log_softmax64(lp, alab_result_logits(m), V);
        alab_run_opts o;
        alab_run_opts_init(&o);
        alab_knockout ko = {-1, -1, -1, 0, mode == ALAB_TOKEN_COLUMN_ZERO ? ALAB_KO_ZERO : ALAB_KO_RENORM};
        if (mode <= ALAB_TOKEN_COLUMN_ZERO) {
            o.knockouts = &ko;
            o.n_knockouts = 1;
        }
        for (int j = j0; j < j1 && rc == ALAB_OK; j++) {
            if (mode <= ALAB_TOKEN_COLUMN_ZERO) {
                ko.col = j;
                rc = alab_forward(m, ids, T, &o);
            } else if (mode == ALAB_TOKEN_DELETE) {
                int n = 0;
                for (int t = 0; t < T; t++)
                    if (t != j) alt[n++] = ids[t];
                rc = alab_forward(m, alt, n, NULL);
            } else {
                memcpy(alt, ids, (size_t)T * sizeof *alt);
                alt[j] = neutral;
                rc = alab_forward(m, alt, T, NULL);
            }
            if (rc == ALAB_OK) effect[j] = (float)kl_from(lp, alab_result_logits(m), lp + V, V);
        }
    }
    free(lp);
    free(alt);
    return rc;
}

int alab_capture_head_outputs(float *out, alab_model *m, const int *ids, int T) {
    if (!out || !m || !ids) return alab_fail(ALAB_EINVAL, "alab_capture_head_outputs: NULL argument");
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_head_out = out;
    return alab_forward(m, ids, T, &o);
}

/* The replacement values of head (l, h) under mode; vals: mean (L, C) or the reference (L, T_ref, C). */
static alab_head_patch patch_for(int mode, const float *vals, int l, int h, int T_ref, int C, int HS) {
    if (mode == ALAB_ABLATE_MEAN) return (alab_head_patch){l, h, vals + (size_t)l * C + (size_t)h * HS, 0};
    return (alab_head_patch){l, h, vals + (size_t)l * T_ref * C + (size_t)h * HS, C};
}

static int mode_loss(double *loss, alab_model *m, const int *ids, int T, int mode, const float *vals, int T_ref,
                     const int *heads, int n) {
    const alab_config *c = alab_model_config(m);
    const int NH = c->n_head, HS = c->head_dim, C = NH * HS; /* C: the width of the head outputs */
    alab_run_opts o;
    alab_run_opts_init(&o);
    alab_intervention *iv = NULL;
    alab_head_patch *hp = NULL;
    if (n > 0 && mode == ALAB_ABLATE_ZERO) {
        if (!(iv = malloc((size_t)n * sizeof *iv))) return alab_fail(ALAB_ENOMEM, "out of memory");
        for (int k = 0; k < n; k++) iv[k] = (alab_intervention){ALAB_ABLATE, heads[k] / NH, heads[k] % NH, 0, 0, 0.0f, 0.0f};
        o.interventions = iv;
        o.n_interventions = n;
    } else if (n > 0) {
        if (!(hp = malloc((size_t)n * sizeof *hp))) return alab_fail(ALAB_ENOMEM, "out of memory");
        for (int k = 0; k < n; k++) hp[k] = patch_for(mode, vals, heads[k] / NH, heads[k] % NH, T_ref, C, HS);
        o.head_patches = hp;
        o.n_head_patches = n;
    }
    int rc = alab_forward(m, ids, T, &o);
    double sum = 0.0;
    int cnt = 0;
    if (rc == ALAB_OK) rc = alab_result_nll(&sum, &cnt, m);
    free(iv);
    free(hp);
    if (rc == ALAB_OK) *loss = sum / cnt;
    return rc;
}

/* vals for a mode: NULL (zero), the mean over the reference's positions (L, C), or ref itself. */
static int mode_values(float **vals, int mode, const float *ref, int T_ref, int T, int L, int C) {
    *vals = NULL;
    if (mode == ALAB_ABLATE_ZERO) return ALAB_OK;
    if (mode != ALAB_ABLATE_MEAN && mode != ALAB_ABLATE_RESAMPLE)
        return alab_fail(ALAB_EINVAL, "ablation mode %d is not zero, mean or resample", mode);
    if (!ref) return alab_fail(ALAB_EINVAL, "ablation mode %d needs the reference's head outputs", mode);
    if (T_ref < 1) return alab_fail(ALAB_EEMPTY, "the reference text has no tokens");
    if (mode == ALAB_ABLATE_RESAMPLE) {
        if (T_ref < T)
            return alab_fail(ALAB_ETOOLONG, "resample ablation: the reference has %d tokens, the input %d", T_ref, T);
        *vals = (float *)ref;
        return ALAB_OK;
    }
    float *mean = malloc((size_t)L * C * sizeof *mean);
    if (!mean) return alab_fail(ALAB_ENOMEM, "out of memory");
    for (int l = 0; l < L; l++)
        for (int d = 0; d < C; d++) {
            double s = 0.0;
            for (int t = 0; t < T_ref; t++) s += ref[((size_t)l * T_ref + t) * C + d];
            mean[(size_t)l * C + d] = (float)(s / T_ref);
        }
    *vals = mean;
    return ALAB_OK;
}

int alab_head_importance_mode(float *delta, double *base_loss, alab_model *m, const int *ids, int T, int mode,
                              const float *ref, int T_ref) {
    int rc = check_run_input(m, ids, T, "alab_head_importance_mode");
    if (rc != ALAB_OK) return rc;
    if (!delta || !base_loss) return alab_fail(ALAB_EINVAL, "alab_head_importance_mode: NULL output");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head;
    float *vals = NULL;
    if ((rc = mode_values(&vals, mode, ref, T_ref, T, L, NH * c->head_dim)) != ALAB_OK) return rc;
    double base = 0.0;
    rc = mode_loss(&base, m, ids, T, mode, vals, T_ref, NULL, 0);
    for (int lh = 0; lh < L * NH && rc == ALAB_OK; lh++) {
        double loss = 0.0;
        if ((rc = mode_loss(&loss, m, ids, T, mode, vals, T_ref, &lh, 1)) == ALAB_OK) delta[lh] = (float)(loss - base);
    }
    if (rc == ALAB_OK) *base_loss = base;
    if (mode == ALAB_ABLATE_MEAN) free(vals);
    return rc;
}

static const float *sort_delta;
static int cmp_delta(const void *pa, const void *pb) {
    const int a = *(const int *)pa, b = *(const int *)pb;
    if (sort_delta[a] < sort_delta[b]) return -1;
    if (sort_delta[a] > sort_delta[b]) return 1;
    return (a > b) - (a < b);
}

int alab_pruning_curve_mode(float *loss, int *order, alab_model *m, const int *ids, int T, const float *delta,
                            int mode, const float *ref, int T_ref) {
    int rc = check_run_input(m, ids, T, "alab_pruning_curve_mode");
    if (rc != ALAB_OK) return rc;
    if (!loss || !order || !delta) return alab_fail(ALAB_EINVAL, "alab_pruning_curve_mode: NULL argument");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, LH = L * NH;
    for (int i = 0; i < LH; i++)
        if (!isfinite(delta[i])) return alab_fail(ALAB_ENAN, "alab_pruning_curve_mode: delta[%d] is not finite", i);
    float *vals = NULL;
    if ((rc = mode_values(&vals, mode, ref, T_ref, T, L, NH * c->head_dim)) != ALAB_OK) return rc;
    for (int i = 0; i < LH; i++) order[i] = i;
    sort_delta = delta; /* qsort has no context argument in C11; the sort is short and not reentrant */
    qsort(order, (size_t)LH, sizeof *order, cmp_delta);
    for (int k = 0; k <= LH && rc == ALAB_OK; k++) {
        double v = 0.0;
        if ((rc = mode_loss(&v, m, ids, T, mode, vals, T_ref, order, k)) == ALAB_OK) loss[k] = (float)v;
    }
    if (mode == ALAB_ABLATE_MEAN) free(vals);
    return rc;
}

int alab_resample_draws(float *delta_mean, float *delta_draws, int *offsets, double *base_loss, alab_model *m,
                        const int *ids, int T, const float *ref, int T_ref, int K, uint32_t seed) {
    int rc = check_run_input(m, ids, T, "alab_resample_draws");
    if (rc != ALAB_OK) return rc;
    if (!delta_mean || !delta_draws || !base_loss || !ref) return alab_fail(ALAB_EINVAL, "alab_resample_draws: NULL argument");
    if (K < 1 || K > 10000) return alab_fail(ALAB_ERANGE, "alab_resample_draws: K = %d outside [1, 10000]", K);
    if (T_ref < T)
        return alab_fail(ALAB_ETOOLONG, "resample ablation: the reference has %d tokens, the input %d", T_ref, T);
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, LH = L * NH, D = NH * c->head_dim;
    double base = 0.0;
    if ((rc = mode_loss(&base, m, ids, T, ALAB_ABLATE_ZERO, NULL, 0, NULL, 0)) != ALAB_OK) return rc;
    alab_rng rng;
    alab_rng_seed(&rng, seed);
    for (int lh = 0; lh < LH; lh++) delta_mean[lh] = 0.0f;
    double *acc = calloc((size_t)LH, sizeof *acc);
    if (!acc) return alab_fail(ALAB_ENOMEM, "alab_resample_draws: no memory");
    for (int k = 0; k < K && rc == ALAB_OK; k++) {
        const int off = (int)alab_rng_below(&rng, (uint32_t)(T_ref - T + 1));
        if (offsets) offsets[k] = off;
        /* the window [off, off + T) of every layer: layer l's rows start at ref + (l * T_ref + off) * D */
        const float *win = ref + (size_t)off * D;
        for (int lh = 0; lh < LH && rc == ALAB_OK; lh++) {
            double loss = 0.0;
            if ((rc = mode_loss(&loss, m, ids, T, ALAB_ABLATE_RESAMPLE, win, T_ref, &lh, 1)) == ALAB_OK) {
                delta_draws[(size_t)k * LH + lh] = (float)(loss - base);
                acc[lh] += loss - base;
            }
        }
    }
    if (rc == ALAB_OK) {
        for (int lh = 0; lh < LH; lh++) delta_mean[lh] = (float)(acc[lh] / K);
        *base_loss = base;
    }
    free(acc);
    return rc;
}

/* The logit difference logit[a] - logit[b] at the last position of the last
 * run, from the final-norm hidden state and the two rows of the LM head (two
 * dot products in double instead of the whole vocabulary; 16-bit heads take
 * the full row of logits). */
static int logit_diff(double *ld, alab_model *m, int a, int b, float *h, float *z) {
    const int T = alab_result_T(m), C = alab_model_config(m)->n_embd;
    int rc;
    if (m->half) {
        if ((rc = alab_result_logits_at(z, m, T - 1)) != ALAB_OK) return rc;
        *ld = (double)z[a] - z[b];
        return ALAB_OK;
    }
    if ((rc = alab_result_hidden(h, m, T - 1)) != ALAB_OK) return rc;
    const float *wa = m->lm_head + (size_t)a * C, *wb = m->lm_head + (size_t)b * C;
    double s = 0.0;
    for (int c = 0; c < C; c++) s += (double)h[c] * ((double)wa[c] - wb[c]);
    *ld = s;
    return ALAB_OK;
}

int alab_activation_patching(float *resid_grid, float *head_grid, double *ld_clean, double *ld_corrupt, alab_model *m,
                             const int *clean, const int *corrupt, int T, int answer_clean, int answer_corrupt) {
    if (!m || !clean || !corrupt || !ld_clean || !ld_corrupt || (!resid_grid && !head_grid))
        return alab_fail(ALAB_EINVAL, "alab_activation_patching: NULL argument");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, C = c->n_embd, V = c->vocab_size, HS = c->head_dim, DQ = NH * HS;
    if (T < 1) return alab_fail(ALAB_EEMPTY, "alab_activation_patching: no tokens");
    if (answer_clean < 0 || answer_clean >= V || answer_corrupt < 0 || answer_corrupt >= V)
        return alab_fail(ALAB_ERANGE, "alab_activation_patching: answers %d, %d outside [0, %d)", answer_clean,
                         answer_corrupt, V);
    if (answer_clean == answer_corrupt)
        return alab_fail(ALAB_EINVAL, "alab_activation_patching: the two answers are the same token %d", answer_clean);
    size_t n, ny;
    if (alab_mul_size(&n, (size_t)L * T, (size_t)C) || alab_mul_size(&ny, (size_t)L * T, (size_t)DQ))
        return alab_fail(ALAB_ENOMEM, "sizes overflow");
    float *buf = malloc((2 * n + ny + (size_t)C + (size_t)V) * sizeof *buf);
    if (!buf) return alab_fail(ALAB_ENOMEM, "alab_activation_patching: no memory for T = %d", T);
    float *cx = buf, *dx = buf + n, *cy = buf + 2 * n; /* clean residuals, corrupted residuals, clean head outputs */
    float *hid = cy + ny, *zz = hid + C;                /* scratch of logit_diff */
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_resid = cx;
    o.capture_head_out = cy;
    o.no_logits = 1;
    int rc = alab_forward(m, clean, T, &o);
    double ldc = 0.0, ldd = 0.0;
    if (rc == ALAB_OK) rc = logit_diff(&ldc, m, answer_clean, answer_corrupt, hid, zz);
    if (rc == ALAB_OK) {
        alab_run_opts_init(&o);
        o.capture_resid = dx;
        o.no_logits = 1;
        rc = alab_forward(m, corrupt, T, &o);
    }
    if (rc == ALAB_OK) rc = logit_diff(&ldd, m, answer_clean, answer_corrupt, hid, zz);
    if (rc == ALAB_OK) {
        if (ldc == ldd)
            rc = alab_fail(ALAB_EINVAL, "the clean and corrupted runs give the same logit difference %g: nothing to normalise", ldc);
    }
    for (int l = 0; l < L && rc == ALAB_OK; l++) {
        alab_run_opts_init(&o);
        o.no_logits = 1;
        o.start_layer = l;
        o.start_x = l > 0 ? dx + (size_t)l * T * C : NULL;
        for (int p = 0; resid_grid && p < T && rc == ALAB_OK; p++) {
            alab_resid_patch rp = {l, p, cx + ((size_t)l * T + p) * C};
            o.resid_patches = &rp;
            o.n_resid_patches = 1;
            double ld = 0.0;
            if ((rc = alab_forward(m, corrupt, T, &o)) == ALAB_OK &&
                (rc = logit_diff(&ld, m, answer_clean, answer_corrupt, hid, zz)) == ALAB_OK)
                resid_grid[(size_t)l * T + p] = (float)((ld - ldd) / (ldc - ldd));
        }
        o.n_resid_patches = 0;
        for (int h = 0; head_grid && h < NH && rc == ALAB_OK; h++) {
            alab_head_patch hp = {l, h, cy + (size_t)l * T * DQ + (size_t)h * HS, DQ};
            o.head_patches = &hp;
            o.n_head_patches = 1;
            double ld = 0.0;
            if ((rc = alab_forward(m, corrupt, T, &o)) == ALAB_OK &&
                (rc = logit_diff(&ld, m, answer_clean, answer_corrupt, hid, zz)) == ALAB_OK)
                head_grid[l * NH + h] = (float)((ld - ldd) / (ldc - ldd));
        }
    }
    free(buf);
    if (rc == ALAB_OK) {
        *ld_clean = ldc;
        *ld_corrupt = ldd;
    }
    return rc;
}
