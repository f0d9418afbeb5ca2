#!/usr/bin/python3
"""circuits_ref.py — an independent float64 reference of "where a head looks versus what it moves": pattern versus
value patching, path patching, direct logit attribution, value-weighted norms, causal tracing by component and
composition scores (alab_pattern_value_patching, alab_path_patching, alab_direct_logit_attribution,
alab_value_norms, alab_component_tracing, alab_composition_scores).

Written from the definitions in c/include/attnlab.h (the block "where a head looks versus what it moves"), not from
the C sources, on the Hugging Face tensors as families_ref.py reads them (gpt2, gpt_neox, llama, qwen2, qwen3,
mistral, gemma3_text). Everything is plain, slow float64 torch: every patched run is a full forward pass from the
embeddings, the composition scores form the full C x C matrices.

Mistral and Gemma 3 (modeling_mistral.py, modeling_gemma3.py, masking_utils.py): every run, patched or not, uses
each layer's own causal mask, so a sliding layer's query i sees keys i - W < j <= i (mistral: every layer; Gemma 3:
its "sliding_attention" layers, which also rotate with rope_local_base_freq). Gemma 3 adds
post_attention_layernorm(attention output) and post_feedforward_layernorm(MLP output) to the residual stream;
"the attention block's output" and "the MLP's output" below are those normalised sublayer outputs (what the
sublayer adds to the residual), so tracing replaces them and freeze_mlp freezes them. The heads' own outputs
y_h (before W_O and the norm) are what pattern/value/head-output patching and path patching's freezing act on.
Direct logit attribution and composition scores need each head's y_h W_O^h to be a term of the residual stream;
Gemma 3's post-norm makes the attention block's contribution RMSNorm(sum_h y_h W_O^h), not a sum of head terms,
so both refuse it (NotLinear); value norms stay ||v_j W_O^h||, before the norm.

Conventions (the header's): row vectors, x W with W of shape (in, out). Head h's pieces:
    W_Q^h, W_K^h, W_V^h (C, HS), their biases (HS), W_O^h (HS, C) = rows h*HS..(h+1)*HS of the output projection;
    nn.Linear tensors (out, in) are transposed; GPT-2's Conv1D tensors are (in, out) already; GPT-NeoX's fused
    query_key_value has rows per head [q_h | k_h | v_h]; with grouped-query attention (NKV < NH) query head h reads
    key/value head h // (NH / NKV).

The forward pass (run) captures, per layer l: x_in[l] the residual entering the layer, A[l] (NH, T, T) the
attention probabilities used, q[l] (NH, T, HS) after q-norm and rotary, k[l], v[l] (NKV, T, HS), y[l] (NH, T, HS)
each head's output before the output projection, attn[l] (T, C) the attention block's output (projection + bias,
then Gemma's post_attention_layernorm), mlp[l] (T, C) the MLP's output (then Gemma's post_feedforward_layernorm);
x_out (T, C) the residual leaving the last layer; logits (V) at T-1; all_logits (T, V) with hooks["all_logits"].

Hooks (dict, every key optional):
    "pattern":     {(l, h): A (T, T)}       y_h = A @ V_h (V_h the run's values of head h's key/value head)
    "value":       {(l, h): V (T, HS)}      y_h = A_h @ V   (A_h the run's own pattern, or "pattern"'s)
    "head_out":    {(l, h): Y (T, HS)}      y_h = Y
    "freeze":      {l: Y (NH, T, HS)}       every head of layer l outputs Y[h] (applied after "head_out")
    "freeze_mlp":  {l: M (T, C)}            the MLP of layer l outputs M
    "attn_at":     {(l, p): a (C)}          the attention block's output of layer l at position p replaced
    "mlp_at":      {(l, p): m (C)}          the MLP's output of layer l at position p replaced
    "receiver":    (lr, hr, input, x_alt)   head hr of layer lr computes its query (input 0), key (1) or value (2)
                                            from norm1(x_alt) (its own projection, bias, q/k norm, rotary); its key/
                                            value is its own (the other heads of its group keep theirs)
  evidence_ref's hooks (its family forward, evidence_ref.FamilyModel):
    "resid":       {(l, p): x (C)}          the residual entering layer l at position p replaced (before capture)
    "knockouts":   [{"layer", "head" (-1 all), "row", "col", "mode": "renorm"|"zero"}]  A[row][col] := 0 after
                                            the softmax, the row renormalised (renorm; a row with no mass left is 0)
    "knockout_tokens": [j], "knockout_tokens_zero": bool   column j in every head and layer, every row renormalised
                                            unless zero
    "ablate":      {(l, h)}                 y_h = 0 (before "head_out")

    /usr/bin/python3 tests/ref/circuits_ref.py      # the self-check: no hooks == families_ref.forward
"""
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from families_ref import Arch, gelu_exact, gelu_new, layernorm, read_dir, rmsnorm, rope, silu  # noqa: E402
from families_ref import forward as families_forward  # noqa: E402
from stats_ref import SplitMix64  # noqa: E402

DENOISE, NOISE = 0, 1
PATTERN, VALUE, BOTH = 0, 1, 2
PATH_Q, PATH_K, PATH_V, PATH_LOGITS = 0, 1, 2, 3


# ---------------------------------------------------------------------------------------------------------------
# the model in the header's convention

class Model:
    def __init__(self, cfg, W):
        a = Arch(cfg)
        self.a = a
        self.mt = mt = a.mt
        self.L, self.NH, self.NKV, self.HS, self.C, self.eps = a.L, a.NH, a.NKV, a.HS, a.C, a.eps
        self.G = a.NH // a.NKV
        self.gemma = mt == "gemma3_text"
        # Gemma3TextScaledWordEmbedding: the embedding times a float32 tensor holding sqrt(hidden_size)
        self.embed_scale = float(np.float32(math.sqrt(a.C))) if self.gemma else 1.0
        L, NH, NKV, HS, C = self.L, self.NH, self.NKV, self.HS, self.C
        zHS = torch.zeros(HS, dtype=torch.float64)
        zC = torch.zeros(C, dtype=torch.float64)
        if mt == "gpt2":
            pre = "transformer." if "transformer.wte.weight" in W else ""
            W = {k[len(pre):] if k.startswith(pre) else k: v for k, v in W.items()}
            self.embed = W["wte.weight"]
            self.wpe = W["wpe.weight"]
            self.unembed = self.embed if a.tied else W["lm_head.weight"]
            self.lnf = (W["ln_f.weight"], W["ln_f.bias"])
        elif mt == "gpt_neox":
            self.embed = W["gpt_neox.embed_in.weight"]
            self.wpe = None
            self.unembed = self.embed if a.tied else W["embed_out.weight"]
            self.lnf = (W["gpt_neox.final_layer_norm.weight"], W["gpt_neox.final_layer_norm.bias"])
        else:
            self.embed = W["model.embed_tokens.weight"]
            self.wpe = None
            self.unembed = self.embed if a.tied else W["lm_head.weight"]
            self.lnf = ((1.0 + W["model.norm.weight"]) if self.gemma else W["model.norm.weight"], None)
        self.layers = []
        for l in range(L):
            d = {}
            if mt == "gpt2":
                p = "h.%d." % l
                d["ln1"] = (W[p + "ln_1.weight"], W[p + "ln_1.bias"])
                d["ln2"] = (W[p + "ln_2.weight"], W[p + "ln_2.bias"])
                w, b = W[p + "attn.c_attn.weight"], W[p + "attn.c_attn.bias"]        # (C, 3C) in->out
                d["WQ"] = [w[:, h * HS:(h + 1) * HS] for h in range(NH)]
                d["bQ"] = [b[h * HS:(h + 1) * HS] for h in range(NH)]
                d["WK"] = [w[:, C + j * HS:C + (j + 1) * HS] for j in range(NKV)]
                d["bK"] = [b[C + j * HS:C + (j + 1) * HS] for j in range(NKV)]
                d["WV"] = [w[:, 2 * C + j * HS:2 * C + (j + 1) * HS] for j in range(NKV)]
                d["bV"] = [b[2 * C + j * HS:2 * C + (j + 1) * HS] for j in range(NKV)]
                wo = W[p + "attn.c_proj.weight"]                                        # (C, C) in->out
                d["WO"] = [wo[h * HS:(h + 1) * HS, :] for h in range(NH)]
                d["bO"] = W[p + "attn.c_proj.bias"]
            elif mt == "gpt_neox":
                p = "gpt_neox.layers.%d." % l
                d["ln1"] = (W[p + "input_layernorm.weight"], W[p + "input_layernorm.bias"])
                d["ln2"] = (W[p + "post_attention_layernorm.weight"], W[p + "post_attention_layernorm.bias"])
                w = W[p + "attention.query_key_value.weight"]                          # (3C, C) out x in
                b = W.get(p + "attention.query_key_value.bias")
                rows = lambda h, i: slice(h * 3 * HS + i * HS, h * 3 * HS + (i + 1) * HS)  # noqa: E731
                for i, n in enumerate("QKV"):
                    d["W" + n] = [w[rows(h, i), :].T for h in range(NH)]
                    d["b" + n] = [zHS if b is None else b[rows(h, i)] for h in range(NH)]
                wo = W[p + "attention.dense.weight"]                                    # (C, C) out x in
                d["WO"] = [wo[:, h * HS:(h + 1) * HS].T for h in range(NH)]
                d["bO"] = W.get(p + "attention.dense.bias", zC)
            else:
                p = "model.layers.%d." % l
                if self.gemma:
                    # Gemma3RMSNorm's gain is 1 + w; post_attention_layernorm and post_feedforward_layernorm
                    # normalise the sublayers' outputs, pre_feedforward_layernorm is the MLP's input norm
                    d["ln1"] = (1.0 + W[p + "input_layernorm.weight"], None)
                    d["ln2"] = (1.0 + W[p + "pre_feedforward_layernorm.weight"], None)
                    d["post_attn"] = (1.0 + W[p + "post_attention_layernorm.weight"], None)
                    d["post_mlp"] = (1.0 + W[p + "post_feedforward_layernorm.weight"], None)
                else:
                    d["ln1"] = (W[p + "input_layernorm.weight"], None)
                    d["ln2"] = (W[p + "post_attention_layernorm.weight"], None)
                s = p + "self_attn."
                for n, cnt in (("q", NH), ("k", NKV), ("v", NKV)):
                    w = W[s + n + "_proj.weight"]                                       # (cnt*HS, C)
                    b = W.get(s + n + "_proj.bias")
                    d["W" + n.upper()] = [w[j * HS:(j + 1) * HS, :].T for j in range(cnt)]
                    d["b" + n.upper()] = [zHS if b is None else b[j * HS:(j + 1) * HS] for j in range(cnt)]
                wo = W[s + "o_proj.weight"]                                             # (C, NH*HS)
                d["WO"] = [wo[:, h * HS:(h + 1) * HS].T for h in range(NH)]
                d["bO"] = W.get(s + "o_proj.bias", zC)
                if mt == "qwen3":
                    d["qnorm"], d["knorm"] = W[s + "q_norm.weight"], W[s + "k_norm.weight"]
                if self.gemma:
                    d["qnorm"], d["knorm"] = 1.0 + W[s + "q_norm.weight"], 1.0 + W[s + "k_norm.weight"]
            d["p"] = p
            self.layers.append(d)
        self.W = W

    # the pieces of a layer
    def norm(self, pair, x):
        w, b = pair
        if b is None:
            return rmsnorm(x, w, self.eps)
        return layernorm(x, w, b, self.eps)

    def g1(self, l):
        """The weight of the norm before layer l's attention."""
        return self.layers[l]["ln1"][0]

    def mlp(self, l, t):
        W, p, mt = self.W, self.layers[l]["p"], self.mt
        if mt == "gpt2":
            return gelu_new(t @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"]) @ W[p + "mlp.c_proj.weight"] \
                + W[p + "mlp.c_proj.bias"]
        if mt == "gpt_neox":
            act = gelu_exact if self.a.act == "gelu" else gelu_new
            u = act(t @ W[p + "mlp.dense_h_to_4h.weight"].T + W[p + "mlp.dense_h_to_4h.bias"])
            return u @ W[p + "mlp.dense_4h_to_h.weight"].T + W[p + "mlp.dense_4h_to_h.bias"]
        g = t @ W[p + "mlp.gate_proj.weight"].T + W.get(p + "mlp.gate_proj.bias", 0)
        u = t @ W[p + "mlp.up_proj.weight"].T + W.get(p + "mlp.up_proj.bias", 0)
        act = gelu_new(g) if self.gemma else silu(g)      # Gemma: gelu_pytorch_tanh (GeGLU)
        return (act * u) @ W[p + "mlp.down_proj.weight"].T + W.get(p + "mlp.down_proj.bias", 0)

    def scale(self, l):
        if self.gemma:                                    # Gemma3Attention.scaling
            return self.a.cfg.get("query_pre_attn_scalar", 256) ** -0.5
        s = 1.0 / math.sqrt(self.HS) if self.a.scale_w else 1.0
        if self.a.scale_layer:
            s /= (l + 1)
        return s

    def qkv(self, l, hn, T):
        """q (NH, T, HS), k, v (NKV, T, HS) from the normed residual hn (T, C): projection + bias, q/k norm, rotary."""
        d = self.layers[l]
        q = torch.stack([hn @ d["WQ"][h] + d["bQ"][h] for h in range(self.NH)])
        k = torch.stack([hn @ d["WK"][j] + d["bK"][j] for j in range(self.NKV)])
        v = torch.stack([hn @ d["WV"][j] + d["bV"][j] for j in range(self.NKV)])
        if "qnorm" in d:
            q = rmsnorm(q, d["qnorm"], self.eps)
            k = rmsnorm(k, d["knorm"], self.eps)
        if self.a.rot:
            # Gemma 3's sliding layers rotate with their own base (rope_local_base_freq, no scaling)
            inv = self.a.inv_freq(self.a.local[l])
            ang = torch.arange(T, dtype=torch.float64).view(T, 1) * torch.from_numpy(inv).view(1, -1)
            cos, sin = torch.cos(ang), torch.sin(ang)
            q, k = rope(q, cos, sin, self.a.rot), rope(k, cos, sin, self.a.rot)
        return q, k, v

    def allowed(self, l, T):
        """(T, T) bool: the keys layer l's own causal mask lets each query see (a sliding window on the layers
        config.json gives one: key j kept for query i iff i - W < j <= i, masking_utils.sliding_window_overlay)."""
        i = torch.arange(T).view(T, 1)
        j = torch.arange(T).view(1, T)
        w = self.a.windows[l]
        return (j <= i) if w is None else (j <= i) & (j > i - int(w))

    def post(self, l, key, t):
        """Gemma 3's norm of a sublayer's output before the residual add (identity for the other families)."""
        d = self.layers[l]
        return self.norm(d[key], t) if key in d else t

    def final(self, x):
        """final_norm(x) @ unembed^T for x (C) or (T, C)."""
        return self.norm(self.lnf, x) @ self.unembed.T


def load(model_dir):
    cfg, W = read_dir(model_dir)
    return cfg, W


# ---------------------------------------------------------------------------------------------------------------
# the forward pass with hooks

def run(M, ids, hooks=None):
    hooks = hooks or {}
    L, NH, NKV, HS, C, G = M.L, M.NH, M.NKV, M.HS, M.C, M.G
    T = len(ids)
    idx = torch.tensor(ids, dtype=torch.long)
    x = M.embed[idx].clone()
    if M.embed_scale != 1.0:
        x = x * M.embed_scale
    if M.wpe is not None:
        x = x + M.wpe[:T]
    cap = {k: [] for k in ("x_in", "A", "q", "k", "v", "y", "attn", "mlp")}
    pat, val, hout = hooks.get("pattern", {}), hooks.get("value", {}), hooks.get("head_out", {})
    frz, fmlp = hooks.get("freeze", {}), hooks.get("freeze_mlp", {})
    attn_at, mlp_at = hooks.get("attn_at", {}), hooks.get("mlp_at", {})
    recv = hooks.get("receiver")
    resid = hooks.get("resid", {})
    kos, ko_tokens = hooks.get("knockouts", []), hooks.get("knockout_tokens", [])
    ablate = hooks.get("ablate", set())
    for l in range(L):
        d = M.layers[l]
        for (rl, rp), vec in resid.items():
            if rl == l:
                x = x.clone()
                x[rp] = vec
        cap["x_in"].append(x.clone())
        hn = M.norm(d["ln1"], x)
        q, k, v = M.qkv(l, hn, T)
        cap["q"].append(q.clone())
        cap["k"].append(k.clone())
        cap["v"].append(v.clone())
        # per query head: its query, key and value (NH, T, HS); query head h reads key/value head h // G
        qh = q.clone()
        kh = torch.stack([k[h // G] for h in range(NH)])
        vh = torch.stack([v[h // G] for h in range(NH)])
        if recv is not None and recv[0] == l:
            _, hr, inp, x_alt = recv
            qa, ka, va = M.qkv(l, M.norm(d["ln1"], x_alt), T)
            if inp == PATH_Q:
                qh[hr] = qa[hr]
            elif inp == PATH_K:
                kh[hr] = ka[hr // G]
            elif inp == PATH_V:
                vh[hr] = va[hr // G]
            else:
                raise ValueError("receiver input")
        allowed = M.allowed(l, T)
        A = torch.zeros(NH, T, T, dtype=torch.float64)
        y = torch.zeros(NH, T, HS, dtype=torch.float64)
        for h in range(NH):
            s = (qh[h] @ kh[h].T) * M.scale(l)
            s = s.masked_fill(~allowed, float("-inf"))
            Ah = torch.softmax(s, dim=-1)
            # knockouts (evidence_ref's contract): entries set to 0, each touched row renormalised (a row left
            # with no mass is 0) unless mode "zero"; a token's column in every head and layer
            touched = set()
            for ko in kos:
                if ko["layer"] == l and ko["head"] in (h, -1):
                    Ah[ko["row"], ko["col"]] = 0.0
                    if ko.get("mode", "renorm") == "renorm":
                        touched.add(ko["row"])
            for j in ko_tokens:
                Ah[:, j] = 0.0
                if not hooks.get("knockout_tokens_zero"):
                    touched.update(range(T))
            for i in touched:
                s_ = Ah[i].sum()
                Ah[i] = Ah[i] / s_ if s_ > 0 else Ah[i] * 0.0
            if (l, h) in pat:
                Ah = pat[(l, h)].clone()
            Vh = vh[h]
            if (l, h) in val:
                Vh = val[(l, h)].clone()
            A[h] = Ah
            y[h] = Ah @ Vh
            if (l, h) in ablate:
                y[h] = 0.0
            if (l, h) in hout:
                y[h] = hout[(l, h)].clone()
        if l in frz:
            y = frz[l].clone()
        cap["A"].append(A)
        cap["y"].append(y.clone())
        # the attention sublayer's contribution to the residual stream: projection + bias, then (Gemma 3)
        # post_attention_layernorm; that is what "attn" captures and attn_at replaces
        attn = torch.cat([y[h] for h in range(NH)], dim=1) @ torch.cat(d["WO"], dim=0) + d["bO"]
        attn = M.post(l, "post_attn", attn)
        for (ll, p), vec in attn_at.items():
            if ll == l:
                attn[p] = vec
        # the MLP sublayer's contribution: its output, then (Gemma 3) post_feedforward_layernorm
        if M.a.parallel:
            m = M.mlp(l, M.norm(d["ln2"], x))
        else:
            m = M.mlp(l, M.norm(d["ln2"], x + attn))
        m = M.post(l, "post_mlp", m)
        if l in fmlp:
            m = fmlp[l].clone()
        for (ll, p), vec in mlp_at.items():
            if ll == l:
                m[p] = vec
        cap["attn"].append(attn.clone())
        cap["mlp"].append(m.clone())
        if M.a.parallel:
            x = x + attn + m
        else:
            x = x + attn
            x = x + m
    out = {k: torch.stack(v) for k, v in cap.items()}
    out["x_out"] = x
    out["logits"] = M.final(x[T - 1])
    if hooks.get("all_logits"):
        out["all_logits"] = M.final(x)
    return out


def ld_of(r, a, b):
    lg = r["logits"]
    return float(lg[a] - (0.0 if b == -1 else lg[b]))


def _check_pair(M, clean, corrupt, a, b):
    V = M.unembed.shape[0]
    if len(clean) != len(corrupt) or len(clean) < 1:
        raise ValueError("clean and corrupt must have the same length")
    if not (0 <= a < V and 0 <= b < V):
        raise ValueError("answer outside the vocabulary")
    if a == b:
        raise ValueError("equal answers")


def _base(M, clean, corrupt, a, b):
    _check_pair(M, clean, corrupt, a, b)
    rc, rd = run(M, clean), run(M, corrupt)
    lc, ldd = ld_of(rc, a, b), ld_of(rd, a, b)
    if lc == ldd:
        raise ValueError("the two runs give the same ld")
    return rc, rd, lc, ldd


# ---------------------------------------------------------------------------------------------------------------
# the measures

def pattern_value_patching(cfg, W, clean, corrupt, a, b):
    """grid (2, 3, L, NH) [direction][PATTERN, VALUE, BOTH][l][h]."""
    M = Model(cfg, W)
    rc, rd, lc, ldd = _base(M, clean, corrupt, a, b)
    score = lambda v: (v - ldd) / (lc - ldd)  # noqa: E731
    grid = np.zeros((2, 3, M.L, M.NH))
    for direction in (DENOISE, NOISE):
        base_ids, src = (corrupt, rc) if direction == DENOISE else (clean, rd)
        for l in range(M.L):
            for h in range(M.NH):
                j = h // M.G
                hooks = [{"pattern": {(l, h): src["A"][l, h]}},
                         {"value": {(l, h): src["v"][l, j]}},
                         {"head_out": {(l, h): src["y"][l, h]}}]
                for kind in (PATTERN, VALUE, BOTH):
                    grid[direction, kind, l, h] = score(ld_of(run(M, base_ids, hooks[kind]), a, b))
    return {"grid": grid, "ld_clean": lc, "ld_corrupt": ldd}


def path_patching(cfg, W, clean, corrupt, a, b, receivers, direction, freeze_mlp):
    """out (n_recv, L, NH); NaN where the sender's layer is not below the receiver's."""
    M = Model(cfg, W)
    rc, rd, lc, ldd = _base(M, clean, corrupt, a, b)
    score = lambda v: (v - ldd) / (lc - ldd)  # noqa: E731
    base_ids, base, src = (corrupt, rd, rc) if direction == DENOISE else (clean, rc, rd)
    L, NH, T = M.L, M.NH, len(clean)
    out = np.full((len(receivers), L, NH), np.nan)
    for ls in range(L):
        for hs in range(NH):
            # step 1: the sender's output from the source run, every other head of layers ls.. frozen at the base
            # run's outputs; the MLPs recomputed, or frozen at the base run's with freeze_mlp
            freeze = {}
            for l in range(ls, L):
                Y = base["y"][l].clone()
                if l == ls:
                    Y[hs] = src["y"][ls, hs]
                freeze[l] = Y
            hooks = {"freeze": freeze}
            if freeze_mlp:
                hooks["freeze_mlp"] = {l: base["mlp"][l] for l in range(ls, L)}
            r1 = run(M, base_ids, hooks)
            # step 2: each receiver
            for n, (lr, hr, inp) in enumerate(receivers):
                if inp == PATH_LOGITS:
                    out[n, ls, hs] = score(float((lambda lg: lg[a] - lg[b])(M.final(r1["x_out"][T - 1]))))
                    continue
                if ls >= lr:
                    continue
                r2 = run(M, base_ids, {"receiver": (lr, hr, inp, r1["x_in"][lr])})
                out[n, ls, hs] = score(ld_of(r2, a, b))
    return {"out": out, "ld_clean": lc, "ld_corrupt": ldd}


class NotLinear(ValueError):
    """The measure needs each head's output to be a linear term of the residual stream."""


def _linear_residual(M, what):
    """Gemma 3 normalises each sublayer's output (post_attention_layernorm, post_feedforward_layernorm) before
    adding it to the residual: the attention block adds RMSNorm(sum_h y_h W_O^h), which is not a sum of per-head
    terms, so a head has no direct term in the logits and no W_OV that writes into the next layer's input."""
    if M.gemma:
        raise NotLinear("%s: %s adds RMSNorm(attention output) to the residual stream, not a sum of head terms"
                        % (what, M.mt))


def direct_logit_attribution(cfg, W, ids, a, b):
    """heads (L, NH), sources (L, NH, T), terms (3 + 2L), ld; b = -1: u = W_U[a]."""
    M = Model(cfg, W)
    _linear_residual(M, "direct logit attribution")
    V = M.unembed.shape[0]
    if not (0 <= a < V and (b == -1 or 0 <= b < V)):
        raise ValueError("answer outside the vocabulary")
    if a == b:
        raise ValueError("equal answers")
    L, NH, T, G = M.L, M.NH, len(ids), M.G
    r = run(M, ids)
    u = M.unembed[a] - (0.0 if b == -1 else M.unembed[b])
    x = r["x_out"][T - 1]
    g, beta = M.lnf
    layer = beta is not None
    if layer:
        s = torch.sqrt(((x - x.mean()) ** 2).mean() + M.eps)
    else:
        s = torch.sqrt((x * x).mean() + M.eps)

    def contrib(c):
        if layer:
            c = c - c.mean()
        return float(u @ (g * c / s))

    tok = M.embed[ids[T - 1]]
    pos = M.wpe[T - 1] if M.wpe is not None else torch.zeros(M.C, dtype=torch.float64)
    terms = np.zeros(3 + 2 * L)
    terms[0] = contrib(tok)
    terms[1] = contrib(pos) if M.wpe is not None else 0.0
    terms[2] = float(u @ beta) if layer else 0.0
    heads = np.zeros((L, NH))
    sources = np.zeros((L, NH, T))
    xsum = tok + pos
    for l in range(L):
        d = M.layers[l]
        terms[3 + l] = contrib(d["bO"])
        terms[3 + L + l] = contrib(r["mlp"][l, T - 1])
        xsum = xsum + d["bO"] + r["mlp"][l, T - 1]
        for h in range(NH):
            yo = r["y"][l, h, T - 1] @ d["WO"][h]
            heads[l, h] = contrib(yo)
            xsum = xsum + yo
            for j in range(T):
                sources[l, h, j] = contrib(r["A"][l, h, T - 1, j] * (r["v"][l, h // G, j] @ d["WO"][h]))
    if float((xsum - x).abs().max()) > 1e-9 * max(1.0, float(x.abs().max())):
        raise AssertionError("the decomposition of the residual does not sum to it")
    ld = ld_of(r, a, b)
    return {"heads": heads, "sources": sources, "terms": terms, "ld": ld}


def value_norms(cfg, W, ids):
    """norms (L, NH, T) = || v_j W_O^h ||_2."""
    M = Model(cfg, W)
    r = run(M, ids)
    T = len(ids)
    out = np.zeros((M.L, M.NH, T))
    for l in range(M.L):
        for h in range(M.NH):
            for j in range(T):
                out[l, h, j] = float(torch.linalg.vector_norm(r["v"][l, h // M.G, j] @ M.layers[l]["WO"][h]))
    return out


def component_tracing(cfg, W, clean, corrupt, a, b):
    """attn (L, T), mlp (L, T): denoising scores of one position's attention / MLP output from the clean run."""
    M = Model(cfg, W)
    rc, rd, lc, ldd = _base(M, clean, corrupt, a, b)
    score = lambda v: (v - ldd) / (lc - ldd)  # noqa: E731
    T = len(clean)
    attn = np.zeros((M.L, T))
    mlp = np.zeros((M.L, T))
    for l in range(M.L):
        for p in range(T):
            attn[l, p] = score(ld_of(run(M, corrupt, {"attn_at": {(l, p): rc["attn"][l, p]}}), a, b))
            mlp[l, p] = score(ld_of(run(M, corrupt, {"mlp_at": {(l, p): rc["mlp"][l, p]}}), a, b))
    return {"attn": attn, "mlp": mlp, "ld_clean": lc, "ld_corrupt": ldd}


def _scores3(g1, WQ1, WK1, WV1, WO1, g2, WQ2, WK2, WV2, WO2):
    """(Q, K, V) composition scores of a sender (1) and a receiver (2), full C x C matrices."""
    fro = lambda X: float(torch.linalg.matrix_norm(X, ord="fro"))  # noqa: E731
    OV1 = torch.diag(g1) @ WV1 @ WO1
    OV2 = torch.diag(g2) @ WV2 @ WO2
    QK2 = torch.diag(g2) @ WQ2 @ WK2.T @ torch.diag(g2)
    q = fro(OV1 @ QK2) / (fro(OV1) * fro(QK2))
    k = fro(QK2 @ OV1.T) / (fro(OV1) * fro(QK2))
    v = fro(OV1 @ OV2) / (fro(OV1) * fro(OV2))
    return q, k, v


class Gauss:
    """Box-Muller on splitmix64: sqrt(-2 ln(1 - u1)) cos(2 pi u2), u = (next >> 11) * 2^-53, two draws a normal."""

    def __init__(self, seed):
        self.rng = SplitMix64(seed)

    def uniform(self):
        return (self.rng.next() >> 11) * (2.0 ** -53)

    def normal(self):
        u1 = self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)

    def matrix(self, rows, cols):
        return torch.tensor([[self.normal() for _ in range(cols)] for _ in range(rows)], dtype=torch.float64)


def composition_null(C, HS, n_null, seed):
    """null (3, 3): per kind (Q, K, V) the mean, 2.5 % and 97.5 % quantiles; draws (n_null, 3)."""
    if n_null == 0:
        return np.full((3, 3), np.nan), np.zeros((0, 3))
    gen = Gauss(seed)
    one = torch.ones(C, dtype=torch.float64)
    draws = np.zeros((n_null, 3))
    for n in range(n_null):
        mats = []
        for _ in range(2):                                     # sender, then receiver
            WQ, WK, WV = gen.matrix(C, HS), gen.matrix(C, HS), gen.matrix(C, HS)
            WO = gen.matrix(HS, C)
            mats.append((WQ, WK, WV, WO))
        draws[n] = _scores3(one, *mats[0], one, *mats[1])
    null = np.zeros((3, 3))
    for kind in range(3):
        col = draws[:, kind]
        null[kind] = (float(np.mean(col)), float(np.quantile(col, 0.025)), float(np.quantile(col, 0.975)))
    return null, draws


def composition_scores(cfg, W, n_null, seed):
    """scores (3, P, NH, NH) [Q, K, V][p][h1][h2] for the P = L(L-1)/2 layer pairs l1 < l2 in order (l1 outer),
    null (3, 3)."""
    M = Model(cfg, W)
    _linear_residual(M, "composition scores")
    L, NH, G = M.L, M.NH, M.G
    if L < 2:
        raise ValueError("a one-layer model has no composition")
    if not 0 <= n_null <= 100000:
        raise ValueError("n_null")
    pairs = [(l1, l2) for l1 in range(L - 1) for l2 in range(l1 + 1, L)]
    scores = np.zeros((3, len(pairs), NH, NH))
    for p, (l1, l2) in enumerate(pairs):
        d1, d2 = M.layers[l1], M.layers[l2]
        for h1 in range(NH):
            for h2 in range(NH):
                scores[:, p, h1, h2] = _scores3(
                    M.g1(l1), d1["WQ"][h1], d1["WK"][h1 // G], d1["WV"][h1 // G], d1["WO"][h1],
                    M.g1(l2), d2["WQ"][h2], d2["WK"][h2 // G], d2["WV"][h2 // G], d2["WO"][h2])
    null, _ = composition_null(M.C, M.HS, n_null, seed)
    return {"scores": scores, "null": null}


# ---------------------------------------------------------------------------------------------------------------

def selfcheck(model_dir, ids):
    """No hooks: the logits and attentions of families_ref.forward (float32 outputs of its float64 pass)."""
    cfg, W = read_dir(model_dir)
    M = Model(cfg, W)
    r = run(M, ids)
    ref = families_forward(cfg, W, ids)
    mine = r["logits"].numpy().astype(np.float32)
    scale = max(1.0, float(np.abs(ref["logits"]).max()))
    dl = float(np.abs(mine.astype(np.float64) - ref["logits"].astype(np.float64)).max())
    da = float(np.abs(r["A"].numpy().astype(np.float32) - ref["attentions"]).max())
    if dl > 1e-6 * scale or da > 1e-6:
        raise AssertionError("%s: forward differs from families_ref (logits %.3g, attentions %.3g)"
                             % (model_dir, dl, da))
    return dl, da


if __name__ == "__main__":
    REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
    for d in ("tiny", "families/llama", "families/neox", "families/qwen3", "families/qwen2", "families/gpt2-untied",
              "families/gpt2-noscale", "families/smollm2", "families/mistral", "families/gemma3"):
        path = os.path.join(REPO, "tests", "fixtures", d)
        print(d, "logits/attentions max diff vs families_ref: %.3g %.3g"
              % selfcheck(path, [5, 17, 3, 99, 42, 8, 1, 77, 200, 13]))
