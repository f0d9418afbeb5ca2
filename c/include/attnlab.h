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
    ALAB_ESTATE = -17        /* the call needs state that is not there (no run yet) */
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

/* ------------------------------------------------------------------------ */
/* Tokenizer: GPT-2 byte-level BPE                                            */
/* ------------------------------------------------------------------------ */
typedef struct alab_bpe alab_bpe;

/* vocab: the bytes of vocab.json (encoder.json); merges: merges.txt (vocab.bpe). */
int alab_bpe_load(alab_bpe **out, const char *vocab, size_t vocab_len,
                  const char *merges, size_t merges_len);
void alab_bpe_free(alab_bpe *bpe);
int alab_bpe_vocab_size(const alab_bpe *bpe);

/* Encode text (UTF-8 bytes). Each maximal ill-formed UTF-8 subsequence is
 * first replaced by U+FFFD, exactly as a browser's TextDecoder does, so C and
 * JS callers get the same ids. "<|endoftext|>" in text is ordinary text.
 * Writes at most max_ids ids; *n_ids receives the number needed.
 * Returns ALAB_ELIMIT if more than max_ids are needed (ids then hold a prefix),
 * ALAB_ELIMIT also if text_len > ALAB_MAX_TEXT_BYTES. Empty text gives 0 ids. */
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
    float layer_norm_epsilon;
} alab_config;

/* Load config.json, model.safetensors, vocab.json and merges.txt from dir. */
int alab_model_load_dir(alab_model **out, const char *dir);

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
const alab_bpe *alab_model_bpe(const alab_model *m);

/* ------------------------------------------------------------------------ */
/* Forward pass with capture and interventions                                */
/* ------------------------------------------------------------------------ */
enum { ALAB_DO_HARD = 0, ALAB_DO_SOFT = 1, ALAB_ABLATE = 2 };
enum { ALAB_MASK_CAUSAL = 0, ALAB_MASK_FULL = 1, ALAB_MASK_WINDOW = 2 };
#define ALAB_ALL_HEADS (-1)

typedef struct {
    int kind;     /* ALAB_DO_HARD, ALAB_DO_SOFT or ALAB_ABLATE                  */
    int layer;    /* 0-based                                                    */
    int head;     /* 0-based, or ALAB_ALL_HEADS for every head of the layer     */
    int row, col; /* query (effect) and key (cause) positions; unused for ablate */
    float lambda; /* added to the pre-softmax score (soft do only)              */
} alab_intervention;

typedef struct {
    const alab_intervention *interventions; /* may be NULL                     */
    int n_interventions;
    int mask;          /* ALAB_MASK_*, for every layer (default causal)        */
    int window;        /* W for ALAB_MASK_WINDOW: attend to the last W positions */
    const int *layer_mask;   /* optional [L] per-layer ALAB_MASK_* (overrides mask) */
    const int *layer_window; /* optional [L] per-layer W, with layer_mask       */
    int scale_override;/* nonzero: use `scale` instead of 1/sqrt(HS)           */
    float scale;       /* the score scale when scale_override (0 = uniform)    */
    int capture_layer; /* capture q and k of (capture_layer, capture_head);    */
    int capture_head;  /*   -1 for none                                        */
} alab_run_opts;

/* Fills opts with the defaults (causal mask, default scale, no capture). */
void alab_run_opts_init(alab_run_opts *opts);

/* Run the model on ids[0..T). Results stay valid until the next forward or
 * alab_model_free. Errors: ALAB_EEMPTY (T == 0), ALAB_ETOOLONG
 * (T > n_positions), ALAB_ERANGE (a token id or an intervention index),
 * ALAB_ENAN (a non-finite lambda or scale), ALAB_EINVAL (bad kind / mask),
 * ALAB_ELIMIT (more than ALAB_MAX_INTERVENTIONS interventions). */
int alab_forward(alab_model *m, const int *ids, int T, const alab_run_opts *opts);

int alab_result_T(const alab_model *m);
/* Attention probabilities of the last run, (L, NH, T, T), row = query. */
const float *alab_result_attention(const alab_model *m);
/* Logits of the last position, (V). */
const float *alab_result_logits(const alab_model *m);
/* q and k of the captured head, each (T, HS), before scaling; NULL if none. */
const float *alab_result_q(const alab_model *m);
const float *alab_result_k(const alab_model *m);

/* Next-token probabilities of the last run: the k most likely (ids, probs,
 * descending; ties broken by the lower id). k is clamped to V. */
int alab_result_topk(int *ids, float *probs, int k, const alab_model *m);

/* Sample max_new tokens after ids[0..T) (no interventions). temperature 0
 * means greedy; top_k 0 means the full vocabulary. The RNG state is passed in.
 * out receives the new ids; *n_out how many were written. */
int alab_generate(int *out, int *n_out, alab_model *m, const int *ids, int T,
                  int max_new, float temperature, int top_k, uint64_t *rng_state);

/* ------------------------------------------------------------------------ */
/* Analysis (pure functions on plain arrays)                                  */
/* ------------------------------------------------------------------------ */
/* Sum of entries strictly below the diagonal / sum of all entries of A (T,T). */
double alab_dag_score(const float *A, int T);
/* DAG score of uniform causal attention: (1/T) sum_{i<T} i/(i+1). */
double alab_null_dag_score(int T);
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

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_H */
