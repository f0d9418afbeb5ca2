/* test_json.c — the strict JSON reader (c/src/json.c): what it accepts, what it
 * builds, and every kind of document it must reject. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"
#include "testutil.h"

/* Parse a C string literal of known length (it may contain NUL bytes). */
#define PARSE(doc, lit) json_parse((doc), (lit), sizeof(lit) - 1, 0)

/* ---- what it accepts and builds ----------------------------------------- */

static void a_nested_document_becomes_a_tree_of_contiguous_children(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, " {\"a\": [1, 2, {\"b\": null}], \"c\": true, \"d\": false, \"e\": \"x\", \"f\": {}} \n"), ALAB_OK);
    const json_value *root = doc.root;
    assert_non_null(root);
    assert_int_equal(root->type, JSON_OBJECT);
    assert_int_equal(root->n, 5);
    assert_string_equal(doc.err, "");

    const json_value *a = json_get(root, "a");
    assert_non_null(a);
    assert_int_equal(a->type, JSON_ARRAY);
    assert_int_equal(a->n, 3);
    assert_int_equal(a->u.items[0].type, JSON_NUMBER);
    assert_true(a->u.items[0].u.num == 1.0);
    assert_true(a->u.items[1].u.num == 2.0);
    assert_null(a->u.items[0].key); /* array elements have no key */
    const json_value *inner = &a->u.items[2];
    assert_int_equal(inner->type, JSON_OBJECT);
    assert_int_equal(inner->n, 1);
    assert_int_equal(json_get(inner, "b")->type, JSON_NULL);

    assert_int_equal(json_get(root, "c")->type, JSON_TRUE);
    assert_int_equal(json_get(root, "d")->type, JSON_FALSE);
    const json_value *e = json_get(root, "e");
    assert_int_equal(e->type, JSON_STRING);
    assert_int_equal(e->n, 1);
    assert_string_equal(e->u.str, "x");
    assert_int_equal(json_get(root, "f")->type, JSON_OBJECT);
    assert_int_equal(json_get(root, "f")->n, 0);
    assert_null(json_get(root, "zzz"));
    assert_null(json_get(a, "a")); /* not an object */
    /* members keep their order and their keys */
    assert_string_equal(root->u.items[0].key, "a");
    assert_int_equal(root->u.items[0].key_len, 1);
    assert_string_equal(root->u.items[4].key, "f");
    json_free(&doc);
    json_free(&doc); /* twice is safe */
}

static void scalars_are_valid_documents_on_their_own(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "42"), ALAB_OK);
    assert_int_equal(doc.root->type, JSON_NUMBER);
    assert_true(doc.root->u.num == 42.0);
    json_free(&doc);
    assert_int_equal(PARSE(&doc, "\t\"s\"\r\n"), ALAB_OK);
    assert_string_equal(doc.root->u.str, "s");
    json_free(&doc);
    assert_int_equal(PARSE(&doc, "null"), ALAB_OK);
    assert_int_equal(doc.root->type, JSON_NULL);
    json_free(&doc);
    assert_int_equal(PARSE(&doc, "[]"), ALAB_OK);
    assert_int_equal(doc.root->type, JSON_ARRAY);
    assert_int_equal(doc.root->n, 0);
    json_free(&doc);
}

static void escapes_are_decoded_to_utf8_with_their_length(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "[\"q\\\"b\\\\s\\/b\\bf\\fn\\nr\\rt\\t\", \"\\u00e9\\u4E2D\", \"a\\u0000b\"]"), ALAB_OK);
    const json_value *s = &doc.root->u.items[0];
    assert_int_equal(s->n, 16);
    assert_memory_equal(s->u.str, "q\"b\\s/b\bf\fn\nr\rt\t", 16);
    assert_int_equal(s->u.str[16], '\0');
    const json_value *u = &doc.root->u.items[1];
    assert_int_equal(u->n, 5);
    assert_memory_equal(u->u.str, "\xC3\xA9\xE4\xB8\xAD", 5); /* é 中 */
    const json_value *z = &doc.root->u.items[2];
    assert_int_equal(z->n, 3); /* the NUL is kept, so the length is the truth */
    assert_memory_equal(z->u.str, "a\0b", 3);
    json_free(&doc);
}

static void a_surrogate_pair_escape_becomes_one_four_byte_character(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "\"\\ud83d\\ude00 \\uD834\\uDD1E\""), ALAB_OK);
    assert_int_equal(doc.root->n, 9);
    assert_memory_equal(doc.root->u.str, "\xF0\x9F\x98\x80 \xF0\x9D\x84\x9E", 9); /* 😀 𝄞 */
    json_free(&doc);
}

static void raw_utf8_in_strings_and_keys_is_kept_as_is(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "{\"\xC4\xA0the\": 262, \"\xE6\xB3\xA8\xE6\x84\x8F\": \"\xF0\x9F\x91\x8D\"}"), ALAB_OK);
    const json_value *v = json_get(doc.root, "\xC4\xA0the");
    assert_non_null(v);
    assert_true(v->u.num == 262.0);
    assert_int_equal(doc.root->u.items[1].key_len, 6);
    assert_memory_equal(json_get(doc.root, "\xE6\xB3\xA8\xE6\x84\x8F")->u.str, "\xF0\x9F\x91\x8D", 4);
    json_free(&doc);
}

static void numbers_follow_the_json_grammar_including_exponents(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "[0, -0, 12, -3.5, 1e3, 1E-2, 2.5e+10, 123456789012345678, 0.1, 1e-400, 1.7976931348623157e308]"), ALAB_OK);
    const json_value *x = doc.root->u.items;
    assert_int_equal(doc.root->n, 11);
    assert_true(x[0].u.num == 0.0);
    assert_true(x[1].u.num == 0.0 && signbit(x[1].u.num));
    assert_true(x[2].u.num == 12.0);
    assert_true(x[3].u.num == -3.5);
    assert_true(x[4].u.num == 1000.0);
    assert_true(x[5].u.num == 0.01);
    assert_true(x[6].u.num == 2.5e10);
    assert_true(x[7].u.num == 123456789012345678.0);
    assert_true(x[8].u.num == 0.1);
    assert_true(x[9].u.num == 0.0); /* underflow is not an error */
    assert_true(x[10].u.num == 1.7976931348623157e308);
    json_free(&doc);
}

static void json_int64_accepts_exact_integers_below_2_pow_53_only(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "[9007199254740991, -9007199254740991, 9007199254740992, 1e3, 1.5, -42, \"7\", 50256]"), ALAB_OK);
    const json_value *x = doc.root->u.items;
    int64_t v = 0;
    assert_int_equal(json_int64(&x[0], &v), 0);
    assert_true(v == INT64_C(9007199254740991));
    assert_int_equal(json_int64(&x[1], &v), 0);
    assert_true(v == -INT64_C(9007199254740991));
    assert_int_equal(json_int64(&x[2], &v), -1); /* 2^53 */
    assert_int_equal(json_int64(&x[3], &v), 0);
    assert_true(v == 1000);
    assert_int_equal(json_int64(&x[4], &v), -1);
    assert_int_equal(json_int64(&x[5], &v), 0);
    assert_true(v == -42);
    assert_int_equal(json_int64(&x[6], &v), -1); /* a string is not a number */
    assert_int_equal(json_int64(&x[7], &v), 0);
    assert_true(v == 50256);
    assert_int_equal(json_int64(NULL, &v), -1);
    json_free(&doc);
}

/* Issue 21: a repeated key was kept (json_get gave the first, Python's json
 * the last); it is refused now, in small objects and in large ones (the
 * sorted-index path), nested too, with the key named. Keys that differ only
 * after an embedded NUL, or only in length, are different keys. */
static void duplicate_keys_are_refused(void **state) {
    json_doc doc;
    assert_int_equal(PARSE(&doc, "{\"k\": 1, \"k\": 2}"), ALAB_EJSON);
    assert_non_null(strstr(doc.err, "duplicate key \"k\" (members 1 and 2"));
    assert_int_equal(doc.err_offset, 0);
    assert_null(doc.root);
    assert_int_equal(PARSE(&doc, "[0, {\"x\": {\"a\": 1, \"b\": 2, \"a\": 3}}]"), ALAB_EJSON);
    assert_non_null(strstr(doc.err, "duplicate key \"a\" (members 1 and 3"));
    assert_int_equal(doc.err_offset, 10);
    /* a large object: 1000 distinct keys, then key 500 again */
    char *big = malloc(20000);
    size_t n = 0;
    big[n++] = '{';
    for (int i = 0; i < 1000; i++) n += (size_t)sprintf(big + n, "%s\"key%d\":%d", i ? "," : "", i, i);
    big[n] = '}';
    assert_int_equal(json_parse(&doc, big, n + 1, 0), ALAB_OK);
    assert_int_equal(doc.root->n, 1000);
    assert_true(json_get(doc.root, "key999")->u.num == 999.0);
    json_free(&doc);
    n += (size_t)sprintf(big + n, ",\"key500\":0,\"key7\":0}");
    assert_int_equal(json_parse(&doc, big, n, 0), ALAB_EJSON);
    assert_non_null(strstr(doc.err, "duplicate key \"key500\" (members 501 and 1001"));
    free(big);
    /* different keys */
    assert_int_equal(PARSE(&doc, "{\"k\": 1, \"k\\u0000\": 2, \"a\\u0000b\": 3, \"a\": 4, \"\": 5}"), ALAB_OK);
    assert_int_equal(doc.root->n, 5);
    assert_int_equal(doc.root->u.items[2].key_len, 3); /* key with an embedded NUL */
    assert_true(json_get(doc.root, "a")->u.num == 4.0); /* "a" is not "a\0b" */
    json_free(&doc);
    /* the same key in two different objects is fine */
    assert_int_equal(PARSE(&doc, "[{\"k\": 1}, {\"k\": 2}]"), ALAB_OK);
    json_free(&doc);
}

/* The large-object check is a hash table that hands the object to a sorted index when its probe runs grow
 * long. Keys chosen so that FNV-1a puts all of them in the same slot of the table (the hash the parser uses,
 * reproduced here) take that second path: the answer is the same, a duplicate named with its members and
 * distinct keys accepted. */
static uint32_t fnv1a(const char *k, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

static void colliding_keys_take_the_sorted_check_with_the_same_answer(void **state) {
    (void)state;
    enum { N = 300 };
    const uint32_t mask = 1023; /* the table of 300 members: the power of two >= 600 */
    char (*keys)[16] = malloc(N * sizeof *keys);
    int found = 0;
    for (unsigned c = 0; found < N; c++) {
        char k[16];
        int len = snprintf(k, sizeof k, "c%u", c);
        if ((fnv1a(k, (size_t)len) & mask) == 7) memcpy(keys[found++], k, (size_t)len + 1);
    }
    char *big = malloc(N * 24 + 64);
    size_t n = 0;
    big[n++] = '{';
    for (int i = 0; i < N; i++) n += (size_t)sprintf(big + n, "%s\"%s\":%d", i ? "," : "", keys[i], i);
    json_doc doc;
    big[n] = '}';
    assert_int_equal(json_parse(&doc, big, n + 1, 0), ALAB_OK);
    assert_int_equal(doc.root->n, N);
    json_free(&doc);
    /* member 201 repeats member 151, member 251 member 3: the first second copy is named */
    n += (size_t)sprintf(big + n, ",\"%s\":0,\"%s\":0}", keys[150], keys[2]);
    assert_int_equal(json_parse(&doc, big, n, 0), ALAB_EJSON);
    char want[80];
    snprintf(want, sizeof want, "duplicate key \"%s\" (members 151 and %d", keys[150], N + 1);
    assert_non_null(strstr(doc.err, want));
    free(big);
    free(keys);
}

/* "[[[...1...]]]" with `depth` brackets on each side. */
static char *nested(int depth, size_t *len) {
    char *s = malloc((size_t)depth * 2 + 2);
    for (int i = 0; i < depth; i++) s[i] = '[';
    s[depth] = '1';
    for (int i = 0; i < depth; i++) s[depth + 1 + i] = ']';
    *len = (size_t)depth * 2 + 1;
    s[*len] = '\0';
    return s;
}

static void nesting_of_exactly_64_levels_is_accepted(void **state) {
    size_t len;
    char *s = nested(JSON_MAX_DEPTH, &len);
    json_doc doc;
    assert_int_equal(json_parse(&doc, s, len, 0), ALAB_OK);
    const json_value *v = doc.root;
    for (int i = 0; i < JSON_MAX_DEPTH; i++) {
        assert_int_equal(v->type, JSON_ARRAY);
        assert_int_equal(v->n, 1);
        v = &v->u.items[0];
    }
    assert_true(v->u.num == 1.0);
    json_free(&doc);
    free(s);
}

static void a_document_over_max_len_is_refused_with_elimit(void **state) {
    json_doc doc;
    assert_int_equal(json_parse(&doc, "[1,2,3]", 7, 6), ALAB_ELIMIT);
    assert_true(strlen(doc.err) > 0);
    assert_null(doc.root);
    json_free(&doc);
    assert_int_equal(json_parse(&doc, "[1,2,3]", 7, 7), ALAB_OK);
    json_free(&doc);
}

/* The tree costs at most JSON_ARENA_PER_BYTE times the document (+ 1 MiB): 4 MB of bare zeros (32 bytes of tree
 * per 2 bytes of text natively) is refused before the arena is allocated; 4 MB of minified merge pairs
 * (["a","b"]: 3 values in 10 bytes) is not (issue 36 item 8). */
static void a_tree_is_bounded_by_the_document(void **state) {
    (void)state;
    const size_t n = 2u << 20;
    char *z = malloc(2 * n + 2);
    size_t o = 0;
    z[o++] = '[';
    for (size_t i = 0; i < n; i++) { z[o++] = '0'; z[o++] = ','; }
    z[o - 1] = ']';
    json_doc doc;
    const int want = sizeof(json_value) * 1 > 2 * JSON_ARENA_PER_BYTE ? ALAB_ELIMIT : ALAB_OK; /* wasm32: 24-byte nodes */
    assert_int_equal(json_parse(&doc, z, o, 0), want);
    if (want == ALAB_ELIMIT) assert_non_null(strstr(doc.err, "times the document"));
    json_free(&doc);
    free(z);
    const size_t m = 400000;
    char *pairs = malloc(m * 10 + 2);
    o = 0;
    pairs[o++] = '[';
    for (size_t i = 0; i < m; i++) { memcpy(pairs + o, "[\"a\",\"b\"],", 10); o += 10; }
    pairs[o - 1] = ']';
    assert_int_equal(json_parse(&doc, pairs, o, 0), ALAB_OK);
    json_free(&doc);
    free(pairs);
}

static void the_gpt2_vocabulary_parses_into_50257_members(void **state) {
    size_t len = 0;
    char *text = slurp(repo_path("models/brown-gpt2/vocab.json"), &len);
    assert_non_null(text);
    json_doc doc;
    assert_int_equal(json_parse(&doc, text, len, 0), ALAB_OK);
    assert_int_equal(doc.root->type, JSON_OBJECT);
    assert_int_equal(doc.root->n, 50257);
    int64_t id = -1;
    assert_int_equal(json_int64(json_get(doc.root, "<|endoftext|>"), &id), 0);
    assert_true(id == 50256);
    assert_int_equal(json_int64(json_get(doc.root, "\xC4\xA0the"), &id), 0); /* "Ġthe" */
    assert_true(id == 262);
    json_free(&doc);
    free(text);
}

/* ---- what it rejects ------------------------------------------------------ */

typedef struct {
    const char *text;
    size_t len;
    size_t offset; /* expected err_offset, or (size_t)-1 to skip the check */
} reject_case;

static void rejected(void **state) {
    const reject_case *c = *state;
    json_doc doc;
    int rc = json_parse(&doc, c->text, c->len, 0);
    if (rc != ALAB_EJSON) print_error("json_parse returned %d for [%.*s]\n", rc, (int)c->len, c->text);
    assert_int_equal(rc, ALAB_EJSON);
    assert_true(strlen(doc.err) > 0);
    assert_null(doc.root);
    assert_null(doc.arena);
    assert_true(strstr(doc.err, "at byte") != NULL);
    assert_true(doc.err_offset <= c->len);
    assert_string_equal(alab_last_error(), doc.err); /* also the thread's last error */
    if (c->offset != (size_t)-1) {
        if (doc.err_offset != c->offset) print_error("%s\n", doc.err);
        assert_int_equal(doc.err_offset, c->offset);
    }
    json_free(&doc);
}

static void nesting_of_65_levels_is_rejected(void **state) {
    size_t len;
    char *s = nested(JSON_MAX_DEPTH + 1, &len);
    reject_case c = {s, len, JSON_MAX_DEPTH};
    void *p = &c;
    rejected(&p);
    free(s);
}

static void a_bare_minus_at_the_end_is_rejected(void **state) {
    /* The buffer is not NUL-terminated after the '-': the parser must not read on. */
    char buf[1] = {'-'};
    reject_case c = {buf, 1, 1};
    void *p = &c;
    rejected(&p);
}

#define ANY ((size_t)-1)
#define REJECT(name, lit, off) \
    { "rejects " name, rejected, NULL, NULL, (void *)&(const reject_case){ lit, sizeof(lit) - 1, off } }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_nested_document_becomes_a_tree_of_contiguous_children),
        cmocka_unit_test(scalars_are_valid_documents_on_their_own),
        cmocka_unit_test(escapes_are_decoded_to_utf8_with_their_length),
        cmocka_unit_test(a_surrogate_pair_escape_becomes_one_four_byte_character),
        cmocka_unit_test(raw_utf8_in_strings_and_keys_is_kept_as_is),
        cmocka_unit_test(numbers_follow_the_json_grammar_including_exponents),
        cmocka_unit_test(json_int64_accepts_exact_integers_below_2_pow_53_only),
        cmocka_unit_test(duplicate_keys_are_refused),
        cmocka_unit_test(colliding_keys_take_the_sorted_check_with_the_same_answer),
        cmocka_unit_test(nesting_of_exactly_64_levels_is_accepted),
        cmocka_unit_test(nesting_of_65_levels_is_rejected),
        cmocka_unit_test(a_document_over_max_len_is_refused_with_elimit),
        cmocka_unit_test(a_tree_is_bounded_by_the_document),
        cmocka_unit_test(the_gpt2_vocabulary_parses_into_50257_members),
        cmocka_unit_test(a_bare_minus_at_the_end_is_rejected),
        REJECT("a trailing comma in an array", "[1,2,]", 5),
        REJECT("a trailing comma in an object", "{\"a\":1,}", 7),
        REJECT("an empty element between commas", "[1,,2]", 3),
        REJECT("a line comment", "// c\n1", 0),
        REJECT("a block comment inside an array", "[1 /* x */]", 3),
        REJECT("a leading zero", "01", 0),
        REJECT("a negative number with a leading zero", "[-01]", 1),
        REJECT("a lone high surrogate", "\"\\ud800\"", 1),
        REJECT("a high surrogate followed by a non-surrogate escape", "\"\\ud800\\u0041\"", 1),
        REJECT("a lone low surrogate", "\"ab\\udc00\"", 3),
        REJECT("an unknown escape", "\"\\x41\"", 1),
        REJECT("a \\u escape with three hex digits", "\"\\u12\"", 1),
        REJECT("a \\u escape with a non-hex digit", "\"\\u12G4\"", 1),
        REJECT("a raw control character in a string", "\"a\x01" "b\"", 2),
        REJECT("a raw newline in a string", "\"a\nb\"", 2),
        REJECT("a raw tab in a string", "[\"\t\"]", 2),
        REJECT("an invalid UTF-8 byte in a string", "\"a\xFF\"", 2),
        REJECT("an overlong UTF-8 encoding", "\"\xC0\xAF\"", 1),
        REJECT("a UTF-8 encoded surrogate", "\"\xED\xA0\x80\"", 1),
        REJECT("a truncated UTF-8 sequence", "\"\xE2\x82\"", 1),
        REJECT("a code point above U+10FFFF", "\"\xF4\x90\x80\x80\"", 1),
        REJECT("a lone continuation byte in a key", "{\"\x80\":1}", 2),
        REJECT("an invalid UTF-8 byte outside a string", "[\xC3\xA9]", 1),
        REJECT("a truncated array", "[1,2", 0),
        REJECT("a truncated object after the colon", "{\"a\":", 5),
        REJECT("an unterminated string", "\"abc", 0),
        REJECT("a truncated literal", "tru", 0),
        REJECT("a truncated escape", "\"\\", 0),
        REJECT("trailing garbage after a number", "1 2", 2),
        REJECT("trailing garbage after an object", "{} x", 3),
        REJECT("an extra closing bracket", "[]]", 2),
        REJECT("NaN", "NaN", 0),
        REJECT("Infinity", "[Infinity]", 1),
        REJECT("-Infinity", "-Infinity", 1),
        REJECT("an empty input", "", 0),
        REJECT("an input of whitespace only", " \n\t ", 4),
        REJECT("single-quoted strings", "['a']", 1),
        REJECT("an unquoted key", "{a:1}", 1),
        REJECT("a missing colon", "{\"a\" 1}", 5),
        REJECT("a number ending in a dot", "1.", 2),
        REJECT("a number starting with a dot", ".5", 0),
        REJECT("an exponent without digits", "[1e]", 3),
        REJECT("a plus sign before a number", "+1", 0),
        REJECT("a number that overflows a double", "1e400", 0),
        REJECT("a hex number", "0x10", 1),
        REJECT("a byte order mark", "\xEF\xBB\xBF{}", 0),
        REJECT("a NUL byte after the value", "1\0", 1),
        REJECT("a capitalised literal", "True", 0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
