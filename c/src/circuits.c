/* circuits.c — where a head looks versus what it moves (docs/evidence.md): pattern and value patching, path
 * patching, direct logit attribution, value-weighted attention, causal tracing by component and composition
 * scores. Above the forward pass, like evidence.c: each patched run is a real run of the model with one of the
 * hooks of circuit_hooks (model.h) set on m->ck for that run; the layers below the first one a patch can change
 * are taken from the base run (start_layer), which the evidence tests show is bit for bit the full run.
 *
 * Letters: L layers, NH query heads, NKV key/value heads, G = NH / NKV, HS head size, DQ = NH HS, DKV = NKV HS,
 * DQKV = DQ + 2 DKV, C hidden size, T tokens. A logit difference is taken in double from the final norm of the
 * last position's residual and the two rows of the LM head, as alab_activation_patching takes it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"
#include "ops.h"

void alab_circuit_hooks_init(circuit_hooks *ck) {
    memset(ck, 0, sizeof *ck);
    ck->layer = ck->rcv_layer = ck->comp_layer = -1;
}

typedef struct {
    int L, NH, NKV, HS, C, V, DQ, DKV, DQKV, G;
} dims;

static dims dims_of(const alab_model *m) {
    dims d;
    d.L = m->cfg.n_layer;
    d.NH = m->cfg.n_head;
    d.NKV = m->arch.NKV;
    d.HS = m->arch.HS;
    d.C = m->cfg.n_embd;
    d.V = m->cfg.vocab_size;
    d.DQ = d.NH * d.HS;
    d.DKV = d.NKV * d.HS;
    d.DQKV = d.DQ + 2 * d.DKV;
    d.G = d.NH / d.NKV;
    return d;
}

/* Where the values of key/value head j at row t are in one layer's qkv buffer of T rows. */
static const float *value_rows(const alab_model *m, const float *qkv, int T, int j, int *ld) {
    const dims d = dims_of(m);
    if (m->layers[0].qkv_w) {
        *ld = d.DQKV;
        return qkv + d.DQ + d.DKV + (size_t)j * d.HS;
    }
    *ld = d.DKV;
    return qkv + (size_t)T * d.DQ + (size_t)T * d.DKV + (size_t)j * d.HS;
}

/* A weight matrix (rows, cols) as the engine multiplies by it (x W), in the plain row-major layout. */
static void plain_matrix(alab_model *m, float *out, const float *w, int rows, int cols) {
    const size_t n = (size_t)rows * cols;
    if (m->half) memcpy(out, alab_half_matrix(m, w, n), n * sizeof(float));
    else if (m->packed) matmul_unpack_weights(out, w, rows, cols);
    else memcpy(out, w, n * sizeof(float));
}

/* Row id of the LM head (the tied embedding or the head), as floats. */
static void head_row(const alab_model *m, float *out, int id) {
    const int C = m->cfg.n_embd;
    if (m->half) alab_half_to_f32_n(out, (const uint16_t *)(const void *)m->lm_head + (size_t)id * C, (size_t)C, m->half == ST_F16);
    else memcpy(out, m->lm_head + (size_t)id * C, (size_t)C * sizeof(float));
}

/* u = W_U[a] - W_U[b] (b < 0: W_U[a]) in double; scratch (C). */
static void answer_direction(const alab_model *m, double *u, int a, int b, float *scratch) {
    const int C = m->cfg.n_embd;
    head_row(m, scratch, a);
    for (int c = 0; c < C; c++) u[c] = scratch[c];
    if (b >= 0) {
        head_row(m, scratch, b);
        for (int c = 0; c < C; c++) u[c] -= scratch[c];
    }
}

/* u . final_norm(x) for one residual row x (C); scratch (C). */
static double ld_of(const alab_model *m, const double *u, const float *x, float *scratch) {
    alab_final_norm(m, scratch, x, 1);
    double s = 0.0;
    for (int c = 0; c < m->cfg.n_embd; c++) s += (double)scratch[c] * u[c];
    return s;
}

/* The last run's last residual row. */
static const float *last_row(const alab_model *m, int T) { return m->acts.x + (size_t)(T - 1) * m->cfg.n_embd; }

static int check_pair(const alab_model *m, const int *clean, const int *corrupt, int T, int a, int b, const char *fn) {
    if (!m || !clean || !corrupt) return alab_fail(ALAB_EINVAL, "%s: NULL argument", fn);
    if (T < 1) return alab_fail(ALAB_EEMPTY, "%s: no tokens", fn);
    const int V = m->cfg.vocab_size;
    if (a < 0 || a >= V || b < 0 || b >= V) return alab_fail(ALAB_ERANGE, "%s: answers %d, %d outside [0, %d)", fn, a, b, V);
    if (a == b) return alab_fail(ALAB_EINVAL, "%s: the two answers are the same token %d", fn, a);
    return ALAB_OK;
}

/* ---- one input's run with everything the measures read ------------------------------------------------ */

typedef struct {
    float *resid, *y, *qkv, *att, *attn, *mlp; /* (L,T,C) (L,T,DQ) (L,T,DQKV) (L,NH,T,T) (L,T,C) (L,T,C) */
    double ld;
} captures;

static void captures_free(captures *cp) {
    free(cp->resid);
    memset(cp, 0, sizeof *cp);
}

/* A plain run of ids capturing what is asked for (want: bit 1 resid, 2 y, 4 qkv, 8 att, 16 attn/mlp outputs),
 * and its logit difference along u. */
enum { CAP_RESID = 1, CAP_Y = 2, CAP_QKV = 4, CAP_ATT = 8, CAP_BLOCKS = 16 };
static int capture_run(captures *cp, alab_model *m, const int *ids, int T, int want, const double *u, float *scratch) {
    const dims d = dims_of(m);
    const size_t LT = (size_t)d.L * T;
    size_t n = 0;
    const size_t nres = want & CAP_RESID ? LT * d.C : 0, ny = want & CAP_Y ? LT * d.DQ : 0,
                 nqkv = want & CAP_QKV ? LT * d.DQKV : 0, natt = want & CAP_ATT ? LT * d.NH * T : 0,
                 nblk = want & CAP_BLOCKS ? LT * d.C : 0;
    n = nres + ny + nqkv + natt + 2 * nblk;
    memset(cp, 0, sizeof *cp);
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf) return alab_fail(ALAB_ENOMEM, "circuits: no memory for the captures of T = %d", T);
    cp->resid = buf; /* the one allocation (freed through resid) */
    float *p = buf + nres;
    if (ny) { cp->y = p; p += ny; }
    if (nqkv) { cp->qkv = p; p += nqkv; }
    if (natt) { cp->att = p; p += natt; }
    if (nblk) { cp->attn = p; cp->mlp = p + nblk; }
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.no_logits = 1;
    o.capture_resid = nres ? cp->resid : NULL;
    o.capture_head_out = cp->y;
    circuit_hooks ck;
    alab_circuit_hooks_init(&ck);
    ck.cap_attn = cp->attn;
    ck.cap_mlp = cp->mlp;
    m->ck = &ck;
    int rc = alab_forward_rows(m, ids, T, &o, cp->qkv, NULL, 0, T);
    m->ck = NULL;
    if (rc != ALAB_OK) return rc;
    if (cp->att) memcpy(cp->att, m->acts.att, natt * sizeof(float));
    cp->ld = ld_of(m, u, last_row(m, T), scratch);
    return ALAB_OK;
}

/* Run ids from layer l (the residual entering it from the base run) with the hooks ck, and the score. */
static int hooked_score(double *score, alab_model *m, const int *ids, int T, int l, const float *base_resid,
                        const alab_run_opts *extra, const circuit_hooks *ck, const double *u, double ld0, double ld1,
                        float *scratch) {
    alab_run_opts o;
    if (extra) o = *extra;
    else alab_run_opts_init(&o);
    o.no_logits = 1;
    o.start_layer = l;
    o.start_x = l > 0 ? base_resid + (size_t)l * T * m->cfg.n_embd : NULL;
    m->ck = ck;
    int rc = alab_forward(m, ids, T, &o);
    m->ck = NULL;
    if (rc != ALAB_OK) return rc;
    *score = (ld_of(m, u, last_row(m, T), scratch) - ld0) / (ld1 - ld0);
    return ALAB_OK;
}

/* The clean and corrupted runs of a pair, the direction u and the check that the pair can be normalised. */
typedef struct {
    captures c, d; /* clean, corrupted */
    double *u;
    float *scratch;
} pair_runs;

static void pair_free(pair_runs *p) {
    captures_free(&p->c);
    captures_free(&p->d);
    free(p->u);
    free(p->scratch);
}

static int pair_open(pair_runs *p, alab_model *m, const int *clean, const int *corrupt, int T, int a, int b, int want) {
    memset(p, 0, sizeof *p);
    const int C = m->cfg.n_embd;
    p->u = malloc((size_t)C * sizeof *p->u);
    p->scratch = malloc((size_t)C * sizeof *p->scratch);
    if (!p->u || !p->scratch) return alab_fail(ALAB_ENOMEM, "circuits: no memory");
    answer_direction(m, p->u, a, b, p->scratch);
    int rc = capture_run(&p->c, m, clean, T, want, p->u, p->scratch);
    if (rc == ALAB_OK) rc = capture_run(&p->d, m, corrupt, T, want, p->u, p->scratch);
    if (rc == ALAB_OK && p->c.ld == p->d.ld)
        rc = alab_fail(ALAB_EINVAL, "the clean and corrupted runs give the same logit difference %g: nothing to normalise", p->c.ld);
    return rc;
}

/* ---- pattern versus value patching ---------------------------------------------------------------------- */

int alab_pattern_value_patching(float *grid, double *ld_clean, double *ld_corrupt, alab_model *m, const int *clean,
                                const int *corrupt, int T, int answer_clean, int answer_corrupt) {
    int rc = check_pair(m, clean, corrupt, T, answer_clean, answer_corrupt, "alab_pattern_value_patching");
    if (rc) return rc;
    if (!grid || !ld_clean || !ld_corrupt) return alab_fail(ALAB_EINVAL, "alab_pattern_value_patching: NULL argument");
    const dims d = dims_of(m);
    pair_runs p;
    rc = pair_open(&p, m, clean, corrupt, T, answer_clean, answer_corrupt, CAP_RESID | CAP_Y | CAP_QKV | CAP_ATT);
    for (int dir = 0; dir < 2 && rc == ALAB_OK; dir++) {
        const int *ids = dir == ALAB_DENOISE ? corrupt : clean;
        const captures *base = dir == ALAB_DENOISE ? &p.d : &p.c, *src = dir == ALAB_DENOISE ? &p.c : &p.d;
        for (int l = 0; l < d.L && rc == ALAB_OK; l++)
            for (int h = 0; h < d.NH && rc == ALAB_OK; h++) {
                for (int kind = 0; kind < 3 && rc == ALAB_OK; kind++) {
                    circuit_hooks ck;
                    alab_circuit_hooks_init(&ck);
                    alab_run_opts o;
                    alab_run_opts_init(&o);
                    alab_head_patch hp = {l, h, src->y + (size_t)l * T * d.DQ + (size_t)h * d.HS, d.DQ};
                    if (kind == ALAB_PATCH_PATTERN) {
                        ck.layer = l;
                        ck.head = h;
                        ck.pattern = src->att + ((size_t)l * d.NH + h) * T * T;
                    } else if (kind == ALAB_PATCH_VALUE) {
                        ck.layer = l;
                        ck.head = h;
                        ck.values = value_rows(m, src->qkv + (size_t)l * T * d.DQKV, T, h / d.G, &ck.ldv);
                    } else {
                        o.head_patches = &hp;
                        o.n_head_patches = 1;
                    }
                    double s = 0.0;
                    rc = hooked_score(&s, m, ids, T, l, base->resid, &o, &ck, p.u, p.d.ld, p.c.ld, p.scratch);
                    grid[(((size_t)dir * 3 + kind) * d.L + l) * d.NH + h] = (float)s;
                }
            }
    }
    if (rc == ALAB_OK) {
        *ld_clean = p.c.ld;
        *ld_corrupt = p.d.ld;
    }
    pair_free(&p);
    return rc;
}

/* ---- path patching ------------------------------------------------------------------------------------------ */

int alab_path_patching(float *out, double *ld_clean, double *ld_corrupt, alab_model *m, const int *clean,
                       const int *corrupt, int T, int answer_clean, int answer_corrupt,
                       const alab_path_receiver *recv, int n_recv, int direction, int flags) {
    int rc = check_pair(m, clean, corrupt, T, answer_clean, answer_corrupt, "alab_path_patching");
    if (rc) return rc;
    if (!out || !ld_clean || !ld_corrupt || (!recv && n_recv > 0))
        return alab_fail(ALAB_EINVAL, "alab_path_patching: NULL argument");
    if (direction != ALAB_DENOISE && direction != ALAB_NOISE)
        return alab_fail(ALAB_EINVAL, "alab_path_patching: direction %d is neither denoising (0) nor noising (1)", direction);
    if (flags & ~ALAB_PATH_FREEZE_MLP) return alab_fail(ALAB_EINVAL, "alab_path_patching: unknown flags 0x%x", flags);
    if (n_recv < 1 || n_recv > ALAB_MAX_INTERVENTIONS)
        return alab_fail(ALAB_ERANGE, "alab_path_patching: %d receivers (1 to %d)", n_recv, ALAB_MAX_INTERVENTIONS);
    const dims d = dims_of(m);
    for (int k = 0; k < n_recv; k++) {
        const alab_path_receiver *r = &recv[k];
        if (r->input == ALAB_PATH_LOGITS) continue;
        if (r->input < 0 || r->input > ALAB_PATH_LOGITS)
            return alab_fail(ALAB_EINVAL, "receiver %d: input %d is not q (0), k (1), v (2) or the logits (3)", k, r->input);
        if (r->layer < 0 || r->layer >= d.L || r->head < 0 || r->head >= d.NH)
            return alab_fail(ALAB_ERANGE, "receiver %d: head (%d, %d) outside the model's %d x %d", k, r->layer, r->head, d.L, d.NH);
    }
    const size_t LTC = (size_t)d.L * T * d.C;
    float *xp = malloc((LTC + (size_t)T * d.DQKV + d.C) * sizeof *xp); /* x' of every layer, the receiver's scratch, x'_L */
    if (!xp) return alab_fail(ALAB_ENOMEM, "alab_path_patching: no memory for T = %d", T);
    float *rcv_qkv = xp + LTC, *x_top = rcv_qkv + (size_t)T * d.DQKV;
    pair_runs p;
    rc = pair_open(&p, m, clean, corrupt, T, answer_clean, answer_corrupt, CAP_RESID | CAP_Y | CAP_BLOCKS);
    const int *ids = direction == ALAB_DENOISE ? corrupt : clean;
    const captures *base = direction == ALAB_DENOISE ? &p.d : &p.c, *src = direction == ALAB_DENOISE ? &p.c : &p.d;
    for (int ls = 0; ls < d.L && rc == ALAB_OK; ls++)
        for (int hs = 0; hs < d.NH && rc == ALAB_OK; hs++) {
            /* 1. the sender's output from the source run, every other head frozen at the base run */
            circuit_hooks ck;
            alab_circuit_hooks_init(&ck);
            ck.freeze_from = ls;
            ck.y_frozen = base->y;
            ck.mlp_frozen = flags & ALAB_PATH_FREEZE_MLP ? base->mlp : NULL;
            alab_run_opts o;
            alab_run_opts_init(&o);
            alab_head_patch hp = {ls, hs, src->y + (size_t)ls * T * d.DQ + (size_t)hs * d.HS, d.DQ};
            o.head_patches = &hp;
            o.n_head_patches = 1;
            o.capture_resid = xp;
            o.no_logits = 1;
            o.start_layer = ls;
            o.start_x = ls > 0 ? base->resid + (size_t)ls * T * d.C : NULL;
            m->ck = &ck;
            rc = alab_forward(m, ids, T, &o);
            m->ck = NULL;
            if (rc != ALAB_OK) break;
            memcpy(x_top, last_row(m, T), (size_t)d.C * sizeof(float));
            /* 2. each receiver reads x' through its one input */
            for (int k = 0; k < n_recv && rc == ALAB_OK; k++) {
                const alab_path_receiver *r = &recv[k];
                float *cell = &out[((size_t)k * d.L + ls) * d.NH + hs];
                if (r->input == ALAB_PATH_LOGITS) {
                    *cell = (float)((ld_of(m, p.u, x_top, p.scratch) - p.d.ld) / (p.c.ld - p.d.ld));
                    continue;
                }
                if (r->layer <= ls) {
                    *cell = NAN;
                    continue;
                }
                circuit_hooks rk;
                alab_circuit_hooks_init(&rk);
                rk.rcv_layer = r->layer;
                rk.rcv_head = r->head;
                rk.rcv_input = r->input;
                rk.rcv_x = xp + (size_t)r->layer * T * d.C;
                rk.rcv_qkv = rcv_qkv;
                double s = 0.0;
                rc = hooked_score(&s, m, ids, T, r->layer, base->resid, NULL, &rk, p.u, p.d.ld, p.c.ld, p.scratch);
                *cell = (float)s;
            }
        }
    if (rc == ALAB_OK) {
        *ld_clean = p.c.ld;
        *ld_corrupt = p.d.ld;
    }
    pair_free(&p);
    free(xp);
    return rc;
}

/* ---- causal tracing by component ---------------------------------------------------------------------------- */

int alab_component_tracing(float *attn, float *mlp, double *ld_clean, double *ld_corrupt, alab_model *m,
                           const int *clean, const int *corrupt, int T, int answer_clean, int answer_corrupt) {
    int rc = check_pair(m, clean, corrupt, T, answer_clean, answer_corrupt, "alab_component_tracing");
    if (rc) return rc;
    if ((!attn && !mlp) || !ld_clean || !ld_corrupt) return alab_fail(ALAB_EINVAL, "alab_component_tracing: NULL argument");
    const dims d = dims_of(m);
    pair_runs p;
    rc = pair_open(&p, m, clean, corrupt, T, answer_clean, answer_corrupt, CAP_RESID | CAP_BLOCKS);
    for (int kind = 0; kind < 2 && rc == ALAB_OK; kind++) {
        float *grid = kind == 0 ? attn : mlp;
        if (!grid) continue;
        for (int l = 0; l < d.L && rc == ALAB_OK; l++)
            for (int pos = 0; pos < T && rc == ALAB_OK; pos++) {
                circuit_hooks ck;
                alab_circuit_hooks_init(&ck);
                ck.comp_layer = l;
                ck.comp_pos = pos;
                ck.comp_kind = kind;
                ck.comp_vec = (kind == 0 ? p.c.attn : p.c.mlp) + ((size_t)l * T + pos) * d.C;
                double s = 0.0;
                rc = hooked_score(&s, m, corrupt, T, l, p.d.resid, NULL, &ck, p.u, p.d.ld, p.c.ld, p.scratch);
                grid[(size_t)l * T + pos] = (float)s;
            }
    }
    if (rc == ALAB_OK) {
        *ld_clean = p.c.ld;
        *ld_corrupt = p.d.ld;
    }
    pair_free(&p);
    return rc;
}

/* ---- direct logit attribution and value norms ----------------------------------------------------------------- */

/* Direct attribution and composition scores read a head's output as a term of the residual stream (through W_O,
 * into the final norm or the next layer's q/k/v). A family that normalises each sublayer's output before the
 * residual add (Gemma 3's post_attention_layernorm / post_feedforward_layernorm) has no such linear term. */
static int check_linear_residual(const alab_model *m, const char *fn) {
    if (m->layers[0].post_attn_norm || m->layers[0].post_mlp_norm)
        return alab_fail(ALAB_EINVAL, "%s: %s normalises each attention and MLP output before adding it to the residual "
                         "stream, so a head's output is not a linear term of it (use path patching instead)", fn,
                         m->cfg.family);
    return ALAB_OK;
}

/* g * centre(c) / s for one residual-stream term c (C), dotted with u: the term's share of u . final_norm(x). */
static double direct_term(const alab_model *m, const double *u, const double *c, double s) {
    const int C = m->cfg.n_embd;
    double mu = 0.0;
    if (m->arch.fam->norm == NORM_LAYERNORM) {
        for (int k = 0; k < C; k++) mu += c[k];
        mu /= C;
    }
    double t = 0.0;
    for (int k = 0; k < C; k++) t += u[k] * (double)m->lnf_w[k] * (c[k] - mu);
    return t / s;
}

int alab_direct_logit_attribution(float *heads, float *sources, double *terms, double *ld, alab_model *m,
                                  const int *ids, int T, int answer, int answer_other) {
    if (!m || !ids || !heads || !terms || !ld) return alab_fail(ALAB_EINVAL, "alab_direct_logit_attribution: NULL argument");
    if (T < 1) return alab_fail(ALAB_EEMPTY, "alab_direct_logit_attribution: no tokens");
    int rc0 = check_linear_residual(m, "alab_direct_logit_attribution");
    if (rc0) return rc0;
    const dims d = dims_of(m);
    if (answer < 0 || answer >= d.V || answer_other < -1 || answer_other >= d.V)
        return alab_fail(ALAB_ERANGE, "alab_direct_logit_attribution: answers %d, %d outside [0, %d)", answer, answer_other, d.V);
    if (answer == answer_other)
        return alab_fail(ALAB_EINVAL, "alab_direct_logit_attribution: the two answers are the same token %d", answer);
    const int C = d.C, HS = d.HS;
    double *u = malloc((size_t)C * 3 * sizeof *u);
    float *wo = malloc(((size_t)d.DQ * C + 2 * (size_t)C) * sizeof *wo);
    if (!u || !wo) {
        free(u);
        free(wo);
        return alab_fail(ALAB_ENOMEM, "alab_direct_logit_attribution: no memory");
    }
    double *c = u + C, *xf = c + C;
    float *scratch = wo + (size_t)d.DQ * C, *row = scratch + C;
    answer_direction(m, u, answer, answer_other, scratch);
    captures cp;
    int rc = capture_run(&cp, m, ids, T, CAP_Y | CAP_QKV | CAP_ATT | CAP_BLOCKS, u, scratch);
    if (rc == ALAB_OK) {
        const float *x = last_row(m, T);
        const int t = T - 1;
        /* the frozen scale of the final norm */
        double mu = 0.0, var = 0.0;
        for (int k = 0; k < C; k++) xf[k] = x[k];
        if (m->arch.fam->norm == NORM_LAYERNORM) {
            for (int k = 0; k < C; k++) mu += xf[k];
            mu /= C;
        }
        for (int k = 0; k < C; k++) var += (xf[k] - mu) * (xf[k] - mu);
        const double s = sqrt(var / C + m->arch.eps);
        *ld = cp.ld;
        /* embeddings */
        if (m->half) alab_half_to_f32_n(row, (const uint16_t *)(const void *)m->wte + (size_t)ids[t] * C, (size_t)C, m->half == ST_F16);
        else memcpy(row, m->wte + (size_t)ids[t] * C, (size_t)C * sizeof(float));
        for (int k = 0; k < C; k++) c[k] = row[k];
        terms[0] = direct_term(m, u, c, s);
        terms[1] = 0.0;
        if (m->wpe) {
            for (int k = 0; k < C; k++) c[k] = m->wpe[(size_t)t * C + k];
            terms[1] = direct_term(m, u, c, s);
        }
        terms[2] = 0.0;
        if (m->lnf_b)
            for (int k = 0; k < C; k++) terms[2] += u[k] * m->lnf_b[k];
        for (int l = 0; l < d.L; l++) {
            const layer_weights *w = &m->layers[l];
            terms[3 + l] = 0.0;
            if (w->o_b) {
                for (int k = 0; k < C; k++) c[k] = w->o_b[k];
                terms[3 + l] = direct_term(m, u, c, s);
            }
            const float *mo = cp.mlp + ((size_t)l * T + t) * C;
            for (int k = 0; k < C; k++) c[k] = mo[k];
            terms[3 + d.L + l] = direct_term(m, u, c, s);
            plain_matrix(m, wo, w->o_w, d.DQ, C);
            for (int h = 0; h < d.NH; h++) {
                const float *Wh = wo + (size_t)h * HS * C;
                /* the head's term: its output at t through its rows of W_O */
                const float *y = cp.y + ((size_t)l * T + t) * d.DQ + (size_t)h * HS;
                for (int k = 0; k < C; k++) c[k] = 0.0;
                for (int e = 0; e < HS; e++)
                    for (int k = 0; k < C; k++) c[k] += (double)y[e] * Wh[(size_t)e * C + k];
                heads[l * d.NH + h] = (float)direct_term(m, u, c, s);
                if (!sources) continue;
                /* split by source: A[t][j] v_j W_O^h */
                int ldv;
                const float *vr = value_rows(m, cp.qkv + (size_t)l * T * d.DQKV, T, h / d.G, &ldv);
                const float *arow = cp.att + (((size_t)l * d.NH + h) * T + t) * T;
                for (int j = 0; j < T; j++) {
                    for (int k = 0; k < C; k++) c[k] = 0.0;
                    const float *v = vr + (size_t)j * ldv;
                    for (int e = 0; e < HS; e++)
                        for (int k = 0; k < C; k++) c[k] += (double)v[e] * Wh[(size_t)e * C + k];
                    sources[((size_t)l * d.NH + h) * T + j] = (float)((double)arow[j] * direct_term(m, u, c, s));
                }
            }
        }
    }
    captures_free(&cp);
    free(u);
    free(wo);
    return rc;
}

int alab_value_norms(float *norms, alab_model *m, const int *ids, int T) {
    if (!m || !ids || !norms) return alab_fail(ALAB_EINVAL, "alab_value_norms: NULL argument");
    if (T < 1) return alab_fail(ALAB_EEMPTY, "alab_value_norms: no tokens");
    const dims d = dims_of(m);
    const int C = d.C, HS = d.HS;
    float *wo = malloc(((size_t)d.DQ * C + C) * sizeof *wo);
    double *c = malloc((size_t)C * sizeof *c);
    if (!wo || !c) {
        free(wo);
        free(c);
        return alab_fail(ALAB_ENOMEM, "alab_value_norms: no memory");
    }
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.no_logits = 1;
    float *qkv = malloc((size_t)d.L * T * d.DQKV * sizeof *qkv);
    int rc = qkv ? alab_forward_rows(m, ids, T, &o, qkv, NULL, 0, T) : alab_fail(ALAB_ENOMEM, "alab_value_norms: no memory for T = %d", T);
    for (int l = 0; l < d.L && rc == ALAB_OK; l++) {
        plain_matrix(m, wo, m->layers[l].o_w, d.DQ, C);
        for (int h = 0; h < d.NH; h++) {
            int ldv;
            const float *vr = value_rows(m, qkv + (size_t)l * T * d.DQKV, T, h / d.G, &ldv);
            const float *Wh = wo + (size_t)h * HS * C;
            for (int j = 0; j < T; j++) {
                const float *v = vr + (size_t)j * ldv;
                for (int k = 0; k < C; k++) c[k] = 0.0;
                for (int e = 0; e < HS; e++)
                    for (int k = 0; k < C; k++) c[k] += (double)v[e] * Wh[(size_t)e * C + k];
                double ss = 0.0;
                for (int k = 0; k < C; k++) ss += c[k] * c[k];
                norms[((size_t)l * d.NH + h) * T + j] = (float)sqrt(ss);
            }
        }
    }
    free(qkv);
    free(wo);
    free(c);
    return rc;
}

/* ---- composition scores ----------------------------------------------------------------------------------------- */

/* out (n, n) = a^T b for a, b (rows, n) with row strides lda, ldb (double). */
static void gram(double *out, const double *a, const double *b, int rows, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int r = 0; r < rows; r++) s += a[(size_t)r * n + i] * b[(size_t)r * n + j];
            out[(size_t)i * n + j] = s;
        }
}

/* tr(A M B M^T) for d x d matrices. */
static double tr_amb(const double *A, const double *M, const double *B, int n, double *tmp) {
    /* tmp = M B M^T */
    double *mb = tmp, *mbm = tmp + (size_t)n * n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += M[(size_t)i * n + k] * B[(size_t)k * n + j];
            mb[(size_t)i * n + j] = s;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += mb[(size_t)i * n + k] * M[(size_t)j * n + k];
            mbm[(size_t)i * n + j] = s;
        }
    double t = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) t += A[(size_t)i * n + k] * mbm[(size_t)k * n + i];
    return t;
}

static double trace_prod(const double *A, const double *B, int n) { /* tr(A B) */
    double t = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) t += A[(size_t)i * n + k] * B[(size_t)k * n + i];
    return t;
}

/* One head's factors: Q, K, P = diag(g) W_{Q,K,V}^h (C, d) and O = W_O^h (d, C), and their Gram matrices
 * GQ = Q^T Q, GK = K^T K, GP = P^T P, GO = O O^T (d, d). */
typedef struct {
    double *Q, *K, *P, *O, *GQ, *GK, *GP, *GO;
} head_factors;

static void factors_grams(head_factors *f, int C, int n) {
    gram(f->GQ, f->Q, f->Q, C, n);
    gram(f->GK, f->K, f->K, C, n);
    gram(f->GP, f->P, f->P, C, n);
    /* GO = O O^T: O is (n, C) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < C; k++) s += f->O[(size_t)i * C + k] * f->O[(size_t)j * C + k];
            f->GO[(size_t)i * n + j] = s;
        }
}

/* M (n, n) = O1 X, X (C, n). */
static void o_times(double *M, const double *O1, const double *X, int C, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < C; k++) s += O1[(size_t)i * C + k] * X[(size_t)k * n + j];
            M[(size_t)i * n + j] = s;
        }
}

/* The three scores of sender s and receiver r; tmp (4 n^2). */
static void comp_three(double out[3], const head_factors *s, const head_factors *r, int C, int n, double *tmp) {
    double *M = tmp, *t2 = tmp + (size_t)n * n;
    const double ov1 = trace_prod(s->GP, s->GO, n), qk2 = trace_prod(r->GQ, r->GK, n), ov2 = trace_prod(r->GP, r->GO, n);
    /* Q: P1 (O1 Q2) K2^T */
    o_times(M, s->O, r->Q, C, n);
    out[0] = sqrt(fmax(tr_amb(s->GP, M, r->GK, n, t2), 0.0) / (ov1 * qk2));
    /* K: Q2 (O1 K2)^T P1^T: tr(GQ2 N GP1 N^T) with N = (O1 K2)^T */
    o_times(M, s->O, r->K, C, n);
    for (int i = 0; i < n; i++) /* transpose in place */
        for (int j = i + 1; j < n; j++) {
            const double x = M[(size_t)i * n + j];
            M[(size_t)i * n + j] = M[(size_t)j * n + i];
            M[(size_t)j * n + i] = x;
        }
    out[1] = sqrt(fmax(tr_amb(r->GQ, M, s->GP, n, t2), 0.0) / (ov1 * qk2));
    /* V: P1 (O1 P2) O2 */
    o_times(M, s->O, r->P, C, n);
    out[2] = sqrt(fmax(tr_amb(s->GP, M, r->GO, n, t2), 0.0) / (ov1 * ov2));
}

static int factors_alloc(head_factors *f, int C, int n) {
    double *b = malloc(((size_t)4 * C * n + (size_t)4 * n * n) * sizeof *b);
    if (!b) return 0;
    f->Q = b;
    f->K = f->Q + (size_t)C * n;
    f->P = f->K + (size_t)C * n;
    f->O = f->P + (size_t)C * n;
    f->GQ = f->O + (size_t)C * n;
    f->GK = f->GQ + (size_t)n * n;
    f->GP = f->GK + (size_t)n * n;
    f->GO = f->GP + (size_t)n * n;
    return 1;
}

/* A standard normal: sqrt(-2 ln(1 - u1)) cos(2 pi u2), u = (next >> 11) 2^-53. */
static double normal_of(alab_rng *r) {
    const double u1 = (double)(alab_rng_next(r) >> 11) * 0x1.0p-53, u2 = (double)(alab_rng_next(r) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, int n, double q) {
    const double pos = (n - 1) * q;
    const int i = (int)floor(pos);
    if (i + 1 >= n) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* The factors of every head of layer l into f[0..NH): its W_Q, W_K, W_V (C, HS) scaled by the gain of the norm
 * before the layer, W_O (HS, C), and their Gram matrices. wq holds (C, DQKV) + (DQ, C) floats of scratch. */
static void layer_factors(head_factors *f, alab_model *m, const dims *d, int l, float *wq) {
    const int C = d->C, n = d->HS;
    float *wo = wq + (size_t)C * d->DQKV;
    const layer_weights *w = &m->layers[l];
    /* the layer's W_Q | W_K | W_V as (C, DQKV) and W_O (DQ, C) */
    if (w->qkv_w) plain_matrix(m, wq, w->qkv_w, C, d->DQKV);
    else {
        float *tq = wo; /* W_O's room as scratch, filled after */
        const float *mats[3] = {w->q_w, w->k_w, w->v_w};
        const int cols[3] = {d->DQ, d->DKV, d->DKV}, off[3] = {0, d->DQ, d->DQ + d->DKV};
        for (int k = 0; k < 3; k++) {
            plain_matrix(m, tq, mats[k], C, cols[k]);
            for (int r = 0; r < C; r++)
                memcpy(wq + (size_t)r * d->DQKV + off[k], tq + (size_t)r * cols[k], (size_t)cols[k] * sizeof(float));
        }
    }
    plain_matrix(m, wo, w->o_w, d->DQ, C);
    for (int h = 0; h < d->NH; h++) {
        head_factors *hf = &f[h];
        const int j = h / d->G;
        for (int r = 0; r < C; r++) {
            const double g = w->ln1_w[r];
            const float *row = wq + (size_t)r * d->DQKV;
            for (int e = 0; e < n; e++) {
                hf->Q[(size_t)r * n + e] = g * row[h * n + e];
                hf->K[(size_t)r * n + e] = g * row[d->DQ + j * n + e];
                hf->P[(size_t)r * n + e] = g * row[d->DQ + d->DKV + j * n + e];
            }
        }
        for (int e = 0; e < n; e++)
            for (int k = 0; k < C; k++) hf->O[(size_t)e * C + k] = wo[((size_t)h * n + e) * C + k];
        factors_grams(hf, C, n);
    }
}

int alab_composition_scores(float *scores, double *null, alab_model *m, int n_null, uint32_t seed) {
    if (!m || !scores || (n_null > 0 && !null)) return alab_fail(ALAB_EINVAL, "alab_composition_scores: NULL argument");
    const dims d = dims_of(m);
    if (d.L < 2) return alab_fail(ALAB_EINVAL, "alab_composition_scores: a one-layer model has no pair of layers");
    int rc0 = check_linear_residual(m, "alab_composition_scores");
    if (rc0) return rc0;
    if (n_null < 0 || n_null > 100000) return alab_fail(ALAB_ERANGE, "alab_composition_scores: n_null %d outside [0, 100000]", n_null);
    const int C = d.C, n = d.HS, NH = d.NH;
    const size_t P = (size_t)d.L * (d.L - 1) / 2; /* layer pairs l1 < l2 */
    /* the sender layer's heads, the receiver layer's heads, and two for the null's draws */
    head_factors *F = calloc((size_t)2 * NH + 2, sizeof *F);
    float *wq = malloc(((size_t)C * d.DQKV + (size_t)d.DQ * C) * sizeof *wq);
    double *tmp = malloc((size_t)4 * n * n * sizeof *tmp);
    int rc = F && wq && tmp ? ALAB_OK : alab_fail(ALAB_ENOMEM, "alab_composition_scores: no memory");
    for (int i = 0; i < 2 * NH + 2 && rc == ALAB_OK; i++)
        if (!factors_alloc(&F[i], C, n)) rc = alab_fail(ALAB_ENOMEM, "alab_composition_scores: no memory");
    head_factors *snd = F, *rcv = F + NH;
    /* every pair of layers l1 < l2, in order (l1 outer): pair p = l1 (2L - l1 - 1) / 2 + l2 - l1 - 1; a sender
     * layer's factors are made once, a receiver's once per sender layer below it */
    size_t p = 0;
    for (int l1 = 0; l1 < d.L - 1 && rc == ALAB_OK; l1++) {
        layer_factors(snd, m, &d, l1, wq);
        for (int l2 = l1 + 1; l2 < d.L; l2++, p++) {
            layer_factors(rcv, m, &d, l2, wq);
            for (int h1 = 0; h1 < NH; h1++)
                for (int h2 = 0; h2 < NH; h2++) {
                    double o3[3];
                    comp_three(o3, &snd[h1], &rcv[h2], C, n, tmp);
                    for (int k = 0; k < 3; k++) scores[(((size_t)k * P + p) * NH + h1) * NH + h2] = (float)o3[k];
                }
        }
    }
    if (rc == ALAB_OK && n_null == 0 && null)
        for (int k = 0; k < 9; k++) null[k] = NAN;
    if (rc == ALAB_OK && n_null > 0) {
        double *draws = malloc((size_t)3 * n_null * sizeof *draws);
        if (!draws) rc = alab_fail(ALAB_ENOMEM, "alab_composition_scores: no memory for %d draws", n_null);
        alab_rng rng;
        alab_rng_seed(&rng, seed);
        head_factors *s = &F[2 * NH], *r = &F[2 * NH + 1];
        for (int k = 0; k < n_null && rc == ALAB_OK; k++) {
            head_factors *hf[2] = {s, r};
            for (int w2 = 0; w2 < 2; w2++) {
                head_factors *f = hf[w2];
                double *mats[4] = {f->Q, f->K, f->P, f->O};
                for (int q = 0; q < 4; q++)
                    for (size_t i = 0; i < (size_t)C * n; i++) mats[q][i] = normal_of(&rng);
                factors_grams(f, C, n);
            }
            double o3[3];
            comp_three(o3, s, r, C, n, tmp);
            for (int q = 0; q < 3; q++) draws[(size_t)q * n_null + k] = o3[q];
        }
        for (int q = 0; q < 3 && rc == ALAB_OK; q++) {
            double *v = draws + (size_t)q * n_null, mean = 0.0;
            for (int k = 0; k < n_null; k++) mean += v[k];
            qsort(v, (size_t)n_null, sizeof *v, cmp_double);
            null[q * 3] = mean / n_null;
            null[q * 3 + 1] = quantile_sorted(v, n_null, 0.025);
            null[q * 3 + 2] = quantile_sorted(v, n_null, 0.975);
        }
        free(draws);
    }
    if (F)
        for (int i = 0; i < 2 * NH + 2; i++) free(F[i].Q);
    free(F);
    free(wq);
    free(tmp);
    return rc;
}
