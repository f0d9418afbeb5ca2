/* bench_circuits.c — issue 35's speed targets, natively: path patching of every sender head into one receiver's
 * three inputs (q, k, v of the induction head L1H0) over N pairs, and the pattern/value grids (both directions)
 * over the same pairs, on a model directory. The pairs file has one pair a line: "T a b clean[0..T) corrupt[0..T)"
 * (bench/bench_circuits.mjs writes the built-in induction-prev pairs). Medians of RUNS runs, A B A B.
 *   build: gcc -O3 -march=native -std=c11 -pthread -Ic/include bench/bench_circuits.c build/libattnlab.a -lm -o build/bench/bench_circuits
 *   run:   build/bench/bench_circuits model_dir pairs.txt RUNS THREADS            */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnlab.h"
#include "bench_util.h"

typedef struct { int T, a, b, clean[256], corrupt[256]; } pair;

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: bench_circuits model_dir pairs.txt RUNS THREADS\n"); return 2; }
    const int runs = atoi(argv[3]), threads = atoi(argv[4]);
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, argv[1]);
    if (rc) { fprintf(stderr, "load: %s\n", alab_last_error()); return 1; }
    if ((rc = alab_model_set_threads(m, threads))) { fprintf(stderr, "threads: %s\n", alab_last_error()); return 1; }
    FILE *f = fopen(argv[2], "r");
    if (!f) { perror(argv[2]); return 1; }
    pair *P = calloc(1000, sizeof *P);
    int n = 0;
    while (n < 1000 && fscanf(f, "%d %d %d", &P[n].T, &P[n].a, &P[n].b) == 3) {
        if (P[n].T < 1 || P[n].T > 256) return 1;
        for (int t = 0; t < P[n].T; t++) if (fscanf(f, "%d", &P[n].clean[t]) != 1) return 1;
        for (int t = 0; t < P[n].T; t++) if (fscanf(f, "%d", &P[n].corrupt[t]) != 1) return 1;
        n++;
    }
    fclose(f);
    const alab_config *c = alab_model_config(m);
    const int LH = c->n_layer * c->n_head;
    float *out = malloc((size_t)6 * LH * sizeof *out);
    const alab_path_receiver recv[3] = {{1, 0, ALAB_PATH_Q}, {1, 0, ALAB_PATH_K}, {1, 0, ALAB_PATH_V}};
    double *tp = malloc((size_t)runs * sizeof *tp), *tv = malloc((size_t)runs * sizeof *tv), lc, ld;
    for (int r = 0; r < runs; r++) {
        double t0 = now_ms();
        for (int k = 0; k < n; k++)
            if ((rc = alab_path_patching(out, &lc, &ld, m, P[k].clean, P[k].corrupt, P[k].T, P[k].a, P[k].b, recv, 3, ALAB_DENOISE, 0)) && rc != ALAB_EINVAL) {
                fprintf(stderr, "path: %s\n", alab_last_error());
                return 1;
            }
        tp[r] = now_ms() - t0;
        t0 = now_ms();
        for (int k = 0; k < n; k++)
            if ((rc = alab_pattern_value_patching(out, &lc, &ld, m, P[k].clean, P[k].corrupt, P[k].T, P[k].a, P[k].b)) && rc != ALAB_EINVAL) {
                fprintf(stderr, "pattern/value: %s\n", alab_last_error());
                return 1;
            }
        tv[r] = now_ms() - t0;
    }
    qsort(tp, (size_t)runs, sizeof *tp, cmp_d);
    qsort(tv, (size_t)runs, sizeof *tv, cmp_d);
    printf("{\"pairs\":%d,\"threads\":%d,\"runs\":%d,\"path_ms\":%.1f,\"pattern_value_ms\":%.1f}\n", n, threads, runs,
           tp[runs / 2], tv[runs / 2]);
    free(P); free(out); free(tp); free(tv);
    alab_model_free(m);
    return 0;
}
