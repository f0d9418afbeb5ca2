// evidence.test.js — does attention explain? Model#edgeKnockout, #tokenKnockout,
// #ablationSemantics and #activationPatching (web/src/evidence.js over
// c/src/evidence.c) against the float64 reference's numbers in
// tests/fixtures/evidence_golden.json (the tiny GPT-2, and Mistral and Gemma 3 with their sliding windows), in
// Node and through attnlab/worker, with
// progress, cancellation and every refused input.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import * as workerApi from '../../web/src/worker-client.js';
import { maxAbsDiff } from './helpers/compare.js';
import { codeOf } from './helpers/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');
const G = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/evidence_golden.json'), 'utf8'));
const TOL = 1e-4;

// the golden marks "no such pair" with -1, the API with NaN
function pairsDiff(got, want) {
  let m = 0;
  for (let i = 0; i < want.length; i++) {
    if (want[i] === -1) { if (!Number.isNaN(got[i])) return Infinity; continue; }
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= m)) m = d;
  }
  return m;
}

let m;
beforeAll(async () => { m = await loadModel(TINY); });
afterAll(() => m.dispose());

describe('edge knockout', () => {
  for (const c of G.edge) {
    it(`layer ${c.layer}, head ${c.head === -1 ? 'all' : c.head}: A, E and E_last as the reference`, () => {
      const progress = [];
      const r = m.edgeKnockout(G.ids, { layer: c.layer, head: c.head === -1 ? 'all' : c.head, onProgress: (e) => progress.push(e) });
      expect(maxAbsDiff(r.A, c.A)).toBeLessThan(TOL);
      expect(pairsDiff(r.E, c.E)).toBeLessThan(TOL);
      expect(pairsDiff(r.ELast, c.E_last)).toBeLessThan(TOL);
      expect(r.pairs).toBe((G.ids.length * (G.ids.length + 1)) / 2);
      expect(Math.abs(r.spearman - c.spearman)).toBeLessThan(1e-3);
      expect(Math.abs(r.kendall - c.kendall)).toBeLessThan(1e-3);
      expect(r.topKOverlap).toBeCloseTo(c.top_k_overlap, 9);
      c.row_spearman.forEach((x, i) => {
        if (x === null) { expect(r.rows[i]).toBeNull(); expect(r.rowsKendall[i]).toBeNull(); }
        else expect(Math.abs(r.rows[i] - x)).toBeLessThan(1e-3);
      });
      expect(r.rowsKendall.length).toBe(G.ids.length);
      // parts of 4 rows: progress after each part but the last, increasing
      expect(progress.length).toBe(Math.ceil(G.ids.length / 4) - 1);
      progress.forEach((e, i) => { expect(e.total).toBe(r.pairs); if (i) expect(e.done).toBeGreaterThan(progress[i - 1].done); });
    });
  }
});

describe('token knockout and the three readings', () => {
  it('effects, last-layer average, rollout and flow as the reference', () => {
    const r = m.tokenKnockout(G.ids);
    expect(maxAbsDiff(r.effect, G.token.effect)).toBeLessThan(TOL);
    for (const [mine, theirs] of [['lastLayer', 'last_layer'], ['rollout', 'rollout'], ['flow', 'flow']]) {
      expect(maxAbsDiff(r.readings[mine], G.token.readings[theirs])).toBeLessThan(TOL);
      expect(Math.abs(r.spearman[mine] - G.token.spearman[theirs])).toBeLessThan(1e-3);
      expect(Math.abs(r.kendall[mine] - G.token.kendall[theirs])).toBeLessThan(1e-3);
    }
  });
});

describe('three ablation semantics', () => {
  it('zero, mean and resample importance and pruning as the reference, with their agreement', () => {
    const a = G.ablation;
    const r = m.ablationSemantics(G.ids, { reference: a.reference_mean_ids, resample: a.reference_resample_ids });
    for (const mode of ['zero', 'mean', 'resample']) {
      expect(Math.abs(r[mode].baseLoss - a.base_loss)).toBeLessThan(TOL);
      expect(maxAbsDiff(r[mode].delta, a[mode].delta)).toBeLessThan(TOL);
      expect(maxAbsDiff(r[mode].pruning, a[mode].pruning)).toBeLessThan(TOL);
      expect(Array.from(r[mode].order)).toEqual(a[mode].order);
    }
    expect(Math.abs(r.agreement['zero-mean'].spearman - a.spearman_zero_mean)).toBeLessThan(1e-3);
    expect(Math.abs(r.agreement['zero-resample'].kendall - a.kendall_zero_resample)).toBeLessThan(1e-3);
    expect(Math.abs(r.agreement['mean-resample'].spearman - a.spearman_mean_resample)).toBeLessThan(1e-3);
  });
  it('zero ablation is headImportance bit for bit', () => {
    const r = m.ablationSemantics(G.ids);
    const h = m.headImportance(G.ids, { pruning: true });
    expect(Array.from(r.zero.delta)).toEqual(Array.from(h.delta));
    expect(Array.from(r.zero.pruning)).toEqual(Array.from(h.pruning));
  });
});

describe('activation patching', () => {
  it('residual and head grids as the reference', () => {
    const p = G.patching;
    const r = m.activationPatching(p.clean_ids, p.corrupt_ids, { answers: [p.answer_clean, p.answer_corrupt] });
    expect(Math.abs(r.ldClean - p.ld_clean)).toBeLessThan(1e-3);
    expect(Math.abs(r.ldCorrupt - p.ld_corrupt)).toBeLessThan(1e-3);
    expect(maxAbsDiff(r.resid, p.resid)).toBeLessThan(TOL);
    expect(maxAbsDiff(r.heads, p.heads)).toBeLessThan(TOL);
  });
});

// The sliding-window families (tests/ref/gen_evidence.py over circuits_ref.run): Mistral (window 4 on both
// layers) and Gemma 3 (window 4 on layer 0, post-normed sublayers), T = 10. The rank statistics are not compared:
// a key outside a sliding row's window has no weight and a knockout effect at rounding level (about 1e-13), so
// those pairs rank by rounding noise in float32 and in float64 alike.
describe.each((G.families ?? []).map((f) => [f.name, f]))('the float64 reference on %s', (name, f) => {
  let fm;
  const seen = { max: 0 };
  const check = (d) => { expect(d).toBeLessThan(TOL); seen.max = Math.max(seen.max, d); };
  beforeAll(async () => { fm = await loadModel(join(ROOT, f.dir)); });
  afterAll(() => {
    console.log(`evidence in wasm, ${name}: max diff from the float64 reference ${seen.max.toExponential(2)}`);
    fm.dispose();
  });

  it('its own masks, as config.json gives them', () => {
    expect(fm.config.family).toBe(f.model_type);
    expect(fm.config.layerMasks).toEqual(f.windows.map((W) => (W ? `window:${W}` : 'causal')));
  });

  it('edge knockouts, renormalised and not', () => {
    const T = f.ids.length;
    for (const c of f.edge) {
      const r = fm.edgeKnockout(f.ids, { layer: c.layer, head: c.head === -1 ? 'all' : c.head });
      check(maxAbsDiff(r.A, c.A));
      check(pairsDiff(r.E, c.E));
      check(pairsDiff(r.ELast, c.E_last));
      const W = f.windows[c.layer];
      for (let i = 0; i < T; i++)
        for (let j = 0; W && j <= i - W; j++) { expect(r.A[i * T + j]).toBe(0); expect(r.E[i * T + j]).toBeNaN(); }
      // outside the window is no pair, so the statistics rank real effects only, and equal the reference's
      const outside = W ? ((T - W) * (T - W + 1)) / 2 : 0;
      expect(r.pairs).toBe((T * (T + 1)) / 2 - outside);
      expect(Math.abs(r.spearman - c.spearman)).toBeLessThan(1e-4);
      expect(Math.abs(r.kendall - c.kendall)).toBeLessThan(1e-4);
      expect(Math.abs(r.topKOverlap - c.top_k_overlap)).toBeLessThan(1e-9);
      r.rows.forEach((x, i) => (c.row_spearman[i] === null ? expect(x).toBeNull() : expect(Math.abs(x - c.row_spearman[i])).toBeLessThan(1e-4)));
    }
    const z = f.edge_zero;
    const r = fm.edgeKnockout(f.ids, { layer: z.layer, head: z.head, knockout: 'zero' });
    check(pairsDiff(r.E, z.E));
    check(pairsDiff(r.ELast, z.E_last));
  });

  it('token knockouts in the four modes, and the three readings', () => {
    const r = fm.tokenKnockout(f.ids);
    check(maxAbsDiff(r.effect, f.token.effect));
    for (const [mine, theirs] of [['lastLayer', 'last_layer'], ['rollout', 'rollout'], ['flow', 'flow']])
      check(maxAbsDiff(r.readings[mine], f.token.readings[theirs]));
    const modes = { column_zero: { knockout: 'zero' }, delete: { mode: 'delete' }, replace: { mode: 'replace', neutral: f.token_modes.neutral } };
    for (const [k, opts] of Object.entries(modes)) check(maxAbsDiff(fm.tokenKnockout(f.ids, opts).effect, f.token_modes[k]));
  });

  it('zero, mean and resample ablation with their pruning curves', () => {
    const a = f.ablation;
    const r = fm.ablationSemantics(f.ids, { reference: a.reference_mean_ids, resample: a.reference_resample_ids });
    for (const mode of ['zero', 'mean', 'resample']) {
      check(Math.abs(r[mode].baseLoss - a.base_loss));
      check(maxAbsDiff(r[mode].delta, a[mode].delta));
      check(maxAbsDiff(r[mode].pruning, a[mode].pruning));
    }
  });

  it('activation patching: the residual and head grids', () => {
    const p = f.patching;
    const r = fm.activationPatching(p.clean_ids, p.corrupt_ids, { answers: [p.answer_clean, p.answer_corrupt] });
    check(Math.abs(r.ldClean - p.ld_clean));
    check(Math.abs(r.ldCorrupt - p.ld_corrupt));
    check(maxAbsDiff(r.resid, p.resid));
    check(maxAbsDiff(r.heads, p.heads));
  });
});

describe('cancellation', () => {
  it('an aborted signal stops a grid between parts with EABORT, and the model runs on', () => {
    const ac = new AbortController();
    let parts = 0;
    const code = codeOf(() => m.edgeKnockout(G.ids, { layer: 1, head: 0, onProgress: () => { parts++; ac.abort(); }, signal: ac.signal }));
    expect(code).toBe('EABORT');
    expect(parts).toBe(1);
    expect(m.run(G.ids).T).toBe(G.ids.length);
    const r = m.edgeKnockout(G.ids, { layer: 1, head: 2 });
    expect(maxAbsDiff(r.A, G.edge[0].A)).toBeLessThan(TOL);
  });
});

describe('refused inputs', () => {
  const p = G.patching;
  const cases = [
    ['T = 1 (edge)', 'EEMPTY', () => m.edgeKnockout([5])],
    ['T = 1 (tokens)', 'EEMPTY', () => m.tokenKnockout([5])],
    ['T = 1 (ablation)', 'EEMPTY', () => m.ablationSemantics([5])],
    ['T = 1 (patching)', 'EEMPTY', () => m.activationPatching([5], [6])],
    ['layer out of range', 'ERANGE', () => m.edgeKnockout(G.ids, { layer: 3 })],
    ['head out of range', 'ERANGE', () => m.edgeKnockout(G.ids, { layer: 0, head: 4 })],
    ['topK 0', 'ERANGE', () => m.edgeKnockout(G.ids, { topK: 0 })],
    ['unknown option', 'EINVAL', () => m.tokenKnockout(G.ids, { layer: 1 })],
    ['onProgress not a function', 'ETYPE', () => m.tokenKnockout(G.ids, { onProgress: 3 })],
    ['signal not a signal', 'ETYPE', () => m.tokenKnockout(G.ids, { signal: {} })],
    ['empty reference text', 'EEMPTY', () => m.ablationSemantics(G.ids, { reference: '' })],
    ['resample shorter than the input', 'ETOOLONG', () => m.ablationSemantics(G.ids, { resample: G.ids.slice(0, 3) })],
    ['unequal lengths', 'EINVAL', () => m.activationPatching(p.clean_ids, p.corrupt_ids.slice(1))],
    ['answer of two tokens', 'EINVAL', () => m.activationPatching(p.clean_ids, p.corrupt_ids, { answers: [' storm sank', 5] })],
    ['answer id outside the vocabulary', 'ERANGE', () => m.activationPatching(p.clean_ids, p.corrupt_ids, { answers: [5, 1e6] })],
    ['the same answer twice', 'EINVAL', () => m.activationPatching(p.clean_ids, p.corrupt_ids, { answers: [5, 5] })],
    ['identical runs', 'EINVAL', () => m.activationPatching(p.clean_ids, p.clean_ids, { answers: [5, 6] })],
    ['answers not a pair', 'ETYPE', () => m.activationPatching(p.clean_ids, p.corrupt_ids, { answers: 5 })],
  ];
  for (const [name, code, f] of cases) it(`${name}: ${code}`, () => expect(codeOf(f)).toBe(code));
  it('the unequal-lengths message names both lengths', () => {
    try { m.activationPatching(p.clean_ids, p.corrupt_ids.slice(1)); } catch (e) {
      expect(e.message).toContain(String(p.clean_ids.length));
      expect(e.message).toContain(String(p.corrupt_ids.length - 1));
    }
  });
});

describe('through attnlab/worker', () => {
  it('the same numbers as in Node, progress events, and cancel with EABORT', async () => {
    const wm = await workerApi.loadModel(TINY);
    try {
      const events = [];
      const e = await wm.edgeKnockout(G.ids, { layer: 2, head: 'all', onProgress: (x) => events.push(x) });
      const local = m.edgeKnockout(G.ids, { layer: 2, head: 'all' });
      expect(Array.from(e.E).map(String)).toEqual(Array.from(local.E).map(String)); // NaN-aware, bit for bit
      expect(events.length).toBeGreaterThan(0);
      const t = await wm.tokenKnockout(G.ids);
      expect(Array.from(t.effect)).toEqual(Array.from(m.tokenKnockout(G.ids).effect));
      const pp = G.patching;
      const pw = await wm.activationPatching(pp.clean_ids, pp.corrupt_ids, { answers: [pp.answer_clean, pp.answer_corrupt] });
      expect(maxAbsDiff(pw.heads, pp.heads)).toBeLessThan(TOL);
      const ac = new AbortController();
      const pending = wm.ablationSemantics(G.ids, { onProgress: () => ac.abort(), signal: ac.signal });
      await expect(pending).rejects.toMatchObject({ code: 'EABORT' });
      const again = await wm.ablationSemantics(G.ids, { reference: G.ablation.reference_mean_ids, resample: G.ablation.reference_resample_ids });
      expect(maxAbsDiff(again.mean.delta, G.ablation.mean.delta)).toBeLessThan(TOL);
      await expect(wm.edgeKnockout([5])).rejects.toMatchObject({ code: 'EEMPTY' });
      const pre = new AbortController();
      pre.abort();
      await expect(wm.tokenKnockout(G.ids, { signal: pre.signal })).rejects.toMatchObject({ code: 'EABORT' });
    } finally {
      await wm.dispose();
    }
  });
});

describe('the CLI: attnlab evidence', () => {
  const CLI = join(ROOT, 'build/attnlab');
  const cli = (...args) => spawnSync(CLI, ['evidence', '--model', TINY, ...args], { encoding: 'utf8' });
  const PREFIX = 'Because the storm intensified , the'; // the golden ids under the tiny tokenizer

  it('edge knockout: the same matrices and correlation as the reference', () => {
    const r = cli('--kind', 'edge', '--layer', '1', '--head', '2', '--text', PREFIX);
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.ids).toEqual(G.ids);
    const c = G.edge[0];
    expect(maxAbsDiff(j.A, c.A)).toBeLessThan(TOL);
    expect(pairsDiff(j.E.map((x) => (x === null ? NaN : x)), c.E)).toBeLessThan(TOL);
    expect(Math.abs(j.A_vs_E.spearman - c.spearman)).toBeLessThan(1e-3);
  });
  it('token knockout and ablation: the reference\'s effects and rankings', () => {
    const t = JSON.parse(cli('--kind', 'tokens', '--text', PREFIX).stdout);
    expect(maxAbsDiff(t.effect, G.token.effect)).toBeLessThan(TOL);
    expect(Math.abs(t.flow.spearman - G.token.spearman.flow)).toBeLessThan(1e-3);
    const a = JSON.parse(cli('--kind', 'ablation', '--text', PREFIX).stdout);
    expect(maxAbsDiff(a.zero.delta, G.ablation.zero.delta)).toBeLessThan(TOL);
  });
  it('patching: equal lengths required, named in the message; bad flags refused with exit 2', () => {
    const r = cli('--kind', 'patch', '--text', 'The cat saw the dog, and the dog', '--corrupt', 'The cat saw the dog, and the');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/13 tokens.*11/);
    const ok = cli('--kind', 'patch', '--text', 'The cat saw the dog, and the dog', '--corrupt', 'The cat saw the dog, and the cat',
      '--answers', `${G.patching.answer_clean},${G.patching.answer_corrupt}`);
    expect(ok.status).toBe(0);
    expect(maxAbsDiff(JSON.parse(ok.stdout).heads, G.patching.heads)).toBeLessThan(TOL);
    expect(cli('--text', PREFIX).status).toBe(2);                                  // no --kind
    expect(cli('--kind', 'edges', '--text', PREFIX).status).toBe(2);               // unknown kind
    expect(cli('--kind', 'edge', '--head', '1x', '--text', PREFIX).status).toBe(2);
    expect(cli('--kind', 'patch', '--answers', '1,', '--corrupt', 'x', '--text', PREFIX).status).toBe(2);
    const far = cli('--kind', 'edge', '--layer', '7', '--text', PREFIX);            // past the model's 3 layers
    expect(far.status).not.toBe(0);
    expect(far.stdout).toBe('');
    expect(far.stderr).toMatch(/ERANGE|out of range|outside/i);
  });
});

describe('dispose() inside onProgress', () => {
  it('ends every stepwise computation with EDISPOSED, never a TypeError or a trap, and frees once', async () => {
    const text = G.ids;
    const calls = [
      (m, cb) => m.edgeKnockout(text, { layer: 1, head: 2, onProgress: cb }),
      (m, cb) => m.tokenKnockout(text, { onProgress: cb }),
      (m, cb) => m.ablationSemantics(text, { reference: G.ablation.reference_mean_ids, draws: 2, onProgress: cb }),
      (m, cb) => m.edgeKnockoutSet([text, text], { layer: 1, head: 2, nBoot: 10, nPerm: 10, onProgress: cb }),
      (m, cb) => m.patternValueSet([[text, text.map((x, i) => (i === 3 ? (x + 7) % 1257 : x)), [5, 6]]], { onProgress: cb }),
    ];
    for (const call of calls) {
      const d = await loadModel(TINY);
      expect(codeOf(() => call(d, () => d.dispose()))).toBe('EDISPOSED');
      expect(() => d.dispose()).not.toThrow(); // a second dispose is a no-op
      expect(codeOf(() => d.run(text))).toBe('EDISPOSED');
    }
  });
});

describe('pause points inside a stepwise computation', async () => {
  const { asPauses, runSteps, runStepsAsync } = await import('../../web/src/evidence.js');
  function* inner(log) {
    try {
      log.push('a'); yield { done: 1, total: 2 };
      log.push('b'); yield { done: 2, total: 2 };
      return 'inner';
    } finally { log.push('inner closed'); }
  }
  function* outer(log) {
    const v = yield* asPauses(inner(log));
    yield { done: 1, total: 1 };
    return `${v} then outer`;
  }
  it('the inner parts are pauses without progress; the result comes through; progress only from the outer', async () => {
    const log = [], seen = [];
    expect(runSteps(outer(log), { onProgress: (p) => seen.push(p) })).toBe('inner then outer');
    expect(seen).toEqual([{ done: 1, total: 1 }]);
    let pauses = 0;
    const seen2 = [];
    expect(await runStepsAsync(outer([]), { onProgress: (p) => seen2.push(p), cancelled: () => false, pause: async () => { pauses += 1; } }))
      .toBe('inner then outer');
    expect([pauses, seen2.length]).toEqual([3, 1]);
  });
  it('an outer computation abandoned in an inner pause closes the inner one (its memory is freed)', () => {
    const log = [];
    const ac = new AbortController();
    expect(() => runSteps(outer(log), { signal: ac.signal, onProgress: () => {} , alive: () => { if (log.length === 1) ac.abort(); return true; } })).toThrow();
    expect(log).toContain('inner closed');
  });
});
