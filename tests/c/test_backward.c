/* test_backward.c — reverse mode (c/src/backward.c): the gradients of every family fixture against the float64
 * autograd reference (tests/fixtures/backward_golden.json from tests/ref/gen_backward.py) on 1 and 2 threads
 * (bit for bit the same), the layer recomputation equal to the forward pass bit for bit, central finite
 * differences of the f32 engine on sampled coordinates (through the forward's own hooks: a residual patch moves
 * one coordinate of the residual, a head patch one of a head's output, a soft do's lambda one score), and the
 * refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"
#include "families.h"
#include "model.h"
#include "parallel.h"

/* A gradient within REL of the reference, plus a floor near zero: |c - r| <= REL |r| + max(ABS, FLOOR max|r|), max
 * over the part (one kind of gradient of one case). The floor is the f32 forward's: the engine's gradient is that
 * of its f32 run, whose activations differ from the float64 reference's by ~1e-7 relative, which moves each
 * gradient by up to ~6e-6 of its part's largest (measured: the backward's products and attention done in double
 * leave the largest differences within 1-20 % of where they are; docs/architecture.md, "Reverse mode"). So an element much smaller than its part's largest is checked
 * against the floor, not to 1e-4 of itself. */
#define REL 1e-4
#define ABS 1e-6
#define FLOOR 1e-5

typedef struct {
    json_doc doc;
    char *text;
    float *data;
    size_t n_data;
} golden;

static void golden_load(golden *g) {
    size_t len = 0, blen = 0;
    g->text = slurp(repo_path("tests/fixtures/backward_golden.json"), &len);
    assert_non_null(g->text);
    assert_int_equal(json_parse(&g->doc, g->text, len, 0), ALAB_OK);
    g->data = (float *)(void *)slurp(repo_path("tests/fixtures/backward_golden.bin"), &blen);
    assert_non_null(g->data);
    g->n_data = blen / sizeof(float);
}

static void golden_free(golden *g) {
    json_free(&g->doc);
    free(g->text);
    free(g->data);
}

static int num(const json_value *o, const char *k, int dflt) {
    const json_value *v = json_get(o, k);
    return v && v->type == JSON_NUMBER ? (int)v->u.num : dflt;
}

static int mask_of(const char *s) {
    if (strcmp(s, "full") == 0) return ALAB_MASK_FULL;
    if (strcmp(s, "window") == 0) return ALAB_MASK_WINDOW;
    return ALAB_MASK_CAUSAL;
}

/* A case's options (families_ref's form) as alab_run_opts; the arrays live in the caller's buffers. */
static void opts_of(alab_run_opts *o, const json_value *jo, alab_intervention *iv, int *lm, int *lw) {
    alab_run_opts_init(o);
    const json_value *ivs = json_get(jo, "interventions");
    static const char *kinds[] = {"hard", "soft", "ablate", "scaleQ", "scaleK", "swapQK"};
    for (uint32_t i = 0; ivs && i < ivs->n; i++) {
        const json_value *e = &ivs->u.items[i];
        const char *k = json_get(e, "kind")->u.str;
        iv[i] = (alab_intervention){-1, num(e, "layer", 0), num(e, "head", 0), num(e, "row", 0), num(e, "col", 0), 0.0f, 1.0f};
        for (int j = 0; j < 6; j++)
            if (strcmp(k, kinds[j]) == 0) iv[i].kind = j;
        const json_value *lam = json_get(e, "lambda"), *al = json_get(e, "alpha");
        if (lam) iv[i].lambda = (float)lam->u.num;
        if (al) iv[i].alpha = (float)al->u.num;
        o->n_interventions++;
    }
    o->interventions = iv;
    const json_value *mk = json_get(jo, "mask");
    if (mk) o->mask = mask_of(mk->u.str);
    o->window = num(jo, "window", 0);
    const json_value *jlm = json_get(jo, "layer_mask"), *jlw = json_get(jo, "layer_window");
    if (jlm) {
        for (uint32_t l = 0; l < jlm->n; l++) lm[l] = mask_of(jlm->u.items[l].u.str);
        o->layer_mask = lm;
        if (jlw) {
            for (uint32_t l = 0; l < jlw->n; l++) lw[l] = (int)jlw->u.items[l].u.num;
            o->layer_window = lw;
        }
    }
    const json_value *sc = json_get(jo, "scale");
    if (sc) {
        o->scale_override = 1;
        o->scale = (float)sc->u.num;
    }
}

static int metric_of(const char *s) {
    if (strcmp(s, "logprob") == 0) return ALAB_METRIC_LOGPROB;
    if (strcmp(s, "kl") == 0) return ALAB_METRIC_KL;
    if (strcmp(s, "loss") == 0) return ALAB_METRIC_LOSS;
    return ALAB_METRIC_LOGIT_DIFF;
}

static const char *PART_NAMES[ALAB_GRAD_PARTS] = {"embed", "resid", "head_out", "attn", "scores", "q", "k", "v", "mlp_out"};

/* Every model and case of the golden file: the C gradients within REL / ABS of the reference, on 1 and 2 threads
 * bit for bit the same. */
static void gradients_match_the_reference(void **state) {
    (void)state;
    golden g;
    golden_load(&g);
    const json_value *models = json_get(g.doc.root, "models");
    assert_non_null(models);
    int n_cases = 0;
    for (uint32_t run = 0; run < 2 * models->n; run++) {
        /* every model, then again those of 16-bit checkpoints with their matrices kept in 16 bits */
        const json_value *jm = &models->u.items[run % models->n];
        const test_family *row = family_by_key(jm->key);
        assert_non_null(row);
        if (run >= models->n && !row->half) continue;
        alab_model *m = NULL;
        assert_int_equal(alab_model_load_dir_ex(&m, repo_path(json_get(jm, "dir")->u.str),
                                                run >= models->n ? ALAB_WEIGHTS_HALF : ALAB_WEIGHTS_AUTO), ALAB_OK);
        assert_int_equal(alab_model_half(m), run >= models->n);
        const json_value *jids = json_get(jm, "ids"), *cases = json_get(jm, "cases");
        double worst[ALAB_GRAD_PARTS] = {0};
        for (uint32_t ci = 0; ci < cases->n; ci++) {
            const json_value *jc = &cases->u.items[ci];
            const json_value *cids = json_get(jc, "ids") ? json_get(jc, "ids") : jids;
            const int T = (int)cids->n;
            int ids[64];
            for (int t = 0; t < T; t++) ids[t] = (int)cids->u.items[t].u.num;
            alab_intervention iv[16];
            int lm[8], lw[8];
            alab_run_opts o;
            opts_of(&o, json_get(jc, "opts"), iv, lm, lw);
            size_t off[ALAB_GRAD_PARTS + 1];
            assert_int_equal(alab_grad_layout(off, m, T, ALAB_GRAD_ALL), ALAB_OK);
            float *gr[2];
            double value[2];
            for (int th = 0; th < 2; th++) {
                assert_int_equal(alab_model_set_threads(m, th + 1), ALAB_OK);
                if (th) alab_pool_set_min_work(alab_model_pool(m), 0); /* every product and the attention split */
                alab_tape *tp = NULL;
                int rc = alab_tape_forward(&tp, m, ids, T, &o);
                if (rc) fprintf(stderr, "%s: %s\n", alab_strerror(rc), alab_last_error());
                assert_int_equal(rc, ALAB_OK);
                gr[th] = malloc(off[ALAB_GRAD_PARTS] * sizeof(float));
                rc = alab_backward(gr[th], off[ALAB_GRAD_PARTS], &value[th], m, tp, metric_of(json_get(jc, "metric")->u.str),
                                   num(jc, "a", 0), num(jc, "b", 0), ALAB_GRAD_ALL);
                if (rc) fprintf(stderr, "%s: %s\n", alab_strerror(rc), alab_last_error());
                assert_int_equal(rc, ALAB_OK);
                alab_tape_free(tp);
            }
            assert_memory_equal(gr[0], gr[1], off[ALAB_GRAD_PARTS] * sizeof(float));
            assert_memory_equal(&value[0], &value[1], sizeof(double));
            const double want_value = json_get(jc, "value")->u.num;
            if (!(fabs(value[0] - want_value) <= REL * fabs(want_value) + ABS))
                fail_msg("%s %s: metric %.9g, reference %.9g", json_get(jm, "dir")->u.str, json_get(jc, "name")->u.str,
                         value[0], want_value);
            const json_value *parts = json_get(jc, "parts");
            for (int p = 0; p < ALAB_GRAD_PARTS; p++) {
                const json_value *jp = json_get(parts, PART_NAMES[p]);
                const size_t at = (size_t)jp->u.items[0].u.num, n = (size_t)jp->u.items[1].u.num;
                assert_int_equal(n, off[p + 1] - off[p]);
                assert_true(at + n <= g.n_data);
                const float *c = gr[0] + off[p], *r = g.data + at;
                double rmax = 0;
                for (size_t i = 0; i < n; i++) rmax = fmax(rmax, fabs(r[i]));
                for (size_t i = 0; i < n; i++) {
                    const double e = fabs((double)c[i] - r[i]), tol = REL * fabs(r[i]) + fmax(ABS, FLOOR * rmax);
                    if (e / tol > worst[p]) worst[p] = e / tol;
                    if (!(e <= tol))
                        fail_msg("%s %s: %s[%zu] = %.9g, reference %.9g (|diff| %.3g > %.3g)", json_get(jm, "dir")->u.str,
                                 json_get(jc, "name")->u.str, PART_NAMES[p], i, c[i], r[i], e, tol);
                }
            }
            free(gr[0]);
            free(gr[1]);
            n_cases++;
        }
        printf("  %-36s%s", json_get(jm, "dir")->u.str, run >= models->n ? " half" : "     ");
        for (int p = 0; p < ALAB_GRAD_PARTS; p++) printf(" %s %.2f", PART_NAMES[p], worst[p]);
        printf("  (worst |diff| / tolerance)\n");
        alab_model_free(m);
    }
    assert_true(n_cases >= 100);
    golden_free(&g);
}

/* The backward recomputes each layer with the forward's calls: its attention equals the forward's bit for bit,
 * and the tape's run is alab_forward's (the same logits and attention). */
static void recompute_is_the_forward(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        const int T = 9, L = c->n_layer, NH = c->n_head, V = c->vocab_size;
        int ids[9];
        for (int t = 0; t < T; t++) ids[t] = (t * 53 + 7) % V;
        alab_intervention iv[2] = {{ALAB_DO_SOFT, L - 1, 0, T - 1, T - 2, 1.5f, 1.0f}, {ALAB_SCALE_Q, 0, ALAB_ALL_HEADS, 0, 0, 0.0f, 0.7f}};
        alab_run_opts o;
        alab_run_opts_init(&o);
        o.interventions = iv;
        o.n_interventions = 2;
        const size_t na = (size_t)L * NH * T * T;
        assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
        float *att = malloc(na * sizeof *att), *logits = malloc((size_t)V * sizeof *logits);
        memcpy(att, alab_result_attention(m), na * sizeof *att);
        memcpy(logits, alab_result_logits(m), (size_t)V * sizeof *logits);
        alab_tape *tp = NULL;
        assert_int_equal(alab_tape_forward(&tp, m, ids, T, &o), ALAB_OK);
        assert_memory_equal(alab_result_attention(m), att, na * sizeof *att);
        assert_memory_equal(alab_result_logits(m), logits, (size_t)V * sizeof *logits);
        assert_true(alab_tape_bytes(tp) >= (size_t)(L + 1) * T * c->n_embd * sizeof(float));
        double v;
        assert_int_equal(alab_backward(NULL, 0, &v, m, tp, ALAB_METRIC_LOGPROB, 3, 0, 0), ALAB_OK);
        assert_int_equal(alab_result_T(m), 0); /* the model's buffers were the backward's */
        assert_memory_equal(m->acts.att, att, na * sizeof *att);
        alab_tape_free(tp);
        free(att);
        free(logits);
        alab_model_free(m);
    }
}

/* embed_rows (the gradient readings' hook): the rows a run looks up, given, are that run bit for bit, its tape's
 * gradients too; KL of such a run against the ids' own is 0; the refusals. */
static void embed_rows_are_the_lookup(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        const int T = 7, L = c->n_layer, NH = c->n_head, V = c->vocab_size, C = c->n_embd;
        int ids[7];
        for (int t = 0; t < T; t++) ids[t] = (t * 31 + 5) % V;
        float *rows = malloc((size_t)T * C * sizeof *rows);
        assert_int_equal(alab_embedding_rows(rows, m, ids, T), ALAB_OK);
        const size_t na = (size_t)L * NH * T * T;
        assert_int_equal(alab_forward(m, ids, T, NULL), ALAB_OK);
        float *att = malloc(na * sizeof *att), *logits = malloc((size_t)V * sizeof *logits);
        memcpy(att, alab_result_attention(m), na * sizeof *att);
        memcpy(logits, alab_result_logits(m), (size_t)V * sizeof *logits);
        alab_run_opts o;
        alab_run_opts_init(&o);
        o.embed_rows = rows;
        assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
        assert_memory_equal(alab_result_attention(m), att, na * sizeof *att);
        assert_memory_equal(alab_result_logits(m), logits, (size_t)V * sizeof *logits);
        size_t off[ALAB_GRAD_PARTS + 1];
        assert_int_equal(alab_grad_layout(off, m, T, ALAB_GRAD_ALL), ALAB_OK);
        const size_t n = off[ALAB_GRAD_PARTS];
        float *g0 = malloc(n * sizeof *g0), *g1 = malloc(n * sizeof *g1);
        alab_tape *tp = NULL;
        double v0, v1;
        assert_int_equal(alab_tape_forward(&tp, m, ids, T, NULL), ALAB_OK);
        assert_int_equal(alab_backward(g0, n, &v0, m, tp, ALAB_METRIC_LOGIT_DIFF, 3, 1, ALAB_GRAD_ALL), ALAB_OK);
        alab_tape_free(tp);
        assert_int_equal(alab_tape_forward(&tp, m, ids, T, &o), ALAB_OK);
        for (size_t i = 0; i < (size_t)T * C; i++) rows[i] = -1.0f; /* the tape keeps no pointer to them */
        assert_int_equal(alab_backward(g1, n, &v1, m, tp, ALAB_METRIC_LOGIT_DIFF, 3, 1, ALAB_GRAD_ALL), ALAB_OK);
        assert_true(v0 == v1);
        assert_memory_equal(g0, g1, n * sizeof *g0);
        assert_int_equal(alab_backward(NULL, 0, &v1, m, tp, ALAB_METRIC_KL, 0, 0, 0), ALAB_OK);
        assert_true(v1 == 0.0);
        alab_tape_free(tp);
        /* other rows are another run: half of them, a different logit difference */
        assert_int_equal(alab_embedding_rows(rows, m, ids, T), ALAB_OK);
        for (size_t i = 0; i < (size_t)T * C; i++) rows[i] *= 0.5f;
        assert_int_equal(alab_tape_forward(&tp, m, ids, T, &o), ALAB_OK);
        assert_int_equal(alab_backward(NULL, 0, &v1, m, tp, ALAB_METRIC_LOGIT_DIFF, 3, 1, 0), ALAB_OK);
        assert_true(v1 != v0);
        alab_tape_free(tp);
        /* refusals */
        o.start_layer = 1;
        o.start_x = rows;
        assert_int_equal(alab_forward(m, ids, T, &o), ALAB_EINVAL);
        assert_int_equal(alab_embedding_rows(NULL, m, ids, T), ALAB_EINVAL);
        assert_int_equal(alab_embedding_rows(rows, m, ids, 0), ALAB_EEMPTY);
        ids[2] = V;
        assert_int_equal(alab_embedding_rows(rows, m, ids, T), ALAB_ERANGE);
        free(g0);
        free(g1);
        free(att);
        free(logits);
        free(rows);
        alab_model_free(m);
    }
}

/* ---- finite differences ---- */

/* The metric of the model's last run, as alab_backward defines it; base: the unmodified run's last logits. */
static double metric_now(alab_model *m, int metric, int a, int b, const float *base) {
    const int V = alab_model_config(m)->vocab_size;
    const float *z = alab_result_logits(m);
    if (metric == ALAB_METRIC_LOGIT_DIFF) return (double)z[a] - z[b];
    if (metric == ALAB_METRIC_LOSS) {
        double s;
        int n;
        assert_int_equal(alab_result_nll(&s, &n, m), ALAB_OK);
        return s / n;
    }
    double mz = -INFINITY, mb = -INFINITY, sz = 0, sb = 0;
    for (int v = 0; v < V; v++) mz = fmax(mz, z[v]);
    for (int v = 0; v < V; v++) sz += exp(z[v] - mz);
    const double lz = mz + log(sz);
    if (metric == ALAB_METRIC_LOGPROB) return z[a] - lz;
    for (int v = 0; v < V; v++) mb = fmax(mb, base[v]);
    for (int v = 0; v < V; v++) sb += exp(base[v] - mb);
    const double lb = mb + log(sb);
    double kl = 0;
    for (int v = 0; v < V; v++) {
        const double pl = base[v] - lb;
        kl += exp(pl) * (pl - (z[v] - lz));
    }
    return kl;
}

typedef struct {
    alab_model *m;
    const int *ids;
    int T, metric, a, b;
    const alab_run_opts *o;
    const float *base;
} fd_ctx;

/* m(o with extra's hooks): extra is o plus one patch or soft do. */
static double fd_eval(const fd_ctx *f, const alab_run_opts *extra) {
    assert_int_equal(alab_forward(f->m, f->ids, f->T, extra), ALAB_OK);
    return metric_now(f->m, f->metric, f->a, f->b, f->base);
}

/* Richardson-extrapolated central difference of g(h) at 0, steps h and h/2: error O(h^4) plus the f32 noise of
 * the metric divided by h. */
typedef double (*fd_fn)(const fd_ctx *f, double h, void *arg);
static double central(const fd_ctx *f, fd_fn g, void *arg, double h) {
    const double d1 = (g(f, h, arg) - g(f, -h, arg)) / (2 * h);
    const double d2 = (g(f, h / 2, arg) - g(f, -h / 2, arg)) / h;
    return (4 * d2 - d1) / 3;
}

typedef struct {
    int layer, pos, c;
    const float *x; /* the residual (L + 1, T, C) of the plain run's tape */
} resid_arg;

static double shift_resid(const fd_ctx *f, double h, void *arg) {
    const resid_arg *r = arg;
    const int C = alab_model_config(f->m)->n_embd;
    float v[1024];
    memcpy(v, r->x + ((size_t)r->layer * f->T + r->pos) * C, (size_t)C * sizeof(float));
    v[r->c] += (float)h;
    alab_resid_patch p = {r->layer, r->pos, v};
    alab_run_opts o = *f->o;
    o.resid_patches = &p;
    o.n_resid_patches = 1;
    return fd_eval(f, &o);
}

typedef struct {
    int layer, head, pos, c;
    const float *y; /* (L, T, DQ) head outputs of the run */
} head_arg;

static double shift_head(const fd_ctx *f, double h, void *arg) {
    const head_arg *r = arg;
    const alab_config *c = alab_model_config(f->m);
    const int DQ = c->n_head * c->head_dim, HS = c->head_dim;
    float *v = malloc((size_t)f->T * HS * sizeof *v);
    for (int t = 0; t < f->T; t++)
        memcpy(v + (size_t)t * HS, r->y + ((size_t)r->layer * f->T + t) * DQ + r->head * HS, (size_t)HS * sizeof(float));
    v[(size_t)r->pos * HS + r->c] += (float)h;
    alab_head_patch p = {r->layer, r->head, v, HS};
    alab_run_opts o = *f->o;
    o.head_patches = &p;
    o.n_head_patches = 1;
    const double out = fd_eval(f, &o);
    free(v);
    return out;
}

typedef struct {
    int layer, head, row, col;
} score_arg;

static double shift_score(const fd_ctx *f, double h, void *arg) {
    const score_arg *r = arg;
    alab_intervention iv[20];
    if (f->o->n_interventions) memcpy(iv, f->o->interventions, (size_t)f->o->n_interventions * sizeof *iv);
    iv[f->o->n_interventions] = (alab_intervention){ALAB_DO_SOFT, r->layer, r->head, r->row, r->col, (float)h, 1.0f};
    alab_run_opts o = *f->o;
    o.interventions = iv;
    o.n_interventions = f->o->n_interventions + 1;
    return fd_eval(f, &o);
}

/* On four families (GPT-2, GPT-NeoX, Llama, Gemma 3) and the trained built-in model, four metrics, with and without interventions: the
 * gradient of sampled coordinates of the residual stream, the head outputs and the scores against a central
 * difference of the f32 engine (steps 1e-2 and 5e-3, Richardson). Tolerance: 2e-3 of the part's largest
 * gradient + 2e-3 of the value (the f32 forward's rounding, about 1e-7 of the metric, divided by the step). */
static void finite_differences(void **state) {
    (void)state;
    const char *dirs[] = {"tests/fixtures/tiny", "tests/fixtures/families/neox", "tests/fixtures/families/llama",
                          "tests/fixtures/families/gemma3", "models/brown-gpt2"}; /* the last one trained */
    int checked = 0;
    for (int di = 0; di < 5; di++) {
        alab_model *m = load_model(dirs[di]);
        const alab_config *c = alab_model_config(m);
        /* the trained model at T = 40: its products take the packed kernel (backward.c's BW_PACKED_MIN_T) */
        const int T = di == 4 ? 40 : 8, L = c->n_layer, NH = c->n_head, C = c->n_embd, DQ = NH * c->head_dim;
        const int V = c->vocab_size;
        int ids[40];
        for (int t = 0; t < T; t++) ids[t] = (t * 29 + 5) % V;
        float *base = malloc((size_t)V * sizeof *base);
        assert_int_equal(alab_forward(m, ids, T, NULL), ALAB_OK);
        memcpy(base, alab_result_logits(m), (size_t)V * sizeof *base);
        alab_intervention iv[2] = {{ALAB_DO_SOFT, L - 1, 1, T - 1, 1, 2.0f, 1.0f}, {ALAB_ABLATE, 0, NH - 1, 0, 0, 0.0f, 1.0f}};
        for (int variant = 0; variant < 4; variant++) {
            const int metric = variant; /* LOGIT_DIFF, LOGPROB, KL (with interventions), LOSS */
            alab_run_opts o;
            alab_run_opts_init(&o);
            if (variant >= 2) {
                o.interventions = iv;
                o.n_interventions = 2;
            }
            size_t off[ALAB_GRAD_PARTS + 1];
            const int want = (1 << ALAB_GRAD_RESID) | (1 << ALAB_GRAD_HEAD_OUT) | (1 << ALAB_GRAD_SCORES);
            assert_int_equal(alab_grad_layout(off, m, T, want), ALAB_OK);
            float *gr = malloc(off[ALAB_GRAD_PARTS] * sizeof *gr), *x = malloc((size_t)(L + 1) * T * C * sizeof *x);
            float *y = malloc((size_t)L * T * DQ * sizeof *y);
            /* the run's residuals and head outputs, through the forward's captures */
            alab_run_opts oc = o;
            oc.capture_resid = x;
            oc.capture_head_out = y;
            assert_int_equal(alab_forward(m, ids, T, &oc), ALAB_OK);
            alab_tape *tp = NULL;
            assert_int_equal(alab_tape_forward(&tp, m, ids, T, &o), ALAB_OK);
            double value;
            assert_int_equal(alab_backward(gr, off[ALAB_GRAD_PARTS], &value, m, tp, metric, 7, 11, want), ALAB_OK);
            alab_tape_free(tp);
            fd_ctx f = {m, ids, T, metric, 7, 11, &o, base};
            assert_true(fabs(fd_eval(&f, &o) - value) <= 1e-5 * fabs(value) + 1e-6);
            double gmax[3] = {0};
            for (int p = 0; p < 3; p++) {
                const int part = p == 0 ? ALAB_GRAD_RESID : p == 1 ? ALAB_GRAD_HEAD_OUT : ALAB_GRAD_SCORES;
                for (size_t i = off[part]; i < off[part + 1]; i++) gmax[p] = fmax(gmax[p], fabs(gr[i]));
            }
            for (int s = 0; s < 6; s++) {
                const int l = s % L, pos = (s * 5 + 3) % T, cc = (s * 7 + 1) % C;
                resid_arg ra = {l, pos, cc, x};
                const double fd = central(&f, shift_resid, &ra, 1e-2);
                const double g0 = gr[off[ALAB_GRAD_RESID] + ((size_t)l * T + pos) * C + cc];
                if (!(fabs(fd - g0) <= 2e-3 * gmax[0] + 2e-3 * fabs(value) + 1e-6))
                    fail_msg("%s metric %d: d/d resid[%d][%d][%d] = %.7g, finite difference %.7g", dirs[di], metric, l, pos, cc, g0, fd);
                const int hd = (s * 3) % NH, hc = (s * 5) % c->head_dim;
                head_arg ha = {l, hd, pos, hc, y};
                const double fh = central(&f, shift_head, &ha, 1e-2);
                const double gh = gr[off[ALAB_GRAD_HEAD_OUT] + ((size_t)l * T + pos) * DQ + hd * c->head_dim + hc];
                if (!(fabs(fh - gh) <= 2e-3 * gmax[1] + 2e-3 * fabs(value) + 1e-6))
                    fail_msg("%s metric %d: d/d head_out[%d][%d][%d] = %.7g, finite difference %.7g", dirs[di], metric, l, pos,
                             hd * c->head_dim + hc, gh, fd);
                /* a score the mask lets through: row pos, a key in its window (Gemma's sliding layer: 4) */
                const int col = pos - (s % 3 < pos ? s % 3 : pos);
                if (variant >= 2 && l == 0 && hd == NH - 1) continue; /* an ablated head: no score moves anything */
                score_arg sa = {l, hd, pos, col};
                const double fs = central(&f, shift_score, &sa, 1e-2);
                const double gs = gr[off[ALAB_GRAD_SCORES] + (((size_t)l * NH + hd) * T + pos) * T + col];
                if (!(fabs(fs - gs) <= 2e-3 * gmax[2] + 2e-3 * fabs(value) + 1e-6))
                    fail_msg("%s metric %d: d/d score[%d][%d][%d][%d] = %.7g, finite difference %.7g", dirs[di], metric, l,
                             hd, pos, col, gs, fs);
                checked += 3;
            }
            free(gr);
            free(x);
            free(y);
        }
        free(base);
        alab_model_free(m);
    }
    assert_true(checked > 200);
}

/* ---- refusals ---- */

static void refusals(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/llama");
    alab_model *m2 = load_model("tests/fixtures/tiny");
    const alab_config *c = alab_model_config(m);
    int ids[6] = {1, 2, 3, 4, 5, 6};
    alab_tape *tp = (alab_tape *)(uintptr_t)1;
    size_t off[ALAB_GRAD_PARTS + 1];
    /* the tape's own */
    assert_int_equal(alab_tape_forward(NULL, m, ids, 6, NULL), ALAB_EINVAL);
    assert_int_equal(alab_tape_forward(&tp, NULL, ids, 6, NULL), ALAB_EINVAL);
    assert_null(tp);
    assert_int_equal(alab_tape_forward(&tp, m, ids, 0, NULL), ALAB_EEMPTY);
    assert_int_equal(alab_tape_forward(&tp, m, ids, c->n_positions + 1, NULL), ALAB_ETOOLONG);
    int bad[2] = {1, c->vocab_size};
    assert_int_equal(alab_tape_forward(&tp, m, bad, 2, NULL), ALAB_ERANGE);
    assert_null(tp);
    alab_knockout ko = {0, 0, 1, 0, ALAB_KO_RENORM};
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.knockouts = &ko;
    o.n_knockouts = 1;
    assert_int_equal(alab_tape_forward(&tp, m, ids, 6, &o), ALAB_EINVAL);
    alab_run_opts_init(&o);
    alab_intervention iv = {ALAB_DO_SOFT, 0, 0, 1, 4, 1.0f, 1.0f}; /* a masked cell */
    o.interventions = &iv;
    o.n_interventions = 1;
    assert_int_equal(alab_tape_forward(&tp, m, ids, 6, &o), ALAB_EMASKED);
    assert_null(tp);
    /* the layout */
    assert_int_equal(alab_grad_layout(NULL, m, 6, 0), ALAB_EINVAL);
    assert_int_equal(alab_grad_layout(off, m, 6, 1 << ALAB_GRAD_PARTS), ALAB_EINVAL);
    assert_int_equal(alab_grad_layout(off, m, 0, 1), ALAB_EEMPTY);
    assert_int_equal(alab_grad_layout(off, m, 6, 0), ALAB_OK);
    assert_int_equal(off[ALAB_GRAD_PARTS], 0);
    assert_int_equal(alab_grad_layout(off, m, 6, (1 << ALAB_GRAD_EMBED) | (1 << ALAB_GRAD_V)), ALAB_OK);
    assert_int_equal(off[ALAB_GRAD_V], 6 * c->n_embd);
    assert_int_equal(off[ALAB_GRAD_PARTS], 6 * c->n_embd + c->n_layer * 6 * c->n_kv_head * c->head_dim);
    /* the backward's */
    assert_int_equal(alab_tape_forward(&tp, m, ids, 6, NULL), ALAB_OK);
    float g[8];
    assert_int_equal(alab_backward(g, 8, NULL, NULL, tp, 0, 1, 2, 0), ALAB_EINVAL);
    assert_int_equal(alab_backward(g, 8, NULL, m2, tp, 0, 1, 2, 0), ALAB_EINVAL); /* another model's tape */
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, 4, 1, 2, 0), ALAB_EINVAL);
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, -1, 1, 2, 0), ALAB_EINVAL);
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, ALAB_METRIC_LOGIT_DIFF, c->vocab_size, 2, 0), ALAB_ERANGE);
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, ALAB_METRIC_LOGIT_DIFF, 1, -1, 0), ALAB_ERANGE);
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, ALAB_METRIC_LOGPROB, -1, 0, 0), ALAB_ERANGE);
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, ALAB_METRIC_LOSS, 0, 0, 1 << 12), ALAB_EINVAL);
    assert_int_equal(alab_backward(g, 8, NULL, m, tp, ALAB_METRIC_LOSS, 0, 0, 1 << ALAB_GRAD_EMBED), ALAB_ERANGE);
    assert_int_equal(alab_backward(NULL, 0, NULL, m, tp, ALAB_METRIC_LOSS, 0, 0, 1 << ALAB_GRAD_EMBED), ALAB_EINVAL);
    double v = -1;
    assert_int_equal(alab_backward(NULL, 0, &v, m, tp, ALAB_METRIC_KL, 0, 0, 0), ALAB_OK);
    assert_true(v == 0.0); /* the unmodified run's own distribution */
    alab_tape_free(tp);
    assert_int_equal(alab_tape_forward(&tp, m, ids, 1, NULL), ALAB_OK);
    assert_int_equal(alab_backward(NULL, 0, NULL, m, tp, ALAB_METRIC_LOSS, 0, 0, 0), ALAB_EEMPTY);
    assert_int_equal(alab_backward(NULL, 0, &v, m, tp, ALAB_METRIC_LOGPROB, 3, 0, 0), ALAB_OK);
    alab_tape_free(tp);
    alab_tape_free(NULL);
    assert_int_equal(alab_tape_bytes(NULL), 0);
    alab_model_free(m);
    alab_model_free(m2);
}

/* Over ALAB_BACKWARD_MAX_BYTES: the llama fixture with a context of 32768 (a rotary family has no position table,
 * so the weights are the same): at T = 8192 its attention alone is 2 GB. ELIMIT with the sizes, before anything is
 * allocated or run; the layout of a block of that size likewise. */
static void over_the_limit(void **state) {
    (void)state;
    char dir[] = "/tmp/alab_backward_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *files[] = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"};
    char path[4096], rel[256];
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "tests/fixtures/families/llama/%s", files[i]);
        size_t len = 0;
        char *text = slurp(repo_path(rel), &len);
        assert_non_null(text);
        char *at = i == 0 ? strstr(text, "\"max_position_embeddings\": 64,") : NULL;
        if (i == 0) assert_non_null(at);
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        if (at) { /* max_position_embeddings 64 -> 32768 */
            fwrite(text, 1, (size_t)(at - text), f);
            fputs("\"max_position_embeddings\": 32768,", f);
            fwrite(at + strlen("\"max_position_embeddings\": 64,"), 1, len - (size_t)(at - text) - strlen("\"max_position_embeddings\": 64,"), f);
        } else {
            fwrite(text, 1, len, f);
        }
        fclose(f);
        free(text);
    }
    alab_model *m = NULL;
    assert_int_equal(alab_model_load_dir(&m, dir), ALAB_OK);
    const int T = 8192;
    int *ids = calloc((size_t)T, sizeof *ids);
    alab_tape *tp = (alab_tape *)(uintptr_t)1;
    assert_int_equal(alab_tape_forward(&tp, m, ids, T, NULL), ALAB_ELIMIT);
    assert_null(tp);
    assert_non_null(strstr(alab_last_error(), "MB"));
    assert_non_null(strstr(alab_last_error(), "ALAB_BACKWARD_MAX_BYTES"));
    assert_int_equal(alab_result_T(m), 0); /* nothing was run */
    size_t off[ALAB_GRAD_PARTS + 1];
    assert_int_equal(alab_grad_layout(off, m, T, ALAB_GRAD_ALL), ALAB_ELIMIT);
    assert_int_equal(alab_grad_layout(off, m, T, 1 << ALAB_GRAD_RESID), ALAB_OK);
    /* a length the limit allows runs */
    assert_int_equal(alab_tape_forward(&tp, m, ids, 300, NULL), ALAB_OK);
    double v;
    assert_int_equal(alab_backward(NULL, 0, &v, m, tp, ALAB_METRIC_LOSS, 0, 0, 0), ALAB_OK);
    alab_tape_free(tp);
    alab_model_free(m);
    free(ids);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    remove(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradients_match_the_reference),
        cmocka_unit_test(recompute_is_the_forward),
        cmocka_unit_test(embed_rows_are_the_lookup),
        cmocka_unit_test(finite_differences),
        cmocka_unit_test(refusals),
        cmocka_unit_test(over_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
