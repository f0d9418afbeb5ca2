/* safetensors.c — parse + validate + borrow tensor views.
 * Every length, offset and count read from the file is checked before use. */
#include "safetensors.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const struct { const char *name; st_dtype t; size_t size; } DTYPES[] = {
    {"F64", ST_F64, 8},  {"F32", ST_F32, 4},  {"F16", ST_F16, 2},  {"BF16", ST_BF16, 2},
    {"I64", ST_I64, 8},  {"I32", ST_I32, 4},  {"I16", ST_I16, 2},  {"I8", ST_I8, 1},
    {"U8", ST_U8, 1},    {"U16", ST_U16, 2},  {"U32", ST_U32, 4},  {"U64", ST_U64, 8},
    {"BOOL", ST_BOOL, 1}, {"F8_E4M3", ST_F8_E4M3, 1}, {"F8_E5M2", ST_F8_E5M2, 1},
};
#define N_DTYPES (sizeof DTYPES / sizeof DTYPES[0])

const char *st_dtype_name(st_dtype t) {
    for (size_t i = 0; i < N_DTYPES; i++) if (DTYPES[i].t == t) return DTYPES[i].name;
    return "?";
}
size_t st_dtype_size(st_dtype t) {
    for (size_t i = 0; i < N_DTYPES; i++) if (DTYPES[i].t == t) return DTYPES[i].size;
    return 0;
}

void st_free(st_file *f) {
    if (!f) return;
    free(f->tensors);
    free(f->by_name);
    json_free(&f->header);
    memset(f, 0, sizeof *f);
}

static int cmp_begin(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : (x->nbytes > y->nbytes);
}

static int cmp_name(const void *a, const void *b) {
    return strcmp((*(const st_tensor *const *)a)->name, (*(const st_tensor *const *)b)->name);
}

/* Parse one header entry into t. */
static int parse_entry(st_tensor *t, const json_value *v, size_t data_len) {
    const char *name = v->key;
    if (v->type != JSON_OBJECT)
        return alab_fail(ALAB_EFORMAT, "safetensors: entry \"%s\" is not an object", name);
    const json_value *dt = json_get(v, "dtype");
    const json_value *sh = json_get(v, "shape");
    const json_value *off = json_get(v, "data_offsets");
    if (!dt || dt->type != JSON_STRING || !sh || sh->type != JSON_ARRAY || !off ||
        off->type != JSON_ARRAY)
        return alab_fail(ALAB_EFORMAT,
                         "safetensors: entry \"%s\" needs dtype (string), shape and data_offsets (arrays)",
                         name);
    t->name = name;
    size_t esize = 0;
    for (size_t i = 0; i < N_DTYPES; i++)
        if (strcmp(dt->u.str, DTYPES[i].name) == 0) { t->dtype = DTYPES[i].t; esize = DTYPES[i].size; }
    if (!esize) return alab_fail(ALAB_EDTYPE, "safetensors: tensor \"%s\" has unknown dtype \"%.32s\"", name, dt->u.str);
    if (sh->n > ST_MAX_DIMS)
        return alab_fail(ALAB_EFORMAT, "safetensors: tensor \"%s\" has %u dimensions (max %d)", name, sh->n, ST_MAX_DIMS);
    t->ndim = (int)sh->n;
    size_t count = 1;
    for (uint32_t i = 0; i < sh->n; i++) {
        int64_t d;
        if (json_int64(&sh->u.items[i], &d) != 0 || d < 0)
            return alab_fail(ALAB_EFORMAT, "safetensors: tensor \"%s\" has a bad dimension %u", name, i);
        t->shape[i] = d;
        /* (uint64_t)d > SIZE_MAX: on wasm32 (size_t is 32 bits) the cast would drop the high bits */
        if ((uint64_t)d > SIZE_MAX || alab_mul_size(&count, count, (size_t)d) != 0)
            return alab_fail(ALAB_EFORMAT, "safetensors: tensor \"%s\" is too large", name);
    }
    int64_t b, e;
    if (off->n != 2 || json_int64(&off->u.items[0], &b) != 0 || json_int64(&off->u.items[1], &e) != 0 ||
        b < 0 || e < b)
        return alab_fail(ALAB_EFORMAT, "safetensors: tensor \"%s\" has bad data_offsets", name);
    if ((uint64_t)e > (uint64_t)data_len)
        return alab_fail(ALAB_EFORMAT,
                         "safetensors: tensor \"%s\" ends at byte %lld, past the data section (%zu bytes); is the file truncated?",
                         name, (long long)e, data_len);
    size_t nbytes;
    if (alab_mul_size(&nbytes, count, esize) != 0 || nbytes != (size_t)(e - b))
        return alab_fail(ALAB_EFORMAT, "safetensors: tensor \"%s\": shape and dtype give %zu bytes but data_offsets span %lld",
                         name, count * esize, (long long)(e - b));
    t->begin = (size_t)b;
    t->nbytes = nbytes;
    return ALAB_OK;
}

int st_parse(st_file *f, const uint8_t *buf, size_t len) {
    if (!f || (!buf && len)) return alab_fail(ALAB_EINVAL, "st_parse: NULL argument");
    memset(f, 0, sizeof *f);
    if (len < 8) return alab_fail(ALAB_EFORMAT, "safetensors: file is %zu bytes, too short for a header", len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | buf[i];
    if (n > ALAB_MAX_HEADER_BYTES)
        return alab_fail(ALAB_EFORMAT, "safetensors: header length %llu exceeds the limit of %u bytes (not a safetensors file?)",
                         (unsigned long long)n, ALAB_MAX_HEADER_BYTES);
    if (n > len - 8)
        return alab_fail(ALAB_EFORMAT, "safetensors: header length %llu runs past the end of the %zu-byte file",
                         (unsigned long long)n, len);
    if (n < 2) return alab_fail(ALAB_EFORMAT, "safetensors: header of %llu bytes cannot hold a JSON object", (unsigned long long)n);
    int rc = json_parse(&f->header, (const char *)buf + 8, (size_t)n, 0);
    if (rc != ALAB_OK) {
        rc = alab_fail(rc, "safetensors header: %s", f->header.err);
        st_free(f);
        return rc;
    }
    const json_value *root = f->header.root;
    if (root->type != JSON_OBJECT) {
        st_free(f);
        return alab_fail(ALAB_EFORMAT, "safetensors: header is not a JSON object");
    }
    f->data_offset = 8 + (size_t)n;
    f->data = buf + f->data_offset;
    f->data_len = len - f->data_offset;
    f->tensors = calloc(root->n ? root->n : 1, sizeof *f->tensors);
    st_tensor **order = calloc(root->n ? root->n : 1, sizeof *order);
    if (!f->tensors || !order) {
        free(order);
        st_free(f);
        return alab_fail(ALAB_ENOMEM, "safetensors: out of memory");
    }
    for (uint32_t i = 0; i < root->n; i++) {
        const json_value *v = &root->u.items[i];
        if (strcmp(v->key, "__metadata__") == 0) continue;
        st_tensor *t = &f->tensors[f->n];
        rc = parse_entry(t, v, f->data_len);
        if (rc != ALAB_OK) break;
        t->data = f->data + t->begin;
        order[f->n] = t;
        f->n++;
    }
    /* The name index: sorted, so a name given twice shows up as two neighbours
     * (O(n log n); the JSON reader already refuses a repeated key, but a name
     * with an embedded NUL decodes to a C string equal to its prefix) and
     * st_find is a binary search. */
    if (rc == ALAB_OK && f->n > 0) {
        f->by_name = malloc((size_t)f->n * sizeof *f->by_name);
        if (!f->by_name) rc = alab_fail(ALAB_ENOMEM, "safetensors: out of memory");
    }
    if (rc == ALAB_OK && f->n > 0) {
        for (int i = 0; i < f->n; i++) f->by_name[i] = &f->tensors[i];
        qsort(f->by_name, (size_t)f->n, sizeof *f->by_name, cmp_name);
        for (int i = 1; i < f->n; i++)
            if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0) {
                rc = alab_fail(ALAB_EFORMAT, "safetensors: tensor \"%s\" appears twice", f->by_name[i]->name);
                break;
            }
    }
    /* No two tensors may share bytes (zero-size tensors share nothing). */
    if (rc == ALAB_OK && f->n > 1) {
        qsort(order, (size_t)f->n, sizeof *order, cmp_begin);
        size_t end = 0;
        const char *prev = NULL;
        for (int i = 0; i < f->n; i++) {
            if (order[i]->nbytes == 0) continue;
            if (prev && order[i]->begin < end) {
                rc = alab_fail(ALAB_EFORMAT, "safetensors: tensors \"%s\" and \"%s\" overlap", prev, order[i]->name);
                break;
            }
            end = order[i]->begin + order[i]->nbytes;
            prev = order[i]->name;
        }
    }
    free(order);
    if (rc != ALAB_OK) st_free(f);
    return rc;
}

const st_tensor *st_find(const st_file *f, const char *name) {
    if (!f || !name || !f->by_name) return NULL;
    size_t lo = 0, hi = (size_t)f->n; /* binary search of the sorted name index */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(f->by_name[mid]->name, name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}
