// serve-examples.test.js — `make serve` (scripts/serve.mjs) also serves the widget
// example without a build step at /examples/plain-html/, under the page's
// Content-Security-Policy: the example's one module (/web/dist/widget/attnlab-widget.js),
// its worker, /web/dist/attnlab.wasm and the built-in model all come from the
// same server, the figures draw real SVG, and nothing violates the CSP or reaches
// another host.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/serve-examples.test.js
// (builds web/dist/widget when stale: `make widget`). The lineage figure needs only
// the wasm; the model figure needs the built-in model's weights
// (models/brown-gpt2/model.safetensors) and is skipped without them.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, CSP, EXAMPLE_PATH } from '../../scripts/serve.mjs';
import { ARTIFACTS, BUILTIN_WEIGHTS } from './helpers.js';
import { buildWidgetIfStale, launch } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
let server, url, browser, W;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  buildWidgetIfStale();
  ({ server, url } = await startServer({ port: 0 }));
  browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const issues = { pageErrors: [], consoleErrors: [], foreign: [], failed: [] };
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on('pageerror', (e) => issues.pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') issues.consoleErrors.push(m.text()); });
  const origin = new URL(url).origin;
  context.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('blob:') && !u.startsWith('data:') && new URL(u).origin !== origin) issues.foreign.push(u);
  });
  context.on('response', (r) => { if (r.status() >= 400) issues.failed.push(`${r.status()} ${r.url()}`); });
  const response = await page.goto(new URL(EXAMPLE_PATH, url).href);
  W = { context, page, issues, response };
}, 180_000);

afterAll(async () => {
  if (browser) await browser.close();
  if (server) await new Promise((r) => server.close(r));
});

/** Wait for one widget to draw, then read its shadow root: state, svg count, rects, cells with finite data-v. */
async function drawn(page, sel) {
  await page.locator(sel).scrollIntoViewIfNeeded();
  await page.waitForFunction((s) => ['ready', 'error'].includes(document.querySelector(s).dataset.state), sel, { timeout: 120_000 });
  return page.$eval(sel, (e) => {
    const svgs = [...e.shadowRoot.querySelectorAll('svg')];
    const values = [...e.shadowRoot.querySelectorAll('svg [data-v]')].map((x) => Number(x.dataset.v));
    return {
      state: e.dataset.state,
      svgs: svgs.length,
      rects: e.shadowRoot.querySelectorAll('svg rect').length,
      paths: e.shadowRoot.querySelectorAll('svg path, svg circle, svg line').length,
      texts: e.shadowRoot.querySelectorAll('svg text').length,
      values: values.length,
      finite: values.filter(Number.isFinite).length,
      widths: svgs.map((s) => s.getBoundingClientRect().width),
    };
  });
}

describe('scripts/serve.mjs serves the plain-HTML widget example', () => {
  it('answers /examples/plain-html/ with the example under the page\'s CSP, and redirects the path without its slash', async () => {
    expect(W.response.status()).toBe(200);
    expect(W.response.headers()['content-security-policy']).toBe(CSP);
    expect(await W.page.title()).toMatch(/attnlab widgets/);
    const bare = await fetch(new URL(EXAMPLE_PATH.slice(0, -1), url), { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe(EXAMPLE_PATH);
    // what the example needs, all from this server
    for (const p of ['web/dist/widget/attnlab-widget.js', 'web/dist/widget/attnlab-widget-worker.js', 'web/dist/attnlab.wasm', 'examples/plain-html/example.css']) {
      const r = await fetch(new URL(p, url), { method: 'HEAD' });
      expect(r.status, p).toBe(200);
    }
    expect((await fetch(new URL('examples/../Makefile', url))).status).not.toBe(200);
  });

  it('draws a lineage figure (wasm only) as real SVG', async () => {
    const info = await drawn(W.page, 'attnlab-figure[figure="linear"]');
    expect(info.state).toBe('ready');
    expect(info.svgs).toBeGreaterThan(0);
    expect(info.texts).toBeGreaterThan(5);
    expect(info.paths + info.rects).toBeGreaterThan(5);
    expect(Math.min(...info.widths)).toBeGreaterThan(100);
  }, 150_000);

  it.skipIf(!HAVE_MODEL)('draws Fig. 2 on the built-in model: HS×HS + T×T cells with finite values', async () => {
    const info = await drawn(W.page, 'attnlab-figure[figure="2"]');
    expect(info.state).toBe('ready');
    expect(info.svgs).toBe(1);
    // brown-gpt2: head size 32 → 1024 outer-product cells, plus the T×T posterior (T = 10 for the chapter's sentence)
    expect(info.values).toBeGreaterThanOrEqual(32 * 32 + 10 * 10);
    expect(info.finite).toBe(info.values);
    await W.page.locator('attnlab-figure[figure="2"]').screenshot({ path: join(ARTIFACTS, 'serve-examples-fig2.png') });
  }, 150_000);

  it('breaks no CSP rule, logs no error, fails no request and reaches no other host', async () => {
    const csp = await W.page.evaluate(() => window.__csp);
    expect(csp).toEqual([]);
    expect(W.issues.pageErrors).toEqual([]);
    expect(W.issues.consoleErrors).toEqual([]);
    expect(W.issues.failed).toEqual([]);
    expect(W.issues.foreign).toEqual([]);
  });
});
