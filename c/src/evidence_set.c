/* evidence_set.c — the edge-knockout verdict over a set of inputs
 * (docs/evidence.md § "Over a set of inputs"): from each input's grids
 * (alab_edge_knockout), the points whose effect can be non-zero by
 * construction, the mean per-input correlation with its bootstrap interval
 * and permutation null (stats.c), and the two baselines Jain & Wallace (2019)
 * set beside attention: uniform attention under the same mask and attention
 * permuted within each row. Above the forward pass: pure functions of the
 * grids, shared by the CLI and the JS API so both give the same numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The points of one correlation: reading, effect and group (query row) of
 * every pair of rows i >= row0 that exists: j <= i and not outside a sliding
 * window (alab_edge_knockout marks those NaN, like j > i). The uniform
 * baseline spreads 1 over the keys a row can see. */
typedef struct {
    double *reading, *effect;
    int *group, *offset;
    int n_inputs, n;
} point_set;

enum { READ_ATTENTION = 0, READ_UNIFORM = 1 };

static void fill_points(point_set *p, const float *const *A, const float *const *E, const int *T, int n_inputs,
                        int last_row_only, int reading) {
    int o = 0;
    for (int k = 0; k < n_inputs; k++) {
        const int t = T[k], row0 = last_row_only ? t - 1 : 0;
        p->offset[k] = o;
        for (int i = row0; i < t; i++) {
            int keys = 0;
            for (int j = 0; j <= i; j++) keys += !isnan(E[k][(size_t)i * t + j]);
            for (int j = 0; j <= i; j++) {
                if (isnan(E[k][(size_t)i * t + j])) continue;
                p->reading[o] = reading == READ_UNIFORM ? 1.0 / keys : A[k][(size_t)i * t + j];
                p->effect[o] = E[k][(size_t)i * t + j];
                p->group[o] = i;
                o++;
            }
        }
    }
    p->offset[n_inputs] = o;
    p->n = o;
}

static int corr(alab_corr_summary *s, double *per, const point_set *p, int stat, double eps, const alab_set_stats *st,
                uint32_t seed) {
    alab_corr_spec sp = {p->n_inputs, p->offset, p->reading, p->effect, p->group, stat, eps, 4,
                         st->n_boot, st->n_perm, st->level, seed};
    return alab_corr_dataset(s, per, &sp);
}

/* The four readings of one kind of point: attention (Spearman, Kendall), uniform, row-permuted. */
static int four(alab_corr_summary out[4], double *per, point_set *p, const float *const *A, const float *const *E,
                const int *T, int n, int last_only, double eps, const alab_set_stats *st, uint32_t perm_seed) {
    int rc;
    fill_points(p, A, E, T, n, last_only, READ_ATTENTION);
    if ((rc = corr(&out[0], per, p, ALAB_CORR_SPEARMAN, eps, st, st->seed)) != ALAB_OK) return rc;
    if ((rc = corr(&out[1], NULL, p, ALAB_CORR_KENDALL, eps, st, st->seed)) != ALAB_OK) return rc;
    if ((rc = alab_permute_within_groups(p->reading, p->offset, p->group, p->n_inputs, perm_seed)) != ALAB_OK) return rc;
    if ((rc = corr(&out[3], NULL, p, ALAB_CORR_SPEARMAN, eps, st, st->seed)) != ALAB_OK) return rc;
    fill_points(p, A, E, T, n, last_only, READ_UNIFORM);
    return corr(&out[2], NULL, p, ALAB_CORR_SPEARMAN, eps, st, st->seed);
}

int alab_edge_set_summary(alab_edge_set *out, double *per_input, const float *const *A, const float *const *E,
                          const float *const *E_last, const int *T, int n_inputs, int last_layer, double eps,
                          const alab_set_stats *st) {
    if (!out || !A || !E || !E_last || !T || !st) return alab_fail(ALAB_EINVAL, "alab_edge_set_summary: NULL argument");
    if (n_inputs < 1 || n_inputs > 1000000)
        return alab_fail(ALAB_ERANGE, "alab_edge_set_summary: %d inputs (1 to 1000000)", n_inputs);
    if (!(eps >= 0.0) || !isfinite(eps)) return alab_fail(ALAB_ERANGE, "alab_edge_set_summary: eps %g is not >= 0", eps);
    size_t total = 0;
    for (int k = 0; k < n_inputs; k++) {
        if (!A[k] || !E[k] || !E_last[k]) return alab_fail(ALAB_EINVAL, "alab_edge_set_summary: input %d has no grids", k);
        if (T[k] < 2 || T[k] > ALAB_MAX_POSITIONS)
            return alab_fail(ALAB_ERANGE, "alab_edge_set_summary: input %d has T = %d", k, T[k]);
        total += (size_t)T[k] * (T[k] + 1) / 2;
    }
    if (total > ALAB_EVIDENCE_MAX_N) return alab_fail(ALAB_ELIMIT, "alab_edge_set_summary: %zu points", total);
    point_set p = {0};
    p.n_inputs = n_inputs;
    p.reading = malloc((total ? total : 1) * sizeof *p.reading);
    p.effect = malloc((total ? total : 1) * sizeof *p.effect);
    p.group = malloc((total ? total : 1) * sizeof *p.group);
    p.offset = malloc(((size_t)n_inputs + 1) * sizeof *p.offset);
    double *per = malloc(5 * (size_t)n_inputs * sizeof *per); /* 4 reported, the 5th the mean effects */
    int t_max = 0;
    for (int k = 0; k < n_inputs; k++) t_max = T[k] > t_max ? T[k] : t_max;
    double *a = malloc(2 * (size_t)t_max * sizeof *a), *e = a ? a + t_max : NULL;
    int rc = ALAB_OK;
    if (!p.reading || !p.effect || !p.group || !p.offset || !per || !a) {
        rc = alab_fail(ALAB_ENOMEM, "alab_edge_set_summary: no memory for %zu points", total);
        goto done;
    }
    alab_corr_summary loc[4], lst[4];
    if ((rc = four(loc, per, &p, A, E, T, n_inputs, 0, eps, st, st->seed + 2)) != ALAB_OK) goto done;
    if ((rc = four(lst, per + n_inputs, &p, A, E_last, T, n_inputs, last_layer, eps, st, st->seed + 3)) != ALAB_OK)
        goto done;
    out->local = loc[0]; out->local_kendall = loc[1]; out->local_uniform = loc[2]; out->local_permuted = loc[3];
    out->last = lst[0]; out->last_kendall = lst[1]; out->last_uniform = lst[2]; out->last_permuted = lst[3];
    /* per input: the mean per-row Spearman over rows with >= 4 keys, and the top-T overlap of all pairs */
    double *row = per + 2 * (size_t)n_inputs, *topk = per + 3 * (size_t)n_inputs, *meff = per + 4 * (size_t)n_inputs;
    for (int k = 0; k < n_inputs && rc == ALAB_OK; k++) {
        const int t = T[k];
        double s = 0.0;
        int cnt = 0;
        for (int i = 3; i < t && rc == ALAB_OK; i++) {
            int keys = 0;
            for (int j = 0; j <= i; j++) {
                const double x = E[k][(size_t)i * t + j];
                if (isnan(x)) continue; /* outside the layer's window: no pair */
                a[keys] = A[k][(size_t)i * t + j];
                e[keys++] = fabs(x) < eps ? 0.0 : x;
            }
            double r;
            if (keys < 4) continue; /* rows with >= 4 keys, as for the causal mask */
            if ((rc = alab_spearman(&r, a, e, keys)) == ALAB_OK && isfinite(r)) {
                s += r;
                cnt++;
            }
        }
        row[k] = cnt ? s / cnt : NAN;
        if (rc != ALAB_OK) break;
        fill_points(&p, A + k, E + k, T + k, 1, 0, READ_ATTENTION);
        for (int x = 0; x < p.n; x++) p.effect[x] = fabs(p.effect[x]) < eps ? 0.0 : p.effect[x];
        rc = alab_top_k_overlap(&topk[k], p.reading, p.effect, p.n, t);
        double se = 0.0;
        for (int x = 0; x < p.n; x++) se += p.effect[x]; /* after the floor, summed in order */
        meff[k] = p.n ? se / p.n : NAN;
    }
    if (rc == ALAB_OK) rc = alab_bootstrap_mean(&out->rows_mean, &out->rows_lo, &out->rows_hi, row, n_inputs,
                                                st->n_boot ? st->n_boot : 1, st->level, st->seed);
    if (rc == ALAB_OK) rc = alab_bootstrap_mean(&out->topk_mean, &out->topk_lo, &out->topk_hi, topk, n_inputs,
                                                st->n_boot ? st->n_boot : 1, st->level, st->seed);
    if (rc == ALAB_OK) rc = alab_bootstrap_mean(&out->effect_mean, &out->effect_lo, &out->effect_hi, meff, n_inputs,
                                                st->n_boot ? st->n_boot : 1, st->level, st->seed);
    if (rc == ALAB_OK && st->n_boot == 0) /* no resamples asked for: no interval (as alab_corr_dataset) */
        out->rows_lo = out->rows_hi = out->topk_lo = out->topk_hi = out->effect_lo = out->effect_hi = NAN;
    if (rc == ALAB_OK && per_input) memcpy(per_input, per, 4 * (size_t)n_inputs * sizeof *per);
done:
    free(p.reading);
    free(p.effect);
    free(p.group);
    free(p.offset);
    free(per);
    free(a);
    return rc;
}
