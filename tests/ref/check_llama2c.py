#!/usr/bin/python3
"""check_llama2c.py — the llama2.c fixture (tests/fixtures/trained/stories260K) checked with Python (make
test-trained-py; needs /usr/bin/python3 with numpy, nothing else):

1. scripts/convert_llama2c.py, run again on the committed stories260K.bin and tok512.bin, writes the committed
   hf/ folder and bytes-tokenizer.json byte for byte.
2. The converted folder, run by an independent float64 forward written here from Hugging Face's Llama
   conventions (rotate_half RoPE on the two halves of each head, RMSNorm w * x / sqrt(mean(x^2) + eps), SwiGLU
   down(silu(gate x) * up x), grouped-query heads, tied head), gives run.c's logits (reference.json) within
   1e-4, and the same forward on a folder converted with --no-permute does not (off by more than 1): the
   permutation is what HF's convention needs, not only what attnlab needs.
3. hf/tokenizer.json, applied as Hugging Face's BPE applies it (normalizer Prepend + Replace, merges by rank,
   unknown characters to <0xNN> byte pieces, <s> prepended), gives the ids run.c's encode() gave for every
   text of reference.json.

Exit status 0 only when all three hold; every failure is printed.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
from safetensors_io import read_safetensors  # noqa: E402

FIX = os.path.join(ROOT, "tests", "fixtures", "trained", "stories260K")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def convert(out, *extra):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "convert_llama2c.py"),
                    os.path.join(FIX, "stories260K.bin"), out, *extra], check=True, capture_output=True)


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def hf_forward(folder, ids):
    """float64 logits [T, V] of a Hugging Face Llama folder (no cache, causal)."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    w, _, _ = read_safetensors(os.path.join(folder, "model.safetensors"))
    w = {k: v.astype(np.float64) for k, v in w.items()}
    C, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hs, eps, T = cfg.get("head_dim", C // nh), cfg["rms_norm_eps"], len(ids)
    inv = 1.0 / cfg["rope_theta"] ** (np.arange(0, hs, 2) / hs)
    ang = np.arange(T)[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], 1)), np.sin(np.concatenate([ang, ang], 1))

    def rope(x):  # x [heads, T, hs]
        rot = np.concatenate([-x[..., hs // 2:], x[..., :hs // 2]], -1)
        return x * cos + rot * sin

    def norm(x, g):
        return g * x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)

    x = w["model.embed_tokens.weight"][ids]
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = norm(x, w[p + "input_layernorm.weight"])
        q = rope((h @ w[p + "self_attn.q_proj.weight"].T).reshape(T, nh, hs).transpose(1, 0, 2))
        k = rope((h @ w[p + "self_attn.k_proj.weight"].T).reshape(T, nkv, hs).transpose(1, 0, 2))
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(T, nkv, hs).transpose(1, 0, 2)
        k, v = np.repeat(k, nh // nkv, 0), np.repeat(v, nh // nkv, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hs) + mask
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        x = x + (a @ v).transpose(1, 0, 2).reshape(T, nh * hs) @ w[p + "self_attn.o_proj.weight"].T
        h = norm(x, w[p + "post_attention_layernorm.weight"])
        g = h @ w[p + "mlp.gate_proj.weight"].T
        x = x + (g / (1 + np.exp(-g)) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return norm(x, w["model.norm.weight"]) @ head.T


def logits_diff(folder, ref):
    worst = 0.0
    for s in ref["logits"]:
        out = hf_forward(folder, s["ids"])
        for pos, want in zip(s["positions"], s["logits"]):
            worst = max(worst, float(np.abs(out[pos] - np.array(want, dtype=np.float64)).max()))
    return worst


def hf_bpe_encode(tok, text):
    """Hugging Face's BPE model as Llama 2's tokenizer.json configures it (this folder's settings only)."""
    vocab, merges = tok["model"]["vocab"], tok["model"]["merges"]
    rank = {tuple(m): r for r, m in enumerate(merges)}
    for n in tok["normalizer"]["normalizers"]:
        text = n["prepend"] + text if n["type"] == "Prepend" else text.replace(n["pattern"]["String"], n["content"])
    if text == tok["normalizer"]["normalizers"][0]["prepend"]:
        text = ""  # HF's Prepend leaves an empty string empty
    syms = list(text)
    while len(syms) > 1:
        best = min(range(len(syms) - 1), key=lambda i: (rank.get((syms[i], syms[i + 1]), 1 << 30), i))
        if (syms[best], syms[best + 1]) not in rank:
            break
        syms[best:best + 2] = [syms[best] + syms[best + 1]]
    ids = [1]
    for s in syms:
        if s in vocab:
            ids.append(vocab[s])
        else:  # byte_fallback
            ids.extend(vocab["<0x%02X>" % b] for b in s.encode("utf-8"))
    return ids


def main():
    ref = json.load(open(os.path.join(FIX, "reference.json")))
    with tempfile.TemporaryDirectory() as tmp:
        out, bad = os.path.join(tmp, "hf"), os.path.join(tmp, "bad")
        convert(out, "--tokenizer", os.path.join(FIX, "tok512.bin"), "--bytes-tokenizer",
                os.path.join(tmp, "bytes-tokenizer.json"))
        for name in ("config.json", "model.safetensors", "tokenizer.json"):
            check(same_bytes(os.path.join(out, name), os.path.join(FIX, "hf", name)),
                  "converter reproduces hf/%s byte for byte" % name)
        check(same_bytes(os.path.join(tmp, "bytes-tokenizer.json"), os.path.join(FIX, "bytes-tokenizer.json")),
              "converter reproduces bytes-tokenizer.json byte for byte")
        check(sorted(os.listdir(out)) == sorted(os.listdir(os.path.join(FIX, "hf"))), "the same files, no others")
        d = logits_diff(os.path.join(FIX, "hf"), ref)
        check(d <= 1e-4, "float64 Hugging Face forward of hf/ vs run.c: max |logit diff| %.3g <= 1e-4" % d)
        convert(bad, "--no-permute")
        d_bad = logits_diff(bad, ref)
        check(d_bad > 1.0, "the same forward on a --no-permute conversion: max |logit diff| %.3g > 1" % d_bad)
    tok = json.load(open(os.path.join(FIX, "hf", "tokenizer.json"), encoding="utf-8"))
    for e in ref["encodings"]:
        got = hf_bpe_encode(tok, e["text"])
        check(got == e["ids"], "tokenizer.json encodes %r as run.c does%s" % (
            e["text"][:40], "" if got == e["ids"] else " (got %s, run.c %s)" % (got, e["ids"])))
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
