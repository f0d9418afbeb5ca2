/* test_configs.c — the published configs of the models attnlab names (tests/fixtures/configs: Pythia-70m,
 * SmolLM2-135M/360M, Qwen2.5-0.5B, Qwen3-0.6B, Llama-3.2-1B) parse, with the sizes and settings the model cards
 * publish, and the loader expects exactly the tensors (names and shapes) of each published checkpoint, as
 * tests/ref/hf_names.py derives them from Hugging Face's naming (tensors.txt, gen_config_lists.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "model.h"
#include "testutil.h"

static const struct {
    const char *dir, *family;
    int layers, heads, kv, hs, embd, vocab, positions;
    const char *first_line;
} MODELS[] = {
    {"pythia-70m", "gpt_neox", 6, 8, 8, 64, 512, 50304, 2048, "embed_out.weight 50304,512\n"},
    {"smollm2-135m", "llama", 30, 9, 3, 64, 576, 49152, 8192, "model.embed_tokens.weight 49152,576\n"},
    {"smollm2-360m", "llama", 32, 15, 5, 64, 960, 49152, 8192, "model.embed_tokens.weight 49152,960\n"},
    {"qwen2.5-0.5b", "qwen2", 24, 14, 2, 64, 896, 151936, 32768, "model.embed_tokens.weight 151936,896\n"},
    {"qwen3-0.6b", "qwen3", 28, 16, 8, 128, 1024, 151936, ALAB_MAX_POSITIONS, "model.embed_tokens.weight 151936,1024\n"},
    {"llama-3.2-1b", "llama", 16, 32, 8, 64, 2048, 128256, ALAB_MAX_POSITIONS, "model.embed_tokens.weight 128256,2048\n"},
};

static void each_published_config_parses_and_expects_the_published_tensors(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof MODELS / sizeof MODELS[0]; i++) {
        char rel[256];
        size_t clen = 0, tlen = 0;
        snprintf(rel, sizeof rel, "tests/fixtures/configs/%s/config.json", MODELS[i].dir);
        char *cfg_text = slurp(repo_path(rel), &clen);
        snprintf(rel, sizeof rel, "tests/fixtures/configs/%s/tensors.txt", MODELS[i].dir);
        char *want = slurp(repo_path(rel), &tlen);
        assert_non_null(cfg_text);
        assert_non_null(want);
        alab_config c;
        alab_arch a;
        int rc = alab_parse_config(&c, &a, cfg_text, clen);
        if (rc) fail_msg("%s: %s", MODELS[i].dir, alab_last_error());
        assert_string_equal(c.family, MODELS[i].family);
        assert_int_equal(c.n_layer, MODELS[i].layers);
        assert_int_equal(c.n_head, MODELS[i].heads);
        assert_int_equal(c.n_kv_head, MODELS[i].kv);
        assert_int_equal(c.head_dim, MODELS[i].hs);
        assert_int_equal(c.n_embd, MODELS[i].embd);
        assert_int_equal(c.vocab_size, MODELS[i].vocab);
        assert_int_equal(c.n_positions, MODELS[i].positions);
        size_t need = 0;
        char *got = malloc(1 << 20);
        assert_int_equal(alab_expected_tensors(got, 1 << 20, &need, cfg_text, clen), ALAB_OK);
        if (need != tlen || memcmp(got, want, tlen) != 0) {
            size_t k = 0; /* the first line that differs */
            while (k < tlen && k < need && got[k] == want[k]) k++;
            while (k > 0 && want[k - 1] != '\n') k--;
            fail_msg("%s: the loader expects\n%.200s\nwhere the checkpoint has\n%.200s", MODELS[i].dir, got + k, want + k);
        }
        assert_memory_equal(want, MODELS[i].first_line, strlen(MODELS[i].first_line));
        free(got), free(cfg_text), free(want);
    }
}

/* What each config sets beyond the sizes. */
static void the_settings_are_the_published_ones(void **state) {
    (void)state;
    struct { const char *dir; int tied, par, rot, llama3, qkvb, qkn; double theta; float eps; } want[] = {
        {"pythia-70m", 0, 1, 16, 0, 1, 0, 10000, 1e-5f},     /* rotary_pct 0.25 of 64 */
        {"smollm2-135m", 1, 0, 64, 0, 0, 0, 100000, 1e-5f},
        {"qwen2.5-0.5b", 1, 0, 64, 0, 1, 0, 1e6, 1e-6f},
        {"qwen3-0.6b", 1, 0, 128, 0, 0, 1, 1e6, 1e-6f},
        {"llama-3.2-1b", 1, 0, 64, 1, 0, 0, 500000, 1e-5f},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char rel[256];
        size_t clen = 0;
        snprintf(rel, sizeof rel, "tests/fixtures/configs/%s/config.json", want[i].dir);
        char *text = slurp(repo_path(rel), &clen);
        alab_config c;
        alab_arch a;
        assert_int_equal(alab_parse_config(&c, &a, text, clen), ALAB_OK);
        assert_int_equal(a.tied, want[i].tied);
        assert_int_equal(a.parallel_residual, want[i].par);
        assert_int_equal(a.rot_dims, want[i].rot);
        assert_int_equal(a.rope_llama3, want[i].llama3);
        assert_int_equal(a.qkv_bias, want[i].qkvb);
        assert_int_equal(a.qk_norm, want[i].qkn);
        assert_true(a.rope_theta == want[i].theta);
        assert_true(a.eps == want[i].eps);
        if (a.rope_llama3) assert_true(a.rope_factor == 32 && a.rope_orig == 8192 && a.rope_low == 1 && a.rope_high == 4);
        free(text);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_published_config_parses_and_expects_the_published_tensors),
        cmocka_unit_test(the_settings_are_the_published_ones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
