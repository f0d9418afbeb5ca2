// threads-api.test.js — the threads option of loadModel, in 'attnlab' and 'attnlab/worker' (Node):
// what runs is reported in model.engine; a threaded model's runs, generations and head-importance
// losses are bit for bit the one-thread ones; 'auto' is one thread in Node and says so; bad values
// get their codes; a helper script that cannot load falls back to one thread with the reason.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { loadModel } from '../../web/src/index.js';
import { loadModel as loadInWorker } from '../../web/src/worker-client.js';
import { BACKEND, ST_BUILD, MT_BUILD, backendNoteMatcher } from './helpers/builds.js';
import { codeOfAsync } from './helpers/errors.js';

const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const RUN = { interventions: [{ kind: 'soft', layer: 4, head: 'all', row: 9, col: 2, lambda: 2 }], captureQK: { layer: 1, head: 2 } };
const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

let one, two;
beforeAll(async () => {
  one = await loadModel(undefined, { threads: 1 });
  two = await loadModel(undefined, { threads: 2 });
});
afterAll(() => { one?.dispose(); two?.dispose(); });

describe("loadModel's threads option", () => {
  it('reports what runs in model.engine', () => {
    const backend = { backend: BACKEND, backendNote: backendNoteMatcher(expect) };
    expect(one.engine).toEqual({ threads: 1, asked: 1, build: ST_BUILD, note: null, ...backend });
    expect(two.engine).toEqual({ threads: 2, asked: 2, build: MT_BUILD, note: null, ...backend });
    expect(one.backend).toBe(BACKEND);
    expect(Object.isFrozen(two.engine)).toBe(true);
  });

  it('gives bit for bit the one-thread numbers: run, generate, head importance', () => {
    for (const opts of [{}, RUN]) {
      const a = one.run(CHAPTER, opts), b = two.run(CHAPTER, opts);
      expect(bits(b.attentions)).toEqual(bits(a.attentions));
      expect(bits(b.logits)).toEqual(bits(a.logits));
      expect(b.top).toEqual(a.top);
      if (opts.captureQK) expect(bits(b.q)).toEqual(bits(a.q));
    }
    const g = { maxTokens: 12, temperature: 0.8, topK: 10, seed: 3 };
    expect(Array.from(two.generate(CHAPTER, g).ids)).toEqual(Array.from(one.generate(CHAPTER, g).ids));
    const ha = one.headImportance(CHAPTER), hb = two.headImportance(CHAPTER);
    expect(hb.baseLoss).toBe(ha.baseLoss);
    expect(Array.from(hb.delta)).toEqual(Array.from(ha.delta));
  });

  it("'auto' is one thread in Node, and says so", async () => {
    const m = await loadModel(undefined);
    try {
      expect(m.engine).toMatchObject({ threads: 1, asked: 'auto', build: ST_BUILD });
      expect(m.engine.note).toMatch(/Node/);
    } finally {
      m.dispose();
    }
  });

  it('refuses values that are not a thread count', async () => {
    expect(await codeOfAsync(loadModel(undefined, { threads: 0 }))).toBe('ERANGE');
    expect(await codeOfAsync(loadModel(undefined, { threads: 17 }))).toBe('ERANGE');
    expect(await codeOfAsync(loadModel(undefined, { threads: 2.5 }))).toBe('ERANGE');
    expect(await codeOfAsync(loadModel(undefined, { threads: '2' }))).toBe('ETYPE');
    expect(await codeOfAsync(loadModel(undefined, { threads: 2, wasmMT: 42 }))).toBe('ETYPE');
  });

  it('falls back to one thread, with the reason, when the helpers cannot start', async () => {
    const m = await loadModel(undefined, { threads: 2, threadWorker: 'file:///nonexistent/thread.js' });
    try {
      expect(m.engine).toMatchObject({ threads: 1, asked: 2, build: ST_BUILD });
      expect(m.engine.note).toMatch(/ETHREAD/);
      expect(bits(m.run(CHAPTER).logits)).toEqual(bits(one.run(CHAPTER).logits));
    } finally {
      m.dispose();
    }
  });

  it('stops its helpers on dispose; the model is then disposed', async () => {
    const m = await loadModel(undefined, { threads: 3 });
    expect(m.engine.threads).toBe(3);
    m.dispose();
    expect(m.disposed).toBe(true);
    expect(await codeOfAsync(Promise.resolve().then(() => m.run(CHAPTER)))).toBe('EDISPOSED');
  });
});

describe("attnlab/worker's threads option", () => {
  it('runs the model in its worker on 2 threads, bit for bit', async () => {
    const m = await loadInWorker(undefined, { threads: 2 });
    try {
      expect(m.engine).toEqual({ threads: 2, asked: 2, build: MT_BUILD, backend: BACKEND, note: null, backendNote: backendNoteMatcher(expect) });
      const r = await m.run(CHAPTER, RUN);
      expect(bits(r.attentions)).toEqual(bits(one.run(CHAPTER, RUN).attentions));
    } finally {
      await m.dispose();
    }
  });
});
