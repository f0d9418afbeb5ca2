/* test_head_edits.c — weight edits (interventions, rung 2) of one head (ALAB_SCALE_Q,
 * ALAB_SCALE_K, ALAB_SWAP_QK) against an independent route: the same edit made
 * to the weights in the safetensors bytes, loaded as a second model and run
 * without edits. Also: identities (alpha = 1, swap twice), composition order,
 * the capture of edited q/k, and the error codes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"
#include "safetensors.h"

typedef struct {
    char *config, *vocab, *merges;
    size_t config_len, vocab_len, merges_len;
    uint8_t *st;
    size_t st_len;
} files;

static void read_tiny(files *f) {
    f->config = slurp(repo_path("tests/fixtures/tiny/config.json"), &f->config_len);
    f->vocab = slurp(repo_path("tests/fixtures/tiny/vocab.json"), &f->vocab_len);
    f->merges = slurp(repo_path("tests/fixtures/tiny/merges.txt"), &f->merges_len);
    f->st = (uint8_t *)slurp(repo_path("tests/fixtures/tiny/model.safetensors"), &f->st_len);
    assert_non_null(f->config);
    assert_non_null(f->vocab);
    assert_non_null(f->merges);
    assert_non_null(f->st);
}

static void free_files(files *f) {
    free(f->config);
    free(f->vocab);
    free(f->merges);
    free(f->st); /* NULL once a model owns it */
}

/* Load a model from f; the safetensors buffer passes to the model. */
static alab_model *load(files *f) {
    alab_model *m = NULL;
    assert_int_equal(alab_model_load_buffers(&m, f->config, f->config_len, f->st, f->st_len, f->vocab,
                                             f->vocab_len, f->merges, f->merges_len), ALAB_OK);
    f->st = NULL;
    return m;
}

/* The edit, made on the weights: W = h.{layer}.attn.c_attn.weight (C, 3C), in
 * the Conv1D layout W[in][out]; the head's q columns are [h*HS, (h+1)*HS), its
 * k columns C + the same. */
static void edit_weights(uint8_t *buf, size_t len, int layer, int head, int kind, float alpha) {
    st_file sf;
    assert_int_equal(st_parse(&sf, buf, len), ALAB_OK);
    char name[64];
    snprintf(name, sizeof name, "h.%d.attn.c_attn.weight", layer);
    const st_tensor *t = st_find(&sf, name);
    assert_non_null(t);
    assert_int_equal(t->dtype, ST_F32);
    const int C = (int)t->shape[0], C3 = (int)t->shape[1], HS = C / 4;
    assert_int_equal(C3, 3 * C);
    float *W = (float *)(buf + sf.data_offset + t->begin);
    for (int in = 0; in < C; in++)
        for (int d = 0; d < HS; d++) {
            float *wq = &W[(size_t)in * C3 + head * HS + d], *wk = &W[(size_t)in * C3 + C + head * HS + d];
            if (kind == ALAB_SCALE_Q) *wq *= alpha;
            else if (kind == ALAB_SCALE_K) *wk *= alpha;
            else { float x = *wq; *wq = *wk; *wk = x; }
        }
    st_free(&sf);
}

static const int IDS[] = {31, 7, 250, 1000, 12, 5, 88, 431, 9};
enum { T = sizeof IDS / sizeof IDS[0] };

/* Attention and logits of m on IDS with opts; copies into att/logits. */
static void run(alab_model *m, const alab_run_opts *o, float *att, float *logits) {
    const alab_config *c = alab_model_config(m);
    assert_int_equal(alab_forward(m, IDS, T, o), ALAB_OK);
    memcpy(att, alab_result_attention(m), sizeof(float) * (size_t)c->n_layer * c->n_head * T * T);
    memcpy(logits, alab_result_logits(m), sizeof(float) * (size_t)c->vocab_size);
}

static void check_edit_against_edited_weights(int kind, int layer, int head, float alpha) {
    files f, g;
    read_tiny(&f);
    read_tiny(&g);
    edit_weights(g.st, g.st_len, layer, head, kind, alpha);
    alab_model *m = load(&f), *edited = load(&g);
    const alab_config *c = alab_model_config(m);
    const size_t NA = (size_t)c->n_layer * c->n_head * T * T;
    float *a0 = malloc(NA * sizeof(float)), *a1 = malloc(NA * sizeof(float)), *a2 = malloc(NA * sizeof(float));
    float *l0 = malloc((size_t)c->vocab_size * sizeof(float)), *l1 = malloc((size_t)c->vocab_size * sizeof(float)),
          *l2 = malloc((size_t)c->vocab_size * sizeof(float));
    alab_run_opts o;
    alab_run_opts_init(&o);
    run(m, &o, a0, l0);
    run(edited, &o, a2, l2); /* the edit in the weights, no run-time edit */
    alab_intervention iv = {kind, layer, head, 0, 0, 0.0f, alpha};
    o.interventions = &iv;
    o.n_interventions = 1;
    run(m, &o, a1, l1); /* the run-time edit on the original weights */
    assert_true(max_abs_diff(a1, a2, NA) <= 2e-6);
    assert_true(max_abs_diff(l1, l2, (size_t)c->vocab_size) <= 2e-5);
    /* and the edit did something: the edited head's attention moved */
    const size_t off = ((size_t)layer * c->n_head + head) * T * T;
    assert_true(max_abs_diff(a0 + off, a1 + off, (size_t)T * T) > 1e-3);
    /* layers before the edit are untouched, bit for bit */
    const size_t before = (size_t)layer * c->n_head * T * T;
    assert_true(before == 0 || memcmp(a0, a1, before * sizeof(float)) == 0);
    free(a0); free(a1); free(a2); free(l0); free(l1); free(l2);
    alab_model_free(m);
    alab_model_free(edited);
    free_files(&f);
    free_files(&g);
}

static void scale_q_equals_scaled_weights(void **state) {
    (void)state;
    check_edit_against_edited_weights(ALAB_SCALE_Q, 1, 2, 3.0f);
    check_edit_against_edited_weights(ALAB_SCALE_Q, 0, 0, -0.5f);
}

static void scale_k_equals_scaled_weights(void **state) {
    (void)state;
    check_edit_against_edited_weights(ALAB_SCALE_K, 2, 3, 2.5f);
    check_edit_against_edited_weights(ALAB_SCALE_K, 0, 1, 0.0f); /* W_K = 0: keys are the bias alone */
}

static void swap_equals_swapped_weights(void **state) {
    (void)state;
    check_edit_against_edited_weights(ALAB_SWAP_QK, 0, 1, 0.0f);
    check_edit_against_edited_weights(ALAB_SWAP_QK, 2, 0, 0.0f);
}

/* alpha = 1 is the identity exactly, swap-swap up to the rounding of q - b + b;
 * scale-then-swap differs from swap-then-scale (the order given is kept). */
static void identities_and_order(void **state) {
    (void)state;
    files f;
    read_tiny(&f);
    alab_model *m = load(&f);
    const alab_config *c = alab_model_config(m);
    const size_t NA = (size_t)c->n_layer * c->n_head * T * T;
    float *a0 = malloc(NA * sizeof(float)), *a1 = malloc(NA * sizeof(float)), *a2 = malloc(NA * sizeof(float));
    float *l0 = malloc((size_t)c->vocab_size * sizeof(float)), *l1 = malloc((size_t)c->vocab_size * sizeof(float));
    alab_run_opts o;
    alab_run_opts_init(&o);
    run(m, &o, a0, l0);

    alab_intervention one = {ALAB_SCALE_Q, 1, ALAB_ALL_HEADS, 0, 0, 0.0f, 1.0f};
    o.interventions = &one;
    o.n_interventions = 1;
    run(m, &o, a1, l1);
    assert_true(max_abs_diff(a0, a1, NA) == 0.0); /* alpha = 1 is skipped: bit for bit */
    assert_true(max_abs_diff(l0, l1, (size_t)c->vocab_size) == 0.0);

    alab_intervention twice[2] = {{ALAB_SWAP_QK, 2, 1, 0, 0, 0.0f}, {ALAB_SWAP_QK, 2, 1, 0, 0, 0.0f}};
    o.interventions = twice;
    o.n_interventions = 2;
    run(m, &o, a1, l1);
    assert_true(max_abs_diff(a0, a1, NA) <= 1e-6);

    alab_intervention ab[2] = {{ALAB_SCALE_Q, 2, 1, 0, 0, 0.0f, 4.0f}, {ALAB_SWAP_QK, 2, 1, 0, 0, 0.0f}};
    alab_intervention ba[2] = {{ALAB_SWAP_QK, 2, 1, 0, 0, 0.0f}, {ALAB_SCALE_Q, 2, 1, 0, 0, 0.0f, 4.0f}};
    o.interventions = ab;
    run(m, &o, a1, l1);
    o.interventions = ba;
    run(m, &o, a2, l1);
    assert_true(max_abs_diff(a1, a2, NA) > 1e-3);
    free(a0); free(a1); free(a2); free(l0); free(l1);
    alab_model_free(m);
    free_files(&f);
}

/* Captured q/k are the edited ones: scale K by 2 doubles k - b_k. */
static void capture_sees_the_edit(void **state) {
    (void)state;
    files f;
    read_tiny(&f);
    alab_model *m = load(&f);
    const int HS = alab_model_config(m)->n_embd / alab_model_config(m)->n_head;
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_layer = 1;
    o.capture_head = 3;
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_OK);
    float *k0 = malloc(sizeof(float) * (size_t)T * HS), *q0 = malloc(sizeof(float) * (size_t)T * HS);
    memcpy(k0, alab_result_k(m), sizeof(float) * (size_t)T * HS);
    memcpy(q0, alab_result_q(m), sizeof(float) * (size_t)T * HS);
    alab_intervention iv[2] = {{ALAB_SCALE_K, 1, 3, 0, 0, 0.0f, 2.0f}, {ALAB_SCALE_K, 1, 3, 0, 0, 0.0f, 0.0f}};
    o.interventions = iv;
    o.n_interventions = 1;
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_OK);
    const float *k1 = alab_result_k(m);
    /* k1 - k0 = (2 - 1)(k0 - b) = k0 - b, for every entry: so k1 - 2 k0 = -b,
     * the same for every position */
    for (int t = 1; t < T; t++)
        for (int d = 0; d < HS; d++)
            assert_float_equal(k1[t * HS + d] - 2 * k0[t * HS + d], k1[d] - 2 * k0[d], 1e-5);
    assert_true(max_abs_diff(q0, alab_result_q(m), (size_t)T * HS) == 0.0); /* q untouched */
    /* W_K = 0: every position's key is the bias, so the head's attention is uniform */
    o.interventions = iv + 1;
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_OK);
    const float *att = alab_result_attention(m) + ((size_t)1 * 4 + 3) * T * T;
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++) assert_float_equal(att[i * T + j], 1.0f / (i + 1), 1e-6);
    free(k0); free(q0);
    alab_model_free(m);
    free_files(&f);
}

static void bad_edits_have_codes(void **state) {
    (void)state;
    files f;
    read_tiny(&f);
    alab_model *m = load(&f);
    alab_run_opts o;
    alab_run_opts_init(&o);
    alab_intervention iv = {ALAB_SCALE_Q, 0, 0, 0, 0, 0.0f, NAN};
    o.interventions = &iv;
    o.n_interventions = 1;
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_ENAN);
    iv.alpha = INFINITY;
    iv.kind = ALAB_SCALE_K;
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_ENAN);
    iv = (alab_intervention){ALAB_SWAP_QK, 3, 0, 0, 0, 0.0f};
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_ERANGE); /* layer */
    iv = (alab_intervention){ALAB_SWAP_QK, 0, 4, 0, 0, 0.0f};
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_ERANGE); /* head */
    iv = (alab_intervention){6, 0, 0, 0, 0, 0.0f};
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_EINVAL); /* kind */
    /* row/col are not used by an edit: any value is accepted, as for ablate */
    iv = (alab_intervention){ALAB_SWAP_QK, 0, 0, 999, -5, NAN};
    assert_int_equal(alab_forward(m, IDS, T, &o), ALAB_OK);
    alab_model_free(m);
    free_files(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scale_q_equals_scaled_weights),
        cmocka_unit_test(scale_k_equals_scaled_weights),
        cmocka_unit_test(swap_equals_swapped_weights),
        cmocka_unit_test(identities_and_order),
        cmocka_unit_test(capture_sees_the_edit),
        cmocka_unit_test(bad_edits_have_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
