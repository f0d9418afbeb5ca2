#!/usr/bin/python3
"""export_onnx_families.py — the peer benchmark's Llama and GPT-NeoX checkpoints, and their ONNX export.

    OMP_NUM_THREADS=1 /usr/bin/python3 tests/ref/export_onnx_families.py checkpoint --shape smollm2-135m|pythia-160m \
        [--seed 1234] --out DIR
    OMP_NUM_THREADS=1 /usr/bin/python3 tests/ref/export_onnx_families.py export DIR OUT.onnx [--check-T 11]

checkpoint: a seeded random float32 checkpoint of the shape's published config in the exact Hugging Face layout
(tensor names and shapes from hf_names.expected_tensors(config), one model.safetensors), and a tokenizer.json over
gen_families.py's tiny vocabulary (277 tokens: the benchmark feeds ids directly, ids beyond the tokenizer are still
valid model inputs). Every tensor comes from its own numpy PCG64 stream seeded with (seed, crc32(name)); the scales
follow the families' own initialisation (normal(0, initializer_range), the residual projections divided by
sqrt(2 L), norm weights 1 + 0.1 N, biases 0.02 N), so 30 layers stay finite and the logits stay O(1).

  smollm2-135m  config = tests/fixtures/configs/smollm2-135m/config.json (LlamaForCausalLM: 30 layers, d 576, 9 query
                heads over 3 key/value heads of 64, SwiGLU 1536, RMSNorm, RoPE theta 1e5, tied head, V 49152)
  pythia-160m   config = Pythia-160m's published config.json (GPTNeoXForCausalLM: 12 layers, d 768, 12 heads,
                GELU (erf) 3072, LayerNorm, rotary on 25 % of each head (base 10000), parallel residual, untied
                embed_out, V 50304), written below

export: a plain torch module written from tests/ref/families_ref.py (float32, batched as an exporter sees it):
input_ids int64 [1, T] (T dynamic) -> logits float32 [1, 1, V] of the LAST position (what alab_forward computes).
Before exporting, the module is checked against families_ref.forward (float64) on T = --check-T tokens and the
max |diff| printed (above 1e-3 the script fails). The LM head (tied embed_tokens or untied embed_out) is a
Gemm(transB = 1) on the stored [V, C] matrix (export_onnx.TiedHead): stored once, no transposed copy. Opset 14
(torch 1.13; no `onnx` python package needed). RoPE's cos/sin tables are [P, rot/2] buffers sliced to [0, T) (as Hugging
Face's rotary modules cache them), the causal mask is built from T (arange <=; a [P, P] buffer would be 67 MB at
SmolLM2's 8192 positions); the grouped key/value heads are
expanded to the query heads (repeat_kv), as LlamaAttention does.
"""
import argparse
import json
import math
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import write_safetensors  # noqa: E402
from hf_names import expected_tensors  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

# Pythia-160m's config.json as EleutherAI/pythia-160m publishes it (transformers 4.24.0).
PYTHIA_160M = {
    "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "gelu",
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048, "model_type": "gpt_neox", "num_attention_heads": 12, "num_hidden_layers": 12,
    "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": False, "torch_dtype": "float16",
    "transformers_version": "4.24.0", "use_cache": True, "use_parallel_residual": True, "vocab_size": 50304,
}


def shape_config(shape):
    if shape == "smollm2-135m":
        with open(os.path.join(REPO, "tests", "fixtures", "configs", "smollm2-135m", "config.json"), encoding="utf-8") as f:
            return json.load(f)
    if shape == "pythia-160m":
        return dict(PYTHIA_160M)
    raise SystemExit("unknown shape %r (smollm2-135m or pythia-160m)" % shape)


# ----------------------------------------------------------------------------------------------------------------
# checkpoint

RESIDUAL_OUT = ("o_proj.weight", "down_proj.weight", "attention.dense.weight", "dense_4h_to_h.weight")


def init_tensor(seed, name, shape, std, L):
    rng = np.random.Generator(np.random.PCG64([seed, zlib.crc32(name.encode())]))
    x = rng.standard_normal(shape)
    if "norm" in name and name.endswith(".weight"):      # RMSNorm / LayerNorm gains
        x = 1.0 + 0.1 * x
    elif name.endswith(".bias"):
        x = 0.02 * x
    elif name.endswith(RESIDUAL_OUT):
        x = (std / math.sqrt(2 * L)) * x
    else:
        x = std * x
    return x.astype(np.float32)


def write_tokenizer(out, cfg):
    """tokenizer.json (+ tokenizer_config.json) over gen_families' tiny vocabulary: SmolLM2's form for llama,
    a plain ByteLevel BPE with NFC (Pythia's GPT-NeoX-20B form) for gpt_neox."""
    import gen_families
    from make_checkpoint import GPT2_TOKENIZER_DIR, tiny_tokenizer
    vocab, _, merges_text = tiny_tokenizer(GPT2_TOKENIZER_DIR, gen_families.N_MERGES)
    if cfg["model_type"] == "llama":
        gen_families.write_smollm2_tokenizer(out, vocab, merges_text)
        return
    eot = gen_families.EOT
    v = {k: i for k, i in vocab.items() if k != "<|endoftext|>"}
    merges = [l for l in merges_text.split("\n")[1:] if l]
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": eot, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "vocab": v, "merges": merges},
    }
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(tok, indent=2, ensure_ascii=False) + "\n")
    tcfg = {"add_prefix_space": False, "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
            "tokenizer_class": "GPTNeoXTokenizer", "unk_token": "<|endoftext|>"}
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(tcfg, indent=2) + "\n")


def make_checkpoint(shape, out, seed):
    cfg = shape_config(shape)
    os.makedirs(out, exist_ok=True)
    L, std = cfg["num_hidden_layers"], cfg.get("initializer_range", 0.02)
    tensors = {n: ("F32", init_tensor(seed, n, s, std, L)) for n, s in expected_tensors(cfg).items()}
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    write_tokenizer(out, cfg)
    # config.json last: make's target is model.safetensors, and a half-written folder has no config
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    n = sum(int(np.prod(s)) for s in expected_tensors(cfg).values())
    print("export_onnx_families: wrote %s (%s, %d tensors, %.1fM parameters, f32, seed %d)" %
          (out, shape, len(tensors), n / 1e6, seed))


# ----------------------------------------------------------------------------------------------------------------
# the torch module

def _module():
    import torch
    import torch.nn.functional as F
    from export_onnx import TiedHead
    import families_ref

    class FamilyLastLogits(torch.nn.Module):
        def __init__(self, cfg, W):
            super().__init__()
            a = families_ref.Arch(cfg)
            self.mt, self.L, self.NH, self.NKV, self.HS, self.C = a.mt, a.L, a.NH, a.NKV, a.HS, a.C
            self.eps, self.rot, self.parallel = a.eps, a.rot, a.parallel
            if self.mt not in ("llama", "gpt_neox"):
                raise SystemExit("export_onnx_families: model_type %r is not llama or gpt_neox" % self.mt)
            if self.mt == "gpt_neox" and a.act != "gelu":
                raise SystemExit("export_onnx_families: hidden_act %r (only gelu)" % a.act)
            if self.mt == "llama" and cfg.get("hidden_act", "silu") != "silu":
                raise SystemExit("export_onnx_families: hidden_act %r (only silu)" % cfg.get("hidden_act"))

            def p(name):
                return torch.nn.Parameter(W[name].to(torch.float32).contiguous(), requires_grad=False)

            self.layers = torch.nn.ModuleList()
            if self.mt == "llama":
                self.embed = p("model.embed_tokens.weight")
                self.head = self.embed if a.tied else p("lm_head.weight")
                self.norm_w = p("model.norm.weight")
                for l in range(self.L):
                    m, pre = torch.nn.Module(), "model.layers.%d." % l
                    for attr, n in (("n1", "input_layernorm.weight"), ("n2", "post_attention_layernorm.weight"),
                                    ("wq", "self_attn.q_proj.weight"), ("wk", "self_attn.k_proj.weight"),
                                    ("wv", "self_attn.v_proj.weight"), ("wo", "self_attn.o_proj.weight"),
                                    ("wg", "mlp.gate_proj.weight"), ("wu", "mlp.up_proj.weight"),
                                    ("wd", "mlp.down_proj.weight")):
                        setattr(m, attr, p(pre + n))
                    for attr, n in (("bq", "self_attn.q_proj.bias"), ("bk", "self_attn.k_proj.bias"),
                                    ("bv", "self_attn.v_proj.bias"), ("bo", "self_attn.o_proj.bias")):
                        setattr(m, attr, p(pre + n) if pre + n in W else None)
                    self.layers.append(m)
            else:
                self.embed = p("gpt_neox.embed_in.weight")
                self.head = self.embed if a.tied else p("embed_out.weight")
                self.norm_w, self.norm_b = p("gpt_neox.final_layer_norm.weight"), p("gpt_neox.final_layer_norm.bias")
                for l in range(self.L):
                    m, pre = torch.nn.Module(), "gpt_neox.layers.%d." % l
                    for attr, n in (("n1", "input_layernorm.weight"), ("n1b", "input_layernorm.bias"),
                                    ("n2", "post_attention_layernorm.weight"),
                                    ("n2b", "post_attention_layernorm.bias"),
                                    ("wqkv", "attention.query_key_value.weight"),
                                    ("bqkv", "attention.query_key_value.bias"),
                                    ("wo", "attention.dense.weight"), ("bo", "attention.dense.bias"),
                                    ("w1", "mlp.dense_h_to_4h.weight"), ("b1", "mlp.dense_h_to_4h.bias"),
                                    ("w2", "mlp.dense_4h_to_h.weight"), ("b2", "mlp.dense_4h_to_h.bias")):
                        setattr(m, attr, p(pre + n))
                    self.layers.append(m)
            P = cfg["max_position_embeddings"]
            ang = torch.arange(P, dtype=torch.float64).view(P, 1) * torch.from_numpy(a.inv_freq()).view(1, -1)
            self.register_buffer("cos", torch.cos(ang).to(torch.float32), persistent=True)   # (P, rot/2)
            self.register_buffer("sin", torch.sin(ang).to(torch.float32), persistent=True)

        def rope(self, x, cos, sin):
            """x (1, heads, T, HS): rotate_half on the first rot dims (families_ref.rope)."""
            rot, half = self.rot, self.rot // 2
            if rot == self.HS:
                xr, xp = x, None
            else:
                xr, xp = x[..., :rot], x[..., rot:]
            x1, x2 = xr[..., :half], xr[..., half:]
            out = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
            return out if xp is None else torch.cat([out, xp], dim=-1)

        def forward(self, input_ids):                                  # (1, T) int64
            T = input_ids.shape[1]
            NH, NKV, HS, C, eps = self.NH, self.NKV, self.HS, self.C, self.eps
            G = NH // NKV
            x = F.embedding(input_ids, self.embed)                     # (1, T, C)
            pos = torch.arange(T)
            mask = pos.view(1, T) <= pos.view(T, 1)                    # causal (T, T), built from T
            cos, sin = self.cos[:T], self.sin[:T]                      # (T, rot/2)
            neg = torch.tensor(float("-inf"), dtype=torch.float32)
            scale = 1.0 / math.sqrt(HS)

            def attend(q, k, v):                                       # (1, NH, T, HS), (1, NKV, T, HS) x2
                q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
                if G > 1:                                              # repeat_kv
                    k = k[:, :, None].expand(1, NKV, G, T, HS).reshape(1, NH, T, HS)
                    v = v[:, :, None].expand(1, NKV, G, T, HS).reshape(1, NH, T, HS)
                s = torch.matmul(q, k.transpose(2, 3)) * scale
                s = torch.where(mask, s, neg)
                return torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(1, T, NH * HS)

            if self.mt == "llama":
                def rms(t, w):
                    return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * w

                for m in self.layers:
                    h = rms(x, m.n1)
                    q = F.linear(h, m.wq, m.bq).reshape(1, T, NH, HS).transpose(1, 2)
                    k = F.linear(h, m.wk, m.bk).reshape(1, T, NKV, HS).transpose(1, 2)
                    v = F.linear(h, m.wv, m.bv).reshape(1, T, NKV, HS).transpose(1, 2)
                    x = x + F.linear(attend(q, k, v), m.wo, m.bo)
                    h = rms(x, m.n2)
                    x = x + F.linear(F.silu(F.linear(h, m.wg)) * F.linear(h, m.wu), m.wd)
                last = rms(x[:, -1, :], self.norm_w)                   # (1, C)
            else:
                for m in self.layers:
                    h = F.layer_norm(x, (C,), m.n1, m.n1b, eps)
                    qkv = F.linear(h, m.wqkv, m.bqkv).reshape(1, T, NH, 3 * HS).transpose(1, 2)
                    q, k, v = qkv.split(HS, dim=3)                     # per head [q_h | k_h | v_h]
                    attn = F.linear(attend(q, k, v), m.wo, m.bo)
                    if self.parallel:
                        h2 = F.layer_norm(x, (C,), m.n2, m.n2b, eps)
                        x = x + attn + F.linear(F.gelu(F.linear(h2, m.w1, m.b1)), m.w2, m.b2)
                    else:
                        x = x + attn
                        h2 = F.layer_norm(x, (C,), m.n2, m.n2b, eps)
                        x = x + F.linear(F.gelu(F.linear(h2, m.w1, m.b1)), m.w2, m.b2)
                last = F.layer_norm(x[:, -1, :], (C,), self.norm_w, self.norm_b, eps)
            return TiedHead.apply(last, self.head).unsqueeze(1)        # (1, 1, V): Gemm transB=1

    return FamilyLastLogits


def export(model_dir, out, check_T):
    import torch
    import families_ref
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    cfg, W = families_ref.read_dir(model_dir)                         # float64 tensors
    mod = _module()(cfg, W).eval()
    V = cfg["vocab_size"]
    if check_T > 0:
        ids = [(t * 7919 + 13) % V for t in range(check_T)]
        with torch.no_grad():
            got = mod(torch.tensor([ids], dtype=torch.long)).numpy().reshape(-1)
        want = families_ref.forward(cfg, W, ids)["logits"]
        d = float(np.max(np.abs(got - want)))
        print("export_onnx_families: torch module vs families_ref (float64) at T=%d: max |diff| %.3g "
              "(logits max |x| %.3g)" % (check_T, d, float(np.max(np.abs(want)))))
        if not d <= 1e-3:
            raise SystemExit("export_onnx_families: the torch module disagrees with families_ref")
    del W
    dummy = torch.zeros((1, 8), dtype=torch.long)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(mod, (dummy,), out, opset_version=14, input_names=["input_ids"],
                          output_names=["logits"], dynamic_axes={"input_ids": {1: "T"}},
                          do_constant_folding=True)
    size = os.path.getsize(out)
    st = os.path.getsize(os.path.join(model_dir, "model.safetensors"))
    print("export_onnx_families: wrote %s (%.1f MB; model.safetensors %.1f MB)" % (out, size / 1e6, st / 1e6))
    # every weight stored once (the RoPE tables add 2 x P x rot/2 floats: 2 MB for SmolLM2's 8192 positions)
    if size > 1.05 * st:
        raise SystemExit("export_onnx_families: %s is %.2fx the safetensors file: an initializer is duplicated" %
                         (out, size / st))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("checkpoint")
    c.add_argument("--shape", required=True, choices=("smollm2-135m", "pythia-160m"))
    c.add_argument("--seed", type=int, default=1234)
    c.add_argument("--out", required=True)
    e = sub.add_parser("export")
    e.add_argument("model_dir")
    e.add_argument("out")
    e.add_argument("--check-T", type=int, default=11, help="compare the module with families_ref on T tokens (0: skip)")
    a = ap.parse_args(argv)
    if a.cmd == "checkpoint":
        make_checkpoint(a.shape, a.out, a.seed)
    else:
        export(a.model_dir, a.out, a.check_T)


if __name__ == "__main__":
    main()
