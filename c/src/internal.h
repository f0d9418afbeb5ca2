/* internal.h — what the C sources share but the public header does not show. */
#ifndef ALAB_INTERNAL_H
#define ALAB_INTERNAL_H

#include "attnlab.h"
#include <stddef.h>
#include <stdint.h>

/* Record the details of a failure for alab_last_error() and return rc, so
 * a failing path reads: return alab_fail(ALAB_ESHAPE, "tensor %s ...", name); */
int alab_fail(int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void alab_clear_error(void);

/* Overflow-checked size arithmetic: return 0 on success, -1 on overflow. */
static inline int alab_mul_size(size_t *out, size_t a, size_t b) {
    if (a != 0 && b > (size_t)-1 / a) return -1;
    *out = a * b;
    return 0;
}
static inline int alab_add_size(size_t *out, size_t a, size_t b) {
    if (b > (size_t)-1 - a) return -1;
    *out = a + b;
    return 0;
}

/* FNV-1a of n bytes (the loaders' name tables). */
static inline uint64_t alab_fnv1a(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The thread pool a model's runs split their work over (parallel.h, jobs.c). The wasm
 * layer attaches a pool whose helpers are Web Workers; the model does not own
 * it (alab_model_free leaves it alone). NULL detaches. */
struct alab_pool;
void alab_model_attach_pool(alab_model *m, struct alab_pool *p);
struct alab_pool *alab_model_pool(const alab_model *m);

/* Hash-table probes made while loading a tokenizer (tests check that a file
 * crafted to collide costs no more than a random one). */
uint64_t alab_bpe_load_probes(const alab_bpe *b);
/* Bytes the added-token matchers keep (tests and benchmarks bound it by the tokens' bytes). */
size_t alab_bpe_added_table_bytes(const alab_bpe *b);

/* Conversions of 16-bit floats to f32 (exact). */
float alab_f16_to_f32(uint16_t h);
float alab_bf16_to_f32(uint16_t h);

/* Evidence hooks inside the forward pass (interventions.c): checks of the options,
 * knockouts on one attention row (head h, query i, layer l), the head-output
 * patches and capture of layer l on y (T, DQ = n_head * head_dim), and the residual patches and
 * capture on x (T, C) entering layer l. */
int alab_check_evidence_opts(const alab_run_opts *o, int L, int NH, int T, int C, int DQ);
int alab_knockout_row(float *row, int T, const alab_run_opts *o, int l, int h, int i);
void alab_head_out_hooks(float *y, const alab_run_opts *o, int l, int T, int C, int HS);
void alab_resid_hooks(float *x, const alab_run_opts *o, int l, int T, int C);

#endif
