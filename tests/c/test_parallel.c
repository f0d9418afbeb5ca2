/* test_parallel.c — the thread pool (c/src/parallel.c) and the threaded forward pass (issue 8):
 * every part of every job runs exactly once; the column parts of the packed and the nt matmul
 * add up to the whole product bit for bit; a forward, a generation and a loss with 2, 3 or 4
 * threads (every split forced, and at the default threshold) are bit for bit the one-thread
 * numbers, with every kind of intervention; a dead helper makes the run fail with
 * ALAB_ETHREAD instead of hanging; thread counts out of range get their codes.
 * Run under ThreadSanitizer by `make test-tsan`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "internal.h"
#include "ops.h"
#include "parallel.h"
#include "testutil.h"

/* ---- the pool ------------------------------------------------------------ */

typedef struct {
    _Atomic int hits[ALAB_MAX_THREADS];
    _Atomic int bad;
    int expect_parts;
} count_job;

static void count_part(void *ctx, int part, int nparts) {
    count_job *j = ctx;
    if (nparts != j->expect_parts || part < 0 || part >= nparts) atomic_fetch_add(&j->bad, 1);
    else atomic_fetch_add(&j->hits[part], 1);
}

static void every_part_of_every_job_runs_exactly_once(void **state) {
    (void)state;
    for (int n = 1; n <= 5; n++) {
        alab_pool *p = NULL;
        assert_int_equal(alab_pool_create(&p, n, 1), ALAB_OK);
        assert_int_equal(alab_pool_size(p), n);
        while (alab_pool_parts(p) != n) /* helpers attach as they start */
            ;
        count_job j = {.expect_parts = n};
        const int jobs = 2000;
        for (int k = 0; k < jobs; k++) assert_int_equal(alab_pool_run(p, count_part, &j), ALAB_OK);
        assert_int_equal(atomic_load(&j.bad), 0);
        for (int t = 0; t < n; t++) assert_int_equal(atomic_load(&j.hits[t]), jobs);
        alab_pool_free(p);
    }
}

/* Jobs after the helpers went to sleep (longer than their spin) still run on every thread. */
static void sleeping_helpers_wake_for_the_next_job(void **state) {
    (void)state;
    alab_pool *p = NULL;
    assert_int_equal(alab_pool_create(&p, 3, 1), ALAB_OK);
    while (alab_pool_parts(p) != 3)
        ;
    count_job j = {.expect_parts = 3};
    for (int k = 0; k < 5; k++) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        assert_int_equal(alab_pool_run(p, count_part, &j), ALAB_OK);
    }
    for (int t = 0; t < 3; t++) assert_int_equal(atomic_load(&j.hits[t]), 5);
    alab_pool_free(p);
}

/* A pool made without threads (the wasm way, before its workers attach) runs on the caller. */
static void a_pool_without_attached_helpers_runs_on_the_caller(void **state) {
    (void)state;
    alab_pool *p = NULL;
    assert_int_equal(alab_pool_create(&p, 4, 0), ALAB_OK);
    assert_int_equal(alab_pool_parts(p), 1);
    count_job j = {.expect_parts = 1};
    assert_int_equal(alab_pool_run(p, count_part, &j), ALAB_OK);
    assert_int_equal(atomic_load(&j.hits[0]), 1);
    assert_int_equal(atomic_load(&j.bad), 0);
    alab_pool_free(p);
}

static void bad_pool_sizes_get_their_codes(void **state) {
    (void)state;
    alab_pool *p = (alab_pool *)1;
    assert_int_equal(alab_pool_create(&p, 0, 1), ALAB_ERANGE);
    assert_null(p);
    assert_int_equal(alab_pool_create(&p, ALAB_MAX_THREADS + 1, 1), ALAB_ERANGE);
    assert_int_equal(alab_pool_create(NULL, 2, 1), ALAB_EINVAL);
    assert_int_equal(alab_pool_parts(NULL), 1);
}

/* ---- the kernels' parts ------------------------------------------------------ */

static float urand(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((*s >> 40) & 0xffffff) / 16777216.0f - 0.5f;
}

static void fill(float *x, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++) x[i] = urand(&seed);
}

static void the_column_parts_of_a_product_add_up_to_it_bit_for_bit(void **state) {
    (void)state;
    const int Ts[] = {1, 2, 3, 5, 17, 70};
    const int Cs[] = {1, 7, 256, 300};
    const int OCs[] = {1, 3, 8, 13, 40, 97, 773};
    for (size_t a = 0; a < sizeof Ts / sizeof *Ts; a++)
        for (size_t b = 0; b < sizeof Cs / sizeof *Cs; b++)
            for (size_t c = 0; c < sizeof OCs / sizeof *OCs; c++) {
                const int T = Ts[a], C = Cs[b], OC = OCs[c];
                float *inp = malloc((size_t)T * C * 4), *w = malloc((size_t)C * OC * 4), *wp = malloc((size_t)C * OC * 4);
                float *bias = malloc((size_t)OC * 4), *whole = malloc((size_t)T * OC * 4), *parts = malloc((size_t)T * OC * 4);
                float *wnt = malloc((size_t)OC * C * 4);
                fill(inp, (size_t)T * C, 1 + a);
                fill(w, (size_t)C * OC, 2 + b);
                fill(wnt, (size_t)OC * C, 3 + c);
                fill(bias, (size_t)OC, 4);
                matmul_pack_weights(wp, w, C, OC);
                matmul_packed_forward(whole, inp, wp, bias, T, C, OC);
                for (int n = 1; n <= 5; n++) {
                    memset(parts, 0xff, (size_t)T * OC * 4); /* NaN: a column no part writes shows */
                    for (int p = n - 1; p >= 0; p--) matmul_packed_forward_part(parts, inp, wp, bias, T, C, OC, p, n);
                    assert_memory_equal(whole, parts, (size_t)T * OC * 4);
                }
                matmul_nt_forward(whole, inp, wnt, T, C, OC);
                for (int n = 1; n <= 5; n++) {
                    memset(parts, 0xff, (size_t)T * OC * 4);
                    for (int p = 0; p < n; p++) matmul_nt_forward_part(parts, inp, wnt, T, C, OC, p, n);
                    assert_memory_equal(whole, parts, (size_t)T * OC * 4);
                }
                free(inp), free(w), free(wp), free(bias), free(whole), free(parts), free(wnt);
            }
}

/* ---- the model -------------------------------------------------------------- */

typedef struct {
    float *att, *logits, *q, *k;
    size_t n_att;
    int T;
} snapshot;

static void take(snapshot *s, const alab_model *m, int with_qk) {
    const alab_config *c = alab_model_config(m);
    const int T = alab_result_T(m), HS = c->n_embd / c->n_head;
    s->T = T;
    s->n_att = (size_t)c->n_layer * c->n_head * T * T;
    s->att = malloc(s->n_att * 4);
    s->logits = malloc((size_t)c->vocab_size * 4);
    memcpy(s->att, alab_result_attention(m), s->n_att * 4);
    memcpy(s->logits, alab_result_logits(m), (size_t)c->vocab_size * 4);
    s->q = s->k = NULL;
    if (with_qk) {
        s->q = malloc((size_t)T * HS * 4);
        s->k = malloc((size_t)T * HS * 4);
        memcpy(s->q, alab_result_q(m), (size_t)T * HS * 4);
        memcpy(s->k, alab_result_k(m), (size_t)T * HS * 4);
    }
}

static void drop(snapshot *s) { free(s->att), free(s->logits), free(s->q), free(s->k); }

/* The runs each comparison makes: plain, every kind of intervention, other masks, a capture. */
static int setup_run(int which, alab_run_opts *o, alab_intervention *iv, int *layer_mask, int L, int T) {
    alab_run_opts_init(o);
    switch (which) {
    case 0: return 0;
    case 1:
        iv[0] = (alab_intervention){ALAB_DO_HARD, L - 1, ALAB_ALL_HEADS, T - 1, T > 1 ? 1 : 0, 0};
        iv[1] = (alab_intervention){ALAB_DO_SOFT, 0, 1, T - 1, 0, 3.5f};
        iv[2] = (alab_intervention){ALAB_ABLATE, L > 1 ? 1 : 0, 2, 0, 0, 0};
        iv[3] = (alab_intervention){ALAB_SCALE_Q, 0, 0, 0, 0, 0.0f, 0.5f};
        iv[4] = (alab_intervention){ALAB_SWAP_QK, L - 1, 3, 0, 0, 0};
        o->interventions = iv;
        o->n_interventions = 5;
        o->capture_layer = L - 1;
        o->capture_head = 1;
        return 1;
    case 2: o->mask = ALAB_MASK_FULL; return 0;
    case 3:
        for (int l = 0; l < L; l++) layer_mask[l] = l % 2 ? ALAB_MASK_WINDOW : ALAB_MASK_CAUSAL;
        o->layer_mask = layer_mask;
        o->window = 3;
        o->scale_override = 1;
        o->scale = 0.25f;
        return 0;
    default: return 0;
    }
}

static void compare_threads(const char *rel, double min_work) {
    alab_model *m = load_model(rel);
    const alab_config *c = alab_model_config(m);
    const int L = c->n_layer, V = c->vocab_size, Ts[] = {1, 4, 9, c->n_positions < 64 ? c->n_positions : 64};
    int ids[64], layer_mask[ALAB_MAX_LAYERS];
    alab_intervention iv[8];
    for (int t = 0; t < 64; t++) ids[t] = (t * 7919 + 13) % V;
    for (size_t a = 0; a < sizeof Ts / sizeof *Ts; a++) {
        const int T = Ts[a];
        for (int which = 0; which < 4; which++) {
            alab_run_opts o;
            snapshot one, many;
            assert_int_equal(alab_model_set_threads(m, 1), ALAB_OK);
            int qk = setup_run(which, &o, iv, layer_mask, L, T);
            assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
            take(&one, m, qk);
            double nll1 = 0, nlln = 0;
            int n1 = 0, nn = 0;
            if (T > 1) assert_int_equal(alab_result_nll(&nll1, &n1, m), ALAB_OK);
            for (int threads = 2; threads <= 4; threads++) {
                assert_int_equal(alab_model_set_threads(m, threads), ALAB_OK);
                alab_pool_set_min_work(alab_model_pool(m), min_work);
                while (alab_model_threads(m) != threads)
                    ;
                assert_int_equal(alab_forward(m, ids, T, &o), ALAB_OK);
                take(&many, m, qk);
                assert_memory_equal(one.att, many.att, one.n_att * 4);
                assert_memory_equal(one.logits, many.logits, (size_t)V * 4);
                if (qk) {
                    const int HS = c->n_embd / c->n_head;
                    assert_memory_equal(one.q, many.q, (size_t)T * HS * 4);
                    assert_memory_equal(one.k, many.k, (size_t)T * HS * 4);
                }
                if (T > 1) {
                    assert_int_equal(alab_result_nll(&nlln, &nn, m), ALAB_OK);
                    assert_int_equal(n1, nn);
                    assert_true(nll1 == nlln);
                }
                drop(&many);
            }
            drop(&one);
        }
    }
    alab_model_free(m);
}

static void threaded_runs_are_bit_for_bit_one_thread_runs_on_the_tiny_model(void **state) {
    (void)state;
    compare_threads("tests/fixtures/tiny", 0);
    compare_threads("tests/fixtures/tiny-f16", 0);
}

static void threaded_runs_are_bit_for_bit_one_thread_runs_on_the_builtin_model(void **state) {
    (void)state;
    compare_threads("models/brown-gpt2", 0);       /* every product split */
    compare_threads("models/brown-gpt2", 131072.0); /* the default threshold: some split, some not */
}

static void threaded_generation_gives_the_same_tokens(void **state) {
    (void)state;
    alab_model *m = load_model("models/brown-gpt2");
    int ids[5] = {464, 6388, 13, 262, 4074}, a[40], b[40], na = 0, nb = 0;
    uint64_t ra = 7, rb = 7;
    assert_int_equal(alab_generate(a, &na, m, ids, 5, 40, 0.9f, 20, &ra), ALAB_OK);
    assert_int_equal(alab_model_set_threads(m, 3), ALAB_OK);
    alab_pool_set_min_work(alab_model_pool(m), 0);
    while (alab_model_threads(m) != 3)
        ;
    assert_int_equal(alab_generate(b, &nb, m, ids, 5, 40, 0.9f, 20, &rb), ALAB_OK);
    assert_int_equal(na, 40);
    assert_int_equal(nb, 40);
    assert_memory_equal(a, b, sizeof a);
    assert_true(ra == rb);
    alab_model_free(m);
}

static void a_dead_helper_fails_the_run_with_ethread_instead_of_hanging(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    int ids[6] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(alab_model_set_threads(m, 2), ALAB_OK);
    alab_pool_set_min_work(alab_model_pool(m), 0);
    while (alab_model_threads(m) != 2)
        ;
    assert_int_equal(alab_forward(m, ids, 6, NULL), ALAB_OK);
    alab_pool_mark_failed(alab_model_pool(m)); /* what thread.js does when its helper traps */
    assert_int_equal(alab_forward(m, ids, 6, NULL), ALAB_ETHREAD);
    assert_int_equal(alab_result_T(m), 0); /* no half-made result */
    assert_null(alab_result_logits(m));
    assert_true(strstr(alab_last_error(), "helper thread") != NULL);
    /* a fresh pool works again */
    assert_int_equal(alab_model_set_threads(m, 1), ALAB_OK);
    assert_int_equal(alab_forward(m, ids, 6, NULL), ALAB_OK);
    alab_model_free(m);
}

static void thread_counts_out_of_range_get_their_codes(void **state) {
    (void)state;
    alab_model *m = load_model("tests/fixtures/tiny");
    assert_int_equal(alab_model_threads(m), 1);
    assert_int_equal(alab_model_set_threads(m, 0), ALAB_ERANGE);
    assert_int_equal(alab_model_set_threads(m, 17), ALAB_ERANGE);
    assert_int_equal(alab_model_set_threads(NULL, 2), ALAB_EINVAL);
    assert_int_equal(alab_model_set_threads(m, 2), ALAB_OK);
    assert_int_equal(alab_model_set_threads(m, 2), ALAB_OK); /* the same count keeps the pool */
    assert_int_equal(alab_model_set_threads(m, 1), ALAB_OK);
    assert_int_equal(alab_model_threads(m), 1);
    assert_string_equal(alab_strerror(ALAB_ETHREAD), "a helper thread failed");
    alab_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_part_of_every_job_runs_exactly_once),
        cmocka_unit_test(sleeping_helpers_wake_for_the_next_job),
        cmocka_unit_test(a_pool_without_attached_helpers_runs_on_the_caller),
        cmocka_unit_test(bad_pool_sizes_get_their_codes),
        cmocka_unit_test(the_column_parts_of_a_product_add_up_to_it_bit_for_bit),
        cmocka_unit_test(threaded_runs_are_bit_for_bit_one_thread_runs_on_the_tiny_model),
        cmocka_unit_test(threaded_runs_are_bit_for_bit_one_thread_runs_on_the_builtin_model),
        cmocka_unit_test(threaded_generation_gives_the_same_tokens),
        cmocka_unit_test(a_dead_helper_fails_the_run_with_ethread_instead_of_hanging),
        cmocka_unit_test(thread_counts_out_of_range_get_their_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
