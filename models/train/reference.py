"""Independent reader + forward for an exported model directory (numpy only, no PyTorch).

read_safetensors() parses and validates the file byte by byte; GPT2Ref runs GPT-2's forward
written from the math (pre-LN blocks, causal softmax attention, gelu_new MLP, tied head), so
agreement with the PyTorch model proves the export (names, Conv1D transposes, F16) is right.
Shapes: T time, C n_embd, NH heads, HS head size, V vocab.
"""
import json
import math
import os
import struct

import numpy as np

DTYPES = {"F16": ("<f2", 2), "F32": ("<f4", 4), "BF16": (None, 2)}


def read_safetensors(path):
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise ValueError("file too short")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > len(buf) - 8 or n > 100_000_000:
        raise ValueError("bad header length")
    header = json.loads(buf[8:8 + n].decode("utf-8"))
    data = memoryview(buf)[8 + n:]
    meta = header.pop("__metadata__", {})
    out, spans = {}, []
    for name, h in header.items():
        dt, size = DTYPES[h["dtype"]]
        b, e = h["data_offsets"]
        count = int(np.prod(h["shape"])) if h["shape"] else 1
        if not (0 <= b <= e <= len(data)) or e - b != count * size:
            raise ValueError(f"{name}: bad offsets")
        spans.append((b, e))
        raw = np.frombuffer(data[b:e], dtype="<u2" if dt is None else dt)
        if dt is None:  # BF16 -> F32
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw.astype(np.float32).reshape(h["shape"])
    spans.sort()
    pos = 0
    for b, e in spans:  # the buffer must be covered exactly, no holes, no overlaps
        if b != pos:
            raise ValueError("hole or overlap in data")
        pos = e
    if pos != len(data):
        raise ValueError("trailing bytes")
    return out, meta


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


class GPT2Ref:
    def __init__(self, model_dir):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.cfg = json.load(f)
        w, self.meta = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        self.w = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in w.items()}
        self.L, self.NH = self.cfg["n_layer"], self.cfg["n_head"]
        self.C, self.eps = self.cfg["n_embd"], self.cfg["layer_norm_epsilon"]
        V = self.cfg["vocab_size"]
        assert self.w["wte.weight"].shape == (V, self.C)
        assert self.w["wpe.weight"].shape == (self.cfg["n_positions"], self.C)

    def forward(self, ids, want_att=False, ablate=()):
        """ids (T,) -> logits (T, V) float32, and the attention probabilities [L] of (NH, T, T).
        ablate: (layer, head) pairs whose output is set to zero before the output projection."""
        w, C, NH = self.w, self.C, self.NH
        T, HS = len(ids), C // NH
        assert 0 < T <= self.cfg["n_positions"]
        x = w["wte.weight"][ids] + w["wpe.weight"][:T]                  # (T, C)
        causal = np.triu(np.ones((T, T), dtype=bool), 1)
        atts = []
        for i in range(self.L):
            p = f"h.{i}."
            h = layernorm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], self.eps)
            qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]   # (T, 3C)
            q, k, v = (qkv[:, j * C:(j + 1) * C].reshape(T, NH, HS).transpose(1, 0, 2) for j in range(3))
            s = q @ k.transpose(0, 2, 1) / math.sqrt(HS)                 # (NH, T, T)
            s[:, causal] = -np.inf
            s = np.exp(s - s.max(-1, keepdims=True))
            a = s / s.sum(-1, keepdims=True)
            if want_att:
                atts.append(a)
            y = a @ v                                                    # (NH, T, HS)
            for (l, hd) in ablate:
                if l == i:
                    y[hd] = 0.0
            y = y.transpose(1, 0, 2).reshape(T, C)                       # (T, C)
            x = x + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            h = layernorm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], self.eps)
            h = gelu_new(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])  # (T, 4C)
            x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        x = layernorm(x, w["ln_f.weight"], w["ln_f.bias"], self.eps)
        return x @ w["wte.weight"].T, atts                               # (T, V)

    def nll(self, ids, block=None):
        """Per-token negative log-likelihood (nats) of ids[1:], windows of `block` inputs:
        window c feeds ids[c*block : c*block+block] and scores ids[c*block+1 : c*block+block+1]."""
        block = block or self.cfg["n_positions"]
        ids = np.asarray(ids)
        out = []
        for s in range(0, len(ids) - 1, block):
            x = ids[s:s + block]
            y = ids[s + 1:s + block + 1]
            logits, _ = self.forward(x[:len(y)])
            logits = logits.astype(np.float64)
            m = logits.max(-1, keepdims=True)
            lse = np.log(np.exp(logits - m).sum(-1)) + m[:, 0]
            out.append(lse - logits[np.arange(len(y)), y])
        return np.concatenate(out)
