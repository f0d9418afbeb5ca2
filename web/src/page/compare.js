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

/** KL(P ‖ Q) in nats for P = softmax(logitsP), Q = softmax(logitsQ), over the whole vocabulary. */
export function klDivergence(logitsP, logitsQ) {
  if (logitsP.length !== logitsQ.length) throw new Error('klDivergence: vocabularies differ');
  const lp = logSoftmax(logitsP), lq = logSoftmax(logitsQ);
  let kl = 0;
  for (let k = 0; k < lp.length; k++) {
    const p = Math.exp(lp[k]);
    if (p > 0) kl += p * (lp[k] - lq[k]);
  }
  return Math.max(0, kl);
}

/**
 * Per layer: mean and max of |ΔA| over all heads and cells, and the head-average
 * difference ΔĀ = after − before (T×T) for the small multiples.
 * @returns {{mean: number[], max: number[], avgDelta: Float64Array[]}}
 */
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
