/* fuzz_json.c — the JSON reader (config.json, vocab.json, safetensors headers)
 * on arbitrary bytes. Properties: never crashes; a rejected document has an
 * error message and a byte offset inside the input; an accepted one is a tree
 * whose every node can be walked, whose strings are NUL-terminated at their
 * stated length, whose numbers are finite, and whose objects never name a key
 * twice. */
#include "fuzz_common.h"
#include "internal.h"
#include "json.h"

#include <math.h>

static size_t walk(const json_value *v, int depth) {
    FUZZ_CHECK(depth <= JSON_MAX_DEPTH);
    size_t n = 1;
    switch (v->type) {
    case JSON_NUMBER: FUZZ_CHECK(isfinite(v->u.num)); (void)json_int64(v, NULL); break;
    case JSON_STRING: FUZZ_CHECK(v->u.str && v->u.str[v->n] == '\0'); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        for (uint32_t i = 0; i < v->n; i++) {
            const json_value *c = &v->u.items[i];
            if (v->type == JSON_OBJECT) {
                FUZZ_CHECK(c->key && c->key[c->key_len] == '\0');
                /* keys are unique (a repeated one is refused), so json_get finds this very member
                 * (keys with a NUL are not findable by C string) */
                if (strlen(c->key) == c->key_len) {
                    const json_value *g = json_get(v, c->key);
                    FUZZ_CHECK(g == c);
                }
                /* and no other member has the same bytes (pairwise for small objects only: the fuzzer's inputs are small) */
                if (v->n <= 64)
                    for (uint32_t j = 0; j < i; j++)
                        FUZZ_CHECK(v->u.items[j].key_len != c->key_len || memcmp(v->u.items[j].key, c->key, c->key_len) != 0);
            }
            n += walk(c, depth + 1);
        }
        break;
    default: break;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_doc doc;
    int rc = json_parse(&doc, (const char *)data, size, 0);
    FUZZ_CHECK_RC(rc);
    if (rc == ALAB_OK) {
        FUZZ_CHECK(doc.root != NULL);
        size_t n = walk(doc.root, 0);
        FUZZ_CHECK(n <= size); /* every value takes at least one byte of input */
    } else {
        FUZZ_CHECK(doc.root == NULL && doc.err[0] != '\0');
        if (rc == ALAB_EJSON) FUZZ_CHECK(doc.err_offset <= size);
    }
    json_free(&doc);
    /* with a limit below the size: refused before parsing */
    if (size > 1) {
        rc = json_parse(&doc, (const char *)data, size, size - 1);
        FUZZ_CHECK(rc == ALAB_ELIMIT && doc.root == NULL);
        json_free(&doc);
    }
    return 0;
}
