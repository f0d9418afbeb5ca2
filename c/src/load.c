/* load.c — a model from its files: the safetensors shards (and their index),
 * the weights found by the family's names, checked against config.json,
 * borrowed or converted to f32, brought to one layout and packed.
 *
 * One layout for every family: each layer matrix ends up (in, out) row-major
 * like GPT-2's Conv1D, so the packed matmul serves all; nn.Linear weights
 * (out, in) are transposed in place at load, GPT-NeoX's fused query_key_value
 * rows (per head [q_h k_h v_h]) are regrouped into [q | k | v] on the way.
 * Embeddings and LM heads stay (V, C): the LM head is a product with w^T.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_internal.h"
#include "json.h"
#include "model.h"
#include "ops.h"

/* ---- where tensors are: shards and the index ---------------------------------- */

typedef struct {
    st_file *st;         /* n parsed shards */
    const char **names;  /* their file names (basename) */
    int n;
    json_doc index;      /* model.safetensors.index.json, or index.root NULL */
    const json_value *weight_map;
    const json_value **keys; /* the weight_map's entries sorted by tensor name (binary search) */
    int *shard_of;           /* keys[i]'s shard, an index into st / names */
} tensor_source;

int alab_shard_name_ok(const char *name, size_t len) {
    static const char ext[] = ".safetensors";
    const size_t ne = sizeof ext - 1;
    if (!name || len < 1 || len > 255 || name[0] == '.' || len <= ne || memcmp(name + len - ne, ext, ne) != 0) return 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-' || c == '+'))
            return 0;
    }
    return 1;
}

static const char *base_name(const char *p) {
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p;
}

static int cmp_keys(const void *a, const void *b) {
    const json_value *x = *(const json_value *const *)a, *y = *(const json_value *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* The index: {"weight_map": {tensor: file, ...}}, every tensor once, every file a plain name (alab_shard_name_ok)
 * that was given. Sorting the entries and hashing the given names keep it O(n log n) in the entries. */
static int parse_index(tensor_source *src, const char *text, size_t len) {
    int rc = json_parse(&src->index, text, len, ALAB_MAX_INDEX_BYTES);
    if (rc) return alab_fail(rc, "model.safetensors.index.json: %s", src->index.err);
    const json_value *wm = json_get(src->index.root, "weight_map");
    if (!wm || wm->type != JSON_OBJECT)
        return alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: no \"weight_map\" object");
    const json_value **keys = malloc((wm->n ? wm->n : 1) * sizeof *keys);
    int *shard_of = malloc((wm->n ? wm->n : 1) * sizeof *shard_of);
    /* the given names' table: open addressing, a power of two at least twice their count */
    size_t cap = 16;
    while (cap < 2 * (size_t)src->n) cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!keys || !shard_of || !slot) {
        free(keys);
        free(shard_of);
        free(slot);
        return alab_fail(ALAB_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cap; i++) slot[i] = -1;
    for (int s = 0; s < src->n; s++) {
        if (!src->names[s]) continue;
        const char *b = base_name(src->names[s]);
        size_t h = alab_fnv1a(b, strlen(b)) & (cap - 1);
        while (slot[h] >= 0 && strcmp(base_name(src->names[slot[h]]), b) != 0) h = (h + 1) & (cap - 1);
        if (slot[h] < 0) slot[h] = s;
    }
    for (uint32_t i = 0; i < wm->n; i++) keys[i] = &wm->u.items[i];
    qsort(keys, wm->n, sizeof *keys, cmp_keys);
    rc = ALAB_OK;
    for (uint32_t i = 1; i < wm->n && !rc; i++)
        if (cmp_keys(&keys[i - 1], &keys[i]) == 0)
            rc = alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: tensor \"%.80s\" is named twice", keys[i]->key);
    for (uint32_t i = 0; i < wm->n && !rc; i++) {
        const json_value *v = keys[i];
        if (v->type != JSON_STRING)
            rc = alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: the file of \"%.80s\" is not a string", v->key);
        else if (!alab_shard_name_ok(v->u.str, v->n))
            rc = alab_fail(ALAB_EFORMAT, "model.safetensors.index.json: the file of \"%.80s\" is not a plain shard file name "
                           "(letters, digits, '.', '_', '-', '+', ending in .safetensors)", v->key);
        else {
            size_t h = alab_fnv1a(v->u.str, v->n) & (cap - 1);
            while (slot[h] >= 0 && strcmp(base_name(src->names[slot[h]]), v->u.str) != 0) h = (h + 1) & (cap - 1);
            if (slot[h] < 0)
                rc = alab_fail(ALAB_EMISSING, "shard \"%.80s\" (named by model.safetensors.index.json for \"%.80s\") was not given",
                               v->u.str, v->key);
            else shard_of[i] = slot[h];
        }
    }
    free(slot);
    if (rc) {
        free(keys);
        free(shard_of);
        return rc;
    }
    src->keys = keys;
    src->shard_of = shard_of;
    src->weight_map = wm;
    return rc;
}

/* The tensor called name (or alt_prefix + name); *err set when the index
 * points at a shard that does not hold it. */
static const st_tensor *source_find(const tensor_source *src, const char *name, const char *alt_prefix, int *err) {
    char buf[160];
    const char *tries[2] = {name, NULL};
    if (alt_prefix) {
        snprintf(buf, sizeof buf, "%s%s", alt_prefix, name);
        tries[1] = buf;
    }
    for (int k = 0; k < 2 && tries[k]; k++) {
        if (src->weight_map) {
            json_value probe;
            probe.key = tries[k];
            probe.key_len = (uint32_t)strlen(tries[k]);
            const json_value *pp = &probe;
            const json_value **hit = bsearch(&pp, src->keys, src->weight_map->n, sizeof *src->keys, cmp_keys);
            if (!hit) continue;
            const int s = src->shard_of[hit - src->keys];
            const st_tensor *t = st_find(&src->st[s], tries[k]);
            if (!t) *err = alab_fail(ALAB_EMISSING, "tensor \"%s\" is not in %s, where model.safetensors.index.json puts it",
                                     tries[k], (*hit)->u.str);
            return t;
        } else {
            for (int s = 0; s < src->n; s++) {
                const st_tensor *t = st_find(&src->st[s], tries[k]);
                if (t) return t;
            }
        }
    }
    return NULL;
}

/* ---- weights ------------------------------------------------------------------- */

/* XF_UNIT: a Gemma norm weight w becomes 1 + w (in f32, as Gemma3RMSNorm computes 1.0 + weight.float()) */
enum { XF_NONE, XF_TRANSPOSE, XF_NEOX_QKV, XF_NEOX_QKV_BIAS, XF_UNIT };

typedef struct {
    char name[128];
    const float **dst;
    int ndim;
    int64_t shape[2];      /* as stored in the file */
    int xf;                /* the transform to the engine's layout */
    int big;               /* a layer matrix, the embedding or the LM head: 16-bit in half models */
    const st_tensor *t;
    int file;              /* the shard it is borrowed from, or -1 */
} weight_spec;

typedef struct {
    weight_spec *s;
    int n, cap;
} spec_list;

static void add(spec_list *l, const float **dst, const char *fmt, int layer, int64_t d0, int64_t d1, int xf) {
    if (!fmt) return;
    weight_spec *w = &l->s[l->n++];
    snprintf(w->name, sizeof w->name, fmt, layer);
    w->dst = dst;
    w->ndim = d1 ? 2 : 1;
    w->shape[0] = d0;
    w->shape[1] = d1;
    w->xf = xf;
    w->big = d1 != 0;      /* every 2-D weight; GPT-2's wpe is marked back below */
    w->t = NULL;
    w->file = -1;
}

/* The tensors the family and config.json call for, with their stored shapes. */
static int list_weights(spec_list *l, alab_model *m) {
    const alab_config *c = &m->cfg;
    const alab_arch *a = &m->arch;
    const alab_tensor_names *nm = &a->fam->names;
    const int64_t C = c->n_embd, V = c->vocab_size, P = c->n_positions, F = a->F;
    const int64_t DQ = (int64_t)c->n_head * a->HS, DKV = (int64_t)a->NKV * a->HS;
    const int lin = a->fam->linear_layout;
    const int nx = a->fam->norm == NORM_RMSNORM_UNIT ? XF_UNIT : XF_NONE; /* the norm weights' transform */
    const int gated = a->mlp == MLP_SWIGLU || a->mlp == MLP_GEGLU;
    l->cap = 6 + 26 * c->n_layer;
    if (!(l->s = calloc((size_t)l->cap, sizeof *l->s))) return alab_fail(ALAB_ENOMEM, "out of memory");
    add(l, &m->wte, nm->embed, 0, V, C, XF_NONE);
    if (a->fam->pos == POS_LEARNED) {
        add(l, &m->wpe, nm->pos_embed, 0, P, C, XF_NONE);
        l->s[l->n - 1].big = 0; /* small, and added in f32 */
    }
    add(l, &m->lnf_w, nm->final_norm_w, 0, C, 0, nx);
    if (a->fam->norm == NORM_LAYERNORM) add(l, &m->lnf_b, nm->final_norm_b, 0, C, 0, XF_NONE);
    if (!a->tied) add(l, &m->lm_head, nm->lm_head, 0, V, C, XF_NONE);
    for (int i = 0; i < c->n_layer; i++) {
        layer_weights *w = &m->layers[i];
        const int ln = a->fam->norm == NORM_LAYERNORM;
        add(l, &w->ln1_w, nm->ln1_w, i, C, 0, nx);
        if (ln) add(l, &w->ln1_b, nm->ln1_b, i, C, 0, XF_NONE);
        switch (a->fam->qkv) {
        case QKV_CONV1D_FUSED:
            add(l, &w->qkv_w, nm->qkv_w, i, C, DQ + 2 * DKV, XF_NONE);
            add(l, &w->qkv_b, nm->qkv_b, i, DQ + 2 * DKV, 0, XF_NONE);
            break;
        case QKV_NEOX_FUSED:
            add(l, &w->qkv_w, nm->qkv_w, i, 3 * C, C, XF_NEOX_QKV);
            if (a->qkv_bias) add(l, &w->qkv_b, nm->qkv_b, i, 3 * C, 0, XF_NEOX_QKV_BIAS);
            break;
        case QKV_SEPARATE:
            add(l, &w->q_w, nm->q_w, i, DQ, C, XF_TRANSPOSE);
            add(l, &w->k_w, nm->k_w, i, DKV, C, XF_TRANSPOSE);
            add(l, &w->v_w, nm->v_w, i, DKV, C, XF_TRANSPOSE);
            if (a->qkv_bias) {
                add(l, &w->q_b, nm->q_b, i, DQ, 0, XF_NONE);
                add(l, &w->k_b, nm->k_b, i, DKV, 0, XF_NONE);
                add(l, &w->v_b, nm->v_b, i, DKV, 0, XF_NONE);
            }
            if (a->qk_norm) {
                add(l, &w->q_norm, nm->q_norm, i, a->HS, 0, nx);
                add(l, &w->k_norm, nm->k_norm, i, a->HS, 0, nx);
            }
            break;
        }
        add(l, &w->o_w, nm->o_w, i, lin ? C : DQ, lin ? DQ : C, lin ? XF_TRANSPOSE : XF_NONE);
        if (a->o_bias) add(l, &w->o_b, nm->o_b, i, C, 0, XF_NONE);
        if (nm->post_attn_norm) add(l, &w->post_attn_norm, nm->post_attn_norm, i, C, 0, nx);
        add(l, &w->ln2_w, nm->ln2_w, i, C, 0, nx);
        if (ln) add(l, &w->ln2_b, nm->ln2_b, i, C, 0, XF_NONE);
        add(l, &w->up_w, nm->up_w, i, lin ? F : C, lin ? C : F, lin ? XF_TRANSPOSE : XF_NONE);
        if (a->mlp_bias) add(l, &w->up_b, nm->up_b, i, F, 0, XF_NONE);
        if (gated) add(l, &w->gate_w, nm->gate_w, i, F, C, XF_TRANSPOSE);
        if (gated && a->mlp_bias) add(l, &w->gate_b, nm->gate_b, i, F, 0, XF_NONE);
        add(l, &w->down_w, nm->down_w, i, lin ? C : F, lin ? F : C, lin ? XF_TRANSPOSE : XF_NONE);
        if (a->mlp_bias) add(l, &w->down_b, nm->down_b, i, C, 0, XF_NONE);
        if (nm->post_mlp_norm) add(l, &w->post_mlp_norm, nm->post_mlp_norm, i, C, 0, nx);
    }
    return ALAB_OK;
}

static int weight_is_borrowable(const st_tensor *t) {
    return t->dtype == ST_F32 && ((uintptr_t)t->data % sizeof(float)) == 0;
}

/* In place: w (R, K) -> its transpose (K, R), through scratch of R*K floats. With
 * neox_heads > 0, the rows are first regrouped from per head [q_h k_h v_h]
 * (each HS rows) into [q | k | v] (GPT-NeoX's query_key_value). */
/* The row of the transpose that source row r of a fused GPT-NeoX QKV matrix goes to (r itself otherwise):
 * r = h*3HS + part*HS + d  ->  part*C + h*HS + d. */
static int64_t neox_col(int64_t r, int64_t R, int neox_heads) {
    if (!neox_heads) return r;
    const int64_t HS = R / 3 / neox_heads, Cq = R / 3;
    const int64_t h = r / (3 * HS), part = (r % (3 * HS)) / HS, d = r % HS;
    return part * Cq + h * HS + d;
}

/* w (R x K, row-major) becomes its transpose (K x R) in place, through scratch (R*K values), in tiles of
 * TB x TB: each tile reads TB short rows and writes TB short rows, where a row at a time wrote K values R
 * apart (one cache line each; the half model's load spent most of its transposes there). */
#define TB 32
static void transpose_inplace(float *w, int64_t R, int64_t K, float *scratch, int neox_heads) {
    memcpy(scratch, w, (size_t)(R * K) * sizeof(float));
    for (int64_t r0 = 0; r0 < R; r0 += TB)
        for (int64_t k0 = 0; k0 < K; k0 += TB) {
            const int64_t r1 = r0 + TB < R ? r0 + TB : R, k1 = k0 + TB < K ? k0 + TB : K;
            for (int64_t r = r0; r < r1; r++) {
                const int64_t col = neox_col(r, R, neox_heads);
                const float *src = scratch + r * K;
                for (int64_t k = k0; k < k1; k++) w[k * R + col] = src[k];
            }
        }
}

/* transpose_inplace for 16-bit values (half models); scratch holds R*K/2 floats. */
static void transpose16_inplace(uint16_t *w, int64_t R, int64_t K, float *scratch_f, int neox_heads) {
    uint16_t *scratch = (uint16_t *)(void *)scratch_f;
    memcpy(scratch, w, (size_t)(R * K) * sizeof(uint16_t));
    for (int64_t r0 = 0; r0 < R; r0 += TB)
        for (int64_t k0 = 0; k0 < K; k0 += TB) {
            const int64_t r1 = r0 + TB < R ? r0 + TB : R, k1 = k0 + TB < K ? k0 + TB : K;
            for (int64_t r = r0; r < r1; r++) {
                const int64_t col = neox_col(r, R, neox_heads);
                const uint16_t *src = scratch + r * K;
                for (int64_t k = k0; k < k1; k++) w[k * R + col] = src[k];
            }
        }
}
#undef TB

static void neox_bias_inplace(float *b, int64_t R, float *scratch, int heads) {
    memcpy(scratch, b, (size_t)R * sizeof(float));
    const int64_t HS = R / 3 / heads, Cq = R / 3;
    for (int64_t r = 0; r < R; r++) {
        const int64_t h = r / (3 * HS), part = (r % (3 * HS)) / HS, d = r % HS;
        b[part * Cq + h * HS + d] = scratch[r];
    }
}

static int shape_error(const st_tensor *t, const weight_spec *w) {
    char got[96] = "";
    size_t p = 0;
    for (int d = 0; d < t->ndim && p < sizeof got - 24; d++)
        p += (size_t)snprintf(got + p, sizeof got - p, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    if (w->ndim == 2)
        return alab_fail(ALAB_ESHAPE, "model.safetensors: tensor \"%s\" has shape [%s], expected [%lld,%lld] from config.json",
                         t->name, got, (long long)w->shape[0], (long long)w->shape[1]);
    return alab_fail(ALAB_ESHAPE, "model.safetensors: tensor \"%s\" has shape [%s], expected [%lld] from config.json",
                     t->name, got, (long long)w->shape[0]);
}

#ifdef __wasm__
#define ALAB_F32_WEIGHTS_MAX ((size_t)3 << 30)
#else
#define ALAB_F32_WEIGHTS_MAX SIZE_MAX
#endif

static int bind_weights(alab_model *m, const tensor_source *src, int weights) {
    spec_list l = {0};
    int rc = list_weights(&l, m);
    if (rc) return rc;
    const char *prefix = m->arch.fam->names.alt_prefix;
    int half_dtype = -1; /* the one 16-bit dtype of every big tensor, 0 if they differ or one is F32 */

    /* Pass 1: every tensor is there, float, with the right shape. */
    size_t convert_floats = 0, scratch_floats = 0;
    for (int i = 0; i < l.n && rc == ALAB_OK; i++) {
        weight_spec *w = &l.s[i];
        int err = ALAB_OK;
        const st_tensor *t = source_find(src, w->name, prefix, &err);
        if (err) { rc = err; break; }
        if (!t) {
            rc = prefix ? alab_fail(ALAB_EMISSING, "model.safetensors: missing tensor \"%s\" (or \"%s%s\")", w->name, prefix, w->name)
                        : alab_fail(ALAB_EMISSING, "model.safetensors: missing tensor \"%s\"", w->name);
            break;
        }
        if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16) {
            rc = alab_fail(ALAB_EDTYPE, "model.safetensors: tensor \"%s\" has dtype %s; F32, F16 or BF16 expected",
                           t->name, st_dtype_name(t->dtype));
            break;
        }
        int shape_ok = t->ndim == w->ndim && t->shape[0] == w->shape[0] && (w->ndim == 1 || t->shape[1] == w->shape[1]);
        if (!shape_ok) { rc = shape_error(t, w); break; }
        w->t = t;
        const size_t count = t->nbytes / st_dtype_size(t->dtype);
        if (!weight_is_borrowable(t)) convert_floats += count;
        if (w->xf != XF_NONE && count > scratch_floats) scratch_floats = count;
        if (w->big) half_dtype = (t->dtype == ST_F16 || t->dtype == ST_BF16) && (half_dtype < 0 || half_dtype == (int)t->dtype)
                                     ? (int)t->dtype : 0;
    }
    /* Half storage: asked for, or the F32 copy would not fit (wasm32); possible when every big tensor is
     * F16, or every one BF16. Their 16-bit data then stays where it is (or is copied, when misaligned). */
    if (rc == ALAB_OK && half_dtype > 0 && weights != ALAB_WEIGHTS_F32 &&
        (weights == ALAB_WEIGHTS_HALF || convert_floats > ALAB_F32_WEIGHTS_MAX / sizeof(float))) {
        m->half = half_dtype;
        convert_floats = 0;
        /* scratch: the largest layer matrix, converted whole, or one block of LM-head rows */
        size_t widest = (size_t)ALAB_HEAD_BLOCK * m->cfg.n_embd;
        for (int i = 0; i < l.n; i++) {
            const weight_spec *w = &l.s[i];
            const size_t count = w->t->nbytes / 2;
            if (!w->big) { convert_floats += count; continue; }
            if ((uintptr_t)w->t->data % 2) convert_floats += (count + 1) / 2; /* an aligned 16-bit copy */
            const int vocab_rows = w->dst == &m->wte || w->dst == &m->lm_head;
            if (!vocab_rows && count > widest) widest = count;
        }
        m->scratch = malloc(widest * sizeof(float));
        if (!m->scratch) rc = alab_fail(ALAB_ENOMEM, "cannot allocate %zu MB of conversion scratch", (widest * 4) >> 20);
    }

    /* Pass 2: point at the file or convert; reject non-finite weights. */
    if (rc == ALAB_OK && convert_floats) {
        size_t bytes;
        if (alab_mul_size(&bytes, convert_floats, sizeof(float)) != 0 || !(m->converted = malloc(bytes)))
            rc = alab_fail(ALAB_ENOMEM, "cannot allocate %zu floats for converted weights", convert_floats);
    }
    int *borrowed = calloc((size_t)src->n + 1, sizeof(int));
    if (!borrowed && rc == ALAB_OK) rc = alab_fail(ALAB_ENOMEM, "out of memory");
    float *dst = m->converted;
    for (int i = 0; i < l.n && rc == ALAB_OK; i++) {
        const st_tensor *t = l.s[i].t;
        size_t count = t->nbytes / st_dtype_size(t->dtype);
        const float *p;
        if (m->half && l.s[i].big) { /* 16-bit kept: check it is finite, point at it (or at an aligned copy) */
            const uint8_t *d16 = t->data;
            if ((uintptr_t)d16 % 2) {
                memcpy(dst, d16, t->nbytes);
                d16 = (const uint8_t *)dst;
                dst += (count + 1) / 2;
            } else {
                for (int s = 0; s < src->n; s++)
                    if (t->data >= src->st[s].data && t->data < src->st[s].data + src->st[s].data_len) borrowed[s] = 1;
            }
            /* d16 is 2-byte aligned here (an odd address was copied above); the scan reads the bits */
            size_t bad = first_nonfinite_16((const uint16_t *)(const void *)d16, count, m->half != ST_F16);
            if (bad < count)
                rc = alab_fail(ALAB_ENAN, "model.safetensors: tensor \"%s\" holds a non-finite value at index %zu", t->name, bad);
            *l.s[i].dst = (const float *)(const void *)d16;
            continue;
        }
        if (weight_is_borrowable(t)) {
            p = (const float *)(const void *)t->data;
            for (int s = 0; s < src->n; s++)
                if (t->data >= src->st[s].data && t->data < src->st[s].data + src->st[s].data_len) borrowed[s] = 1;
        } else {
            for (size_t j = 0; j < count; j++) {
                uint16_t h16;
                if (t->dtype == ST_F32) { memcpy(&dst[j], t->data + 4 * j, 4); continue; }
                memcpy(&h16, t->data + 2 * j, 2); /* little-endian host (x86, wasm) */
                dst[j] = t->dtype == ST_F16 ? alab_f16_to_f32(h16) : alab_bf16_to_f32(h16);
            }
            p = dst;
            dst += count;
        }
        size_t bad = first_nonfinite_f32(p, count); /* vectorised: the scan is most of the load */
        if (bad < count)
            rc = alab_fail(ALAB_ENAN, "model.safetensors: tensor \"%s\" holds a non-finite value at index %zu", t->name, bad);
        *l.s[i].dst = p;
    }

    /* Pass 3: the engine's layout (memory the model owns: see pack_layer_weights). */
    if (rc == ALAB_OK && scratch_floats) {
        float *scratch = malloc(scratch_floats * sizeof(float));
        if (!scratch) rc = alab_fail(ALAB_ENOMEM, "cannot allocate %zu MB to transpose the weights", (scratch_floats * 4) >> 20);
        for (int i = 0; i < l.n && rc == ALAB_OK; i++) {
            const weight_spec *w = &l.s[i];
            float *p = (float *)(uintptr_t)*w->dst;
            if (m->half && w->big) {
                if (w->xf == XF_TRANSPOSE || w->xf == XF_NEOX_QKV)
                    transpose16_inplace((uint16_t *)(void *)p, w->shape[0], w->shape[1], scratch,
                                        w->xf == XF_NEOX_QKV ? m->cfg.n_head : 0);
                continue;
            }
            if (w->xf == XF_TRANSPOSE) transpose_inplace(p, w->shape[0], w->shape[1], scratch, 0);
            else if (w->xf == XF_NEOX_QKV) transpose_inplace(p, w->shape[0], w->shape[1], scratch, m->cfg.n_head);
            else if (w->xf == XF_NEOX_QKV_BIAS) neox_bias_inplace(p, w->shape[0], scratch, m->cfg.n_head);
            else if (w->xf == XF_UNIT)
                for (int64_t j = 0; j < w->shape[0]; j++) p[j] = 1.0f + p[j];
        }
        free(scratch);
    }
    free(l.s);
    if (rc == ALAB_OK)
        for (int s = 0; s < src->n; s++)
            if (!borrowed[s]) { /* nothing points into this file: let it go */
                free(m->files[s]);
                m->files[s] = NULL;
            }
    free(borrowed);
    if (rc == ALAB_OK && m->arch.tied) m->lm_head = m->wte;
    return rc;
}

/* The layer matmul weights, repacked in place into the panel order of
 * matmul_packed_forward (ops.c). Every weight pointer points into memory the
 * model owns (the safetensors buffers it took over, or converted), and
 * tensors cannot overlap (st_parse), so each matrix is permuted in place, one
 * block of ALAB_MM_KC rows at a time (scratch ALAB_MM_KC x the widest output;
 * freed before the load returns). */
static int pack_layer_weights(alab_model *m) {
#ifdef ALAB_NO_PACK
    (void)m;
    return ALAB_OK;
#else
    if (m->half) return ALAB_OK; /* 16-bit matrices are converted per product, into the unpacked layout */
    const alab_arch *a = &m->arch;
    const int C = m->cfg.n_embd, DQ = m->cfg.n_head * a->HS, DKV = a->NKV * a->HS, F = a->F;
    int widest = DQ + 2 * DKV;
    if (F > widest) widest = F;
    if (C > widest) widest = C;
    float *tmp = malloc(matmul_pack_scratch_floats(widest) * sizeof(float));
    if (!tmp) return alab_fail(ALAB_ENOMEM, "cannot allocate %zu MB to pack the weights", (matmul_pack_scratch_floats(widest) * 4) >> 20);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        layer_weights *w = &m->layers[l];
        const float *mats[7] = {w->qkv_w, w->q_w, w->k_w, w->v_w, w->o_w, w->up_w, w->gate_w};
        const int rows[7] = {C, C, C, C, DQ, C, C}, cols[7] = {DQ + 2 * DKV, DQ, DKV, DKV, C, F, F};
        for (int i = 0; i < 7; i++) /* owned by the model: see above */
            if (mats[i]) matmul_pack_weights_inplace((float *)(uintptr_t)mats[i], rows[i], cols[i], tmp);
        matmul_pack_weights_inplace((float *)(uintptr_t)w->down_w, F, C, tmp);
    }
    free(tmp);
    m->packed = 1;
    return ALAB_OK;
#endif
}

/* ---- build / free ------------------------------------------------------------------ */

void alab_model_free(alab_model *m) {
    if (!m) return;
    if (m->owns_pool) alab_pool_free(m->pool);
    alab_bpe_free(m->bpe);
    free(m->layers);
    for (int i = 0; i < m->n_files; i++) free(m->files[i]);
    free(m->files);
    free(m->converted);
    free(m->rope_cos);
    free(m->scratch);
    free(m->head_packed);
    free(m->acts.block);
    free(m);
}

static int load_tokenizer(alab_model *m, const alab_model_files *f) {
    int rc;
    /* tokenizer.json defines the pre-tokenizer of every family but GPT-2 (Qwen's and SmolLM2's split digits,
     * Qwen normalizes to NFC), so it wins when given; GPT-2 folders keep reading vocab.json + merges.txt. */
    const int use_hf = f->tokenizer_json && (!(f->vocab_json && f->merges) || m->arch.fam->qkv != QKV_CONV1D_FUSED);
    if (!use_hf && f->vocab_json && f->merges) {
        rc = alab_bpe_load(&m->bpe, f->vocab_json, f->vocab_len, f->merges, f->merges_len);
    } else if (f->tokenizer_json) {
        rc = alab_bpe_load_hf(&m->bpe, f->tokenizer_json, f->tokenizer_len, f->tokenizer_config_json,
                              f->tokenizer_config_json ? f->tokenizer_config_len : 0);
    } else {
        return alab_fail(ALAB_EINVAL, "no tokenizer: vocab.json + merges.txt or tokenizer.json is needed");
    }
    /* The tokenizer's model vocabulary must fit the embedding. Added tokens beyond it are allowed: Gemma 3's
     * text checkpoints (vocab_size 262144) ship the multimodal tokenizer, whose <image_soft_token> is id 262144;
     * a text that holds such a token is refused when it is encoded (alab_model_encode). */
    if (rc == ALAB_OK && m->bpe->V_model > m->cfg.vocab_size)
        rc = alab_fail(ALAB_EVOCAB, "%s has ids up to %d but config.json says vocab_size %d",
                       use_hf ? "tokenizer.json" : "vocab.json", m->bpe->V_model - 1, m->cfg.vocab_size);
    return rc;
}

int alab_model_load_files(alab_model **out, const alab_model_files *f) {
    if (!f) return alab_fail(ALAB_EINVAL, "alab_model_load_files: NULL files");
    int rc = ALAB_OK;
    alab_model *m = NULL;
    tensor_source src = {0};
    if (!out) rc = alab_fail(ALAB_EINVAL, "alab_model_load_files: NULL out");
    else *out = NULL;
    if (rc == ALAB_OK && (!f->config_json || f->n_shards < 1 || !f->shards))
        rc = alab_fail(ALAB_EINVAL, "alab_model_load_files: no config or no safetensors");
    for (int i = 0; rc == ALAB_OK && i < f->n_shards; i++)
        if (!f->shards[i].data) rc = alab_fail(ALAB_EINVAL, "alab_model_load_files: shard %d has no data", i);
    if (rc == ALAB_OK && f->n_shards > 1 && !f->index_json)
        rc = alab_fail(ALAB_EMISSING, "%d safetensors shards but no model.safetensors.index.json", f->n_shards);
    if (rc == ALAB_OK) {
        alab_clear_error();
        m = calloc(1, sizeof *m);
        if (m) m->files = calloc((size_t)f->n_shards, sizeof *m->files);
        if (!m || !m->files) rc = alab_fail(ALAB_ENOMEM, "out of memory");
    }
    if (rc != ALAB_OK) { /* ownership of every shard passed in: free them */
        if (f->shards)
            for (int i = 0; i < f->n_shards; i++) free(f->shards[i].data);
        if (m) free(m->files);
        free(m);
        return rc;
    }
    m->n_files = f->n_shards;
    for (int i = 0; i < f->n_shards; i++) m->files[i] = f->shards[i].data;

    rc = alab_parse_config(&m->cfg, &m->arch, f->config_json, f->config_len);
    if (rc == ALAB_OK) rc = load_tokenizer(m, f);
    if (rc == ALAB_OK && !(m->layers = calloc((size_t)m->cfg.n_layer, sizeof *m->layers)))
        rc = alab_fail(ALAB_ENOMEM, "out of memory");
    if (rc == ALAB_OK) {
        src.st = calloc((size_t)f->n_shards, sizeof *src.st);
        src.names = calloc((size_t)f->n_shards, sizeof *src.names);
        if (!src.st || !src.names) rc = alab_fail(ALAB_ENOMEM, "out of memory");
    }
    for (int i = 0; rc == ALAB_OK && i < f->n_shards; i++) {
        src.names[i] = base_name(f->shards[i].name);
        rc = st_parse(&src.st[i], f->shards[i].data, f->shards[i].len);
        if (rc == ALAB_OK) src.n = i + 1;
        else if (f->n_shards > 1) rc = alab_fail(rc, "%s: %s", src.names[i] ? src.names[i] : "shard", alab_last_error());
    }
    if (rc == ALAB_OK && f->index_json) rc = parse_index(&src, f->index_json, f->index_len);
    if (rc == ALAB_OK) rc = bind_weights(m, &src, f->weights);
    for (int i = 0; i < src.n; i++) st_free(&src.st[i]);
    free(src.st);
    free(src.names);
    free(src.keys);
    free(src.shard_of);
    json_free(&src.index);
    if (rc == ALAB_OK) rc = pack_layer_weights(m);
    if (rc != ALAB_OK) {
        alab_model_free(m);
        return rc;
    }
    *out = m;
    return ALAB_OK;
}

int alab_model_half(const alab_model *m) { return m && m->half ? 1 : 0; }

/* 16-bit to f32 in loops the compiler vectorises (the conversion is most of a half product's overhead):
 * BF16 is the top half of an f32; a finite F16 is its exponent and mantissa moved to f32's places and
 * multiplied by 2^112, which rebases the exponent and turns subnormals into the right normals, exactly
 * (a power of two; no rounding). Inf and NaN, which load refuses in weights, would come out finite. */
static void bf16_to_f32_n(float *out, const uint16_t *h, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const uint32_t u = (uint32_t)h[i] << 16;
        memcpy(&out[i], &u, 4);
    }
}

static void f16_to_f32_n(float *out, const uint16_t *h, size_t n) {
    const float rebase = 5.192296858534828e+33f; /* 2^112 */
    for (size_t i = 0; i < n; i++) {
        const uint32_t em = ((uint32_t)h[i] & 0x7fffu) << 13, sign = ((uint32_t)h[i] & 0x8000u) << 16;
        float f;
        memcpy(&f, &em, 4);
        f *= rebase;
        uint32_t u;
        memcpy(&u, &f, 4);
        u |= sign;
        memcpy(&out[i], &u, 4);
    }
}

void alab_half_to_f32_n(float *out, const uint16_t *h, size_t n, int f16) {
    if (f16) f16_to_f32_n(out, h, n);
    else bf16_to_f32_n(out, h, n);
}

const float *alab_half_matrix(alab_model *m, const float *w16, size_t n) {
    alab_half_to_f32_n(m->scratch, (const uint16_t *)(const void *)w16, n, m->half == ST_F16);
    return m->scratch;
}

int alab_model_load_buffers(alab_model **out, const char *config_json, size_t config_len,
                            void *safetensors, size_t safetensors_len, const char *vocab_json,
                            size_t vocab_len, const char *merges, size_t merges_len) {
    if (!out) { free(safetensors); return alab_fail(ALAB_EINVAL, "alab_model_load_buffers: NULL out"); }
    *out = NULL;
    if (!config_json || !safetensors || !vocab_json || !merges) {
        free(safetensors);
        return alab_fail(ALAB_EINVAL, "alab_model_load_buffers: a buffer is NULL");
    }
    alab_shard shard = {"model.safetensors", safetensors, safetensors_len};
    alab_model_files f = {0};
    f.config_json = config_json;
    f.config_len = config_len;
    f.shards = &shard;
    f.n_shards = 1;
    f.vocab_json = vocab_json;
    f.vocab_len = vocab_len;
    f.merges = merges;
    f.merges_len = merges_len;
    return alab_model_load_files(out, &f);
}

/* ---- text to ids ------------------------------------------------------------------- */

/* An added token of the tokenizer that the model's embedding lacks (Gemma 3's <image_soft_token> in a text-only
 * checkpoint): refused by name, not run. */
static int beyond_model(const alab_model *m, const int *ids, int n) {
    for (int i = 0; ids && i < n; i++)
        if (ids[i] >= m->cfg.vocab_size) {
            const char *s;
            size_t len;
            alab_bpe_token_bytes(&s, &len, m->bpe, ids[i]);
            return alab_fail(ALAB_ERANGE, "the text holds the token \"%.*s\" (id %d), which the tokenizer has but this "
                             "model does not (vocab_size %d)", (int)(len < 60 ? len : 60), s, ids[i], m->cfg.vocab_size);
        }
    return ALAB_OK;
}

int alab_model_encode(int *ids, int max_ids, int *n_ids, const alab_model *m, const char *text, size_t text_len) {
    if (!m || !n_ids) return alab_fail(ALAB_EINVAL, "alab_model_encode: NULL argument");
    const int bos = alab_bpe_bos_to_add(m->bpe);
    if (bos < 0 || text_len == 0) {
        int rc = alab_bpe_encode(ids, max_ids, n_ids, m->bpe, text, text_len);
        return rc == ALAB_OK ? beyond_model(m, ids, *n_ids) : rc;
    }
    int n = 0, room = max_ids > 0 ? max_ids - 1 : 0;
    int rc = alab_bpe_encode(max_ids > 0 ? ids + 1 : ids, room, &n, m->bpe, text, text_len);
    *n_ids = n + 1;
    if (max_ids > 0) ids[0] = bos;
    if (rc == ALAB_OK && max_ids < n + 1) rc = alab_fail(ALAB_ELIMIT, "%d ids do not fit in %d", n + 1, max_ids);
    return rc == ALAB_OK ? beyond_model(m, ids, *n_ids) : rc;
}

/* ---- the expected tensors, for the tests ------------------------------------------ */

static int cmp_spec(const void *a, const void *b) {
    return strcmp(((const weight_spec *)a)->name, ((const weight_spec *)b)->name);
}

int alab_expected_tensors(char *out, size_t cap, size_t *len, const char *config_json, size_t config_len) {
    alab_model m;
    memset(&m, 0, sizeof m);
    *len = 0;
    int rc = alab_parse_config(&m.cfg, &m.arch, config_json, config_len);
    if (rc) return rc;
    if (!(m.layers = calloc((size_t)m.cfg.n_layer, sizeof *m.layers))) return alab_fail(ALAB_ENOMEM, "out of memory");
    spec_list l = {0};
    rc = list_weights(&l, &m);
    if (rc == ALAB_OK) {
        qsort(l.s, (size_t)l.n, sizeof *l.s, cmp_spec);
        size_t p = 0;
        for (int i = 0; i < l.n; i++) {
            char line[200];
            int k = l.s[i].ndim == 2 ? snprintf(line, sizeof line, "%s %lld,%lld\n", l.s[i].name, (long long)l.s[i].shape[0],
                                                (long long)l.s[i].shape[1])
                                     : snprintf(line, sizeof line, "%s %lld\n", l.s[i].name, (long long)l.s[i].shape[0]);
            if (out && p + (size_t)k < cap) memcpy(out + p, line, (size_t)k + 1);
            p += (size_t)k;
        }
        *len = p;
        if (p >= cap) rc = alab_fail(ALAB_ELIMIT, "%zu bytes needed", p + 1);
    }
    free(l.s);
    free(m.layers);
    return rc;
}

/* Ids a checkpoint's embedding has beyond its tokenizer (padding rows: Pythia's 50304 > 50277, Qwen2.5's
 * 151936 > 151665) are no token: shown as "<|id N|>", decoded to nothing. */
static int beyond_tokenizer(const alab_model *m, int id) {
    return id >= alab_bpe_vocab_size(m->bpe) && id < m->cfg.vocab_size;
}

int alab_model_token_display(char *out, size_t cap, size_t *len, const alab_model *m, int id) {
    if (!m || !len) return alab_fail(ALAB_EINVAL, "alab_model_token_display: NULL argument");
    if (!beyond_tokenizer(m, id)) return alab_bpe_display(out, cap, len, m->bpe, id);
    char label[32];
    *len = (size_t)snprintf(label, sizeof label, "<|id %d|>", id);
    if (out && cap) {
        size_t k = *len < cap ? *len + 1 : cap;
        memcpy(out, label, k);
    }
    return *len < cap ? ALAB_OK : alab_fail(ALAB_ELIMIT, "display: %zu bytes needed", *len + 1);
}

int alab_model_decode(char *out, size_t cap, size_t *len, const alab_model *m, const int *ids, int n_ids) {
    if (!m || !len || (!ids && n_ids > 0) || n_ids < 0) return alab_fail(ALAB_EINVAL, "alab_model_decode: bad argument");
    int *keep = malloc((size_t)(n_ids ? n_ids : 1) * sizeof(int));
    if (!keep) return alab_fail(ALAB_ENOMEM, "out of memory");
    int k = 0;
    for (int i = 0; i < n_ids; i++)
        if (!beyond_tokenizer(m, ids[i])) keep[k++] = ids[i];
    int rc = alab_bpe_decode(out, cap, len, m->bpe, keep, k);
    free(keep);
    return rc;
}
