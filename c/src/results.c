/* results.c — what a run leaves: attentions, logits, q/k of the captured
 * head, top-k probabilities and the next-token loss at every position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ops.h"

/* ------------------------------------------------------------------------ */
/* Results                                                                    */
/* ------------------------------------------------------------------------ */

/* A windowed run of evidence.c (alab_forward_rows) leaves only rows [win0, win1) of the residual valid: the
 * results of the whole run (attention, logits, losses) are then not there. */
static int full_run(const alab_model *m) { return m->T && !m->win1; }

/* pos is a position whose residual the last run computed. */
static int check_pos(const alab_model *m, int pos) {
    if (!m->T) return alab_fail(ALAB_ESTATE, "no run yet: call alab_forward first");
    if (pos < 0 || pos >= m->T) return alab_fail(ALAB_ERANGE, "position %d is outside [0, %d)", pos, m->T);
    if (m->win1 && (pos < m->win0 || pos >= m->win1))
        return alab_fail(ALAB_ESTATE, "position %d was not computed by the last run (rows [%d, %d) only)", pos, m->win0,
                         m->win1);
    return ALAB_OK;
}

int alab_result_T(const alab_model *m) { return m && full_run(m) ? m->T : 0; }
int alab_result_logits_at(float *logits, const alab_model *m, int pos) {
    if (!logits || !m) return alab_fail(ALAB_EINVAL, "alab_result_logits_at: NULL argument");
    int rc = check_pos(m, pos);
    if (rc != ALAB_OK) return rc;
    const int C = m->cfg.n_embd;
    float *h = malloc((size_t)C * sizeof *h);
    if (!h) return alab_fail(ALAB_ENOMEM, "out of memory");
    alab_model *mm = (alab_model *)m; /* the LM head may use the model's thread pool */
    mm->pool_rc = 0;
    alab_final_norm(mm, h, m->acts.x + (size_t)pos * C, 1);
    alab_lm_head(mm, logits, h, 1);
    free(h);
    return mm->pool_rc;
}

int alab_result_hidden(float *h, const alab_model *m, int pos) {
    if (!h || !m) return alab_fail(ALAB_EINVAL, "alab_result_hidden: NULL argument");
    int rc = check_pos(m, pos);
    if (rc != ALAB_OK) return rc;
    alab_final_norm(m, h, m->acts.x + (size_t)pos * m->cfg.n_embd, 1);
    return ALAB_OK;
}

const float *alab_result_attention(const alab_model *m) { return m && full_run(m) ? m->acts.att : NULL; }
const float *alab_result_logits(const alab_model *m) { return m && full_run(m) ? m->acts.logits : NULL; }
const float *alab_result_q(const alab_model *m) { return m && full_run(m) && m->has_qk ? m->acts.q : NULL; }
const float *alab_result_k(const alab_model *m) { return m && full_run(m) && m->has_qk ? m->acts.k : NULL; }

/* The k largest of logits (V) as probabilities under softmax(logits / temp). */
void alab_topk_probs(int *ids, float *probs, int k, const float *logits, int V, float temp) {
    double mx = -INFINITY, sum = 0.0;
    for (int v = 0; v < V; v++) if (logits[v] > mx) mx = logits[v];
    for (int v = 0; v < V; v++) sum += exp(((double)logits[v] - mx) / temp);
    int n = k < V ? k : V;
    topk_f32(ids, logits, V, n); /* O(V log k), ops.c; ties keep the lower id first */
    for (int i = 0; i < n; i++) probs[i] = (float)(exp(((double)logits[ids[i]] - mx) / temp) / sum);
}

int alab_result_topk(int *ids, float *probs, int k, const alab_model *m) {
    if (!m || !ids || !probs) return alab_fail(ALAB_EINVAL, "alab_result_topk: NULL argument");
    if (!full_run(m)) return alab_fail(ALAB_ESTATE, "no whole run yet: call alab_forward first");
    if (k < 1) return alab_fail(ALAB_ERANGE, "k must be at least 1 (got %d)", k);
    if (k > m->cfg.vocab_size) k = m->cfg.vocab_size;
    alab_topk_probs(ids, probs, k, m->acts.logits, m->cfg.vocab_size, 1.0f);
    return ALAB_OK;
}

/* Next-token loss of the last run at every position: the final layernorm and
 * the LM head over the residual stream the forward left in x, NLL_ROWS rows at
 * a time so each pass over wte (V, C) serves many positions. */
#define NLL_ROWS 32
#define NLL_VBLOCK 256
typedef struct {
    float *logits, *tiles;       /* (R, V), one (R, NLL_VBLOCK) tile per part */
    const float *h, *wte;        /* (R, C), the LM head (V, C) */
    int R, C, V;
} nll_job;

/* The vocabulary blocks of one part: logits[:, v0 : v0 + nb] for each. */
static void nll_part(void *ctx, int part, int nparts) {
    const nll_job *j = ctx;
    float *tile = j->tiles + (size_t)part * j->R * NLL_VBLOCK;
    int b0, b1;
    alab_split(&b0, &b1, (j->V + NLL_VBLOCK - 1) / NLL_VBLOCK, part, nparts);
    for (int b = b0; b < b1; b++) {
        const int v0 = b * NLL_VBLOCK, nb = j->V - v0 < NLL_VBLOCK ? j->V - v0 : NLL_VBLOCK;
        matmul_nt_forward(tile, j->h, j->wte + (size_t)v0 * j->C, j->R, j->C, nb);
        for (int r = 0; r < j->R; r++)
            memcpy(j->logits + (size_t)r * j->V + v0, tile + (size_t)r * nb, (size_t)nb * sizeof(float));
    }
}

/* The loss of every position of the last run (each[t] = -log p(ids[t+1] | ids[0..t]), t < T-1, when each
 * is not NULL) and their sum. m->T >= 1 is checked by the callers. */
static int result_nll_rows(double *each, double *nll_sum, const alab_model *m) {
    const int C = m->cfg.n_embd, V = m->cfg.vocab_size, T = m->T;
    const activations *a = &m->acts;
    const int parts = alab_pool_parts(m->pool); /* the tiles are sized for this many */
    float *buf = malloc(((size_t)NLL_ROWS * V + (size_t)NLL_ROWS * C + (size_t)parts * NLL_ROWS * NLL_VBLOCK) * sizeof(float));
    if (!buf) return alab_fail(ALAB_ENOMEM, "out of memory");
    float *logits = buf, *h = buf + (size_t)NLL_ROWS * V;  /* (R, V), (R, C) */
    float *tiles = h + (size_t)NLL_ROWS * C;                /* parts x (R, NLL_VBLOCK) */
    double total = 0.0;
    for (int t0 = 0; t0 + 1 < T; t0 += NLL_ROWS) {
        int R = T - 1 - t0 < NLL_ROWS ? T - 1 - t0 : NLL_ROWS;
        alab_final_norm(m, h, a->x + (size_t)t0 * C, R);
        /* the LM head in vocabulary blocks that stay in cache while all R rows use them */
        nll_job job = {logits, tiles, h, m->lm_head, R, C, V};
        if (m->half) { /* 16-bit head: the head's helper, row by row (blocks of the head converted in turn) */
            alab_lm_head((alab_model *)(uintptr_t)m, logits, h, R);
        } else if (parts > 1 && (double)R * C * V >= alab_pool_min_work(m->pool)) {
            int rc = alab_pool_run(m->pool, nll_part, &job);
            if (rc) { free(buf); return rc; }
        } else {
            nll_part(&job, 0, 1);
        }
        for (int r = 0; r < R; r++) {
            float *row = logits + (size_t)r * V;
            const int target = a->ids[t0 + r + 1];
            const float target_logit = row[target];
            softmax_forward(row, row, V); /* the vectorised exp: V exps per position add up */
            double loss;
            if (row[target] > 1e-30f) {
                loss = -log((double)row[target]);
            } else { /* the target's probability underflowed in f32: the exact log-sum-exp */
                if (m->half) alab_lm_head((alab_model *)(uintptr_t)m, row, h + (size_t)r * C, 1);
                else matmul_nt_forward(row, h + (size_t)r * C, m->lm_head, 1, C, V);
                double mx = -INFINITY, sum = 0.0;
                for (int v = 0; v < V; v++) if (row[v] > mx) mx = row[v];
                for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
                loss = mx + log(sum) - (double)target_logit;
            }
            total += loss;
            if (each) each[t0 + r] = loss;
        }
    }
    free(buf);
    *nll_sum = total;
    return ALAB_OK;
}

int alab_result_nll(double *nll_sum, int *n, const alab_model *m) {
    if (!nll_sum || !n || !m) return alab_fail(ALAB_EINVAL, "alab_result_nll: NULL argument");
    *nll_sum = 0.0;
    *n = 0;
    if (!full_run(m)) return alab_fail(ALAB_ESTATE, "no whole run yet: call alab_forward first");
    int rc = result_nll_rows(NULL, nll_sum, m);
    if (rc == ALAB_OK) *n = m->T - 1;
    return rc;
}

int alab_result_nll_each(double *nll, int cap, const alab_model *m) {
    if (!nll || !m) return alab_fail(ALAB_EINVAL, "alab_result_nll_each: NULL argument");
    if (!full_run(m)) return alab_fail(ALAB_ESTATE, "no whole run yet: call alab_forward first");
    if (cap < m->T - 1) return alab_fail(ALAB_ERANGE, "alab_result_nll_each: room for %d losses, the run has %d", cap, m->T - 1);
    double sum;
    return result_nll_rows(nll, &sum, m);
}
