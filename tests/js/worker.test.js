// worker.test.js — 'attnlab/worker' in Node (worker_threads): the same API as
// 'attnlab', promise-based, giving the same numbers as the main-thread model;
// progress events and AttnlabError codes cross the boundary; result buffers
// are transferred; buffer sources are copied (or transferred on request);
// dispose() terminates the worker; a model never disposed does not keep Node
// alive; a worker that dies rejects its pending calls.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker as NodeWorker } from 'node:worker_threads';
import * as main from '../../web/src/index.js';
import * as workerApi from '../../web/src/worker-client.js';
import { Result } from '../../web/src/model.js';
import { modelFiles, expectLoadEvents } from './helpers/model-files.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');
const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const { AttnlabError } = workerApi;

const RUN_OPTS = [
  {},
  { captureQK: { layer: 1, head: 2 }, interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 18, col: 3 }] },
  { interventions: [{ kind: 'soft', layer: 2, head: 0, row: 10, col: 8, lambda: -2 }], ablate: [[0, 1]], mask: 'window:4', scale: 0.2, topK: 3 },
  { mask: ['full', { mode: 'window', window: 2 }, 'causal'] },
];

const files = () => modelFiles(TINY);

let local, remote;
const events = [];
beforeAll(async () => {
  local = await main.loadModel(TINY);
  remote = await workerApi.loadModel(TINY, { onProgress: (e) => events.push(e) });
});
afterAll(async () => {
  local.dispose();
  await remote.dispose();
});

describe('the worker-backed model', () => {
  it('has the main-thread model config and source', () => {
    expect(remote.config).toEqual(local.config);
    expect(remote.source).toBe(local.source);
    expect(remote.disposed).toBe(false);
  });

  it('forwards progress events in order, ending with ready', () => {
    expectLoadEvents(events);
    const st = events.filter((e) => e.file === 'model.safetensors' && e.status === 'progress');
    expect(st.at(-1).loaded).toBe(readFileSync(join(TINY, 'model.safetensors')).length);
  });

  it.each(RUN_OPTS.map((o, i) => [i, o]))('run #%i gives exactly the main-thread Result', async (_, opts) => {
    const p = remote.run(CHAPTER, opts);
    expect(p).toBeInstanceOf(Promise);
    const r = await p;
    const l = local.run(CHAPTER, opts);
    expect(r).toBeInstanceOf(Result);
    for (const k of ['ids', 'attentions', 'headAverages', 'logits', 'q', 'k']) {
      expect(r[k]?.constructor).toBe(l[k]?.constructor);
      expect(r[k]).toEqual(l[k]);
    }
    for (const k of ['T', 'tokens', 'top', 'dagScore', 'dagScores', 'layerDagScores', 'nullDagScore', 'captureQK', 'model'])
      expect(r[k]).toEqual(l[k]);
    expect(r.attention(1, 2)).toEqual(l.attention(1, 2));
    expect(r.headAverage(2)).toEqual(l.headAverage(2));
  });

  it('tokenize, decode, generate and memoryUsage return what the main thread returns', async () => {
    expect(await remote.tokenize(CHAPTER)).toEqual(local.tokenize(CHAPTER));
    expect(await remote.decode([100, 200, 300])).toBe(local.decode([100, 200, 300]));
    const o = { maxTokens: 8, temperature: 0.8, topK: 20, seed: 11 };
    expect(await remote.generate(CHAPTER, o)).toEqual(local.generate(CHAPTER, o));
    const u = await remote.memoryUsage();
    expect(u.wasmBytes).toBeGreaterThanOrEqual(16 << 20);
    expect(u.heapBytes).toBeGreaterThan(0);
  });

  it('requests sent together are answered in order', async () => {
    const texts = ['The', 'The ship', CHAPTER, 'storm'];
    const rs = await Promise.all(texts.map((t) => remote.run(t, { topK: 1 })));
    rs.forEach((r, i) => expect(r.logits).toEqual(local.run(texts[i], { topK: 1 }).logits));
  });
});

describe('errors across the boundary', () => {
  const cases = [
    ['an out-of-range layer', 'ERANGE', (m) => m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 3, head: 0, row: 0, col: 0 }] })],
    ['an unknown mask', 'EINVAL', (m) => m.run(CHAPTER, { mask: 'nope' })],
    ['a NaN lambda', 'ENAN', (m) => m.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 0, head: 0, row: 1, col: 0, lambda: NaN }] })],
    ['empty text (from C)', 'EEMPTY', (m) => m.run('')],
    ['too many tokens (from C)', 'ETOOLONG', (m) => m.run(new Array(65).fill(262))],
    ['a number as text', 'ETYPE', (m) => m.tokenize(5)],
    ['a function in the options (not clonable)', 'ETYPE', (m) => m.run(CHAPTER, { mask: () => 'causal' })],
    ['oversized text', 'ELIMIT', (m) => m.tokenize('x'.repeat((1 << 20) + 1))],
  ];
  it.each(cases)('%s rejects with %s, and the model still works', async (_, code, call) => {
    const e = await call(remote).catch((x) => x);
    expect(e).toBeInstanceOf(AttnlabError);
    expect(e.code).toBe(code);
    expect(e.message.length).toBeGreaterThan(5);
    expect((await remote.run(CHAPTER)).logits).toEqual(local.run(CHAPTER).logits);
  });

  it('a C error keeps its rc', async () => {
    const e = await remote.run('').catch((x) => x);
    expect(e.rc).toBe(-12);
  });

  it('load failures reject with the loader code and leave no worker behind', async () => {
    const bad = { ...files(), config: '{"n_layer": 3,' };
    expect((await workerApi.loadModel(bad).catch((x) => x)).code).toBe('EJSON');
    expect((await workerApi.loadModel(join(ROOT, 'no/such/dir')).catch((x) => x)).code).toBe('EIO');
    expect((await workerApi.loadModel(42).catch((x) => x)).code).toBe('ETYPE');
    expect((await workerApi.loadModel(TINY, { nope: 1 }).catch((x) => x)).code).toBe('EINVAL');
    expect((await workerApi.loadModel(TINY, { worker: 5 }).catch((x) => x)).code).toBe('ETYPE');
  });
});

describe('buffers, lifetime', () => {
  it('buffer sources are copied by default and transferred with {transfer: true}', async () => {
    const f = files();
    const m1 = await workerApi.loadModel(f);
    expect(f.safetensors.byteLength).toBeGreaterThan(0); // still ours
    expect((await m1.run(CHAPTER)).logits).toEqual(local.run(CHAPTER).logits);
    await m1.dispose();
    const g = files();
    const m2 = await workerApi.loadModel(g, { transfer: true });
    expect(g.safetensors.byteLength).toBe(0); // detached: moved to the worker
    expect((await m2.run(CHAPTER)).logits).toEqual(local.run(CHAPTER).logits);
    await m2.dispose();
  });

  it('dispose() terminates the worker: later calls reject with EDISPOSED', async () => {
    const m = await workerApi.loadModel(TINY);
    const pending = m.run(CHAPTER);
    await m.dispose();
    await m.dispose();
    expect(m.disposed).toBe(true);
    expect((await pending).T).toBe(19); // sent before dispose: answered first
    for (const call of [() => m.run(CHAPTER), () => m.tokenize('a'), () => m.memoryUsage()])
      expect((await call().catch((x) => x)).code).toBe('EDISPOSED');
  });

  it('a worker you create (worker option) is used, and its death rejects pending calls with EWASM', async () => {
    const w = new NodeWorker(new URL('../../web/src/worker.js', import.meta.url));
    const m = await workerApi.loadModel(TINY, { worker: w });
    expect((await m.run(CHAPTER)).T).toBe(19);
    // The next request is held back from the worker, so it is still pending when the worker dies
    // (a request that reached it could be answered before terminate() lands, which made this racy).
    w.postMessage = () => {};
    const p = m.run(CHAPTER);
    await w.terminate();
    const e = await p.catch((x) => x);
    expect(e).toBeInstanceOf(AttnlabError);
    expect(e.code).toBe('EWASM');
    expect((await m.run(CHAPTER).catch((x) => x)).code).toBe('EWASM');
    await m.dispose();
  });

  it('a model that is never disposed does not keep the Node process alive', () => {
    const script = `
      import { loadModel } from './web/src/worker-client.js';
      const m = await loadModel(${JSON.stringify(TINY)});
      const r = await m.run('Because the storm');
      console.log(r.T);
    `;
    // a process kept alive by the worker would be killed at the timeout: status null, not 0
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe('6'); // tokens of 'Because the storm' in the tiny vocabulary
  });

  it('a relative path is resolved against the working directory, not the worker', async () => {
    const cwd = process.cwd();
    process.chdir(join(ROOT, 'tests'));
    try {
      const m = await workerApi.loadModel('fixtures/tiny');
      expect(m.source).toBe(pathToFileURL(TINY).href + '/');
      await m.dispose();
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('a run while an evidence set computes in the same worker', () => {
  it('is answered between two parts of the set, and neither result changes', async () => {
    const texts = [CHAPTER, 'The rain made the road wet , so the car skidded .', 'She studied hard because the exam was difficult .'];
    const order = [];
    let parts = 0, partsBeforeRun = -1;
    // the run is sent right behind the set, so it waits in the worker's queue while the set's first part
    // computes, whatever the machine's speed (sent from a progress callback instead, a loaded machine could
    // let the worker finish the set before the run arrived)
    const set = remote.edgeKnockoutSet(texts, { layer: 1, head: 'all', onProgress: () => { parts += 1; } })
      .then((v) => { order.push('set'); return v; });
    const run = remote.run(CHAPTER, RUN_OPTS[1]).then((v) => { order.push('run'); partsBeforeRun = parts; return v; });
    const [s, r] = await Promise.all([set, run]);
    expect(order).toEqual(['run', 'set']);
    // answered while the set was unfinished: fewer of its parts reported than it has in all
    expect(parts).toBeGreaterThan(1);
    expect(partsBeforeRun).toBeGreaterThanOrEqual(0);
    expect(partsBeforeRun).toBeLessThan(parts);
    // the same numbers as each computed alone on the main thread
    const want = local.run(CHAPTER, RUN_OPTS[1]);
    expect(Array.from(r.logits)).toEqual(Array.from(want.logits));
    const alone = local.edgeKnockoutSet(texts, { layer: 1, head: 'all' });
    expect(s.local.spearman).toEqual(alone.local.spearman);
    expect(s.perInput.map((p) => Array.from(p.E ?? []))).toEqual(alone.perInput.map((p) => Array.from(p.E ?? [])));
  }, 120_000);
});
