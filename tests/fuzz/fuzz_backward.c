/* fuzz_backward.c — reverse mode's entry points (c/src/backward.c) on arbitrary arguments: the tape forward's
 * ids, interventions, masks and scale, the layout's and the backward's metric, answers, parts and block size, on
 * three family fixtures (GPT-2's tiny; Llama: grouped-query heads, rotary; Gemma 3: a sliding layer, one
 * key/value head, q/k norms, post-norms).
 *
 * Framing (every byte optional; missing ones read as 0): model, T, T ids, metric, a (2 bytes), b (2), want (2),
 * mask, window, n_interventions, then per intervention kind, layer, head, row, col, lambda, alpha; scale flag,
 * scale; block slack. Values are mapped a little past their valid ranges so the refusals are reached too.
 * Properties: never crashes or leaks; every failure is a documented code with a message and leaves no tape; an
 * accepted backward gives finite gradients and a finite value, the same bits when repeated, and the layout's
 * sizes. */
#include "fuzz_common.h"

#include <math.h>

static alab_model *models[3];

/* A documented code with a message (fuzz_common.h's FUZZ_CHECK_RC stops at ALAB_ESTATE; a soft do on a masked cell
 * is ALAB_EMASKED, the last code). */
#define CHECK_RC(rc)                                                                      \
    do {                                                                                  \
        FUZZ_CHECK((rc) <= 0 && (rc) >= ALAB_EMASKED);                                    \
        if ((rc) != 0) FUZZ_CHECK(alab_last_error()[0] != '\0');                          \
    } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    static const char *dirs[3] = {"tests/fixtures/tiny", "tests/fixtures/families/llama", "tests/fixtures/families/gemma3"};
    const char *root = getenv("ATTNLAB_ROOT");
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root && *root ? root : ALAB_ROOT, dirs[i]);
        if (alab_model_load_dir(&models[i], path) != ALAB_OK) {
            fprintf(stderr, "fuzz_backward: %s: %s\n", dirs[i], alab_last_error());
            exit(2);
        }
    }
    return 0;
}

typedef struct {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned byte(reader *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static int in(reader *r, int lo, int hi) { return lo + (int)(byte(r) % (unsigned)(hi - lo + 1)); } /* [lo, hi] */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    alab_model *m = models[byte(&r) % 3];
    const alab_config *c = alab_model_config(m);
    const int V = c->vocab_size, L = c->n_layer, NH = c->n_head;
    const int T = in(&r, 0, 14);
    int ids[14];
    for (int t = 0; t < T; t++) ids[t] = (int)(byte(&r) * 7u % (unsigned)(V + 2)) - 1; /* -1 and V: ERANGE */
    const int metric = in(&r, -1, 4);
    const int a = (int)(byte(&r) | byte(&r) << 8) % (V + 3) - 1, b = (int)(byte(&r) | byte(&r) << 8) % (V + 3) - 1;
    const int want = (int)(byte(&r) | byte(&r) << 8) & 0x7ff;
    alab_run_opts o;
    alab_run_opts_init(&o);
    o.mask = in(&r, 0, 3);
    o.window = in(&r, -1, 16);
    alab_intervention iv[4];
    o.n_interventions = in(&r, 0, 4);
    for (int i = 0; i < o.n_interventions; i++)
        iv[i] = (alab_intervention){in(&r, 0, 6), in(&r, -1, L), in(&r, -2, NH), in(&r, -1, T), in(&r, -1, T),
                                    (float)((int)byte(&r) - 128) / 8.0f, (float)((int)byte(&r) - 128) / 32.0f};
    o.interventions = iv;
    if (byte(&r) & 1) {
        o.scale_override = 1;
        o.scale = (float)((int)byte(&r) - 64) / 64.0f;
    }
    const int slack = in(&r, -1, 1);

    alab_tape *tp = (alab_tape *)(uintptr_t)1;
    int rc = alab_tape_forward(&tp, m, ids, T, &o);
    CHECK_RC(rc);
    if (rc) {
        FUZZ_CHECK(tp == NULL);
        return 0;
    }
    size_t off[ALAB_GRAD_PARTS + 1];
    rc = alab_grad_layout(off, m, T, want);
    CHECK_RC(rc);
    if (rc) {
        FUZZ_CHECK(want & ~ALAB_GRAD_ALL);
        alab_tape_free(tp);
        return 0;
    }
    for (int p = 0; p < ALAB_GRAD_PARTS; p++) FUZZ_CHECK(off[p] <= off[p + 1] && ((want >> p & 1) || off[p] == off[p + 1]));
    const size_t n = off[ALAB_GRAD_PARTS], given = slack < 0 ? (n ? n - 1 : 0) : n + (size_t)slack;
    float *g = malloc((given ? given : 1) * sizeof *g), *g2 = malloc((given ? given : 1) * sizeof *g2);
    double v = NAN, v2 = NAN;
    rc = alab_backward(g, given, &v, m, tp, metric, a, b, want);
    CHECK_RC(rc);
    if (rc == ALAB_OK) {
        FUZZ_CHECK(given >= n);
        FUZZ_CHECK(isfinite(v));
        for (size_t i = 0; i < n; i++) FUZZ_CHECK(isfinite(g[i]));
        FUZZ_CHECK(alab_backward(g2, given, &v2, m, tp, metric, a, b, want) == ALAB_OK);
        FUZZ_CHECK(memcmp(g, g2, n * sizeof *g) == 0 && memcmp(&v, &v2, sizeof v) == 0);
        FUZZ_CHECK(alab_result_T(m) == 0);
    }
    free(g);
    free(g2);
    alab_tape_free(tp);
    return 0;
}
