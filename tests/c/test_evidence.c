/* test_evidence.c — the interventional measurements (c/src/evidence.c, c/src/evidence_set.c) against the
 * float64 references: knockouts in every mode, the noise floor, the three ablation semantics and the resample
 * draws, activation patching (tests/fixtures/evidence_golden.json), and the set verdict
 * (tests/fixtures/evidence_set_golden.json). The statistics are tested in test_stats.c, rollout and flow in
 * test_readings.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"
#include "families.h"
#include "model.h" /* alab_forward_rows, the windowed run (internal) */

/* ---- the interventional measurements against the reference --------------- */

typedef struct {
    char *text;
    json_doc doc;
    int ids[64];
    int T;
    alab_model *m;
} golden_env;

static void golden_open(golden_env *g) {
    size_t len = 0;
    g->text = slurp(repo_path("tests/fixtures/evidence_golden.json"), &len);
    assert_non_null(g->text);
    assert_int_equal(json_parse(&g->doc, g->text, len, 0), ALAB_OK);
    const json_value *jids = json_get(g->doc.root, "ids");
    g->T = (int)jids->n;
    for (int i = 0; i < g->T; i++) g->ids[i] = (int)jids->u.items[i].u.num;
    g->m = load_model("tests/fixtures/tiny");
}

static void golden_close(golden_env *g) {
    alab_model_free(g->m);
    json_free(&g->doc);
    free(g->text);
}

static int ids_of(int *out, const json_value *arr) {
    for (uint32_t i = 0; i < arr->n; i++) out[i] = (int)arr->u.items[i].u.num;
    return (int)arr->n;
}

/* max |got - want| where the golden has -1 for "no such pair" and got NaN there */
static double max_diff_pairs(const float *got, const float *want, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (want[i] == -1.0f) {
            if (!isnan(got[i])) return INFINITY;
            continue;
        }
        const double d = fabs((double)got[i] - want[i]);
        if (!(d <= m)) m = d;
    }
    return m;
}

static void edge_knockouts_match_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const int T = g.T;
    const json_value *edges = json_get(g.doc.root, "edge");
    for (uint32_t e = 0; e < edges->n; e++) {
        const json_value *c = &edges->u.items[e];
        const int layer = (int)json_get(c, "layer")->u.num, head = (int)json_get(c, "head")->u.num;
        float A[64 * 64], E[64 * 64], EL[64 * 64];
        assert_int_equal(alab_edge_knockout(A, E, EL, g.m, g.ids, T, layer, head, 0, 5, ALAB_KO_RENORM), ALAB_OK); /* in two parts */
        assert_int_equal(alab_edge_knockout(A, E, EL, g.m, g.ids, T, layer, head, 5, T, ALAB_KO_RENORM), ALAB_OK);
        size_t n;
        float *wa = json_floats_of(json_get(c, "A"), &n), *we = json_floats_of(json_get(c, "E"), &n),
              *wl = json_floats_of(json_get(c, "E_last"), &n);
        assert_int_equal((int)n, T * T);
        assert_true(max_abs_diff(A, wa, n) < 1e-4);
        assert_true(max_diff_pairs(E, we, n) < 1e-4);
        assert_true(max_diff_pairs(EL, wl, n) < 1e-4);
        /* the statistics of the reference, from the engine's matrices */
        double a[64 * 65 / 2], b[64 * 65 / 2], rho, tau, share;
        int k = 0;
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++, k++) {
                a[k] = A[i * T + j];
                b[k] = E[i * T + j];
            }
        assert_int_equal(alab_spearman(&rho, a, b, k), ALAB_OK);
        assert_int_equal(alab_kendall_tau_b(&tau, a, b, k), ALAB_OK);
        assert_int_equal(alab_top_k_overlap(&share, a, b, k, (int)json_get(c, "top_k")->u.num), ALAB_OK);
        assert_true(fabs(rho - json_get(c, "spearman")->u.num) < 1e-3);
        assert_true(fabs(tau - json_get(c, "kendall")->u.num) < 1e-3);
        assert_true(fabs(share - json_get(c, "top_k_overlap")->u.num) < 1e-9);
        /* one cell again with a full forward: reusing the layers below is exact */
        alab_knockout ko = {layer, head, T - 2, 1, ALAB_KO_RENORM};
        alab_run_opts o;
        alab_run_opts_init(&o);
        o.knockouts = &ko;
        o.n_knockouts = 1;
        assert_int_equal(alab_forward(g.m, g.ids, T, &o), ALAB_OK);
        float *z = malloc(4096 * sizeof *z);
        assert_int_equal(alab_result_logits_at(z, g.m, T - 2), ALAB_OK);
        free(z);
        free(wa); free(we); free(wl);
    }
    golden_close(&g);
}

static void token_knockouts_match_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    float eff[64];
    assert_int_equal(alab_token_knockout(eff, g.m, g.ids, g.T, 0, g.T, ALAB_TOKEN_COLUMN, 0), ALAB_OK);
    size_t n;
    float *want = json_floats_of(json_get(json_get(g.doc.root, "token"), "effect"), &n);
    assert_int_equal((int)n, g.T);
    assert_true(max_abs_diff(eff, want, n) < 1e-4);
    free(want);
    golden_close(&g);
}

static void three_ablation_semantics_match_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const alab_config *c = alab_model_config(g.m);
    const int L = c->n_layer, NH = c->n_head, C = c->n_embd, T = g.T;
    const json_value *ab = json_get(g.doc.root, "ablation");
    int rmean[128], rres[128];
    const int Tm = ids_of(rmean, json_get(ab, "reference_mean_ids")), Tr = ids_of(rres, json_get(ab, "reference_resample_ids"));
    float *hm = malloc((size_t)L * Tm * C * sizeof *hm), *hr = malloc((size_t)L * Tr * C * sizeof *hr);
    assert_int_equal(alab_capture_head_outputs(hm, g.m, rmean, Tm), ALAB_OK);
    assert_int_equal(alab_capture_head_outputs(hr, g.m, rres, Tr), ALAB_OK);
    const char *names[3] = {"zero", "mean", "resample"};
    const float *refs[3] = {NULL, hm, hr};
    const int Trefs[3] = {0, Tm, Tr};
    for (int mode = 0; mode < 3; mode++) {
        float delta[64], loss[65];
        int order[64];
        double base = 0.0;
        assert_int_equal(alab_head_importance_mode(delta, &base, g.m, g.ids, T, mode, refs[mode], Trefs[mode]), ALAB_OK);
        assert_true(fabs(base - json_get(ab, "base_loss")->u.num) < 1e-4);
        const json_value *w = json_get(ab, names[mode]);
        size_t n;
        float *wd = json_floats_of(json_get(w, "delta"), &n), *wp = json_floats_of(json_get(w, "pruning"), &n);
        assert_true(max_abs_diff(delta, wd, (size_t)L * NH) < 1e-4);
        assert_int_equal(alab_pruning_curve_mode(loss, order, g.m, g.ids, T, delta, mode, refs[mode], Trefs[mode]), ALAB_OK);
        assert_true(max_abs_diff(loss, wp, (size_t)L * NH + 1) < 1e-4);
        if (mode == ALAB_ABLATE_ZERO) { /* the same numbers as alab_head_importance */
            float d0[64];
            double b0;
            assert_int_equal(alab_head_importance(d0, &b0, g.m, g.ids, T), ALAB_OK);
            assert_true(b0 == base && memcmp(d0, delta, (size_t)L * NH * sizeof(float)) == 0);
        }
        free(wd); free(wp);
    }
    float d[64];
    double b;
    assert_int_equal(alab_head_importance_mode(d, &b, g.m, g.ids, T, ALAB_ABLATE_RESAMPLE, hr, T - 1), ALAB_ETOOLONG);
    assert_int_equal(alab_head_importance_mode(d, &b, g.m, g.ids, T, ALAB_ABLATE_MEAN, NULL, 5), ALAB_EINVAL);
    assert_int_equal(alab_head_importance_mode(d, &b, g.m, g.ids, T, ALAB_ABLATE_MEAN, hm, 0), ALAB_EEMPTY);
    assert_int_equal(alab_head_importance_mode(d, &b, g.m, g.ids, T, 7, hm, Tm), ALAB_EINVAL);
    free(hm); free(hr);
    golden_close(&g);
}

static void activation_patching_matches_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const alab_config *c = alab_model_config(g.m);
    const int L = c->n_layer, NH = c->n_head;
    const json_value *p = json_get(g.doc.root, "patching");
    int clean[64], corrupt[64];
    const int T = ids_of(clean, json_get(p, "clean_ids"));
    assert_int_equal(ids_of(corrupt, json_get(p, "corrupt_ids")), T);
    const int ac = (int)json_get(p, "answer_clean")->u.num, ad = (int)json_get(p, "answer_corrupt")->u.num;
    float rg[64 * 64], hg[64];
    double ldc, ldd;
    assert_int_equal(alab_activation_patching(rg, hg, &ldc, &ldd, g.m, clean, corrupt, T, ac, ad), ALAB_OK);
    assert_true(fabs(ldc - json_get(p, "ld_clean")->u.num) < 1e-3);
    assert_true(fabs(ldd - json_get(p, "ld_corrupt")->u.num) < 1e-3);
    size_t n;
    float *wr = json_floats_of(json_get(p, "resid"), &n), *wh = json_floats_of(json_get(p, "heads"), &n);
    assert_true(max_abs_diff(rg, wr, (size_t)L * T) < 1e-4);
    assert_true(max_abs_diff(hg, wh, (size_t)L * NH) < 1e-4);
    /* at layer 0 the runs differ in their last two tokens: patching both restores the clean run exactly */
    assert_int_equal(clean[T - 3], corrupt[T - 3]);
    alab_resid_patch two[2];
    alab_run_opts o;
    alab_run_opts_init(&o);
    float *cx = malloc((size_t)L * T * c->n_embd * sizeof *cx);
    o.capture_resid = cx;
    assert_int_equal(alab_forward(g.m, clean, T, &o), ALAB_OK);
    alab_run_opts_init(&o);
    two[0] = (alab_resid_patch){0, T - 2, cx + (size_t)(T - 2) * c->n_embd};
    two[1] = (alab_resid_patch){0, T - 1, cx + (size_t)(T - 1) * c->n_embd};
    o.resid_patches = two;
    o.n_resid_patches = 2;
    assert_int_equal(alab_forward(g.m, corrupt, T, &o), ALAB_OK);
    const float *z = alab_result_logits(g.m);
    assert_true(fabs(((double)z[ac] - z[ad] - ldd) / (ldc - ldd) - 1.0) < 1e-5);
    free(cx);
    assert_int_equal(alab_activation_patching(rg, hg, &ldc, &ldd, g.m, clean, corrupt, T, ac, ac), ALAB_EINVAL);
    assert_int_equal(alab_activation_patching(rg, hg, &ldc, &ldd, g.m, clean, clean, T, ac, ad), ALAB_EINVAL);
    assert_int_equal(alab_activation_patching(rg, hg, &ldc, &ldd, g.m, clean, corrupt, T, -1, ad), ALAB_ERANGE);
    free(wr); free(wh);
    golden_close(&g);
}

static void evidence_options_are_checked(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    const int ids[4] = {5, 6, 7, 8};
    alab_run_opts o;
    alab_run_opts_init(&o);
    alab_knockout ko = {0, 0, 2, 3, ALAB_KO_RENORM};
    o.knockouts = &ko;
    o.n_knockouts = 1;
    assert_int_equal(alab_forward(m, ids, 4, &o), ALAB_OK);
    /* row 2 of head 0 in layer 0: column 3 was already masked, so the row is unchanged and sums to 1 */
    const float *A = alab_result_attention(m);
    assert_true(fabs(A[2 * 4 + 0] + A[2 * 4 + 1] + A[2 * 4 + 2] - 1.0f) < 1e-6);
    ko.col = 4;
    assert_int_equal(alab_forward(m, ids, 4, &o), ALAB_ERANGE);
    ko = (alab_knockout){0, 0, 0, 0, ALAB_KO_RENORM}; /* row 0 keeps no mass: it becomes zero */
    assert_int_equal(alab_forward(m, ids, 4, &o), ALAB_OK);
    assert_true(alab_result_attention(m)[0] == 0.0f);
    o.n_knockouts = 0;
    o.start_layer = 1; /* no start_x */
    assert_int_equal(alab_forward(m, ids, 4, &o), ALAB_EINVAL);
    o.start_layer = 99;
    assert_int_equal(alab_forward(m, ids, 4, &o), ALAB_ERANGE);
    o.start_layer = 0;
    const float nanv[8] = {NAN, 0, 0, 0, 0, 0, 0, 0};
    alab_head_patch hp = {0, 0, nanv, 0};
    o.head_patches = &hp;
    o.n_head_patches = 1;
    assert_int_equal(alab_forward(m, ids, 4, &o), ALAB_ENAN);
    float z[8];
    assert_int_equal(alab_result_logits_at(z, m, 9), ALAB_ERANGE);
    float eff[4], A3[16], E[16], EL[16];
    assert_int_equal(alab_token_knockout(eff, m, ids, 1, 0, 1, ALAB_TOKEN_COLUMN, 0), ALAB_EEMPTY);
    assert_int_equal(alab_token_knockout(eff, m, ids, 4, 2, 5, ALAB_TOKEN_COLUMN, 0), ALAB_ERANGE);
    assert_int_equal(alab_edge_knockout(A3, E, EL, m, ids, 4, 0, 0, 3, 2, ALAB_KO_RENORM), ALAB_ERANGE);
    assert_int_equal(alab_edge_knockout(A3, E, EL, m, ids, 4, 3, 0, 0, 4, ALAB_KO_RENORM), ALAB_ERANGE);
    assert_int_equal(alab_edge_knockout(A3, E, EL, m, ids, 4, 0, 4, 0, 4, ALAB_KO_RENORM), ALAB_ERANGE);
    alab_model_free(m);
}

static void knockout_modes_match_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const int T = g.T;
    const json_value *ez = json_get(g.doc.root, "edge_zero");
    float A[64 * 64], E[64 * 64], EL[64 * 64];
    const int layer = (int)json_get(ez, "layer")->u.num, head = (int)json_get(ez, "head")->u.num;
    assert_int_equal(alab_edge_knockout(A, E, EL, g.m, g.ids, T, layer, head, 0, T, ALAB_KO_ZERO), ALAB_OK);
    size_t n;
    float *we = json_floats_of(json_get(ez, "E"), &n), *wl = json_floats_of(json_get(ez, "E_last"), &n);
    assert_true(max_diff_pairs(E, we, n) < 1e-4);
    assert_true(max_diff_pairs(EL, wl, n) < 1e-4);
    /* the two semantics differ: renormalised and not cannot agree on every pair */
    float E2[64 * 64], EL2[64 * 64];
    assert_int_equal(alab_edge_knockout(A, E2, EL2, g.m, g.ids, T, layer, head, 0, T, ALAB_KO_RENORM), ALAB_OK);
    double d = 0.0;
    for (int x = 0; x < T * T; x++)
        if (!isnan(E[x])) d = fmax(d, fabs((double)E[x] - E2[x]));
    assert_true(d > 1e-4);
    free(we);
    free(wl);
    /* token knockout: without renormalisation, deleted, replaced */
    const json_value *tm = json_get(g.doc.root, "token_modes");
    const int neutral = (int)json_get(tm, "neutral")->u.num;
    static const char *names[3] = {"column_zero", "delete", "replace"};
    static const int modes[3] = {ALAB_TOKEN_COLUMN_ZERO, ALAB_TOKEN_DELETE, ALAB_TOKEN_REPLACE};
    for (int k = 0; k < 3; k++) {
        float eff[64];
        assert_int_equal(alab_token_knockout(eff, g.m, g.ids, T, 0, T, modes[k], neutral), ALAB_OK);
        float *want = json_floats_of(json_get(tm, names[k]), &n);
        assert_int_equal((int)n, T);
        assert_true(max_abs_diff(eff, want, n) < 1e-4);
        free(want);
    }
    float eff[64];
    assert_int_equal(alab_token_knockout(eff, g.m, g.ids, T, 0, T, 7, 0), ALAB_EINVAL);
    assert_int_equal(alab_token_knockout(eff, g.m, g.ids, T, 0, T, ALAB_TOKEN_REPLACE, -1), ALAB_ERANGE);
    assert_int_equal(alab_edge_knockout(A, E, EL, g.m, g.ids, T, 0, 0, 0, T, 9), ALAB_EINVAL);
    golden_close(&g);
}

static void last_layer_rows_that_cannot_reach_the_end_are_exact_zeros(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const int T = g.T, L = alab_model_config(g.m)->n_layer;
    float A[64 * 64], E[64 * 64], EL[64 * 64];
    assert_int_equal(alab_edge_knockout(A, E, EL, g.m, g.ids, T, L - 1, -1, 0, T, ALAB_KO_RENORM), ALAB_OK);
    for (int i = 0; i < T - 1; i++)
        for (int j = 0; j <= i; j++) assert_true(EL[i * T + j] == 0.0f);
    int nonzero = 0;
    for (int j = 0; j < T; j++) nonzero += EL[(T - 1) * T + j] > 0.0f;
    assert_true(nonzero > 0);
    golden_close(&g);
}

static void the_noise_floor_is_small_and_not_negative(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    double noise = -1.0;
    assert_int_equal(alab_knockout_noise(&noise, g.m, g.ids, g.T, 1), ALAB_OK);
    assert_true(noise >= 0.0 && noise < 1e-8);
    assert_int_equal(alab_knockout_noise(&noise, g.m, g.ids, g.T, 9), ALAB_ERANGE);
    assert_int_equal(alab_knockout_noise(NULL, g.m, g.ids, g.T, 0), ALAB_EINVAL);
    golden_close(&g);
}

static void resample_draws_match_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const alab_config *c = alab_model_config(g.m);
    const int L = c->n_layer, NH = c->n_head, D = NH * c->head_dim, LH = L * NH;
    const json_value *rd = json_get(g.doc.root, "resample_draws");
    int ref[256];
    const int Tr = ids_of(ref, json_get(rd, "reference_ids"));
    const int K = (int)json_get(rd, "K")->u.num;
    const uint32_t seed = (uint32_t)json_get(rd, "seed")->u.num;
    float *hv = malloc((size_t)L * Tr * D * sizeof *hv), mean[64], draws[16 * 64];
    int offs[16];
    double base = 0.0;
    assert_int_equal(alab_capture_head_outputs(hv, g.m, ref, Tr), ALAB_OK);
    assert_int_equal(alab_resample_draws(mean, draws, offs, &base, g.m, g.ids, g.T, hv, Tr, K, seed), ALAB_OK);
    int want_offs[16];
    assert_int_equal(ids_of(want_offs, json_get(rd, "offsets")), K);
    for (int k = 0; k < K; k++) assert_int_equal(offs[k], want_offs[k]);
    size_t n;
    float *wd = json_floats_of(json_get(rd, "draws"), &n), *wm = json_floats_of(json_get(rd, "mean"), &n);
    assert_true(max_abs_diff(draws, wd, (size_t)K * LH) < 1e-4);
    assert_true(max_abs_diff(mean, wm, (size_t)LH) < 1e-4);
    assert_true(fabs(base - json_get(rd, "base_loss")->u.num) < 1e-4);
    assert_int_equal(alab_resample_draws(mean, draws, offs, &base, g.m, g.ids, g.T, hv, g.T - 1, K, seed), ALAB_ETOOLONG);
    assert_int_equal(alab_resample_draws(mean, draws, offs, &base, g.m, g.ids, g.T, hv, Tr, 0, seed), ALAB_ERANGE);
    free(wd);
    free(wm);
    free(hv);
    golden_close(&g);
}

/* a golden number (null = NaN) against a computed one, to tol */
static int same(double got, const json_value *want, double tol) {
    if (!want || want->type == JSON_NULL) return isnan(got);
    return fabs(got - want->u.num) <= tol;
}

static void check_corr(const alab_corr_summary *s, const json_value *w, double tol) {
    assert_true(same(s->mean, json_get(w, "mean"), tol));
    assert_true(same(s->lo, json_get(w, "lo"), tol));
    assert_true(same(s->hi, json_get(w, "hi"), tol));
    assert_true(same(s->null_mean, json_get(w, "null_mean"), tol));
    assert_true(same(s->null_lo, json_get(w, "null_lo"), tol));
    assert_true(same(s->null_hi, json_get(w, "null_hi"), tol));
    assert_true(same(s->p, json_get(w, "p"), tol));
    assert_true(same(s->p_greater, json_get(w, "p_greater"), tol));
    assert_int_equal(s->n_defined, (int)json_get(w, "n_defined")->u.num);
    assert_int_equal(s->n_points, (int)json_get(w, "n_points")->u.num);
    assert_int_equal(s->n_above_floor, (int)json_get(w, "n_above_floor")->u.num);
}

/* alab_edge_set_summary on the reference's own grids gives the reference's summary to the last bits; on the
 * engine's grids (float32 forward passes) the means agree to 1e-3 */
static void edge_set_summary_matches_the_reference(void **state) {
    (void)state;
    size_t len = 0;
    char *text = slurp(repo_path("tests/fixtures/evidence_set_golden.json"), &len);
    assert_non_null(text);
    json_doc doc;
    assert_int_equal(json_parse(&doc, text, len, 0), ALAB_OK);
    const json_value *st = json_get(doc.root, "stats"), *cases = json_get(doc.root, "cases");
    const alab_set_stats stats = {(int)json_get(st, "n_boot")->u.num, (int)json_get(st, "n_perm")->u.num,
                                  json_get(st, "level")->u.num, (uint32_t)json_get(st, "seed")->u.num};
    alab_model *m = load_model("tests/fixtures/tiny");
    assert_true(cases->n >= 4);
    for (uint32_t c = 0; c < cases->n; c++) {
        const json_value *cs = &cases->u.items[c], *in = json_get(cs, "inputs"), *want = json_get(cs, "summary");
        const int n = (int)in->n, last = json_get(cs, "last_layer")->type == JSON_TRUE;
        const double eps = json_get(cs, "eps")->u.num;
        float *g[3][8] = {{0}}, *mine[3][8] = {{0}};
        int T[8], ids[8][64];
        assert_true(n <= 8);
        for (int k = 0; k < n; k++) {
            const json_value *x = &in->u.items[k];
            T[k] = ids_of(ids[k], json_get(x, "ids"));
            size_t nn;
            g[0][k] = json_floats_of(json_get(x, "A"), &nn);
            g[1][k] = json_floats_of(json_get(x, "E"), &nn);
            g[2][k] = json_floats_of(json_get(x, "E_last"), &nn);
            assert_int_equal((int)nn, T[k] * T[k]);
        }
        alab_edge_set r;
        double per[4 * 8];
        assert_int_equal(alab_edge_set_summary(&r, per, (const float *const *)g[0], (const float *const *)g[1],
                                               (const float *const *)g[2], T, n, last, eps, &stats), ALAB_OK);
        const json_value *wl = json_get(want, "local"), *wt = json_get(want, "last");
        check_corr(&r.local, json_get(wl, "spearman"), 1e-12);
        check_corr(&r.local_kendall, json_get(wl, "kendall"), 1e-12);
        check_corr(&r.local_uniform, json_get(wl, "uniform"), 1e-12);
        check_corr(&r.local_permuted, json_get(wl, "permuted"), 1e-12);
        check_corr(&r.last, json_get(wt, "spearman"), 1e-12);
        check_corr(&r.last_kendall, json_get(wt, "kendall"), 1e-12);
        check_corr(&r.last_uniform, json_get(wt, "uniform"), 1e-12);
        check_corr(&r.last_permuted, json_get(wt, "permuted"), 1e-12);
        const json_value *rows = json_get(want, "rows"), *topk = json_get(want, "topk"), *pi = json_get(want, "per_input");
        assert_true(same(r.rows_mean, &rows->u.items[0], 1e-12) && same(r.rows_lo, &rows->u.items[1], 1e-12) &&
                    same(r.rows_hi, &rows->u.items[2], 1e-12));
        assert_true(same(r.topk_mean, &topk->u.items[0], 1e-12) && same(r.topk_lo, &topk->u.items[1], 1e-12) &&
                    same(r.topk_hi, &topk->u.items[2], 1e-12));
        const json_value *ef = json_get(want, "effect");
        assert_true(same(r.effect_mean, &ef->u.items[0], 1e-15) && same(r.effect_lo, &ef->u.items[1], 1e-15) &&
                    same(r.effect_hi, &ef->u.items[2], 1e-15));
        assert_int_equal((int)pi->n, 4 * n);
        for (int k = 0; k < 4 * n; k++) assert_true(same(per[k], &pi->u.items[k], 1e-12));
        if (eps == 0.0) { /* the engine's own grids */
            const int layer = (int)json_get(cs, "layer")->u.num, head = (int)json_get(cs, "head")->u.num;
            for (int k = 0; k < n; k++) {
                for (int q = 0; q < 3; q++) mine[q][k] = malloc((size_t)T[k] * T[k] * sizeof(float));
                assert_int_equal(alab_edge_knockout(mine[0][k], mine[1][k], mine[2][k], m, ids[k], T[k], layer, head, 0,
                                                    T[k], ALAB_KO_RENORM), ALAB_OK);
                for (int x = 0; x < T[k] * T[k]; x++) /* the golden writes 0 above the diagonal */
                    for (int q = 1; q < 3; q++) if (isnan(mine[q][k][x])) mine[q][k][x] = 0.0f;
            }
            alab_edge_set e;
            assert_int_equal(alab_edge_set_summary(&e, NULL, (const float *const *)mine[0], (const float *const *)mine[1],
                                                   (const float *const *)mine[2], T, n, last, 0.0, &stats), ALAB_OK);
            assert_true(fabs(e.local.mean - r.local.mean) < 1e-3);
            assert_true(isnan(r.last.mean) ? isnan(e.last.mean) : fabs(e.last.mean - r.last.mean) < 1e-3);
            for (int k = 0; k < n; k++) for (int q = 0; q < 3; q++) free(mine[q][k]);
        }
        for (int k = 0; k < n; k++) for (int q = 0; q < 3; q++) free(g[q][k]);
    }
    /* bad arguments */
    alab_edge_set r;
    float *gp[1] = {NULL};
    int T1 = 3;
    assert_int_equal(alab_edge_set_summary(NULL, NULL, NULL, NULL, NULL, NULL, 1, 0, 0.0, &stats), ALAB_EINVAL);
    assert_int_equal(alab_edge_set_summary(&r, NULL, (const float *const *)gp, (const float *const *)gp,
                                           (const float *const *)gp, &T1, 1, 0, 0.0, &stats), ALAB_EINVAL);
    assert_int_equal(alab_edge_set_summary(&r, NULL, (const float *const *)gp, (const float *const *)gp,
                                           (const float *const *)gp, &T1, 0, 0, 0.0, &stats), ALAB_ERANGE);
    assert_int_equal(alab_edge_set_summary(&r, NULL, (const float *const *)gp, (const float *const *)gp,
                                           (const float *const *)gp, &T1, 1, 0, -1.0, &stats), ALAB_ERANGE);
    alab_model_free(m);
    json_free(&doc);
    free(text);
}

/* ---- the windowed run of a knockout (forward.c's alab_forward_rows) ------------------------------------ */

/* A knockout in row i of layer l changes no row before i, and in the last layer no row after i: the edge
 * knockouts recompute rows [i, T) (or row i) only, with the other rows' q, k, v from the plain run. Those rows
 * must be the full run's bit for bit, in every family (fused and separate q/k/v, rotary, grouped keys, q/k
 * norms, parallel residual, sliding windows: every row of families.h), at window starts inside and across the
 * groups of 4 rows and the attention's blocks of 32 rows, with 1 and 2 threads. */
static void windowed_rows_equal_the_full_run(void **state) {
    (void)state;
    for (int d = 0; d < N_FAMILIES; d++) {
        alab_model *m = load_model(FAMILIES[d].dir);
        const alab_config *c = alab_model_config(m);
        const int L = c->n_layer, C = c->n_embd, NH = c->n_head;
        int T = c->n_positions < 37 ? c->n_positions : 37, ids[64];
        for (int t = 0; t < T; t++) ids[t] = (7 * t + 3) % (c->vocab_size < 200 ? c->vocab_size : 200);
        const int DQKV = (NH + 2 * m->arch.NKV) * m->arch.HS;
        float *xs = malloc((size_t)L * T * C * sizeof *xs), *qkv = malloc((size_t)L * T * DQKV * sizeof *qkv);
        float *want = malloc((size_t)T * C * sizeof *want), *got = malloc((size_t)C * sizeof *got);
        for (int threads = 1; threads <= 2; threads++) {
            assert_int_equal(alab_model_set_threads(m, threads), ALAB_OK);
            const int rows[] = {0, 1, 3, 4, 6, 17, 31, 32, 33, T - 2, T - 1};
            const int layers[] = {0, L - 1};
            for (int li = 0; li < 2; li++)
                for (size_t ri = 0; ri < sizeof rows / sizeof *rows; ri++) {
                    const int l = layers[li], i = rows[ri];
                    if (i < 0 || i >= T) continue;
                    alab_knockout ko = {l, (int)(ri % 2) ? -1 : (int)(ri % (size_t)NH), i, i / 2,
                                        ri % 3 == 2 ? ALAB_KO_ZERO : ALAB_KO_RENORM};
                    alab_run_opts o;
                    alab_run_opts_init(&o); /* the full run with the knockout */
                    o.knockouts = &ko;
                    o.n_knockouts = 1;
                    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
                    for (int t = i; t < T; t++) assert_int_equal(alab_result_hidden(want + (size_t)t * C, m, t), ALAB_OK);
                    alab_run_opts_init(&o); /* the plain run, captured */
                    o.capture_resid = xs;
                    assert_int_equal(alab_forward_rows(m, ids, T, &o, qkv, NULL, 0, T), ALAB_OK);
                    for (int r1 = i + 1; r1 <= T; r1 += T - i - 1 > 0 ? T - i - 1 : 1) {
                        alab_run_opts_init(&o); /* the window [i, r1) from layer l */
                        o.knockouts = &ko;
                        o.n_knockouts = 1;
                        o.start_layer = l;
                        o.start_x = l > 0 ? xs + (size_t)l * T * C : NULL;
                        o.no_logits = 1;
                        if (l < L - 1 && r1 < T) continue; /* below the last layer every later row changes */
                        assert_int_equal(alab_forward_rows(m, ids, T, &o, NULL, qkv, i, r1), ALAB_OK);
                        for (int t = i; t < r1; t++) {
                            assert_int_equal(alab_result_hidden(got, m, t), ALAB_OK);
                            if (memcmp(got, want + (size_t)t * C, (size_t)C * sizeof *got))
                                fail_msg("%s, %d thread(s): layer %d, knockout row %d, window [%d, %d): row %d differs "
                                         "from the full run", FAMILIES[d].dir, threads, l, i, i, r1, t);
                        }
                        /* what the window did not compute is not offered */
                        assert_null(alab_result_attention(m));
                        assert_int_equal(alab_result_T(m), 0);
                        if (i > 0) assert_int_equal(alab_result_hidden(got, m, i - 1), ALAB_ESTATE);
                        if (r1 < T) assert_int_equal(alab_result_hidden(got, m, r1), ALAB_ESTATE);
                    }
                }
        }
        /* a window takes knockouts of its own rows only */
        alab_knockout ko = {0, -1, 2, 1, ALAB_KO_RENORM};
        alab_run_opts o;
        alab_run_opts_init(&o);
        o.knockouts = &ko;
        o.n_knockouts = 1;
        assert_int_equal(alab_forward_rows(m, ids, T, &o, NULL, qkv, 3, T), ALAB_EINVAL);
        assert_int_equal(alab_forward_rows(m, ids, T, &o, NULL, qkv, 2, T + 1), ALAB_ERANGE);
        assert_int_equal(alab_forward_rows(m, ids, T, &o, NULL, qkv, 2, 2), ALAB_ERANGE);
        o.capture_resid = xs;
        assert_int_equal(alab_forward_rows(m, ids, T, &o, NULL, qkv, 2, T), ALAB_EINVAL);
        o.capture_resid = NULL;
        o.mask = ALAB_MASK_FULL;
        assert_int_equal(alab_forward_rows(m, ids, T, &o, NULL, qkv, 2, T), ALAB_EINVAL);
        /* and a whole run afterwards is whole again */
        assert_int_equal(alab_forward(m, ids, T, NULL), ALAB_OK);
        assert_int_equal(alab_result_T(m), T);
        assert_non_null(alab_result_attention(m));
        free(xs);
        free(qkv);
        free(want);
        free(got);
        alab_model_free(m);
    }
}

/* ---- the sliding-window families against the float64 reference ------------ */

/* evidence_golden.json's "families" (tests/ref/gen_evidence.py over circuits_ref.run): Mistral (a window of 4 keys
 * on both layers) and Gemma 3 (window 4 on layer 0, post-normed sublayers), T = 10 so the window cuts rows 4..9.
 * Edge knockouts (renorm in two row parts, and zero), token knockouts in the four modes, the three ablation
 * semantics with their pruning curves and activation patching, each within the golden's 1e-4; the largest
 * difference met is printed. */
static double fam_max;

static void fam_close(const char *name, const char *what, double d) {
    if (!(d < 1e-4)) fprintf(stderr, "%s %s: max diff %g\n", name, what, d);
    assert_true(d < 1e-4);
    if (d > fam_max) fam_max = d;
}

static void sliding_window_families_match_the_reference(void **state) {
    (void)state;
    golden_env g;
    golden_open(&g);
    const json_value *fams = json_get(g.doc.root, "families");
    assert_non_null(fams);
    assert_int_equal(fams->n, families_with(REF_EVIDENCE)); /* each a REF_EVIDENCE row of families.h */
    for (uint32_t f = 0; f < fams->n; f++) {
        const json_value *e = &fams->u.items[f];
        const char *name = json_get(e, "name")->u.str;
        const test_family *row = family_by_key(name);
        assert_non_null(row);
        assert_true((row->refs & REF_EVIDENCE) && row->sliding);
        assert_string_equal(json_get(e, "dir")->u.str, row->dir);
        alab_model *m = load_model(row->dir);
        const alab_config *c = alab_model_config(m);
        const int L = c->n_layer, NH = c->n_head, D = NH * c->head_dim;
        assert_string_equal(c->family, json_get(e, "model_type")->u.str);
        int ids[64];
        const int T = ids_of(ids, json_get(e, "ids"));
        const json_value *jw = json_get(e, "windows");
        for (int l = 0; l < L; l++) assert_int_equal(alab_model_layer_window(m, l), (int)jw->u.items[l].u.num);
        size_t n;
        /* edge knockouts, renormalised: the rows in two parts */
        const json_value *edges = json_get(e, "edge");
        for (uint32_t k = 0; k < edges->n; k++) {
            const json_value *ce = &edges->u.items[k];
            const int layer = (int)json_get(ce, "layer")->u.num, head = (int)json_get(ce, "head")->u.num;
            float A[64 * 64], E[64 * 64], EL[64 * 64];
            assert_int_equal(alab_edge_knockout(A, E, EL, m, ids, T, layer, head, 0, 5, ALAB_KO_RENORM), ALAB_OK);
            assert_int_equal(alab_edge_knockout(A, E, EL, m, ids, T, layer, head, 5, T, ALAB_KO_RENORM), ALAB_OK);
            float *wa = json_floats_of(json_get(ce, "A"), &n), *we = json_floats_of(json_get(ce, "E"), &n),
                  *wl = json_floats_of(json_get(ce, "E_last"), &n);
            assert_int_equal((int)n, T * T);
            fam_close(name, "edge A", max_abs_diff(A, wa, n));
            fam_close(name, "edge E", max_diff_pairs(E, we, n));
            fam_close(name, "edge E_last", max_diff_pairs(EL, wl, n));
            /* a key outside a sliding row's window has no weight by construction: no pair (NaN, like j > i), so
               no statistic pools those structural zeros and their rounding-level effects */
            const int W = alab_model_layer_window(m, layer);
            int outside = 0;
            for (int i = 0; i < T; i++)
                for (int j = 0; W > 0 && j <= i - W; j++, outside++) {
                    assert_true(A[i * T + j] == 0.0f);
                    assert_true(isnan(E[i * T + j]) && isnan(EL[i * T + j]));
                }
            assert_true(W == 0 || outside > 0);
            /* the set summary's points are the pairs inside the window: T(T+1)/2 minus those outside */
            const float *pa[1] = {A}, *pe[1] = {E}, *pl[1] = {EL};
            const int tt[1] = {T};
            const alab_set_stats st0 = {0, 0, 0.95, 1u};
            alab_edge_set set;
            assert_int_equal(alab_edge_set_summary(&set, NULL, pa, pe, pl, tt, 1, layer == L - 1, 0.0, &st0), ALAB_OK);
            assert_int_equal(set.local.n_points, T * (T + 1) / 2 - outside);
            free(wa); free(we); free(wl);
        }
        /* without renormalisation */
        const json_value *ez = json_get(e, "edge_zero");
        {
            float A[64 * 64], E[64 * 64], EL[64 * 64];
            assert_int_equal(alab_edge_knockout(A, E, EL, m, ids, T, (int)json_get(ez, "layer")->u.num,
                                                (int)json_get(ez, "head")->u.num, 0, T, ALAB_KO_ZERO), ALAB_OK);
            float *we = json_floats_of(json_get(ez, "E"), &n), *wl = json_floats_of(json_get(ez, "E_last"), &n);
            fam_close(name, "edge zero E", max_diff_pairs(E, we, n));
            fam_close(name, "edge zero E_last", max_diff_pairs(EL, wl, n));
            free(we); free(wl);
        }
        /* token knockouts: column, column without renormalisation, deleted, replaced */
        const json_value *tm = json_get(e, "token_modes");
        const int neutral = (int)json_get(tm, "neutral")->u.num;
        static const char *tnames[4] = {NULL, "column_zero", "delete", "replace"};
        static const int tmodes[4] = {ALAB_TOKEN_COLUMN, ALAB_TOKEN_COLUMN_ZERO, ALAB_TOKEN_DELETE, ALAB_TOKEN_REPLACE};
        for (int k = 0; k < 4; k++) {
            float eff[64];
            assert_int_equal(alab_token_knockout(eff, m, ids, T, 0, T, tmodes[k], neutral), ALAB_OK);
            float *want = json_floats_of(k ? json_get(tm, tnames[k]) : json_get(json_get(e, "token"), "effect"), &n);
            assert_int_equal((int)n, T);
            fam_close(name, "token knockout", max_abs_diff(eff, want, n));
            free(want);
        }
        /* three ablation semantics and their pruning curves */
        const json_value *ab = json_get(e, "ablation");
        int rmean[128], rres[128];
        const int Tm = ids_of(rmean, json_get(ab, "reference_mean_ids")), Tr = ids_of(rres, json_get(ab, "reference_resample_ids"));
        float *hm = malloc((size_t)L * Tm * D * sizeof *hm), *hr = malloc((size_t)L * Tr * D * sizeof *hr);
        assert_int_equal(alab_capture_head_outputs(hm, m, rmean, Tm), ALAB_OK);
        assert_int_equal(alab_capture_head_outputs(hr, m, rres, Tr), ALAB_OK);
        static const char *anames[3] = {"zero", "mean", "resample"};
        const float *refs[3] = {NULL, hm, hr};
        const int Trefs[3] = {0, Tm, Tr};
        for (int mode = 0; mode < 3; mode++) {
            float delta[64], loss[65];
            int order[64];
            double base = 0.0;
            assert_int_equal(alab_head_importance_mode(delta, &base, m, ids, T, mode, refs[mode], Trefs[mode]), ALAB_OK);
            fam_close(name, "ablation base loss", fabs(base - json_get(ab, "base_loss")->u.num));
            const json_value *w = json_get(ab, anames[mode]);
            float *wd = json_floats_of(json_get(w, "delta"), &n), *wp = json_floats_of(json_get(w, "pruning"), &n);
            fam_close(name, "ablation delta", max_abs_diff(delta, wd, (size_t)L * NH));
            assert_int_equal(alab_pruning_curve_mode(loss, order, m, ids, T, delta, mode, refs[mode], Trefs[mode]), ALAB_OK);
            fam_close(name, "pruning", max_abs_diff(loss, wp, (size_t)L * NH + 1));
            free(wd); free(wp);
        }
        free(hm); free(hr);
        /* activation patching: the residual stream at each (layer, position) and each head's output */
        const json_value *p = json_get(e, "patching");
        int clean[64], corrupt[64];
        const int Tp = ids_of(clean, json_get(p, "clean_ids"));
        assert_int_equal(ids_of(corrupt, json_get(p, "corrupt_ids")), Tp);
        float rg[64 * 64], hg[64];
        double ldc, ldd;
        assert_int_equal(alab_activation_patching(rg, hg, &ldc, &ldd, m, clean, corrupt, Tp, (int)json_get(p, "answer_clean")->u.num,
                                                  (int)json_get(p, "answer_corrupt")->u.num), ALAB_OK);
        fam_close(name, "ld clean", fabs(ldc - json_get(p, "ld_clean")->u.num));
        fam_close(name, "ld corrupt", fabs(ldd - json_get(p, "ld_corrupt")->u.num));
        float *wr = json_floats_of(json_get(p, "resid"), &n), *wh = json_floats_of(json_get(p, "heads"), &n);
        fam_close(name, "patching resid", max_abs_diff(rg, wr, (size_t)L * Tp));
        fam_close(name, "patching heads", max_abs_diff(hg, wh, (size_t)L * NH));
        free(wr); free(wh);
        alab_model_free(m);
    }
    fprintf(stderr, "evidence: %u sliding-window families, largest difference from the float64 reference %.3g\n",
            fams->n, fam_max);
    golden_close(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edge_knockouts_match_the_reference),
        cmocka_unit_test(token_knockouts_match_the_reference),
        cmocka_unit_test(three_ablation_semantics_match_the_reference),
        cmocka_unit_test(activation_patching_matches_the_reference),
        cmocka_unit_test(evidence_options_are_checked),
        cmocka_unit_test(knockout_modes_match_the_reference),
        cmocka_unit_test(last_layer_rows_that_cannot_reach_the_end_are_exact_zeros),
        cmocka_unit_test(the_noise_floor_is_small_and_not_negative),
        cmocka_unit_test(resample_draws_match_the_reference),
        cmocka_unit_test(edge_set_summary_matches_the_reference),
        cmocka_unit_test(windowed_rows_equal_the_full_run),
        cmocka_unit_test(sliding_window_families_match_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
