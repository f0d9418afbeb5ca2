/* parallel.h — a fixed team of threads that runs one job at a time (internal).
 *
 * A job is fn(ctx, part, nparts) for part in [0, nparts): the calling thread
 * runs part 0, helper thread `tid` runs part tid. Jobs are synchronous:
 * alab_pool_run returns when every part is done. The forward pass splits its
 * big products by output columns (and attention by heads), so every output
 * value is computed by exactly the same instructions whatever the number of
 * parts: a threaded run is bit-for-bit the single-threaded one.
 *
 * Two ways to get helpers, one loop:
 *   native   alab_pool_create(&p, n, 1) starts n-1 pthreads that run
 *            alab_pool_helper(p, tid) until alab_pool_free;
 *   wasm     alab_pool_create(&p, n, 0) only allocates; the JS layer starts
 *            n-1 Web Workers (or Node worker_threads) on the same shared
 *            WebAssembly.Memory, and each calls alab_pool_helper(p, tid)
 *            through the export alab_wasm_pool_helper (c/src/wasm_api.c).
 * Until all n-1 helpers have entered their loop a job runs as one part on the
 * caller, so a helper that never starts can slow a run but never hang it.
 *
 * What a job may do: run kernels on memory the caller owns. It must not
 * malloc, print, call alab_fail or touch errno: on wasm a helper is not a
 * pthread of libc's (only its stack and TLS block are its own).
 *
 * Waiting: helpers spin for a while after a job (the next one usually follows
 * within microseconds), then sleep on a futex (memory.atomic.wait32 on wasm).
 * The caller spins while the helpers finish (natively it sleeps after a
 * while; on wasm it only spins, see parallel.c).
 * A helper that dies (a trap in its worker) is reported with
 * alab_pool_mark_failed: a waiting caller then returns ALAB_ETHREAD instead
 * of spinning for ever, and so does every later run. */
#ifndef ALAB_PARALLEL_H
#define ALAB_PARALLEL_H

#include <stddef.h>

#define ALAB_MAX_THREADS 16

typedef void (*alab_job_fn)(void *ctx, int part, int nparts);
typedef struct alab_pool alab_pool;

/* A pool of n_threads (1..ALAB_MAX_THREADS, the caller included). With
 * start_threads, n_threads-1 native threads are started (ALAB_EINVAL on wasm,
 * where helpers come from JS). ALAB_ERANGE / ALAB_ENOMEM / ALAB_EIO (a thread
 * could not be created). */
int alab_pool_create(alab_pool **out, int n_threads, int start_threads);
/* Stops the helpers (joins native ones) and frees the pool. A wasm pool
 * that has helpers is only stopped (alab_pool_stop): their workers may still
 * be leaving its loop, and it goes with its instance's memory. */
void alab_pool_free(alab_pool *p);
void alab_pool_stop(alab_pool *p);

/* The number of parts a job is split into now: n_threads once every helper is
 * in its loop, else 1. 1 for NULL. */
int alab_pool_parts(const alab_pool *p);
int alab_pool_size(const alab_pool *p);     /* n_threads; 1 for NULL */
int alab_pool_attached(const alab_pool *p); /* helpers in their loop */

/* Runs fn on every part and waits. ALAB_OK, or ALAB_ETHREAD if a helper died.
 * Not reentrant: one caller at a time, and fn must not call it. */
int alab_pool_run(alab_pool *p, alab_job_fn fn, void *ctx);

/* The loop of helper tid (1..n_threads-1): returns after alab_pool_stop. */
void alab_pool_helper(alab_pool *p, int tid);
void alab_pool_mark_failed(alab_pool *p);

/* Work below this many multiply-adds runs on the caller alone: waking the
 * helpers costs more than it saves. Tests set 0 to force every split. */
void alab_pool_set_min_work(alab_pool *p, double madds);
double alab_pool_min_work(const alab_pool *p);

/* Units [*lo, *hi) of n that part `part` of `nparts` takes: contiguous, in
 * order, sizes differing by at most one. */
static inline void alab_split(int *lo, int *hi, int n, int part, int nparts) {
    *lo = (int)((long long)n * part / nparts);
    *hi = (int)((long long)n * (part + 1) / nparts);
}

#endif
