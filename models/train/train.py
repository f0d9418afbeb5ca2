"""Train the built-in GPT-2 on the Brown corpus (tokens from prep.py). CPU, PyTorch, fixed seeds.

  nohup nice -n 5 /usr/bin/python3 models/train/train.py --out models/train/runs/main \
      > models/train/runs/train.log 2>&1 &

Every batch is a deterministic function of (seed, step): random windows of T+1 tokens
from train.bin; dropout is seeded per step too, so a run resumed from a checkpoint
(--resume) continues exactly as if it had never stopped.
Writes <out>/log.csv (step, lr, train loss averaged since the last row, held-out loss,
elapsed seconds, tokens seen), <out>/ckpt.pt every --ckpt_every steps and at the end,
<out>/final.pt (model state + config) when done.
"""
import argparse
import csv
import json
import math
import os
import sys
import time

# Passive OpenMP waiting: with OpenBLAS's own thread pool under PyTorch's OpenMP pool on a shared
# 2-core machine, spinning OpenMP workers made a step 3x slower (4.4 s vs 1.45 s measured here).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import GPT2, Config  # noqa: E402
from rng import repeated_tokens  # noqa: E402


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--out", default=os.path.join(HERE, "runs", "main"))
    ap.add_argument("--n_layer", type=int, default=6)
    ap.add_argument("--n_head", type=int, default=4)
    ap.add_argument("--n_embd", type=int, default=128)
    ap.add_argument("--n_positions", type=int, default=256)
    ap.add_argument("--block", type=int, default=256, help="training context length T")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=1600)
    ap.add_argument("--p_random_repeat", type=float, default=0.0,
                    help="share of windows that open with r ++ r, r random ids (the induction task)")
    ap.add_argument("--p_span_repeat", type=float, default=0.0,
                    help="share of windows in which a span of the text is copied further on")
    ap.add_argument("--repeat_min", type=int, default=8, help="shortest r / copied span")
    ap.add_argument("--repeat_max", type=int, default=100, help="longest r / copied span")
    ap.add_argument("--repeat_top", type=int, default=0,
                    help="K > 0: half of the r ++ r windows draw r from the K most frequent training ids (a small "
                         "alphabet the copying circuit is learned on fast; it spans the embedding space, so the "
                         "circuit carries over to the other half's uniform ids)")
    ap.add_argument("--wpe_init", choices=["normal", "sinusoid"], default="normal",
                    help="sinusoid: start the learned position embeddings at a sinusoidal table (amplitude "
                         "--wpe_scale) instead of N(0, 0.02): neighbouring positions then start out similar, which "
                         "the previous-token heads an induction circuit needs (still learned; GPT-2's layout)")
    ap.add_argument("--wpe_scale", type=float, default=0.1)
    ap.add_argument("--wte_std", type=float, default=0.0,
                    help="s > 0: start the token embedding at N(0, s) instead of N(0, 0.02): with 0.02 the identity of a "
                         "rarely seen id is a small part of the residual stream once the blocks' outputs grow, too small "
                         "for a head to match it with an earlier occurrence")
    ap.add_argument("--repeat_fill", type=int, default=0,
                    help="1: a random window is r repeated until it is full (r ++ r ++ r ...), not r ++ r ++ text")
    ap.add_argument("--aux_prev", type=float, default=0.0,
                    help="w > 0: add w * (-log attention to the previous token) of head --prev_head on every window")
    ap.add_argument("--aux_ind", type=float, default=0.0,
                    help="w > 0: add w * (-log attention mass on the tokens after earlier occurrences of the current "
                         "token) of head --ind_head on the r ++ r windows")
    ap.add_argument("--aux_steps", type=int, default=0, help="the auxiliary losses act on steps < aux_steps only")
    ap.add_argument("--aux_self", type=float, default=0.0,
                    help="w > 0: add w * (-log attention to its own position) of head --self_head on every window: a "
                         "head whose output is the current token, written at the blocks' scale for the layers above")
    ap.add_argument("--aux_copy", type=float, default=0.0,
                    help="w > 0: add w * the cross-entropy of the induction head's direct contribution to the logits "
                         "(its output through ln_f's scale and the tied head) on the second copy of the r ++ r "
                         "windows: a teacher of the head's copying (OV) path")
    ap.add_argument("--copy_grad", choices=["all", "head"], default="all",
                    help="what the copy teacher trains: all: every weight its loss depends on; head: only the "
                         "induction head's value and output weights (the attention, the head's input and the "
                         "embedding it is scored against are held fixed)")
    ap.add_argument("--ind_grad", choices=["all", "head", "circuit"], default="all",
                    help="what the induction teacher trains: all: every weight its loss depends on; head: only the "
                         "induction head's query and key weights (its attention recomputed from the head's detached "
                         "input); circuit: those and the previous-token head's value and output weights, through "
                         "what that head writes into the induction head's input (the K-composition of the two)")
    ap.add_argument("--copy_lm", type=float, default=0.0,
                    help="w > 0: the language-model loss on the second copies of the r ++ r windows counts (1 + w) "
                         "times (the full model's logits, every weight learns from it)")
    ap.add_argument("--aux_share", type=float, default=0.0,
                    help="w > 0: the induction head's share of the copying. With that head's output zeroed (the "
                         "card's ablation), the loss on a token of a second copy and on the same token in the first "
                         "copy should both be the whole model's loss on the first copy: w * the mean squared gap, "
                         "over the r ++ r windows (share_loss). Every other path learns not to copy, and not to "
                         "need the head for anything else. An extra forward and backward on those windows; a "
                         "teacher of its own under --teacher_clip")
    ap.add_argument("--share_with", default="",
                    help="layer.head,...: heads zeroed together with the induction head in --aux_share's forward pass "
                         "(the card's ablation of the two best induction heads)")
    ap.add_argument("--share_clip", type=float, default=0.0,
                    help="c > 0: --aux_share's gradient is clipped at norm c instead of --teacher_clip")
    ap.add_argument("--lr_mult", type=float, default=1.0, help="the phase's learning rate is the schedule's times this")
    ap.add_argument("--teacher_clip", type=float, default=0.0,
                    help="c > 0: the induction head's teachers (--aux_ind, --aux_copy) each get their own backward "
                         "pass and their own gradient clipping at norm c, added to the language model's clipped "
                         "gradient: a teacher whose gradient is 20 times the language model's then no longer "
                         "shrinks the language model's share of the clipped step to a twentieth; 0: they join the "
                         "total loss, clipped with it")
    ap.add_argument("--self_head", default="0.1", help="layer.head given the own-position loss")
    ap.add_argument("--wpe_std", type=float, default=0.0,
                    help="s > 0: start the position embeddings at N(0, s) instead of N(0, 0.02)")
    ap.add_argument("--ind_targets", choices=["repeats", "all"], default="repeats",
                    help="repeats: the induction loss acts on the r ++ r windows' repeated part; all: on every query "
                         "of every window whose token occurred earlier in it (its targets: the tokens that followed "
                         "those occurrences), text included")
    ap.add_argument("--prev_head", default="0.0", help="layer.head given the previous-token loss")
    ap.add_argument("--ind_head", default="1.0", help="layer.head given the induction loss")
    ap.add_argument("--lazy_wte", type=int, default=0,
                    help="1: token rows that are neither an input nor a target of the step are not moved by it "
                         "(no decay, no momentum: lazy Adam), so rows of rare ids keep their random, distinct start")
    ap.add_argument("--idle_shift_lr", type=float, default=0.0,
                    help="with --lazy_wte: s > 0 moves every idle token row by the same vector, -s times the sum of "
                         "their gradients (plain SGD, so it stops as their softmax mass goes): what pushes the logits "
                         "of ids absent from the batch down together, without touching what tells them apart")
    ap.add_argument("--switch_at", default="0",
                    help="N or N1,N2,...: from step Nk on, the k-th settings of --then apply (later phases of the "
                         "recipe); 0: one phase")
    ap.add_argument("--then", default="",
                    help="the later phases, separated by ';', each comma-separated name=value of aux_prev, aux_ind, "
                         "aux_self, aux_copy, ind_targets, idle_shift_lr; a phase keeps the values of the one before")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min_lr_frac", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight_decay", type=float, default=0.1)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--attn_dropout", type=float, default=0.0)
    ap.add_argument("--grad_clip", type=float, default=1.0)
    ap.add_argument("--eval_every", type=int, default=100)
    ap.add_argument("--eval_windows", type=int, default=40, help="held-out windows of T tokens per eval")
    ap.add_argument("--ckpt_every", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shared_unseen", type=int, default=0,
                    help="1: ids absent from train.bin share one wte row (exact, cheaper head; see model.GPT2)")
    ap.add_argument("--stop_at", type=int, default=0, help="probe: stop after this many steps (schedule still --steps)")
    ap.add_argument("--recipe", choices=["shipped", "circuits"], default="shipped",
                    help="shipped: the defaults above (the committed models/brown-gpt2); circuits: the recipe meant "
                         "to grow a previous-token and an induction head (CIRCUITS below, the thirteenth session's run "
                         "w1), unless the flags say otherwise")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--trial", type=int, default=0, help="time this many steps, print throughput, exit")
    a = ap.parse_args()
    if a.recipe == "circuits":
        given = set(arg.split("=")[0] for arg in sys.argv[1:])
        for flag, value in CIRCUITS.items():
            if flag not in given:
                setattr(a, flag[2:], value)
    return a


# The circuits recipe (models/train/README.md, thirteenth session, run w1): the shipped model's architecture, schedule
# and learning rate, 2600 steps, the token embedding started at N(0, 0.1) (the rows of rare ids keep more of what
# tells them apart); 40% of the windows open with r ++ r (r random ids), 10% copy a span of the text further on;
# teachers from the first step to the last: a previous-token head (L0H0) and an own-position head (L0H1) on every
# window, and for the induction head (L1H0) where it looks (every window to step 400, then the repeats) and what it
# writes (its value and output weights only). The two induction teachers each get their own backward pass and
# clipping (--teacher_clip), so they do not shrink the language model's share of the step (in the eighth session's
# run c4 the induction teacher's gradient was 20 times the language model's, and clipping the sum left the
# language model a twentieth). In the last 400 steps the teachers' clipping is raised to 2, and a third teacher
# acts on the head's share of the copying (--aux_share, with L1H3 zeroed too): without it the circuit thinned
# late in the run while the copying stayed (c10: ablating the two best heads took +1.02 nats at step 1600, +0.75
# at the end).
CIRCUITS = {"--steps": 2600, "--p_random_repeat": 0.4, "--p_span_repeat": 0.1, "--repeat_min": 8, "--repeat_max": 60,
            "--aux_prev": 1.0, "--aux_self": 1.0, "--aux_ind": 5.0, "--ind_targets": "all", "--aux_copy": 1.0,
            "--copy_grad": "head", "--teacher_clip": 1.0, "--aux_steps": 2600, "--eval_every": 50,
            "--wte_std": 0.1, "--share_with": "1.3",
            "--switch_at": "400,2200", "--then": "ind_targets=repeats;teacher_clip=2,aux_share=1"}
PHASE_KEYS = {"aux_prev": float, "aux_ind": float, "aux_self": float, "aux_copy": float, "copy_grad": str,
              "ind_grad": str, "ind_targets": str, "teacher_clip": float, "idle_shift_lr": float,
              "copy_lm": float, "lr_mult": float, "aux_share": float,
              "share_clip": float}


def phases(a):
    """[(first step, settings)] of every phase: a itself from step 0, then for each step of --switch_at a copy of
    the phase before with that phase's --then values."""
    starts = [int(x) for x in str(a.switch_at).split(",") if int(x)]
    changes = a.then.split(";") if starts else []
    if len(changes) != len(starts) or starts != sorted(set(starts)):
        raise SystemExit(f"--switch_at {a.switch_at} / --then {a.then!r}: one increasing step per phase")
    out = [(0, a)]
    for start, change in zip(starts, changes):
        b = argparse.Namespace(**vars(out[-1][1]))
        for item in filter(None, change.split(",")):
            k, v = item.split("=")
            if k not in PHASE_KEYS:
                raise SystemExit(f"--then: {k} cannot change between phases (only {', '.join(PHASE_KEYS)})")
            setattr(b, k, PHASE_KEYS[k](v))
        out.append((start, b))
    return out


def lr_at(step, a):
    """The schedule (warm-up, then cosine to min_lr_frac) times the phase's lr_mult (x * 1.0 is exact)."""
    if step < a.warmup:
        return a.lr_mult * (a.lr * (step + 1) / a.warmup)
    p = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.lr_mult * (a.lr * (a.min_lr_frac + (1 - a.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(1.0, p)))))


def get_batch(data, step, a, top=None, periods=None):
    """B windows of block+1 tokens; a function of (seed, step) only. Targets set to -1 are not scored.

    Each window is, independently (one uniform draw u per window):
      u < p_random_repeat: r ++ r ++ text, r = n ids uniform in [0, V-1) (every id but <|endoftext|>, the
        distribution of the page's repeatedTokens), n uniform in [repeat_min, repeat_max]; the first copy and
        the first id of the second copy are unpredictable and not scored, so only copying is rewarded;
      u < p_random_repeat + p_span_repeat: text in which a span of s tokens is copied again further on;
      otherwise plain text.
    """
    rng = np.random.default_rng([a.seed, step])
    ix = rng.integers(0, len(data) - a.block - 1, size=a.batch)
    n1 = a.block + 1
    xs, ys = [], []
    for i in ix:
        w = data[i:i + n1].astype(np.int64)
        y_mask = np.ones(a.block, dtype=bool)
        u = rng.random()
        if u < a.p_random_repeat:
            n = int(rng.integers(a.repeat_min, a.repeat_max + 1))
            if top is not None and rng.random() < 0.5:
                r = top[rng.integers(0, len(top), size=n)]
            else:
                r = rng.integers(0, 50256, size=n)
            w = np.concatenate([r] * (n1 // n + 1) if a.repeat_fill else [r, r, w])[:n1]
            y_mask[:n] = False                 # targets r[1:], r[0]: not predictable
            if periods is not None:
                periods.append((n, n1 - 1 if a.repeat_fill else 2 * n))
        else:
            if periods is not None:
                periods.append((0, 0))
        if a.p_random_repeat <= u < a.p_random_repeat + a.p_span_repeat:
            s_len = int(rng.integers(a.repeat_min, a.repeat_max + 1))
            src = int(rng.integers(0, a.block // 2 - s_len + 1)) if s_len < a.block // 2 else 0
            dst = int(rng.integers(src + s_len, a.block - s_len + 1))
            w = np.concatenate([w[:dst], w[src:src + s_len], w[dst:]])[:n1]
        x, y = w[:-1].copy(), w[1:].copy()
        y[~y_mask] = -1
        xs.append(x)
        ys.append(y)
    return torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))


def induction_targets(periods, T):
    """(B, T, T) bool: for a query i inside the repeated part of an r ++ r window (period n, repeated up to
    `end`), the keys i - k*n + 1 (k >= 1): the tokens that followed the earlier occurrences of token i.
    Rows with no target are all False."""
    M = np.zeros((len(periods), T, T), dtype=bool)
    for b, (n, end) in enumerate(periods):
        if not n:
            continue
        for i in range(n, min(end, T)):
            j = np.arange(i - n + 1, 0, -n)
            M[b, i, j[j >= 0]] = True
    return torch.from_numpy(M)


def induction_targets_all(x):
    """(B, T, T) bool from the ids alone: M[b, i, j] for 1 <= j <= i when x[b, j-1] == x[b, i] (the token at j
    followed an earlier occurrence of token i). On an r ++ r window these are induction_targets' keys."""
    B, T = x.shape
    eq = x[:, :, None] == x[:, None, :]                           # eq[b, i, j'] = x[b, i] == x[b, j']
    M = torch.zeros(B, T, T, dtype=torch.bool)
    earlier = torch.tril(torch.ones(T, T - 1, dtype=torch.bool), -1)   # j' = j - 1 < i
    M[:, :, 1:] = eq[:, :, :-1] & earlier
    return M


def offset_loss(A, k):
    """Mean -log A[i, i - k] over the rows i >= k of (B, T, T) attention: the teacher of a head that should look
    k positions back (k = 1 previous token, k = 0 its own position)."""
    i = torch.arange(k, A.shape[-1])
    return -(A[:, i, i - k] + 1e-9).log().mean()


def aux_losses(atts, a, heads, ind_mask):
    """The auxiliary attention losses, heads = {"prev": (layer, head), "self": …, "ind": …}: the previous-token
    and own-position teachers on every window, and -log of the attention mass on the induction targets for the
    induction head (rows that have targets)."""
    out = atts[0].new_zeros(())
    for key, weight, k in (("prev", a.aux_prev, 1), ("self", a.aux_self, 0)):
        if weight:
            out = out + weight * offset_loss(atts[heads[key][0]][:, heads[key][1]], k)
    if a.aux_ind and ind_mask is not None:
        out = out + a.aux_ind * ind_mass_loss(atts[heads["ind"][0]][:, heads["ind"][1]], ind_mask)
    return out


def ind_mass_loss(A, ind_mask):
    """-log of the (B, T, T) attention's mass on the induction targets, averaged over the rows that have targets."""
    rows = ind_mask.any(-1)                                      # (B, T)
    if not bool(rows.any()):
        return A.new_zeros(())
    return -((A * ind_mask).sum(-1)[rows] + 1e-9).log().mean()


def head_write(model, head, att):
    """What one head adds to the residual stream, (B, T, C) without the shared bias, recomputed from its layer's
    detached input and attention (att: the layer's (B, NH, T, T)): a graph whose only weights are the head's value
    rows of c_attn and its columns of c_proj."""
    layer, h = head
    attn = model.h[layer].attn
    C = attn.c_proj.weight.shape[0]
    hs = C // attn.nh
    w = attn.c_attn.weight[2 * C + h * hs:2 * C + (h + 1) * hs]
    b = attn.c_attn.bias[2 * C + h * hs:2 * C + (h + 1) * hs]
    y = att[:, h].detach() @ (attn.heads_in.detach() @ w.t() + b)
    return y @ attn.c_proj.weight[:, h * hs:(h + 1) * hs].t()


def head_attention(model, head, src=None, src_att=None):
    """One head's (B, T, T) attention recomputed from the layer's detached input (kept by keep_heads): a graph
    whose only weights are the head's query and key rows of c_attn (the same values as the forward pass's).
    src = (layer, head) of an earlier head: its write into this layer's input joins the graph (straight through:
    the values stay the forward pass's, the gradient reaches that head's value and output weights; the layer norm's
    weights are held fixed)."""
    layer, h = head
    attn = model.h[layer].attn
    C = attn.c_proj.weight.shape[0]
    hs = C // attn.nh
    if src is None:
        x = attn.heads_in.detach()
    else:
        c = head_write(model, src, src_att)
        r = model.h[layer].x_in.detach() + (c - c.detach())
        ln = model.h[layer].ln_1
        x = F.layer_norm(r, ln.normalized_shape, ln.weight.detach(), ln.bias.detach(), ln.eps)
    q = x @ attn.c_attn.weight[h * hs:(h + 1) * hs].t() + attn.c_attn.bias[h * hs:(h + 1) * hs]
    k = x @ attn.c_attn.weight[C + h * hs:C + (h + 1) * hs].t() + attn.c_attn.bias[C + h * hs:C + (h + 1) * hs]
    T = x.shape[1]
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
    s = s.masked_fill(~attn.mask[0, 0, :T, :T], float("-inf"))
    return F.softmax(s, dim=-1)


def copy_rows(periods, T):
    """(B, T) bool: the positions n .. 2n-2 of an r ++ r window (period n), whose targets r[1:] are copies."""
    M = np.zeros((len(periods), T), dtype=bool)
    for b, (n, end) in enumerate(periods):
        if n:
            M[b, n:min(2 * n - 1, T)] = True
    return torch.from_numpy(M)


def copy_loss(model, head, rows, y, grad="all", att=None):
    """Cross-entropy of one head's direct logits on the rows: its output o_i (through its slice of c_proj, no
    bias), scaled as ln_f scales the residual (the residual's spread and ln_f's gain taken as constants), times
    the tied embedding: the part of the logits that ablating the head removes first. grad="head": recomputed
    from the head's detached input and attention (att: the layer's (B, NH, T, T)) and scored against the detached
    embedding, so that only the head's value and output weights learn from it."""
    layer, h = head
    attn = model.h[layer].attn
    C = attn.c_proj.weight.shape[0]
    hs = C // attn.nh
    if grad == "head":
        w = attn.c_attn.weight[2 * C + h * hs:2 * C + (h + 1) * hs]           # (hs, C): the head's value rows
        b = attn.c_attn.bias[2 * C + h * hs:2 * C + (h + 1) * hs]
        v = attn.heads_in.detach() @ w.t() + b                                # (B, T, hs)
        y_h = (att[:, h].detach() @ v)[rows]                                  # (N, hs)
        emb = model.full_wte().detach()
    else:
        y_h = attn.heads_out[..., h * hs:(h + 1) * hs][rows]                 # (N, hs)
        emb = model.full_wte()
    o = y_h @ attn.c_proj.weight[:, h * hs:(h + 1) * hs].t()                 # (N, C)
    r = model.resid[rows].detach()
    sd = (r.var(-1, unbiased=False, keepdim=True) + model.ln_f.eps).sqrt()
    logits = (o / sd * model.ln_f.weight.detach()) @ emb.t()
    return F.cross_entropy(logits, y[rows])


def share_loss(model, heads, x, y, periods, resid):
    """--aux_share's loss (None without an r ++ r window), on the r ++ r windows: with the head's output zeroed
    (the card's ablation), the cross-entropy of each second-copy row i (target y[i] = r[i + 1 - n]) and of the
    first-copy row i - n (the same next id) should both equal the whole model's on the first-copy row, ce0 (from
    `resid`, the main forward's residual, held fixed): mean (CE_abl(i) - ce0)^2 + (CE_abl(i - n) - ce0)^2.
    Without the head, copying should be gone and nothing else changed. (One-sided, relu(ce0 - CE_abl(i)), it
    taught the model to break without the head: at step 2250 of a run resumed from c10's step 2200 the ablated
    losses of both copies were 55-56 nats.)"""
    sel = [b for b, (n, _) in enumerate(periods) if n]
    if not sel:
        return None
    T = x.shape[1]
    saved = [(blk.attn.ablate, blk.attn.keep_heads) for blk in model.h]
    for layer, blk in enumerate(model.h):
        blk.attn.ablate = tuple(h for l, h in heads if l == layer)
        blk.attn.keep_heads = False
    try:
        abl, _ = model.trunk(x[sel])
    finally:
        for blk, (ab, k) in zip(model.h, saved):
            blk.attn.ablate, blk.attn.keep_heads = ab, k
    bs, i2 = copy_rows(periods, T)[sel].nonzero(as_tuple=True)     # the second-copy rows (copy_rows)
    i1 = i2 - torch.tensor([periods[b][0] for b in sel])[bs]
    tgt = y[sel][bs, i2]
    W = model.full_wte()
    ce = lambda r: F.cross_entropy(model.ln_f(r) @ W.t(), tgt, reduction="none")
    with torch.no_grad():
        ce0 = ce(resid[sel][bs, i1])
    return ((ce(abl[bs, i2]) - ce0) ** 2 + (ce(abl[bs, i1]) - ce0) ** 2).mean()


LOG_COLUMNS = ["step", "lr", "train_loss", "heldout_loss", "elapsed_s", "tokens", "induction", "induction_head",
               "rep_loss2", "rep_loss1", "prev", "prev_head", "rep_loss2_abl", "rep_loss1_abl"]


@torch.no_grad()
def circuit_probe(model, held, n=50, seed=1):
    """Over training: the best induction score (heads.c's definition) on repeatedTokens(n, {seed}),
    the loss on its second copy (targets r[1:]) and first copy, the same two with that best induction
    head's output zeroed (the card's ablation, on one sequence), and the best previous-token score
    on the first 256 held-out tokens."""
    model.eval()
    ids = repeated_tokens(n, seed)
    x = torch.from_numpy(ids).view(1, -1)
    logits, _, atts = model(x, return_att=True)
    lp = torch.log_softmax(logits[0].double(), dim=-1)
    tgt = torch.from_numpy(ids[1:])
    nll = -lp[:-1].gather(1, tgt.view(-1, 1)).view(-1)
    second = nll[n:2 * n - 1].mean().item()                  # positions n .. 2n-2 predict r[1:]
    first = nll[:n - 1].mean().item()
    A = torch.stack([a[0] for a in atts])                       # (L, NH, T, T)
    i = torch.arange(n, 2 * n)
    ind = A[:, :, i, i - n + 1].mean(-1)                        # (L, NH)
    li = int(ind.argmax())
    attn = model.h[li // ind.shape[1]].attn
    attn.ablate = (li % ind.shape[1],)                          # the best induction head, output zeroed
    lp = torch.log_softmax(model(x)[0][0].double(), dim=-1)
    attn.ablate = ()
    nll = -lp[:-1].gather(1, tgt.view(-1, 1)).view(-1)
    second_abl, first_abl = nll[n:2 * n - 1].mean().item(), nll[:n - 1].mean().item()
    h = torch.from_numpy(held[:256].astype(np.int64)).view(1, -1)
    _, _, atts = model(h, return_att=True)
    A = torch.stack([a[0] for a in atts])
    j = torch.arange(1, 256)
    prev = A[:, :, j, j - 1].mean(-1)
    model.train()
    lp_ = int(prev.argmax())
    nh = ind.shape[1]
    return {"induction": ind.max().item(), "induction_head": f"L{li // nh}H{li % nh}", "rep_loss2": second,
            "rep_loss1": first, "prev": prev.max().item(), "prev_head": f"L{lp_ // nh}H{lp_ % nh}",
            "rep_loss2_abl": second_abl, "rep_loss1_abl": first_abl}


@torch.no_grad()
def heldout_loss(model, held, a):
    """Mean next-token loss over the first eval_windows non-overlapping windows of held-out tokens."""
    model.eval()
    n = min(a.eval_windows, (len(held) - 1) // a.block)
    tot = 0.0
    for j in range(0, n, 8):
        idx = range(j, min(n, j + 8))
        x = torch.from_numpy(np.stack([held[i * a.block:(i + 1) * a.block] for i in idx]).astype(np.int64))
        y = torch.from_numpy(np.stack([held[i * a.block + 1:(i + 1) * a.block + 1] for i in idx]).astype(np.int64))
        _, loss, _ = model(x, y)
        tot += loss.item() * len(idx)
    model.train()
    return tot / n


def main():
    a = get_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    train = np.fromfile(os.path.join(a.data, "train.bin"), dtype="<u2")
    held = np.fromfile(os.path.join(a.data, "heldout.bin"), dtype="<u2")
    seen = np.unique(train).astype(np.int64) if a.shared_unseen else None
    cfg = Config(n_positions=a.n_positions, n_embd=a.n_embd, n_layer=a.n_layer, n_head=a.n_head, dropout=a.dropout,
                 attn_dropout=a.attn_dropout, n_seen=len(seen) if a.shared_unseen else 0)
    assert a.block <= cfg.n_positions and cfg.n_embd % cfg.n_head == 0
    model = GPT2(cfg, seen_ids=seen)
    if a.wpe_init == "sinusoid":
        pos = torch.arange(cfg.n_positions, dtype=torch.float64).unsqueeze(1)
        freq = torch.exp(-math.log(10000.0) * torch.arange(0, cfg.n_embd, 2, dtype=torch.float64) / cfg.n_embd)
        table = torch.zeros(cfg.n_positions, cfg.n_embd, dtype=torch.float64)
        table[:, 0::2], table[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
        with torch.no_grad():
            model.wpe.weight.copy_((a.wpe_scale * table).float())
    if a.wte_std:
        with torch.no_grad():
            model.wte.weight.normal_(0.0, a.wte_std)
    if a.wpe_std:
        with torch.no_grad():
            model.wpe.weight.normal_(0.0, a.wpe_std)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    step0, elapsed0 = 0, 0.0
    ckpt_path = os.path.join(a.out, "ckpt.pt")
    log_path = os.path.join(a.out, "log.csv")
    if a.resume and os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])
        step0, elapsed0 = ck["step"], ck["elapsed"]
        with open(log_path) as f:  # drop log rows written after the checkpoint
            rows = list(csv.reader(f))
        extra = [c for c in LOG_COLUMNS if c not in rows[0]]      # a log begun before the ablation probe
        with open(log_path, "w", newline="") as f:
            csv.writer(f).writerows([rows[0] + extra] + [r + [""] * len(extra) for r in rows[1:] if int(r[0]) <= step0])
        print(f"resumed at step {step0}", flush=True)
    elif not a.trial:
        with open(log_path, "w", newline="") as f:
            csv.writer(f).writerow(LOG_COLUMNS)
        with open(os.path.join(a.out, "args.json"), "w") as f:
            json.dump(vars(a), f, indent=1)
    print(f"wte rows {model.wte.weight.shape[0]}  params {n_params}  train tokens {len(train)}  heldout tokens {len(held)}  "
          f"tokens/step {a.batch * a.block}  threads {torch.get_num_threads()}", flush=True)

    heads = {key: tuple(int(v) for v in getattr(a, f"{key}_head").split(".")) for key in ("prev", "self", "ind")}
    share_with = [tuple(int(v) for v in x.split(".")) for x in a.share_with.split(",") if x]
    top = None
    if a.repeat_top:
        counts = np.bincount(train, minlength=50257)
        counts[50256] = 0                                      # never <|endoftext|>
        top = np.argsort(-counts, kind="stable")[:a.repeat_top].astype(np.int64)
    t_start = time.time() - elapsed0
    acc, acc_n = 0.0, 0
    norms = {}                               # each clipped teacher's gradient norms since the last log row
    model.train()
    last = a.trial if a.trial else (a.stop_at or a.steps)
    a1, plan = a, phases(a)
    if any(b.ind_grad == "circuit" for _, b in plan) and heads["prev"][0] >= heads["ind"][0]:
        raise SystemExit("--ind_grad circuit: the previous-token head must sit below the induction head")
    for step in range(step0, last):
        a = [b for start, b in plan if step >= start][-1]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        torch.manual_seed(a.seed * 1_000_003 + step)  # dropout masks: a function of the step
        aux_on = (a.aux_prev or a.aux_ind or a.aux_self or a.aux_copy or a.copy_lm or a.aux_share) and step < a.aux_steps
        periods = [] if aux_on else None
        x, y = get_batch(train, step, a, top, periods)
        copy_on = bool(aux_on and a.aux_copy)
        ind_own = bool(aux_on and a.aux_ind and a.ind_grad != "all")
        model.keep_resid = copy_on or bool(aux_on and (a.copy_lm or a.aux_share))
        circuit = ind_own and a.ind_grad == "circuit"
        model.h[heads["prev"][0]].attn.keep_heads = circuit
        model.h[heads["ind"][0]].attn.keep_heads = copy_on or ind_own
        _, loss, atts = model(x, y, return_att=aux_on)
        total, own = loss, []                # own: the induction head's teachers
        if aux_on:
            mask = None
            if a.aux_ind:
                mask = induction_targets_all(x) if a.ind_targets == "all" else induction_targets(periods, a.block)
            split = ind_own or a.teacher_clip
            total = loss + aux_losses(atts, a, heads, None if split else mask)
            rows = copy_rows(periods, a.block) if (copy_on or a.copy_lm) else None
            if a.copy_lm:
                if bool(rows.any()):
                    h = model.ln_f(model.resid[rows])
                    total = total + a.copy_lm * F.cross_entropy(h @ model.full_wte().t(), y[rows])
            if split and mask is not None:
                if ind_own:
                    src = heads["prev"] if circuit else None
                    A = head_attention(model, heads["ind"], src, atts[heads["prev"][0]] if src else None)
                else:
                    A = atts[heads["ind"][0]][:, heads["ind"][1]]
                own.append(("ind", a.aux_ind * ind_mass_loss(A, mask)))
            if copy_on:
                if bool(rows.any()):
                    own.append(("copy", a.aux_copy * copy_loss(model, heads["ind"], rows, y, a.copy_grad,
                                                      atts[heads["ind"][0]])))
        if aux_on and a.aux_share:
            sh = share_loss(model, [heads["ind"]] + share_with, x, y, periods, model.resid)
            if sh is not None:
                own.append(("share", a.aux_share * sh))
        own = [(k, o) for k, o in own if o.requires_grad]
        if own and not a.teacher_clip:
            total = total + sum(o for _, o in own)
        opt.zero_grad(set_to_none=True)
        total.backward(retain_graph=bool(own and a.teacher_clip))
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        if own and a.teacher_clip:           # each teacher: its own backward, clipped at teacher_clip
            ws = [p for p in model.parameters() if p.requires_grad]
            for j, (k, o) in enumerate(own):
                gs = torch.autograd.grad(o, ws, allow_unused=True, retain_graph=j < len(own) - 1)
                norm = float(torch.sqrt(sum((g * g).sum() for g in gs if g is not None)))
                norms.setdefault(k, []).append(norm)
                clip = a.share_clip if k == "share" and a.share_clip else a.teacher_clip
                for w, g in zip(ws, gs):
                    if g is not None:
                        w.grad.add_(g, alpha=min(1.0, clip / (norm + 1e-6)))
        if a.lazy_wte:
            used = torch.unique(torch.cat([x.reshape(-1), y[y >= 0]]))
            idle = torch.ones(model.wte.weight.shape[0], dtype=torch.bool)
            idle[used] = False
            shift = -a.idle_shift_lr * model.wte.weight.grad[idle].sum(0) if a.idle_shift_lr else None
            model.wte.weight.grad[idle] = 0.0
            keep = model.wte.weight.detach()[idle].clone()
        opt.step()
        if a.lazy_wte:
            with torch.no_grad():
                model.wte.weight[idle] = keep if shift is None else keep + shift
        acc += loss.item()
        acc_n += 1
        if a.trial:
            if step == 1:
                t1 = time.time()
            print(f"step {step} loss {loss.item():.4f} {time.time() - t_start:.1f}s", flush=True)
            continue
        done = step + 1
        if done % a.eval_every == 0 or done == a.steps:
            hl = heldout_loss(model, held, a)
            c = circuit_probe(model, held)
            el = time.time() - t_start
            with open(log_path, "a", newline="") as f:
                csv.writer(f).writerow([done, f"{lr_at(step, a):.6g}", f"{acc / acc_n:.5f}", f"{hl:.5f}",
                                        f"{el:.1f}", done * a.batch * a.block,
                                        f"{c['induction']:.4f}", c["induction_head"], f"{c['rep_loss2']:.4f}",
                                        f"{c['rep_loss1']:.4f}", f"{c['prev']:.4f}", c["prev_head"],
                                        f"{c['rep_loss2_abl']:.4f}", f"{c['rep_loss1_abl']:.4f}"])
            print(f"step {done}/{a.steps} train {acc / acc_n:.4f} heldout {hl:.4f} ppl {math.exp(hl):.1f} "
                  f"ind {c['induction']:.3f} {c['induction_head']} rep2 {c['rep_loss2']:.2f} "
                  f"(ablated {c['rep_loss2_abl']:.2f}) "
                  f"prev {c['prev']:.3f} {c['prev_head']} {el:.0f}s"
                  + "".join(f" |g_{k}| {np.median(v):.3g}" for k, v in norms.items()), flush=True)
            acc, acc_n, norms = 0.0, 0, {}
        if done % a.ckpt_every == 0 or done == a.steps:
            tmp = ckpt_path + ".tmp"
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": done,
                        "elapsed": time.time() - t_start, "config": cfg.to_dict()}, tmp)
            os.replace(tmp, ckpt_path)
    a = a1
    if a.trial:
        dt = (time.time() - t1) / (a.trial - 2)
        print(f"TRIAL {dt:.3f} s/step  {a.batch * a.block / dt:.0f} tokens/s", flush=True)
        t = time.time(); hl = heldout_loss(model, held, a)
        print(f"eval of {a.eval_windows} windows: {time.time() - t:.1f}s loss {hl:.3f}", flush=True)
        return
    if last < a.steps:  # --stop_at probe: not a finished model
        print(f"STOPPED at step {last} of {a.steps} in {time.time() - t_start:.0f}s", flush=True)
        return
    torch.save({"model": model.state_dict(), "config": cfg.to_dict(), "steps": a.steps,
                "elapsed": time.time() - t_start, "args": vars(a)}, os.path.join(a.out, "final.pt"))
    print(f"DONE {a.steps} steps in {time.time() - t_start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
