"""evidence_ref.py — does attention explain? The interventional quantities of docs/evidence.md, computed from
gpt2_ref.forward (float64) with plain loops: every effect is a full forward pass, nothing is reused or
approximated, so the engine's faster paths (layers below l reused, batched knockouts) are checked against it.

The other families (FamilyModel: mistral, gemma3_text, and every family circuits_ref.Model reads) run through
circuits_ref.run, the float64 forward pass written from Hugging Face's modeling code with each layer's own
(sliding-window) causal mask, under the same contract of hooks as gpt2_ref.forward's options.

Letters: L layers, NH heads, T tokens, V vocabulary. KL(p || q) = sum_v p_v (log p_v - log q_v), in nats.
"""
import math

import numpy as np
import torch

from gpt2_ref import forward as gpt2_forward
from stats_ref import SplitMix64, average_ranks  # the generator of c/src/stats.c and the average ranks, written once


class FamilyModel:
    """A Hugging Face folder of any family circuits_ref.Model reads, with gpt2_ref.forward's options."""

    def __init__(self, model_dir):
        import circuits_ref
        from families_ref import read_dir
        self._run = circuits_ref.run
        cfg, W = read_dir(model_dir)
        self.M = circuits_ref.Model(cfg, W)
        self.L, self.NH = self.M.L, self.M.NH

    def forward(self, ids, opts=None):
        """gpt2_ref.forward's options: interventions (ablate only), knockouts, knockout_tokens(_zero), head_out,
        resid, capture_resid, capture_head_out, all_logits."""
        opts = dict(opts or {})
        hooks = {"all_logits": True}
        for iv in opts.get("interventions") or []:
            if iv["kind"] != "ablate":
                raise ValueError("FamilyModel.forward takes the ablate intervention only")
            hooks.setdefault("ablate", set()).add((iv["layer"], iv["head"]))
        for k in ("knockouts", "knockout_tokens", "knockout_tokens_zero", "head_out", "resid"):
            if opts.get(k):
                hooks[k] = opts[k]
        r = self._run(self.M, ids, hooks)
        out = {"logits64": r["logits"].numpy(), "logits": r["logits"].numpy().astype(np.float32),
               "attentions": r["A"].numpy().astype(np.float32), "all_logits64": r["all_logits"].numpy()}
        if opts.get("capture_resid"):
            out["resid"] = r["x_in"]                                   # (L, T, C)
        if opts.get("capture_head_out"):
            out["head_out"] = r["y"]                                   # (L, NH, T, HS)
        return out


def forward(model, ids, opts=None):
    """gpt2_ref.forward for its GPT-2 model, FamilyModel.forward for the other families."""
    if isinstance(model, FamilyModel):
        return model.forward(ids, opts)
    return gpt2_forward(model, ids, opts)


def log_softmax64(z):
    z = np.asarray(z, dtype=np.float64)
    m = z.max(-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))


def kl(lp, lq):
    """KL(p || q) from log-probabilities."""
    p = np.exp(lp)
    return float((p * (lp - lq)).sum())


# ---------------------------------------------------------------------------------------------------------------
# rank correlations (ties get their average rank; Kendall's tau-b)

def spearman(a, b):
    """Pearson correlation of the ranks; NaN when fewer than 2 values or one side is constant."""
    if len(a) < 2:
        return float("nan")
    ra, rb = average_ranks(a), average_ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    d = math.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / d) if d > 0 else float("nan")


def kendall(a, b):
    """Kendall's tau-b: (concordant - discordant) / sqrt((n0 - ties_a)(n0 - ties_b))."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    n = len(a)
    if n < 2:
        return float("nan")
    conc = disc = ta = tb = 0
    for i in range(n):
        for j in range(i + 1, n):
            da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
            if da == 0 and db == 0:
                continue
            if da == 0:
                ta += 1
            elif db == 0:
                tb += 1
            elif da == db:
                conc += 1
            else:
                disc += 1
    d = math.sqrt((conc + disc + ta) * (conc + disc + tb))
    return float((conc - disc) / d) if d > 0 else float("nan")


def top_k_overlap(a, e, k):
    """Share of the k largest entries of a that are also among the k largest of e (ties: lower index first)."""
    k = min(k, len(a))
    ta = set(np.argsort(-np.asarray(a, np.float64), kind="stable")[:k].tolist())
    te = set(np.argsort(-np.asarray(e, np.float64), kind="stable")[:k].tolist())
    return len(ta & te) / k if k else float("nan")


# ---------------------------------------------------------------------------------------------------------------
# 1. edge knockout against attention weight

def layer_window(model, layer):
    """The sliding window of the layer's own causal mask (Mistral, Gemma 3), 0 for none."""
    M = getattr(model, "M", None)
    w = M.a.windows[layer] if M is not None and hasattr(M, "a") and hasattr(M.a, "windows") else None
    return w or 0


def edge_knockout(model, ids, layer, head, k=None, mode="renorm"):
    """head = -1: the edge knocked out in every head of the layer, A = the heads' mean.
    Pairs: every (i, j) the layer's own mask lets row i see: j <= i, and i - j < W under a sliding window W
    (a pair outside it has weight 0 by construction and no effect: it is no pair, NaN, like j > i).
    E[i][j] = KL(plain || knocked) of the next-token distribution at position i; E_last at position T - 1."""
    T = len(ids)
    W = layer_window(model, layer)
    lo = (lambda i: max(0, i - W + 1)) if W else (lambda i: 0)
    base = forward(model, ids, {"all_logits": True})
    lp = log_softmax64(base["all_logits64"])
    att = base["attentions"][layer].astype(np.float64)
    A = att.mean(0) if head == -1 else att[head]
    E = np.full((T, T), np.nan)
    E_last = np.full((T, T), np.nan)
    for i in range(T):
        for j in range(lo(i), i + 1):
            r = forward(model, ids, {"all_logits": True,
                                     "knockouts": [{"layer": layer, "head": head, "row": i, "col": j,
                                                    "mode": mode}]})
            lq = log_softmax64(r["all_logits64"])
            E[i, j] = kl(lp[i], lq[i])
            E_last[i, j] = kl(lp[T - 1], lq[T - 1])
    pairs = [(i, j) for i in range(T) for j in range(lo(i), i + 1)]
    a = [A[i, j] for i, j in pairs]
    e = [E[i, j] for i, j in pairs]
    rows = [spearman(A[i, lo(i):i + 1], E[i, lo(i):i + 1]) for i in range(T)]
    k = T if k is None else k
    return {"A": A, "E": E, "E_last": E_last, "spearman": spearman(a, e), "kendall": kendall(a, e),
            "spearman_last": spearman(a, [E_last[i, j] for i, j in pairs]),
            "row_spearman": rows, "top_k": k, "top_k_overlap": top_k_overlap(a, e, k)}


# ---------------------------------------------------------------------------------------------------------------
# 2. token knockout against three readings of attention

def rollout(att):
    """att (L, NH, T, T) -> R (T, T) = Ã_{L-1} ... Ã_0, Ã_l = ½ mean_h A_l + ½ I."""
    L, _, T, _ = att.shape
    R = np.eye(T)
    for l in range(L):
        At = 0.5 * att[l].astype(np.float64).mean(0) + 0.5 * np.eye(T)
        R = At @ R
    return R


def max_flow(cap, s, t):
    """Edmonds-Karp on a dense capacity matrix."""
    n = len(cap)
    flow = np.zeros((n, n))
    total = 0.0
    while True:
        parent = [-1] * n
        parent[s] = s
        queue = [s]
        while queue and parent[t] == -1:
            u = queue.pop(0)
            for v in range(n):
                if parent[v] == -1 and cap[u][v] - flow[u][v] > 1e-15:
                    parent[v] = u
                    queue.append(v)
        if parent[t] == -1:
            return total
        b, v = float("inf"), t
        while v != s:
            u = parent[v]
            b = min(b, cap[u][v] - flow[u][v])
            v = u
        v = t
        while v != s:
            u = parent[v]
            flow[u][v] += b
            flow[v][u] -= b
            v = u
        total += b


def attention_flow(att, target=None):
    """Max-flow from input token j (layer-0 node j) to the output node (layer L, position target) through the
    layered graph whose edge (l, j) -> (l+1, i) has capacity Ã_l[i][j] (Ã as in rollout)."""
    L, _, T, _ = att.shape
    target = T - 1 if target is None else target
    n = (L + 1) * T
    cap = np.zeros((n, n))
    for l in range(L):
        At = 0.5 * att[l].astype(np.float64).mean(0) + 0.5 * np.eye(T)
        for i in range(T):
            for j in range(T):
                cap[l * T + j][(l + 1) * T + i] = At[i, j]
    return np.array([max_flow(cap, j, L * T + target) for j in range(T)])


def token_knockout(model, ids, mode="column", neutral=0):
    """mode: column (renormalised column knockout in every head and layer), column_zero (without
    renormalisation), delete (token j removed from the input), replace (ids[j] := neutral). The effect is
    KL(plain || changed) of the next-token distribution after the whole input."""
    T = len(ids)
    base = forward(model, ids)
    lp = log_softmax64(base["logits64"])
    eff = []
    for j in range(T):
        if mode == "column":
            r = forward(model, ids, {"knockout_tokens": [j]})
        elif mode == "column_zero":
            r = forward(model, ids, {"knockout_tokens": [j], "knockout_tokens_zero": True})
        elif mode == "delete":
            r = forward(model, ids[:j] + ids[j + 1:])
        else:
            r = forward(model, ids[:j] + [neutral] + ids[j + 1:])
        eff.append(kl(lp, log_softmax64(r["logits64"])))
    att = base["attentions"].astype(np.float64)
    readings = {"last_layer": att[-1].mean(0)[T - 1], "rollout": rollout(att)[T - 1], "flow": attention_flow(att)}
    return {"effect": np.array(eff), "readings": readings,
            "spearman": {k: spearman(v, eff) for k, v in readings.items()},
            "kendall": {k: kendall(v, eff) for k, v in readings.items()}}


# ---------------------------------------------------------------------------------------------------------------
# 3. three ablation semantics

def mean_loss(model, ids, opts):
    r = forward(model, ids, dict(opts, all_logits=True))
    lp = log_softmax64(r["all_logits64"])
    return float(-np.mean([lp[t, ids[t + 1]] for t in range(len(ids) - 1)]))


def ablation_values(model, ids, mode, reference=None):
    """The replacement of each head's output under `mode`: None for zero (the ablate intervention),
    (L, NH, HS) means over the reference text's positions, (L, NH, T, HS) from the reference at positions 0..T-1."""
    if mode == "zero":
        return None
    r = forward(model, reference, {"capture_head_out": True})["head_out"]      # (L, NH, T', HS)
    if mode == "mean":
        return r.mean(2)
    if mode == "resample":
        if len(reference) < len(ids):
            raise ValueError("resample needs a reference at least as long as the input")
        return r[:, :, :len(ids)]
    raise ValueError(mode)


def ablation_opts(heads, mode, vals, T):
    if mode == "zero":
        return {"interventions": [{"kind": "ablate", "layer": l, "head": h, "row": 0, "col": 0, "lambda": 0.0}
                                  for l, h in heads]}
    out = {}
    for l, h in heads:
        v = vals[l, h]
        out[(l, h)] = v.expand(T, -1).clone() if v.dim() == 1 else v.clone()
    return {"head_out": out}


def ablation_semantics(model, ids, reference_mean, reference_resample):
    L, NH, T = model.L, model.NH, len(ids)
    base = mean_loss(model, ids, {})
    res = {"base_loss": base}
    for mode, ref in (("zero", None), ("mean", reference_mean), ("resample", reference_resample)):
        vals = ablation_values(model, ids, mode, ref)
        delta = np.array([mean_loss(model, ids, ablation_opts([(l, h)], mode, vals, T)) - base
                          for l in range(L) for h in range(NH)])
        order = sorted(range(L * NH), key=lambda i: (delta[i], i))
        pruning = [base] + [mean_loss(model, ids, ablation_opts([(o // NH, o % NH) for o in order[:k]], mode, vals, T))
                            for k in range(1, L * NH + 1)]
        res[mode] = {"delta": delta, "order": order, "pruning": np.array(pruning)}
    for a, b in (("zero", "mean"), ("zero", "resample"), ("mean", "resample")):
        res["spearman_%s_%s" % (a, b)] = spearman(res[a]["delta"], res[b]["delta"])
        res["kendall_%s_%s" % (a, b)] = kendall(res[a]["delta"], res[b]["delta"])
    return res


# ---------------------------------------------------------------------------------------------------------------
# 4. activation patching

def patching(model, clean, corrupt, a_clean, a_corrupt):
    """Normalised logit difference: 0 = the corrupted run, 1 = the clean run, for the residual stream at the
    input of layer l at position p (L x T) and for each head's output at all positions (L x NH), clean -> corrupted."""
    if len(clean) != len(corrupt):
        raise ValueError("clean and corrupted inputs must have the same length")
    L, NH, T = model.L, model.NH, len(clean)
    c = forward(model, clean, {"capture_resid": True, "capture_head_out": True})
    d = forward(model, corrupt)
    ld = lambda r: float(r["logits64"][a_clean] - r["logits64"][a_corrupt])
    ld_c, ld_d = ld(c), ld(d)
    if ld_c == ld_d:
        raise ValueError("the clean and corrupted runs have the same logit difference")
    norm = lambda x: (x - ld_d) / (ld_c - ld_d)
    resid = np.array([[norm(ld(forward(model, corrupt, {"resid": {(l, p): c["resid"][l, p]}})))
                       for p in range(T)] for l in range(L)])
    heads = np.array([[norm(ld(forward(model, corrupt, {"head_out": {(l, h): c["head_out"][l, h]}})))
                       for h in range(NH)] for l in range(L)])
    return {"ld_clean": ld_c, "ld_corrupt": ld_d, "resid": resid, "heads": heads}


# ---------------------------------------------------------------------------------------------------------------
# resample ablation over K draws (windows of the reference at seeded offsets)



def resample_draws(model, ids, reference, K, seed):
    """delta_draws[k][l*NH+h] = loss(head (l, h) output at position t taken from the reference's run at
    position off_k + t) - loss(plain); off_k = below(T_ref - T + 1) in order."""
    T = len(ids)
    L, NH = model.L, model.NH
    ref = forward(model, reference, {"capture_head_out": True})["head_out"]     # (L, NH, T_ref, HS)
    base = mean_loss(model, ids, {})
    rng = SplitMix64(seed)
    offs, draws = [], []
    for _ in range(K):
        off = rng.below(len(reference) - T + 1)
        offs.append(off)
        row = []
        for l in range(L):
            for h in range(NH):
                opts = {"head_out": {(l, h): ref[l, h, off:off + T].clone()}}
                row.append(mean_loss(model, ids, opts) - base)
        draws.append(row)
    draws = np.array(draws)
    return {"offsets": offs, "draws": draws, "mean": draws.mean(0), "base_loss": base}
