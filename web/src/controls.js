// controls.js — what a reading of attention has to beat before it says anything (docs/evidence.md § 5,
// "Controls"): readings that know only positions, the size of the effects in nats, and the correlation
// restricted to effects a reader would call an effect. Pure functions on grids the set measures already hold
// (web/src/evidence.js runs them through the same statistics as the weights).
//
// A control can come out the same as the weights: where it does, the weights' number says nothing that
// position alone does not, and the set tables print it beside the weights so a reader sees that.

/** Effects at or above this many nats count as effects in the restricted correlation (option effectThreshold). */
export const EFFECT_THRESHOLD = 1e-3;

/**
 * The position readings of the causal pairs (i, j ≤ i) of a T-token input, each a (T, T) grid read where the
 * weights' grid is (the cells above the diagonal are never read):
 *   recency   −(i − j): the nearer key ranks higher
 *   first     1 at j = 0, else 0: the first token (an attention sink's reading)
 *   diagonal  1 at j = i, else 0: the query's own token
 *   early     −j: the earlier key ranks higher, whatever the query
 * Within one query row recency and early rank the keys in opposite orders; across rows they differ.
 */
export function edgePositionGrids(T) {
  const g = { recency: new Float32Array(T * T), first: new Float32Array(T * T), diagonal: new Float32Array(T * T),
    early: new Float32Array(T * T) };
  for (let i = 0; i < T; i++)
    for (let j = 0; j <= i; j++) {
      const x = i * T + j;
      g.recency[x] = j - i;
      g.first[x] = j === 0 ? 1 : 0;
      g.diagonal[x] = j === i ? 1 : 0;
      g.early[x] = -j;
    }
  return g;
}

/** The position readings of the tokens j of a T-token input, read at its last position (a token knockout's). */
export function tokenPositionReadings(T) {
  const r = { recency: new Float64Array(T), first: new Float64Array(T), early: new Float64Array(T) };
  for (let j = 0; j < T; j++) {
    r.recency[j] = j - (T - 1);
    r.first[j] = j === 0 ? 1 : 0;
    r.early[j] = -j;
  }
  return r;
}

/** The q-quantile (type 7: linear between order statistics) of sorted values; NaN for none. */
function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const h = (sorted.length - 1) * q, f = Math.floor(h);
  return f + 1 < sorted.length ? sorted[f] + (h - f) * (sorted[f + 1] - sorted[f]) : sorted[f];
}

/**
 * How large the effects are, in nats, pooled over the points of every input: the median, the 90th and 99th
 * percentiles and the largest of |effect|, how many points there are, and how many reach `threshold`.
 * `values` is a list of arrays (one per input); NaN entries (no pair) are left out.
 */
export function effectSizes(values, threshold = EFFECT_THRESHOLD) {
  const all = [];
  for (const v of values) for (const x of v) if (Number.isFinite(x)) all.push(Math.abs(x));
  all.sort((a, b) => a - b);
  const nn = (x) => (Number.isFinite(x) ? x : null);
  return { n: all.length, median: nn(quantile(all, 0.5)), p90: nn(quantile(all, 0.9)), p99: nn(quantile(all, 0.99)),
    max: nn(all.length ? all[all.length - 1] : NaN), threshold, nAbove: all.filter((x) => x >= threshold).length };
}

/**
 * The causal pairs of one input's grids as points of a correlation (evidence.js's corrDataset): reading A, effect
 * E, group = the query row (the within-row null), keeping only the points whose |E| reaches `threshold` (0: all).
 */
export function edgePoints(A, E, T, threshold = 0) {
  const reading = [], effect = [], group = [];
  for (let i = 0; i < T; i++)
    for (let j = 0; j <= i; j++) {
      const e = E[i * T + j];
      if (!Number.isFinite(e) || Math.abs(e) < threshold) continue;
      reading.push(A[i * T + j]); effect.push(e); group.push(i);
    }
  return { reading, effect, group };
}

/** The tokens of one input as points (one group: the null permutes the reading across the input's tokens). */
export function tokenPoints(reading, effect, threshold = 0) {
  const out = { reading: [], effect: [], group: [] };
  for (let j = 0; j < effect.length; j++) {
    if (!Number.isFinite(effect[j]) || Math.abs(effect[j]) < threshold) continue;
    out.reading.push(reading[j]); out.effect.push(effect[j]); out.group.push(0);
  }
  return out;
}
