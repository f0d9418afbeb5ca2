// backend.test.js — the relaxed-SIMD build in Chromium (issue 39): Chromium validates relaxed SIMD,
// so 'auto' picks attnlab-relaxed(-mt).wasm in attnlab/worker, on the page's main thread and on the
// chapter page, whose status line names it; where WebAssembly.validate refuses the feature test
// (replaced on the page, as Safari answers) the SIMD128 builds run, and where the relaxed builds
// cannot be fetched the chapter page falls back to them and says "wasm SIMD". Relaxed numbers are
// bit for bit the same on 1 and 2 threads.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/backend.test.js

import { describe, it, expect } from 'vitest';
import { CHAPTER, waitDrawn, useBrowser, threadsPage, threadsCall, refuseRelaxed } from './helpers.js';

const BUILTIN = '/models/brown-gpt2/';
const RUNS = [{}, { interventions: [{ kind: 'hard', layer: 5, head: 'all', row: 9, col: 2 }] }];

const env = useBrowser();

const testPage = (init) => threadsPage(env.browser, env.url, init);
const call = threadsCall;

describe('in Chromium', () => {
  it("'auto' runs the relaxed builds, in attnlab/worker and on the main thread, the same bits on 1 and 2 threads", async () => {
    const W = await testPage();
    try {
      expect(await W.page.evaluate(() => WebAssembly.validate(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1,
        123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 133, 2, 11])))).toBe(true);
      const one = await call(W.page, { api: 'worker', model: BUILTIN, threads: 1, text: CHAPTER, runs: RUNS });
      expect(one.engine).toMatchObject({ backend: 'relaxed-simd', build: 'attnlab-relaxed.wasm', backendNote: null });
      const two = await call(W.page, { api: 'main', model: BUILTIN, threads: 2, text: CHAPTER, runs: RUNS });
      expect(two.engine).toMatchObject({ backend: 'relaxed-simd', build: 'attnlab-relaxed-mt.wasm', threads: 2 });
      expect(two.runs).toEqual(one.runs);
      const plain = await call(W.page, { api: 'worker', model: BUILTIN, threads: 1, backend: 'simd128', text: CHAPTER, runs: RUNS });
      expect(plain.engine).toMatchObject({ backend: 'simd128', build: 'attnlab.wasm' });
      expect(plain.runs[0].top.map((t) => t.id)).toEqual(one.runs[0].top.map((t) => t.id));
      expect(W.errors).toEqual([]);
    } finally {
      await W.context.close();
    }
  }, 120_000);

  it('the chapter page runs the relaxed build and names it in its status line', async () => {
    const context = await env.browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(env.url);
      await page.waitForFunction(() => document.body.dataset.backend !== undefined, null, { timeout: 60_000 });
      await waitDrawn(page);
      expect(await page.evaluate(() => document.body.dataset.backend)).toBe('relaxed-simd');
      expect(await page.textContent('#model-status')).toMatch(/ · wasm relaxed SIMD, \d threads?$/);
    } finally {
      await context.close();
    }
  }, 120_000);
});

describe('where relaxed SIMD does not validate', () => {
  it('the SIMD128 builds run on the main thread, and the model says why', async () => {
    const W = await testPage(refuseRelaxed);
    try {
      const r = await call(W.page, { api: 'main', model: BUILTIN, threads: 2, text: CHAPTER, runs: [{}] });
      expect(r.engine).toMatchObject({ backend: 'simd128', build: 'attnlab-mt.wasm', threads: 2 });
      expect(r.engine.backendNote).toMatch(/does not run relaxed SIMD/);
      expect(W.errors).toEqual([]);
    } finally {
      await W.context.close();
    }
  }, 120_000);

  it('the chapter page, whose relaxed builds cannot be fetched, runs SIMD128 and says "wasm SIMD"', async () => {
    // (the fetch-failure fallback; the feature test's own 'no' inside the page's worker, as Safari gives it, is
    // plain-module.test.js's: Chromium 156 takes no flag that turns relaxed SIMD off)
    const context = await env.browser.newContext({ viewport: { width: 1400, height: 900 } });
    await context.route(/attnlab-relaxed(-mt)?[-.\w]*\.wasm(\?.*)?$/, (route) => route.fulfill({ status: 404, body: 'not here' }));
    const page = await context.newPage();
    try {
      await page.goto(env.url);
      await page.waitForFunction(() => document.body.dataset.backend !== undefined, null, { timeout: 60_000 });
      expect(await page.evaluate(() => document.body.dataset.backend)).toBe('simd128');
      expect(await page.textContent('#model-status')).toMatch(/ · wasm SIMD, \d threads?$/);
    } finally {
      await context.close();
    }
  }, 120_000);
});
