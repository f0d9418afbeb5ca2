// compare.js — what the in-model panel says about two runs: the KL divergence of
// their next-token distributions and how much each layer's attention changed.
// Pure functions on Result fields (plain arrays), usable in Node (tests) too.

/** log-softmax of logits, in float64. */
export function logSoftmax(logits) {
  let mx = -Infinity;
  for (const v of logits) if (v > mx) mx = v;
  let z = 0;
  for (const v of logits) z += Math.exp(v - mx);
  const lz = mx + Math.log(z);
  const out = new Float64Array(logits.length);
  for (let k = 0; k < logits.length; k++) out[k] = logits[k] - lz;
  return out;
}

/** The largest entry of x (-Infinity for none). */
function maxOf(x) {
  let m = -Infinity;
  for (let k = 0; k < x.length; k++) if (x[k] > m) m = x[k];
  return m;
}

/**
 * KL(P ‖ Q) in nats for P = softmax(logitsP), Q = softmax(logitsQ), over the whole vocabulary, in float64.
 * One pass and no arrays (the page calls it on 50 257 logits for every candidate of the default-do search):
 * with Z_P = Σ exp(p_k − max p) and the same for Q, KL = Σ_k exp(p_k − max p)·(p_k − q_k) / Z_P
 * − (max p + ln Z_P) + (max q + ln Z_Q). Terms where P's probability is 0 are left out, as in the sum's definition.
 */
export function klDivergence(logitsP, logitsQ) {
  if (logitsP.length !== logitsQ.length) throw new Error('klDivergence: vocabularies differ');
  const n = logitsP.length, mp = maxOf(logitsP), mq = maxOf(logitsQ);
  let zp = 0, zq = 0, s = 0;
  for (let k = 0; k < n; k++) {
    const p = logitsP[k], ep = Math.exp(p - mp);
    zp += ep;
    zq += Math.exp(logitsQ[k] - mq);
    if (ep > 0) s += ep * (p - logitsQ[k]);
  }
  return Math.max(0, s / zp - (mp + Math.log(zp)) + (mq + Math.log(zq)));
}

/**
 * Per layer: mean and max of |ΔA| over all heads and cells, and the head-average
 * difference ΔĀ = after − before (T×T) for the small multiples.
 * @returns {{mean: number[], max: number[], avgDelta: Float64Array[]}}
 */
/**
 * How the largest |ΔA| of each layer changes from the intervened layer up, in words the caption can say without
 * contradicting its own numbers: 'one' (only the intervened layer), 'fades' (never rises), 'grows' (never falls),
 * or 'peak' (rises to a maximum above the first layer, then falls). values: max |ΔA| of layers first..first+n-1.
 * @returns {{kind: 'one'|'fades'|'grows'|'peak'|'mixed', first: number, last: number, peak: number, peakLayer: number,
 *   firstLayer: number, lastLayer: number}}
 */
export function describeTrend(values, firstLayer) {
  const n = values.length;
  const out = { first: values[0], last: values[n - 1], firstLayer, lastLayer: firstLayer + n - 1, peak: values[0], peakLayer: firstLayer };
  if (n === 1) return { kind: 'one', ...out };
  let k = 0;
  for (let i = 1; i < n; i++) if (values[i] > values[k]) k = i;
  out.peak = values[k];
  out.peakLayer = firstLayer + k;
  const up = (a, b) => values[b] > values[a], down = (a, b) => values[b] < values[a];
  let rises = false, falls = false;
  for (let i = 1; i < n; i++) { rises ||= up(i - 1, i); falls ||= down(i - 1, i); }
  if (!rises) return { kind: 'fades', ...out };
  if (!falls) return { kind: 'grows', ...out };
  // one rise then one fall around the maximum: a peak; else say only the ends and the maximum
  let ok = true;
  for (let i = 1; i <= k; i++) ok &&= !down(i - 1, i);
  for (let i = k + 1; i < n; i++) ok &&= !up(i - 1, i);
  return { kind: ok && k > 0 && k < n - 1 ? 'peak' : 'mixed', ...out };
}

export function attentionChange(before, after) {
  const out = { mean: [], max: [], avgDelta: [] };
  const L = checkRuns(before, after);
  for (let l = 0; l < L; l++) layerChange(before, after, l, out);
  return out;
}

/**
 * attentionChange a layer a task: `pause()` is awaited between layers (at T = 256 all six
 * layers at once were 8-40 ms of the main thread). Resolves to null when `stale()` turns
 * true at a pause.
 */
export async function attentionChangeSliced(before, after, pause, stale = () => false) {
  const out = { mean: [], max: [], avgDelta: [] };
  const L = checkRuns(before, after);
  for (let l = 0; l < L; l++) {
    if (l) {
      await pause();
      if (stale()) return null;
    }
    layerChange(before, after, l, out);
  }
  return out;
}

function checkRuns(before, after) {
  if (after.T !== before.T) throw new Error('attentionChange: runs of different texts');
  return before.model.nLayer;
}

function layerChange(before, after, l, out) {
  const H = before.model.nHead, TT = before.T * before.T, n = H * TT;
  // the arrays in locals: a property load per element is several times slower
  const A0 = before.attentions, A1 = after.attentions, M0 = before.headAverages, M1 = after.headAverages;
  let s = 0, mx = 0;
  for (let k = l * n, end = k + n; k < end; k++) {
    const d = Math.abs(A1[k] - A0[k]);
    s += d;
    if (d > mx) mx = d;
  }
  out.mean.push(s / n);
  out.max.push(mx);
  const D = new Float64Array(TT);
  for (let k = 0, o = l * TT; k < TT; k++) D[k] = M1[o + k] - M0[o + k];
  out.avgDelta.push(D);
}

/** How each token of `after`'s top list moved relative to `before`'s: 'up' | 'down' | 'same' | 'new'. */
export function rankMoves(beforeTop, afterTop) {
  const rank = new Map(beforeTop.map((t, k) => [t.id, k]));
  return afterTop.map((t, k) => {
    if (!rank.has(t.id)) return 'new';
    const r = rank.get(t.id);
    return r > k ? 'up' : r < k ? 'down' : 'same';
  });
}
