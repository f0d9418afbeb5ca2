// widget.test.js — 'attnlab/widget' (web/dist/widget, `make widget`) in the no-build example
// examples/plain-html/, served by scripts/serve.mjs, in Firefox ESR: every <attnlab-figure> draws SVG
// in its shadow root, Fig. 1's cells are the API's numbers, a click on a cell redraws, and nothing
// errs or leaves the origin.
//
//   npx vitest run --config tests/firefox/vitest.config.js widget

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { EXAMPLE_PATH } from '../../scripts/serve.mjs';
import { buildWidgetIfStale } from '../e2e/docs-helpers.js';
import { ROOT, CHAPTER, BUILTIN_WEIGHTS, NO_PROBLEMS, setup, watchedPage, worstError, seconds } from './helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const SEL = 'attnlab-figure, attnlab-lab';
let env, W, model;

/** Per element: {figure, state, svgs, cells, text} read from its shadow root. */
const info = (page) => page.$$eval(SEL, (els) => els.map((e) => {
  const svgs = [...e.shadowRoot.querySelectorAll('.figure svg')];
  return {
    figure: e.getAttribute('figure'), state: e.dataset.state, renders: Number(e.dataset.renders || 0), svgs: svgs.length,
    cells: svgs.reduce((a, s) => a + s.querySelectorAll('rect[data-i][data-j]').length, 0),
    text: svgs.map((s) => s.textContent).join(' '),
  };
}));

const cellValues = (page, sel, role) => page.$eval(sel, (e, r) => [...e.shadowRoot.querySelectorAll(`svg g[data-role="${r}"] rect[data-i][data-j]`)]
  .map((c) => [Number(c.dataset.i), Number(c.dataset.j), Number(c.dataset.v)]), role);

/** Wait until every element has drawn (or failed: the test then says which). */
function settled(page, timeout = 180_000) {
  return page.waitForFunction((s) => {
    const els = [...document.querySelectorAll(s)];
    return els.length > 0 && els.every((e) => e.dataset.state === 'ready' || e.dataset.state === 'error');
  }, { timeout, polling: 100 }, SEL);
}

beforeAll(async () => {
  if (!HAVE_MODEL) return;
  buildWidgetIfStale();
  env = await setup();
  model = await loadModel(join(ROOT, 'models/brown-gpt2'));
  W = await watchedPage(env);
}, 240_000);

afterAll(async () => {
  if (model) model.dispose();
  if (env) await env.close();
});

describe.skipIf(!HAVE_MODEL)('the widget example in Firefox ESR', () => {
  it('draws every figure with SVG content; Fig. 1 is the API\'s attention', async () => {
    const { page } = W;
    const t0 = performance.now();
    await page.goto(new URL(EXAMPLE_PATH, env.url).href);
    await page.waitForFunction(() => document.querySelector('attnlab-figure[figure="1"]')?.dataset.state === 'ready',
      { timeout: 180_000, polling: 100 });
    console.log(`[firefox] widget Fig. 1 drawn ${seconds(performance.now() - t0)} after goto`);
    // the elements below load when scrolled into view
    const h = await page.evaluate(() => document.documentElement.scrollHeight);
    for (let y = 0; y <= h; y += 400) {
      await page.evaluate((yy) => window.scrollTo(0, yy), y);
      await new Promise((r) => setTimeout(r, 60));
    }
    await settled(page);
    console.log(`[firefox] all widgets settled ${seconds(performance.now() - t0)} after goto`);
    const all = await info(page);
    expect(all.map((w) => `${w.figure}:${w.state}`)).toEqual(all.map((w) => `${w.figure}:ready`));
    expect(all.length).toBe(7);
    for (const w of all) {
      expect(w.svgs, w.figure).toBeGreaterThan(0);
      expect(w.text.length, w.figure).toBeGreaterThan(20);
    }
    const ref = model.run(CHAPTER, { topK: 5 });
    const by = Object.fromEntries(all.map((w) => [w.figure, w]));
    expect(by['1'].cells).toBe(2 * ref.T * ref.T);   // attention + asymmetry
    expect(by['4'].cells).toBe(3 * ref.T * ref.T);   // original, soft, hard
    // the widget's worker may run another build or weight precision than Node here: tests/e2e/widget.test.js's 1e-4
    const cells = await cellValues(page, 'attnlab-figure[figure="1"]', 'attention');
    expect(cells.length).toBe(ref.T * ref.T);
    const worst = worstError(cells, ref.attention(ref.model.nLayer - 1, 'avg'), ref.T, { rel: 0, abs: 1e-4 });
    console.log(`[firefox] widget Fig. 1 vs Node: worst |Δ| ${(worst * 1e-4).toExponential(2)}`);
    expect(worst).toBeLessThanOrEqual(1);
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });

  it('a click on a Fig. 2 cell chooses (row, col) and redraws', async () => {
    const { page } = W;
    const f2 = 'attnlab-figure[figure="2"]';
    const before = await page.$eval(f2, (e) => Number(e.dataset.renders || 0));
    const cell = await page.evaluateHandle((s) => document.querySelector(s).shadowRoot.querySelector('g[data-role="posterior"] rect[data-i="7"][data-j="3"]'), f2);
    await cell.asElement().click();
    await page.waitForFunction((s, n) => Number(document.querySelector(s).dataset.renders || 0) > n && document.querySelector(s).dataset.state === 'ready',
      { timeout: 120_000, polling: 100 }, f2, before);
    expect(await page.$eval(f2, (e) => [e.getAttribute('row'), e.getAttribute('col')])).toEqual(['7', '3']);
    expect(await page.$eval(f2, (e) => [e.shadowRoot.querySelector('svg').dataset.i, e.shadowRoot.querySelector('svg').dataset.j])).toEqual(['7', '3']);
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });
});
