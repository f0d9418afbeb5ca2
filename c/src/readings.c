/* readings.c — two readings of a whole attention tensor that Abnar & Zuidema
 * (2020) proposed instead of one layer's weights: attention rollout (a product
 * of the layers' residual-mixed attention) and attention flow (a max-flow,
 * Dinic's algorithm, through the layered attention graph). Pure functions of
 * an attention tensor (L, NH, T, T), no model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

