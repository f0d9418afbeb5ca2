/* json.h — a strict, bounded JSON reader (RFC 8259).
 *
 * Parses a whole document into a tree held in one arena. Strings are decoded
 * (escapes, \uXXXX with surrogate pairs) to UTF-8 and NUL-terminated, with
 * their byte length kept (they may contain NUL). Rejects: trailing garbage,
 * trailing commas, comments, leading zeros, lone surrogates, control
 * characters in strings, invalid UTF-8, nesting deeper than JSON_MAX_DEPTH,
 * NaN/Infinity, numbers that overflow a double, an object naming a key twice
 * (Python's json would keep the last copy, a first-wins reader the first: the
 * file is ambiguous, so it is refused; the check is O(n log n) per object).
 */
#ifndef ALAB_JSON_H
#define ALAB_JSON_H

#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 64
/* The parsed tree holds at most this many bytes per byte of the document (+ 1 MiB): ALAB_ELIMIT beyond. */
#define JSON_ARENA_PER_BYTE 12

typedef enum { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING,
               JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value json_value;
struct json_value {
    json_type type;
    uint32_t n;            /* array/object: number of children; string: byte length */
    const char *key;       /* set when this value is an object member (decoded, NUL-terminated) */
    uint32_t key_len;
    union {
        double num;            /* JSON_NUMBER */
        const char *str;       /* JSON_STRING (decoded, NUL-terminated) */
        json_value *items;     /* JSON_ARRAY / JSON_OBJECT: n children, contiguous */
    } u;
};

typedef struct {
    json_value *root;
    void *arena;           /* everything the tree points to */
    size_t err_offset;     /* byte offset of a parse error */
    char err[160];         /* human-readable parse error ("" if ok) */
} json_doc;

/* Returns 0 (ALAB_OK) or ALAB_EJSON / ALAB_ENOMEM / ALAB_ELIMIT (len over
 * max_len when max_len > 0, or a tree over JSON_ARENA_PER_BYTE times len) / ALAB_EINVAL (NULL src with a nonzero len). On failure doc->err says what and where;
 * json_free is still safe to call. */
int json_parse(json_doc *doc, const char *src, size_t len, size_t max_len);
void json_free(json_doc *doc);

/* First member of obj named key (NULL if obj is not an object or has none). */
const json_value *json_get(const json_value *obj, const char *key);
/* Number as an integer if it is one exactly (|x| < 2^53): 0 ok, -1 otherwise. */
int json_int64(const json_value *v, int64_t *out);

#endif
