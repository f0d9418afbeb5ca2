"""backward_ref.py — float64 autograd gradients of the families' forward pass (families_ref.py's model code and
conventions, written out again here without in-place writes so PyTorch can differentiate it), for
tests/ref/gen_backward.py.

The metric m of a run (its logits, see METRICS) is differentiated with respect to, in attnlab's layout
(c/include/attnlab.h, ALAB_GRAD_*):
    embed     (T, C)         the embedding rows embed[ids] (a leaf; gpt2 adds wpe, gemma3 multiplies by sqrt(C))
    resid     (L + 1, T, C)  x entering layer l; [L] the residual leaving the last layer
    head_out  (L, T, DQ)     y = att v per head, after an ablation's zeroing: the tensor the output projection reads
    attn      (L, NH, T, T)  att after a hard do's one-hot rows: the tensor y = att v reads
    scores    (L, NH, T, T)  the softmax's input (q.k scale + soft do); masked cells are -inf, their gradient 0
    q         (L, T, DQ)     q after q_norm and rope; k, v (L, T, DKV) of each key/value head
    mlp_out   (L, T, C)      what the MLP adds to the residual (gemma3: after post_feedforward_layernorm)
Weight edits are made on the weights, as families_ref.py makes them (the C engine makes them on the activations).
"""
import math

import numpy as np
import torch

import families_ref as fr

METRICS = ("logit_diff", "logprob", "kl", "loss")


def run(cfg, W, ids, opts=None, keep=False, embed_rows=None):
    """The forward pass; with keep, every tensor of the list above retains its gradient; embed_rows (T, C): the rows
    in place of embed[ids] (alab_run_opts.embed_rows). Returns (all logits (T, V), a dict of the kept tensors)."""
    opts = dict(opts or {})
    a = fr.Arch(cfg)
    T = len(ids)
    L, NH, NKV, HS, C, eps = a.L, a.NH, a.NKV, a.HS, a.C, a.eps
    G = NH // NKV
    ivs = opts.get("interventions") or []
    idx = torch.tensor(ids, dtype=torch.long)
    mt = a.mt
    gemma = mt == "gemma3_text"
    kept = {"resid": [], "head_out": [], "attn": [], "scores": [], "q": [], "k": [], "v": [], "mlp_out": []}
    if mt == "gpt2":
        pre = "transformer." if "transformer.wte.weight" in W else ""
        Wg = {k[len(pre):] if k.startswith(pre) else k: v for k, v in W.items()}
        embed = Wg["wte.weight"]
    else:
        Wg = W
        embed = W["gpt_neox.embed_in.weight" if mt == "gpt_neox" else "model.embed_tokens.weight"]
    e = (embed[idx] if embed_rows is None else embed_rows).clone().requires_grad_(keep)
    kept["embed"] = e
    if mt == "gpt2":
        x = e + Wg["wpe.weight"][:T]
    elif gemma:
        x = e * float(np.float32(math.sqrt(C)))
    else:
        x = e * 1.0
    if a.rot:
        tables = {}
        for local in set(a.local):
            ang = torch.arange(T, dtype=torch.float64).view(T, 1) * torch.from_numpy(a.inv_freq(local)).view(1, -1)
            tables[local] = (torch.cos(ang), torch.sin(ang))

    def keep_(name, t):
        if keep:
            t.retain_grad()
        kept[name].append(t)
        return t

    for l in range(L):
        x = keep_("resid", x * 1.0)
        if mt == "gpt2":
            p = "h.%d." % l
            norm1 = lambda t: fr.layernorm(t, Wg[p + "ln_1.weight"], Wg[p + "ln_1.bias"], eps)  # noqa: E731
            norm2 = lambda t: fr.layernorm(t, Wg[p + "ln_2.weight"], Wg[p + "ln_2.bias"], eps)  # noqa: E731
        elif mt == "gpt_neox":
            p = "gpt_neox.layers.%d." % l
            norm1 = lambda t: fr.layernorm(t, Wg[p + "input_layernorm.weight"], Wg[p + "input_layernorm.bias"], eps)  # noqa
            norm2 = lambda t: fr.layernorm(t, Wg[p + "post_attention_layernorm.weight"],  # noqa: E731
                                           Wg[p + "post_attention_layernorm.bias"], eps)
        elif gemma:
            p = "model.layers.%d." % l
            norm1 = lambda t: fr.gemma_rmsnorm(t, Wg[p + "input_layernorm.weight"], eps)  # noqa: E731
            norm2 = lambda t: fr.gemma_rmsnorm(t, Wg[p + "pre_feedforward_layernorm.weight"], eps)  # noqa: E731
        else:
            p = "model.layers.%d." % l
            norm1 = lambda t: fr.rmsnorm(t, Wg[p + "input_layernorm.weight"], eps)  # noqa: E731
            norm2 = lambda t: fr.rmsnorm(t, Wg[p + "post_attention_layernorm.weight"], eps)  # noqa: E731
        proj = fr.QKV(a, Wg, l)
        for iv in ivs:
            if iv["layer"] == l and iv["kind"] in ("scaleQ", "scaleK", "swapQK"):
                proj.edit(iv)
        h = norm1(x)
        q, k, v = proj.project(h)
        if mt == "qwen3":
            q = fr.rmsnorm(q, Wg[p + "self_attn.q_norm.weight"], eps)
            k = fr.rmsnorm(k, Wg[p + "self_attn.k_norm.weight"], eps)
        if gemma:
            q = fr.gemma_rmsnorm(q, Wg[p + "self_attn.q_norm.weight"], eps)
            k = fr.gemma_rmsnorm(k, Wg[p + "self_attn.k_norm.weight"], eps)
        if a.rot:
            cos, sin = tables[a.local[l]]
            q, k = fr.rope(q, cos, sin, a.rot), fr.rope(k, cos, sin, a.rot)
        q, k, v = keep_("q", q * 1.0), keep_("k", k * 1.0), keep_("v", v * 1.0)   # (NH | NKV, T, HS)
        scale = opts.get("scale")
        if scale is None:
            scale = 1.0 / math.sqrt(HS) if a.scale_w else 1.0
            if gemma:
                scale = cfg.get("query_pre_attn_scalar", 256) ** -0.5
            if a.scale_layer:
                scale /= (l + 1)
        kk = k.repeat_interleave(G, dim=0)
        vv = v.repeat_interleave(G, dim=0)
        s = (q @ kk.transpose(1, 2)) * scale
        soft = torch.zeros(NH, T, T, dtype=torch.float64)
        for iv in ivs:
            if iv["kind"] == "soft" and iv["layer"] == l:
                for n in fr._heads(iv["head"], NH):
                    soft[n, iv["row"], iv["col"]] += float(iv["lambda"])
        if opts.get("layer_mask") is not None:
            mode = opts["layer_mask"][l]
            win = (opts.get("layer_window") or [opts.get("window")] * L)[l]
        else:
            mode, win = opts.get("mask", "causal"), opts.get("window")
        s = (s + soft).masked_fill(~fr.allowed_mask(mode, T, win, a.windows[l]), float("-inf"))
        s = keep_("scores", s)
        att = torch.softmax(s, dim=-1)
        hard = torch.zeros(NH, T, dtype=torch.bool)
        onehot = torch.zeros(NH, T, T, dtype=torch.float64)
        for iv in ivs:
            if iv["kind"] == "hard" and iv["layer"] == l:
                for n in fr._heads(iv["head"], NH):
                    hard[n, iv["row"]] = True
                    onehot[n, iv["row"], :] = 0.0
                    onehot[n, iv["row"], iv["col"]] = 1.0
        att = keep_("attn", torch.where(hard.unsqueeze(-1), onehot, att))
        y = att @ vv
        live = torch.ones(NH, 1, 1, dtype=torch.float64)
        for iv in ivs:
            if iv["kind"] == "ablate" and iv["layer"] == l:
                for n in fr._heads(iv["head"], NH):
                    live[n] = 0.0
        y = keep_("head_out", (y * live).transpose(0, 1).reshape(T, NH * HS))
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
                return fr.gelu_new(t @ Wg[p + "mlp.c_fc.weight"] + Wg[p + "mlp.c_fc.bias"]) \
                    @ Wg[p + "mlp.c_proj.weight"] + Wg[p + "mlp.c_proj.bias"]
            if mt == "gpt_neox":
                act = fr.gelu_exact if a.act == "gelu" else fr.gelu_new
                u = act(t @ Wg[p + "mlp.dense_h_to_4h.weight"].T + Wg[p + "mlp.dense_h_to_4h.bias"])
                return u @ Wg[p + "mlp.dense_4h_to_h.weight"].T + Wg[p + "mlp.dense_4h_to_h.bias"]
            g = t @ Wg[p + "mlp.gate_proj.weight"].T + Wg.get(p + "mlp.gate_proj.bias", 0)
            u = t @ Wg[p + "mlp.up_proj.weight"].T + Wg.get(p + "mlp.up_proj.bias", 0)
            act = fr.gelu_new(g) if gemma else fr.silu(g)
            return (act * u) @ Wg[p + "mlp.down_proj.weight"].T + Wg.get(p + "mlp.down_proj.bias", 0)

        if gemma:
            x = x + fr.gemma_rmsnorm(attn, Wg[p + "post_attention_layernorm.weight"], eps)
            x = x + keep_("mlp_out", fr.gemma_rmsnorm(mlp(norm2(x)), Wg[p + "post_feedforward_layernorm.weight"], eps))
        elif a.parallel:
            x = x + attn + keep_("mlp_out", mlp(norm2(x)))
        else:
            x = x + attn
            x = x + keep_("mlp_out", mlp(norm2(x)))
    x = keep_("resid", x * 1.0)
    if mt == "gpt2":
        xf = fr.layernorm(x, Wg["ln_f.weight"], Wg["ln_f.bias"], eps)
        head = embed if a.tied else Wg["lm_head.weight"]
    elif mt == "gpt_neox":
        xf = fr.layernorm(x, Wg["gpt_neox.final_layer_norm.weight"], Wg["gpt_neox.final_layer_norm.bias"], eps)
        head = embed if a.tied else Wg["embed_out.weight"]
    else:
        xf = (fr.gemma_rmsnorm if gemma else fr.rmsnorm)(x, Wg["model.norm.weight"], eps)
        head = embed if a.tied else Wg["lm_head.weight"]
    return xf @ head.T, kept


def metric_value(name, logits, ids, a=None, b=None, base=None):
    """The metric of all logits (T, V); base: the unmodified run's last logits (kl)."""
    z = logits[-1]
    if name == "logit_diff":
        return z[a] - z[b]
    if name == "logprob":
        return torch.log_softmax(z, dim=-1)[a]
    if name == "kl":
        lp = torch.log_softmax(base, dim=-1)
        return (lp.exp() * (lp - torch.log_softmax(z, dim=-1))).sum()
    if name == "loss":
        lp = torch.log_softmax(logits[:-1], dim=-1)
        T = len(ids)
        return -sum(lp[t, ids[t + 1]] for t in range(T - 1)) / (T - 1)
    raise ValueError(name)


def gradients(cfg, W, ids, opts, metric, a=None, b=None):
    """(value, {part: float64 numpy array in attnlab's layout})."""
    base = None
    if metric == "kl":
        with torch.no_grad():
            base = run(cfg, W, ids, None)[0][-1]
    logits, kept = run(cfg, W, ids, opts, keep=True)
    m = metric_value(metric, logits, ids, a, b, base)
    m.backward()
    T = len(ids)

    def g(t):
        return torch.zeros_like(t) if t.grad is None else t.grad

    def rows(ts):  # (heads, T, HS) per layer -> (L, T, heads * HS)
        return torch.stack([g(t).transpose(0, 1).reshape(T, -1) for t in ts])

    out = {
        "embed": g(kept["embed"]),
        "resid": torch.stack([g(t) for t in kept["resid"]]),
        "head_out": torch.stack([g(t) for t in kept["head_out"]]),
        "attn": torch.stack([g(t) for t in kept["attn"]]),
        "scores": torch.stack([torch.nan_to_num(g(t), nan=0.0) for t in kept["scores"]]),
        "q": rows(kept["q"]),
        "k": rows(kept["k"]),
        "v": rows(kept["v"]),
        "mlp_out": torch.stack([g(t) for t in kept["mlp_out"]]),
    }
    return float(m), {k: v.detach().numpy() for k, v in out.items()}


PARTS = ("embed", "resid", "head_out", "attn", "scores", "q", "k", "v", "mlp_out")  # ALAB_GRAD_* order
