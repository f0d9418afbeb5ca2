// lineage.test.js — the lineage page (web/dist/page/lineage.html, `make page`) in Firefox ESR: every demo
// draws, the classical Hopfield state is the API's corrupted glyph, Run reaches the stored glyph, and
// nothing errs or leaves the origin.
//
//   npx vitest run --config tests/firefox/vitest.config.js lineage

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { loadLineage } from '../../web/src/index.js';
import { NO_PROBLEMS, setup, watchedPage, seconds } from './helpers.js';

const DEMOS = ['fig-hstate', 'fig-htarget', 'fig-henergy', 'fig-modern2d', 'fig-favor', 'fig-qkhist', 'fig-entropy'];
let env, W, lab;

const cellsOf = (page, id) => page.$$eval(`#${id} g[data-role="grid"] rect`, (rs) => rs.map((r) => Number(r.dataset.v)));

beforeAll(async () => {
  env = await setup();
  lab = await loadLineage();
  W = await watchedPage(env);
}, 240_000);

afterAll(async () => {
  if (lab) lab.dispose();
  if (env) await env.close();
});

describe('the lineage page in Firefox ESR', () => {
  it('draws every demo on load', async () => {
    const { page } = W;
    const t0 = performance.now();
    await page.goto(`${env.url}lineage.html`);
    await page.waitForFunction(() => document.body.dataset.state === 'ready', { timeout: 180_000, polling: 100 });
    const backend = await page.evaluate(() => document.body.dataset.backend);
    console.log(`[firefox] lineage page ready in ${seconds(performance.now() - t0)}; backend ${backend}`);
    expect(['relaxed-simd', 'simd128']).toContain(backend);
    for (const id of DEMOS) expect(await page.$$eval(`#${id} svg`, (x) => x.length), id).toBe(1);
    expect((await cellsOf(page, 'fig-hstate')).length).toBe(100);
    expect(await page.$$eval('#frameworks tbody tr', (r) => r.length)).toBe(3);
    // defaults: glyph 3 with 20 % noise (seed 1)
    expect(await cellsOf(page, 'fig-hstate')).toEqual(Array.from(lab.corrupt(lab.glyph(3), 0.2, { seed: 1 })));
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });

  it('Run reaches the stored glyph', async () => {
    const { page } = W;
    await page.click('#h-run');
    await page.waitForFunction(() => /fixed point|不动点/.test(document.getElementById('h-status').textContent), { timeout: 60_000, polling: 100 });
    expect(await cellsOf(page, 'fig-hstate')).toEqual(Array.from(lab.glyph(3)));
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });
});
