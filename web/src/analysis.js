// analysis.js — what the chapter reads off an attention matrix, as pure
// functions on plain arrays: the DAG score and its null, the asymmetry A − Aᵀ,
// the head average, the outer product q ⊗ k, the row entropy, and the
// chapter's display-level do on a drawn matrix.
//
// These mirror c/src/analysis.c operation for operation (same loop order,
// double accumulators, float32 outputs), so they return the same numbers as
// the C without needing the WebAssembly module: figures and widgets can call
// them synchronously on data that came from a worker. Float arithmetic rounds
// identically (a double +, −, × of two float32 values rounded to float32 is
// the float32 operation), so dagScore, nullDagScore, asymmetry, headAverage
// and outerProduct agree with the C bit for bit; entropy and the soft
// displayDo call log/exp, where two libms may differ in the last bit (tested
// against the C to 1e-12 relative). tests/js/analysis.test.js checks all of
// them against the C through the wasm.
//
// Matrices are row-major T×T arrays (row = query = effect, column = key =
// cause), as Float32Array, Float64Array or Array of numbers; T is inferred
// from the length. Results are new arrays (never views of the input).

import { AttnlabError } from './core/errors.js';

// ---------------------------------------------------------------------------
// Argument checks (shared with options.js and the modules of the model)
// ---------------------------------------------------------------------------

/** Throw ETYPE unless v is an Array or a typed array of numbers; return it. */
export function checkNumbers(name, v) {
  if (!(Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView))))
    throw new AttnlabError('ETYPE', `${name} must be an array or a typed array of numbers`);
  if (typeof v[0] === 'bigint') throw new AttnlabError('ETYPE', `${name} must hold numbers, not BigInts`);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== 'number') throw new AttnlabError('ETYPE', `${name}[${i}] must be a number, got ${typeof x}`);
    if (!Number.isFinite(x)) throw new AttnlabError('ENAN', `${name}[${i}] is ${x}; a finite number is needed`);
  }
  return v;
}

/** Throw unless v is an integer in [lo, hi]; ETYPE / ENAN / EINVAL / ERANGE. */
export function checkIndex(name, v, lo, hi) {
  if (typeof v !== 'number') throw new AttnlabError('ETYPE', `${name} must be a number, got ${typeof v}`);
  if (!Number.isFinite(v)) throw new AttnlabError('ENAN', `${name} is ${v}; a finite integer is needed`);
  if (!Number.isInteger(v)) throw new AttnlabError('EINVAL', `${name} must be an integer, got ${v}`);
  if (v < lo || v > hi) throw new AttnlabError('ERANGE', `${name} = ${v} is out of range [${lo}, ${hi}]`);
  return v;
}

/** Throw unless v is a finite number; ETYPE / ENAN. */
export function checkFinite(name, v) {
  if (typeof v !== 'number') throw new AttnlabError('ETYPE', `${name} must be a number, got ${typeof v}`);
  if (!Number.isFinite(v)) throw new AttnlabError('ENAN', `${name} is ${v}; a finite number is needed`);
  return v;
}

// T of a square matrix given as a flat array; EINVAL if the length is not a square.
function sideOf(name, A) {
  checkNumbers(name, A);
  const T = Math.round(Math.sqrt(A.length));
  if (T * T !== A.length)
    throw new AttnlabError('EINVAL', `${name} must be a flat T×T matrix; its length ${A.length} is not a square`);
  return T;
}

// ---------------------------------------------------------------------------
// The functions (c/src/analysis.c, in its order)
// ---------------------------------------------------------------------------

/**
 * DAG score: the sum of entries strictly below the diagonal over the sum of
 * all entries (0 for an all-zero or empty matrix).
 * @param {ArrayLike<number>} A  T×T, row = query
 */
export function dagScore(A) {
  const T = sideOf('A', A);
  let below = 0, total = 0;
  for (let i = 0; i < T; i++)
    for (let j = 0; j < T; j++) {
      const a = Math.fround(A[i * T + j]);
      total += a;
      if (j < i) below += a;
    }
  return total > 0 ? below / total : 0;
}

/**
 * The null DAG score: the DAG score of uniform attention over the keys a mask
 * lets each row see (c/src/analysis.c alab_mask_null_dag_score).
 *   causal (default): row i sees i+1 keys, i of them before it:
 *                     (1/T) Σ_{i<T} i/(i+1)  (0.7071 for T = 10);
 *   full:             row i sees all T keys, i of them below: (T−1)/(2T) (0.45);
 *   window:W:         row i sees n = min(i+1, W) keys: (1/T) Σ (n−1)/n (0.5833 for W = 3, T = 10).
 * A DAG score reads as "more forward than uniform" only above the null of the
 * mask and length it was computed under.
 * @param {number} T  a non-negative integer (0 gives 0)
 * @param {'causal'|'full'|string|{mode: string, window?: number}} [mask='causal']  'window:W' or {mode: 'window', window: W}
 */
export function nullDagScore(T, mask) {
  checkIndex('T', T, 0, 2 ** 31 - 1);
  const { mode, window } = maskOf(mask);
  if (T === 0) return 0;
  if (mode === 'full') return (T - 1) / (2 * T);
  let s = 0;
  if (mode === 'causal') {
    for (let i = 0; i < T; i++) s += i / (i + 1);
  } else {
    for (let i = 0; i < T; i++) { const n = Math.min(i + 1, window); s += (n - 1) / n; }
  }
  return s / T;
}

// {mode, window} of a mask argument: 'causal', 'full', 'window:W' or {mode, window}.
export function maskOf(mask) {
  if (mask === undefined || mask === null) return { mode: 'causal', window: 0 };
  let mode, window = 0;
  if (typeof mask === 'string') {
    const m = /^window:\s*(-?\d+)\s*$/.exec(mask);
    if (m) { mode = 'window'; window = Number(m[1]); } else mode = mask;
  } else if (typeof mask === 'object' && !Array.isArray(mask)) {
    mode = mask.mode;
    window = mask.window;
  } else {
    throw new AttnlabError('ETYPE', "mask must be 'causal', 'full', 'window:W' or {mode, window}");
  }
  if (mode === 'causal' || mode === 'full') return { mode, window: 0 };
  if (mode !== 'window') throw new AttnlabError('EINVAL', `unknown mask '${typeof mask === 'string' ? mask : mode}' (causal, full, window:W)`);
  checkIndex('mask window', window, 1, 2 ** 31 - 1);
  return { mode, window };
}

/** A − Aᵀ as a new Float32Array (T×T); out[i][j] = A[i][j] − A[j][i]. */
export function asymmetry(A) {
  const T = sideOf('A', A);
  const out = new Float32Array(T * T);
  for (let i = 0; i < T; i++)
    for (let j = 0; j < T; j++) out[i * T + j] = Math.fround(A[i * T + j]) - Math.fround(A[j * T + i]);
  return out;
}

/**
 * The mean over heads of att (NH, T, T): a new Float32Array (T×T).
 * @param {ArrayLike<number>} att  NH·T·T values, head-major
 * @param {number} nHead  NH
 */
export function headAverage(att, nHead) {
  checkNumbers('att', att);
  checkIndex('nHead', nHead, 1, 2 ** 31 - 1);
  const TT = att.length / nHead;
  const T = Math.round(Math.sqrt(TT));
  if (!Number.isInteger(TT) || T * T !== TT)
    throw new AttnlabError('EINVAL', `att must hold nHead·T·T values; ${att.length} is not ${nHead}·T·T`);
  const out = new Float32Array(TT);
  for (let e = 0; e < TT; e++) {
    let s = 0;
    for (let h = 0; h < nHead; h++) s += Math.fround(att[h * TT + e]);
    out[e] = s / nHead;
  }
  return out;
}

/**
 * The outer product q ⊗ k of one query and one key vector (each HS values):
 * matrix[a·HS + b] = q[a]·k[b] (Float32Array HS×HS), and its trace q·k (the
 * attention score before the 1/√HS scale).
 * @returns {{matrix: Float32Array, trace: number}}
 */
export function outerProduct(q, k) {
  checkNumbers('q', q);
  checkNumbers('k', k);
  if (q.length !== k.length)
    throw new AttnlabError('EINVAL', `q and k must have the same length (${q.length} vs ${k.length})`);
  const HS = q.length;
  const matrix = new Float32Array(HS * HS);
  let trace = 0;
  for (let a = 0; a < HS; a++) {
    const qa = Math.fround(q[a]);
    for (let b = 0; b < HS; b++) matrix[a * HS + b] = qa * Math.fround(k[b]);
    trace += qa * Math.fround(k[a]);
  }
  return { matrix, trace };
}

/** The mean over rows of each row's Shannon entropy in nats (0 for an empty matrix). */
export function entropy(A) {
  const T = sideOf('A', A);
  if (T === 0) return 0;
  let total = 0;
  for (let i = 0; i < T; i++) {
    let h = 0;
    for (let j = 0; j < T; j++) {
      const p = Math.fround(A[i * T + j]);
      if (p > 0) h -= p * Math.log(p);
    }
    total += h;
  }
  return total / T;
}

/**
 * The chapter's do-operation applied to a drawn matrix (Fig. 4), on a copy:
 *   hard: row := one-hot(col);
 *   soft: l = log(row + 1e-9); l[col] += λ; l −= max(l); row := exp(l) / Σ exp(l).
 * (This acts on the picture; the do-operations inside the network are
 * Model#run's `interventions`.) λ is used as a float32, as in the C.
 * @param {ArrayLike<number>} A  T×T
 * @param {{kind: 'hard'|'soft', row: number, col: number, lambda?: number}} op
 * @returns {Float32Array} a new T×T matrix
 */
export function displayDo(A, op) {
  const T = sideOf('A', A);
  if (op === null || typeof op !== 'object')
    throw new AttnlabError('ETYPE', 'displayDo needs {kind, row, col, lambda}');
  const { kind, row, col, lambda = 0 } = op;
  if (typeof kind !== 'string') throw new AttnlabError('ETYPE', `kind must be 'hard' or 'soft', got ${typeof kind}`);
  if (kind !== 'hard' && kind !== 'soft') throw new AttnlabError('EINVAL', `kind must be 'hard' or 'soft', got '${kind}'`);
  if (T === 0) throw new AttnlabError('EEMPTY', 'displayDo: empty matrix');
  checkIndex('row', row, 0, T - 1);
  checkIndex('col', col, 0, T - 1);
  const lam = Math.fround(kind === 'soft' ? checkFinite('lambda', lambda) : 0);
  const out = Float32Array.from(A);
  const r = out.subarray(row * T, (row + 1) * T);
  if (kind === 'hard') {
    r.fill(0);
    r[col] = 1;
    return out;
  }
  const l = (j) => Math.log(r[j] + 1e-9) + (j === col ? lam : 0);
  let mx = -Infinity, sum = 0;
  for (let j = 0; j < T; j++) { const v = l(j); if (v > mx) mx = v; }
  for (let j = 0; j < T; j++) sum += Math.exp(l(j) - mx);
  const e = new Float64Array(T);
  for (let j = 0; j < T; j++) e[j] = Math.exp(l(j) - mx) / sum;
  r.set(e);
  return out;
}
