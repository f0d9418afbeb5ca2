// evidence.js — does attention explain? The interventional measurements of
// docs/evidence.md over the C engine (c/src/evidence.c): each effect is a real
// forward pass with an intervention inside it, set beside the reading of
// attention that claims to stand for it, with rank correlations between them.
//
// Called by Model (model.js) with its wasm instance and handle; everything
// returned is a copy in JS memory. Long grids run in parts: onProgress({done,
// total}) after each part, and an aborted signal stops between parts
// (AttnlabError 'EABORT').

import { AttnlabError } from './core/errors.js';
import { ABLATION_MODES } from './core/abi.js';

/** The ways to remove a head (ALAB_ABLATE_ZERO, _MEAN, _RESAMPLE). */
export { ABLATION_MODES };

/**
 * Clean / corrupted pairs of equal token length for activation patching, in
 * the order the page and scripts/evidence-numbers.mjs try them: the first pair
 * whose two runs predict different next tokens is the default example (so the
 * example follows the model, not one set of weights).
 */
export const PATCHING_PAIRS = Object.freeze([
  ['They said that they', 'He said that he'],
  ['The boys ran to their', 'The girl ran to her'],
  ['The church was built in the', 'The school was built in the'],
  ['When Mary and John went to the store, John gave a drink to', 'When Mary and John went to the store, Mary gave a drink to'],
]);

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
    w.check(w.fn.alab_spearman(out, pa, pb, n));
    const spearman = f64(w, out);
    w.check(w.fn.alab_kendall_tau_b(out, pa, pb, n));
    const kendall = f64(w, out);
    let topKOverlap = null;
    if (k !== undefined && n > 0) {
      w.check(w.fn.alab_top_k_overlap(out, pa, pb, n, k));
      topKOverlap = f64(w, out);
    }
    return { spearman: nanToNull(spearman), kendall: nanToNull(kendall), topKOverlap: nanToNull(topKOverlap) };
  });
}

const nanToNull = (x) => (x === null || Number.isNaN(x) ? null : x);

/**
 * Run a stepwise computation (a generator that yields {done, total} after each
 * part and returns the result) to its end: onProgress after each part, an
 * aborted signal stops it between parts (EABORT; its memory is freed).
 */
export function runSteps(gen, { onProgress, signal } = {}) {
  try {
    for (;;) {
      checkSignal(signal);
      const { value, done } = gen.next();
      if (done) return value;
      if (onProgress) onProgress(value);
    }
  } finally {
    gen.return(undefined); // frees the wasm memory of an abandoned computation
  }
}

/** The same with a pause between parts, so that a worker can read a cancel message. */
export async function runStepsAsync(gen, { onProgress, cancelled }) {
  try {
    for (;;) {
      if (cancelled()) throw new AttnlabError('EABORT', 'the computation was cancelled');
      const { value, done } = gen.next();
      if (done) return value;
      if (onProgress) onProgress(value);
      await new Promise((r) => setTimeout(r, 0));
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
export function* edgeKnockoutSteps(w, h, ids, { layer, head, topK, rowsPerPart = 4 }) {
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
      w.check(w.fn.alab_edge_knockout(pA, pE, pL, h, pIds, T, layer, hd, r0, r1));
      if (r1 < T) yield { done: (r1 * (r1 + 1)) / 2, total: (T * (T + 1)) / 2 };
    }
    out = { A: w.readF32(pA, TT), E: w.readF32(pE, TT), ELast: w.readF32(pL, TT) };
  } finally {
    mem.free();
  }
  const a = [], e = [], el = [];
  for (let i = 0; i < T; i++)
    for (let j = 0; j <= i; j++) {
      a.push(out.A[i * T + j]);
      e.push(out.E[i * T + j]);
      el.push(out.ELast[i * T + j]);
    }
  const k = topK ?? T;
  const all = rankStats(w, a, e, k);
  const last = rankStats(w, a, el);
  const rows = [], rowsKendall = [];
  for (let i = 0; i < T; i++) {
    const ra = Array.from(out.A.subarray(i * T, i * T + i + 1)), re = Array.from(out.E.subarray(i * T, i * T + i + 1));
    const st = rankStats(w, ra, re);
    rows.push(st.spearman);
    rowsKendall.push(st.kendall);
  }
  const defined = rows.filter((x) => x !== null);
  return {
    layer, head, T, ...out, pairs: a.length,
    spearman: all.spearman, kendall: all.kendall, topK: Math.min(k, a.length), topKOverlap: all.topKOverlap,
    spearmanLast: last.spearman, kendallLast: last.kendall,
    rows, rowsKendall, meanRowSpearman: defined.length ? defined.reduce((s, x) => s + x, 0) / defined.length : null,
  };
}

/**
 * Token knockout effects at the last position beside three readings of the
 * plain run's attention: the last layer's head average, rollout and flow.
 */
export function* tokenKnockoutSteps(w, h, ids, { nLayer, nHead }) {
  const T = ids.length;
  const mem = arena(w);
  try {
    const pIds = withIds(w, ids, mem.alloc);
    const pEff = mem.alloc(4 * T);
    for (let j0 = 0; j0 < T; j0 += 8) {
      const j1 = Math.min(T, j0 + 8);
      w.check(w.fn.alab_token_knockout(pEff, h, pIds, T, j0, j1));
      if (j1 < T) yield { done: j1, total: T };
    }
    const effect = w.readF32(pEff, T);
    w.forward(h, ids);
    const att = w.fn.alab_result_attention(h);
    const pR = mem.alloc(4 * T * T), pF = mem.alloc(4 * T);
    w.check(w.fn.alab_attention_rollout(pR, att, nLayer, nHead, T));
    w.check(w.fn.alab_attention_flow(pF, att, nLayer, nHead, T, T - 1));
    const R = w.readF32(pR, T * T);
    const A = w.readF32(att + 4 * (nLayer - 1) * nHead * T * T, nHead * T * T);
    const last = new Float32Array(T);
    for (let hh = 0; hh < nHead; hh++) for (let j = 0; j < T; j++) last[j] += A[hh * T * T + (T - 1) * T + j] / nHead;
    const readings = { lastLayer: last, rollout: R.slice((T - 1) * T), flow: w.readF32(pF, T) };
    const stats = {};
    for (const [name, v] of Object.entries(readings)) stats[name] = rankStats(w, Array.from(v), Array.from(effect));
    return { T, effect, readings, spearman: Object.fromEntries(Object.entries(stats).map(([k, x]) => [k, x.spearman])),
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
    w.check(w.fn.alab_capture_head_outputs(p, h, pIds, ids.length));
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
export function* ablationSemanticsSteps(w, h, ids, { reference, resample, refOut, resOut, nLayer, nHead }) {
  const T = ids.length, LH = nLayer * nHead;
  const mem = arena(w);
  try {
    const pIds = withIds(w, ids, mem.alloc);
    const refs = { zero: [0, 0], mean: [copyIn(w, refOut, mem.alloc), reference.length],
                   resample: [copyIn(w, resOut, mem.alloc), resample.length] };
    const pD = mem.alloc(4 * LH), pB = mem.alloc(8), pL = mem.alloc(4 * (LH + 1)), pO = mem.alloc(4 * LH);
    const out = { T, nLayer, nHead, referenceT: reference.length, resampleT: resample.length };
    let step = 0;
    for (const [name, mode] of Object.entries(ABLATION_MODES)) {
      const [ref, tRef] = refs[name];
      w.check(w.fn.alab_head_importance_mode(pD, pB, h, pIds, T, mode, ref, tRef));
      const delta = w.readF32(pD, LH);
      w.check(w.fn.alab_pruning_curve_mode(pL, pO, h, pIds, T, pD, mode, ref, tRef));
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

/** Activation patching grids (residual L x T, heads L x NH), normalised logit difference. */
export function activationPatching(w, h, clean, corrupt, { answers, nLayer, nHead }) {
  const T = clean.length;
  if (corrupt.length !== T)
    throw new AttnlabError('EINVAL', `the clean input has ${T} tokens and the corrupted one ${corrupt.length}: patching needs equal lengths`);
  return w.scoped((alloc) => {
    const pc = withIds(w, clean, alloc), pd = withIds(w, corrupt, alloc);
    const pR = alloc(4 * nLayer * T), pH = alloc(4 * nLayer * nHead), pLc = alloc(8), pLd = alloc(8);
    w.check(w.fn.alab_activation_patching(pR, pH, pLc, pLd, h, pc, pd, T, answers[0], answers[1]));
    return { T, nLayer, nHead, answers: answers.slice(), ldClean: f64(w, pLc), ldCorrupt: f64(w, pLd),
             resid: w.readF32(pR, nLayer * T), heads: w.readF32(pH, nLayer * nHead) };
  });
}
