// lineage.test.js — the lineage page (web/lineage.html, built by Vite into
// web/dist/page/lineage.html, served by scripts/serve.mjs with its CSP) in
// headless Chromium: every demo draws, the sliders change the drawings, the
// numbers on the page are the API's numbers, the timing plot appears with its
// crossover, the exports download, and nothing breaks the CSP.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/lineage.test.js
//
// The tests are one reader's session on one page, in order.

import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { loadLineage } from '../../web/src/index.js';
import { pngSize } from '../../web/src/figures/export.js';
import { ARTIFACTS, useBrowser, downloadOf } from './helpers.js';

// env.ref: the lineage demos' API in Node; env.main: lineage.html, drawn
const env = useBrowser({ artifacts: true, ref: () => loadLineage(), open: 'lineage.html' });

const attr = (page, sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name);
const cellsOf = (page, id) => page.$$eval(`#${id} g[data-role="grid"] rect`, (rs) => rs.map((r) => Number(r.dataset.v)));

async function setRange(page, id, value) {
  await page.$eval(`#${id}`, (e, v) => { e.value = String(v); e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); }, value);
}

describe('the lineage page', () => {
  it('draws every demo on load', async () => {
    // Chromium runs relaxed SIMD: the demos run on the relaxed build, as loadModel's page does
    expect(await env.main.page.evaluate(() => document.body.dataset.backend)).toBe('relaxed-simd');
    const { page } = env.main;
    for (const id of ['fig-hstate', 'fig-htarget', 'fig-henergy', 'fig-modern2d', 'fig-favor', 'fig-qkhist', 'fig-entropy'])
      expect(await page.$$eval(`#${id} svg`, (x) => x.length), id).toBe(1);
    expect((await cellsOf(page, 'fig-hstate')).length).toBe(100);
    expect(await page.$$eval('#frameworks tbody tr', (r) => r.length)).toBe(3);
  });

  it('the classical state is the API\'s corrupted glyph, and Run reaches the stored glyph with a falling energy', async () => {
    const { page } = env.main;
    // defaults: glyph 3 from 20 % noise (seed 1), stored {0, 1, 3}
    const want = env.ref.corrupt(env.ref.glyph(3), 0.2, { seed: 1 });
    expect(await cellsOf(page, 'fig-hstate')).toEqual(Array.from(want));
    await page.click('#h-run');
    await page.waitForFunction(() => /fixed point|不动点/.test(document.getElementById('h-status').textContent));
    expect(await cellsOf(page, 'fig-hstate')).toEqual(Array.from(env.ref.glyph(3)));
    expect(Number(await attr(page, '#h-status', 'data-overlap'))).toBe(1);
    const E = await page.$$eval('#fig-henergy circle[data-y]', (cs) => cs.map((c) => Number(c.dataset.y)));
    expect(E.length).toBeGreaterThanOrEqual(2);
    for (let k = 1; k < E.length; k++) expect(E[k]).toBeLessThanOrEqual(E[k - 1] + 1e-6);
    const W2 = env.ref.hebbian([0, 1, 3].map((g) => env.ref.glyph(g)));
    expect(E[E.length - 1]).toBeCloseTo(env.ref.energy(W2, env.ref.glyph(3)), 3);
  });

  it('the corruption slider changes the drawn state', async () => {
    const { page } = env.main;
    const before = await cellsOf(page, 'fig-hstate');
    await setRange(page, 'corrupt', 40);
    const after = await cellsOf(page, 'fig-hstate');
    expect(after).not.toEqual(before);
    expect(after).toEqual(Array.from(env.ref.corrupt(env.ref.glyph(3), 0.4, { seed: 1 })));
    await page.click('#h-step');
    expect(await page.$$eval('#fig-henergy circle[data-y]', (cs) => cs.length)).toBe(2);
  });

  it('the β slider moves the fixed point through the three regimes', async () => {
    const { page } = env.main;
    const fixedAt = async (v) => {
      await setRange(page, 'beta', v);
      return {
        regime: await attr(page, '#regime', 'data-regime'),
        x: Number(await attr(page, '#fig-modern2d [data-role="fixed"]', 'data-x')),
        y: Number(await attr(page, '#fig-modern2d [data-role="fixed"]', 'data-y')),
      };
    };
    const lo = await fixedAt(-2), mid = await fixedAt(0), hi = await fixedAt(1.5);
    expect([lo.regime, mid.regime, hi.regime]).toEqual(['global', 'meta', 'single']);
    expect(lo.x).not.toBeCloseTo(hi.x, 2);
    // the drawn fixed point is the API's
    const X = Float32Array.from([2, 2, 2.5, 1.5, 1.6, 2.5, -2.5, 1, 0.5, -2.5]);
    const r = env.ref.modernRun(X, [0.4, 1.0], { beta: 10 ** 1.5, d: 2, maxSteps: 500 });
    expect(hi.x).toBeCloseTo(r.state[0], 4);
    expect(hi.y).toBeCloseTo(r.state[1], 4);
  });

  it('shows one Hopfield update equal to attention, and the linear forms equal to the quadratic one', async () => {
    const { page } = env.main;
    expect(Number(await attr(page, '#eq-diff2', 'data-v'))).toBeLessThanOrEqual(1e-6);
    expect(Number(await attr(page, '#eq-diff100', 'data-v'))).toBeLessThanOrEqual(1e-6);
    const hop = await page.$$eval('#equiv td[data-hop]', (x) => x.map((e) => Number(e.dataset.hop)));
    const att = await page.$$eval('#equiv td[data-att]', (x) => x.map((e) => Number(e.dataset.att)));
    expect(hop.length).toBe(2);
    for (let k = 0; k < 2; k++) expect(Math.abs(hop[k] - att[k])).toBeLessThanOrEqual(1e-6);
    expect(Number(await attr(page, '#diff-prefix', 'data-v'))).toBeLessThan(1e-5);
    expect(Number(await attr(page, '#diff-rnn', 'data-v'))).toBeLessThan(1e-5);
    // the feature map select changes the error against softmax
    const e0 = Number(await attr(page, '#err-softmax', 'data-v'));
    await page.selectOption('#feature', 'favor');
    await setRange(page, 'm', 10);
    const e1 = Number(await attr(page, '#err-softmax', 'data-v'));
    expect(e1).not.toBe(e0);
    expect(await page.$$eval('#fig-favor [data-role="m-line"]', (x) => x.length)).toBe(1);
    await page.selectOption('#feature', 'elu');
  });

  it('the d_k slider changes the histogram and the variances follow d_k', async () => {
    const { page } = env.main;
    await setRange(page, 'dk', 8); // 256
    expect(await page.$eval('#dk-out', (e) => e.textContent)).toBe('256');
    const v = Number(await attr(page, '#qk-stats', 'data-variance'));
    const vs = Number(await attr(page, '#qk-stats', 'data-scaled-variance'));
    expect(v / 256).toBeGreaterThan(0.85);
    expect(v / 256).toBeLessThan(1.15);
    expect(vs).toBeCloseTo(v / 256, 6);
    const bins256 = await page.$$eval('#fig-qkhist g[data-role="hist-raw"] rect', (r) => r.map((x) => x.dataset.v));
    await setRange(page, 'dk', 2);
    const bins4 = await page.$$eval('#fig-qkhist g[data-role="hist-raw"] rect', (r) => r.map((x) => x.dataset.v));
    expect(bins4).not.toEqual(bins256);
  });

  it('the capacity curve and the timing plot appear, with the 0.138 line and the crossover', async () => {
    const { page } = env.main;
    await page.waitForFunction(() => document.body.dataset.capacity === 'done', null, { timeout: 90_000 });
    expect(await page.$$eval('#fig-capacity [data-role="capacity-line"]', (x) => x.map((e) => e.dataset.v))).toEqual(['0.138']);
    const succ = await page.$$eval('#fig-capacity g[data-role="series-success"] circle', (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
    expect(succ.length).toBe(15);
    expect(succ[0][1]).toBeGreaterThanOrEqual(0.99);
    expect(succ[succ.length - 1][1]).toBeLessThan(0.2);
    await page.waitForFunction(() => document.body.dataset.timing === 'done', null, { timeout: 110_000 });
    const soft = await page.$$eval('#fig-timing g[data-role="series-softmax"] circle', (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
    const lin = await page.$$eval('#fig-timing g[data-role="series-linear"] circle', (cs) => cs.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]));
    expect(soft.map((p) => p[0])).toEqual([64, 128, 256, 512, 1024, 2048, 4096, 8192]);
    expect(lin.length).toBe(8);
    expect(soft[7][1]).toBeGreaterThan(lin[7][1]);              // linear wins at 8192
    expect(soft[7][1] / soft[4][1]).toBeGreaterThan(16);       // 8× T: ~64× for softmax
    const cross = await page.$$eval('#fig-timing [data-role="crossover"]', (x) => x.map((e) => Number(e.dataset.v)));
    expect(cross.length).toBe(1);
    expect(cross[0]).toBeGreaterThan(32);
    expect(cross[0]).toBeLessThan(8192);
    // the table has the live numbers
    const liveText = await page.$$eval('#frameworks td.live', (x) => x.map((e) => e.textContent));
    expect(liveText[2]).toMatch(/crossover T ≈ \d+/);
    expect(liveText[0]).toMatch(/0\.138/);
    await page.screenshot({ path: join(ARTIFACTS, 'lineage-1400-light.png'), fullPage: true });
  }, 200_000);

  it('exports a figure as SVG and PNG', async () => {
    const { page } = env.main;
    const svg = await downloadOf(page, () => page.click('.fig-actions[data-fig="timing"] button[data-export="svg"]'));
    expect(svg.name).toBe('attnlab_lineage_timing.svg');
    expect(svg.bytes.toString('utf8')).toMatch(/^<\?xml[^]*<svg[^]*data-figure="attention-timing"/);
    const png = await downloadOf(page, () => page.click('.fig-actions[data-fig="capacity"] button[data-export="png"]'));
    expect(png.name).toBe('attnlab_lineage_capacity.png');
    expect(pngSize(png.bytes).width).toBeGreaterThan(600);
  });

  it('switches to Chinese and back', async () => {
    const { page } = env.main;
    await page.click('#lang');
    expect(await page.$eval('#classical-h', (e) => e.textContent)).toMatch(/经典霍普菲尔德/);
    expect(await page.$eval('#fig-capacity svg', (e) => e.getAttribute('lang'))).toBe('zh-Hans');
    await page.screenshot({ path: join(ARTIFACTS, 'lineage-1400-zh.png'), fullPage: false });
    await page.click('#lang');
    expect(await page.$eval('#classical-h', (e) => e.textContent)).toMatch(/Classical Hopfield/);
  });

  it('had no page errors, console errors, CSP violations or foreign requests', async () => {
    expect(env.main.issues.pageErrors).toEqual([]);
    expect(env.main.issues.consoleErrors).toEqual([]);
    expect(await env.main.cspViolations()).toEqual([]);
    expect(env.main.issues.foreign).toEqual([]);
  });

  it('is linked from the main page', async () => {
    const { page } = env.main;
    await page.goto(env.url);
    const href = await page.$eval('a[href="lineage.html"]', (a) => a.href);
    expect(href).toBe(`${env.url}lineage.html`);
  });
});
