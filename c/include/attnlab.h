/*
 * attnlab.h — the one public C header of attnlab.
 *
 * A GPT-2-family forward pass that keeps what you want to inspect (every
 * attention matrix, the q/k vectors of one head, the last position's logits)
 * and lets you intervene on attention *inside* the network.
 *
 * Conventions
 *   - Every function that can fail returns int: 0 (ALAB_OK) or a negative
 *     ALAB_E* code. alab_strerror(rc) names the code; alab_last_error() gives
 *     the details of the most recent failure on this thread ("safetensors:
 *     tensor h.0.attn.c_attn.weight has shape [64,190], expected [64,192]").
 *   - Handles are opaque, built and freed in pairs (alab_model_load* /
 *     alab_model_free, alab_bpe_load / alab_bpe_free).
 *   - Output arguments come first, then inputs, then sizes.
 *   - Library code never prints and never exits.
 *
 * Dimension letters used in comments: T tokens, C channels (n_embd),
 * NH heads, HS head size (C / NH), L layers, V vocabulary size.
 */
#ifndef ATTNLAB_H
#define ATTNLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ALAB_VERSION "0.1.0"

/* ALAB_MEASURE marks the functions of the measures (statistics, readings,
 * interventional and circuit measures): it expands to nothing in C; for the
 * wasm builds scripts/gen-abi.mjs exports every function so marked and binds
 * it as a method of AttnlabWasm (web/src/core/measure-exports.js, generated),
 * so a new measure is declared here once and no list names it again. */
#define ALAB_MEASURE

/* ------------------------------------------------------------------------ */
/* Error codes (stable: the JS layer exposes them as AttnlabError.code)       */
/* ------------------------------------------------------------------------ */
enum {
    ALAB_OK = 0,
    ALAB_EINVAL = -1,        /* a bad argument (NULL, negative size, ...)        */
    ALAB_ENOMEM = -2,        /* an allocation failed                              */
    ALAB_EIO = -3,           /* a file could not be opened or read                */
    ALAB_EJSON = -4,         /* malformed JSON                                    */
    ALAB_ECONFIG = -5,       /* config.json lacks a field or has a bad value      */
    ALAB_EFORMAT = -6,       /* safetensors file is malformed (header, offsets)   */
    ALAB_EDTYPE = -7,        /* a tensor has an unsupported dtype                 */
    ALAB_EMISSING = -8,      /* a required tensor is absent                       */
    ALAB_ESHAPE = -9,        /* a tensor has the wrong shape                      */
    ALAB_EVOCAB = -10,       /* vocab.json is not a GPT-2 vocabulary              */
    ALAB_EMERGES = -11,      /* merges.txt is malformed                           */
    ALAB_EEMPTY = -12,       /* empty text / zero tokens                          */
    ALAB_ETOOLONG = -13,     /* more tokens than n_positions (or than a limit)    */
    ALAB_ERANGE = -14,       /* an index (layer, head, row, col, token id) is out of range */
    ALAB_ENAN = -15,         /* a NaN or infinite number where a finite one is needed */
    ALAB_ELIMIT = -16,       /* the input exceeds a documented size limit         */
    ALAB_ESTATE = -17,       /* the call needs state that is not there (no run yet) */
    ALAB_ETHREAD = -18,      /* a helper thread could not start or died during a run */
    ALAB_EMASKED = -19       /* a soft do on a cell the attention mask hides (it would do nothing) */
};

const char *alab_strerror(int rc);
/* Details of the most recent failure on this thread ("" if none). */
const char *alab_last_error(void);

/* ------------------------------------------------------------------------ */
/* Limits (documented in docs/security.md)                                    */
/* ------------------------------------------------------------------------ */
#define ALAB_MAX_LAYERS 96
#define ALAB_MAX_HEADS 128
#define ALAB_MAX_EMBD 8192
#define ALAB_MAX_VOCAB 1000000
#define ALAB_MAX_POSITIONS 32768
#define ALAB_MAX_TEXT_BYTES (1u << 20)      /* 1 MiB of text per encode call */
#define ALAB_MAX_HEADER_BYTES (100u << 20)  /* safetensors JSON header      */
#define ALAB_MAX_INTERVENTIONS 4096
/* Finite inputs give finite scores: |soft-do lambda| <= 1e30 (4096 of them on
 * one cell still sum to a finite float); |scale| <= 1e6, and the alphas of the
 * SCALE_Q/SCALE_K edits of one head multiply to at most 1e6 in magnitude.
 * Beyond: ALAB_ERANGE. */
#define ALAB_MAX_SOFT_LAMBDA 1e30f
#define ALAB_MAX_SCALE 1e6f
/* A sampling temperature above this samples uniformly among the top_k to
 * float precision; larger values (and those a double loses as a float) are
 * ALAB_ERANGE, not a NaN's ENAN. */
#define ALAB_MAX_TEMPERATURE 1e6f
/* The largest file of each kind a loader reads (the native directory loader
 * checks the size before reading; the JS loader stops a stream at it). */
#define ALAB_MAX_CONFIG_BYTES (1u << 20)          /* config.json: 1 MiB        */
#define ALAB_MAX_VOCAB_BYTES (256u << 20)         /* vocab.json: 256 MiB       */
#define ALAB_MAX_MERGES_BYTES (256u << 20)        /* merges.txt: 256 MiB       */
#define ALAB_MAX_WEIGHTS_FILE_BYTES (16ull << 30) /* model.safetensors, native: 16 GiB (wasm: its 4 GB memory) */
#define ALAB_MAX_INDEX_BYTES (64u << 20)          /* model.safetensors.index.json: 64 MiB */
#define ALAB_MAX_SHARDS 4096                      /* distinct files an index may name */
/* A shard name an index may give is a plain file name: 1 to 255 bytes of
 * ASCII letters, digits, '.', '_', '-' and '+', not starting with '.', ending
 * in ".safetensors" (no scheme, colon, percent escape, separator, control or
 * NUL byte): ALAB_EFORMAT otherwise, before any file is opened. */
int alab_shard_name_ok(const char *name, size_t len);

/* ------------------------------------------------------------------------ */
/* Tokenizer: byte-level BPE (GPT-2's files, Hugging Face tokenizer.json)     */
/* ------------------------------------------------------------------------ */
typedef struct alab_bpe alab_bpe;

/* vocab: the bytes of vocab.json (encoder.json); merges: merges.txt (vocab.bpe),
 * lines ending in LF, CRLF or CR. */
int alab_bpe_load(alab_bpe **out, const char *vocab, size_t vocab_len,
                  const char *merges, size_t merges_len);

/* A Hugging Face tokenizer.json of a byte-level BPE (GPT-2, GPT-NeoX/Pythia,
 * SmolLM2, Llama 3, Qwen2/3 pre-tokenizers; added and special tokens), with
 * its tokenizer_config.json (may be NULL with cfg_len 0: it only decides the
 * BOS, see alab_bpe_bos_to_add). Unsupported models, pre-tokenizers,
 * normalizers and flags are refused (ALAB_EVOCAB, the message names them);
 * bad merges give ALAB_EMERGES, malformed JSON ALAB_EJSON, sizes over the
 * limits ALAB_ELIMIT, and so does a file whose worst case passes 16 ids per
 * byte of text (normalizer steps, Metaspace, byte fallback and added tokens
 * reckoned together; the message names them). docs/api.md lists what is
 * supported. */
int alab_bpe_load_hf(alab_bpe **out, const char *tokenizer_json, size_t len,
                     const char *tokenizer_config_json, size_t cfg_len);
void alab_bpe_free(alab_bpe *bpe);
/* Number of token ids (the vocabulary and the added tokens). */
int alab_bpe_vocab_size(const alab_bpe *bpe);
/* The id a caller should put before the ids of a text (Llama 3's
 * <|begin_of_text|>), or -1. alab_bpe_encode never adds it. */
int alab_bpe_bos_to_add(const alab_bpe *bpe);

/* Encode text (UTF-8 bytes). Each maximal ill-formed UTF-8 subsequence is
 * first replaced by U+FFFD, exactly as a browser's TextDecoder does, so C and
 * JS callers get the same ids. With vocab.json + merges.txt "<|endoftext|>"
 * in text is ordinary text; a tokenizer.json's added tokens are found in the
 * text (as Hugging Face does).
 * Writes at most max_ids ids; *n_ids receives the number needed.
 * Returns ALAB_ELIMIT if more than max_ids are needed (ids then hold a prefix),
 * ALAB_ELIMIT also if text_len > ALAB_MAX_TEXT_BYTES. Empty text gives 0 ids.
 * One call handles at most 4 MiB of normalized text and added tokens, so it
 * needs at most 4 Mi ids; a tokenizer.json whose normalizer and Metaspace grow
 * a text past that gives ALAB_ETOOLONG, before the buffer is allocated (real
 * tokenizers reach 3 MiB + a few bytes; docs/security.md, "tokenizer.json"). */
int alab_bpe_encode(int *ids, int max_ids, int *n_ids,
                    const alab_bpe *bpe, const char *text, size_t text_len);

/* Raw bytes of one token (e.g. " the"), NUL-terminated (the NUL is not
 * counted in *len). */
int alab_bpe_token_bytes(const char **bytes, size_t *len, const alab_bpe *bpe, int id);

/* Decode ids to bytes. *len always receives the full size; if it does not fit
 * in cap, out holds a prefix and ALAB_ELIMIT is returned. A NUL is written
 * only when there is room (len < cap). out may be NULL with cap 0. */
int alab_bpe_decode(char *out, size_t cap, size_t *len,
                    const alab_bpe *bpe, const int *ids, int n_ids);

/* Display string for figure labels: the token's bytes as UTF-8 text, with
 * invalid/partial UTF-8 bytes shown as U+FFFD, newline as "\\n", tab as "\\t",
 * CR as "\\r", other control characters and DEL as "\\xNN" (raw control
 * characters are invisible and not allowed in SVG). A leading space stays a
 * space (GPT-2's Ġ is shown as " "). Sizes and ALAB_ELIMIT as for decode. */
int alab_bpe_display(char *out, size_t cap, size_t *len, const alab_bpe *bpe, int id);

/* ------------------------------------------------------------------------ */
/* Model                                                                      */
/* ------------------------------------------------------------------------ */
typedef struct alab_model alab_model;

typedef struct {
    int n_layer, n_head, n_embd, vocab_size, n_positions;
    float layer_norm_epsilon;  /* the norm's epsilon (LayerNorm or RMSNorm) */
    const char *family;        /* config.json's model_type: "gpt2", "gpt_neox", "llama", "qwen2", "qwen3",
                                  "mistral", "gemma3_text" */
    int n_kv_head;             /* key/value heads (grouped-query attention: < n_head) */
    int head_dim;              /* HS; n_embd / n_head except where config.json says otherwise */
} alab_config;

/* Load a Hugging Face model folder: config.json, model.safetensors (or the
 * shards model.safetensors.index.json names), and vocab.json + merges.txt
 * (when both are there) or tokenizer.json (+ tokenizer_config.json). */
int alab_model_load_dir(alab_model **out, const char *dir);

/* One safetensors file handed over in memory. */
typedef struct {
    const char *name;   /* its file name, as the index names it (may be NULL for a single file) */
    void *data;         /* from malloc(): ownership passes to the model, as for alab_model_load_buffers */
    size_t len;
} alab_shard;

/* The files of a model folder in memory. index_json is model.safetensors.index.json
 * (NULL with one shard); the tokenizer is vocab_json + merges, or else
 * tokenizer_json (+ tokenizer_config_json, may be NULL). Every shard's data is
 * taken over (freed by the model, or on failure); the rest is only read.
 * Errors besides those of alab_model_load_buffers: ALAB_EMISSING (a shard the
 * index names is not given, a tensor is not in the shard the index says),
 * ALAB_EFORMAT (the index is malformed or names a tensor twice). */
typedef struct {
    const char *config_json; size_t config_len;
    alab_shard *shards; int n_shards;
    const char *index_json; size_t index_len;
    const char *vocab_json; size_t vocab_len;
    const char *merges; size_t merges_len;
    const char *tokenizer_json; size_t tokenizer_len;
    const char *tokenizer_config_json; size_t tokenizer_config_len;
    int weights;  /* ALAB_WEIGHTS_*: how F16/BF16 weights are kept (0 = auto) */
} alab_model_files;

/* How a checkpoint's F16/BF16 weights are held. HALF keeps the big matrices
 * (every layer's, the embedding, the LM head) in 16 bits, converted to f32
 * inside each product (one matrix, or one block of the LM head, at a time):
 * half the memory, at a cost in speed (docs/BENCHMARKS.md). It needs all of
 * them F16 or all BF16, else the model is kept in F32. AUTO is F32 unless
 * the F32 copy would exceed ALAB_F32_WEIGHTS_MAX (3 GiB in wasm32, where the
 * address space is 4 GB; no limit natively). Numbers differ from F32
 * storage only by the summation order of the unpacked product (~1e-6). */
enum { ALAB_WEIGHTS_AUTO = 0, ALAB_WEIGHTS_F32 = 1, ALAB_WEIGHTS_HALF = 2 };
/* alab_model_load_dir with a choice of ALAB_WEIGHTS_*. */
int alab_model_load_dir_ex(alab_model **out, const char *dir, int weights);
/* 1 when the model keeps its big matrices in 16 bits, else 0. */
int alab_model_half(const alab_model *m);
int alab_model_load_files(alab_model **out, const alab_model_files *files);

/* Load from memory. The safetensors buffer must come from malloc():
 * ownership passes to the model (it is freed by alab_model_free, or on
 * failure, or earlier when its weights were converted), so the weights are
 * never held twice. The other buffers are only read during the call. */
int alab_model_load_buffers(alab_model **out,
                            const char *config_json, size_t config_len,
                            void *safetensors, size_t safetensors_len,
                            const char *vocab_json, size_t vocab_len,
                            const char *merges, size_t merges_len);
void alab_model_free(alab_model *m);

const alab_config *alab_model_config(const alab_model *m);
/* The window of layer l's own mask: W > 0 when config.json makes the layer
 * causal within a sliding window of W keys (query i sees key j iff
 * 0 <= i - j < W: Mistral's sliding_window on every layer, Gemma 3's
 * "sliding_attention" layers), 0 for the plain causal mask. This is what
 * ALAB_MASK_CAUSAL means on that layer. ALAB_EINVAL (NULL model), ALAB_ERANGE
 * (layer outside [0, n_layer)). */
int alab_model_layer_window(const alab_model *m, int layer);

/* Split the forward pass over n threads (1..16, the caller included; native
 * builds start n-1 pthreads, the wasm build gets its helpers from the JS
 * layer instead). The big products are divided by output columns and the
 * attention by heads, so results are bit for bit those of one thread; small
 * products stay on the caller. 1 stops the helpers. ALAB_ERANGE, ALAB_EIO
 * (a thread could not be started). Not thread-safe with a running forward. */
int alab_model_set_threads(alab_model *m, int n);
/* Threads a run uses now (1 without a pool). */
int alab_model_threads(const alab_model *m);
const alab_bpe *alab_model_bpe(const alab_model *m);

/* Text to the ids a run of this model takes: alab_bpe_encode, with the
 * tokenizer's BOS (alab_bpe_bos_to_add, Llama 3's <|begin_of_text|>) in
 * front of a non-empty text, as Hugging Face's tokenizer adds it. Same
 * sizes and errors as alab_bpe_encode (*n_ids counts the BOS). */
int alab_model_encode(int *ids, int max_ids, int *n_ids, const alab_model *m,
                      const char *text, size_t text_len);
/* alab_bpe_display / alab_bpe_decode for this model's ids: an id the
 * embedding has beyond the tokenizer's (a padding row: Pythia, Qwen2.5) is
 * shown as "<|id N|>" and decodes to nothing. Same sizes and errors. */
int alab_model_token_display(char *out, size_t cap, size_t *len, const alab_model *m, int id);
int alab_model_decode(char *out, size_t cap, size_t *len, const alab_model *m, const int *ids, int n_ids);

/* ------------------------------------------------------------------------ */
/* Forward pass with capture and interventions                                */
/* ------------------------------------------------------------------------ */
/* Interventions (rung 2 of Pearl's ladder): ALAB_DO_HARD, ALAB_DO_SOFT, ALAB_ABLATE,
 * and weight edits of one head (an intervention on a mechanism, applied in the
 * same pass; biases are kept; the chapter calls these counterfactuals):
 *   ALAB_SCALE_Q  W_Q <- alpha * W_Q    (q = alpha (q - b_q) + b_q)
 *   ALAB_SCALE_K  W_K <- alpha * W_K    (k = alpha (k - b_k) + b_k)
 *   ALAB_SWAP_QK  W_Q <-> W_K           (q = k - b_k + b_q, k = q - b_q + b_k)
 * Edits of one layer apply in the order given, on the projections (before a
 * q_norm/k_norm and the rotary positions, before the scores and the q/k
 * capture, so captured q and k are the edited ones). With grouped-query
 * attention a K edit of head h acts on the key/value head h shares with
 * the other query heads of its group (docs/heads.md). */
enum { ALAB_DO_HARD = 0, ALAB_DO_SOFT = 1, ALAB_ABLATE = 2,
       ALAB_SCALE_Q = 3, ALAB_SCALE_K = 4, ALAB_SWAP_QK = 5 };
enum { ALAB_MASK_CAUSAL = 0, ALAB_MASK_FULL = 1, ALAB_MASK_WINDOW = 2 };
#define ALAB_ALL_HEADS (-1)

typedef struct {
    int kind;     /* ALAB_DO_HARD ... ALAB_SWAP_QK                               */
    int layer;    /* 0-based                                                    */
    int head;     /* 0-based, or ALAB_ALL_HEADS for every head of the layer     */
    int row, col; /* query (effect) and key (cause) positions; hard/soft do only */
    float lambda; /* soft do: added to the pre-softmax score                    */
    float alpha;  /* SCALE_Q / SCALE_K: the factor of W_Q / W_K                  */
} alab_intervention;

typedef struct {
    const alab_intervention *interventions; /* may be NULL                     */
    int n_interventions;
    int mask;          /* ALAB_MASK_*, for every layer (default causal: the model's own
                          causal mask, within its sliding window on the layers
                          alab_model_layer_window gives one; a window W >= T
                          removes it)                                           */
    int window;        /* W for ALAB_MASK_WINDOW: attend to the last W positions */
    const int *layer_mask;   /* optional [L] per-layer ALAB_MASK_* (overrides mask) */
    const int *layer_window; /* optional [L] per-layer W, with layer_mask       */
    int scale_override;/* nonzero: use `scale` instead of 1/sqrt(HS)           */
    float scale;       /* the score scale when scale_override (0 = uniform)    */
    int capture_layer; /* capture q and k of (capture_layer, capture_head);    */
    int capture_head;  /*   -1 for none                                        */
    /* Evidence hooks (docs/evidence.md); zero/NULL when unused. */
    const struct alab_knockout *knockouts;     /* attention entries set to 0, */
    int n_knockouts;                           /*   rows renormalised          */
    const struct alab_head_patch *head_patches;/* head outputs replaced        */
    int n_head_patches;
    const struct alab_resid_patch *resid_patches; /* residual positions replaced */
    int n_resid_patches;
    float *capture_resid;    /* (L, T, C): the residual stream entering each layer */
    float *capture_head_out; /* (L, T, DQ), DQ = n_head * head_dim: each layer's head
                                outputs side by side (head h = columns h*head_dim..),
                                before the output projection                    */
    int start_layer;         /* > 0: run layers start_layer.. only, from        */
    const float *start_x;    /*   start_x (T, C), the residual entering that layer
                                (captured from an earlier run of the same ids); the
                                attention of the layers below keeps its old values */
    int no_logits;           /* nonzero: skip the LM head (alab_result_logits and
                                alab_result_topk are then stale; alab_result_hidden and
                                alab_result_logits_at still work): evidence runs batch
                                the LM head of many runs */
    const float *embed_rows; /* (T, C) or NULL: the token embeddings a run starts from, in place of the rows
                                wte[ids] (before the position embedding and Gemma's scale, both still applied):
                                the gradient readings' integrated-gradients path (docs/evidence.md § 12); ids
                                are still checked and read by a backward's loss and KL. Not with start_layer
                                or a row window */
} alab_run_opts;

/* Knockout: after the softmax and the hard do, A[row][col] := 0 in the heads
 * named. mode ALAB_KO_RENORM: each touched row is divided by its new sum (the
 * removed mass goes to the other keys in proportion; a row left with no mass
 * becomes all zeros). ALAB_KO_ZERO: no renormalisation, the row sums to
 * 1 - A[row][col] (the head's output loses that key's share, as in value
 * zeroing). ALAB_KO_NOOP: nothing removed, the row divided by its own sum (1
 * in exact arithmetic): the rounding a renormalised knockout adds, for the
 * noise floor. layer, head and row may be -1 for all; a token knockout of j is
 * {-1, -1, -1, j, mode}. */
enum { ALAB_KO_RENORM = 0, ALAB_KO_ZERO = 1, ALAB_KO_NOOP = 2 };
typedef struct alab_knockout {
    int layer, head, row, col;
    int mode; /* ALAB_KO_* */
} alab_knockout;
/* The output of head (layer, head) at position t, before c_proj, becomes
 * values[t * stride + 0 .. HS); stride 0 uses one vector for every position
 * (the mean ablation). Applied after ablation: a patch wins. */
typedef struct alab_head_patch {
    int layer, head;
    const float *values;
    int stride;
} alab_head_patch;
/* The residual stream entering layer `layer` at position pos becomes values (C). */
typedef struct alab_resid_patch {
    int layer, pos;
    const float *values;
} alab_resid_patch;

/* Fills opts with the defaults (causal mask, default scale, no capture). */
void alab_run_opts_init(alab_run_opts *opts);

/* Run the model on ids[0..T). Results stay valid until the next forward or
 * alab_model_free. Errors: ALAB_EEMPTY (T == 0), ALAB_ETOOLONG
 * (T > n_positions), ALAB_ERANGE (a token id or an intervention index),
 * ALAB_ENAN (a non-finite lambda or scale), ALAB_EINVAL (bad kind / mask),
 * ALAB_ELIMIT (more than ALAB_MAX_INTERVENTIONS interventions), ALAB_EMASKED
 * (a soft do on a cell its layer's mask hides: adding lambda to a score the
 * mask removes would change nothing; a hard do may name any column). */
int alab_forward(alab_model *m, const int *ids, int T, const alab_run_opts *opts);

int alab_result_T(const alab_model *m);
/* Attention probabilities of the last run, (L, NH, T, T), row = query. */
const float *alab_result_attention(const alab_model *m);
/* Logits of the last position, (V). */
const float *alab_result_logits(const alab_model *m);
/* The residual stream the last run left at position pos after the final
 * norm, (C): the input of the LM head. */
int alab_result_hidden(float *h, const alab_model *m, int pos);
/* q and k of the captured head, each (T, HS), before scaling (after q_norm/
 * k_norm and the rotary positions: the vectors whose dot product is the
 * score); k is that of the head's key/value head. NULL if none. */
const float *alab_result_q(const alab_model *m);
const float *alab_result_k(const alab_model *m);

/* Logits (V) of position pos of the last run (the LM head of one row;
 * alab_result_logits is position T-1). ALAB_ESTATE before a run, ALAB_ERANGE. */
int alab_result_logits_at(float *logits, const alab_model *m, int pos);

/* Next-token probabilities of the last run: the k most likely (ids, probs,
 * descending; ties broken by the lower id). k is clamped to V. */
int alab_result_topk(int *ids, float *probs, int k, const alab_model *m);

/* Next-token loss of the last run (with its interventions): *nll_sum =
 * sum over t in [0, T-1) of -log p(ids[t+1] | ids[0..t]) in nats, *n = T-1.
 * Costs T-1 rows of the LM head. ALAB_ESTATE before any run. */
int alab_result_nll(double *nll_sum, int *n, const alab_model *m);

/* The same loss position by position: nll[t] = -log p(ids[t+1] | ids[0..t]) for t in [0, T-1), the terms
 * whose sum alab_result_nll returns (the same values, added in the same order). cap = room in nll;
 * ALAB_ERANGE if cap < T-1, ALAB_ESTATE before any run. */
int alab_result_nll_each(double *nll, int cap, const alab_model *m);

/* Sample max_new tokens after ids[0..T) (no interventions). temperature 0
 * means greedy; top_k 0 means the full vocabulary. The RNG state is passed in.
 * out receives the new ids; *n_out how many were written. Runs with a
 * key/value cache (one token per step after the prompt) and leaves no result:
 * alab_result_T is 0 afterwards until the next alab_forward. */
int alab_generate(int *out, int *n_out, alab_model *m, const int *ids, int T,
                  int max_new, float temperature, int top_k, uint64_t *rng_state);

/* ------------------------------------------------------------------------ */
/* Analysis (pure functions on plain arrays)                                  */
/* ------------------------------------------------------------------------ */
/* Sum of entries strictly below the diagonal / sum of all entries of A (T,T). */
double alab_dag_score(const float *A, int T);
/* DAG score of uniform causal attention: (1/T) sum_{i<T} i/(i+1). */
double alab_null_dag_score(int T);
/* DAG score of uniform attention under a mask (ALAB_MASK_*, W for a window):
 * causal = alab_null_dag_score(T); full = (T-1)/(2T); window:W =
 * (1/T) sum_i (n_i - 1)/n_i with n_i = min(i+1, W) (0.5833 for W = 3, T = 10).
 * 0 for T <= 0; NaN with ALAB_EINVAL / ALAB_ERANGE in alab_last_error for an
 * unknown mode or W < 1. A DAG score is "more forward than uniform" only above
 * the null of the mask it was computed under. */
double alab_mask_null_dag_score(int mode, int window, int T);
/* out (T,T) = A - A^T. */
void alab_asymmetry(float *out, const float *A, int T);
/* out (NH... averaged) (T,T) = mean over heads of att (NH,T,T). */
void alab_head_average(float *out, const float *att, int NH, int T);
/* out (HS,HS) = q k^T (out[a*HS+b] = q[a] k[b]); returns its trace = q.k. */
double alab_outer_product(float *out, const float *q, const float *k, int HS);
/* Mean over rows of the Shannon entropy (nats) of each row of A (T,T). */
double alab_attention_entropy(const float *A, int T);
/* The chapter's display-level do on a drawn matrix (T,T), row/col 0-based:
 * hard: row := one-hot(col); soft: l = log(row + 1e-9); l[col] += lambda;
 * l -= max(l); row := exp(l)/sum exp(l). out may equal A. */
int alab_display_do(float *out, const float *A, int T, int row, int col,
                    int hard, float lambda);

/* ======================================================================== */
/* Lineage demos: Hopfield and linear attention                              */
/* (c/src/hopfield.c, c/src/linattn.c; docs/lineage.md)                      */
/*                                                                           */
/* The chapter's lineage, as code you can run: classical Hopfield (Hebbian,  */
/* ±1) → modern Hopfield, whose update is one step of attention → linear     */
/* attention, whose causal form is a prefix sum. Letters: N neurons (or      */
/* stored patterns, for modern Hopfield), P patterns, d pattern / key size,  */
/* dv value size, T tokens, m feature size. Arrays are row-major float32.    */
/* RNG state is a uint64 the caller owns (0 is replaced by a fixed seed).    */
/* ======================================================================== */

/* ---- deterministic random numbers (xorshift64*) ------------------------ */
uint32_t alab_rng_u32(uint64_t *state);
double alab_rng_uniform(uint64_t *state);  /* [0, 1)                         */
double alab_rng_normal(uint64_t *state);   /* N(0, 1), Box-Muller            */

/* ---- glyphs: 10x10 bitmaps of the digits 0-9, +1 ink, -1 paper --------- */
#define ALAB_GLYPH_SIDE 10
#define ALAB_GLYPH_SIZE 100
#define ALAB_N_GLYPHS 10
/* out (100) = glyph g (0..9), row-major. ALAB_ERANGE for another g. */
int alab_glyph(float *out, int g);

/* ---- classical Hopfield (Hopfield 1982) -------------------------------- */
#define ALAB_HOPFIELD_MAX_N 4096 /* W is N*N floats: 64 MiB at the limit    */
enum { ALAB_HOPFIELD_SYNC = 0,       /* all units from the old state         */
       ALAB_HOPFIELD_ASYNC_RANDOM = 1, /* one sweep: N single-unit updates in a
                                          random order drawn from the RNG    */
       ALAB_HOPFIELD_ASYNC_SEQ = 2 };  /* one sweep in the order 0..N-1       */

/* W (N,N) = (1/N) sum_mu p_mu p_mu^T with a zero diagonal, from patterns
 * (P,N) of +-1. ALAB_EINVAL if an entry is not +-1, ALAB_ELIMIT if
 * N > ALAB_HOPFIELD_MAX_N. */
int alab_hopfield_hebbian(float *W, const float *patterns, int P, int N);
/* *E = -1/2 s^T W s for a state s (N). */
int alab_hopfield_energy(double *E, const float *W, const float *s, int N);
/* Overlap (1/N) sum a_i b_i of two states (1 = equal, -1 = inverse). */
double alab_hopfield_overlap(const float *a, const float *b, int N);
/* Update unit i of s (N) in place: s_i = sign(sum_j W_ij s_j), unchanged
 * when the field is 0. Returns 1 if s_i flipped, 0 if not, or ALAB_E*. */
int alab_hopfield_update_unit(float *s, const float *W, int N, int i);
/* One step (ALAB_HOPFIELD_*: a synchronous update or one asynchronous sweep)
 * of s (N) in place; *n_flipped receives how many units changed (may be
 * NULL). rng is used by ASYNC_RANDOM only (may be NULL otherwise). */
int alab_hopfield_step(float *s, int *n_flipped, const float *W, int N, int mode,
                       uint64_t *rng);
/* Steps until a step changes nothing (a fixed point) or max_steps were taken.
 * energies (max_steps + 1, may be NULL): energies[0] the initial energy,
 * energies[k] the energy after step k. *n_steps: steps taken; *converged: 1
 * if the last step changed nothing (a synchronous run can end in a 2-cycle
 * instead). */
int alab_hopfield_run(float *s, double *energies, int *n_steps, int *converged,
                      const float *W, int N, int mode, int max_steps, uint64_t *rng);
/* out (N) = pattern (N) with exactly round(frac N) distinct units flipped,
 * chosen uniformly with the RNG. frac in [0, 1]. out may equal pattern. */
int alab_hopfield_corrupt(float *out, const float *pattern, int N, float frac,
                          uint64_t *rng);
/* The capacity experiment. For each load alpha = loads[l] (patterns per
 * neuron): P = max(1, round(alpha N)) random +-1 patterns, Hebbian W; each
 * stored pattern, corrupted by `noise` (fraction of flipped units), is run
 * asynchronously (random order) to a fixed point (at most 50 sweeps);
 * success[l] = the fraction of all trials x P retrievals whose final overlap
 * with the pattern is >= threshold (1 = exact retrieval); overlap[l] (may be
 * NULL) = their mean final overlap. The classical limit is alpha ~ 0.138. */
int alab_hopfield_capacity(float *success, float *overlap, const float *loads, int n_loads,
                           int N, float noise, float threshold, int trials, uint64_t *rng);

/* ---- modern Hopfield (Ramsauer et al. 2020) ---------------------------- */
/* X (N,d) holds the N stored patterns as ROWS (the paper's X is d x N with
 * patterns as columns: ours is its transpose, laid out like attention's K).
 * xi (d) is the state (the query).
 *   update   xi_new = X^T softmax(beta X xi)
 *   energy   E = -lse(beta, X xi) + 1/2 xi^T xi + beta^-1 log N + 1/2 M^2,
 *            lse(beta, z) = beta^-1 log sum_i exp(beta z_i), M = max_i |x_i|.
 *            The two constants make E >= 0 (the paper's Eq. 2). */
/* out (d) = one update of xi; p (N) receives softmax(beta X xi). out must
 * not alias X; it may equal xi. ALAB_ENAN for a non-finite beta or input. */
int alab_mhopfield_step(float *out, float *p, const float *X, const float *xi,
                        int N, int d, float beta);
int alab_mhopfield_energy(double *E, const float *X, const float *xi, int N, int d, float beta);
/* Iterate xi (d) in place until max_i |xi_new - xi| <= tol or max_steps.
 * energies (max_steps + 1, may be NULL) as for alab_hopfield_run; p (N, may
 * be NULL) receives the last softmax weights. */
int alab_mhopfield_run(float *xi, double *energies, float *p, int *n_steps, int *converged,
                       const float *X, int N, int d, float beta, int max_steps, float tol);

/* ---- attention, softmax and linear (Katharopoulos et al. 2020) --------- */
#define ALAB_LINATTN_MAX_T 65536
#define ALAB_LINATTN_MAX_DIM 1024
enum { ALAB_FEATURE_ELU1 = 0,  /* phi(x) = elu(x) + 1, m = d                 */
       ALAB_FEATURE_RELU = 1,  /* phi(x) = max(x, 0), m = d                  */
       ALAB_FEATURE_FAVOR = 2  /* positive random features (Choromanski et al.):
                                  phi(x) = exp(W x' - |x'|^2/2) / sqrt(m),
                                  x' = x / d^(1/4), W (m,d) Gaussian, so that
                                  E[phi(q).phi(k)] = exp(q.k / sqrt(d))     */
};
enum { ALAB_LIN_ASSOC = 0,     /* phi(Q) (phi(K)^T V): global sums, or causal
                                  prefix sums S_t, z_t (all kept, (T,m,dv)) */
       ALAB_LIN_RNN = 1,       /* causal only: one running state (S, z)      */
       ALAB_LIN_QUADRATIC = 2  /* A_ij = phi(q_i).phi(k_j), masked, row-normalised */
};
/* Linear attention output denominators get + ALAB_LINATTN_EPS (all forms). */
#define ALAB_LINATTN_EPS 1e-6f

/* out (T,HS) = softmax(Q K^T * scale [+ causal mask]) V, Q K (T,d), V (T,dv);
 * the O(T^2 d) reference that linear attention is compared with. */
int alab_softmax_attention(float *out, const float *Q, const float *K, const float *V,
                           int T, int d, int dv, float scale, int causal);
/* Single-query attention: out (dv) = softmax(K q * scale) V, p (T) the weights. */
int alab_attention_single(float *out, float *p, const float *q, const float *K,
                          const float *V, int T, int d, int dv, float scale);
/* W (m,d) ~ N(0,1) from the RNG: the FAVOR+ projection. */
int alab_favor_weights(float *W, int m, int d, uint64_t *rng);
/* Feature dimension of a map: d for ELU1/RELU, m for FAVOR; ALAB_EINVAL if bad. */
int alab_feature_dim(int kind, int d, int m);
/* out (T, feature_dim) = phi(x) row by row, x (T,d). W (m,d) for FAVOR only. */
int alab_feature_map(float *out, const float *x, int T, int d, int kind,
                     const float *W, int m);
/* out (T,dv) = linear attention of Q K (T,d), V (T,dv) with feature map
 * `kind` (W, m for FAVOR), causal 0/1, form ALAB_LIN_*:
 *   out_i = phi(q_i)^T S_i / (phi(q_i).z_i + eps), S_i = sum_{j in mask(i)} phi(k_j) v_j^T,
 *   z_i = sum_{j in mask(i)} phi(k_j). ASSOC and RNN cost O(T m dv), QUADRATIC O(T^2 m).
 * ALAB_EINVAL for RNN without causal; ALAB_ELIMIT above the limits (the
 * causal ASSOC form keeps all T prefix states: T*m*dv floats <= 2^28). */
int alab_linear_attention(float *out, const float *Q, const float *K, const float *V,
                          int T, int d, int dv, int kind, const float *W, int m,
                          int causal, int form);
/* The RNN cell of causal linear attention: S (m,dv) += phi_k v^T, z (m) += phi_k,
 * then out (dv) = phi_q^T S / (phi_q.z + eps). */
void alab_linattn_cell(float *out, float *S, float *z, const float *phi_q, const float *phi_k,
                       const float *v, int m, int dv);

/* ---- the sqrt(d_k) statistics ------------------------------------------ */
/* out (n) = q.k for n independent pairs q, k ~ N(0, I_dk) (unscaled). */
int alab_qk_samples(float *out, int n, int dk, uint64_t *rng);
/* stats (4) = sample mean and variance of q.k, then of q.k / sqrt(dk), over n pairs. */
int alab_qk_stats(double *stats, int n, int dk, uint64_t *rng);
/* *H = mean over n_queries of the entropy (nats) of softmax(scale K q) over
 * T keys, q and keys ~ N(0, I_dk); scaled: scale = 1/sqrt(dk), else 1.
 * The maximum is log T (uniform attention). */
int alab_softmax_entropy_mean(double *H, int T, int dk, int n_queries, int scaled,
                              uint64_t *rng);

/* ======================================================================== */
/* Heads: importance and roles (c/src/heads.c; docs/heads.md)                */
/*                                                                           */
/* Which heads matter (the loss increase when a head is ablated, and the     */
/* pruning curve) and what each head does (role scores read off an           */
/* attention tensor). Losses are mean next-token losses in nats:             */
/* alab_result_nll's sum / n. The model functions run the forward many times */
/* and leave the model's results (alab_result_*) those of their LAST run,    */
/* not of a plain run.                                                       */
/* ======================================================================== */

/* *base_loss = loss of the plain run of ids (T >= 2); delta (L, NH):
 * delta[l*NH + h] = loss with head (l, h) ablated alone - *base_loss.
 * 1 + L*NH forward passes. ALAB_EEMPTY for T < 2, forward's errors. */
int alab_head_importance(float *delta, double *base_loss, alab_model *m, const int *ids, int T);

/* order (L*NH) = head indices l*NH + h sorted by delta ascending (ties: the
 * lower index first); loss (L*NH + 1): loss[k] = loss with heads
 * order[0..k) ablated together, k = 0 ... L*NH (loss[0] is the plain run,
 * bit-equal to alab_head_importance's *base_loss). L*NH + 1 forward passes.
 * ALAB_ENAN for a non-finite delta, ALAB_ELIMIT if L*NH >
 * ALAB_MAX_INTERVENTIONS, ALAB_EEMPTY for T < 2. */
int alab_pruning_curve(float *loss, int *order, alab_model *m, const int *ids, int T,
                       const float *delta);

/* Role scores of every head from att (L, NH, T, T) (row = query) and ids (T);
 * each output is (L, NH) and may be NULL to skip it:
 *   prev[lh]      = mean_{i=1..T-1} A[i][i-1]                (0 if T = 1)
 *   sink[lh]      = mean_{i=0..T-1} A[i][0]
 *   dup[lh]       = mean over D = {i : ids[j] = ids[i] for some j < i} of
 *                   sum_{j<i, ids[j]=ids[i]} A[i][j]         (0 if D is empty)
 *   induction[lh] = for ids = r ++ r, |r| = n = T/2 >= 2:
 *                   mean_{i=n..T-1} A[i][i-n+1] (the token after the first
 *                   occurrence of ids[i]); 0 when ids is not of that form.
 * Returns 1 if the induction score was computed, 0 if ids is not two copies
 * of one sequence (induction then holds zeros), or ALAB_E*: ALAB_EINVAL
 * (NULL att/ids, L or NH out of [1, ALAB_MAX_*]), ALAB_EEMPTY (T < 1),
 * ALAB_ETOOLONG (T > ALAB_MAX_POSITIONS), ALAB_ERANGE (a negative id). */
int alab_head_roles(float *prev, float *sink, float *dup, float *induction,
                    const float *att, const int *ids, int L, int NH, int T);

/* Where the DAG score comes from: head (L, NH) = alab_dag_score of each head
 * of att (L, NH, T, T); layer (L) = the mean of its heads (equal to the DAG
 * score of the layer's head average, since every row sums to 1). Either
 * output may be NULL, not both. Compare with alab_null_dag_score(T) (causal
 * mask) or (T-1)/(2T) (uniform attention without a mask). ALAB_EINVAL,
 * ALAB_EEMPTY (T < 1), ALAB_ETOOLONG (T > ALAB_MAX_POSITIONS). */
int alab_dag_profile(float *head, float *layer, const float *att, int L, int NH, int T);

/* ======================================================================== */
/* Evidence: does attention explain? (c/src/evidence.c; docs/evidence.md)    */
/*                                                                           */
/* Statistics that compare a reading of attention with an interventional    */
/* effect, and two readings of a whole attention tensor. Pure functions.     */
/* Undefined statistics (fewer than 2 values, a constant side) are NaN with  */
/* ALAB_OK; non-finite inputs are ALAB_ENAN.                                  */
/* ======================================================================== */
#define ALAB_EVIDENCE_MAX_N (1 << 22)
#define ALAB_FLOW_MAX_EDGES (1 << 20)

/* Spearman's rho: the Pearson correlation of the ranks (ties: average rank). */
ALAB_MEASURE int alab_spearman(double *rho, const double *a, const double *b, int n);
/* Kendall's tau-b = (n0 - n1 - n2 + n3 - 2 D) / sqrt((n0 - n1)(n0 - n2)),
 * n0 = n(n-1)/2 pairs, n1 / n2 tied in a / b, n3 tied in both, D discordant.
 * O(n log n) (Knight 1966); _ref is the O(n^2) pair count, its twin. */
ALAB_MEASURE int alab_kendall_tau_b(double *tau, const double *a, const double *b, int n);
int alab_kendall_tau_b_ref(double *tau, const double *a, const double *b, int n);
/* *share = |top_k(a) ∩ top_k(b)| / k, top_k by value descending, ties by
 * the lower index; k is clamped to n. ALAB_ERANGE for k < 1. */
ALAB_MEASURE int alab_top_k_overlap(double *share, const double *a, const double *b, int n, int k);

/* Seeded resampling over a set of inputs (c/src/stats.c). */

/* The seeded generator of every resample and permutation: splitmix64
 * (state += 0x9E3779B97F4A7C15; z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
 *  z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)), seeded with state = seed.
 * alab_rng_below(n) is uniform on [0, n) by rejection: draw r = next() >> 32 (a uint32);
 * reject while r >= 2^32 - (2^32 mod n); return r mod n (n = 1 still draws once; n = 0, outside
 * the contract, returns 0 without a draw). So a reference in any language draws the same indices. */
typedef struct { uint64_t state; } alab_rng;
void alab_rng_seed(alab_rng *r, uint32_t seed);
uint64_t alab_rng_next(alab_rng *r);
uint32_t alab_rng_below(alab_rng *r, uint32_t n);   /* n >= 1 */

/* The mean of the finite values of x[0..n) (NaN entries skipped: an input whose statistic is undefined)
 * and its percentile bootstrap interval at `level` (0.95 -> 95 %): n_boot resamples of the m finite
 * values with replacement (index = alab_rng_below(m), m draws per resample, resamples in order),
 * each resample's mean (its draws summed left to right, divided by m); lo/hi are the (1-level)/2 and
 * (1+level)/2 quantiles of the n_boot means with linear interpolation between order statistics (numpy's
 * default, "type 7": h = (N-1) q, value = s[floor h] + (h - floor h)(s[floor h + 1] - s[floor h])).
 * The mean is the left-to-right sum of the finite values divided by m. m == 0: all three NaN, ALAB_OK.
 * m == 1: mean = the value, lo = hi = the value (no draws). n_boot < 1 or > 1000000: ALAB_ERANGE.
 * level outside (0, 1): ALAB_ERANGE. An infinite value: ALAB_ENAN. NULL mean/lo/hi (or x with n > 0):
 * ALAB_EINVAL; n outside [0, ALAB_EVIDENCE_MAX_N]: ALAB_ELIMIT. */
ALAB_MEASURE int alab_bootstrap_mean(double *mean, double *lo, double *hi, const double *x, int n, int n_boot,
                                     double level, uint32_t seed);

/* Clustered intervals, paired differences, corrections (docs/evidence.md § 5). A cluster is a unit the
 * values are not independent within (the document a sentence comes from): cluster[i] is value i's int id
 * (any int; NULL: every value its own cluster). The clusters are those with at least one value in play
 * (a finite x[i]; a pair, for alab_paired_diff), numbered k = 0 .. G-1 in order of first appearance among
 * those values; s_k is the left-to-right sum (in index order) of cluster k's values and m_k their count. */

/* The mean of the finite values of x[0..n) (NaN skipped) and its cluster bootstrap interval at `level`:
 * whole clusters resampled with replacement. Draw order: one generator (alab_rng_seed(seed)); for
 * b = 0 .. n_boot-1, for t = 0 .. G-1: k_t = alab_rng_below(G); resample b's statistic is the pooled mean
 * S_b / M_b with S_b = s_{k_0} + s_{k_1} + ... + s_{k_{G-1}} and M_b = m_{k_0} + ... (each summed left to
 * right in draw order). lo/hi are the (1-level)/2 and (1+level)/2 type-7 quantiles of the n_boot
 * statistics, as in alab_bootstrap_mean. *mean = the left-to-right sum of the finite values / their count.
 * No finite value: all three NaN. n_boot == 0: lo = hi = NaN (no draws); else G == 1: lo = hi = *mean (no
 * draws). cluster NULL gives alab_bootstrap_mean's numbers bit for bit. Errors: NULL mean/lo/hi (or x
 * with n > 0): ALAB_EINVAL; n outside [0, ALAB_EVIDENCE_MAX_N]: ALAB_ELIMIT; n_boot outside [0, 1000000] or
 * level outside (0, 1): ALAB_ERANGE; an infinite value: ALAB_ENAN; outputs NaN after an error. */
ALAB_MEASURE int alab_cluster_bootstrap_mean(double *mean, double *lo, double *hi, const double *x, const int *cluster,
                                             int n, int n_boot, double level, uint32_t seed);

/* alab_paired_diff's out: mean, lo, hi, p, n_pairs, n_clusters. */
#define ALAB_PAIRED_OUT 6
/* Paired differences d_i = x_i - y_i over the pairs i where neither x_i nor y_i is NaN (a NaN drops the
 * pair; an infinite value, or a difference that overflows, is ALAB_ENAN). out (ALAB_PAIRED_OUT doubles):
 * out[0] = the mean d (left-to-right sum / n_pairs); out[1], out[2] = its cluster bootstrap interval
 * (alab_cluster_bootstrap_mean of the d with their clusters, n_boot, level, seed: the same draws);
 * out[3] = p, two-sided, of a cluster sign-flip permutation test; out[4] = n_pairs; out[5] = G, the
 * clusters among the pairs. The test: one generator seeded seed + 1 (uint32: 0xFFFFFFFF + 1 = 0); for
 * b = 1 .. n_perm, for k = 0 .. G-1: e_k = -1 if alab_rng_below(2) == 1 else +1 (one draw per cluster: all of
 * a cluster's d change sign together); mean_b = (e_0 s_0 + e_1 s_1 + ... + e_{G-1} s_{G-1}) / n_pairs, summed
 * left to right over the clusters; the observed statistic mean_d is the same sum with every e_k = +1 (equal
 * to out[0] up to the order of summation; the identity flip ties it exactly);
 * p = (1 + #{b: |mean_b| >= |mean_d|}) / (1 + n_perm). With G clusters there are 2^G sign patterns, so p
 * cannot fall much below 2^(1-G) however large n_perm is. No pair: out[0..3] NaN; n_boot == 0: lo = hi =
 * NaN; n_perm == 0: p = NaN. Errors: NULL out (or x, y with n > 0): ALAB_EINVAL; n outside
 * [0, ALAB_EVIDENCE_MAX_N]: ALAB_ELIMIT; n_boot or n_perm outside [0, 1000000], level outside (0, 1):
 * ALAB_ERANGE; after an error out[0..3] are NaN and the counts 0. */
ALAB_MEASURE int alab_paired_diff(double *out, const double *x, const double *y, const int *cluster, int n, int n_boot,
                                  int n_perm, double level, uint32_t seed);

/* Holm's (1979) step-down adjustment of p[0..n): the m p-values that are not NaN, sorted ascending (ties:
 * the lower index first), p_(1) <= ... <= p_(m); adjusted_(j) = min(1, max_{i <= j} (m - i + 1) p_(i)).
 * A NaN p stays NaN and is not counted in m. adjusted may be p (in place). Errors: NULL (n > 0):
 * ALAB_EINVAL; n outside [0, ALAB_EVIDENCE_MAX_N]: ALAB_ELIMIT; an infinite p: ALAB_ENAN; a p outside
 * [0, 1]: ALAB_ERANGE (adjusted untouched after an error). */
ALAB_MEASURE int alab_holm(double *adjusted, const double *p, int n);

/* Spearman's correlation of x and y with z held fixed: the partial correlation of the average ranks,
 * rho = (r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2)), r_ab = Spearman's rho of a and b (as
 * alab_spearman), computed in that order and clamped to [-1, 1]. NaN (ALAB_OK) when it is undefined: a
 * rho undefined (n < 2, a constant side) or |r_xz| = 1 or |r_yz| = 1. Errors: NULL: ALAB_EINVAL; n outside
 * [0, ALAB_EVIDENCE_MAX_N]: ALAB_ELIMIT; a non-finite value: ALAB_ENAN. */
ALAB_MEASURE int alab_partial_spearman(double *rho, const double *x, const double *y, const double *z, int n);

/* out[k] = the q[k]-quantile (type 7, as alab_bootstrap_mean) of the finite values of x[0..n) (NaN
 * skipped), k < nq; all NaN when there is none. Errors: NULL (n > 0 or nq > 0): ALAB_EINVAL; n or nq
 * outside [0, ALAB_EVIDENCE_MAX_N]: ALAB_ELIMIT; q[k] outside [0, 1] or NaN: ALAB_ERANGE; an infinite
 * value: ALAB_ENAN. */
ALAB_MEASURE int alab_quantiles(double *out, const double *x, int n, const double *q, int nq);

/* A correlation of a reading of attention with an interventional effect over a set of inputs. */
enum { ALAB_CORR_SPEARMAN = 0, ALAB_CORR_KENDALL = 1 };
typedef struct {
    int n_inputs;           /* >= 1 */
    const int *offset;      /* (n_inputs + 1), non-decreasing, offset[0] = 0: input k's points are
                               [offset[k], offset[k+1]) */
    const double *reading;  /* per point: the reading (e.g. A[i][j]) */
    const double *effect;   /* per point: the interventional effect */
    const int *group;       /* per point: its permutation group inside its input (e.g. the query row);
                               NULL: the whole input is one group */
    int stat;               /* ALAB_CORR_SPEARMAN or ALAB_CORR_KENDALL (tau-b) */
    double eps;             /* the noise floor: an effect with |effect| < eps is set to 0 (a tie) before
                               ranking; eps = 0 leaves effects as they are */
    int min_points;         /* an input with fewer points than this has no correlation (NaN); >= 2 */
    int n_boot;             /* bootstrap resamples of the per-input values (0: lo = hi = NaN) */
    int n_perm;             /* permutations for the null (0: the null fields and p are NaN) */
    double level;           /* the interval's level, e.g. 0.95 */
    uint32_t seed;          /* the bootstrap uses seed, the permutations seed + 1 (two generators;
                               uint32 arithmetic: 0xFFFFFFFF + 1 = 0) */
} alab_corr_spec;

typedef struct {
    double mean, lo, hi;          /* mean over inputs with a defined correlation; its bootstrap interval
                                     (alab_bootstrap_mean of per_input with spec->seed) */
    double null_mean, null_lo, null_hi; /* the permutation null of `mean`: the mean of the n_perm null
                                     means and their (1-level)/2, (1+level)/2 quantiles (type 7) */
    double p;                     /* two-sided: (1 + #{|null_b - null_mean| >= |mean - null_mean|}) / (1 + n_perm) */
    double p_greater;             /* one-sided, reading ranks effect better than the null:
                                     (1 + #{null_b >= mean}) / (1 + n_perm) */
    int n_defined;                /* inputs with a defined correlation */
    int n_points;                 /* points over all inputs */
    int n_above_floor;            /* points with |effect| >= eps */
} alab_corr_summary;

/* per_input (n_inputs), may be NULL: each input's correlation (NaN where undefined: fewer than
 * min_points points, or a constant side after the floor). The null: for b = 1..n_perm (one generator
 * seeded seed + 1, used in this order): for each input k in order (every input, defined or not, draws
 * its shuffles), for each group in order of first appearance among the input's points, the readings of
 * that group's points are shuffled by Fisher–Yates (for i = m-1 down to 1: j = alab_rng_below(i + 1);
 * swap v[i], v[j]; v = the group's original readings in point order: each permutation starts from the
 * observed readings, not from the previous permutation), the correlation of the shuffled readings with
 * the (floored) effects is taken, and null_b = the mean over the inputs whose correlation is defined
 * (summed in input order). (The effects never move; only readings are permuted, within groups: a
 * reading's row structure is kept, so the null carries any correlation that comes from rows alone.)
 * With no defined input, every field but the counts is NaN. On an error the summary is NaN/0 and
 * per_input is untouched. Errors: ALAB_EINVAL (NULL, bad stat, bad offsets), ALAB_ENAN (non-finite
 * reading/effect), ALAB_ERANGE (n_inputs < 1, min_points < 2, n_boot/n_perm outside [0, 1000000],
 * level outside (0, 1), eps < 0 or not finite), ALAB_ELIMIT (n_inputs or the points over
 * ALAB_EVIDENCE_MAX_N). */
int alab_corr_dataset(alab_corr_summary *s, double *per_input, const alab_corr_spec *spec);

/* The row-permuted baseline of Jain & Wallace: one seeded shuffle of reading
 * in place, inside each run of consecutive points with the same group (NULL:
 * each input whole), inputs then runs in order, Fisher–Yates with
 * alab_rng_below as in alab_corr_dataset's null. */
ALAB_MEASURE int alab_permute_within_groups(double *reading, const int *offset, const int *group, int n_inputs,
                                            uint32_t seed);
/* Attention rollout: R (T, T) = Ã_{L-1} ... Ã_0, Ã_l = ½ mean_h att[l] + ½ I,
 * att (L, NH, T, T). R[i][j]: how much of position i's input at the top comes
 * from token j when attention and the residual are mixed half and half. */
ALAB_MEASURE int alab_attention_rollout(float *R, const float *att, int L, int NH, int T);
/* Attention flow: flow (T)[j] = the maximum flow from token j (layer-0 node)
 * to position target at the top (layer-L node) through the layered graph
 * whose edge (l, j) -> (l+1, i) has capacity Ã_l[i][j] (Ã as for rollout).
 * ALAB_ELIMIT above ALAB_FLOW_MAX_EDGES positive capacities, ALAB_ERANGE
 * for a target outside [0, T). */
ALAB_MEASURE int alab_attention_flow(float *flow, const float *att, int L, int NH, int T, int target);

/* The interventional side (each effect a real forward pass of the model;
 * the model's results are those of the LAST run afterwards). KL is
 * KL(plain || intervened) of next-token distributions, in nats. */

/* Edge knockout of every causal pair j <= i in head (layer, head), or in every
 * head of the layer (head = -1): A (T, T) = the head's attention (or the
 * heads' mean) of the plain run; E (T, T)[i][j] = KL at position i and
 * E_last at position T-1 with edge j -> i knocked out (alab_knockout, `mode`
 * ALAB_KO_RENORM or ALAB_KO_ZERO; ALAB_KO_NOOP removes nothing and measures
 * the rounding of the knockout's arithmetic); NaN above the diagonal. In the
 * last layer an edge of row i < T-1 cannot reach position T-1: E_last is
 * exactly 0 there (a structural zero, not measured). The layers below
 * `layer` are run once and reused, and the LM head of many knockout runs is
 * one matrix product. Only the rows [row0, row1) of E and E_last are written
 * (A whole), so a long grid can be run in parts with progress between them.
 * ALAB_EEMPTY (T < 2), ALAB_ERANGE, ALAB_EINVAL (mode). */
ALAB_MEASURE int alab_edge_knockout(float *A, float *E, float *E_last, alab_model *m, const int *ids, int T,
                                    int layer, int head, int row0, int row1, int mode);
/* Token knockout: effect (T)[j] for j in [j0, j1) = KL at the input's last
 * position between the plain run and the run with token j removed, by `mode`:
 *   ALAB_TOKEN_COLUMN       column j knocked out (renormalised) in every head
 *                           of every layer: no position reads token j's keys
 *                           and values, its own residual stream is kept;
 *   ALAB_TOKEN_COLUMN_ZERO  the same without renormalisation;
 *   ALAB_TOKEN_DELETE       token j deleted from the input (T-1 tokens; the
 *                           effect compares the next-token distributions after
 *                           the whole input, with and without j: leave-one-out
 *                           at the input, as Jain & Wallace 2019 did);
 *   ALAB_TOKEN_REPLACE      ids[j] replaced by `neutral` (a token id).
 * ALAB_EEMPTY (T < 2), ALAB_ERANGE (a range, or neutral outside the vocabulary),
 * ALAB_EINVAL (NULL, or an unknown mode). */
enum { ALAB_TOKEN_COLUMN = 0, ALAB_TOKEN_COLUMN_ZERO = 1, ALAB_TOKEN_DELETE = 2, ALAB_TOKEN_REPLACE = 3 };
ALAB_MEASURE int alab_token_knockout(float *effect, alab_model *m, const int *ids, int T, int j0, int j1, int mode,
                                     int neutral);
/* The noise floor of the knockout measures on one input: *kl_max = the
 * largest KL, over every position t and every row i, between the plain run
 * and a run of layer `layer` (all heads) with row i divided by its own sum
 * (ALAB_KO_NOOP, a no-op in exact arithmetic) — the KL that rounding alone
 * leaves in an edge knockout. layer = -1: every row of every layer divided
 * by its sum in one run (the arithmetic of a token knockout), the largest
 * KL over positions. */
ALAB_MEASURE int alab_knockout_noise(double *kl_max, alab_model *m, const int *ids, int T, int layer);

/* The edge-knockout verdict over a set of inputs (evidence_set.c). From each
 * input's grids A, E, E_last (T[k] x T[k], alab_edge_knockout), two kinds of
 * points, each only where the effect can be non-zero by construction:
 *   local: (A[i][j], E[i][j]) for every causal pair j <= i;
 *   last:  (A[i][j], E_last[i][j]) for every causal pair, or, when
 *          last_layer is nonzero (the knockouts were in the model's last
 *          layer), row T-1 only: an edge of an earlier row cannot reach T-1.
 * For each kind, four readings through alab_corr_dataset (groups = query
 * rows, min_points 4, the floor eps, st's resampling; the bootstrap and the
 * null seeded st->seed): attention (Spearman, Kendall), uniform attention
 * under the causal mask (1/(i+1) in row i, 1/W in a row a sliding window of
 * W keys cuts: a reading that knows only each row's length) and attention permuted within each row (one Fisher–Yates
 * draw per row, inputs then rows in order, a generator seeded st->seed + 2
 * for local and st->seed + 3 for last). Per input: the mean per-row Spearman
 * over rows with at least 4 keys, and the top-k overlap of all local points
 * (k = T), both after the floor, each averaged over inputs with a bootstrap
 * interval (st->n_boot resamples; 0: the mean alone, lo = hi = NaN). per_input (4, n_inputs), may be NULL:
 * local rho, last rho, row mean, top-k overlap of each input (NaN where
 * undefined). The mean local effect: each input's mean of E over its causal
 * pairs, averaged over inputs with its bootstrap interval. The points are the
 * pairs that exist: those alab_edge_knockout leaves NaN (j > i, or outside a
 * sliding-window layer's window) are none, never a structural zero. */
typedef struct {
    int n_boot, n_perm; /* resamples of the bootstrap and of the null       */
    double level;       /* the interval's level, e.g. 0.95                   */
    uint32_t seed;
} alab_set_stats;
typedef struct {
    alab_corr_summary local, local_kendall, local_uniform, local_permuted;
    alab_corr_summary last, last_kendall, last_uniform, last_permuted;
    double rows_mean, rows_lo, rows_hi;
    double topk_mean, topk_lo, topk_hi;
    double effect_mean, effect_lo, effect_hi; /* the mean local effect (nats) of an input's pairs */
} alab_edge_set;
int alab_edge_set_summary(alab_edge_set *out, double *per_input, const float *const *A, const float *const *E,
                          const float *const *E_last, const int *T, int n_inputs, int last_layer, double eps,
                          const alab_set_stats *st);

/* Three ways to remove a head: ALAB_ABLATE_ZERO (the ablate intervention),
 * ALAB_ABLATE_MEAN (its output replaced at every position by its mean over a
 * reference text's positions), ALAB_ABLATE_RESAMPLE (its output at position t
 * taken from the reference's run at position t; T_ref >= T). */
enum { ALAB_ABLATE_ZERO = 0, ALAB_ABLATE_MEAN = 1, ALAB_ABLATE_RESAMPLE = 2 };
/* out (L, T, n_head * head_dim) = the head outputs (before the output
 * projection) of a plain run of ids. */
ALAB_MEASURE int alab_capture_head_outputs(float *out, alab_model *m, const int *ids, int T);
/* As alab_head_importance / alab_pruning_curve, with the heads removed by
 * `mode`; ref (L, T_ref, n_head * head_dim) from alab_capture_head_outputs
 * (NULL for ZERO).
 * ALAB_ETOOLONG when a resample reference is shorter than the input. */
ALAB_MEASURE int alab_head_importance_mode(float *delta, double *base_loss, alab_model *m, const int *ids, int T,
                                           int mode, const float *ref, int T_ref);
ALAB_MEASURE int alab_pruning_curve_mode(float *loss, int *order, alab_model *m, const int *ids, int T,
                                         const float *delta, int mode, const float *ref, int T_ref);
/* Resample ablation averaged over K draws: draw k takes the reference's
 * window of T positions starting at offset_k = alab_rng_below(T_ref - T + 1)
 * (one generator seeded `seed`, offsets drawn in order), and delta_draws
 * (K, L * NH)[k] = loss(head removed with draw k's values) - loss(plain).
 * delta_mean (L * NH) = the mean over draws; offsets (K) may be NULL.
 * ALAB_ETOOLONG when T_ref < T, ALAB_ERANGE for K outside [1, 10000]. */
ALAB_MEASURE int alab_resample_draws(float *delta_mean, float *delta_draws, int *offsets, double *base_loss,
                                     alab_model *m, const int *ids, int T, const float *ref, int T_ref, int K,
                                     uint32_t seed);

/* Activation patching from a clean into a corrupted run of equal length T.
 * ld = logit[answer_clean] - logit[answer_corrupt] at position T-1; each cell
 * is (ld_patched - ld_corrupt) / (ld_clean - ld_corrupt): 0 = corrupted,
 * 1 = clean. resid_grid (L, T): the residual stream entering layer l at
 * position p taken from the clean run; head_grid (L, NH): head (l, h)'s
 * output at every position taken from the clean run. Either grid may be NULL.
 * ALAB_EINVAL when the answers are equal or the two runs give the same ld. */
ALAB_MEASURE int alab_activation_patching(float *resid_grid, float *head_grid, double *ld_clean, double *ld_corrupt,
                                          alab_model *m, const int *clean, const int *corrupt, int T,
                                          int answer_clean, int answer_corrupt);

/* ---- where a head looks versus what it moves (circuits.c; docs/evidence.md) ----
 * A pair (clean, corrupt) of equal length T and answers (a, b): ld(run) =
 * logit[a] - logit[b] at position T-1, and a run's score is
 * (ld(run) - ld(corrupt)) / (ld(clean) - ld(corrupt)): 0 = the corrupted
 * run, 1 = the clean run. Denoising (ALAB_DENOISE) runs the corrupted input
 * with something taken from the clean run; noising (ALAB_NOISE) runs the
 * clean input with something taken from the corrupted run (Heimersheim &
 * Nanda 2024). Both report the score on that one scale: a denoising cell
 * near 1 restores the behaviour alone, a noising cell near 0 destroys it
 * alone. Every function refuses answers outside the vocabulary or equal
 * (ALAB_ERANGE / ALAB_EINVAL) and a pair whose two runs give the same ld
 * (ALAB_EINVAL), and writes ld(clean), ld(corrupt) to *ld_clean, *ld_corrupt. */
enum { ALAB_DENOISE = 0, ALAB_NOISE = 1 };
enum { ALAB_PATCH_PATTERN = 0, ALAB_PATCH_VALUE = 1, ALAB_PATCH_BOTH = 2 };
/* Pattern versus value patching of each head. grid (2, 3, L, NH) =
 * [direction][kind][layer][head], direction ALAB_DENOISE / ALAB_NOISE, with
 * the base run the input patched and the source run the other one:
 *   PATTERN  head (l, h)'s attention probabilities (every row, T x T) are the
 *            source run's; its values are the base run's: y_h = A_src V_base;
 *   VALUE    y_h = A_base V_src, V the head's value vectors (T x HS, with
 *            their bias; with grouped-query attention the values of head h's
 *            key/value head, replaced for head h alone);
 *   BOTH     y_h = the source run's head output (alab_activation_patching's
 *            head grid, in the denoising direction).
 * Everything downstream of the head is recomputed; nothing else is changed. */
ALAB_MEASURE int alab_pattern_value_patching(float *grid, double *ld_clean, double *ld_corrupt, alab_model *m,
                                             const int *clean, const int *corrupt, int T, int answer_clean,
                                             int answer_corrupt);
/* Path patching (Wang et al. 2022). A sender is a head (ls, hs); a receiver
 * is the query, key or value input of a head (lr, hr) with lr > ls, or the
 * logits (ALAB_PATH_LOGITS: layer and head ignored). For each sender:
 *   1. run the base input with the sender's output (before the output
 *      projection, every position) taken from the source run and every other
 *      head of layers ls.. frozen at its output in the base run; the MLPs are
 *      recomputed (Wang et al.'s rule), or, with ALAB_PATH_FREEZE_MLP, frozen
 *      at their base-run outputs too (only the direct residual path is left);
 *      x'_l = the residual stream entering layer l, x'_L the one leaving the
 *      last layer;
 *   2. a receiver (lr, hr, input): run the base input plainly except that
 *      head hr of layer lr computes its query (key, value) from norm(x'_lr)
 *      (its own projection, bias, q/k norm and rotary positions); every other
 *      head and input of layer lr reads the base residual; the layers above
 *      lr are recomputed. With grouped-query attention the key/value is head
 *      hr's alone; the rest of layer lr (its MLP) and the layers above are
 *      recomputed. The logits receiver: ld from x'_L (final norm and head).
 * out (n_recv, L, NH): the score of sender (l, h) for receiver k; NaN when
 * the sender is not below the receiver (ls >= lr). direction as above. */
enum { ALAB_PATH_Q = 0, ALAB_PATH_K = 1, ALAB_PATH_V = 2, ALAB_PATH_LOGITS = 3 };
enum { ALAB_PATH_FREEZE_MLP = 1 };
typedef struct { int layer, head, input; } alab_path_receiver;
ALAB_MEASURE int alab_path_patching(float *out, double *ld_clean, double *ld_corrupt, alab_model *m, const int *clean,
                                    const int *corrupt, int T, int answer_clean, int answer_corrupt,
                                    const alab_path_receiver *recv, int n_recv, int direction, int flags);
/* Direct logit attribution at position T-1 of a plain run. u = W_U[a] -
 * W_U[b] (b = -1: u = W_U[a]). The residual leaving the last layer is
 * x = token embedding + position embedding + sum over layers of (each head's
 * y_h W_O^h + the attention output bias + the MLP output) (for a parallel
 * residual too); the final norm is linear in x once its scale is frozen at
 * the plain run's: s = sqrt(var(x) + eps) (LayerNorm, biased variance, which also centres each
 * term) or sqrt(mean(x^2) + eps) (RMSNorm), so a term c contributes
 * u . (g * centre(c) / s), g the norm's weight, and the norm's bias
 * contributes u . beta. heads (L, NH): head (l, h)'s term; sources (L, NH, T)
 * (may be NULL): its term split by source position j, A[T-1][j] v_j W_O^h
 * (sums to the head's term); terms (3 + 2L): [0] token embedding, [1]
 * position embedding (0 for rotary families), [2] the final norm's bias,
 * [3 + l] layer l's attention output bias, [3 + L + l] layer l's MLP output.
 * Everything sums to *ld = u . final_norm(x) (the logit difference of the
 * run). ALAB_ERANGE for an answer outside the vocabulary, ALAB_EINVAL a == b,
 * or a family that normalises each sublayer's output before the residual add
 * (gemma3_text: no head's output is a linear term of the residual stream). */
ALAB_MEASURE int alab_direct_logit_attribution(float *heads, float *sources, double *terms, double *ld, alab_model *m,
                                               const int *ids, int T, int answer, int answer_other);
/* Value-weighted attention (Kobayashi et al. 2020): norms (L, NH, T)[l][h][j]
 * = || v_j W_O^h ||_2, v_j head h's value vector at position j (with its
 * bias), W_O^h its rows of the output projection; the reading of edge j -> i
 * is A[l][h][i][j] * norms[l][h][j]. It runs ids once, plainly: afterwards
 * alab_result_attention holds that run's attention (the readings beside the
 * norms need no second run); the logits are not computed. */
ALAB_MEASURE int alab_value_norms(float *norms, alab_model *m, const int *ids, int T);
/* Causal tracing by component (Meng et al. 2022's split), denoising: attn
 * (L, T)[l][p] = the score of the corrupted run with the output of layer l's
 * attention (after the output projection and its bias: what the layer adds
 * to the residual) at position p taken from the clean run; mlp (L, T) the
 * same for the MLP's output. Everything else is recomputed. Either grid may
 * be NULL. */
ALAB_MEASURE int alab_component_tracing(float *attn, float *mlp, double *ld_clean, double *ld_corrupt, alab_model *m,
                                        const int *clean, const int *corrupt, int T, int answer_clean,
                                        int answer_corrupt);
/* Composition scores (Elhage et al. 2021) of every sender head (l1, h1) and
 * receiver head (l2, h2) in a later layer, l1 < l2 (not only adjacent layers: a
 * head's output stays in the residual stream for every layer above it):
 * scores (3, P, NH, NH) = [kind][p][h1][h2], P = L (L - 1) / 2 layer pairs in
 * order l1 outer, p = l1 (2L - l1 - 1) / 2 + l2 - l1 - 1; kind 0 = Q, 1 = K, 2 = V:
 *   Q: ||W_OV1 W_QK2||_F, K: ||W_QK2 W_OV1^T||_F, V: ||W_OV1 W_OV2||_F, each
 *   divided by the product of the two matrices' Frobenius norms,
 * with, in the row-vector convention of the engine (x W), W_OV = diag(g)
 * W_V^h W_O^h and W_QK = diag(g) W_Q^h (W_K^h)^T diag(g), g the weight of the
 * norm before the head's layer; W_K^h, W_V^h are those of key/value head
 * h / G (LayerNorm's centring, the scale, the biases and the rotary
 * positions are left out). null (3, 3): per kind the mean, the
 * 2.5 % and the 97.5 % quantiles (linear interpolation at (n-1) q of the
 * sorted draws) of the same score over n_null draws of Gaussian W_Q, W_K,
 * W_V (C, HS) and W_O (HS, C), sender's then receiver's, each row-major (g =
 * 1; alab_rng seeded `seed`; a normal is sqrt(-2 ln(1 - u1)) cos(2 pi u2),
 * u = (alab_rng_next >> 11) 2^-53, two draws per normal); n_null = 0: NaN (null may be NULL). ALAB_EINVAL for a one-layer model
 * or a family with norms of each sublayer's output (gemma3_text, as for direct attribution),
 * ALAB_ERANGE for n_null outside [0, 100000]. */
ALAB_MEASURE int alab_composition_scores(float *scores, double *null, alab_model *m, int n_null, uint32_t seed);

/* ------------------------------------------------------------------------ */
/* Reverse mode: gradients of a run (backward.c; docs/architecture.md,      */
/* "Reverse mode")                                                            */
/* ------------------------------------------------------------------------ */
/* A tape: a run of the model (alab_forward itself, so its result is a normal run's, bit for bit) and what its
 * backward needs: the residual stream entering every layer and leaving the last one, (L + 1, T, C) floats, q, k
 * and v as each layer's attention read them, (L, T, DQ + 2 DKV) (not for the families with q/k norms, which
 * recompute them), the last position's logits (V), the ids and a copy of the options. Memory: 4 ((L + 1) T C +
 * L T (DQ + 2 DKV) + 2 V + T) bytes plus the interventions; each alab_backward allocates, for its own duration, 4 [T (9 C + 6 F + 2 (DQ + 2 DKV) + DQ)
 * + 2 max(C (DQ + 2 DKV), DQ C, C F) + 32 T + min(T, 32) (V + 2 C)] bytes (F the MLP's inner size, DKV =
 * n_kv_head head_dim) and uses the model's activations for T tokens (L n_head T^2 floats of attention among
 * them). When tape, scratch and activations together would pass ALAB_BACKWARD_MAX_BYTES, alab_tape_forward
 * refuses with ALAB_ELIMIT and the sizes needed, before allocating or running anything.
 * The tape holds no pointer into the model's buffers: later runs of the model do not change it (it must be used
 * with the model that made it, and freed before that model is). */
typedef struct alab_tape alab_tape;
#define ALAB_BACKWARD_MAX_BYTES (1ull << 30)  /* tape + backward scratch, and a gradient block: 1 GiB */

/* The scalar a backward differentiates, of the run's logits:
 *   LOGIT_DIFF  logit[a] - logit[b] at the last position;
 *   LOGPROB     log p(a) at the last position (log-softmax of the logits);
 *   KL          KL(p_plain || p_run) at the last position, p_plain the next-token distribution of the unmodified
 *               run (the same ids, no interventions, the default mask and scale; computed once per tape, one more
 *               forward unless the tape's run is itself unmodified, where KL and its gradient are 0);
 *   LOSS        the mean next-token loss, (1 / (T - 1)) sum over t < T - 1 of -log p(ids[t + 1] | ids[..t]). */
enum { ALAB_METRIC_LOGIT_DIFF = 0, ALAB_METRIC_LOGPROB = 1, ALAB_METRIC_KL = 2, ALAB_METRIC_LOSS = 3 };

/* The parts of a gradient block, each the derivative of the metric with respect to (DQ = n_head head_dim):
 *   EMBED     (T, C)          the input token embeddings wte[ids[t]] (the rows looked up; Gemma: before its
 *                             sqrt(hidden) scale, so this is that scale times RESID[0])
 *   RESID     (L + 1, T, C)   the residual stream entering layer l at position t; [L]: leaving the last layer
 *   HEAD_OUT  (L, T, DQ)      each head's output as the output projection reads it (after an ablation: the
 *                             derivative with respect to the value fed in, defined for an ablated head too);
 *                             head h at columns [h head_dim, (h + 1) head_dim)
 *   ATTN      (L, NH, T, T)   the attention probabilities as y = A v uses them (after a hard do), row = query;
 *                             every cell, masked ones too (A is 0 there); 0 for an ablated head
 *   SCORES    (L, NH, T, T)   the softmax's input (q.k scale + a soft do's lambda) on the keys the mask lets
 *                             through; 0 elsewhere, on rows a hard do replaced and for an ablated head
 *   Q         (L, T, DQ)      q as the scores read it (after weight edits, q_norm and the rotary positions)
 *   K, V      (L, T, DKV)     k and v of each key/value head (DKV = n_kv_head head_dim), likewise
 *   MLP_OUT   (L, T, C)       the MLP's output as added to the residual (Gemma: after its post-norm); this
 *                             equals RESID[l + 1] (each sublayer's output is added to the stream)
 * A block holds the parts asked for (want: a bit 1 << ALAB_GRAD_* per part) in this order, back to back. */
enum { ALAB_GRAD_EMBED = 0, ALAB_GRAD_RESID = 1, ALAB_GRAD_HEAD_OUT = 2, ALAB_GRAD_ATTN = 3, ALAB_GRAD_SCORES = 4,
       ALAB_GRAD_Q = 5, ALAB_GRAD_K = 6, ALAB_GRAD_V = 7, ALAB_GRAD_MLP_OUT = 8, ALAB_GRAD_PARTS = 9 };
#define ALAB_GRAD_ALL 511 /* every part: (1 << ALAB_GRAD_PARTS) - 1 */

/* offsets (ALAB_GRAD_PARTS + 1): where each part starts in a block for T tokens of m, in floats (a part not
 * wanted has the size 0), and offsets[ALAB_GRAD_PARTS] the block's size. ALAB_ELIMIT when the block would pass
 * ALAB_BACKWARD_MAX_BYTES, ALAB_EEMPTY (T = 0), ALAB_ETOOLONG, ALAB_EINVAL (NULL, a bit outside ALAB_GRAD_ALL). */
ALAB_MEASURE int alab_grad_layout(size_t *offsets, const alab_model *m, int T, int want);
/* The embedding rows wte[ids[t]] of T tokens as f32 into out (T, C), as a run looks them up (a 16-bit embedding
 * converted): the inputs of gradient x input and of the integrated gradients' path (alab_run_opts.embed_rows).
 * ALAB_EINVAL (NULL), ALAB_EEMPTY (T <= 0), ALAB_ERANGE (an id outside [0, V)). */
ALAB_MEASURE int alab_embedding_rows(float *out, const alab_model *m, const int *ids, int T);
/* Run ids with opts (NULL: a plain run) and keep its tape in *out (alab_tape_free). Do (hard, soft), ablation,
 * the weight edits, masks, the scale, the q/k capture and embed_rows (EMBED is then the derivative
 * with respect to those rows; the tape keeps no pointer to them; KL's unmodified run is the ids' own) are allowed; knockouts, patches, the residual and
 * head-output captures and start_layer are ALAB_EINVAL (not differentiated). Errors are alab_forward's, and
 * ALAB_ELIMIT (see above); on any error *out is NULL and nothing stays allocated. */
int alab_tape_forward(alab_tape **out, alab_model *m, const int *ids, int T, const alab_run_opts *opts);
void alab_tape_free(alab_tape *tp);
/* The tape's own size in bytes (0 for NULL). */
size_t alab_tape_bytes(const alab_tape *tp);
/* The gradient of `metric` (ALAB_METRIC_*, answers a and b as it says; b is read by LOGIT_DIFF only) of the
 * tape's run into grads (n_grads floats, the layout of alab_grad_layout for want), and the metric's value into
 * *value (may be NULL). Gradients are bit for bit the same on any number of threads. A tape serves any number
 * of backward calls. The model's activations are the backward's scratch: alab_result_* have no run afterwards
 * (alab_result_T is 0) until the next forward. ALAB_EINVAL (NULL, a tape of another model, an unknown metric,
 * bad want), ALAB_ERANGE (an answer outside [0, V), a block smaller than the layout), ALAB_EEMPTY (LOSS with
 * T < 2), ALAB_ELIMIT, ALAB_ENOMEM, ALAB_ETHREAD. */
ALAB_MEASURE int alab_backward(float *grads, size_t n_grads, double *value, alab_model *m, alab_tape *tp, int metric,
                               int a, int b, int want);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_H */
