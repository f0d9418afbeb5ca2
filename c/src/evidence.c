/* evidence.c — the statistics and readings that test whether attention
 * explains (docs/evidence.md): rank correlations between a reading of
 * attention and an interventional effect (Spearman, Kendall's tau-b), the
 * top-k overlap, and two readings of a whole attention tensor that
 * Abnar & Zuidema (2020) proposed instead of one layer's weights: attention
 * rollout and attention flow. Pure functions on plain arrays.
 * Letters: L layers, NH heads, T tokens, n values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int check_pair(const double *a, const double *b, int n, const char *where) {
    if (!a || !b) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (n < 0 || n > ALAB_EVIDENCE_MAX_N)
        return alab_fail(ALAB_ELIMIT, "%s: n = %d outside [0, %d]", where, n, ALAB_EVIDENCE_MAX_N);
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i]) || !isfinite(b[i]))
            return alab_fail(ALAB_ENAN, "%s: value %d is not finite", where, i);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Ranks and Spearman                                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
    double key, key2;
    int i;
} keyed;

static int cmp_keyed(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    if (a->key2 < b->key2) return -1;
    if (a->key2 > b->key2) return 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* r (n) = ranks of x, 0-based, ties sharing their average rank. */
static int average_ranks(double *r, const double *x, int n) {
    keyed *k = malloc((size_t)(n ? n : 1) * sizeof *k);
    if (!k) return alab_fail(ALAB_ENOMEM, "ranks: no memory for %d values", n);
    for (int i = 0; i < n; i++) k[i] = (keyed){x[i], 0.0, i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && k[j + 1].key == k[i].key) j++;
        for (int t = i; t <= j; t++) r[k[t].i] = 0.5 * (i + j);
        i = j + 1;
    }
    free(k);
    return ALAB_OK;
}

int alab_spearman(double *rho, const double *a, const double *b, int n) {
    if (!rho) return alab_fail(ALAB_EINVAL, "alab_spearman: NULL argument");
    *rho = NAN;
    int rc = check_pair(a, b, n, "alab_spearman");
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    double *ra = malloc(2 * (size_t)n * sizeof *ra);
    if (!ra) return alab_fail(ALAB_ENOMEM, "alab_spearman: no memory for %d values", n);
    double *rb = ra + n;
    if ((rc = average_ranks(ra, a, n)) != ALAB_OK || (rc = average_ranks(rb, b, n)) != ALAB_OK) {
        free(ra);
        return rc;
    }
    const double mean = 0.5 * (n - 1);
    double sab = 0.0, saa = 0.0, sbb = 0.0;
    for (int i = 0; i < n; i++) {
        const double x = ra[i] - mean, y = rb[i] - mean;
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    free(ra);
    if (saa > 0.0 && sbb > 0.0) *rho = sab / sqrt(saa * sbb);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Kendall's tau-b: Knight's O(n log n) algorithm and its O(n^2) twin          */
/* ------------------------------------------------------------------------ */

static double tau_b(double n0, double n1, double n2, double n3, double discordant) {
    const double den = sqrt((n0 - n1) * (n0 - n2));
    return den > 0.0 ? (n0 - n1 - n2 + n3 - 2.0 * discordant) / den : NAN;
}

int alab_kendall_tau_b_ref(double *tau, const double *a, const double *b, int n) {
    if (!tau) return alab_fail(ALAB_EINVAL, "alab_kendall_tau_b_ref: NULL argument");
    *tau = NAN;
    int rc = check_pair(a, b, n, "alab_kendall_tau_b_ref");
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    double n1 = 0, n2 = 0, n3 = 0, disc = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const int ta = a[i] == a[j], tb = b[i] == b[j];
            n1 += ta;
            n2 += tb;
            n3 += ta && tb;
            if (!ta && !tb && ((a[i] < a[j]) != (b[i] < b[j]))) disc += 1;
        }
    *tau = tau_b(0.5 * n * (n - 1.0), n1, n2, n3, disc);
    return ALAB_OK;
}

/* Sort v[0..n) ascending with a merge sort; returns the number of inversions
 * (pairs i < j with v[i] > v[j]). tmp has room for n values. */
static double merge_count(double *v, double *tmp, int n) {
    if (n < 2) return 0.0;
    const int h = n / 2;
    double swaps = merge_count(v, tmp, h) + merge_count(v + h, tmp, n - h);
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (v[j] < v[i]) {
            swaps += h - i;
            tmp[k++] = v[j++];
        } else {
            tmp[k++] = v[i++];
        }
    }
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
    return swaps;
}

static double tied_pairs_sorted(const double *v, int n) {
    double s = 0.0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[j + 1] == v[i]) j++;
        const double t = j - i + 1;
        s += 0.5 * t * (t - 1);
        i = j + 1;
    }
    return s;
}

int alab_kendall_tau_b(double *tau, const double *a, const double *b, int n) {
    if (!tau) return alab_fail(ALAB_EINVAL, "alab_kendall_tau_b: NULL argument");
    *tau = NAN;
    int rc = check_pair(a, b, n, "alab_kendall_tau_b");
    if (rc != ALAB_OK) return rc;
    if (n < 2) return ALAB_OK;
    keyed *k = malloc((size_t)n * sizeof *k);
    double *v = malloc(2 * (size_t)n * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return alab_fail(ALAB_ENOMEM, "alab_kendall_tau_b: no memory for %d values", n);
    }
    for (int i = 0; i < n; i++) k[i] = (keyed){a[i], b[i], i};
    qsort(k, (size_t)n, sizeof *k, cmp_keyed); /* by a, then b */
    double n1 = 0.0, n3 = 0.0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && k[j + 1].key == k[i].key) j++;
        const double t = j - i + 1;
        n1 += 0.5 * t * (t - 1);
        for (int s = i; s <= j;) { /* joint ties inside the a-tie group (b sorted) */
            int e = s;
            while (e + 1 <= j && k[e + 1].key2 == k[s].key2) e++;
            const double u = e - s + 1;
            n3 += 0.5 * u * (u - 1);
            s = e + 1;
        }
        i = j + 1;
    }
    for (int i = 0; i < n; i++) v[i] = k[i].key2;
    free(k);
    /* b in a-order: an inversion is a pair discordant in (a, b) with a strictly
     * ordered (inside an a-tie group b is already ascending, so no inversion) */
    const double disc = merge_count(v, v + n, n);
    const double n2 = tied_pairs_sorted(v, n);
    free(v);
    *tau = tau_b(0.5 * n * (n - 1.0), n1, n2, n3, disc);
    return ALAB_OK;
}

int alab_top_k_overlap(double *share, const double *a, const double *b, int n, int k) {
    if (!share) return alab_fail(ALAB_EINVAL, "alab_top_k_overlap: NULL argument");
    *share = NAN;
    int rc = check_pair(a, b, n, "alab_top_k_overlap");
    if (rc != ALAB_OK) return rc;
    if (k < 1) return alab_fail(ALAB_ERANGE, "alab_top_k_overlap: k = %d < 1", k);
    if (k > n) k = n;
    if (k == 0) return ALAB_OK;
    keyed *ka = malloc(2 * (size_t)n * sizeof *ka);
    unsigned char *in = calloc((size_t)n, 1);
    if (!ka || !in) {
        free(ka);
        free(in);
        return alab_fail(ALAB_ENOMEM, "alab_top_k_overlap: no memory for %d values", n);
    }
    keyed *kb = ka + n;
    for (int i = 0; i < n; i++) { /* descending value, ties: lower index first */
        ka[i] = (keyed){-a[i], 0.0, i};
        kb[i] = (keyed){-b[i], 0.0, i};
    }
    qsort(ka, (size_t)n, sizeof *ka, cmp_keyed);
    qsort(kb, (size_t)n, sizeof *kb, cmp_keyed);
    for (int i = 0; i < k; i++) in[ka[i].i] = 1;
    int both = 0;
    for (int i = 0; i < k; i++) both += in[kb[i].i];
    free(ka);
    free(in);
    *share = (double)both / k;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Rollout and flow                                                           */
/* ------------------------------------------------------------------------ */

static int check_att(const float *att, int L, int NH, int T, const char *where) {
    if (!att) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (L < 1 || L > ALAB_MAX_LAYERS || NH < 1 || NH > ALAB_MAX_HEADS)
        return alab_fail(ALAB_EINVAL, "%s: bad L = %d or NH = %d", where, L, NH);
    if (T < 1) return alab_fail(ALAB_EEMPTY, "%s: T = %d", where, T);
    if (T > ALAB_MAX_POSITIONS) return alab_fail(ALAB_ETOOLONG, "%s: T = %d exceeds %d", where, T, ALAB_MAX_POSITIONS);
    const size_t n = (size_t)L * NH * T * T;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(att[i])) return alab_fail(ALAB_ENAN, "%s: attention value %zu is not finite", where, i);
    return ALAB_OK;
}

/* out (T, T) = ½ mean_h att[l] + ½ I, in double. */
static void residual_average(double *out, const float *att, int l, int NH, int T) {
    const size_t TT = (size_t)T * T;
    for (size_t x = 0; x < TT; x++) {
        double s = 0.0;
        for (int h = 0; h < NH; h++) s += att[((size_t)l * NH + h) * TT + x];
        out[x] = 0.5 * s / NH;
    }
    for (int i = 0; i < T; i++) out[(size_t)i * T + i] += 0.5;
}

int alab_attention_rollout(float *R, const float *att, int L, int NH, int T) {
    if (!R) return alab_fail(ALAB_EINVAL, "alab_attention_rollout: NULL argument");
    int rc = check_att(att, L, NH, T, "alab_attention_rollout");
    if (rc != ALAB_OK) return rc;
    const size_t TT = (size_t)T * T;
    double *buf = malloc(3 * TT * sizeof *buf);
    if (!buf) return alab_fail(ALAB_ENOMEM, "alab_attention_rollout: no memory for T = %d", T);
    double *acc = buf, *At = buf + TT, *nxt = buf + 2 * TT;
    memset(acc, 0, TT * sizeof *acc);
    for (int i = 0; i < T; i++) acc[(size_t)i * T + i] = 1.0;
    for (int l = 0; l < L; l++) { /* acc = Ã_l acc */
        residual_average(At, att, l, NH, T);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double s = 0.0;
                for (int m = 0; m < T; m++) s += At[(size_t)i * T + m] * acc[(size_t)m * T + j];
                nxt[(size_t)i * T + j] = s;
            }
        double *t = acc;
        acc = nxt;
        nxt = t;
    }
    for (size_t x = 0; x < TT; x++) R[x] = (float)acc[x];
    free(buf);
    return ALAB_OK;
}

/* Dinic's max-flow on the layered attention graph. Nodes (l, i), l = 0..L,
 * i = 0..T-1; an edge (l, j) -> (l+1, i) for every Ã_l[i][j] > 0, with its
 * reverse edge for the residual graph. */
typedef struct {
    int *head, *next, *to; /* adjacency lists: head[node], next[edge]        */
    double *cap;           /* residual capacity of each edge                   */
    double *cap0;          /* the original capacities (reset per source)       */
    int *level, *iter, *queue;
    int n_nodes, n_edges;
} flow_graph;

static void add_edge(flow_graph *g, int u, int v, double c) {
    int e = g->n_edges;
    g->to[e] = v; g->cap0[e] = c; g->next[e] = g->head[u]; g->head[u] = e;
    g->to[e + 1] = u; g->cap0[e + 1] = 0.0; g->next[e + 1] = g->head[v]; g->head[v] = e + 1;
    g->n_edges += 2;
}

static int bfs_levels(flow_graph *g, int s, int t) {
    for (int i = 0; i < g->n_nodes; i++) g->level[i] = -1;
    int qh = 0, qt = 0;
    g->level[s] = 0;
    g->queue[qt++] = s;
    while (qh < qt) {
        const int u = g->queue[qh++];
        for (int e = g->head[u]; e >= 0; e = g->next[e])
            if (g->cap[e] > 1e-15 && g->level[g->to[e]] < 0) {
                g->level[g->to[e]] = g->level[u] + 1;
                g->queue[qt++] = g->to[e];
            }
    }
    return g->level[t] >= 0;
}

/* One blocking-flow path from u (the graph is a DAG of depth <= L + 1 along
 * level edges, so the recursion is at most L + 1 deep). */
static double dfs_push(flow_graph *g, int u, int t, double f) {
    if (u == t) return f;
    for (int *e = &g->iter[u]; *e >= 0; *e = g->next[*e]) {
        const int v = g->to[*e];
        if (g->cap[*e] > 1e-15 && g->level[v] == g->level[u] + 1) {
            const double d = dfs_push(g, v, t, f < g->cap[*e] ? f : g->cap[*e]);
            if (d > 0.0) {
                g->cap[*e] -= d;
                g->cap[*e ^ 1] += d;
                return d;
            }
        }
    }
    return 0.0;
}

int alab_attention_flow(float *flow, const float *att, int L, int NH, int T, int target) {
    if (!flow) return alab_fail(ALAB_EINVAL, "alab_attention_flow: NULL argument");
    int rc = check_att(att, L, NH, T, "alab_attention_flow");
    if (rc != ALAB_OK) return rc;
    if (target < 0 || target >= T)
        return alab_fail(ALAB_ERANGE, "alab_attention_flow: target %d outside [0, %d)", target, T);
    const size_t TT = (size_t)T * T;
    double *At = malloc(TT * sizeof *At);
    if (!At) return alab_fail(ALAB_ENOMEM, "alab_attention_flow: no memory for T = %d", T);
    size_t edges = 0; /* count the positive capacities first */
    for (int l = 0; l < L; l++) {
        residual_average(At, att, l, NH, T);
        for (size_t x = 0; x < TT; x++) edges += At[x] > 0.0;
    }
    if (edges > ALAB_FLOW_MAX_EDGES) {
        free(At);
        return alab_fail(ALAB_ELIMIT, "alab_attention_flow: %zu edges exceed %d (fewer tokens or layers)",
                         edges, ALAB_FLOW_MAX_EDGES);
    }
    flow_graph g = {0};
    g.n_nodes = (L + 1) * T;
    const size_t E = 2 * edges;
    g.head = malloc((size_t)g.n_nodes * sizeof(int));
    g.level = malloc((size_t)g.n_nodes * sizeof(int));
    g.iter = malloc((size_t)g.n_nodes * sizeof(int));
    g.queue = malloc((size_t)g.n_nodes * sizeof(int));
    g.next = malloc((E ? E : 1) * sizeof(int));
    g.to = malloc((E ? E : 1) * sizeof(int));
    g.cap = malloc((E ? E : 1) * sizeof(double));
    g.cap0 = malloc((E ? E : 1) * sizeof(double));
    if (!g.head || !g.level || !g.iter || !g.queue || !g.next || !g.to || !g.cap || !g.cap0) {
        rc = alab_fail(ALAB_ENOMEM, "alab_attention_flow: no memory for %zu edges", edges);
        goto done;
    }
    for (int i = 0; i < g.n_nodes; i++) g.head[i] = -1;
    for (int l = 0; l < L; l++) {
        residual_average(At, att, l, NH, T);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                if (At[(size_t)i * T + j] > 0.0) add_edge(&g, l * T + j, (l + 1) * T + i, At[(size_t)i * T + j]);
    }
    const int sink = L * T + target;
    for (int src = 0; src < T; src++) {
        memcpy(g.cap, g.cap0, (size_t)g.n_edges * sizeof(double));
        double total = 0.0;
        while (bfs_levels(&g, src, sink)) {
            memcpy(g.iter, g.head, (size_t)g.n_nodes * sizeof(int));
            double f;
            while ((f = dfs_push(&g, src, sink, INFINITY)) > 0.0) total += f;
        }
        flow[src] = (float)total;
    }
done:
    free(At);
    free(g.head); free(g.level); free(g.iter); free(g.queue);
    free(g.next); free(g.to); free(g.cap); free(g.cap0);
    return rc;
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
    int touched = 0;
    for (int k = 0; k < o->n_knockouts; k++) {
        const alab_knockout *v = &o->knockouts[k];
        if ((v->layer == -1 || v->layer == l) && (v->head == -1 || v->head == h) && (v->row == -1 || v->row == i)) {
            row[v->col] = 0.0f;
            touched = 1;
        }
    }
    if (!touched) return 0;
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

static int check_run_input(alab_model *m, const int *ids, int T, const char *where) {
    if (!m || !ids) return alab_fail(ALAB_EINVAL, "%s: NULL argument", where);
    if (T < 2) return alab_fail(ALAB_EEMPTY, "%s: needs at least 2 tokens, got %d", where, T);
    return ALAB_OK;
}

int alab_edge_knockout(float *A, float *E, float *E_last, alab_model *m, const int *ids, int T, int layer, int head,
                       int row0, int row1) {
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
    size_t n_base, n_x;
    if (alab_mul_size(&n_base, (size_t)T + 1, (size_t)V) || alab_mul_size(&n_x, (size_t)L * T, (size_t)C))
        return alab_fail(ALAB_ENOMEM, "alab_edge_knockout: sizes overflow");
    double *lp = malloc((n_base + (size_t)V) * sizeof *lp);   /* (T, V) base log-probs, then (V) scratch */
    float *z = malloc((size_t)V * sizeof *z), *xs = malloc(n_x * sizeof *xs);
    if (!lp || !z || !xs) {
        rc = alab_fail(ALAB_ENOMEM, "alab_edge_knockout: no memory for T = %d", T);
        goto done;
    }
    double *scratch = lp + (size_t)T * V;
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_resid = xs;
    if ((rc = alab_forward(m, ids, T, &o)) != ALAB_OK) goto done;
    const float *att = alab_result_attention(m) + (size_t)layer * NH * T * T;
    for (size_t x = 0; x < (size_t)T * T; x++) {
        double s = 0.0;
        if (head >= 0) s = att[(size_t)head * T * T + x];
        else for (int h = 0; h < NH; h++) s += att[(size_t)h * T * T + x] / NH;
        A[x] = (float)s;
    }
    for (int i = row0; i < row1; i++) {
        if ((rc = alab_result_logits_at(z, m, i)) != ALAB_OK) goto done;
        log_softmax64(lp + (size_t)i * V, z, V);
    }
    log_softmax64(lp + (size_t)(T - 1) * V, alab_result_logits(m), V);
    alab_run_opts_init(&o);
    alab_knockout ko = {layer, head, 0, 0};
    o.knockouts = &ko;
    o.n_knockouts = 1;
    o.start_layer = layer;
    o.start_x = layer > 0 ? xs + (size_t)layer * T * C : NULL;
    for (int i = row0; i < row1; i++)
        for (int j = 0; j < T; j++) {
            const size_t x = (size_t)i * T + j;
            if (j > i) {
                E[x] = E_last[x] = NAN;
                continue;
            }
            ko.row = i;
            ko.col = j;
            if ((rc = alab_forward(m, ids, T, &o)) != ALAB_OK) goto done;
            E_last[x] = (float)kl_from(lp + (size_t)(T - 1) * V, alab_result_logits(m), scratch, V);
            if (i == T - 1) {
                E[x] = E_last[x];
            } else {
                if ((rc = alab_result_logits_at(z, m, i)) != ALAB_OK) goto done;
                E[x] = (float)kl_from(lp + (size_t)i * V, z, scratch, V);
            }
        }
done:
    free(lp);
    free(z);
    free(xs);
    return rc;
}

int alab_token_knockout(float *effect, alab_model *m, const int *ids, int T, int j0, int j1) {
    int rc = check_run_input(m, ids, T, "alab_token_knockout");
    if (rc != ALAB_OK) return rc;
    if (!effect) return alab_fail(ALAB_EINVAL, "alab_token_knockout: NULL output");
    if (j0 < 0 || j1 > T || j0 > j1)
        return alab_fail(ALAB_ERANGE, "alab_token_knockout: tokens [%d, %d) outside [0, %d)", j0, j1, T);
    const int V = alab_model_config(m)->vocab_size;
    double *lp = malloc(2 * (size_t)V * sizeof *lp);
    if (!lp) return alab_fail(ALAB_ENOMEM, "alab_token_knockout: no memory");
    if ((rc = alab_forward(m, ids, T, NULL)) == ALAB_OK) {
        log_softmax64(lp, alab_result_logits(m), V);
        alab_run_opts o;
        alab_run_opts_init(&o);
        alab_knockout ko = {-1, -1, -1, 0};
        o.knockouts = &ko;
        o.n_knockouts = 1;
        for (int j = j0; j < j1 && rc == ALAB_OK; j++) {
            ko.col = j;
            if ((rc = alab_forward(m, ids, T, &o)) == ALAB_OK)
                effect[j] = (float)kl_from(lp, alab_result_logits(m), lp + V, V);
        }
    }
    free(lp);
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
    float *buf = malloc((2 * n + ny) * sizeof *buf);
    if (!buf) return alab_fail(ALAB_ENOMEM, "alab_activation_patching: no memory for T = %d", T);
    float *cx = buf, *dx = buf + n, *cy = buf + 2 * n; /* clean residuals, corrupted residuals, clean head outputs */
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_resid = cx;
    o.capture_head_out = cy;
    int rc = alab_forward(m, clean, T, &o);
    double ldc = 0.0, ldd = 0.0;
    if (rc == ALAB_OK) {
        const float *z = alab_result_logits(m);
        ldc = (double)z[answer_clean] - z[answer_corrupt];
        alab_run_opts_init(&o);
        o.capture_resid = dx;
        rc = alab_forward(m, corrupt, T, &o);
    }
    if (rc == ALAB_OK) {
        const float *z = alab_result_logits(m);
        ldd = (double)z[answer_clean] - z[answer_corrupt];
        if (ldc == ldd)
            rc = alab_fail(ALAB_EINVAL, "the clean and corrupted runs give the same logit difference %g: nothing to normalise", ldc);
    }
    for (int l = 0; l < L && rc == ALAB_OK; l++) {
        alab_run_opts_init(&o);
        o.start_layer = l;
        o.start_x = l > 0 ? dx + (size_t)l * T * C : NULL;
        for (int p = 0; resid_grid && p < T && rc == ALAB_OK; p++) {
            alab_resid_patch rp = {l, p, cx + ((size_t)l * T + p) * C};
            o.resid_patches = &rp;
            o.n_resid_patches = 1;
            if ((rc = alab_forward(m, corrupt, T, &o)) == ALAB_OK) {
                const float *z = alab_result_logits(m);
                resid_grid[(size_t)l * T + p] = (float)(((double)z[answer_clean] - z[answer_corrupt] - ldd) / (ldc - ldd));
            }
        }
        o.n_resid_patches = 0;
        for (int h = 0; head_grid && h < NH && rc == ALAB_OK; h++) {
            alab_head_patch hp = {l, h, cy + (size_t)l * T * DQ + (size_t)h * HS, DQ};
            o.head_patches = &hp;
            o.n_head_patches = 1;
            if ((rc = alab_forward(m, corrupt, T, &o)) == ALAB_OK) {
                const float *z = alab_result_logits(m);
                head_grid[l * NH + h] = (float)(((double)z[answer_clean] - z[answer_corrupt] - ldd) / (ldc - ldd));
            }
        }
    }
    free(buf);
    if (rc == ALAB_OK) {
        *ld_clean = ldc;
        *ld_corrupt = ldd;
    }
    return rc;
}
