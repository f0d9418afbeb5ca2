/* test_circuits.c — where a head looks versus what it moves (c/src/circuits.c): pattern/value patching, path
 * patching, direct logit attribution, value norms, causal tracing by component and composition scores, against
 * the float64 reference (tests/fixtures/circuits_golden.json from tests/ref/circuits_ref.py) on the REF_CIRCUITS
 * rows of tests/c/families.h (GPT-2, Llama (grouped-query), GPT-NeoX (parallel residual, partial rotary), Qwen3,
 * Mistral, Gemma 3); on every row, the identities that hold exactly (a head patched whole is today's head
 * patching, the attribution sums to the logit difference, a last-layer change at a position other than the last
 * cannot move it); and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"
#include "families.h"
#include "model.h"
#include "ops.h"
#include "safetensors.h"
#include "json.h"

/* A copy of an F32 tensor of a checkpoint file. */
static float *st_tensor_f32(const st_file *f, const char *name) {
    const st_tensor *t = st_find(f, name);
    assert_non_null(t);
    assert_int_equal(t->dtype, ST_F32);
    float *out = malloc(t->nbytes);
    memcpy(out, t->data, t->nbytes);
    return out;
}

/* A pair the model can normalise: the corrupted input differs from the clean one in its middle token, the
 * answers are the clean run's two most likely next tokens. */
typedef struct {
    int clean[16], corrupt[16], T, a, b;
} test_pair;

static test_pair pair_for(alab_model *m) {
    const alab_config *c = alab_model_config(m);
    test_pair p = {{0}, {0}, 7, 0, 0};
    for (int t = 0; t < p.T; t++) p.clean[t] = p.corrupt[t] = (t * 37 + 11) % c->vocab_size;
    p.corrupt[3] = (p.clean[3] + 101) % c->vocab_size;
    p.corrupt[1] = (p.clean[1] + 7) % c->vocab_size;
    assert_int_equal(alab_forward(m, p.clean, p.T, NULL), ALAB_OK);
    int ids[2];
    float pr[2];
    assert_int_equal(alab_result_topk(ids, pr, 2, m), ALAB_OK);
    p.a = ids[0];
    p.b = ids[1];
    return p;
}

static void unpack_inverts_pack(void **state) {
    (void)state;
    const int shapes[][2] = {{1, 1}, {3, 5}, {17, 33}, {300, 70}, {64, 128}, {129, 257}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int C = shapes[s][0], OC = shapes[s][1];
        float *w = malloc((size_t)C * OC * sizeof *w), *p = malloc((size_t)C * OC * sizeof *p),
              *back = malloc((size_t)C * OC * sizeof *back);
        for (int i = 0; i < C * OC; i++) w[i] = (float)i * 0.5f - 3.0f;
        matmul_pack_weights(p, w, C, OC);
        matmul_unpack_weights(back, p, C, OC);
        assert_memory_equal(back, w, (size_t)C * OC * sizeof *w);
        free(w);
        free(p);
        free(back);
    }
}

/* The BOTH kind in the denoising direction is alab_activation_patching's head grid. */
static void patching_a_whole_head_is_head_patching(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        const int L = c->n_layer, NH = c->n_head;
        test_pair p = pair_for(m);
        float *grid = malloc((size_t)6 * L * NH * sizeof *grid), *heads = malloc((size_t)L * NH * sizeof *heads);
        double lc, ld, lc2, ld2;
        assert_int_equal(alab_pattern_value_patching(grid, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        assert_int_equal(alab_activation_patching(NULL, heads, &lc2, &ld2, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        assert_true(lc == lc2 && ld == ld2);
        for (int i = 0; i < L * NH; i++) assert_true(fabs(grid[2 * L * NH + i] - heads[i]) <= 1e-6);
        /* noising with everything patched back is the clean run: the last layer's BOTH cells are the clean score
           only when the head alone carries it, but every cell is finite */
        for (int i = 0; i < 6 * L * NH; i++) assert_true(isfinite(grid[i]));
        free(grid);
        free(heads);
        alab_model_free(m);
    }
}

/* The terms of the attribution add up to the logit difference, each head's sources to its term. */
static void attribution_sums_to_the_logit_difference(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        const int L = c->n_layer, NH = c->n_head;
        test_pair p = pair_for(m);
        float *heads = malloc((size_t)L * NH * sizeof *heads), *src = malloc((size_t)L * NH * p.T * sizeof *src);
        double *terms = malloc((size_t)(3 + 2 * L) * sizeof *terms), ld;
        for (int other = 0; other < 2; other++) {
            if (FAMILIES[f].post_norm) { /* no linear head terms: refused, for either kind of answer
                                            (refusals_on_post_normed_sublayers) */
                assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &ld, m, p.clean, p.T, p.a, other ? -1 : p.b),
                                 ALAB_EINVAL);
                continue;
            }
            const int b = other ? -1 : p.b;
            assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &ld, m, p.clean, p.T, p.a, b), ALAB_OK);
            double sum = 0.0;
            for (int i = 0; i < 3 + 2 * L; i++) sum += terms[i];
            for (int i = 0; i < L * NH; i++) {
                sum += heads[i];
                double s = 0.0;
                for (int j = 0; j < p.T; j++) s += src[(size_t)i * p.T + j];
                assert_true(fabs(s - heads[i]) <= 1e-4 * (1 + fabs(heads[i])));
            }
            assert_true(fabs(sum - ld) <= 1e-4 * (1 + fabs(ld)));
            /* and ld is the run's logit difference */
            assert_int_equal(alab_forward(m, p.clean, p.T, NULL), ALAB_OK);
            const float *z = alab_result_logits(m);
            const double want = b < 0 ? z[p.a] : (double)z[p.a] - z[p.b];
            assert_true(fabs(ld - want) <= 1e-4 * (1 + fabs(want)));
        }
        free(heads);
        free(src);
        free(terms);
        alab_model_free(m);
    }
}

/* Path patching into the logits with the MLPs recomputed is, for a sender in the last layer, the head's own
 * patching (every other head of that layer is frozen at what it computes anyway). */
static void last_layer_senders_into_the_logits_are_head_patching(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const alab_config *c = alab_model_config(m);
        const int L = c->n_layer, NH = c->n_head;
        test_pair p = pair_for(m);
        alab_path_receiver r[2] = {{0, 0, ALAB_PATH_LOGITS}, {L - 1, NH - 1, ALAB_PATH_K}};
        float *out = malloc((size_t)2 * L * NH * sizeof *out), *heads = malloc((size_t)L * NH * sizeof *heads);
        double lc, ld;
        assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, r, 2, ALAB_DENOISE, 0), ALAB_OK);
        assert_int_equal(alab_activation_patching(NULL, heads, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        for (int h = 0; h < NH; h++) assert_true(fabs(out[(L - 1) * NH + h] - heads[(L - 1) * NH + h]) <= 1e-5);
        /* a receiver in the last layer has no sender at or above it */
        for (int h = 0; h < NH; h++) assert_true(isnan(out[(size_t)L * NH + (L - 1) * NH + h]));
        for (int i = 0; i < (L - 1) * NH; i++) assert_true(isfinite(out[(size_t)L * NH + i]));
        free(out);
        free(heads);
        alab_model_free(m);
    }
}

/* The last layer's blocks at a position before the last cannot reach the last position's logits. */
static void last_layer_components_elsewhere_change_nothing(void **state) {
    (void)state;
    for (int f = 0; f < N_FAMILIES; f++) {
        alab_model *m = load_model(FAMILIES[f].dir);
        const int L = alab_model_config(m)->n_layer;
        test_pair p = pair_for(m);
        float *attn = malloc((size_t)L * p.T * sizeof *attn), *mlp = malloc((size_t)L * p.T * sizeof *mlp);
        double lc, ld;
        assert_int_equal(alab_component_tracing(attn, mlp, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        for (int t = 0; t < p.T - 1; t++) {
            assert_true(mlp[(size_t)(L - 1) * p.T + t] == 0.0f);
            assert_true(attn[(size_t)(L - 1) * p.T + t] == 0.0f);
        }
        for (int i = 0; i < L * p.T; i++) assert_true(isfinite(attn[i]) && isfinite(mlp[i]));
        free(attn);
        free(mlp);
        alab_model_free(m);
    }
}

/* Composition scores against the plain product of the C x C matrices (double), and the null in (0, 1]. */
static double frob(const double *x, int n) {
    double s = 0.0;
    for (int i = 0; i < n * n; i++) s += x[i] * x[i];
    return sqrt(s);
}

static void mm(double *out, const double *a, const double *b, int n, int ta, int tb) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += (ta ? a[k * n + i] : a[i * n + k]) * (tb ? b[j * n + k] : b[k * n + j]);
            out[i * n + j] = s;
        }
}

static void composition_matches_the_plain_products(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny"); /* GPT-2: fused [q | k | v] columns, f32 tensors */
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, C = c->n_embd, HS = C / NH;
    const int P = L * (L - 1) / 2; /* every pair of layers l1 < l2 */
    assert_true(L >= 3 && L <= 4 && NH <= 8);
    float *scores = malloc((size_t)3 * P * NH * NH * sizeof *scores);
    double null[9];
    assert_int_equal(alab_composition_scores(scores, null, m, 200, 3), ALAB_OK);
    for (int k = 0; k < 3; k++) assert_true(null[k * 3 + 1] > 0 && null[k * 3 + 1] <= null[k * 3] && null[k * 3] <= null[k * 3 + 2] && null[k * 3 + 2] <= 1);
    /* the plain twin from the checkpoint's own tensors */
    size_t flen = 0;
    uint8_t *fbuf = (uint8_t *)slurp(repo_path("tests/fixtures/tiny/model.safetensors"), &flen);
    st_file sf;
    assert_int_equal(st_parse(&sf, fbuf, flen), ALAB_OK);
    float *qkv_w = NULL, *o_w = NULL, *ln = NULL;
    double *OV[4][8], *QK[4][8];
    double *A = malloc((size_t)C * C * sizeof *A), *B = malloc((size_t)C * C * sizeof *B);
    for (int l = 0; l < L; l++) {
        char name[64];
        snprintf(name, sizeof name, "h.%d.attn.c_attn.weight", l);
        qkv_w = st_tensor_f32(&sf, name);
        snprintf(name, sizeof name, "h.%d.attn.c_proj.weight", l);
        o_w = st_tensor_f32(&sf, name);
        snprintf(name, sizeof name, "h.%d.ln_1.weight", l);
        ln = st_tensor_f32(&sf, name);
        for (int h = 0; h < NH; h++) {
            OV[l][h] = calloc((size_t)C * C, sizeof(double));
            QK[l][h] = calloc((size_t)C * C, sizeof(double));
            for (int i = 0; i < C; i++)
                for (int j = 0; j < C; j++) {
                    double ov = 0.0, qk = 0.0;
                    for (int e = 0; e < HS; e++) {
                        ov += ln[i] * (double)qkv_w[i * 3 * C + 2 * C + h * HS + e] * o_w[(h * HS + e) * C + j];
                        qk += ln[i] * (double)qkv_w[i * 3 * C + h * HS + e] * qkv_w[j * 3 * C + C + h * HS + e] * ln[j];
                    }
                    OV[l][h][i * C + j] = ov;
                    QK[l][h][i * C + j] = qk;
                }
        }
        free(qkv_w);
        free(o_w);
        free(ln);
    }
    /* every pair l1 < l2 (not only adjacent layers), at p = l1 (2L - l1 - 1) / 2 + l2 - l1 - 1 */
    for (int l1 = 0, p = 0; l1 < L - 1; l1++)
    for (int l2 = l1 + 1; l2 < L; l2++, p++)
    for (int h1 = 0; h1 < NH; h1++)
        for (int h2 = 0; h2 < NH; h2++) {
            assert_int_equal(p, l1 * (2 * L - l1 - 1) / 2 + l2 - l1 - 1);
            const double *ov1 = OV[l1][h1], *qk2 = QK[l2][h2], *ov2 = OV[l2][h2];
            double want[3];
            mm(A, ov1, qk2, C, 0, 0);
            want[0] = frob(A, C) / (frob(ov1, C) * frob(qk2, C));
            mm(A, qk2, ov1, C, 0, 1);
            want[1] = frob(A, C) / (frob(ov1, C) * frob(qk2, C));
            mm(A, ov1, ov2, C, 0, 0);
            want[2] = frob(A, C) / (frob(ov1, C) * frob(ov2, C));
            for (int k = 0; k < 3; k++)
                assert_true(fabs(scores[(((size_t)k * P + p) * NH + h1) * NH + h2] - want[k]) <= 1e-5 * want[k] + 1e-7);
        }
    for (int l = 0; l < L; l++)
        for (int h = 0; h < NH; h++) {
            free(OV[l][h]);
            free(QK[l][h]);
        }
    st_free(&sf);
    free(fbuf);
    free(A);
    free(B);
    free(scores);
    alab_model_free(m);
}

/* Half storage (16-bit matrices converted inside each product) gives the numbers of the same weights in F32: the
 * measures read the head's rows, W_O and the projections through the storage, not around it. */
static void half_storage_gives_the_f32_numbers(void **state) {
    (void)state;
    const char *dirs[] = {"tests/fixtures/tiny-f16", "tests/fixtures/tiny-bf16"};
    for (int d = 0; d < 2; d++) {
        alab_model *f = NULL, *h = NULL;
        assert_int_equal(alab_model_load_dir_ex(&f, repo_path(dirs[d]), ALAB_WEIGHTS_F32), ALAB_OK);
        assert_int_equal(alab_model_load_dir_ex(&h, repo_path(dirs[d]), ALAB_WEIGHTS_HALF), ALAB_OK);
        const alab_config *c = alab_model_config(f);
        const int L = c->n_layer, NH = c->n_head;
        test_pair p = pair_for(f);
        const size_t n = (size_t)6 * L * NH * p.T * 4;
        float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        double lc, ld, ta[64], tb[64], la, lb, na[9], nb[9];
        assert_int_equal(alab_pattern_value_patching(a, &lc, &ld, f, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        assert_int_equal(alab_pattern_value_patching(b, &lc, &ld, h, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        assert_true(max_abs_diff(a, b, (size_t)6 * L * NH) <= 1e-4);
        alab_path_receiver r[2] = {{L - 1, 0, ALAB_PATH_K}, {0, 0, ALAB_PATH_LOGITS}};
        assert_int_equal(alab_path_patching(a, &lc, &ld, f, p.clean, p.corrupt, p.T, p.a, p.b, r, 2, ALAB_NOISE, 0), ALAB_OK);
        assert_int_equal(alab_path_patching(b, &lc, &ld, h, p.clean, p.corrupt, p.T, p.a, p.b, r, 2, ALAB_NOISE, 0), ALAB_OK);
        for (int i = 0; i < 2 * L * NH; i++) assert_true(isnan(a[i]) ? isnan(b[i]) : fabs(a[i] - b[i]) <= 1e-4);
        assert_int_equal(alab_direct_logit_attribution(a, a + L * NH, ta, &la, f, p.clean, p.T, p.a, p.b), ALAB_OK);
        assert_int_equal(alab_direct_logit_attribution(b, b + L * NH, tb, &lb, h, p.clean, p.T, p.a, p.b), ALAB_OK);
        assert_true(fabs(la - lb) <= 1e-4 && max_abs_diff(a, b, (size_t)L * NH * (1 + p.T)) <= 1e-4);
        for (int i = 0; i < 3 + 2 * L; i++) assert_true(fabs(ta[i] - tb[i]) <= 1e-4);
        assert_int_equal(alab_value_norms(a, f, p.clean, p.T), ALAB_OK);
        assert_int_equal(alab_value_norms(b, h, p.clean, p.T), ALAB_OK);
        assert_true(max_abs_diff(a, b, (size_t)L * NH * p.T) <= 1e-4);
        assert_int_equal(alab_component_tracing(a, a + L * p.T, &lc, &ld, f, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        assert_int_equal(alab_component_tracing(b, b + L * p.T, &lc, &ld, h, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
        assert_true(max_abs_diff(a, b, (size_t)2 * L * p.T) <= 1e-4);
        assert_int_equal(alab_composition_scores(a, na, f, 4, 1), ALAB_OK);
        assert_int_equal(alab_composition_scores(b, nb, h, 4, 1), ALAB_OK);
        assert_true(max_abs_diff(a, b, (size_t)3 * (L * (L - 1) / 2) * NH * NH) <= 1e-6);
        for (int i = 0; i < 9; i++) assert_true(na[i] == nb[i]);
        free(a);
        free(b);
        alab_model_free(f);
        alab_model_free(h);
    }
}

static void refusals(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head, V = c->vocab_size;
    test_pair p = pair_for(m);
    float g[6 * 64], out[4 * 64], heads[64], src[64 * 8];
    double lc, ld, terms[16], null[9];
    assert_int_equal(alab_pattern_value_patching(g, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.a), ALAB_EINVAL);
    assert_int_equal(alab_pattern_value_patching(g, &lc, &ld, m, p.clean, p.corrupt, p.T, V, p.b), ALAB_ERANGE);
    assert_int_equal(alab_pattern_value_patching(g, &lc, &ld, m, p.clean, p.clean, p.T, p.a, p.b), ALAB_EINVAL);
    assert_int_equal(alab_pattern_value_patching(NULL, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_EINVAL);
    assert_int_equal(alab_pattern_value_patching(g, &lc, &ld, m, p.clean, p.corrupt, 0, p.a, p.b), ALAB_EEMPTY);
    alab_path_receiver r = {L, 0, ALAB_PATH_Q};
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, &r, 1, 0, 0), ALAB_ERANGE);
    r = (alab_path_receiver){1, NH, ALAB_PATH_V};
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, &r, 1, 0, 0), ALAB_ERANGE);
    r = (alab_path_receiver){1, 0, 7};
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, &r, 1, 0, 0), ALAB_EINVAL);
    r = (alab_path_receiver){1, 0, ALAB_PATH_Q};
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, &r, 1, 2, 0), ALAB_EINVAL);
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, &r, 1, 0, 4), ALAB_EINVAL);
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, &r, 0, 0, 0), ALAB_ERANGE);
    assert_int_equal(alab_path_patching(out, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b, NULL, 1, 0, 0), ALAB_EINVAL);
    assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &ld, m, p.clean, p.T, p.a, p.a), ALAB_EINVAL);
    assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &ld, m, p.clean, p.T, p.a, -2), ALAB_ERANGE);
    assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &ld, m, p.clean, 0, p.a, -1), ALAB_EEMPTY);
    assert_int_equal(alab_value_norms(NULL, m, p.clean, p.T), ALAB_EINVAL);
    assert_int_equal(alab_component_tracing(NULL, NULL, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_EINVAL);
    assert_int_equal(alab_composition_scores(g, null, m, -1, 0), ALAB_ERANGE);
    assert_int_equal(alab_composition_scores(g, NULL, m, 5, 0), ALAB_EINVAL);
    int toolong[100] = {0};
    assert_int_equal(alab_pattern_value_patching(g, &lc, &ld, m, toolong, toolong, 100, p.a, p.b), ALAB_ETOOLONG);
    /* after a refusal the model still runs */
    assert_int_equal(alab_forward(m, p.clean, p.T, NULL), ALAB_OK);
    alab_model_free(m);
}

/* ---- against the float64 reference ---------------------------------------------------------------------- */

/* The golden's numbers, null as NaN. */
static double *golden_nums(const json_value *arr, size_t *n) {
    assert_non_null(arr);
    assert_int_equal(arr->type, JSON_ARRAY);
    double *out = malloc((arr->n ? arr->n : 1) * sizeof *out);
    for (uint32_t i = 0; i < arr->n; i++) out[i] = arr->u.items[i].type == JSON_NULL ? NAN : arr->u.items[i].u.num;
    *n = arr->n;
    return out;
}

static int golden_int(const json_value *o, const char *k) { return (int)json_get(o, k)->u.num; }

/* max |got - want| over n, where NaN must meet NaN */
static double diff_nan(const float *got, const double *want, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(want[i]) || isnan(got[i])) {
            if (!(isnan(want[i]) && isnan(got[i]))) return INFINITY;
            continue;
        }
        const double d = fabs((double)got[i] - want[i]);
        if (d > m) m = d;
    }
    return m;
}

static double seen_max; /* the largest difference met, reported at the end */

static void expect_close(const char *model, const char *what, const float *got, const json_value *arr, size_t n_expect, double tol) {
    size_t n;
    double *want = golden_nums(arr, &n);
    assert_int_equal(n, n_expect);
    const double d = diff_nan(got, want, n);
    if (!(d <= tol)) fprintf(stderr, "%s %s: max diff %g > %g\n", model, what, d, tol);
    assert_true(d <= tol);
    if (d > seen_max) seen_max = d;
    free(want);
}

static void circuits_match_the_reference(void **state) {
    (void)state;
    size_t len = 0;
    char *text = slurp(repo_path("tests/fixtures/circuits_golden.json"), &len);
    assert_non_null(text);
    json_doc doc;
    assert_int_equal(json_parse(&doc, text, len, 0), ALAB_OK);
    const double tol = json_get(doc.root, "tolerance")->u.num;
    const json_value *models = json_get(doc.root, "models");
    assert_int_equal(models->n, families_with(REF_CIRCUITS)); /* each a REF_CIRCUITS row of families.h */
    for (int threads = 1; threads <= 2; threads++)
        for (uint32_t k = 0; k < models->n; k++) {
            const json_value *g = &models->u.items[k];
            const char *name = json_get(g, "name")->u.str;
            const test_family *row = family_by_key(name);
            assert_non_null(row);
            assert_true(row->refs & REF_CIRCUITS);
            assert_string_equal(json_get(g, "dir")->u.str, row->dir);
            alab_model *m = load_model(row->dir);
            assert_int_equal(alab_model_set_threads(m, threads), ALAB_OK);
            const int L = golden_int(g, "L"), NH = golden_int(g, "NH"), T = golden_int(g, "T");
            int clean[64], corrupt[64], dla_ids[64];
            size_t n;
            double *v = golden_nums(json_get(g, "clean"), &n);
            for (size_t i = 0; i < n; i++) clean[i] = (int)v[i];
            free(v);
            v = golden_nums(json_get(g, "corrupt"), &n);
            for (size_t i = 0; i < n; i++) corrupt[i] = (int)v[i];
            free(v);
            v = golden_nums(json_get(g, "dla_ids"), &n);
            for (size_t i = 0; i < n; i++) dla_ids[i] = (int)v[i];
            free(v);
            const int a = golden_int(g, "answer_clean"), b = golden_int(g, "answer_corrupt");
            double lc, ld;
            float *buf = malloc((size_t)6 * L * NH * T * (T + 4) * sizeof *buf);
            /* pattern / value / both, both directions */
            assert_int_equal(alab_pattern_value_patching(buf, &lc, &ld, m, clean, corrupt, T, a, b), ALAB_OK);
            assert_true(fabs(lc - json_get(g, "ld_clean")->u.num) <= tol && fabs(ld - json_get(g, "ld_corrupt")->u.num) <= tol);
            expect_close(name, "pattern_value", buf, json_get(g, "pattern_value"), (size_t)6 * L * NH, tol);
            /* path patching: two directions, MLPs recomputed or frozen */
            const json_value *jr = json_get(g, "receivers");
            alab_path_receiver recv[8];
            for (uint32_t r = 0; r < jr->n; r++) {
                const json_value *e = &jr->u.items[r];
                recv[r] = (alab_path_receiver){(int)e->u.items[0].u.num, (int)e->u.items[1].u.num, (int)e->u.items[2].u.num};
            }
            const json_value *jp = json_get(g, "path");
            for (uint32_t r = 0; r < jp->n; r++) {
                const json_value *e = &jp->u.items[r];
                const int dir = golden_int(e, "direction"), freeze = json_get(e, "freeze_mlp")->type == JSON_TRUE;
                assert_int_equal(alab_path_patching(buf, &lc, &ld, m, clean, corrupt, T, a, b, recv, (int)jr->n, dir,
                                                    freeze ? ALAB_PATH_FREEZE_MLP : 0), ALAB_OK);
                expect_close(name, "path", buf, json_get(e, "out"), (size_t)jr->n * L * NH, tol);
            }
            /* the window of each layer's own causal mask, as config.json gives it (0: none) */
            const json_value *jw = json_get(g, "windows");
            for (int l = 0; l < L; l++)
                assert_int_equal(alab_model_layer_window(m, l), jw ? (int)jw->u.items[l].u.num : 0);
            /* a family whose head outputs are not linear terms of the residual (Gemma 3) refuses direct logit
               attribution and composition scores, and the reference gives no numbers for them */
            const json_value *jref = json_get(g, "refused");
            assert_true(jref ? row->post_norm : !row->post_norm);
            if (jref) {
                assert_int_equal(jref->n, 2);
                assert_null(json_get(g, "dla"));
                assert_null(json_get(g, "composition"));
                double terms[3 + 2 * 64], dl, nul[9];
                assert_int_equal(alab_direct_logit_attribution(buf, buf + L * NH, terms, &dl, m, dla_ids, T, a, b), ALAB_EINVAL);
                assert_int_equal(alab_composition_scores(buf, nul, m, 4, 1), ALAB_EINVAL);
            }
            /* direct logit attribution, with b and with u = W_U[a] */
            const json_value *jd = json_get(g, "dla");
            for (uint32_t r = 0; jd && r < jd->n; r++) {
                const json_value *e = &jd->u.items[r];
                float *heads = buf, *src = buf + L * NH;
                double terms[3 + 2 * 64], dl;
                assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &dl, m, dla_ids, T, golden_int(e, "answer"),
                                                               golden_int(e, "answer_other")), ALAB_OK);
                assert_true(fabs(dl - json_get(e, "ld")->u.num) <= tol);
                expect_close(name, "dla heads", heads, json_get(e, "heads"), (size_t)L * NH, tol);
                expect_close(name, "dla sources", src, json_get(e, "sources"), (size_t)L * NH * T, tol);
                float tf[3 + 2 * 64];
                for (int i = 0; i < 3 + 2 * L; i++) tf[i] = (float)terms[i];
                expect_close(name, "dla terms", tf, json_get(e, "terms"), (size_t)3 + 2 * L, tol);
            }
            /* value norms; the run they make leaves its attention as the result, that of a plain run */
            assert_int_equal(alab_forward(m, dla_ids, T, NULL), ALAB_OK);
            float *att = malloc((size_t)L * NH * T * T * sizeof *att);
            memcpy(att, alab_result_attention(m), (size_t)L * NH * T * T * sizeof *att);
            assert_int_equal(alab_forward(m, clean, T, NULL), ALAB_OK); /* another run in between */
            assert_int_equal(alab_value_norms(buf, m, dla_ids, T), ALAB_OK);
            expect_close(name, "value_norms", buf, json_get(g, "value_norms"), (size_t)L * NH * T, tol);
            assert_non_null(alab_result_attention(m));
            assert_memory_equal(alab_result_attention(m), att, (size_t)L * NH * T * T * sizeof *att);
            free(att);
            /* causal tracing by component */
            const json_value *jt = json_get(g, "tracing");
            assert_int_equal(alab_component_tracing(buf, buf + L * T, &lc, &ld, m, clean, corrupt, T, a, b), ALAB_OK);
            expect_close(name, "tracing attn", buf, json_get(jt, "attn"), (size_t)L * T, tol);
            expect_close(name, "tracing mlp", buf + L * T, json_get(jt, "mlp"), (size_t)L * T, tol);
            /* composition scores and their null */
            const json_value *jc = json_get(g, "composition");
            if (jc) {
                double nul[9];
                assert_int_equal(alab_composition_scores(buf, nul, m, golden_int(jc, "n_null"), (uint32_t)golden_int(jc, "seed")), ALAB_OK);
                expect_close(name, "composition", buf, json_get(jc, "scores"), (size_t)3 * (L * (L - 1) / 2) * NH * NH, tol);
                float nf[9];
                for (int i = 0; i < 9; i++) nf[i] = (float)nul[i];
                expect_close(name, "composition null", nf, json_get(jc, "null"), 9, tol);
            }
            free(buf);
            if (threads == 1) fprintf(stderr, "circuits: %s max diff so far %.3g\n", name, seen_max);
            alab_model_free(m);
        }
    fprintf(stderr, "circuits: %u checkpoints, largest difference from the float64 reference %.3g (tolerance %g)\n",
            models->n, seen_max, tol);
    json_free(&doc);
    free(text);
}

/* Mistral's sliding window holds in the patched runs too: the corrupted token (position 2 of 9) changes what
 * layer 0 adds at positions 2.., but those more than W - 1 before the last cannot reach it through layer 1's
 * window, so their tracing cells are exactly 0; within reach they move the score. */
static void a_sliding_window_holds_in_every_patched_run(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/mistral");
    const int L = alab_model_config(m)->n_layer, W = alab_model_layer_window(m, 1);
    assert_int_equal(L, 2);
    assert_int_equal(W, 4);
    test_pair p = {{84, 104, 101, 32, 99, 97, 116, 32, 115}, {84, 104, 100, 32, 99, 97, 116, 32, 115}, 9, 0, 0};
    assert_int_equal(alab_forward(m, p.clean, p.T, NULL), ALAB_OK);
    int ids[2];
    float pr[2];
    assert_int_equal(alab_result_topk(ids, pr, 2, m), ALAB_OK);
    p.a = ids[0];
    p.b = ids[1];
    float attn[2 * 9], mlp[2 * 9];
    double lc, ld;
    assert_int_equal(alab_component_tracing(attn, mlp, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
    int moved = 0;
    for (int t = 0; t < p.T; t++) {
        if (p.T - 1 - t > W - 1) {
            assert_true(attn[t] == 0.0f);
            assert_true(mlp[t] == 0.0f);
        } else {
            moved += fabsf(attn[t]) > 1e-3f || fabsf(mlp[t]) > 1e-3f;
        }
    }
    assert_true(moved > 0);
    /* the hidden positions 2..4 do differ between the two runs in layer 0 (the zeros above are the window's) */
    float *x0 = malloc((size_t)2 * 9 * 32 * sizeof *x0), *x1 = malloc((size_t)2 * 9 * 32 * sizeof *x1);
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.capture_resid = x0;
    assert_int_equal(alab_forward(m, p.clean, p.T, &o), ALAB_OK);
    o.capture_resid = x1;
    assert_int_equal(alab_forward(m, p.corrupt, p.T, &o), ALAB_OK);
    for (int t = 2; t <= 4; t++) /* the residual entering layer 1 */
        assert_true(max_abs_diff(x0 + (size_t)(9 + t) * 32, x1 + (size_t)(9 + t) * 32, 32) > 1e-4);
    free(x0);
    free(x1);
    assert_int_equal(alab_forward(m, p.clean, p.T, NULL), ALAB_OK);
    /* a token beyond both windows' reach (position 0 of 9: 8 > 2 (W - 1)) leaves the last logits bit for bit */
    float z[277];
    memcpy(z, alab_result_logits(m), sizeof z);
    int far[9];
    memcpy(far, p.clean, sizeof far);
    far[0] = 109;
    assert_int_equal(alab_forward(m, far, p.T, NULL), ALAB_OK);
    assert_memory_equal(alab_result_logits(m), z, sizeof z);
    alab_model_free(m);
}

/* Gemma 3 refuses the measures that read a head's output as a linear term of the residual stream, with a message
 * that says why; the patching measures, value norms and tracing run, and the model runs on after a refusal. */
static void refusals_on_post_normed_sublayers(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/families/gemma3");
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, NH = c->n_head;
    test_pair p = pair_for(m);
    float heads[64], src[64 * 9], scores[3 * 64];
    double terms[16], ld, null[9];
    assert_int_equal(alab_direct_logit_attribution(heads, src, terms, &ld, m, p.clean, p.T, p.a, p.b), ALAB_EINVAL);
    assert_non_null(strstr(alab_last_error(), "not a linear term"));
    assert_int_equal(alab_direct_logit_attribution(heads, NULL, terms, &ld, m, p.clean, p.T, p.a, -1), ALAB_EINVAL);
    assert_int_equal(alab_composition_scores(scores, null, m, 8, 1), ALAB_EINVAL);
    assert_non_null(strstr(alab_last_error(), "gemma3_text"));
    assert_int_equal(alab_composition_scores(scores, NULL, m, 0, 1), ALAB_EINVAL);
    assert_int_equal(alab_value_norms(src, m, p.clean, p.T), ALAB_OK);
    float attn[2 * 8], mlp[2 * 8];
    double lc;
    assert_int_equal(alab_component_tracing(attn, mlp, &lc, &ld, m, p.clean, p.corrupt, p.T, p.a, p.b), ALAB_OK);
    assert_int_equal(alab_forward(m, p.clean, p.T, NULL), ALAB_OK);
    assert_true(L * p.T <= 16 && L * NH <= 64);
    alab_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unpack_inverts_pack),
        cmocka_unit_test(circuits_match_the_reference),
        cmocka_unit_test(patching_a_whole_head_is_head_patching),
        cmocka_unit_test(attribution_sums_to_the_logit_difference),
        cmocka_unit_test(last_layer_senders_into_the_logits_are_head_patching),
        cmocka_unit_test(last_layer_components_elsewhere_change_nothing),
        cmocka_unit_test(composition_matches_the_plain_products),
        cmocka_unit_test(half_storage_gives_the_f32_numbers),
        cmocka_unit_test(refusals),
        cmocka_unit_test(a_sliding_window_holds_in_every_patched_run),
        cmocka_unit_test(refusals_on_post_normed_sublayers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
