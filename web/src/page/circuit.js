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
 * The card's numbers: the loss on each copy and the best induction score, plain
 * and with the heads ablated, and their changes.
 * @param {{plain: {losses}, broken: {losses}, ind: {induction}, indBroken: {induction}, n: number, nHead: number}} r
 */
export function circuitEffect({ plain, broken, ind, indBroken, n, nHead }) {
  const p = copyLosses(plain.losses, n), b = copyLosses(broken.losses, n);
  const i0 = bestHead(ind.induction, nHead), i1 = bestHead(indBroken.induction, nHead);
  return {
    plain: { ...p, induction: i0 },
    broken: { ...b, induction: i1 },
    delta: { first: b.first - p.first, second: b.second - p.second, induction: i1.score - i0.score },
  };
}
