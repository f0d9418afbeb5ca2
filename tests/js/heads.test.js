// heads.test.js — Model#headImportance, #headRoles, #repeatedTokens
// (web/src/model.js heads section, c/src/heads.c), on the tiny fixture and
// the built-in model, checked against independent recomputations.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { modelInternals } from '../../web/src/model.js';
import * as workerApi from '../../web/src/worker-client.js';
import { codeOf } from './helpers/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');
const BUILTIN = join(ROOT, 'models/brown-gpt2');
const CHAPTER = 'Because the storm intensified , the ship finally sank .';

// The roles recomputed in JS from run()'s attention, straight from the definitions.
function rolesByHand(r, ids) {
  const T = ids.length, { nLayer, nHead } = r.config ?? r;
  const out = { prev: [], sink: [], dup: [] };
  for (let l = 0; l < nLayer; l++)
    for (let h = 0; h < nHead; h++) {
      const A = r.attention(l, h);
      let p = 0, s = 0, d = 0, nd = 0;
      for (let i = 0; i < T; i++) {
        s += A[i * T];
        if (i > 0) p += A[i * T + i - 1];
        let seen = false, mass = 0;
        for (let j = 0; j < i; j++) if (ids[j] === ids[i]) { seen = true; mass += A[i * T + j]; }
        if (seen) { nd++; d += mass; }
      }
      out.prev.push(T > 1 ? p / (T - 1) : 0);
      out.sink.push(s / T);
      out.dup.push(nd ? d / nd : 0);
    }
  return out;
}

describe('on the tiny fixture', () => {
  let m;
  beforeAll(async () => { m = await loadModel(TINY); });
  afterAll(() => m.dispose());

  it('headImportance: baseLoss is the plain run\'s loss, pruning[0] equals it exactly, the curve follows the order', () => {
    const { nLayer, nHead } = m.config;
    const LH = nLayer * nHead;
    const imp = m.headImportance(CHAPTER);
    expect(imp.delta).toBeInstanceOf(Float32Array);
    expect(imp.delta.length).toBe(LH);
    expect(imp.pruning.length).toBe(LH + 1);
    expect(imp.order.length).toBe(LH);
    // the loss of a plain run, independently through the low layer
    const { wasm, handle } = modelInternals(m);
    const ids = m.tokenize(CHAPTER).ids;
    wasm.forward(handle, ids);
    const { nllSum, n } = wasm.resultNll(handle);
    expect(n).toBe(ids.length - 1);
    expect(imp.baseLoss).toBe(nllSum / n);
    expect(imp.pruning[0]).toBe(Math.fround(imp.baseLoss));
    expect(new Set(imp.order).size).toBe(LH);
    for (let k = 1; k < LH; k++) expect(imp.delta[imp.order[k - 1]]).toBeLessThanOrEqual(imp.delta[imp.order[k]]);
    expect(imp.pruning[1]).toBeCloseTo(imp.baseLoss + imp.delta[imp.order[0]], 5);
    expect(imp.lossAtHalf).toBe(imp.pruning[Math.floor(LH / 2)]);
    for (const x of imp.pruning) expect(Number.isFinite(x)).toBe(true);
    expect([...imp.delta].filter((x) => Math.abs(x) > 1e-6).length).toBe(LH); // every head moves the loss
    // same input, same numbers; pruning: false skips the curve and keeps the grid
    const again = m.headImportance(CHAPTER, { pruning: false });
    expect(again.pruning).toBeNull();
    expect(again.lossAtHalf).toBeNull();
    expect(Array.from(again.delta)).toEqual(Array.from(imp.delta));
    expect(Array.from(again.order)).toEqual(Array.from(imp.order));
  });

  it('headImportance: one head\'s delta is the loss of its ablated run minus the base', () => {
    const imp = m.headImportance(CHAPTER, { pruning: false });
    const { wasm, handle } = modelInternals(m);
    const ids = m.tokenize(CHAPTER).ids;
    wasm.forward(handle, ids, { interventions: [{ kind: 2, layer: 1, head: 2 }] });
    const { nllSum, n } = wasm.resultNll(handle);
    expect(imp.delta[1 * m.config.nHead + 2]).toBeCloseTo(nllSum / n - imp.baseLoss, 6);
  });

  it('tokenLosses: each loss is −log softmax of the prefix run\'s last logits; the sum is resultNll\'s, the mean headImportance\'s base', () => {
    const ids = m.tokenize(CHAPTER).ids;
    const T = ids.length;
    const r = m.tokenLosses(ids);
    expect(r.losses).toBeInstanceOf(Float64Array);
    expect(r.losses.length).toBe(T - 1);
    expect(r.T).toBe(T);
    for (const t of [0, 3, T - 2]) {
      const logits = m.run(ids.slice(0, t + 1), { topK: 0 }).logits;
      let mx = -Infinity, s = 0;
      for (const v of logits) mx = Math.max(mx, v);
      for (const v of logits) s += Math.exp(v - mx);
      expect(r.losses[t]).toBeCloseTo(mx + Math.log(s) - logits[ids[t + 1]], 4);
    }
    const { wasm, handle } = modelInternals(m);
    wasm.forward(handle, ids);
    const { nllSum, n } = wasm.resultNll(handle);
    let sum = 0;
    for (const v of r.losses) sum += v;
    expect(sum).toBe(nllSum);   // the same terms added in the same order
    expect(n).toBe(T - 1);
    expect(r.mean).toBeCloseTo(m.headImportance(ids, { pruning: false }).baseLoss, 12);
  });

  it('tokenLosses and headRoles under an ablation: the ablated run\'s loss is headImportance\'s, its roles those of run()', () => {
    const ids = m.repeatedTokens(6, { seed: 5 });
    const imp = m.headImportance(ids, { pruning: false });
    const { nHead } = m.config;
    const ab = m.tokenLosses(ids, { ablate: [[1, 2]] });
    expect(ab.mean - imp.baseLoss).toBeCloseTo(imp.delta[1 * nHead + 2], 5);
    const iv = m.tokenLosses(ids, { interventions: [{ kind: 'ablate', layer: 1, head: 2 }] });
    expect(Array.from(iv.losses)).toEqual(Array.from(ab.losses));
    const roles = m.headRoles(ids, { ablate: [[0, 'all']] });
    const run = m.run(ids, { ablate: [[0, 'all']] });
    const hand = rolesByHand({ ...m.config, attention: (l, h) => run.attention(l, h) }, Array.from(ids));
    for (const k of ['prev', 'sink', 'dup'])
      for (let i = 0; i < hand[k].length; i++) expect(roles[k][i]).toBeCloseTo(hand[k][i], 5);
    // layer 0 ablated changes what layer 1 sees: its roles differ from the plain run's
    const plain = m.headRoles(ids);
    expect(Array.from(roles.induction.slice(nHead))).not.toEqual(Array.from(plain.induction.slice(nHead)));
    expect(Array.from(roles.induction.slice(0, nHead))).toEqual(Array.from(plain.induction.slice(0, nHead)));
  });

  it('tokenLosses: bad input gets its code', () => {
    expect(codeOf(() => m.tokenLosses([5]))).toBe('EEMPTY');
    expect(codeOf(() => m.tokenLosses(''))).toBe('EEMPTY');
    expect(codeOf(() => m.tokenLosses(CHAPTER, { ablate: [[99, 0]] }))).toBe('ERANGE');
    expect(codeOf(() => m.tokenLosses(CHAPTER, { topK: 3 }))).toBe('EINVAL');
    expect(codeOf(() => m.tokenLosses(new Array(m.config.nPositions + 1).fill(1)))).toBe('ETOOLONG');
    expect(codeOf(() => m.headRoles(CHAPTER, { ablate: [[0, 99]] }))).toBe('ERANGE');
    expect(m.tokenLosses(CHAPTER).losses.every(Number.isFinite)).toBe(true);   // still working
    const { wasm, handle } = modelInternals(m);
    wasm.forward(handle, [1, 2, 3]);
    expect(codeOf(() => wasm.resultNllEach(handle, 1.5))).toBe('EINVAL');
    expect(codeOf(() => wasm.resultNllEach(handle, 2))).toBe('ERANGE');      // room for 1 loss, the run has 2
    expect(Array.from(wasm.resultNllEach(handle, 3)).every(Number.isFinite)).toBe(true);
    expect(wasm.fn.alab_result_nll_each(0, 2, handle)).not.toBe(0);        // NULL output: an error code, no crash
  });

  it('headRoles matches the definitions recomputed from run()\'s attention', () => {
    const ids = m.tokenize(CHAPTER + ' ' + CHAPTER).ids;
    const roles = m.headRoles(ids);
    const run = m.run(ids);
    const hand = rolesByHand({ ...m.config, attention: (l, h) => run.attention(l, h) }, Array.from(ids));
    for (const k of ['prev', 'sink', 'dup'])
      for (let i = 0; i < hand[k].length; i++) expect(roles[k][i]).toBeCloseTo(hand[k][i], 5);
    expect(roles.dup.every((x) => x > 0)).toBe(true); // the text repeats, so dup is defined
  });

  it('repeatedTokens is seeded, doubled and in range; induction is defined on it and only on it', () => {
    const a = m.repeatedTokens(10, { seed: 7 });
    expect(a).toBeInstanceOf(Int32Array);
    expect(a.length).toBe(20);
    expect(Array.from(a.subarray(10))).toEqual(Array.from(a.subarray(0, 10)));
    expect(Array.from(m.repeatedTokens(10, { seed: 7 }))).toEqual(Array.from(a));
    expect(Array.from(m.repeatedTokens(10, { seed: 8 }))).not.toEqual(Array.from(a));
    expect(a.every((x) => x >= 0 && x < m.config.vocabSize - 1)).toBe(true);
    const b = m.repeatedTokens(16, { seed: 1, lo: 100, hi: 110 });
    expect(b.every((x) => x >= 100 && x < 110)).toBe(true);

    const r = m.headRoles(a, { top: 2 });
    expect(r.inductionDefined).toBe(true);
    expect(r.top.induction.length).toBe(2);
    expect(r.top.induction[0].score).toBeGreaterThanOrEqual(r.top.induction[1].score);
    for (const k of ['prev', 'sink', 'dup', 'induction'])
      for (const x of r[k]) { expect(x).toBeGreaterThan(0); expect(x).toBeLessThanOrEqual(1 + 1e-6); }
    const t = m.headRoles(CHAPTER);
    expect(t.inductionDefined).toBe(false);
    expect(t.induction.every((x) => x === 0)).toBe(true);
    expect(t.top.induction).toEqual([]);
    expect(t.top.prev.length).toBe(3);
  });

  it('bad arguments throw their codes, and the model keeps working', () => {
    expect(codeOf(() => m.headImportance('a'))).toBe('EEMPTY');
    expect(codeOf(() => m.headImportance(''))).toBe('EEMPTY');
    expect(codeOf(() => m.headImportance(CHAPTER, { pruning: 1 }))).toBe('ETYPE');
    expect(codeOf(() => m.headImportance(CHAPTER, { prune: true }))).toBe('EINVAL');
    expect(codeOf(() => m.headImportance(new Array(65).fill(1)))).toBe('ETOOLONG');
    expect(codeOf(() => m.headImportance([1, m.config.vocabSize]))).toBe('ERANGE');
    expect(codeOf(() => m.headImportance(42))).toBe('ETYPE');
    expect(codeOf(() => m.headRoles(''))).toBe('EEMPTY');
    expect(codeOf(() => m.headRoles(CHAPTER, { top: -1 }))).toBe('ERANGE');
    expect(codeOf(() => m.repeatedTokens(1))).toBe('ERANGE');
    expect(codeOf(() => m.repeatedTokens(33))).toBe('ERANGE'); // 2n > n_positions = 64
    expect(codeOf(() => m.repeatedTokens(4, { seed: -1 }))).toBe('ERANGE');
    expect(codeOf(() => m.repeatedTokens(4, { lo: 5, hi: 5 }))).toBe('ERANGE');
    expect(codeOf(() => m.repeatedTokens(2.5))).toBe('EINVAL');
    const { wasm } = modelInternals(m);
    expect(codeOf(() => wasm.headRoles(new Float32Array(4), [1, 2], 1, 2, 2))).toBe('EINVAL');
    expect(codeOf(() => wasm.pruningCurve(modelInternals(m).handle, [1, 2], new Float32Array(3)))).toBe('EINVAL');
    expect(m.headImportance(CHAPTER, { pruning: false }).delta.length).toBe(m.config.nLayer * m.config.nHead);
  });

  it('dagProfile: per-head scores are run()\'s dagScores, layers their mean, null the uniform baseline of each length', () => {
    const S = [CHAPTER, 'Because the storm weakened , the ship finally sank .', 'A short one .'];
    const p = m.dagProfile(S);
    expect(p.mask).toBe('causal');
    expect(p.sentences.length).toBe(3);
    const { nLayer, nHead } = m.config;
    S.forEach((text, k) => {
      const r = m.run(text);
      const s = p.sentences[k];
      expect(s.T).toBe(r.T);
      expect(s.null).toBe(r.nullDagScore);
      for (let l = 0; l < nLayer; l++) {
        let sum = 0;
        for (let h = 0; h < nHead; h++) {
          expect(s.head[l * nHead + h]).toBeCloseTo(r.dagScores[l][h], 6);
          sum += s.head[l * nHead + h];
        }
        expect(s.layer[l]).toBeCloseTo(sum / nHead, 6);
        expect(s.layer[l]).toBeCloseTo(r.layerDagScores[l], 5);
      }
    });
    expect(p.mean.null).toBeCloseTo(p.sentences.reduce((a, s) => a + s.null, 0) / 3, 12);
    // one input, as text or as ids, gives the same profile; full mask: the bidirectional null
    const one = m.dagProfile(CHAPTER), ids = m.dagProfile(m.tokenize(CHAPTER).ids);
    expect(Array.from(one.sentences[0].head)).toEqual(Array.from(p.sentences[0].head));
    expect(Array.from(ids.sentences[0].head)).toEqual(Array.from(p.sentences[0].head));
    const full = m.dagProfile(CHAPTER, { mask: 'full' });
    const T = full.sentences[0].T;
    expect(full.sentences[0].null).toBe((T - 1) / (2 * T));
    expect(full.sentences[0].overall).toBeLessThan(one.sentences[0].overall);
    expect(codeOf(() => m.dagProfile(CHAPTER, { mask: 'window:2' }))).toBe('EINVAL');
    expect(codeOf(() => m.dagProfile([CHAPTER, '']))).toBe('EEMPTY');
    expect(codeOf(() => m.dagProfile([CHAPTER, 3]))).toBe('ETYPE');
    expect(codeOf(() => m.dagProfile(CHAPTER, { masks: 'full' }))).toBe('EINVAL');
    const { wasm } = modelInternals(m);
    expect(codeOf(() => wasm.dagProfile(new Float32Array(3), 1, 1, 2))).toBe('EINVAL');
  });

  it('a disposed model throws EDISPOSED', async () => {
    const m2 = await loadModel(TINY);
    m2.dispose();
    expect(codeOf(() => m2.headImportance(CHAPTER))).toBe('EDISPOSED');
    expect(codeOf(() => m2.headRoles(CHAPTER))).toBe('EDISPOSED');
    expect(codeOf(() => m2.repeatedTokens(4))).toBe('EDISPOSED');
    expect(codeOf(() => m2.dagProfile(CHAPTER))).toBe('EDISPOSED');
  });

  it('the worker client proxies the heads methods with the same numbers', async () => {
    const wm = await workerApi.loadModel(TINY);
    try {
      const a = await wm.headImportance(CHAPTER, { pruning: false });
      const b = m.headImportance(CHAPTER, { pruning: false });
      expect(Array.from(a.delta)).toEqual(Array.from(b.delta));
      const ids = await wm.repeatedTokens(6, { seed: 3 });
      expect(Array.from(ids)).toEqual(Array.from(m.repeatedTokens(6, { seed: 3 })));
      expect((await wm.headRoles(ids)).inductionDefined).toBe(true);
      const tl = await wm.tokenLosses(ids, { ablate: [[0, 1]] });
      expect(tl.losses).toBeInstanceOf(Float64Array);
      expect(Array.from(tl.losses)).toEqual(Array.from(m.tokenLosses(ids, { ablate: [[0, 1]] }).losses));
      expect(Array.from((await wm.dagProfile([CHAPTER])).mean.layer)).toEqual(Array.from(m.dagProfile([CHAPTER]).mean.layer));
    } finally {
      await wm.dispose();
    }
  });
});

describe('on the built-in model (docs/heads.md)', () => {
  let m;
  beforeAll(async () => { m = await loadModel(BUILTIN); });
  afterAll(() => m.dispose());

  const sample = () => readFileSync(join(BUILTIN, 'heldout_sample.txt'), 'utf8');

  it('100 held-out tokens: base loss near the held-out loss, half the heads removed costs < 0.1 nats, all of them more', () => {
    const ids = m.tokenize(sample()).ids.slice(0, 100);
    const imp = m.headImportance(ids);
    const LH = m.config.nLayer * m.config.nHead;
    expect(LH).toBe(24);
    expect(imp.baseLoss).toBeGreaterThan(5.5);
    expect(imp.baseLoss).toBeLessThan(7.5);
    expect(imp.pruning[0]).toBe(Math.fround(imp.baseLoss));
    expect(Math.abs(imp.lossAtHalf - imp.baseLoss)).toBeLessThan(0.1);
    expect(imp.pruning[LH]).toBeGreaterThan(imp.baseLoss);
    expect(Number.isFinite(imp.pruning[LH])).toBe(true);
  }, 60000);

  it('the chapter\'s sentences: the DAG score barely exceeds the null of uniform causal attention', () => {
    const p = m.dagProfile([CHAPTER, 'Because the storm weakened , the ship finally sank .']);
    expect(p.mean.null).toBeGreaterThan(0.7);
    expect(Math.abs(p.mean.overall - p.mean.null)).toBeLessThan(0.02);
    const full = m.dagProfile([CHAPTER], { mask: 'full' });
    expect(full.mean.null).toBeCloseTo(0.45, 12); // T = 10
  });

  it('role scores of held-out text and of a repeated random sequence are fractions, top heads named', () => {
    const r = m.headRoles(sample().slice(0, 600));
    expect(r.T).toBeGreaterThan(100);
    for (const k of ['prev', 'sink', 'dup']) {
      expect(r.top[k].length).toBe(3);
      for (const { layer, head, score } of r.top[k]) {
        expect(layer).toBeGreaterThanOrEqual(0);
        expect(layer).toBeLessThan(6);
        expect(head).toBeLessThan(4);
        expect(score).toBe(r[k][layer * 4 + head]);
      }
    }
    const rep = m.headRoles(m.repeatedTokens(50, { seed: 1 }));
    expect(rep.inductionDefined).toBe(true);
    expect(rep.induction.every((x) => x > 0 && x < 1)).toBe(true);
  }, 60000);
});
