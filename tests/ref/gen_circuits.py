#!/usr/bin/python3
"""gen_circuits.py — golden numbers of the circuit measures (pattern/value patching, path patching, direct logit
attribution, value norms, causal tracing by component, composition scores) on four checkpoints, from the independent
float64 reference tests/ref/circuits_ref.py.

    /usr/bin/python3 tests/ref/gen_circuits.py [--fixtures tests/fixtures]

Writes tests/fixtures/circuits_golden.json (deterministic bytes). Floats are float32-rounded, NaN is written as null.
Before writing, it asserts (float64, within 1e-9) what holds in exact arithmetic:
  - BOTH = a head-output patch = patching the pattern and the values together (y_h = A_src V_src), and on the tiny
    GPT-2, the head grid of evidence_ref.patching (gpt2_ref's forward, a second implementation);
  - a pattern (value) patch with the base run's own pattern (values) gives the base score (0 denoising, 1 noising);
  - DLA: terms + heads sum to ld, each head's sources sum to its term (b given and b = -1);
  - path patching into the logits with the MLPs recomputed equals, for a sender in the last layer, that sender's
    BOTH cell in the same direction (the last layer's MLP is recomputed in both); with the MLPs frozen this holds
    only for a parallel residual (the last MLP does not read the attention output), and is asserted only there;
  - with a parallel residual, a receiver in layer ls + 1 gives the same with the MLPs frozen or recomputed;
  - causal tracing: a position before the first one where clean and corrupt differ scores 0, and so does every
    position but T-1 of the last layer;
  - composition scores lie in [0, 1].
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import circuits_ref as cr  # noqa: E402
from families_ref import read_dir  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
TOL = 1e-9
N_NULL, SEED = 64, 7
MIN_GAP = 0.2

# name, dir, answers below this id (the ids every tokenizer of the folder names: the families' embeddings have
# padding rows past it), clean ids (T = 7), corrupt candidates as {position: id}, the third ids list (DLA, norms)
MODELS = [
    ("tiny", "tiny", 1257, [464, 257, 318, 262, 1110, 11, 290],
     [{3: 1049}, {3: 612}, {1: 383, 3: 1049}, {2: 550}], [40, 588, 257, 1243, 13, 383, 921]),
    ("llama", "families/llama", 277, [84, 104, 101, 32, 99, 97, 116],
     [{4: 100}, {4: 109}, {1: 72, 4: 100}, {3: 44}], [72, 105, 32, 116, 104, 101, 114]),
    ("neox", "families/neox", 277, [84, 104, 101, 32, 99, 97, 116],
     [{4: 100}, {4: 109}, {1: 72, 4: 100}, {3: 44}], [72, 105, 32, 116, 104, 101, 114]),
    ("qwen3", "families/qwen3", 277, [84, 104, 101, 32, 99, 97, 116],
     [{4: 100}, {4: 109}, {1: 72, 4: 100}, {3: 44}], [72, 105, 32, 116, 104, 101, 114]),
    # sliding windows of 4 keys (mistral: both layers; gemma3: layer 0, layer 1 full): T = 9 so that the window
    # cuts every row from 4 on; in mistral positions 0 and 1 cannot reach the last one at all, and the corrupted
    # token (at 2 or 3) changes layer 0 at positions 2..4 that layer 1's window hides from the last one
    ("mistral", "families/mistral", 277, [84, 104, 101, 32, 99, 97, 116, 32, 115],
     [{2: 72}, {3: 44}, {2: 100}, {3: 109}], [72, 105, 32, 116, 104, 101, 114, 101, 46]),
    ("gemma3", "families/gemma3", 277, [84, 104, 101, 32, 99, 97, 116, 32, 115],
     [{2: 72}, {3: 44}, {1: 72, 4: 100}, {4: 100}], [72, 105, 32, 116, 104, 101, 114, 101, 46]),
]
INPUT_NAMES = {cr.PATH_Q: "Q", cr.PATH_K: "K", cr.PATH_V: "V", cr.PATH_LOGITS: "LOGITS"}


def fmt(v):
    """gen_fixtures.fmt with NaN written as null; every float is written float32-rounded."""
    if v is None:
        return "null"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = np.float32(v)
        if f != f:
            return "null"
        s = str(f)
        if s in ("inf", "-inf"):
            raise ValueError("non-finite value in a fixture")
        return s
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, np.ndarray):
        return fmt(list(v.reshape(-1)))
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + fmt(x) for k, x in v.items()) + "}"
    raise TypeError("cannot serialise %r" % type(v))


def close(x, y, what):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    d = float(np.nanmax(np.abs(x - y))) if x.size else 0.0
    if not (np.array_equal(np.isnan(x), np.isnan(y)) and d <= TOL):
        raise AssertionError("%s: differ by %.3g" % (what, d))


def choose_pair(M, clean, candidates, limit):
    """The corrupt candidate and answers (a from the clean run's top 3, b from the corrupt run's top 3, ids below
    limit, a != b) with the largest |ld(clean) - ld(corrupt)|; the first in order among equals."""
    lc = cr.run(M, clean)["logits"]
    top = lambda lg: [int(i) for i in np.argsort(-lg.numpy()[:limit], kind="stable")[:3]]  # noqa: E731
    best = None
    for cand in candidates:
        corrupt = list(clean)
        for p, t in sorted(cand.items()):
            corrupt[p] = t
        ld_ = cr.run(M, corrupt)["logits"]
        for a in top(lc):
            for b in top(ld_):
                if a == b:
                    continue
                gap = abs(float(lc[a] - lc[b]) - float(ld_[a] - ld_[b]))
                if best is None or gap > best[0]:
                    best = (gap, corrupt, a, b)
    if best is None or best[0] < MIN_GAP:
        raise AssertionError("no candidate pair reaches |ld_clean - ld_corrupt| >= %g" % MIN_GAP)
    return best[1], best[2], best[3]


def receivers_of(L, NH):
    r = [(L - 1, 0, cr.PATH_Q), (L - 1, 1, cr.PATH_K), (L - 1, NH - 1, cr.PATH_V)]
    if L > 2:
        r.append((1, 0, cr.PATH_K))
    r.append((0, 0, cr.PATH_LOGITS))
    return r


def one_model(name, rel, limit, clean, candidates, dla_ids, fixtures):
    cfg, W = read_dir(os.path.join(fixtures, rel))
    M = cr.Model(cfg, W)
    L, NH, T = M.L, M.NH, len(clean)
    V = M.unembed.shape[0]
    assert T >= 7 and len(dla_ids) == T and max(clean + dla_ids) < limit <= V
    for c in candidates:
        assert all(0 <= t < limit for t in c.values())
    cr.selfcheck(os.path.join(fixtures, rel), clean)
    corrupt, a, b = choose_pair(M, clean, candidates, limit)
    first_diff = min(p for p in range(T) if clean[p] != corrupt[p])

    # pattern / value / both
    pv = cr.pattern_value_patching(cfg, W, clean, corrupt, a, b)
    grid, lc, ldd = pv["grid"], pv["ld_clean"], pv["ld_corrupt"]
    score = lambda v: (v - ldd) / (lc - ldd)  # noqa: E731
    rc, rd = cr.run(M, clean), cr.run(M, corrupt)
    for direction in (cr.DENOISE, cr.NOISE):
        base_ids, base, src = (corrupt, rd, rc) if direction == cr.DENOISE else (clean, rc, rd)
        both2 = np.zeros((L, NH))
        own = np.zeros((2, L, NH))
        for l in range(L):
            for h in range(NH):
                j = h // M.G
                both2[l, h] = score(cr.ld_of(cr.run(M, base_ids, {"pattern": {(l, h): src["A"][l, h]},
                                                                   "value": {(l, h): src["v"][l, j]}}), a, b))
                own[0, l, h] = score(cr.ld_of(cr.run(M, base_ids, {"pattern": {(l, h): base["A"][l, h]}}), a, b))
                own[1, l, h] = score(cr.ld_of(cr.run(M, base_ids, {"value": {(l, h): base["v"][l, j]}}), a, b))
        close(grid[direction, cr.BOTH], both2, "%s: BOTH vs pattern+value (direction %d)" % (name, direction))
        close(own, np.full((2, L, NH), 0.0 if direction == cr.DENOISE else 1.0),
              "%s: own pattern/values give the base score (direction %d)" % (name, direction))
    if cfg.get("model_type", "gpt2") == "gpt2":
        from evidence_ref import patching
        from gpt2_ref import load_model
        ev = patching(load_model(os.path.join(fixtures, rel)), clean, corrupt, a, b)
        close(grid[cr.DENOISE, cr.BOTH], ev["heads"], "%s: BOTH vs evidence_ref.patching" % name)
        close([ev["ld_clean"], ev["ld_corrupt"]], [lc, ldd], "%s: ld vs evidence_ref" % name)

    # path patching
    recv = receivers_of(L, NH)
    path = []
    for direction in (cr.DENOISE, cr.NOISE):
        for freeze in (False, True):
            pp = cr.path_patching(cfg, W, clean, corrupt, a, b, recv, direction, freeze)
            out = pp["out"]
            close([pp["ld_clean"], pp["ld_corrupt"]], [lc, ldd], "%s: path ld" % name)
            for n, (lr, hr, inp) in enumerate(recv):
                top = L if inp == cr.PATH_LOGITS else lr
                for ls in range(L):
                    if not (np.isnan(out[n, ls]) == (ls >= top)).all():
                        raise AssertionError("%s: path NaN pattern" % name)
            li = recv.index((0, 0, cr.PATH_LOGITS))
            if not freeze or M.a.parallel:
                close(out[li, L - 1], grid[direction, cr.BOTH, L - 1],
                      "%s: path logits, last-layer senders vs BOTH (direction %d, freeze %s)"
                      % (name, direction, freeze))
            if freeze and M.a.parallel:
                # a parallel residual's MLP of layer ls does not read the attention output: a receiver in layer
                # ls + 1 sees the same x' whether the MLPs are frozen or recomputed
                prev = path[-1]["out64"]
                for n, (lr, hr, inp) in enumerate(recv):
                    if inp != cr.PATH_LOGITS and lr >= 1:
                        close(out[n, lr - 1], prev[n, lr - 1], "%s: parallel residual, freeze irrelevant" % name)
            path.append({"direction": direction, "freeze_mlp": freeze, "out": out.astype(np.float32), "out64": out})
    for p in path:
        del p["out64"]

    # DLA (refused where a head's output is not a linear term of the residual stream: Gemma 3's post-norms)
    refused = []
    for what, f in (("dla", lambda: cr.direct_logit_attribution(cfg, W, dla_ids, a, b)),
                    ("composition", lambda: cr.composition_scores(cfg, W, N_NULL, SEED))):
        try:
            f()
        except cr.NotLinear:
            refused.append(what)
    assert refused == ([] if not M.gemma else ["dla", "composition"])
    dla = []
    for bb in ((b, -1) if not refused else ()):
        r = cr.direct_logit_attribution(cfg, W, dla_ids, a, bb)
        close(r["terms"].sum() + r["heads"].sum(), r["ld"], "%s: DLA sums to ld (b = %d)" % (name, bb))
        close(r["sources"].sum(axis=2), r["heads"], "%s: DLA sources sum to the head's term" % name)
        lg = cr.run(M, dla_ids)["logits"]
        close(r["ld"], float(lg[a] - (0.0 if bb == -1 else lg[bb])), "%s: DLA ld" % name)
        if M.wpe is None:
            assert r["terms"][1] == 0.0
        if M.lnf[1] is None:
            assert r["terms"][2] == 0.0
        dla.append({"answer": a, "answer_other": bb, "ld": r["ld"], "terms": r["terms"].astype(np.float32),
                    "heads": r["heads"].astype(np.float32), "sources": r["sources"].astype(np.float32)})

    norms = cr.value_norms(cfg, W, dla_ids)

    tr = cr.component_tracing(cfg, W, clean, corrupt, a, b)
    close(tr["attn"][:, :first_diff], np.zeros((L, first_diff)), "%s: tracing before the first difference" % name)
    close(tr["mlp"][:, :first_diff], np.zeros((L, first_diff)), "%s: tracing before the first difference" % name)
    close(tr["attn"][L - 1, :T - 1], np.zeros(T - 1), "%s: tracing, last layer before T-1" % name)
    close(tr["mlp"][L - 1, :T - 1], np.zeros(T - 1), "%s: tracing, last layer before T-1" % name)
    # sliding windows: what layer l adds at position p reaches position T-1 only through the layers above, each
    # moving it at most W - 1 positions (a full layer: any distance); beyond that reach the score is 0
    for l in range(L):
        above = [M.a.windows[k] for k in range(l + 1, L)]
        if any(w is None for w in above):
            continue
        reach = sum(w - 1 for w in above)
        far = [p for p in range(T) if T - 1 - p > reach]
        if l == 0:  # not only the positions before the first difference: the window hides some that differ
            hidden = [p for p in far if p >= first_diff]
            assert hidden and all(float((rc["attn"][0, p] - rd["attn"][0, p]).abs().max()) > 1e-6 for p in hidden)
        close(tr["attn"][l, far], np.zeros(len(far)), "%s: tracing beyond the windows' reach" % name)
        close(tr["mlp"][l, far], np.zeros(len(far)), "%s: tracing beyond the windows' reach" % name)
    if all(w is not None for w in M.a.windows):
        # a token beyond every window's reach cannot change the last position's logits at all
        reach = sum(w - 1 for w in M.a.windows)
        assert T - 1 - reach > 0
        far_ids = list(clean)
        far_ids[0] = corrupt[first_diff]
        assert far_ids != clean
        close(cr.run(M, far_ids)["logits"].numpy(), rc["logits"].numpy(), "%s: a token beyond the windows" % name)

    comp = None
    if not refused:
        comp = cr.composition_scores(cfg, W, N_NULL, SEED)
        s = comp["scores"]
        assert np.all(s >= 0) and np.all(s <= 1 + TOL) and np.all(comp["null"] >= 0) and np.all(comp["null"] <= 1)

    print("%-6s corrupt %s  a %d b %d  ld_clean %.4f ld_corrupt %.4f" % (name, corrupt, a, b, lc, ldd))
    entry = {
        "name": name, "dir": "tests/fixtures/" + rel, "model_type": cfg.get("model_type", "gpt2"),
        "L": L, "NH": NH, "NKV": M.NKV, "HS": M.HS, "C": M.C, "V": V, "T": T,
        "clean": clean, "corrupt": corrupt, "answer_clean": a, "answer_corrupt": b,
        "ld_clean": lc, "ld_corrupt": ldd,
        "pattern_value": grid.astype(np.float32),
        "receivers": [[lr, hr, inp] for lr, hr, inp in recv],
        "path": path,
        "dla_ids": dla_ids,
        "dla": dla,
        "value_norms": norms.astype(np.float32),
        "tracing": {"attn": tr["attn"].astype(np.float32), "mlp": tr["mlp"].astype(np.float32)},
        "composition": None if comp is None else {"n_null": N_NULL, "seed": SEED, "scores": s.astype(np.float32),
                                                  "null": comp["null"].astype(np.float32)},
    }
    if refused:
        # the measures the family refuses (ALAB_EINVAL in the engine), with no numbers
        del entry["dla"], entry["composition"]
        entry["refused"] = refused
    if any(w is not None for w in M.a.windows):
        entry["windows"] = [0 if w is None else w for w in M.a.windows]
    return entry


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(REPO, "tests", "fixtures"))
    args = ap.parse_args(argv)
    models = [one_model(*m, args.fixtures) for m in MODELS]
    out = {"generator": "tests/ref/gen_circuits.py (tests/ref/circuits_ref.py, float64)",
           "tolerance": 1e-4,
           "layout": {"pattern_value": "(2, 3, L, NH) [direction DENOISE, NOISE][PATTERN, VALUE, BOTH][l][h]",
                      "receivers": "[layer, head, input] input 0 Q, 1 K, 2 V, 3 LOGITS",
                      "path.out": "(n_recv, L, NH), null where the sender's layer >= the receiver's",
                      "dla.terms": "(3 + 2L) token embedding, position embedding, final norm bias, attention "
                                   "output bias of each layer, MLP output of each layer",
                      "dla.heads": "(L, NH)", "dla.sources": "(L, NH, T)", "value_norms": "(L, NH, T)",
                      "tracing": "attn, mlp (L, T)", "composition.scores": "(3, L(L-1)/2, NH, NH) [Q, K, V][pair l1 < l2, l1 outer][h1][h2]",
                      "composition.null": "(3, 3) [Q, K, V][mean, q 2.5 %, q 97.5 %]"},
           "models": models}
    path = os.path.join(args.fixtures, "circuits_golden.json")
    lines = []
    for k, v in out.items():
        if k == "models":
            lines.append(json.dumps(k) + ": [\n" + ",\n".join(fmt(m) for m in v) + "\n]")
        else:
            lines.append(json.dumps(k) + ": " + fmt(v))
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
