/* test_readings.c — attention rollout and attention flow (c/src/readings.c): a graph solved by hand, and the
 * tiny model's readings against the PyTorch reference's in tests/fixtures/evidence_golden.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

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
        cmocka_unit_test(rollout_and_flow_on_a_graph_solved_by_hand),
        cmocka_unit_test(rollout_and_flow_match_the_reference_on_the_tiny_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
