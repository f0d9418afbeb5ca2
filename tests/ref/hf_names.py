"""hf_names.py — the tensors (names and shapes, as stored) of a Hugging Face checkpoint of each family attnlab
loads, derived from config.json the way the Hugging Face modeling code names its parameters
(GPT2LMHeadModel, GPTNeoXForCausalLM, LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, MistralForCausalLM,
Gemma3ForCausalLM; state_dict order).

Written from the HF naming, not from the C loader: the tests compare the loader's list with this one.
Only parameters are listed (no non-persistent buffers such as rotary inv_freq or GPT-2's attn.bias masks).
"""
from collections import OrderedDict


def _hf(cfg):
    mt = cfg.get("model_type", "gpt2")
    C, L, NH, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["vocab_size"]
    F = cfg["intermediate_size"]
    return mt, C, L, NH, V, F


def expected_tensors(cfg):
    """OrderedDict name -> shape tuple."""
    t = OrderedDict()
    mt = cfg.get("model_type", "gpt2")
    if mt == "gpt2":
        C, L, V, P = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"], cfg["n_positions"]
        F = cfg.get("n_inner") or 4 * C
        t["wte.weight"] = (V, C)
        t["wpe.weight"] = (P, C)
        for i in range(L):
            h = "h.%d." % i
            t[h + "ln_1.weight"] = (C,)
            t[h + "ln_1.bias"] = (C,)
            t[h + "attn.c_attn.weight"] = (C, 3 * C)     # Conv1D: (in, out)
            t[h + "attn.c_attn.bias"] = (3 * C,)
            t[h + "attn.c_proj.weight"] = (C, C)
            t[h + "attn.c_proj.bias"] = (C,)
            t[h + "ln_2.weight"] = (C,)
            t[h + "ln_2.bias"] = (C,)
            t[h + "mlp.c_fc.weight"] = (C, F)
            t[h + "mlp.c_fc.bias"] = (F,)
            t[h + "mlp.c_proj.weight"] = (F, C)
            t[h + "mlp.c_proj.bias"] = (C,)
        t["ln_f.weight"] = (C,)
        t["ln_f.bias"] = (C,)
        if not cfg.get("tie_word_embeddings", True):
            t["lm_head.weight"] = (V, C)
        return t
    mt, C, L, NH, V, F = _hf(cfg)
    if mt == "gpt_neox":
        bias = cfg.get("attention_bias", True)
        t["gpt_neox.embed_in.weight"] = (V, C)
        for i in range(L):
            p = "gpt_neox.layers.%d." % i
            t[p + "input_layernorm.weight"] = (C,)
            t[p + "input_layernorm.bias"] = (C,)
            t[p + "post_attention_layernorm.weight"] = (C,)
            t[p + "post_attention_layernorm.bias"] = (C,)
            t[p + "attention.query_key_value.weight"] = (3 * C, C)   # Linear: (out, in)
            if bias:
                t[p + "attention.query_key_value.bias"] = (3 * C,)
            t[p + "attention.dense.weight"] = (C, C)
            if bias:
                t[p + "attention.dense.bias"] = (C,)
            t[p + "mlp.dense_h_to_4h.weight"] = (F, C)
            t[p + "mlp.dense_h_to_4h.bias"] = (F,)
            t[p + "mlp.dense_4h_to_h.weight"] = (C, F)
            t[p + "mlp.dense_4h_to_h.bias"] = (C,)
        t["gpt_neox.final_layer_norm.weight"] = (C,)
        t["gpt_neox.final_layer_norm.bias"] = (C,)
        if not cfg.get("tie_word_embeddings", False):
            t["embed_out.weight"] = (V, C)
        return t
    gemma = mt == "gemma3_text"
    NKV = cfg.get("num_key_value_heads") or (4 if gemma else NH)        # Gemma3TextConfig's default is 4
    HS = cfg.get("head_dim") or {"qwen3": 128, "gemma3_text": 256}.get(mt, C // NH)
    # MistralAttention / MistralMLP have no biases; Gemma 3's q/k/v/o follow attention_bias, its MLP has none
    qkv_bias = True if mt == "qwen2" else (False if mt == "mistral" else cfg.get("attention_bias", False))
    o_bias = False if mt in ("qwen2", "mistral") else cfg.get("attention_bias", False)
    mlp_bias = False if mt in ("qwen2", "qwen3", "mistral", "gemma3_text") else cfg.get("mlp_bias", False)
    t["model.embed_tokens.weight"] = (V, C)
    for i in range(L):
        p = "model.layers.%d." % i
        t[p + "self_attn.q_proj.weight"] = (NH * HS, C)
        if qkv_bias:
            t[p + "self_attn.q_proj.bias"] = (NH * HS,)
        t[p + "self_attn.k_proj.weight"] = (NKV * HS, C)
        if qkv_bias:
            t[p + "self_attn.k_proj.bias"] = (NKV * HS,)
        t[p + "self_attn.v_proj.weight"] = (NKV * HS, C)
        if qkv_bias:
            t[p + "self_attn.v_proj.bias"] = (NKV * HS,)
        t[p + "self_attn.o_proj.weight"] = (C, NH * HS)
        if o_bias:
            t[p + "self_attn.o_proj.bias"] = (C,)
        if mt in ("qwen3", "gemma3_text"):
            t[p + "self_attn.q_norm.weight"] = (HS,)
            t[p + "self_attn.k_norm.weight"] = (HS,)
        t[p + "mlp.gate_proj.weight"] = (F, C)
        if mlp_bias:
            t[p + "mlp.gate_proj.bias"] = (F,)
        t[p + "mlp.up_proj.weight"] = (F, C)
        if mlp_bias:
            t[p + "mlp.up_proj.bias"] = (F,)
        t[p + "mlp.down_proj.weight"] = (C, F)
        if mlp_bias:
            t[p + "mlp.down_proj.bias"] = (C,)
        t[p + "input_layernorm.weight"] = (C,)
        t[p + "post_attention_layernorm.weight"] = (C,)
        if gemma:
            t[p + "pre_feedforward_layernorm.weight"] = (C,)
            t[p + "post_feedforward_layernorm.weight"] = (C,)
    t["model.norm.weight"] = (C,)
    if not cfg.get("tie_word_embeddings", gemma):                    # Gemma 3 ties by default
        t["lm_head.weight"] = (V, C)
    return t


def tensor_list_text(cfg):
    """One line per tensor, sorted by name: 'name d0,d1'."""
    return "".join("%s %s\n" % (n, ",".join(str(d) for d in s)) for n, s in sorted(expected_tensors(cfg).items()))
