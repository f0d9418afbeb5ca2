// gradient-readings.test.js — Model#gradientReadings (web/src/measures.js over c/src/backward.c, the integrated
// gradients' path through alab_run_opts.embed_rows) against the float64 autograd reference
// tests/fixtures/gradient_readings_golden.json (tests/ref/readings_grad_ref.py) on GPT-2's tiny and the llama family
// fixture, on the main thread and through attnlab/worker; the completeness error shrinking with the steps; progress,
// cancel and nothing left on the heap; the refusals.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { modelInternals } from '../../web/src/model.js';
import * as workerApi from '../../web/src/worker-client.js';
import { codeOf } from './helpers/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const G = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/gradient_readings_golden.json'), 'utf8'));
// Tolerances (float32 engine against float64): each reading within REL of its value plus FLOOR of the reading's
// largest magnitude; the metric's values within REL relative + ABS; the completeness error, a difference of sums
// of T·C products, within CERR + REL of |value − baselineValue|.
const REL = 1e-4, FLOOR = 1e-4, ABS = 1e-5, CERR = 1e-4;
const READINGS = ['gradNorm', 'gradTimesInput', 'integratedGradients', 'attnGrad', 'attnGradSaliency'];

function worst(got, want) {
  expect(got.length).toBe(want.length);
  let top = 0, w = 0;
  for (const x of want) top = Math.max(top, Math.abs(x));
  for (let i = 0; i < want.length; i++) {
    const e = Math.abs(got[i] - want[i]) / (REL * Math.abs(want[i]) + FLOOR * top + 1e-12);
    if (!(e <= w)) w = e;
  }
  return w;
}

function optionsOf(c) {
  const o = { metric: c.metric, baseline: c.baseline, steps: c.steps };
  if (c.answers.length) o.answers = c.answers;
  return o;
}

function compare(r, c, label) {
  expect(Math.abs(r.value - c.value)).toBeLessThanOrEqual(REL * Math.abs(c.value) + ABS);
  expect(Math.abs(r.baselineValue - c.baselineValue)).toBeLessThanOrEqual(REL * Math.abs(c.baselineValue) + ABS);
  for (const k of READINGS)
    expect({ label, k, ok: worst(r[k], c[k]) <= 1 }).toEqual({ label, k, ok: true });
  expect(Math.abs(r.completenessError - c.completenessError))
    .toBeLessThanOrEqual(CERR + REL * Math.abs(c.value - c.baselineValue));
}

describe.each(Object.entries(G.models))('against the float64 reference: %s', (key, g) => {
  let m;
  beforeAll(async () => { m = await loadModel(join(ROOT, g.dir)); });
  afterAll(() => m.dispose());

  it('every reading of every case, and no wasm memory left behind', () => {
    for (const c of g.cases) {
      const r = m.gradientReadings(g.ids, optionsOf(c));
      expect(r.metric).toBe(c.metric);
      expect(r.answers).toEqual(c.answers);
      expect([r.T, r.nLayer, r.nHead, r.steps]).toEqual([g.ids.length, g.n_layer, g.n_head, c.steps]);
      compare(r, c, `${key} ${c.metric}`);
    }
    // the default metric without answers is log p(top next token), the reference's `top`
    const d = m.gradientReadings(g.ids, { steps: 1 });
    expect([d.metric, d.answers[0]]).toEqual(['logProb', g.top]);
    const { wasm } = modelInternals(m), heap = wasm.heapInUse();
    m.gradientReadings(g.ids, { steps: 2 });
    expect(wasm.heapInUse()).toBe(heap);
  });
});

describe('integrated gradients converge', () => {
  it('the completeness error shrinks with the steps (tiny, zero baseline), as the reference says', () => {
    return loadModel(join(ROOT, G.models.tiny.dir)).then((m) => {
      try {
        const c = G.models.tiny.cases[0], errs = {};
        for (const s of [4, 16, 64, 256]) {
          errs[s] = Math.abs(m.gradientReadings(G.models.tiny.ids, { ...optionsOf(c), steps: s }).completenessError);
          expect(Math.abs(errs[s] - Math.abs(c.convergence[s]))).toBeLessThanOrEqual(CERR);
        }
        expect(errs[16]).toBeLessThan(errs[4] / 100);
        expect(errs[64]).toBeLessThan(errs[16]);
        expect(errs[256]).toBeLessThan(errs[64]);
      } finally {
        m.dispose();
      }
    });
  });
});

describe('progress, cancel, worker, refusals', () => {
  let m;
  const g = G.models.tiny;
  beforeAll(async () => { m = await loadModel(join(ROOT, g.dir)); });
  afterAll(() => m.dispose());

  it('reports each part and stops on its signal', () => {
    const seen = [];
    m.gradientReadings(g.ids, { steps: 3, onProgress: (p) => seen.push([p.done, p.total]) });
    expect(seen).toEqual([[1, 5], [2, 5], [3, 5], [4, 5], [5, 5]]);
    const ac = new AbortController();
    const { wasm } = modelInternals(m), heap = wasm.heapInUse();
    expect(codeOf(() => m.gradientReadings(g.ids, { steps: 50, signal: ac.signal, onProgress: (p) => { if (p.done === 3) ac.abort(); } })))
      .toBe('EABORT');
    expect(wasm.heapInUse()).toBe(heap); // the abandoned computation freed its blocks
  });

  it('gives the same numbers through attnlab/worker', async () => {
    const d = await workerApi.loadModel(join(ROOT, g.dir));
    try {
      for (const c of g.cases) {
        const a = m.gradientReadings(g.ids, optionsOf(c)), w = await d.gradientReadings(g.ids, optionsOf(c));
        for (const k of READINGS) expect(Array.from(w[k])).toEqual(Array.from(a[k]));
        expect([w.value, w.baselineValue, w.completenessError]).toEqual([a.value, a.baselineValue, a.completenessError]);
        compare(w, c, `worker ${c.metric}`);
      }
    } finally {
      await d.dispose();
    }
  }, 60000);

  it('refuses bad input with named codes', () => {
    const V = m.config.vocabSize;
    expect(codeOf(() => m.gradientReadings(g.ids, { answers: [V, 1] }))).toBe('ERANGE');
    expect(codeOf(() => m.gradientReadings(g.ids, { answers: [1, -1] }))).toBe('ERANGE');
    expect(codeOf(() => m.gradientReadings(g.ids, { steps: 0 }))).toBe('ERANGE');
    expect(codeOf(() => m.gradientReadings(g.ids, { steps: 1e9 }))).toBe('ERANGE');
    expect(codeOf(() => m.gradientReadings(g.ids, { steps: 2.5 }))).not.toBe(null);
    expect(codeOf(() => m.gradientReadings([], {}))).toBe('EEMPTY');
    expect(codeOf(() => m.gradientReadings('', {}))).toBe('EEMPTY');
    expect(codeOf(() => m.gradientReadings([5], { metric: 'loss' }))).toBe('EEMPTY');
    expect(codeOf(() => m.gradientReadings(g.ids, { baseline: V }))).toBe('ERANGE');
    expect(codeOf(() => m.gradientReadings(g.ids, { baseline: -1 }))).toBe('ERANGE');
    expect(codeOf(() => m.gradientReadings(g.ids, { metric: 'kl' }))).toBe('EINVAL');
    expect(codeOf(() => m.gradientReadings(g.ids, { metric: 'logitDiff' }))).toBe('EINVAL');
    expect(codeOf(() => m.gradientReadings(g.ids, { answers: [1, 2], metric: 'loss' }))).toBe('EINVAL');
    expect(codeOf(() => m.gradientReadings(g.ids, { answers: 3 }))).toBe('ETYPE');
    expect(codeOf(() => m.gradientReadings(g.ids, { stepz: 3 }))).toBe('EINVAL');
    expect(codeOf(() => m.gradientReadings(g.ids, { steps: 4096, budget: 1 }))).toBe('ELIMIT');
    // a refusal leaves the model usable
    expect(m.gradientReadings(g.ids, { steps: 1 }).T).toBe(g.ids.length);
  });
});
