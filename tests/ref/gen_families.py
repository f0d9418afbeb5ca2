#!/usr/bin/python3
"""gen_families.py — seeded synthetic checkpoints of every family in the exact Hugging Face layout, and their
goldens from the independent float64 reference (families_ref.py).

    /usr/bin/python3 tests/ref/gen_families.py [--fixtures tests/fixtures]

Writes tests/fixtures/families/<name>/ (config.json with the keys HF writes, model.safetensors or shards +
model.safetensors.index.json, vocab.json + merges.txt: GPT-2's tokenizer truncated to its first 20 merges) and
tests/fixtures/families/golden.json. Deterministic: every tensor comes from its own numpy PCG64 stream seeded with
(seed, crc32(name)), the goldens in golden.bin (float32, little-endian), indexed by golden.json: each case's "attentions" (L, NH, T, T),
"logits" (V), "q" and "k" (T, HS) are [offset, count] in floats.

The checkpoints (each exercising what its family has that the others do not):
  gpt2-untied   untied lm_head.weight, scale_attn_by_inverse_layer_idx
  gpt2-noscale  scale_attn_weights false
  neox          GPT-NeoX: per-head interleaved query_key_value, rotary_pct 0.25, parallel residual, exact GELU,
                untied embed_out, F16 weights (as Pythia's)
  llama         Llama 3: GQA (2 query heads per key/value head), llama3 rope_scaling with
                original_max_position_embeddings 8 (so the rule changes the frequencies at these positions), SwiGLU,
                tied head, BF16 weights
  smollm2       SmolLM2 (Llama architecture): 3 query heads per key/value head (as 9/3 in SmolLM2-135M), no
                head_dim key, rope_theta 1e5 without rope_scaling, tied, BF16, its tokenizer.json (Digits then
                ByteLevel, no BOS); the page's local-folder test loads it
  qwen2         Qwen2: q/k/v biases, no o_proj bias, GQA, tied (as Qwen2.5-0.5B), F16 weights
  qwen3         Qwen3: q_norm/k_norm, head_dim 16 != hidden/heads = 8, GQA, tied, BF16, two shards + index
  mistral       Mistral: sliding_window 4 on every layer (10 tokens, so the window cuts from row 4 on), explicit
                head_dim 12 != hidden/heads = 8, GQA, untied, F32
  gemma3        Gemma 3 (Gemma3ForCausalLM): layer_types [sliding, full] with sliding_window 4 (and the real configs'
                _sliding_window_pattern 6, which layer_types overrides), (1 + w) norms, four norms per layer,
                q_norm/k_norm, GeGLU, query_pre_attn_scalar 24 != head_dim 16, one key/value head (as 270M/1B),
                rope_local_base_freq 1e4 on the sliding layer, rope_theta 1e6 with linear rope_scaling 8 (as 1B) on
                the full one, sqrt(hidden) embedding scale, tied, BF16; 10 tokens
The last two add cases for their windows: causal (the layer's own window), the window removed (window:T), a hard do
onto a key outside the window, a soft do inside it, and per-layer masks naming "causal".
"""
import argparse
import json
import os
import shutil
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import round_to_dtype, write_safetensors  # noqa: E402
from make_checkpoint import GPT2_TOKENIZER_DIR, tiny_tokenizer  # noqa: E402
from hf_names import expected_tensors  # noqa: E402
import families_ref  # noqa: E402

SEED = 4321
N_MERGES = 20
V_TOK = 256 + N_MERGES + 1  # 277: bytes, merges, <|endoftext|>
EOT = V_TOK - 1

CONFIGS = {
    "gpt2-untied": {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": EOT, "embd_pdrop": 0.1, "eos_token_id": EOT, "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 32, "n_embd": 8, "n_head": 2, "n_inner": None,
        "n_layer": 2, "n_positions": 32, "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": True,
        "scale_attn_weights": True, "tie_word_embeddings": False, "torch_dtype": "float32", "vocab_size": V_TOK,
    },
    "gpt2-noscale": {
        "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "bos_token_id": EOT,
        "eos_token_id": EOT, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 32, "n_embd": 8,
        "n_head": 2, "n_inner": None, "n_layer": 2, "n_positions": 32, "scale_attn_weights": False,
        "torch_dtype": "float32", "vocab_size": V_TOK,
    },
    "neox": {
        "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": EOT, "eos_token_id": EOT, "hidden_act": "gelu",
        "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 48, "layer_norm_eps": 1e-05,
        "max_position_embeddings": 64, "model_type": "gpt_neox", "num_attention_heads": 2, "num_hidden_layers": 2,
        "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": False, "torch_dtype": "float16",
        "use_cache": True, "use_parallel_residual": True, "vocab_size": 280,
    },
    "llama": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": EOT, "eos_token_id": EOT, "head_dim": 8, "hidden_act": "silu", "hidden_size": 32,
        "initializer_range": 0.02, "intermediate_size": 40, "max_position_embeddings": 64, "mlp_bias": False,
        "model_type": "llama", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 4.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8, "rope_type": "llama3"},
        "rope_theta": 10000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True,
        "vocab_size": V_TOK + 3,
    },
    "smollm2": {
        "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": EOT, "eos_token_id": EOT, "hidden_act": "silu", "hidden_size": 48,
        "initializer_range": 0.041666666666666664, "intermediate_size": 64, "is_llama_config": True,
        "max_position_embeddings": 64, "model_type": "llama", "num_attention_heads": 6, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_interleaved": False,
        "rope_scaling": None, "rope_theta": 100000, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "use_cache": True, "vocab_size": V_TOK,
    },
    "qwen2": {
        "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": EOT, "eos_token_id": EOT,
        "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 40,
        "max_position_embeddings": 64, "max_window_layers": 2, "model_type": "qwen2", "num_attention_heads": 4,
        "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": None,
        "rope_theta": 1000000.0, "sliding_window": 64, "tie_word_embeddings": True, "torch_dtype": "float16",
        "use_cache": True, "use_sliding_window": False, "vocab_size": V_TOK,
    },
    "qwen3": {
        "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
        "bos_token_id": EOT, "eos_token_id": EOT, "head_dim": 16, "hidden_act": "silu", "hidden_size": 32,
        "initializer_range": 0.02, "intermediate_size": 40, "max_position_embeddings": 64, "max_window_layers": 2,
        "model_type": "qwen3", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": None,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False,
        "vocab_size": V_TOK,
    },
}
CONFIGS["mistral"] = {
    "architectures": ["MistralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": EOT, "eos_token_id": EOT,
    "head_dim": 12, "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 40,
    "max_position_embeddings": 64, "model_type": "mistral", "num_attention_heads": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4,
    "tie_word_embeddings": False, "torch_dtype": "float32", "use_cache": True, "vocab_size": V_TOK,
}
CONFIGS["gemma3"] = {
    "_sliding_window_pattern": 6, "architectures": ["Gemma3ForCausalLM"], "attention_bias": False,
    "attention_dropout": 0.0, "attn_logit_softcapping": None, "bos_token_id": EOT, "eos_token_id": EOT,
    "final_logit_softcapping": None, "head_dim": 16, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 32,
    "initializer_range": 0.02, "intermediate_size": 48, "layer_types": ["sliding_attention", "full_attention"],
    "max_position_embeddings": 64, "model_type": "gemma3_text", "num_attention_heads": 4, "num_hidden_layers": 2,
    "num_key_value_heads": 1, "pad_token_id": 0, "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-06,
    "rope_local_base_freq": 10000.0, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "rope_theta": 1000000.0, "sliding_window": 4, "torch_dtype": "bfloat16", "use_bidirectional_attention": False,
    "use_cache": True, "vocab_size": V_TOK,
}
DTYPE = {"llama": "BF16", "smollm2": "BF16", "qwen3": "BF16", "neox": "F16", "qwen2": "F16", "gemma3": "BF16"}
SHARDS = {"qwen3": 2}

IDS = [40, 81, 33, 200, 17, 81]
IDS_LONG = [40, 81, 33, 200, 17, 81, 5, 250, 99, 12]  # the sliding-window families: T = 10 > 2 x the window 4
SLIDING = ("mistral", "gemma3")
GPT2_CASES = ("plain", "hard", "scaleK", "swapQK_all", "capture")  # the GPT-2 variants differ in their scale and head only


def std_of(name):
    if name.endswith("norm.weight") or name.endswith("ln_1.weight") or name.endswith("ln_2.weight") \
            or name.endswith("ln_f.weight") or "layernorm.weight" in name or name.endswith("final_layer_norm.weight"):
        return None  # 1 + 0.1 N
    if name.endswith(".bias"):
        return 0.1
    if any(s in name for s in ("q_proj", "k_proj", "c_attn", "query_key_value")):
        return 0.3
    if "wpe" in name:
        return 0.1
    return 0.25


def make_tensor(name, shape, dtype):
    rng = np.random.Generator(np.random.PCG64([SEED, zlib.crc32(name.encode())]))
    s = std_of(name)
    x = rng.standard_normal(shape)
    x = 1.0 + 0.1 * x if s is None else s * x
    return round_to_dtype(x.astype(np.float32), dtype)


LLAMA3_PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def write_llama3_tokenizer(out, vocab, merges_text):
    """tokenizer.json + tokenizer_config.json as Llama 3.2 ships them (Llama 3's Split pattern, ByteLevel,
    a TemplateProcessing that puts <|begin_of_text|> first), over the tiny vocabulary; the two special tokens
    take the ids 276 and 277 (<|endoftext|>'s place and the next), config vocab_size 280 (padded, as real checkpoints are)."""
    v = {k: i for k, i in vocab.items() if k != "<|endoftext|>"}
    bos, eos = V_TOK - 1, V_TOK
    merges = [l for l in merges_text.split("\n")[1:] if l]
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, c in ((bos, "<|begin_of_text|>"), (eos, "<|end_of_text|>"))]
    tok = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [bos], "tokens": ["<|begin_of_text|>"]}}}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": v, "merges": merges},
    }
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(tok, indent=2, ensure_ascii=False) + "\n")
    cfg = {"bos_token": "<|begin_of_text|>", "clean_up_tokenization_spaces": True, "eos_token": "<|end_of_text|>",
           "model_input_names": ["input_ids", "attention_mask"], "model_max_length": 131072,
           "tokenizer_class": "PreTrainedTokenizerFast"}
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2) + "\n")


def write_smollm2_tokenizer(out, vocab, merges_text):
    """tokenizer.json + tokenizer_config.json in SmolLM2's form: Digits(individual_digits) then ByteLevel with
    GPT-2's regex, no post-processor template (no BOS is prepended), <|endoftext|> as the one special token."""
    v = {k: i for k, i in vocab.items() if k != "<|endoftext|>"}
    merges = [l for l in merges_text.split("\n")[1:] if l]
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": EOT, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": v,
                  "merges": merges},
    }
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(tok, indent=2, ensure_ascii=False) + "\n")
    cfg = {"add_prefix_space": False, "bos_token": "<|endoftext|>", "clean_up_tokenization_spaces": False,
           "eos_token": "<|endoftext|>", "model_max_length": 8192, "tokenizer_class": "GPT2Tokenizer",
           "unk_token": "<|endoftext|>", "vocab_size": V_TOK}
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2) + "\n")


def write_checkpoint(out, name, cfg):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    vocab, vocab_text, merges_text = tiny_tokenizer(GPT2_TOKENIZER_DIR, N_MERGES)
    if name == "llama":
        write_llama3_tokenizer(out, vocab, merges_text)
    elif name == "smollm2":
        write_smollm2_tokenizer(out, vocab, merges_text)
    else:
        with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
            f.write(vocab_text)
        with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
            f.write(merges_text)
    dtype = DTYPE.get(name, "F32")
    tensors = {n: (dtype, make_tensor(n, s, dtype)) for n, s in expected_tensors(cfg).items()}
    n_shards = SHARDS.get(name, 1)
    if n_shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors)
        return
    names = sorted(tensors)
    per = (len(names) + n_shards - 1) // n_shards
    weight_map, total = {}, 0
    for k in range(n_shards):
        fname = "model-%05d-of-%05d.safetensors" % (k + 1, n_shards)
        part = {n: tensors[n] for n in names[k * per:(k + 1) * per]}
        write_safetensors(os.path.join(out, fname), part)
        for n, (dt, arr) in part.items():
            weight_map[n] = fname
            total += arr.size * (2 if dt != "F32" else 4)
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(out, "model.safetensors.index.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(index, indent=2) + "\n")


def iv(kind, layer, head, row=0, col=0, lam=None, alpha=None):
    d = {"kind": kind, "layer": layer, "head": head}
    if kind in ("hard", "soft"):
        d["row"], d["col"] = row, col
    if lam is not None:
        d["lambda"] = lam
    if alpha is not None:
        d["alpha"] = alpha
    return d


def cases(NH, T, sliding=False):
    last = T - 1
    if sliding:  # the same kinds, with the soft do of "combined" on a key inside the windows (outside: EMASKED)
        base = [c for c in cases(NH, T) if c[0] != "combined"]
        return base + [
            ("causal", {"mask": "causal"}),                               # the layer's own mask, as plain
            ("nowindow", {"mask": "window", "window": T}),                # the window removed: plain causal
            ("hard_outside", {"interventions": [iv("hard", 0, 1, last, 0)]}),   # onto a key the window hides
            ("soft_inside", {"interventions": [iv("soft", 0, -1, last, last - 3, lam=4.0)]}),
            ("layer_mask_causal", {"layer_mask": ["causal", "full"], "layer_window": [0, 0]}),
            ("combined", {"interventions": [iv("soft", 1, 0, last, last - 2, lam=-1.5), iv("scaleQ", 1, 0, alpha=0.5),
                                            iv("hard", 0, NH - 1, 3, 1), iv("ablate", 0, 0)],
                          "capture": {"layer": 0, "head": 0}}),   # last, as for the others (the threads tests run it)
        ]
    return [
        ("plain", {}),
        ("hard", {"interventions": [iv("hard", 1, -1, last, 1)]}),
        ("soft", {"interventions": [iv("soft", 0, 1, 4, 2, lam=6.0)]}),
        ("ablate", {"interventions": [iv("ablate", 1, 0)]}),
        ("full", {"mask": "full"}),
        ("window", {"mask": "window", "window": 3}),
        ("layer_mask", {"layer_mask": ["full", "window"], "layer_window": [0, 2]}),
        ("scale", {"scale": 0.2}),
        ("scaleQ", {"interventions": [iv("scaleQ", 0, 1, alpha=2.5)]}),
        ("scaleK", {"interventions": [iv("scaleK", 1, NH - 1, alpha=-0.5)]}),
        ("scaleK_all", {"interventions": [iv("scaleK", 0, -1, alpha=1.7)]}),
        ("swapQK", {"interventions": [iv("swapQK", 1, NH - 1)]}),
        ("swapQK_all", {"interventions": [iv("swapQK", 0, -1)]}),
        ("capture", {"capture": {"layer": 1, "head": NH - 1}}),
        ("combined", {"interventions": [iv("soft", 1, 0, last, 0, lam=-1.5), iv("scaleQ", 1, 0, alpha=0.5),
                                        iv("hard", 0, NH - 1, 3, 1), iv("ablate", 0, 0)],
                      "capture": {"layer": 0, "head": 0}}),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(HERE, "..", "fixtures"))
    args = ap.parse_args(argv)
    root = os.path.join(args.fixtures, "families")
    if os.path.isdir(root):
        shutil.rmtree(root)
    fams, blob = {}, []
    for name, cfg in CONFIGS.items():
        out = os.path.join(root, name)
        write_checkpoint(out, name, cfg)
        c, W = families_ref.read_dir(out)
        a = families_ref.Arch(c)
        runs = []
        ids = IDS_LONG if name in SLIDING else IDS
        for cname, o in cases(a.NH, len(ids), name in SLIDING):
            if a.mt == "gpt2" and cname not in GPT2_CASES:
                continue
            r = families_ref.forward(c, W, ids, o)
            run = {"name": cname, "opts": o, "nll": r["nll"]}
            for key in ("attentions", "logits", "q", "k"):
                if r[key] is not None:
                    run[key] = [len(blob), int(r[key].size)]  # [offset in floats, count] in golden.bin
                    blob.extend(float(x) for x in r[key].reshape(-1))
            runs.append(run)
        fams[name] = {"dir": "tests/fixtures/families/" + name, "family": cfg["model_type"],
                      "dtype": DTYPE.get(name, "F32"), "n_layer": a.L, "n_head": a.NH, "n_kv_head": a.NKV,
                      "head_dim": a.HS, "vocab_size": a.V, "ids": ids, "cases": runs}
    np.asarray(blob, dtype="<f4").tofile(os.path.join(root, "golden.bin"))
    with open(os.path.join(root, "golden.json"), "w", encoding="utf-8") as f:
        f.write('{"generator":"tests/ref/gen_families.py","data":"golden.bin (float32 little-endian)","families":{\n')
        f.write(",\n".join(json.dumps(n) + ":" + json.dumps(v, sort_keys=True) for n, v in fams.items()))
        f.write("\n}}\n")

if __name__ == "__main__":
    main()
