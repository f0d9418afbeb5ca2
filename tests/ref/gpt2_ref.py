"""gpt2_ref.py — an independent, plain PyTorch GPT-2 forward pass with attnlab's intervention contract.

Written from the math (float64 throughout, results returned as float32). Dimension letters: T tokens, C channels,
NH heads, HS = C/NH head size, L layers, V vocabulary.

    x = wte[ids] + wpe[0..T)                                            (T, C)
    per layer l:
        h = LN1(x);  qkv = h @ c_attn.w + c_attn.b                      (T, 3C)
        q, k, v = qkv[:, 0:C], qkv[:, C:2C], qkv[:, 2C:3C]; head n = columns [n*HS, (n+1)*HS)
        scores = q k^T * scale            (scale = 1/sqrt(HS) unless overridden)      (NH, T, T)
        (1) soft do:  scores[n, row, col] += lambda
        (2) mask:     causal j <= i | full: all | window W: i-W < j <= i; masked -> -inf
        (3) softmax over the last axis
        (4) hard do:  att[n, row, :] = one-hot(col)  (also at a masked col: it is a do-operation)
            -> captured attention (L, NH, T, T)
        (5) y = att @ v                                                 (NH, T, HS)
        (6) ablate:   y[n] = 0
        x += concat_heads(y) @ attn.c_proj.w + attn.c_proj.b
        x += gelu_new(LN2(x) @ c_fc.w + c_fc.b) @ mlp.c_proj.w + mlp.c_proj.b
    logits = LN_f(x[T-1]) @ wte^T   (tied head)                        (V)

Interventions: {"kind": "hard"|"soft"|"ablate", "layer", "head" (-1 = all heads of the layer), "row", "col",
"lambda"}, 0-based, composing in one run. gelu_new(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
LayerNorm: (x - mean) / sqrt(biased var + eps) * w + b.
"""
import json
import math
import os

import numpy as np
import torch

from safetensors_io import read_safetensors

MASKS = ("causal", "full", "window")


# ----------------------------------------------------------------------------------------------------------------
# loading

class Model:
    def __init__(self, cfg, weights):
        self.cfg = cfg
        self.L = int(cfg["n_layer"])
        self.NH = int(cfg["n_head"])
        self.C = int(cfg["n_embd"])
        self.P = int(cfg["n_positions"])
        self.V = int(cfg["vocab_size"])
        self.eps = float(cfg.get("layer_norm_epsilon", 1e-5))
        if self.C % self.NH:
            raise ValueError("n_embd %d is not a multiple of n_head %d" % (self.C, self.NH))
        self.HS = self.C // self.NH
        self.w = weights
        self._check_shapes()

    def _check_shapes(self):
        L, C, P, V = self.L, self.C, self.P, self.V
        want = {"wte.weight": (V, C), "wpe.weight": (P, C), "ln_f.weight": (C,), "ln_f.bias": (C,)}
        for i in range(L):
            h = "h.%d." % i
            want.update({
                h + "ln_1.weight": (C,), h + "ln_1.bias": (C,),
                h + "attn.c_attn.weight": (C, 3 * C), h + "attn.c_attn.bias": (3 * C,),
                h + "attn.c_proj.weight": (C, C), h + "attn.c_proj.bias": (C,),
                h + "ln_2.weight": (C,), h + "ln_2.bias": (C,),
                h + "mlp.c_fc.weight": (C, 4 * C), h + "mlp.c_fc.bias": (4 * C,),
                h + "mlp.c_proj.weight": (4 * C, C), h + "mlp.c_proj.bias": (C,),
            })
        for name, shape in want.items():
            if name not in self.w:
                raise KeyError("missing tensor %s" % name)
            if tuple(self.w[name].shape) != shape:
                raise ValueError("tensor %s has shape %s, expected %s" % (name, tuple(self.w[name].shape), shape))


def load_model(model_dir):
    """Read config.json + model.safetensors; strips an optional 'transformer.' prefix and ignores tensors that are
    not parameters (the attn.bias mask buffers, lm_head.weight)."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    tensors, _, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    weights = {}
    for name, arr in tensors.items():
        if name.startswith("transformer."):
            name = name[len("transformer."):]
        if name.endswith(".attn.bias") or name.endswith(".attn.masked_bias") or name == "lm_head.weight":
            continue
        weights[name] = torch.from_numpy(np.array(arr, dtype=np.float64))
    return Model(cfg, weights)


# ----------------------------------------------------------------------------------------------------------------
# building blocks

def layernorm(x, w, b, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def allowed_mask(mode, T, window):
    """(T, T) bool: True where query i may attend to key j."""
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    if mode == "causal":
        return j <= i
    if mode == "full":
        return torch.ones(T, T, dtype=torch.bool)
    if mode == "window":
        if window is None or int(window) < 1:
            raise ValueError("window mask needs W >= 1, got %r" % (window,))
        return (j <= i) & (j > i - int(window))
    raise ValueError("unknown mask %r" % (mode,))


def _heads(head, NH):
    if head == -1:
        return list(range(NH))
    if not 0 <= head < NH:
        raise IndexError("head %d out of range [0, %d)" % (head, NH))
    return [head]


def _validate(model, T, opts):
    for iv in opts.get("interventions") or []:
        kind = iv["kind"]
        if kind not in ("hard", "soft", "ablate"):
            raise ValueError("unknown intervention kind %r" % kind)
        if not 0 <= iv["layer"] < model.L:
            raise IndexError("layer %d out of range" % iv["layer"])
        _heads(iv["head"], model.NH)
        if kind == "ablate" and iv["head"] == -1:
            raise ValueError("ablate needs one head (attnlab's contract: no 'all' for ablate)")
        if kind in ("hard", "soft"):
            if not (0 <= iv["row"] < T and 0 <= iv["col"] < T):
                raise IndexError("row/col (%d, %d) out of range for T=%d" % (iv["row"], iv["col"], T))
        if kind == "soft" and not math.isfinite(iv["lambda"]):
            raise ValueError("lambda must be finite")
    if opts.get("scale") is not None and not (math.isfinite(opts["scale"]) and opts["scale"] != 0):
        raise ValueError("scale must be finite and nonzero (null means 1/sqrt(HS))")


# ----------------------------------------------------------------------------------------------------------------
# forward

def forward(model, ids, opts=None):
    """Returns {"logits": (V) f32, "attentions": (L, NH, T, T) f32, "q": (T, HS) f32 or None, "k": ...}."""
    opts = dict(opts or {})
    T = len(ids)
    if T == 0:
        raise ValueError("empty input")
    if T > model.P:
        raise ValueError("T=%d exceeds n_positions=%d" % (T, model.P))
    if any(not 0 <= t < model.V for t in ids):
        raise IndexError("token id out of range")
    _validate(model, T, opts)
    L, NH, C, HS, W, eps = model.L, model.NH, model.C, model.HS, model.w, model.eps
    ivs = opts.get("interventions") or []
    scale = opts.get("scale")
    scale = 1.0 / math.sqrt(HS) if scale is None else float(scale)
    capture = opts.get("capture")
    layer_mask = opts.get("layer_mask")
    layer_window = opts.get("layer_window")
    if layer_mask is not None and len(layer_mask) != L:
        raise ValueError("layer_mask must have one entry per layer")

    # evidence hooks (evidence_ref.py; docs/evidence.md): knockouts after the hard do, head outputs and
    # residual positions replaced, residual stream / head outputs captured, logits at every position
    knockouts = opts.get("knockouts") or []
    ko_tokens = opts.get("knockout_tokens") or []
    head_out = opts.get("head_out") or {}
    resid = opts.get("resid") or {}
    cap_resid = torch.zeros(L, T, C, dtype=torch.float64) if opts.get("capture_resid") else None
    cap_head = torch.zeros(L, NH, T, HS, dtype=torch.float64) if opts.get("capture_head_out") else None

    idx = torch.tensor(ids, dtype=torch.long)
    x = W["wte.weight"][idx] + W["wpe.weight"][:T]                              # (T, C)
    attentions = torch.zeros(L, NH, T, T, dtype=torch.float64)
    q_cap = k_cap = None
    for l in range(L):
        p = "h.%d." % l
        for (rl, rp), vec in resid.items():
            if rl == l:
                x = x.clone()
                x[rp] = vec
        if cap_resid is not None:
            cap_resid[l] = x
        h = layernorm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)         # (T, C)
        qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]        # (T, 3C)
        q = qkv[:, 0:C].reshape(T, NH, HS).transpose(0, 1)                       # (NH, T, HS)
        k = qkv[:, C:2 * C].reshape(T, NH, HS).transpose(0, 1)
        v = qkv[:, 2 * C:3 * C].reshape(T, NH, HS).transpose(0, 1)
        if capture is not None and capture["layer"] == l:
            q_cap = q[capture["head"]].clone()                                    # (T, HS), before scaling
            k_cap = k[capture["head"]].clone()
        scores = (q @ k.transpose(1, 2)) * scale                                 # (NH, T, T)

        # (1) soft do on the pre-softmax scores
        for iv in ivs:
            if iv["kind"] == "soft" and iv["layer"] == l:
                for n in _heads(iv["head"], NH):
                    scores[n, iv["row"], iv["col"]] += float(iv["lambda"])
        # (2) mask
        if layer_mask is not None:
            mode = layer_mask[l]
            win = layer_window[l] if layer_window is not None else opts.get("window")
        else:
            mode = opts.get("mask", "causal")
            win = opts.get("window")
        allowed = allowed_mask(mode, T, win)
        scores = scores.masked_fill(~allowed, float("-inf"))
        # (3) softmax
        att = torch.softmax(scores, dim=-1)                                      # (NH, T, T)
        # (4) hard do after softmax
        for iv in ivs:
            if iv["kind"] == "hard" and iv["layer"] == l:
                for n in _heads(iv["head"], NH):
                    att[n, iv["row"], :] = 0.0
                    att[n, iv["row"], iv["col"]] = 1.0
        # (4b) knockouts: the entries set to 0, each touched row renormalised (a row left with no mass is 0);
        # mode "zero" leaves the row's sum below 1 (no renormalisation)
        touched = set()
        for ko in knockouts:
            if ko["layer"] == l:
                for n in _heads(ko["head"], NH):
                    att[n, ko["row"], ko["col"]] = 0.0
                    if ko.get("mode", "renorm") == "renorm":
                        touched.add((n, ko["row"]))
        for j in ko_tokens:
            att[:, :, j] = 0.0
            if not opts.get("knockout_tokens_zero"):
                touched.update((n, i) for n in range(NH) for i in range(T))
        for n, i in touched:
            s_ = att[n, i].sum()
            att[n, i] = att[n, i] / s_ if s_ > 0 else att[n, i] * 0.0
        attentions[l] = att
        # (5) weighted values
        y = att @ v                                                              # (NH, T, HS)
        # (6) head ablation
        for iv in ivs:
            if iv["kind"] == "ablate" and iv["layer"] == l:
                for n in _heads(iv["head"], NH):
                    y[n] = 0.0
        # (6b) head outputs replaced (mean / resample ablation, patching)
        for (hl, hn), val in head_out.items():
            if hl == l:
                y[hn] = val
        if cap_head is not None:
            cap_head[l] = y
        y = y.transpose(0, 1).reshape(T, C)                                      # (T, C)
        x = x + y @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        h = layernorm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        m = gelu_new(h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])       # (T, 4C)
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    xf = layernorm(x[T - 1], W["ln_f.weight"], W["ln_f.bias"], eps)              # (C)
    logits = W["wte.weight"] @ xf                                                # (V)
    extra = {}
    if opts.get("all_logits"):
        extra["all_logits64"] = (layernorm(x, W["ln_f.weight"], W["ln_f.bias"], eps) @ W["wte.weight"].T).numpy()
    if cap_resid is not None:
        extra["resid"] = cap_resid
    if cap_head is not None:
        extra["head_out"] = cap_head
    return {
        **extra,
        "logits": logits.numpy().astype(np.float32),
        "logits64": logits.numpy(),
        "attentions": attentions.numpy().astype(np.float32),
        "q": None if q_cap is None else q_cap.numpy().astype(np.float32),
        "k": None if k_cap is None else k_cap.numpy().astype(np.float32),
    }


def top_k(logits, k=10):
    """The k most likely next tokens: [(id, prob)], descending, ties broken by the lower id."""
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z - z.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")[:k]
    return [(int(i), float(p[i])) for i in order]
