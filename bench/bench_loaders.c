/* bench_loaders.c — load time of the tables a model file can make large (issue 21), for docs/BENCHMARKS.md:
 *   a safetensors header of N zero-size tensors (st_parse: JSON, entries, the duplicate check on the sorted
 *   name index, the overlap check) and a JSON object of N distinct keys (json_parse, with its duplicate-key
 *   check), for N from 10 000 to 1 000 000. Prints N, the median of RUNS timings in ms, and ns per entry:
 *   linear time shows as a flat ns/entry column (n log n as a slow rise).
 *     bench_loaders [RUNS=5] [MAX_N=1000000] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "internal.h"
#include "json.h"
#include "safetensors.h"

/* "{"t0":{...},"t1":{...},...}" behind its 8-byte length: a safetensors file with no data. */
static uint8_t *st_file_of(int n, size_t *len) {
    size_t cap = (size_t)n * 64 + 64, k = 8;
    uint8_t *b = malloc(cap);
    b[k++] = '{';
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf((char *)b + k, cap - k, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
                              i ? "," : "", i);
    b[k++] = '}';
    uint64_t h = k - 8;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(h >> (8 * i));
    *len = k;
    return b;
}

/* {"k0":0,"k1":1,...}: a vocab.json-like object. */
static char *object_of(int n, size_t *len) {
    size_t cap = (size_t)n * 24 + 8, k = 0;
    char *b = malloc(cap);
    b[k++] = '{';
    for (int i = 0; i < n; i++) k += (size_t)snprintf(b + k, cap - k, "%s\"k%d\":%d", i ? "," : "", i, i);
    b[k++] = '}';
    *len = k;
    return b;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    int max_n = argc > 2 ? atoi(argv[2]) : 1000000;
    static const int NS[] = {10000, 30000, 100000, 300000, 1000000};
    double *t = malloc((size_t)runs * sizeof *t);
    printf("| entries | safetensors header (st_parse) ms | ns/entry | JSON object (json_parse) ms | ns/entry |\n");
    printf("|---:|---:|---:|---:|---:|\n");
    for (size_t a = 0; a < sizeof NS / sizeof NS[0] && NS[a] <= max_n; a++) {
        int n = NS[a];
        size_t len;
        uint8_t *f = st_file_of(n, &len);
        for (int r = 0; r < runs; r++) {
            st_file st;
            double t0 = now_ms();
            int rc = st_parse(&st, f, len);
            t[r] = now_ms() - t0;
            if (rc != ALAB_OK || st.n != n) { fprintf(stderr, "st_parse failed (%d): %s\n", rc, alab_last_error()); return 1; }
            st_free(&st);
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        double st_ms = t[runs / 2];
        free(f);
        char *o = object_of(n, &len);
        for (int r = 0; r < runs; r++) {
            json_doc d;
            double t0 = now_ms();
            int rc = json_parse(&d, o, len, 0);
            t[r] = now_ms() - t0;
            if (rc != ALAB_OK || d.root->n != (uint32_t)n) { fprintf(stderr, "json_parse failed: %s\n", d.err); return 1; }
            json_free(&d);
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        double js_ms = t[runs / 2];
        free(o);
        printf("| %d | %.1f | %.0f | %.1f | %.0f |\n", n, st_ms, st_ms * 1e6 / n, js_ms, js_ms * 1e6 / n);
        fflush(stdout);
    }
    free(t);
    return 0;
}
