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
