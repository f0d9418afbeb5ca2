// analysis.test.js — web/src/analysis.js mirrors c/src/analysis.c: on random
// and real attention matrices of odd sizes it returns the C's numbers (called
// through the wasm): bit for bit for dagScore, nullDagScore, asymmetry,
// headAverage and outerProduct; within an ulp for entropy and the soft
// displayDo (libm log/exp). Plus the reference values the chapter quotes.

import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { dagScore, nullDagScore, asymmetry, headAverage, outerProduct, entropy, displayDo, loadModel } from '../../web/src/index.js';
import { WASM_PATH } from './helpers/builds.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let w;
let real; // attentions of the tiny model on the chapter sentence, (3, 4, 19, 19)
beforeAll(async () => {
  w = await instantiateAttnlab(readFileSync(WASM_PATH));
  const m = await loadModel(join(ROOT, 'tests/fixtures/tiny'));
  real = m.run('Because the storm intensified , the ship finally sank .', { mask: ['causal', 'full', 'window:3'] });
  m.dispose();
});

function rand(n, seed, { rows = 0, zeros = false } = {}) {
  const a = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    a[i] = zeros && s % 5 === 0 ? 0 : s / 2 ** 32;
  }
  if (rows) for (let r = 0; r < n / rows; r++) { // rows that sum to 1, like attention
    const row = a.subarray(r * rows, (r + 1) * rows);
    const z = row.reduce((x, y) => x + y, 0) || 1;
    for (let j = 0; j < rows; j++) row[j] /= z;
  }
  return a;
}

const SIZES = [1, 2, 3, 7, 10, 19, 33];
const ulps = (a, b) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-30);

describe('the JS mirror gives the C numbers', () => {
  it.each(SIZES)('dagScore, asymmetry and entropy at T = %i', (T) => {
    for (const seed of [1, 2, 3]) {
      const A = rand(T * T, seed * 97 + T, { rows: T, zeros: seed === 3 });
      expect(dagScore(A)).toBe(w.dagScore(A, T));
      expect(Array.from(asymmetry(A))).toEqual(Array.from(w.asymmetry(A, T)));
      expect(ulps(entropy(A), w.attentionEntropy(A, T))).toBeLessThan(1e-12);
    }
  });

  it.each(SIZES)('nullDagScore(%i) under each mask', (T) => {
    expect(nullDagScore(T)).toBe(w.nullDagScore(T));
    expect(nullDagScore(T, 'causal')).toBe(w.maskNullDagScore(0, 0, T));
    expect(nullDagScore(T, 'full')).toBe(w.maskNullDagScore(1, 0, T));
    for (const W of [1, 2, 3, 7, T, T + 5])
      expect(ulps(nullDagScore(T, `window:${W}`), w.maskNullDagScore(2, W, T))).toBeLessThan(1e-15);
  });

  it.each([[1, 5], [4, 19], [12, 10], [3, 33]])('headAverage of %i heads at T = %i', (NH, T) => {
    const att = rand(NH * T * T, NH * 31 + T, { rows: T });
    expect(Array.from(headAverage(att, NH))).toEqual(Array.from(w.headAverage(att, NH, T)));
  });

  it.each([1, 8, 64, 65])('outerProduct at HS = %i', (HS) => {
    const q = rand(HS, HS).map((x) => 4 * x - 2), k = rand(HS, HS + 1).map((x) => 3 * x - 1);
    const js = outerProduct(q, k), c = w.outerProduct(q, k, HS);
    expect(Array.from(js.matrix)).toEqual(Array.from(c.out));
    expect(js.trace).toBe(c.trace);
  });

  it.each(SIZES)('displayDo hard and soft at T = %i', (T) => {
    const A = rand(T * T, T + 5, { rows: T });
    for (const [row, col] of [[0, 0], [T - 1, 0], [Math.floor(T / 2), T - 1]]) {
      expect(Array.from(displayDo(A, { kind: 'hard', row, col }))).toEqual(Array.from(w.displayDo(A, T, row, col, true)));
      for (const lambda of [3, -2, 0.1]) {
        const js = displayDo(A, { kind: 'soft', row, col, lambda });
        const c = w.displayDo(A, T, row, col, false, lambda);
        for (let i = 0; i < T * T; i++) expect(Math.abs(js[i] - c[i])).toBeLessThanOrEqual(2 ** -23 * Math.max(c[i], 1e-30) + 1e-12);
      }
    }
  });

  it('on real attentions of every layer and head', () => {
    const T = real.T;
    for (let l = 0; l < 3; l++) {
      for (let h = 0; h < 4; h++) {
        const A = real.attention(l, h);
        expect(dagScore(A)).toBe(w.dagScore(A, T));
        expect(dagScore(A)).toBe(real.dagScores[l][h]);
        expect(ulps(entropy(A), w.attentionEntropy(A, T))).toBeLessThan(1e-12);
      }
      const layer = real.attentions.subarray(l * 4 * T * T, (l + 1) * 4 * T * T);
      expect(Array.from(headAverage(layer, 4))).toEqual(Array.from(real.headAverage(l)));
    }
  });
});

describe('the contract values', () => {
  it('the null DAG score of T = 10 is 0.7071; of T = 1 and T = 0 it is 0', () => {
    expect(nullDagScore(10)).toBeCloseTo(0.70710, 5);
    expect(nullDagScore(1)).toBe(0);
    expect(nullDagScore(0)).toBe(0);
  });

  it('the null follows the mask: (T−1)/(2T) without one, 0.5833 for a window of 3 over 10 tokens', () => {
    expect(nullDagScore(10, 'full')).toBe(0.45);
    expect(nullDagScore(10, { mode: 'full' })).toBe(0.45);
    // rows 0, 1 and 2..9 see 1, 2 and 3 keys: (0 + 1/2 + 8·2/3)/10
    expect(nullDagScore(10, 'window:3')).toBeCloseTo((0 + 1 / 2 + 8 * (2 / 3)) / 10, 15);
    expect(nullDagScore(10, 'window:3')).toBeCloseTo(0.58333, 5);
    expect(nullDagScore(10, { mode: 'window', window: 3 })).toBe(nullDagScore(10, 'window:3'));
    expect(nullDagScore(10, 'window:1')).toBe(0);
    expect(nullDagScore(10, 'window:10')).toBeCloseTo(nullDagScore(10), 15);
    // each is the DAG score of the uniform matrix its mask allows
    for (const [mask, lo, hi] of [['full', () => 0, () => 10], ['window:4', (i) => Math.max(0, i - 3), (i) => i + 1]]) {
      const A = new Float64Array(100);
      for (let i = 0; i < 10; i++) for (let j = lo(i); j < hi(i); j++) A[i * 10 + j] = 1 / (hi(i) - lo(i));
      expect(dagScore(A)).toBeCloseTo(nullDagScore(10, mask), 6);
    }
  });

  it('a strictly lower-triangular matrix scores 1, an upper one 0, the identity 0, zeros 0', () => {
    expect(dagScore([0, 0, 1, 0])).toBe(1);
    expect(dagScore([0, 1, 0, 0])).toBe(0);
    expect(dagScore([1, 0, 0, 1])).toBe(0);
    expect(dagScore(new Float32Array(9))).toBe(0);
    expect(dagScore([])).toBe(0);
  });

  it('A − Aᵀ is antisymmetric; the outer product has trace q·k; uniform rows have entropy log(T)', () => {
    const A = rand(49, 3, { rows: 7 });
    const D = asymmetry(A);
    for (let i = 0; i < 7; i++) for (let j = 0; j < 7; j++) expect(D[i * 7 + j] + D[j * 7 + i]).toBe(0);
    const { matrix, trace } = outerProduct([1, 2, 3], [4, 5, 6]);
    expect(Array.from(matrix)).toEqual([4, 5, 6, 8, 10, 12, 12, 15, 18]);
    expect(trace).toBe(32);
    expect(entropy(new Float32Array(16).fill(0.25))).toBeCloseTo(Math.log(4), 6);
  });

  it("displayDo: hard makes the row one-hot; soft with λ multiplies the cell's odds by e^λ; other rows and the input are unchanged", () => {
    const A = Float32Array.from([1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5]);
    const copy = A.slice();
    const h = displayDo(A, { kind: 'hard', row: 2, col: 0 });
    expect(Array.from(h.subarray(6))).toEqual([1, 0, 0]);
    expect(Array.from(h.subarray(0, 6))).toEqual(Array.from(A.subarray(0, 6)));
    const s = displayDo(A, { kind: 'soft', row: 2, col: 0, lambda: 2 });
    expect((s[6] / s[7]) / (0.2 / 0.3)).toBeCloseTo(Math.exp(2), 4);
    expect(s[6] + s[7] + s[8]).toBeCloseTo(1, 6);
    expect(A).toEqual(copy);
  });

  it('accepts plain arrays and Float64Arrays, rounding to float32 as the C does', () => {
    const A = [0.1, 0.2, 0.3, 0.4];
    expect(dagScore(A)).toBe(w.dagScore(Float32Array.from(A), 2));
    expect(dagScore(Float64Array.from(A))).toBe(dagScore(Float32Array.from(A)));
  });
});
