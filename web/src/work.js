// work.js — the work budget of the evidence and circuit measures (docs/security.md, "Evidence"): each measure
// estimates, from its arguments and before its first forward pass, the multiply-adds it will do, and is refused
// with ELIMIT and the estimate when that is over options.budget (default DEFAULT_BUDGET). The same model of the
// work as the CLI's (c/cli/measures.c, kind_work): a forward pass is its rows through its layers' products and
// attention plus the LM-head rows it reads; an edge knockout recomputes rows i.. from the knocked-out layer up
// (row i alone in the last layer); a point of one resampled correlation counts STAT_MACS, a draw of the
// composition null 32·C·HS·(HS + 200). Calibrated on the built-in model to within about 2× of the time
// (docs/BENCHMARKS.md, "Work budgets").

import { AttnlabError } from './core/errors.js';

/** The default budget: 2·10^12 multiply-adds, about two minutes on one core natively (wasm runs 3–5× slower). */
export const DEFAULT_BUDGET = 2e12;
const MAX_BUDGET = 1e30;
const STAT_MACS = 100;

/** options.budget checked: a number in [1, 1e30], or the default. */
export function budgetOf(where, v) {
  if (v === undefined) return DEFAULT_BUDGET;
  if (typeof v !== 'number') throw new AttnlabError('ETYPE', `${where}: options.budget must be a number of multiply-adds, not ${v === null ? 'null' : typeof v}`);
  if (!(v >= 1 && v <= MAX_BUDGET)) throw new AttnlabError('ERANGE', `${where}: options.budget must be in [1, 1e30] (multiply-adds), not ${v}`);
  return v;
}

/** ELIMIT when `estimate` is over `budget`; `what` says what it was estimated on. */
export function checkBudget(where, estimate, budget, what) {
  if (estimate <= budget) return estimate;
  throw new AttnlabError('ELIMIT', `${where} would do about ${estimate.toPrecision(2)} multiply-adds (estimated from its arguments before ` +
    `it starts, on ${what}), over the budget of ${budget.toPrecision(3)}; raise it with options.budget`);
}

/** The model's shape as the estimates read it. */
export function shapeOf(config) {
  const L = config.nLayer, NH = config.nHead, C = config.nEmbd, HS = config.headDim, V = config.vocabSize;
  const kv = config.nKvHead > 0 ? config.nKvHead : NH;
  return { L, NH, C, HS, V, LH: L * NH, lay: C * (NH + 2 * kv) * HS + NH * HS * C + 8 * C * C };
}

const rows = (s, n, layers, T) => n * layers * (s.lay + s.NH * s.HS * T);
const fwd = (s, T) => rows(s, T, s.L, T) + s.V * s.C;
const withLoss = (s, T) => fwd(s, T) + T * s.V * s.C; // a run whose loss reads every row's LM head

/** Edge knockouts of every pair of a T-token input in `layer` (alab_edge_knockout). */
export function edgeWork(s, T, layer) {
  const last = layer === s.L - 1;
  let e = fwd(s, T) + (T + 1) * s.V * s.C;
  for (let i = 0; i < T; i++) e += (i + 1) * (rows(s, last ? 1 : T - i, s.L - layer, T) + (last || i === T - 1 ? 1 : 2) * s.V * s.C);
  return e;
}

/** The noise floor of one input: a no-op knockout per row (layer -1: a whole run per row). */
function noiseWork(s, T, layer) {
  if (layer < 0) return T * fwd(s, T);
  const last = layer === s.L - 1;
  let e = fwd(s, T);
  for (let i = 0; i < T; i++) e += rows(s, last ? 1 : T - i, s.L - layer, T) + s.V * s.C;
  return e;
}

/** Each measure's estimate: (shape, lengths of its inputs or pairs, its arguments) → multiply-adds. */
export const WORK = Object.freeze({
  edgeKnockout: (s, [T], { layer }) => edgeWork(s, T, layer),
  tokenKnockout: (s, [T]) => (T + 3) * fwd(s, T) + s.L * s.NH * T * T * T,
  ablationSemantics: (s, [T], { refT, draws }) => fwd(s, refT) + (4 * (s.LH + 1) + draws * (2 * s.LH + 1) + 1) * withLoss(s, T),
  activationPatching: (s, [T]) => (4 + s.L * T + s.LH) * fwd(s, T),
  patternValuePatching: (s, [T]) => (4 + 6 * s.LH) * fwd(s, T),
  pathPatching: (s, [T], { receivers }) => (4 + s.LH) * fwd(s, T) + receivers * s.LH * rows(s, T, 1, T),
  directLogitAttribution: (s, [T]) => 2 * fwd(s, T) + s.LH * T * s.HS * s.C,
  componentTracing: (s, [T]) => (4 + 2 * s.L * T) * fwd(s, T),
  // a forward and a backward (about three forwards, docs/BENCHMARKS.md) for the input, the baseline and each step
  gradientReadings: (s, [T], { steps }) => (steps + 2) * 4 * fwd(s, T),
  compositionScores: (s, _, { nNull }) => (nNull + (s.L * (s.L - 1)) / 2 * s.NH * s.NH) * 32 * s.C * s.HS * (s.HS + 200),
  // over a set: the inputs' work, the noise floor of the first 10, the resampled correlations over all the
  // points (edge knockout: six summaries of four correlations each — the weights, the value-weighted reading,
  // four position controls — and the weights above the effect threshold; token knockout: twelve correlations —
  // four readings, the permuted baseline, three position controls, four readings above the threshold)
  edgeKnockoutSet: (s, Ts, { layer, resamples, noise }) => Ts.reduce((e, T, k) => e + edgeWork(s, T, layer) + fwd(s, T) +
    (k < noise ? noiseWork(s, T, layer) : 0) + 25 * resamples * ((T * (T + 1)) / 2) * STAT_MACS, 0),
  tokenKnockoutSet: (s, Ts, { resamples, noise }) => Ts.reduce((e, T, k) => e + WORK.tokenKnockout(s, [T]) +
    (k < noise ? noiseWork(s, T, -1) : 0) + 12 * resamples * T * STAT_MACS, 0),
  ablationSet: (s, Ts, { refT, draws }) => fwd(s, refT) + Ts.reduce((e, T) => e + (2 * (s.LH + 1) + draws * s.LH + 1) * withLoss(s, T), 0),
  patchingSet: (s, Ts) => Ts.reduce((e, T) => e + WORK.activationPatching(s, [T]), 0),
  patternValueSet: (s, Ts) => Ts.reduce((e, T) => e + WORK.patternValuePatching(s, [T]), 0),
  pathPatchingSet: (s, Ts, a) => Ts.reduce((e, T) => e + WORK.pathPatching(s, [T], a), 0),
  componentTracingSet: (s, Ts) => Ts.reduce((e, T) => e + WORK.componentTracing(s, [T]), 0),
  attributionSet: (s, Ts) => Ts.reduce((e, T) => e + WORK.directLogitAttribution(s, [T]), 0),
});

/**
 * Estimate measure `name`'s work on inputs of token lengths `Ts` with arguments `a` and check it against
 * options.budget (`budget`): ELIMIT over it. Returns the estimate.
 */
export function checkWork(name, config, Ts, a, budget) {
  const e = WORK[name](shapeOf(config), Ts, a);
  const what = Ts.length === 0 ? 'the weights alone' : Ts.length === 1 && !name.endsWith('Set') ? `${Ts[0]} tokens`
    : `${Ts.length} inputs, ${Ts.reduce((x, T) => x + T, 0)} tokens`;
  return checkBudget(name, e, budgetOf(name, budget), what);
}
