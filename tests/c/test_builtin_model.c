/* test_builtin_model.c — the built-in model (models/brown-gpt2) loads, tokenizes
 * the chapter's sentence exactly as GPT-2 does, and is a real language model:
 * its perplexity on the held-out Brown documents is below the bigram baseline
 * fitted on the training documents (models/brown-gpt2/baselines.json), and
 * agrees with the PyTorch evaluation of the same file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

static alab_model *model;

static int load_builtin(void **state) {
    (void)state;
    int rc = alab_model_load_dir(&model, repo_path("models/brown-gpt2"));
    if (rc) fprintf(stderr, "built-in model missing or broken: %s: %s\n", alab_strerror(rc), alab_last_error());
    return rc;
}

static int free_builtin(void **state) {
    (void)state;
    alab_model_free(model);
    return 0;
}

static void the_builtin_model_is_gpt2_shaped_with_four_or_more_heads(void **state) {
    (void)state;
    const alab_config *c = alab_model_config(model);
    assert_int_equal(c->vocab_size, 50257);
    assert_true(c->n_head >= 4);
    assert_true(c->n_layer >= 2);
    assert_true(c->n_positions >= 64);
}

static void the_chapter_sentence_gets_gpt2s_tokens(void **state) {
    (void)state;
    /* GPT-2's ids (js-tiktoken, tests/fixtures/bpe_cases.json) */
    const int want[10] = {8128, 262, 6388, 32413, 837, 262, 4074, 3443, 30895, 764};
    const char *text = "Because the storm intensified , the ship finally sank .";
    int ids[32], n = 0;
    assert_int_equal(alab_bpe_encode(ids, 32, &n, alab_model_bpe(model), text, strlen(text)), ALAB_OK);
    assert_int_equal(n, 10);
    assert_memory_equal(ids, want, sizeof want);
}

static double json_number_at(const json_value *root, const char *a, const char *b) {
    const json_value *o = json_get(root, a);
    assert_non_null(o);
    const json_value *v = json_get(o, b);
    assert_non_null(v);
    assert_int_equal(v->type, JSON_NUMBER);
    return v->u.num;
}

static void heldout_perplexity_is_below_the_bigram_baseline(void **state) {
    (void)state;
    size_t len;
    char *text = slurp(repo_path("models/brown-gpt2/heldout.txt"), &len);
    char *base = slurp(repo_path("models/brown-gpt2/baselines.json"), &len);
    assert_non_null(text);
    assert_non_null(base);
    json_doc doc;
    assert_int_equal(json_parse(&doc, base, strlen(base), 0), ALAB_OK);
    double bigram = json_number_at(doc.root, "heldout", "bigram_ppl");
    double unigram = json_number_at(doc.root, "heldout", "unigram_ppl");
    double reference = json_number_at(doc.root, "heldout", "model_ppl");

    /* documents separated by <|endoftext|> (id 50256), as in training */
    const alab_config *c = alab_model_config(model);
    size_t cap = strlen(text) + 64, n = 0;
    int *ids = malloc(cap * sizeof(int));
    const char *sep = "<|endoftext|>";
    for (char *doc_start = text;;) {
        char *end = strstr(doc_start, sep);
        size_t dl = end ? (size_t)(end - doc_start) : strlen(doc_start);
        int got = 0;
        assert_int_equal(alab_bpe_encode(ids + n, (int)(cap - n), &got, alab_model_bpe(model), doc_start, dl), ALAB_OK);
        n += (size_t)got;
        if (!end) break;
        ids[n++] = 50256;
        doc_start = end + strlen(sep);
    }
    assert_true(n > 50000);

    /* windows of n_positions tokens, each scoring its own next tokens */
    double nll = 0.0;
    long scored = 0;
    for (size_t s = 0; s + 1 < n; s += (size_t)c->n_positions) {
        int T = (int)(n - s < (size_t)c->n_positions ? n - s : (size_t)c->n_positions);
        if (T < 2) break;
        assert_int_equal(alab_forward(model, ids + s, T, NULL), ALAB_OK);
        double w;
        int k;
        assert_int_equal(alab_result_nll(&w, &k, model), ALAB_OK);
        nll += w;
        scored += k;
    }
    double ppl = exp(nll / (double)scored);
    printf("  held-out: %ld tokens scored, model perplexity %.1f (PyTorch evaluation %.1f), bigram %.1f, unigram %.1f\n",
           scored, ppl, reference, bigram, unigram);
    assert_true(ppl < bigram);
    assert_true(ppl < unigram);
    /* the same model evaluated by models/train/evaluate.py (its windows overlap differently: within 10%) */
    assert_true(fabs(ppl - reference) / reference < 0.10);
    json_free(&doc);
    free(ids);
    free(text);
    free(base);
}

static void the_model_continues_text_with_english_words(void **state) {
    (void)state;
    const char *text = "The city council met on Monday and";
    int ids[32], n = 0, out[12], n_out = 0;
    assert_int_equal(alab_bpe_encode(ids, 32, &n, alab_model_bpe(model), text, strlen(text)), ALAB_OK);
    uint64_t rng = 7;
    assert_int_equal(alab_generate(out, &n_out, model, ids, n, 12, 0.0f, 0, &rng), ALAB_OK);
    assert_int_equal(n_out, 12);
    /* a trained model's greedy continuation is made of frequent tokens: ids below 20000 mostly */
    int common = 0;
    for (int i = 0; i < n_out; i++) common += out[i] < 20000;
    assert_true(common >= 9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_builtin_model_is_gpt2_shaped_with_four_or_more_heads),
        cmocka_unit_test(the_chapter_sentence_gets_gpt2s_tokens),
        cmocka_unit_test(heldout_perplexity_is_below_the_bigram_baseline),
        cmocka_unit_test(the_model_continues_text_with_english_words),
    };
    return cmocka_run_group_tests_name("builtin_model", tests, load_builtin, free_builtin);
}
