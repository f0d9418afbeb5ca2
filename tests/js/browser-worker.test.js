// browser-worker.test.js — 'attnlab/worker' in a real headless Chromium: a page
// (tests/e2e/pages/worker.html) served by scripts/serve.mjs loads the tiny
// fixture in a module Web Worker, under the page's Content-Security-Policy,
// from a URL and from File objects, and returns numbers that must equal the
// Node main-thread results to 1e-6; errors cross with their codes.
//
// Needs /usr/bin/chromium (Debian package chromium) and playwright-core.
// serve.mjs serves web/ at /, tests/fixtures/ at /tests/fixtures/; if it does
// not serve tests/e2e/ (yet), the two page files are routed from disk with the
// server's CSP header, so the page, the worker, the wasm and the model are
// subject to the same policy either way.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer, CSP } from '../../scripts/serve.mjs';
import { loadModel } from '../../web/src/index.js';
import { BACKEND } from './helpers/builds.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
              '--disable-component-update', '--disable-sync', '--no-first-run'];
const RUNS = [
  { captureQK: { layer: 1, head: 2 } },
  { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 18, col: 3 }, { kind: 'soft', layer: 2, head: 1, row: 9, col: 6, lambda: 3 }],
    ablate: [[0, 2]], mask: 'window:5', scale: 0.3, captureQK: { layer: 2, head: 3 } },
  { mask: ['full', 'causal', { mode: 'window', window: 2 }] },
];
const ERRORS = [
  [{ interventions: [{ kind: 'hard', layer: 9, head: 0, row: 0, col: 0 }] }, 'ERANGE'],
  [{ mask: 'sideways' }, 'EINVAL'],
  [{ scale: NaN }, 'ENAN'],
  [{ topK: '3' }, 'ETYPE'],
];

let server, url, browser, page, local;
const pageErrors = [];

beforeAll(async () => {
  ({ server, url } = await startServer({ port: 0 }));
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ARGS });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const served = (await page.request.get(new URL('tests/e2e/pages/worker.html', url).href)).status() === 200;
  if (!served) {
    await page.route('**/tests/e2e/pages/*', (route) => {
      const path = new URL(route.request().url()).pathname;
      const name = path.split('/').pop();
      if (!['worker.html', 'worker.js'].includes(name)) return route.fulfill({ status: 404, body: 'not found' });
      route.fulfill({
        status: 200,
        headers: { 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff',
                   'Content-Type': name.endsWith('.html') ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8' },
        body: readFileSync(join(ROOT, 'tests/e2e/pages', name)),
      });
    });
  }
  await page.goto(new URL('tests/e2e/pages/worker.html', url).href);
  await page.waitForFunction(() => window.attnlabReady === true, null, { timeout: 30_000 });
  local = await loadModel(join(ROOT, 'tests/fixtures/tiny'));
}, 120_000);

afterAll(async () => {
  if (local) local.dispose();
  if (browser) await browser.close();
  if (server) await new Promise((r) => server.close(r));
});

function maxAbsDiff(a, b) {
  if (!a || !b || a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

function compare(got, want) {
  expect(got.T).toBe(want.T);
  expect(got.ids).toEqual(Array.from(want.ids));
  expect(got.tokens).toEqual(want.tokens);
  expect(got.isFloat32).toBe(true);
  for (const k of ['attentions', 'headAverages', 'logits'])
    expect(maxAbsDiff(got[k], want[k]), k).toBeLessThanOrEqual(1e-6);
  if (want.q) {
    expect(maxAbsDiff(got.q, want.q)).toBeLessThanOrEqual(1e-6);
    expect(maxAbsDiff(got.k, want.k)).toBeLessThanOrEqual(1e-6);
  } else {
    expect(got.q).toBeNull();
  }
  expect(Math.abs(got.dagScore - want.dagScore)).toBeLessThanOrEqual(1e-6);
  expect(maxAbsDiff(got.dagScores.flat(), want.dagScores.flat())).toBeLessThanOrEqual(1e-6);
  expect(got.nullDagScore).toBe(want.nullDagScore);
  expect(Math.abs(got.lastAvgDag - want.dagScore)).toBeLessThanOrEqual(1e-6);
  expect(got.top.map((t) => t.id)).toEqual(want.top.map((t) => t.id));
  expect(maxAbsDiff(got.top.map((t) => t.prob), want.top.map((t) => t.prob))).toBeLessThanOrEqual(1e-6);
}

// the page runs the kernels this Node process runs (Chromium could run either), so the numbers compare at 1e-6;
// the relaxed project (tests/js/vitest.relaxed.config.js) compares the relaxed builds
const inPage = (spec) => page.evaluate((s) => window.attnlabTest(s), { backend: BACKEND, ...spec });

describe('attnlab/worker in headless Chromium', () => {
  it('loads the tiny model from a URL in a module worker and matches Node to 1e-6', async () => {
    const out = await inPage({ model: '/tests/fixtures/tiny/', text: CHAPTER, runs: RUNS, errors: ERRORS.map(([o]) => o) });
    expect(out.config).toEqual(local.config);
    expect(out.engine.backend).toBe(BACKEND);
    expect(local.backend).toBe(BACKEND);
    RUNS.forEach((opts, i) => compare(out.runs[i], local.run(CHAPTER, opts)));
    expect(out.errors.map((e) => e.code)).toEqual(ERRORS.map(([, code]) => code));
    expect(out.errors.every((e) => e.isAttnlabError)).toBe(true);
    const st = out.events.filter((e) => e.file === 'model.safetensors');
    expect(st[0].status).toBe('initiate');
    expect(st.at(-1)).toMatchObject({ status: 'done', loaded: readFileSync(join(ROOT, 'tests/fixtures/tiny/model.safetensors')).length });
    expect(out.events.at(-1).status).toBe('ready');
    expect(out.memory.wasmBytes).toBeGreaterThanOrEqual(16 << 20);
    expect(pageErrors).toEqual([]);
  });

  it('loads from File objects (as from <input type=file>) with the same numbers', async () => {
    const out = await inPage({ model: { files: '/tests/fixtures/tiny/' }, text: CHAPTER, runs: RUNS.slice(0, 1) });
    compare(out.runs[0], local.run(CHAPTER, RUNS[0]));
    expect(pageErrors).toEqual([]);
  });

  it('a missing model directory rejects with EIO in the page', async () => {
    const e = await page.evaluate(() => window.attnlabTest({ model: '/tests/fixtures/none/', text: 'a' })
      .then(() => null, (x) => ({ code: x.code, name: x.name, message: x.message })));
    expect(e).toMatchObject({ code: 'EIO', name: 'AttnlabError' });
    expect(e.message).toMatch(/HTTP 404/);
  });
});
