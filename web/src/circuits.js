// circuits.js — where a head looks versus what it moves (docs/evidence.md § 6–11), over the wasm exports of
// c/src/circuits.c: pattern/value patching, path patching, direct logit attribution, value norms, causal tracing
// by component and composition scores; and each of them over a set of clean/corrupted pairs (or inputs), as
// generators that yield after each pair (progress, cancel), with bootstrap intervals over pairs.
//
// Scores are the normalised logit difference of the patching measures: (ld - ld_corrupt) / (ld_clean -
// ld_corrupt), 0 = the corrupted run, 1 = the clean run, in both directions (denoising: the corrupted input with
// something from the clean run; noising: the clean input with something from the corrupted run).

import { AttnlabError } from './core/errors.js';
import { SET_DEFAULTS, SET_POINTS, bootstrapMean, checkSetPoints, gapShortfall, intervalsOf } from './evidence.js';
import { checkIndex } from './analysis.js';
import { checkObject, denseArray, lookup, show, table } from './options.js';
import { splitmix64, quantile7 } from './core/rng.js';

const f64 = (w, p) => new DataView(w.memory.buffer).getFloat64(p, true);
const nanToNull = (x) => (Number.isNaN(x) ? null : x);

function withIds(w, ids, alloc) {
  const p = alloc(4 * Math.max(ids.length, 1));
  w.i32.set(ids, p >>> 2);
  return p;
}

function checkPair(clean, corrupt) {
  if (clean.length !== corrupt.length)
    throw new AttnlabError('EINVAL', `the clean input has ${clean.length} tokens and the corrupted one ${corrupt.length}: patching needs equal lengths`);
}

// null-prototype tables: a direction or receiver input of 'toString' or '__proto__' is not in them (lookup)
export const DIRECTIONS = table({ denoise: 0, noise: 1 });
export const PATCH_KINDS = Object.freeze(['pattern', 'value', 'both']);
export const RECEIVER_INPUTS = table({ q: 0, k: 1, v: 2, logits: 3 });

/** A direction of path patching checked: 'denoise' or 'noise' (EINVAL otherwise, ETYPE for a non-string). */
export function checkDirection(where, direction) {
  if (lookup(DIRECTIONS, direction) === undefined)
    throw new AttnlabError(typeof direction === 'string' ? 'EINVAL' : 'ETYPE', `${where}: direction is 'denoise' or 'noise', not ${show(direction)}`);
  return direction;
}

/** The most receivers a model allows: each input (q, k, v) of each head once, and the logits. */
export const maxReceivers = (nLayer, nHead) => 3 * nLayer * nHead + 1;

/** Pattern vs value patching: grid[direction][kind] = Float32Array (L * NH), directions denoise/noise, kinds pattern/value/both. */
export function patternValuePatching(w, h, clean, corrupt, { answers, nLayer, nHead }) {
  checkPair(clean, corrupt);
  const T = clean.length, LH = nLayer * nHead;
  return w.scoped((alloc) => {
    const pc = withIds(w, clean, alloc), pd = withIds(w, corrupt, alloc);
    const pG = alloc(4 * 6 * LH), pLc = alloc(8), pLd = alloc(8);
    w.patternValuePatching(pG, pLc, pLd, h, pc, pd, T, answers[0], answers[1]);
    const g = w.readF32(pG, 6 * LH);
    const grid = {};
    for (const [dir, di] of Object.entries(DIRECTIONS))
      grid[dir] = Object.fromEntries(PATCH_KINDS.map((k, ki) => [k, g.slice((di * 3 + ki) * LH, (di * 3 + ki + 1) * LH)]));
    return { T, nLayer, nHead, answers: answers.slice(), ldClean: f64(w, pLc), ldCorrupt: f64(w, pLd), grid };
  });
}

function receiverOf(given, k, nLayer, nHead) {
  if (!given || typeof given !== 'object' || Array.isArray(given))
    throw new AttnlabError('ETYPE', 'a receiver is {layer, head, input} or {input: \'logits\'}');
  const r = checkObject(`receivers[${k}]`, given, ['layer', 'head', 'input']);
  const input = lookup(RECEIVER_INPUTS, r.input);
  if (input === undefined)
    throw new AttnlabError(typeof r.input === 'string' ? 'EINVAL' : 'ETYPE', `receivers[${k}]: a receiver's input is 'q', 'k', 'v' or 'logits', not ${show(r.input)}`);
  if (input === RECEIVER_INPUTS.logits) return [0, 0, input];
  return [checkIndex('receiver layer', r.layer, 0, nLayer - 1), checkIndex('receiver head', r.head, 0, nHead - 1), input];
}

/**
 * The receivers as [layer, head, input] triples, each checked; a receiver given twice is EINVAL (it would be
 * computed twice: 4,096 copies of one ran ~5 min), not merged, as the CLI's --receivers.
 */
export function receiversOf(receivers, nLayer, nHead) {
  if (!Array.isArray(receivers) || receivers.length === 0) throw new AttnlabError('ETYPE', 'receivers must be a non-empty list');
  // the size first (2e7 receivers once grew wasm memory to 1.2 GB before ERANGE), then the holes (a hole once
  // reached C as whatever triple an earlier call left in wasm memory)
  const max = maxReceivers(nLayer, nHead);
  if (receivers.length > max)
    throw new AttnlabError('ELIMIT', `${receivers.length} receivers, more than the ${max} this model has (q, k and v of each of its ` +
      `${nLayer * nHead} heads, and the logits), checked before any is read; give each receiver once`);
  denseArray('receivers', receivers);
  const R = receivers.map((r, k) => receiverOf(r, k, nLayer, nHead)), seen = new Map();
  R.forEach((r, k) => {
    const key = r.join('.');
    if (seen.has(key)) throw new AttnlabError('EINVAL', `receiver ${k} repeats receiver ${seen.get(key)}; give each receiver once`);
    seen.set(key, k);
  });
  return R;
}

const INPUT_NAMES = ['q', 'k', 'v', 'logits'];
/** A checked receiver as the result gives it back: {input: 'logits'} or {layer, head, input}. */
const receiverEcho = ([layer, head, input]) => (INPUT_NAMES[input] === 'logits' ? { input: 'logits' } : { layer, head, input: INPUT_NAMES[input] });

/** Path patching: out[k] = Float32Array (L * NH) of sender scores for receivers[k] (NaN where the sender is not below). */
export function pathPatching(w, h, clean, corrupt, { answers, receivers, direction = 'denoise', freezeMlp = false, nLayer, nHead }) {
  checkPair(clean, corrupt);
  checkDirection('pathPatching', direction);
  const T = clean.length, LH = nLayer * nHead, R = receiversOf(receivers, nLayer, nHead);
  return w.scoped((alloc) => {
    const pc = withIds(w, clean, alloc), pd = withIds(w, corrupt, alloc);
    const pR = alloc(12 * R.length), pO = alloc(4 * LH * R.length), pLc = alloc(8), pLd = alloc(8);
    w.i32.set(R.flat(), pR >>> 2);
    w.pathPatching(pO, pLc, pLd, h, pc, pd, T, answers[0], answers[1], pR, R.length,
      DIRECTIONS[direction], freezeMlp ? 1 : 0);
    const o = w.readF32(pO, LH * R.length);
    return { T, nLayer, nHead, answers: answers.slice(), direction, freezeMlp: !!freezeMlp, ldClean: f64(w, pLc), ldCorrupt: f64(w, pLd),
             receivers: R.map(receiverEcho), senders: R.map((_, k) => o.slice(k * LH, (k + 1) * LH)) };
  });
}

/**
 * Direct logit attribution at the last position: heads (L * NH), sources (L * NH * T), and the other direct
 * terms (token embedding, position embedding, the final norm's bias, each layer's attention bias and MLP);
 * all of them sum to ld. answers [a, b] (u = W_U[a] - W_U[b]) or [a] (u = W_U[a]).
 */
export function directLogitAttribution(w, h, ids, { answers, nLayer, nHead }) {
  const T = ids.length, LH = nLayer * nHead, nt = 3 + 2 * nLayer;
  return w.scoped((alloc) => {
    const pI = withIds(w, ids, alloc), pH = alloc(4 * LH), pS = alloc(4 * LH * T), pT = alloc(8 * nt), pL = alloc(8);
    w.directLogitAttribution(pH, pS, pT, pL, h, pI, T, answers[0], answers.length > 1 ? answers[1] : -1);
    const t = new Float64Array(w.memory.buffer.slice(pT, pT + 8 * nt));
    return { T, nLayer, nHead, answers: answers.slice(), ld: f64(w, pL), heads: w.readF32(pH, LH), sources: w.readF32(pS, LH * T),
             terms: { token: t[0], position: t[1], finalBias: t[2], attnBias: Array.from(t.slice(3, 3 + nLayer)),
                      mlp: Array.from(t.slice(3 + nLayer, 3 + 2 * nLayer)) } };
  });
}

/** ||v_j W_O^h|| per (layer, head, position): Float32Array (L * NH * T). */
export function valueNorms(w, h, ids, { nLayer, nHead }) {
  const T = ids.length, n = nLayer * nHead * T;
  return w.scoped((alloc) => {
    const pI = withIds(w, ids, alloc), pN = alloc(4 * n);
    w.valueNorms(pN, h, pI, T);
    return w.readF32(pN, n);
  });
}

/** Causal tracing by component: attn, mlp (L * T) — the clean run's attention / MLP output restored at (layer, position). */
export function componentTracing(w, h, clean, corrupt, { answers, nLayer }) {
  checkPair(clean, corrupt);
  const T = clean.length, n = nLayer * T;
  return w.scoped((alloc) => {
    const pc = withIds(w, clean, alloc), pd = withIds(w, corrupt, alloc);
    const pA = alloc(4 * n), pM = alloc(4 * n), pLc = alloc(8), pLd = alloc(8);
    w.componentTracing(pA, pM, pLc, pLd, h, pc, pd, T, answers[0], answers[1]);
    return { T, nLayer, answers: answers.slice(), ldClean: f64(w, pLc), ldCorrupt: f64(w, pLd), attn: w.readF32(pA, n), mlp: w.readF32(pM, n) };
  });
}

/** The layer pairs l1 < l2 of an L-layer model in the order of alab_composition_scores (l1 outer). */
export function layerPairs(nLayer) {
  const out = [];
  for (let l1 = 0; l1 < nLayer - 1; l1++) for (let l2 = l1 + 1; l2 < nLayer; l2++) out.push([l1, l2]);
  return out;
}

/**
 * Composition scores of every pair of layers l1 < l2: q, k, v each Float32Array (P · NH · NH),
 * [pair][sender][receiver] with `pairs` naming each pair's layers; the Gaussian null per kind; and, per kind,
 * a within-model null: the same score's distribution over every sender–receiver pair of this model (median and
 * the central 95 %), and each score's rank within its layer pair (1 = the largest of the NH² there). A score
 * above the Gaussian range can still be ordinary for this model; one at the top of its layer pair and above the
 * model's own 97.5 % is a pair the weights single out.
 */
export function compositionScores(w, h, { nLayer, nHead, nNull = 200, seed = 1 }) {
  const pairs = layerPairs(nLayer), HH = nHead * nHead, n = pairs.length * HH;
  return w.scoped((alloc) => {
    const pS = alloc(4 * 3 * n), pN = alloc(8 * 9);
    w.compositionScores(pS, pN, h, nNull, seed);
    const s = w.readF32(pS, 3 * n), z = new Float64Array(w.memory.buffer.slice(pN, pN + 72));
    const nul = (k) => ({ mean: nanToNull(z[3 * k]), lo: nanToNull(z[3 * k + 1]), hi: nanToNull(z[3 * k + 2]) });
    const kinds = { q: s.slice(0, n), k: s.slice(n, 2 * n), v: s.slice(2 * n, 3 * n) };
    const withinModel = {}, rank = {};
    for (const [name, v] of Object.entries(kinds)) {
      const sorted = Array.from(v).sort((a, b) => a - b);
      withinModel[name] = { median: quantile7(sorted, 0.5), lo: quantile7(sorted, 0.025), hi: quantile7(sorted, 0.975), n: sorted.length };
      const r = new Int32Array(n);
      for (let p = 0; p < pairs.length; p++) {
        const idx = Array.from({ length: HH }, (_, x) => p * HH + x).sort((a, b) => v[b] - v[a] || a - b);
        idx.forEach((x, k) => { r[x] = k + 1; });
      }
      rank[name] = r;
    }
    return { nLayer, nHead, nNull, seed, pairs, ...kinds, null: { q: nul(0), k: nul(1), v: nul(2) }, withinModel, rank };
  });
}

// ---- over a set of pairs -------------------------------------------------------------------------------------

/** Runs fn on each pair; a pair the model does not separate the right way round by minGap (gapShortfall) is skipped with its reason. */
function* eachPair(pairs, minGap, fn, per, skipped) {
  checkSetPoints('a set of pairs', pairs, SET_POINTS.perInput); // before the first forward pass
  for (let k = 0; k < pairs.length; k++) {
    try {
      const r = fn(pairs[k]);
      const short = gapShortfall(r, minGap);
      if (short) skipped.push({ index: k, reason: short });
      else per.push({ index: k, ...r });
    } catch (e) {
      if (!(e instanceof AttnlabError) || e.code !== 'EINVAL') throw e;
      skipped.push({ index: k, reason: e.message });
    }
    yield { done: k + 1, total: pairs.length };
  }
}

const statOf = ({ nBoot = SET_DEFAULTS.nBoot, level = SET_DEFAULTS.level, seed = SET_DEFAULTS.seed }) => ({ nBoot, level, seed });

/**
 * The share of a head's effect that its pattern carries, as a ratio of means: mean(pattern effect) / mean(whole-head
 * effect) over the pairs (denoising: the scores; noising: 1 − the scores, how much of the clean behaviour the patch
 * removes), for the heads whose mean whole-head effect is at least `minEffect`. A mean of per-pair ratios would
 * divide by every pair's own, sometimes tiny, whole-head effect; the ratio of means divides once, by the set's.
 * Its interval: the same ratio over nBoot resamples of the pairs, drawn with the C statistics' generator and rule
 * (splitmix64, alab_rng_below: resample b draws n pair indices), percentile at `level` (type 7).
 */
function patternShares(per, dir, LH, minEffect, { nBoot, level, seed }) {
  const n = per.length;
  const eff = (v) => (dir === 'denoise' ? v : 1 - v);
  const out = [];
  // the resamples' pair indices, drawn once and shared by every head (as a paired bootstrap)
  const draws = [];
  const rng = splitmix64(seed);
  if (n > 1) for (let b = 0; b < nBoot; b++) { const d = new Int32Array(n); for (let t = 0; t < n; t++) d[t] = rng.below(n); draws.push(d); }
  for (let x = 0; x < LH; x++) {
    const a = per.map((p) => eff(p.grid[dir].pattern[x])), w = per.map((p) => eff(p.grid[dir].both[x]));
    const sum = (v, idx) => { let s = 0; if (idx) for (const i of idx) s += v[i]; else for (const y of v) s += y; return s; };
    const whole = n ? sum(w) / n : NaN;
    if (!(Math.abs(whole) >= minEffect)) { out.push(null); continue; }
    const mean = sum(a) / sum(w);
    if (n < 2 || nBoot < 1) { out.push({ mean, lo: n === 1 ? mean : null, hi: n === 1 ? mean : null, n }); continue; }
    const ratios = draws.map((d) => sum(a, d) / sum(w, d)).filter(Number.isFinite).sort((p, q) => p - q);
    out.push({ mean, lo: ratios.length ? quantile7(ratios, (1 - level) / 2) : null, hi: ratios.length ? quantile7(ratios, (1 + level) / 2) : null, n });
  }
  return out;
}

export function* patternValueSetSteps(w, h, pairs, { nLayer, nHead, minGap = 1, minEffect = 0.1, ...s }) {
  const per = [], skipped = [], LH = nLayer * nHead, stat = statOf(s);
  yield* eachPair(pairs, minGap, (p) => patternValuePatching(w, h, p.clean, p.corrupt, { answers: p.answers, nLayer, nHead }), per, skipped);
  const grid = {}, share = {};
  for (const dir of Object.keys(DIRECTIONS)) {
    grid[dir] = Object.fromEntries(PATCH_KINDS.map((k) => [k, intervalsOf(w, per.map((p) => Array.from(p.grid[dir][k])), LH, stat)]));
    share[dir] = patternShares(per, dir, LH, minEffect, stat);
  }
  return { n: per.length, skipped, minGap, minEffect, nLayer, nHead, ...stat, grid, patternShare: share,
           perInput: per.map((p) => ({ index: p.index, T: p.T, answers: p.answers, ldClean: p.ldClean, ldCorrupt: p.ldCorrupt,
             grid: Object.fromEntries(Object.entries(p.grid).map(([d, g]) => [d, Object.fromEntries(Object.entries(g).map(([k, v]) => [k, Array.from(v)]))])) })) };
}

export function* pathPatchingSetSteps(w, h, pairs, { nLayer, nHead, receivers, direction = 'denoise', freezeMlp = false, minGap = 1, ...s }) {
  const per = [], skipped = [], LH = nLayer * nHead, stat = statOf(s);
  yield* eachPair(pairs, minGap, (p) => pathPatching(w, h, p.clean, p.corrupt, { answers: p.answers, receivers, direction, freezeMlp, nLayer, nHead }), per, skipped);
  return { n: per.length, skipped, minGap, nLayer, nHead, ...stat, direction, freezeMlp: !!freezeMlp, receivers: receiversOf(receivers, nLayer, nHead).map(receiverEcho),
           senders: receivers.map((_, k) => intervalsOf(w, per.map((p) => Array.from(p.senders[k], nanToNull)), LH, stat)),
           perInput: per.map((p) => ({ index: p.index, T: p.T, answers: p.answers, ldClean: p.ldClean, ldCorrupt: p.ldCorrupt,
             senders: p.senders.map((v) => Array.from(v, nanToNull)) })) };
}

/**
 * Causal tracing by component over pairs of different lengths: per layer, the score at the positions where the
 * two inputs differ (their mean), at the last position, and at the other positions (their mean), for the
 * attention and the MLP output; each averaged over pairs with its interval.
 */
export function* componentTracingSetSteps(w, h, pairs, { nLayer, minGap = 1, ...s }) {
  const per = [], skipped = [], stat = statOf(s);
  yield* eachPair(pairs, minGap, (p) => {
    const r = componentTracing(w, h, p.clean, p.corrupt, { answers: p.answers, nLayer });
    const T = r.T, diff = [], rest = [];
    for (let t = 0; t < T - 1; t++) (p.clean[t] !== p.corrupt[t] ? diff : rest).push(t);
    const summary = (g) => {
      const mean = (ts, l) => (ts.length ? ts.reduce((a, t) => a + g[l * T + t], 0) / ts.length : NaN);
      const o = { corrupted: [], last: [], other: [] };
      for (let l = 0; l < nLayer; l++) { o.corrupted.push(mean(diff, l)); o.last.push(g[l * T + T - 1]); o.other.push(mean(rest, l)); }
      return o;
    };
    return { ...r, attnBy: summary(r.attn), mlpBy: summary(r.mlp), corrupted: diff };
  }, per, skipped);
  const agg = (key) => Object.fromEntries(['corrupted', 'last', 'other'].map((c) => [c, intervalsOf(w, per.map((p) => p[key][c]), nLayer, stat)]));
  return { n: per.length, skipped, minGap, nLayer, ...stat, attn: agg('attnBy'), mlp: agg('mlpBy'),
           perInput: per.map((p) => ({ index: p.index, T: p.T, answers: p.answers, ldClean: p.ldClean, ldCorrupt: p.ldCorrupt,
             corrupted: p.corrupted, attn: Array.from(p.attn), mlp: Array.from(p.mlp) })) };
}

/**
 * Direct logit attribution over pairs: the clean input with u = W_U[answer clean] - W_U[answer corrupted]; per
 * head the direct term, and the share of each head's term from the source positions where the pair differs.
 */
export function* attributionSetSteps(w, h, pairs, { nLayer, nHead, ...s }) {
  const per = [], stat = statOf(s), LH = nLayer * nHead;
  checkSetPoints('attributionSet', pairs, SET_POINTS.perInput);
  for (let k = 0; k < pairs.length; k++) {
    const p = pairs[k];
    const r = directLogitAttribution(w, h, p.clean, { answers: p.answers, nLayer, nHead });
    const diff = [];
    for (let t = 0; t < r.T; t++) if (p.clean[t] !== p.corrupt[t]) diff.push(t);
    const fromDiff = Array.from({ length: LH }, (_, x) => diff.reduce((a, j) => a + r.sources[x * r.T + j], 0));
    per.push({ index: k, T: r.T, answers: p.answers, ld: r.ld, heads: Array.from(r.heads), fromDiff, terms: r.terms });
    yield { done: k + 1, total: pairs.length };
  }
  const mlpLayers = intervalsOf(w, per.map((p) => p.terms.mlp), nLayer, stat);
  return { n: per.length, nLayer, nHead, ...stat, heads: intervalsOf(w, per.map((p) => p.heads), LH, stat),
           fromDiff: intervalsOf(w, per.map((p) => p.fromDiff), LH, stat), mlp: mlpLayers,
           ld: bootstrapMean(w, per.map((p) => p.ld), stat), perInput: per };
}
