// heads-work.test.js — how the Heads panel shares the worker (web/src/page/heads-work.js):
// the importance grid and the DAG profile computed as short calls equal the API's one-call
// results exactly, and the Lane runs one call at a time and none while the foreground is busy.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { Lane, importanceInSteps, importanceRuns, dagInSteps } from '../../web/src/page/heads-work.js';
import { DEFAULT_IMP_TEXT, DEFAULT_DAG } from '../../web/src/page/heads.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MODELS = [['tiny', join(ROOT, 'tests/fixtures/tiny')], ['built-in', join(ROOT, 'models/brown-gpt2')]]
  .filter(([, dir]) => existsSync(join(dir, 'model.safetensors')));

for (const [name, dir] of MODELS) {
  describe(`in steps equals in one call (${name} model)`, () => {
    let m;
    beforeAll(async () => { m = await loadModel(dir); });
    afterAll(() => m.dispose());

    it('importanceInSteps: base loss, Δ, order and pruning curve bit for bit as headImportance', async () => {
      const ids = m.tokenize(DEFAULT_IMP_TEXT).ids.slice(0, Math.min(60, m.config.nPositions));
      const { nLayer, nHead } = m.config;
      const seen = [];
      const calls = [];
      const got = await importanceInSteps(async (ablate) => {
        calls.push(ablate);
        return m.tokenLosses(ids, ablate.length ? { ablate } : undefined).mean;
      }, { nLayer, nHead, T: ids.length, onStep: (k, n) => seen.push([k, n]) });
      const want = m.headImportance(ids);
      expect(got.baseLoss).toBe(want.baseLoss);
      expect(Array.from(got.delta)).toEqual(Array.from(want.delta));
      expect(Array.from(got.order)).toEqual(Array.from(want.order));
      expect(Array.from(got.pruning)).toEqual(Array.from(want.pruning));
      expect(got.lossAtHalf).toBe(want.lossAtHalf);
      expect(got.T).toBe(want.T);
      // one forward per call: the base run, each head alone, then 1 … L·H heads together
      const n = importanceRuns(nLayer, nHead);
      expect(n).toBe(2 * nLayer * nHead + 1);
      expect(calls.length).toBe(n);
      expect(calls[0]).toEqual([]);
      expect(calls.slice(1, 1 + nLayer * nHead).every((a) => a.length === 1)).toBe(true);
      expect(calls.at(-1).length).toBe(nLayer * nHead);
      expect(seen).toEqual(Array.from({ length: n }, (_, k) => [k + 1, n]));
    });

    it('dagInSteps: the means of dagProfile over the list, bit for bit', async () => {
      const { nLayer, nHead } = m.config;
      for (const mask of ['causal', 'full']) {
        const got = await dagInSteps(async (x) => m.dagProfile(x, { mask }), DEFAULT_DAG, { mask, nLayer, nHead });
        const want = m.dagProfile(DEFAULT_DAG, { mask });
        expect(got.mean.overall).toBe(want.mean.overall);
        expect(got.mean.null).toBe(want.mean.null);
        expect(Array.from(got.mean.head)).toEqual(Array.from(want.mean.head));
        expect(Array.from(got.mean.layer)).toEqual(Array.from(want.mean.layer));
        expect(got.sentences.map((s) => s.T)).toEqual(want.sentences.map((s) => s.T));
      }
    });
  });
}

describe('Lane', () => {
  it('runs calls one at a time, in order', async () => {
    const lane = new Lane();
    const log = [];
    let inFlight = 0, most = 0;
    const job = (k) => lane.run(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      log.push(k);
      inFlight -= 1;
      return k;
    });
    expect(await Promise.all([job(1), job(2), job(3)])).toEqual([1, 2, 3]);
    expect(log).toEqual([1, 2, 3]);
    expect(most).toBe(1);
    expect(lane.started).toBe(3);
  });

  it('starts no call while the foreground is busy, and resumes when it is idle', async () => {
    let busy = true;
    const wakers = new Set();
    const lane = new Lane({ busy: () => busy, subscribe: (w) => { wakers.add(w); return () => wakers.delete(w); } });
    const log = [];
    let waited = 0;
    const p = lane.run(async () => { log.push('panel'); }, { onWait: () => { waited += 1; } });
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual([]);              // held back
    expect(waited).toBe(1);
    for (const w of wakers) w();          // a change that leaves it busy: still held
    await new Promise((r) => setTimeout(r, 5));
    expect(log).toEqual([]);
    busy = false;
    for (const w of [...wakers]) w();
    await p;
    expect(log).toEqual(['panel']);
    expect(wakers.size).toBe(0);          // unsubscribed
  });

  it('a call whose owner moved on is skipped (ESTALE), and the lane goes on', async () => {
    const lane = new Lane();
    let ran = false;
    await expect(lane.run(async () => { ran = true; }, { alive: () => false })).rejects.toMatchObject({ code: 'ESTALE' });
    expect(ran).toBe(false);
    expect(await lane.run(async () => 7)).toBe(7);
  });
});
