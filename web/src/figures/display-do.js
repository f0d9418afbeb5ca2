// display-do.js — the chapter's do-operator applied to a drawn attention matrix
// (Fig. 4), exactly as the chapter's script computes its do_intervene / soft_do_intervene:
//   hard: row := one-hot(col)
//   soft: l = log(row + 1e-9); l[col] += λ; l −= max(l); row := exp(l) / Σ exp(l)
// This is a display-level operation on a T×T matrix (usually the head average);
// the in-model do of the C core is a different thing (Model#run's interventions).
// The arithmetic is analysis.js's displayDo (which mirrors c/src/analysis.c), so the
// figure and the API give the same numbers; these wrappers add the figure's input
// checks (T×T shape, finite, non-negative weights for the soft do). Both are pure:
// they return a new Float32Array T*T and leave every row but `row` unchanged.

import { displayDo } from '../analysis.js';
import { asMatrix } from './checks.js';
import { checkIndex } from '../analysis.js';
import { AttnlabError } from '../core/errors.js';

/** Hard do: row `row` becomes one-hot at `col` (Pearl's surgery: cut every other in-edge). */
export function hardDo(A, T, row, col) {
  const M = asMatrix(A, T);
  checkIndex('row', row, 0, T - 1);
  checkIndex('col', col, 0, T - 1);
  return displayDo(M, { kind: 'hard', row, col });
}

/** Soft do: add λ to the log-weight of (row, col) and renormalise the row. */
export function softDo(A, T, row, col, lambda) {
  const M = asMatrix(A, T);
  checkIndex('row', row, 0, T - 1);
  checkIndex('col', col, 0, T - 1);
  if (typeof lambda !== 'number' || !Number.isFinite(lambda)) {
    throw new AttnlabError('ENAN', `lambda must be a finite number, got ${lambda}`);
  }
  for (let j = 0; j < T; j++) {
    if (M[row * T + j] < 0) throw new AttnlabError('ERANGE', `soft do needs non-negative weights; A[${row}][${j}] = ${M[row * T + j]}`);
  }
  return displayDo(M, { kind: 'soft', row, col, lambda });
}
