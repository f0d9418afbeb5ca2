/* jobs.h — work split over a model's thread pool (jobs.c). The split itself
 * (alab_split, the part a thread takes) is parallel.h's. */
#ifndef ALAB_JOBS_H
#define ALAB_JOBS_H

#include "internal.h"
#include "parallel.h"

/* The parts a job of madds multiply-adds is split into: 1 without a pool or
 * below its minimum work, else every thread of the pool. */
int alab_parts_for(const alab_model *m, double madds);
/* fn over `parts` parts (1: on the caller alone); the code of a helper that
 * failed is left in m->pool_rc for the run to return. */
void alab_run_job(alab_model *m, int parts, alab_job_fn fn, void *ctx);

#endif
