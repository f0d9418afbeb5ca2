/* fuzz_shard_index.c — a sharded model load whose model.safetensors.index.json
 * is arbitrary bytes, or whose config.json is (the first byte selects: 0 the
 * index, 1 the config), the other files those of tests/fixtures/families/qwen3
 * (two shards, Qwen3's config, GPT-2-style tokenizer).
 * Properties: never crashes or leaks (both shard buffers are handed over and
 * must be freed on every path); a failure is a documented code with a
 * message; an accepted model runs a forward pass whose attention rows are
 * probability distributions. */
#include "fuzz_common.h"

#include <math.h>

#define DIR "tests/fixtures/families/qwen3/"
static char *cfg, *index_json, *vocab, *merges, *shard[2];
static size_t cfg_len, index_len, vocab_len, merges_len, shard_len[2];
static const char *SHARD_NAMES[2] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    cfg = fuzz_slurp(DIR "config.json", &cfg_len);
    index_json = fuzz_slurp(DIR "model.safetensors.index.json", &index_len);
    vocab = fuzz_slurp(DIR "vocab.json", &vocab_len);
    merges = fuzz_slurp(DIR "merges.txt", &merges_len);
    shard[0] = fuzz_slurp(DIR "model-00001-of-00002.safetensors", &shard_len[0]);
    shard[1] = fuzz_slurp(DIR "model-00002-of-00002.safetensors", &shard_len[1]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char *text = malloc(size - 1 ? size - 1 : 1); /* exact size: ASan sees reads past the end */
    if (!text) abort();
    memcpy(text, data + 1, size - 1);
    alab_shard sh[2];
    for (int i = 0; i < 2; i++) {
        void *copy = malloc(shard_len[i]);
        if (!copy) abort();
        memcpy(copy, shard[i], shard_len[i]);
        sh[i] = (alab_shard){SHARD_NAMES[i], copy, shard_len[i]};
    }
    alab_model_files f = {cfg, cfg_len, sh, 2, index_json, index_len, vocab, vocab_len, merges, merges_len,
                          NULL, 0, NULL, 0};
    if (data[0] & 1) { f.config_json = text; f.config_len = size - 1; }
    else { f.index_json = text; f.index_len = size - 1; }
    alab_model *m = NULL;
    int rc = alab_model_load_files(&m, &f);
    FUZZ_CHECK_RC(rc);
    FUZZ_CHECK((rc == ALAB_OK) == (m != NULL));
    if (m) {
        const alab_config *c = alab_model_config(m);
        int ids[4] = {1, 2, 3, 4};
        const int T = c->n_positions < 4 ? c->n_positions : 4;
        alab_run_opts o;
        alab_run_opts_init(&o);
        rc = alab_forward(m, ids, T, &o);
        FUZZ_CHECK_RC(rc);
        if (rc == ALAB_OK) {
            const float *att = alab_result_attention(m);
            for (int r = 0; r < c->n_layer * c->n_head * T && r < 4096; r++) {
                double s = 0;
                for (int j = 0; j < T; j++) s += att[r * T + j];
                FUZZ_CHECK(isnan(s) || s == 0.0 || fabs(s - 1.0) < 1e-3);
            }
        }
        alab_model_free(m);
    }
    free(text);
    return 0;
}
