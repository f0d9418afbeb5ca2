/* test_stats.c — the seeded resampling of c/src/stats.c: the splitmix64
 * generator, the bootstrap of a mean and the mean per-input correlation with
 * its within-group permutation null (alab_corr_dataset), and the clustered
 * intervals, paired differences and corrections (alab_cluster_bootstrap_mean,
 * alab_paired_diff, alab_holm, alab_partial_spearman, alab_quantiles).
 * Hand-computed cases, every error code, and the numbers of the independent
 * float64 reference tests/ref/stats_ref.py in tests/fixtures/stats_golden.json
 * (within 1e-12; the clustered ones within 1e-12 relative). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include "testutil.h"

#define TOL 1e-12

/* ---- the golden file ---------------------------------------------------- */

typedef struct {
    char *text;
    json_doc doc;
} golden;

static void golden_open(golden *g) {
    size_t len = 0;
    g->text = slurp(repo_path("tests/fixtures/stats_golden.json"), &len);
    if (!g->text) fprintf(stderr, "cannot read %s (set ATTNLAB_ROOT)\n", repo_path("tests/fixtures/stats_golden.json"));
    assert_non_null(g->text);
    assert_int_equal(json_parse(&g->doc, g->text, len, 0), ALAB_OK);
}

static void golden_close(golden *g) {
    json_free(&g->doc);
    free(g->text);
}

static const json_value *member(const json_value *obj, const char *key) {
    const json_value *v = json_get(obj, key);
    if (!v) fprintf(stderr, "golden: no member \"%s\"\n", key);
    assert_non_null(v);
    return v;
}

/* A number of the golden; null stands for NaN (JSON has none). */
static double num(const json_value *obj, const char *key) {
    const json_value *v = member(obj, key);
    if (v->type == JSON_NULL) return NAN;
    assert_int_equal(v->type, JSON_NUMBER);
    return v->u.num;
}

static double item_num(const json_value *arr, uint32_t i) {
    const json_value *v = &arr->u.items[i];
    if (v->type == JSON_NULL) return NAN;
    assert_int_equal(v->type, JSON_NUMBER);
    return v->u.num;
}

/* The doubles of a JSON array (null -> NaN), malloc'd; *n receives the count. */
static double *doubles_of(const json_value *arr, int *n) {
    assert_int_equal(arr->type, JSON_ARRAY);
    double *out = malloc((arr->n ? arr->n : 1) * sizeof *out);
    for (uint32_t i = 0; i < arr->n; i++) out[i] = item_num(arr, i);
    *n = (int)arr->n;
    return out;
}

static int *ints_of(const json_value *arr, int *n) {
    assert_int_equal(arr->type, JSON_ARRAY);
    int *out = malloc((arr->n ? arr->n : 1) * sizeof *out);
    for (uint32_t i = 0; i < arr->n; i++) out[i] = (int)item_num(arr, i);
    *n = (int)arr->n;
    return out;
}

static uint64_t hex64(const json_value *v) {
    assert_int_equal(v->type, JSON_STRING);
    return (uint64_t)strtoull(v->u.str, NULL, 16);
}

/* Equal within tol, NaN only where NaN is wanted. */
static int close_or_both_nan(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    return !isnan(got) && fabs(got - want) <= tol;
}

#define assert_close(got, want, what)                                                                      \
    do {                                                                                                   \
        const double g_ = (got), w_ = (want);                                                              \
        if (!close_or_both_nan(g_, w_, TOL)) fprintf(stderr, "%s: got %.17g, want %.17g\n", what, g_, w_); \
        assert_true(close_or_both_nan(g_, w_, TOL));                                                       \
    } while (0)

/* ---- the generator ------------------------------------------------------- */

static void rng_matches_the_reference(void **state) {
    (void)state;
    golden g;
    golden_open(&g);
    const json_value *rng = member(g.doc.root, "rng"), *next = member(rng, "next");
    const uint32_t seeds[3] = {0, 1, 0xFFFFFFFFu};
    const char *names[3] = {"0", "1", "4294967295"};
    for (int s = 0; s < 3; s++) {
        const json_value *want = member(next, names[s]);
        assert_int_equal(want->n, 8);
        alab_rng r;
        alab_rng_seed(&r, seeds[s]);
        for (uint32_t i = 0; i < want->n; i++) assert_true(alab_rng_next(&r) == hex64(&want->u.items[i]));
    }
    /* splitmix64 from state 0: the first output is the published 0xE220A8397B1DCDAF */
    alab_rng r0;
    alab_rng_seed(&r0, 0);
    assert_true(alab_rng_next(&r0) == UINT64_C(0xE220A8397B1DCDAF));
    const json_value *below = member(rng, "below");
    assert_true(below->n >= 4);
    for (uint32_t c = 0; c < below->n; c++) {
        const json_value *bc = &below->u.items[c];
        alab_rng r;
        alab_rng_seed(&r, (uint32_t)num(bc, "seed"));
        const uint32_t n = (uint32_t)num(bc, "n");
        const json_value *vals = member(bc, "values");
        for (uint32_t i = 0; i < vals->n; i++) assert_true(alab_rng_below(&r, n) == (uint32_t)item_num(vals, i));
        /* the state after the draws: the same number of rejections */
        assert_true(r.state == hex64(member(bc, "state_after")));
    }
    golden_close(&g);
}

static void rng_below_stays_in_range_and_rejects(void **state) {
    (void)state;
    /* n = 3 * 2^30: 2^32 mod n = 2^30, so r >= 3 * 2^30 (a quarter of the draws) is rejected */
    const uint32_t n = UINT32_C(3) << 30;
    alab_rng r, twin;
    alab_rng_seed(&r, 42);
    twin = r;
    int rejected = 0;
    for (int i = 0; i < 10000; i++) {
        const uint32_t x = alab_rng_below(&r, n);
        assert_true(x < n);
        /* the same draw by hand from the twin generator */
        uint64_t raw;
        while ((raw = alab_rng_next(&twin) >> 32) >= n) rejected++;
        assert_true(x == (uint32_t)raw);
        assert_true(r.state == twin.state);
    }
    assert_true(rejected > 2000 && rejected < 4500); /* about 10000 / 3 */
    /* n = 1: always 0, one draw; n = 0 (outside the contract): 0, no draw */
    alab_rng_seed(&r, 5);
    twin = r;
    assert_int_equal(alab_rng_below(&r, 1), 0);
    alab_rng_next(&twin);
    assert_true(r.state == twin.state);
    assert_int_equal(alab_rng_below(&r, 0), 0);
    assert_true(r.state == twin.state);
    /* small n: every residue turns up, none out of range */
    int seen[7] = {0};
    for (int i = 0; i < 7000; i++) {
        const uint32_t x = alab_rng_below(&r, 7);
        assert_true(x < 7);
        seen[x]++;
    }
    for (int i = 0; i < 7; i++) assert_true(seen[i] > 800 && seen[i] < 1200);
}

/* ---- the bootstrap -------------------------------------------------------- */

static void bootstrap_on_hand_computed_cases(void **state) {
    (void)state;
    double m, lo, hi;
    /* no values, or only NaN: all three NaN */
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, NULL, 0, 1000, 0.95, 1), ALAB_OK);
    assert_true(isnan(m) && isnan(lo) && isnan(hi));
    const double nans[3] = {NAN, NAN, NAN};
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, nans, 3, 1000, 0.95, 1), ALAB_OK);
    assert_true(isnan(m) && isnan(lo) && isnan(hi));
    /* one value (among NaN): it is the mean and both ends */
    const double one[3] = {NAN, 0.25, NAN};
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, one, 3, 1000, 0.95, 1), ALAB_OK);
    assert_true(m == 0.25 && lo == 0.25 && hi == 0.25);
    /* constant values: every resample mean is the value */
    const double c[6] = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5};
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, c, 6, 500, 0.9, 7), ALAB_OK);
    assert_true(m == 1.5 && lo == 1.5 && hi == 1.5);
    /* NaN entries are skipped: the same draws as without them */
    const double with[6] = {NAN, 1.0, 4.0, NAN, 2.0, 8.0}, without[4] = {1.0, 4.0, 2.0, 8.0};
    double m2, lo2, hi2;
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, with, 6, 1000, 0.95, 3), ALAB_OK);
    assert_int_equal(alab_bootstrap_mean(&m2, &lo2, &hi2, without, 4, 1000, 0.95, 3), ALAB_OK);
    assert_true(m == 3.75 && m2 == 3.75 && lo == lo2 && hi == hi2);
    /* the interval lies inside the values' range and around the mean */
    assert_true(lo >= 1.0 && lo < m && hi > m && hi <= 8.0);
    /* one resample: lo = hi = that resample's mean, drawn by hand from the generator */
    alab_rng r;
    alab_rng_seed(&r, 9);
    double sum = 0.0;
    for (int t = 0; t < 4; t++) sum += without[alab_rng_below(&r, 4)];
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, without, 4, 1, 0.5, 9), ALAB_OK);
    assert_true(lo == sum / 4 && hi == sum / 4);
    /* two resamples: lo and hi interpolate between them (type 7, h = q) */
    alab_rng_seed(&r, 10);
    double b[2];
    for (int k = 0; k < 2; k++) {
        double s = 0.0;
        for (int t = 0; t < 4; t++) s += without[alab_rng_below(&r, 4)];
        b[k] = s / 4;
    }
    const double s0 = fmin(b[0], b[1]), s1 = fmax(b[0], b[1]);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, without, 4, 2, 0.5, 10), ALAB_OK);
    assert_true(fabs(lo - (s0 + 0.25 * (s1 - s0))) < TOL && fabs(hi - (s0 + 0.75 * (s1 - s0))) < TOL);
    /* seeded: the same call gives the same bits, another seed another interval */
    double l3, h3;
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, without, 4, 1000, 0.95, 11), ALAB_OK);
    assert_int_equal(alab_bootstrap_mean(&m, &l3, &h3, without, 4, 1000, 0.95, 11), ALAB_OK);
    assert_true(lo == l3 && hi == h3);
}

static void bootstrap_rejects_bad_arguments(void **state) {
    (void)state;
    double m = 0, lo = 0, hi = 0;
    const double x[3] = {1, 2, 3};
    assert_int_equal(alab_bootstrap_mean(NULL, &lo, &hi, x, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_bootstrap_mean(&m, NULL, &hi, x, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, NULL, x, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, NULL, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_true(isnan(m) && isnan(lo) && isnan(hi)); /* outputs are NaN after an error */
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, -1, 100, 0.95, 1), ALAB_ELIMIT);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, ALAB_EVIDENCE_MAX_N + 1, 100, 0.95, 1), ALAB_ELIMIT);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 0, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, -5, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 1000001, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 100, 0.0, 1), ALAB_ERANGE);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 100, 1.0, 1), ALAB_ERANGE);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 100, -0.5, 1), ALAB_ERANGE);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 100, NAN, 1), ALAB_ERANGE);
    const double inf[3] = {1, INFINITY, 3};
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, inf, 3, 100, 0.95, 1), ALAB_ENAN);
    /* the bounds themselves are allowed */
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 1, 0.95, 1), ALAB_OK);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, 3, 1000000, 0.95, 1), ALAB_OK);
}

static void bootstrap_matches_the_reference(void **state) {
    (void)state;
    golden g;
    golden_open(&g);
    const json_value *cases = member(g.doc.root, "bootstrap");
    assert_true(cases->n >= 5);
    for (uint32_t c = 0; c < cases->n; c++) {
        const json_value *bc = &cases->u.items[c];
        int n;
        double *x = doubles_of(member(bc, "x"), &n);
        double m, lo, hi;
        assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, x, n, (int)num(bc, "n_boot"), num(bc, "level"),
                                             (uint32_t)num(bc, "seed")),
                         ALAB_OK);
        assert_close(m, num(bc, "mean"), "bootstrap mean");
        assert_close(lo, num(bc, "lo"), "bootstrap lo");
        assert_close(hi, num(bc, "hi"), "bootstrap hi");
        free(x);
    }
    golden_close(&g);
}

/* ---- correlations over a set of inputs ----------------------------------- */

static void corr_dataset_matches_the_reference(void **state) {
    (void)state;
    golden g;
    golden_open(&g);
    const json_value *cases = member(g.doc.root, "corr");
    assert_true(cases->n >= 10);
    int saw_kendall = 0, saw_groups = 0, saw_nan_input = 0, saw_floor = 0, saw_mid_p = 0;
    for (uint32_t c = 0; c < cases->n; c++) {
        const json_value *cc = &cases->u.items[c];
        const char *name = member(cc, "name")->u.str;
        int n_off, n_r, n_e, n_g = 0;
        int *offset = ints_of(member(cc, "offset"), &n_off);
        double *reading = doubles_of(member(cc, "reading"), &n_r), *effect = doubles_of(member(cc, "effect"), &n_e);
        const json_value *jg = member(cc, "group");
        int *group = jg->type == JSON_NULL ? NULL : ints_of(jg, &n_g);
        assert_int_equal(n_r, n_e);
        assert_int_equal(offset[n_off - 1], n_r);
        const alab_corr_spec sp = {n_off - 1,         offset, reading, effect, group, (int)num(cc, "stat"),
                                   num(cc, "eps"),    (int)num(cc, "min_points"), (int)num(cc, "n_boot"),
                                   (int)num(cc, "n_perm"), num(cc, "level"), (uint32_t)num(cc, "seed")};
        double *per = malloc((size_t)sp.n_inputs * sizeof *per);
        alab_corr_summary s;
        const int rc = alab_corr_dataset(&s, per, &sp);
        if (rc) fprintf(stderr, "%s: %s: %s\n", name, alab_strerror(rc), alab_last_error());
        assert_int_equal(rc, ALAB_OK);
        const json_value *w = member(cc, "want");
        char what[128];
#define CHECK(field)                                                 \
    snprintf(what, sizeof what, "%s: %s", name, #field);              \
    assert_close(s.field, num(w, #field), what)
        CHECK(mean);
        CHECK(lo);
        CHECK(hi);
        CHECK(null_mean);
        CHECK(null_lo);
        CHECK(null_hi);
        CHECK(p);
        CHECK(p_greater);
#undef CHECK
        assert_int_equal(s.n_defined, (int)num(w, "n_defined"));
        assert_int_equal(s.n_points, (int)num(w, "n_points"));
        assert_int_equal(s.n_above_floor, (int)num(w, "n_above_floor"));
        const json_value *wp = member(cc, "per_input");
        assert_int_equal((int)wp->n, sp.n_inputs);
        for (int k = 0; k < sp.n_inputs; k++) {
            snprintf(what, sizeof what, "%s: per_input[%d]", name, k);
            assert_close(per[k], item_num(wp, (uint32_t)k), what);
            saw_nan_input += isnan(per[k]);
        }
        /* per_input may be NULL: the same summary */
        alab_corr_summary s2;
        assert_int_equal(alab_corr_dataset(&s2, NULL, &sp), ALAB_OK);
        const double f1[8] = {s.mean, s.lo, s.hi, s.null_mean, s.null_lo, s.null_hi, s.p, s.p_greater},
                     f2[8] = {s2.mean, s2.lo, s2.hi, s2.null_mean, s2.null_lo, s2.null_hi, s2.p, s2.p_greater};
        for (int f = 0; f < 8; f++) assert_true(f1[f] == f2[f] || (isnan(f1[f]) && isnan(f2[f])));
        assert_true(s.n_defined == s2.n_defined && s.n_points == s2.n_points && s.n_above_floor == s2.n_above_floor);
        saw_kendall += sp.stat == ALAB_CORR_KENDALL;
        saw_groups += group != NULL;
        saw_floor += s.n_above_floor < s.n_points;
        saw_mid_p += s.p > 0.1 && s.p < 0.99;
        free(offset);
        free(reading);
        free(effect);
        free(group);
        free(per);
    }
    /* the golden covers what the brief asks of it */
    assert_true(saw_kendall >= 3 && saw_groups >= 4 && saw_nan_input >= 4 && saw_floor >= 2 && saw_mid_p >= 2);
    golden_close(&g);
}

/* One input of rows 0..T-1 with points (i, j), j <= i, grouped by row. */
static int fill_rows(double *reading, double *effect, int *group, int T, double (*rd)(int, int, alab_rng *),
                     double (*ef)(int, int, int, alab_rng *), alab_rng *r) {
    int o = 0;
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++, o++) {
            reading[o] = rd(i, j, r);
            effect[o] = ef(i, j, T, r);
            group[o] = i;
        }
    return o;
}

static double unif(alab_rng *r) { return (double)(alab_rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
/* larger in short rows, as uniform-ish attention is: 1 / (i + 1), plus noise far below the rows' gaps */
static double short_rows_larger(int i, int j, alab_rng *r) { return 1.0 / (i + 1) + 1e-6 * unif(r); }
/* a structural zero block: only the last row can have an effect */
static double last_row_only(int i, int j, int T, alab_rng *r) { return i == T - 1 ? 0.1 + unif(r) : 0.0; }

static void within_row_null_absorbs_a_structural_zero_block(void **state) {
    (void)state;
    enum { K = 20, T = 8, P = T * (T + 1) / 2 };
    int offset[K + 1];
    double reading[K * P], effect[K * P];
    int group[K * P];
    alab_rng r;
    alab_rng_seed(&r, 2025);
    offset[0] = 0;
    for (int k = 0; k < K; k++)
        offset[k + 1] = offset[k] + fill_rows(reading + offset[k], effect + offset[k], group + offset[k], T,
                                              short_rows_larger, last_row_only, &r);
    /* pooled over all points the reading "predicts" the effect (negatively: the smallest readings sit in the
     * last row, the only one with effects), and a shuffle across the whole input calls that significant */
    alab_corr_spec sp = {K, offset, reading, effect, NULL, ALAB_CORR_SPEARMAN, 0.0, 4, 1000, 1000, 0.95, 17};
    alab_corr_summary naive, rows;
    assert_int_equal(alab_corr_dataset(&naive, NULL, &sp), ALAB_OK);
    assert_true(naive.mean < -0.5);
    assert_true(naive.hi < 0.0);
    assert_true(naive.p < 0.01);
    assert_true(naive.p_greater > 0.99);
    assert_true(fabs(naive.null_mean) < 0.05);
    /* the within-row null keeps the rows: its null carries the same correlation, and nothing is left */
    sp.group = group;
    assert_int_equal(alab_corr_dataset(&rows, NULL, &sp), ALAB_OK);
    assert_true(fabs(rows.mean - naive.mean) < 1e-15); /* the observed value does not depend on the groups */
    assert_true(rows.null_mean < -0.5);
    assert_true(rows.null_lo <= rows.mean && rows.mean <= rows.null_hi);
    assert_true(rows.p > 0.05);
    fprintf(stderr, "    structural zeros: mean %.3f; shuffle across input: null %.3f p %.4f; within rows: null %.3f p %.3f\n",
            naive.mean, naive.null_mean, naive.p, rows.null_mean, rows.p);
    /* the same with Kendall */
    sp.stat = ALAB_CORR_KENDALL;
    sp.group = NULL;
    assert_int_equal(alab_corr_dataset(&naive, NULL, &sp), ALAB_OK);
    sp.group = group;
    assert_int_equal(alab_corr_dataset(&rows, NULL, &sp), ALAB_OK);
    assert_true(naive.mean < -0.3 && naive.p < 0.01);
    assert_true(rows.p > 0.05);
}

static void corr_dataset_on_hand_computed_cases(void **state) {
    (void)state;
    /* two inputs: one increasing (rho = tau = 1), one with 2 points (excluded at min_points = 3) */
    const int offset[3] = {0, 5, 7};
    const double reading[7] = {0.1, 0.2, 0.3, 0.4, 0.5, 1.0, 2.0};
    const double effect[7] = {0.001, -0.002, 3.0, 4.0, 5.0, 1.0, 0.0};
    alab_corr_spec sp = {2, offset, reading, effect, NULL, ALAB_CORR_SPEARMAN, 0.0, 3, 0, 0, 0.95, 1};
    alab_corr_summary s;
    double per[2];
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    double want;
    assert_int_equal(alab_spearman(&want, reading, effect, 5), ALAB_OK);
    assert_true(per[0] == want && isnan(per[1]));
    assert_true(s.mean == want && isnan(s.lo) && isnan(s.hi) && isnan(s.null_mean) && isnan(s.p) &&
                isnan(s.p_greater));
    assert_true(s.n_defined == 1 && s.n_points == 7 && s.n_above_floor == 7);
    /* eps = 0.01 floors the first two effects to a tie at 0 and the 0.0 of input 2 stays below it */
    sp.eps = 0.01;
    sp.stat = ALAB_CORR_KENDALL;
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    const double floored[5] = {0.0, 0.0, 3.0, 4.0, 5.0};
    assert_int_equal(alab_kendall_tau_b(&want, reading, floored, 5), ALAB_OK);
    assert_true(fabs(per[0] - want) < TOL && s.n_above_floor == 4);
    /* one permutation: null_mean = null_b, so p = (1 + [null_b == mean]) / 2 */
    sp.n_perm = 1;
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    assert_true(s.p == 0.5 || s.p == 1.0);
    assert_true(s.null_mean == s.null_lo && s.null_lo == s.null_hi);
    /* every point in one group of its own: the null can move nothing, so null_b = mean and p = 1 */
    const int solo[7] = {0, 1, 2, 3, 4, 5, 6};
    sp.group = solo;
    sp.n_perm = 50;
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    assert_true(fabs(s.null_mean - s.mean) < 1e-15 && s.null_lo == s.mean && s.null_hi == s.mean);
    assert_true(s.p == 1.0 && s.p_greater == 1.0);
    /* a constant reading side and a constant (floored) effect side: no correlation, NaN everywhere */
    const double flat[7] = {1, 1, 1, 1, 1, 1, 1}, tiny[7] = {1e-3, -1e-3, 0, 2e-3, 0, 0, 0};
    sp.reading = flat;
    sp.n_boot = 100;
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    assert_true(isnan(per[0]) && s.n_defined == 0 && isnan(s.mean) && isnan(s.lo) && isnan(s.p));
    sp.reading = reading;
    sp.effect = tiny;
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    assert_true(isnan(per[0]) && s.n_defined == 0 && s.n_above_floor == 0 && s.n_points == 7);
    /* empty inputs are allowed (no correlation) */
    const int empty[3] = {0, 0, 0};
    sp.offset = empty;
    assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
    assert_true(isnan(per[0]) && isnan(per[1]) && s.n_points == 0 && isnan(s.mean));
}

/* per_input is each input's alab_spearman / alab_kendall_tau_b_ref on the floored effects, with many ties
 * (few levels) and groups in any order; the fast permutation paths (ranks permuted instead of readings, the
 * Fenwick-tree Kendall) are the ones that compute it. */
static void corr_dataset_per_input_equals_the_pairwise_statistics(void **state) {
    (void)state;
    enum { K = 40, MAXP = 60 };
    int offset[K + 1], group[K * MAXP];
    double reading[K * MAXP], effect[K * MAXP], floored[MAXP], per[K];
    alab_rng r;
    alab_rng_seed(&r, 99);
    for (int levels = 2; levels <= 2000; levels *= 10) {
        offset[0] = 0;
        for (int k = 0; k < K; k++) {
            const int n = (int)alab_rng_below(&r, MAXP + 1);
            for (int t = 0; t < n; t++) {
                const int p = offset[k] + t;
                reading[p] = (double)alab_rng_below(&r, (uint32_t)levels) / levels;
                effect[p] = ((double)alab_rng_below(&r, (uint32_t)levels) - 0.5 * levels) / levels + 0.3 * reading[p];
                group[p] = (int)alab_rng_below(&r, 4) - 2;
            }
            offset[k + 1] = offset[k] + n;
        }
        for (int stat = 0; stat < 2; stat++) {
            const alab_corr_spec sp = {K, offset, reading, effect, group, stat, 0.05, 3, 10, 10, 0.95, (uint32_t)levels};
            alab_corr_summary s;
            assert_int_equal(alab_corr_dataset(&s, per, &sp), ALAB_OK);
            for (int k = 0; k < K; k++) {
                const int o0 = offset[k], n = offset[k + 1] - o0;
                for (int t = 0; t < n; t++) floored[t] = fabs(effect[o0 + t]) < 0.05 ? 0.0 : effect[o0 + t];
                double want = NAN;
                if (stat == ALAB_CORR_SPEARMAN) assert_int_equal(alab_spearman(&want, reading + o0, floored, n), ALAB_OK);
                else assert_int_equal(alab_kendall_tau_b_ref(&want, reading + o0, floored, n), ALAB_OK);
                if (n < 3) want = NAN;
                assert_close(per[k], want, stat == ALAB_CORR_SPEARMAN ? "spearman per_input" : "kendall per_input");
            }
        }
    }
}

static void corr_dataset_rejects_bad_arguments(void **state) {
    (void)state;
    const int offset[3] = {0, 3, 6}, group[6] = {0, 0, 1, 0, 1, 1};
    const double reading[6] = {1, 2, 3, 4, 5, 6}, effect[6] = {1, 3, 2, 6, 5, 4};
    const alab_corr_spec ok = {2, offset, reading, effect, group, ALAB_CORR_SPEARMAN, 0.0, 2, 10, 10, 0.95, 1};
    alab_corr_summary s;
    double per[2] = {7, 7};
    assert_int_equal(alab_corr_dataset(&s, per, &ok), ALAB_OK);
    assert_int_equal(alab_corr_dataset(NULL, per, &ok), ALAB_EINVAL);
    assert_int_equal(alab_corr_dataset(&s, per, NULL), ALAB_EINVAL);
    alab_corr_spec b;
#define BAD(field, value, code)                                  \
    do {                                                         \
        b = ok;                                                  \
        b.field = value;                                         \
        per[0] = per[1] = 7;                                     \
        assert_int_equal(alab_corr_dataset(&s, per, &b), code); \
        assert_true(isnan(s.mean) && s.n_points == 0);           \
        assert_true(per[0] == 7 && per[1] == 7);                 \
    } while (0)
    BAD(offset, NULL, ALAB_EINVAL);
    BAD(reading, NULL, ALAB_EINVAL);
    BAD(effect, NULL, ALAB_EINVAL);
    BAD(stat, 2, ALAB_EINVAL);
    BAD(stat, -1, ALAB_EINVAL);
    const int off_start[3] = {1, 3, 6}, off_down[3] = {0, 4, 3};
    BAD(offset, off_start, ALAB_EINVAL);
    BAD(offset, off_down, ALAB_EINVAL);
    BAD(n_inputs, 0, ALAB_ERANGE);
    BAD(n_inputs, -3, ALAB_ERANGE);
    const double nan_r[6] = {1, 2, NAN, 4, 5, 6}, inf_e[6] = {1, 3, 2, 6, INFINITY, 4};
    BAD(reading, nan_r, ALAB_ENAN);
    BAD(effect, inf_e, ALAB_ENAN);
    BAD(min_points, 1, ALAB_ERANGE);
    BAD(n_boot, -1, ALAB_ERANGE);
    BAD(n_boot, 1000001, ALAB_ERANGE);
    BAD(n_perm, -1, ALAB_ERANGE);
    BAD(n_perm, 1000001, ALAB_ERANGE);
    BAD(level, 0.0, ALAB_ERANGE);
    BAD(level, 1.0, ALAB_ERANGE);
    BAD(level, NAN, ALAB_ERANGE);
    BAD(eps, -1e-9, ALAB_ERANGE);
    BAD(eps, NAN, ALAB_ERANGE);
    BAD(eps, INFINITY, ALAB_ERANGE);
#undef BAD
    /* n_boot = n_perm = 0 are allowed (no interval, no null) */
    b = ok;
    b.n_boot = b.n_perm = 0;
    assert_int_equal(alab_corr_dataset(&s, per, &b), ALAB_OK);
    assert_true(!isnan(s.mean) && isnan(s.lo) && isnan(s.hi) && isnan(s.null_mean) && isnan(s.p));
}


/* ---- rank statistics (moved from test_evidence.c with the functions) ---- */

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

/* ---- clustered intervals, paired differences, corrections ---------------- */

/* The reference's numbers within 1e-12 relative: |got - want| <= 1e-12 max(1, |want|). */
static int rel_close(double got, double want) {
    if (isnan(want)) return isnan(got);
    return !isnan(got) && fabs(got - want) <= TOL * fmax(1.0, fabs(want));
}

#define assert_rel(got, want, what)                                                                         \
    do {                                                                                                    \
        const double g_ = (got), w_ = (want);                                                               \
        if (!rel_close(g_, w_)) fprintf(stderr, "%s: got %.17g, want %.17g\n", what, g_, w_);               \
        assert_true(rel_close(g_, w_));                                                                     \
    } while (0)

/* Same bits, or both NaN. */
static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* The cluster ids of a golden case (null: NULL), malloc'd. */
static int *clusters_of(const json_value *c) {
    const json_value *v = member(c, "cluster");
    if (v->type == JSON_NULL) return NULL;
    int n;
    return ints_of(v, &n);
}

static void cluster_bootstrap_unclustered_is_the_bootstrap(void **state) {
    (void)state;
    /* cluster NULL, or every value its own id: alab_bootstrap_mean's numbers, bit for bit */
    double x[40];
    alab_rng r;
    alab_rng_seed(&r, 123);
    for (int i = 0; i < 40; i++) x[i] = (double)alab_rng_below(&r, 1000) / 7.0 - 50.0;
    x[3] = x[17] = NAN;
    int ids[40];
    for (int i = 0; i < 40; i++) ids[i] = 7 * (40 - i) - 100; /* distinct, descending */
    const int sizes[4] = {2, 5, 21, 40};
    const uint32_t seeds[3] = {0, 9, 0xFFFFFFFFu};
    const double levels[2] = {0.95, 0.5};
    const int boots[3] = {1, 2, 1000};
    for (int a = 0; a < 4; a++)
        for (int s = 0; s < 3; s++)
            for (int l = 0; l < 2; l++)
                for (int b = 0; b < 3; b++) {
                    double m0, lo0, hi0, m1, lo1, hi1, m2, lo2, hi2;
                    const int n = sizes[a];
                    assert_int_equal(alab_bootstrap_mean(&m0, &lo0, &hi0, x, n, boots[b], levels[l], seeds[s]), ALAB_OK);
                    assert_int_equal(alab_cluster_bootstrap_mean(&m1, &lo1, &hi1, x, NULL, n, boots[b], levels[l], seeds[s]),
                                     ALAB_OK);
                    assert_int_equal(alab_cluster_bootstrap_mean(&m2, &lo2, &hi2, x, ids, n, boots[b], levels[l], seeds[s]),
                                     ALAB_OK);
                    assert_true(same(m0, m1) && same(lo0, lo1) && same(hi0, hi1));
                    assert_true(same(m0, m2) && same(lo0, lo2) && same(hi0, hi2));
                }
    /* and on the reference's bootstrap cases */
    golden g;
    golden_open(&g);
    const json_value *cases = member(g.doc.root, "bootstrap");
    for (uint32_t c = 0; c < cases->n; c++) {
        const json_value *bc = &cases->u.items[c];
        int n;
        double *v = doubles_of(member(bc, "x"), &n);
        double m0, lo0, hi0, m1, lo1, hi1;
        const int nb = (int)num(bc, "n_boot");
        const double lv = num(bc, "level");
        const uint32_t sd = (uint32_t)num(bc, "seed");
        assert_int_equal(alab_bootstrap_mean(&m0, &lo0, &hi0, v, n, nb, lv, sd), ALAB_OK);
        assert_int_equal(alab_cluster_bootstrap_mean(&m1, &lo1, &hi1, v, NULL, n, nb, lv, sd), ALAB_OK);
        assert_true(same(m0, m1) && same(lo0, lo1) && same(hi0, hi1));
        free(v);
    }
    golden_close(&g);
}

static void cluster_bootstrap_on_hand_computed_cases(void **state) {
    (void)state;
    double m, lo, hi;
    /* two clusters: A = {1, 2} (sum 3, 2 values), B = {4, 8, 16} (sum 28, 3 values); mean 31 / 5.
       A resample of two clusters is AA (3 / 2), BB (56 / 6) or AB / BA (31 / 5). */
    const double x[5] = {1, 4, 2, 8, 16};
    const int id[5] = {10, -3, 10, -3, -3}; /* A appears first: k = 0 is A */
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 5, 1, 0.95, 4), ALAB_OK);
    alab_rng r;
    alab_rng_seed(&r, 4);
    const double s[2] = {3, 28}, c[2] = {2, 3};
    const uint32_t k0 = alab_rng_below(&r, 2), k1 = alab_rng_below(&r, 2);
    assert_true(m == 31.0 / 5.0);
    assert_true(lo == (s[k0] + s[k1]) / (c[k0] + c[k1]) && hi == lo);
    /* many resamples: every statistic is one of the three, so both ends are inside [1.5, 28/3] */
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 5, 2000, 0.95, 1), ALAB_OK);
    assert_true(lo >= 1.5 && hi <= 28.0 / 3.0 && lo < 6.2 && hi > 6.2);
    /* the 0.35 and 0.65 quantiles of {AA: 1/4, AB or BA: 1/2, BB: 1/4} are AB's 31 / 5 */
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 5, 2000, 0.3, 1), ALAB_OK);
    assert_true(lo == 6.2 && hi == 6.2);
    /* no resamples: the mean alone */
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 5, 0, 0.95, 1), ALAB_OK);
    assert_true(m == 6.2 && isnan(lo) && isnan(hi));
    /* one cluster: every resample is all the values */
    const int one[5] = {7, 7, 7, 7, 7};
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, one, 5, 100, 0.95, 1), ALAB_OK);
    assert_true(m == 6.2 && lo == 6.2 && hi == 6.2);
    /* nothing finite */
    const double nans[2] = {NAN, NAN};
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, nans, id, 2, 100, 0.95, 1), ALAB_OK);
    assert_true(isnan(m) && isnan(lo) && isnan(hi));
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, NULL, NULL, 0, 100, 0.95, 1), ALAB_OK);
    assert_true(isnan(m) && isnan(lo) && isnan(hi));
    /* a cluster whose values are all NaN is no cluster: the same draws as without it */
    const double xn[7] = {1, NAN, 4, 2, NAN, 8, 16};
    const int idn[7] = {10, 99, -3, 10, 99, -3, -3};
    double m2, lo2, hi2;
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 5, 999, 0.9, 77), ALAB_OK);
    assert_int_equal(alab_cluster_bootstrap_mean(&m2, &lo2, &hi2, xn, idn, 7, 999, 0.9, 77), ALAB_OK);
    assert_true(m == m2 && lo == lo2 && hi == hi2);
    /* the ids are names: another naming with the same first appearances gives the same bits */
    const int renamed[5] = {-2147483647 - 1, 2147483647, -2147483647 - 1, 2147483647, 2147483647};
    assert_int_equal(alab_cluster_bootstrap_mean(&m2, &lo2, &hi2, x, renamed, 5, 999, 0.9, 77), ALAB_OK);
    assert_true(m == m2 && lo == lo2 && hi == hi2);
    /* constant clusters of equal size: the interval is a point only if every cluster mean is equal */
    const double eq[6] = {2, 2, 2, 2, 2, 2};
    const int ide[6] = {1, 1, 2, 2, 3, 3};
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, eq, ide, 6, 100, 0.95, 5), ALAB_OK);
    assert_true(m == 2 && lo == 2 && hi == 2);
}

static void cluster_bootstrap_rejects_bad_arguments(void **state) {
    (void)state;
    double m = 0, lo = 0, hi = 0;
    const double x[3] = {1, 2, 3};
    const int id[3] = {1, 1, 2};
    assert_int_equal(alab_cluster_bootstrap_mean(NULL, &lo, &hi, x, id, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, NULL, &hi, x, id, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, NULL, x, id, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, NULL, id, 3, 100, 0.95, 1), ALAB_EINVAL);
    assert_true(isnan(m) && isnan(lo) && isnan(hi));
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, -1, 100, 0.95, 1), ALAB_ELIMIT);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, ALAB_EVIDENCE_MAX_N + 1, 100, 0.95, 1), ALAB_ELIMIT);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, -1, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, 1000001, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, 100, 0.0, 1), ALAB_ERANGE);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, 100, 1.0, 1), ALAB_ERANGE);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, 100, NAN, 1), ALAB_ERANGE);
    const double inf[3] = {1, -INFINITY, 3};
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, inf, id, 3, 100, 0.95, 1), ALAB_ENAN);
    assert_true(isnan(m) && isnan(lo) && isnan(hi));
    /* the bounds themselves */
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, 0, 0.95, 1), ALAB_OK);
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, 3, 1000000, 0.95, 1), ALAB_OK);
    assert_true(lo >= 1.0 && hi <= 3.0 && lo < hi);
}

static void cluster_bootstrap_matches_the_reference(void **state) {
    (void)state;
    golden g;
    golden_open(&g);
    const json_value *cases = member(g.doc.root, "cluster_bootstrap");
    assert_true(cases->n >= 6);
    for (uint32_t c = 0; c < cases->n; c++) {
        const json_value *bc = &cases->u.items[c];
        int n;
        double *x = doubles_of(member(bc, "x"), &n);
        int *id = clusters_of(bc);
        double m, lo, hi;
        assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, x, id, n, (int)num(bc, "n_boot"), num(bc, "level"),
                                                     (uint32_t)num(bc, "seed")),
                         ALAB_OK);
        assert_rel(m, num(bc, "mean"), "cluster bootstrap mean");
        assert_rel(lo, num(bc, "lo"), "cluster bootstrap lo");
        assert_rel(hi, num(bc, "hi"), "cluster bootstrap hi");
        free(x);
        free(id);
    }
    golden_close(&g);
}

static void paired_diff_on_hand_computed_cases(void **state) {
    (void)state;
    double o[ALAB_PAIRED_OUT], o2[ALAB_PAIRED_OUT];
    /* x = y: every difference 0, every flip ties: p = 1, the interval the point 0 */
    const double a[4] = {1, 2, 3, 4};
    const int id[4] = {1, 1, 2, 2};
    assert_int_equal(alab_paired_diff(o, a, a, id, 4, 100, 99, 0.95, 1), ALAB_OK);
    assert_true(o[0] == 0 && o[1] == 0 && o[2] == 0 && o[3] == 1.0 && o[4] == 4 && o[5] == 2);
    /* one cluster: a flip only changes the sign, |mean_b| = |mean_d|: p = 1 */
    const double b[4] = {0.5, 0.25, 1.0, 2.0};
    const int one[4] = {3, 3, 3, 3};
    assert_int_equal(alab_paired_diff(o, a, b, one, 4, 100, 50, 0.95, 1), ALAB_OK);
    assert_true(o[0] == (0.5 + 1.75 + 2.0 + 2.0) / 4 && o[1] == o[0] && o[2] == o[0] && o[3] == 1.0 && o[5] == 1);
    /* two clusters of sums s0 = 0.5 + 1.75 = 2.25 and s1 = 2 + 2 = 4: the flips give |+-2.25 +- 4| / 4, which
       reach |mean_d| only for (+, +) and (-, -); so p = (1 + #{same signs}) / (1 + n_perm), counted by hand */
    assert_int_equal(alab_paired_diff(o, a, b, id, 4, 10, 200, 0.95, 8), ALAB_OK);
    alab_rng r;
    alab_rng_seed(&r, 9); /* seed + 1 */
    int count = 0;
    for (int k = 0; k < 200; k++) {
        const uint32_t e0 = alab_rng_below(&r, 2), e1 = alab_rng_below(&r, 2);
        count += e0 == e1;
    }
    assert_true(o[3] == (1.0 + count) / 201.0);
    assert_true(count > 70 && count < 130);
    /* the interval is alab_cluster_bootstrap_mean of the differences, the same draws */
    const double d[4] = {0.5, 1.75, 2.0, 2.0};
    double m, lo, hi;
    assert_int_equal(alab_cluster_bootstrap_mean(&m, &lo, &hi, d, id, 4, 10, 0.95, 8), ALAB_OK);
    assert_true(o[0] == m && o[1] == lo && o[2] == hi);
    /* a NaN on either side drops the pair: the same numbers as without it */
    const double xn[6] = {1, NAN, 2, 3, 4, 9}, yn[6] = {0.5, 1, 0.25, 1, 2, NAN};
    const int idn[6] = {1, 5, 1, 2, 2, 2};
    assert_int_equal(alab_paired_diff(o2, xn, yn, idn, 6, 10, 200, 0.95, 8), ALAB_OK);
    for (int k = 0; k < ALAB_PAIRED_OUT; k++) assert_true(same(o[k], o2[k]));
    /* swapping x and y: the mean changes sign, p is the same (the same draws, |.| symmetric) */
    assert_int_equal(alab_paired_diff(o2, b, a, id, 4, 10, 200, 0.95, 8), ALAB_OK);
    assert_true(o2[0] == -o[0] && o2[3] == o[3] && fabs(o2[1] + o[2]) < TOL && fabs(o2[2] + o[1]) < TOL);
    /* cluster NULL: each pair its own cluster; the interval is alab_bootstrap_mean's */
    assert_int_equal(alab_paired_diff(o, a, b, NULL, 4, 300, 100, 0.9, 2), ALAB_OK);
    assert_int_equal(alab_bootstrap_mean(&m, &lo, &hi, d, 4, 300, 0.9, 2), ALAB_OK);
    assert_true(o[0] == m && o[1] == lo && o[2] == hi && o[4] == 4 && o[5] == 4);
    /* a clear difference over 30 clusters: every flip falls short, p at its floor 1 / (1 + n_perm) */
    double x30[90], y30[90];
    int id30[90];
    for (int i = 0; i < 90; i++) {
        y30[i] = (i % 7) * 0.1;
        x30[i] = y30[i] + 1.0 + 0.01 * (i % 5);
        id30[i] = i / 3;
    }
    assert_int_equal(alab_paired_diff(o, x30, y30, id30, 90, 200, 999, 0.95, 3), ALAB_OK);
    assert_true(o[3] == 1.0 / 1000.0 && o[1] > 1.0 && o[2] < 1.05 && o[4] == 90 && o[5] == 30);
    /* no resamples, no permutations; and no pair at all */
    assert_int_equal(alab_paired_diff(o, a, b, id, 4, 0, 0, 0.95, 3), ALAB_OK);
    assert_true(!isnan(o[0]) && isnan(o[1]) && isnan(o[2]) && isnan(o[3]) && o[4] == 4 && o[5] == 2);
    const double na[2] = {NAN, 1}, nb[2] = {1, NAN};
    assert_int_equal(alab_paired_diff(o, na, nb, NULL, 2, 10, 10, 0.95, 3), ALAB_OK);
    assert_true(isnan(o[0]) && isnan(o[1]) && isnan(o[2]) && isnan(o[3]) && o[4] == 0 && o[5] == 0);
    assert_int_equal(alab_paired_diff(o, NULL, NULL, NULL, 0, 10, 10, 0.95, 3), ALAB_OK);
    assert_true(isnan(o[0]) && o[4] == 0);
}

static void paired_diff_rejects_bad_arguments(void **state) {
    (void)state;
    double o[ALAB_PAIRED_OUT];
    const double x[3] = {1, 2, 3}, y[3] = {0, 1, 1};
    assert_int_equal(alab_paired_diff(NULL, x, y, NULL, 3, 10, 10, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_paired_diff(o, NULL, y, NULL, 3, 10, 10, 0.95, 1), ALAB_EINVAL);
    assert_true(isnan(o[0]) && isnan(o[3]) && o[4] == 0 && o[5] == 0);
    assert_int_equal(alab_paired_diff(o, x, NULL, NULL, 3, 10, 10, 0.95, 1), ALAB_EINVAL);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, -1, 10, 10, 0.95, 1), ALAB_ELIMIT);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, ALAB_EVIDENCE_MAX_N + 1, 10, 10, 0.95, 1), ALAB_ELIMIT);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, -1, 10, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, 10, -1, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, 1000001, 10, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, 10, 1000001, 0.95, 1), ALAB_ERANGE);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, 10, 10, 1.5, 1), ALAB_ERANGE);
    const double inf[3] = {1, INFINITY, 3}, big[3] = {1, 1.7e308, 3}, nbig[3] = {0, -1.7e308, 1};
    assert_int_equal(alab_paired_diff(o, inf, y, NULL, 3, 10, 10, 0.95, 1), ALAB_ENAN);
    assert_int_equal(alab_paired_diff(o, x, inf, NULL, 3, 10, 10, 0.95, 1), ALAB_ENAN);
    assert_int_equal(alab_paired_diff(o, big, nbig, NULL, 3, 10, 10, 0.95, 1), ALAB_ENAN); /* overflows */
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, 1000000, 0, 0.95, 1), ALAB_OK);
    assert_int_equal(alab_paired_diff(o, x, y, NULL, 3, 0, 1000000, 0.95, 1), ALAB_OK);
    assert_true(o[3] > 0.2 && o[3] <= 1.0);
}

static void paired_diff_matches_the_reference(void **state) {
    (void)state;
    golden g;
    golden_open(&g);
    const json_value *cases = member(g.doc.root, "paired");
    assert_true(cases->n >= 5);
    for (uint32_t c = 0; c < cases->n; c++) {
        const json_value *pc = &cases->u.items[c];
        int n, ny, no;
        double *x = doubles_of(member(pc, "x"), &n), *y = doubles_of(member(pc, "y"), &ny);
        double *want = doubles_of(member(pc, "out"), &no);
        assert_int_equal(n, ny);
        assert_int_equal(no, ALAB_PAIRED_OUT);
        int *id = clusters_of(pc);
        double o[ALAB_PAIRED_OUT];
        assert_int_equal(alab_paired_diff(o, x, y, id, n, (int)num(pc, "n_boot"), (int)num(pc, "n_perm"), num(pc, "level"),
                                          (uint32_t)num(pc, "seed")),
                         ALAB_OK);
        for (int k = 0; k < ALAB_PAIRED_OUT; k++) assert_rel(o[k], want[k], "paired diff");
        assert_true(same(o[3], want[3])); /* p is a count: exact */
        free(x);
        free(y);
        free(want);
        free(id);
    }
    golden_close(&g);
}

static void holm_on_hand_computed_cases(void **state) {
    (void)state;
    /* sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06 */
    double p[4] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    assert_int_equal(alab_holm(adj, p, 4), ALAB_OK);
    const double want[4] = {0.03, 0.06, 0.06, 0.02};
    for (int i = 0; i < 4; i++) assert_true(fabs(adj[i] - want[i]) < 1e-15);
    assert_true(adj[0] == 3 * 0.01 && adj[3] == 4 * 0.005 && adj[2] == 2 * 0.03 && adj[1] == adj[2]);
    /* in place */
    assert_int_equal(alab_holm(p, p, 4), ALAB_OK);
    for (int i = 0; i < 4; i++) assert_true(p[i] == adj[i]);
    /* NaN stays NaN and is not counted: m = 3 */
    const double q[5] = {0.2, NAN, 0.01, 0.5, NAN};
    double aq[5];
    assert_int_equal(alab_holm(aq, q, 5), ALAB_OK);
    assert_true(aq[2] == 3 * 0.01 && aq[0] == 2 * 0.2 && aq[3] == 0.5 && isnan(aq[1]) && isnan(aq[4]));
    /* capped at 1; ties get one value; 0 stays 0 */
    const double t[5] = {0.5, 0.0, 0.25, 0.5, 1.0};
    double at[5];
    assert_int_equal(alab_holm(at, t, 5), ALAB_OK);
    assert_true(at[1] == 0.0 && at[2] == 1.0 && at[0] == 1.0 && at[3] == 1.0 && at[4] == 1.0);
    const double t2[3] = {0.01, 0.01, 0.01};
    double a2[3];
    assert_int_equal(alab_holm(a2, t2, 3), ALAB_OK);
    assert_true(a2[0] == 0.03 && a2[1] == 0.03 && a2[2] == 0.03);
    /* one p: itself; none: nothing */
    const double one = 0.3;
    double a1 = 0;
    assert_int_equal(alab_holm(&a1, &one, 1), ALAB_OK);
    assert_true(a1 == 0.3);
    assert_int_equal(alab_holm(NULL, NULL, 0), ALAB_OK);
    /* errors: adjusted untouched */
    double keep[2] = {7, 7};
    const double bad[2] = {0.1, 1.5}, neg[2] = {-0.01, 0.5}, inf[2] = {0.1, INFINITY};
    assert_int_equal(alab_holm(keep, bad, 2), ALAB_ERANGE);
    assert_int_equal(alab_holm(keep, neg, 2), ALAB_ERANGE);
    assert_int_equal(alab_holm(keep, inf, 2), ALAB_ENAN);
    assert_true(keep[0] == 7 && keep[1] == 7);
    assert_int_equal(alab_holm(NULL, bad, 2), ALAB_EINVAL);
    assert_int_equal(alab_holm(keep, NULL, 2), ALAB_EINVAL);
    assert_int_equal(alab_holm(keep, bad, -1), ALAB_ELIMIT);
    assert_int_equal(alab_holm(keep, bad, ALAB_EVIDENCE_MAX_N + 1), ALAB_ELIMIT);
}

static void partial_spearman_on_hand_computed_cases(void **state) {
    (void)state;
    double rho;
    /* ranks x 0..4, y (0,1,2,4,3), z (1,2,3,4,0): sum d^2 = 2, 20, 12, so r_xy = 1 - 6*2/120 = 0.9, r_xz = 0,
       r_yz = 0.4; rho = 0.9 / sqrt(1 - 0.16) */
    const double x[5] = {1, 2, 3, 4, 5}, y[5] = {0, 1, 2, 4, 3}, z[5] = {1, 2, 3, 4, 0};
    assert_int_equal(alab_partial_spearman(&rho, x, y, z, 5), ALAB_OK);
    assert_true(fabs(rho - 0.9 / sqrt(0.84)) < 1e-14);
    /* it is the formula of alab_spearman's three rhos */
    double a = 0, b = 0, c = 0;
    assert_int_equal(alab_spearman(&a, x, y, 5), ALAB_OK);
    assert_int_equal(alab_spearman(&b, x, z, 5), ALAB_OK);
    assert_int_equal(alab_spearman(&c, y, z, 5), ALAB_OK);
    assert_true(rho == (a - b * c) / sqrt((1 - b * b) * (1 - c * c)));
    /* the ranks, not the values: a monotone map of any side changes nothing */
    const double x2[5] = {-10, 0.1, 0.2, 99, 1e6}, z2[5] = {exp(1), exp(2), exp(3), exp(4), exp(0)};
    double rho2;
    assert_int_equal(alab_partial_spearman(&rho2, x2, y, z2, 5), ALAB_OK);
    assert_true(rho2 == rho);
    /* x and y swapped: the same */
    assert_int_equal(alab_partial_spearman(&rho2, y, x, z, 5), ALAB_OK);
    assert_true(rho2 == rho);
    /* undefined: z ranks x perfectly, a constant side, fewer than 2 values */
    const double k[5] = {4, 4, 4, 4, 4};
    assert_int_equal(alab_partial_spearman(&rho, x, y, x, 5), ALAB_OK);
    assert_true(isnan(rho));
    assert_int_equal(alab_partial_spearman(&rho, x, y, k, 5), ALAB_OK);
    assert_true(isnan(rho));
    assert_int_equal(alab_partial_spearman(&rho, k, y, z, 5), ALAB_OK);
    assert_true(isnan(rho));
    assert_int_equal(alab_partial_spearman(&rho, x, y, z, 1), ALAB_OK);
    assert_true(isnan(rho));
    assert_int_equal(alab_partial_spearman(&rho, NULL, NULL, NULL, 0), ALAB_EINVAL);
    /* errors */
    const double nan5[5] = {1, 2, NAN, 4, 5};
    assert_int_equal(alab_partial_spearman(&rho, x, y, nan5, 5), ALAB_ENAN);
    assert_int_equal(alab_partial_spearman(&rho, nan5, y, z, 5), ALAB_ENAN);
    assert_int_equal(alab_partial_spearman(NULL, x, y, z, 5), ALAB_EINVAL);
    assert_int_equal(alab_partial_spearman(&rho, x, y, NULL, 5), ALAB_EINVAL);
    assert_int_equal(alab_partial_spearman(&rho, x, y, z, -1), ALAB_ELIMIT);
}

static void quantiles_on_hand_computed_cases(void **state) {
    (void)state;
    const double x[4] = {3, NAN, 1, 2}, q[5] = {0, 0.5, 0.25, 1, 0.9};
    double out[5];
    /* sorted 1, 2, 3 (N = 3): h = 2q */
    assert_int_equal(alab_quantiles(out, x, 4, q, 5), ALAB_OK);
    assert_true(out[0] == 1 && out[1] == 2 && out[2] == 1.5 && out[3] == 3 && fabs(out[4] - 2.8) < 1e-15);
    /* one value: every quantile; none: NaN */
    const double one[2] = {NAN, 5};
    assert_int_equal(alab_quantiles(out, one, 2, q, 5), ALAB_OK);
    for (int k = 0; k < 5; k++) assert_true(out[k] == 5);
    assert_int_equal(alab_quantiles(out, one, 1, q, 5), ALAB_OK);
    for (int k = 0; k < 5; k++) assert_true(isnan(out[k]));
    assert_int_equal(alab_quantiles(out, NULL, 0, q, 2), ALAB_OK);
    assert_true(isnan(out[0]) && isnan(out[1]));
    assert_int_equal(alab_quantiles(NULL, x, 4, NULL, 0), ALAB_OK);
    /* errors */
    const double bad_q[2] = {0.5, 1.01}, nan_q[1] = {NAN}, inf[2] = {1, -INFINITY};
    assert_int_equal(alab_quantiles(out, x, 4, bad_q, 2), ALAB_ERANGE);
    assert_int_equal(alab_quantiles(out, x, 4, nan_q, 1), ALAB_ERANGE);
    assert_int_equal(alab_quantiles(out, inf, 2, q, 1), ALAB_ENAN);
    assert_int_equal(alab_quantiles(out, NULL, 4, q, 1), ALAB_EINVAL);
    assert_int_equal(alab_quantiles(NULL, x, 4, q, 1), ALAB_EINVAL);
    assert_int_equal(alab_quantiles(out, x, 4, NULL, 1), ALAB_EINVAL);
    assert_int_equal(alab_quantiles(out, x, -1, q, 1), ALAB_ELIMIT);
    assert_int_equal(alab_quantiles(out, x, 4, q, ALAB_EVIDENCE_MAX_N + 1), ALAB_ELIMIT);
}

static void holm_partial_quantiles_match_the_reference(void **state) {
    (void)state;
    golden g;
    golden_open(&g);
    const json_value *hs = member(g.doc.root, "holm");
    assert_true(hs->n >= 5);
    for (uint32_t c = 0; c < hs->n; c++) {
        int n, nw;
        double *p = doubles_of(member(&hs->u.items[c], "p"), &n), *want = doubles_of(member(&hs->u.items[c], "adjusted"), &nw);
        assert_int_equal(n, nw);
        double *adj = malloc((n ? n : 1) * sizeof *adj);
        assert_int_equal(alab_holm(adj, p, n), ALAB_OK);
        for (int i = 0; i < n; i++) assert_rel(adj[i], want[i], "holm");
        free(p);
        free(want);
        free(adj);
    }
    const json_value *ps = member(g.doc.root, "partial_spearman");
    assert_true(ps->n >= 5);
    for (uint32_t c = 0; c < ps->n; c++) {
        const json_value *pc = &ps->u.items[c];
        int n, ny, nz;
        double *x = doubles_of(member(pc, "x"), &n), *y = doubles_of(member(pc, "y"), &ny), *z = doubles_of(member(pc, "z"), &nz);
        assert_true(n == ny && n == nz);
        double rho;
        assert_int_equal(alab_partial_spearman(&rho, x, y, z, n), ALAB_OK);
        assert_rel(rho, num(pc, "rho"), "partial spearman");
        free(x);
        free(y);
        free(z);
    }
    const json_value *qs = member(g.doc.root, "quantiles");
    assert_true(qs->n >= 4);
    for (uint32_t c = 0; c < qs->n; c++) {
        const json_value *qc = &qs->u.items[c];
        int n, nq, nw;
        double *x = doubles_of(member(qc, "x"), &n), *q = doubles_of(member(qc, "q"), &nq), *want = doubles_of(member(qc, "out"), &nw);
        assert_int_equal(nq, nw);
        double out[16];
        assert_true(nq <= 16);
        assert_int_equal(alab_quantiles(out, x, n, q, nq), ALAB_OK);
        for (int k = 0; k < nq; k++) assert_rel(out[k], want[k], "quantile");
        free(x);
        free(q);
        free(want);
    }
    golden_close(&g);
}

/* L = 2 layers of one head, T = 2: A = [[1, 0], [0.6, 0.4]], so Ã = [[1, 0], [0.3, 0.7]]. */
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spearman_on_hand_computed_cases),
        cmocka_unit_test(kendall_on_hand_computed_cases),
        cmocka_unit_test(fast_kendall_equals_the_pair_count_with_ties),
        cmocka_unit_test(top_k_overlap_counts_shared_members),
        cmocka_unit_test(rng_matches_the_reference),
        cmocka_unit_test(rng_below_stays_in_range_and_rejects),
        cmocka_unit_test(bootstrap_on_hand_computed_cases),
        cmocka_unit_test(bootstrap_rejects_bad_arguments),
        cmocka_unit_test(bootstrap_matches_the_reference),
        cmocka_unit_test(corr_dataset_matches_the_reference),
        cmocka_unit_test(within_row_null_absorbs_a_structural_zero_block),
        cmocka_unit_test(corr_dataset_on_hand_computed_cases),
        cmocka_unit_test(corr_dataset_per_input_equals_the_pairwise_statistics),
        cmocka_unit_test(corr_dataset_rejects_bad_arguments),
        cmocka_unit_test(cluster_bootstrap_unclustered_is_the_bootstrap),
        cmocka_unit_test(cluster_bootstrap_on_hand_computed_cases),
        cmocka_unit_test(cluster_bootstrap_rejects_bad_arguments),
        cmocka_unit_test(cluster_bootstrap_matches_the_reference),
        cmocka_unit_test(paired_diff_on_hand_computed_cases),
        cmocka_unit_test(paired_diff_rejects_bad_arguments),
        cmocka_unit_test(paired_diff_matches_the_reference),
        cmocka_unit_test(holm_on_hand_computed_cases),
        cmocka_unit_test(partial_spearman_on_hand_computed_cases),
        cmocka_unit_test(quantiles_on_hand_computed_cases),
        cmocka_unit_test(holm_partial_quantiles_match_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
