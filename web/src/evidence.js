// evidence.js — does attention explain? The interventional measurements of
// docs/evidence.md over the C engine (c/src/evidence.c): each effect is a real
// forward pass with an intervention inside it, set beside the reading of
// attention that claims to stand for it, with rank correlations between them.
//
// Called by the Model (through measures.js) with its wasm instance and handle; everything
// returned is a copy in JS memory. Long grids run in parts: onProgress({done,
// total}) after each part, and an aborted signal stops between parts
// (AttnlabError 'EABORT').

import { AttnlabError } from './core/errors.js';
import { ABLATION_MODES, C } from './core/abi.js';
import { SET_DEFAULTS } from './options.js';
import { partialSpearman } from './stats.js';
import { EFFECT_THRESHOLD, edgePositionGrids, tokenPositionReadings, effectSizes, edgePoints, tokenPoints } from './controls.js';

/** The ways to remove a head (ALAB_ABLATE_ZERO, _MEAN, _RESAMPLE). */
export { ABLATION_MODES };

/**
 * Clean / corrupted pairs of equal token length for activation patching, in
 * the order the page and scripts/evidence-numbers.mjs (the one-sentence docs table) try them: the first pair
 * whose two runs predict different next tokens is the default example (so the
 * example follows the model, not one set of weights).
 */
export const PATCHING_PAIRS = Object.freeze([
  ['They said that they', 'He said that he'],
  ['The boys ran to their', 'The girl ran to her'],
  ['The church was built in the', 'The school was built in the'],
  ['When Mary and John went to the store, John gave a drink to', 'When Mary and John went to the store, Mary gave a drink to'],
]);

/** Knockout semantics (ALAB_KO_*): renormalise the row after removing a key, or leave its sum below 1. */
export const KNOCKOUT_MODES = Object.freeze({ renorm: 0, zero: 1 });
/** Token knockout semantics (ALAB_TOKEN_*): the column in every head, without renormalisation, the token deleted, or replaced. */
export const TOKEN_MODES = Object.freeze({ column: 0, columnZero: 1, delete: 2, replace: 3 });

const f64 = (w, p) => new DataView(w.memory.buffer).getFloat64(p, true);

function checkSignal(signal) {
  if (signal && signal.aborted) throw new AttnlabError('EABORT', 'the computation was cancelled (options.signal)');
}

function withIds(w, ids, alloc) {
  const p = alloc(4 * Math.max(ids.length, 1));
  w.i32.set(ids, p >>> 2);
  return p;
}

/** Statistics of two equal-length number lists through the C functions. */
export function rankStats(w, a, b, k) {
  const n = a.length;
  return w.scoped((alloc) => {
    const pa = alloc(8 * Math.max(n, 1)), pb = alloc(8 * Math.max(n, 1)), out = alloc(8);
    const dv = new Float64Array(w.memory.buffer);
    dv.set(a, pa >>> 3);
    dv.set(b, pb >>> 3);
    w.spearman(out, pa, pb, n);
    const spearman = f64(w, out);
    w.kendallTauB(out, pa, pb, n);
    const kendall = f64(w, out);
    let topKOverlap = null;
    if (k !== undefined && n > 0) {
      w.topKOverlap(out, pa, pb, n, k);
      topKOverlap = f64(w, out);
    }
    return { spearman: nanToNull(spearman), kendall: nanToNull(kendall), topKOverlap: nanToNull(topKOverlap) };
  });
}

const nanToNull = (x) => (x === null || Number.isNaN(x) ? null : x);

/**
 * Run a stepwise computation (a generator that yields {done, total} after each
 * part, or null at a pause point without progress, and returns the result) to its end: onProgress after each part, an
 * aborted signal stops it between parts (EABORT; its memory is freed).
 */
export function runSteps(gen, { onProgress, signal, alive } = {}) {
  try {
    for (;;) {
      checkSignal(signal);
      checkAlive(alive);
      const { value, done } = gen.next();
      if (done) return value;
      if (onProgress && value !== null) onProgress(value);
    }
  } finally {
    gen.return(undefined); // frees the wasm memory of an abandoned computation
  }
}

/**
 * A stepwise computation run inside another: its parts become pause points of the outer one (yield null: a
 * place to stop or let a short call in, with no progress of its own). Returns the inner result.
 */
export function* asPauses(gen) {
  try {
    for (;;) {
      const { value, done } = gen.next();
      if (done) return value;
      yield null;
    }
  } finally {
    gen.return(undefined);
  }
}

// a model disposed between two parts (from onProgress, or a worker's dispose message) ends the computation
// there: the next part would run on freed memory
function checkAlive(alive) {
  if (alive && !alive()) throw new AttnlabError('EDISPOSED', 'the model was disposed during the computation');
}

/**
 * The same with a pause between parts, so that a worker can read a cancel message (and answer a short call in
 * between: `pause`, ui/protocol.js's ctx.pause; by default one macrotask).
 */
export async function runStepsAsync(gen, { onProgress, cancelled, alive, pause = null }) {
  try {
    for (;;) {
      if (cancelled()) throw new AttnlabError('EABORT', 'the computation was cancelled');
      checkAlive(alive);
      const { value, done } = gen.next();
      if (done) return value;
      if (onProgress && value !== null) onProgress(value);
      await (pause ? pause() : new Promise((r) => setTimeout(r, 0)));
    }
  } finally {
    gen.return(undefined);
  }
}

// malloc'd blocks of one computation, freed together (generators cannot use w.scoped)
function arena(w) {
  const ptrs = [];
  return {
    alloc: (n) => { const p = w.malloc(n); ptrs.push(p); return p; },
    free: () => { if (!w._trap) for (let i = ptrs.length - 1; i >= 0; i--) w.free(ptrs[i]); ptrs.length = 0; },
  };
}

/**
 * Edge knockout grid of head (layer, head) or all heads of layer (head 'all'),
 * in parts of rowsPerPart query rows.
 * @returns {{layer, head, T, A: Float32Array, E: Float32Array, ELast: Float32Array,
 *   pairs: number, spearman, kendall, spearmanLast, kendallLast, topK, topKOverlap,
 *   rows: (number|null)[], meanRowSpearman: number|null}}
 */
export function* edgeKnockoutSteps(w, h, ids, { layer, head, topK, nLayer, mode = 'renorm', rowsPerPart = 4 }) {
  const T = ids.length;
  const hd = head === 'all' ? -1 : head;
  const TT = T * T;
  const mem = arena(w);
  let out;
  try {
    const pIds = withIds(w, ids, mem.alloc);
    const pA = mem.alloc(4 * TT), pE = mem.alloc(4 * TT), pL = mem.alloc(4 * TT);
    for (let r0 = 0; r0 < T; r0 += rowsPerPart) {
      const r1 = Math.min(T, r0 + rowsPerPart);
      w.edgeKnockout(pA, pE, pL, h, pIds, T, layer, hd, r0, r1, KNOCKOUT_MODES[mode]);
      if (r1 < T) yield { done: (r1 * (r1 + 1)) / 2, total: (T * (T + 1)) / 2 };
    }
    out = { A: w.readF32(pA, TT), E: w.readF32(pE, TT), ELast: w.readF32(pL, TT) };
  } finally {
    mem.free();
  }
  const a = [], e = [], al = [], el = [];
  // E_last only where it can be non-zero: in the last layer an edge of row i < T-1 cannot reach T-1
  const lastRow0 = nLayer !== undefined && layer === nLayer - 1 ? T - 1 : 0;
  // the pairs that exist: j <= i, and inside the layer's window on a sliding-window layer (the C side marks the
  // others NaN: weight 0 by construction, no effect but rounding)
  for (let i = 0; i < T; i++)
    for (let j = 0; j <= i; j++) {
      if (Number.isNaN(out.E[i * T + j])) continue;
      a.push(out.A[i * T + j]);
      e.push(out.E[i * T + j]);
      if (i >= lastRow0) {
        al.push(out.A[i * T + j]);
        el.push(out.ELast[i * T + j]);
      }
    }
  const k = topK ?? T;
  const all = rankStats(w, a, e, k);
  const last = rankStats(w, al, el);
  const rows = [], rowsKendall = [];
  for (let i = 0; i < T; i++) {
    const keys = [];
    for (let j = 0; j <= i; j++) if (!Number.isNaN(out.E[i * T + j])) keys.push(j);
    const ra = keys.map((j) => out.A[i * T + j]), re = keys.map((j) => out.E[i * T + j]);
    const st = rankStats(w, ra, re);
    rows.push(st.spearman);
    rowsKendall.push(st.kendall);
  }
  const defined = rows.filter((x) => x !== null);
  return {
    layer, head, T, ...out, pairs: a.length,
    spearman: all.spearman, kendall: all.kendall, topK: Math.min(k, a.length), topKOverlap: all.topKOverlap,
    spearmanLast: last.spearman, kendallLast: last.kendall, pairsLast: al.length, mode,
    rows, rowsKendall, meanRowSpearman: defined.length ? defined.reduce((s, x) => s + x, 0) / defined.length : null,
  };
}

/**
 * Token knockout effects at the last position beside three readings of the
 * plain run's attention: the last layer's head average, rollout and flow.
 */
export function* tokenKnockoutSteps(w, h, ids, { nLayer, nHead, mode = 'column', neutral = 0 }) {
  const T = ids.length;
  const mem = arena(w);
  try {
    const pIds = withIds(w, ids, mem.alloc);
    const pEff = mem.alloc(4 * T);
    for (let j0 = 0; j0 < T; j0 += 8) {
      const j1 = Math.min(T, j0 + 8);
      w.tokenKnockout(pEff, h, pIds, T, j0, j1, TOKEN_MODES[mode], neutral);
      if (j1 < T) yield { done: j1, total: T };
    }
    const effect = w.readF32(pEff, T);
    // ||v_j W_O^h|| of the last layer, for the value-weighted reading (Kobayashi et al. 2020)
    const pN = mem.alloc(4 * nLayer * nHead * T);
    w.valueNorms(pN, h, pIds, T);
    const norms = w.readF32(pN + 4 * (nLayer - 1) * nHead * T, nHead * T);
    const att = w.resultAttentionAt(h); // the plain run alab_value_norms made
    const pR = mem.alloc(4 * T * T), pF = mem.alloc(4 * T);
    w.attentionRollout(pR, att, nLayer, nHead, T);
    w.attentionFlow(pF, att, nLayer, nHead, T, T - 1);
    const R = w.readF32(pR, T * T);
    const A = w.readF32(att + 4 * (nLayer - 1) * nHead * T * T, nHead * T * T);
    const last = new Float32Array(T), vw = new Float32Array(T);
    for (let hh = 0; hh < nHead; hh++)
      for (let j = 0; j < T; j++) {
        last[j] += A[hh * T * T + (T - 1) * T + j] / nHead;
        vw[j] += (A[hh * T * T + (T - 1) * T + j] * norms[hh * T + j]) / nHead;
      }
    const readings = { lastLayer: last, rollout: R.slice((T - 1) * T), flow: w.readF32(pF, T), valueWeighted: vw };
    const stats = {};
    for (const [name, v] of Object.entries(readings)) stats[name] = rankStats(w, Array.from(v), Array.from(effect));
    return { T, mode, neutral: mode === 'replace' ? neutral : null, effect, readings, spearman: Object.fromEntries(Object.entries(stats).map(([k, x]) => [k, x.spearman])),
             kendall: Object.fromEntries(Object.entries(stats).map(([k, x]) => [k, x.kendall])) };
  } finally {
    mem.free();
  }
}

/** Head outputs (L, T, D), D = n_head * head_dim, of a plain run of ids, as a Float32Array (a copy). */
export function captureHeadOutputs(w, h, ids, L, D) {
  return w.scoped((alloc) => {
    const p = alloc(4 * L * ids.length * D);
    const pIds = withIds(w, ids, alloc);
    w.captureHeadOutputs(p, h, pIds, ids.length);
    return w.readF32(p, L * ids.length * D);
  });
}

function copyIn(w, arr, alloc) {
  const p = alloc(4 * Math.max(arr.length, 1));
  w.f32.set(arr, p >>> 2);
  return p;
}

/**
 * Head importance and the pruning curve under zero, mean and resample
 * ablation, and how much the three rankings agree.
 */
export function* ablationSemanticsSteps(w, h, ids, { reference, resample, refOut, resOut, nLayer, nHead, draws = 0, seed = 1 }) {
  const T = ids.length, LH = nLayer * nHead, D = refOut.length / (nLayer * reference.length);
  const mem = arena(w);
  try {
    const pIds = withIds(w, ids, mem.alloc);
    const pRef = copyIn(w, refOut, mem.alloc);
    const refs = { zero: [0, 0], mean: [pRef, reference.length],
                   resample: draws ? [pRef, reference.length] : [copyIn(w, resOut, mem.alloc), resample.length] };
    const pD = mem.alloc(4 * LH), pB = mem.alloc(8), pL = mem.alloc(4 * (LH + 1)), pO = mem.alloc(4 * LH);
    const out = { T, nLayer, nHead, referenceT: reference.length, resampleT: draws ? reference.length : resample.length };
    let step = 0;
    for (const [name, mode] of Object.entries(ABLATION_MODES)) {
      const [ref, tRef] = refs[name];
      if (name === 'resample' && draws) {
        out.resample = yield* resampleDraws(w, h, pIds, T, { pRef, tRef, LH, draws, seed, D, pD, pB, pL, pO });
        continue;
      }
      w.headImportanceMode(pD, pB, h, pIds, T, mode, ref, tRef);
      const delta = w.readF32(pD, LH);
      w.pruningCurveMode(pL, pO, h, pIds, T, pD, mode, ref, tRef);
      out[name] = { baseLoss: f64(w, pB), delta, order: w.readI32(pO, LH), pruning: w.readF32(pL, LH + 1) };
      if (++step < 3) yield { done: step, total: 3 };
    }
    out.agreement = {};
    for (const [a, b] of [['zero', 'mean'], ['zero', 'resample'], ['mean', 'resample']]) {
      const x = rankStats(w, Array.from(out[a].delta), Array.from(out[b].delta));
      out.agreement[`${a}-${b}`] = { spearman: x.spearman, kendall: x.kendall };
    }
    return out;
  } finally {
    mem.free();
  }
}

// Resample ablation over K seeded windows of the reference (alab_resample_draws): the mean loss increase of
// each head with a bootstrap interval over the draws, and the pruning curve (heads in order of the mean)
// averaged over the draws' windows.
function* resampleDraws(w, h, pIds, T, { pRef, tRef, LH, draws, seed, D, pD, pB, pL, pO }) {
  const pDraws = w.malloc(4 * draws * LH), pOff = w.malloc(4 * draws);
  try {
    w.resampleDraws(pD, pDraws, pOff, pB, h, pIds, T, pRef, tRef, draws, seed);
    const delta = w.readF32(pD, LH), all = w.readF32(pDraws, draws * LH), offsets = Array.from(w.readI32(pOff, draws));
    yield { done: 2.5, total: 3 };
    const pruning = new Float64Array(LH + 1);
    let order = null;
    for (const off of offsets) { // the same order (from the mean) for every window: pD holds the mean
      w.pruningCurveMode(pL, pO, h, pIds, T, pD, ABLATION_MODES.resample, pRef + 4 * off * D, tRef);
      const c = w.readF32(pL, LH + 1);
      for (let k = 0; k <= LH; k++) pruning[k] += c[k] / draws;
      order = order || w.readI32(pO, LH);
    }
    const intervals = [];
    for (let x = 0; x < LH; x++) {
      const col = [];
      for (let k = 0; k < draws; k++) col.push(all[k * LH + x]);
      intervals.push(bootstrapMean(w, col, { seed }));
    }
    return { baseLoss: f64(w, pB), delta, order, pruning: Float32Array.from(pruning), draws, seed, offsets, intervals };
  } finally {
    if (!w._trap) { w.free(pDraws); w.free(pOff); }
  }
}

/** Activation patching grids (residual L x T, heads L x NH), normalised logit difference. */
export function activationPatching(w, h, clean, corrupt, { answers, nLayer, nHead }) {
  const T = clean.length;
  if (corrupt.length !== T)
    throw new AttnlabError('EINVAL', `the clean input has ${T} tokens and the corrupted one ${corrupt.length}: patching needs equal lengths`);
  return w.scoped((alloc) => {
    const pc = withIds(w, clean, alloc), pd = withIds(w, corrupt, alloc);
    const pR = alloc(4 * nLayer * T), pH = alloc(4 * nLayer * nHead), pLc = alloc(8), pLd = alloc(8);
    w.activationPatching(pR, pH, pLc, pLd, h, pc, pd, T, answers[0], answers[1]);
    return { T, nLayer, nHead, answers: answers.slice(), ldClean: f64(w, pLc), ldCorrupt: f64(w, pLd),
             resid: w.readF32(pR, nLayer * T), heads: w.readF32(pH, nLayer * nHead) };
  });
}

// ---- over a set of inputs: intervals, nulls, the noise floor (docs/evidence.md § 5, over a set of inputs) ----

/**
 * The points a set's summary holds for an input of T tokens, per measure (the size of its correlations: every
 * causal pair for edge knockout, every position for token knockout; one per input or pair for the others, whose
 * aggregates are over inputs). The set's total is held to C.EVIDENCE_MAX_N (ALAB_EVIDENCE_MAX_N) before the
 * first forward pass, as the CLI does while it reads --set.
 */
export const SET_POINTS = Object.freeze({
  edge: (T) => (T * (T + 1)) / 2,
  tokens: (T) => T,
  perInput: () => 1,
});

/** ELIMIT when the points of `lengths` (token counts, or a count of inputs with SET_POINTS.perInput) exceed the cap. */
export function checkSetPoints(where, lengths, points) {
  let total = 0;
  for (let k = 0; k < lengths.length; k++) {
    total += points(lengths[k]);
    if (total > C.EVIDENCE_MAX_N)
      throw new AttnlabError('ELIMIT', `${where}: the set holds more than ${C.EVIDENCE_MAX_N} points (ALAB_EVIDENCE_MAX_N) by its input ${k} ` +
        `(${total} so far), checked before the first forward pass; use options.limit = ${Math.max(k, 1)} or fewer inputs`);
  }
  return total;
}

/** The default resampling of every aggregate (95 % intervals, 1000 resamples and permutations): options.js's, re-exported. */
export { SET_DEFAULTS };

/** mean, lo, hi of the finite values of xs: alab_bootstrap_mean (percentile interval over inputs). */
export function bootstrapMean(w, xs, { nBoot = SET_DEFAULTS.nBoot, level = SET_DEFAULTS.level, seed = SET_DEFAULTS.seed } = {}) {
  const n = xs.length;
  if (nBoot === 0) { // the mean alone, as alab_corr_dataset does without resamples
    const r = bootstrapMean(w, xs, { nBoot: 1, level, seed });
    return { ...r, lo: null, hi: null };
  }
  return w.scoped((alloc) => {
    const px = alloc(8 * Math.max(n, 1)), out = alloc(24);
    new Float64Array(w.memory.buffer).set(xs.map((x) => (x === null || x === undefined ? NaN : x)), px >>> 3);
    w.bootstrapMean(out, out + 8, out + 16, px, n, nBoot, level, seed);
    return { mean: nanToNull(f64(w, out)), lo: nanToNull(f64(w, out + 8)), hi: nanToNull(f64(w, out + 16)),
             n: xs.filter((x) => x !== null && x !== undefined && Number.isFinite(x)).length };
  });
}

/**
 * A correlation over a set of inputs (alab_corr_dataset): points = [{reading, effect, group}] per input.
 * Returns the mean per-input correlation, its bootstrap interval, the within-group permutation null and
 * p-values, and how many points are above the noise floor.
 */
export function corrDataset(w, inputs, { stat = 'spearman', eps = 0, minPoints = 4, nBoot = SET_DEFAULTS.nBoot,
  nPerm = SET_DEFAULTS.nPerm, level = SET_DEFAULTS.level, seed = SET_DEFAULTS.seed } = {}) {
  const n = inputs.length;
  let total = 0;
  for (const p of inputs) total += p.reading.length;
  return w.scoped((alloc) => {
    const pOff = alloc(4 * (n + 1)), pR = alloc(8 * Math.max(total, 1)), pE = alloc(8 * Math.max(total, 1));
    const pG = alloc(4 * Math.max(total, 1)), pPer = alloc(8 * Math.max(n, 1)), pOut = alloc(8 * 11);
    const f = new Float64Array(w.memory.buffer), i32 = w.i32;
    let o = 0;
    inputs.forEach((p, k) => {
      i32[(pOff >>> 2) + k] = o;
      f.set(p.reading, (pR >>> 3) + o);
      f.set(p.effect, (pE >>> 3) + o);
      i32.set(p.group, (pG >>> 2) + o);
      o += p.reading.length;
    });
    i32[(pOff >>> 2) + n] = o;
    w.corrDatasetFlat(pOut, pPer, n, pOff, pR, pE, pG, stat === 'kendall' ? 1 : 0, eps, minPoints,
      nBoot, nPerm, level, seed);
    const r = (k) => nanToNull(f64(w, pOut + 8 * k));
    return { stat, mean: r(0), lo: r(1), hi: r(2), nullMean: r(3), nullLo: r(4), nullHi: r(5), p: r(6), pGreater: r(7),
             nDefined: f64(w, pOut + 64), nPoints: f64(w, pOut + 72), nAboveFloor: f64(w, pOut + 80),
             perInput: Array.from(new Float64Array(w.memory.buffer, pPer, n), nanToNull) };
  });
}

/** Largest KL that rounding alone leaves in a knockout of `layer` on each input (alab_knockout_noise). */
export function knockoutNoise(w, h, ids, layer) {
  return w.scoped((alloc) => {
    const pIds = withIds(w, ids, alloc), out = alloc(8);
    w.knockoutNoise(out, h, pIds, ids.length, layer);
    return f64(w, out);
  });
}

const CORR_FIELDS = ['mean', 'lo', 'hi', 'nullMean', 'nullLo', 'nullHi', 'p', 'pGreater', 'nDefined', 'nPoints', 'nAboveFloor'];
const corrOf = (v, at) => Object.fromEntries(CORR_FIELDS.map((k, i) => [k, nanToNull(v[at + i])]));

/**
 * The controls of an edge set (controls.js, docs/evidence.md § 5): the position readings through the same summary
 * as the weights (alab_edge_set_summary with each position grid in place of A), the effects' sizes, the weights
 * against only the effects of at least effectThreshold nats, and the partial correlation given recency. grids:
 * each input's {T, A, E, L} as read back; the pointers are the set's (its E, E_last, T arrays and a 97-double out).
 */
function edgeControls(w, mem, grids, { pOut, pE, pL, pT, n, lastLayer, eps, nBoot, nPerm, level, seed, effectThreshold }) {
  const positions = {}, pP = mem.alloc(4 * n), pPerP = mem.alloc(8 * 4 * n);
  const posGrids = grids.map((g) => edgePositionGrids(g.T));
  for (const name of ['recency', 'first', 'diagonal', 'early']) {
    grids.forEach((g, k) => { const q = mem.alloc(4 * g.T * g.T); w.f32.set(posGrids[k][name], q >>> 2); w.i32[(pP >>> 2) + k] = q; });
    w.edgeSetSummaryFlat(pOut, pPerP, pP, pE, pL, pT, n, lastLayer ? 1 : 0, eps, nBoot, nPerm, level, seed);
    const pv = new Float64Array(w.memory.buffer, pOut, 97).slice(), pper = new Float64Array(w.memory.buffer, pPerP, 2 * n).slice();
    positions[name] = { local: corrOf(pv, 0), last: corrOf(pv, 44),
      perInput: grids.map((_, k) => ({ local: nanToNull(pper[k]), last: nanToNull(pper[n + k]) })) };
  }
  // how big the effects are, and the weights against only the effects of at least effectThreshold nats
  const lastRows = (g) => (lastLayer ? g.L.subarray((g.T - 1) * g.T, g.T * g.T) : g.L);
  const effects = { local: effectSizes(grids.map((g) => g.E), effectThreshold), last: effectSizes(grids.map(lastRows), effectThreshold) };
  const aboveThreshold = { threshold: effectThreshold,
    local: corrDataset(w, grids.map((g) => edgePoints(g.A, g.E, g.T, effectThreshold)), { stat: 'spearman', eps, nBoot, nPerm, level, seed }) };
  // the weights against the local effects with position held fixed: per input, the partial Spearman correlation
  // of A and E given recency −(i − j) over the causal pairs, then its mean over inputs with its interval
  const partialPer = grids.map((g, k) => {
    const pts = edgePoints(g.A, g.E, g.T), rec = edgePoints(posGrids[k].recency, g.E, g.T);
    return pts.reading.length >= 4 ? partialSpearman(w, pts.reading, pts.effect, rec.reading) : null;
  });
  const partial = { given: 'recency', ...bootstrapMean(w, partialPer, { nBoot, level, seed }), perInput: partialPer };
  return { positions, effects, aboveThreshold, partial };
}

/**
 * Edge knockout of one layer over a set of inputs (id arrays), with intervals, nulls and the noise floor:
 * the grids of alab_edge_knockout for each input (progress after each), the noise floor from
 * alab_knockout_noise on the first noiseInputs inputs (eps = noiseFactor x the largest KL a no-op
 * renormalisation leaves, unless `epsilon` is given), and the verdict of alab_edge_set_summary: "local"
 * (A against E over every causal pair) and "last" (A against E at the last position, in the last layer
 * only row T-1, whose edges alone reach it), each with its Spearman and Kendall summaries and the uniform
 * and row-permuted baselines; the mean per-row rho; the top-k overlap.
 */
export function* edgeKnockoutSetSteps(w, h, inputs, { layer, head, nLayer, nHead, mode = 'renorm', epsilon,
  nBoot = SET_DEFAULTS.nBoot, nPerm = SET_DEFAULTS.nPerm, level = SET_DEFAULTS.level, seed = SET_DEFAULTS.seed,
  noiseFactor = SET_DEFAULTS.noiseFactor, noiseInputs = 10, effectThreshold = EFFECT_THRESHOLD }) {
  checkSetPoints('edgeKnockoutSet', inputs.map((ids) => ids.length), SET_POINTS.edge); // before the first forward pass
  const n = inputs.length, nNoise = epsilon === undefined ? Math.min(noiseInputs, n) : 0;
  const total = n + nNoise;
  const hd = head === 'all' ? -1 : head;
  const mem = arena(w);
  try {
    const pA = mem.alloc(4 * n), pE = mem.alloc(4 * n), pL = mem.alloc(4 * n), pT = mem.alloc(4 * n), pW = mem.alloc(4 * n);
    const grids = []; // each input's A, E, E_last, read back for the controls
    for (let k = 0; k < n; k++) {
      const ids = inputs[k], T = ids.length, TT = T * T;
      const pIds = withIds(w, ids, mem.alloc);
      const a = mem.alloc(4 * TT), e = mem.alloc(4 * TT), l = mem.alloc(4 * TT), vw = mem.alloc(4 * TT);
      // the value-weighted reading of the same edges: A_h[i][j] ||v_j W_O^h|| (the heads' mean for head 'all')
      const pN = mem.alloc(4 * nLayer * nHead * T);
      w.valueNorms(pN, h, pIds, T);
      const norms = w.readF32(pN + 4 * layer * nHead * T, nHead * T);
      const att = w.readF32(w.resultAttentionAt(h) + 4 * layer * nHead * TT, nHead * TT); // alab_value_norms's plain run
      const heads = hd < 0 ? Array.from({ length: nHead }, (_, x) => x) : [hd];
      const v = new Float32Array(TT);
      for (const x of heads)
        for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) v[i * T + j] += (att[x * TT + i * T + j] * norms[x * T + j]) / heads.length;
      w.f32.set(v, vw >>> 2);
      // the grid in parts of 4 query rows, a pause point between them (a short call may come in there)
      for (let r0 = 0; r0 < T; r0 += 4) {
        w.edgeKnockout(a, e, l, h, pIds, T, layer, hd, r0, Math.min(T, r0 + 4), KNOCKOUT_MODES[mode]);
        if (r0 + 4 < T) yield null;
      }
      w.i32[(pA >>> 2) + k] = a; w.i32[(pE >>> 2) + k] = e; w.i32[(pL >>> 2) + k] = l; w.i32[(pT >>> 2) + k] = T; w.i32[(pW >>> 2) + k] = vw;
      grids.push({ T, A: w.readF32(a, TT).slice(), E: w.readF32(e, TT).slice(), L: w.readF32(l, TT).slice() });
      yield { done: k + 1, total };
    }
    let noise = 0;
    for (let k = 0; k < nNoise; k++) {
      noise = Math.max(noise, knockoutNoise(w, h, inputs[k], layer));
      yield { done: n + k + 1, total };
    }
    const eps = epsilon ?? noiseFactor * noise;
    const pOut = mem.alloc(8 * 97), pPer = mem.alloc(8 * 4 * n);
    w.edgeSetSummaryFlat(pOut, pPer, pA, pE, pL, pT, n, layer === nLayer - 1 ? 1 : 0, eps,
      nBoot, nPerm, level, seed);
    const v = new Float64Array(w.memory.buffer, pOut, 97).slice(), per = new Float64Array(w.memory.buffer, pPer, 4 * n).slice();
    const kinds = (at) => ({ spearman: corrOf(v, at), kendall: corrOf(v, at + 11), uniform: corrOf(v, at + 22), permuted: corrOf(v, at + 33) });
    // the same summary with the value-weighted reading in place of the weights (its correlations only)
    w.edgeSetSummaryFlat(pOut, pPer, pW, pE, pL, pT, n, layer === nLayer - 1 ? 1 : 0, eps,
      nBoot, nPerm, level, seed);
    const vv = new Float64Array(w.memory.buffer, pOut, 97).slice();
    const valueWeighted = { local: { spearman: corrOf(vv, 0), kendall: corrOf(vv, 11) }, last: { spearman: corrOf(vv, 44), kendall: corrOf(vv, 55) } };
    const { positions, effects, aboveThreshold, partial } = edgeControls(w, mem, grids,
      { pOut, pE, pL, pT, n, lastLayer: layer === nLayer - 1, eps, nBoot, nPerm, level, seed, effectThreshold });
    return {
      layer, head, mode, n, eps, noise: epsilon === undefined ? { maxKL: noise, factor: noiseFactor, inputs: nNoise } : null,
      seed, nBoot, nPerm, level, lastRowOnly: layer === nLayer - 1,
      local: kinds(0), last: kinds(44), valueWeighted, positions, effects, aboveThreshold, partial,
      rows: { mean: nanToNull(v[88]), lo: nanToNull(v[89]), hi: nanToNull(v[90]) },
      topKOverlap: { mean: nanToNull(v[91]), lo: nanToNull(v[92]), hi: nanToNull(v[93]) },
      meanEffect: { mean: nanToNull(v[94]), lo: nanToNull(v[95]), hi: nanToNull(v[96]) },
      perInput: inputs.map((ids, k) => ({ T: ids.length, spearman: nanToNull(per[k]), spearmanLast: nanToNull(per[n + k]),
        rowSpearman: nanToNull(per[2 * n + k]), topKOverlap: nanToNull(per[3 * n + k]) })),
    };
  } finally {
    mem.free();
  }
}

/** Each input's values shuffled once (alab_permute_within_groups, one group an input). */
export function permuteWithinInputs(w, lists, seed) {
  const n = lists.length, total = lists.reduce((s, l) => s + l.length, 0);
  return w.scoped((alloc) => {
    const pR = alloc(8 * Math.max(total, 1)), pOff = alloc(4 * (n + 1));
    const f = new Float64Array(w.memory.buffer);
    let o = 0;
    lists.forEach((l, k) => { w.i32[(pOff >>> 2) + k] = o; f.set(l, (pR >>> 3) + o); o += l.length; });
    w.i32[(pOff >>> 2) + n] = o;
    w.permuteWithinGroups(pR, pOff, 0, n, seed);
    const v = new Float64Array(w.memory.buffer, pR, total).slice();
    const out = [];
    o = 0;
    for (const l of lists) { out.push(Array.from(v.subarray(o, o + l.length))); o += l.length; }
    return out;
  });
}

/** Per-entry bootstrap intervals of a list of equal-length vectors (one per input). */
export function intervalsOf(w, vectors, len, stat) {
  const out = [];
  for (let x = 0; x < len; x++) out.push(bootstrapMean(w, vectors.map((v) => (v[x] === null ? NaN : v[x])), stat));
  return out;
}

/** One group per input: every position j of the last row. */
const wholeRow = (reading, effect) => ({ reading: Array.from(reading), effect: Array.from(effect), group: new Array(reading.length).fill(0) });

/**
 * Token knockout over a set of inputs: per input the effects (alab_token_knockout, `mode`) and the three
 * readings of the plain run (last layer, rollout, flow); the aggregate per reading is alab_corr_dataset over
 * the inputs (one group per input: the null permutes a reading across its input's tokens), after the noise
 * floor (a no-op renormalisation of every row of every layer, alab_knockout_noise with layer -1).
 */
export function* tokenKnockoutSetSteps(w, h, inputs, { nLayer, nHead, mode = 'column', neutral = 0, epsilon,
  nBoot = SET_DEFAULTS.nBoot, nPerm = SET_DEFAULTS.nPerm, level = SET_DEFAULTS.level, seed = SET_DEFAULTS.seed,
  noiseFactor = SET_DEFAULTS.noiseFactor, noiseInputs = 10, effectThreshold = EFFECT_THRESHOLD }) {
  checkSetPoints('tokenKnockoutSet', inputs.map((ids) => ids.length), SET_POINTS.tokens); // before the first forward pass
  const n = inputs.length, nNoise = epsilon === undefined ? Math.min(noiseInputs, n) : 0, total = n + nNoise;
  const per = [];
  for (let k = 0; k < n; k++) {
    per.push(yield* asPauses(tokenKnockoutSteps(w, h, inputs[k], { nLayer, nHead, mode, neutral })));
    yield { done: k + 1, total };
  }
  let noise = 0;
  for (let k = 0; k < nNoise; k++) {
    noise = Math.max(noise, knockoutNoise(w, h, inputs[k], -1));
    yield { done: n + k + 1, total };
  }
  const eps = epsilon ?? noiseFactor * noise;
  const stat = { nBoot, nPerm, level, seed, eps };
  const readings = {};
  for (const name of ['lastLayer', 'rollout', 'flow', 'valueWeighted'])
    readings[name] = corrDataset(w, per.map((r) => wholeRow(r.readings[name], r.effect)), stat);
  // Jain & Wallace's baseline: the last layer's reading shuffled once within each input (seed + 2); uniform
  // attention over one row is a constant and ranks nothing, so it has no correlation to show
  const perm = permuteWithinInputs(w, per.map((r) => Array.from(r.readings.lastLayer)), seed + 2);
  const baselines = { permuted: corrDataset(w, per.map((r, k) => wholeRow(perm[k], r.effect)), stat) };
  // the controls (controls.js): readings that know only where a token is, the effects' sizes in nats, and each
  // reading against only the effects of at least effectThreshold nats
  const positions = {};
  for (const name of ['recency', 'first', 'early'])
    positions[name] = corrDataset(w, per.map((r) => wholeRow(tokenPositionReadings(r.T)[name], r.effect)), stat);
  const effects = effectSizes(per.map((r) => r.effect), effectThreshold);
  const aboveThreshold = { threshold: effectThreshold };
  for (const name of ['lastLayer', 'rollout', 'flow', 'valueWeighted'])
    aboveThreshold[name] = corrDataset(w, per.map((r) => tokenPoints(r.readings[name], r.effect, effectThreshold)), stat);
  return {
    n, mode, baselines, positions, effects, aboveThreshold, neutral: mode === 'replace' ? neutral : null, eps, noise: epsilon === undefined ? { maxKL: noise, factor: noiseFactor, inputs: nNoise } : null,
    seed, nBoot, nPerm, level, readings,
    perInput: per.map((r, k) => ({ T: r.T, lastLayer: readings.lastLayer.perInput[k], rollout: readings.rollout.perInput[k], flow: readings.flow.perInput[k],
      valueWeighted: readings.valueWeighted.perInput[k] })),
  };
}

/**
 * Head ablation over a set of inputs: per input the loss increase of each head under zero, mean (over the
 * reference's positions) and resample ablation (averaged over `draws` windows of the reference,
 * alab_resample_draws), and the rank agreement of the three; aggregates with bootstrap intervals.
 */
export function* ablationSetSteps(w, h, inputs, { refIds, refOut, nLayer, nHead, draws = 20, nBoot = SET_DEFAULTS.nBoot,
  level = SET_DEFAULTS.level, seed = SET_DEFAULTS.seed }) {
  checkSetPoints('ablationSet', inputs, SET_POINTS.perInput);
  const n = inputs.length, LH = nLayer * nHead, Tr = refIds.length;
  const per = [];
  const mem = arena(w);
  try {
    const pRef = mem.alloc(4 * refOut.length);
    w.f32.set(refOut, pRef >>> 2);
    const pD = mem.alloc(4 * LH), pB = mem.alloc(8), pDraws = mem.alloc(4 * draws * LH), pOff = mem.alloc(4 * draws);
    for (let k = 0; k < n; k++) {
      const ids = inputs[k], T = ids.length;
      if (T > Tr) throw new AttnlabError('ETOOLONG', `ablationSet: input ${k} has ${T} tokens, more than the reference's ${Tr}`);
      const pIds = withIds(w, ids, mem.alloc);
      w.headImportanceMode(pD, pB, h, pIds, T, ABLATION_MODES.zero, 0, 0);
      const zero = Array.from(w.readF32(pD, LH));
      yield null;
      w.headImportanceMode(pD, pB, h, pIds, T, ABLATION_MODES.mean, pRef, Tr);
      const mean = Array.from(w.readF32(pD, LH));
      yield null;
      w.resampleDraws(pD, pDraws, pOff, pB, h, pIds, T, pRef, Tr, draws, seed);
      const resample = Array.from(w.readF32(pD, LH));
      const agreement = {};
      for (const [a, b, x, y] of [['zero', 'mean', zero, mean], ['zero', 'resample', zero, resample], ['mean', 'resample', mean, resample]])
        agreement[`${a}-${b}`] = rankStats(w, x, y).spearman;
      per.push({ T, zero, mean, resample, agreement });
      yield { done: k + 1, total: n };
    }
  } finally {
    mem.free();
  }
  const stat = { nBoot, level, seed };
  const delta = {};
  for (const m of ['zero', 'mean', 'resample']) delta[m] = intervalsOf(w, per.map((p) => p[m]), LH, stat);
  const agreement = {};
  for (const key of ['zero-mean', 'zero-resample', 'mean-resample']) agreement[key] = bootstrapMean(w, per.map((p) => p.agreement[key]), stat);
  return { n, draws, seed, nBoot, level, nLayer, nHead, referenceT: Tr, delta, agreement,
           perInput: per.map((p) => ({ T: p.T, agreement: p.agreement, zero: p.zero, mean: p.mean, resample: p.resample })) };
}

/**
 * Why a pair is left out of a set's scores, or null to keep it. A pair is kept when the model separates its two
 * inputs the right way round by at least minGap nats: ldClean − ldCorrupt ≥ minGap, where ld is the logit of the
 * clean answer minus that of the corrupted one. The normalised score divides by this gap, so below minGap it
 * amplifies noise; and a pair whose gap is negative (the model prefers the corrupted answer on the clean input
 * more than on the corrupted one) has no "clean behaviour" to restore, however large the gap's size.
 */
export function gapShortfall(r, minGap) {
  const gap = r.ldClean - r.ldCorrupt;
  if (gap >= minGap) return null;
  return `the clean run favours the clean answer over the corrupted one by ${gap.toFixed(3)} nats more than the corrupted run ` +
    `does (logit differences ${r.ldClean.toFixed(3)} and ${r.ldCorrupt.toFixed(3)}), less than minGap = ${minGap}`;
}

/**
 * Activation patching over a set of clean/corrupted pairs ({clean, corrupt, answers} as ids): per pair the
 * head grid and the residual stream at the last position; the aggregates with bootstrap intervals. A pair
 * the model does not separate the right way round by minGap (gapShortfall) is skipped and recorded with its
 * reason.
 */
export function* patchingSetSteps(w, h, pairs, { nLayer, nHead, nBoot = SET_DEFAULTS.nBoot, level = SET_DEFAULTS.level,
  seed = SET_DEFAULTS.seed, minGap = 1 }) {
  checkSetPoints('patchingSet', pairs, SET_POINTS.perInput);
  const per = [], skipped = [];
  for (let k = 0; k < pairs.length; k++) {
    const p = pairs[k];
    try {
      const r = activationPatching(w, h, p.clean, p.corrupt, { answers: p.answers, nLayer, nHead });
      const T = r.T;
      const short = gapShortfall(r, minGap);
      if (short) {
        skipped.push({ index: k, reason: short });
        yield { done: k + 1, total: pairs.length };
        continue;
      }
      const residLast = [];
      for (let l = 0; l < nLayer; l++) residLast.push(r.resid[l * T + T - 1]);
      per.push({ index: k, T, answers: p.answers.slice(), ldClean: r.ldClean, ldCorrupt: r.ldCorrupt, heads: Array.from(r.heads), residLast });
    } catch (e) {
      if (!(e instanceof AttnlabError) || e.code !== 'EINVAL') throw e;
      skipped.push({ index: k, reason: e.message });
    }
    yield { done: k + 1, total: pairs.length };
  }
  const stat = { nBoot, level, seed };
  return { n: per.length, skipped, minGap, nLayer, nHead, seed, nBoot, level,
           heads: intervalsOf(w, per.map((p) => p.heads), nLayer * nHead, stat),
           residLast: intervalsOf(w, per.map((p) => p.residLast), nLayer, stat),
           ldClean: bootstrapMean(w, per.map((p) => p.ldClean), stat),
           ldCorrupt: bootstrapMean(w, per.map((p) => p.ldCorrupt), stat),
           perInput: per };
}
