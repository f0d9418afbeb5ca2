// fig-findings.js — what each of the four figures found in this run, in one line, and what it cannot show
// (issue 38 item 3). The numbers are the ones the figure draws: each function takes that figure's arguments
// (ui/figure-args.js) and the chosen cell, so a line cannot contradict its figure. Pure: the page passes a
// translator (the strings are the page's, figFind* / figCannot* in i18n.js) and writes the lines.

import { softDo } from '../figures/display-do.js';
import { maskOf } from '../analysis.js';

/** The largest entry of row i of the T×T matrix A: {j, w} (the first one on ties; NaN entries skipped). */
export function rowPeak(A, T, i) {
  let j = -1, w = -Infinity;
  for (let c = 0; c < T; c++) {
    const v = A[i * T + c];
    if (Number.isFinite(v) && v > w) { w = v; j = c; }
  }
  return { j, w };
}

/** The number of keys row i may weigh under `mask` ('causal', 'full', 'window:W'). */
export function keysOf(i, T, mask) {
  const { mode, window } = maskOf(mask);
  return mode === 'full' ? T : mode === 'window' ? Math.min(i + 1, window) : i + 1;
}

/** 1-based rank of entry (i, j) in row i (1 = the largest), among finite entries. */
export function rankInRow(A, T, i, j) {
  const v = A[i * T + j];
  let r = 1;
  for (let c = 0; c < T; c++) if (c !== j && Number.isFinite(A[i * T + c]) && A[i * T + c] > v) r += 1;
  return r;
}

/** Fig. 1: row `row`'s heaviest key against the uniform share of its row; the mask's part in A − Aᵀ. */
export function fig1Finding(args, { row }, t) {
  const T = args.tokens.length, A = args.A;
  const { j, w } = rowPeak(A, T, row);
  const n = keysOf(row, T, args.mask);
  const d = { i: row, ti: args.tokens[row], j, tj: args.tokens[j], w, uniform: 1 / n, ratio: w * n, oneSided: args.mask !== 'full' };
  return { found: t('figFind1', d), cannot: t('figCannot1', d) };
}

/** Fig. 2: q_i · k_j (the trace of q_i ⊗ k_j) and the softmax weight of key j in row i, with its rank. */
export function fig2Finding(args, t) {
  const { q, k, i, j, attention: A, tokens } = args;
  const T = tokens.length, dk = q.length / T;
  let dot = 0;
  for (let c = 0; c < dk; c++) dot += q[i * dk + c] * k[j * dk + c];
  const d = { i, j, ti: tokens[i], tj: tokens[j], dot, p: A[i * T + j], rank: rankInRow(A, T, i, j), n: keysOf(i, T, args.mask) };
  return { found: t('figFind2', d), cannot: t('figCannot2', d) };
}

/** Fig. 3: the DAG score against uniform attention's under the same mask, and the heads' range. */
export function fig3Finding(args, t) {
  const s = args.overallDag, n0 = args.nullDagScore;
  const heads = Array.from(args.dagScores || []).filter(Number.isFinite);
  const d = { s, null: n0, lo: heads.length ? Math.min(...heads) : s, hi: heads.length ? Math.max(...heads) : s,
    above: s > n0, mask: args.mask || 'causal' };
  return { found: t('figFind3', d), cannot: t('figCannot3', d) };
}

/** Fig. 4: what the soft do (at λ) and the hard do make of the chosen weight, drawn on the picture only. */
export function fig4Finding(args, { kl = null } = {}, t) {
  const { A, row, col, lambda, tokens } = args;
  const T = tokens.length;
  const before = A[row * T + col];
  const soft = softDo(A, T, row, col, lambda)[row * T + col];
  const d = { i: row, j: col, ti: tokens[row], tj: tokens[col], before, soft, lambda, kl };
  return { found: t('figFind4', d), cannot: t('figCannot4', d) };
}
