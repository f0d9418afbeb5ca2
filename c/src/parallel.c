/* parallel.c — the thread pool of parallel.h: one job at a time, split into
 * one part per thread, the caller taking part 0.
 *
 * Reads top to bottom: waiting primitives (the only platform #ifs) → the pool
 * → the helper's loop → running a job.
 *
 * Protocol (all in the pool struct, so on wasm it lives in shared memory):
 *   gen        job counter. The caller stores fn, ctx, nparts and remaining,
 *              then increments gen (release); a helper that sees gen change
 *              (acquire) runs its part and decrements remaining (release).
 *   remaining  helper parts of the current job not yet done; the caller's
 *              acquire load of 0 makes every helper's writes visible.
 *   sleepers   helpers asleep (or about to sleep) on gen, so the caller makes
 *              the wake-up call only when somebody sleeps. Helper: sleepers++
 *              then futex-wait(gen == seen); caller: gen++ then load sleepers.
 *              Both sequentially consistent, so either the caller sees the
 *              sleeper and wakes it, or the sleeper's futex sees the new gen.
 *   waiting    the same for the caller asleep on remaining.
 * A job that cannot use every helper (they are not all attached yet) runs as
 * one part on the caller and does not touch gen. */
#if !defined(__EMSCRIPTEN__) && defined(__linux__)
#define _GNU_SOURCE /* syscall(2) for the futex */
#endif
#include "parallel.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "simd.h"

/* ------------------------------------------------------------------------ */
/* Waiting: futex on Linux, memory.atomic.wait32 on wasm                      */
/* ------------------------------------------------------------------------ */

#if defined(__EMSCRIPTEN__)
#define POOL_WASM 1
#if defined(__EMSCRIPTEN_PTHREADS__)
#define POOL_HAS_THREADS 1 /* shared memory: helpers can attach from JS */
#endif
#else
#define POOL_NATIVE 1
#define POOL_HAS_THREADS 1
#include <pthread.h>
#include <sched.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif
#endif

/* Spins before a helper sleeps: about 0.1-0.3 ms, longer than the serial
 * stretches between two products of a layer, much shorter than a pause of
 * the reader. A spin on wasm is one atomic load (no pause instruction). */
#ifndef ALAB_POOL_SPIN
#if defined(POOL_WASM)
#define ALAB_POOL_SPIN 100000
#else
#define ALAB_POOL_SPIN 2000
#endif
#endif

/* On wasm the caller never sleeps while its helpers finish, it spins: a
 * browser's main thread may not block at all, and in Node 20 (V8 11.3) a
 * caller that slept in memory.atomic.wait32 with a timeout went on, in about
 * one first run in three, with results that did not match (the helpers' part
 * of the product not yet there, although remaining read 0); with a spinning
 * caller, none in 26 fresh instances and 200 further runs (and
 * tests/js/threads.test.js checks the first runs of fresh instances). The wait is only the imbalance between equal
 * parts, so the spin costs little. Helpers do sleep (an untimed wait). */
#if defined(POOL_WASM)
#define POOL_CALLER_SPINS_ONLY 1
#else
#define POOL_CALLER_SPINS_ONLY 1
#endif

/* Sleep while *addr == expected, at most timeout_ns (< 0: no limit). May
 * return early (spuriously); callers re-check. */
static void os_wait(_Atomic int *addr, int expected, long long timeout_ns) {
#if defined(POOL_WASM) && defined(POOL_HAS_THREADS)
    __builtin_wasm_memory_atomic_wait32((int *)addr, expected, timeout_ns);
#elif defined(POOL_NATIVE) && defined(__linux__)
    struct timespec ts, *tp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
        ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
        tp = &ts;
    }
    syscall(SYS_futex, (int *)addr, FUTEX_WAIT_PRIVATE, expected, tp, NULL, 0);
#elif defined(POOL_NATIVE)
    (void)addr, (void)expected, (void)timeout_ns;
    sched_yield();
#else
    (void)addr, (void)expected, (void)timeout_ns;
#endif
}

static void os_wake(_Atomic int *addr, int count) {
#if defined(POOL_WASM) && defined(POOL_HAS_THREADS)
    __builtin_wasm_memory_atomic_notify((int *)addr, (unsigned)count);
#elif defined(POOL_NATIVE) && defined(__linux__)
    syscall(SYS_futex, (int *)addr, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
#else
    (void)addr, (void)count;
#endif
}

/* ------------------------------------------------------------------------ */
/* The pool                                                                   */
/* ------------------------------------------------------------------------ */

/* The words helpers spin on get cache lines of their own. */
#define POOL_LINE 64
struct alab_pool {
    _Alignas(POOL_LINE) _Atomic int gen;
    _Atomic int sleepers;
    _Atomic int stop;
    _Alignas(POOL_LINE) _Atomic int remaining;
    _Atomic int waiting;
    _Atomic int failed;
    _Alignas(POOL_LINE) _Atomic int attached;
    int n;                /* threads, the caller included */
    int nparts;           /* of the current job */
    double min_work;
    alab_job_fn fn;       /* the current job */
    void *ctx;
#if defined(POOL_NATIVE)
    pthread_t threads[ALAB_MAX_THREADS];
    int started;
#endif
#if defined(POOL_WASM) && defined(POOL_HAS_THREADS)
    void *tls[ALAB_MAX_THREADS];   /* each helper's thread-local block */
#endif
};

/* The default of alab_pool_set_min_work: 2^17 multiply-adds (about 5 us of
 * SIMD128 work). A hand-off costs about 1 us while the helpers spin; with 2
 * threads, splitting every product was as fast as any threshold up to 2^21 on
 * the built-in model and distilgpt2 (docs/BENCHMARKS.md, "Two threads"), so
 * the threshold only keeps the tiniest products (the lineage-sized models) on
 * one thread. */
#define POOL_MIN_WORK 131072.0

#if defined(POOL_NATIVE)
typedef struct {
    alab_pool *p;
    int tid;
} helper_arg;

static void *native_helper(void *arg) {
    helper_arg a = *(helper_arg *)arg;
    free(arg);
    alab_pool_helper(a.p, a.tid);
    return NULL;
}
#endif

int alab_pool_create(alab_pool **out, int n_threads, int start_threads) {
    if (!out) return alab_fail(ALAB_EINVAL, "alab_pool_create: NULL out");
    *out = NULL;
    if (n_threads < 1 || n_threads > ALAB_MAX_THREADS)
        return alab_fail(ALAB_ERANGE, "threads must be in [1, %d] (got %d)", ALAB_MAX_THREADS, n_threads);
#if !defined(POOL_NATIVE)
    if (start_threads && n_threads > 1)
        return alab_fail(ALAB_EINVAL, "this build cannot start threads itself: its helpers are Web Workers started by the JS layer");
#endif
    alab_pool *p = aligned_alloc(POOL_LINE, (sizeof *p + POOL_LINE - 1) / POOL_LINE * POOL_LINE);
    if (!p) return alab_fail(ALAB_ENOMEM, "out of memory");
    memset(p, 0, sizeof *p);
    p->n = n_threads;
    p->min_work = POOL_MIN_WORK;
#if defined(POOL_WASM) && defined(POOL_HAS_THREADS)
    {
        const size_t align = __builtin_wasm_tls_align(), size = __builtin_wasm_tls_size();
        for (int t = 1; t < n_threads && size > 0; t++) {
            size_t bytes = (size + align - 1) / align * align;
            if (!(p->tls[t] = aligned_alloc(align, bytes))) {
                alab_pool_free(p);
                return alab_fail(ALAB_ENOMEM, "out of memory for thread-local storage");
            }
        }
    }
#endif
#if defined(POOL_NATIVE)
    for (int t = 1; t < n_threads && start_threads; t++) {
        helper_arg *a = malloc(sizeof *a);
        if (a) *a = (helper_arg){p, t};
        if (!a || pthread_create(&p->threads[t], NULL, native_helper, a) != 0) {
            free(a);
            alab_pool_free(p);
            return alab_fail(ALAB_EIO, "could not start thread %d of %d", t, n_threads);
        }
        p->started = t;
    }
#else
    (void)start_threads;
#endif
    *out = p;
    return ALAB_OK;
}

void alab_pool_stop(alab_pool *p) {
    if (!p) return;
    atomic_store(&p->stop, 1);
    atomic_fetch_add(&p->gen, 1);
    os_wake(&p->gen, INT_MAX);
}

void alab_pool_free(alab_pool *p) {
    if (!p) return;
    alab_pool_stop(p);
#if defined(POOL_NATIVE)
    for (int t = 1; t <= p->started; t++) pthread_join(p->threads[t], NULL);
#endif
#if defined(POOL_WASM) && defined(POOL_HAS_THREADS)
    for (int t = 1; t < p->n; t++) free(p->tls[t]);
#endif
    free(p);
}

int alab_pool_size(const alab_pool *p) { return p ? p->n : 1; }
int alab_pool_attached(const alab_pool *p) { return p ? atomic_load(&((alab_pool *)p)->attached) : 0; }
int alab_pool_parts(const alab_pool *p) {
    if (!p || p->n <= 1) return 1;
    return atomic_load(&((alab_pool *)p)->attached) == p->n - 1 ? p->n : 1;
}
void alab_pool_set_min_work(alab_pool *p, double madds) { if (p) p->min_work = madds > 0 ? madds : 0; }
double alab_pool_min_work(const alab_pool *p) { return p ? p->min_work : POOL_MIN_WORK; }

void alab_pool_mark_failed(alab_pool *p) {
    if (!p) return;
    atomic_store(&p->failed, 1);
    os_wake(&p->remaining, INT_MAX);
}

/* ------------------------------------------------------------------------ */
/* A helper's loop                                                            */
/* ------------------------------------------------------------------------ */

#if defined(POOL_WASM) && defined(POOL_HAS_THREADS)
void __wasm_init_tls(void *memory); /* the linker's: points this instance's __tls_base at memory */
#endif

void alab_pool_helper(alab_pool *p, int tid) {
#if !defined(POOL_HAS_THREADS)
    (void)p, (void)tid; /* a build without shared memory has no helpers */
#else
    if (!p || tid < 1 || tid >= p->n) return;
#if defined(POOL_WASM)
    if (p->tls[tid]) __wasm_init_tls(p->tls[tid]);
#endif
    /* Jobs use the helpers only once all are attached, so no job this helper
     * must take can have been published before this load. */
    int seen = atomic_load(&p->gen);
    atomic_fetch_add(&p->attached, 1);
    for (;;) {
        int g, spins = 0;
        while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen) {
            if (atomic_load(&p->stop)) goto out; /* stopped before this helper saw any job */
            if (++spins < ALAB_POOL_SPIN) {
                alab_cpu_relax();
                continue;
            }
            atomic_fetch_add(&p->sleepers, 1);
            os_wait(&p->gen, seen, -1);
            atomic_fetch_sub(&p->sleepers, 1);
        }
        if (atomic_load(&p->stop)) break;
        seen = g;
        if (tid < p->nparts) p->fn(p->ctx, tid, p->nparts);
        if (atomic_fetch_sub_explicit(&p->remaining, 1, memory_order_acq_rel) == 1 && atomic_load(&p->waiting))
            os_wake(&p->remaining, 1);
    }
out:
    atomic_fetch_sub(&p->attached, 1);
#endif
}

/* ------------------------------------------------------------------------ */
/* Running a job                                                              */
/* ------------------------------------------------------------------------ */

int alab_pool_run(alab_pool *p, alab_job_fn fn, void *ctx) {
    if (p && atomic_load(&p->failed))
        return alab_fail(ALAB_ETHREAD, "a helper thread of this model has failed; load the model again");
    const int n = alab_pool_parts(p);
    if (n <= 1) {
        fn(ctx, 0, 1);
        return ALAB_OK;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->nparts = n;
    atomic_store(&p->remaining, n - 1);
    atomic_fetch_add(&p->gen, 1); /* publishes the job (seq_cst: see the protocol above) */
    if (atomic_load(&p->sleepers)) os_wake(&p->gen, INT_MAX);
    fn(ctx, 0, n);
    int r, spins = 0;
    while ((r = atomic_load_explicit(&p->remaining, memory_order_acquire)) > 0) {
        if (atomic_load(&p->failed))
            return alab_fail(ALAB_ETHREAD, "a helper thread of this model failed during a run; load the model again");
        if (++spins < ALAB_POOL_SPIN || POOL_CALLER_SPINS_ONLY) {
            alab_cpu_relax();
            continue;
        }
        atomic_fetch_add(&p->waiting, 1);
        os_wait(&p->remaining, r, 1000000); /* 1 ms at most, to look at failed again */
        atomic_fetch_sub(&p->waiting, 1);
    }
    return ALAB_OK;
}
