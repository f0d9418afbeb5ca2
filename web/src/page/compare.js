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
  const { nLayer: L, nHead: H } = before.model;
  const T = before.T;
  if (after.T !== T) throw new Error('attentionChange: runs of different texts');
  const TT = T * T;
  const mean = [], max = [], avgDelta = [];
  for (let l = 0; l < L; l++) {
    let s = 0, mx = 0;
    const off = l * H * TT;
    for (let k = 0; k < H * TT; k++) {
      const d = Math.abs(after.attentions[off + k] - before.attentions[off + k]);
      s += d;
      if (d > mx) mx = d;
    }
    mean.push(s / (H * TT));
    max.push(mx);
    const D = new Float64Array(TT);
    for (let k = 0; k < TT; k++) D[k] = after.headAverages[l * TT + k] - before.headAverages[l * TT + k];
    avgDelta.push(D);
  }
  return { mean, max, avgDelta };
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
