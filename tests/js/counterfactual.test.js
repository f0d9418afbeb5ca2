// counterfactual.test.js — weight edits of one head in the npm API (interventions, rung 2)
// (scaleQ, scaleK, swapQK) checked against the same edit made to the weights
// and loaded as a second model; alignTokens and nextTokenDiff on hand-computed
// cases; Model#counterfactual and its worker twin.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, alignTokens, nextTokenDiff } from '../../web/src/index.js';
import * as workerApi from '../../web/src/worker-client.js';
import { codeOf } from './helpers/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');
const BUILTIN = join(ROOT, 'models/brown-gpt2');
const A_TEXT = 'Because the storm intensified , the ship finally sank .';
const B_TEXT = 'Because the storm weakened , the ship finally sank .';
const read = (f) => new Uint8Array(readFileSync(join(TINY, f)));

function maxAbsDiff(a, b) {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// The tiny fixture's safetensors with one head's W_Q / W_K edited in place
// (Conv1D layout W[in][out]; q columns h·HS.., k columns C + h·HS..).
function editedTiny(layer, head, kind, alpha) {
  const st = read('model.safetensors');
  const dv = new DataView(st.buffer);
  const n = Number(dv.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(st.subarray(8, 8 + n)));
  const t = header[`h.${layer}.attn.c_attn.weight`];
  expect(t.dtype).toBe('F32');
  const [C, C3] = t.shape, HS = C / 4;
  const W = new Float32Array(st.buffer, 8 + n + t.data_offsets[0], C * C3);
  for (let i = 0; i < C; i++)
    for (let d = 0; d < HS; d++) {
      const q = i * C3 + head * HS + d, k = i * C3 + C + head * HS + d;
      if (kind === 'scaleQ') W[q] *= alpha;
      else if (kind === 'scaleK') W[k] *= alpha;
      else [W[q], W[k]] = [W[k], W[q]];
    }
  return { config: read('config.json'), safetensors: st, vocab: read('vocab.json'), merges: read('merges.txt') };
}

describe('weight edits of one head (rung 2)', () => {
  let tiny;
  beforeAll(async () => { tiny = await loadModel(TINY); });
  afterAll(() => tiny.dispose());
  const ids = [31, 7, 250, 1000, 12, 5, 88, 431, 9];

  for (const [kind, layer, head, alpha] of [['scaleQ', 1, 2, 3], ['scaleK', 2, 3, -1.5], ['swapQK', 0, 1, undefined]]) {
    it(`${kind} on L${layer}H${head} equals the model with that edit in its weights`, async () => {
      const edited = await loadModel(editedTiny(layer, head, kind, alpha));
      try {
        const iv = { kind, layer, head, ...(alpha === undefined ? {} : { alpha }) };
        const viaRun = tiny.run(ids, { interventions: [iv] });
        const viaWeights = edited.run(ids);
        expect(maxAbsDiff(viaRun.attentions, viaWeights.attentions)).toBeLessThanOrEqual(2e-6);
        expect(maxAbsDiff(viaRun.logits, viaWeights.logits)).toBeLessThanOrEqual(2e-5);
        const plain = tiny.run(ids);
        expect(maxAbsDiff(plain.attention(layer, head), viaRun.attention(layer, head))).toBeGreaterThan(1e-3);
      } finally {
        edited.dispose();
      }
    });
  }

  it('alpha = 1 changes nothing; head "all" edits every head of the layer', () => {
    const plain = tiny.run(ids);
    const one = tiny.run(ids, { interventions: [{ kind: 'scaleK', layer: 1, head: 'all', alpha: 1 }] });
    expect(maxAbsDiff(plain.attentions, one.attentions)).toBe(0); // skipped: bit for bit
    expect(maxAbsDiff(plain.logits, one.logits)).toBe(0);
    const zero = tiny.run(ids, { interventions: [{ kind: 'scaleK', layer: 1, head: 'all', alpha: 0 }] });
    const T = ids.length;
    for (let h = 0; h < 4; h++) { // keys = bias only: every row uniform over its allowed positions
      const A = zero.attention(1, h);
      for (let i = 0; i < T; i++) expect(A[i * T]).toBeCloseTo(1 / (i + 1), 6);
    }
  });

  it('bad edits get codes', () => {
    const run = (iv) => () => tiny.run(ids, { interventions: [iv] });
    expect(codeOf(run({ kind: 'scaleQ', layer: 0, head: 0, alpha: NaN }))).toBe('ENAN');
    expect(codeOf(run({ kind: 'scaleQ', layer: 0, head: 0 }))).toBe('ETYPE'); // alpha missing
    expect(codeOf(run({ kind: 'scaleK', layer: 3, head: 0, alpha: 1 }))).toBe('ERANGE');
    expect(codeOf(run({ kind: 'swapQK', layer: 0, head: 4 }))).toBe('ERANGE');
    expect(codeOf(run({ kind: 'swapQK', layer: 0, head: 0, row: 1 }))).toBe('EINVAL');
    expect(codeOf(run({ kind: 'hard', layer: 0, head: 0, row: 1, col: 0, alpha: 2 }))).toBe('EINVAL');
    expect(codeOf(run({ kind: 'scale', layer: 0, head: 0, alpha: 2 }))).toBe('EINVAL');
  });
});

describe('alignTokens', () => {
  it('a substitution aligns every position', () => {
    const a = alignTokens([1, 2, 3, 4, 5], [1, 2, 9, 4, 5]);
    expect(a.pairs).toEqual([[0, 0], [1, 1], [2, 2], [3, 3], [4, 4]]);
    expect(a).toMatchObject({ prefix: 2, suffix: 2, changedA: [2, 3], changedB: [2, 3], substituted: true });
  });
  it('an insertion aligns the prefix and the suffix only', () => {
    const a = alignTokens([1, 2, 3, 4], [1, 2, 7, 8, 3, 4]);
    expect(a.pairs).toEqual([[0, 0], [1, 1], [2, 4], [3, 5]]);
    expect(a).toMatchObject({ changedA: [2, 2], changedB: [2, 4], substituted: false });
  });
  it('spans of different lengths stay unaligned; equal sequences align fully; prefix and suffix never overlap', () => {
    expect(alignTokens([1, 5, 6, 9], [1, 7, 9]).pairs).toEqual([[0, 0], [3, 2]]);
    expect(alignTokens([3, 3, 3], [3, 3, 3]).pairs).toEqual([[0, 0], [1, 1], [2, 2]]);
    expect(alignTokens([3, 3], [3, 3, 3])).toMatchObject({ prefix: 2, suffix: 0, pairs: [[0, 0], [1, 1]] });
    expect(alignTokens([], [1]).pairs).toEqual([]);
  });
  it('rejects what is not a sequence', () => {
    expect(codeOf(() => alignTokens('abc', [1]))).toBe('ETYPE');
  });
});

describe('nextTokenDiff', () => {
  it('is zero for equal logits and matches KL and TV computed by hand', () => {
    const z = nextTokenDiff([1, 2, 3], [1, 2, 3]);
    expect(z.kl).toBe(0);
    expect(z.tv).toBe(0);
    // p = (1/2, 1/2), q = (1/(1+e), e/(1+e))
    const d = nextTokenDiff([0, 0], [0, 1]);
    const q0 = 1 / (1 + Math.E), q1 = Math.E / (1 + Math.E);
    expect(d.kl).toBeCloseTo(0.5 * Math.log(0.5 / q0) + 0.5 * Math.log(0.5 / q1), 12);
    expect(d.tv).toBeCloseTo(q1 - 0.5, 12);
    expect(d.top.map((t) => t.id)).toEqual([0, 1]); // |delta| ties: lower id first
    expect(d.top[1].delta).toBeCloseTo(q1 - 0.5, 12);
    expect(codeOf(() => nextTokenDiff([0], [0, 1]))).toBe('ESHAPE');
  });
});

describe('Model#counterfactual on the built-in model', () => {
  let m;
  beforeAll(async () => { m = await loadModel(BUILTIN); });
  afterAll(() => m.dispose());

  it("the chapter's pair: aligned everywhere, diffs equal B − A, KL > 0", () => {
    const c = m.counterfactual(A_TEXT, B_TEXT);
    const T = c.a.T, { nLayer: L, nHead: H } = m.config;
    expect(c.b.T).toBe(T);
    expect(c.alignment.substituted).toBe(true);
    expect(c.aligned.length).toBe(T);
    expect(c.attentionDiff.length).toBe(L * T * T);
    expect(c.headDiff.length).toBe(L * H * T * T);
    for (let l = 0; l < L; l++) {
      const da = c.a.attention(l), db = c.b.attention(l);
      for (let x = 0; x < T * T; x++) expect(c.attentionDiff[l * T * T + x]).toBeCloseTo(db[x] - da[x], 7);
    }
    // before the changed token, causal attention cannot see it: rows < 3 are identical
    const changed = c.alignment.changedA[0];
    for (let i = 0; i < changed; i++)
      for (let j = 0; j < T; j++) expect(Math.abs(c.attentionDiff[(L - 1) * T * T + i * T + j])).toBeLessThan(1e-6);
    expect(c.next.kl).toBeGreaterThan(0);
    expect(c.next.tv).toBeGreaterThan(0);
    expect(c.next.tv).toBeLessThanOrEqual(1);
    const pA = c.next.top.find((t) => t.id === c.a.top[0].id).pA;
    expect(pA).toBeCloseTo(c.a.top[0].prob, 5);
  });

  it('an insertion marks unaligned rows and columns NaN', () => {
    const c = m.counterfactual('the ship sank .', 'the old ship sank .');
    const T = c.a.T, L = m.config.nLayer;
    expect(c.alignment.substituted).toBe(false);
    const D = c.attentionDiff.subarray((L - 1) * T * T, L * T * T);
    // A = [the, ship, sank, .] vs B = [the, old, ship, sank, .]: position 0 is the prefix, 1..3 the suffix
    expect(c.aligned).toEqual([[0, 0], [1, 2], [2, 3], [3, 4]]);
    for (const x of D) expect(Number.isFinite(x)).toBe(true);
    const c2 = m.counterfactual('the old ship sank .', 'the ship sank .');
    const T2 = c2.a.T;
    const D2 = c2.attentionDiff.subarray((L - 1) * T2 * T2, L * T2 * T2);
    for (let j = 0; j < T2; j++) expect(Number.isNaN(D2[1 * T2 + j])).toBe(true); // row of ' old'
    for (let i = 0; i < T2; i++) expect(Number.isNaN(D2[i * T2 + 1])).toBe(true); // its column
    expect(Number.isFinite(D2[4 * T2 + 2])).toBe(true);
  });

  it('the worker gives the same answer, with Results', async () => {
    const wm = await workerApi.loadModel(BUILTIN);
    try {
      const opts = { interventions: [{ kind: 'swapQK', layer: 5, head: 0 }] };
      const [cw, cd] = [await wm.counterfactual(A_TEXT, B_TEXT, opts), m.counterfactual(A_TEXT, B_TEXT, opts)];
      expect(maxAbsDiff(cw.attentionDiff, cd.attentionDiff)).toBe(0);
      expect(cw.next.kl).toBe(cd.next.kl);
      expect(cw.a.attention(5, 0)).toEqual(cd.a.attention(5, 0));
    } finally {
      await wm.dispose();
    }
  });
});
