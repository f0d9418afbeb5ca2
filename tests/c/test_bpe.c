/* test_bpe.c — GPT-2's byte-level BPE (c/src/bpe.c): exact ids on the shared
 * case table (tests/fixtures/bpe_cases.json, proven against js-tiktoken and
 * gpt-3-encoder by tests/js/bpe-reference.test.js), round trips, display
 * strings, megabyte inputs, and every error path. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* alarm() */
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "gpt2_bytes.h"
#include "internal.h"
#include "testutil.h"

/* The GPT-2 tokenizer, loaded once for the whole group. */
static alab_bpe *gpt2;
static json_doc cases;

static int load_gpt2(void **state) {
    size_t cl = 0;
    char *c = slurp(repo_path("tests/fixtures/bpe_cases.json"), &cl);
    int ok = c && load_gpt2_bpe(&gpt2) == ALAB_OK && json_parse(&cases, c, cl, 0) == ALAB_OK;
    if (!ok) print_error("setup failed (ATTNLAB_ROOT=%s): %s\n", getenv("ATTNLAB_ROOT"), alab_last_error());
    free(c);
    return ok ? 0 : -1;
}

static int free_gpt2(void **state) {
    alab_bpe_free(gpt2);
    json_free(&cases);
    return 0;
}

/* Encode with GPT-2 into a malloc'd array; asserts success. */
static int *encode(const char *text, size_t len, int *n) { return encode_with(gpt2, text, len, n); }

static int id_of(const char *text) {
    int n;
    int *ids = encode(text, strlen(text), &n);
    assert_int_equal(n, 1);
    int id = ids[0];
    free(ids);
    return id;
}

/* ---- the GPT-2 files ------------------------------------------------------ */

static void the_gpt2_files_load_as_50257_tokens(void **state) {
    assert_int_equal(alab_bpe_vocab_size(gpt2), 50257);
    const char *b;
    size_t n;
    assert_int_equal(alab_bpe_token_bytes(&b, &n, gpt2, 50256), ALAB_OK);
    assert_int_equal(n, 13);
    assert_memory_equal(b, "<|endoftext|>", 13);
    assert_int_equal(b[n], '\0');
    assert_int_equal(alab_bpe_token_bytes(&b, &n, gpt2, 262), ALAB_OK); /* "Ġthe" */
    assert_int_equal(n, 4);
    assert_memory_equal(b, " the", 4);
    assert_int_equal(alab_bpe_token_bytes(&b, &n, gpt2, 198), ALAB_OK); /* "Ċ" */
    assert_int_equal(n, 1);
    assert_int_equal(b[0], '\n');
}

/* ---- the case table --------------------------------------------------------- */

static void every_row_of_the_case_table_encodes_to_the_reference_ids(void **state) {
    const json_value *rows = cases.root;
    assert_int_equal(rows->type, JSON_ARRAY);
    assert_true(rows->n >= 80);
    int failures = 0;
    for (uint32_t r = 0; r < rows->n; r++) {
        const json_value *row = &rows->u.items[r];
        const json_value *want = json_get(row, "ids");
        size_t len;
        char *text = row_bytes(row, &len);
        int n;
        int *ids = encode(text, len, &n);
        int same = (uint32_t)n == want->n;
        for (int i = 0; same && i < n; i++) {
            int64_t w;
            same = json_int64(&want->u.items[i], &w) == 0 && w == ids[i];
        }
        if (!same) {
            print_error("case \"%s\": got %d ids, want %u\n", json_get(row, "name")->u.str, n, want->n);
            failures++;
        }
        free(ids);
        free(text);
    }
    assert_int_equal(failures, 0);
}

static void every_row_decodes_back_to_its_text_with_invalid_bytes_as_u_fffd(void **state) {
    const json_value *rows = cases.root;
    for (uint32_t r = 0; r < rows->n; r++) {
        const json_value *row = &rows->u.items[r];
        const json_value *want = json_get(row, "decoded");
        size_t len;
        char *text = row_bytes(row, &len);
        int n;
        int *ids = encode(text, len, &n);
        size_t need = 0;
        int rc = alab_bpe_decode(NULL, 0, &need, gpt2, ids, n);
        assert_int_equal(rc, need == 0 ? ALAB_OK : ALAB_ELIMIT);
        char *out = malloc(need + 1);
        size_t got = 0;
        assert_int_equal(alab_bpe_decode(out, need + 1, &got, gpt2, ids, n), ALAB_OK);
        assert_int_equal(got, need);
        assert_int_equal(out[got], '\0');
        if (got != want->n || memcmp(out, want->u.str, got) != 0)
            print_error("case \"%s\" decodes differently\n", json_get(row, "name")->u.str);
        assert_int_equal(got, want->n);
        assert_memory_equal(out, want->u.str, got);
        if (json_get(row, "text")) { /* well-formed UTF-8 comes back byte for byte */
            assert_int_equal(got, len);
            assert_memory_equal(out, text, len);
        }
        free(out);
        free(ids);
        free(text);
    }
}

static void invalid_utf8_encodes_like_its_u_fffd_replacement(void **state) {
    /* The rule of c/src/bpe.c: each maximal ill-formed subsequence is one U+FFFD. */
    static const struct { const char *raw; const char *replaced; } pairs[] = {
        {"a\xFF" "b", "a\xEF\xBF\xBD" "b"},
        {"\xE2\x82", "\xEF\xBF\xBD"},                                    /* cut-off euro: ONE U+FFFD */
        {"\xE2\x82 a", "\xEF\xBF\xBD a"},
        {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                        /* overlong: two */
        {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},        /* surrogate: three */
        {"\xF0\x9F\x91", "\xEF\xBF\xBD"},                                /* cut-off emoji: one */
        {"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"caf\xE9 ok", "caf\xEF\xBF\xBD ok"},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        int n1, n2;
        int *a = encode(pairs[k].raw, strlen(pairs[k].raw), &n1);
        int *b = encode(pairs[k].replaced, strlen(pairs[k].replaced), &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(a, b, (size_t)n1 * sizeof *a);
        free(a);
        free(b);
    }
}

static void every_token_that_is_well_formed_utf8_encodes_to_itself(void **state) {
    /* 49912 of GPT-2's tokens are well-formed UTF-8 and a single pre-token:
     * BPE must rebuild each from its bytes. 344 hold part of a character
     * (they read as U+FFFD), and <|endoftext|> is three pre-tokens. */
    int V = alab_bpe_vocab_size(gpt2), self = 0, partial = 0, other = 0;
    for (int id = 0; id < V; id++) {
        const char *s;
        size_t len;
        assert_int_equal(alab_bpe_token_bytes(&s, &len, gpt2, id), ALAB_OK);
        int ids[64], n = 0;
        int rc = alab_bpe_encode(ids, 64, &n, gpt2, s, len);
        assert_int_equal(rc, ALAB_OK);
        if (n == 1 && ids[0] == id) { self++; continue; }
        char disp[64];
        size_t dl;
        assert_int_equal(alab_bpe_display(disp, sizeof disp, &dl, gpt2, id), ALAB_OK);
        if (strstr(disp, "\xEF\xBF\xBD")) partial++;
        else other++;
    }
    assert_int_equal(self, 49912);
    assert_int_equal(partial, 344);
    assert_int_equal(other, 1); /* <|endoftext|> */
}

/* ---- encode arguments and limits ------------------------------------------- */

static void empty_text_gives_zero_ids(void **state) {
    int n = -1;
    assert_int_equal(alab_bpe_encode(NULL, 0, &n, gpt2, NULL, 0), ALAB_OK);
    assert_int_equal(n, 0);
    int ids[4];
    assert_int_equal(alab_bpe_encode(ids, 4, &n, gpt2, "", 0), ALAB_OK);
    assert_int_equal(n, 0);
}

static void too_small_an_id_buffer_gives_elimit_a_prefix_and_the_count_needed(void **state) {
    const char *s = "Because the storm intensified , the ship finally sank .";
    int ids[4] = {-1, -1, -1, -1}, n = 0;
    assert_int_equal(alab_bpe_encode(ids, 3, &n, gpt2, s, strlen(s)), ALAB_ELIMIT);
    assert_int_equal(n, 10);
    assert_int_equal(ids[0], 8128); /* "Because" */
    assert_int_equal(ids[1], 262);  /* " the"    */
    assert_int_equal(ids[2], 6388); /* " storm"  */
    assert_int_equal(ids[3], -1);   /* untouched */
    assert_true(strlen(alab_last_error()) > 0);
}

static void text_over_one_mib_is_refused_with_elimit(void **state) {
    size_t len = ALAB_MAX_TEXT_BYTES + 1;
    char *s = malloc(len);
    memset(s, 'a', len);
    int n = 0;
    assert_int_equal(alab_bpe_encode(NULL, 0, &n, gpt2, s, len), ALAB_ELIMIT);
    assert_int_equal(n, 0);
    assert_non_null(strstr(alab_last_error(), "limit"));
    free(s);
}

static void bad_encode_arguments_give_einval(void **state) {
    int ids[2], n;
    assert_int_equal(alab_bpe_encode(ids, 2, NULL, gpt2, "a", 1), ALAB_EINVAL);
    assert_int_equal(alab_bpe_encode(ids, 2, &n, NULL, "a", 1), ALAB_EINVAL);
    assert_int_equal(alab_bpe_encode(ids, -1, &n, gpt2, "a", 1), ALAB_EINVAL);
    assert_int_equal(alab_bpe_encode(NULL, 2, &n, gpt2, "a", 1), ALAB_EINVAL);
    assert_int_equal(alab_bpe_encode(ids, 2, &n, gpt2, NULL, 1), ALAB_EINVAL);
}

/* ---- megabyte inputs: linear time, checked by counting ---------------------- */

/* A quadratic merge loop would need ~10^12 steps on these inputs; the
 * watchdog turns such a hang into a failure instead of a stuck CI job. */
static void watchdog(int seconds) { alarm((unsigned)seconds); }

static void one_mib_of_one_letter_gives_quarter_as_many_aaaa_tokens(void **state) {
    watchdog(120);
    size_t len = ALAB_MAX_TEXT_BYTES;
    char *s = malloc(len);
    memset(s, 'a', len);
    int n;
    int *ids = encode(s, len, &n); /* one piece of 2^20 bytes, all merged by BPE */
    int aaaa = id_of("aaaa");
    assert_int_equal(n, (int)(len / 4));
    for (int i = 0; i < n; i++) assert_int_equal(ids[i], aaaa);
    free(ids);
    free(s);
    watchdog(0);
}

static void one_mib_run_of_spaces_before_a_word_splits_as_the_regex_says(void **state) {
    watchdog(120);
    size_t len = ALAB_MAX_TEXT_BYTES;
    char *s = malloc(len);
    s[0] = 'x';
    memset(s + 1, ' ', len - 5);
    memcpy(s + len - 4, "word", 4);
    int n;
    int *ids = encode(s, len, &n);
    /* "x", (len-6) single spaces (GPT-2 has no multi-space token), " word" */
    assert_int_equal(n, (int)(len - 6) + 2);
    assert_int_equal(ids[0], id_of("x"));
    for (int i = 1; i < n - 1; i++) assert_int_equal(ids[i], 220);
    assert_int_equal(ids[n - 1], id_of(" word"));
    free(ids);
    free(s);
    watchdog(0);
}

static void one_mib_of_invalid_bytes_becomes_tokens_of_four_replacement_characters(void **state) {
    watchdog(120);
    size_t len = ALAB_MAX_TEXT_BYTES;
    char *s = malloc(len);
    memset(s, 0xFF, len); /* a million U+FFFD (3 MiB) after replacement, one pre-token */
    int n;
    int *ids = encode(s, len, &n);
    /* GPT-2 has a token for four U+FFFD in a row (12 bytes); the table row
     * "forty invalid bytes" checks the same rule against js-tiktoken. */
    int four = id_of("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    assert_int_equal(n, (int)(len / 4));
    for (int i = 0; i < n; i++) assert_int_equal(ids[i], four);
    free(ids);
    free(s);
    watchdog(0);
}

static void the_chapter_sentence_repeated_to_one_mib_gives_the_same_ten_ids_each_time(void **state) {
    watchdog(120);
    const char *unit = " Because the storm intensified , the ship finally sank .";
    size_t u = strlen(unit), reps = ALAB_MAX_TEXT_BYTES / u;
    char *s = malloc(reps * u);
    for (size_t r = 0; r < reps; r++) memcpy(s + r * u, unit, u);
    int n1, n;
    int *one = encode(unit, u, &n1);
    int *ids = encode(s, reps * u, &n);
    assert_int_equal(n1, 10);
    assert_int_equal(n, (int)(10 * reps));
    for (size_t r = 0; r < reps; r++) assert_memory_equal(ids + 10 * r, one, 10 * sizeof *one);
    free(ids);
    free(one);
    free(s);
    watchdog(0);
}

/* ---- decode, token bytes, display ------------------------------------------------- */

static void decode_reports_the_size_needed_and_elimit_when_it_does_not_fit(void **state) {
    int ids[] = {15496, 995}; /* "Hello" " world" */
    char out[16];
    size_t len = 0;
    assert_int_equal(alab_bpe_decode(out, 5, &len, gpt2, ids, 2), ALAB_ELIMIT);
    assert_int_equal(len, 11);
    assert_memory_equal(out, "Hello", 5);
    assert_int_equal(alab_bpe_decode(out, 11, &len, gpt2, ids, 2), ALAB_OK); /* exact fit: no NUL */
    assert_memory_equal(out, "Hello world", 11);
    memset(out, 'z', sizeof out);
    assert_int_equal(alab_bpe_decode(out, sizeof out, &len, gpt2, ids, 2), ALAB_OK);
    assert_string_equal(out, "Hello world");
    assert_int_equal(alab_bpe_decode(out, sizeof out, &len, gpt2, ids, 0), ALAB_OK);
    assert_int_equal(len, 0);
    assert_string_equal(out, "");
}

static void ids_out_of_range_give_erange_everywhere(void **state) {
    const char *b;
    size_t n;
    char out[32];
    assert_int_equal(alab_bpe_token_bytes(&b, &n, gpt2, -1), ALAB_ERANGE);
    assert_int_equal(alab_bpe_token_bytes(&b, &n, gpt2, 50257), ALAB_ERANGE);
    assert_non_null(strstr(alab_last_error(), "50257"));
    int bad[] = {15496, 50257};
    assert_int_equal(alab_bpe_decode(out, sizeof out, &n, gpt2, bad, 2), ALAB_ERANGE);
    int neg[] = {-5};
    assert_int_equal(alab_bpe_decode(out, sizeof out, &n, gpt2, neg, 1), ALAB_ERANGE);
    assert_int_equal(alab_bpe_display(out, sizeof out, &n, gpt2, 50257), ALAB_ERANGE);
    assert_int_equal(alab_bpe_display(out, sizeof out, &n, gpt2, -1), ALAB_ERANGE);
    assert_int_equal(alab_bpe_token_bytes(NULL, &n, gpt2, 0), ALAB_EINVAL);
    assert_int_equal(alab_bpe_decode(NULL, 4, &n, gpt2, bad, 1), ALAB_EINVAL);
    assert_int_equal(alab_bpe_display(out, sizeof out, NULL, gpt2, 0), ALAB_EINVAL);
}

static void display(int id, const char *want) {
    char out[64];
    size_t len = 0;
    assert_int_equal(alab_bpe_display(out, sizeof out, &len, gpt2, id), ALAB_OK);
    assert_int_equal(len, strlen(want));
    assert_string_equal(out, want);
}

static void display_strings_show_spaces_escapes_and_partial_characters(void **state) {
    display(220, " ");                   /* "Ġ": a space stays a space */
    display(262, " the");                /* "Ġthe" */
    display(15496, "Hello");
    display(198, "\\n");                 /* "Ċ": newline as backslash-n */
    display(628, "\\n\\n");              /* "ĊĊ" */
    display(id_of("\t"), "\\t");
    display(id_of("\r"), "\\r");
    display(id_of("\x01"), "\\x01");      /* other controls as \xNN */
    display(id_of("\x7F"), "\\x7F");
    display(50256, "<|endoftext|>");
    display(id_of("\xC3\xA9"), "\xC3\xA9");             /* "é" is one token, shown as is */
    display(447, "\xEF\xBF\xBD");                        /* "âĢ" = E2 80, half a character */
    display(id_of("\xEF\xBF\xBD"), "\xEF\xBF\xBD");
    int n;
    int *ids = encode("\xFF", 1, &n); /* the token of byte 0xFF alone */
    free(ids);
    display(255, "\xEF\xBF\xBD"); /* id 255 is byte 0xFF ("ÿ"): not UTF-8 alone */
}

static void display_reports_the_size_needed_when_the_buffer_is_small(void **state) {
    char out[4] = {'z', 'z', 'z', 'z'};
    size_t len = 0;
    assert_int_equal(alab_bpe_display(out, 2, &len, gpt2, 262), ALAB_ELIMIT);
    assert_int_equal(len, 4);
    assert_memory_equal(out, " t", 2);
    assert_int_equal(out[2], 'z'); /* nothing past cap */
    assert_int_equal(alab_bpe_display(NULL, 0, &len, gpt2, 198), ALAB_ELIMIT);
    assert_int_equal(len, 2);
}

/* ---- small hand-made tokenizers: merge order and file validation ------------------- */

/* vocab.json with the 256 bytes (ids 0..255, in byte order) plus extra
 * tokens (ASCII letters only) with ids 256.., or a fully custom tail. */
static char *make_vocab(const char *const *extra, int n_extra, const char *tail) {
    size_t cap = 8192 + 64 * (size_t)n_extra + (tail ? strlen(tail) : 0);
    char *s = malloc(cap);
    size_t o = (size_t)snprintf(s, cap, "{");
    o += byte_members(s + o, cap - o);
    for (int i = 0; i < n_extra; i++) o += (size_t)snprintf(s + o, cap - o, ", \"%s\": %d", extra[i], 256 + i);
    o += (size_t)snprintf(s + o, cap - o, "%s}", tail ? tail : "");
    return s;
}

static int load_small(alab_bpe **b, const char *const *extra, int n_extra, const char *merges) {
    char *v = make_vocab(extra, n_extra, NULL);
    int rc = alab_bpe_load(b, v, strlen(v), merges, strlen(merges));
    free(v);
    return rc;
}

static void encode_ids(alab_bpe *b, const char *text, const int *want, int n_want) {
    int ids[64], n = 0;
    assert_int_equal(alab_bpe_encode(ids, 64, &n, b, text, strlen(text)), ALAB_OK);
    assert_int_equal(n, n_want);
    assert_memory_equal(ids, want, (size_t)n * sizeof *ids);
}

static void the_lowest_ranked_pair_merges_first(void **state) {
    static const char *const extra[] = {"bc", "ab", "abc"};
    alab_bpe *b = NULL;
    /* rank 0: b c, rank 1: a b, rank 2: ab c (never reached for "abc") */
    assert_int_equal(load_small(&b, extra, 3, "#version: 0.2\nb c\na b\nab c\n"), ALAB_OK);
    assert_int_equal(alab_bpe_vocab_size(b), 259);
    encode_ids(b, "abc", (const int[]){'a', 256}, 2);   /* a + bc, not abc */
    encode_ids(b, "ab", (const int[]){257}, 1);
    encode_ids(b, "abab", (const int[]){257, 257}, 2);
    alab_bpe_free(b);
}

static void every_occurrence_of_the_best_pair_merges_left_to_right(void **state) {
    static const char *const extra[] = {"aa", "aaaa"};
    alab_bpe *b = NULL;
    assert_int_equal(load_small(&b, extra, 2, "a a\naa aa\n"), ALAB_OK); /* no #version line */
    encode_ids(b, "aaa", (const int[]){256, 'a'}, 2);        /* aa a, not a aa */
    encode_ids(b, "aaaaa", (const int[]){257, 'a'}, 2);
    encode_ids(b, "aaaaaaa", (const int[]){257, 256, 'a'}, 3);
    alab_bpe_free(b);
}

static void merges_files_with_crlf_and_without_a_final_newline_load(void **state) {
    static const char *const extra[] = {"ab"};
    alab_bpe *b = NULL;
    assert_int_equal(load_small(&b, extra, 1, "#version: 0.2\r\na b\r\n"), ALAB_OK);
    encode_ids(b, "ab", (const int[]){256}, 1);
    alab_bpe_free(b);
    assert_int_equal(load_small(&b, extra, 1, "a b"), ALAB_OK);
    encode_ids(b, "ab", (const int[]){256}, 1);
    alab_bpe_free(b);
    assert_int_equal(load_small(&b, extra, 1, ""), ALAB_OK); /* no merges at all: bytes only */
    encode_ids(b, "ab", (const int[]){'a', 'b'}, 2);
    alab_bpe_free(b);
}

static void bad_merge(const char *merges, int line, const char *const *extra, int n_extra) {
    alab_bpe *b = (alab_bpe *)&b; /* must be reset to NULL */
    int rc = load_small(&b, extra, n_extra, merges);
    if (rc != ALAB_EMERGES) print_error("merges [%s] gave %d: %s\n", merges, rc, alab_last_error());
    assert_int_equal(rc, ALAB_EMERGES);
    assert_null(b);
    char want[32];
    snprintf(want, sizeof want, "line %d", line);
    if (!strstr(alab_last_error(), want)) print_error("message lacks '%s': %s\n", want, alab_last_error());
    assert_non_null(strstr(alab_last_error(), want));
}

static void malformed_merges_give_emerges_with_the_line_number(void **state) {
    static const char *const extra[] = {"ab", "abc", "bc"};
    bad_merge("#version: 0.2\na b\nab\n", 3, extra, 3);          /* one token */
    bad_merge("#version: 0.2\na b c\n", 2, extra, 3);            /* three tokens */
    bad_merge("a  b\n", 1, extra, 3);                            /* two spaces */
    bad_merge(" a\n", 1, extra, 3);                              /* empty left */
    bad_merge("a b\n\nab c\n", 2, extra, 3);                     /* empty line inside */
    bad_merge("a b\nx y\nq z\n", 2, extra, 3);                   /* merge result not a token */
    bad_merge("a b\nab \xC4\xA3\n", 2, extra, 3);                /* a char outside the alphabet... */
    bad_merge("a b\nab \xFF\n", 2, extra, 3);                    /* ...and invalid UTF-8 */
    bad_merge("ab c\na b\n", 1, extra, 3);                       /* "ab" not made yet */
    bad_merge("a b\nb c\na b\n", 3, extra, 3);                   /* a repeated merge */
    bad_merge("#version: 0.2\na b\nab c\nd e\n", 4, extra, 3);   /* "de" is not a token */
}

static void bad_vocab(const char *vocab, const char *expect_in_message, int want_rc) {
    alab_bpe *b = (alab_bpe *)&b;
    int rc = alab_bpe_load(&b, vocab, strlen(vocab), "", 0);
    if (rc != want_rc) print_error("vocab gave %d: %s\n", rc, alab_last_error());
    assert_int_equal(rc, want_rc);
    assert_null(b);
    if (!strstr(alab_last_error(), expect_in_message))
        print_error("message lacks '%s': %s\n", expect_in_message, alab_last_error());
    assert_non_null(strstr(alab_last_error(), expect_in_message));
}

static void malformed_vocabularies_give_evocab_or_ejson(void **state) {
    bad_vocab("{\"a\": 0,}", "vocab.json: json:", ALAB_EJSON);
    bad_vocab("[1, 2, 3]", "expected an object", ALAB_EVOCAB);
    bad_vocab("{\"a\": 0, \"b\": 1}", "256", ALAB_EVOCAB); /* too few tokens */

    char *v;
    v = make_vocab(NULL, 0, ", \"ab\": 1.5");
    bad_vocab(v, "not an integer", ALAB_EVOCAB);
    free(v);
    v = make_vocab(NULL, 0, ", \"ab\": \"256\"");
    bad_vocab(v, "not an integer", ALAB_EVOCAB);
    free(v);
    v = make_vocab(NULL, 0, ", \"ab\": -1");
    bad_vocab(v, "outside", ALAB_EVOCAB);
    free(v);
    v = make_vocab(NULL, 0, ", \"ab\": 257"); /* a gap at 256 */
    bad_vocab(v, "without gaps", ALAB_EVOCAB);
    free(v);
    v = make_vocab(NULL, 0, ", \"ab\": 256, \"cd\": 256");
    bad_vocab(v, "given to both", ALAB_EVOCAB);
    free(v);
    v = make_vocab(NULL, 0, ", \"ab\": 256, \"ab\": 257"); /* a duplicate key: the JSON reader refuses it */
    bad_vocab(v, "duplicate key \"ab\"", ALAB_EJSON);
    free(v);
    v = make_vocab(NULL, 0, ", \"a b\": 256"); /* a raw space is not in the alphabet (it is Ġ) */
    bad_vocab(v, "alphabet", ALAB_EVOCAB);
    free(v);
    v = make_vocab(NULL, 0, ", \"\": 256");
    bad_vocab(v, "empty", ALAB_EVOCAB);
    free(v);

    /* byte 'q' replaced by a two-byte token: 256 tokens but no token for 'q' */
    v = make_vocab(NULL, 0, NULL);
    char *q = strstr(v, "\"q\": ");
    assert_non_null(q);
    char *fixed = malloc(strlen(v) + 8);
    size_t head = (size_t)(q - v);
    memcpy(fixed, v, head);
    strcpy(fixed + head, "\"qq\": ");
    strcat(fixed, q + 5);
    bad_vocab(fixed, "no token for the byte 0x71", ALAB_EVOCAB);
    free(fixed);
    free(v);
}

static void bad_load_arguments_give_einval(void **state) {
    alab_bpe *b;
    assert_int_equal(alab_bpe_load(NULL, "{}", 2, "", 0), ALAB_EINVAL);
    assert_int_equal(alab_bpe_load(&b, NULL, 0, "", 0), ALAB_EINVAL);
    assert_int_equal(alab_bpe_load(&b, "{}", 2, NULL, 5), ALAB_EINVAL);
    assert_true(alab_bpe_vocab_size(NULL) < 0);
    alab_bpe_free(NULL); /* safe */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_gpt2_files_load_as_50257_tokens),
        cmocka_unit_test(every_row_of_the_case_table_encodes_to_the_reference_ids),
        cmocka_unit_test(every_row_decodes_back_to_its_text_with_invalid_bytes_as_u_fffd),
        cmocka_unit_test(invalid_utf8_encodes_like_its_u_fffd_replacement),
        cmocka_unit_test(every_token_that_is_well_formed_utf8_encodes_to_itself),
        cmocka_unit_test(empty_text_gives_zero_ids),
        cmocka_unit_test(too_small_an_id_buffer_gives_elimit_a_prefix_and_the_count_needed),
        cmocka_unit_test(text_over_one_mib_is_refused_with_elimit),
        cmocka_unit_test(bad_encode_arguments_give_einval),
        cmocka_unit_test(one_mib_of_one_letter_gives_quarter_as_many_aaaa_tokens),
        cmocka_unit_test(one_mib_run_of_spaces_before_a_word_splits_as_the_regex_says),
        cmocka_unit_test(one_mib_of_invalid_bytes_becomes_tokens_of_four_replacement_characters),
        cmocka_unit_test(the_chapter_sentence_repeated_to_one_mib_gives_the_same_ten_ids_each_time),
        cmocka_unit_test(decode_reports_the_size_needed_and_elimit_when_it_does_not_fit),
        cmocka_unit_test(ids_out_of_range_give_erange_everywhere),
        cmocka_unit_test(display_strings_show_spaces_escapes_and_partial_characters),
        cmocka_unit_test(display_reports_the_size_needed_when_the_buffer_is_small),
        cmocka_unit_test(the_lowest_ranked_pair_merges_first),
        cmocka_unit_test(every_occurrence_of_the_best_pair_merges_left_to_right),
        cmocka_unit_test(merges_files_with_crlf_and_without_a_final_newline_load),
        cmocka_unit_test(malformed_merges_give_emerges_with_the_line_number),
        cmocka_unit_test(malformed_vocabularies_give_evocab_or_ejson),
        cmocka_unit_test(bad_load_arguments_give_einval),
    };
    return cmocka_run_group_tests(tests, load_gpt2, free_gpt2);
}
