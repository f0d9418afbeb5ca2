#!/usr/bin/python3
"""stats_ref.py — an independent float64 reference of the seeded resampling statistics of c/src/stats.c
(alab_rng_*, alab_bootstrap_mean, alab_corr_dataset, and the clustered intervals, paired differences and
corrections: alab_cluster_bootstrap_mean, alab_paired_diff, alab_holm, alab_partial_spearman, alab_quantiles;
the formulas and draw orders are those of c/include/attnlab.h), written from the header with plain Python and
numpy, and the generator of their golden numbers.

Regenerate (deterministic: the same bytes every run; the inputs are drawn from numpy PCG64 streams with fixed
seeds, the resampling from the splitmix64 generator below):

    /usr/bin/python3 tests/ref/stats_ref.py [--out tests/fixtures/stats_golden.json]

tests/c/test_stats.c reads tests/fixtures/stats_golden.json and compares within 1e-12 (the new statistics, and
their JS wrappers in tests/js/stats.test.js, within 1e-12 relative: |got - want| <= 1e-12 max(1, |want|)).

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
# clustered intervals, paired differences, corrections

def clusters_of(values, ids):
    """The clusters of values in play, in order of first appearance: (sums, counts), each sum left to right."""
    groups = {}
    for v, c in zip(values, ids):
        groups.setdefault(c, []).append(v)  # dicts keep insertion order
    return [seq_sum(g) for g in groups.values()], [len(g) for g in groups.values()]


def cluster_bootstrap_mean(x, cluster, n_boot, level, seed):
    keep = [i for i in range(len(x)) if not math.isnan(x[i])]
    v = [float(x[i]) for i in keep]
    ids = [cluster[i] for i in keep] if cluster is not None else list(range(len(keep)))
    if not v:
        return math.nan, math.nan, math.nan
    mean = seq_sum(v) / len(v)
    if n_boot == 0:
        return mean, math.nan, math.nan
    s, m = clusters_of(v, ids)
    G = len(s)
    if G == 1:
        return mean, mean, mean
    rng = SplitMix64(seed)
    stats = []
    for _ in range(n_boot):
        S, M = 0.0, 0
        for _ in range(G):
            k = rng.below(G)
            S += s[k]
            M += m[k]
        stats.append(S / M)
    return mean, quantile7(stats, (1 - level) / 2), quantile7(stats, (1 + level) / 2)


def paired_diff(x, y, cluster, n_boot, n_perm, level, seed):
    """The 6 numbers of alab_paired_diff: mean, lo, hi, p, n_pairs, n_clusters."""
    keep = [i for i in range(len(x)) if not math.isnan(x[i]) and not math.isnan(y[i])]
    d = [float(x[i]) - float(y[i]) for i in keep]
    ids = [cluster[i] for i in keep] if cluster is not None else list(range(len(keep)))
    s, _ = clusters_of(d, ids)
    G = len(s)
    if not d:
        return [math.nan] * 4 + [0, 0]
    mean, lo, hi = cluster_bootstrap_mean(d, ids, n_boot, level, seed)
    p = math.nan
    if n_perm > 0:
        obs = abs(seq_sum(s) / len(d))
        rng = SplitMix64((seed + 1) & 0xFFFFFFFF)
        count = 0
        for _ in range(n_perm):
            S = 0.0
            for k in range(G):
                S += -s[k] if rng.below(2) == 1 else s[k]
            t = abs(S / len(d))
            if t != obs and abs(t - obs) < 1e-9:
                raise SystemExit("near-tie in the sign-flip test: change the case")
            count += t >= obs
        p = (1 + count) / (1 + n_perm)
    return [mean, lo, hi, p, len(d), G]


def holm(p):
    p = np.asarray(p, dtype=np.float64)
    out = np.full(len(p), np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = len(idx)
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]  # ties: the lower index first
    scaled = (m - np.arange(m)).astype(np.float64) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def partial_spearman(x, y, z):
    n = len(x)
    if n < 2:
        return math.nan
    rx, ry, rz = average_ranks(x), average_ranks(y), average_ranks(z)
    rxy, rxz, ryz = spearman_from_ranks(rx, ry), spearman_from_ranks(rx, rz), spearman_from_ranks(ry, rz)
    num = rxy - rxz * ryz
    den = math.sqrt((1.0 - rxz * rxz) * (1.0 - ryz * ryz)) if not (math.isnan(rxz) or math.isnan(ryz)) else math.nan
    if math.isnan(num) or not den > 0.0:
        return math.nan
    rho = min(1.0, max(-1.0, num / den))
    # the same number another way: the correlation of the residuals of the ranks of x and y regressed on z's
    Z = np.column_stack([np.ones(n), rz])
    ex = rx - Z @ np.linalg.lstsq(Z, rx, rcond=None)[0]
    ey = ry - Z @ np.linalg.lstsq(Z, ry, rcond=None)[0]
    check = float(np.dot(ex, ey) / math.sqrt(float(np.dot(ex, ex)) * float(np.dot(ey, ey))))
    assert abs(check - rho) < 1e-9, (check, rho)
    return rho


def quantiles(x, q):
    v = [float(t) for t in x if not math.isnan(t)]
    return [quantile7(v, qq) if v else math.nan for qq in q]


def documents(rs, n_docs, sizes, spread, noise):
    """Values from n_docs documents (a document effect of sd spread, noise sd noise): values and ids."""
    x, ids = [], []
    for doc in range(n_docs):
        mu = float(rs.normal(0.0, spread))
        k = sizes if isinstance(sizes, int) else int(rs.integers(sizes[0], sizes[1] + 1))
        for _ in range(k):
            x.append(mu + float(rs.normal(0.2, noise)))
            ids.append(doc)
    return x, ids


def clustered_golden():
    out = {}
    rs = np.random.Generator(np.random.PCG64(5050))
    cb = []

    def cb_case(name, x, ids, n_boot, level, seed):
        mean, lo, hi = cluster_bootstrap_mean(x, ids, n_boot, level, seed)
        if ids is None and n_boot > 0:  # each value its own cluster: alab_bootstrap_mean's numbers
            assert (mean, lo, hi) == bootstrap_mean(x, n_boot, level, seed) or math.isnan(mean)
        cb.append({"name": name, "x": x, "cluster": ids, "n_boot": n_boot, "level": level, "seed": seed,
                   "mean": mean, "lo": lo, "hi": hi})

    # 25 documents of 5 sentences, a document effect as large as the noise
    x, ids = documents(rs, 25, 5, 0.5, 0.5)
    cb_case("documents", x, ids, 1000, 0.95, 3)
    cb_case("documents_unclustered", x, None, 1000, 0.95, 3)
    # sizes 1..9, ids not contiguous, negative, interleaved; NaNs, one document all NaN (not a cluster)
    x, ids = documents(rs, 12, (1, 9), 1.0, 0.3)
    perm = [int(v) for v in rs.permutation(len(x))]
    names = [-7, 3, 1000000, 0, -1, 42, 9, 8, 2147483647, -2147483648, 5, 6]
    x = [x[i] for i in perm]
    ids = [names[ids[i]] for i in perm]
    for i in range(len(x)):
        if ids[i] == 42 or i % 7 == 3:
            x[i] = math.nan
    cb_case("interleaved_ids_nan", x, ids, 1000, 0.9, 0xFFFFFFFF)
    cb_case("two_clusters_few_resamples", [1.0, 2.0, 4.0, 8.0, 16.0], [1, 1, 2, 2, 2], 7, 0.5, 9)
    cb_case("one_cluster", [0.5, 1.5, math.nan, 4.0], [3, 3, 3, 3], 100, 0.95, 1)
    cb_case("no_resamples", [0.5, 1.5, 4.0], [1, 2, 3], 0, 0.95, 1)
    cb_case("none_finite", [math.nan, math.nan], [1, 2], 100, 0.95, 1)
    y = [float(v) for v in rs.normal(0.3, 1.0, size=40)]
    y[5] = math.nan
    cb_case("unclustered_like_bootstrap", y, None, 997, 0.8, 77)
    out["cluster_bootstrap"] = cb

    pd = []

    def pd_case(name, x_, y_, ids_, n_boot, n_perm, level, seed):
        pd.append({"name": name, "x": x_, "y": y_, "cluster": ids_, "n_boot": n_boot, "n_perm": n_perm,
                   "level": level, "seed": seed, "out": paired_diff(x_, y_, ids_, n_boot, n_perm, level, seed)})

    # trained vs random: 125 sentences of 25 documents, a difference of 0.1 with a document effect
    b, ids = documents(rs, 25, 5, 0.3, 0.2)
    a = [v + 0.1 + float(rs.normal(0, 0.05)) + (0.15 if i % 5 == 0 else 0.0) for i, v in enumerate(b)]
    pd_case("documents_effect", a, b, ids, 1000, 2000, 0.95, 5)
    pd_case("documents_effect_unclustered", a, b, None, 1000, 2000, 0.95, 5)
    # no effect, NaN on either side, ids interleaved
    b, ids = documents(rs, 15, (2, 8), 0.4, 0.3)
    a = [v + float(rs.normal(0, 0.3)) for v in b]
    perm = [int(v) for v in rs.permutation(len(a))]
    a, b, ids = [a[i] for i in perm], [b[i] for i in perm], [ids[i] * 3 - 20 for i in perm]
    a[2] = math.nan
    b[9] = math.nan
    a[10] = b[10] = math.nan
    pd_case("no_effect_nan", a, b, ids, 800, 1500, 0.9, 0xFFFFFFFF)
    # three clusters: 8 sign patterns, p cannot fall below 2/8 (the identity and the full flip tie)
    pd_case("three_clusters", [1.0, 1.5, 2.0, 2.5, 3.0, 0.25], [0.0, 0.5, 0.0, 1.0, 1.0, 0.0], [1, 1, 2, 2, 3, 3],
            200, 400, 0.95, 13)
    pd_case("no_resamples_no_perm", [1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [1, 2, 3], 0, 0, 0.95, 1)
    pd_case("no_pairs", [math.nan, 1.0], [2.0, math.nan], [1, 2], 100, 100, 0.95, 1)
    out["paired"] = pd

    hs = []
    for p in ([0.01, 0.04, 0.03, 0.005], [0.2, math.nan, 0.2, 0.01, 0.2, math.nan, 0.6],
              [0.0, 1.0, 0.5, 0.5, 0.25], [0.3], [], [math.nan, math.nan],
              [float(v) ** 4 for v in rs.uniform(0, 0.6, size=30)], [0.049, 0.051, 0.02, 0.5, 0.9, 0.0001, 0.03]):
        hs.append({"p": p, "adjusted": [float(v) for v in holm(p)]})
    out["holm"] = hs

    ps = []

    def ps_case(name, x_, y_, z_):
        ps.append({"name": name, "x": x_, "y": y_, "z": z_, "rho": partial_spearman(x_, y_, z_)})

    # position confounds both: x and y follow z, and each other only through it (plus a little)
    z = [float(v) for v in range(60)]
    x = [v + float(rs.normal(0, 8)) for v in z]
    y = [v + float(rs.normal(0, 8)) + 0.5 * (x[i] - z[i]) for i, v in enumerate(z)]
    ps_case("position_confound", x, y, z)
    ps_case("no_relation", [float(v) for v in rs.normal(size=40)], [float(v) for v in rs.normal(size=40)],
            [float(v) for v in rs.normal(size=40)])
    ps_case("ties", [float(v) for v in rs.integers(0, 4, size=30)], [float(v) for v in rs.integers(0, 5, size=30)],
            [float(v) for v in rs.integers(0, 3, size=30)])
    ps_case("z_is_x", [1.0, 3.0, 2.0, 5.0, 4.0], [2.0, 1.0, 4.0, 3.0, 5.0], [1.0, 3.0, 2.0, 5.0, 4.0])
    ps_case("constant_z", [1.0, 3.0, 2.0, 5.0, 4.0], [2.0, 1.0, 4.0, 3.0, 5.0], [7.0] * 5)
    ps_case("two_values", [1.0, 2.0], [2.0, 1.0], [1.0, 3.0])
    ps_case("hand_three", [1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0])
    out["partial_spearman"] = ps

    qs = []
    q = [0.0, 0.1, 0.25, 0.5, 0.9, 0.99, 1.0]
    for x in ([float(v) for v in rs.lognormal(-7, 2, size=101)], [3.0, math.nan, 1.0, 2.0], [5.0],
              [math.nan], [], [float(v) for v in rs.integers(0, 3, size=17)]):
        qs.append({"x": x, "q": q, "out": quantiles(x, q)})
    out["quantiles"] = qs
    return out


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
    out.update(clustered_golden())
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
