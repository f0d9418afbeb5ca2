/* test_configs.c — the published configs of the models attnlab names (tests/fixtures/configs: Pythia-70m,
 * SmolLM2-135M/360M, Qwen2.5-0.5B, Qwen3-0.6B, Llama-3.2-1B, Gemma-3-270M-it) parse, with the sizes and settings the model cards
 * publish, and the loader expects exactly the tensors (names and shapes) of each published checkpoint, as
 * tests/ref/hf_names.py derives them from Hugging Face's naming (tensors.txt, gen_config_lists.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "families.h"
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
    {"gemma-3-270m-it", "gemma3_text", 18, 4, 1, 256, 640, 262144, 32768, "model.embed_tokens.weight 262144,640\n"},
    {"mistral-7b-v0.1", "mistral", 32, 32, 8, 128, 4096, 32000, 32768, "lm_head.weight 32000,4096\n"},
    {"tinyllama-1.1b-chat-v0.6", "llama", 22, 32, 4, 64, 2048, 32000, 2048, "lm_head.weight 32000,2048\n"},
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

/* Every family of families.h has a published config here, of its family, unless its row names none (GPT-2:
 * test_gpt2.c's fixtures); every config here is of a family in the list. */
static void every_family_has_a_published_config(void **state) {
    (void)state;
    const size_t n_models = sizeof MODELS / sizeof MODELS[0];
    for (int f = 0; f < N_FAMILIES; f++) {
        const char *pub = FAMILIES[f].published;
        if (!pub) continue;
        size_t i = 0;
        while (i < n_models && strcmp(MODELS[i].dir, pub) != 0) i++;
        if (i == n_models) fail_msg("%s: %s is not in MODELS", FAMILIES[f].key, pub);
        assert_string_equal(MODELS[i].family, FAMILIES[f].family);
    }
    for (size_t i = 0; i < n_models; i++) {
        int known = 0;
        for (int f = 0; f < N_FAMILIES; f++) known |= strcmp(FAMILIES[f].family, MODELS[i].family) == 0;
        if (!known) fail_msg("%s: family %s is not in families.h", MODELS[i].dir, MODELS[i].family);
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

/* Gemma 3 270M: five sliding layers (window 512, local rotary base 1e4) then a full one (1e6, no scaling),
 * scores scaled by 256^-0.5, embeddings by sqrt(640), GeGLU, (1 + w) norms, q/k norms, tied. */
static void gemma3_270m_settings(void **state) {
    (void)state;
    size_t clen = 0;
    char *text = slurp(repo_path("tests/fixtures/configs/gemma-3-270m-it/config.json"), &clen);
    alab_config c;
    alab_arch a;
    assert_int_equal(alab_parse_config(&c, &a, text, clen), ALAB_OK);
    for (int l = 0; l < 18; l++) {
        const int full = (l + 1) % 6 == 0;
        assert_int_equal(a.layer_window[l], full ? 0 : 512);
        assert_int_equal(a.rope_local[l], !full);
    }
    assert_int_equal(a.fam->norm, NORM_RMSNORM_UNIT);
    assert_int_equal(a.mlp, MLP_GEGLU);
    assert_true(a.attn_scale == 1.0 / 16);
    assert_true(a.embed_scale == (float)sqrt(640.0));
    assert_true(a.rope_theta == 1e6 && a.rope_local_theta == 1e4);
    assert_int_equal(a.rope_linear + a.rope_llama3, 0);
    assert_int_equal(a.rot_dims, 256);
    assert_true(a.tied && a.qk_norm && !a.qkv_bias && !a.o_bias && !a.mlp_bias);
    assert_true(a.eps == 1e-6f);
    free(text);
}

/* Gemma 3 1B, whose config.json could not be copied here (see tests/fixtures/README.md), written from its model
 * card's published values (no layer_types: sliding_window_pattern 6 decides; linear rope_scaling 8 on its full
 * layers), and Mistral 7B v0.1's own config.json (sliding_window 4096 on every layer, head_dim derived). */
static void gemma3_1b_and_mistral_7b_settings(void **state) {
    (void)state;
    static const char g1b[] =
        "{\"architectures\": [\"Gemma3ForCausalLM\"], \"model_type\": \"gemma3_text\", \"hidden_size\": 1152, "
        "\"intermediate_size\": 6912, \"num_hidden_layers\": 26, \"num_attention_heads\": 4, \"num_key_value_heads\": 1, "
        "\"head_dim\": 256, \"max_position_embeddings\": 32768, \"query_pre_attn_scalar\": 256, \"rms_norm_eps\": 1e-06, "
        "\"rope_local_base_freq\": 10000, \"rope_scaling\": {\"factor\": 8.0, \"rope_type\": \"linear\"}, "
        "\"rope_theta\": 1000000, \"sliding_window\": 512, \"sliding_window_pattern\": 6, \"vocab_size\": 262144}";
    alab_config c;
    alab_arch a;
    assert_int_equal(alab_parse_config(&c, &a, g1b, strlen(g1b)), ALAB_OK);
    for (int l = 0; l < 26; l++) assert_int_equal(a.layer_window[l], (l + 1) % 6 == 0 ? 0 : 512);
    assert_true(a.rope_linear && a.rope_factor == 8);
    assert_true(a.tied); /* Gemma3TextConfig's default */
    size_t m7b_len = 0; /* Mistral 7B v0.1's own config.json */
    char *m7b = slurp(repo_path("tests/fixtures/configs/mistral-7b-v0.1/config.json"), &m7b_len);
    assert_non_null(m7b);
    assert_int_equal(alab_parse_config(&c, &a, m7b, m7b_len), ALAB_OK);
    assert_string_equal(c.family, "mistral");
    assert_int_equal(c.head_dim, 128);
    assert_int_equal(c.n_kv_head, 8);
    for (int l = 0; l < 32; l++) assert_int_equal(a.layer_window[l], 4096);
    assert_true(!a.tied && !a.qkv_bias && !a.o_bias && !a.mlp_bias && !a.qk_norm && a.mlp == MLP_SWIGLU);
    assert_true(a.attn_scale == 0 && a.embed_scale == 0);
    static char buf[1 << 16];
    size_t need = 0; /* Llama's tensors: no biases, no q/k norms */
    assert_int_equal(alab_expected_tensors(buf, sizeof buf, &need, m7b, m7b_len), ALAB_OK);
    assert_null(strstr(buf, "bias"));
    assert_null(strstr(buf, "norm.weight 128"));
    assert_non_null(strstr(buf, "model.layers.31.self_attn.k_proj.weight 1024,4096\n"));
    free(m7b);
}

/* Issue 53 item 4: config values inside each field's range whose combination the forward pass cannot run finitely
 * (query_pre_attn_scalar 1e-76 made Gemma 3's scale infinite in f32, every logit NaN, and the CLI printed
 * "prob":-nan) are ECONFIG at load naming the field, for every family; the values just inside still load. */
static int parse_edited(const char *path, const char *from, const char *to) {
    size_t n = 0;
    char *text = slurp(repo_path(path), &n);
    assert_non_null(text);
    char *at = strstr(text, from);
    assert_non_null(at);
    size_t fl = strlen(from), tl = strlen(to);
    char *ed = malloc(n + tl + 1);
    memcpy(ed, text, (size_t)(at - text));
    memcpy(ed + (at - text), to, tl);
    memcpy(ed + (at - text) + tl, at + fl, n - (size_t)(at - text) - fl + 1);
    alab_config c;
    alab_arch a;
    int rc = alab_parse_config(&c, &a, ed, strlen(ed));
    free(ed);
    free(text);
    return rc;
}

static void values_that_make_a_scale_norm_or_angle_non_finite_are_econfig(void **state) {
    (void)state;
    static const char G[] = "tests/fixtures/configs/gemma-3-270m-it/config.json",
                      L[] = "tests/fixtures/configs/llama-3.2-1b/config.json",
                      P[] = "tests/fixtures/configs/pythia-70m/config.json",
                      Q[] = "tests/fixtures/configs/qwen2.5-0.5b/config.json",
                      T[] = "tests/fixtures/tiny/config.json";
    static const struct { const char *path, *from, *to, *names; int rc; } cases[] = {
        {G, "\"query_pre_attn_scalar\": 256", "\"query_pre_attn_scalar\": 1e-76", "query_pre_attn_scalar", ALAB_ECONFIG},
        {G, "\"query_pre_attn_scalar\": 256", "\"query_pre_attn_scalar\": 1e-300", "query_pre_attn_scalar", ALAB_ECONFIG},
        {G, "\"query_pre_attn_scalar\": 256", "\"query_pre_attn_scalar\": 1e-13", "query_pre_attn_scalar", ALAB_ECONFIG},
        {G, "\"query_pre_attn_scalar\": 256", "\"query_pre_attn_scalar\": 1e-11", NULL, ALAB_OK},   /* scale 3.2e5 */
        {G, "\"query_pre_attn_scalar\": 256", "\"query_pre_attn_scalar\": 1e12", NULL, ALAB_OK},    /* scale 1e-6 */
        {G, "\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": 1e-50", "epsilon", ALAB_ECONFIG},         /* 0 as a float */
        {L, "\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 1e-46", "epsilon", ALAB_ECONFIG},
        {L, "\"rms_norm_eps\": 1e-05", "\"rms_norm_eps\": 1e-44", NULL, ALAB_OK},                  /* a subnormal float */
        {Q, "\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": 1e-300", "epsilon", ALAB_ECONFIG},
        {P, "\"layer_norm_eps\": 1e-05", "\"layer_norm_eps\": 1e-60", "epsilon", ALAB_ECONFIG},
        {T, "\"layer_norm_epsilon\": 1e-05", "\"layer_norm_epsilon\": 1e-60", "epsilon", ALAB_ECONFIG},
        /* frequency 0 divided by the smallest double: infinite angles */
        {L, "\"factor\": 32.0", "\"factor\": 5e-324", "rope_theta", ALAB_ECONFIG},
        {L, "\"factor\": 32.0", "\"factor\": 1e-300", NULL, ALAB_OK},   /* 1e300 * 32768: large, finite */
        {Q, "\"rope_theta\": 1000000.0", "\"rope_theta\": 1e-300, \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 1e-300}",
         "rope_theta", ALAB_ECONFIG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int rc = parse_edited(cases[i].path, cases[i].from, cases[i].to);
        if (rc != cases[i].rc || (cases[i].names && !strstr(alab_last_error(), cases[i].names)))
            fail_msg("case %zu (%s): rc %d (%s), expected %d naming %s", i, cases[i].to, rc, alab_last_error(), cases[i].rc,
                     cases[i].names ? cases[i].names : "-");
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_published_config_parses_and_expects_the_published_tensors),
        cmocka_unit_test(every_family_has_a_published_config),
        cmocka_unit_test(the_settings_are_the_published_ones),
        cmocka_unit_test(gemma3_270m_settings),
        cmocka_unit_test(gemma3_1b_and_mistral_7b_settings),
        cmocka_unit_test(values_that_make_a_scale_norm_or_angle_non_finite_are_econfig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
