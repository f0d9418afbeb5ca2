// threads.test.js — the multithreaded build in Chromium (issue 8): served cross-origin isolated
// (scripts/serve.mjs's COOP/COEP), a model gets min(cores, 4) threads by default, in attnlab/worker
// and on the page's main thread (where the caller may not block), and its numbers are bit for bit
// the one-thread numbers; served without isolation, the same page falls back to one thread and says
// why; the chapter page itself shows its thread count. Screenshots go to tests/e2e/artifacts/.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/threads.test.js

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';
import { ARTIFACTS, ARGS, CHAPTER, CHROMIUM, buildPageIfStale, waitDrawn, threadsPage, threadsCall } from './helpers.js';

const BUILTIN = '/models/brown-gpt2/';
const RUNS = [{}, { interventions: [{ kind: 'hard', layer: 5, head: 'all', row: 9, col: 2 }], captureQK: { layer: 2, head: 1 } }];

let browser, isolated, plain;
beforeAll(async () => {
  buildPageIfStale();
  mkdirSync(ARTIFACTS, { recursive: true });
  isolated = await startServer({ port: 0 });
  plain = await startServer({ port: 0, isolate: false });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
afterAll(async () => {
  await browser?.close();
  for (const s of [isolated, plain]) if (s) await new Promise((r) => s.server.close(r));
});

const testPage = (server) => threadsPage(browser, server.url);
const call = threadsCall;

describe('on a cross-origin isolated page', () => {
  let W, one;
  beforeAll(async () => {
    W = await testPage(isolated);
    one = await call(W.page, { api: 'worker', model: BUILTIN, threads: 1, text: CHAPTER, runs: RUNS });
  }, 120_000);
  afterAll(async () => { await W?.context.close(); });

  it('is isolated, and one thread is asked for, one thread runs', () => {
    expect(one.isolated).toBe(true);
    // Chromium runs relaxed SIMD: 'auto' picks the relaxed builds (tests/e2e/backend.test.js)
    expect(one.engine).toEqual({ threads: 1, asked: 1, build: 'attnlab-relaxed.wasm', backend: 'relaxed-simd', note: null, backendNote: null });
  });

  it("'auto' runs min(cores, 4) threads in attnlab/worker, bit for bit the one-thread numbers", async () => {
    const auto = await call(W.page, { api: 'worker', model: BUILTIN, text: CHAPTER, runs: RUNS });
    const want = Math.min(auto.cores, 4);
    expect(auto.engine.threads).toBe(want);
    expect(auto.engine.build).toBe(want > 1 ? 'attnlab-relaxed-mt.wasm' : 'attnlab-relaxed.wasm');
    expect(auto.runs).toEqual(one.runs); // float bits, every attention and logit
  }, 120_000);

  it('3 threads on the main thread of the page (a caller that may not block) give the same bits', async () => {
    const main = await call(W.page, { api: 'main', model: BUILTIN, threads: 3, text: CHAPTER, runs: RUNS });
    expect(main.engine).toEqual({ threads: 3, asked: 3, build: 'attnlab-relaxed-mt.wasm', backend: 'relaxed-simd', note: null, backendNote: null });
    expect(main.runs).toEqual(one.runs);
  }, 120_000);

  it('logs no error', () => { expect(W.errors).toEqual([]); });
});

describe('on a page without isolation', () => {
  it("falls back to one thread, for 'auto' and for threads: 2, and says why", async () => {
    const W = await testPage(plain);
    try {
      const auto = await call(W.page, { api: 'worker', model: BUILTIN, text: CHAPTER, runs: [{}] });
      expect(auto.isolated).toBe(false);
      expect(auto.engine.threads).toBe(1);
      expect(auto.engine.build).toBe('attnlab-relaxed.wasm');
      expect(auto.engine.note).toMatch(/not cross-origin isolated/);
      const two = await call(W.page, { api: 'main', model: BUILTIN, threads: 2, text: CHAPTER, runs: [{}] });
      expect(two.engine).toMatchObject({ threads: 1, asked: 2, build: 'attnlab-relaxed.wasm' });
      expect(two.engine.note).toMatch(/not cross-origin isolated/);
      expect(two.runs[0].logits).toEqual(auto.runs[0].logits);
      expect(W.errors).toEqual([]);
    } finally {
      await W.context.close();
    }
  }, 120_000);
});

describe('the chapter page', () => {
  for (const [name, server, threads] of [['isolated', () => isolated, null], ['not isolated', () => plain, 1]]) {
    it(`shows the threads it runs on (${name})`, async () => {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      try {
        await page.goto(server().url);
        await page.waitForFunction(() => document.body.dataset.threads !== undefined, null, { timeout: 60_000 });
        await waitDrawn(page);
        const cores = await page.evaluate(() => navigator.hardwareConcurrency);
        const n = threads ?? Math.min(cores, 4);
        expect(await page.evaluate(() => document.body.dataset.threads)).toBe(String(n));
        const status = await page.textContent('#model-status');
        expect(status).toContain(n === 1 ? '1 thread' : `${n} threads`);
        if (n === 1 && name === 'not isolated') expect(await page.getAttribute('#model-status', 'title')).toMatch(/cross-origin isolated/);
        await page.screenshot({ path: join(ARTIFACTS, `threads-page-${name.replace(' ', '-')}.png`) });
      } finally {
        await context.close();
      }
    }, 120_000);
  }
});
