/* measures.c — `attnlab evidence --kind K`: the measures of docs/evidence.md,
 * one handler a row of measures.h. A handler's signature says what it reads:
 * a text (ev_K(f, c, m, ids, T)) or the weights alone (ev_K(f, c, m)); a row
 * that takes --set has ev_K_set(f, c, m) too. Each writes its fields of one
 * JSON object, built in memory: nothing reaches stdout unless it succeeds. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "io.h"
#include "json.h"
#include "measures.h"
#include "reference_text.h"

/* What a handler returns: ALAB_OK, an engine error (ALAB_E*, negative; reported by cmd_evidence), or one of
 * these, the reason already on stderr. exit_code maps them. */
enum {
    CLI_REPORTED_INPUT = 1, /* a text or a set could not be read: exit 1 */
    CLI_REPORTED_USAGE = 2  /* the options do not fit the measure or the model: exit 2 */
};

static int exit_code(int rc) {
    if (rc == CLI_REPORTED_INPUT) return 1;
    if (rc == CLI_REPORTED_USAGE) return 2;
    return fail_rc(rc, "evidence");
}

/* ---- the measures (docs/evidence.md) ------------------------------------------ */

static void json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

/* Nonzero (and why, on stderr) when --seed does not fit the evidence seeds' 32 bits. */
static int evidence_seed_bad(const cli *c) {
    if (!c->has_seed || c->seed <= 0xFFFFFFFFull) return 0;
    fprintf(stderr, "attnlab: --seed %llu: the evidence seeds are 32-bit (0 to 4294967295)\n", c->seed);
    return 1;
}

static int json_rank(FILE *f, const char *name, const double *a, const double *b, int n) {
    double rho, tau;
    int rc = alab_spearman(&rho, a, b, n);
    if (!rc) rc = alab_kendall_tau_b(&tau, a, b, n);
    if (rc) return rc;
    fprintf(f, ",\"%s\":{\"spearman\":", name);
    json_num(f, rho);
    fputs(",\"kendall\":", f);
    json_num(f, tau);
    fputc('}', f);
    return 0;
}

static int ev_edge(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int layer = c->ev_layer < 0 ? cfg->n_layer - 1 : c->ev_layer;
    const size_t TT = (size_t)T * T;
    float *buf = malloc(3 * TT * sizeof *buf);
    double *a = malloc(2 * TT * sizeof *a);
    if (!buf || !a) { free(buf); free(a); return ALAB_ENOMEM; }
    float *A = buf, *E = buf + TT, *EL = buf + 2 * TT;
    int rc = alab_edge_knockout(A, E, EL, m, ids, T, layer, c->ev_head, 0, T, c->ko_mode);
    if (!rc) {
        /* the pairs that exist: j <= i, and inside the layer's window on a sliding-window layer, where
         * alab_edge_knockout marks the others NaN (no pair: the JS API and the --set path skip them too) */
        int n = 0;
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++) {
                if (isnan(E[i * T + j])) continue;
                a[n] = A[i * T + j];
                a[TT + n] = E[i * T + j];
                n++;
            }
        fprintf(f, ",\"layer\":%d,\"head\":", layer);
        if (c->ev_head < 0) fputs("\"all\"", f); else fprintf(f, "%d", c->ev_head);
        fputs(",\"A\":", f); json_floats(f, A, TT);
        fputs(",\"E\":", f);
        fputc('[', f);
        for (size_t x = 0; x < TT; x++) { if (x) fputc(',', f); json_num(f, E[x]); }
        /* in the model's last layer an edge of a row i < T-1 cannot reach position T-1: its E_last is a
         * structural zero (not measured), written null as the JS API's ELast leaves it out of every pair */
        const int last_layer = layer == cfg->n_layer - 1;
        fputs("],\"E_last\":[", f);
        for (size_t x = 0; x < TT; x++) {
            if (x) fputc(',', f);
            if (last_layer && (int)(x / (size_t)T) < T - 1) fputs("null", f);
            else json_num(f, EL[x]);
        }
        fputc(']', f);
        rc = json_rank(f, "A_vs_E", a, a + TT, n);
        double share;
        if (!rc && !(rc = alab_top_k_overlap(&share, a, a + TT, n, T))) {
            fprintf(f, ",\"pairs\":%d,\"top_k\":%d,\"top_k_overlap\":", n, T < n ? T : n);
            json_num(f, share);
        }
    }
    free(buf);
    free(a);
    return rc;
}

static int ev_tokens(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    float *eff = malloc((size_t)T * sizeof *eff), *R = malloc((size_t)T * T * sizeof *R), *fl = malloc((size_t)T * sizeof *fl);
    double *d = malloc(4 * (size_t)T * sizeof *d);
    int neutral = c->neutral;
    if (c->token_mode == ALAB_TOKEN_REPLACE && neutral < 0) { /* the JS API's default: " the" when one token, else 0 */
        int *t = NULL, nt = 0;
        if (encode(&t, &nt, m, " the")) { free(t); free(eff); free(R); free(fl); free(d); return CLI_REPORTED_INPUT; }
        neutral = nt == 1 ? t[0] : 0;
        free(t);
    }
    int rc = eff && R && fl && d ? alab_token_knockout(eff, m, ids, T, 0, T,
        c->token_mode == ALAB_TOKEN_COLUMN && c->ko_mode == ALAB_KO_ZERO ? ALAB_TOKEN_COLUMN_ZERO : c->token_mode, neutral) : ALAB_ENOMEM;
    if (!rc) rc = alab_forward(m, ids, T, NULL);
    if (!rc) rc = alab_attention_rollout(R, alab_result_attention(m), L, NH, T);
    if (!rc) rc = alab_attention_flow(fl, alab_result_attention(m), L, NH, T, T - 1);
    if (!rc) {
        const float *att = alab_result_attention(m) + (size_t)(L - 1) * NH * T * T;
        for (int j = 0; j < T; j++) {
            double s = 0.0;
            for (int h = 0; h < NH; h++) s += att[(size_t)h * T * T + (size_t)(T - 1) * T + j];
            d[j] = eff[j];
            d[T + j] = s / NH;
            d[2 * T + j] = R[(size_t)(T - 1) * T + j];
            d[3 * T + j] = fl[j];
        }
        fputs(",\"effect\":", f); json_floats(f, eff, (size_t)T);
        fputs(",\"readings\":{\"last_layer\":[", f);
        for (int j = 0; j < T; j++) { if (j) fputc(',', f); json_num(f, d[T + j]); }
        fputs("],\"rollout\":", f); json_floats(f, R + (size_t)(T - 1) * T, (size_t)T);
        fputs(",\"flow\":", f); json_floats(f, fl, (size_t)T);
        fputc('}', f);
        rc = json_rank(f, "last_layer", d + T, d, T);
        if (!rc) rc = json_rank(f, "rollout", d + 2 * T, d, T);
        if (!rc) rc = json_rank(f, "flow", d + 3 * T, d, T);
    }
    free(eff); free(R); free(fl); free(d);
    return rc;
}

static int ev_ablation(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head, C = NH * cfg->head_dim, LH = L * NH; /* C: head outputs */
    int *ref = NULL, Tr = 0;
    /* the default reference is the JS API's (web/src/evidence-reference.js, generated into reference_text.h) */
    if (encode(&ref, &Tr, m, c->reference ? c->reference : ALAB_REFERENCE_TEXT)) { free(ref); return CLI_REPORTED_INPUT; }
    if (Tr > cfg->n_positions) Tr = cfg->n_positions;
    float *hv = malloc((size_t)L * (Tr ? Tr : 1) * C * sizeof *hv), *delta = malloc(3 * (size_t)LH * sizeof *delta);
    double *dd = malloc(3 * (size_t)LH * sizeof *dd);
    int rc = hv && delta && dd ? alab_capture_head_outputs(hv, m, ref, Tr) : ALAB_ENOMEM;
    /* zero, mean, and resample from the one window of the reference aligned with the input ("resample_window":
     * a single draw); "resample" is the mean over K seeded windows below, the number the JS API reports */
    static const char *names[3] = {"zero", "mean", "resample_window"};
    for (int mode = 0; mode < 3 && !rc; mode++) {
        double base;
        rc = alab_head_importance_mode(delta + mode * LH, &base, m, ids, T, mode, mode ? hv : NULL, mode ? Tr : 0);
        if (rc) break;
        fprintf(f, ",\"%s\":{\"base_loss\":", names[mode]);
        json_num(f, base);
        fputs(",\"delta\":", f);
        json_floats(f, delta + mode * LH, (size_t)LH);
        fputc('}', f);
        for (int i = 0; i < LH; i++) dd[mode * LH + i] = delta[mode * LH + i];
    }
    /* resample averaged over K draws of a window of the reference (alab_resample_draws) */
    const int K = c->draws ? c->draws : 20;
    if (evidence_seed_bad(c)) {
        free(ref); free(hv); free(delta); free(dd);
        return CLI_REPORTED_USAGE;
    }
    const unsigned seed = c->has_seed ? (unsigned)c->seed : 1u;
    float *draws = rc ? NULL : malloc((size_t)K * LH * sizeof *draws);
    int *offs = rc ? NULL : malloc((size_t)K * sizeof *offs);
    if (!rc && (!draws || !offs)) rc = ALAB_ENOMEM;
    if (!rc) {
        double base;
        rc = alab_resample_draws(delta + 2 * LH, draws, offs, &base, m, ids, T, hv, Tr, K, seed);
        if (!rc) {
            fputs(",\"resample\":{\"base_loss\":", f);
            json_num(f, base);
            fprintf(f, ",\"K\":%d,\"seed\":%u,\"offsets\":", K, seed);
            json_ints(f, offs, K);
            fputs(",\"delta\":", f);
            json_floats(f, delta + 2 * LH, (size_t)LH);
            fputs(",\"draws\":", f);
            json_floats(f, draws, (size_t)K * LH);
            fputc('}', f);
            for (int i = 0; i < LH; i++) dd[2 * LH + i] = delta[2 * LH + i];
        }
    }
    free(draws);
    free(offs);
    if (!rc) rc = json_rank(f, "zero_vs_mean", dd, dd + LH, LH);
    if (!rc) rc = json_rank(f, "zero_vs_resample", dd, dd + 2 * LH, LH);
    if (!rc) rc = json_rank(f, "mean_vs_resample", dd + LH, dd + 2 * LH, LH);
    free(ref); free(hv); free(delta); free(dd);
    return rc;
}

/* The corrupted input of a pair kind (patch, pattern-value, path, trace): --corrupt, as many tokens as the
 * clean text, and the answers: --answers, or each run's top next token (clean, corrupted). *d is the caller's
 * to free, whatever the result; CLI_REPORTED_INPUT / _USAGE once the reason is on stderr. */
static int pair_inputs(int **d, int ans[2], const cli *c, alab_model *m, const int *ids, int T) {
    *d = NULL;
    if (!c->corrupt) {
        usage_error("--kind %s needs --corrupt TEXT", c->kind);
        return CLI_REPORTED_USAGE;
    }
    int Td = 0;
    if (encode(d, &Td, m, c->corrupt)) return CLI_REPORTED_INPUT;
    if (Td != T) {
        fprintf(stderr, "attnlab: the clean text has %d tokens and the corrupted one %d; patching needs equal lengths\n", T, Td);
        return CLI_REPORTED_USAGE;
    }
    ans[0] = c->answers[0];
    ans[1] = c->answers[1];
    int rc = 0;
    if (!c->has_answers) { /* each run's top next token */
        for (int k = 0; k < 2 && !rc; k++) {
            float p;
            rc = alab_forward(m, k ? *d : ids, T, NULL);
            if (!rc) rc = alab_result_topk(&ans[k], &p, 1, m);
        }
    }
    return rc;
}

/* ,"answers":[a,b],"ld_clean":x,"ld_corrupt":y,"gap":x-y and, when the gap is under 1 nat (a set would skip the
 * pair: the model must favour the clean answer by at least minGap = 1 more on the clean input), a "warning" */
static void json_pair(FILE *f, const int ans[2], double ldc, double ldd) {
    fprintf(f, ",\"answers\":[%d,%d],\"ld_clean\":", ans[0], ans[1]);
    json_num(f, ldc);
    fputs(",\"ld_corrupt\":", f);
    json_num(f, ldd);
    fputs(",\"gap\":", f);
    json_num(f, ldc - ldd);
    if (!(ldc - ldd >= 1.0))
        fprintf(f, ",\"warning\":\"the scores divide by a small or negative gap: the clean run favours the clean answer "
                   "over the corrupted one by %.3f nats more than the corrupted run does, less than 1; a set would skip "
                   "this pair\"", ldc - ldd);
}

static void json_doubles(FILE *f, const double *x, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', f);
        json_num(f, x[i]);
    }
    fputc(']', f);
}

static int ev_patch(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    int *d = NULL, ans[2];
    int rc = pair_inputs(&d, ans, c, m, ids, T);
    float *rg = rc ? NULL : malloc((size_t)L * T * sizeof *rg), *hg = rc ? NULL : malloc((size_t)L * NH * sizeof *hg);
    double ldc = 0, ldd = 0;
    if (!rc) rc = rg && hg ? alab_activation_patching(rg, hg, &ldc, &ldd, m, ids, d, T, ans[0], ans[1]) : ALAB_ENOMEM;
    if (!rc) {
        json_pair(f, ans, ldc, ldd);
        fputs(",\"resid\":", f); json_floats(f, rg, (size_t)L * T);
        fputs(",\"heads\":", f); json_floats(f, hg, (size_t)L * NH);
    }
    free(d); free(rg); free(hg);
    return rc;
}

/* Pattern versus value patching (alab_pattern_value_patching): per direction the pattern, value and both
 * grids, each (L, NH). */
static int ev_pattern_value(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const size_t LH = (size_t)cfg->n_layer * cfg->n_head;
    int *d = NULL, ans[2];
    int rc = pair_inputs(&d, ans, c, m, ids, T);
    float *g = rc ? NULL : malloc(6 * LH * sizeof *g);
    double ldc = 0, ldd = 0;
    if (!rc) rc = g ? alab_pattern_value_patching(g, &ldc, &ldd, m, ids, d, T, ans[0], ans[1]) : ALAB_ENOMEM;
    if (!rc) {
        static const char *dirs[2] = {"denoise", "noise"}, *parts[3] = {"pattern", "value", "both"};
        json_pair(f, ans, ldc, ldd);
        for (int dir = 0; dir < 2; dir++) {
            fprintf(f, ",\"%s\":{", dirs[dir]);
            for (int k = 0; k < 3; k++) {
                fprintf(f, "%s\"%s\":", k ? "," : "", parts[k]);
                json_floats(f, g + ((size_t)dir * 3 + k) * LH, LH);
            }
            fputc('}', f);
        }
    }
    free(d); free(g);
    return rc;
}

/* Path patching (alab_path_patching): one sender grid (L, NH) per receiver, null where no path exists. */
static int ev_path(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    const size_t LH = (size_t)L * NH;
    static const alab_path_receiver logits = {-1, -1, ALAB_PATH_LOGITS};
    const alab_path_receiver *recv = c->n_recv ? c->recv : &logits;
    const int n_recv = c->n_recv ? c->n_recv : 1;
    int *d = NULL, ans[2];
    int rc = pair_inputs(&d, ans, c, m, ids, T);
    float *out = rc ? NULL : malloc((size_t)n_recv * LH * sizeof *out);
    double ldc = 0, ldd = 0;
    if (!rc)
        rc = out ? alab_path_patching(out, &ldc, &ldd, m, ids, d, T, ans[0], ans[1], recv, n_recv, c->direction,
                                      c->freeze_mlp ? ALAB_PATH_FREEZE_MLP : 0)
                 : ALAB_ENOMEM;
    if (rc == ALAB_ERANGE && ans[0] >= 0 && ans[0] < cfg->vocab_size && ans[1] >= 0 && ans[1] < cfg->vocab_size) {
        /* answers in the vocabulary: the range error is a receiver's, a usage error of --receivers */
        for (int k = 0; k < n_recv; k++)
            if (recv[k].input != ALAB_PATH_LOGITS && (recv[k].layer >= L || recv[k].head >= NH)) {
                fail_rc(rc, "--receivers");
                rc = CLI_REPORTED_USAGE;
                break;
            }
    }
    if (!rc) {
        static const char *inputs[4] = {"q", "k", "v", "logits"};
        json_pair(f, ans, ldc, ldd);
        fprintf(f, ",\"direction\":\"%s\",\"freeze_mlp\":%s,\"receivers\":[", c->direction == ALAB_NOISE ? "noise" : "denoise",
                c->freeze_mlp ? "true" : "false");
        for (int k = 0; k < n_recv; k++) {
            if (recv[k].input == ALAB_PATH_LOGITS)
                fprintf(f, "%s{\"layer\":null,\"head\":null,\"input\":\"logits\"}", k ? "," : "");
            else
                fprintf(f, "%s{\"layer\":%d,\"head\":%d,\"input\":\"%s\"}", k ? "," : "", recv[k].layer, recv[k].head,
                        inputs[recv[k].input]);
        }
        fputs("],\"senders\":[", f);
        for (int k = 0; k < n_recv; k++) {
            if (k) fputc(',', f);
            json_floats(f, out + (size_t)k * LH, LH);
        }
        fputc(']', f);
    }
    free(d); free(out);
    return rc;
}

/* Direct logit attribution (alab_direct_logit_attribution) at the last position: the answers are --answers
 * (A alone: the logit of A), or the run's top next token and its second. */
static int ev_dla(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer;
    const size_t LH = (size_t)L * cfg->n_head;
    int ans[2] = {c->answers[0], c->has_answers == 1 ? -1 : c->answers[1]}, rc = 0;
    if (!c->has_answers) {
        float p[2];
        rc = alab_forward(m, ids, T, NULL);
        if (!rc) rc = alab_result_topk(ans, p, 2, m);
    }
    float *heads = malloc(LH * sizeof *heads), *src = malloc(LH * T * sizeof *src);
    double *terms = malloc((3 + 2 * (size_t)L) * sizeof *terms), ld = 0;
    if (!rc) rc = heads && src && terms ? alab_direct_logit_attribution(heads, src, terms, &ld, m, ids, T, ans[0], ans[1])
                                        : ALAB_ENOMEM;
    if (!rc) {
        if (ans[1] < 0) fprintf(f, ",\"answers\":[%d],\"ld\":", ans[0]);
        else fprintf(f, ",\"answers\":[%d,%d],\"ld\":", ans[0], ans[1]);
        json_num(f, ld);
        fputs(",\"heads\":", f); json_floats(f, heads, LH);
        fputs(",\"sources\":", f); json_floats(f, src, LH * T);
        fputs(",\"terms\":{\"token\":", f); json_num(f, terms[0]);
        fputs(",\"position\":", f); json_num(f, terms[1]);
        fputs(",\"final_bias\":", f); json_num(f, terms[2]);
        fputs(",\"attn_bias\":", f); json_doubles(f, terms + 3, L);
        fputs(",\"mlp\":", f); json_doubles(f, terms + 3 + L, L);
        fputc('}', f);
    }
    free(heads); free(src); free(terms);
    return rc;
}

/* Value-weighted attention's norms (alab_value_norms), (L, NH, T). */
static int ev_value_norms(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const alab_config *cfg = alab_model_config(m);
    const size_t n = (size_t)cfg->n_layer * cfg->n_head * T;
    float *norms = malloc(n * sizeof *norms);
    int rc = norms ? alab_value_norms(norms, m, ids, T) : ALAB_ENOMEM;
    if (!rc) {
        fputs(",\"norms\":", f);
        json_floats(f, norms, n);
    }
    free(norms);
    return rc;
}

/* Causal tracing by component (alab_component_tracing), denoising: attn and mlp, each (L, T). */
static int ev_trace(FILE *f, const cli *c, alab_model *m, const int *ids, int T) {
    const size_t LT = (size_t)alab_model_config(m)->n_layer * T;
    int *d = NULL, ans[2];
    int rc = pair_inputs(&d, ans, c, m, ids, T);
    float *g = rc ? NULL : malloc(2 * LT * sizeof *g);
    double ldc = 0, ldd = 0;
    if (!rc) rc = g ? alab_component_tracing(g, g + LT, &ldc, &ldd, m, ids, d, T, ans[0], ans[1]) : ALAB_ENOMEM;
    if (!rc) {
        json_pair(f, ans, ldc, ldd);
        fputs(",\"attn\":", f); json_floats(f, g, LT);
        fputs(",\"mlp\":", f); json_floats(f, g + LT, LT);
    }
    free(d); free(g);
    return rc;
}

/* Composition scores of the weights (alab_composition_scores): Q, K, V, each (P, NH, NH) over the P = L(L-1)/2
 * layer pairs l1 < l2 ("pairs" lists them, l1 outer), and their
 * Gaussian null. No text. */
static int ev_composition(FILE *f, const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    if (evidence_seed_bad(c)) return CLI_REPORTED_USAGE;
    const uint32_t seed = c->has_seed ? (uint32_t)c->seed : 1u;
    const int L = cfg->n_layer;
    const size_t n = L > 1 ? (size_t)L * (L - 1) / 2 * cfg->n_head * cfg->n_head : 1;
    float *sc = malloc(3 * n * sizeof *sc);
    double null[9];
    int rc = sc ? alab_composition_scores(sc, null, m, c->n_null, seed) : ALAB_ENOMEM;
    if (!rc) {
        static const char *names[3] = {"q", "k", "v"};
        fprintf(f, ",\"n_null\":%d,\"seed\":%u,\"pairs\":[", c->n_null, seed);
        for (int l1 = 0, first = 1; l1 < L - 1; l1++)
            for (int l2 = l1 + 1; l2 < L; l2++, first = 0) fprintf(f, "%s[%d,%d]", first ? "" : ",", l1, l2);
        fputc(']', f);
        for (int k = 0; k < 3; k++) {
            fprintf(f, ",\"%s\":", names[k]);
            json_floats(f, sc + (size_t)k * n, n);
        }
        fputs(",\"null\":{", f);
        for (int k = 0; k < 3; k++) {
            fprintf(f, "%s\"%s\":{\"mean\":", k ? "," : "", names[k]);
            json_num(f, null[3 * k]);
            fputs(",\"lo\":", f); json_num(f, null[3 * k + 1]);
            fputs(",\"hi\":", f); json_num(f, null[3 * k + 2]);
            fputc('}', f);
        }
        fputc('}', f);
    }
    free(sc);
    return rc;
}

/* ---- the options a kind takes, and its work budget ----------------------------------------------------- */

/* Each evidence flag and the kinds it applies to ("" for none: a flag of run or generate). A flag of the sets
 * applies only with --set. --model, --text, --set, --kind, --threads, --half, --json and --budget apply to
 * every kind (--text and --set are checked against the kind by args.c). */
static const struct {
    const char *flag, *kinds; /* kinds: ",k1,k2," */
    int set_only;
} FLAG_KINDS[] = {
    {"--layer", ",edge,", 0},           {"--head", ",edge,", 0},
    {"--knockout", ",edge,tokens,", 0}, {"--token-mode", ",tokens,", 0},
    {"--neutral", ",tokens,", 0},       {"--reference", ",ablation,", 0},
    {"--draws", ",ablation,", 0},       {"--corrupt", ",patch,pattern-value,path,trace,", 0},
    {"--answers", ",patch,pattern-value,path,trace,dla,", 0},
    {"--receivers", ",path,", 0},       {"--direction", ",path,", 0},
    {"--freeze-mlp", ",path,", 0},      {"--n-null", ",composition,", 0},
    {"--limit", ",edge,tokens,", 1},    {"--n-boot", ",edge,tokens,", 1},
    {"--n-perm", ",edge,tokens,", 1},   {"--epsilon", ",edge,tokens,", 1},
    {"--do", "", 0}, {"--ablate", "", 0}, {"--mask", "", 0}, {"--scale", "", 0}, {"--capture", "", 0},
    {"--top", "", 0}, {"--max-new", "", 0}, {"--temperature", "", 0}, {"--top-k", "", 0},
};

static int kind_in(const char *kinds, const char *kind) {
    const size_t n = strlen(kind);
    for (const char *p = strstr(kinds, kind); p; p = strstr(p + 1, kind))
        if (p > kinds && p[-1] == ',' && p[n] == ',') return 1;
    return 0;
}

int cli_measure_check_flags(const cli *c) {
    for (int g = 0; g < c->n_given; g++) {
        const char *a = c->given[g];
        if (strcmp(a, "--seed") == 0) { /* the resamples of a set, the draws of ablation, the null of composition */
            if (c->set || kind_in(",ablation,composition,", c->kind)) continue;
            fprintf(stderr, "attnlab: --seed does not apply to --kind %s (EINVAL): it seeds --kind ablation, composition "
                    "and the sets (--set)\n(run `attnlab --help` for usage)\n", c->kind);
            return 2;
        }
        for (size_t i = 0; i < sizeof FLAG_KINDS / sizeof FLAG_KINDS[0]; i++) {
            if (strcmp(a, FLAG_KINDS[i].flag)) continue;
            const int fits = kind_in(FLAG_KINDS[i].kinds, c->kind) && (!FLAG_KINDS[i].set_only || c->set);
            if (fits) break;
            if (!FLAG_KINDS[i].kinds[0])
                fprintf(stderr, "attnlab: %s does not apply to --kind %s (EINVAL): it is an option of run or generate\n", a,
                        c->kind);
            else if (FLAG_KINDS[i].set_only && kind_in(FLAG_KINDS[i].kinds, c->kind))
                fprintf(stderr, "attnlab: %s does not apply to --kind %s without --set (EINVAL)\n", a, c->kind);
            else {
                char list[128];
                snprintf(list, sizeof list, "%s", FLAG_KINDS[i].kinds + 1);
                list[strlen(list) - 1] = '\0';
                for (char *q = list; (q = strchr(q, ',')); ) *q = '/';
                fprintf(stderr, "attnlab: %s does not apply to --kind %s (EINVAL): it is for --kind %s%s\n", a, c->kind, list,
                        FLAG_KINDS[i].set_only ? " with --set" : "");
            }
            fputs("(run `attnlab --help` for usage)\n", stderr);
            return 2;
        }
    }
    return 0;
}

/* The work of a kind, estimated from its arguments before it starts: multiply-adds of the forward passes it runs
 * (the rows and layers each one recomputes, the LM head rows it reads) and of its statistics (a point of one
 * correlation in one resample counted as STAT_MACS; a draw of the composition null as 32·C·HS·(HS + 200), the
 * random matrices included). Calibrated on the built-in model to within about 2× of the time at ~15 G
 * multiply-adds a second (docs/BENCHMARKS.md, "Work budgets"); web/src/work.js computes the same for the JS
 * measures. Over --budget (default CLI_DEFAULT_BUDGET) the kind is refused with ELIMIT and the estimate. */
#define STAT_MACS 100.0

typedef struct {
    double L, NH, C, HS, V, lay; /* lay: one row through one layer's products */
} work_shape;

static work_shape shape_of(const alab_model *m) {
    const alab_config *g = alab_model_config(m);
    work_shape w = {g->n_layer, g->n_head, g->n_embd, g->head_dim, g->vocab_size, 0};
    const double kv = g->n_kv_head > 0 ? g->n_kv_head : g->n_head;
    w.lay = w.C * (w.NH + 2 * kv) * w.HS + w.NH * w.HS * w.C + 8 * w.C * w.C;
    return w;
}

/* a row through `layers` layers of a T-token run (its attention over T/2 keys on average, q·k and a·v) */
static double rows_cost(const work_shape *w, double rows, double layers, double T) {
    return rows * layers * (w->lay + w->NH * w->HS * T);
}
static double fwd(const work_shape *w, double T) { return rows_cost(w, T, w->L, T) + w->V * w->C; }

/* edge knockouts of every pair of one T-token input in `layer` (alab_edge_knockout: rows i.. from the layer up,
 * row i alone in the last layer; one or two LM-head rows read a pair) */
static double edge_work(const work_shape *w, double T, int layer) {
    const int last = layer == (int)w->L - 1;
    double e = fwd(w, T) + (T + 1) * w->V * w->C;
    for (int i = 0; i < (int)T; i++)
        e += (i + 1) * (rows_cost(w, last ? 1 : T - i, w->L - layer, T) + (last || i == (int)T - 1 ? 1 : 2) * w->V * w->C);
    return e;
}

/* the noise floor of a set: one no-op knockout per row (layer -1: a whole run per row) */
static double noise_work(const work_shape *w, double T, int layer) {
    if (layer < 0) return T * fwd(w, T);
    const int last = layer == (int)w->L - 1;
    double e = fwd(w, T);
    for (int i = 0; i < (int)T; i++) e += rows_cost(w, last ? 1 : T - i, w->L - layer, T) + w->V * w->C;
    return e;
}

static double kind_work(const cli *c, const alab_model *m, const int *T, int n) {
    const work_shape w = shape_of(m);
    const double LH = w.L * w.NH, t = n ? T[0] : 0, P = alab_model_config(m)->n_positions;
    const int layer = c->ev_layer < 0 ? (int)w.L - 1 : c->ev_layer;
    const double resamples = (double)c->n_boot + c->n_perm;
    const char *k = c->kind;
    if (c->set) {
        double e = 0, points = 0;
        const int n_noise = c->epsilon < 0.0 ? (n < 10 ? n : 10) : 0;
        for (int i = 0; i < n; i++) {
            const int edge = strcmp(k, "edge") == 0;
            e += edge ? edge_work(&w, T[i], layer) : (T[i] + 2) * fwd(&w, T[i]);
            if (i < n_noise) e += noise_work(&w, T[i], edge ? layer : -1);
            points += edge ? (double)T[i] * (T[i] + 1) / 2 : T[i];
        }
        return e + (strcmp(k, "edge") == 0 ? 4 : 4) * resamples * points * STAT_MACS; /* the correlations with nulls */
    }
    if (strcmp(k, "edge") == 0) return edge_work(&w, t, layer);
    if (strcmp(k, "tokens") == 0) return (t + 2) * fwd(&w, t) + w.L * w.NH * t * t * t;
    if (strcmp(k, "ablation") == 0) {
        const double K = c->draws ? c->draws : 20, loss = t * w.V * w.C; /* each run's loss reads every row's head */
        return fwd(&w, P) + (3 * (LH + 1) + K * LH + 1) * (fwd(&w, t) + loss);
    }
    if (strcmp(k, "patch") == 0) return (4 + w.L * t + LH) * fwd(&w, t);
    if (strcmp(k, "pattern-value") == 0) return (4 + 6 * LH) * fwd(&w, t);
    if (strcmp(k, "path") == 0)
        return (4 + LH) * fwd(&w, t) + (c->n_recv ? c->n_recv : 1) * LH * rows_cost(&w, t, 1, t);
    if (strcmp(k, "trace") == 0) return (4 + 2 * w.L * t) * fwd(&w, t);
    if (strcmp(k, "dla") == 0 || strcmp(k, "value-norms") == 0) return 2 * fwd(&w, t) + LH * t * w.HS * w.C;
    if (strcmp(k, "composition") == 0)
        return ((double)c->n_null + (double)w.L * (w.L - 1) / 2 * w.NH * w.NH) * 32 * w.C * w.HS * (w.HS + 200);
    return 0;
}

/* 0, or ELIMIT on stderr (exit 1) when the kind's estimated work is over --budget. */
static int over_budget(const cli *c, const alab_model *m, const int *T, int n) {
    const double e = kind_work(c, m, T, n);
    if (e <= c->budget) return 0;
    char what[96];
    long tokens = 0;
    for (int i = 0; i < n; i++) tokens += T[i];
    if (c->set) snprintf(what, sizeof what, "%d inputs, %ld tokens", n, tokens);
    else if (n) snprintf(what, sizeof what, "%d tokens", T[0]);
    else snprintf(what, sizeof what, "the weights alone");
    fprintf(stderr, "attnlab: evidence: ELIMIT: --kind %s%s would do about %.2g multiply-adds (estimated from its "
            "arguments before it starts, on %s), over the budget of %.3g; raise it with --budget N\n",
            c->kind, c->set ? " --set" : "", e, what, c->budget);
    return 1;
}

/* ---- evidence over a set of inputs ---------------------------------------- */

/* The name a set is reported under: heldout, repeated, or "file". */
static const char *named_or_file(const char *set) {
    return strcmp(set, "heldout") == 0 || strcmp(set, "repeated") == 0 ? set : "file";
}

typedef struct {
    int **ids;
    int *T;
    int n;
} input_set;

static void set_free(input_set *s) {
    for (int k = 0; k < s->n; k++) free(s->ids[k]);
    free(s->ids);
    free(s->T);
    s->ids = NULL;
    s->T = NULL;
    s->n = 0;
}

/* A dataset file (--set FILE) is read line by line (alab_lines_*, c/src/io.h), never whole: at most
 * CLI_SET_MAX_BYTES bytes, CLI_SET_MAX_LINE bytes a line (the encoder's own limit), reading stops at --limit, and
 * the set's points are counted as the lines come, so that a set over ALAB_EVIDENCE_MAX_N points is refused
 * (ELIMIT) before the rest is read and before the first forward pass (docs/security.md, "Evidence"). */
#define CLI_SET_MAX_BYTES ((uint64_t)64 << 20)
#define CLI_SET_MAX_LINE ((size_t)ALAB_MAX_TEXT_BYTES)

/* The stable name of an engine code, for messages that name it. */
static const char *code_name(int rc) {
    switch (rc) {
    case ALAB_EINVAL: return "EINVAL";
    case ALAB_ENOMEM: return "ENOMEM";
    case ALAB_EIO: return "EIO";
    case ALAB_EFORMAT: return "EFORMAT";
    case ALAB_ELIMIT: return "ELIMIT";
    case ALAB_ERANGE: return "ERANGE";
    default: return "ERROR";
    }
}

/* The points a measure's set summary holds for one input of T tokens (its correlations' size): every causal
 * pair for edge knockout, every position for token knockout. */
typedef size_t (*points_fn)(int T);
static size_t edge_points(int T) { return (size_t)T * (T + 1) / 2; }
static size_t token_points(int T) { return (size_t)T; }

static int set_push(input_set *s, int *ids, int T, int P, const char *where, long index, points_fn points, size_t *total) {
    if (T < 2) {
        fprintf(stderr, "attnlab: --set: %s %ld has %d tokens; at least 2 are needed\n", where, index, T);
        free(ids);
        return 1;
    }
    const int t = T > P ? P : T; /* cut at n_positions, as the JS API does */
    *total += points(t);
    if (*total > ALAB_EVIDENCE_MAX_N) { /* before any forward pass, and before the rest of the set is read */
        fprintf(stderr, "attnlab: --set: ELIMIT: the set holds more than %d points (ALAB_EVIDENCE_MAX_N) by its %s %ld "
                "(%zu so far), checked before the first forward pass; use --limit %d or fewer inputs\n", ALAB_EVIDENCE_MAX_N,
                where, index, *total, s->n ? s->n : 1);
        free(ids);
        return 1;
    }
    int **ni = realloc(s->ids, (size_t)(s->n + 1) * sizeof *ni);
    if (ni) s->ids = ni;
    int *nt = ni ? realloc(s->T, (size_t)(s->n + 1) * sizeof *nt) : NULL;
    if (!ni || !nt) { free(ids); return fail_rc(ALAB_ENOMEM, "--set"); }
    s->T = nt;
    s->ids[s->n] = ids;
    s->T[s->n] = t;
    s->n++;
    return 0;
}

/* The lines of a dataset file, each non-empty one an input, until --limit inputs. */
static int load_lines(input_set *s, const cli *c, alab_model *m, const char *path, int P, points_fn points, size_t *total) {
    alab_lines *r;
    int rc = alab_lines_open(&r, path, CLI_SET_MAX_BYTES, CLI_SET_MAX_LINE);
    if (rc != ALAB_OK) {
        fprintf(stderr, "attnlab: --set: %s: %s\n", code_name(rc), alab_last_error());
        return 1;
    }
    const char *line;
    size_t len;
    while (!c->limit || s->n < c->limit) {
        if ((rc = alab_lines_next(r, &line, &len)) <= 0) break;
        if (!len) continue;
        int *ids = NULL, T = 0;
        if (encode(&ids, &T, m, line)) {
            fprintf(stderr, "attnlab: --set: %s line %ld could not be encoded\n", path, alab_lines_number(r));
            free(ids);
            rc = 1;
            break;
        }
        if ((rc = set_push(s, ids, T, P, "line", alab_lines_number(r), points, total))) break;
    }
    if (rc < 0) {
        fprintf(stderr, "attnlab: --set: %s: %s\n", code_name(rc), alab_last_error());
        rc = 1;
    }
    alab_lines_close(r);
    return rc;
}

/* The inputs of --set: heldout / repeated (the built-in model's evidence/ folder) or a file of texts. */
static int load_set(input_set *s, const cli *c, alab_model *m, points_fn points) {
    char dir[PATH_MAX], path[PATH_MAX];
    const int P = alab_model_config(m)->n_positions;
    const int named = strcmp(c->set, "heldout") == 0 || strcmp(c->set, "repeated") == 0;
    size_t total = 0; /* the set's points so far */
    if (named) {
        const char *d = find_builtin_model(dir, sizeof dir);
        if (!d) { fprintf(stderr, "attnlab: --set %s: the built-in model's folder is not found\n", c->set); return 1; }
        snprintf(path, sizeof path, "%s/evidence/%s", d,
                 strcmp(c->set, "heldout") == 0 ? "heldout-sentences.txt" : "repeated-tokens.json");
    } else {
        snprintf(path, sizeof path, "%s", c->set);
    }
    int rc = 0;
    if (named && strcmp(c->set, "repeated") == 0) { /* the built-in model's own JSON file */
        size_t len = 0;
        char *text = NULL;
        if (alab_read_whole_file(&text, &len, path, CLI_SET_MAX_BYTES, 0)) {
            fprintf(stderr, "attnlab: --set: cannot read %s: %s\n", path, strerror(errno));
            return 1;
        }
        json_doc doc;
        const json_value *seqs = NULL;
        if (json_parse(&doc, text, len, 0) == ALAB_OK) seqs = json_get(doc.root, "sequences");
        if (!seqs || seqs->type != JSON_ARRAY) {
            fprintf(stderr, "attnlab: --set repeated: %s has no \"sequences\" array\n", path);
            rc = 1;
        }
        const int V = alab_model_config(m)->vocab_size;
        for (uint32_t k = 0; !rc && k < seqs->n && (!c->limit || s->n < c->limit); k++) {
            const json_value *q = &seqs->u.items[k];
            int *ids = malloc((q->n ? q->n : 1) * sizeof *ids);
            if (!ids) { rc = fail_rc(ALAB_ENOMEM, "--set"); break; }
            for (uint32_t t = 0; t < q->n; t++) {
                int64_t v;
                if (json_int64(&q->u.items[t], &v) || v < 0 || v >= V) {
                    fprintf(stderr, "attnlab: --set repeated: sequence %u holds a token id outside [0, %d)\n", k, V);
                    rc = 1;
                    break;
                }
                ids[t] = (int)v;
            }
            if (rc) { free(ids); break; }
            rc = set_push(s, ids, (int)q->n, P, "sequence", (long)k, points, &total);
        }
        json_free(&doc);
        free(text);
    } else {
        rc = load_lines(s, c, m, path, P, points, &total);
    }
    if (!rc && s->n == 0) { fprintf(stderr, "attnlab: --set %s holds no inputs\n", c->set); rc = 1; }
    return rc;
}

static void json_corr(FILE *f, const char *name, const alab_corr_summary *s) {
    fprintf(f, "\"%s\":{\"mean\":", name);
    json_num(f, s->mean);
    const char *keys[7] = {"lo", "hi", "null_mean", "null_lo", "null_hi", "p", "p_greater"};
    const double v[7] = {s->lo, s->hi, s->null_mean, s->null_lo, s->null_hi, s->p, s->p_greater};
    for (int i = 0; i < 7; i++) {
        fprintf(f, ",\"%s\":", keys[i]);
        json_num(f, v[i]);
    }
    fprintf(f, ",\"n_defined\":%d,\"n_points\":%d,\"n_above_floor\":%d}", s->n_defined, s->n_points, s->n_above_floor);
}

static void json_four(FILE *f, const char *name, const alab_corr_summary *sp, const alab_corr_summary *kd,
                      const alab_corr_summary *un, const alab_corr_summary *pm) {
    fprintf(f, ",\"%s\":{", name);
    json_corr(f, "spearman", sp);
    fputc(',', f);
    json_corr(f, "kendall", kd);
    fputc(',', f);
    json_corr(f, "uniform", un);
    fputc(',', f);
    json_corr(f, "permuted", pm);
    fputc('}', f);
}

/* The floor of a set measure, as the JS API derives it: --epsilon, or 10 x the largest KL a no-op
 * renormalisation leaves (alab_knockout_noise of `layer`, -1 for every layer) on the first n_noise inputs. */
static int set_noise_floor(double *eps, double *noise, const cli *c, alab_model *m, const input_set *s, int n_noise,
                           int layer) {
    int rc = ALAB_OK;
    *noise = 0.0;
    for (int k = 0; k < n_noise && rc == ALAB_OK; k++) {
        double x;
        if ((rc = alab_knockout_noise(&x, m, s->ids[k], s->T[k], layer)) == ALAB_OK && x > *noise) *noise = x;
    }
    *eps = c->epsilon < 0.0 ? 10.0 * *noise : c->epsilon;
    return rc;
}

/* The readings of the causal pairs that know only positions (web/src/controls.js's edgePositionGrids): recency
 * -(i - j), the first token [j = 0], the diagonal [j = i], earliness -j; each a (T, T) grid (the cells above the
 * diagonal are never read). */
enum { POS_KINDS = 4 };
static const char *const POS_NAMES[POS_KINDS] = {"recency", "first", "diagonal", "early"};
static float pos_reading(int kind, int i, int j) {
    switch (kind) {
    case 0: return (float)(j - i);
    case 1: return j == 0 ? 1.0f : 0.0f;
    case 2: return j == i ? 1.0f : 0.0f;
    default: return (float)-j;
    }
}

/* "effects":{"local":{...},"last":{...}}: the sizes of |E| (and |E_last|, row T-1 only in the last layer) pooled
 * over the inputs' causal pairs, in nats: median, 90th, 99th percentile (type 7), the largest, how many reach
 * 1e-3 nats (controls.js's effectSizes). */
static int json_effects(FILE *f, float *const *E, const int *T, int n, int last_row_only) {
    size_t total = 0;
    for (int k = 0; k < n; k++) total += (size_t)T[k] * T[k];
    double *v = malloc((total ? total : 1) * sizeof *v);
    if (!v) return ALAB_ENOMEM;
    int rc = ALAB_OK;
    fputs(",\"effects\":{", f);
    for (int which = 0; which < 2 && rc == ALAB_OK; which++) {
        int m = 0, above = 0;
        double mx = NAN;
        for (int k = 0; k < n; k++)
            for (int i = which && last_row_only ? T[k] - 1 : 0; i < T[k]; i++)
                for (int j = 0; j <= i; j++) {
                    const double e = fabs((double)E[which * n + k][(size_t)i * T[k] + j]);
                    if (!isfinite(e)) continue;
                    v[m++] = e;
                    if (e >= 1e-3) above++;
                    if (!(e <= mx)) mx = e;
                }
        static const double q[3] = {0.5, 0.9, 0.99};
        double out[3];
        rc = alab_quantiles(out, v, m, q, 3);
        if (rc != ALAB_OK) break;
        fprintf(f, "%s\"%s\":{\"n\":%d,\"median\":", which ? "," : "", which ? "last" : "local", m);
        json_num(f, out[0]);
        fputs(",\"p90\":", f); json_num(f, out[1]);
        fputs(",\"p99\":", f); json_num(f, out[2]);
        fputs(",\"max\":", f); json_num(f, mx);
        fprintf(f, ",\"threshold\":0.001,\"n_above\":%d}", above);
    }
    fputc('}', f);
    free(v);
    return rc;
}

static int ev_edge_set(FILE *f, const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    const int layer = c->ev_layer < 0 ? cfg->n_layer - 1 : c->ev_layer;
    if (layer >= cfg->n_layer) {
        fprintf(stderr, "attnlab: --layer %d: the model has %d layers\n", layer, cfg->n_layer);
        return CLI_REPORTED_USAGE;
    }
    if (evidence_seed_bad(c)) return CLI_REPORTED_USAGE;
    input_set s = {0};
    if (load_set(&s, c, m, edge_points)) { set_free(&s); return CLI_REPORTED_INPUT; }
    if (over_budget(c, m, s.T, s.n)) { set_free(&s); return CLI_REPORTED_INPUT; }
    const int n = s.n;
    float **grids = calloc(3 * (size_t)n, sizeof *grids);
    double *per = malloc(4 * (size_t)n * sizeof *per);
    int rc = grids && per ? ALAB_OK : ALAB_ENOMEM;
    for (int k = 0; k < n && rc == ALAB_OK; k++) {
        const size_t TT = (size_t)s.T[k] * s.T[k];
        for (int g = 0; g < 3 && rc == ALAB_OK; g++)
            if (!(grids[g * n + k] = malloc(TT * sizeof(float)))) rc = ALAB_ENOMEM;
        if (rc == ALAB_OK)
            rc = alab_edge_knockout(grids[k], grids[n + k], grids[2 * n + k], m, s.ids[k], s.T[k], layer, c->ev_head, 0,
                                    s.T[k], c->ko_mode);
    }
    /* the noise floor: 10 x the largest KL a no-op renormalisation leaves, over the first 10 inputs */
    double noise = 0.0, eps = 0.0;
    const int n_noise = c->epsilon < 0.0 ? (n < 10 ? n : 10) : 0;
    if (rc == ALAB_OK) rc = set_noise_floor(&eps, &noise, c, m, &s, n_noise, layer);
    alab_edge_set r;
    const alab_set_stats st = {c->n_boot, c->n_perm, c->level, c->has_seed ? (uint32_t)c->seed : 1u};
    if (rc == ALAB_OK)
        rc = alab_edge_set_summary(&r, per, (const float *const *)grids, (const float *const *)grids + n,
                                   (const float *const *)grids + 2 * n, s.T, n, layer == cfg->n_layer - 1, eps, &st);
    if (rc == ALAB_OK) {
        fprintf(f, ",\"set\":\"%s\",\"n\":%d,\"layer\":%d,\"head\":", named_or_file(c->set), n, layer);
        if (c->ev_head < 0) fputs("\"all\"", f); else fprintf(f, "%d", c->ev_head);
        fprintf(f, ",\"knockout\":\"%s\",\"seed\":%u,\"n_boot\":%d,\"n_perm\":%d,\"level\":", c->ko_mode ? "zero" : "renorm",
                st.seed, st.n_boot, st.n_perm);
        json_num(f, st.level);
        fputs(",\"eps\":", f);
        json_num(f, eps);
        if (n_noise) {
            fputs(",\"noise\":{\"max_kl\":", f);
            json_num(f, noise);
            fprintf(f, ",\"factor\":10,\"inputs\":%d}", n_noise);
        }
        fprintf(f, ",\"last_row_only\":%s", layer == cfg->n_layer - 1 ? "true" : "false");
        json_four(f, "local", &r.local, &r.local_kendall, &r.local_uniform, &r.local_permuted);
        json_four(f, "last", &r.last, &r.last_kendall, &r.last_uniform, &r.last_permuted);
        fputs(",\"rows\":{\"mean\":", f); json_num(f, r.rows_mean);
        fputs(",\"lo\":", f); json_num(f, r.rows_lo);
        fputs(",\"hi\":", f); json_num(f, r.rows_hi);
        fputs("},\"top_k_overlap\":{\"mean\":", f); json_num(f, r.topk_mean);
        fputs(",\"lo\":", f); json_num(f, r.topk_lo);
        fputs(",\"hi\":", f); json_num(f, r.topk_hi);
        fputs("},\"mean_effect\":{\"mean\":", f); json_num(f, r.effect_mean);
        fputs(",\"lo\":", f); json_num(f, r.effect_lo);
        fputs(",\"hi\":", f); json_num(f, r.effect_hi);
        fputs("},\"per_input\":[", f);
        for (int k = 0; k < n; k++) {
            fprintf(f, "%s{\"T\":%d,\"spearman\":", k ? "," : "", s.T[k]);
            json_num(f, per[k]);
            fputs(",\"spearman_last\":", f); json_num(f, per[n + k]);
            fputs(",\"row_spearman\":", f); json_num(f, per[2 * n + k]);
            fputs(",\"top_k_overlap\":", f); json_num(f, per[3 * n + k]);
            fputc('}', f);
        }
        fputc(']', f);
        /* the controls: the position readings through the same summary as the weights, and the effects' sizes */
        fputs(",\"positions\":{", f);
        float **pos = calloc((size_t)n, sizeof *pos);
        if (!pos) rc = ALAB_ENOMEM;
        for (int kind = 0; kind < POS_KINDS && rc == ALAB_OK; kind++) {
            for (int k = 0; k < n && rc == ALAB_OK; k++) {
                const int T = s.T[k];
                if (!pos[k] && !(pos[k] = malloc((size_t)T * T * sizeof(float)))) { rc = ALAB_ENOMEM; break; }
                for (int i = 0; i < T; i++)
                    for (int j = 0; j < T; j++) pos[k][(size_t)i * T + j] = j <= i ? pos_reading(kind, i, j) : 0.0f;
            }
            alab_edge_set rp;
            if (rc == ALAB_OK)
                rc = alab_edge_set_summary(&rp, per, (const float *const *)pos, (const float *const *)grids + n,
                                           (const float *const *)grids + 2 * n, s.T, n, layer == cfg->n_layer - 1, eps, &st);
            if (rc == ALAB_OK) {
                fprintf(f, "%s\"%s\":{", kind ? "," : "", POS_NAMES[kind]);
                json_corr(f, "local", &rp.local);
                fputc(',', f);
                json_corr(f, "last", &rp.last);
                fputc('}', f);
            }
        }
        fputc('}', f);
        for (int k = 0; pos && k < n; k++) free(pos[k]);
        free(pos);
        if (rc == ALAB_OK) rc = json_effects(f, grids + n, s.T, n, layer == cfg->n_layer - 1);
    }
    for (int g = 0; grids && g < 3 * n; g++) free(grids[g]);
    free(grids);
    free(per);
    set_free(&s);
    return rc;
}

/* Token knockout over a set: per input the effects and the three readings, each reading's correlation over
 * the inputs (one permutation group per input), the noise floor of a token knockout (layer -1). */
static int ev_tokens_set(FILE *f, const cli *c, alab_model *m) {
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head;
    if (evidence_seed_bad(c)) return CLI_REPORTED_USAGE;
    input_set s = {0};
    if (load_set(&s, c, m, token_points)) { set_free(&s); return CLI_REPORTED_INPUT; }
    if (over_budget(c, m, s.T, s.n)) { set_free(&s); return CLI_REPORTED_INPUT; }
    const int n = s.n;
    size_t total = 0;
    for (int k = 0; k < n; k++) total += (size_t)s.T[k];
    double *rd = malloc(3 * total * sizeof *rd), *eff = malloc(total * sizeof *eff), *per = malloc(3 * (size_t)n * sizeof *per);
    int *off = malloc(((size_t)n + 1) * sizeof *off), *grp = calloc(total ? total : 1, sizeof *grp);
    int rc = rd && eff && per && off && grp ? ALAB_OK : ALAB_ENOMEM;
    const int mode = c->token_mode == ALAB_TOKEN_COLUMN && c->ko_mode == ALAB_KO_ZERO ? ALAB_TOKEN_COLUMN_ZERO : c->token_mode;
    int neutral = c->neutral;
    if (rc == ALAB_OK && mode == ALAB_TOKEN_REPLACE && neutral < 0) {
        int *t = NULL, nt = 0;
        if (encode(&t, &nt, m, " the")) { free(t); rc = CLI_REPORTED_INPUT; }
        else neutral = nt == 1 ? t[0] : 0;
        free(t);
    }
    size_t o = 0;
    for (int k = 0; k < n && rc == ALAB_OK; k++) {
        const int T = s.T[k];
        float *e = malloc((size_t)T * sizeof *e), *R = malloc((size_t)T * T * sizeof *R), *fl = malloc((size_t)T * sizeof *fl);
        if (!e || !R || !fl) rc = ALAB_ENOMEM;
        if (rc == ALAB_OK) rc = alab_token_knockout(e, m, s.ids[k], T, 0, T, mode, neutral);
        if (rc == ALAB_OK) rc = alab_forward(m, s.ids[k], T, NULL);
        if (rc == ALAB_OK) rc = alab_attention_rollout(R, alab_result_attention(m), L, NH, T);
        if (rc == ALAB_OK) rc = alab_attention_flow(fl, alab_result_attention(m), L, NH, T, T - 1);
        if (rc == ALAB_OK) {
            const float *att = alab_result_attention(m) + (size_t)(L - 1) * NH * T * T;
            off[k] = (int)o;
            for (int j = 0; j < T; j++, o++) {
                double a = 0.0;
                for (int h = 0; h < NH; h++) a += att[(size_t)h * T * T + (size_t)(T - 1) * T + j];
                rd[o] = a / NH;
                rd[total + o] = R[(size_t)(T - 1) * T + j];
                rd[2 * total + o] = fl[j];
                eff[o] = e[j];
            }
        }
        free(e); free(R); free(fl);
    }
    if (rc == ALAB_OK) off[n] = (int)o;
    double noise = 0.0, eps = 0.0;
    const int n_noise = c->epsilon < 0.0 ? (n < 10 ? n : 10) : 0;
    if (rc == ALAB_OK) rc = set_noise_floor(&eps, &noise, c, m, &s, n_noise, -1);
    const uint32_t seed = c->has_seed ? (uint32_t)c->seed : 1u;
    static const char *names[4] = {"last_layer", "rollout", "flow", "permuted"};
    alab_corr_summary sum[4];
    for (int r = 0; r < 4 && rc == ALAB_OK; r++) {
        /* the baseline: the last layer's reading shuffled once within each input (seed + 2) */
        if (r == 3 && (rc = alab_permute_within_groups(rd, off, NULL, n, seed + 2)) != ALAB_OK) break;
        alab_corr_spec sp = {n, off, rd + (size_t)(r == 3 ? 0 : r) * total, eff, grp, ALAB_CORR_SPEARMAN, eps, 4, c->n_boot,
                             c->n_perm, c->level, seed};
        rc = alab_corr_dataset(&sum[r], r == 3 ? NULL : per + (size_t)r * n, &sp);
    }
    if (rc == ALAB_OK) {
        static const char *mnames[4] = {"column", "column_zero", "delete", "replace"};
        fprintf(f, ",\"set\":\"%s\",\"n\":%d,\"mode\":\"%s\",\"seed\":%u,\"n_boot\":%d,\"n_perm\":%d,\"eps\":", named_or_file(c->set),
                n, mnames[mode], seed, c->n_boot, c->n_perm);
        json_num(f, eps);
        if (n_noise) {
            fputs(",\"noise\":{\"max_kl\":", f);
            json_num(f, noise);
            fprintf(f, ",\"factor\":10,\"inputs\":%d}", n_noise);
        }
        fputs(",\"readings\":{", f);
        for (int r = 0; r < 3; r++) {
            if (r) fputc(',', f);
            json_corr(f, names[r], &sum[r]);
        }
        fputs("},\"baselines\":{", f);
        json_corr(f, names[3], &sum[3]);
        fputs("},\"per_input\":[", f);
        for (int k = 0; k < n; k++) {
            fprintf(f, "%s{\"T\":%d", k ? "," : "", s.T[k]);
            for (int r = 0; r < 3; r++) {
                fprintf(f, ",\"%s\":", names[r]);
                json_num(f, per[(size_t)r * n + k]);
            }
            fputc('}', f);
        }
        fputc(']', f);
    }
    free(rd); free(eff); free(per); free(off); free(grp);
    set_free(&s);
    return rc;
}

/* ---- the table: one row of measures.h each ------------------------------------ */

typedef int (*text_fn)(FILE *f, const cli *c, alab_model *m, const int *ids, int T);
typedef int (*weights_fn)(FILE *f, const cli *c, alab_model *m);

struct cli_measure {
    const char *kind;   /* --kind */
    int takes_set;      /* --set FILE */
    const char *usage;  /* its lines of the usage text */
    text_fn on_text;    /* reads a text: ev_K(f, c, m, ids, T) */
    weights_fn on_weights; /* or the weights alone: ev_K(f, c, m) */
    weights_fn on_set;  /* over a set of inputs: ev_K_set (takes_set rows) */
};

/* Every row has its handler, of one of the two signatures (a row without one does not compile; a handler
 * without a row is an unused function, which -Wall names). */
#define MEASURE_HANDLER(id, kind, set, usage) \
    _Static_assert(_Generic(&ev_##id, text_fn: 1, weights_fn: 1, default: 0), \
                   "ev_" #id " must read a text (text_fn) or the weights (weights_fn)");
ALAB_CLI_MEASURES(MEASURE_HANDLER)
#undef MEASURE_HANDLER

#define SET_HANDLER_1(id) &ev_##id##_set
#define SET_HANDLER_0(id) (weights_fn)0
#define MEASURE_ROW(id, kind, set, usage) \
    {kind, set, usage, _Generic(&ev_##id, text_fn: &ev_##id, default: (text_fn)0), \
     _Generic(&ev_##id, weights_fn: &ev_##id, default: (weights_fn)0), SET_HANDLER_##set(id)},
static const cli_measure MEASURES[] = {ALAB_CLI_MEASURES(MEASURE_ROW)};
#undef MEASURE_ROW
#define N_MEASURES (sizeof MEASURES / sizeof MEASURES[0])

const cli_measure *cli_measure_find(const char *kind) {
    for (size_t i = 0; i < N_MEASURES; i++)
        if (strcmp(kind, MEASURES[i].kind) == 0) return &MEASURES[i];
    return NULL;
}

int cli_measure_reads_text(const cli_measure *ms) { return ms->on_text != NULL; }
int cli_measure_takes_set(const cli_measure *ms) { return ms->takes_set; }
/* --answers A alone: the logit of A, which only direct logit attribution reads */
int cli_measure_one_answer(const cli_measure *ms) { return ms->on_text == ev_dla; }

const char *cli_measure_kinds(char *buf, size_t cap, int (*keep)(const cli_measure *), const char *sep,
                              const char *last) {
    size_t count = 0, k = 0, n = 0;
    for (size_t i = 0; i < N_MEASURES; i++) count += !keep || keep(&MEASURES[i]);
    buf[0] = '\0';
    for (size_t i = 0; i < N_MEASURES && n < cap; i++) {
        if (keep && !keep(&MEASURES[i])) continue;
        k++;
        int w = snprintf(buf + n, cap - n, "%s%s", k == 1 ? "" : k == count ? last : sep, MEASURES[i].kind);
        n += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* The evidence part of the usage text: the measures of a text (their kinds in the heading, then each row's
 * lines), those of the weights alone (a heading each, its row's lines after it), those over a set. */
void cli_measures_usage(FILE *f) {
    char kinds[1024];
    fprintf(f, "  attnlab evidence --kind %s\n",
            cli_measure_kinds(kinds, sizeof kinds, cli_measure_reads_text, "|", "|"));
    fputs("                   [--model DIR] --text TEXT [options]\n", f);
    for (size_t i = 0; i < N_MEASURES; i++)
        if (MEASURES[i].on_text) fprintf(f, "      %s\n", MEASURES[i].usage);
    for (size_t i = 0; i < N_MEASURES; i++)
        if (MEASURES[i].on_weights)
            fprintf(f, "  attnlab evidence --kind %s [--model DIR] %s\n", MEASURES[i].kind, MEASURES[i].usage);
    fprintf(f, "  attnlab evidence --kind %s --set heldout|repeated|FILE [--limit N] [options]\n",
            cli_measure_kinds(kinds, sizeof kinds, cli_measure_takes_set, "|", "|"));
    fputs("      over a set of inputs (FILE: one text a line): the mean per-input rank correlation with its\n"
          "      95 % bootstrap interval, a within-row permutation null and its p-value, the uniform and\n"
          "      row-permuted baselines, the noise floor (the same numbers as model.edgeKnockoutSet; tokens: the\n"
          "      last layer, rollout and flow against token knockouts, as model.tokenKnockoutSet)\n"
          "      --n-boot B --n-perm P --seed S   resamples (default 1000 each) and their seed (default 1)\n"
          "      --epsilon E                      the noise floor (default: 10 x the largest no-op knockout KL)\n"
          "      (always JSON; docs/evidence.md defines every number)\n", f);
  fprintf(f, "  attnlab evidence ... --budget N  every kind: the work it may do, in multiply-adds estimated from its\n"
             "      arguments before it starts (default %g, about two minutes on one core); over it: ELIMIT\n"
             "      (options of another kind are refused: EINVAL)\n", CLI_DEFAULT_BUDGET);
}

/* ---- the command ------------------------------------------------------------- */

/* {"kind":K, then for a measure of a text "ids" and "tokens", then the measure's own fields}. */
int cmd_evidence(const cli *c, alab_model *m) {
    char kinds[1024];
    const cli_measure *ms = c->measure;
    if (!ms) return usage_error("evidence needs --kind %s", cli_measure_kinds(kinds, sizeof kinds, NULL, "|", "|"));
    const int text = !c->set && ms->on_text;
    int *ids = NULL, T = 0;
    if (text) {
        if (encode(&ids, &T, m, c->text)) { free(ids); return 1; }
        if (T > alab_model_config(m)->n_positions) { /* before any grid is sized by T (60 001 tokens once asked for 43 GB) */
            const int P = alab_model_config(m)->n_positions;
            free(ids);
            fprintf(stderr, "attnlab: evidence: %s: %d tokens, but the model's context is %d (n_positions)\n",
                    alab_strerror(ALAB_ETOOLONG), T, P);
            return 1;
        }
    }
    if (!c->set && over_budget(c, m, &T, text ? 1 : 0)) { free(ids); return 1; } /* a set's: once it is read */
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) { free(ids); return fail_rc(ALAB_ENOMEM, "output"); }
    fprintf(f, "{\"kind\":\"%s\"", c->kind);
    if (text) {
        fputs(",\"ids\":", f);
        json_ints(f, ids, T);
        fputs(",\"tokens\":", f);
        json_tokens(f, alab_model_bpe(m), ids, T);
    }
    int rc = c->set ? ms->on_set(f, c, m) : text ? ms->on_text(f, c, m, ids, T) : ms->on_weights(f, c, m);
    fputs("}\n", f);
    fclose(f);
    free(ids);
    if (rc) { /* nothing on stdout when it failed */
        free(out);
        return exit_code(rc);
    }
    rc = write_stdout(out, len);
    free(out);
    return rc;
}
