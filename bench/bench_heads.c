/* bench_heads.c — time of the head-importance grid (1 + L*NH forwards with
 * their next-token loss) and of the pruning curve (L*NH + 1 more) on a model
 * directory, for the first T tokens of a text file. Native; the wasm twin is
 * bench/bench_heads.mjs.
 *   build: gcc -O3 -march=native -std=c11 -D_POSIX_C_SOURCE=200809L -Ic/include -Ic/src \
 *            bench/bench_heads.c build/libattnlab.a -lm -o build/bench/bench_heads
 *   run:   build/bench/bench_heads [model_dir] [text_file] [T]      */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attnlab.h"
#include "bench_util.h"
#include "io.h"

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "models/brown-gpt2";
    const char *txt = argc > 2 ? argv[2] : "models/brown-gpt2/heldout_sample.txt";
    int T = argc > 3 ? atoi(argv[3]) : 100;
    alab_model *m = NULL;
    int rc = alab_model_load_dir(&m, dir);
    if (rc) { fprintf(stderr, "load %s: %s (%s)\n", dir, alab_strerror(rc), alab_last_error()); return 1; }
    size_t len = 0;
    char *text = NULL;
    if (alab_read_whole_file(&text, &len, txt, UINT64_MAX, 0)) { fprintf(stderr, "%s\n", alab_last_error()); return 1; }
    int *ids = malloc(sizeof(int) * (len + 1)), n = 0;
    rc = alab_bpe_encode(ids, (int)len + 1, &n, alab_model_bpe(m), text, len);
    if (rc || n < T) { fprintf(stderr, "encode: %d tokens (%d)\n", n, rc); return 1; }
    const alab_config *c = alab_model_config(m);
    const int LH = c->n_layer * c->n_head;
    float *delta = malloc(sizeof(float) * LH), *curve = malloc(sizeof(float) * (LH + 1));
    int *order = malloc(sizeof(int) * LH);
    enum { REPS = 5 };
    double fwd[REPS], fwdnll[REPS], grid[REPS], prune[REPS], base = 0.0, s;
    int cnt;
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ms();
        alab_forward(m, ids, T, NULL);
        double t1 = now_ms();
        alab_result_nll(&s, &cnt, m);
        double t2 = now_ms();
        if ((rc = alab_head_importance(delta, &base, m, ids, T))) break;
        double t3 = now_ms();
        if ((rc = alab_pruning_curve(curve, order, m, ids, T, delta))) break;
        double t4 = now_ms();
        fwd[r] = t1 - t0; fwdnll[r] = t2 - t0; grid[r] = t3 - t2; prune[r] = t4 - t3;
    }
    if (rc) { fprintf(stderr, "heads: %s (%s)\n", alab_strerror(rc), alab_last_error()); return 1; }
    qsort(fwd, REPS, sizeof(double), cmp_d);
    qsort(fwdnll, REPS, sizeof(double), cmp_d);
    qsort(grid, REPS, sizeof(double), cmp_d);
    qsort(prune, REPS, sizeof(double), cmp_d);
    printf("model %s: L=%d NH=%d C=%d V=%d, T=%d, median of %d\n", dir, c->n_layer, c->n_head,
           c->n_embd, c->vocab_size, T, REPS);
    printf("one forward %.2f ms; forward + loss %.2f ms\n", fwd[REPS / 2], fwdnll[REPS / 2]);
    printf("importance grid (%d runs) %.1f ms; pruning curve (%d runs) %.1f ms\n", 1 + LH,
           grid[REPS / 2], LH + 1, prune[REPS / 2]);
    printf("base loss %.4f, loss at half (k=%d) %.4f, all heads removed %.4f\n", base, LH / 2,
           curve[LH / 2], curve[LH]);
    free(delta); free(curve); free(order); free(ids); free(text);
    alab_model_free(m);
    return 0;
}
