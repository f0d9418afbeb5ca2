// counterfactual.js — two runs of the model side by side (docs/heads.md,
// "Counterfactuals"): which positions of two token sequences correspond, the
// difference of their attention maps at those positions, and the difference of
// their next-token distributions. Pure functions on plain data (a Result is
// plain data), so they work on results that came from a worker too.

import { AttnlabError } from './core/errors.js';
import { checkIndex, checkNumbers } from './analysis.js';

/**
 * Positions of token sequences a and b that correspond: the common prefix
 * (i ↔ i), the common suffix (counted from the ends), and — when the two
 * differing middle spans have the same length — the middle position by
 * position (a substitution: same position, different token).
 * @returns {{pairs: [number, number][], prefix: number, suffix: number,
 *            changedA: [number, number], changedB: [number, number], substituted: boolean}}
 *   changedA / changedB: the differing spans [begin, end) of a and b.
 */
export function alignTokens(a, b) {
  for (const [name, v] of [['a', a], ['b', b]]) {
    if (!(Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))))
      throw new AttnlabError('ETYPE', `alignTokens: ${name} must be an array or a typed array of token ids`);
    for (let i = 0; i < v.length; i++) checkIndex(`alignTokens: ${name}[${i}]`, v[i], 0, 2 ** 31 - 1);
  }
  const na = a.length, nb = b.length;
  let p = 0;
  while (p < na && p < nb && a[p] === b[p]) p++;
  let s = 0;
  while (s < na - p && s < nb - p && a[na - 1 - s] === b[nb - 1 - s]) s++;
  const changedA = [p, na - s], changedB = [p, nb - s];
  const substituted = na === nb && p + s < na;
  const pairs = [];
  for (let i = 0; i < p; i++) pairs.push([i, i]);
  if (substituted) for (let i = p; i < na - s; i++) pairs.push([i, i]);
  for (let k = 0; k < s; k++) pairs.push([na - s + k, nb - s + k]);
  return { pairs, prefix: p, suffix: s, changedA, changedB, substituted };
}

// log-softmax of logits in float64
function logSoftmax(logits) {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lse;
  return out;
}

function topIds(logp, k) {
  const idx = Array.from({ length: logp.length }, (_, i) => i);
  idx.sort((x, y) => logp[y] - logp[x] || x - y);
  return idx.slice(0, k);
}

/**
 * How the next-token distribution moves from logits a to logits b (both
 * length V): KL(p_a ‖ p_b) in nats, the total variation ½ Σ |p_a − p_b|, and
 * the union of both top-k tokens with p_a, p_b and delta = p_b − p_a, sorted by
 * |delta| (largest first; ties by id). token(id) names the tokens (optional).
 */
export function nextTokenDiff(logitsA, logitsB, options) {
  checkNumbers('nextTokenDiff: logitsA', logitsA);
  checkNumbers('nextTokenDiff: logitsB', logitsB);
  if (logitsA.length !== logitsB.length || logitsA.length === 0)
    throw new AttnlabError('ESHAPE', `nextTokenDiff: two logit vectors of one non-zero length are needed (got ${logitsA.length} and ${logitsB.length})`);
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options)))
    throw new AttnlabError('ETYPE', 'nextTokenDiff: options must be an object');
  const { k: kOpt = 10, token = null } = options || {};
  const k = checkIndex('nextTokenDiff: options.k', kOpt, 0, 2 ** 31 - 1);
  if (token !== null && typeof token !== 'function')
    throw new AttnlabError('ETYPE', 'nextTokenDiff: options.token must be a function');
  const la = logSoftmax(logitsA), lb = logSoftmax(logitsB);
  let kl = 0, tv = 0;
  for (let i = 0; i < la.length; i++) {
    const pa = Math.exp(la[i]), pb = Math.exp(lb[i]);
    if (pa > 0) kl += pa * (la[i] - lb[i]);
    tv += Math.abs(pa - pb);
  }
  const ids = [...new Set([...topIds(la, k), ...topIds(lb, k)])];
  const top = ids.map((id) => {
    const pA = Math.exp(la[id]), pB = Math.exp(lb[id]);
    return { id, token: token ? token(id) : String(id), pA, pB, delta: pB - pA };
  });
  top.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || x.id - y.id);
  return { kl: Math.max(0, kl), tv: tv / 2, top };
}

/**
 * The attention difference B − A on A's positions: for each (layer[, head])
 * matrix, cell (i, j) = B(i', j') − A(i, j) where i ↔ i' and j ↔ j' are
 * aligned pairs, NaN where row i or column j has no partner.
 * @param {Result} a @param {Result} b @param {[number, number][]} pairs
 * @returns {{attentionDiff: Float32Array, headDiff: Float32Array}} (L, TA, TA) and (L, NH, TA, TA)
 */
export function attentionDiff(a, b, pairs) {
  const { nLayer: L, nHead: H } = a.model;
  const TA = a.T, TB = b.T;
  const partner = new Int32Array(TA).fill(-1);
  for (const [i, j] of pairs) partner[i] = j;
  const diff = (src, dst, n) => { // n matrices
    for (let m = 0; m < n; m++) {
      const A = m * TA * TA, B = m * TB * TB;
      for (let i = 0; i < TA; i++) {
        const pi = partner[i];
        for (let j = 0; j < TA; j++) {
          const pj = partner[j];
          dst[A + i * TA + j] = pi < 0 || pj < 0 ? NaN : src.b[B + pi * TB + pj] - src.a[A + i * TA + j];
        }
      }
    }
    return dst;
  };
  return {
    attentionDiff: diff({ a: a.headAverages, b: b.headAverages }, new Float32Array(L * TA * TA), L),
    headDiff: diff({ a: a.attentions, b: b.attentions }, new Float32Array(L * H * TA * TA), L * H),
  };
}
