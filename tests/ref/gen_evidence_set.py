#!/usr/bin/python3
"""gen_evidence_set.py — the float64 reference of the edge-knockout verdict over a set of inputs
(alab_edge_set_summary, c/src/evidence_set.c; its definition is in c/include/attnlab.h), and its golden file.

Three inputs on the tiny checkpoint; for each, the knockout grids A, E, E_last of evidence_ref.edge_knockout
(float64 forward passes, nothing reused), written rounded to float32. The summary is then computed from those
float32 values with stats_ref.py (an independent implementation of the statistics), following the header's
definition: the local and last points (last: row T-1 only in the model's last layer), the four readings
(attention with Spearman and Kendall, uniform 1/(i+1), attention shuffled within each row by splitmix64 seeded
seed + 2 / seed + 3), the per-row mean and the top-k overlap with their bootstrap intervals.

tests/c/test_evidence.c feeds the golden's grids to alab_edge_set_summary (the summary must match within 1e-12)
and the engine's own grids (within 1e-3: the grids differ by float rounding, which can reorder near-ties).

    /usr/bin/python3 tests/ref/gen_evidence_set.py    # writes tests/fixtures/evidence_set_golden.json
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bpe_ref import BPE  # noqa: E402
from evidence_ref import edge_knockout, top_k_overlap  # noqa: E402
from gen_fixtures import CHAPTER, FOX  # noqa: E402
from gpt2_ref import load_model  # noqa: E402
from stats_ref import (KENDALL, SPEARMAN, SplitMix64, average_ranks, bootstrap_mean, corr_dataset,  # noqa: E402
                       seq_sum, spearman_from_ranks)

TEXTS = [CHAPTER, FOX, "The ship sank because the storm was strong and the crew was tired ."]
STATS = {"n_boot": 500, "n_perm": 400, "level": 0.95, "seed": 11}


def points(grids, E_key, last_only):
    """offset, reading, effect, group of the pairs j <= i of rows i >= row0 of every input."""
    offset, reading, effect, group = [0], [], [], []
    for g in grids:
        T = g["T"]
        for i in range(T - 1 if last_only else 0, T):
            for j in range(i + 1):
                reading.append(float(g["A"][i, j]))
                effect.append(float(g[E_key][i, j]))
                group.append(i)
        offset.append(len(reading))
    return offset, reading, effect, group


def permute_rows(offset, reading, group, seed):
    out = list(reading)
    rng = SplitMix64(seed & 0xFFFFFFFF)
    for k in range(len(offset) - 1):
        s = offset[k]
        while s < offset[k + 1]:
            e = s
            while e + 1 < offset[k + 1] and group[e + 1] == group[s]:
                e += 1
            v = out[s:e + 1]
            for i in range(len(v) - 1, 0, -1):
                j = rng.below(i + 1)
                v[i], v[j] = v[j], v[i]
            out[s:e + 1] = v
            s = e + 1
    return out


def four(grids, E_key, last_only, eps, st):
    offset, reading, effect, group = points(grids, E_key, last_only)
    args = dict(eps=eps, min_points=4, n_boot=st["n_boot"], n_perm=st["n_perm"], level=st["level"], seed=st["seed"])
    sp, per = corr_dataset(offset, reading, effect, group, SPEARMAN, **args)
    kd, _ = corr_dataset(offset, reading, effect, group, KENDALL, **args)
    perm = permute_rows(offset, reading, group, st["seed"] + (3 if E_key == "E_last" else 2))
    pm, _ = corr_dataset(offset, perm, effect, group, SPEARMAN, **args)
    uni = [1.0 / (i + 1) for i in group]
    un, _ = corr_dataset(offset, uni, effect, group, SPEARMAN, **args)
    return {"spearman": sp, "kendall": kd, "uniform": un, "permuted": pm}, per


def summary(grids, last_layer, eps, st):
    local, per_local = four(grids, "E", False, eps, st)
    last, per_last = four(grids, "E_last", last_layer, eps, st)
    rows, topk, meff = [], [], []
    for g in grids:
        T = g["T"]
        rs = []
        for i in range(3, T):
            a = [float(x) for x in g["A"][i, :i + 1]]
            e = [0.0 if abs(float(x)) < eps else float(x) for x in g["E"][i, :i + 1]]
            r = spearman_from_ranks(average_ranks(a), average_ranks(e))
            if not math.isnan(r):
                rs.append(r)
        rows.append(seq_sum(rs) / len(rs) if rs else math.nan)
        a = [float(g["A"][i, j]) for i in range(T) for j in range(i + 1)]
        e = [0.0 if abs(float(g["E"][i, j])) < eps else float(g["E"][i, j]) for i in range(T) for j in range(i + 1)]
        topk.append(top_k_overlap(a, e, T))
        meff.append(seq_sum(e) / len(e))
    nb = max(st["n_boot"], 1)
    rm, rlo, rhi = bootstrap_mean(rows, nb, st["level"], st["seed"])
    tm, tlo, thi = bootstrap_mean(topk, nb, st["level"], st["seed"])
    em, elo, ehi = bootstrap_mean(meff, nb, st["level"], st["seed"])
    return {"local": local, "last": last, "rows": [rm, rlo, rhi], "topk": [tm, tlo, thi], "effect": [em, elo, ehi],
            "per_input": per_local + per_last + rows + topk}


def f32(x):
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def main():
    d = os.path.join(REPO, "tests", "fixtures", "tiny")
    m = load_model(d)
    bpe = BPE.from_files(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
    L = m.L
    cases = []
    for layer, head in ((L - 1, -1), (1, 2)):
        grids = []
        for t in TEXTS:
            ids = bpe.encode(t)[:12]
            r = edge_knockout(m, ids, layer, head)
            T = len(ids)
            grids.append({"ids": ids, "T": T, "A": f32(r["A"]), "E": f32(np.nan_to_num(r["E"], nan=0.0)),
                          "E_last": f32(np.nan_to_num(r["E_last"], nan=0.0))})
        for eps in (0.0, 1e-7):
            s = summary(grids, layer == L - 1, eps, STATS)
            cases.append({"layer": layer, "head": head, "eps": eps, "last_layer": layer == L - 1,
                          "inputs": [{"ids": g["ids"], "A": g["A"].ravel().tolist(), "E": g["E"].ravel().tolist(),
                                      "E_last": g["E_last"].ravel().tolist()} for g in grids],
                          "summary": s})
    out = {"generator": "tests/ref/gen_evidence_set.py", "model": "tests/fixtures/tiny", "stats": STATS, "cases": cases}

    def clean(v):
        if isinstance(v, float):
            return None if math.isnan(v) else v
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    path = os.path.join(REPO, "tests", "fixtures", "evidence_set_golden.json")
    with open(path, "w") as f:
        json.dump(clean(out), f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
