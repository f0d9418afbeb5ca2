/* fuzz_model_load.c — a whole model load (config.json, model.safetensors,
 * vocab.json, merges.txt) from arbitrary bytes, then a forward pass.
 *
 * Framing: the first byte selects what the rest of the input is.
 *   0..3  one of the four files (config, safetensors, vocab, merges); the
 *         other three are those of tests/fuzz/mini, a valid 11 KB model, so
 *         each file's checks are reached with the others consistent;
 *   4..   all four files, separated by "\n--attnlab-fuzz--\n" (missing parts
 *         are empty).
 * Properties: never crashes or leaks (the safetensors buffer is handed over
 * and must be freed on every path); a failure is a documented code with a
 * message; an accepted model runs a forward pass on a few ids (every id
 * 0..V-1 in turn), whose attention rows are probability distributions. */
#include "fuzz_common.h"

#include <math.h>

static char *mini[4];
static size_t mini_len[4];
static const char SEP[] = "\n--attnlab-fuzz--\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    static const char *names[4] = {"tests/fuzz/mini/config.json", "tests/fuzz/mini/model.safetensors",
                                   "tests/fuzz/mini/vocab.json", "tests/fuzz/mini/merges.txt"};
    for (int i = 0; i < 4; i++) mini[i] = fuzz_slurp(names[i], &mini_len[i]);
    return 0;
}

static void run_model(alab_model *m) {
    const alab_config *c = alab_model_config(m);
    FUZZ_CHECK(c && c->n_layer >= 1 && c->n_head >= 1 && (strcmp(c->family, "gpt2") != 0 || c->n_embd % c->n_head == 0));
    int T = c->n_positions < 4 ? c->n_positions : 4, ids[4];
    for (int t = 0; t < T; t++) ids[t] = (t * 97) % c->vocab_size;
    alab_run_opts o;
    alab_run_opts_init(&o);
    int rc = alab_forward(m, ids, T, &o);
    FUZZ_CHECK_RC(rc);
    if (rc != ALAB_OK) { FUZZ_CHECK(rc == ALAB_ENOMEM); return; } /* a valid model can only be too big */
    FUZZ_CHECK(alab_result_T(m) == T);
    const float *att = alab_result_attention(m);
    size_t rows = (size_t)c->n_layer * c->n_head * T;
    if (rows > 4096) rows = 4096;
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (int j = 0; j < T; j++) {
            float p = att[r * T + j];
            FUZZ_CHECK(isnan(p) || (p >= 0.0f && p <= 1.0f));
            s += p;
        }
        /* weights are finite (checked at load) but not bounded: huge ones
         * overflow to inf/NaN scores, and softmax then gives a NaN row or an
         * all-zero row (NaN scores count as masked). Garbage, not a crash. */
        FUZZ_CHECK(isnan(s) || s == 0.0 || fabs(s - 1.0) < 1e-3);
    }
    int top[3];
    float probs[3];
    FUZZ_CHECK(alab_result_topk(top, probs, 3, m) == ALAB_OK);
    FUZZ_CHECK(alab_forward(m, ids, 0, &o) == ALAB_EEMPTY);
    ids[0] = c->vocab_size;
    FUZZ_CHECK(alab_forward(m, ids, 1, &o) == ALAB_ERANGE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t sel = data[0];
    const char *part[4];
    size_t len[4];
    for (int i = 0; i < 4; i++) { part[i] = mini[i]; len[i] = mini_len[i]; }
    const char *rest = (const char *)data + 1;
    size_t n = size - 1;
    if (sel < 4) {
        part[sel] = rest;
        len[sel] = n;
    } else {
        for (int i = 0; i < 4; i++) {
            const char *cut = NULL;
            if (i < 3)
                for (size_t k = 0; k + sizeof SEP - 1 <= n; k++)
                    if (memcmp(rest + k, SEP, sizeof SEP - 1) == 0) { cut = rest + k; break; }
            part[i] = rest;
            len[i] = cut ? (size_t)(cut - rest) : n;
            size_t used = cut ? len[i] + sizeof SEP - 1 : n;
            rest += used;
            n -= used;
        }
    }
    /* exact-size heap copies (ASan sees reads past the end); the safetensors
     * buffer is owned by the loader from here on */
    char *buf[4];
    for (int i = 0; i < 4; i++) {
        buf[i] = malloc(len[i] ? len[i] : 1);
        if (!buf[i]) abort();
        memcpy(buf[i], part[i], len[i]);
    }
    alab_model *m = NULL;
    int rc = alab_model_load_buffers(&m, buf[0], len[0], buf[1], len[1], buf[2], len[2], buf[3], len[3]);
    FUZZ_CHECK_RC(rc);
    FUZZ_CHECK((rc == ALAB_OK) == (m != NULL));
    if (m) {
        run_model(m);
        alab_model_free(m);
    }
    free(buf[0]);
    free(buf[2]);
    free(buf[3]);
    return 0;
}
