/* json.c — a strict, bounded JSON reader (RFC 8259). The contract is in json.h.
 *
 * The whole document becomes a tree in ONE allocation (the arena):
 *
 *     [ json_value nodes ............ ][ decoded strings, each NUL-terminated ]
 *       root, then every container's
 *       children as one contiguous block
 *
 * To size that arena exactly we run the same recursive-descent parser twice:
 *   pass 1 (count):  validate everything, count the values, the decoded string
 *                    bytes, and the number of children of every container
 *                    (stored in pre-order, the only temporary array);
 *   pass 2 (fill):   walk the (now known valid) text again and write the nodes,
 *                    giving each container the block of children counted in
 *                    pass 1.
 * There is no allocation per node, so vocab.json (1 MB, 50257 members) parses
 * in a few milliseconds.
 *
 * Strictness, with the message a rejected document gets (doc->err, which also
 * names the byte offset): trailing garbage, trailing commas, comments, leading
 * zeros, "NaN"/"Infinity", numbers that overflow a double, control characters
 * and invalid UTF-8 (overlongs, surrogates, > U+10FFFF) in strings, bad escapes,
 * lone surrogates in \u escapes, nesting deeper than JSON_MAX_DEPTH, empty or
 * truncated input, an object that names a key twice (checked in pass 2 through
 * a sorted index: O(n log n), no hash table that chosen keys could flood). A byte order mark is rejected too (RFC 8259 §8.1 lets a
 * parser ignore it; we say so instead).
 */
#include "json.h"
#include "internal.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Parser state                                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
    const unsigned char *src;
    size_t len;
    size_t pos;
    int fill;              /* 0: pass 1 (validate, count); 1: pass 2 (write)  */
    json_doc *doc;
    /* pass 1 results */
    size_t n_values;       /* every value, the root included                  */
    size_t n_str_bytes;    /* decoded keys and strings, with their NULs       */
    uint32_t *counts;      /* children of each container, in pre-order        */
    size_t n_counts, cap_counts;
    /* pass 2 cursors into the arena */
    size_t next_container; /* index into counts                               */
    json_value *nodes;
    size_t next_node;
    char *strs;
    size_t next_str;
    /* pass 2 scratch for the duplicate-key check of large objects */
    const json_value **keyidx;
    size_t cap_keyidx;
    uint32_t *keyhash;     /* the hashed check's open-addressed table (member index + 1, 0 = empty) */
    size_t cap_keyhash;
} parser;

/* Record a parse error at byte offset `at` and return ALAB_EJSON. */
static int perr(parser *p, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int perr(parser *p, size_t at, const char *fmt, ...) {
    char what[120];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(p->doc->err, sizeof p->doc->err, "json: %s at byte %zu", what, at);
    p->doc->err_offset = at;
    return ALAB_EJSON;
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->src[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

/* Describe the byte at pos for an error message ("'x'", "byte 0xC3", "end of input"). */
static const char *what_is(const parser *p, size_t pos, char *buf, size_t cap) {
    if (pos >= p->len) return "end of input";
    unsigned char c = p->src[pos];
    if (c >= 0x21 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02X", c);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Strings                                                                    */
/* ------------------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at s (at most n bytes available),
 * or 0 if it is not well formed (Unicode Table 3-7: no overlongs, no
 * surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return (n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80) ? 3 : 0;
    }
    if (c < 0xF5) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return (n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 &&
                (s[3] & 0xC0) == 0x80) ? 4 : 0;
    }
    return 0;
}

static int hex4(const unsigned char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* Write code point cp as UTF-8 to dst (if not NULL); return its length. */
static size_t put_utf8(char *dst, uint32_t cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12)); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18)); b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
    }
    if (dst) memcpy(dst, b, n);
    return n;
}

/* Parse the string starting at the opening quote. Pass 1 counts its decoded
 * size; pass 2 writes it (NUL-terminated) to the string area. */
static int parse_string(parser *p, const char **out, uint32_t *out_len) {
    size_t start = p->pos;
    p->pos++; /* opening quote */
    char *dst = p->fill ? p->strs + p->next_str : NULL;
    size_t n = 0; /* decoded bytes so far */
    for (;;) {
        /* The common case first: a run of printable ASCII without escapes. */
        size_t run = p->pos;
        while (run < p->len) {
            unsigned char c = p->src[run];
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
            run++;
        }
        if (run > p->pos) {
            if (dst) memcpy(dst + n, p->src + p->pos, run - p->pos);
            n += run - p->pos;
            p->pos = run;
        }
        if (p->pos >= p->len) return perr(p, start, "unterminated string");
        unsigned char c = p->src[p->pos];
        if (c == '"') { p->pos++; break; }
        if (c < 0x20) return perr(p, p->pos, "control character 0x%02X in a string (escape it)", c);
        if (c >= 0x80) {
            size_t k = utf8_len(p->src + p->pos, p->len - p->pos);
            if (k == 0) return perr(p, p->pos, "invalid UTF-8 in a string");
            if (dst) memcpy(dst + n, p->src + p->pos, k);
            n += k;
            p->pos += k;
            continue;
        }
        /* c == '\\': an escape */
        size_t esc = p->pos;
        if (p->pos + 1 >= p->len) return perr(p, start, "unterminated string");
        unsigned char e = p->src[p->pos + 1];
        char one = 0;
        switch (e) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u': break;
        default: {
            char buf[16];
            return perr(p, esc, "bad escape \\%s", what_is(p, p->pos + 1, buf, sizeof buf));
        }
        }
        if (e != 'u') {
            if (dst) dst[n] = one;
            n++;
            p->pos += 2;
            continue;
        }
        uint32_t cp;
        if (p->pos + 6 > p->len || hex4(p->src + p->pos + 2, &cp) != 0)
            return perr(p, esc, "bad \\u escape (needs 4 hex digits)");
        p->pos += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return perr(p, esc, "lone low surrogate \\u%04X", cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (p->pos + 6 > p->len || p->src[p->pos] != '\\' || p->src[p->pos + 1] != 'u' ||
                hex4(p->src + p->pos + 2, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                return perr(p, esc, "lone high surrogate \\u%04X (a low surrogate must follow)", cp);
            p->pos += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        n += put_utf8(dst ? dst + n : NULL, cp);
    }
    if (n > UINT32_MAX - 1) return perr(p, start, "string longer than 4 GiB");
    if (dst) {
        dst[n] = '\0';
        *out = dst;
        p->next_str += n + 1;
    } else {
        p->n_str_bytes += n + 1;
    }
    if (out_len) *out_len = (uint32_t)n;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                    */
/* ------------------------------------------------------------------------ */

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int parse_number(parser *p, double *out) {
    size_t start = p->pos, i = p->pos;
    const unsigned char *s = p->src;
    char buf[16];
    if (s[i] == '-') i++;
    if (i >= p->len || s[i] < '0' || s[i] > '9')
        return perr(p, i, "expected a digit, found %s", what_is(p, i, buf, sizeof buf));
    int simple = 1; /* integer without fraction or exponent */
    if (s[i] == '0') {
        i++;
        if (i < p->len && s[i] >= '0' && s[i] <= '9') return perr(p, start, "leading zero in a number");
    } else {
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < p->len && s[i] == '.') {
        simple = 0;
        i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return perr(p, i, "expected a digit after '.', found %s", what_is(p, i, buf, sizeof buf));
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        simple = 0;
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= p->len || s[i] < '0' || s[i] > '9')
            return perr(p, i, "expected a digit in the exponent, found %s", what_is(p, i, buf, sizeof buf));
        while (i < p->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    size_t n = i - start;
    p->pos = i;

    /* Fast path: an integer of at most 15 digits is exact in a double. */
    int neg = s[start] == '-';
    if (simple && n - (size_t)neg <= 15) {
        int64_t v = 0;
        for (size_t k = start + (size_t)neg; k < i; k++) v = v * 10 + (s[k] - '0');
        *out = neg ? -(double)v : (double)v;
        return ALAB_OK;
    }
    /* General path: strtod on a NUL-terminated copy (the source need not be
     * NUL-terminated), with '.' swapped for the locale's decimal point. */
    char small[64];
    char *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp) return ALAB_ENOMEM;
    memcpy(tmp, s + start, n);
    tmp[n] = '\0';
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && dp[0] != '.' && dp[1] == '\0') {
        char *dot = strchr(tmp, '.');
        if (dot) *dot = dp[0];
    }
    double v = strtod(tmp, NULL);
    if (tmp != small) free(tmp);
    if (isinf(v)) return perr(p, start, "number overflows a double");
    *out = v;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                     */
/* ------------------------------------------------------------------------ */

static int parse_value(parser *p, json_value *out, int depth);

/* Pass 1: reserve the pre-order slot for this container's child count.
 * Pass 2: take the counted block of children from the arena. */
static int open_container(parser *p, json_value *out, json_type type, int depth,
                          size_t *slot, json_value **children) {
    if (depth + 1 > JSON_MAX_DEPTH)
        return perr(p, p->pos, "nesting deeper than %d levels", JSON_MAX_DEPTH);
    if (!p->fill) {
        if (p->n_counts == p->cap_counts) {
            size_t cap = p->cap_counts ? 2 * p->cap_counts : 64;
            uint32_t *c = realloc(p->counts, cap * sizeof *c);
            if (!c) return ALAB_ENOMEM;
            p->counts = c;
            p->cap_counts = cap;
        }
        *slot = p->n_counts++;
        p->counts[*slot] = 0;
        *children = NULL;
    } else {
        uint32_t n = p->counts[p->next_container++];
        *children = p->nodes + p->next_node;
        p->next_node += n;
        out->type = type;
        out->n = n;
        out->u.items = *children;
    }
    return ALAB_OK;
}

static int close_container(parser *p, size_t slot, size_t count, size_t at) {
    if (count > UINT32_MAX) return perr(p, at, "more than 2^32-1 elements");
    if (!p->fill) {
        p->counts[slot] = (uint32_t)count;
        p->n_values += count;
    }
    return ALAB_OK;
}

/* Order of two members by key (length first, then bytes): a total order in
 * which equal keys are neighbours. */
static int cmp_key(const void *a, const void *b) {
    const json_value *x = *(const json_value *const *)a, *y = *(const json_value *const *)b;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    int c = memcmp(x->key, y->key, x->key_len);
    if (c) return c;
    return x < y ? -1 : (x > y); /* the earlier member first */
}

/* FNV-1a over a key's bytes. */
static uint32_t key_hash(const char *k, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)k[i]) * 16777619u;
    return h;
}

/* The longest probe run the hashed check accepts before it hands the object to the sorted check. */
#define KEY_PROBE_LIMIT 64

/* The hashed check: members inserted in order into an open-addressed table; the first member whose key is
 * already there is the repeated key whose second copy comes first (*b), *a its earlier copy. Returns 1 when
 * decided (a duplicate found or none), 0 when some probe run grew past KEY_PROBE_LIMIT (keys crafted to
 * collide): then the sorted check decides, so a flood of collisions costs O(n log n), never O(n^2). */
static int unique_keys_hashed(parser *p, const json_value *kids, size_t n, const json_value **a,
                              const json_value **b, int *nomem) {
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    if (size > p->cap_keyhash) {
        uint32_t *t = realloc(p->keyhash, size * sizeof *t);
        if (!t) { *nomem = 1; return 1; }
        p->keyhash = t;
        p->cap_keyhash = size;
    }
    uint32_t *t = p->keyhash;
    memset(t, 0, size * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        size_t at = key_hash(kids[i].key, kids[i].key_len) & (size - 1);
        for (int probe = 0;; probe++, at = (at + 1) & (size - 1)) {
            if (probe > KEY_PROBE_LIMIT) return 0;
            if (!t[at]) { t[at] = (uint32_t)(i + 1); break; }
            const json_value *x = &kids[t[at] - 1];
            if (x->key_len == kids[i].key_len && memcmp(x->key, kids[i].key, x->key_len) == 0) {
                *a = x;
                *b = &kids[i];
                return 1;
            }
        }
    }
    return 1;
}

/* Pass 2: refuse an object that names a key twice (Python's json keeps the
 * last, ours kept the first: instead of choosing, we say so). Small objects
 * are compared pairwise; larger ones through a hash table (a vocab.json of 50 257
 * keys: its sorted check was the largest part of a model's load in wasm), or, when
 * its probe runs grow long, through a sorted index, so the check is O(n log n) in
 * the member count whatever the keys are (a hash flood costs the sort, no more). */
static int check_unique_keys(parser *p, const json_value *kids, size_t n, size_t at) {
    const json_value *a = NULL, *b = NULL;
    int nomem = 0;
    if (n < 2) return ALAB_OK;
    if (n <= 8) {
        for (size_t i = 1; i < n && !a; i++)
            for (size_t j = 0; j < i; j++)
                if (kids[i].key_len == kids[j].key_len && memcmp(kids[i].key, kids[j].key, kids[i].key_len) == 0) {
                    a = &kids[j];
                    b = &kids[i];
                    break;
                }
    } else if (n > UINT32_MAX - 1 || !unique_keys_hashed(p, kids, n, &a, &b, &nomem)) {
        if (n > p->cap_keyidx) {
            const json_value **k = realloc((void *)p->keyidx, n * sizeof *k);
            if (!k) return ALAB_ENOMEM;
            p->keyidx = k;
            p->cap_keyidx = n;
        }
        for (size_t i = 0; i < n; i++) p->keyidx[i] = &kids[i];
        qsort((void *)p->keyidx, n, sizeof *p->keyidx, cmp_key);
        for (size_t i = 1; i < n; i++) {
            const json_value *x = p->keyidx[i - 1], *y = p->keyidx[i];
            if (x->key_len == y->key_len && memcmp(x->key, y->key, x->key_len) == 0) {
                /* of all repeated keys, report the one whose second copy comes first */
                if (!b || y < b) { a = x; b = y; }
            }
        }
    }
    if (nomem) return ALAB_ENOMEM;
    if (!a) return ALAB_OK;
    return perr(p, at, "duplicate key \"%.40s%s\" (members %zu and %zu of the object)", a->key,
                a->key_len > 40 ? "..." : "", (size_t)(a - kids) + 1, (size_t)(b - kids) + 1);
}

static int parse_array(parser *p, json_value *out, int depth) {
    size_t at = p->pos, slot = 0, count = 0;
    json_value *kids;
    int rc = open_container(p, out, JSON_ARRAY, depth, &slot, &kids);
    if (rc) return rc;
    p->pos++; /* '[' */
    skip_ws(p);
    if (p->pos < p->len && p->src[p->pos] == ']') {
        p->pos++;
        return close_container(p, slot, 0, at);
    }
    for (;;) {
        rc = parse_value(p, kids ? &kids[count] : NULL, depth + 1);
        if (rc) return rc;
        count++;
        skip_ws(p);
        char buf[16];
        if (p->pos >= p->len) return perr(p, at, "unterminated array");
        unsigned char c = p->src[p->pos];
        if (c == ']') { p->pos++; break; }
        if (c != ',') return perr(p, p->pos, "expected ',' or ']' in an array, found %s", what_is(p, p->pos, buf, sizeof buf));
        p->pos++;
        skip_ws(p);
        if (p->pos < p->len && p->src[p->pos] == ']') return perr(p, p->pos, "trailing comma in an array");
    }
    return close_container(p, slot, count, at);
}

static int parse_object(parser *p, json_value *out, int depth) {
    size_t at = p->pos, slot = 0, count = 0;
    json_value *kids;
    char buf[16];
    int rc = open_container(p, out, JSON_OBJECT, depth, &slot, &kids);
    if (rc) return rc;
    p->pos++; /* '{' */
    skip_ws(p);
    if (p->pos < p->len && p->src[p->pos] == '}') {
        p->pos++;
        return close_container(p, slot, 0, at);
    }
    for (;;) {
        if (p->pos >= p->len) return perr(p, at, "unterminated object");
        if (p->src[p->pos] != '"')
            return perr(p, p->pos, "expected a string key, found %s", what_is(p, p->pos, buf, sizeof buf));
        const char *key = NULL;
        uint32_t key_len = 0;
        rc = parse_string(p, &key, &key_len);
        if (rc) return rc;
        skip_ws(p);
        if (p->pos >= p->len || p->src[p->pos] != ':')
            return perr(p, p->pos, "expected ':' after a key, found %s", what_is(p, p->pos, buf, sizeof buf));
        p->pos++;
        json_value *kid = kids ? &kids[count] : NULL;
        rc = parse_value(p, kid, depth + 1);
        if (rc) return rc;
        if (kid) {
            kid->key = key;
            kid->key_len = key_len;
        }
        count++;
        skip_ws(p);
        if (p->pos >= p->len) return perr(p, at, "unterminated object");
        unsigned char c = p->src[p->pos];
        if (c == '}') { p->pos++; break; }
        if (c != ',') return perr(p, p->pos, "expected ',' or '}' in an object, found %s", what_is(p, p->pos, buf, sizeof buf));
        p->pos++;
        skip_ws(p);
        if (p->pos < p->len && p->src[p->pos] == '}') return perr(p, p->pos, "trailing comma in an object");
    }
    if (kids) {
        rc = check_unique_keys(p, kids, count, at);
        if (rc) return rc;
    }
    return close_container(p, slot, count, at);
}

static int literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->src + p->pos, word, n) != 0) {
        char buf[16];
        return perr(p, p->pos, "unexpected %s", what_is(p, p->pos, buf, sizeof buf));
    }
    p->pos += n;
    return ALAB_OK;
}

/* Parse one value at p->pos into out (NULL in pass 1). depth counts the
 * containers around it. */
static int parse_value(parser *p, json_value *out, int depth) {
    skip_ws(p);
    if (p->pos >= p->len) return perr(p, p->pos, "unexpected end of input");
    unsigned char c = p->src[p->pos];
    int rc;
    switch (c) {
    case '{': return parse_object(p, out, depth);
    case '[': return parse_array(p, out, depth);
    case '"': {
        const char *s = NULL;
        uint32_t n = 0;
        rc = parse_string(p, &s, &n);
        if (rc == ALAB_OK && out) { out->type = JSON_STRING; out->n = n; out->u.str = s; }
        return rc;
    }
    case 't': rc = literal(p, "true"); if (rc == ALAB_OK && out) out->type = JSON_TRUE; return rc;
    case 'f': rc = literal(p, "false"); if (rc == ALAB_OK && out) out->type = JSON_FALSE; return rc;
    case 'n': rc = literal(p, "null"); if (rc == ALAB_OK && out) out->type = JSON_NULL; return rc;
    case 'N': case 'I':
        return perr(p, p->pos, "NaN and Infinity are not JSON");
    case '/':
        return perr(p, p->pos, "comments are not JSON");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            double v = 0;
            rc = parse_number(p, &v);
            if (rc == ALAB_OK && out) { out->type = JSON_NUMBER; out->u.num = v; }
            return rc;
        }
        if (c == 0xEF && p->len - p->pos >= 3 && p->src[p->pos + 1] == 0xBB && p->src[p->pos + 2] == 0xBF)
            return perr(p, p->pos, "byte order mark before the value");
        {
            char buf[16];
            return perr(p, p->pos, "unexpected %s", what_is(p, p->pos, buf, sizeof buf));
        }
    }
}

/* One pass over the whole document: a value, then only whitespace. */
static int parse_document(parser *p) {
    p->pos = 0;
    skip_ws(p);
    if (p->pos >= p->len) return perr(p, p->pos, "empty document");
    int rc = parse_value(p, p->fill ? &p->nodes[0] : NULL, 0);
    if (rc) return rc;
    skip_ws(p);
    if (p->pos != p->len) {
        char buf[16];
        return perr(p, p->pos, "unexpected %s after the JSON value", what_is(p, p->pos, buf, sizeof buf));
    }
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Public entry points                                                        */
/* ------------------------------------------------------------------------ */

int json_parse(json_doc *doc, const char *src, size_t len, size_t max_len) {
    if (!doc) return alab_fail(ALAB_EINVAL, "json_parse: doc is NULL");
    memset(doc, 0, sizeof *doc);
    if (!src && len > 0) {
        snprintf(doc->err, sizeof doc->err, "json: NULL text of %zu bytes", len);
        return alab_fail(ALAB_EINVAL, "%s", doc->err);
    }
    if ((max_len > 0 && len > max_len) || len > UINT32_MAX) {
        snprintf(doc->err, sizeof doc->err, "json: document of %zu bytes is over the limit of %zu",
                 len, max_len > 0 && max_len < UINT32_MAX ? max_len : (size_t)UINT32_MAX);
        return alab_fail(ALAB_ELIMIT, "%s", doc->err);
    }

    parser p;
    memset(&p, 0, sizeof p);
    p.src = (const unsigned char *)(src ? src : "");
    p.len = len;
    p.doc = doc;
    p.n_values = 1; /* the root */

    /* Pass 1: validate and count. */
    int rc = parse_document(&p);
    if (rc) goto fail;

    /* One arena: nodes, then strings. */
    size_t node_bytes, total;
    if (alab_mul_size(&node_bytes, p.n_values, sizeof(json_value)) ||
        alab_add_size(&total, node_bytes, p.n_str_bytes)) {
        rc = ALAB_ENOMEM;
        goto fail;
    }
    /* The tree may cost at most JSON_ARENA_PER_BYTE times the text (+ 1 MiB): real files need 1.5 to 2.5 (a
     * tokenizer.json's vocabulary and merges), a minified file of pair merges about 10; a document of bare tiny
     * values ("0,0,0,...": 16) is refused here, before the arena is allocated (a 200 MB one once took 3.5 GB). */
    if (total > (size_t)JSON_ARENA_PER_BYTE * len + ((size_t)1 << 20)) {
        snprintf(doc->err, sizeof doc->err, "json: %zu values in %zu bytes would take %zu bytes to hold, over %d times "
                 "the document", p.n_values, len, total, JSON_ARENA_PER_BYTE);
        rc = ALAB_ELIMIT;
        goto fail;
    }
    char *arena = calloc(1, total);
    if (!arena) { rc = ALAB_ENOMEM; goto fail; }
    doc->arena = arena;

    /* Pass 2: fill. The text is known to be valid; what is checked here is
     * that no object names a key twice. */
    p.fill = 1;
    p.nodes = (json_value *)arena;
    p.next_node = 1;
    p.strs = arena + node_bytes;
    p.next_str = 0;
    p.next_container = 0;
    rc = parse_document(&p); /* fails only on a duplicate key (or no memory for its check) */
    if (rc) goto fail;
    free(p.counts);
    free((void *)p.keyidx);
    free(p.keyhash);
    doc->root = p.nodes;
    return ALAB_OK;

fail:
    free(p.counts);
    free((void *)p.keyidx);
    free(p.keyhash);
    free(doc->arena);
    doc->arena = NULL;
    doc->root = NULL;
    if (rc == ALAB_ENOMEM) {
        snprintf(doc->err, sizeof doc->err, "json: out of memory for a document of %zu bytes", len);
    }
    return alab_fail(rc, "%s", doc->err);
}

void json_free(json_doc *doc) {
    if (!doc) return;
    free(doc->arena);
    doc->arena = NULL;
    doc->root = NULL;
}

const json_value *json_get(const json_value *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJECT || !key) return NULL;
    size_t n = strlen(key);
    for (uint32_t i = 0; i < obj->n; i++) {
        const json_value *v = &obj->u.items[i];
        if (v->key_len == n && memcmp(v->key, key, n) == 0) return v;
    }
    return NULL;
}

int json_int64(const json_value *v, int64_t *out) {
    if (!v || v->type != JSON_NUMBER) return -1;
    double x = v->u.num;
    if (!(fabs(x) < 9007199254740992.0) || x != floor(x)) return -1; /* |x| < 2^53, integral */
    if (out) *out = (int64_t)x;
    return 0;
}
