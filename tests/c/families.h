/* families.h — the one list of model fixtures the C tests walk (test_families.c, test_configs.c,
 * test_circuits.c, test_evidence.c): a row per family (gpt2, gpt_neox, llama, qwen2, qwen3, mistral,
 * gemma3_text), plus the variants of a family whose differences a test can see. A new family is tested
 * everywhere by adding its row; test_families.c checks each row's facts against what the loader makes of
 * the folder. Needs no cmocka. */
#ifndef ALAB_FAMILIES_H
#define ALAB_FAMILIES_H

#include <stddef.h>
#include <string.h>

/* The golden files that hold a row's float64 reference numbers (written by tests/ref/, which needs PyTorch).
 * A row without one is still walked by the same test's checks that need no reference. */
enum {
    REF_FAMILIES = 1, /* tests/fixtures/families/golden.json (gen_families.py); GPT-2's tiny has tests/fixtures/golden.json */
    REF_CIRCUITS = 2, /* tests/fixtures/circuits_golden.json "models" (circuits_ref.py) */
    REF_EVIDENCE = 4, /* tests/fixtures/evidence_golden.json "families" (gen_evidence.py): the sliding-window ones */
};

typedef struct {
    const char *key;       /* the name the goldens give the fixture */
    const char *family;    /* alab_config.family */
    const char *dir;       /* the folder, relative to the repository */
    const char *published; /* a published config of the family in tests/fixtures/configs/, NULL: none kept there */
    int n_kv_head, head_dim;
    int half;              /* 16-bit weights: kept in 16 bits under ALAB_WEIGHTS_HALF */
    int qk_norm;           /* q and k RMS-normalised per head: a positive scale of W_Q or W_K changes nothing */
    int post_norm;         /* each sublayer's output normalised before the residual add: no linear head terms */
    int sliding;           /* some layer attends within a sliding window */
    int refs;              /* REF_* */
} test_family;

static const test_family FAMILIES[] = {
    {"tiny", "gpt2", "tests/fixtures/tiny", NULL, 4, 8, 0, 0, 0, 0, REF_CIRCUITS},
    {"gpt2-untied", "gpt2", "tests/fixtures/families/gpt2-untied", NULL, 2, 4, 0, 0, 0, 0, REF_FAMILIES},
    {"gpt2-noscale", "gpt2", "tests/fixtures/families/gpt2-noscale", NULL, 2, 4, 0, 0, 0, 0, REF_FAMILIES},
    {"neox", "gpt_neox", "tests/fixtures/families/neox", "pythia-70m", 2, 16, 1, 0, 0, 0, REF_FAMILIES | REF_CIRCUITS},
    {"llama", "llama", "tests/fixtures/families/llama", "llama-3.2-1b", 2, 8, 1, 0, 0, 0, REF_FAMILIES | REF_CIRCUITS},
    {"smollm2", "llama", "tests/fixtures/families/smollm2", "smollm2-135m", 2, 8, 1, 0, 0, 0, REF_FAMILIES},
    {"qwen2", "qwen2", "tests/fixtures/families/qwen2", "qwen2.5-0.5b", 2, 8, 1, 0, 0, 0, REF_FAMILIES},
    {"qwen3", "qwen3", "tests/fixtures/families/qwen3", "qwen3-0.6b", 2, 16, 1, 1, 0, 0, REF_FAMILIES | REF_CIRCUITS},
    {"mistral", "mistral", "tests/fixtures/families/mistral", "mistral-7b-v0.1", 2, 12, 0, 0, 0, 1,
     REF_FAMILIES | REF_CIRCUITS | REF_EVIDENCE},
    {"gemma3", "gemma3_text", "tests/fixtures/families/gemma3", "gemma-3-270m-it", 1, 16, 1, 1, 1, 1,
     REF_FAMILIES | REF_CIRCUITS | REF_EVIDENCE},
};
#define N_FAMILIES ((int)(sizeof FAMILIES / sizeof FAMILIES[0]))

/* The row of that golden name, NULL if none. */
static inline const test_family *family_by_key(const char *key) {
    for (int i = 0; i < N_FAMILIES; i++)
        if (strcmp(FAMILIES[i].key, key) == 0) return &FAMILIES[i];
    return NULL;
}

/* How many rows have every bit of refs (0: all rows). */
static inline int families_with(int refs) {
    int n = 0;
    for (int i = 0; i < N_FAMILIES; i++) n += (FAMILIES[i].refs & refs) == refs;
    return n;
}

#endif
