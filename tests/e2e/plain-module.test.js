// plain-module.test.js — the other branch of the backend feature test, in a real browser. Safari refuses any
// wasm module that holds a relaxed-SIMD instruction, so there the loader's WebAssembly.validate probe
// (web/src/core/backend.js) answers false and the SIMD128 builds run. Chromium accepts relaxed SIMD and has
// no flag left to turn it off, so here Safari's answer is given to the page: every worker script the page,
// the lineage page and the widget start is served with a prologue that makes WebAssembly.validate refuse
// any module with f32x4.relaxed_madd (and the main thread gets the same init script). The feature test
// itself then chooses, as it would in Safari. Checked: each surface runs attnlab.wasm / attnlab-mt.wasm,
// never downloads a relaxed build, says "wasm SIMD", and draws the API's numbers for the SIMD128 build.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/plain-module.test.js

import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, loadLineage, displayDo } from '../../web/src/index.js';
import { klDivergence } from '../../web/src/page/compare.js';
import { ROOT, CHAPTER, BUILTIN_WEIGHTS, useBrowser, watchedPage, waitDrawn, afterRender, figCells, asSafariAnswers } from './helpers.js';
import { buildWidgetIfStale, serveRepo, waitWidgets, widgetInfo } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);

/** |got − want| ≤ 1e-5·|want| + 1e-6 (the pages keep 6 significant digits). */
function expectClose(got, want, what) {
  expect(got.length, `${what}: length`).toBe(want.length);
  for (let k = 0; k < want.length; k++) {
    expect(Math.abs(got[k] - want[k]), `${what} [${k}]: ${got[k]} vs ${want[k]}`).toBeLessThanOrEqual(1e-5 * Math.abs(want[k]) + 1e-6);
  }
}

const relaxedFetched = (seen) => seen.wasm.filter((p) => /relaxed/.test(p));

// the page keeps the built-in model's F16 weights in 16 bits (weights: 'half'): the same here, on SIMD128
const env = useBrowser({ when: HAVE_MODEL, ref: () => loadModel(join(ROOT, 'models/brown-gpt2'), { weights: 'half', backend: 'simd128' }) });

describe.skipIf(!HAVE_MODEL)('the plain SIMD128 module, chosen by the feature test as Safari answers it (Chromium)', () => {
  it('the chapter page runs attnlab(-mt).wasm, says "wasm SIMD", and draws the API\'s numbers before and after a do', async () => {
    const W = await watchedPage(env);
    const seen = await asSafariAnswers(W.context);
    const { page } = W;
    try {
      await page.goto(env.url);
      await waitDrawn(page, 1, 120_000);
      expect(seen.workers.length, 'the page\'s worker got the prologue').toBeGreaterThanOrEqual(1);
      expect(await page.evaluate(() => document.body.dataset.backend)).toBe('simd128');
      expect(await page.textContent('#model-status')).toMatch(/ · wasm SIMD, \d threads?$/);
      expect(relaxedFetched(seen), 'no relaxed build downloaded').toEqual([]);
      expect(seen.wasm.some((p) => /attnlab(-mt)?(-[\w-]+)?\.wasm$/.test(p)), `a SIMD128 build fetched: ${seen.wasm}`).toBe(true);
      // Fig. 1: the last layer's head average, Fig. 4: the display-level do, and the in-model do's top-10 and KL
      const L = env.ref.config.nLayer;
      const base = env.ref.run(CHAPTER, { topK: 10 });
      const T = base.T;
      const A = base.attention(L - 1, 'avg');
      const cells = (fig, role) => figCells(page, fig, role).then((cs) => {
        const out = new Array(T * T).fill(NaN);
        for (const [i, j, v] of cs) out[i * T + j] = v;
        return out;
      });
      expectClose(await cells('fig1', 'attention'), Array.from(A), 'fig1 attention');
      // a click on cell (9, 2): the hard do inside the model at the last layer, all heads
      await afterRender(page, () => page.click('#fig1 g[data-role="attention"] rect[data-i="9"][data-j="2"]'));
      expect(await page.inputValue('#row')).toBe('9');
      expect(await page.inputValue('#col')).toBe('2');
      expectClose(await cells('fig4', 'hard-do'), Array.from(displayDo(A, { kind: 'hard', row: 9, col: 2 })), 'fig4 hard');
      const after = env.ref.run(CHAPTER, { interventions: [{ kind: 'hard', layer: L - 1, head: 'all', row: 9, col: 2 }], topK: 10 });
      const top = await page.$$eval('#top-after tbody tr', (rs) => rs.map((r) => ({ id: Number(r.dataset.id), p: Number(r.dataset.p) })));
      expect(top.map((x) => x.id)).toEqual(after.top.map((x) => x.id));
      expectClose(top.map((x) => x.p), after.top.map((x) => x.prob), 'top-10 after the do');
      expectClose([Number(await page.getAttribute('#kl', 'data-v'))], [klDivergence(base.logits, after.logits)], 'KL');
      expect(W.issues.pageErrors).toEqual([]);
      expect(W.issues.consoleErrors).toEqual([]);
    } finally {
      await W.context.close();
    }
  });

  it('the Chinese page goes live on the same build', async () => {
    const W = await watchedPage(env);
    const seen = await asSafariAnswers(W.context);
    try {
      await W.page.goto(`${env.url}?lang=zh`);
      await waitDrawn(W.page, 1, 120_000);
      expect(await W.page.evaluate(() => document.documentElement.lang)).toMatch(/^zh/);
      expect(await W.page.evaluate(() => document.body.dataset.backend)).toBe('simd128');
      expect(relaxedFetched(seen)).toEqual([]);
      expect(W.issues.pageErrors).toEqual([]);
    } finally {
      await W.context.close();
    }
  });

  it('the lineage page runs its demos on SIMD128 with the lineage API\'s numbers', async () => {
    const W = await watchedPage(env);
    const seen = await asSafariAnswers(W.context);
    const lab = await loadLineage({ backend: 'simd128' });
    try {
      await W.page.goto(`${env.url}lineage.html`);
      await W.page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 90_000 });
      expect(await W.page.evaluate(() => document.body.dataset.backend)).toBe('simd128');
      expect(relaxedFetched(seen)).toEqual([]);
      for (const id of ['fig-hstate', 'fig-htarget', 'fig-henergy', 'fig-modern2d', 'fig-favor', 'fig-qkhist', 'fig-entropy'])
        expect(await W.page.$$eval(`#${id} svg`, (x) => x.length), id).toBe(1);
      // one Hopfield update equals attention, on this build as on the other
      expect(Number(await W.page.getAttribute('#eq-diff2', 'data-v'))).toBeLessThanOrEqual(1e-6);
      expect(lab.backend).toBe('simd128');
      expect(W.issues.pageErrors).toEqual([]);
      expect(W.issues.consoleErrors).toEqual([]);
    } finally {
      lab.dispose();
      await W.context.close();
    }
  });

  it('the widget (plain-HTML example) draws Fig. 1 with the API\'s numbers on SIMD128', async () => {
    buildWidgetIfStale();
    const srv = await serveRepo();
    const context = await env.browser.newContext({ viewport: { width: 1400, height: 900 } });
    const seen = await asSafariAnswers(context);
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    try {
      await page.goto(`${srv.url}examples/plain-html/`);
      await waitWidgets(page, 'attnlab-figure[figure="1"]');
      const [info] = await widgetInfo(page, 'attnlab-figure[figure="1"]');
      expect(info.state).toBe('ready');
      expect(seen.workers.some((u) => /attnlab-widget-worker/.test(u)), 'the widget\'s worker got the prologue').toBe(true);
      expect(relaxedFetched(seen)).toEqual([]);
      // the widget loads the built-in model in 32 bits: compare with that
      const m = await loadModel(join(ROOT, 'models/brown-gpt2'), { backend: 'simd128' });
      try {
        const r = m.run(CHAPTER);
        const A = r.attention(m.config.nLayer - 1, 'avg');
        const cs = await page.$eval('attnlab-figure[figure="1"]', (e) => [...e.shadowRoot.querySelectorAll('svg g[data-role="attention"] rect[data-i][data-j]')]
          .map((c) => [Number(c.dataset.i), Number(c.dataset.j), Number(c.dataset.v)]));
        expect(cs.length).toBe(r.T * r.T);
        const got = new Array(r.T * r.T);
        for (const [i, j, v] of cs) got[i * r.T + j] = v;
        expectClose(got, Array.from(A), 'widget fig1 attention');
      } finally {
        m.dispose();
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await srv.close();
    }
  });
});
