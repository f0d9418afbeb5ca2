/* safetensors.h — parse and validate a safetensors file held in memory, and
 * borrow views of its tensors. The file layout: an 8-byte little-endian header
 * length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]},
 * "__metadata__": {...}}, then the data section; offsets are relative to it. */
#ifndef ALAB_SAFETENSORS_H
#define ALAB_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

#define ST_MAX_DIMS 8

typedef enum { ST_F64, ST_F32, ST_F16, ST_BF16, ST_I64, ST_I32, ST_I16, ST_I8, ST_U8,
               ST_U16, ST_U32, ST_U64, ST_BOOL, ST_F8_E4M3, ST_F8_E5M2 } st_dtype;

typedef struct {
    const char *name;         /* points into the parsed header */
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    size_t begin, nbytes;     /* within the data section */
    const uint8_t *data;      /* = data section + begin */
} st_tensor;

typedef struct {
    st_tensor *tensors;       /* n tensors, in header order */
    st_tensor **by_name;      /* the same n, sorted by name (st_find's index) */
    int n;
    const uint8_t *data;      /* the data section */
    size_t data_len;
    size_t data_offset;       /* offset of the data section in the file (8 + N) */
    json_doc header;
} st_file;

/* Validates everything before use: header length within the file and under
 * ALAB_MAX_HEADER_BYTES, JSON well formed, every entry with a known dtype, a
 * shape of non-negative integers whose byte size equals end - begin (no
 * overflow), offsets inside the data section, no two tensors overlapping,
 * no name twice (checked on a sorted index, O(n log n)). Bytes of the data section that no tensor uses are allowed.
 * Errors: ALAB_EFORMAT, ALAB_EDTYPE,
 * ALAB_EJSON, ALAB_ENOMEM. The buffer must outlive the st_file. */
int st_parse(st_file *f, const uint8_t *buf, size_t len);
void st_free(st_file *f);
/* The tensor named name, or NULL (a binary search, O(log n)). */
const st_tensor *st_find(const st_file *f, const char *name);
const char *st_dtype_name(st_dtype t);
size_t st_dtype_size(st_dtype t);

#endif
