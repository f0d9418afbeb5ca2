/* jobs.c — a model's thread pool (parallel.c) as its runs use it: the pool
 * the model owns or is lent, how many parts a piece of work is worth, and one
 * job run in that many parts. forward.c, attention.c and evidence.c split
 * their big products through alab_parts_for and alab_run_job. */
#include "jobs.h"
#include "model.h"

/* ---- the model's pool ----------------------------------------------------------- */

int alab_model_set_threads(alab_model *m, int n) {
    if (!m) return alab_fail(ALAB_EINVAL, "alab_model_set_threads: NULL model");
    if (n < 1 || n > ALAB_MAX_THREADS)
        return alab_fail(ALAB_ERANGE, "threads must be in [1, %d] (got %d)", ALAB_MAX_THREADS, n);
    if (m->owns_pool && alab_pool_size(m->pool) == n) return ALAB_OK;
    alab_pool *p = NULL;
    if (n > 1) {
        int rc = alab_pool_create(&p, n, 1);
        if (rc) return rc;
    }
    if (m->owns_pool) alab_pool_free(m->pool);
    m->pool = p;
    m->owns_pool = p != NULL;
    return ALAB_OK;
}

int alab_model_threads(const alab_model *m) { return m ? alab_pool_parts(m->pool) : 0; }

void alab_model_attach_pool(alab_model *m, alab_pool *p) {
    if (!m) return;
    if (m->owns_pool) alab_pool_free(m->pool);
    m->pool = p;
    m->owns_pool = 0;
}

alab_pool *alab_model_pool(const alab_model *m) { return m ? m->pool : NULL; }

/* ---- jobs ------------------------------------------------------------------------ */
/* Every split hands each output value to exactly one part, computed by the
 * same instructions as in the single-threaded kernel: a run is bit for bit
 * the same with any number of threads (tests/c/test_parallel.c). */

int alab_parts_for(const alab_model *m, double madds) {
    if (!m->pool || madds < alab_pool_min_work(m->pool)) return 1;
    return alab_pool_parts(m->pool);
}

void alab_run_job(alab_model *m, int parts, alab_job_fn fn, void *ctx) {
    if (parts <= 1) fn(ctx, 0, 1);
    else {
        int rc = alab_pool_run(m->pool, fn, ctx);
        if (rc != ALAB_OK) m->pool_rc = rc;
    }
}
