/* family.c — the model families as data, and config.json read into them.
 *
 * Each family is one row of FAMILIES: its norm, positions, attention
 * projections and tensor names. Its sizes and remaining settings (kv heads,
 * MLP, residual, tying, rotary, biases) come from config.json, read by one
 * function per config dialect: GPT-2's (n_embd, n_layer, ...) and the
 * common one of GPT-NeoX, Llama, Qwen2 and Qwen3 (hidden_size, ...).
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
#define LLAMA_NAMES                                                                                          \
    .embed = "model.embed_tokens.weight", .final_norm_w = "model.norm.weight", .lm_head = "lm_head.weight",  \
    .ln1_w = "model." L_ "input_layernorm.weight", .ln2_w = "model." L_ "post_attention_layernorm.weight",   \
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

/* ---- GPT-NeoX, Llama, Qwen2, Qwen3 ------------------------------------------- */

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
    if (strcmp(t->u.str, "llama3") != 0)
        return alab_fail(ALAB_ECONFIG, "config.json: rope_scaling.rope_type \"%.40s\" is not supported (only llama3 or none)",
                         t->u.str);
    int rc;
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

static int parse_hf(alab_config *cfg, alab_arch *a, const json_value *root) {
    const alab_family *f = a->fam;
    const int neox = f->qkv == QKV_NEOX_FUSED, qwen3 = strcmp(f->model_type, "qwen3") == 0;
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
        if ((rc = config_int_opt(&a->NKV, root, "num_key_value_heads", 1, ALAB_MAX_HEADS, cfg->n_head))) return rc;
        /* Qwen3Config's default head_dim is 128; the others derive it */
        int def_hs = qwen3 ? 128 : (cfg->n_embd % cfg->n_head ? 0 : cfg->n_embd / cfg->n_head);
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

    /* activation */
    const json_value *act = json_get(root, "hidden_act");
    const char *act_s = act && act->type == JSON_STRING ? act->u.str : (act ? "" : (neox ? "gelu" : "silu"));
    if (neox && strcmp(act_s, "gelu") == 0) a->mlp = MLP_GELU_EXACT;
    else if (neox && strcmp(act_s, "gelu_new") == 0) a->mlp = MLP_GELU_TANH;
    else if (!neox && strcmp(act_s, "silu") == 0) a->mlp = MLP_SWIGLU;
    else return alab_fail(ALAB_ECONFIG, "config.json: hidden_act \"%.40s\" is not supported for %s (%s)", act_s,
                          f->model_type, neox ? "gelu or gelu_new" : "silu");

    /* rotary positions */
    double theta = 0, frac = 0;
    const char *theta_key = neox && !json_get(root, "rope_theta") ? "rotary_emb_base" : "rope_theta";
    if ((rc = config_num(&theta, root, theta_key, 0, 1e12, 10000.0))) return rc;
    a->rope_theta = theta;
    const char *frac_key = neox && !json_get(root, "partial_rotary_factor") ? "rotary_pct" : "partial_rotary_factor";
    if ((rc = config_num(&frac, root, frac_key, 0, 1, neox ? 0.25 : 1.0))) return rc;
    a->rot_dims = (int)(a->HS * frac); /* int() of Python: truncation */
    if (a->rot_dims % 2)
        return alab_fail(ALAB_ECONFIG, "config.json: %s gives %d rotary dimensions of %d, an odd number", frac_key,
                         a->rot_dims, a->HS);
    if ((rc = parse_rope_scaling(a, root))) return rc;

    /* the rest of each family */
    int sliding;
    if ((rc = config_bool(&a->tied, root, "tie_word_embeddings", 0))) return rc; /* every HF default here */
    if (neox) {
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
    if (!neox) {
        if ((rc = config_bool(&sliding, root, "use_sliding_window", 0))) return rc;
        if (sliding) return alab_fail(ALAB_ECONFIG, "config.json: use_sliding_window true is not supported");
    }
    a->qk_norm = qwen3;
    a->scale_attn_weights = 1;
    return ALAB_OK;
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
        rc = alab_fail(ALAB_ECONFIG, "config.json: model_type \"%.40s\" is not supported (gpt2, gpt_neox, llama, qwen2, qwen3)",
                       mt->u.str);
        json_free(&doc);
        return rc;
    }
    cfg->family = a->fam->model_type;
    rc = a->fam->qkv == QKV_CONV1D_FUSED ? parse_gpt2(cfg, a, root) : parse_hf(cfg, a, root);
    json_free(&doc);
    if (rc) return rc;
    cfg->n_kv_head = a->NKV;
    cfg->head_dim = a->HS;
    return ALAB_OK;
}
