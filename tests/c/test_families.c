/* test_families.c — every family (gpt2 variants, gpt_neox, llama, qwen2, qwen3, mistral, gemma3_text) loaded from its synthetic
 * Hugging Face folder (tests/fixtures/families, written by tests/ref/gen_families.py) against the independent
 * float64 reference: attentions and q/k within 1e-4, logits within 1e-3, for plain runs and each intervention
 * kind; cached generation equal to full forwards; threads bit for bit; the config's family fields; and the
 * bad folders (sizes that disagree with the tensors, a missing shard, an index naming a tensor twice,
 * unsupported config values) each with its code; the sliding windows of mistral and gemma3_text (each layer's
 * own mask, what a do may name inside and outside them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnlab.h"
#include "families.h"
#include "internal.h"
#include "json.h"
#include "model.h"
#include "ops.h"
#include "parallel.h"
#include "testutil.h"

int alab_generate_impl(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                       float temperature, int top_k, uint64_t *rng_state, int use_cache, float *step_logits);

#define TOL_ATT 1e-4
#define TOL_LOGITS 1e-3

static json_doc g_doc;
static float *g_data;
static size_t g_n_data;

static int setup(void **state) {
    (void)state;
    size_t len = 0;
    char *text = slurp(repo_path("tests/fixtures/families/golden.json"), &len);
    if (!text || json_parse(&g_doc, text, len, 0) != 0) return -1;
    free(text);
    char *bin = slurp(repo_path("tests/fixtures/families/golden.bin"), &len);
    if (!bin) return -1;
    g_data = (float *)(void *)bin; /* malloc'd: aligned for floats; little-endian host */
    g_n_data = len / 4;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    json_free(&g_doc);
    free(g_data);
    return 0;
}

static const float *golden(const json_value *c, const char *key, size_t want) {
    const json_value *v = json_get(c, key);
    if (!v) return NULL;
    size_t off = (size_t)v->u.items[0].u.num, n = (size_t)v->u.items[1].u.num;
    assert_true(n == want && off + n <= g_n_data);
    return g_data + off;
}

static int kind_of(const char *s) {
    if (!strcmp(s, "hard")) return ALAB_DO_HARD;
    if (!strcmp(s, "soft")) return ALAB_DO_SOFT;
    if (!strcmp(s, "ablate")) return ALAB_ABLATE;
    if (!strcmp(s, "scaleQ")) return ALAB_SCALE_Q;
    if (!strcmp(s, "scaleK")) return ALAB_SCALE_K;
    if (!strcmp(s, "swapQK")) return ALAB_SWAP_QK;
    fail_msg("unknown kind %s", s);
    return -1;
}

static int mask_of(const char *s) {
    return !strcmp(s, "full") ? ALAB_MASK_FULL : !strcmp(s, "window") ? ALAB_MASK_WINDOW : ALAB_MASK_CAUSAL;
}

static double num_or(const json_value *o, const char *k, double def) {
    const json_value *v = json_get(o, k);
    return v && v->type == JSON_NUMBER ? v->u.num : def;
}

/* opts of a golden case; iv and the layer arrays are the caller's storage. */
static void opts_of(alab_run_opts *o, const json_value *j, alab_intervention *iv, int *lm, int *lw) {
    alab_run_opts_init(o);
    const json_value *ivs = json_get(j, "interventions");
    for (uint32_t i = 0; ivs && i < ivs->n; i++) {
        const json_value *v = &ivs->u.items[i];
        iv[i] = (alab_intervention){kind_of(json_get(v, "kind")->u.str), (int)num_or(v, "layer", 0),
                                    (int)num_or(v, "head", 0), (int)num_or(v, "row", 0), (int)num_or(v, "col", 0),
                                    (float)num_or(v, "lambda", 0), (float)num_or(v, "alpha", 1)};
    }
    o->interventions = iv;
    o->n_interventions = ivs ? (int)ivs->n : 0;
    const json_value *m = json_get(j, "mask");
    if (m) o->mask = mask_of(m->u.str);
    o->window = (int)num_or(j, "window", 0);
    const json_value *lmv = json_get(j, "layer_mask"), *lwv = json_get(j, "layer_window");
    if (lmv) {
        for (uint32_t l = 0; l < lmv->n; l++) {
            lm[l] = mask_of(lmv->u.items[l].u.str);
            lw[l] = lwv ? (int)lwv->u.items[l].u.num : 0;
        }
        o->layer_mask = lm;
        o->layer_window = lw;
    }
    const json_value *sc = json_get(j, "scale");
    if (sc && sc->type == JSON_NUMBER) {
        o->scale_override = 1;
        o->scale = (float)sc->u.num;
    }
    const json_value *cap = json_get(j, "capture");
    if (cap) {
        o->capture_layer = (int)num_or(cap, "layer", -1);
        o->capture_head = (int)num_or(cap, "head", -1);
    }
}

/* The golden.json entry of a REF_FAMILIES row (families.h); the golden holds no other. */
static const json_value *golden_family(const test_family *row) {
    const json_value *fams = json_get(g_doc.root, "families"), *fam = json_get(fams, row->key);
    assert_int_equal(fams->n, families_with(REF_FAMILIES));
    if (!fam) fail_msg("%s: no entry in tests/fixtures/families/golden.json", row->key);
    assert_string_equal(json_get(fam, "dir")->u.str, row->dir);
    return fam;
}

static void ids_of(const json_value *fam, int *ids, int *T) {
    const json_value *a = json_get(fam, "ids");
    for (uint32_t i = 0; i < a->n; i++) ids[i] = (int)a->u.items[i].u.num;
    *T = (int)a->n;
}

/* Every REF_FAMILIES row of families.h (GPT-2's tests/fixtures/tiny has its reference in
 * tests/fixtures/golden.json: test_gpt2.c). */
static void every_family_matches_the_reference(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        if (!(FAMILIES[f].refs & REF_FAMILIES)) continue;
        const char *key = FAMILIES[f].key;
        const json_value *fam = golden_family(&FAMILIES[f]);
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        assert_int_equal(c->n_layer, (int)num_or(fam, "n_layer", 0));
        assert_int_equal(c->n_head, (int)num_or(fam, "n_head", 0));
        assert_int_equal(c->n_kv_head, (int)num_or(fam, "n_kv_head", 0));
        assert_int_equal(c->head_dim, (int)num_or(fam, "head_dim", 0));
        int ids[64], T;
        ids_of(fam, ids, &T);
        const json_value *cases = json_get(fam, "cases");
        for (uint32_t k = 0; k < cases->n; k++) {
            const json_value *cs = &cases->u.items[k];
            alab_intervention iv[16];
            int lm[8], lw[8];
            alab_run_opts o;
            opts_of(&o, json_get(cs, "opts"), iv, lm, lw);
            int rc = alab_forward(m, ids, T, &o);
            if (rc) fail_msg("%s/%s: %s: %s", key, json_get(cs, "name")->u.str, alab_strerror(rc), alab_last_error());
            const size_t NA = (size_t)c->n_layer * c->n_head * T * T;
            double da = max_abs_diff(alab_result_attention(m), golden(cs, "attentions", NA), NA);
            double dl = max_abs_diff(alab_result_logits(m), golden(cs, "logits", (size_t)c->vocab_size), (size_t)c->vocab_size);
            if (!(da <= TOL_ATT) || !(dl <= TOL_LOGITS))
                fail_msg("%s/%s: attentions differ by %.3g, logits by %.3g", key, json_get(cs, "name")->u.str, da, dl);
            double nll = 0;
            int nn = 0;
            assert_int_equal(alab_result_nll(&nll, &nn, m), ALAB_OK); /* the final norm and head at every position */
            assert_int_equal(nn, T - 1);
            if (!(fabs(nll - num_or(cs, "nll", NAN)) <= 1e-3))
                fail_msg("%s/%s: next-token loss %.6f, reference %.6f", key, json_get(cs, "name")->u.str, nll, num_or(cs, "nll", NAN));
            const float *gq = golden(cs, "q", (size_t)T * c->head_dim), *gk = golden(cs, "k", (size_t)T * c->head_dim);
            if (gq) {
                assert_non_null(alab_result_q(m));
                double dq = max_abs_diff(alab_result_q(m), gq, (size_t)T * c->head_dim);
                double dk = max_abs_diff(alab_result_k(m), gk, (size_t)T * c->head_dim);
                if (!(dq <= TOL_ATT) || !(dk <= TOL_ATT))
                    fail_msg("%s/%s: q differs by %.3g, k by %.3g", key, json_get(cs, "name")->u.str, dq, dk);
            }
        }
        alab_model_free(m);
    }
}

/* The interventions do something on every family: each case's attentions or logits differ from the plain run's
 * golden by more than the tolerance (else the comparison above could not tell an ignored intervention).
 * Except where the architecture says otherwise: Qwen3's q_norm/k_norm (RMSNorm per head) undo a positive
 * scale of W_Q or W_K, so there scaleQ (alpha 2.5) and scaleK of every head (alpha 1.7) change nothing
 * (docs/heads.md), while scaleK with alpha -0.5 flips the keys; Gemma 3's q_norm/k_norm do the same. On the
 * sliding-window families the mask "causal" is the model's own (the plain run), and must equal it. */
static void every_case_moves_the_goldens(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        if (!(FAMILIES[f].refs & REF_FAMILIES)) continue;
        const char *key = FAMILIES[f].key;
        const json_value *fam = golden_family(&FAMILIES[f]), *cases = json_get(fam, "cases");
        const size_t T = json_get(fam, "ids")->n;
        const size_t NA = (size_t)num_or(fam, "n_layer", 0) * (size_t)num_or(fam, "n_head", 0) * T * T;
        const size_t V = (size_t)num_or(fam, "vocab_size", 0);
        const float *a0 = golden(&cases->u.items[0], "attentions", NA), *l0 = golden(&cases->u.items[0], "logits", V);
        for (uint32_t k = 1; k < cases->n; k++) {
            const json_value *cs = &cases->u.items[k];
            if (!strcmp(json_get(cs, "name")->u.str, "capture")) continue; /* captures, changes nothing */
            const char *name = json_get(cs, "name")->u.str;
            double d = max_abs_diff(golden(cs, "attentions", NA), a0, NA) + max_abs_diff(golden(cs, "logits", V), l0, V);
            const int invariant = (FAMILIES[f].qk_norm && (!strcmp(name, "scaleQ") || !strcmp(name, "scaleK_all"))) ||
                                  !strcmp(name, "causal");
            if (invariant && !(d < TOL_ATT)) fail_msg("%s/%s: should equal the plain run (%.3g)", key, name, d);
            if (!invariant && !(d > 10 * TOL_LOGITS)) fail_msg("%s/%s: the golden equals the plain run's", key, name);
        }
    }
}

/* Generation with the key/value cache (rotary positions, grouped heads, parallel residual) equals full forwards,
 * on every row of families.h. */
static void cached_generation_equals_full_forwards(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const int V = alab_model_config(m)->vocab_size, N = 20;
        int ids[4] = {40, 81, 33, 200}, a[20], b[20], na, nb;
        float *la = malloc((size_t)N * V * sizeof(float)), *lb = malloc((size_t)N * V * sizeof(float));
        for (int temp = 0; temp < 2; temp++) {
            uint64_t ra = 7, rb = 7;
            assert_int_equal(alab_generate_impl(a, &na, m, ids, 4, N, temp ? 0.8f : 0.0f, 0, &ra, 1, la), ALAB_OK);
            assert_int_equal(alab_generate_impl(b, &nb, m, ids, 4, N, temp ? 0.8f : 0.0f, 0, &rb, 0, lb), ALAB_OK);
            assert_int_equal(na, N);
            assert_memory_equal(a, b, sizeof a);
            double d = max_abs_diff(la, lb, (size_t)N * V);
            if (!(d <= 1e-4)) fail_msg("%s: cached logits differ by %.3g", FAMILIES[f].key, d);
        }
        free(la), free(lb);
        alab_model_free(m);
    }
}

/* Two threads give the one-thread numbers bit for bit (with interventions and capture), on every row of
 * families.h: with the golden's last case where the row has one, else an ablation and a capture. */
static void threads_are_bit_for_bit(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        int ids[64], T = 9;
        alab_intervention iv[16] = {{ALAB_ABLATE, c->n_layer - 1, 0, 0, 0, 0.0f, 1.0f}};
        int lm[8], lw[8];
        alab_run_opts o;
        alab_run_opts_init(&o);
        o.interventions = iv;
        o.n_interventions = 1;
        o.capture_layer = 0;
        o.capture_head = c->n_head - 1;
        for (int t = 0; t < T; t++) ids[t] = (t * 37 + 11) % c->vocab_size;
        if (FAMILIES[f].refs & REF_FAMILIES) {
            const json_value *fam = golden_family(&FAMILIES[f]);
            const json_value *cs = &json_get(fam, "cases")->u.items[json_get(fam, "cases")->n - 1];
            ids_of(fam, ids, &T);
            opts_of(&o, json_get(cs, "opts"), iv, lm, lw);
        }
        const size_t NA = (size_t)c->n_layer * c->n_head * T * T;
        float *a1 = malloc(NA * 4), *l1 = malloc((size_t)c->vocab_size * 4);
        assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
        memcpy(a1, alab_result_attention(m), NA * 4);
        memcpy(l1, alab_result_logits(m), (size_t)c->vocab_size * 4);
        assert_int_equal(alab_model_set_threads(m, 3), ALAB_OK);
        alab_pool_set_min_work(alab_model_pool(m), 0); /* every split, even of these small products */
        while (alab_pool_parts(alab_model_pool(m)) != 3) /* helpers attach as they start */
            ;
        assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
        assert_memory_equal(a1, alab_result_attention(m), NA * 4);
        assert_memory_equal(l1, alab_result_logits(m), (size_t)c->vocab_size * 4);
        free(a1), free(l1);
        alab_model_free(m);
    }
}

/* Each row's facts (families.h) are what the loader makes of its folder. */
static void the_config_names_the_family(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        const test_family *row = &FAMILIES[f];
        alab_model *m = load_model(row->dir), *h = NULL;
        const alab_config *c = alab_model_config(m);
        assert_string_equal(c->family, row->family);
        assert_int_equal(c->n_kv_head, row->n_kv_head);
        assert_int_equal(c->head_dim, row->head_dim);
        assert_int_equal(m->arch.qk_norm, row->qk_norm);
        assert_int_equal(m->arch.fam->names.post_attn_norm != NULL, row->post_norm);
        int sliding = 0;
        for (int l = 0; l < c->n_layer; l++) sliding |= alab_model_layer_window(m, l) > 0;
        assert_int_equal(sliding, row->sliding);
        assert_int_equal(alab_model_load_dir_ex(&h, repo_path(row->dir), ALAB_WEIGHTS_HALF), ALAB_OK);
        assert_int_equal(alab_model_half(h), row->half);
        alab_model_free(m);
        alab_model_free(h);
    }
}

/* Grouped-query attention: query heads 2 and 3 of the llama fixture share key/value head 1, so a W_K edit of
 * either is the same edit (bit for bit), it moves both heads' attention and leaves heads 0 and 1 alone, and the
 * K captured for either head is the same vector. */
static void a_k_edit_of_a_grouped_head_acts_on_its_key_value_head(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/llama");
    const alab_config *c = alab_model_config(m);
    assert_int_equal(c->n_head / c->n_kv_head, 2);
    int ids[6] = {40, 81, 33, 200, 17, 81};
    const int T = 6;
    const size_t NA = (size_t)c->n_layer * c->n_head * T * T, TT = (size_t)T * T;
    float *plain = malloc(NA * 4), *e2 = malloc(NA * 4), *e3 = malloc(NA * 4);
    float *k2 = malloc((size_t)T * c->head_dim * 4);
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_layer = 1;
    o.capture_head = 2;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    memcpy(plain, alab_result_attention(m), NA * 4);
    memcpy(k2, alab_result_k(m), (size_t)T * c->head_dim * 4);
    o.capture_head = 3;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    assert_memory_equal(k2, alab_result_k(m), (size_t)T * c->head_dim * 4);
    alab_intervention iv = {ALAB_SCALE_K, 1, 2, 0, 0, 0.0f, 3.0f};
    o.interventions = &iv;
    o.n_interventions = 1;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    memcpy(e2, alab_result_attention(m), NA * 4);
    iv.head = 3;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    memcpy(e3, alab_result_attention(m), NA * 4);
    assert_memory_equal(e2, e3, NA * 4);
    const size_t l1 = (size_t)1 * c->n_head * TT;
    assert_memory_equal(plain + l1, e2 + l1, 2 * TT * 4);                        /* heads 0, 1: untouched */
    assert_true(max_abs_diff(plain + l1 + 2 * TT, e2 + l1 + 2 * TT, TT) > 1e-3); /* heads 2 and 3 moved */
    assert_true(max_abs_diff(plain + l1 + 3 * TT, e2 + l1 + 3 * TT, TT) > 1e-3);
    free(plain), free(e2), free(e3), free(k2);
    alab_model_free(m);
}

/* The kernels the other families add, against their double-precision twins. */
static void rmsnorm_gelu_exact_and_swiglu_match_their_twins(void **state) {
    (void)state;
    enum { T = 3, C = 37 };
    float x[T * C], w[C], up[T * C], a[T * C], b[T * C];
    uint64_t rng = 5;
    for (int i = 0; i < T * C; i++) x[i] = (float)(4 * alab_rng_normal(&rng)), up[i] = (float)alab_rng_normal(&rng);
    for (int i = 0; i < C; i++) w[i] = (float)(1 + 0.1 * alab_rng_normal(&rng));
    rmsnorm_forward(a, x, w, T, C, 1e-6f);
    rmsnorm_forward_ref(b, x, w, T, C, 1e-6f);
    assert_true(max_abs_diff(a, b, T * C) <= 1e-5);
    gelu_exact_forward(a, x, T * C);
    gelu_exact_forward_ref(b, x, T * C);
    assert_true(max_abs_diff(a, b, T * C) <= 1e-5);
    assert_true(fabsf(a[0] - (float)(0.5 * x[0] * (1 + erf(x[0] / sqrt(2.0))))) <= 1e-5);
    swiglu_forward(a, x, up, T * C);
    swiglu_forward_ref(b, x, up, T * C);
    assert_true(max_abs_diff(a, b, T * C) <= 1e-5);
    memcpy(b, x, sizeof x); /* in place, as the block uses it */
    swiglu_forward(b, b, up, T * C);
    assert_memory_equal(a, b, sizeof a);
    /* GeGLU: gelu_new(gate) * up, against the double twin of gelu_new */
    geglu_forward(a, x, up, T * C);
    gelu_forward_ref(b, x, T * C);
    for (int i = 0; i < T * C; i++) b[i] *= up[i];
    assert_true(max_abs_diff(a, b, T * C) <= 1e-5);
    memcpy(b, x, sizeof x);
    geglu_forward(b, b, up, T * C);
    assert_memory_equal(a, b, sizeof a);
}

/* The llama folder has Llama 3's tokenizer.json (+ tokenizer_config.json) instead of vocab.json + merges.txt:
 * the model-level encode puts its BOS (<|begin_of_text|>, from the TemplateProcessing) first, then the same
 * ids as GPT-2's files of the same vocabulary give for a text both pre-tokenizers split alike. */
static void a_tokenizer_json_folder_encodes_with_its_bos(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/llama"), *g = load_model("tests/fixtures/families/qwen2");
    const char *text = "Hello there, the storm";
    int a[64], b[64], na = 0, nb = 0;
    assert_int_equal(alab_model_encode(a, 64, &na, m, text, strlen(text)), ALAB_OK);
    assert_int_equal(alab_model_encode(b, 64, &nb, g, text, strlen(text)), ALAB_OK);
    assert_int_equal(alab_bpe_bos_to_add(alab_model_bpe(m)), 276);
    assert_int_equal(alab_bpe_bos_to_add(alab_model_bpe(g)), -1);
    assert_int_equal(na, nb + 1);
    assert_int_equal(a[0], 276);
    assert_memory_equal(a + 1, b, (size_t)nb * sizeof(int));
    int small[2], n = 0; /* too little room: ELIMIT with the count needed */
    assert_int_equal(alab_model_encode(small, 2, &n, m, text, strlen(text)), ALAB_ELIMIT);
    assert_int_equal(n, na);
    assert_int_equal(alab_model_encode(a, 64, &n, m, "", 0), ALAB_OK); /* no text, no BOS */
    assert_int_equal(n, 0);
    /* ids 278, 279: embedding rows beyond the tokenizer's 278 ids (padding, as Pythia's and Qwen2.5's) */
    char buf[32];
    size_t len = 0;
    assert_int_equal(alab_model_token_display(buf, sizeof buf, &len, m, 279), ALAB_OK);
    assert_string_equal(buf, "<|id 279|>");
    assert_int_equal(alab_model_token_display(buf, sizeof buf, &len, m, 280), ALAB_ERANGE);
    int with_pad[3] = {39, 279, 68}, without[2] = {39, 68};
    char d1[32], d2[32];
    size_t l1 = 0, l2 = 0;
    assert_int_equal(alab_model_decode(d1, sizeof d1, &l1, m, with_pad, 3), ALAB_OK);
    assert_int_equal(alab_model_decode(d2, sizeof d2, &l2, m, without, 2), ALAB_OK);
    assert_string_equal(d1, d2);
    alab_model_free(m);
    alab_model_free(g);
}

/* Half storage (ALAB_WEIGHTS_HALF): the F16/BF16 folders keep their big matrices in 16 bits and give the
 * reference's numbers within the same tolerances, the F32 storage's within 1e-5, the same greedy generation;
 * an F32 folder stays F32. */
static void half_storage_matches_the_reference_and_f32_storage(void **state) {
    (void)state;
    int halves = 0;
    for (int f = 0; f < N_FAMILIES; f++) {
        if (!(FAMILIES[f].refs & REF_FAMILIES)) continue;
        const json_value *fam = golden_family(&FAMILIES[f]);
        alab_model *h = NULL, *m = load_model(FAMILIES[f].dir);
        assert_int_equal(alab_model_load_dir_ex(&h, repo_path(FAMILIES[f].dir), ALAB_WEIGHTS_HALF), ALAB_OK);
        assert_int_equal(alab_model_half(m), 0);
        const int is16 = strcmp(json_get(fam, "dtype")->u.str, "F32") != 0;
        assert_int_equal(alab_model_half(h), is16);
        assert_int_equal(is16, FAMILIES[f].half);
        halves += is16;
        const alab_config *c = alab_model_config(m);
        int ids[64], T;
        ids_of(fam, ids, &T);
        const json_value *cases = json_get(fam, "cases");
        const size_t NA = (size_t)c->n_layer * c->n_head * T * T, V = (size_t)c->vocab_size;
        for (uint32_t k = 0; k < cases->n; k++) {
            const json_value *cs = &cases->u.items[k];
            alab_intervention iv[16];
            int lm[8], lw[8];
            alab_run_opts o;
            opts_of(&o, json_get(cs, "opts"), iv, lm, lw);
            assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
            assert_int_equal(alab_forward(h, ids, T, &o), ALAB_OK);
            double da = max_abs_diff(alab_result_attention(h), golden(cs, "attentions", NA), NA);
            double dl = max_abs_diff(alab_result_logits(h), golden(cs, "logits", V), V);
            double sa = max_abs_diff(alab_result_attention(h), alab_result_attention(m), NA);
            double sl = max_abs_diff(alab_result_logits(h), alab_result_logits(m), V);
            if (!(da <= TOL_ATT && dl <= TOL_LOGITS && sa <= 1e-5 && sl <= 1e-5))
                fail_msg("%s/%s half: vs reference %.3g %.3g, vs f32 storage %.3g %.3g", FAMILIES[f].key,
                         json_get(cs, "name")->u.str, da, dl, sa, sl);
            double n1, n2;
            int c1, c2;
            assert_int_equal(alab_result_nll(&n1, &c1, m), ALAB_OK);
            assert_int_equal(alab_result_nll(&n2, &c2, h), ALAB_OK);
            assert_true(fabs(n1 - n2) <= 1e-4);
        }
        int a[12], b[12], na, nb;
        uint64_t r1 = 3, r2 = 3;
        assert_int_equal(alab_generate(a, &na, m, ids, 3, 12, 0.0f, 0, &r1), ALAB_OK);
        assert_int_equal(alab_generate(b, &nb, h, ids, 3, 12, 0.0f, 0, &r2), ALAB_OK);
        assert_memory_equal(a, b, sizeof a);
        alab_model_free(m);
        alab_model_free(h);
    }
    assert_true(halves > 0); /* each row's half flag is checked above */
    alab_model *t = load_model("tests/fixtures/tiny-bf16"), *th = NULL; /* GPT-2 too */
    assert_int_equal(alab_model_load_dir_ex(&th, repo_path("tests/fixtures/tiny-bf16"), ALAB_WEIGHTS_HALF), ALAB_OK);
    assert_int_equal(alab_model_half(th), 1);
    int ids[9] = {31, 7, 250, 1000, 12, 5, 88, 431, 9};
    assert_int_equal(alab_forward(t, ids, 9, NULL), ALAB_OK);
    assert_int_equal(alab_forward(th, ids, 9, NULL), ALAB_OK);
    assert_true(max_abs_diff(alab_result_logits(t), alab_result_logits(th), 1257) <= 1e-5);
    alab_model_free(t);
    alab_model_free(th);
}

/* The vectorised 16-bit conversions of half storage equal the scalar ones on every value of each (F16: every
 * finite one, the only ones a checked weight can hold). */
static void the_half_conversions_are_exact(void **state) {
    (void)state;
    static uint16_t h[65536];
    static float out[65536];
    for (int i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    for (int f16 = 0; f16 < 2; f16++) {
        alab_half_to_f32_n(out, h, 65536, f16);
        for (int i = 0; i < 65536; i++) {
            const float want = f16 ? alab_f16_to_f32(h[i]) : alab_bf16_to_f32(h[i]);
            if (f16 && !isfinite(want)) continue;
            if (isnan(want)) { assert_true(isnan(out[i])); continue; }
            if (memcmp(&want, &out[i], 4) != 0) fail_msg("%s 0x%04x: %a, expected %a", f16 ? "f16" : "bf16", i, out[i], want);
        }
    }
}

/* ---- bad folders ------------------------------------------------------------------------- */

static char g_tmp[256];

static void copy_file(const char *from, const char *to) {
    size_t len = 0;
    char *buf = slurp(from, &len);
    assert_non_null(buf);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A copy of a fixture folder in a fresh temporary directory. */
static const char *copy_dir(const char *rel, const char *const *files) {
    snprintf(g_tmp, sizeof g_tmp, "/tmp/attnlab-fam-XXXXXX");
    assert_non_null(mkdtemp(g_tmp));
    for (int i = 0; files[i]; i++) {
        char from[512], to[512];
        snprintf(from, sizeof from, "%s/%s", repo_path(rel), files[i]);
        snprintf(to, sizeof to, "%s/%s", g_tmp, files[i]);
        copy_file(from, to);
    }
    return g_tmp;
}

static void remove_dir(const char *dir, const char *const *files) {
    char p[512];
    for (int i = 0; files[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

static const char *const QWEN3_FILES[] = {"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                          "model.safetensors.index.json", "vocab.json", "merges.txt", NULL};
static const char *const LLAMA_FILES[] = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", NULL};

/* A copy of folder rel (its files) whose config.json is orig with its first `from` replaced by `to`. */
static const char *copy_with_edit(const char *rel, const char *const *files, const char *orig, const char *from, const char *to) {
    const char *d = copy_dir(rel, files), *at = strstr(orig, from);
    char p[512], text[4096];
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - orig), orig, to, at + strlen(from));
    snprintf(p, sizeof p, "%s/config.json", d);
    write_text(p, text);
    return d;
}

static int load_rc(const char *dir) {
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, dir);
    alab_model_free(m);
    return rc;
}

static void a_missing_shard_is_emissing(void **state) {
    (void)state;
    const char *d = copy_dir("tests/fixtures/families/qwen3", QWEN3_FILES);
    char p[512];
    snprintf(p, sizeof p, "%s/model-00002-of-00002.safetensors", d);
    unlink(p);
    assert_int_equal(load_rc(d), ALAB_EMISSING);
    assert_non_null(strstr(alab_last_error(), "model-00002-of-00002.safetensors"));
    remove_dir(d, QWEN3_FILES);
}

static void an_index_naming_a_tensor_twice_is_refused(void **state) {
    (void)state;
    const char *d = copy_dir("tests/fixtures/families/qwen3", QWEN3_FILES);
    char p[512];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d);
    write_text(p, "{\"metadata\": {}, \"weight_map\": {\"model.norm.weight\": \"model-00001-of-00002.safetensors\", "
                  "\"model.embed_tokens.weight\": \"model-00001-of-00002.safetensors\", "
                  "\"model.norm.weight\": \"model-00002-of-00002.safetensors\"}}");
    /* a tensor named twice in weight_map is a repeated JSON key: the strict reader refuses the file */
    assert_int_equal(load_rc(d), ALAB_EJSON);
    assert_non_null(strstr(alab_last_error(), "model.norm.weight"));
    /* an index that puts a tensor in the wrong shard */
    write_text(p, "{\"weight_map\": {\"model.norm.weight\": \"model-00001-of-00002.safetensors\", "
                  "\"model.embed_tokens.weight\": \"model-00002-of-00002.safetensors\"}}");
    int rc = load_rc(d);
    assert_int_equal(rc, ALAB_EMISSING);
    remove_dir(d, QWEN3_FILES);
}

/* Shard names are plain file names by a whitelist, checked before any file is opened (issue 36, item 1). */
static void shard_names_are_plain_file_names(void **state) {
    (void)state;
    static const char *const bad[] = {"https:127.0.0.1:9.safetensors", "file:etc.safetensors", "%2e%2e.safetensors",
                                      "..safetensors", ".hidden.safetensors", "a/b.safetensors", "a\\\\b.safetensors",
                                      "model-1.bin", "model\\u0000x.safetensors", "mod el.safetensors", "m\\u00e9.safetensors",
                                      "x\\u0001.safetensors", ".safetensors", ""};
    const char *d = copy_dir("tests/fixtures/families/qwen3", QWEN3_FILES);
    char p[512], text[1024];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "{\"weight_map\": {\"model.norm.weight\": \"model-00001-of-00002.safetensors\", "
                                    "\"model.embed_tokens.weight\": \"%s\"}}", bad[i]);
        write_text(p, text);
        assert_int_equal(load_rc(d), ALAB_EFORMAT);
        assert_non_null(strstr(alab_last_error(), "plain shard file name"));
    }
    /* the whitelist itself: what it keeps */
    assert_true(alab_shard_name_ok("model-00001-of-00002.safetensors", 32));
    assert_true(alab_shard_name_ok("pytorch_model+v2.safetensors", 28));
    assert_false(alab_shard_name_ok("a.safetensors\0", 14));
    assert_false(alab_shard_name_ok(NULL, 0));
    char longname[300];
    memset(longname, 'a', sizeof longname);
    memcpy(longname + 256 - 12, ".safetensors", 12);
    assert_false(alab_shard_name_ok(longname, 256));
    assert_true(alab_shard_name_ok(longname + 1, 255));
    remove_dir(d, QWEN3_FILES);
}

/* More distinct shards than ALAB_MAX_SHARDS: refused from the index alone, before any shard is opened, and in
 * time linear in the entries (80 000 entries over 80 000 names used to take seconds to de-duplicate). */
static void an_index_of_too_many_shards_is_refused_quickly(void **state) {
    (void)state;
    const char *d = copy_dir("tests/fixtures/families/qwen3", QWEN3_FILES);
    char p[512];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d);
    const int n = 80000;
    char *text = malloc((size_t)n * 64 + 64);
    size_t o = (size_t)sprintf(text, "{\"weight_map\": {");
    for (int i = 0; i < n; i++) o += (size_t)sprintf(text + o, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, i);
    sprintf(text + o, "}}");
    write_text(p, text);
    assert_int_equal(load_rc(d), ALAB_ELIMIT);
    assert_non_null(strstr(alab_last_error(), "ALAB_MAX_SHARDS"));
    /* the same entries over 4 names: de-duplicated, then the first missing shard is named */
    o = (size_t)sprintf(text, "{\"weight_map\": {");
    for (int i = 0; i < n; i++) o += (size_t)sprintf(text + o, "%s\"t%d\": \"s%d.safetensors\"", i ? ", " : "", i, i % 4);
    sprintf(text + o, "}}");
    write_text(p, text);
    assert_int_equal(load_rc(d), ALAB_EMISSING);
    free(text);
    remove_dir(d, QWEN3_FILES);
}

/* config.json edited: each bad value gets its code, naming the field */
static void bad_configs_get_clear_codes(void **state) {
    (void)state;
    static const struct { const char *from, *to, *field; int rc; } edits[] = {
        {"\"intermediate_size\": 40", "\"intermediate_size\": 48", "mlp.", ALAB_ESHAPE},      /* sizes vs tensors */
        {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 4", "k_proj", ALAB_ESHAPE},
        {"\"head_dim\": 8", "\"head_dim\": 16", "proj", ALAB_ESHAPE},
        {"\"rope_type\": \"llama3\"", "\"rope_type\": \"yarn\"", "rope_type", ALAB_ECONFIG},
        {"\"rope_type\": \"llama3\"", "\"rope_type\": \"dynamic\"", "rope_type", ALAB_ECONFIG},
        {"\"model_type\": \"llama\"", "\"model_type\": \"mixtral\"", "model_type", ALAB_ECONFIG},
        {"\"rope_theta\": 10000.0", "\"rope_parameters\": {\"rope_theta\": 10000.0}", "rope_parameters", ALAB_ECONFIG},
        {"\"hidden_act\": \"silu\"", "\"hidden_act\": \"gelu\"", "hidden_act", ALAB_ECONFIG},
        {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3", "num_key_value_heads", ALAB_ECONFIG},
        {"\"tie_word_embeddings\": true", "\"tie_word_embeddings\": false", "lm_head.weight", ALAB_EMISSING},
        {"\"use_cache\": true", "\"use_sliding_window\": true", "use_sliding_window", ALAB_ECONFIG},
    };
    size_t len = 0;
    char *orig = slurp(repo_path("tests/fixtures/families/llama/config.json"), &len);
    assert_non_null(orig);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *d = copy_with_edit("tests/fixtures/families/llama", LLAMA_FILES, orig, edits[i].from, edits[i].to);
        int rc = load_rc(d);
        if (rc != edits[i].rc || !strstr(alab_last_error(), edits[i].field))
            fail_msg("edit %zu (%s): rc %d (%s), expected %d naming %s", i, edits[i].to, rc, alab_last_error(), edits[i].rc,
                     edits[i].field);
        remove_dir(d, LLAMA_FILES);
    }
    free(orig);
}

/* ---- sliding windows ------------------------------------------------------------------------------------ */

/* Each layer's own mask comes from config.json: Mistral's sliding_window on every layer, Gemma 3's on its
 * "sliding_attention" layers (layer_types wins over the _sliding_window_pattern 6 the real configs carry). */
static void the_layer_windows_come_from_the_config(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/mistral"), *g = load_model("tests/fixtures/families/gemma3");
    assert_int_equal(alab_model_layer_window(m, 0), 4);
    assert_int_equal(alab_model_layer_window(m, 1), 4);
    assert_int_equal(alab_model_layer_window(g, 0), 4);
    assert_int_equal(alab_model_layer_window(g, 1), 0);
    assert_int_equal(alab_model_layer_window(g, 2), ALAB_ERANGE);
    assert_int_equal(alab_model_layer_window(g, -1), ALAB_ERANGE);
    assert_int_equal(alab_model_layer_window(NULL, 0), ALAB_EINVAL);
    alab_model *q = load_model("tests/fixtures/families/qwen2"); /* sliding_window 64 with use_sliding_window false */
    assert_int_equal(alab_model_layer_window(q, 0), 0);
    alab_model_free(q);
    /* the plain run: row i of a sliding layer sees keys i-3..i only, exactly 0 elsewhere */
    int ids[10] = {40, 81, 33, 200, 17, 81, 5, 250, 99, 12};
    const int T = 10, NH = alab_model_config(g)->n_head;
    assert_int_equal(alab_forward(g, ids, T, NULL), ALAB_OK);
    const float *A = alab_result_attention(g);
    for (int h = 0; h < NH; h++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                const float a0 = A[((size_t)h * T + i) * T + j], a1 = A[(((size_t)NH + h) * T + i) * T + j];
                if ((j > i || i - j >= 4) != (a0 == 0.0f)) fail_msg("layer 0 head %d (%d, %d): %g", h, i, j, a0);
                if ((j > i) != (a1 == 0.0f)) fail_msg("layer 1 head %d (%d, %d): %g", h, i, j, a1);
            }
    alab_model_free(m);
    alab_model_free(g);
}

/* A do onto a key the window hides: a soft do is refused (EMASKED, adding to a masked score changes nothing),
 * a hard do is taken as onto a causally masked key (the row becomes one-hot there; the golden "hard_outside"
 * checks its numbers). Removing the window (window:T) makes the soft do legal. */
static void a_do_outside_the_window(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/mistral");
    int ids[10] = {40, 81, 33, 200, 17, 81, 5, 250, 99, 12};
    const int T = 10, NH = alab_model_config(m)->n_head;
    alab_intervention iv = {ALAB_DO_SOFT, 1, 0, 9, 5, 2.0f, 0.0f}; /* row 9 sees 6..9 */
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.interventions = &iv;
    o.n_interventions = 1;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_EMASKED);
    assert_non_null(strstr(alab_last_error(), "columns 6..9"));
    iv.col = 6;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    iv.col = 5;
    o.mask = ALAB_MASK_WINDOW;
    o.window = T;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    alab_run_opts_init(&o);
    o.interventions = &iv;
    o.n_interventions = 1;
    iv.kind = ALAB_DO_HARD;
    iv.col = 2;
    assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
    const float *row = alab_result_attention(m) + (((size_t)1 * NH + 0) * T + 9) * T;
    for (int j = 0; j < T; j++) assert_true(row[j] == (j == 2 ? 1.0f : 0.0f));
    alab_model_free(m);
}

/* Direct attribution and composition scores need a head's output to be a linear term of the residual stream;
 * Gemma 3's norms of each sublayer's output break that, so both are refused (path patching is not). */
static void gemma_refuses_the_linear_readings(void **state) {
    (void)state;
    alab_model *g = load_model("tests/fixtures/families/gemma3");
    int ids[6] = {40, 81, 33, 200, 17, 81};
    const alab_config *c = alab_model_config(g);
    float heads[64], scores[3 * 64];
    double terms[16], ld, null[3];
    assert_int_equal(alab_direct_logit_attribution(heads, NULL, terms, &ld, g, ids, 6, 5, 7), ALAB_EINVAL);
    assert_non_null(strstr(alab_last_error(), "gemma3_text"));
    assert_int_equal(alab_composition_scores(scores, null, g, 0, 1), ALAB_EINVAL);
    assert_true(c->n_layer * c->n_head <= 64);
    alab_model_free(g);
}

/* Gemma 3 and Mistral config values the engine cannot run exactly: ECONFIG naming the field. */
static const char *const GEMMA_FILES[] = {"config.json", "model.safetensors", "vocab.json", "merges.txt", NULL};

static void bad_sliding_configs_get_clear_codes(void **state) {
    (void)state;
    static const struct { const char *from, *to, *field; } edits[] = {
        {"\"attn_logit_softcapping\": null", "\"attn_logit_softcapping\": 50.0", "attn_logit_softcapping"},
        {"\"final_logit_softcapping\": null", "\"final_logit_softcapping\": 30.0", "final_logit_softcapping"},
        {"\"use_bidirectional_attention\": false", "\"use_bidirectional_attention\": true", "use_bidirectional_attention"},
        {"\"hidden_activation\": \"gelu_pytorch_tanh\"", "\"hidden_activation\": \"gelu\"", "hidden_activation"},
        {"\"sliding_attention\",", "\"chunked_attention\",", "layer_types[0]"},
        {"\"sliding_attention\",", "", "layer_types"},
        {"\"sliding_window\": 4", "\"sliding_window\": null", "sliding_window"},
        {"\"sliding_window\": 4", "\"sliding_window\": 0", "sliding_window"},
        {"\"rope_type\": \"linear\"", "\"rope_type\": \"yarn\"", "rope_type"},
        {"\"factor\": 8.0,", "", "factor"},
        {"\"query_pre_attn_scalar\": 24", "\"query_pre_attn_scalar\": -1", "query_pre_attn_scalar"},
        {"\"rope_theta\": 1000000.0", "\"rope_parameters\": {}", "rope_parameters"},
    };
    size_t len = 0;
    char *orig = slurp(repo_path("tests/fixtures/families/gemma3/config.json"), &len);
    assert_non_null(orig);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *d = copy_with_edit("tests/fixtures/families/gemma3", GEMMA_FILES, orig, edits[i].from, edits[i].to);
        int rc = load_rc(d);
        if (rc != ALAB_ECONFIG || !strstr(alab_last_error(), edits[i].field))
            fail_msg("gemma3 edit %zu (%s): rc %d (%s), expected ECONFIG naming %s", i, edits[i].to, rc, alab_last_error(),
                     edits[i].field);
        remove_dir(d, GEMMA_FILES);
    }
    free(orig);
    /* Mistral: sliding_window null is no window (a plain causal model), absent MistralConfig's 4096 */
    orig = slurp(repo_path("tests/fixtures/families/mistral/config.json"), &len);
    static const char *const to[] = {"\"sliding_window\": null", "\"sliding_window_absent\": 4"};
    static const int want[] = {0, 4096};
    for (int i = 0; i < 2; i++) {
        const char *d = copy_with_edit("tests/fixtures/families/mistral", GEMMA_FILES, orig, "\"sliding_window\": 4", to[i]);
        alab_model *m = NULL;
        assert_int_equal(alab_model_load_dir(&m, d), ALAB_OK);
        assert_int_equal(alab_model_layer_window(m, 1), want[i]);
        alab_model_free(m);
        remove_dir(d, GEMMA_FILES);
    }
    free(orig);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_family_matches_the_reference),
        cmocka_unit_test(every_case_moves_the_goldens),
        cmocka_unit_test(cached_generation_equals_full_forwards),
        cmocka_unit_test(threads_are_bit_for_bit),
        cmocka_unit_test(the_config_names_the_family),
        cmocka_unit_test(a_k_edit_of_a_grouped_head_acts_on_its_key_value_head),
        cmocka_unit_test(a_tokenizer_json_folder_encodes_with_its_bos),
        cmocka_unit_test(half_storage_matches_the_reference_and_f32_storage),
        cmocka_unit_test(the_half_conversions_are_exact),
        cmocka_unit_test(rmsnorm_gelu_exact_and_swiglu_match_their_twins),
        cmocka_unit_test(a_missing_shard_is_emissing),
        cmocka_unit_test(an_index_naming_a_tensor_twice_is_refused),
        cmocka_unit_test(shard_names_are_plain_file_names),
        cmocka_unit_test(an_index_of_too_many_shards_is_refused_quickly),
        cmocka_unit_test(bad_configs_get_clear_codes),
        cmocka_unit_test(the_layer_windows_come_from_the_config),
        cmocka_unit_test(a_do_outside_the_window),
        cmocka_unit_test(gemma_refuses_the_linear_readings),
        cmocka_unit_test(bad_sliding_configs_get_clear_codes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
