// page.test.js — the chapter page (web/index.html + web/src/page/, built by Vite
// into web/dist/page/, served by scripts/serve.mjs with its CSP) in headless
// Chromium, on the tiny test model (?model=/tests/fixtures/tiny/). The numbers the
// page draws are compared with the API's numbers for the same runs, computed here
// in Node with web/src/index.js on the same model files.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/page.test.js
//
// The tests of the first describe are one reader's session on one page, in
// order: each starts from the settings the previous one left (run the file, not
// single tests).

import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, displayDo, outerProduct, dagScore } from '../../web/src/index.js';
import { klDivergence, attentionChange } from '../../web/src/page/compare.js';
import { pngSize } from '../../web/src/figures/export.js';
import { FIGURE_FILES } from '../../web/src/figures/names.js';
import { pngMeta } from '../../web/src/figures/png-meta.js';
import {
  ROOT, CHAPTER, TINY, ARTIFACTS, watchedPage, waitDrawn, afterRender, expectedDefaultCell, useBrowser, figMatrix,
  downloadOf,
} from './helpers.js';

const XSS = '<img src=x onerror=alert(1)>';
// env.ref: the tiny model in Node; env.main: {context, page, issues} of the main page
const env = useBrowser({ artifacts: true, ref: () => loadModel(join(ROOT, TINY)), open: `?model=${TINY}` });
let L, H;
beforeAll(() => { ({ nLayer: L, nHead: H } = env.ref.config); });

const cells = figMatrix;

function topOf(page, id) {
  return page.evaluate((t) => [...document.querySelectorAll(`#${t} tbody tr`)]
    .map((r) => ({ id: Number(r.dataset.id), p: Number(r.dataset.p) })), id);
}

/** |a − b| ≤ 1e-5·|b| + 1e-6 for all entries (data-v keeps 6 significant digits). */
function expectClose(got, want, what) {
  expect(got.length, `${what}: length`).toBe(want.length);
  let worst = 0;
  for (let k = 0; k < want.length; k++) {
    const err = Math.abs(got[k] - want[k]) / (1e-5 * Math.abs(want[k]) + 1e-6);
    if (!(err <= worst)) worst = Number.isNaN(err) ? Infinity : err;
  }
  expect(worst, `${what}: worst error in tolerance units`).toBeLessThanOrEqual(1);
}

function selectOption(page, id, value) {
  return page.selectOption(`#${id}`, String(value));
}

describe('the page on the tiny model', () => {
  it('draws all four figures and the in-model panel for the default sentence', async () => {
    const { page } = env.main;
    for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) {
      expect(await page.locator(`#${f} .fig-svg svg[data-figure="${f}"]`).count(), f).toBe(1);
    }
    const T = env.ref.tokenize(CHAPTER).tokens.length;
    expect((await cells(page, 'fig1', 'attention')).length).toBe(T * T);
    expect((await cells(page, 'fig1', 'asymmetry')).length).toBe(T * T);
    expect((await cells(page, 'fig2', 'posterior')).length).toBe(T * T);
    expect((await cells(page, 'fig2', 'outer-product')).length).toBe(env.ref.config.headSize ** 2);
    for (const role of ['original', 'soft-do', 'hard-do']) expect((await cells(page, 'fig4', role)).length).toBe(T * T);
    expect(await page.locator('#fig3 g[data-role="bars"] rect').count()).toBe(H);
    expect(await page.locator('#top-before tbody tr').count()).toBe(10);
    expect(await page.locator('#top-after tbody tr').count()).toBe(10);
    expect(await page.locator('#delta-bars g[data-role="delta-bar"]').count()).toBe(L);
    expect(await page.locator('#tokens li').count()).toBe(T);
    // defaults: last layer, head average, λ = 3, hard do
    expect(await page.inputValue('#layer')).toBe(String(L - 1));
    expect(await page.inputValue('#head')).toBe('avg');
    expect(await page.inputValue('#lambda')).toBe('3');
    expect(await page.locator('#fig4 svg').getAttribute('data-lambda')).toBe('3');
    expect(await page.isChecked('#kind-hard')).toBe(true);
    expect(await page.textContent('#text')).toBe(CHAPTER);
  });

  it('draws the numbers of the API for the same run (attention, A − Aᵀ, q ⊗ k, DAG scores, do, top-10, KL)', async () => {
    const { page } = env.main;
    const layer = L - 1;
    const row = Number(await page.inputValue('#row')), col = Number(await page.inputValue('#col'));
    const r = env.ref.run(CHAPTER, { captureQK: { layer, head: 0 }, topK: 10 });
    const T = r.T;
    const A = r.attention(layer, 'avg');
    // the default cell: the last row, the cause column whose do moves the prediction most (runner.js)
    const cell = await expectedDefaultCell(env.ref, CHAPTER);
    expect(row).toBe(T - 1);
    expect(col).toBe(cell.col);
    expectClose(await cells(page, 'fig1', 'attention'), Array.from(A), 'fig1 attention');
    const asym = [];
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) asym.push(A[i * T + j] - A[j * T + i]);
    expectClose(await cells(page, 'fig1', 'asymmetry'), asym, 'fig1 A − Aᵀ');
    // Fig. 2: q ⊗ k of head 0 at (row, col), the trace, that head's attention
    const HS = env.ref.config.headSize;
    const { matrix, trace } = outerProduct(r.q.slice(row * HS, (row + 1) * HS), r.k.slice(col * HS, (col + 1) * HS));
    expectClose(await cells(page, 'fig2', 'outer-product'), Array.from(matrix), 'fig2 q ⊗ k');
    expectClose([Number(await page.locator('#fig2 svg').getAttribute('data-trace'))], [trace], 'fig2 trace');
    expectClose(await cells(page, 'fig2', 'posterior'), Array.from(r.attention(layer, 0)), 'fig2 posterior');
    // Fig. 3: the DAG score in the title and per-head bars
    const dag = Number(await page.locator('#fig3 svg').getAttribute('data-dag'));
    expectClose([dag], [r.layerDagScores[layer]], 'fig3 DAG');
    expect(Math.abs(dagScore(A) - r.layerDagScores[layer])).toBeLessThan(1e-6);
    const title = await page.locator('#fig3 svg g[data-role="panel-title"]').nth(1).textContent();
    expect(title).toContain(`DAG score = ${r.layerDagScores[layer].toFixed(3)}`);
    const bars = await page.$$eval('#fig3 g[data-role="bars"] rect', (rs) => rs.map((x) => Number(x.dataset.v)));
    expectClose(bars, r.dagScores[layer], 'fig3 bars');
    expectClose([Number(await page.locator('#fig3 svg').getAttribute('data-null-dag'))], [r.nullDagScore], 'fig3 null');
    // Fig. 4: the display-level do on the head average
    expectClose(await cells(page, 'fig4', 'soft-do'), Array.from(displayDo(A, { kind: 'soft', row, col, lambda: 3 })), 'fig4 soft');
    expectClose(await cells(page, 'fig4', 'hard-do'), Array.from(displayDo(A, { kind: 'hard', row, col })), 'fig4 hard');
    // in-model: top-10 before/after and KL
    const after = env.ref.run(CHAPTER, { interventions: [{ kind: 'hard', layer, head: 'all', row, col }], topK: 10 });
    const before = await topOf(page, 'top-before');
    expect(before.map((x) => x.id)).toEqual(r.top.map((x) => x.id));
    expectClose(before.map((x) => x.p), r.top.map((x) => x.prob), 'top before');
    const got = await topOf(page, 'top-after');
    expect(got.map((x) => x.id)).toEqual(after.top.map((x) => x.id));
    expectClose(got.map((x) => x.p), after.top.map((x) => x.prob), 'top after');
    const kl = Number(await page.locator('#kl').getAttribute('data-v'));
    expectClose([kl], [klDivergence(r.logits, after.logits)], 'KL');
    expect(kl).toBeGreaterThan(0);
  });

  it('shows values on hover (cells, bars, edges)', async () => {
    const { page } = env.main;
    const cell = page.locator('#fig1 g[data-role="attention"] rect[data-i="3"][data-j="1"]');
    await cell.hover();
    await page.waitForSelector('#tip:not([hidden])');
    const v = await cell.getAttribute('data-v');
    expect(await page.textContent('#tip')).toBe(`effect i=3 (${await page.textContent('#tokens li[data-k="3"] .tok-s')}), cause j=1 (${await page.textContent('#tokens li[data-k="1"] .tok-s')}): ${v}`);
    await page.locator('#fig3 g[data-role="bars"] rect').first().hover();
    expect(await page.textContent('#tip')).toMatch(/^head 0: DAG score 0\.\d{3}$/);
    await page.mouse.move(2, 2);
    await page.waitForSelector('#tip', { state: 'hidden' });
  });

  it('a click on a cell chooses (i, j); the hard do at an earlier layer changes the next tokens and the later layers', async () => {
    const { page } = env.main;
    await afterRender(page, () => selectOption(page, 'layer', 0));
    // click cell (i=6, j=3) of Fig. 1's attention heatmap
    const topBefore = await topOf(page, 'top-after');
    await afterRender(page, () => page.click('#fig1 g[data-role="attention"] rect[data-i="6"][data-j="3"]'));
    expect(await page.inputValue('#row')).toBe('6');
    expect(await page.inputValue('#col')).toBe('3');
    expect(await page.locator('#inmodel').getAttribute('data-row')).toBe('6');
    expect(await page.locator('#inmodel').getAttribute('data-col')).toBe('3');
    expect(await page.locator('#fig4 svg').getAttribute('data-row')).toBe('6');
    expect(await page.locator('#fig1 rect[data-role="selection"]').count()).toBe(2);
    const base = env.ref.run(CHAPTER, { topK: 10 });
    const after = env.ref.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 0, head: 'all', row: 6, col: 3 }], topK: 10 });
    const got = await topOf(page, 'top-after');
    expect(got.map((x) => x.id)).toEqual(after.top.map((x) => x.id));
    expectClose(got.map((x) => x.p), after.top.map((x) => x.prob), 'top after do');
    expect(got).not.toEqual(topBefore);
    expect(got.map((x) => x.p)).not.toEqual(base.top.map((x) => x.prob));
    // the later layers' attention changed, by the API's amounts; nothing before layer 0 exists, layer 0 changed in row 6 only
    const ch = attentionChange(base, after);
    const bars = await page.$$eval('#delta-bars g[data-role="delta-bar"]', (gs) => gs.map((g) => Number(g.dataset.v)));
    expectClose(bars, ch.mean, 'mean |ΔA| per layer');
    for (let l = 1; l < L; l++) expect(bars[l], `layer ${l} changed`).toBeGreaterThan(1e-4);
    expect(await page.locator('#delta-maps svg').count()).toBe(L);
    const d2 = await page.$$eval('#delta-maps svg[data-layer="2"] rect[data-i]', (rs) => rs.map((x) => Number(x.dataset.v)));
    expectClose(d2, Array.from(ch.avgDelta[2]), 'ΔA layer 2');
    // keyboard: arrows on a focused heatmap move the selection
    await page.focus('#fig1 .fig-svg');
    await afterRender(page, () => page.keyboard.press('ArrowLeft'));
    expect(await page.inputValue('#col')).toBe('2');
    await afterRender(page, () => page.keyboard.press('ArrowUp'));
    expect(await page.inputValue('#row')).toBe('5');
    // soft do, one head: matches the API
    await afterRender(page, () => page.check('#kind-soft'));
    await afterRender(page, () => selectOption(page, 'head', 1));
    const soft = env.ref.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 0, head: 1, row: 5, col: 2, lambda: 3 }], topK: 10 });
    const gotSoft = await topOf(page, 'top-after');
    expectClose(gotSoft.map((x) => x.p), soft.top.map((x) => x.prob), 'top after soft do head 1');
    expectClose(await cells(page, 'fig1', 'attention'), Array.from(base.attention(0, 1)), 'fig1 head 1 of layer 0');
  });

  it('the λ slider redraws live and coalesces runs (never more than one waiting)', async () => {
    const { page } = env.main;
    const r0 = Number(await page.evaluate(() => document.body.dataset.renders));
    // 40 input events as fast as a drag can produce them
    await page.evaluate(() => {
      const s = document.getElementById('lambda');
      for (let k = 1; k <= 40; k++) { s.value = String(k / 4); s.dispatchEvent(new Event('input', { bubbles: true })); }
    });
    // Fig. 4 follows at once (display-level do, no worker)
    expect(await page.locator('#fig4 svg').getAttribute('data-lambda')).toBe('10');
    await page.waitForFunction(() => document.getElementById('inmodel').dataset.lambda === '10' && document.body.dataset.state === 'ready');
    const ran = Number(await page.evaluate(() => document.body.dataset.renders)) - r0;
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThanOrEqual(3);  // the running job, then only the latest waiting one
    const soft = env.ref.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 0, head: 1, row: 5, col: 2, lambda: 10 }], topK: 10 });
    expectClose((await topOf(page, 'top-after')).map((x) => x.p), soft.top.map((x) => x.prob), 'top after λ = 10');
    // the keyboard moves the slider too
    await page.focus('#lambda');
    await afterRender(page, () => page.keyboard.press('ArrowLeft'));
    expect(await page.locator('#inmodel').getAttribute('data-lambda')).toBe('9.9');
  });

  it('head ablation changes the results as the API says', async () => {
    const { page } = env.main;
    await afterRender(page, () => selectOption(page, 'head', 'avg'));
    const fig1Before = await cells(page, 'fig1', 'attention');
    const layer = Number(await page.inputValue('#layer'));
    await afterRender(page, () => page.check('#ablation input[data-layer="0"][data-head="1"]'));
    await afterRender(page, () => selectOption(page, 'layer', L - 1));
    const r = env.ref.run(CHAPTER, { ablate: [[0, 1]], topK: 10 });
    const fig1 = await cells(page, 'fig1', 'attention');
    expectClose(fig1, Array.from(r.attention(L - 1, 'avg')), 'fig1 with head 0.1 ablated');
    expect(layer).toBe(0);
    const plain = env.ref.run(CHAPTER, { topK: 10 });
    expect(Math.max(...fig1.map((v, k) => Math.abs(v - plain.attention(L - 1, 'avg')[k])))).toBeGreaterThan(1e-4);
    expect(fig1Before.length).toBe(fig1.length);
    const before = await topOf(page, 'top-before');
    expectClose(before.map((x) => x.p), r.top.map((x) => x.prob), 'top-10 with the ablation');
    expect(await page.isVisible('#ref-line')).toBe(true);
    await afterRender(page, () => page.click('#ablation-clear'));
    expectClose(await cells(page, 'fig1', 'attention'), Array.from(plain.attention(L - 1, 'avg')), 'fig1 after clearing');
    expect(await page.isVisible('#ref-line')).toBe(false);
  });

  it('mask modes (full, window W) change the results as the API says', async () => {
    const { page } = env.main;
    await afterRender(page, () => selectOption(page, 'mask', 'full'));
    const full = env.ref.run(CHAPTER, { mask: 'full', topK: 10 });
    const A = await cells(page, 'fig1', 'attention');
    expectClose(A, Array.from(full.attention(L - 1, 'avg')), 'fig1 with the full mask');
    const T = full.T;
    expect(A[0 * T + (T - 1)]).toBeGreaterThan(0);   // the first token now sees the last
    expectClose([Number(await page.locator('#fig3 svg').getAttribute('data-dag'))], [full.layerDagScores[L - 1]], 'DAG full');
    expect(full.layerDagScores[L - 1]).toBeLessThan(0.9);
    expect(await page.isDisabled('#window')).toBe(true);
    await afterRender(page, () => selectOption(page, 'mask', 'window'));
    expect(await page.isDisabled('#window')).toBe(false);
    await afterRender(page, async () => { await page.fill('#window', '2'); });
    const win = env.ref.run(CHAPTER, { mask: 'window:2', topK: 10 });
    const Aw = await cells(page, 'fig1', 'attention');
    expectClose(Aw, Array.from(win.attention(L - 1, 'avg')), 'fig1 with window 2');
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (j < i - 1 || j > i) expect(Aw[i * T + j]).toBe(0);
    expectClose((await topOf(page, 'top-before')).map((x) => x.p), win.top.map((x) => x.prob), 'top-10 window 2');
    await afterRender(page, () => selectOption(page, 'mask', 'causal'));
  });

  it('exports every figure as SVG and PNG and the run as JSON', async () => {
    const { page } = env.main;
    const modelName = await page.evaluate(() => document.body.dataset.model);
    for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) {
      const svg = await downloadOf(page, () => page.click(`#${f} button[data-export="svg"]`));
      // the chapter's name, then what the figure shows: model, layer, head (Fig. 2 one head, Fig. 3 all), mask
      const head = { fig1: 'avg', fig2: 'H\\d+', fig3: 'all', fig4: 'avg' }[f];
      const base = new RegExp(`^${FIGURE_FILES[f]}_${modelName.replace(/[^A-Za-z0-9.]+/g, '-')}_L${L - 1}${head}_causal$`);
      expect(svg.name.replace(/\.svg$/, '')).toMatch(base);
      const text = svg.bytes.toString('utf8');
      const parsed = await page.evaluate((s) => {
        const d = new DOMParser().parseFromString(s, 'image/svg+xml');
        const desc = d.documentElement.querySelector(':scope > desc');
        return { root: d.documentElement.nodeName, error: d.getElementsByTagName('parsererror').length, fig: d.documentElement.getAttribute('data-figure'), desc: desc && desc.textContent };
      }, text);
      expect(parsed).toMatchObject({ root: 'svg', error: 0, fig: f });
      expect(parsed.desc).toMatch(new RegExp(`^attnlab · model ${modelName} · layer ${L - 1} · (average of heads|head \\d+|all heads) · mask causal · text "`));
      const png = await downloadOf(page, () => page.click(`#${f} button[data-export="png"]`));
      expect(png.name.replace(/\.png$/, '')).toBe(svg.name.replace(/\.svg$/, ''));
      const { width, height } = pngSize(png.bytes);   // throws unless the PNG signature and IHDR are there
      expect(width).toBeGreaterThan(400);
      expect(height).toBeGreaterThan(200);
      // the PNG states its 150 dpi and the same view as the SVG
      const meta = pngMeta(png.bytes);
      expect(Math.abs(meta.dpi - 150)).toBeLessThanOrEqual(0.0127);   // whole pixels per metre: 5906 = 150.012 dpi
      expect(meta.text).toEqual({ Description: parsed.desc, Software: 'attnlab' });
    }
    const json = await downloadOf(page, () => page.click('#export-json'));
    expect(json.name).toBe('attnlab-run.json');
    const data = JSON.parse(json.bytes.toString('utf8'));
    const r = env.ref.run(CHAPTER, { topK: 10 });
    expect(data.text).toBe(CHAPTER);
    expect(data.tokens).toEqual(r.tokens);
    expect(data.ids).toEqual(Array.from(r.ids));
    expect(data.model).toMatchObject({ nLayer: L, nHead: H });
    expect(data.before.attentions.length).toBe(L);
    expect(data.before.attentions[0].length).toBe(H);
    expect(data.before.attentions[0][0].length).toBe(r.T);
    expect(data.before.attentions[L - 1][2][r.T - 1][3]).toBeCloseTo(r.attention(L - 1, 2)[(r.T - 1) * r.T + 3], 6);
    expect(data.before.top.map((x) => x.id)).toEqual(r.top.map((x) => x.id));
    expect(data.settings).toMatchObject({ layer: L - 1, head: 'avg', kind: 'soft', mask: 'causal' });
    expect(data.intervention).toMatchObject({ kind: 'soft', layer: L - 1, head: 'all' });
    // a soft do on row 5 of the last layer cannot reach the last position: the prediction is unchanged
    const soft = env.ref.run(CHAPTER, { interventions: [{ kind: 'soft', layer: L - 1, head: 'all', row: 5, col: 2, lambda: 9.9 }], topK: 10 });
    expect(data.intervention).toMatchObject({ row: 5, col: 2, lambda: 9.9 });
    expect(data.kl_before_after).toBeCloseTo(klDivergence(r.logits, soft.logits), 9);
    expect(data.kl_before_after).toBe(0);
    expect(await page.isVisible('#kl-zero')).toBe(true);
    expect(data.attention_change.mean_abs.length).toBe(L);
  });

  it('when the do cannot reach the prediction it says so, and offers an earlier layer that can', async () => {
    const { page } = env.main;
    expect(await page.isVisible('#kl-zero')).toBe(true);
    await afterRender(page, () => page.click('#kl-zero-fix'));
    expect(await page.inputValue('#layer')).toBe('0');
    const soft = env.ref.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 0, head: 'all', row: 5, col: 2, lambda: 9.9 }], topK: 10 });
    const kl = Number(await page.locator('#kl').getAttribute('data-v'));
    expectClose([kl], [klDivergence(env.ref.run(CHAPTER).logits, soft.logits)], 'KL at layer 0');
    expect(kl).toBeGreaterThan(0);
    expect(await page.isHidden('#kl-zero')).toBe(true);
  });

  it('Fig. 2 offers the chapter\'s random-vector demo (d_k = 16, T = 8)', async () => {
    const { page } = env.main;
    await page.check('#demo');
    expect((await cells(page, 'fig2', 'outer-product')).length).toBe(256);
    expect((await cells(page, 'fig2', 'posterior')).length).toBe(64);
    expect(await page.locator('#fig2 svg').getAttribute('data-i')).toBe('5');
    await page.uncheck('#demo');
    expect((await cells(page, 'fig2', 'outer-product')).length).toBe(env.ref.config.headSize ** 2);
  });

  it('switches every label and the figures to Chinese and back', async () => {
    const { page } = env.main;
    await page.click('#lang');
    expect(await page.getAttribute('html', 'lang')).toBe('zh-Hans');
    expect(await page.textContent('#fig1-h')).toContain('注意力与不对称性');
    expect(await page.textContent('#h-model')).toBe('模型');
    // the figures are redrawn a step a task (issue 38 item 5), no longer within the click
    await page.waitForFunction(() => ['fig1', 'fig2', 'fig3', 'fig4'].every((f) => document.querySelector(`#${f} svg`)?.getAttribute('lang') === 'zh-Hans'));
    expect(await page.locator('#fig1 svg').getAttribute('lang')).toBe('zh-Hans');
    expect(await page.locator('#fig3 svg').textContent()).toContain('DAG 得分');
    expect(await page.textContent('#lang')).toBe('English');
    await page.click('#lang');
    expect(await page.textContent('#fig1-h')).toContain('Attention and asymmetry');
    await page.waitForFunction(() => ['fig1', 'fig2', 'fig3', 'fig4'].every((f) => document.querySelector(`#${f} svg`)?.getAttribute('lang') === 'en'));
    expect(await page.locator('#fig1 svg').getAttribute('lang')).toBe('en');
  });

  it('shows token strings as text: the XSS sentence is inert', async () => {
    const { page, issues } = env.main;
    await afterRender(page, async () => {
      await page.fill('#text', XSS);
      await page.click('#run');
    });
    expect(issues.dialogs).toEqual([]);
    expect(await page.locator('img').count()).toBe(0);
    const shown = await page.$$eval('#tokens .tok-s', (s) => s.map((x) => x.textContent).join(''));
    expect(shown.replace(/\s/g, '')).toBe(XSS.replace(/\s/g, ''));
    expect(await page.locator('#fig1 svg').textContent()).toContain(XSS);
    expect(await page.locator('svg image, svg foreignObject, svg script').count()).toBe(0);
    const T = env.ref.tokenize(XSS).tokens.length;
    expect((await cells(page, 'fig1', 'attention')).length).toBe(T * T);
    await page.waitForTimeout(300);
    expect(issues.dialogs).toEqual([]);
    await afterRender(page, async () => {
      await page.fill('#text', CHAPTER);
      await page.press('#text', 'Enter');
    });
  });

  it('an empty or too long text gives a message and the page keeps working', async () => {
    const { page } = env.main;
    await page.fill('#text', '');
    await page.click('#run');
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error-text')).toMatch(/Type some text/);
    await page.fill('#text', 'word '.repeat(200));
    await page.click('#run');
    await page.waitForFunction(() => /too long/.test(document.getElementById('error-text').textContent));
    expect(await page.textContent('#error-text')).toContain(`at most ${env.ref.config.nPositions} tokens`);
    // how many tokens the text has, by the tokenizer (issue 38 item 2)
    const n = env.ref.tokenize('word '.repeat(200)).tokens.length;
    expect(n).toBeGreaterThan(env.ref.config.nPositions);
    expect(await page.textContent('#error-text')).toContain(`it has ${n} tokens`);
    // the figures on screen are the previous text's: dimmed, with a note
    expect(await page.getAttribute('#figures', 'class')).toMatch(/\bis-stale\b/);
    expect(await page.isVisible('#stale-note')).toBe(true);
    await afterRender(page, async () => { await page.fill('#text', CHAPTER); await page.click('#run'); });
    expect(await page.isHidden('#error')).toBe(true);
    expect(await page.getAttribute('#figures', 'class')).not.toMatch(/\bis-stale\b/);
    expect(await page.isHidden('#stale-note')).toBe(true);
  });

  it('a corrupt model file gives a readable error and the page keeps the previous model', async () => {
    const { page } = env.main;
    await selectOption(page, 'model-select', 'local');
    expect(await page.isVisible('#model-files')).toBe(true);
    const file = (name, buffer) => ({ name, mimeType: 'application/octet-stream', buffer });
    const tiny = (n) => readFileSync(join(ROOT, TINY, n));
    const garbage = Buffer.alloc(4096, 0x5a);
    await page.setInputFiles('#model-files', [
      file('config.json', tiny('config.json')), file('vocab.json', tiny('vocab.json')),
      file('merges.txt', tiny('merges.txt')), file('model.safetensors', garbage),
    ]);
    await page.waitForSelector('#error:not([hidden])');
    const msg = await page.textContent('#error-text');
    expect(msg).toMatch(/not the files of a GPT-2 model \(EFORMAT\)/);
    expect(msg).toMatch(/keeps using tiny/);
    // the picker shows the model in use again (issue 19), and the message is also beside it
    expect(await page.inputValue('#model-select')).toBe('builtin');
    expect(await page.textContent('#model-error')).toBe(msg);
    // missing files: named
    await page.setInputFiles('#model-files', [file('config.json', tiny('config.json')), file('vocab.json', tiny('vocab.json'))]);
    await page.waitForFunction(() => /missing/.test(document.getElementById('error-text').textContent));
    expect(await page.textContent('#error-text')).toMatch(/model\.safetensors.*merges\.txt/);
    // still works: a new sentence runs on the tiny model
    await afterRender(page, async () => { await page.fill('#text', 'The ship sank .'); await page.click('#run'); });
    expect(await page.locator('#tokens li').count()).toBe(env.ref.tokenize('The ship sank .').tokens.length);
    expect(await page.textContent('#model-status')).toContain('tiny: 3 layers');
    // and good local files load
    await afterRender(page, () => page.setInputFiles('#model-files', ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']
      .map((n) => file(n, tiny(n)))));
    expect(await page.textContent('#model-status')).toContain('local GPT-2 3×4: 3 layers');
    expect(await page.isHidden('#error')).toBe(true);
    await afterRender(page, async () => { await page.fill('#text', CHAPTER); await page.click('#run'); });
  });

  it('had no CSP violation, no page or console error, and no request to another host', async () => {
    expect(await env.main.cspViolations()).toEqual([]);
    expect(env.main.issues.pageErrors).toEqual([]);
    expect(env.main.issues.consoleErrors).toEqual([]);
    expect(env.main.issues.foreign).toEqual([]);
    expect(env.main.issues.dialogs).toEqual([]);
  });
});

describe('layout', () => {
  for (const colorScheme of ['light', 'dark']) {
    for (const width of [1400, 360]) {
      it(`fits ${width} px (${colorScheme}) and saves screenshots`, async () => {
        const P = await watchedPage(env, { viewport: { width, height: 900 }, colorScheme });
        try {
          await P.page.goto(`${env.url}?model=${TINY}`);
          await waitDrawn(P.page);
          const sw = await P.page.evaluate(() => document.documentElement.scrollWidth);
          expect(sw).toBeLessThanOrEqual(width);
          for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) {
            const box = await P.page.locator(`#${f} .fig-svg svg`).boundingBox();
            expect(box.width).toBeLessThanOrEqual(width);
            expect(box.width, f).toBeGreaterThan(width >= 1000 ? 500 : 250);
          }
          await P.page.screenshot({ path: join(ARTIFACTS, `page-tiny-${width}-${colorScheme}.png`), fullPage: true });
          if (width === 1400 && colorScheme === 'light') {
            for (const f of ['fig1', 'fig2', 'fig3', 'fig4', 'inmodel']) {
              await P.page.locator(`#${f}`).screenshot({ path: join(ARTIFACTS, `tiny-${f}.png`) });
            }
          }
          expect(await P.cspViolations()).toEqual([]);
          expect(P.issues.pageErrors).toEqual([]);
          expect(P.issues.foreign).toEqual([]);
        } finally {
          await P.context.close();
        }
      });
    }
  }
});
