/* gpt2.c — the GPT-2 model: config, weights, activations, the forward pass
 * with attention capture and interventions, top-k and generation.
 *
 * Reads top to bottom: config → weights → activations → attention (where the
 * do-operations live) → forward → results → generation.
 *
 * Legend: T tokens, C channels (n_embd), NH heads, HS head size (C/NH),
 * L layers, V vocabulary, P positions (n_positions).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "json.h"
#include "ops.h"
#include "parallel.h"
#include "safetensors.h"

/* ------------------------------------------------------------------------ */
/* The model                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct {
    const float *ln1_w, *ln1_b;       /* (C)                */
    const float *attn_w, *attn_b;     /* (C, 3C), (3C)      */
    const float *proj_w, *proj_b;     /* (C, C), (C)        */
    const float *ln2_w, *ln2_b;       /* (C)                */
    const float *fc_w, *fc_b;         /* (C, 4C), (4C)      */
    const float *fcproj_w, *fcproj_b; /* (4C, C), (C)       */
} layer_weights;

typedef struct {
    int T_cap;         /* the largest T these buffers hold */
    float *x;          /* (T, C) residual stream          */
    float *h;          /* (T, C) layernorm / projection out */
    float *qkv;        /* (T, 3C)                          */
    float *y;          /* (T, C) attention output, heads concatenated */
    float *fc;         /* (T, 4C)                          */
    float *att;        /* (L, NH, T, T) the capture        */
    float *q, *k;      /* (T, HS) captured head            */
    float *lnf;        /* (C) final layernorm of the last position */
    float *logits;     /* (V)                              */
    int *ids;          /* (T) the tokens of the last run   */
    void *block;       /* the one allocation the above point into */
} activations;

struct alab_model {
    alab_config cfg;
    alab_bpe *bpe;
    const float *wte, *wpe;   /* (V, C), (P, C) */
    const float *lnf_w, *lnf_b;
    layer_weights *layers;    /* (L) */
    void *file;               /* the safetensors buffer, while weights borrow from it */
    float *converted;         /* weights that could not be borrowed (f16, bf16, unaligned) */
    activations acts;
    int T;                    /* of the last run, 0 if none */
    int has_qk;
    int packed;               /* layer matmul weights in matmul_pack_weights order */
    alab_pool *pool;          /* threads that split the big products, or NULL */
    int owns_pool;            /* made by alab_model_set_threads (else the wasm layer's) */
    int pool_rc;              /* ALAB_ETHREAD once a job of this run failed */
};

const alab_config *alab_model_config(const alab_model *m) { return m ? &m->cfg : NULL; }
const alab_bpe *alab_model_bpe(const alab_model *m) { return m ? m->bpe : NULL; }

/* ------------------------------------------------------------------------ */
/* config.json                                                                */
/* ------------------------------------------------------------------------ */

static int config_int(int *out, const json_value *root, const char *key, int lo, int hi) {
    const json_value *v = json_get(root, key);
    int64_t x;
    if (!v) return alab_fail(ALAB_ECONFIG, "config.json: missing \"%s\"", key);
    if (json_int64(v, &x) != 0)
        return alab_fail(ALAB_ECONFIG, "config.json: \"%s\" must be an integer", key);
    if (x < lo || x > hi)
        return alab_fail(ALAB_ECONFIG, "config.json: \"%s\" = %lld is outside [%d, %d]", key, (long long)x, lo, hi);
    *out = (int)x;
    return ALAB_OK;
}

static int parse_config(alab_config *cfg, const char *text, size_t len) {
    json_doc doc;
    int rc = json_parse(&doc, text, len, (size_t)1 << 20);
    if (rc != ALAB_OK) {
        rc = alab_fail(rc, "config.json: %s", doc.err);
        json_free(&doc);
        return rc;
    }
    const json_value *root = doc.root;
    if (root->type != JSON_OBJECT) {
        json_free(&doc);
        return alab_fail(ALAB_ECONFIG, "config.json: not a JSON object");
    }
    memset(cfg, 0, sizeof *cfg);
    if ((rc = config_int(&cfg->vocab_size, root, "vocab_size", 1, ALAB_MAX_VOCAB)) ||
        (rc = config_int(&cfg->n_positions, root, "n_positions", 1, ALAB_MAX_POSITIONS)) ||
        (rc = config_int(&cfg->n_embd, root, "n_embd", 1, ALAB_MAX_EMBD)) ||
        (rc = config_int(&cfg->n_layer, root, "n_layer", 1, ALAB_MAX_LAYERS)) ||
        (rc = config_int(&cfg->n_head, root, "n_head", 1, ALAB_MAX_HEADS))) {
        json_free(&doc);
        return rc;
    }
    cfg->layer_norm_epsilon = 1e-5f;
    const json_value *v;
    if ((v = json_get(root, "layer_norm_epsilon"))) {
        if (v->type != JSON_NUMBER || !(v->u.num > 0) || v->u.num > 1) {
            json_free(&doc);
            return alab_fail(ALAB_ECONFIG, "config.json: \"layer_norm_epsilon\" must be a number in (0, 1]");
        }
        cfg->layer_norm_epsilon = (float)v->u.num;
    }
    if ((v = json_get(root, "activation_function")) &&
        (v->type != JSON_STRING || strcmp(v->u.str, "gelu_new") != 0)) {
        json_free(&doc);
        return alab_fail(ALAB_ECONFIG, "config.json: activation_function must be \"gelu_new\" (GPT-2's)");
    }
    if ((v = json_get(root, "n_inner")) && v->type != JSON_NULL) {
        int64_t inner;
        if (json_int64(v, &inner) != 0 || inner != 4 * (int64_t)cfg->n_embd) {
            json_free(&doc);
            return alab_fail(ALAB_ECONFIG, "config.json: n_inner must be null or 4 * n_embd");
        }
    }
    if ((v = json_get(root, "model_type")) && (v->type != JSON_STRING || strcmp(v->u.str, "gpt2") != 0)) {
        json_free(&doc);
        return alab_fail(ALAB_ECONFIG, "config.json: model_type must be \"gpt2\"");
    }
    json_free(&doc);
    if (cfg->n_embd % cfg->n_head != 0)
        return alab_fail(ALAB_ECONFIG, "config.json: n_embd (%d) is not a multiple of n_head (%d)",
                         cfg->n_embd, cfg->n_head);
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Weights: find, check, borrow or convert                                    */
/* ------------------------------------------------------------------------ */

/* One weight the model needs: where its pointer goes and the shape it must have. */
typedef struct {
    char name[64];
    const float **dst;
    int ndim;
    int64_t shape[2];
    const st_tensor *t;
} weight_spec;

static const st_tensor *find_weight(const st_file *st, const char *name) {
    const st_tensor *t = st_find(st, name);
    if (t) return t;
    char prefixed[80];
    snprintf(prefixed, sizeof prefixed, "transformer.%s", name);
    return st_find(st, prefixed);
}

static int weight_is_borrowable(const st_tensor *t) {
    return t->dtype == ST_F32 && ((uintptr_t)t->data % sizeof(float)) == 0;
}

static void add_spec(weight_spec *s, int *n, const float **dst, int64_t d0, int64_t d1, const char *fmt, int layer) {
    weight_spec *w = &s[(*n)++];
    snprintf(w->name, sizeof w->name, fmt, layer);
    w->dst = dst;
    w->ndim = d1 ? 2 : 1;
    w->shape[0] = d0;
    w->shape[1] = d1;
    w->t = NULL;
}

static int bind_weights(alab_model *m, const st_file *st) {
    const alab_config *c = &m->cfg;
    const int64_t C = c->n_embd, V = c->vocab_size, P = c->n_positions;
    int n_specs = 4 + 12 * c->n_layer, n = 0;
    weight_spec *specs = calloc((size_t)n_specs, sizeof *specs);
    if (!specs) return alab_fail(ALAB_ENOMEM, "out of memory");
    add_spec(specs, &n, &m->wte, V, C, "wte.weight", 0);
    add_spec(specs, &n, &m->wpe, P, C, "wpe.weight", 0);
    add_spec(specs, &n, &m->lnf_w, C, 0, "ln_f.weight", 0);
    add_spec(specs, &n, &m->lnf_b, C, 0, "ln_f.bias", 0);
    for (int l = 0; l < c->n_layer; l++) {
        layer_weights *lw = &m->layers[l];
        add_spec(specs, &n, &lw->ln1_w, C, 0, "h.%d.ln_1.weight", l);
        add_spec(specs, &n, &lw->ln1_b, C, 0, "h.%d.ln_1.bias", l);
        add_spec(specs, &n, &lw->attn_w, C, 3 * C, "h.%d.attn.c_attn.weight", l);
        add_spec(specs, &n, &lw->attn_b, 3 * C, 0, "h.%d.attn.c_attn.bias", l);
        add_spec(specs, &n, &lw->proj_w, C, C, "h.%d.attn.c_proj.weight", l);
        add_spec(specs, &n, &lw->proj_b, C, 0, "h.%d.attn.c_proj.bias", l);
        add_spec(specs, &n, &lw->ln2_w, C, 0, "h.%d.ln_2.weight", l);
        add_spec(specs, &n, &lw->ln2_b, C, 0, "h.%d.ln_2.bias", l);
        add_spec(specs, &n, &lw->fc_w, C, 4 * C, "h.%d.mlp.c_fc.weight", l);
        add_spec(specs, &n, &lw->fc_b, 4 * C, 0, "h.%d.mlp.c_fc.bias", l);
        add_spec(specs, &n, &lw->fcproj_w, 4 * C, C, "h.%d.mlp.c_proj.weight", l);
        add_spec(specs, &n, &lw->fcproj_b, C, 0, "h.%d.mlp.c_proj.bias", l);
    }

    /* Pass 1: every tensor is there, with a float dtype and the right shape;
     * count what must be converted into one allocation. */
    int rc = ALAB_OK;
    size_t convert_floats = 0;
    int borrowed = 0;
    for (int i = 0; i < n && rc == ALAB_OK; i++) {
        weight_spec *w = &specs[i];
        const st_tensor *t = find_weight(st, w->name);
        if (!t) { rc = alab_fail(ALAB_EMISSING, "model.safetensors: missing tensor \"%s\" (or \"transformer.%s\")", w->name, w->name); break; }
        if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16) {
            rc = alab_fail(ALAB_EDTYPE, "model.safetensors: tensor \"%s\" has dtype %s; F32, F16 or BF16 expected",
                           t->name, st_dtype_name(t->dtype));
            break;
        }
        int shape_ok = t->ndim == w->ndim && t->shape[0] == w->shape[0] && (w->ndim == 1 || t->shape[1] == w->shape[1]);
        if (!shape_ok) {
            char got[96] = "";
            size_t p = 0;
            for (int d = 0; d < t->ndim && p < sizeof got - 24; d++)
                p += (size_t)snprintf(got + p, sizeof got - p, "%s%lld", d ? "," : "", (long long)t->shape[d]);
            if (w->ndim == 2)
                rc = alab_fail(ALAB_ESHAPE, "model.safetensors: tensor \"%s\" has shape [%s], expected [%lld,%lld] from config.json",
                               t->name, got, (long long)w->shape[0], (long long)w->shape[1]);
            else
                rc = alab_fail(ALAB_ESHAPE, "model.safetensors: tensor \"%s\" has shape [%s], expected [%lld] from config.json",
                               t->name, got, (long long)w->shape[0]);
            break;
        }
        w->t = t;
        if (weight_is_borrowable(t)) borrowed++;
        else convert_floats += t->nbytes / st_dtype_size(t->dtype);
    }

    /* Pass 2: point at the file or convert; reject non-finite weights. */
    if (rc == ALAB_OK && convert_floats) {
        size_t bytes;
        if (alab_mul_size(&bytes, convert_floats, sizeof(float)) != 0 || !(m->converted = malloc(bytes)))
            rc = alab_fail(ALAB_ENOMEM, "cannot allocate %zu floats for converted weights", convert_floats);
    }
    float *dst = m->converted;
    for (int i = 0; i < n && rc == ALAB_OK; i++) {
        const st_tensor *t = specs[i].t;
        size_t count = t->nbytes / st_dtype_size(t->dtype);
        const float *p;
        if (weight_is_borrowable(t)) {
            p = (const float *)(const void *)t->data;
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
        *specs[i].dst = p;
    }
    free(specs);
    if (rc == ALAB_OK && borrowed == 0) { /* nothing points into the file: let it go */
        free(m->file);
        m->file = NULL;
    }
    return rc;
}

/* The four matmul weights of every layer, repacked in place into the panel
 * order of matmul_packed_forward (ops.c). Every weight pointer points into
 * memory the model owns (the safetensors buffer it took over, or converted),
 * and tensors cannot overlap (st_parse), so each matrix is permuted in place,
 * one block of ALAB_MM_KC rows at a time (scratch ALAB_MM_KC x 4C floats: 3 MB for
 * distilgpt2 natively, 0.8 MB in wasm; freed before the load returns). */
static int pack_layer_weights(alab_model *m) {
#ifdef ALAB_NO_PACK
    (void)m;
    return ALAB_OK;
#else
    const int C = m->cfg.n_embd;
    float *tmp = malloc(matmul_pack_scratch_floats(4 * C) * sizeof(float));
    if (!tmp) return alab_fail(ALAB_ENOMEM, "cannot allocate %zu MB to pack the weights", (matmul_pack_scratch_floats(4 * C) * 4) >> 20);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        layer_weights *w = &m->layers[l];
        const float *mats[4] = {w->attn_w, w->proj_w, w->fc_w, w->fcproj_w};
        const int rows[4] = {C, C, C, 4 * C}, cols[4] = {3 * C, C, 4 * C, C};
        for (int i = 0; i < 4; i++) /* owned by the model: see above */
            matmul_pack_weights_inplace((float *)(uintptr_t)mats[i], rows[i], cols[i], tmp);
    }
    free(tmp);
    m->packed = 1;
    return ALAB_OK;
#endif
}

/* ------------------------------------------------------------------------ */
/* Threads: the big products split by output columns                         */
/* ------------------------------------------------------------------------ */
/* Every split below hands each output value to exactly one part, computed by
 * the same instructions as in the single-threaded kernel: a run is bit for
 * bit the same with any number of threads (tests/c/test_parallel.c). */

/* Parts for work of `madds` multiply-adds: 1 below the pool's threshold. */
static int parts_for(const alab_model *m, double madds) {
    if (!m->pool || madds < alab_pool_min_work(m->pool)) return 1;
    return alab_pool_parts(m->pool);
}

/* Run job on the pool, or on this thread alone; a dead helper is remembered
 * (the forward then fails with ALAB_ETHREAD at the end of the layer). */
static void run_job(alab_model *m, int parts, alab_job_fn fn, void *ctx) {
    if (parts <= 1) fn(ctx, 0, 1);
    else {
        int rc = alab_pool_run(m->pool, fn, ctx);
        if (rc != ALAB_OK) m->pool_rc = rc;
    }
}

typedef struct {
    float *out;
    const float *inp, *w, *b;
    int T, C, OC;
} mm_job;

static void mm_packed_part(void *ctx, int part, int nparts) {
    const mm_job *j = ctx;
    matmul_packed_forward_part(j->out, j->inp, j->w, j->b, j->T, j->C, j->OC, part, nparts);
}

static void mm_nt_part(void *ctx, int part, int nparts) {
    const mm_job *j = ctx;
    matmul_nt_forward_part(j->out, j->inp, j->w, j->T, j->C, j->OC, part, nparts);
}

typedef struct {
    float *out;
    const float *inp;
    int n;
} gelu_job;

static void gelu_part(void *ctx, int part, int nparts) {
    const gelu_job *j = ctx;
    int lo, hi;
    alab_split(&lo, &hi, j->n, part, nparts);
    if (hi > lo) gelu_forward(j->out + lo, j->inp + lo, hi - lo);
}

/* out (T, OC) = inp (T, C) @ w + b for a layer weight, packed or not. */
static void layer_matmul(alab_model *m, float *out, const float *inp, const float *w, const float *b,
                         int T, int C, int OC) {
    if (!m->packed) { /* (ALAB_NO_PACK builds) single-threaded */
        matmul_forward(out, inp, w, b, T, C, OC);
        return;
    }
    const int parts = parts_for(m, (double)T * C * OC);
    if (parts <= 1) {
        matmul_packed_forward(out, inp, w, b, T, C, OC);
        return;
    }
    mm_job j = {out, inp, w, b, T, C, OC};
    run_job(m, parts, mm_packed_part, &j);
}

/* out (T, V) = inp (T, C) @ wte^T: the LM head. */
static void lm_head(alab_model *m, float *out, const float *inp, const float *w, int T, int C, int V) {
    const int parts = parts_for(m, (double)T * C * V);
    if (parts <= 1) {
        matmul_nt_forward(out, inp, w, T, C, V);
        return;
    }
    mm_job j = {out, inp, w, NULL, T, C, V};
    run_job(m, parts, mm_nt_part, &j);
}

static void gelu_layer(alab_model *m, float *x, int n) {
    const int parts = parts_for(m, 8.0 * n); /* a tanh is worth about 8 multiply-adds */
    if (parts <= 1) {
        gelu_forward(x, x, n);
        return;
    }
    gelu_job j = {x, x, n};
    run_job(m, parts, gelu_part, &j);
}

int alab_model_set_threads(alab_model *m, int n) {
    if (!m) return alab_fail(ALAB_EINVAL, "alab_model_set_threads: NULL model");
    if (n < 1 || n > ALAB_MAX_THREADS)
        return alab_fail(ALAB_ERANGE, "threads must be in [1, %d] (got %d)", ALAB_MAX_THREADS, n);
    if (m->owns_pool && alab_pool_size(m->pool) == n) return ALAB_OK;
    alab_pool *p = NULL;
    if (n > 1) {
        int rc = alab_pool_create(&p, n, 1);
        if (rc) return rc;
    }
    if (m->owns_pool) alab_pool_free(m->pool);
    m->pool = p;
    m->owns_pool = p != NULL;
    return ALAB_OK;
}

int alab_model_threads(const alab_model *m) { return m ? alab_pool_parts(m->pool) : 0; }

void alab_model_attach_pool(alab_model *m, alab_pool *p) {
    if (!m) return;
    if (m->owns_pool) alab_pool_free(m->pool);
    m->pool = p;
    m->owns_pool = 0;
}

alab_pool *alab_model_pool(const alab_model *m) { return m ? m->pool : NULL; }

/* ------------------------------------------------------------------------ */
/* Build / free                                                               */
/* ------------------------------------------------------------------------ */

void alab_model_free(alab_model *m) {
    if (!m) return;
    if (m->owns_pool) alab_pool_free(m->pool);
    alab_bpe_free(m->bpe);
    free(m->layers);
    free(m->file);
    free(m->converted);
    free(m->acts.block);
    free(m);
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
    alab_clear_error();
    alab_model *m = calloc(1, sizeof *m);
    if (!m) { free(safetensors); return alab_fail(ALAB_ENOMEM, "out of memory"); }
    m->file = safetensors;

    int rc = parse_config(&m->cfg, config_json, config_len);
    if (rc == ALAB_OK) rc = alab_bpe_load(&m->bpe, vocab_json, vocab_len, merges, merges_len);
    if (rc == ALAB_OK && alab_bpe_vocab_size(m->bpe) > m->cfg.vocab_size)
        rc = alab_fail(ALAB_EVOCAB, "vocab.json has ids up to %d but config.json says vocab_size %d",
                       alab_bpe_vocab_size(m->bpe) - 1, m->cfg.vocab_size);
    if (rc == ALAB_OK && !(m->layers = calloc((size_t)m->cfg.n_layer, sizeof *m->layers)))
        rc = alab_fail(ALAB_ENOMEM, "out of memory");
    if (rc == ALAB_OK) {
        st_file st;
        rc = st_parse(&st, safetensors, safetensors_len);
        if (rc == ALAB_OK) {
            rc = bind_weights(m, &st);
            st_free(&st);
        }
    }
    if (rc == ALAB_OK) rc = pack_layer_weights(m);
    if (rc != ALAB_OK) {
        alab_model_free(m);
        return rc;
    }
    *out = m;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Activations: one block, grown when a longer text comes                     */
/* ------------------------------------------------------------------------ */

static int ensure_activations(alab_model *m, int T) {
    activations *a = &m->acts;
    if (a->block && T <= a->T_cap) return ALAB_OK;
    /* Sizes in 64-bit arithmetic: on wasm32 size_t is 32 bits and L*NH*T*T
     * overflows for long texts; such a request must be ENOMEM, not a wrap. */
    const uint64_t C = (uint64_t)m->cfg.n_embd, L = (uint64_t)m->cfg.n_layer, NH = (uint64_t)m->cfg.n_head;
    const uint64_t HS = C / NH, V = (uint64_t)m->cfg.vocab_size, t = (uint64_t)T;
    uint64_t sizes[11] = {t * C, t * C, t * 3 * C, t * C, t * 4 * C, L * NH * t * t, t * HS, t * HS, C, V, t};
    uint64_t total = 0;
    for (int i = 0; i < 11; i++) total += (sizes[i] + 15) & ~(uint64_t)15; /* keep each 64-byte aligned */
    if (total > (uint64_t)SIZE_MAX / sizeof(float))
        return alab_fail(ALAB_ENOMEM, "activations for %d tokens need %llu MB, more than this address space holds", T,
                         (unsigned long long)(total * 4 >> 20));
    float *block = aligned_alloc(64, (size_t)total * sizeof(float));
    if (!block)
        return alab_fail(ALAB_ENOMEM, "cannot allocate %llu MB of activations for %d tokens", (unsigned long long)(total * 4 >> 20), T);
    free(a->block);
    a->block = block;
    float **ptrs[11] = {&a->x, &a->h, &a->qkv, &a->y, &a->fc, &a->att, &a->q, &a->k, &a->lnf, &a->logits,
                        (float **)(void *)&a->ids}; /* ints share the float-sized slots */
    float *p = block;
    for (int i = 0; i < 11; i++) {
        *ptrs[i] = p;
        p += (size_t)((sizes[i] + 15) & ~(uint64_t)15);
    }
    a->T_cap = T;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                    */
/* ------------------------------------------------------------------------ */

void alab_run_opts_init(alab_run_opts *o) {
    memset(o, 0, sizeof *o);
    o->mask = ALAB_MASK_CAUSAL;
    o->capture_layer = -1;
    o->capture_head = -1;
}

static int check_mask(int mode, int window, const char *where) {
    if (mode != ALAB_MASK_CAUSAL && mode != ALAB_MASK_FULL && mode != ALAB_MASK_WINDOW)
        return alab_fail(ALAB_EINVAL, "%s: unknown mask mode %d", where, mode);
    if (mode == ALAB_MASK_WINDOW && window < 1)
        return alab_fail(ALAB_ERANGE, "%s: window must be at least 1 (got %d)", where, window);
    return ALAB_OK;
}

/* The SCALE_Q / SCALE_K edits of a head multiply its scores by the product
 * of their alphas (a swap moves factors between q and k, it does not change
 * the product). That product is held to |gain| <= ALAB_MAX_SCALE per head, so
 * finite inputs cannot overflow q, k or a score to inf (and then NaN). */
static int check_edit_gains(const alab_run_opts *o, int L, int NH) {
    int any = 0;
    for (int i = 0; i < o->n_interventions && !any; i++)
        any = o->interventions[i].kind == ALAB_SCALE_Q || o->interventions[i].kind == ALAB_SCALE_K;
    if (!any) return ALAB_OK;
    double *gain = malloc((size_t)L * NH * sizeof *gain);
    if (!gain) return alab_fail(ALAB_ENOMEM, "out of memory");
    for (int i = 0; i < L * NH; i++) gain[i] = 1.0;
    int rc = ALAB_OK;
    for (int i = 0; i < o->n_interventions && rc == ALAB_OK; i++) {
        const alab_intervention *v = &o->interventions[i];
        if (v->kind != ALAB_SCALE_Q && v->kind != ALAB_SCALE_K) continue;
        for (int h = 0; h < NH; h++) {
            if (v->head != ALAB_ALL_HEADS && v->head != h) continue;
            double *g = &gain[v->layer * NH + h];
            *g *= fabs((double)v->lambda);
            if (*g > ALAB_MAX_SCALE) {
                rc = alab_fail(ALAB_ERANGE, "intervention %d: the alphas of layer %d head %d multiply to %g, outside [-%g, %g]",
                               i, v->layer, h, *g, (double)ALAB_MAX_SCALE, (double)ALAB_MAX_SCALE);
                break;
            }
        }
    }
    free(gain);
    return rc;
}
static void mask_range(int *lo, int *hi, int mode, int window, int i, int T);

static int check_opts(const alab_model *m, const alab_run_opts *o, int T) {
    const int L = m->cfg.n_layer, NH = m->cfg.n_head;
    int rc;
    if (o->n_interventions < 0 || (o->n_interventions > 0 && !o->interventions))
        return alab_fail(ALAB_EINVAL, "n_interventions is %d with %s interventions", o->n_interventions,
                         o->interventions ? "an array of" : "no");
    if (o->n_interventions > ALAB_MAX_INTERVENTIONS)
        return alab_fail(ALAB_ELIMIT, "%d interventions, the limit is %d", o->n_interventions, ALAB_MAX_INTERVENTIONS);
    for (int i = 0; i < o->n_interventions; i++) {
        const alab_intervention *v = &o->interventions[i];
        if (v->kind < ALAB_DO_HARD || v->kind > ALAB_SWAP_QK)
            return alab_fail(ALAB_EINVAL, "intervention %d: unknown kind %d", i, v->kind);
        if (v->layer < 0 || v->layer >= L)
            return alab_fail(ALAB_ERANGE, "intervention %d: layer %d is outside [0, %d)", i, v->layer, L);
        if (v->head < ALAB_ALL_HEADS || v->head >= NH)
            return alab_fail(ALAB_ERANGE, "intervention %d: head %d is outside [0, %d) (or -1 for all heads)", i, v->head, NH);
        if ((v->kind == ALAB_SCALE_Q || v->kind == ALAB_SCALE_K) && !isfinite(v->lambda))
            return alab_fail(ALAB_ENAN, "intervention %d: the scale alpha is not a finite number", i);
        if (v->kind != ALAB_DO_HARD && v->kind != ALAB_DO_SOFT) continue;
        if (v->row < 0 || v->row >= T)
            return alab_fail(ALAB_ERANGE, "intervention %d: row %d is outside [0, %d)", i, v->row, T);
        if (v->col < 0 || v->col >= T)
            return alab_fail(ALAB_ERANGE, "intervention %d: col %d is outside [0, %d)", i, v->col, T);
        if (v->kind == ALAB_DO_SOFT && !isfinite(v->lambda))
            return alab_fail(ALAB_ENAN, "intervention %d: lambda is not a finite number", i);
        /* finite inputs must give finite scores: |lambda| <= 1e30, so even
         * ALAB_MAX_INTERVENTIONS of them on one cell sum to a finite float */
        if (v->kind == ALAB_DO_SOFT && fabsf(v->lambda) > ALAB_MAX_SOFT_LAMBDA)
            return alab_fail(ALAB_ERANGE, "intervention %d: lambda %g is outside [-%g, %g]", i, (double)v->lambda,
                             (double)ALAB_MAX_SOFT_LAMBDA, (double)ALAB_MAX_SOFT_LAMBDA);
    }
    if ((rc = check_edit_gains(o, L, NH))) return rc;
    if ((rc = check_mask(o->mask, o->window, "mask"))) return rc;
    if (o->layer_mask)
        for (int l = 0; l < L; l++)
            if ((rc = check_mask(o->layer_mask[l], o->layer_window ? o->layer_window[l] : o->window, "layer mask")))
                return rc;
    for (int i = 0; i < o->n_interventions; i++) { /* a soft do adds to a score: the mask must let it through */
        const alab_intervention *v = &o->interventions[i];
        if (v->kind != ALAB_DO_SOFT) continue;
        const int mode = o->layer_mask ? o->layer_mask[v->layer] : o->mask;
        const int window = o->layer_mask && o->layer_window ? o->layer_window[v->layer] : o->window;
        int lo, hi;
        mask_range(&lo, &hi, mode, window, v->row, T);
        if (v->col < lo || v->col >= hi)
            return alab_fail(ALAB_EMASKED, "intervention %d: a soft do on (row %d, col %d) in layer %d, a cell its mask "
                             "hides (row %d sees columns %d..%d): it would change nothing", i, v->row, v->col, v->layer,
                             v->row, lo, hi - 1);
    }
    if (o->scale_override && !isfinite(o->scale))
        return alab_fail(ALAB_ENAN, "scale is not a finite number");
    if (o->scale_override && fabsf(o->scale) > ALAB_MAX_SCALE)
        return alab_fail(ALAB_ERANGE, "scale %g is outside [-%g, %g]", (double)o->scale, (double)ALAB_MAX_SCALE,
                         (double)ALAB_MAX_SCALE);
    if (o->capture_layer != -1 || o->capture_head != -1) {
        if (o->capture_layer < 0 || o->capture_layer >= L)
            return alab_fail(ALAB_ERANGE, "capture layer %d is outside [0, %d)", o->capture_layer, L);
        if (o->capture_head < 0 || o->capture_head >= NH)
            return alab_fail(ALAB_ERANGE, "capture head %d is outside [0, %d)", o->capture_head, NH);
    }
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Attention, with the do-operations                                          */
/* ------------------------------------------------------------------------ */

/* Interventions grouped by (layer, row) for O(1) lookup in the inner loop;
 * ablations as a per-(layer, head) flag. Built once per forward. */
typedef struct {
    int *start;          /* (L*T + 1) offsets into idx */
    int *idx;            /* intervention indices, grouped */
    unsigned char *ablated; /* (L*NH) */
    int has_edits;       /* any rung-3 weight edit (SCALE_Q/K, SWAP_QK) */
    void *block;
} intervention_index;

static int build_index(intervention_index *ix, const alab_run_opts *o, int L, int NH, int T) {
    size_t groups = (size_t)L * T;
    size_t n = (size_t)o->n_interventions;
    size_t bytes = (groups + 1) * sizeof(int) + (n + 1) * sizeof(int) + (size_t)L * NH;
    ix->block = calloc(1, bytes);
    if (!ix->block) return alab_fail(ALAB_ENOMEM, "out of memory");
    ix->start = ix->block;
    ix->idx = ix->start + groups + 1;
    ix->ablated = (unsigned char *)(ix->idx + n + 1);
    for (size_t i = 0; i < n; i++) {
        const alab_intervention *v = &o->interventions[i];
        if (v->kind == ALAB_ABLATE) {
            for (int h = 0; h < NH; h++)
                if (v->head == ALAB_ALL_HEADS || v->head == h) ix->ablated[v->layer * NH + h] = 1;
        } else if (v->kind == ALAB_DO_HARD || v->kind == ALAB_DO_SOFT) {
            ix->start[(size_t)v->layer * T + v->row + 1]++;
        } else {
            ix->has_edits = 1;
        }
    }
    for (size_t g = 0; g < groups; g++) ix->start[g + 1] += ix->start[g];
    int *fill = calloc(groups + 1, sizeof(int));
    if (!fill) { free(ix->block); return alab_fail(ALAB_ENOMEM, "out of memory"); }
    for (size_t i = 0; i < n; i++) { /* stable: kept in the order given */
        const alab_intervention *v = &o->interventions[i];
        if (v->kind != ALAB_DO_HARD && v->kind != ALAB_DO_SOFT) continue;
        size_t g = (size_t)v->layer * T + v->row;
        ix->idx[ix->start[g] + fill[g]++] = (int)i;
    }
    free(fill);
    return ALAB_OK;
}

/* The positions row i may attend to: [*lo, *hi). */
static void mask_range(int *lo, int *hi, int mode, int window, int i, int T) {
    switch (mode) {
    case ALAB_MASK_FULL: *lo = 0; *hi = T; break;
    case ALAB_MASK_WINDOW: *lo = i - window + 1 > 0 ? i - window + 1 : 0; *hi = i + 1; break;
    default: *lo = 0; *hi = i + 1; break;
    }
}

/* Rung-3 weight edits of layer l, applied to its q and k (qkv, (T, 3C)) in the
 * order given. Scaling or swapping W_Q / W_K with the biases kept is linear in
 * the pre-bias projections, so the edit is exact on the activations:
 *   W_Q <- a W_Q:  q <- a (q - b_q) + b_q;  swap: q <- k - b_k + b_q, k <- q - b_q + b_k. */
static void apply_head_edits(alab_model *m, int l, int T, const alab_run_opts *o) {
    const int C = m->cfg.n_embd, NH = m->cfg.n_head, HS = C / NH, C3 = 3 * C;
    const float *b = m->layers[l].attn_b;
    float *qkv = m->acts.qkv;
    for (int s = 0; s < o->n_interventions; s++) {
        const alab_intervention *v = &o->interventions[s];
        if (v->layer != l || v->kind < ALAB_SCALE_Q) continue;
        if (v->kind != ALAB_SWAP_QK && v->lambda == 1.0f) continue; /* the identity, exactly */
        for (int h = 0; h < NH; h++) {
            if (v->head != ALAB_ALL_HEADS && v->head != h) continue;
            const int qo = h * HS, ko = C + h * HS;
            for (int t = 0; t < T; t++) {
                float *q = qkv + (size_t)t * C3 + qo, *k = qkv + (size_t)t * C3 + ko;
                for (int d = 0; d < HS; d++) {
                    const float bq = b[qo + d], bk = b[ko + d];
                    if (v->kind == ALAB_SCALE_Q) {
                        q[d] = v->lambda * (q[d] - bq) + bq;
                    } else if (v->kind == ALAB_SCALE_K) {
                        k[d] = v->lambda * (k[d] - bk) + bk;
                    } else { /* ALAB_SWAP_QK */
                        const float qd = q[d];
                        q[d] = k[d] - bk + bq;
                        k[d] = qd - bq + bk;
                    }
                }
            }
        }
    }
}

/* y (T, C) = per head softmax(q k^T * scale + soft do, masked) [hard do] v.
 * Writes the probabilities to att (NH, T, T) of this layer.
 *
 * Per head, in blocks of ATT_RB query rows, as two small matrix products with
 * the packed matmul kernel (matmul_forward_ld reads q and v in place in qkv):
 *   scores (rows, 0..hi_max) = q_rows @ k^T   written straight into att,
 *   then per row: scale, soft do, mask, softmax, hard do (as before),
 *   y_rows = att_rows (rows, 0..nz) @ v        nz: past the last nonzero column.
 * k^T (HS, T) is transposed once per head into fc, free until the MLP.
 * Columns a causal block cannot see are not computed; entries a row's mask
 * excludes are overwritten with 0, so att is exactly what the per-row loop made. */
#define ATT_RB 32
typedef struct {
    alab_model *m;
    int l, T;
    const alab_run_opts *o;
    const intervention_index *ix;
} attention_job;

/* Heads [h0, h1) of layer l. Each head has its own k^T scratch in fc (NH*HS*T
 * = C*T floats of the T*4C), so heads can run on different threads. */
static void attention_heads(const attention_job *job, int h0, int h1) {
    alab_model *m = job->m;
    const int l = job->l, T = job->T;
    const alab_run_opts *o = job->o;
    const intervention_index *ix = job->ix;
    const int C = m->cfg.n_embd, NH = m->cfg.n_head, HS = C / NH, C3 = 3 * C;
    activations *a = &m->acts;
    const float scale = o->scale_override ? o->scale : 1.0f / sqrtf((float)HS);
    const int mode = o->layer_mask ? o->layer_mask[l] : o->mask;
    const int window = o->layer_mask && o->layer_window ? o->layer_window[l] : o->window;
    float *att_l = a->att + (size_t)l * NH * T * T;

    for (int h = h0; h < h1; h++) {
        float *kt = a->fc + (size_t)h * HS * T; /* (HS, T) */
        float *att_h = att_l + (size_t)h * T * T;
        const float *qh = a->qkv + h * HS, *kh = a->qkv + C + h * HS, *vh = a->qkv + 2 * C + h * HS;
        const int ablated = ix->ablated[l * NH + h];
        for (int j = 0; j < T; j++)
            for (int d = 0; d < HS; d++) kt[(size_t)d * T + j] = kh[(size_t)j * C3 + d];
        for (int i0 = 0; i0 < T; i0 += ATT_RB) {
            const int i1 = T - i0 < ATT_RB ? T : i0 + ATT_RB;
            int lo, hi, hi_max = 0, nz = 0;
            for (int i = i0; i < i1; i++) {
                mask_range(&lo, &hi, mode, window, i, T);
                if (hi > hi_max) hi_max = hi;
            }
            matmul_forward_ld(att_h + (size_t)i0 * T, T, qh + (size_t)i0 * C3, C3, kt, T, NULL, i1 - i0, HS, hi_max);
            for (int i = i0; i < i1; i++) {
                float *row = att_h + (size_t)i * T;
                mask_range(&lo, &hi, mode, window, i, T);
                for (int j = lo; j < hi; j++) row[j] *= scale;
                const int *g = ix->idx + ix->start[(size_t)l * T + i];
                const int ng = ix->start[(size_t)l * T + i + 1] - ix->start[(size_t)l * T + i];
                for (int s = 0; s < ng; s++) { /* soft do: before the mask, so a masked cell stays masked */
                    const alab_intervention *v = &o->interventions[g[s]];
                    if (v->kind == ALAB_DO_SOFT && (v->head == ALAB_ALL_HEADS || v->head == h) && v->col >= lo && v->col < hi)
                        row[v->col] += v->lambda;
                }
                softmax_forward(row + lo, row + lo, hi - lo);
                for (int j = 0; j < lo; j++) row[j] = 0.0f;
                for (int j = hi; j < T; j++) row[j] = 0.0f;
                if (hi > nz) nz = hi;
                for (int s = 0; s < ng; s++) { /* hard do: after the softmax, the row becomes one-hot */
                    const alab_intervention *v = &o->interventions[g[s]];
                    if (v->kind == ALAB_DO_HARD && (v->head == ALAB_ALL_HEADS || v->head == h)) {
                        memset(row, 0, (size_t)T * sizeof(float));
                        row[v->col] = 1.0f;
                        if (v->col + 1 > nz) nz = v->col + 1;
                    }
                }
                if (o->n_knockouts) alab_knockout_row(row, T, o, l, h, i);
            }
            float *y = a->y + (size_t)i0 * C + h * HS;
            if (ablated) { /* the head's output is zeroed before c_proj */
                for (int i = i0; i < i1; i++) memset(y + (size_t)(i - i0) * C, 0, (size_t)HS * sizeof(float));
                continue;
            }
            matmul_forward_ld(y, C, att_h + (size_t)i0 * T, T, vh, C3, NULL, i1 - i0, nz, HS);
        }
    }
}


static void attention_part(void *ctx, int part, int nparts) {
    const attention_job *job = ctx;
    int h0, h1;
    alab_split(&h0, &h1, job->m->cfg.n_head, part, nparts);
    attention_heads(job, h0, h1);
}

/* y (T, C) = per head softmax(...) v, the heads split over the threads. */
static void attention_forward(alab_model *m, int l, int T, const alab_run_opts *o,
                              const intervention_index *ix) {
    const int C = m->cfg.n_embd, NH = m->cfg.n_head;
    attention_job job = {m, l, T, o, ix};
    const int parts = NH > 1 ? parts_for(m, (double)T * T * C) : 1; /* q k^T and att v, causal halves */
    if (parts <= 1) attention_heads(&job, 0, NH);
    else run_job(m, parts, attention_part, &job);
}
/* ------------------------------------------------------------------------ */
/* Forward                                                                    */
/* ------------------------------------------------------------------------ */

int alab_forward(alab_model *m, const int *ids, int T, const alab_run_opts *opts) {
    if (!m || (!ids && T > 0)) return alab_fail(ALAB_EINVAL, "alab_forward: NULL argument");
    alab_run_opts defaults;
    if (!opts) { alab_run_opts_init(&defaults); opts = &defaults; }
    const alab_config *c = &m->cfg;
    const int C = c->n_embd, L = c->n_layer, NH = c->n_head, HS = C / NH, V = c->vocab_size;
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "no tokens to run");
    if (T > c->n_positions)
        return alab_fail(ALAB_ETOOLONG, "%d tokens, but the model's context is %d (n_positions)", T, c->n_positions);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V)
            return alab_fail(ALAB_ERANGE, "token id %d at position %d is outside [0, %d)", ids[t], t, V);
    int rc = check_opts(m, opts, T);
    if (rc) return rc;
    if ((rc = alab_check_evidence_opts(opts, L, NH, T, C))) return rc;
    if ((rc = ensure_activations(m, T))) return rc;
    intervention_index ix = {0};
    if ((rc = build_index(&ix, opts, L, NH, T))) return rc;
    m->T = 0; /* no valid result until this run completes */
    m->pool_rc = 0;

    activations *a = &m->acts;
    if (opts->start_layer > 0) { /* the layers below are those of an earlier run */
        memcpy(a->x, opts->start_x, (size_t)T * C * sizeof(float));
    } else {
        for (int t = 0; t < T; t++) /* x = wte[ids] + wpe[pos] */
            add_f32(a->x + (size_t)t * C, m->wte + (size_t)ids[t] * C, m->wpe + (size_t)t * C, C);
    }

    for (int l = opts->start_layer; l < L; l++) {
        const layer_weights *w = &m->layers[l];
        alab_resid_hooks(a->x, opts, l, T, C);
        layernorm_forward(a->h, a->x, w->ln1_w, w->ln1_b, T, C, c->layer_norm_epsilon);
        layer_matmul(m, a->qkv, a->h, w->attn_w, w->attn_b, T, C, 3 * C);
        if (ix.has_edits) apply_head_edits(m, l, T, opts);
        if (l == opts->capture_layer) { /* q and k of the captured head, before scaling */
            for (int t = 0; t < T; t++) {
                memcpy(a->q + (size_t)t * HS, a->qkv + (size_t)t * 3 * C + opts->capture_head * HS, (size_t)HS * sizeof(float));
                memcpy(a->k + (size_t)t * HS, a->qkv + (size_t)t * 3 * C + C + opts->capture_head * HS, (size_t)HS * sizeof(float));
            }
        }
        attention_forward(m, l, T, opts, &ix);
        alab_head_out_hooks(a->y, opts, l, T, C, HS);
        layer_matmul(m, a->h, a->y, w->proj_w, w->proj_b, T, C, C);
        add_f32(a->x, a->x, a->h, T * C);
        layernorm_forward(a->h, a->x, w->ln2_w, w->ln2_b, T, C, c->layer_norm_epsilon);
        layer_matmul(m, a->fc, a->h, w->fc_w, w->fc_b, T, C, 4 * C);
        gelu_layer(m, a->fc, T * 4 * C);
        layer_matmul(m, a->h, a->fc, w->fcproj_w, w->fcproj_b, T, 4 * C, C);
        add_f32(a->x, a->x, a->h, T * C);
        if (m->pool_rc) break;
    }
    /* Only the last position's logits are needed: the LM head is the largest matmul. */
    layernorm_forward(a->lnf, a->x + (size_t)(T - 1) * C, m->lnf_w, m->lnf_b, 1, C, c->layer_norm_epsilon);
    if (!m->pool_rc) lm_head(m, a->logits, a->lnf, m->wte, 1, C, V);
    free(ix.block);
    if (m->pool_rc) return m->pool_rc; /* a helper thread died: no result */
    memcpy(a->ids, ids, (size_t)T * sizeof(int));
    m->T = T;
    m->has_qk = opts->capture_layer >= 0;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                    */
/* ------------------------------------------------------------------------ */

int alab_result_logits_at(float *logits, const alab_model *m, int pos) {
    if (!logits || !m) return alab_fail(ALAB_EINVAL, "alab_result_logits_at: NULL argument");
    if (!m->T) return alab_fail(ALAB_ESTATE, "no run yet: call alab_forward first");
    if (pos < 0 || pos >= m->T) return alab_fail(ALAB_ERANGE, "position %d is outside [0, %d)", pos, m->T);
    const int C = m->cfg.n_embd;
    float *h = malloc((size_t)C * sizeof *h);
    if (!h) return alab_fail(ALAB_ENOMEM, "out of memory");
    layernorm_forward(h, m->acts.x + (size_t)pos * C, m->lnf_w, m->lnf_b, 1, C, m->cfg.layer_norm_epsilon);
    lm_head((alab_model *)m, logits, h, m->wte, 1, C, m->cfg.vocab_size);
    free(h);
    return m->pool_rc;
}

int alab_result_T(const alab_model *m) { return m ? m->T : 0; }
const float *alab_result_attention(const alab_model *m) { return m && m->T ? m->acts.att : NULL; }
const float *alab_result_logits(const alab_model *m) { return m && m->T ? m->acts.logits : NULL; }
const float *alab_result_q(const alab_model *m) { return m && m->T && m->has_qk ? m->acts.q : NULL; }
const float *alab_result_k(const alab_model *m) { return m && m->T && m->has_qk ? m->acts.k : NULL; }

/* The k largest of logits (V) as probabilities under softmax(logits / temp). */
static void topk_probs(int *ids, float *probs, int k, const float *logits, int V, float temp) {
    double mx = -INFINITY, sum = 0.0;
    for (int v = 0; v < V; v++) if (logits[v] > mx) mx = logits[v];
    for (int v = 0; v < V; v++) sum += exp(((double)logits[v] - mx) / temp);
    int n = k < V ? k : V;
    topk_f32(ids, logits, V, n); /* O(V log k), ops.c; ties keep the lower id first */
    for (int i = 0; i < n; i++) probs[i] = (float)(exp(((double)logits[ids[i]] - mx) / temp) / sum);
}

int alab_result_topk(int *ids, float *probs, int k, const alab_model *m) {
    if (!m || !ids || !probs) return alab_fail(ALAB_EINVAL, "alab_result_topk: NULL argument");
    if (!m->T) return alab_fail(ALAB_ESTATE, "no run yet: call alab_forward first");
    if (k < 1) return alab_fail(ALAB_ERANGE, "k must be at least 1 (got %d)", k);
    if (k > m->cfg.vocab_size) k = m->cfg.vocab_size;
    topk_probs(ids, probs, k, m->acts.logits, m->cfg.vocab_size, 1.0f);
    return ALAB_OK;
}

/* Next-token loss of the last run at every position: the final layernorm and
 * the LM head over the residual stream the forward left in x, NLL_ROWS rows at
 * a time so each pass over wte (V, C) serves many positions. */
#define NLL_ROWS 32
#define NLL_VBLOCK 256
typedef struct {
    float *logits, *tiles;       /* (R, V), one (R, NLL_VBLOCK) tile per part */
    const float *h, *wte;        /* (R, C), (V, C) */
    int R, C, V;
} nll_job;

/* The vocabulary blocks of one part: logits[:, v0 : v0 + nb] for each. */
static void nll_part(void *ctx, int part, int nparts) {
    const nll_job *j = ctx;
    float *tile = j->tiles + (size_t)part * j->R * NLL_VBLOCK;
    int b0, b1;
    alab_split(&b0, &b1, (j->V + NLL_VBLOCK - 1) / NLL_VBLOCK, part, nparts);
    for (int b = b0; b < b1; b++) {
        const int v0 = b * NLL_VBLOCK, nb = j->V - v0 < NLL_VBLOCK ? j->V - v0 : NLL_VBLOCK;
        matmul_nt_forward(tile, j->h, j->wte + (size_t)v0 * j->C, j->R, j->C, nb);
        for (int r = 0; r < j->R; r++)
            memcpy(j->logits + (size_t)r * j->V + v0, tile + (size_t)r * nb, (size_t)nb * sizeof(float));
    }
}

int alab_result_nll(double *nll_sum, int *n, const alab_model *m) {
    if (!nll_sum || !n || !m) return alab_fail(ALAB_EINVAL, "alab_result_nll: NULL argument");
    *nll_sum = 0.0;
    *n = 0;
    if (!m->T) return alab_fail(ALAB_ESTATE, "no run yet: call alab_forward first");
    const int C = m->cfg.n_embd, V = m->cfg.vocab_size, T = m->T;
    const activations *a = &m->acts;
    const int parts = alab_pool_parts(m->pool); /* the tiles are sized for this many */
    float *buf = malloc(((size_t)NLL_ROWS * V + (size_t)NLL_ROWS * C + (size_t)parts * NLL_ROWS * NLL_VBLOCK) * sizeof(float));
    if (!buf) return alab_fail(ALAB_ENOMEM, "out of memory");
    float *logits = buf, *h = buf + (size_t)NLL_ROWS * V;  /* (R, V), (R, C) */
    float *tiles = h + (size_t)NLL_ROWS * C;                /* parts x (R, NLL_VBLOCK) */
    double total = 0.0;
    for (int t0 = 0; t0 + 1 < T; t0 += NLL_ROWS) {
        int R = T - 1 - t0 < NLL_ROWS ? T - 1 - t0 : NLL_ROWS;
        layernorm_forward(h, a->x + (size_t)t0 * C, m->lnf_w, m->lnf_b, R, C, m->cfg.layer_norm_epsilon);
        /* the LM head in vocabulary blocks that stay in cache while all R rows use them */
        nll_job job = {logits, tiles, h, m->wte, R, C, V};
        if (parts > 1 && (double)R * C * V >= alab_pool_min_work(m->pool)) {
            int rc = alab_pool_run(m->pool, nll_part, &job);
            if (rc) { free(buf); return rc; }
        } else {
            nll_part(&job, 0, 1);
        }
        for (int r = 0; r < R; r++) {
            float *row = logits + (size_t)r * V;
            const int target = a->ids[t0 + r + 1];
            const float target_logit = row[target];
            softmax_forward(row, row, V); /* the vectorised exp: V exps per position add up */
            if (row[target] > 1e-30f) {
                total -= log((double)row[target]);
            } else { /* the target's probability underflowed in f32: the exact log-sum-exp */
                matmul_nt_forward(row, h + (size_t)r * C, m->wte, 1, C, V);
                double mx = -INFINITY, sum = 0.0;
                for (int v = 0; v < V; v++) if (row[v] > mx) mx = row[v];
                for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
                total += mx + log(sum) - (double)target_logit;
            }
        }
    }
    free(buf);
    *nll_sum = total;
    *n = T - 1;
    return ALAB_OK;
}

/* ------------------------------------------------------------------------ */
/* Generation                                                                 */
/* ------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}
static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* ---- KV cache ------------------------------------------------------------
 * Generation runs the prompt once and then one token per step, keeping every
 * layer's keys and values: a step costs one row through the weights (T = 1
 * matmuls, which stream the weights once) plus attention over the cache,
 * instead of a full forward over the whole sequence. Per head the cached rows
 * are contiguous (layout (L, NH, cap, HS)), so a new row's scores are one
 * matmul_nt over the cache and its output one matmul over the cached values.
 * Cached steps capture no attention and take no interventions; they use the
 * model's activation buffers as scratch, so generation leaves no result. */
typedef struct {
    int cap, n;      /* positions held / filled */
    float *k, *v;    /* (L, NH, cap, HS) */
    float *scores;   /* (cap) one row of attention */
    float *logits;   /* (V) next-token logits after the last step */
    void *block;
} kv_cache;

static int kv_init(kv_cache *kv, const alab_model *m, int cap) {
    const uint64_t L = (uint64_t)m->cfg.n_layer, C = (uint64_t)m->cfg.n_embd, V = (uint64_t)m->cfg.vocab_size;
    const uint64_t total = 2 * L * (uint64_t)cap * C + (uint64_t)cap + V;
    memset(kv, 0, sizeof *kv);
    if (total > (uint64_t)SIZE_MAX / sizeof(float) || !(kv->block = malloc((size_t)total * sizeof(float))))
        return alab_fail(ALAB_ENOMEM, "cannot allocate %llu MB for the key/value cache of %d positions",
                         (unsigned long long)(total * 4 >> 20), cap);
    kv->cap = cap;
    kv->k = kv->block;
    kv->v = kv->k + L * (uint64_t)cap * C;
    kv->scores = kv->v + L * (uint64_t)cap * C;
    kv->logits = kv->scores + cap;
    return ALAB_OK;
}

/* Tn new tokens (ids valid, kv->n + Tn <= kv->cap) at positions kv->n.. through the
 * model, keys and values appended to the cache; kv->logits = the last one's logits. */
static int forward_cached(alab_model *m, kv_cache *kv, const int *ids, int Tn) {
    const alab_config *c = &m->cfg;
    const int C = c->n_embd, L = c->n_layer, NH = c->n_head, HS = C / NH, V = c->vocab_size, C3 = 3 * C;
    const int P0 = kv->n;
    const float scale = 1.0f / sqrtf((float)HS);
    int rc = ensure_activations(m, Tn);
    if (rc) return rc;
    m->T = 0; /* the activations are scratch from here on: no valid result */
    m->pool_rc = 0;
    activations *a = &m->acts;
    for (int t = 0; t < Tn; t++)
        add_f32(a->x + (size_t)t * C, m->wte + (size_t)ids[t] * C, m->wpe + (size_t)(P0 + t) * C, C);
    for (int l = 0; l < L; l++) {
        const layer_weights *w = &m->layers[l];
        layernorm_forward(a->h, a->x, w->ln1_w, w->ln1_b, Tn, C, c->layer_norm_epsilon);
        layer_matmul(m, a->qkv, a->h, w->attn_w, w->attn_b, Tn, C, C3);
        for (int h = 0; h < NH; h++) {
            float *kh = kv->k + ((size_t)l * NH + h) * kv->cap * HS, *vh = kv->v + ((size_t)l * NH + h) * kv->cap * HS;
            for (int t = 0; t < Tn; t++) {
                memcpy(kh + (size_t)(P0 + t) * HS, a->qkv + (size_t)t * C3 + C + h * HS, (size_t)HS * sizeof(float));
                memcpy(vh + (size_t)(P0 + t) * HS, a->qkv + (size_t)t * C3 + 2 * C + h * HS, (size_t)HS * sizeof(float));
            }
            for (int t = 0; t < Tn; t++) { /* causal: position P0 + t sees 0..P0 + t */
                const int n = P0 + t + 1;
                matmul_nt_forward(kv->scores, a->qkv + (size_t)t * C3 + h * HS, kh, 1, HS, n);
                for (int j = 0; j < n; j++) kv->scores[j] *= scale;
                softmax_forward(kv->scores, kv->scores, n);
                matmul_forward_ld(a->y + (size_t)t * C + h * HS, C, kv->scores, n, vh, HS, NULL, 1, n, HS);
            }
        }
        layer_matmul(m, a->h, a->y, w->proj_w, w->proj_b, Tn, C, C);
        add_f32(a->x, a->x, a->h, Tn * C);
        layernorm_forward(a->h, a->x, w->ln2_w, w->ln2_b, Tn, C, c->layer_norm_epsilon);
        layer_matmul(m, a->fc, a->h, w->fc_w, w->fc_b, Tn, C, 4 * C);
        gelu_layer(m, a->fc, Tn * 4 * C);
        layer_matmul(m, a->h, a->fc, w->fcproj_w, w->fcproj_b, Tn, 4 * C, C);
        add_f32(a->x, a->x, a->h, Tn * C);
        if (m->pool_rc) return m->pool_rc;
    }
    layernorm_forward(a->lnf, a->x + (size_t)(Tn - 1) * C, m->lnf_w, m->lnf_b, 1, C, c->layer_norm_epsilon);
    lm_head(m, kv->logits, a->lnf, m->wte, 1, C, V);
    if (m->pool_rc) return m->pool_rc;
    kv->n += Tn;
    return ALAB_OK;
}

/* alab_generate, with the KV cache (use_cache) or by a full forward per token (the
 * reference the tests compare against). step_logits, if not NULL, receives the
 * logits (max_new x V) each token was chosen from. Declared in tests/c/test_kv_cache.c. */
int alab_generate_impl(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                       float temperature, int top_k, uint64_t *rng_state, int use_cache, float *step_logits);
int alab_generate_impl(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                       float temperature, int top_k, uint64_t *rng_state, int use_cache, float *step_logits) {
    if (!out || !n_out || !m || !ids || !rng_state) return alab_fail(ALAB_EINVAL, "alab_generate: NULL argument");
    *n_out = 0;
    if (max_new < 0) return alab_fail(ALAB_ERANGE, "max_new must be >= 0 (got %d)", max_new);
    if (!isfinite(temperature) || temperature < 0) return alab_fail(ALAB_ENAN, "temperature must be a finite number >= 0");
    if (top_k < 0) return alab_fail(ALAB_ERANGE, "top_k must be >= 0 (got %d)", top_k);
    if (T <= 0) return alab_fail(ALAB_EEMPTY, "no tokens to continue");
    if ((int64_t)T + max_new > m->cfg.n_positions) /* 64 bits: long is 32 on wasm32 */
        return alab_fail(ALAB_ETOOLONG, "%d tokens + %d new exceed the model's context of %d", T, max_new, m->cfg.n_positions);
    const int V = m->cfg.vocab_size;
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= V)
            return alab_fail(ALAB_ERANGE, "token id %d at position %d is outside [0, %d)", ids[t], t, V);
    if (*rng_state == 0) *rng_state = 0x9E3779B97F4A7C15ULL; /* xorshift must not start at 0 */
    if (max_new == 0) return ALAB_OK;
    int k = top_k == 0 || top_k > V ? V : top_k;
    int *seq = malloc((size_t)(T + max_new) * sizeof(int));
    int *cand = malloc((size_t)k * sizeof(int));
    float *p = malloc((size_t)k * sizeof(float));
    kv_cache kv = {0};
    int rc = (!seq || !cand || !p) ? alab_fail(ALAB_ENOMEM, "out of memory") : ALAB_OK;
    if (rc == ALAB_OK) memcpy(seq, ids, (size_t)T * sizeof(int));
    if (rc == ALAB_OK && use_cache) rc = kv_init(&kv, m, T + max_new);
    if (rc == ALAB_OK && use_cache) rc = forward_cached(m, &kv, ids, T);
    for (int s = 0; s < max_new && rc == ALAB_OK; s++) {
        const float *logits;
        if (use_cache) {
            if (s > 0 && (rc = forward_cached(m, &kv, &seq[T + s - 1], 1))) break;
            logits = kv.logits;
        } else {
            if ((rc = alab_forward(m, seq, T + s, NULL))) break;
            logits = m->acts.logits;
        }
        if (step_logits) memcpy(step_logits + (size_t)s * V, logits, (size_t)V * sizeof(float));
        int next;
        if (temperature == 0.0f) { /* greedy: the first largest logit (the lowest id among ties) */
            next = argmax_f32(logits, V);
        } else {
            topk_probs(cand, p, k, logits, V, temperature);
            double total = 0.0, r;
            for (int i = 0; i < k; i++) total += p[i];
            r = rng_uniform(rng_state) * total;
            next = cand[k - 1];
            for (int i = 0; i < k; i++) {
                r -= p[i];
                if (r < 0) { next = cand[i]; break; }
            }
        }
        seq[T + s] = next;
        out[s] = next;
        *n_out = s + 1;
    }
    free(kv.block);
    free(seq);
    free(cand);
    free(p);
    return rc;
}

int alab_generate(int *out, int *n_out, alab_model *m, const int *ids, int T, int max_new,
                  float temperature, int top_k, uint64_t *rng_state) {
    return alab_generate_impl(out, n_out, m, ids, T, max_new, temperature, top_k, rng_state, 1, NULL);
}
