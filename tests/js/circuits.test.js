// circuits.test.js — where a head looks versus what it moves: Model#patternValuePatching, #pathPatching,
// #directLogitAttribution, #valueNorms, #componentTracing, #compositionScores (web/src/circuits.js over
// c/src/circuits.c) against the float64 reference in tests/fixtures/circuits_golden.json on a GPT-2, a Llama, a
// GPT-NeoX, a Qwen3, a Mistral (sliding windows) and a Gemma 3 checkpoint (post-normed sublayers: direct logit
// attribution and composition scores refused), in wasm; the set forms on the built-in model (intervals, skipped
// pairs, progress, cancel), through attnlab/worker, and the refusals.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import * as workerApi from '../../web/src/worker-client.js';
import { codeOf } from './helpers/errors.js';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { bootstrapMean } from '../../web/src/evidence.js';
import { splitmix64, quantile7 } from '../../web/src/core/rng.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const G = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/circuits_golden.json'), 'utf8'));
const TOL = G.tolerance;
const INPUTS = ['q', 'k', 'v', 'logits'];

const seen = {}; // the largest difference per checkpoint, reported after the reference's tests

function diff(got, want, name) {
  expect(got.length).toBe(want.length);
  let m = 0;
  for (let i = 0; i < want.length; i++) {
    if (want[i] === null || Number.isNaN(got[i])) {
      if (!(want[i] === null && Number.isNaN(got[i]))) return Infinity;
      continue;
    }
    m = Math.max(m, Math.abs(got[i] - want[i]));
  }
  if (name) seen[name] = Math.max(seen[name] ?? 0, m);
  return m;
}

describe.each(G.models.map((g) => [g.name, g]))('against the float64 reference: %s', (name, g) => {
  let m;
  beforeAll(async () => { m = await loadModel(join(ROOT, g.dir)); });
  afterAll(() => m.dispose());
  const answers = () => [g.answer_clean, g.answer_corrupt];

  it('pattern, value and both, denoising and noising', () => {
    const r = m.patternValuePatching(g.clean, g.corrupt, { answers: answers() });
    expect(Math.abs(r.ldClean - g.ld_clean)).toBeLessThan(TOL);
    expect(Math.abs(r.ldCorrupt - g.ld_corrupt)).toBeLessThan(TOL);
    const flat = ['denoise', 'noise'].flatMap((d) => ['pattern', 'value', 'both'].flatMap((k) => Array.from(r.grid[d][k])));
    expect(diff(flat, g.pattern_value, name)).toBeLessThan(TOL);    // one pair is never skipped, but its signed gap is given and a gap under 1 nat is flagged
    expect(r.gap).toBe(r.ldClean - r.ldCorrupt);
    expect('warning' in r).toBe(!(r.gap >= 1));
    const flipped = m.patternValuePatching(g.clean, g.corrupt, { answers: answers().reverse() });
    expect(Math.abs(flipped.gap + r.gap)).toBeLessThan(1e-5);
    expect(flipped.warning ?? '').toMatch(flipped.gap >= 1 ? /^$/ : /small or negative gap/);
  });

  it('path patching, both directions, MLPs recomputed and frozen', () => {
    const receivers = g.receivers.map(([layer, head, input]) => (input === 3 ? { input: 'logits' } : { layer, head, input: INPUTS[input] }));
    for (const p of g.path) {
      const r = m.pathPatching(g.clean, g.corrupt, { answers: answers(), receivers,
        direction: p.direction ? 'noise' : 'denoise', freezeMlp: p.freeze_mlp });
      expect(diff(r.senders.flatMap((s) => Array.from(s)), p.out, name)).toBeLessThan(TOL);
    }
  });

  it('the window of each layer\'s own mask, as config.json gives it; only Gemma 3 has measures refused', () => {
    expect(m.config.layerMasks).toEqual((g.windows ?? Array(g.L).fill(0)).map((W) => (W ? `window:${W}` : 'causal')));
    expect(Boolean(g.refused)).toBe(m.config.family === 'gemma3_text');
    expect(Boolean(g.dla) && Boolean(g.composition)).toBe(!g.refused);
  });

  it.runIf(g.refused)('refuses direct logit attribution and composition scores: a head is not a linear term of the residual', () => {
    expect(g.refused).toEqual(['dla', 'composition']);
    expect(g.dla).toBeUndefined();
    expect(codeOf(() => m.directLogitAttribution(g.dla_ids, { answers: [g.answer_clean, g.answer_corrupt] }))).toBe('EINVAL');
    expect(codeOf(() => m.directLogitAttribution(g.dla_ids, { answers: [g.answer_clean] }))).toBe('EINVAL');
    expect(codeOf(() => m.compositionScores({ nNull: 4 }))).toBe('EINVAL');
    expect(m.valueNorms(g.dla_ids).length).toBe(g.L * g.NH * g.T); // and it runs on
  });

  it.runIf(g.dla)('direct logit attribution, a difference of two answers and one answer', () => {
    for (const d of g.dla) {
      const r = m.directLogitAttribution(g.dla_ids, { answers: d.answer_other < 0 ? [d.answer] : [d.answer, d.answer_other] });
      expect(Math.abs(r.ld - d.ld)).toBeLessThan(TOL);
      expect(diff(Array.from(r.heads), d.heads, name)).toBeLessThan(TOL);
      expect(diff(Array.from(r.sources), d.sources, name)).toBeLessThan(TOL);
      const t = r.terms;
      expect(diff([t.token, t.position, t.finalBias, ...t.attnBias, ...t.mlp], d.terms, name)).toBeLessThan(TOL);
    }
  });

  it('value norms and causal tracing by component', () => {
    expect(diff(Array.from(m.valueNorms(g.dla_ids)), g.value_norms, name)).toBeLessThan(TOL);
    const r = m.componentTracing(g.clean, g.corrupt, { answers: answers() });
    expect(diff(Array.from(r.attn), g.tracing.attn, name)).toBeLessThan(TOL);
    expect(diff(Array.from(r.mlp), g.tracing.mlp, name)).toBeLessThan(TOL);
  });

  it.runIf(g.composition)('composition scores and their Gaussian null', () => {
    const c = g.composition;
    const r = m.compositionScores({ nNull: c.n_null, seed: c.seed });
    expect(diff([...r.q, ...r.k, ...r.v], c.scores, name)).toBeLessThan(TOL);
    expect(diff(['q', 'k', 'v'].flatMap((k) => [r.null[k].mean, r.null[k].lo, r.null[k].hi]), c.null, name)).toBeLessThan(TOL);
    // every pair of layers l1 < l2, l1 outer, and the within-model null: the model's own scores' quantiles and
    // each score's rank within its layer pair
    const L = m.config.nLayer, NH = m.config.nHead, HH = NH * NH;
    expect(r.pairs).toEqual(Array.from({ length: L - 1 }, (_, l1) => Array.from({ length: L - 1 - l1 }, (_, d) => [l1, l1 + 1 + d])).flat());
    expect(r.q).toHaveLength(r.pairs.length * HH);
    for (const k of ['q', 'k', 'v']) {
      const sorted = Array.from(r[k]).sort((a, b) => a - b);
      expect(r.withinModel[k].lo).toBeLessThanOrEqual(r.withinModel[k].median);
      expect(r.withinModel[k].median).toBeLessThanOrEqual(r.withinModel[k].hi);
      expect(r.withinModel[k].hi).toBeLessThanOrEqual(sorted.at(-1));
      for (let p = 0; p < r.pairs.length; p++) {
        const block = Array.from(r[k].subarray(p * HH, (p + 1) * HH));
        const best = block.indexOf(Math.max(...block));
        expect(r.rank[k][p * HH + best]).toBe(1);
        expect(new Set(Array.from(r.rank[k].subarray(p * HH, (p + 1) * HH))).size).toBe(HH);
      }
    }
  });
});

afterAll(() => {
  // the largest |wasm - float64 reference| met on each checkpoint (all within G.tolerance, asserted above)
  console.log('circuits in wasm, max diff from the float64 reference: '
    + Object.entries(seen).map(([k, v]) => `${k} ${v.toExponential(2)}`).join(', '));
});

describe('over sets of pairs, on the built-in model', () => {
  let b;
  beforeAll(async () => { b = await loadModel(); }, 60000);
  afterAll(() => b.dispose());

  it('pattern/value over the induction pairs: each cell the mean of the pairs, with an interval around it', () => {
    // (the built-in model does not separate the minimal pairs by 1 nat: docs/generated/evidence-sets.md)
    const r = b.patternValueSet('induction', { limit: 6, nBoot: 200 });
    const { nLayer, nHead } = b.config, LH = nLayer * nHead;
    expect(r.n + r.skipped.length).toBe(6);
    expect(r.n).toBeGreaterThan(2);
    for (const dir of ['denoise', 'noise'])
      for (const k of ['pattern', 'value', 'both']) {
        expect(r.grid[dir][k]).toHaveLength(LH);
        for (let x = 0; x < LH; x += 5) {
          const mean = r.perInput.reduce((a, p) => a + p.grid[dir][k][x], 0) / r.n;
          expect(Math.abs(r.grid[dir][k][x].mean - mean)).toBeLessThan(1e-9);
          expect(r.grid[dir][k][x].lo).toBeLessThanOrEqual(r.grid[dir][k][x].mean + 1e-12);
          expect(r.grid[dir][k][x].hi).toBeGreaterThanOrEqual(r.grid[dir][k][x].mean - 1e-12);
        }
      }
    // the pattern's share is given only for heads whose whole-head effect reaches minEffect, and it is a ratio
    // of means (noising: of 1 − the scores), not a mean of per-pair ratios
    for (const dir of ['denoise', 'noise'])
      for (let x = 0; x < LH; x++) {
        const eff = (v) => (dir === 'denoise' ? v : 1 - v);
        const both = r.perInput.reduce((a, p) => a + eff(p.grid[dir].both[x]), 0), pat = r.perInput.reduce((a, p) => a + eff(p.grid[dir].pattern[x]), 0);
        if (Math.abs(both / r.n) < r.minEffect) { expect(r.patternShare[dir][x]).toBeNull(); continue; }
        const sh = r.patternShare[dir][x];
        expect(Math.abs(sh.mean - pat / both)).toBeLessThan(1e-12);
        expect(sh.lo).toBeLessThanOrEqual(sh.hi);
        expect(sh.n).toBe(r.n);
      }
    expect(r.perInput[0].clean).toBeTypeOf('string');
  });

  it('path patching on the previous-token induction pairs: the previous-token head reaches the induction head through its keys', () => {
    const r = b.pathPatchingSet('induction-prev', { limit: 8, nBoot: 200,
      receivers: [{ layer: 1, head: 0, input: 'q' }, { layer: 1, head: 0, input: 'k' }, { layer: 1, head: 0, input: 'v' }, { input: 'logits' }] });
    const { nHead } = b.config;
    expect(r.n).toBeGreaterThan(4);
    // layer-1 and higher senders cannot reach a layer-1 receiver: null on every pair, no interval
    for (let h = 0; h < nHead; h++) expect(r.senders[1][nHead + h].mean).toBeNull();
    // built-in circuit (docs/heads.md): L0H0 is the previous-token head, L1H0 the induction head
    const k = r.senders[1][0].mean, q = r.senders[0][0].mean, v = r.senders[2][0].mean;
    expect(k).toBeGreaterThan(0.2);
    expect(k).toBeGreaterThan(Math.abs(q));
    expect(k).toBeGreaterThan(Math.abs(v));
  });

  it('component tracing and attribution over pairs; progress and cancel', () => {
    const seen = [];
    const t = b.componentTracingSet('induction', { limit: 4, nBoot: 100, onProgress: (p) => seen.push(p.done) });
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(t.n + t.skipped.length).toBe(4);
    expect(t.attn.last).toHaveLength(b.config.nLayer);
    const d = b.attributionSet('induction', { limit: 4, nBoot: 100 });
    expect(d.heads).toHaveLength(b.config.nLayer * b.config.nHead);
    for (const p of d.perInput) {
      const sum = p.heads.reduce((a, x) => a + x, 0) + p.terms.token + p.terms.position + p.terms.finalBias
        + p.terms.attnBias.reduce((a, x) => a + x, 0) + p.terms.mlp.reduce((a, x) => a + x, 0);
      expect(Math.abs(sum - p.ld)).toBeLessThan(1e-4 * (1 + Math.abs(p.ld)));
    }
    const ac = new AbortController();
    expect(codeOf(() => b.patternValueSet('induction', { limit: 5, signal: ac.signal, onProgress: () => ac.abort() }))).toBe('EABORT');
  });

  it('the value-weighted reading (Kobayashi et al. 2020) beside the weights in the knockout comparisons', () => {
    const text = 'Because the storm intensified , the ship finally sank .';
    const { nLayer, nHead } = b.config;
    const r = b.run(text), T = r.T, norms = b.valueNorms(text);
    const tk = b.tokenKnockout(text);
    for (let j = 0; j < T; j++) {
      let want = 0;
      for (let h = 0; h < nHead; h++) want += r.attention(nLayer - 1, h)[(T - 1) * T + j] * norms[((nLayer - 1) * nHead + h) * T + j] / nHead;
      expect(Math.abs(tk.readings.valueWeighted[j] - want)).toBeLessThan(1e-5 * (1 + want));
    }
    const ts = b.tokenKnockoutSet([text, 'The ship finally sank after the storm .'], { nBoot: 50, nPerm: 50 });
    expect(ts.readings.valueWeighted.perInput).toHaveLength(2);
    const es = b.edgeKnockoutSet([text], { layer: 0, head: 0, nBoot: 50, nPerm: 50 });
    for (const k of ['local', 'last']) expect(es.valueWeighted[k].spearman.mean).toBeTypeOf('number');
    // one head: the reading is A[i][j] * ||v_j W_O||, a rescaling of each column; with equal norms it would rank as A
    expect(es.valueWeighted.local.spearman.mean).not.toBe(es.local.spearman.mean);
  });

  it('a pair whose runs agree is skipped with its reason, not scored', () => {
    const r = b.patternValueSet([['The storm sank the ship', 'The storm sank the ship', [' and', ' .']]], { nBoot: 10 });
    expect(r.n).toBe(0);
    expect(r.skipped[0].reason).toMatch(/same logit difference|minGap/);
  });

  it('refuses what it cannot compute, with a code', () => {
    const C = 'The man said that', D = 'The woman said that';
    expect(codeOf(() => b.pathPatching(C, D, { receivers: [{ layer: 9, head: 0, input: 'q' }] }))).toBe('ERANGE');
    expect(codeOf(() => b.pathPatching(C, D, { receivers: [{ layer: 1, head: 0, input: 'x' }] }))).toBe('EINVAL');
    expect(codeOf(() => b.pathPatching(C, D, { receivers: [] }))).toBe('ETYPE');
    expect(codeOf(() => b.pathPatching(C, D, { receivers: [{ input: 'logits' }], direction: 'sideways' }))).toBe('EINVAL');
    expect(codeOf(() => b.patternValuePatching(C, 'The storm', {}))).toBe('EINVAL');
    expect(codeOf(() => b.patternValuePatching(C, D, { answers: [' he', ' he'] }))).toBe('EINVAL');
    expect(codeOf(() => b.patternValuePatching(C, D, { answers: [' he'] }))).toBe('ETYPE');
    expect(codeOf(() => b.directLogitAttribution(C, {}))).toBe('ETYPE');
    expect(codeOf(() => b.directLogitAttribution(C, { answers: [' he', ' he'] }))).toBe('EINVAL');
    expect(codeOf(() => b.compositionScores({ nNull: -1 }))).toBe('ERANGE');
    expect(codeOf(() => b.compositionScores({ nul: 3 }))).toBe('EINVAL');
    expect(codeOf(() => b.patternValueSet('nonsense'))).toBe('EINVAL');
    expect(codeOf(() => b.patternValueSet('induction', { minEffect: -1 }))).toBe('ERANGE');
    expect(codeOf(() => b.valueNorms('x'))).toBe('EEMPTY');
    // and the model still answers afterwards
    expect(b.valueNorms(C).length).toBe(b.config.nLayer * b.config.nHead * b.tokenize(C).ids.length);
  });
});

describe('the JS port of the C statistics\' generator (the pattern share\'s resamples)', () => {
  it('splitmix64 + below draws the indices alab_bootstrap_mean draws: the same interval to the last bit', async () => {
    const w = await instantiateAttnlab();
    const xs = Array.from({ length: 37 }, (_, k) => Math.sin(3.7 * k) * (k % 5) + 0.25 * k);
    for (const [seed, nBoot, level] of [[1, 500, 0.95], [0xffffffff, 300, 0.9], [12345, 1000, 0.5]]) {
      const c = bootstrapMean(w, xs, { nBoot, level, seed });
      const rng = splitmix64(seed), means = [];
      for (let b = 0; b < nBoot; b++) { let sum = 0; for (let t = 0; t < xs.length; t++) sum += xs[rng.below(xs.length)]; means.push(sum / xs.length); }
      means.sort((a, b) => a - b);
      expect(quantile7(means, (1 - level) / 2)).toBe(c.lo);
      expect(quantile7(means, (1 + level) / 2)).toBe(c.hi);
    }
    // the rejection rule: below(3 · 2^30) is uniform over the range, not favouring small residues
    const r = splitmix64(7), n = 3 * 2 ** 30;
    let small = 0;
    for (let k = 0; k < 4000; k++) if (r.below(n) < 2 ** 30) small++;
    expect(small / 4000).toBeGreaterThan(0.28); // 1/3 expected; plain mod would give 1/2
    expect(small / 4000).toBeLessThan(0.39);
  });
});

describe('answers are tokens of text, without the BOS a run gets', () => {
  it('a Llama 3 tokenizer puts <|begin_of_text|> before a run, not before an answer', async () => {
    const m = await loadModel(join(ROOT, 'tests/fixtures/families/llama'));
    try {
      expect(m.tokenize('He s').tokens[0]).toBe('<|begin_of_text|>');
      const clean = 'He said a', corrupt = 'He saia a';
      const byString = m.activationPatching(clean, corrupt, { answers: [' s', 'e'] });
      const byId = m.activationPatching(clean, corrupt, { answers: [264, 68] });
      expect(byString.answers).toEqual([264, 68]);
      expect(Array.from(byString.heads)).toEqual(Array.from(byId.heads));
      expect(m.patternValuePatching(clean, corrupt, { answers: [' s', 'e'] }).answers).toEqual([264, 68]);
      expect(m.directLogitAttribution(clean, { answers: [' s'] }).answers).toEqual([264]);
      expect(codeOf(() => m.activationPatching(clean, corrupt, { answers: [' said', 'e'] }))).toBe('EINVAL');
    } finally {
      m.dispose();
    }
  });
});

describe('through attnlab/worker', () => {
  it('gives the same numbers as in the page thread, with progress', async () => {
    const g = G.models[0];
    const local = await loadModel(join(ROOT, g.dir));
    const d = await workerApi.loadModel(join(ROOT, g.dir));
    try {
      const opts = { answers: [g.answer_clean, g.answer_corrupt] };
      const a = local.patternValuePatching(g.clean, g.corrupt, opts), w = await d.patternValuePatching(g.clean, g.corrupt, opts);
      expect(Array.from(w.grid.noise.value)).toEqual(Array.from(a.grid.noise.value));
      const seen = [];
      const pairs = [[g.clean, g.corrupt, [g.answer_clean, g.answer_corrupt]], [g.clean, g.corrupt, [g.answer_clean, g.answer_corrupt]]];
      const s = await d.pathPatchingSet(pairs, { receivers: [{ input: 'logits' }], nBoot: 50, onProgress: (p) => seen.push(p.done) });
      expect(seen).toEqual([1, 2]);
      expect(s.n).toBe(2);
      const c = await d.compositionScores({ nNull: 8 });
      expect(Array.from(c.k)).toEqual(Array.from(local.compositionScores({ nNull: 8 }).k));
    } finally {
      local.dispose();
      await d.dispose();
    }
  }, 60000);
});
