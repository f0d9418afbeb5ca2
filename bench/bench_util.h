/* bench_util.h — what the native C benchmarks share: the wall clock and the order of a median.
 * Included as "bench_util.h" from bench/, so the benchmarks' build lines need no flag for it. */
#ifndef ALAB_BENCH_UTIL_H
#define ALAB_BENCH_UTIL_H

#include <time.h>

/* Monotonic wall time in ms. */
static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qsort's ascending order of doubles. */
static inline int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
