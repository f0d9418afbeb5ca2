/*
 * wasm_api.c — the WebAssembly boundary: flat, JS-friendly wrappers over the
 * public C API, and the only file that includes emscripten.h.
 *
 * Where attnlab.h takes a struct or an out-pointer, the wrapper here takes
 * plain numbers and pointers and returns one int, so the JS side needs no
 * knowledge of C struct layouts:
 *   - counts come back as the return value (>= 0), errors as ALAB_E* (< 0);
 *   - a constructor returns the handle or 0, and its rc stays readable with
 *     alab_wasm_last_rc() (the details with alab_last_error());
 *   - interventions cross as n x IV_FLOATS floats, in the order of the IV_* enum below.
 * Functions of attnlab.h that are already flat (alab_result_*, the analysis
 * functions, alab_model_free, alab_strerror, alab_last_error) are exported
 * as they are; the list lives in c/src/wasm_exports.json.
 *
 * The JS side does not copy anything of this boundary by hand:
 * scripts/gen-abi.mjs reads attnlab.h (constants, error codes), errors.c
 * (their messages), this file (the config fields of alab_wasm_config_get,
 * the IV_* and KERNEL_* enums, every EMSCRIPTEN_KEEPALIVE function) and
 * wasm_exports.json, and writes web/src/core/abi.js (make wasm runs it;
 * tests/js/abi.test.js fails while the committed abi.js is stale). Keep the
 * shapes it parses: `case N: return c->field;` and one-line enums.
 *
 * Pointers are wasm32 addresses; sizes are size_t (32-bit here), so a JS
 * caller passes byte counts up to 4 GB as numbers.
 */
#include <emscripten.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "internal.h"
#include "ops.h"
#include "parallel.h"

/* ------------------------------------------------------------------------ */
/* Module facts                                                               */
/* ------------------------------------------------------------------------ */

EMSCRIPTEN_KEEPALIVE const char *alab_wasm_version(void) { return ALAB_VERSION; }

/* 1 when the kernels were compiled for wasm SIMD128 (-msimd128), 2 when also for
 * relaxed SIMD (-mrelaxed-simd: attnlab-relaxed.wasm, simd.h), else 0. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_simd(void) {
#if defined(__wasm_relaxed_simd__)
    return 2;
#elif defined(__wasm_simd128__)
    return 1;
#else
    return 0;
#endif
}

/* Bytes currently allocated by malloc (not counting free blocks), so tests
 * can check that repeated runs and load/free cycles leave the heap flat.
 * The wasm memory itself only grows; this is the number that must not. */
EMSCRIPTEN_KEEPALIVE size_t alab_wasm_heap_in_use(void) {
    struct mallinfo mi = mallinfo();
    return (size_t)mi.uordblks;
}

/* ------------------------------------------------------------------------ */
/* Model                                                                      */
/* ------------------------------------------------------------------------ */

/* Single-threaded module: the rc of the last alab_wasm_load. */
static int g_last_rc = ALAB_OK;

EMSCRIPTEN_KEEPALIVE int alab_wasm_last_rc(void) { return g_last_rc; }

/* alab_model_load_buffers with the handle as the return value (0 on failure,
 * rc in alab_wasm_last_rc()). The safetensors buffer must come from malloc()
 * and belongs to the model from this call on, success or not. */
EMSCRIPTEN_KEEPALIVE alab_model *alab_wasm_load(const char *config_json, size_t config_len,
                                                void *safetensors, size_t safetensors_len,
                                                const char *vocab_json, size_t vocab_len,
                                                const char *merges, size_t merges_len) {
    alab_model *m = NULL;
    g_last_rc = alab_model_load_buffers(&m, config_json, config_len, safetensors,
                                        safetensors_len, vocab_json, vocab_len, merges,
                                        merges_len);
    return g_last_rc == ALAB_OK ? m : NULL;
}

/* alab_model_load_files with flat arguments: the text files as (pointer,
 * length) pairs (pointer 0 = absent), and n_shards safetensors buffers from
 * malloc() given by three arrays: shard_data[i], shard_len[i] and
 * shard_name[i] (NUL-terminated file names as the index names them), and
 * weights (ALAB_WEIGHTS_*: auto, f32, half). Every
 * shard buffer belongs to the model from this call on, success or not.
 * Returns the handle or 0 (rc in alab_wasm_last_rc()). */
EMSCRIPTEN_KEEPALIVE alab_model *alab_wasm_load_files(const char *config, size_t config_len,
                                                      const char *index, size_t index_len,
                                                      const char *vocab, size_t vocab_len,
                                                      const char *merges, size_t merges_len,
                                                      const char *tok, size_t tok_len,
                                                      const char *tokcfg, size_t tokcfg_len,
                                                      int n_shards, void *const *shard_data,
                                                      const size_t *shard_len, const char *const *shard_name,
                                                      int weights) {
    alab_model *m = NULL;
    alab_shard *shards = n_shards > 0 && n_shards <= 4096 ? calloc((size_t)n_shards, sizeof *shards) : NULL;
    if (!shards) {
        for (int i = 0; shard_data && i < n_shards && i < 4096; i++) free(shard_data[i]);
        g_last_rc = alab_fail(n_shards > 0 && n_shards <= 4096 ? ALAB_ENOMEM : ALAB_EINVAL,
                              "load: %d safetensors files", n_shards);
        return NULL;
    }
    for (int i = 0; i < n_shards; i++) shards[i] = (alab_shard){shard_name[i], shard_data[i], shard_len[i]};
    alab_model_files f = {config, config_len, shards, n_shards, index, index_len, vocab, vocab_len,
                          merges, merges_len, tok, tok_len, tokcfg, tokcfg_len, weights};
    g_last_rc = alab_model_load_files(&m, &f);
    free(shards);
    return g_last_rc == ALAB_OK ? m : NULL;
}

/* 1 when the model keeps its big matrices in 16 bits. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_model_half(const alab_model *m) { return alab_model_half(m); }

/* The model's family (config.json's model_type), a static string. */
EMSCRIPTEN_KEEPALIVE const char *alab_wasm_model_family(const alab_model *m) {
    const alab_config *c = m ? alab_model_config(m) : NULL;
    return c ? c->family : "";
}

/* One field of the model's config, by number, so new fields add no export
 * (the numbering is the cases below: abi.js's CONFIG_FIELDS is read from
 * them). NaN for an unknown field or a NULL model. */
EMSCRIPTEN_KEEPALIVE double alab_wasm_config_get(const alab_model *m, int field) {
    const alab_config *c = m ? alab_model_config(m) : NULL;
    if (!c) return NAN;
    switch (field) {
    case 0: return c->n_layer;
    case 1: return c->n_head;
    case 2: return c->n_embd;
    case 3: return c->vocab_size;
    case 4: return c->n_positions;
    case 5: return c->layer_norm_epsilon;
    case 6: return c->n_kv_head;
    case 7: return c->head_dim;
    default: return NAN;
    }
}

/* ------------------------------------------------------------------------ */
/* Threads (attnlab-mt.wasm: shared memory, helpers are Web Workers)          */
/* ------------------------------------------------------------------------ */
/* The JS layer (web/src/core/wasm.js) makes a pool, starts n-1 workers that
 * instantiate this module on the same WebAssembly.Memory (web/src/core/
 * thread.js), and each worker sets its stack pointer to the top of its own
 * stack from alab_wasm_pool_stack_top and enters alab_wasm_pool_helper, which
 * returns only when the pool is stopped. In attnlab.wasm (no shared memory)
 * the same exports exist, and a pool never gets more than the caller.
 * A pool lives as long as its instance: the JS side stops it and drops the
 * instance, whose memory goes with it, so no export frees one. */

#define HELPER_STACK_BYTES (512u << 10) /* kernels keep up to ~20 KiB of packed panels on the stack */

typedef struct {
    alab_pool *pool;
    void *stacks; /* (n-1) stacks of HELPER_STACK_BYTES */
    int n;
} wasm_pool;

/* A pool of n threads (the caller included) with a stack for each helper;
 * 0 on failure (rc in alab_wasm_last_rc()). On wasm the caller always spins
 * while its helpers finish (parallel.c says why), wherever it runs. */
EMSCRIPTEN_KEEPALIVE wasm_pool *alab_wasm_pool_create(int n) {
    wasm_pool *wp = calloc(1, sizeof *wp);
    if (!wp) { g_last_rc = alab_fail(ALAB_ENOMEM, "out of memory"); return NULL; }
    g_last_rc = alab_pool_create(&wp->pool, n, 0);
    if (g_last_rc == ALAB_OK && n > 1 && !(wp->stacks = aligned_alloc(16, (size_t)(n - 1) * HELPER_STACK_BYTES)))
        g_last_rc = alab_fail(ALAB_ENOMEM, "out of memory for %d helper stacks", n - 1);
    if (g_last_rc != ALAB_OK) {
        alab_pool_free(wp->pool);
        free(wp);
        return NULL;
    }
    wp->n = n;
    return wp;
}

/* The initial stack pointer of helper tid (1..n-1): the top of its stack. */
EMSCRIPTEN_KEEPALIVE size_t alab_wasm_pool_stack_top(const wasm_pool *wp, int tid) {
    if (!wp || tid < 1 || tid >= wp->n) return 0;
    return (size_t)wp->stacks + (size_t)tid * HELPER_STACK_BYTES;
}

/* Helper tid's loop; returns after alab_wasm_pool_stop. */
EMSCRIPTEN_KEEPALIVE void alab_wasm_pool_helper(wasm_pool *wp, int tid) {
    if (wp) alab_pool_helper(wp->pool, tid);
}
EMSCRIPTEN_KEEPALIVE int alab_wasm_pool_attached(const wasm_pool *wp) { return wp ? alab_pool_attached(wp->pool) : 0; }
EMSCRIPTEN_KEEPALIVE int alab_wasm_pool_parts(const wasm_pool *wp) { return wp ? alab_pool_parts(wp->pool) : 1; }
/* Called by a worker whose helper trapped: waiting and later runs fail with ALAB_ETHREAD. */
EMSCRIPTEN_KEEPALIVE void alab_wasm_pool_fail(wasm_pool *wp) { if (wp) alab_pool_mark_failed(wp->pool); }
EMSCRIPTEN_KEEPALIVE void alab_wasm_pool_stop(wasm_pool *wp) { if (wp) alab_pool_stop(wp->pool); }
EMSCRIPTEN_KEEPALIVE void alab_wasm_pool_set_min_work(wasm_pool *wp, double madds) {
    if (wp) alab_pool_set_min_work(wp->pool, madds);
}
EMSCRIPTEN_KEEPALIVE void alab_wasm_model_set_pool(alab_model *m, wasm_pool *wp) {
    alab_model_attach_pool(m, wp ? wp->pool : NULL);
}

/* A job for the tests: part p of n writes p + 1 to out[p] (n = the parts the
 * pool runs), or with data the sum of its share of data[0..n_data) (as a
 * float's bits), and with trap_part > 0 that part traps instead, as a helper
 * with a bug would. Returns the number of parts, or ALAB_ETHREAD. */
typedef struct {
    int *out;
    int trap_part;
    const float *data;
    int n_data;
} selftest_job;

static void selftest_part(void *ctx, int part, int nparts) {
    const selftest_job *j = ctx;
    if (part == j->trap_part) __builtin_trap();
    if (!j->data) {
        j->out[part] = part + 1;
        return;
    }
    int lo, hi;
    alab_split(&lo, &hi, j->n_data, part, nparts);
    float sum = 0.0f;
    for (int i = lo; i < hi; i++) sum += j->data[i];
    memcpy(&j->out[part], &sum, sizeof sum);
}

EMSCRIPTEN_KEEPALIVE int alab_wasm_pool_selftest(wasm_pool *wp, int *out, int trap_part, const float *data, int n_data) {
    if (!wp || !out || n_data < 0) return alab_fail(ALAB_EINVAL, "pool selftest: bad argument");
    selftest_job j = {out, trap_part > 0 ? trap_part : -1, data, n_data};
    int rc = alab_pool_run(wp->pool, selftest_part, &j);
    return rc < 0 ? rc : alab_pool_parts(wp->pool);
}

/* ------------------------------------------------------------------------ */
/* Tokenizer                                                                  */
/* ------------------------------------------------------------------------ */

/* A tokenizer on its own (tests compare it with tokenizers.js; the model
 * loader uses the same C): a Hugging Face tokenizer.json and its optional
 * tokenizer_config.json. Returns the handle or 0 (rc: alab_wasm_last_rc).
 * Free it with alab_bpe_free. */
EMSCRIPTEN_KEEPALIVE alab_bpe *alab_wasm_bpe_load_hf(const char *json, size_t len, const char *cfg, size_t cfg_len) {
    alab_bpe *b = NULL;
    g_last_rc = alab_bpe_load_hf(&b, json, len, cfg, cfg_len);
    return b;
}

/* Encode text; returns the number of ids (>= 0) or ALAB_E*. When that number
 * exceeds max_ids, ids holds a prefix and the caller retries with more room
 * (max_ids = text_len + 1 fits all but texts that NFC makes longer). */
EMSCRIPTEN_KEEPALIVE int alab_wasm_bpe_encode(int *ids, int max_ids, const alab_bpe *b, const char *text,
                                              size_t text_len) {
    if (!b) return alab_fail(ALAB_EINVAL, "encode: no tokenizer");
    if (text_len > ALAB_MAX_TEXT_BYTES)
        return alab_fail(ALAB_ELIMIT, "encode: text of %zu bytes exceeds the limit of %u",
                         text_len, (unsigned)ALAB_MAX_TEXT_BYTES);
    int n = 0;
    int rc = alab_bpe_encode(ids, max_ids, &n, b, text, text_len);
    if (rc == ALAB_ELIMIT && n > max_ids) return n;
    return rc < 0 ? rc : n;
}

EMSCRIPTEN_KEEPALIVE int alab_wasm_encode(int *ids, int max_ids, const alab_model *m,
                                          const char *text, size_t text_len) {
    if (!m) return alab_fail(ALAB_EINVAL, "encode: no model");
    if (text_len > ALAB_MAX_TEXT_BYTES)
        return alab_fail(ALAB_ELIMIT, "encode: text of %zu bytes exceeds the limit of %u",
                         text_len, (unsigned)ALAB_MAX_TEXT_BYTES);
    int n = 0;
    int rc = alab_model_encode(ids, max_ids, &n, m, text, text_len); /* with the BOS the model's tokenizer adds */
    if (rc == ALAB_ELIMIT && n > max_ids) return n;
    return rc < 0 ? rc : n;
}

/* The model's tokenizer without the BOS it adds to a run's input: what one token of text is (an answer of the
 * evidence methods). Same returns as alab_wasm_encode. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_encode_plain(int *ids, int max_ids, const alab_model *m, const char *text, size_t text_len) {
    if (!m) return alab_fail(ALAB_EINVAL, "encode: no model");
    int n = 0;
    int rc = alab_bpe_encode(ids, max_ids, &n, alab_model_bpe(m), text, text_len);
    if (rc == ALAB_ELIMIT && n > max_ids) return n;
    return rc < 0 ? rc : n;
}

/* Decode ids to bytes; returns the byte length needed (>= 0) or ALAB_E*.
 * The output is NUL-terminated when the length is < cap; when it is >= cap
 * the caller retries with cap = length + 1. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_bpe_decode(char *out, int cap, const alab_bpe *b, const int *ids, int n_ids) {
    if (!b) return alab_fail(ALAB_EINVAL, "decode: no tokenizer");
    if (cap < 0) return alab_fail(ALAB_EINVAL, "decode: negative capacity");
    size_t len = 0;
    int rc = alab_bpe_decode(out, (size_t)cap, &len, b, ids, n_ids);
    if (rc < 0 && !(rc == ALAB_ELIMIT && len > (size_t)cap)) return rc;
    if (len > (size_t)INT32_MAX) return alab_fail(ALAB_ELIMIT, "decode: output too long");
    return (int)len;
}

EMSCRIPTEN_KEEPALIVE int alab_wasm_decode(char *out, int cap, const alab_model *m,
                                          const int *ids, int n_ids) {
    if (!m) return alab_fail(ALAB_EINVAL, "decode: no model");
    if (cap < 0) return alab_fail(ALAB_EINVAL, "decode: negative capacity");
    size_t len = 0;
    int rc = alab_model_decode(out, (size_t)cap, &len, m, ids, n_ids); /* padding ids beyond the tokenizer: nothing */
    if (rc < 0 && !(rc == ALAB_ELIMIT && len > (size_t)cap)) return rc;
    if (len > (size_t)INT32_MAX) return alab_fail(ALAB_ELIMIT, "decode: output too long");
    return (int)len;
}

/* The bytes of one token of a model, decoded alone (a SentencePiece-style decoder's Strip does not cut the
 * space a single token starts with; an id beyond the tokenizer gives none); returns the length, as above. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_token_bytes(char *out, int cap, const alab_model *m, int id) {
    if (!m) return alab_fail(ALAB_EINVAL, "token bytes: no model");
    if (cap < 0) return alab_fail(ALAB_EINVAL, "token bytes: negative capacity");
    const alab_bpe *b = alab_model_bpe(m);
    if (id >= alab_bpe_vocab_size(b) && id < alab_model_config(m)->vocab_size) return 0;
    const char *s;
    size_t n;
    int rc = alab_bpe_token_bytes(&s, &n, b, id);
    if (rc) return rc;
    if (n > (size_t)INT32_MAX) return alab_fail(ALAB_ELIMIT, "token bytes: too long");
    if (n < (size_t)cap) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    return (int)n;
}

/* Display string of one token (figure label); returns its byte length or
 * ALAB_E*, with the same retry rule as alab_wasm_decode. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_bpe_display(char *out, int cap, const alab_bpe *b, int id) {
    if (!b) return alab_fail(ALAB_EINVAL, "display: no tokenizer");
    if (cap < 0) return alab_fail(ALAB_EINVAL, "display: negative capacity");
    size_t len = 0;
    int rc = alab_bpe_display(out, (size_t)cap, &len, b, id);
    if (rc < 0 && !(rc == ALAB_ELIMIT && len > (size_t)cap)) return rc;
    if (len > (size_t)INT32_MAX) return alab_fail(ALAB_ELIMIT, "display: output too long");
    return (int)len;
}

/* A model's vocabulary may be larger than its tokenizer's (rows padded to a
 * multiple of 64 or 128, as Qwen's 151936 > 151669, or a vocab.json that is
 * short): such an id has no text and is labelled "<|id N|>"; ids outside the model's vocabulary stay ALAB_ERANGE. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_token_display(char *out, int cap, const alab_model *m,
                                                 int id) {
    if (!m) return alab_fail(ALAB_EINVAL, "display: no model");
    if (cap < 0) return alab_fail(ALAB_EINVAL, "display: negative capacity");
    size_t len = 0;
    int rc = alab_model_token_display(out, (size_t)cap, &len, m, id); /* "<|id N|>" beyond the tokenizer */
    if (rc < 0 && !(rc == ALAB_ELIMIT && len > (size_t)cap)) return rc;
    if (len > (size_t)INT32_MAX) return alab_fail(ALAB_ELIMIT, "display: output too long");
    return (int)len;
}

/* ------------------------------------------------------------------------ */
/* Forward pass                                                               */
/* ------------------------------------------------------------------------ */

/* One intervention at the boundary: IV_FLOATS floats in this order. */
enum { IV_KIND, IV_LAYER, IV_HEAD, IV_ROW, IV_COL, IV_LAMBDA, IV_ALPHA, IV_FLOATS };

/* A float that must hold an integer index (kind, layer, head, row, col). */
static int float_to_index(int *out, float x, int i, const char *what) {
    if (!isfinite(x)) return alab_fail(ALAB_ENAN, "intervention %d: %s is not finite", i, what);
    if (x != truncf(x)) return alab_fail(ALAB_EINVAL, "intervention %d: %s = %g is not an integer", i, what, (double)x);
    if (x < -2147483648.0f || x >= 2147483648.0f)
        return alab_fail(ALAB_ERANGE, "intervention %d: %s = %g is out of range", i, what, (double)x);
    *out = (int)x;
    return ALAB_OK;
}

/* Flat options into o: interv (n_interv, IV_FLOATS) floats read into *iv (malloc'd, the caller frees it; NULL
 * for none), the rest as alab_wasm_forward says. */
static int flat_opts(alab_run_opts *o, alab_intervention **iv_out, const float *interv, int n_interv, int mask,
                     int window, const int *layer_mask, const int *layer_window, int scale_override, float scale,
                     int cap_layer, int cap_head) {
    *iv_out = NULL;
    if (n_interv < 0 || (n_interv > 0 && !interv))
        return alab_fail(ALAB_EINVAL, "forward: bad intervention list (%d)", n_interv);
    if (n_interv > ALAB_MAX_INTERVENTIONS)
        return alab_fail(ALAB_ELIMIT, "forward: %d interventions exceed the limit of %d",
                         n_interv, ALAB_MAX_INTERVENTIONS);

    alab_intervention *iv = NULL;
    if (n_interv > 0) {
        iv = malloc((size_t)n_interv * sizeof(*iv));
        if (!iv) return alab_fail(ALAB_ENOMEM, "forward: no memory for %d interventions", n_interv);
    }
    int rc = ALAB_OK;
    for (int i = 0; i < n_interv && rc == ALAB_OK; i++) {
        const float *f = interv + (size_t)i * IV_FLOATS;
        if ((rc = float_to_index(&iv[i].kind, f[IV_KIND], i, "kind")) != ALAB_OK) break;
        if ((rc = float_to_index(&iv[i].layer, f[IV_LAYER], i, "layer")) != ALAB_OK) break;
        if ((rc = float_to_index(&iv[i].head, f[IV_HEAD], i, "head")) != ALAB_OK) break;
        if ((rc = float_to_index(&iv[i].row, f[IV_ROW], i, "row")) != ALAB_OK) break;
        if ((rc = float_to_index(&iv[i].col, f[IV_COL], i, "col")) != ALAB_OK) break;
        iv[i].lambda = f[IV_LAMBDA]; /* alab_forward checks both (ALAB_ENAN) */
        iv[i].alpha = f[IV_ALPHA];
    }
    if (rc != ALAB_OK) {
        free(iv);
        return rc;
    }
    alab_run_opts_init(o);
    o->interventions = iv;
    o->n_interventions = n_interv;
    o->mask = mask;
    o->window = window;
    o->layer_mask = layer_mask;
    o->layer_window = layer_window;
    o->scale_override = scale_override;
    o->scale = scale;
    o->capture_layer = cap_layer;
    o->capture_head = cap_head;
    *iv_out = iv;
    return ALAB_OK;
}

/* alab_forward with flat options.
 *   interv       (n_interv, IV_FLOATS) floats: kind, layer, head (-1 = all), row, col, lambda, alpha
 *   mask, window ALAB_MASK_* for every layer, W for ALAB_MASK_WINDOW
 *   layer_mask   optional (L) per-layer ALAB_MASK_*, layer_window optional (L)
 *   scale_override, scale   nonzero: scores use `scale` instead of 1/sqrt(HS)
 *   cap_layer, cap_head   capture q/k of this head, -1 for none
 * Returns 0 or ALAB_E*; results are read with alab_result_*. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_forward(alab_model *m, const int *ids, int T,
                                           const float *interv, int n_interv, int mask,
                                           int window, const int *layer_mask,
                                           const int *layer_window, int scale_override,
                                           float scale, int cap_layer, int cap_head) {
    if (!m) return alab_fail(ALAB_EINVAL, "forward: no model");
    alab_run_opts o;
    alab_intervention *iv;
    int rc = flat_opts(&o, &iv, interv, n_interv, mask, window, layer_mask, layer_window, scale_override, scale,
                       cap_layer, cap_head);
    if (rc == ALAB_OK) rc = alab_forward(m, ids, T, &o);
    free(iv);
    return rc;
}

/* alab_tape_forward (backward.c) with alab_wasm_forward's flat options (no capture) and embed_rows ((T, C) or 0:
 * alab_run_opts.embed_rows): *out receives the tape, a wasm address (alab_tape_free frees it). */
EMSCRIPTEN_KEEPALIVE ALAB_MEASURE int alab_wasm_tape_forward(alab_tape **out, alab_model *m, const int *ids, int T,
                                                             const float *interv, int n_interv, int mask, int window,
                                                             const int *layer_mask, const int *layer_window,
                                                             int scale_override, float scale,
                                                             const float *embed_rows) {
    if (!out) return alab_fail(ALAB_EINVAL, "tape forward: NULL out");
    *out = NULL;
    if (!m) return alab_fail(ALAB_EINVAL, "tape forward: no model");
    alab_run_opts o;
    alab_intervention *iv;
    int rc = flat_opts(&o, &iv, interv, n_interv, mask, window, layer_mask, layer_window, scale_override, scale, -1, -1);
    o.embed_rows = embed_rows;
    if (rc == ALAB_OK) rc = alab_tape_forward(out, m, ids, T, &o);
    free(iv);
    return rc;
}

/* alab_generate with the count as the return value (>= 0) or ALAB_E*.
 * rng_state points to 8 bytes of state that the call advances. */
EMSCRIPTEN_KEEPALIVE int alab_wasm_generate(int *out, int max_new, alab_model *m,
                                            const int *ids, int T, float temperature,
                                            int top_k, uint64_t *rng_state) {
    int n = 0;
    int rc = alab_generate(out, &n, m, ids, T, max_new, temperature, top_k, rng_state);
    return rc < 0 ? rc : n;
}

/* ------------------------------------------------------------------------ */
/* Kernels, for the SIMD128 parity test and the benchmark                     */
/* ------------------------------------------------------------------------ */

/* Run one kernel of ops.h, the fast one (ref = 0) or its reference twin.
 *   KERNEL_MATMUL     out (T,OC) = inp (T,C) @ w (C,OC) + b (OC, may be 0)
 *   KERNEL_MATMUL_NT  out (T,OC) = inp (T,C) @ w^T, w (OC,C)
 *   KERNEL_LAYERNORM  out (T,C), w b (C), eps 1e-5
 *   KERNEL_GELU       out (T*C)
 *   KERNEL_SOFTMAX    out (T,C), row by row
 * Returns 0, or ALAB_EINVAL for an unknown op or a negative size. */
enum { KERNEL_MATMUL, KERNEL_MATMUL_NT, KERNEL_LAYERNORM, KERNEL_GELU, KERNEL_SOFTMAX };
EMSCRIPTEN_KEEPALIVE int alab_wasm_kernel(int op, int ref, float *out, const float *inp,
                                          const float *w, const float *b, int T, int C,
                                          int OC) {
    if (T < 0 || C < 0 || OC < 0) return alab_fail(ALAB_EINVAL, "kernel: negative size");
    if ((int64_t)T * C > INT32_MAX) return alab_fail(ALAB_ELIMIT, "kernel: T*C too large");
    switch (op) {
    case KERNEL_MATMUL:
        (ref ? matmul_forward_ref : matmul_forward)(out, inp, w, b, T, C, OC);
        return ALAB_OK;
    case KERNEL_MATMUL_NT:
        (ref ? matmul_nt_forward_ref : matmul_nt_forward)(out, inp, w, T, C, OC);
        return ALAB_OK;
    case KERNEL_LAYERNORM:
        (ref ? layernorm_forward_ref : layernorm_forward)(out, inp, w, b, T, C, 1e-5f);
        return ALAB_OK;
    case KERNEL_GELU:
        (ref ? gelu_forward_ref : gelu_forward)(out, inp, T * C);
        return ALAB_OK;
    case KERNEL_SOFTMAX:
        for (int t = 0; t < T; t++)
            (ref ? softmax_forward_ref : softmax_forward)(out + (size_t)t * C,
                                                          inp + (size_t)t * C, C);
        return ALAB_OK;
    default:
        return alab_fail(ALAB_EINVAL, "kernel: unknown op %d", op);
    }
}

/* ------------------------------------------------------------------------ */
/* Lineage demos (c/src/hopfield.c, c/src/linattn.c)                          */
/* ------------------------------------------------------------------------ */
/* Their functions are already flat (pointers, ints, floats; outputs through
 * pointers the caller allocates; RNG state as a pointer to 8 bytes), so they
 * are exported as they are, listed at the end of wasm_exports.json; the JS
 * wrappers are the lineage methods of web/src/core/wasm.js. */

/* ------------------------------------------------------------------------ */
/* Heads: importance and roles (c/src/heads.c)                                */
/* ------------------------------------------------------------------------ */
/* alab_head_importance, alab_pruning_curve, alab_head_roles,
 * alab_dag_profile and alab_result_nll are flat already (outputs through
 * caller-allocated pointers; base_loss / nll_sum are 8-byte doubles), so they
 * are exported as they are; the JS wrappers are the heads methods of
 * web/src/core/wasm.js. */

static void corr_flat(double *o, const alab_corr_summary *s) {
    const double v[11] = {s->mean, s->lo, s->hi, s->null_mean, s->null_lo, s->null_hi, s->p, s->p_greater,
                          s->n_defined, s->n_points, s->n_above_floor};
    memcpy(o, v, sizeof v);
}
/* alab_corr_dataset with its spec as arguments and its summary as 11 doubles
 * (mean, lo, hi, null_mean, null_lo, null_hi, p, p_greater, n_defined,
 * n_points, n_above_floor), so JS needs no struct layout. */
EMSCRIPTEN_KEEPALIVE ALAB_MEASURE int alab_corr_dataset_flat(double *out, double *per_input, int n_inputs,
                                                             const int *offset, const double *reading,
                                                             const double *effect, const int *group, int stat,
                                                             double eps, int min_points, int n_boot, int n_perm,
                                                             double level, uint32_t seed) {
    if (!out) return alab_fail(ALAB_EINVAL, "alab_corr_dataset_flat: NULL output");
    alab_corr_spec sp = {n_inputs, offset, reading, effect, group, stat, eps, min_points, n_boot, n_perm, level, seed};
    alab_corr_summary s;
    int rc = alab_corr_dataset(&s, per_input, &sp);
    if (rc != ALAB_OK) return rc;
    corr_flat(out, &s);
    return ALAB_OK;
}

/* alab_edge_set_summary with the summary as 97 doubles: the eight correlation
 * summaries (local, local_kendall, local_uniform, local_permuted, last, ...)
 * of 11 each as alab_corr_dataset_flat writes them, then rows mean/lo/hi,
 * top-k mean/lo/hi and the mean local effect mean/lo/hi. A, E, E_last are arrays of n_inputs pointers. */
EMSCRIPTEN_KEEPALIVE ALAB_MEASURE int alab_edge_set_summary_flat(double *out, double *per_input,
                                                                 const float *const *A, const float *const *E,
                                                                 const float *const *E_last, const int *T,
                                                                 int n_inputs, int last_layer, double eps, int n_boot,
                                                                 int n_perm, double level, uint32_t seed) {
    if (!out) return alab_fail(ALAB_EINVAL, "alab_edge_set_summary_flat: NULL output");
    alab_set_stats st = {n_boot, n_perm, level, seed};
    alab_edge_set r;
    int rc = alab_edge_set_summary(&r, per_input, A, E, E_last, T, n_inputs, last_layer, eps, &st);
    if (rc != ALAB_OK) return rc;
    const alab_corr_summary *c[8] = {&r.local, &r.local_kendall, &r.local_uniform, &r.local_permuted,
                                     &r.last, &r.last_kendall, &r.last_uniform, &r.last_permuted};
    for (int k = 0; k < 8; k++) corr_flat(out + 11 * k, c[k]);
    const double tail[9] = {r.rows_mean, r.rows_lo, r.rows_hi, r.topk_mean, r.topk_lo, r.topk_hi,
                            r.effect_mean, r.effect_lo, r.effect_hi};
    memcpy(out + 88, tail, sizeof tail);
    return ALAB_OK;
}
