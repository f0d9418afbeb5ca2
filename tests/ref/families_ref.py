"""families_ref.py — an independent float64 PyTorch forward pass of the Hugging Face families attnlab runs
(gpt2, gpt_neox, llama, qwen2, qwen3, mistral, gemma3_text), with attnlab's intervention contract.

Written from the math and from the Hugging Face modeling code's conventions (modeling_gpt2.py, modeling_gpt_neox.py,
modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py, modeling_mistral.py, modeling_gemma3.py,
configuration_gemma3.py, masking_utils.py, modeling_rope_utils.py), on the tensors as they are stored
(nn.Linear weights (out, in): y = x W^T + b; GPT-2 Conv1D weights (in, out): y = x W + b). Nothing here reads the
C engine's layout or code. Letters: T tokens, C hidden, NH query heads, NKV key/value heads, G = NH/NKV, HS head
size, L layers.

    x = embed[ids] (+ wpe[0..T) for gpt2)
    per layer l:
        h = norm1(x)                             LayerNorm (biased var) | RMSNorm: x / sqrt(mean(x^2) + eps) * w
        q, k, v = projections(h)                 gpt2: Conv1D c_attn, columns [q | k | v]
                                                 gpt_neox: Linear query_key_value, rows per head [q_h | k_h | v_h]
                                                 llama/qwen: q_proj, k_proj, v_proj (+ biases: qwen2 always, else
                                                 attention_bias)
        q, k = q_norm(q), k_norm(k)              qwen3: RMSNorm over each head's HS
        q, k = rope(q), rope(k)                  rotary families: the first rot = int(HS * fraction) dims of each head,
                                                 rotate_half pairs (i, i + rot/2), angle pos * inv_freq[i],
                                                 inv_freq[i] = theta^(-2i/rot), llama3 rope_scaling rule on top
        capture q of head h and k of key/value head h // G
        scores = q_h k_{h//G}^T * scale          scale = 1/sqrt(HS) (gpt2: 1 when scale_attn_weights is false, and
                                                 / (l + 1) with scale_attn_by_inverse_layer_idx) or the override
        soft do, mask, softmax, hard do, y = att v, ablation  (as gpt2_ref.py)
        a = y W_o (+ b_o)
        sequential: x = x + a; x = x + mlp(norm2(x))
        parallel (gpt_neox use_parallel_residual): x = x + a + mlp(norm2(x_before))
        mlp: gelu_new (gpt2) | exact gelu (gpt_neox "gelu") | down(silu(gate h) * up h)
    logits = final_norm(x[T-1]) @ head^T, head = embed when tie_word_embeddings (default true for gpt2 and gemma3_text)

Sliding windows (masking_utils.sliding_window_overlay: key j is kept for query i iff j > i - W, on top of causal j <= i):
    mistral      every layer, W = sliding_window (MistralConfig's default 4096 when absent; null: no window)
    gemma3_text  the "sliding_attention" layers of layer_types (absent: layer i slides unless (i + 1) % 6 == 0,
                 6 = sliding_window_pattern), W = sliding_window
The mask option "causal" is the model's own causal mask, so on those layers it is the sliding one.
Gemma 3 (modeling_gemma3.py): x = embed[ids] * float32(sqrt(C)) (the embed_scale buffer, a float32 tensor); every
norm is x / sqrt(mean(x^2) + eps) * (1 + w); q_norm/k_norm over each head before rope; sliding layers rotate with
rope_local_base_freq and no scaling, full ones with rope_theta and rope_scaling (linear: inv_freq / factor); scores
scaled by query_pre_attn_scalar^-0.5; x = x + post_attention_layernorm(attn), x = x + post_feedforward_layernorm(
down(gelu_tanh(gate h) * up h)), h = pre_feedforward_layernorm(x).

Weight edits are made ON THE WEIGHTS here (the C engine makes them on the activations; the two routes must agree):
    scaleQ(h, a): the rows (columns for Conv1D) of W_Q that make head h's q are multiplied by a (biases kept);
    scaleK(h, a): those of W_K that make key/value head h // G (every head's for h = -1: each key head once);
    swapQK(h): query head h takes the weights of key head j = h // G and key head j those of query head h; for
               h = -1 every query head takes its group's key weights and key head j those of query head j * G.
"""
import json
import math
import os

import numpy as np
import torch

from safetensors_io import read_safetensors

MASKS = ("causal", "full", "window")


def read_dir(model_dir):
    """config dict and the tensors (float64 torch) of a Hugging Face folder, one file or shards with their index."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    single = os.path.join(model_dir, "model.safetensors")
    files = [single]
    if not os.path.exists(single):
        with open(os.path.join(model_dir, "model.safetensors.index.json"), encoding="utf-8") as f:
            index = json.load(f)
        files = [os.path.join(model_dir, n) for n in sorted(set(index["weight_map"].values()))]
    W = {}
    for path in files:
        tensors, _, _ = read_safetensors(path)
        for name, arr in tensors.items():
            W[name] = torch.from_numpy(np.array(arr, dtype=np.float64))
    return cfg, W


class Arch:
    def __init__(self, cfg):
        self.cfg = cfg
        mt = cfg.get("model_type", "gpt2")
        self.mt = mt
        if mt == "gpt2":
            self.C, self.L, self.NH, self.V = cfg["n_embd"], cfg["n_layer"], cfg["n_head"], cfg["vocab_size"]
            self.NKV, self.HS = self.NH, self.C // self.NH
            self.eps = cfg.get("layer_norm_epsilon", 1e-5)
            self.tied = cfg.get("tie_word_embeddings", True)
            self.rot = 0
            self.scale_w = cfg.get("scale_attn_weights", True)
            self.scale_layer = cfg.get("scale_attn_by_inverse_layer_idx", False)
            self.parallel = False
            self.windows, self.local = [None] * self.L, [False] * self.L
            return
        self.C, self.L, self.NH, self.V = (cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"],
                                           cfg["vocab_size"])
        self.scale_w, self.scale_layer = True, False
        self.tied = cfg.get("tie_word_embeddings", False)
        if mt == "gpt_neox":
            self.NKV, self.HS = self.NH, self.C // self.NH
            self.eps = cfg.get("layer_norm_eps", 1e-5)
            frac = cfg.get("rotary_pct", 0.25)
            self.theta = cfg.get("rotary_emb_base", cfg.get("rope_theta", 10000.0))
            self.parallel = cfg.get("use_parallel_residual", True)
            self.act = cfg.get("hidden_act", "gelu")
        else:
            gemma = mt == "gemma3_text"
            self.NKV = cfg.get("num_key_value_heads", 4 if gemma else self.NH)
            self.HS = cfg.get("head_dim") or {"qwen3": 128, "gemma3_text": 256}.get(mt, self.C // self.NH)
            self.eps = cfg.get("rms_norm_eps", 1e-6)
            frac = 1.0 if gemma else cfg.get("partial_rotary_factor", 1.0)
            self.theta = cfg.get("rope_theta", 1e6 if gemma else 10000.0)
            self.parallel = False
            if gemma:
                self.tied = cfg.get("tie_word_embeddings", True)
        self.rot = int(self.HS * frac)
        self.rope_scaling = cfg.get("rope_scaling")
        # the window of each layer's own causal mask (None: none) and, for Gemma 3, which layers rotate locally
        self.windows = [None] * self.L
        self.local = [False] * self.L
        if mt == "mistral":
            w = cfg["sliding_window"] if "sliding_window" in cfg else 4096
            self.windows = [w] * self.L
        elif mt == "gemma3_text":
            types = cfg.get("layer_types")
            if types is None:
                pattern = cfg.get("sliding_window_pattern", 6)
                types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(self.L)]
            self.local = [t == "sliding_attention" for t in types]
            self.windows = [cfg.get("sliding_window", 4096) if s else None for s in self.local]
            self.local_theta = cfg.get("rope_local_base_freq", 10000.0)

    def inv_freq(self, local=False):
        """modeling_rope_utils: default inv_freq, then the linear or llama3 rule when rope_scaling says so; Gemma 3's
        sliding layers: base rope_local_base_freq, no scaling."""
        rot = self.rot
        theta = self.local_theta if local else self.theta
        f = np.array([1.0 / (theta ** (i / rot)) for i in range(0, rot, 2)], dtype=np.float64)
        rs = self.rope_scaling
        if local or not rs or rs.get("rope_type", rs.get("type")) in (None, "default"):
            return f
        if rs.get("rope_type", rs.get("type")) == "linear":
            return f / rs["factor"]
        assert rs.get("rope_type", rs.get("type")) == "llama3"
        factor, lo, hi, orig = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], \
            rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = orig / lo, orig / hi
        wavelen = 2 * math.pi / f
        scaled = np.where(wavelen > low_wavelen, f / factor, f)
        smooth = (orig / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        return np.where(medium, smoothed, scaled)


# ---------------------------------------------------------------------------------------------------------------

def layernorm(x, w, b, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rmsnorm(x, w, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


def gemma_rmsnorm(x, w, eps):
    """Gemma3RMSNorm: the gain is 1 + w (the weights are stored as offsets from 1)."""
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * (1.0 + w)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_exact(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def silu(x):
    return x / (1.0 + torch.exp(-x))


def allowed_mask(mode, T, window, own_window=None):
    """own_window: the sliding window of the layer's own causal mask (None: plain causal)."""
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    if mode == "causal":
        if own_window is not None:
            return (j <= i) & (j > i - int(own_window))   # masking_utils.sliding_window_overlay on causal
        return j <= i
    if mode == "full":
        return torch.ones(T, T, dtype=torch.bool)
    if mode == "window":
        return (j <= i) & (j > i - int(window))
    raise ValueError(mode)


def rope(x, cos, sin, rot):
    """x (heads, T, HS): rotate_half on the first rot dims."""
    if rot == 0:
        return x
    half = rot // 2
    xr, xp = x[..., :rot], x[..., rot:]
    x1, x2 = xr[..., :half], xr[..., half:]
    rotated = torch.cat([-x2, x1], dim=-1)
    c = torch.cat([cos, cos], dim=-1)
    s = torch.cat([sin, sin], dim=-1)
    return torch.cat([xr * c + rotated * s, xp], dim=-1)


# ---------------------------------------------------------------------------------------------------------------
# the projections of one layer, with the weight edits applied to (a copy of) the weights

class QKV:
    """Per-head slices of W_Q / W_K in the family's stored layout, to edit them."""

    def __init__(self, a, W, l):
        self.a = a
        mt = a.mt
        HS, NH, NKV, C = a.HS, a.NH, a.NKV, a.C
        if mt == "gpt2":
            p = "h.%d.attn." % l
            self.w = W[p + "c_attn.weight"].clone()       # (C, 3C), columns [q | k | v]
            self.b = W[p + "c_attn.bias"].clone()
        elif mt == "gpt_neox":
            p = "gpt_neox.layers.%d.attention." % l
            self.w = W[p + "query_key_value.weight"].clone()  # (3C, C), rows per head [q_h | k_h | v_h]
            self.b = W[p + "query_key_value.bias"].clone() if p + "query_key_value.bias" in W else None
        else:
            p = "model.layers.%d.self_attn." % l
            self.wq, self.wk, self.wv = (W[p + n + "_proj.weight"].clone() for n in "qkv")
            self.bq, self.bk, self.bv = (W[p + n + "_proj.bias"].clone() if p + n + "_proj.bias" in W else None
                                         for n in "qkv")

    # (weight view, bias view) of q head h / k head j; views alias the copies, so edits write through
    def q_of(self, h):
        HS, C = self.a.HS, self.a.C
        if self.a.mt == "gpt2":
            return self.w[:, h * HS:(h + 1) * HS], self.b[h * HS:(h + 1) * HS]
        if self.a.mt == "gpt_neox":
            r = h * 3 * HS
            return self.w[r:r + HS, :], None if self.b is None else self.b[r:r + HS]
        return self.wq[h * HS:(h + 1) * HS, :], None if self.bq is None else self.bq[h * HS:(h + 1) * HS]

    def k_of(self, j):
        HS, C = self.a.HS, self.a.C
        if self.a.mt == "gpt2":
            return self.w[:, C + j * HS:C + (j + 1) * HS], self.b[C + j * HS:C + (j + 1) * HS]
        if self.a.mt == "gpt_neox":
            r = j * 3 * HS + HS
            return self.w[r:r + HS, :], None if self.b is None else self.b[r:r + HS]
        return self.wk[j * HS:(j + 1) * HS, :], None if self.bk is None else self.bk[j * HS:(j + 1) * HS]

    def edit(self, iv):
        a = self.a
        G = a.NH // a.NKV
        h = iv["head"]
        if iv["kind"] == "scaleQ":
            for n in (range(a.NH) if h == -1 else [h]):
                w, _ = self.q_of(n)
                w.mul_(iv["alpha"])
        elif iv["kind"] == "scaleK":
            for j in (range(a.NKV) if h == -1 else [h // G]):
                w, _ = self.k_of(j)
                w.mul_(iv["alpha"])
        elif iv["kind"] == "swapQK":
            pairs = [(j, list(range(j * G, (j + 1) * G)), j * G) for j in range(a.NKV)] if h == -1 \
                else [(h // G, [h], h)]
            for j, qs, src in pairs:
                wk, _ = self.k_of(j)
                wq_src, _ = self.q_of(src)
                new_k = wq_src.clone()
                old_k = wk.clone()
                for n in qs:
                    wq, _ = self.q_of(n)
                    wq.copy_(old_k)
                wk.copy_(new_k)

    def project(self, h):
        """q (NH, T, HS), k (NKV, T, HS), v (NKV, T, HS)."""
        a = self.a
        T = h.shape[0]
        if a.mt == "gpt2":
            qkv = h @ self.w + self.b
            q, k, v = qkv[:, :a.C], qkv[:, a.C:2 * a.C], qkv[:, 2 * a.C:]
        elif a.mt == "gpt_neox":
            qkv = h @ self.w.T + (0 if self.b is None else self.b)
            qkv = qkv.view(T, a.NH, 3 * a.HS)
            q, k, v = (qkv[:, :, i * a.HS:(i + 1) * a.HS].reshape(T, a.C) for i in range(3))
        else:
            q = h @ self.wq.T + (0 if self.bq is None else self.bq)
            k = h @ self.wk.T + (0 if self.bk is None else self.bk)
            v = h @ self.wv.T + (0 if self.bv is None else self.bv)
        q = q.reshape(T, a.NH, a.HS).transpose(0, 1)
        k = k.reshape(T, a.NKV, a.HS).transpose(0, 1)
        v = v.reshape(T, a.NKV, a.HS).transpose(0, 1)
        return q, k, v


def _heads(head, NH):
    return list(range(NH)) if head == -1 else [head]


def forward(cfg, W, ids, opts=None):
    """{"logits": (V) f32, "attentions": (L, NH, T, T) f32, "q", "k": (T, HS) f32 or None}."""
    opts = dict(opts or {})
    a = Arch(cfg)
    T = len(ids)
    L, NH, NKV, HS, C, eps = a.L, a.NH, a.NKV, a.HS, a.C, a.eps
    G = NH // NKV
    ivs = opts.get("interventions") or []
    capture = opts.get("capture")
    idx = torch.tensor(ids, dtype=torch.long)
    mt = a.mt
    if mt == "gpt2":
        pre = "transformer." if "transformer.wte.weight" in W else ""
        Wg = {k[len(pre):] if k.startswith(pre) else k: v for k, v in W.items()}
        embed = Wg["wte.weight"]
        x = embed[idx] + Wg["wpe.weight"][:T]
    else:
        Wg = W
        embed = W["gpt_neox.embed_in.weight" if mt == "gpt_neox" else "model.embed_tokens.weight"]
        x = embed[idx].clone()
        if mt == "gemma3_text":  # Gemma3TextScaledWordEmbedding: embed_scale is a float32 tensor of sqrt(C)
            x = x * float(np.float32(math.sqrt(C)))
    gemma = mt == "gemma3_text"
    if a.rot:
        tables = {}
        for local in set(a.local):
            ang = torch.arange(T, dtype=torch.float64).view(T, 1) * torch.from_numpy(a.inv_freq(local)).view(1, -1)
            tables[local] = (torch.cos(ang), torch.sin(ang))
    attentions = torch.zeros(L, NH, T, T, dtype=torch.float64)
    q_cap = k_cap = None
    for l in range(L):
        if mt == "gpt2":
            p = "h.%d." % l
            norm1 = lambda t: layernorm(t, Wg[p + "ln_1.weight"], Wg[p + "ln_1.bias"], eps)  # noqa: E731
            norm2 = lambda t: layernorm(t, Wg[p + "ln_2.weight"], Wg[p + "ln_2.bias"], eps)  # noqa: E731
        elif mt == "gpt_neox":
            p = "gpt_neox.layers.%d." % l
            norm1 = lambda t: layernorm(t, Wg[p + "input_layernorm.weight"], Wg[p + "input_layernorm.bias"], eps)  # noqa
            norm2 = lambda t: layernorm(t, Wg[p + "post_attention_layernorm.weight"],  # noqa: E731
                                        Wg[p + "post_attention_layernorm.bias"], eps)
        elif gemma:
            p = "model.layers.%d." % l
            norm1 = lambda t: gemma_rmsnorm(t, Wg[p + "input_layernorm.weight"], eps)  # noqa: E731
            norm2 = lambda t: gemma_rmsnorm(t, Wg[p + "pre_feedforward_layernorm.weight"], eps)  # noqa: E731
        else:
            p = "model.layers.%d." % l
            norm1 = lambda t: rmsnorm(t, Wg[p + "input_layernorm.weight"], eps)  # noqa: E731
            norm2 = lambda t: rmsnorm(t, Wg[p + "post_attention_layernorm.weight"], eps)  # noqa: E731
        proj = QKV(a, Wg, l)
        for iv in ivs:
            if iv["layer"] == l and iv["kind"] in ("scaleQ", "scaleK", "swapQK"):
                proj.edit(iv)
        h = norm1(x)
        q, k, v = proj.project(h)
        if mt == "qwen3":
            q = rmsnorm(q, Wg[p + "self_attn.q_norm.weight"], eps)
            k = rmsnorm(k, Wg[p + "self_attn.k_norm.weight"], eps)
        if gemma:
            q = gemma_rmsnorm(q, Wg[p + "self_attn.q_norm.weight"], eps)
            k = gemma_rmsnorm(k, Wg[p + "self_attn.k_norm.weight"], eps)
        if a.rot:
            cos, sin = tables[a.local[l]]
            q, k = rope(q, cos, sin, a.rot), rope(k, cos, sin, a.rot)
        if capture is not None and capture["layer"] == l:
            q_cap = q[capture["head"]].clone()
            k_cap = k[capture["head"] // G].clone()
        scale = opts.get("scale")
        if scale is None:
            scale = 1.0 / math.sqrt(HS) if a.scale_w else 1.0
            if gemma:  # Gemma3Attention.scaling
                scale = cfg.get("query_pre_attn_scalar", 256) ** -0.5
            if a.scale_layer:
                scale /= (l + 1)
        kk = k.repeat_interleave(G, dim=0)                      # (NH, T, HS): query head n reads key head n // G
        vv = v.repeat_interleave(G, dim=0)
        scores = (q @ kk.transpose(1, 2)) * scale
        for iv in ivs:
            if iv["kind"] == "soft" and iv["layer"] == l:
                for n in _heads(iv["head"], NH):
                    scores[n, iv["row"], iv["col"]] += float(iv["lambda"])
        if opts.get("layer_mask") is not None:
            mode = opts["layer_mask"][l]
            win = (opts.get("layer_window") or [opts.get("window")] * L)[l]
        else:
            mode, win = opts.get("mask", "causal"), opts.get("window")
        scores = scores.masked_fill(~allowed_mask(mode, T, win, a.windows[l]), float("-inf"))
        att = torch.softmax(scores, dim=-1)
        for iv in ivs:
            if iv["kind"] == "hard" and iv["layer"] == l:
                for n in _heads(iv["head"], NH):
                    att[n, iv["row"], :] = 0.0
                    att[n, iv["row"], iv["col"]] = 1.0
        attentions[l] = att
        y = att @ vv
        for iv in ivs:
            if iv["kind"] == "ablate" and iv["layer"] == l:
                for n in _heads(iv["head"], NH):
                    y[n] = 0.0
        y = y.transpose(0, 1).reshape(T, NH * HS)
        if mt == "gpt2":
            attn = y @ Wg[p + "attn.c_proj.weight"] + Wg[p + "attn.c_proj.bias"]
        elif mt == "gpt_neox":
            ob = Wg.get(p + "attention.dense.bias")
            attn = y @ Wg[p + "attention.dense.weight"].T + (0 if ob is None else ob)
        else:
            ob = Wg.get(p + "self_attn.o_proj.bias")
            attn = y @ Wg[p + "self_attn.o_proj.weight"].T + (0 if ob is None else ob)

        def mlp(t):
            if mt == "gpt2":
                return gelu_new(t @ Wg[p + "mlp.c_fc.weight"] + Wg[p + "mlp.c_fc.bias"]) @ Wg[p + "mlp.c_proj.weight"] \
                    + Wg[p + "mlp.c_proj.bias"]
            if mt == "gpt_neox":
                act = gelu_exact if a.act == "gelu" else gelu_new
                u = act(t @ Wg[p + "mlp.dense_h_to_4h.weight"].T + Wg[p + "mlp.dense_h_to_4h.bias"])
                return u @ Wg[p + "mlp.dense_4h_to_h.weight"].T + Wg[p + "mlp.dense_4h_to_h.bias"]
            g = t @ Wg[p + "mlp.gate_proj.weight"].T + Wg.get(p + "mlp.gate_proj.bias", 0)
            u = t @ Wg[p + "mlp.up_proj.weight"].T + Wg.get(p + "mlp.up_proj.bias", 0)
            act = gelu_new(g) if gemma else silu(g)   # Gemma: gelu_pytorch_tanh, the same tanh formula as gelu_new
            return (act * u) @ Wg[p + "mlp.down_proj.weight"].T + Wg.get(p + "mlp.down_proj.bias", 0)

        if gemma:
            x = x + gemma_rmsnorm(attn, Wg[p + "post_attention_layernorm.weight"], eps)
            x = x + gemma_rmsnorm(mlp(norm2(x)), Wg[p + "post_feedforward_layernorm.weight"], eps)
        elif a.parallel:
            x = x + attn + mlp(norm2(x))
        else:
            x = x + attn
            x = x + mlp(norm2(x))
    if mt == "gpt2":
        xf = layernorm(x, Wg["ln_f.weight"], Wg["ln_f.bias"], eps)
        head = embed if a.tied else Wg["lm_head.weight"]
    elif mt == "gpt_neox":
        xf = layernorm(x, Wg["gpt_neox.final_layer_norm.weight"], Wg["gpt_neox.final_layer_norm.bias"], eps)
        head = embed if a.tied else Wg["embed_out.weight"]
    else:
        xf = (gemma_rmsnorm if gemma else rmsnorm)(x, Wg["model.norm.weight"], eps)
        head = embed if a.tied else Wg["lm_head.weight"]
    all_logits = xf @ head.T                                    # (T, V)
    logits = all_logits[T - 1]
    # the next-token loss summed over positions 0..T-2 (nats)
    logp = torch.log_softmax(all_logits[:-1], dim=-1)
    nll = -float(sum(logp[t, ids[t + 1]] for t in range(T - 1)))
    return {
        "logits": logits.numpy().astype(np.float32),
        "nll": nll,
        "attentions": attentions.numpy().astype(np.float32),
        "q": None if q_cap is None else q_cap.numpy().astype(np.float32),
        "k": None if k_cap is None else k_cap.numpy().astype(np.float32),
    }
