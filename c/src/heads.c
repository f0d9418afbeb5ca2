/* heads.c — which heads matter and what each head does, measured on the live
 * model: the loss increase when one head is ablated (importance), the loss as
 * the least important heads are removed together (the pruning curve), and
 * the standard role scores read off an attention tensor (previous-token,
 * first-token / sink, duplicate-token, induction). docs/heads.md defines each
 * number with its formula. Letters: L layers, NH heads, T tokens. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------------ */
/* Loss of one run                                                            */
/* ------------------------------------------------------------------------ */

/* *loss = mean next-token loss (nats) of ids under the interventions iv[0..n). */
static int run_loss(double *loss, alab_model *m, const int *ids, int T,
                    const alab_intervention *iv, int n) {
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.interventions = iv;
    o.n_interventions = n;
    int rc = alab_forward(m, ids, T, &o);
    if (rc != ALAB_OK) return rc;
    double sum = 0.0;
    int cnt = 0;
    if ((rc = alab_result_nll(&sum, &cnt, m)) != ALAB_OK) return rc;
    if (cnt <= 0) return alab_fail(ALAB_EEMPTY, "heads: no next-token targets");
    *loss = sum / cnt;
    return ALAB_OK;
}

static int check_model_input(const alab_model *m, const int *ids, int T, const char *where) {
    if (!m || !ids) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (T < 2) return alab_fail(ALAB_EEMPTY, "%s: needs at least 2 tokens for a next-token loss, got %d", where, T);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Importance: ablate one head at a time                                      */
/* ------------------------------------------------------------------------ */

int alab_head_importance(float *delta, double *base_loss, alab_model *m, const int *ids, int T) {
    if (!delta || !base_loss) return alab_fail(ALAB_EINVAL, "alab_head_importance: NULL argument");
    int rc = check_model_input(m, ids, T, "alab_head_importance");
    if (rc != ALAB_OK) return rc;
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head;

    double base = 0.0;
    if ((rc = run_loss(&base, m, ids, T, NULL, 0)) != ALAB_OK) return rc;
    alab_intervention iv = {ALAB_ABLATE, 0, 0, 0, 0, 0.0f, 0.0f};
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            double loss = 0.0;
            iv.layer = l;
            iv.head = h;
            if ((rc = run_loss(&loss, m, ids, T, &iv, 1)) != ALAB_OK) return rc;
            delta[l * NH + h] = (float)(loss - base);
        }
    *base_loss = base;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Pruning curve: remove the k least important heads together                 */
/* ------------------------------------------------------------------------ */

/* Stable insertion sort of head indices by delta ascending (ties: lower index). */
static void sort_by_delta(int *order, const float *delta, int n) {
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++) {
        int x = order[i], j = i - 1;
        while (j >= 0 && delta[order[j]] > delta[x]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = x;
    }
}

int alab_pruning_curve(float *loss, int *order, alab_model *m, const int *ids, int T,
                       const float *delta) {
    if (!loss || !order || !delta) return alab_fail(ALAB_EINVAL, "alab_pruning_curve: NULL argument");
    int rc = check_model_input(m, ids, T, "alab_pruning_curve");
    if (rc != ALAB_OK) return rc;
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, LH = L * NH;
    if (LH > ALAB_MAX_INTERVENTIONS)
        return alab_fail(ALAB_ELIMIT, "alab_pruning_curve: %d heads exceed the limit of %d interventions",
                         LH, ALAB_MAX_INTERVENTIONS);
    for (int i = 0; i < LH; i++)
        if (!isfinite(delta[i])) return alab_fail(ALAB_ENAN, "alab_pruning_curve: delta[%d] is not finite", i);

    sort_by_delta(order, delta, LH);
    alab_intervention *iv = malloc((size_t)LH * sizeof(*iv)); /* once, grown by one per k */
    if (!iv) return alab_fail(ALAB_ENOMEM, "alab_pruning_curve: no memory for %d interventions", LH);
    for (int k = 0; k < LH; k++)
        iv[k] = (alab_intervention){ALAB_ABLATE, order[k] / NH, order[k] % NH, 0, 0, 0.0f, 0.0f};
    for (int k = 0; k <= LH && rc == ALAB_OK; k++) {
        double v = 0.0;
        rc = run_loss(&v, m, ids, T, k ? iv : NULL, k);
        if (rc == ALAB_OK) loss[k] = (float)v;
    }
    free(iv);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Role scores from an attention tensor                                       */
/* ------------------------------------------------------------------------ */

/* 1 if ids (T) is r ++ r for some r of length T/2 >= 2, else 0. */
static int is_repeated(const int *ids, int T) {
    if (T < 4 || T % 2) return 0;
    const int n = T / 2;
    for (int i = 0; i < n; i++)
        if (ids[i] != ids[i + n]) return 0;
    return 1;
}

int alab_head_roles(float *prev, float *sink, float *dup, float *induction,
                    const float *att, const int *ids, int L, int NH, int T) {
    if (!att || !ids) return alab_fail(ALAB_EINVAL, "alab_head_roles: NULL argument");
    if (L < 1 || L > ALAB_MAX_LAYERS || NH < 1 || NH > ALAB_MAX_HEADS)
        return alab_fail(ALAB_EINVAL, "alab_head_roles: bad L = %d or NH = %d", L, NH);
    if (T < 1) return alab_fail(ALAB_EEMPTY, "alab_head_roles: T = %d", T);
    if (T > ALAB_MAX_POSITIONS)
        return alab_fail(ALAB_ETOOLONG, "alab_head_roles: T = %d exceeds %d", T, ALAB_MAX_POSITIONS);
    for (int i = 0; i < T; i++)
        if (ids[i] < 0) return alab_fail(ALAB_ERANGE, "alab_head_roles: ids[%d] = %d is negative", i, ids[i]);

    const int rep = is_repeated(ids, T), n = T / 2;
    int n_dup = 0; /* positions with an earlier occurrence of their token */
    for (int i = 1; i < T; i++)
        for (int j = 0; j < i; j++)
            if (ids[j] == ids[i]) { n_dup++; break; }

    const size_t TT = (size_t)T * T;
    for (int lh = 0; lh < L * NH; lh++) {
        const float *A = att + (size_t)lh * TT; /* (T, T), row = query */
        double p = 0.0, s = 0.0, d = 0.0, ind = 0.0;
        for (int i = 0; i < T; i++) {
            const float *row = A + (size_t)i * T;
            s += row[0];
            if (i >= 1) p += row[i - 1];
            if (rep && i >= n) ind += row[i - n + 1];
            if (dup) {
                double mass = 0.0;
                int seen = 0;
                for (int j = 0; j < i; j++)
                    if (ids[j] == ids[i]) { mass += row[j]; seen = 1; }
                if (seen) d += mass;
            }
        }
        if (prev) prev[lh] = T > 1 ? (float)(p / (T - 1)) : 0.0f;
        if (sink) sink[lh] = (float)(s / T);
        if (dup) dup[lh] = n_dup ? (float)(d / n_dup) : 0.0f;
        if (induction) induction[lh] = rep ? (float)(ind / n) : 0.0f;
    }
    return rep;
}

/* ------------------------------------------------------------------------ */
/* Where the DAG score comes from: per head and per layer                     */
/* ------------------------------------------------------------------------ */

int alab_dag_profile(float *head, float *layer, const float *att, int L, int NH, int T) {
    if (!att || (!head && !layer)) return alab_fail(ALAB_EINVAL, "alab_dag_profile: NULL argument");
    if (L < 1 || L > ALAB_MAX_LAYERS || NH < 1 || NH > ALAB_MAX_HEADS)
        return alab_fail(ALAB_EINVAL, "alab_dag_profile: bad L = %d or NH = %d", L, NH);
    if (T < 1) return alab_fail(ALAB_EEMPTY, "alab_dag_profile: T = %d", T);
    if (T > ALAB_MAX_POSITIONS)
        return alab_fail(ALAB_ETOOLONG, "alab_dag_profile: T = %d exceeds %d", T, ALAB_MAX_POSITIONS);
    const size_t TT = (size_t)T * T;
    for (int l = 0; l < L; l++) {
        double sum = 0.0;
        for (int h = 0; h < NH; h++) {
            double d = alab_dag_score(att + ((size_t)l * NH + h) * TT, T);
            if (head) head[l * NH + h] = (float)d;
            sum += d;
        }
        if (layer) layer[l] = (float)(sum / NH);
    }
    return ALAB_OK;
}
