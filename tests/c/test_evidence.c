/* test_evidence.c — rank correlations, top-k overlap, rollout and flow
 * (c/src/evidence.c): hand-computed cases, the fast Kendall against its O(n^2)
 * twin, and rollout / flow on the tiny model against the PyTorch reference's
 * readings in tests/fixtures/evidence_golden.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static void spearman_on_hand_computed_cases(void **state) {
    (void)state;
    double r;
    const double a[5] = {1, 2, 3, 4, 5}, up[5] = {10, 20, 30, 40, 50}, down[5] = {5, 4, 3, 2, 1};
    assert_int_equal(alab_spearman(&r, a, up, 5), ALAB_OK);
    assert_true(fabs(r - 1.0) < 1e-12);
    assert_int_equal(alab_spearman(&r, a, down, 5), ALAB_OK);
    assert_true(fabs(r + 1.0) < 1e-12);
    /* ranks of b = {0, 2, 1, 3, 4}: rho = 1 - 6 * 2 / (5 * 24) = 0.9 */
    const double b[5] = {1, 3, 2, 4, 5};
    assert_int_equal(alab_spearman(&r, a, b, 5), ALAB_OK);
    assert_true(fabs(r - 0.9) < 1e-12);
    /* ties share their average rank: b = {1, 1, 2} -> ranks {0.5, 0.5, 2};
     * a ranks {0, 1, 2}: centred {-1, 0, 1} and {-0.5, -0.5, 1}: 1.5 / sqrt(2 * 1.5) */
    const double t[3] = {1, 1, 2};
    assert_int_equal(alab_spearman(&r, a, t, 3), ALAB_OK);
    assert_true(fabs(r - 1.5 / sqrt(3.0)) < 1e-12);
    const double c[3] = {7, 7, 7};
    assert_int_equal(alab_spearman(&r, a, c, 3), ALAB_OK); /* a constant side: undefined */
    assert_true(isnan(r));
    assert_int_equal(alab_spearman(&r, a, up, 1), ALAB_OK);
    assert_true(isnan(r));
    const double bad[2] = {1, NAN};
    assert_int_equal(alab_spearman(&r, a, bad, 2), ALAB_ENAN);
    assert_int_equal(alab_spearman(NULL, a, up, 5), ALAB_EINVAL);
    assert_int_equal(alab_spearman(&r, a, up, -1), ALAB_ELIMIT);
}

static void kendall_on_hand_computed_cases(void **state) {
    (void)state;
    double t, tr;
    /* b = {3, 4, 1, 2, 5}: of the 10 pairs, discordant (0,2) (0,3) (1,2) (1,3): tau = (6 - 4) / 10 */
    const double a[5] = {1, 2, 3, 4, 5}, b[5] = {3, 4, 1, 2, 5};
    assert_int_equal(alab_kendall_tau_b(&t, a, b, 5), ALAB_OK);
    assert_true(fabs(t - 0.2) < 1e-12);
    assert_int_equal(alab_kendall_tau_b_ref(&tr, a, b, 5), ALAB_OK);
    assert_true(fabs(tr - 0.2) < 1e-12);
    /* ties: a = {1, 1, 2}, b = {1, 2, 3}: n0 = 3, n1 = 1, n2 = 0, concordant 2, discordant 0:
     * tau_b = 2 / sqrt(2 * 3) */
    const double ta[3] = {1, 1, 2}, tb[3] = {1, 2, 3};
    assert_int_equal(alab_kendall_tau_b(&t, ta, tb, 3), ALAB_OK);
    assert_true(fabs(t - 2.0 / sqrt(6.0)) < 1e-12);
    const double c[3] = {4, 4, 4};
    assert_int_equal(alab_kendall_tau_b(&t, ta, c, 3), ALAB_OK);
    assert_true(isnan(t));
}

static void fast_kendall_equals_the_pair_count_with_ties(void **state) {
    (void)state;
    uint64_t rng = 77;
    for (int n = 0; n <= 300; n += (n < 20 ? 1 : 37)) {
        for (int levels = 2; levels <= 1000; levels *= 7) { /* few levels: many ties */
            double *a = malloc((size_t)(n + 1) * sizeof *a), *b = malloc((size_t)(n + 1) * sizeof *b);
            for (int i = 0; i < n; i++) {
                a[i] = (double)(alab_rng_u32(&rng) % (uint32_t)levels);
                b[i] = (double)(alab_rng_u32(&rng) % (uint32_t)levels) + 0.5 * a[i];
            }
            double t = 0, tr = 0;
            assert_int_equal(alab_kendall_tau_b(&t, a, b, n), ALAB_OK);
            assert_int_equal(alab_kendall_tau_b_ref(&tr, a, b, n), ALAB_OK);
            if (isnan(tr)) assert_true(isnan(t));
            else assert_true(fabs(t - tr) < 1e-12);
            free(a);
            free(b);
        }
    }
}

static void top_k_overlap_counts_shared_members(void **state) {
    (void)state;
    double s;
    const double a[6] = {0.9, 0.1, 0.8, 0.2, 0.7, 0.0}, b[6] = {0.5, 0.6, 0.9, 0.0, 0.1, 0.2};
    /* top3(a) = {0, 2, 4}; top3(b) = {2, 1, 0}: shared {0, 2} */
    assert_int_equal(alab_top_k_overlap(&s, a, b, 6, 3), ALAB_OK);
    assert_true(fabs(s - 2.0 / 3.0) < 1e-12);
    assert_int_equal(alab_top_k_overlap(&s, a, b, 6, 100), ALAB_OK); /* clamped: all of them */
    assert_true(fabs(s - 1.0) < 1e-12);
    assert_int_equal(alab_top_k_overlap(&s, a, b, 6, 0), ALAB_ERANGE);
}

/* L = 2 layers of one head, T = 2: A = [[1, 0], [0.6, 0.4]], so Ã = [[1, 0], [0.3, 0.7]]. */
static void rollout_and_flow_on_a_graph_solved_by_hand(void **state) {
    (void)state;
    const float att[8] = {1, 0, 0.6f, 0.4f, 1, 0, 0.6f, 0.4f};
    float R[4], f[2];
    assert_int_equal(alab_attention_rollout(R, att, 2, 1, 2), ALAB_OK);
    /* Ã² row 1 = [0.3 + 0.7 * 0.3, 0.7 * 0.7] */
    assert_true(fabs(R[2] - 0.51f) < 1e-6 && fabs(R[3] - 0.49f) < 1e-6);
    assert_true(fabs(R[0] - 1.0f) < 1e-6 && R[1] == 0.0f);
    assert_int_equal(alab_attention_flow(f, att, 2, 1, 2, 1), ALAB_OK);
    /* token 0 reaches the top of position 1 by 0->0->1 (min(1, 0.3)) and 0->1->1 (min(0.3, 0.7)) */
    assert_true(fabs(f[0] - 0.6f) < 1e-6);
    assert_true(fabs(f[1] - 0.7f) < 1e-6); /* 1->1->1, 0.7 each */
    assert_int_equal(alab_attention_flow(f, att, 2, 1, 2, 0), ALAB_OK);
    assert_true(fabs(f[0] - 1.0f) < 1e-6 && f[1] == 0.0f);
    assert_int_equal(alab_attention_flow(f, att, 2, 1, 2, 2), ALAB_ERANGE);
    const float nan_att[4] = {1, 0, NAN, 0};
    assert_int_equal(alab_attention_rollout(R, nan_att, 1, 1, 2), ALAB_ENAN);
    assert_int_equal(alab_attention_flow(f, att, 0, 1, 2, 0), ALAB_EINVAL);
}

/* Rollout and flow of the tiny model's plain run agree with the reference's readings. */
static void rollout_and_flow_match_the_reference_on_the_tiny_model(void **state) {
    (void)state;
    size_t len = 0;
    char *text = slurp(repo_path("tests/fixtures/evidence_golden.json"), &len);
    assert_non_null(text);
    json_doc doc;
    assert_int_equal(json_parse(&doc, text, len, 0), ALAB_OK);
    const json_value *root = doc.root;
    const json_value *jids = json_get(root, "ids");
    const int T = (int)jids->n;
    int ids[64];
    for (int i = 0; i < T; i++) ids[i] = (int)jids->u.items[i].u.num;
    alab_model *m = load_model("tests/fixtures/tiny");
    assert_int_equal(alab_forward(m, ids, T, NULL), ALAB_OK);
    const alab_config *c = alab_model_config(m);
    const json_value *rd = json_get(json_get(json_get(root, "token"), "readings"), "rollout");
    const json_value *fl = json_get(json_get(json_get(root, "token"), "readings"), "flow");
    size_t n1, n2;
    float *want_r = json_floats_of(rd, &n1), *want_f = json_floats_of(fl, &n2);
    assert_int_equal((int)n1, T);
    assert_int_equal((int)n2, T);
    float *R = malloc((size_t)T * T * sizeof *R), *f = malloc((size_t)T * sizeof *f);
    assert_int_equal(alab_attention_rollout(R, alab_result_attention(m), c->n_layer, c->n_head, T), ALAB_OK);
    assert_int_equal(alab_attention_flow(f, alab_result_attention(m), c->n_layer, c->n_head, T, T - 1), ALAB_OK);
    assert_true(max_abs_diff(R + (size_t)(T - 1) * T, want_r, (size_t)T) < 1e-4);
    assert_true(max_abs_diff(f, want_f, (size_t)T) < 1e-4);
    free(R); free(f); free(want_r); free(want_f);
    alab_model_free(m);
    json_free(&doc);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spearman_on_hand_computed_cases),
        cmocka_unit_test(kendall_on_hand_computed_cases),
        cmocka_unit_test(fast_kendall_equals_the_pair_count_with_ties),
        cmocka_unit_test(top_k_overlap_counts_shared_members),
        cmocka_unit_test(rollout_and_flow_on_a_graph_solved_by_hand),
        cmocka_unit_test(rollout_and_flow_match_the_reference_on_the_tiny_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
