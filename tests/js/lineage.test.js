// lineage.test.js — the lineage API (web/src/lineage.js) on the real wasm:
// classical Hopfield, modern Hopfield = attention, linear attention = prefix
// sums, the √d_k statistics, and the error codes of bad arguments.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { loadLineage, Lineage, GLYPH_SIDE, HOPFIELD_CAPACITY } from '../../web/src/index.js';
import { codeOf } from './helpers/errors.js';

let lab;
beforeAll(async () => { lab = await loadLineage(); });
afterAll(() => { lab.dispose(); });

function maxAbs(a, b) {
  let m = 0;
  for (let k = 0; k < a.length; k++) m = Math.max(m, Math.abs(a[k] - b[k]));
  return m;
}

describe('classical Hopfield', () => {
  it('draws ten distinct 10×10 ±1 glyphs', () => {
    expect(GLYPH_SIDE).toBe(10);
    const gs = Array.from({ length: 10 }, (_, g) => lab.glyph(g));
    for (const g of gs) {
      expect(g.length).toBe(100);
      expect(g.every((v) => v === 1 || v === -1)).toBe(true);
    }
    for (let a = 0; a < 10; a++) for (let b = a + 1; b < 10; b++) expect(lab.overlap(gs[a], gs[b])).toBeLessThan(0.9);
    expect(codeOf(() => lab.glyph(10))).toBe('ERANGE');
  });

  it('stores glyphs with Hebbian weights and retrieves one from 20 % corruption, the energy falling', () => {
    const store = [0, 1, 4].map((g) => lab.glyph(g));
    const W = lab.hebbian(store);
    expect(W.length).toBe(100 * 100);
    expect(W[0]).toBe(0);
    expect(W[1 * 100 + 2]).toBeCloseTo(W[2 * 100 + 1], 7);
    const noisy = lab.corrupt(store[2], 0.2, { seed: 3 });
    expect(lab.overlap(noisy, store[2])).toBeCloseTo(0.6, 10);
    const r = lab.hopfieldRun(W, noisy, { mode: 'async', seed: 5 });
    expect(r.converged).toBe(true);
    expect(lab.overlap(r.state, store[2])).toBe(1);
    expect(r.energies.length).toBe(r.steps + 1);
    for (let k = 1; k < r.energies.length; k++) expect(r.energies[k]).toBeLessThanOrEqual(r.energies[k - 1] + 1e-9);
    expect(r.energies[r.steps]).toBeCloseTo(lab.energy(W, store[2]), 9);
    // one step reports the flips and the new energy
    const s = lab.hopfieldStep(W, noisy, { mode: 'sync' });
    expect(s.flipped).toBeGreaterThan(0);
    expect(s.energy).toBeCloseTo(lab.energy(W, s.state), 9);
    // the seed makes corruption reproducible
    expect(maxAbs(lab.corrupt(store[0], 0.3, { seed: 9 }), lab.corrupt(store[0], 0.3, { seed: 9 }))).toBe(0);
    expect(maxAbs(lab.corrupt(store[0], 0.3, { seed: 9 }), lab.corrupt(store[0], 0.3, { seed: 10 }))).toBeGreaterThan(0);
  });

  it('loses its memories above ≈ 0.138 patterns per neuron', () => {
    expect(HOPFIELD_CAPACITY).toBe(0.138);
    const c = lab.hopfieldCapacity({ N: 120, loads: [0.04, 0.3], trials: 2, seed: 11 });
    expect(c.capacity).toBe(0.138);
    expect(c.success[0]).toBeGreaterThanOrEqual(0.99);
    expect(c.success[1]).toBeLessThan(0.2);
    expect(c.overlap[1]).toBeLessThan(c.overlap[0]);
  });
});

describe('modern Hopfield = attention', () => {
  const N = 7, d = 16;
  let X, xi;
  beforeAll(() => {
    const r = lab.randomQKV(N, d, d, { seed: 21 });
    X = r.K;
    xi = r.Q.slice(0, d);
  });

  it('one update with β = 1/√d equals single-query attention with K = V = X (1e-6)', () => {
    const beta = 1 / Math.sqrt(d);
    const up = lab.modernStep(X, xi, { beta });
    const att = lab.attention(xi, X, X);
    expect(maxAbs(up.state, att.out)).toBeLessThanOrEqual(1e-6);
    expect(maxAbs(up.weights, att.weights)).toBeLessThanOrEqual(1e-7);
    // and a plain JS softmax agrees
    const s = Array.from({ length: N }, (_, j) => beta * xi.reduce((a, v, k) => a + v * X[j * d + k], 0));
    const mx = Math.max(...s), z = s.reduce((a, v) => a + Math.exp(v - mx), 0);
    for (let c = 0; c < d; c++) {
      const o = s.reduce((a, v, j) => a + (Math.exp(v - mx) / z) * X[j * d + c], 0);
      expect(Math.abs(up.state[c] - o)).toBeLessThanOrEqual(1e-6);
    }
    expect(up.energyAfter).toBeLessThanOrEqual(up.energyBefore + 1e-9);
  });

  it('iterates to a fixed point with a falling energy; small β averages, large β retrieves', () => {
    const r = lab.modernRun(X, xi, { beta: 1, maxSteps: 200 });
    expect(r.converged).toBe(true);
    for (let k = 1; k < r.energies.length; k++) expect(r.energies[k]).toBeLessThanOrEqual(r.energies[k - 1] + 1e-6);
    const mean = new Float32Array(d);
    for (let i = 0; i < N; i++) for (let k = 0; k < d; k++) mean[k] += X[i * d + k] / N;
    expect(maxAbs(lab.modernStep(X, xi, { beta: 1e-4 }).state, mean)).toBeLessThan(1e-2);
    const near = X.slice(3 * d, 4 * d).map((v, k) => v + 0.05 * Math.sin(k));
    const big = lab.modernRun(X, near, { beta: 20 });
    expect(maxAbs(big.state, X.slice(3 * d, 4 * d))).toBeLessThan(1e-4);
    expect(big.weights[3]).toBeGreaterThan(0.999);
  });
});

describe('linear attention', () => {
  const T = 29, d = 8;
  it('causal prefix sums == recurrence == quadratic matrix with the same kernel, for each feature map', () => {
    const { Q, K, V } = lab.randomQKV(T, d, 5, { seed: 2 });
    for (const featureMap of ['elu', 'relu', 'favor']) {
      const o = { d, featureMap, m: 32, seed: 4 };
      const pre = lab.linearAttention(Q, K, V, { ...o, form: 'prefix' });
      const rnn = lab.linearAttention(Q, K, V, { ...o, form: 'rnn' });
      const quad = lab.linearAttention(Q, K, V, { ...o, form: 'quadratic' });
      expect(pre.length).toBe(T * 5);
      expect(maxAbs(pre, rnn)).toBe(0);
      const scale = Math.max(...quad.map(Math.abs));
      expect(maxAbs(pre, quad) / scale).toBeLessThan(1e-5);
      const full = lab.linearAttention(Q, K, V, { ...o, causal: false });
      expect(maxAbs(full.slice((T - 1) * 5), pre.slice((T - 1) * 5)) / scale).toBeLessThan(1e-5);
    }
  });

  it('FAVOR+ approaches softmax attention as m grows; elu+1 does not', () => {
    const errs = [4, 64, 1024].map((m) => lab.linearError({ m, seed: 8 }).error);
    expect(errs[1]).toBeLessThan(errs[0]);
    expect(errs[2]).toBeLessThan(errs[1]);
    expect(lab.linearError({ featureMap: 'elu' }).error).toBeGreaterThan(errs[2]);
    const f = lab.featureMap(new Float32Array([-1, 2]), { d: 2, featureMap: 'elu' });
    expect(f[0]).toBeCloseTo(Math.exp(-1), 6);
    expect(f[1]).toBe(3);
  });

  it('softmax attention grows like T² and linear attention like T', () => {
    const a = lab.timeAttention({ T: 256, d: 32, minMs: 20 });
    const b = lab.timeAttention({ T: 2048, d: 32, minMs: 20 });
    for (const r of [a, b]) expect(r.softmaxMs > 0 && r.linearMs > 0).toBe(true);
    expect(b.linearMs).toBeLessThan(b.softmaxMs);
    // 8× the tokens: softmax ~64× slower, linear ~8×; on a shared machine we
    // ask only that softmax grows ≥ 2.5× faster than linear, and ≥ 16× itself
    const gs = b.softmaxMs / a.softmaxMs, gl = b.linearMs / a.linearMs;
    expect(gs).toBeGreaterThan(16);
    expect(gs / gl).toBeGreaterThan(2.5);
  });
});

describe('√d_k', () => {
  it('var(q·k) ≈ d_k unscaled and ≈ 1 scaled; the scaled entropy stays put', () => {
    for (const dk of [4, 64]) {
      const s = lab.qkStats(20000, dk, { seed: 1 });
      expect(Math.abs(s.variance / dk - 1)).toBeLessThan(0.08);
      expect(Math.abs(s.scaledVariance - 1)).toBeLessThan(0.08);
    }
    const x = lab.qkSamples(1000, 16, { seed: 2 });
    expect(x.length).toBe(1000);
    const hs4 = lab.softmaxEntropy({ dk: 4 }), hs256 = lab.softmaxEntropy({ dk: 256 });
    const hr4 = lab.softmaxEntropy({ dk: 4, scaled: false }), hr256 = lab.softmaxEntropy({ dk: 256, scaled: false });
    expect(Math.abs(hs4 - hs256)).toBeLessThan(0.2);
    expect(hr256).toBeLessThan(hr4);
    expect(hs256).toBeLessThanOrEqual(Math.log(64));
  });
});

describe('errors', () => {
  it('bad arguments throw AttnlabError with stable codes', () => {
    const g = lab.glyph(0);
    const W = lab.hebbian([g]);
    expect(codeOf(() => lab.hebbian([[1, 0.5, -1]]))).toBe('EINVAL');            // C: not ±1
    expect(codeOf(() => lab.hebbian([[1, -1], [1, -1, 1]]))).toBe('ESHAPE');
    expect(codeOf(() => lab.energy(W, [1, -1]))).toBe('ESHAPE');
    expect(codeOf(() => lab.hopfieldRun(W, g, { mode: 'fast' }))).toBe('EINVAL');
    expect(codeOf(() => lab.hopfieldRun(W, g, { speed: 1 }))).toBe('EINVAL');
    expect(codeOf(() => lab.corrupt(g, NaN))).toBe('ENAN');
    expect(codeOf(() => lab.corrupt(g, 2))).toBe('ERANGE');                        // C
    expect(codeOf(() => lab.corrupt(g, 0.1, { seed: -1 }))).toBe('ERANGE');
    expect(codeOf(() => lab.modernStep([1, 2, 3], [1, 2]))).toBe('ESHAPE');
    expect(codeOf(() => lab.modernStep([1, 2], [1, 2], { beta: 0 }))).toBe('ERANGE'); // C
    expect(codeOf(() => lab.modernStep([1, 2], [1, Infinity]))).toBe('ENAN');
    expect(codeOf(() => lab.linearAttention([1, 2], [1, 2], [1, 2], { d: 2, form: 'rnn', causal: false }))).toBe('EINVAL'); // C
    expect(codeOf(() => lab.linearAttention([1, 2], [1, 2], [1, 2], { d: 2, featureMap: 'tanh' }))).toBe('EINVAL');
    expect(codeOf(() => lab.linearAttention('ab', [1, 2], [1, 2], { d: 2 }))).toBe('ETYPE');
    expect(codeOf(() => lab.qkStats(1, 4))).toBe('ERANGE');
    expect(codeOf(() => lab.hopfieldCapacity({ N: 0 }))).toBe('ERANGE');
  });

  it('a disposed Lineage refuses calls; an unknown load option is refused', async () => {
    const l2 = await loadLineage();
    expect(l2).toBeInstanceOf(Lineage);
    l2.dispose();
    expect(codeOf(() => l2.glyph(0))).toBe('EDISPOSED');
    await expect(loadLineage({ model: 1 })).rejects.toMatchObject({ code: 'EINVAL' });
  });
});

describe('lineage-demos.js: the demos the lineage page and the widgets share', () => {
  it('the modern Hopfield plane: a path from ξ to a fixed point the network keeps, weights a distribution', async () => {
    const { modernPlane, X2, XI0 } = await import('../../web/src/lineage-demos.js');
    for (const beta of [0.01, 1, 8]) {
      const r = modernPlane(lab, beta);
      expect(r.path[0]).toEqual(XI0);
      expect(r.patterns).toBe(X2);
      expect(r.weights.reduce((a, w) => a + w, 0)).toBeCloseTo(1, 5);
      const again = lab.modernStep(Float32Array.from(X2.flat()), Float32Array.from(r.fixed), { beta, d: 2 }).state;
      expect(Math.hypot(again[0] - r.fixed[0], again[1] - r.fixed[1])).toBeLessThan(1e-4);
      expect(r.move).toBeCloseTo(Math.hypot(r.oneStep[0] - XI0[0], r.oneStep[1] - XI0[1]), 6);
    }
    // small β pulls ξ towards the mean of all patterns, large β to one pattern
    const cold = modernPlane(lab, 0.01), hot = modernPlane(lab, 8);
    expect(Math.hypot(cold.fixed[0] - cold.mean[0], cold.fixed[1] - cold.mean[1])).toBeLessThan(0.15);
    expect(Math.max(...hot.weights)).toBeGreaterThan(0.95);
  });

  it('one Hopfield update with β = 1/√d is attention with K = V = X; the linear forms agree', async () => {
    const { equivalence2d, linearForms } = await import('../../web/src/lineage-demos.js');
    expect(equivalence2d(lab).diff).toBeLessThan(1e-6);
    for (const featureMap of ['elu', 'relu', 'favor']) {
      const f = linearForms(lab, { featureMap, m: 64 });
      expect(f.prefixDiff).toBeLessThan(1e-4);
      expect(f.rnnDiff).toBeLessThan(1e-4);
      expect(f.softmaxError).toBeGreaterThan(0);   // a different quantity from softmax attention
    }
  });
});

describe('the build: relaxed SIMD where the engine runs it (the rule of loadModel)', () => {
  it("'auto' picks the relaxed build exactly where WebAssembly.validate accepts relaxed_madd, and says why not", async () => {
    const { relaxedSimdSupported } = await import('../../web/src/core/backend.js');
    const can = relaxedSimdSupported();
    expect(lab.backend).toBe(can ? 'relaxed-simd' : 'simd128');
    expect(lab.backendNote === null).toBe(can);
    if (!can) expect(lab.backendNote).toMatch(/relaxed/);
    const plain = await loadLineage({ backend: 'simd128' });
    try {
      expect(plain.backend).toBe('simd128');
      expect(plain.backendNote).toBeNull();
    } finally {
      plain.dispose();
    }
    if (can) {
      // a SIMD128 build given by the caller without its relaxed twin: that one runs, and the note says so
      const { defaultWasmURL } = await import('../../web/src/sources.js');
      const moved = await loadLineage({ wasm: defaultWasmURL() });
      try {
        expect(moved.backend).toBe('simd128');
        expect(moved.backendNote).toMatch(/without options\.wasmRelaxed/);
      } finally {
        moved.dispose();
      }
    } else {
      await expect(loadLineage({ backend: 'relaxed-simd' })).rejects.toMatchObject({ code: 'EWASM' });
    }
    await expect(loadLineage({ backend: 'fma' })).rejects.toMatchObject({ code: 'EINVAL' });
    await expect(loadLineage({ backend: 3 })).rejects.toMatchObject({ code: 'ETYPE' });
  });

  it('the two builds agree on modern Hopfield, softmax attention and linear attention (float32 tolerance)', async () => {
    const plain = await loadLineage({ backend: 'simd128' });
    try {
      let s = 12345;
      const rnd = (n) => Float32Array.from({ length: n }, () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 - 0.5; });
      const T = 23, d = 16, dv = 12;
      const Q = rnd(T * d), K = rnd(T * d), V = rnd(T * dv);
      const a = lab.softmaxAttention(Q, K, V, { d, causal: true });
      const b = plain.softmaxAttention(Q, K, V, { d, causal: true });
      expect(a.length).toBe(T * dv);
      expect(maxAbs(a, b)).toBeLessThan(1e-5);
      const la = lab.linearAttention(Q, K, V, { d, featureMap: 'elu', causal: true, form: 'prefix' });
      const lb = plain.linearAttention(Q, K, V, { d, featureMap: 'elu', causal: true, form: 'prefix' });
      expect(la.length).toBe(T * dv);
      expect(maxAbs(la, lb)).toBeLessThan(1e-5);
      const X = rnd(8 * d), xi = rnd(d);
      const ma = lab.modernStep(X, xi, { d, beta: 2 }), mb = plain.modernStep(X, xi, { d, beta: 2 });
      expect(ma.state.length).toBe(d);
      expect(maxAbs(ma.state, mb.state)).toBeLessThan(1e-5);
      expect(Math.abs(ma.energyAfter - mb.energyAfter)).toBeLessThan(1e-5);
    } finally {
      plain.dispose();
    }
  });
});
