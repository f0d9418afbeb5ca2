/* family.c — the model families as data, and config.json read into them.
 *
 * Each family is one row of FAMILIES: its norm, positions, attention
 * projections and tensor names. Its sizes and remaining settings (kv heads,
 * MLP, residual, tying, rotary, biases) come from config.json, read by one
 * function per config dialect: GPT-2's (n_embd, n_layer, ...) and the
 * common one of GPT-NeoX, Llama, Qwen2, Qwen3, Mistral and Gemma 3
 * (hidden_size, ...), with Gemma 3's own settings read by parse_gemma3.
 * A value the engine cannot run exactly as Hugging Face does is refused with
 * ALAB_ECONFIG naming the field, never approximated.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "model.h"

#define L_ "layers.%d."

static const alab_family FAMILIES[] = {
    {"gpt2", NORM_LAYERNORM, POS_LEARNED, QKV_CONV1D_FUSED, 0,
     {.embed = "wte.weight", .pos_embed = "wpe.weight", .final_norm_w = "ln_f.weight", .final_norm_b = "ln_f.bias",
      .lm_head = "lm_head.weight",
      .ln1_w = "h.%d.ln_1.weight", .ln1_b = "h.%d.ln_1.bias", .ln2_w = "h.%d.ln_2.weight", .ln2_b = "h.%d.ln_2.bias",
      .qkv_w = "h.%d.attn.c_attn.weight", .qkv_b = "h.%d.attn.c_attn.bias",
      .o_w = "h.%d.attn.c_proj.weight", .o_b = "h.%d.attn.c_proj.bias",
      .up_w = "h.%d.mlp.c_fc.weight", .up_b = "h.%d.mlp.c_fc.bias",
      .down_w = "h.%d.mlp.c_proj.weight", .down_b = "h.%d.mlp.c_proj.bias",
      .alt_prefix = "transformer."}},
    {"gpt_neox", NORM_LAYERNORM, POS_ROTARY, QKV_NEOX_FUSED, 1,
     {.embed = "gpt_neox.embed_in.weight", .final_norm_w = "gpt_neox.final_layer_norm.weight",
      .final_norm_b = "gpt_neox.final_layer_norm.bias", .lm_head = "embed_out.weight",
      .ln1_w = "gpt_neox." L_ "input_layernorm.weight", .ln1_b = "gpt_neox." L_ "input_layernorm.bias",
      .ln2_w = "gpt_neox." L_ "post_attention_layernorm.weight", .ln2_b = "gpt_neox." L_ "post_attention_layernorm.bias",
      .qkv_w = "gpt_neox." L_ "attention.query_key_value.weight", .qkv_b = "gpt_neox." L_ "attention.query_key_value.bias",
      .o_w = "gpt_neox." L_ "attention.dense.weight", .o_b = "gpt_neox." L_ "attention.dense.bias",
      .up_w = "gpt_neox." L_ "mlp.dense_h_to_4h.weight", .up_b = "gpt_neox." L_ "mlp.dense_h_to_4h.bias",
      .down_w = "gpt_neox." L_ "mlp.dense_4h_to_h.weight", .down_b = "gpt_neox." L_ "mlp.dense_4h_to_h.bias"}},
#define LLAMA_NAMES LLAMA_COMMON_NAMES, .ln2_w = "model." L_ "post_attention_layernorm.weight"
#define LLAMA_COMMON_NAMES                                                                                   \
    .embed = "model.embed_tokens.weight", .final_norm_w = "model.norm.weight", .lm_head = "lm_head.weight",  \
    .ln1_w = "model." L_ "input_layernorm.weight",                                                           \
    .q_w = "model." L_ "self_attn.q_proj.weight", .q_b = "model." L_ "self_attn.q_proj.bias",               \
    .k_w = "model." L_ "self_attn.k_proj.weight", .k_b = "model." L_ "self_attn.k_proj.bias",               \
    .v_w = "model." L_ "self_attn.v_proj.weight", .v_b = "model." L_ "self_attn.v_proj.bias",               \
    .o_w = "model." L_ "self_attn.o_proj.weight", .o_b = "model." L_ "self_attn.o_proj.bias",               \
    .up_w = "model." L_ "mlp.up_proj.weight", .up_b = "model." L_ "mlp.up_proj.bias",                       \
    .gate_w = "model." L_ "mlp.gate_proj.weight", .gate_b = "model." L_ "mlp.gate_proj.bias", .down_w = "model." L_ "mlp.down_proj.weight",             \
    .down_b = "model." L_ "mlp.down_proj.bias",                                                             \
    .q_norm = "model." L_ "self_attn.q_norm.weight", .k_norm = "model." L_ "self_attn.k_norm.weight"
    {"llama", NORM_RMSNORM, POS_ROTARY, QKV_SEPARATE, 1, {LLAMA_NAMES}},
    {"qwen2", NORM_RMSNORM, POS_ROTARY, QKV_SEPARATE, 1, {LLAMA_NAMES}},
    {"qwen3", NORM_RMSNORM, POS_ROTARY, QKV_SEPARATE, 1, {LLAMA_NAMES}},
    /* Llama's names and block; config.json's sliding_window is every layer's own mask */
    {"mistral", NORM_RMSNORM, POS_ROTARY, QKV_SEPARATE, 1, {LLAMA_NAMES}},
    /* Gemma 3 (Gemma3ForCausalLM): four norms per layer, (1 + w) RMSNorms; post_attention_layernorm is the norm
     * of the attention's output, pre_feedforward_layernorm the MLP's input norm */
    {"gemma3_text", NORM_RMSNORM_UNIT, POS_ROTARY, QKV_SEPARATE, 1,
     {LLAMA_COMMON_NAMES, .ln2_w = "model." L_ "pre_feedforward_layernorm.weight",
      .post_attn_norm = "model." L_ "post_attention_layernorm.weight",
      .post_mlp_norm = "model." L_ "post_feedforward_layernorm.weight"}},
};

const alab_family *alab_family_find(const char *model_type) {
    for (size_t i = 0; i < sizeof FAMILIES / sizeof FAMILIES[0]; i++)
        if (strcmp(FAMILIES[i].model_type, model_type) == 0) return &FAMILIES[i];
    return NULL;
}

/* ---- typed reads of config.json ---------------------------------------------- */

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

/* An optional integer (absent or null: def). */
static int config_int_opt(int *out, const json_value *root, const char *key, int lo, int hi, int def) {
    const json_value *v = json_get(root, key);
    if (!v || v->type == JSON_NULL) { *out = def; return ALAB_OK; }
    return config_int(out, root, key, lo, hi);
}

static int config_bool(int *out, const json_value *root, const char *key, int def) {
    const json_value *v = json_get(root, key);
    if (!v) { *out = def; return ALAB_OK; }
    if (v->type != JSON_TRUE && v->type != JSON_FALSE)
        return alab_fail(ALAB_ECONFIG, "config.json: \"%s\" must be true or false", key);
    *out = v->type == JSON_TRUE;
    return ALAB_OK;
}

/* A number in (lo, hi] (absent: def). */
static int config_num(double *out, const json_value *root, const char *key, double lo, double hi, double def) {
    const json_value *v = json_get(root, key);
    if (!v) { *out = def; return ALAB_OK; }
    if (v->type != JSON_NUMBER || !(v->u.num > lo) || v->u.num > hi)
        return alab_fail(ALAB_ECONFIG, "config.json: \"%s\" must be a number in (%g, %g]", key, lo, hi);
    *out = v->u.num;
    return ALAB_OK;
}

/* ---- GPT-2 ------------------------------------------------------------------- */

static int parse_gpt2(alab_config *cfg, alab_arch *a, const json_value *root) {
    int rc;
    if ((rc = config_int(&cfg->vocab_size, root, "vocab_size", 1, ALAB_MAX_VOCAB)) ||
        (rc = config_int(&cfg->n_positions, root, "n_positions", 1, ALAB_MAX_POSITIONS)) ||
        (rc = config_int(&cfg->n_embd, root, "n_embd", 1, ALAB_MAX_EMBD)) ||
        (rc = config_int(&cfg->n_layer, root, "n_layer", 1, ALAB_MAX_LAYERS)) ||
        (rc = config_int(&cfg->n_head, root, "n_head", 1, ALAB_MAX_HEADS)))
        return rc;
    cfg->layer_norm_epsilon = 1e-5f;
    const json_value *v;
    if ((v = json_get(root, "layer_norm_epsilon"))) {
        if (v->type != JSON_NUMBER || !(v->u.num > 0) || v->u.num > 1)
            return alab_fail(ALAB_ECONFIG, "config.json: \"layer_norm_epsilon\" must be a number in (0, 1]");
        cfg->layer_norm_epsilon = (float)v->u.num;
    }
    if ((v = json_get(root, "activation_function")) &&
        (v->type != JSON_STRING || strcmp(v->u.str, "gelu_new") != 0))
        return alab_fail(ALAB_ECONFIG, "config.json: activation_function must be \"gelu_new\" (GPT-2's)");
    if ((v = json_get(root, "n_inner")) && v->type != JSON_NULL) {
        int64_t inner;
        if (json_int64(v, &inner) != 0 || inner != 4 * (int64_t)cfg->n_embd)
            return alab_fail(ALAB_ECONFIG, "config.json: n_inner must be null or 4 * n_embd");
    }
    if (cfg->n_embd % cfg->n_head != 0)
        return alab_fail(ALAB_ECONFIG, "config.json: n_embd (%d) is not a multiple of n_head (%d)",
                         cfg->n_embd, cfg->n_head);
    int cross;
    if ((rc = config_bool(&a->scale_attn_weights, root, "scale_attn_weights", 1)) ||
        (rc = config_bool(&a->scale_by_layer, root, "scale_attn_by_inverse_layer_idx", 0)) ||
        (rc = config_bool(&a->tied, root, "tie_word_embeddings", 1)) ||
        (rc = config_bool(&cross, root, "add_cross_attention", 0)))
        return rc;
    if (cross) return alab_fail(ALAB_ECONFIG, "config.json: add_cross_attention true is not supported (no encoder)");
    a->NKV = cfg->n_head;
    a->HS = cfg->n_embd / cfg->n_head;
    a->F = 4 * cfg->n_embd;
    a->eps = cfg->layer_norm_epsilon;
    a->mlp = MLP_GELU_TANH;
    a->qkv_bias = a->o_bias = a->mlp_bias = 1;
    a->n_positions_config = cfg->n_positions;
    return ALAB_OK;
}

/* ---- GPT-NeoX, Llama, Qwen2, Qwen3, Mistral, Gemma 3 ----------------------------- */

/* rope_scaling: null, absent, {"rope_type"|"type": "default"} or the llama3 rule. */
static int parse_rope_scaling(alab_arch *a, const json_value *root) {
    const json_value *rs = json_get(root, "rope_scaling");
    if (!rs || rs->type == JSON_NULL) return ALAB_OK;
    if (rs->type != JSON_OBJECT) return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling must be an object or null");
    const json_value *t = json_get(rs, "rope_type");
    if (!t) t = json_get(rs, "type");
    if (!t || t->type != JSON_STRING)
        return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling has no rope_type");
    if (strcmp(t->u.str, "default") == 0) return ALAB_OK;
    int rc;
    if (strcmp(t->u.str, "linear") == 0) { /* every frequency divided by factor (Gemma 3 1B/4B: 8 on global layers) */
        if ((rc = config_num(&a->rope_factor, rs, "factor", 0, 1e6, NAN))) return rc;
        if (isnan(a->rope_factor)) return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling (linear) needs factor");
        a->rope_linear = 1;
        return ALAB_OK;
    }
    if (strcmp(t->u.str, "llama3") != 0)
        return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling.rope_type \"%.40s\" is not supported (only llama3, linear or none)",
                         t->u.str);
    if ((rc = config_num(&a->rope_factor, rs, "factor", 0, 1e6, NAN)) ||
        (rc = config_num(&a->rope_low, rs, "low_freq_factor", 0, 1e6, NAN)) ||
        (rc = config_num(&a->rope_high, rs, "high_freq_factor", 0, 1e6, NAN)) ||
        (rc = config_num(&a->rope_orig, rs, "original_max_position_embeddings", 0, 1e9, NAN)))
        return rc;
    if (isnan(a->rope_factor) || isnan(a->rope_low) || isnan(a->rope_high) || isnan(a->rope_orig))
        return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling (llama3) needs factor, low_freq_factor, "
                                       "high_freq_factor and original_max_position_embeddings");
    if (!(a->rope_high > a->rope_low))
        return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling.high_freq_factor must exceed low_freq_factor");
    a->rope_llama3 = 1;
    return ALAB_OK;
}

/* A key that must be absent or null: a setting the engine cannot run exactly (what: why). */
static int config_null(const json_value *root, const char *key, const char *what) {
    const json_value *v = json_get(root, key);
    if (v && v->type != JSON_NULL)
        return alab_fail(ALAB_ECONFIG, "config.json: %s must be null or absent (%s)", key, what);
    return ALAB_OK;
}

/* Gemma 3's own settings (Gemma3TextConfig's defaults where a key is absent): the layer kinds of layer_types (or of
 * sliding_window_pattern: layer i slides unless (i + 1) % pattern == 0), their window and local rotary base, the
 * score scale query_pre_attn_scalar^-0.5, the embedding scale sqrt(hidden_size), and the refusals. */
static int parse_gemma3(alab_config *cfg, alab_arch *a, const json_value *root) {
    int rc, bidir = 0;
    double qpas = 0, local = 0;
    if ((rc = config_null(root, "attn_logit_softcapping", "a tanh cap on the scores is not implemented")) ||
        (rc = config_null(root, "final_logit_softcapping", "a tanh cap on the logits is not implemented")) ||
        (rc = config_bool(&bidir, root, "use_bidirectional_attention", 0)))
        return rc;
    if (bidir) return alab_fail(ALAB_ECONFIG, "config.json: use_bidirectional_attention true is not supported (a causal LM is expected)");
    if ((rc = config_num(&qpas, root, "query_pre_attn_scalar", 0, 1e12, 256.0)) ||
        (rc = config_num(&local, root, "rope_local_base_freq", 0, 1e12, 10000.0)))
        return rc;
    a->attn_scale = pow(qpas, -0.5);
    /* 1e-76 made the scale infinite in f32 and every logit NaN: the scale is held to what --scale may be */
    if (!((float)a->attn_scale <= ALAB_MAX_SCALE))
        return alab_fail(ALAB_ECONFIG, "config.json: query_pre_attn_scalar = %g gives the score scale %g "
                         "(query_pre_attn_scalar^-0.5), over %g: it must be at least %g", qpas, a->attn_scale,
                         (double)ALAB_MAX_SCALE, 1.0 / ((double)ALAB_MAX_SCALE * ALAB_MAX_SCALE));
    a->rope_local_theta = local;
    a->embed_scale = (float)sqrt((double)cfg->n_embd);
    const int L = cfg->n_layer;
    const json_value *lt = json_get(root, "layer_types");
    if (lt && lt->type != JSON_NULL) {
        if (lt->type != JSON_ARRAY || (int)lt->n != L)
            return alab_fail(ALAB_ECONFIG, "config.json: layer_types must be an array of num_hidden_layers (%d) strings", L);
        for (int l = 0; l < L; l++) {
            const json_value *e = &lt->u.items[l];
            if (e->type == JSON_STRING && strcmp(e->u.str, "sliding_attention") == 0) a->rope_local[l] = 1;
            else if (!(e->type == JSON_STRING && strcmp(e->u.str, "full_attention") == 0))
                return alab_fail(ALAB_ECONFIG, "config.json: layer_types[%d] must be \"sliding_attention\" or \"full_attention\"", l);
        }
    } else {
        int pattern = 6;
        if ((rc = config_int_opt(&pattern, root, "sliding_window_pattern", 1, 1 << 20, 6))) return rc;
        for (int l = 0; l < L; l++) a->rope_local[l] = (l + 1) % pattern != 0;
    }
    int any = 0, window = 0;
    for (int l = 0; l < L; l++) any |= a->rope_local[l];
    if ((rc = config_int_opt(&window, root, "sliding_window", 1, 1 << 30, 4096))) return rc;
    if (any && json_get(root, "sliding_window") && json_get(root, "sliding_window")->type == JSON_NULL)
        return alab_fail(ALAB_ECONFIG, "config.json: sliding_window is null but layer_types has sliding layers");
    for (int l = 0; l < L; l++) a->layer_window[l] = a->rope_local[l] ? window : 0;
    return ALAB_OK;
}

static int parse_hf(alab_config *cfg, alab_arch *a, const json_value *root) {
    const alab_family *f = a->fam;
    const int neox = f->qkv == QKV_NEOX_FUSED, qwen3 = strcmp(f->model_type, "qwen3") == 0;
    const int mistral = strcmp(f->model_type, "mistral") == 0, gemma = strcmp(f->model_type, "gemma3_text") == 0;
    int rc, maxpos = 0;
    if ((rc = config_int(&cfg->vocab_size, root, "vocab_size", 1, ALAB_MAX_VOCAB)) ||
        (rc = config_int(&cfg->n_embd, root, "hidden_size", 1, ALAB_MAX_EMBD)) ||
        (rc = config_int(&cfg->n_layer, root, "num_hidden_layers", 1, ALAB_MAX_LAYERS)) ||
        (rc = config_int(&cfg->n_head, root, "num_attention_heads", 1, ALAB_MAX_HEADS)) ||
        (rc = config_int(&a->F, root, "intermediate_size", 1, 8 * ALAB_MAX_EMBD)) ||
        (rc = config_int(&maxpos, root, "max_position_embeddings", 1, 1 << 24)))
        return rc;
    a->n_positions_config = maxpos;
    /* rotary positions have no table: the context is capped at the engine's limit */
    cfg->n_positions = maxpos < ALAB_MAX_POSITIONS ? maxpos : ALAB_MAX_POSITIONS;
    if (neox) {
        a->NKV = cfg->n_head;
        if (cfg->n_embd % cfg->n_head)
            return alab_fail(ALAB_ECONFIG, "config.json: hidden_size (%d) is not a multiple of num_attention_heads (%d)",
                             cfg->n_embd, cfg->n_head);
        a->HS = cfg->n_embd / cfg->n_head;
    } else {
        /* Gemma3TextConfig's default num_key_value_heads is 4, the others' num_attention_heads */
        if ((rc = config_int_opt(&a->NKV, root, "num_key_value_heads", 1, ALAB_MAX_HEADS, gemma ? 4 : cfg->n_head))) return rc;
        /* Qwen3Config's default head_dim is 128, Gemma3TextConfig's 256; the others derive it */
        int def_hs = qwen3 ? 128 : gemma ? 256 : (cfg->n_embd % cfg->n_head ? 0 : cfg->n_embd / cfg->n_head);
        if ((rc = config_int_opt(&a->HS, root, "head_dim", 1, 1024, def_hs))) return rc;
        if (a->HS == 0)
            return alab_fail(ALAB_ECONFIG, "config.json: hidden_size (%d) is not a multiple of num_attention_heads (%d) and no head_dim",
                             cfg->n_embd, cfg->n_head);
        if (cfg->n_head % a->NKV)
            return alab_fail(ALAB_ECONFIG, "config.json: num_attention_heads (%d) is not a multiple of num_key_value_heads (%d)",
                             cfg->n_head, a->NKV);
    }
    if ((int64_t)cfg->n_head * a->HS > 4 * ALAB_MAX_EMBD)
        return alab_fail(ALAB_ECONFIG, "config.json: num_attention_heads * head_dim is over %d", 4 * ALAB_MAX_EMBD);

    /* norm epsilon */
    double eps = 0;
    if ((rc = config_num(&eps, root, neox ? "layer_norm_eps" : "rms_norm_eps", 0, 1, neox ? 1e-5 : 1e-6))) return rc;
    a->eps = (float)eps;
    cfg->layer_norm_epsilon = a->eps;

    /* activation (Gemma 3's MLP reads hidden_activation, whatever hidden_act says) */
    const char *act_key = gemma ? "hidden_activation" : "hidden_act";
    const json_value *act = json_get(root, act_key);
    const char *act_s = act && act->type == JSON_STRING ? act->u.str
                        : (act ? "" : (neox ? "gelu" : gemma ? "gelu_pytorch_tanh" : "silu"));
    if (gemma) {
        if (strcmp(act_s, "gelu_pytorch_tanh") != 0)
            return alab_fail(ALAB_ECONFIG, "config.json: hidden_activation \"%.40s\" is not supported for gemma3_text "
                                           "(gelu_pytorch_tanh)", act_s);
        a->mlp = MLP_GEGLU;
    } else if (neox && strcmp(act_s, "gelu") == 0) a->mlp = MLP_GELU_EXACT;
    else if (neox && strcmp(act_s, "gelu_new") == 0) a->mlp = MLP_GELU_TANH;
    else if (!neox && strcmp(act_s, "silu") == 0) a->mlp = MLP_SWIGLU;
    else return alab_fail(ALAB_ECONFIG, "config.json: hidden_act \"%.40s\" is not supported for %s (%s)", act_s,
                          f->model_type, neox ? "gelu or gelu_new" : "silu");

    /* rotary positions */
    double theta = 0, frac = 0;
    /* transformers 5 writes rope_theta and rope_scaling into rope_parameters; that layout is not read (yet): refused
     * rather than run with the defaults */
    if ((rc = config_null(root, "rope_parameters", "the transformers 5 layout of the rotary settings is not read; "
                                                   "rope_theta and rope_scaling are")))
        return rc;
    const char *theta_key = neox && !json_get(root, "rope_theta") ? "rotary_emb_base" : "rope_theta";
    if ((rc = config_num(&theta, root, theta_key, 0, 1e12, gemma ? 1e6 : 10000.0))) return rc;
    a->rope_theta = theta;
    const char *frac_key = neox && !json_get(root, "partial_rotary_factor") ? "rotary_pct" : "partial_rotary_factor";
    /* Gemma 3 rotates every dimension of a head */
    if (gemma) frac = 1.0;
    else if ((rc = config_num(&frac, root, frac_key, 0, 1, neox ? 0.25 : 1.0))) return rc;
    a->rot_dims = (int)(a->HS * frac); /* int() of Python: truncation */
    if (a->rot_dims % 2)
        return alab_fail(ALAB_ECONFIG, "config.json: %s gives %d rotary dimensions of %d, an odd number", frac_key,
                         a->rot_dims, a->HS);
    if ((rc = parse_rope_scaling(a, root))) return rc;

    /* the rest of each family */
    int sliding;
    /* HF's default: tied for Gemma 3, untied for the others here */
    if ((rc = config_bool(&a->tied, root, "tie_word_embeddings", gemma))) return rc;
    if (mistral) { /* no biases (MistralAttention, MistralMLP); sliding_window: every layer's window, 4096 if absent */
        int window = 0;
        if ((rc = config_int_opt(&window, root, "sliding_window", 1, 1 << 30, 0))) return rc;
        if (!json_get(root, "sliding_window")) window = 4096; /* MistralConfig's default; null: no window */
        for (int l = 0; l < cfg->n_layer; l++) a->layer_window[l] = window;
    } else if (gemma) {
        int bias;
        if ((rc = config_bool(&bias, root, "attention_bias", 0))) return rc;
        a->qkv_bias = a->o_bias = bias;
        if ((rc = parse_gemma3(cfg, a, root))) return rc;
    } else if (neox) {
        int bias;
        if ((rc = config_bool(&a->parallel_residual, root, "use_parallel_residual", 1)) ||
            (rc = config_bool(&bias, root, "attention_bias", 1)))
            return rc;
        a->qkv_bias = a->o_bias = bias;
        a->mlp_bias = 1;
    } else if (strcmp(f->model_type, "qwen2") == 0) {
        a->qkv_bias = 1;
        a->o_bias = 0;
    } else {
        int bias;
        if ((rc = config_bool(&bias, root, "attention_bias", 0))) return rc;
        /* Qwen3's MLP has no biases whatever the config says; Llama's follow mlp_bias */
        if (!qwen3 && (rc = config_bool(&a->mlp_bias, root, "mlp_bias", 0))) return rc;
        a->qkv_bias = a->o_bias = bias;
        if (strcmp(f->model_type, "llama") == 0) {
            int tp;
            if ((rc = config_int_opt(&tp, root, "pretraining_tp", 1, 1 << 16, 1))) return rc;
            (void)tp; /* the split is the same product, only computed in slices */
        }
    }
    if (!neox && !mistral && !gemma) { /* Qwen2/Qwen3's switch (with max_window_layers) */
        if ((rc = config_bool(&sliding, root, "use_sliding_window", 0))) return rc;
        if (sliding) return alab_fail(ALAB_ECONFIG, "config.json: use_sliding_window true is not supported");
    }
    a->qk_norm = qwen3 || gemma;
    a->scale_attn_weights = 1;
    return ALAB_OK;
}

/* What the forward pass computes from the config alone must be finite: the score scale of every layer (positive,
 * at most ALAB_MAX_SCALE, as a run's own --scale), the norms' epsilon as the f32 it is used as (0 would divide a
 * zero row by 0), every rotary frequency and its angle at the last position. The ranges of the fields keep most
 * values sane; these are the combinations they let through (issue 53 item 4). */
static int check_finite(const alab_config *cfg, const alab_arch *a) {
    if (!(a->eps > 0) || !isfinite(a->eps))
        return alab_fail(ALAB_ECONFIG, "config.json: the norm epsilon %g is 0 (or not finite) as a float", (double)a->eps);
    for (int l = 0; l < cfg->n_layer; l++) {
        const float s = alab_arch_attn_scale(a, l);
        if (!(s > 0) || !(s <= ALAB_MAX_SCALE))
            return alab_fail(ALAB_ECONFIG, "config.json: the score scale of layer %d is %g; it must be in (0, %g]", l,
                             (double)s, (double)ALAB_MAX_SCALE);
    }
    if (a->embed_scale != 0.0f && !isfinite(a->embed_scale))
        return alab_fail(ALAB_ECONFIG, "config.json: the embedding scale is not finite");
    if (a->fam->pos != POS_ROTARY) return ALAB_OK;
    for (int local = 0; local <= (a->rope_local_theta > 0); local++)
        for (int i = 0; i < a->rot_dims / 2; i++) {
            const double f = alab_rope_inv_freq(a, i, local);
            if (!isfinite(f) || !(f >= 0) || !isfinite(f * (double)cfg->n_positions))
                return alab_fail(ALAB_ECONFIG, "config.json: %s and rope_scaling make rotary frequency %d %g, whose "
                                 "angles are not finite", local ? "rope_local_base_freq" : "rope_theta", i, f);
        }
    return ALAB_OK;
}
/* ---- rotary frequencies (forward.c's tables and the config checks below read them) ---- */

/* The frequency of pair i of the rotary dimensions (Hugging Face's inv_freq,
 * with the linear or llama3 rope_scaling rule), in double precision; local:
 * Gemma 3's sliding layers, base rope_local_theta and no scaling. */
double alab_rope_inv_freq(const alab_arch *a, int i, int local) {
    const double dim = a->rot_dims;
    double f = 1.0 / pow(local ? a->rope_local_theta : a->rope_theta, (2.0 * i) / dim);
    if (local) return f;
    if (a->rope_linear) return f / a->rope_factor;
    if (!a->rope_llama3) return f;
    const double pi = 3.14159265358979323846;
    const double low_wavelen = a->rope_orig / a->rope_low, high_wavelen = a->rope_orig / a->rope_high;
    const double wavelen = 2 * pi / f;
    if (wavelen > low_wavelen) return f / a->rope_factor;  /* low frequencies: scaled */
    if (wavelen < high_wavelen) return f;                  /* high frequencies: kept */
    const double smooth = (a->rope_orig / wavelen - a->rope_low) / (a->rope_high - a->rope_low);
    return (1 - smooth) * f / a->rope_factor + smooth * f;  /* in between: interpolated */
}


int alab_parse_config(alab_config *cfg, alab_arch *a, const char *text, size_t len) {
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
    memset(a, 0, sizeof *a);
    const json_value *mt = json_get(root, "model_type");
    if (mt && mt->type != JSON_STRING) {
        json_free(&doc);
        return alab_fail(ALAB_ECONFIG, "config.json: model_type must be a string");
    }
    a->fam = alab_family_find(mt ? mt->u.str : "gpt2");
    if (!a->fam) {
        rc = alab_fail(ALAB_ECONFIG, "config.json: model_type \"%.40s\" is not supported (gpt2, gpt_neox, llama, qwen2, qwen3, "
                       "mistral, gemma3_text)",
                       mt->u.str);
        json_free(&doc);
        return rc;
    }
    cfg->family = a->fam->model_type;
    rc = a->fam->qkv == QKV_CONV1D_FUSED ? parse_gpt2(cfg, a, root) : parse_hf(cfg, a, root);
    json_free(&doc);
    if (!rc) rc = check_finite(cfg, a);
    if (rc) return rc;
    cfg->n_kv_head = a->NKV;
    cfg->head_dim = a->HS;
    return ALAB_OK;
}
