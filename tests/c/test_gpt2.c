#define _GNU_SOURCE /* memmem */
/* test_gpt2.c — the forward pass reproduces the independent PyTorch reference
 * (tests/ref/gpt2_ref.py) on every golden case, to 1e-4, with and without each
 * intervention; loading refuses every malformed model with its error code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#define TOL 1e-4

/* ---- fixtures ----------------------------------------------------------- */

static json_doc golden;

static int load_golden(void **state) {
    (void)state;
    size_t len;
    char *text = slurp(repo_path("tests/fixtures/golden.json"), &len);
    if (!text) return -1;
    int rc = json_parse(&golden, text, len, 0);
    free(text);
    return rc;
}

static int free_golden(void **state) {
    (void)state;
    json_free(&golden);
    return 0;
}

static alab_model *load_fixture(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, "tests/fixtures/%s", name);
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, repo_path(rel));
    if (rc) fprintf(stderr, "load %s: %s: %s\n", name, alab_strerror(rc), alab_last_error());
    assert_int_equal(rc, ALAB_OK);
    return m;
}

static int mask_of(const char *s) {
    if (strcmp(s, "full") == 0) return ALAB_MASK_FULL;
    if (strcmp(s, "window") == 0) return ALAB_MASK_WINDOW;
    assert_string_equal(s, "causal");
    return ALAB_MASK_CAUSAL;
}

/* ---- the golden cases ----------------------------------------------------- */

static void run_case(const json_value *c) {
    const char *name = json_get(c, "name")->u.str;
    const char *model = json_get(c, "model")->u.str;
    alab_model *m = load_fixture(model);
    const alab_config *cfg = alab_model_config(m);
    const int L = cfg->n_layer, NH = cfg->n_head, HS = cfg->n_embd / NH, V = cfg->vocab_size;

    /* the tokenizer gives the reference's ids */
    const json_value *jids = json_get(c, "ids");
    const json_value *jtext = json_get(c, "text");
    int T = (int)jids->n;
    int *ids = malloc((size_t)T * sizeof(int)), *enc = malloc((size_t)(T + 64) * sizeof(int));
    for (int t = 0; t < T; t++) ids[t] = (int)jids->u.items[t].u.num;
    int n_enc = 0;
    assert_int_equal(alab_bpe_encode(enc, T + 64, &n_enc, alab_model_bpe(m), jtext->u.str, jtext->n), ALAB_OK);
    assert_int_equal(n_enc, T);
    assert_memory_equal(enc, ids, (size_t)T * sizeof(int));

    /* options */
    const json_value *o = json_get(c, "opts");
    alab_run_opts opts;
    alab_run_opts_init(&opts);
    const json_value *iv = json_get(o, "interventions");
    alab_intervention interv[64];
    assert_true(iv->n <= 64);
    for (uint32_t i = 0; i < iv->n; i++) {
        const json_value *v = &iv->u.items[i];
        const char *kind = json_get(v, "kind")->u.str;
        interv[i].kind = strcmp(kind, "hard") == 0 ? ALAB_DO_HARD : strcmp(kind, "soft") == 0 ? ALAB_DO_SOFT : ALAB_ABLATE;
        interv[i].layer = (int)json_get(v, "layer")->u.num;
        interv[i].head = (int)json_get(v, "head")->u.num;
        interv[i].row = (int)json_get(v, "row")->u.num;
        interv[i].col = (int)json_get(v, "col")->u.num;
        interv[i].lambda = (float)json_get(v, "lambda")->u.num;
    }
    opts.interventions = interv;
    opts.n_interventions = (int)iv->n;
    opts.mask = mask_of(json_get(o, "mask")->u.str);
    opts.window = (int)json_get(o, "window")->u.num;
    int layer_mask[16], layer_window[16];
    const json_value *lm = json_get(o, "layer_mask");
    if (lm && lm->type == JSON_ARRAY) {
        const json_value *lw = json_get(o, "layer_window");
        assert_int_equal((int)lm->n, L);
        for (int l = 0; l < L; l++) {
            layer_mask[l] = mask_of(lm->u.items[l].u.str);
            layer_window[l] = lw ? (int)lw->u.items[l].u.num : opts.window;
        }
        opts.layer_mask = layer_mask;
        opts.layer_window = layer_window;
    }
    const json_value *sc = json_get(o, "scale");
    if (sc && sc->type == JSON_NUMBER) { opts.scale_override = 1; opts.scale = (float)sc->u.num; }
    const json_value *cap = json_get(o, "capture");
    if (cap && cap->type == JSON_OBJECT) {
        opts.capture_layer = (int)json_get(cap, "layer")->u.num;
        opts.capture_head = (int)json_get(cap, "head")->u.num;
    }

    assert_int_equal(alab_forward(m, ids, T, &opts), ALAB_OK);
    assert_int_equal(alab_result_T(m), T);

    size_t n;
    float *want = json_floats_of(json_get(c, "logits"), &n);
    assert_int_equal(n, (size_t)V);
    double d_logits = max_abs_diff(alab_result_logits(m), want, n);
    free(want);
    want = json_floats_of(json_get(c, "attentions"), &n);
    assert_int_equal(n, (size_t)L * NH * T * T);
    double d_att = max_abs_diff(alab_result_attention(m), want, n);
    free(want);
    double d_qk = 0.0;
    const json_value *jq = json_get(c, "q");
    if (jq && jq->type == JSON_ARRAY) {
        assert_non_null(alab_result_q(m));
        want = json_floats_of(jq, &n);
        assert_int_equal(n, (size_t)T * HS);
        d_qk = max_abs_diff(alab_result_q(m), want, n);
        free(want);
        want = json_floats_of(json_get(c, "k"), &n);
        double dk = max_abs_diff(alab_result_k(m), want, n);
        if (!(dk <= d_qk)) d_qk = dk;
        free(want);
    } else {
        assert_null(alab_result_q(m));
    }
    printf("  %-24s %-14s T=%-3d max|d| logits %.2e  attention %.2e  q/k %.2e\n", name, model, T, d_logits, d_att, d_qk);
    assert_true(d_logits <= TOL);
    assert_true(d_att <= TOL);
    assert_true(d_qk <= TOL);

    /* top-k: same ids (where the reference's probabilities are not tied) and probabilities */
    const json_value *top = json_get(c, "top");
    int tk[10];
    float tp[10];
    assert_int_equal(alab_result_topk(tk, tp, (int)top->n, m), ALAB_OK);
    for (uint32_t i = 0; i < top->n; i++) {
        double p = json_get(&top->u.items[i], "prob")->u.num;
        assert_true(fabs(tp[i] - p) <= TOL);
        if (i + 1 < top->n && fabs(p - json_get(&top->u.items[i + 1], "prob")->u.num) > 1e-6 &&
            (i == 0 || fabs(p - json_get(&top->u.items[i - 1], "prob")->u.num) > 1e-6))
            assert_int_equal(tk[i], (int)json_get(&top->u.items[i], "id")->u.num);
    }
    free(ids);
    free(enc);
    alab_model_free(m);
}

static void every_golden_case_matches_the_pytorch_reference_to_1e4(void **state) {
    (void)state;
    const json_value *cases = json_get(golden.root, "cases");
    assert_non_null(cases);
    assert_true(cases->n >= 20);
    for (uint32_t i = 0; i < cases->n; i++) run_case(&cases->u.items[i]);
}

/* ---- properties of a run -------------------------------------------------- */

static void attention_rows_are_distributions_and_causal(void **state) {
    (void)state;
    alab_model *m = load_fixture("tiny");
    const alab_config *c = alab_model_config(m);
    int ids[12] = {10, 200, 33, 1000, 5, 77, 999, 1, 2, 3, 4, 1256};
    assert_int_equal(alab_forward(m, ids, 12, NULL), ALAB_OK);
    const float *att = alab_result_attention(m);
    for (int lh = 0; lh < c->n_layer * c->n_head; lh++)
        for (int i = 0; i < 12; i++) {
            double s = 0;
            for (int j = 0; j < 12; j++) {
                float p = att[((size_t)lh * 12 + i) * 12 + j];
                assert_true(p >= 0.0f);
                if (j > i) assert_true(p == 0.0f);
                s += p;
            }
            assert_true(fabs(s - 1.0) < 1e-5);
        }
    alab_model_free(m);
}

static void a_hard_do_makes_the_row_one_hot_and_changes_later_layers(void **state) {
    (void)state;
    alab_model *m = load_fixture("tiny");
    const alab_config *c = alab_model_config(m);
    const int T = 8, NH = c->n_head, L = c->n_layer;
    int ids[8] = {40, 41, 42, 43, 44, 45, 46, 47};
    assert_int_equal(alab_forward(m, ids, T, NULL), ALAB_OK);
    size_t n = (size_t)L * NH * T * T;
    float *before = malloc(n * sizeof(float)), logits0[4];
    memcpy(before, alab_result_attention(m), n * sizeof(float));
    memcpy(logits0, alab_result_logits(m), sizeof logits0);

    alab_intervention v = {ALAB_DO_HARD, 0, ALAB_ALL_HEADS, 7, 2, 0.0f};
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.interventions = &v;
    o.n_interventions = 1;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    const float *after = alab_result_attention(m);
    for (int h = 0; h < NH; h++)
        for (int j = 0; j < T; j++)
            assert_true(after[((size_t)h * T + 7) * T + j] == (j == 2 ? 1.0f : 0.0f));
    /* layer 0's other rows are untouched; layer 1's last row has moved */
    assert_memory_equal(after, before, (size_t)7 * T * sizeof(float));
    double moved = max_abs_diff(after + (size_t)NH * T * T + 7 * T, before + (size_t)NH * T * T + 7 * T, (size_t)T);
    assert_true(moved > 1e-4);
    assert_true(max_abs_diff(alab_result_logits(m), logits0, 4) > 1e-5);
    free(before);
    alab_model_free(m);
}

/* ---- errors of a run ------------------------------------------------------ */

static void bad_runs_get_their_error_codes(void **state) {
    (void)state;
    alab_model *m = load_fixture("tiny");
    const alab_config *c = alab_model_config(m);
    int ids[80];
    for (int i = 0; i < 80; i++) ids[i] = i;
    alab_run_opts o;
    alab_intervention v;

    assert_int_equal(alab_forward(m, ids, 0, NULL), ALAB_EEMPTY);
    assert_int_equal(alab_forward(m, ids, c->n_positions + 1, NULL), ALAB_ETOOLONG);
    assert_non_null(strstr(alab_last_error(), "n_positions"));
    ids[3] = c->vocab_size;
    assert_int_equal(alab_forward(m, ids, 5, NULL), ALAB_ERANGE);
    ids[3] = -1;
    assert_int_equal(alab_forward(m, ids, 5, NULL), ALAB_ERANGE);
    ids[3] = 3;
    assert_int_equal(alab_result_T(m), 0); /* no result after failures */
    int tk[1];
    float tp[1];
    assert_int_equal(alab_result_topk(tk, tp, 1, m), ALAB_ESTATE);

    struct { alab_intervention v; int rc; } bad[] = {
        {{ALAB_DO_HARD, c->n_layer, 0, 1, 0, 0}, ALAB_ERANGE},
        {{ALAB_DO_HARD, -1, 0, 1, 0, 0}, ALAB_ERANGE},
        {{ALAB_DO_HARD, 0, c->n_head, 1, 0, 0}, ALAB_ERANGE},
        {{ALAB_DO_HARD, 0, -2, 1, 0, 0}, ALAB_ERANGE},
        {{ALAB_DO_HARD, 0, 0, 5, 0, 0}, ALAB_ERANGE},
        {{ALAB_DO_HARD, 0, 0, 0, 5, 0}, ALAB_ERANGE},
        {{ALAB_DO_SOFT, 0, 0, 1, -1, 1}, ALAB_ERANGE},
        {{ALAB_DO_SOFT, 0, 0, 1, 0, NAN}, ALAB_ENAN},
        {{ALAB_DO_SOFT, 0, 0, 1, 0, INFINITY}, ALAB_ENAN},
        {{ALAB_ABLATE, 0, c->n_head, 0, 0, 0}, ALAB_ERANGE},
        {{7, 0, 0, 0, 0, 0}, ALAB_EINVAL},
        {{ALAB_DO_SOFT, 0, 0, 1, 2, 3}, ALAB_EMASKED},   /* a future column under the causal mask */
        {{ALAB_DO_SOFT, 2, -1, 0, 4, -1}, ALAB_EMASKED},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        alab_run_opts_init(&o);
        v = bad[i].v;
        o.interventions = &v;
        o.n_interventions = 1;
        assert_int_equal(alab_forward(m, ids, 5, &o), bad[i].rc);
        assert_true(alab_last_error()[0] != '\0');
    }
    /* a soft do is refused exactly where the layer's own mask hides the cell */
    alab_run_opts_init(&o);
    v = (alab_intervention){ALAB_DO_SOFT, 1, 0, 4, 1, 2};
    o.interventions = &v;
    o.n_interventions = 1;
    o.mask = ALAB_MASK_WINDOW;
    o.window = 3;                                        /* row 4 sees columns 2..4 */
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_EMASKED);
    assert_non_null(strstr(alab_last_error(), "row 4 sees columns 2..4"));
    v.col = 2;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_OK);
    v.col = 4;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_OK);
    v = (alab_intervention){ALAB_DO_SOFT, 1, 0, 1, 4, 2};  /* a future column: fine without a mask */
    o.mask = ALAB_MASK_FULL;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_OK);
    int lm[3] = {ALAB_MASK_FULL, ALAB_MASK_CAUSAL, ALAB_MASK_FULL}, lw[3] = {0, 0, 0};
    o.layer_mask = lm;                                   /* but layer 1 is causal */
    o.layer_window = lw;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_EMASKED);
    v.layer = 2;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_OK);
    v = (alab_intervention){ALAB_DO_HARD, 1, 0, 1, 4, 0};  /* a hard do may name any column */
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_OK);
    assert_string_equal(alab_strerror(ALAB_EMASKED), "soft do on a masked cell");
    alab_run_opts_init(&o);
    o.mask = 9;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_EINVAL);
    o.mask = ALAB_MASK_WINDOW;
    o.window = 0;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_ERANGE);
    alab_run_opts_init(&o);
    o.scale_override = 1;
    o.scale = NAN;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_ENAN);
    alab_run_opts_init(&o);
    o.capture_layer = c->n_layer;
    o.capture_head = 0;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_ERANGE);
    alab_run_opts_init(&o);
    o.n_interventions = ALAB_MAX_INTERVENTIONS + 1;
    alab_intervention *many = calloc(ALAB_MAX_INTERVENTIONS + 1, sizeof *many);
    o.interventions = many;
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_ELIMIT);
    free(many);
    alab_run_opts_init(&o);
    o.n_interventions = 1; /* with no array */
    assert_int_equal(alab_forward(m, ids, 5, &o), ALAB_EINVAL);
    /* and the model still works */
    assert_int_equal(alab_forward(m, ids, 5, NULL), ALAB_OK);
    alab_model_free(m);
}

/* ---- loading -------------------------------------------------------------- */

typedef struct { char *config, *st, *vocab, *merges; size_t config_len, st_len, vocab_len, merges_len; } files;

static files read_tiny(void) {
    files f;
    f.config = slurp(repo_path("tests/fixtures/tiny/config.json"), &f.config_len);
    f.st = slurp(repo_path("tests/fixtures/tiny/model.safetensors"), &f.st_len);
    f.vocab = slurp(repo_path("tests/fixtures/tiny/vocab.json"), &f.vocab_len);
    f.merges = slurp(repo_path("tests/fixtures/tiny/merges.txt"), &f.merges_len);
    assert_non_null(f.config);
    assert_non_null(f.st);
    assert_non_null(f.vocab);
    assert_non_null(f.merges);
    return f;
}

static void free_files(files *f) {
    free(f->config);
    free(f->st); /* NULL once handed over */
    free(f->vocab);
    free(f->merges);
}

/* Load with the safetensors buffer handed over (it is freed by the loader). */
static int load_files(files *f) {
    alab_model *m = NULL;
    int rc = alab_model_load_buffers(&m, f->config, f->config_len, f->st, f->st_len, f->vocab, f->vocab_len, f->merges,
                                     f->merges_len);
    f->st = NULL;
    if (rc == ALAB_OK) assert_non_null(m);
    else assert_null(m);
    alab_model_free(m);
    return rc;
}

/* Replace the first occurrence of `from` by `to` (same length) in the header. */
static void patch(files *f, const char *from, const char *to) {
    assert_int_equal(strlen(from), strlen(to));
    char *p = memmem(f->st, f->st_len < 100000 ? f->st_len : 100000, from, strlen(from));
    assert_non_null(p);
    memcpy(p, to, strlen(to));
}

static void the_model_loads_from_buffers_as_from_a_directory(void **state) {
    (void)state;
    files f = read_tiny();
    assert_int_equal(load_files(&f), ALAB_OK);
    free_files(&f);
}

static void a_truncated_weights_file_is_refused(void **state) {
    (void)state;
    files f = read_tiny();
    f.st_len -= 100;
    assert_int_equal(load_files(&f), ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "truncated"));
    free_files(&f);
    f = read_tiny();
    f.st_len = 6;
    assert_int_equal(load_files(&f), ALAB_EFORMAT);
    free_files(&f);
}

static void a_missing_tensor_is_named_in_the_error(void **state) {
    (void)state;
    files f = read_tiny();
    patch(&f, "\"wpe.weight\"", "\"wpX.weight\"");
    assert_int_equal(load_files(&f), ALAB_EMISSING);
    assert_non_null(strstr(alab_last_error(), "wpe.weight"));
    free_files(&f);
}

static void a_tensor_of_the_wrong_shape_is_refused(void **state) {
    (void)state;
    files f = read_tiny(); /* wpe is [64,32]: the same bytes as [32,64] */
    patch(&f, "[64,32]", "[32,64]");
    assert_int_equal(load_files(&f), ALAB_ESHAPE);
    assert_non_null(strstr(alab_last_error(), "expected"));
    free_files(&f);
}

static void an_integer_or_unknown_dtype_is_refused(void **state) {
    (void)state;
    files f = read_tiny();
    patch(&f, "\"F32\"", "\"I32\"");
    assert_int_equal(load_files(&f), ALAB_EDTYPE);
    free_files(&f);
    f = read_tiny();
    patch(&f, "\"F32\"", "\"Q32\"");
    assert_int_equal(load_files(&f), ALAB_EDTYPE);
    free_files(&f);
}

static void a_nan_weight_is_refused(void **state) {
    (void)state;
    files f = read_tiny();
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | (uint8_t)f.st[i];
    float nan = NAN;
    memcpy(f.st + 8 + n + 40, &nan, 4); /* a float somewhere in the first tensor */
    assert_int_equal(load_files(&f), ALAB_ENAN);
    free_files(&f);
}

static void bad_config_json_is_refused(void **state) {
    (void)state;
    struct { const char *json; int rc; } bad[] = {
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 3}", ALAB_ECONFIG},
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 30, \"n_layer\": 3, \"n_head\": 4}", ALAB_ECONFIG},
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 0, \"n_head\": 4}", ALAB_ECONFIG},
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 3, \"n_head\": \"4\"}", ALAB_ECONFIG},
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 3, \"n_head\": 4, \"activation_function\": \"relu\"}", ALAB_ECONFIG},
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 3, \"n_head\": 4, \"model_type\": \"llama\"}", ALAB_ECONFIG},
        {"{\"vocab_size\": 100, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 3, \"n_head\": 4}", ALAB_EVOCAB},
        {"{\"vocab_size\": 1257, \"n_positions\": 64, \"n_embd\": 32, \"n_layer\": 3, \"n_head\": 4,}", ALAB_EJSON},
        {"", ALAB_EJSON},
        {"[]", ALAB_ECONFIG},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        files f = read_tiny();
        free(f.config);
        f.config = strdup(bad[i].json);
        f.config_len = strlen(bad[i].json);
        assert_int_equal(load_files(&f), bad[i].rc);
        assert_true(alab_last_error()[0] != '\0');
        free_files(&f);
    }
}

static void bad_vocab_and_merges_are_refused(void **state) {
    (void)state;
    files f = read_tiny();
    free(f.vocab);
    f.vocab = strdup("{\"a\": 0, \"b\": \"one\"}");
    f.vocab_len = strlen(f.vocab);
    int rc = load_files(&f);
    assert_true(rc == ALAB_EVOCAB || rc == ALAB_EJSON);
    free_files(&f);
    f = read_tiny();
    free(f.merges);
    f.merges = strdup("#version: 0.2\nthis line has three\n");
    f.merges_len = strlen(f.merges);
    assert_int_equal(load_files(&f), ALAB_EMERGES);
    free_files(&f);
}

static void a_missing_directory_is_an_io_error(void **state) {
    (void)state;
    alab_model *m = (alab_model *)&m; /* must be reset to NULL */
    assert_int_equal(alab_model_load_dir(&m, "/nonexistent/attnlab"), ALAB_EIO);
    assert_null(m);
    assert_non_null(strstr(alab_last_error(), "config.json"));
}

static void sixteen_bit_and_prefixed_checkpoints_load(void **state) {
    (void)state;
    const char *names[] = {"tiny-f16", "tiny-bf16", "tiny-prefixed"};
    for (int i = 0; i < 3; i++) alab_model_free(load_fixture(names[i]));
}

/* ---- generation ----------------------------------------------------------- */

static void greedy_generation_follows_the_argmax_and_sampling_is_seeded(void **state) {
    (void)state;
    alab_model *m = load_fixture("tiny");
    int ids[4] = {40, 41, 42, 43}, out[6], n = 0, seq[10];
    uint64_t rng = 1;
    assert_int_equal(alab_generate(out, &n, m, ids, 4, 6, 0.0f, 0, &rng), ALAB_OK);
    assert_int_equal(n, 6);
    memcpy(seq, ids, sizeof ids);
    for (int s = 0; s < 6; s++) { /* each greedy token is the argmax of a plain run */
        int tk;
        float tp;
        assert_int_equal(alab_forward(m, seq, 4 + s, NULL), ALAB_OK);
        assert_int_equal(alab_result_topk(&tk, &tp, 1, m), ALAB_OK);
        assert_int_equal(out[s], tk);
        seq[4 + s] = tk;
    }
    int a[6], b[6], na, nb;
    uint64_t r1 = 7, r2 = 7;
    assert_int_equal(alab_generate(a, &na, m, ids, 4, 6, 1.0f, 20, &r1), ALAB_OK);
    assert_int_equal(alab_generate(b, &nb, m, ids, 4, 6, 1.0f, 20, &r2), ALAB_OK);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(alab_generate(a, &na, m, ids, 4, 64, 1.0f, 20, &r1), ALAB_ETOOLONG);
    assert_int_equal(alab_generate(a, &na, m, ids, 4, 2, NAN, 20, &r1), ALAB_ENAN);
    alab_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_golden_case_matches_the_pytorch_reference_to_1e4),
        cmocka_unit_test(attention_rows_are_distributions_and_causal),
        cmocka_unit_test(a_hard_do_makes_the_row_one_hot_and_changes_later_layers),
        cmocka_unit_test(bad_runs_get_their_error_codes),
        cmocka_unit_test(the_model_loads_from_buffers_as_from_a_directory),
        cmocka_unit_test(a_truncated_weights_file_is_refused),
        cmocka_unit_test(a_missing_tensor_is_named_in_the_error),
        cmocka_unit_test(a_tensor_of_the_wrong_shape_is_refused),
        cmocka_unit_test(an_integer_or_unknown_dtype_is_refused),
        cmocka_unit_test(a_nan_weight_is_refused),
        cmocka_unit_test(bad_config_json_is_refused),
        cmocka_unit_test(bad_vocab_and_merges_are_refused),
        cmocka_unit_test(a_missing_directory_is_an_io_error),
        cmocka_unit_test(sixteen_bit_and_prefixed_checkpoints_load),
        cmocka_unit_test(greedy_generation_follows_the_argmax_and_sampling_is_seeded),
    };
    return cmocka_run_group_tests_name("gpt2", tests, load_golden, free_golden);
}
