// heads-export.test.js — every card of the "Heads & counterfactuals" panel has the
// same SVG / PNG / JSON downloads as the four figures: the SVG is one file with the
// card's charts (each a nested <svg> with its cells' data-v), the PNG has a valid
// signature and size, and the JSON holds the numbers the card shows (equal to its
// data-* attributes and to the cells drawn). On the tiny model (always available),
// in headless Chromium, through scripts/serve.mjs with the page's CSP. The exported
// PNGs are kept as tests/e2e/artifacts/heads-export-hp-*.png.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/heads-export.test.js

import { describe, it, expect, beforeAll } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { pngSize } from '../../web/src/figures/export.js';
import { ROOT, TINY, ARTIFACTS, useBrowser, downloadOf } from './helpers.js';

// env.ref: the tiny model in Node (its shape); env.main: the page on it
const env = useBrowser({ artifacts: true, ref: () => loadModel(join(ROOT, TINY)), open: `?model=${TINY}` });
let L, H;
beforeAll(() => { ({ nLayer: L, nHead: H } = env.ref.config); });

// card id → [file base name, number of charts in the SVG, the cell group whose data-v the JSON repeats]
const CARDS = {
  'hp-imp': ['attnlab_heads_importance', 2],
  'hp-roles': ['attnlab_heads_roles', 4],
  'hp-circ': ['attnlab_heads_break_circuit', 2],
  'hp-mask': ['attnlab_heads_mixed_masks', 3],
  'hp-cf': ['attnlab_heads_counterfactual_pair', 2],
  'hp-ed': ['attnlab_heads_weight_edit', 3],
  'hp-dag': ['attnlab_heads_dag_profile', 2],
};

/** Press the card's Compute button (nothing computes before it) and wait until it has drawn. */
async function ready(page, card) {
  await page.click(`#${card} [data-compute]`);
  await page.waitForFunction((c) => document.getElementById(c).dataset.state === 'done', card, { timeout: 90_000 });
}

/** data-v of the cells of group `role` inside box `box`, row-major by data-i, data-j (NaN kept). */
function cells(page, box, role) {
  return page.evaluate(([b, r]) => [...document.querySelectorAll(`#${b} g[data-role="${r}"] rect[data-i]`)]
    .map((x) => ({ i: Number(x.dataset.i), j: Number(x.dataset.j), v: Number(x.dataset.v) })), [box, role]);
}

/** Every drawn cell equals the JSON's matrix entry (6 significant digits drawn, 7 exported; null = NaN). */
function expectCells(drawn, matrix, what) {
  expect(drawn.length, `${what}: cells`).toBe(matrix.length * matrix[0].length);
  for (const { i, j, v } of drawn) {
    const x = matrix[i][j];
    if (Number.isNaN(v)) { expect(x, `${what} (${i}, ${j})`).toBeNull(); continue; }
    expect(Math.abs(x - v), `${what} (${i}, ${j})`).toBeLessThanOrEqual(1e-5 * Math.abs(v) + 1e-6);
  }
}

describe('the heads panel exports each card as SVG, PNG and JSON', () => {
  it('has SVG, PNG and JSON buttons on every card, disabled until the card has drawn', async () => {
    const { page } = env.main;
    for (const card of Object.keys(CARDS)) {
      const kinds = await page.$$eval(`.hp-actions[data-card="${card}"] button`, (bs) => bs.map((b) => b.dataset.export));
      expect(kinds, card).toEqual(['svg', 'png', 'json']);
    }
    // no card has computed before its Compute button: nothing to export yet
    expect(await page.$eval('#hp-dag', (e) => e.dataset.state)).toBe('idle');
    expect(await page.$$eval('.hp-actions[data-card="hp-dag"] button', (bs) => bs.every((b) => b.disabled))).toBe(true);
  });

  for (const [card, [base, nCharts]] of Object.entries(CARDS)) {
    it(`${card}: the SVG parses with its ${nCharts} charts, the PNG is a PNG, the JSON has the card's numbers`, async () => {
      const { page } = env.main;
      await ready(page, card);
      expect(await page.$$eval(`.hp-actions[data-card="${card}"] button`, (bs) => bs.every((b) => !b.disabled))).toBe(true);

      const svg = await downloadOf(page, () => page.click(`.hp-actions[data-card="${card}"] button[data-export="svg"]`));
      expect(svg.name).toBe(`${base}.svg`);
      const parsed = await page.evaluate((s) => {
        const d = new DOMParser().parseFromString(s, 'image/svg+xml');
        const root = d.documentElement;
        return {
          root: root.nodeName, errors: d.getElementsByTagName('parsererror').length, charts: Number(root.getAttribute('data-charts')),
          nested: root.querySelectorAll(':scope > svg').length, values: root.querySelectorAll('[data-v]').length,
          width: Number(root.getAttribute('width')), height: Number(root.getAttribute('height')),
          scripts: root.querySelectorAll('script, foreignObject').length,
        };
      }, svg.bytes.toString('utf8'));
      expect(parsed).toMatchObject({ root: 'svg', errors: 0, charts: nCharts, nested: nCharts, scripts: 0 });
      expect(parsed.values).toBeGreaterThan(0);
      expect(parsed.width).toBeGreaterThan(150);
      expect(parsed.height).toBeGreaterThan(100);

      const png = await downloadOf(page, () => page.click(`.hp-actions[data-card="${card}"] button[data-export="png"]`));
      expect(png.name).toBe(`${base}.png`);
      writeFileSync(join(ARTIFACTS, `heads-export-${card}.png`), png.bytes);
      const size = pngSize(png.bytes);   // throws unless the PNG signature and IHDR are there
      expect(size.width).toBe(Math.round(parsed.width * 150 / 96));

      const json = await downloadOf(page, () => page.click(`.hp-actions[data-card="${card}"] button[data-export="json"]`));
      expect(json.name).toBe(`${base}.json`);
      const data = JSON.parse(json.bytes.toString('utf8'));
      expect(data.model).toMatchObject({ nLayer: L, nHead: H });
      const ds = await page.$eval(`#${card}`, (e) => ({ ...e.dataset }));
      if (card === 'hp-imp') {
        expect(data.base_loss).toBe(Number(ds.baseLoss));
        expect(data.loss_at_half).toBe(Number(ds.lossAtHalf));
        expect(data.loss_all_removed).toBe(Number(ds.lossAll));
        expect(data.T).toBe(Number(ds.t));
        expect(data.pruning_loss.length).toBe(L * H + 1);
        expect(data.pruning_loss[data.half]).toBe(data.loss_at_half);
        expectCells(await cells(page, 'hp-imp-grid', 'importance'), data.delta_loss, 'Δ loss');
      } else if (card === 'hp-roles') {
        for (const k of ['prev', 'sink', 'dup', 'induction']) expectCells(await cells(page, 'hp-roles-grids', `role-${k}`), data.scores[k], k);
        expect(data.T).toBe(Number(ds.t));
      } else if (card === 'hp-circ') {
        expect(data.preset).toBe(ds.preset);
        expect(data.copy_loss.plain.second).toBe(Number(ds.secondPlain));
        expect(data.copy_loss.ablated.second).toBe(Number(ds.secondBroken));
        expect(data.losses_plain.length).toBe(2 * data.induction_n - 1);
        expect(data.ablated.map((x) => `L${x.layer}H${x.head}`).join(' + ')).toBe(ds.heads);
        expectCells(await cells(page, 'hp-circ-grid', 'circ-induction'), data.induction_ablated, 'induction, ablated');
      } else if (card === 'hp-mask') {
        expect(data.kl_causal_mixed).toBe(Number(ds.kl));
        expect(data.mask.join(',')).toBe(ds.mask);
        expectCells(await cells(page, 'hp-mask-maps', 'attn-0'), data.attention_all_causal, 'all causal');
        expectCells(await cells(page, 'hp-mask-maps', 'attn-1'), data.attention_mixed, 'mixed');
        expect(data.top_mixed.length).toBe(10);
        expect(data.attention_change.mean_abs.length).toBe(L);
      } else if (card === 'hp-cf') {
        expect(data.kl_a_b).toBe(Number(ds.kl));
        expect(data.total_variation).toBe(Number(ds.tv));
        expect(data.aligned.length).toBe(Number(ds.aligned));
        expectCells(await cells(page, 'hp-cf-map', 'cf-diff'), data.attention_diff_b_minus_a, 'ΔA');
      } else if (card === 'hp-ed') {
        expect(data.kl_before_after).toBe(Number(ds.kl));
        expect(data.edit).toEqual(JSON.parse(ds.edit));
        expectCells(await cells(page, 'hp-ed-maps', 'attn-0'), data.attention_before, 'before');
        expectCells(await cells(page, 'hp-ed-maps', 'attn-1'), data.attention_after, 'after');
      } else if (card === 'hp-dag') {
        expect(data.overall).toBe(Number(ds.overall));
        expect(data.null).toBe(Number(ds.null));
        expect(data.layer_mean.length).toBe(L);
        expect(data.sentences.length).toBeGreaterThan(0);
      }
    }, 120_000);
  }

  it('labels the buttons in Chinese after a language switch, and nothing broke', async () => {
    const { page } = env.main;
    await page.click('#lang');   // the English ↔ 中文 toggle
    await page.waitForFunction(() => document.documentElement.lang === 'zh-Hans');
    const aria = await page.$eval('.hp-actions[data-card="hp-imp"] button[data-export="svg"]', (b) => b.getAttribute('aria-label'));
    expect(aria).toMatch(/下载/);
    expect(env.main.issues.pageErrors).toEqual([]);
    expect(env.main.issues.consoleErrors).toEqual([]);
    expect(await env.main.cspViolations()).toEqual([]);
    expect(env.main.issues.foreign).toEqual([]);
  }, 120_000);
});
