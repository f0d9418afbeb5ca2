/* generate.c — sampling with the key/value cache (and without it, the
 * reference the tests compare it with). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ops.h"

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}
static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* ---- KV cache ------------------------------------------------------------
 * Generation runs the prompt once and then one token per step, keeping every
 * layer's keys and values (after the rotary positions): a step costs one row
 * through the weights (T = 1 matmuls, which stream the weights once) plus
 * attention over the cache, instead of a full forward over the whole
 * sequence. The step runs the same block as alab_forward (forward.c), with
 * the cached attention (attention.c). Cached steps capture no attention and
 * take no interventions; they use the model's activation buffers as scratch,
 * so generation leaves no result. */
static int kv_init(kv_cache *kv, const alab_model *m, int cap) {
    const uint64_t L = (uint64_t)m->cfg.n_layer, D = (uint64_t)m->arch.NKV * (uint64_t)m->arch.HS;
    const uint64_t V = (uint64_t)m->cfg.vocab_size;
    const uint64_t total = 2 * L * (uint64_t)cap * D + (uint64_t)cap + V;
    memset(kv, 0, sizeof *kv);
    if (total > (uint64_t)SIZE_MAX / sizeof(float) || !(kv->block = malloc((size_t)total * sizeof(float))))
        return alab_fail(ALAB_ENOMEM, "cannot allocate %llu MB for the key/value cache of %d positions",
                         (unsigned long long)(total * 4 >> 20), cap);
    kv->cap = cap;
    kv->k = kv->block;
    kv->v = kv->k + L * (uint64_t)cap * D;
    kv->scores = kv->v + L * (uint64_t)cap * D;
    kv->logits = kv->scores + cap;
    return ALAB_OK;
}

/* Tn new tokens (ids valid, kv->n + Tn <= kv->cap) at positions kv->n.. through the
 * model, keys and values appended to the cache; kv->logits = the last one's logits. */
static int forward_cached(alab_model *m, kv_cache *kv, const int *ids, int Tn) {
    const int C = m->cfg.n_embd, L = m->cfg.n_layer;
    int rc = alab_ensure_activations(m, Tn);
    if (rc || (rc = alab_ensure_positions(m, kv->n + Tn))) return rc;
    m->T = 0; /* the activations are scratch from here on: no valid result */
    m->pool_rc = 0;
    activations *a = &m->acts;
    alab_embed(m, ids, Tn, kv->n);
    for (int l = 0; l < L; l++) {
        alab_block_forward(m, l, Tn, kv->n, NULL, NULL, kv, NULL);
        if (m->pool_rc) return m->pool_rc;
    }
    alab_final_norm(m, a->lnf, a->x + (size_t)(Tn - 1) * C, 1);
    alab_lm_head(m, kv->logits, a->lnf, 1);
    if (m->pool_rc) return m->pool_rc;
    kv->n += Tn;
    return ALAB_OK;
}

/* alab_generate, with the KV cache (use_cache) or by a full forward per token (the
 * reference the tests compare against). step_logits, if not NULL, receives the
 * logits (max_new x V) each token was chosen from. Declared in tests/c/test_kv_cache.c. */
int alab_generate_impl(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                       float temperature, int top_k, uint64_t *rng_state, int use_cache, float *step_logits);
int alab_generate_impl(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                       float temperature, int top_k, uint64_t *rng_state, int use_cache, float *step_logits) {
    if (!out || !n_out || !m || !ids || !rng_state) return alab_fail(ALAB_EINVAL, "alab_generate: NULL argument");
    *n_out = 0;
    if (max_new < 0) return alab_fail(ALAB_ERANGE, "max_new must be >= 0 (got %d)", max_new);
    if (isnan(temperature)) return alab_fail(ALAB_ENAN, "temperature must be a finite number >= 0");
    if (temperature < 0 || temperature > ALAB_MAX_TEMPERATURE)
        return alab_fail(ALAB_ERANGE, "temperature %g outside [0, %g]", (double)temperature, (double)ALAB_MAX_TEMPERATURE);
    if (top_k < 0) return alab_fail(ALAB_ERANGE, "top_k must be >= 0 (got %d)", top_k);
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "no tokens to continue");
    if ((int64_t)T + max_new > m->cfg.n_positions) /* 64 bits: long is 32 on wasm32 */
        return alab_fail(ALAB_ETOOLONG, "%d tokens + %d new exceed the model's context of %d", T, max_new, m->cfg.n_positions);
    const int V = m->cfg.vocab_size;
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V)
            return alab_fail(ALAB_ERANGE, "token id %d at position %d is outside [0, %d)", ids[t], t, V);
    if (*rng_state == 0) *rng_state = 0x9E3779B97F4A7C15ULL; /* xorshift must not start at 0 */
    if (max_new == 0) return ALAB_OK;
    int k = top_k == 0 || top_k > V ? V : top_k;
    int *seq = malloc((size_t)(T + max_new) * sizeof(int));
    int *cand = malloc((size_t)k * sizeof(int));
    float *p = malloc((size_t)k * sizeof(float));
    kv_cache kv = {0};
    int rc = (!seq || !cand || !p) ? alab_fail(ALAB_ENOMEM, "out of memory") : ALAB_OK;
    if (rc == ALAB_OK) memcpy(seq, ids, (size_t)T * sizeof(int));
    if (rc == ALAB_OK && use_cache) rc = kv_init(&kv, m, T + max_new);
    if (rc == ALAB_OK && use_cache) rc = forward_cached(m, &kv, ids, T);
    for (int s = 0; s < max_new && rc == ALAB_OK; s++) {
        const float *logits;
        if (use_cache) {
            if (s > 0 && (rc = forward_cached(m, &kv, &seq[T + s - 1], 1))) break;
            logits = kv.logits;
        } else {
            if ((rc = alab_forward(m, seq, T + s, NULL))) break;
            logits = m->acts.logits;
        }
        if (step_logits) memcpy(step_logits + (size_t)s * V, logits, (size_t)V * sizeof(float));
        int next;
        if (temperature == 0.0f) { /* greedy: the first largest logit (the lowest id among ties) */
            next = argmax_f32(logits, V);
        } else {
            alab_topk_probs(cand, p, k, logits, V, temperature);
            double total = 0.0, r;
            for (int i = 0; i < k; i++) total += p[i];
            r = rng_uniform(rng_state) * total;
            next = cand[k - 1];
            for (int i = 0; i < k; i++) {
                r -= p[i];
                if (r < 0) { next = cand[i]; break; }
            }
        }
        seq[T + s] = next;
        out[s] = next;
        *n_out = s + 1;
    }
    free(kv.block);
    free(seq);
    free(cand);
    free(p);
    return rc;
}

int alab_generate(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                  float temperature, int top_k, uint64_t *rng_state) {
    return alab_generate_impl(out, n_out, m, ids, T, max_new, temperature, top_k, rng_state, 1, NULL);
}
