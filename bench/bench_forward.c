/* bench_forward.c — prefill time of the native forward pass (all attentions
 * captured), median of N runs after a warm-up, for a list of T.
 *   build/bench_forward MODEL_DIR [runs] [T ...]   (default: 15 runs, T = 11 128) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnlab.h"
#include "bench_util.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL_DIR [runs] [T ...]\n", argv[0]);
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 15;
    int Ts_default[] = {11, 128}, nT = argc > 3 ? argc - 3 : 2;
    int *Ts = argc > 3 ? malloc((size_t)nT * sizeof(int)) : Ts_default;
    for (int i = 0; argc > 3 && i < nT; i++) Ts[i] = atoi(argv[3 + i]);

    double t0 = now_ms();
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, argv[1]);
    if (rc) {
        fprintf(stderr, "load: %s: %s\n", alab_strerror(rc), alab_last_error());
        return 1;
    }
    double load_ms = now_ms() - t0;
    const alab_config *c = alab_model_config(m);
    printf("model %s: L=%d NH=%d C=%d V=%d; load %.1f ms\n", argv[1], c->n_layer, c->n_head, c->n_embd,
           c->vocab_size, load_ms);
    printf("| T | median ms | min ms | runs |\n|---|---|---|---|\n");
    for (int ti = 0; ti < nT; ti++) {
        int T = Ts[ti];
        int *ids = malloc((size_t)T * sizeof(int));
        for (int t = 0; t < T; t++) ids[t] = (t * 7919 + 13) % c->vocab_size;
        double *ms = malloc((size_t)runs * sizeof(double));
        alab_forward(m, ids, T, NULL); /* warm-up */
        for (int r = 0; r < runs; r++) {
            double a = now_ms();
            rc = alab_forward(m, ids, T, NULL);
            ms[r] = now_ms() - a;
            if (rc) {
                fprintf(stderr, "forward: %s\n", alab_last_error());
                return 1;
            }
        }
        qsort(ms, (size_t)runs, sizeof(double), cmp_d);
        printf("| %d | %.2f | %.2f | %d |\n", T, ms[runs / 2], ms[0], runs);
        free(ms);
        free(ids);
    }
    alab_model_free(m);
    return 0;
}
