/* bench_backward.c — one backward pass (c/src/backward.c) against one forward pass, natively, A B A B
 * interleaved so a slow stretch of the machine falls on both: per round a plain alab_forward (A), then
 * alab_tape_forward (the forward that keeps the tape) and alab_backward of the logit difference of two tokens
 * (B), every gradient part asked for; medians over the rounds.
 *   build/bench/bench_backward MODEL_DIR [rounds] [T] [threads]   (default: 15 rounds, T = 128, 1 thread) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "attnlab.h"
#include "bench_util.h"

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof(double), cmp_d);
    return x[n / 2];
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL_DIR [rounds] [T] [threads]\n", argv[0]);
        return 2;
    }
    const int rounds = argc > 2 ? atoi(argv[2]) : 15, T = argc > 3 ? atoi(argv[3]) : 128;
    const int threads = argc > 4 ? atoi(argv[4]) : 1;
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, argv[1]);
    if (!rc && threads > 1) rc = alab_model_set_threads(m, threads);
    if (rc) {
        fprintf(stderr, "load: %s: %s\n", alab_strerror(rc), alab_last_error());
        return 1;
    }
    const alab_config *c = alab_model_config(m);
    int *ids = malloc((size_t)T * sizeof(int));
    for (int t = 0; t < T; t++) ids[t] = (t * 7919 + 13) % c->vocab_size;
    size_t off[ALAB_GRAD_PARTS + 1];
    if ((rc = alab_grad_layout(off, m, T, ALAB_GRAD_ALL))) {
        fprintf(stderr, "layout: %s\n", alab_last_error());
        return 1;
    }
    float *g = malloc(off[ALAB_GRAD_PARTS] * sizeof(float));
    double *fw = malloc((size_t)rounds * sizeof(double)), *tf = malloc((size_t)rounds * sizeof(double));
    double *bw = malloc((size_t)rounds * sizeof(double)), *both = malloc((size_t)rounds * sizeof(double));
    size_t tape_bytes = 0;
    for (int r = -1; r < rounds; r++) { /* round -1: warm-up */
        double t0 = now_ms();
        rc = alab_forward(m, ids, T, NULL);
        double t1 = now_ms();
        alab_tape *tp = NULL;
        if (!rc) rc = alab_tape_forward(&tp, m, ids, T, NULL);
        double t2 = now_ms();
        double v;
        if (!rc) rc = alab_backward(g, off[ALAB_GRAD_PARTS], &v, m, tp, ALAB_METRIC_LOGIT_DIFF, 1, 2, ALAB_GRAD_ALL);
        double t3 = now_ms();
        tape_bytes = alab_tape_bytes(tp);
        alab_tape_free(tp);
        if (rc) {
            fprintf(stderr, "run: %s: %s\n", alab_strerror(rc), alab_last_error());
            return 1;
        }
        if (r < 0) continue;
        fw[r] = t1 - t0;
        tf[r] = t2 - t1;
        bw[r] = t3 - t2;
        both[r] = t3 - t1;
    }
    printf("model %s: L=%d NH=%d C=%d V=%d, T=%d, %d thread(s), %d rounds A B A B; tape %.1f MB, gradient block %.1f MB\n",
           argv[1], c->n_layer, c->n_head, c->n_embd, c->vocab_size, T, threads, rounds, tape_bytes / 1048576.0,
           off[ALAB_GRAD_PARTS] * 4 / 1048576.0);
    const double f = median(fw, rounds), a = median(tf, rounds), b = median(bw, rounds), ab = median(both, rounds);
    printf("| forward (A) | tape forward | backward | tape forward + backward (B) | backward / forward | B / A |\n"
           "|---|---|---|---|---|---|\n| %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.2f | %.2f |\n",
           f, a, b, ab, b / f, ab / f);
    free(g);
    free(fw);
    free(tf);
    free(bw);
    free(both);
    free(ids);
    alab_model_free(m);
    return 0;
}
