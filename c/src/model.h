/* model.h — what the model's sources share (family.c, load.c, forward.c,
 * attention.c, interventions.c, generate.c, results.c, ...): the family
 * description, the model struct, the activations, and what the files of the
 * forward pass offer each other.
 *
 * A model family is DATA: an alab_family row (family.c) says which norm,
 * positions, attention projections, MLP, residual and head it uses and what
 * its tensors are called; config.json fills an alab_arch with the sizes and
 * settings. One block forward (forward.c) reads both, for every family, in
 * the prefill and in the key/value-cache step alike.
 *
 * Legend: T tokens, C channels (hidden size), NH query heads, NKV key/value
 * heads (G = NH / NKV query heads share one), HS head size, DQ = NH*HS,
 * DKV = NKV*HS, F the MLP's inner size, L layers, V vocabulary, P positions.
 */
#ifndef ALAB_MODEL_H
#define ALAB_MODEL_H

#include "internal.h"
#include "parallel.h"
#include "safetensors.h"

/* ---- the family description ---------------------------------------------- */
/* LayerNorm has a bias; RMSNORM_UNIT is Gemma's RMSNorm, x / rms(x) * (1 + w): the stored w is the offset from 1
 * (load.c adds the 1, in f32 as Hugging Face does, so the forward pass multiplies by the stored gain) */
typedef enum { NORM_LAYERNORM, NORM_RMSNORM, NORM_RMSNORM_UNIT } norm_kind;
typedef enum { POS_LEARNED, POS_ROTARY } pos_kind;
typedef enum {
    QKV_CONV1D_FUSED,   /* GPT-2: one Conv1D (C, DQ+2DKV) = [q | k | v], weights (in, out) */
    QKV_NEOX_FUSED,     /* GPT-NeoX: one Linear (3C, C), rows per head [q_h k_h v_h] */
    QKV_SEPARATE        /* Llama/Qwen: q_proj, k_proj, v_proj Linear (out, in) */
} qkv_kind;
typedef enum { MLP_GELU_TANH, MLP_GELU_EXACT, MLP_SWIGLU, MLP_GEGLU } mlp_kind; /* GeGLU: gelu_tanh(gate h) * up h */

/* Tensor names, printf formats taking the layer index; NULL = the family has none. */
typedef struct {
    const char *embed, *pos_embed, *final_norm_w, *final_norm_b, *lm_head;
    const char *ln1_w, *ln1_b, *ln2_w, *ln2_b;
    const char *qkv_w, *qkv_b;              /* fused kinds */
    const char *q_w, *q_b, *k_w, *k_b, *v_w, *v_b;
    const char *q_norm, *k_norm;            /* per-head RMSNorm weights (HS) */
    const char *o_w, *o_b;
    const char *up_w, *up_b, *gate_w, *gate_b, *down_w, *down_b;
    const char *post_attn_norm, *post_mlp_norm; /* Gemma 3: norms of the attention's and the MLP's outputs (C) */
    const char *alt_prefix;                 /* a prefix a checkpoint may add to every name but lm_head */
} alab_tensor_names;

typedef struct {
    const char *model_type;                 /* config.json's, e.g. "llama" */
    norm_kind norm;
    pos_kind pos;
    qkv_kind qkv;
    int linear_layout;                      /* weights are nn.Linear (out, in): transposed at load */
    alab_tensor_names names;
} alab_family;

/* The families (family.c), and the one whose model_type is s (NULL if none). */
const alab_family *alab_family_find(const char *model_type);

/* Sizes and settings from config.json. */
typedef struct {
    const alab_family *fam;
    int NKV, HS, F;            /* key/value heads, head size, MLP inner size */
    float eps;
    mlp_kind mlp;
    int parallel_residual;     /* x + attn(ln1 x) + mlp(ln2 x) */
    int tied;                  /* the LM head is the embedding */
    int qkv_bias, o_bias, mlp_bias, qk_norm;
    int rot_dims;              /* rotary dimensions of each head (even, <= HS) */
    double rope_theta;
    int rope_llama3;           /* the llama3 rope_scaling rule */
    int rope_linear;           /* the linear rope_scaling rule: every frequency / rope_factor */
    double rope_factor, rope_low, rope_high, rope_orig;
    double rope_local_theta;   /* > 0: layers with rope_local[l] rotate with this base, unscaled (Gemma 3) */
    unsigned char rope_local[ALAB_MAX_LAYERS];
    int layer_window[ALAB_MAX_LAYERS]; /* > 0: layer l's own mask is causal within a sliding window of this many
                                          keys (i - j < W; Mistral, Gemma 3's sliding layers); 0: plain causal */
    double attn_scale;         /* > 0: the score scale (Gemma 3: query_pre_attn_scalar^-0.5); 0: 1/sqrt(HS) */
    float embed_scale;         /* != 0: the embeddings are multiplied by it (Gemma: sqrt(hidden_size) in f32) */
    int scale_attn_weights;    /* GPT-2: 0 = scores are not divided by sqrt(HS) */
    int scale_by_layer;        /* GPT-2: scores also divided by layer_idx + 1 */
    int n_positions_config;    /* max_position_embeddings as written (may exceed P) */
} alab_arch;

/* The tensors the loader looks for with this config.json: "name d0[,d1]\n" lines
 * sorted by name, as stored (load.c; tests/c/test_configs.c compares them with
 * the published checkpoints'). *len = the length needed; ALAB_ELIMIT if >= cap. */
int alab_expected_tensors(char *out, size_t cap, size_t *len, const char *config_json, size_t config_len);

/* Parse config.json into cfg (the public part) and arch. ALAB_ECONFIG names the field; also for values that
 * make a score scale, a norm's epsilon or a rotary frequency non-finite, zero or (a scale) over ALAB_MAX_SCALE. */
int alab_parse_config(alab_config *cfg, alab_arch *arch, const char *text, size_t len);
/* The score scale of layer l under arch (alab_attn_scale without a model) (attention.c). */
float alab_arch_attn_scale(const alab_arch *a, int l);
/* The rotary frequency of pair i (Hugging Face's inv_freq with the rope_scaling rule; local: Gemma 3's sliding
 * layers), in double precision (family.c: arch math, below the forward pass that uses it). */
double alab_rope_inv_freq(const alab_arch *a, int i, int local);

/* ---- the model --------------------------------------------------------------- */
typedef struct {
    const float *ln1_w, *ln1_b, *ln2_w, *ln2_b;
    const float *qkv_w, *qkv_b;     /* fused: (C, DQ+2DKV) after load, [q | k | v] columns */
    const float *q_w, *q_b, *k_w, *k_b, *v_w, *v_b; /* separate: (C, DQ), (C, DKV), (C, DKV) */
    const float *q_norm, *k_norm;   /* (HS) */
    const float *o_w, *o_b;         /* (DQ, C) */
    const float *up_w, *up_b;       /* (C, F) c_fc / dense_h_to_4h / up_proj */
    const float *gate_w, *gate_b;   /* (C, F) SwiGLU */
    const float *down_w, *down_b;   /* (F, C) */
    const float *post_attn_norm, *post_mlp_norm; /* (C), Gemma 3 */
} layer_weights;

typedef struct {
    int T_cap;
    float *x;          /* (T, C) residual stream */
    float *h;          /* (T, C) norm / projection out */
    float *qkv;        /* (T, DQ+2DKV) */
    float *y;          /* (T, DQ) attention output, heads concatenated */
    float *fc;         /* (T, max(F or 2F, DQ)) MLP inner; k^T scratch of the attention */
    float *att;        /* (L, NH, T, T) */
    float *q, *k;      /* (T, HS) captured head */
    float *lnf;        /* (C) */
    float *logits;     /* (V) */
    int *ids;          /* (T) */
    float *h2;         /* (T, C) parallel residual only: the attention's output */
    void *block;
} activations;

/* Where q, k and v of the current layer are: row t of head h at q + t*ldq + h*HS. */
typedef struct {
    float *q, *k, *v;
    int ldq, ldk, ldv;
    const float *bq, *bk;  /* the biases of the q and k columns (DQ), (DKV), or NULL */
} qkv_view;

struct alab_model {
    alab_config cfg;
    alab_arch arch;
    alab_bpe *bpe;
    const float *wte, *wpe;   /* (V, C), (P, C) or NULL */
    const float *lm_head;     /* (V, C): wte when tied */
    const float *lnf_w, *lnf_b;
    layer_weights *layers;
    float *rope_cos, *rope_sin; /* (P, rot_dims/2) */
    void **files;             /* the safetensors buffers, while weights borrow from them */
    int n_files;
    float *converted;
    activations acts;
    int T;
    int win0, win1;           /* a windowed run (alab_forward_rows): only rows [win0, win1) valid; else 0, 0 */
    int has_qk;
    int packed;
    alab_pool *pool;
    int owns_pool;
    int pool_rc;
    int half;                 /* ST_F16 / ST_BF16: the big matrices stay 16-bit (pointers are to uint16), else 0 */
    float *scratch;           /* half: one matrix (or LM head block) converted to f32 */
    float *head_packed;       /* evidence.c: the LM head packed block by block (head_vb rows each), kept once built */
    int head_vb;
    const struct circuit_hooks *ck; /* circuits.c: its hooks for the run under way, else NULL */
};

/* circuits.c's hooks inside one prefill run (m->ck; never with a row window or the key/value cache).
 * The qkv buffer's layout: fused projections (qkv_w) put row t's [q | k | v] at t * DQKV; separate ones put
 * q (T, DQ), then k (T, DKV), then v (T, DKV). */
typedef struct circuit_hooks {
    int layer, head;           /* head overrides: head `head` of layer `layer` (layer -1: none)            */
    const float *pattern;      /*   its attention probabilities (T, T), or NULL                              */
    const float *values;       /*   its value rows (row t at values + t * ldv), or NULL                      */
    int ldv;
    int rcv_layer, rcv_head, rcv_input; /* receiver: head rcv_head of rcv_layer takes its q (0), k (1) or v (2) */
    const float *rcv_x;        /*   from the norm of this residual (T, C), or NULL for none                   */
    float *rcv_qkv;            /*   scratch (T, DQKV)                                                          */
    int freeze_from;           /* layers freeze_from.. take every head's output from y_frozen (L, T, DQ) and, */
    const float *y_frozen;     /*   when mlp_frozen (L, T, C) is set, the MLP's output from it; the head      */
    const float *mlp_frozen;   /*   patches of the run apply on top                                           */
    int comp_layer, comp_pos, comp_kind; /* the attention block's (kind 0) or MLP's (1) output at (layer, pos) */
    const float *comp_vec;     /*   := comp_vec (C); layer -1: none                                          */
    float *cap_attn, *cap_mlp; /* (L, T, C) captures of the attention block's and the MLP's outputs, or NULL */
} circuit_hooks;
void alab_circuit_hooks_init(circuit_hooks *ck);

/* out[i] = h[i] as f32, F16 (f16 = 1) or BF16, exact for every finite value (F16 Inf/NaN are not expected:
 * weights are checked finite at load); the vectorised twin of alab_f16_to_f32 / alab_bf16_to_f32. */
void alab_half_to_f32_n(float *out, const uint16_t *h, size_t n, int f16);
/* The f32 copy of a 16-bit weight matrix of n values (half models) in m->scratch. */
const float *alab_half_matrix(alab_model *m, const float *w16, size_t n);
#define ALAB_HEAD_BLOCK 256  /* LM-head rows converted at a time (half models) */

/* ---- the big products, activations, positions (forward.c) ------------------- */
void alab_layer_matmul(alab_model *m, float *out, const float *inp, const float *w, const float *b,
                       int T, int C, int OC);
/* The same blocked as a product of T_plan rows (ops.c's matmul_packed_forward_plan): the windowed runs. */
void alab_layer_matmul_plan(alab_model *m, float *out, const float *inp, const float *w, const float *b,
                            int T, int C, int OC, int T_plan);
void alab_lm_head(alab_model *m, float *out, const float *inp, int T);
void alab_final_norm(const alab_model *m, float *out, const float *inp, int T);
int alab_ensure_activations(alab_model *m, int T);
int alab_ensure_positions(alab_model *m, int P);  /* rotary tables for positions [0, P) */

/* ---- interventions (interventions.c) ----------------------------------------- */
/* What an intervention kind acts on and which parameter it takes. */
enum { IV_ON_CELL = 1, IV_ON_HEAD_OUT = 2, IV_ON_WEIGHTS = 3 };
enum { IV_PARAM_NONE = 0, IV_PARAM_LAMBDA = 1, IV_PARAM_ALPHA = 2 };
typedef struct {
    int kind;
    const char *name;
    int acts_on;
    int param;
} alab_iv_kind;
/* The row of kind k, or NULL. */
const alab_iv_kind *alab_iv_kind_of(int k);

typedef struct {
    int *start;
    int *idx;
    unsigned char *ablated;
    int has_edits;
    void *block;
} intervention_index;

int alab_check_opts(const alab_model *m, const alab_run_opts *o, int T);
int alab_build_index(intervention_index *ix, const alab_run_opts *o, int L, int NH, int T);
void alab_apply_head_edits(alab_model *m, const qkv_view *v, int l, int T, const alab_run_opts *o);

/* ---- attention (attention.c) ------------------------------------------------- */
/* Query rows [q0, q1) of T (all: 0, T); the rows' values do not depend on which others are computed. */
void alab_attention_prefill(alab_model *m, const qkv_view *v, int l, int T, const alab_run_opts *o,
                            const intervention_index *ix, int q0, int q1);
float alab_attn_scale(const alab_model *m, int l);

/* The k largest of logits (V) as probabilities under softmax(logits / temp) (results.c). */
void alab_topk_probs(int *ids, float *probs, int k, const float *logits, int V, float temp);

/* ---- the key/value cache (generate.c) ------------------------------------------ */
typedef struct {
    int cap, n;
    float *k, *v;    /* (L, NKV, cap, HS) */
    float *scores;   /* (cap) */
    float *logits;   /* (V) */
    void *block;
} kv_cache;

void alab_attention_cached(alab_model *m, const qkv_view *v, int l, int Tn, kv_cache *kv);

/* Rows of a prefill (forward.c, evidence.c). A plain run may capture each
 * layer's q | k | v as attention reads them (after edits, q/k norms and the
 * rotary positions): capture_qkv (L, T, DQ + 2 DKV), the qkv buffer's layout.
 * A windowed run recomputes only rows [w0, w1) from its start layer up and
 * takes every other row's q, k and v from such a capture (plain_qkv): the rows
 * after a knockout in row i are i.. only, and the last layer's row i alone.
 * w0 is a multiple of 4 and w1 one or T, so every product groups the rows as
 * the full run does and the window's rows equal the full run's bit for bit
 * (f32 storage; tests/c/test_evidence.c). */
typedef struct {
    float *capture_qkv;
    const float *plain_qkv;
    int w0, w1;
} block_rows;

/* One block of layer l over Tn rows at positions P0.. (forward.c): the prefill
 * with interventions (kv NULL) or the cached step (kv: keys and values
 * appended); br NULL or a capture / a window as above. */
void alab_block_forward(alab_model *m, int l, int Tn, int P0, const alab_run_opts *o,
                        const intervention_index *ix, kv_cache *kv, const block_rows *br);
/* alab_forward with rows (NULL: alab_forward): a windowed run checks that its
 * options are knockouts of rows inside [r0, r1) under a causal mask, and
 * leaves only alab_result_hidden of rows [r0, r1) valid. The window given is
 * rows [r0, r1); the block rounds it out to multiples of 4. */
int alab_forward_rows(alab_model *m, const int *ids, int T, const alab_run_opts *opts, float *capture_qkv,
                      const float *plain_qkv, int r0, int r1);
/* x (Tn, C) = the embeddings of ids at positions P0.. */
void alab_embed(alab_model *m, const int *ids, int Tn, int P0);

#endif
