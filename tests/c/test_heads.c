/* test_heads.c — c/src/heads.c: role scores on hand-built attention tensors,
 * importance and the pruning curve on the tiny fixture, and every error code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

/* One (T,T) pattern per head: row i puts all its mass on col(i). */
static void one_hot_rows(float *A, int T, int (*col)(int i, int T)) {
    memset(A, 0, sizeof(float) * (size_t)T * T);
    for (int i = 0; i < T; i++) A[(size_t)i * T + col(i, T)] = 1.0f;
}
static int col_prev(int i, int T) { (void)T; return i ? i - 1 : 0; }
static int col_sink(int i, int T) { (void)T; (void)i; return 0; }
static int col_self(int i, int T) { (void)T; return i; }
static int col_induction(int i, int T) { int n = T / 2; return i >= n ? i - n + 1 : 0; }

static void hand_built_heads_score_one_on_their_own_role(void **state) {
    (void)state;
    enum { L = 1, NH = 4, T = 8 };
    const int ids[T] = {5, 9, 2, 7, 5, 9, 2, 7}; /* r ++ r, n = 4 */
    float att[L * NH * T * T];
    one_hot_rows(att + 0 * T * T, T, col_prev);
    one_hot_rows(att + 1 * T * T, T, col_sink);
    one_hot_rows(att + 2 * T * T, T, col_induction);
    one_hot_rows(att + 3 * T * T, T, col_self);
    float prev[4], sink[4], dup[4], ind[4];
    assert_int_equal(alab_head_roles(prev, sink, dup, ind, att, ids, L, NH, T), 1);
    assert_float_equal(prev[0], 1.0f, 1e-7); /* previous-token head */
    assert_float_equal(sink[1], 1.0f, 1e-7); /* sink head */
    assert_float_equal(ind[2], 1.0f, 1e-7);  /* induction head */
    /* the other scores of those heads, by hand */
    assert_float_equal(sink[0], 2.0f / 8, 1e-7);   /* rows 0 and 1 hit column 0 */
    assert_float_equal(prev[1], 1.0f / 7, 1e-7);   /* row 1 only */
    assert_float_equal(ind[0], 0.0f, 1e-7);        /* i-1 != i-3 */
    assert_float_equal(ind[1], 0.0f, 1e-7);
    assert_float_equal(prev[3], 0.0f, 1e-7);       /* a self head */
    assert_float_equal(sink[3], 1.0f / 8, 1e-7);
    assert_float_equal(dup[3], 0.0f, 1e-7);        /* never looks back */
    /* positions 4..7 repeat positions 0..3: a prev head looks at i-1, which is
     * never the same token here, so dup = 0; the induction head's target
     * i-n+1 is not an earlier copy of ids[i] either */
    assert_float_equal(dup[0], 0.0f, 1e-7);
}

static int col_dup(int i, int T) { (void)T; return i >= 4 ? i - 4 : 0; }

static void a_head_on_earlier_copies_scores_one_on_duplicate_token(void **state) {
    (void)state;
    enum { T = 8 };
    const int ids[T] = {5, 9, 2, 7, 5, 9, 2, 7};
    float att[T * T], dup, prev, ind;
    one_hot_rows(att, T, col_dup);
    assert_int_equal(alab_head_roles(&prev, NULL, &dup, &ind, att, ids, 1, 1, T), 1);
    assert_float_equal(dup, 1.0f, 1e-7);
    assert_float_equal(ind, 0.0f, 1e-7); /* i-4 is not i-3 */
    /* half the mass on the copy: 0.5 */
    for (int i = 4; i < T; i++) {
        float *row = att + (size_t)i * T;
        memset(row, 0, sizeof(float) * T);
        row[i - 4] = 0.5f;
        row[i] = 0.5f;
    }
    assert_int_equal(alab_head_roles(NULL, NULL, &dup, NULL, att, ids, 1, 1, T), 1);
    assert_float_equal(dup, 0.5f, 1e-7);
}

static void induction_is_zero_and_flagged_when_ids_are_not_a_repeat(void **state) {
    (void)state;
    enum { T = 8 };
    const int ids[T] = {5, 9, 2, 7, 5, 9, 2, 8};
    float att[T * T], ind = -1.0f;
    one_hot_rows(att, T, col_induction);
    assert_int_equal(alab_head_roles(NULL, NULL, NULL, &ind, att, ids, 1, 1, T), 0);
    assert_float_equal(ind, 0.0f, 0.0);
    /* odd length and a repeat of one token (n = 1) are not repeats either */
    const int odd[5] = {1, 2, 1, 2, 1}, two[2] = {3, 3};
    assert_int_equal(alab_head_roles(NULL, NULL, NULL, &ind, att, odd, 1, 1, 5), 0);
    assert_int_equal(alab_head_roles(NULL, NULL, NULL, &ind, att, two, 1, 1, 2), 0);
    assert_false(isnan(ind));
}

static void role_errors_have_their_codes(void **state) {
    (void)state;
    const int ids[2] = {1, 2}, neg[2] = {1, -1};
    float att[4] = {1, 0, 0.5f, 0.5f}, x;
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, NULL, ids, 1, 1, 2), ALAB_EINVAL);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, NULL, 1, 1, 2), ALAB_EINVAL);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, ids, 0, 1, 2), ALAB_EINVAL);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, ids, 1, ALAB_MAX_HEADS + 1, 2), ALAB_EINVAL);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, ids, 1, 1, 0), ALAB_EEMPTY);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, ids, 1, 1, ALAB_MAX_POSITIONS + 1), ALAB_ETOOLONG);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, neg, 1, 1, 2), ALAB_ERANGE);
    assert_int_equal(alab_head_roles(&x, NULL, NULL, NULL, att, ids, 1, 1, 2), 0);
    assert_float_equal(x, 0.5f, 1e-7);
}

/* ---- on the tiny fixture ------------------------------------------------- */

static alab_model *tiny(void) {
    alab_model *m = NULL;
    assert_int_equal(alab_model_load_dir(&m, repo_path("tests/fixtures/tiny")), ALAB_OK);
    return m;
}

static const int IDS[12] = {464, 3797, 3332, 319, 262, 2603, 13, 464, 3290, 318, 257, 13};

static void ids_fit(const alab_model *m, int *ids) {
    int V = alab_model_config(m)->vocab_size;
    for (int i = 0; i < 12; i++) ids[i] = IDS[i] % V;
}

static void importance_and_pruning_curve_on_tiny(void **state) {
    (void)state;
    alab_model *m = tiny();
    int ids[12];
    ids_fit(m, ids);
    const alab_config *c = alab_model_config(m);
    const int LH = c->n_layer * c->n_head;
    float *delta = malloc(sizeof(float) * LH), *curve = malloc(sizeof(float) * (LH + 1));
    int *order = malloc(sizeof(int) * LH);
    double base = -1.0;
    assert_int_equal(alab_head_importance(delta, &base, m, ids, 12), ALAB_OK);
    assert_true(isfinite(base) && base > 0.0);
    /* the plain loss, independently */
    double sum = 0.0;
    int n = 0;
    assert_int_equal(alab_forward(m, ids, 12, NULL), ALAB_OK);
    assert_int_equal(alab_result_nll(&sum, &n, m), ALAB_OK);
    assert_int_equal(n, 11);
    assert_true(sum / n == base);
    int changed = 0;
    for (int i = 0; i < LH; i++) {
        assert_true(isfinite(delta[i]));
        if (fabsf(delta[i]) > 1e-6f) changed++;
    }
    assert_int_equal(changed, LH); /* every head of a random model moves the loss */
    /* delta[0] is the ablation of head (0, 0), recomputed by hand */
    alab_intervention iv = {ALAB_ABLATE, 0, 0, 0, 0, 0.0f};
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.interventions = &iv;
    o.n_interventions = 1;
    assert_int_equal(alab_forward(m, ids, 12, &o), ALAB_OK);
    assert_int_equal(alab_result_nll(&sum, &n, m), ALAB_OK);
    assert_float_equal(delta[0], (float)(sum / n - base), 1e-6);

    assert_int_equal(alab_pruning_curve(curve, order, m, ids, 12, delta), ALAB_OK);
    assert_true(curve[0] == (float)base); /* k = 0 is the plain run, exactly */
    for (int k = 1; k < LH; k++) assert_true(delta[order[k - 1]] <= delta[order[k]]);
    for (int k = 0; k <= LH; k++) assert_true(isfinite(curve[k]));
    /* k = 1 removes only the least important head: its single-ablation loss */
    assert_float_equal(curve[1], (float)(base + delta[order[0]]), 1e-5);
    /* all heads removed: a finite loss that differs from the plain one */
    assert_true(fabsf(curve[LH] - (float)base) > 1e-4f);
    free(delta);
    free(curve);
    free(order);
    alab_model_free(m);
}

static void per_position_losses_add_up_to_the_run_loss(void **state) {
    (void)state;
    alab_model *m = tiny();
    int ids[12];
    ids_fit(m, ids);
    double each[11], sum = 0.0, total = 0.0;
    int n = 0;
    assert_int_equal(alab_result_nll_each(each, 11, m), ALAB_ESTATE); /* before any run */
    assert_int_equal(alab_forward(m, ids, 12, NULL), ALAB_OK);
    assert_int_equal(alab_result_nll_each(NULL, 11, m), ALAB_EINVAL);
    assert_int_equal(alab_result_nll_each(each, 10, m), ALAB_ERANGE); /* room for 10, the run has 11 */
    assert_int_equal(alab_result_nll_each(each, 11, m), ALAB_OK);
    assert_int_equal(alab_result_nll(&total, &n, m), ALAB_OK);
    for (int t = 0; t < 11; t++) {
        assert_true(isfinite(each[t]) && each[t] > 0.0);
        sum += each[t];
    }
    assert_true(sum == total); /* the same terms, added in the same order */
    /* the last term is the loss of the prefix run's last position */
    float *logits = malloc(sizeof(float) * alab_model_config(m)->vocab_size);
    assert_int_equal(alab_forward(m, ids, 11, NULL), ALAB_OK);
    assert_int_equal(alab_result_logits_at(logits, m, 10), ALAB_OK);
    const int V = alab_model_config(m)->vocab_size;
    double mx = -INFINITY, z = 0.0;
    for (int v = 0; v < V; v++) mx = logits[v] > mx ? logits[v] : mx;
    for (int v = 0; v < V; v++) z += exp((double)logits[v] - mx);
    assert_float_equal(each[10], mx + log(z) - logits[ids[11]], 1e-4);
    free(logits);
    alab_model_free(m);
}

static void roles_of_a_real_run_are_fractions(void **state) {
    (void)state;
    alab_model *m = tiny();
    int ids[12];
    ids_fit(m, ids);
    for (int i = 0; i < 6; i++) ids[6 + i] = ids[i]; /* a repeat: induction defined */
    assert_int_equal(alab_forward(m, ids, 12, NULL), ALAB_OK);
    const alab_config *c = alab_model_config(m);
    const int LH = c->n_layer * c->n_head;
    float prev[64], sink[64], dup[64], ind[64];
    assert_true(LH <= 64);
    assert_int_equal(alab_head_roles(prev, sink, dup, ind, alab_result_attention(m), ids,
                                     c->n_layer, c->n_head, 12), 1);
    for (int i = 0; i < LH; i++) {
        /* causal rows: sink >= 1/T (row 0 is one-hot on 0) and every score in [0, 1] */
        assert_true(sink[i] >= 1.0f / 12 - 1e-6f && sink[i] <= 1.0f + 1e-6f);
        assert_true(prev[i] > 0.0f && prev[i] <= 1.0f + 1e-6f);
        assert_true(dup[i] > 0.0f && dup[i] <= 1.0f + 1e-6f);
        assert_true(ind[i] > 0.0f && ind[i] <= 1.0f + 1e-6f);
    }
    alab_model_free(m);
}

static void model_errors_have_their_codes(void **state) {
    (void)state;
    alab_model *m = tiny();
    int ids[12];
    ids_fit(m, ids);
    const alab_config *c = alab_model_config(m);
    const int LH = c->n_layer * c->n_head;
    float delta[64], curve[65];
    int order[64];
    double base;
    assert_int_equal(alab_head_importance(NULL, &base, m, ids, 12), ALAB_EINVAL);
    assert_int_equal(alab_head_importance(delta, NULL, m, ids, 12), ALAB_EINVAL);
    assert_int_equal(alab_head_importance(delta, &base, NULL, ids, 12), ALAB_EINVAL);
    assert_int_equal(alab_head_importance(delta, &base, m, NULL, 12), ALAB_EINVAL);
    assert_int_equal(alab_head_importance(delta, &base, m, ids, 1), ALAB_EEMPTY);
    assert_int_equal(alab_head_importance(delta, &base, m, ids, 0), ALAB_EEMPTY);
    int bad[3] = {1, 2, c->vocab_size};
    assert_int_equal(alab_head_importance(delta, &base, m, bad, 3), ALAB_ERANGE);
    int longer[65] = {0};
    assert_int_equal(alab_head_importance(delta, &base, m, longer, c->n_positions + 1), ALAB_ETOOLONG);
    for (int i = 0; i < LH; i++) delta[i] = 0.0f;
    assert_int_equal(alab_pruning_curve(NULL, order, m, ids, 12, delta), ALAB_EINVAL);
    assert_int_equal(alab_pruning_curve(curve, NULL, m, ids, 12, delta), ALAB_EINVAL);
    assert_int_equal(alab_pruning_curve(curve, order, m, ids, 12, NULL), ALAB_EINVAL);
    assert_int_equal(alab_pruning_curve(curve, order, m, ids, 1, delta), ALAB_EEMPTY);
    delta[3] = NAN;
    assert_int_equal(alab_pruning_curve(curve, order, m, ids, 12, delta), ALAB_ENAN);
    delta[3] = INFINITY;
    assert_int_equal(alab_pruning_curve(curve, order, m, ids, 12, delta), ALAB_ENAN);
    alab_model_free(m);
}

/* ---- DAG profile ------------------------------------------------------------ */

static void dag_profile_is_the_dag_score_per_head_and_the_mean_per_layer(void **state) {
    (void)state;
    enum { L = 2, NH = 2, T = 4 };
    float att[L * NH * T * T];
    one_hot_rows(att + 0 * T * T, T, col_prev); /* row 0 on the diagonal: 3/4 */
    one_hot_rows(att + 1 * T * T, T, col_self); /* all on the diagonal: 0 */
    one_hot_rows(att + 2 * T * T, T, col_sink); /* rows 1..3 below: 3/4 */
    for (int i = 0; i < T; i++)                 /* uniform causal: the null score */
        for (int j = 0; j < T; j++) att[3 * T * T + i * T + j] = j <= i ? 1.0f / (i + 1) : 0.0f;
    float head[4], layer[2];
    assert_int_equal(alab_dag_profile(head, layer, att, L, NH, T), ALAB_OK);
    assert_float_equal(head[0], 0.75f, 1e-7);
    assert_float_equal(head[1], 0.0f, 1e-7);
    assert_float_equal(head[2], 0.75f, 1e-7);
    assert_float_equal(head[3], (float)alab_null_dag_score(T), 1e-6);
    assert_float_equal(layer[0], 0.375f, 1e-7);
    assert_float_equal(layer[1], (0.75f + (float)alab_null_dag_score(T)) / 2, 1e-6);
    /* the layer score equals the DAG score of the layer's head average */
    float avg[T * T];
    alab_head_average(avg, att + 1 * NH * T * T, NH, T);
    assert_float_equal(layer[1], (float)alab_dag_score(avg, T), 1e-6);
    /* either output may be NULL */
    float only[2] = {-1, -1};
    assert_int_equal(alab_dag_profile(NULL, only, att, L, NH, T), ALAB_OK);
    assert_float_equal(only[0], 0.375f, 1e-7);
    assert_int_equal(alab_dag_profile(NULL, NULL, att, L, NH, T), ALAB_EINVAL);
    assert_int_equal(alab_dag_profile(head, layer, NULL, L, NH, T), ALAB_EINVAL);
    assert_int_equal(alab_dag_profile(head, layer, att, 0, NH, T), ALAB_EINVAL);
    assert_int_equal(alab_dag_profile(head, layer, att, L, 0, T), ALAB_EINVAL);
    assert_int_equal(alab_dag_profile(head, layer, att, L, NH, 0), ALAB_EEMPTY);
    assert_int_equal(alab_dag_profile(head, layer, att, L, NH, ALAB_MAX_POSITIONS + 1), ALAB_ETOOLONG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_built_heads_score_one_on_their_own_role),
        cmocka_unit_test(a_head_on_earlier_copies_scores_one_on_duplicate_token),
        cmocka_unit_test(induction_is_zero_and_flagged_when_ids_are_not_a_repeat),
        cmocka_unit_test(role_errors_have_their_codes),
        cmocka_unit_test(importance_and_pruning_curve_on_tiny),
        cmocka_unit_test(per_position_losses_add_up_to_the_run_loss),
        cmocka_unit_test(roles_of_a_real_run_are_fractions),
        cmocka_unit_test(model_errors_have_their_codes),
        cmocka_unit_test(dag_profile_is_the_dag_score_per_head_and_the_mean_per_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
