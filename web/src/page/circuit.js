// circuit.js — the numbers of the Heads panel's "Break the circuit" card: which
// heads a preset ablates, and what the ablation does to the loss on each copy of
// r ++ r and to the induction scores. Pure functions of the worker's results
// (headRoles, tokenLosses), so they are tested in Node (tests/js/circuit.test.js);
// heads.js computes through the worker and draws.
//
// Reading: a copy of r can be predicted only by copying from the first one, so a
// model that copies has a low loss on the second copy and the guessing loss ln V
// (or more) on the first. Breaking a head of the copying circuit should raise the
// second copy's loss and leave the first copy's alone.

/** The presets: what each ablates. */
export const BREAK_PRESETS = Object.freeze(['prev', 'induction', 'induction2']);

/**
 * The heads a preset ablates, from the roles on a text (its best previous-token
 * head) and on r ++ r (its best induction heads).
 * @param {string} preset one of BREAK_PRESETS
 * @param {{top: {prev: {layer, head, score}[]}}} roles headRoles of the text (top >= 1)
 * @param {{top: {induction: {layer, head, score}[]}}} ind headRoles of r ++ r (top >= 2)
 * @returns {{layer: number, head: number, score: number, role: 'prev'|'induction'}[]}
 */
export function breakHeads(preset, roles, ind) {
  const pick = (list, k, role) => {
    if (list.length < k) throw new RangeError(`breakHeads: ${k} ${role} head(s) needed, the roles name ${list.length}`);
    return list.slice(0, k).map((x) => ({ layer: x.layer, head: x.head, score: x.score, role }));
  };
  if (preset === 'prev') return pick(roles.top.prev, 1, 'prev');
  if (preset === 'induction') return pick(ind.top.induction, 1, 'induction');
  if (preset === 'induction2') return pick(ind.top.induction, 2, 'induction');
  throw new RangeError(`breakHeads: unknown preset ${JSON.stringify(preset)} (one of ${BREAK_PRESETS.join(', ')})`);
}

/**
 * Mean loss on each copy of r ++ r from tokenLosses' T − 1 = 2n − 1 losses:
 * first = losses[0 … n−2] (the targets r[1 … n−1]), second = losses[n … 2n−2]
 * (targets r[1 … n−1] again). losses[n−1] (predicting r[0] after the first copy)
 * is in neither: nothing before it says the sequence starts again.
 */
export function copyLosses(losses, n) {
  if (!Number.isInteger(n) || n < 2 || losses.length !== 2 * n - 1)
    throw new RangeError(`copyLosses: ${losses.length} losses do not fit r ++ r with |r| = ${n}`);
  let a = 0, b = 0;
  for (let k = 0; k < n - 1; k++) { a += losses[k]; b += losses[n + k]; }
  return { first: a / (n - 1), second: b / (n - 1) };
}

/** The gap (nats) by which the second copy must be easier than the first for a model to count as copying. */
export const COPY_MARGIN = 0.5;

/**
 * Does the model copy at all? Only if its loss on the second copy of r ++ r is at least COPY_MARGIN
 * below its loss on the first (which nothing can predict). If it does not, there is no circuit to break.
 */
export function copies(effect) {
  return effect.plain.first - effect.plain.second >= COPY_MARGIN;
}

/** The largest score and its head (layer · nHead + head) of a per-head score array. */
export function bestHead(scores, nHead) {
  let k = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i] > scores[k]) k = i;
  return { layer: Math.floor(k / nHead), head: k % nHead, score: scores[k] };
}

/**
 * The largest score among the heads not in `skip` (a Set of layer · nHead + head), or null when every head is.
 * An ablated head's attention is still computed (ablation zeroes what it writes, not where it looks), so its own
 * score cannot show an ablation's effect; the heads left working can.
 */
export function bestOther(scores, nHead, skip) {
  let k = -1;
  for (let i = 0; i < scores.length; i++) if (!skip.has(i) && (k < 0 || scores[i] > scores[k])) k = i;
  return k < 0 ? null : { layer: Math.floor(k / nHead), head: k % nHead, score: scores[k] };
}

/**
 * The card's numbers: the loss on each copy and the best induction score, plain
 * and with the heads ablated, and their changes. Measured on what the ablated model
 * does: `gain` = first − second, how much easier copying makes the second copy
 * (the model's own induction behaviour, from its losses), and `others` = the best
 * induction score among the heads not ablated (the heads downstream of a broken one
 * lose their pattern; an ablated head keeps its own, see bestOther). `induction` is
 * the best score over every head, the ablated ones included, as before.
 * @param {{plain: {losses}, broken: {losses}, ind: {induction}, indBroken: {induction}, n: number, nHead: number,
 *   ablated?: {layer, head}[]}} r
 */
export function circuitEffect({ plain, broken, ind, indBroken, n, nHead, ablated = [] }) {
  const p = copyLosses(plain.losses, n), b = copyLosses(broken.losses, n);
  const i0 = bestHead(ind.induction, nHead), i1 = bestHead(indBroken.induction, nHead);
  const skip = new Set(ablated.map((x) => x.layer * nHead + x.head));
  const o0 = bestOther(ind.induction, nHead, skip), o1 = bestOther(indBroken.induction, nHead, skip);
  const gain = (c) => c.first - c.second;
  return {
    plain: { ...p, gain: gain(p), induction: i0, others: o0 },
    broken: { ...b, gain: gain(b), induction: i1, others: o1 },
    delta: { first: b.first - p.first, second: b.second - p.second, gain: gain(b) - gain(p), induction: i1.score - i0.score,
      others: o0 && o1 ? o1.score - o0.score : null },
  };
}
