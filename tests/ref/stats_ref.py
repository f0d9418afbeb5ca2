#!/usr/bin/python3
"""stats_ref.py — an independent float64 reference of the seeded resampling statistics of c/src/stats.c
(alab_rng_*, alab_bootstrap_mean, alab_corr_dataset; the formulas are those of c/include/attnlab.h), written
from the header with plain Python and numpy, and the generator of their golden numbers.

Regenerate (deterministic: the same bytes every run; the inputs are drawn from numpy PCG64 streams with fixed
seeds, the resampling from the splitmix64 generator below):

    /usr/bin/python3 tests/ref/stats_ref.py [--out tests/fixtures/stats_golden.json]

tests/c/test_stats.c reads tests/fixtures/stats_golden.json and compares within 1e-12.

Independent of the C: ranks by numpy's stable argsort with ties averaged by a scan, Kendall's tau-b by the
O(n^2) pair count (the C uses Knight's merge sort), groups ordered with a dict, quantiles by numpy.quantile.
Three choices make the numbers reproducible to the last bit rather than merely close, so that the p-values
(counts of null_b >= a threshold) cannot differ by a rounding: the centred ranks are multiples of 1/2, so the
sums of their products are exact in float64 and Spearman's rho = sab / sqrt(saa * sbb) is the same bits in any
order; tau-b's counts are integers; and every mean is one left-to-right float sum (not math.fsum, not numpy's
pairwise sum). The generator also refuses a case where a p-value comparison is within 1e-9 of its threshold
without being an exact tie.
"""
import argparse
import json
import math
import os

import numpy as np

M64 = (1 << 64) - 1
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))

SPEARMAN, KENDALL = 0, 1


# ---------------------------------------------------------------------------------------------------------------
# the generator

class SplitMix64:
    """splitmix64 seeded with state = seed; below(n) by rejection on the high 32 bits."""

    def __init__(self, seed):
        self.state = seed & M64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def below(self, n):
        assert n >= 1
        lim = (1 << 32) - ((1 << 32) % n)
        while True:
            r = self.next() >> 32
            if r < lim:
                return r % n


# ---------------------------------------------------------------------------------------------------------------
# statistics

def seq_sum(xs):
    s = 0.0
    for x in xs:
        s += float(x)
    return s


def average_ranks(x):
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman_from_ranks(ra, rb):
    n = len(ra)
    if n < 2:
        return math.nan
    c = (n - 1) / 2.0
    x = np.asarray(ra) - c
    y = np.asarray(rb) - c
    saa, sbb, sab = float(np.dot(x, x)), float(np.dot(y, y)), float(np.dot(x, y))  # exact: multiples of 1/4
    if saa == 0.0 or sbb == 0.0:
        return math.nan
    return sab / math.sqrt(saa * sbb)


def kendall_tau_b(a, b):
    n = len(a)
    if n < 2:
        return math.nan
    n1 = n2 = n3 = disc = 0
    for i in range(n):
        for j in range(i + 1, n):
            ta, tb = a[i] == a[j], b[i] == b[j]
            n1 += ta
            n2 += tb
            n3 += ta and tb
            if not ta and not tb and (a[i] < a[j]) != (b[i] < b[j]):
                disc += 1
    n0 = n * (n - 1) // 2
    den2 = (n0 - n1) * (n0 - n2)
    if den2 == 0:
        return math.nan
    return float(n0 - n1 - n2 + n3 - 2 * disc) / math.sqrt(float(den2))


def quantile7(values, q):
    return float(np.quantile(np.asarray(values, dtype=np.float64), q))  # numpy's default: linear, type 7


def mean_defined(xs):
    d = [x for x in xs if not math.isnan(x)]
    return (seq_sum(d) / len(d) if d else math.nan), len(d)


def bootstrap_mean(x, n_boot, level, seed):
    v = [float(t) for t in x if not math.isnan(t)]
    m = len(v)
    if m == 0:
        return math.nan, math.nan, math.nan
    mean = seq_sum(v) / m
    if m == 1:
        return mean, mean, mean
    rng = SplitMix64(seed)
    means = []
    for _ in range(n_boot):
        means.append(seq_sum([v[rng.below(m)] for _ in range(m)]) / m)
    return mean, quantile7(means, (1 - level) / 2), quantile7(means, (1 + level) / 2)


def corr_dataset(offset, reading, effect, group, stat, eps, min_points, n_boot, n_perm, level, seed):
    """The summary dict and per_input list of alab_corr_dataset."""
    K = len(offset) - 1
    eff = [0.0 if abs(e) < eps else float(e) for e in effect]
    n_above = sum(1 for e in effect if abs(e) >= eps)

    def corr(a, b):
        if stat == SPEARMAN:
            return spearman_from_ranks(average_ranks(a), average_ranks(b))
        return kendall_tau_b(list(a), list(b))

    inputs = []  # (points, groups in order of first appearance as lists of point indices)
    per = []
    for k in range(K):
        pts = list(range(offset[k], offset[k + 1]))
        groups = {}
        for p in pts:
            groups.setdefault(group[p] if group is not None else 0, []).append(p)  # dicts keep insertion order
        inputs.append((pts, list(groups.values())))
        per.append(corr([reading[p] for p in pts], [eff[p] for p in pts]) if len(pts) >= min_points else math.nan)
    mean, n_def = mean_defined(per)
    out = {"mean": mean, "lo": math.nan, "hi": math.nan, "null_mean": math.nan, "null_lo": math.nan,
           "null_hi": math.nan, "p": math.nan, "p_greater": math.nan, "n_defined": n_def, "n_points": offset[K],
           "n_above_floor": n_above}
    if n_boot > 0 and n_def > 0:
        m2, out["lo"], out["hi"] = bootstrap_mean(per, n_boot, level, seed)
        assert m2 == mean
    if n_perm > 0 and n_def > 0:
        rng = SplitMix64((seed + 1) & 0xFFFFFFFF)
        nulls = []
        for _ in range(n_perm):
            vals = []
            for k, (pts, groups) in enumerate(inputs):
                shuffled = {}
                for g in groups:
                    v = [reading[p] for p in g]
                    for i in range(len(v) - 1, 0, -1):
                        j = rng.below(i + 1)
                        v[i], v[j] = v[j], v[i]
                    shuffled.update(zip(g, v))
                if math.isnan(per[k]):
                    continue
                c = corr([shuffled[p] for p in pts], [eff[p] for p in pts])
                if not math.isnan(c):
                    vals.append(c)
            nulls.append(seq_sum(vals) / len(vals) if vals else math.nan)
        nm = seq_sum(nulls) / len(nulls)
        d = abs(mean - nm)
        for nb in nulls:  # no comparison may hinge on a rounding
            for lhs, rhs in ((abs(nb - nm), d), (nb, mean)):
                if lhs != rhs and abs(lhs - rhs) < 1e-9:
                    raise SystemExit("near-tie in a p-value comparison: change the case")
        out.update(null_mean=nm, null_lo=quantile7(nulls, (1 - level) / 2), null_hi=quantile7(nulls, (1 + level) / 2),
                   p=(1 + sum(abs(nb - nm) >= d for nb in nulls)) / (1 + n_perm),
                   p_greater=(1 + sum(nb >= mean for nb in nulls)) / (1 + n_perm))
    return out, per


# ---------------------------------------------------------------------------------------------------------------
# the golden cases

def rows_input(rs, T, effect_fn, reading_fn=None):
    """Points (i, j), j <= i < T, grouped by row i: reading a per-row softmax-like weight, effect effect_fn."""
    reading, effect, group = [], [], []
    for i in range(T):
        w = rs.gamma(0.7, size=i + 1)
        w = w / w.sum()
        for j in range(i + 1):
            r = float(w[j]) if reading_fn is None else reading_fn(rs, i, j, float(w[j]))
            reading.append(r)
            effect.append(effect_fn(rs, i, j, r))
            group.append(i)
    return reading, effect, group


def corr_case(name, inputs, stat, eps, min_points, n_boot, n_perm, level, seed, grouped=True):
    offset, reading, effect, group = [0], [], [], []
    for r, e, g in inputs:
        reading += r
        effect += e
        group += g
        offset.append(len(reading))
    spec = {"name": name, "offset": offset, "reading": reading, "effect": effect,
            "group": group if grouped else None, "stat": stat, "eps": eps, "min_points": min_points,
            "n_boot": n_boot, "n_perm": n_perm, "level": level, "seed": seed}
    summary, per = corr_dataset(offset, reading, effect, spec["group"], stat, eps, min_points, n_boot, n_perm,
                                level, seed)
    spec["want"] = summary
    spec["per_input"] = per
    return spec


def golden():
    out = {}
    # the generator: raw outputs and rejection draws (3 * 2^30 rejects a quarter of the draws)
    rngs = {}
    for seed in (0, 1, 0xFFFFFFFF):
        g = SplitMix64(seed)
        rngs[str(seed)] = ["0x%016x" % g.next() for _ in range(8)]
    below = []
    for seed, n in ((7, 3 << 30), (7, 1), (8, 5), (9, 1000003)):
        g = SplitMix64(seed)
        below.append({"seed": seed, "n": n, "values": [g.below(n) for _ in range(64)],
                      "state_after": "0x%016x" % g.state})
    out["rng"] = {"next": rngs, "below": below}

    # bootstrap of a mean
    rs = np.random.Generator(np.random.PCG64(2024))
    boot = []
    for n, seed, level, n_boot, nan_at in ((5, 0, 0.95, 1000, ()), (20, 1, 0.95, 1000, (3, 7)),
                                           (57, 12345, 0.95, 1000, ()), (33, 0xFFFFFFFF, 0.9, 1000, (0, 32)),
                                           (2, 99, 0.95, 1000, ()), (200, 5, 0.5, 257, (10,))):
        x = [float(v) for v in rs.normal(0.3, 1.0, size=n)]
        for i in nan_at:
            x[i] = math.nan
        mean, lo, hi = bootstrap_mean(x, n_boot, level, seed)
        boot.append({"x": x, "n_boot": n_boot, "level": level, "seed": seed, "mean": mean, "lo": lo, "hi": hi})
    out["bootstrap"] = boot

    # correlations over a set of inputs
    rs = np.random.Generator(np.random.PCG64(77))

    def related(rs_, i, j, r):  # an effect that follows the reading with noise
        return float(r * rs_.uniform(0.5, 1.5) + 0.05 * rs_.normal())

    base = [rows_input(rs, int(rs.integers(4, 10)), related) for _ in range(12)]
    cases = [
        corr_case("spearman_rows", base, SPEARMAN, 0.0, 4, 1000, 400, 0.95, 3),
        corr_case("kendall_rows", base, KENDALL, 0.0, 4, 1000, 300, 0.95, 4),
        corr_case("spearman_whole_input", base, SPEARMAN, 0.0, 4, 500, 300, 0.9, 0xFFFFFFFF, grouped=False),
    ]
    # a weak relation, so the p-values land inside (0, 1) rather than at 1 / (1 + n_perm)
    weak = [rows_input(rs, int(rs.integers(4, 9)), lambda rs_, i, j, r: float(0.02 * r + rs_.normal(0, 0.1)))
            for _ in range(10)]
    cases.append(corr_case("spearman_weak", weak, SPEARMAN, 0.0, 4, 1000, 500, 0.95, 41))
    cases.append(corr_case("kendall_weak", weak, KENDALL, 0.0, 4, 1000, 400, 0.95, 42))
    # eps flooring: small effects become ties at 0; one input entirely below the floor (constant effect side),
    # one with constant readings (constant reading side)
    small = [rows_input(rs, int(rs.integers(5, 9)), lambda rs_, i, j, r: float(rs_.normal(0, 0.1) + r * 0.3))
             for _ in range(8)]
    below_floor = rows_input(rs, 6, lambda rs_, i, j, r: float(rs_.uniform(-0.04, 0.04)))
    flat = rows_input(rs, 6, related, reading_fn=lambda rs_, i, j, w: 0.25)
    eps_inputs = small[:3] + [below_floor] + small[3:6] + [flat] + small[6:]
    cases.append(corr_case("spearman_eps", eps_inputs, SPEARMAN, 0.05, 4, 1000, 400, 0.95, 11))
    cases.append(corr_case("kendall_eps", eps_inputs, KENDALL, 0.05, 4, 1000, 300, 0.95, 12))
    # min_points: inputs of 0, 1, 3 and 6 points are excluded at min_points = 10 (T = 1..3 gives 1, 3, 6 points)
    mixed = [rows_input(rs, T, related) for T in (5, 1, 6, 3, 2, 7, 4, 5)]
    mixed.insert(2, ([], [], []))
    cases.append(corr_case("spearman_min_points", mixed, SPEARMAN, 0.0, 10, 800, 300, 0.95, 21))
    cases.append(corr_case("kendall_min_points_no_boot", mixed, KENDALL, 0.0, 10, 0, 200, 0.95, 22))
    cases.append(corr_case("spearman_no_perm", mixed, SPEARMAN, 0.0, 10, 300, 0, 0.8, 23))
    # interleaved groups: group ids not contiguous and not sorted (first appearance decides the order)
    inter = []
    for _ in range(6):
        n = int(rs.integers(8, 20))
        r = [float(v) for v in rs.uniform(0, 1, size=n)]
        e = [float(v + rs.normal(0, 1.5)) for v in r]
        g = [int(v) for v in rs.choice([5, -2, 9], size=n)]
        inter.append((r, e, g))
    cases.append(corr_case("spearman_interleaved_groups", inter, SPEARMAN, 0.0, 4, 1000, 500, 0.95, 31))
    cases.append(corr_case("kendall_interleaved_groups", inter, KENDALL, 0.0, 4, 1000, 500, 0.95, 32))
    out["corr"] = cases
    return out


def clean(v):
    """NaN -> null (JSON has no NaN); floats keep their repr (the shortest text that reads back the same)."""
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [clean(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return clean(float(v))
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures", "stats_golden.json"))
    args = ap.parse_args()
    text = json.dumps(clean(golden()), sort_keys=True, separators=(",", ":"), allow_nan=False)
    with open(args.out, "w") as f:
        f.write(text + "\n")
    print("wrote", args.out, len(text), "bytes")


if __name__ == "__main__":
    main()
