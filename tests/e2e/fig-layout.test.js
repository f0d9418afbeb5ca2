// fig-layout.test.js — the chapter's figures keep their text apart at phone width.
// At a 360 px viewport Fig. 2's outer-product panel is a small square (the page and
// the <attnlab-figure figure="2"> widget stack the panels), shorter than its y title
// "Query dimension (Q space)"; the title must then wrap (or shrink) to the plot's
// height instead of running into the panel title and the x tick labels. At 1400 px
// the title stays one line at the label size. Checked on the rendered SVG in
// Chromium: the bounding boxes of every axis title line against every tick label,
// axis title and panel title of the figure, and of the title lines with each other.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/fig-layout.test.js
// Screenshots: tests/e2e/artifacts/fig-layout-*.png. The page runs on the tiny model
// (always) and the built-in one; the widget needs the built-in model's weights.

import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, BUILTIN_WEIGHTS, TINY, watchedPage, waitDrawn, useBrowser } from './helpers.js';
import { buildWidgetIfStale, serveRepo } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const env = useBrowser({ artifacts: true });

/**
 * In the browser: the text boxes of one figure's <svg> (found by `sel` in the
 * document, or in the shadow root of `host`) and every pair that overlaps.
 */
function textLayout(page, { sel, host = null }) {
  return page.evaluate(([s, hs]) => {
    const root = hs ? document.querySelector(hs).shadowRoot : document;
    const svg = root.querySelector(s);
    const box = (e) => { const b = e.getBoundingClientRect(); return { l: b.left, t: b.top, r: b.right, b: b.bottom }; };
    const panels = [...svg.querySelectorAll('g[data-role="panel"]')];
    const items = [];
    panels.forEach((p, k) => {
      const cells = p.querySelector(':scope > g[data-role] > rect[data-i]')?.parentElement;
      const plot = cells ? box(cells) : null;
      for (const e of p.querySelectorAll('text[data-role="ytitle"]')) items.push({ kind: 'ytitle', panel: k, text: e.textContent, size: Number(e.getAttribute('font-size')), plot, ...box(e) });
      for (const e of p.querySelectorAll('text[data-role="xtitle"]')) items.push({ kind: 'xtitle', panel: k, text: e.textContent, ...box(e) });
      for (const e of p.querySelectorAll('g[data-role="panel-title"] text')) items.push({ kind: 'title', panel: k, text: e.textContent, ...box(e) });
      for (const e of p.querySelectorAll('g[data-role="ylabels"] text, g[data-role="xlabels"] text')) items.push({ kind: 'tick', panel: k, text: e.textContent, ...box(e) });
    });
    const overlaps = [];
    const ys = items.filter((x) => x.kind === 'ytitle');
    for (const y of ys) {
      for (const o of items) {
        if (o === y) continue;
        const w = Math.min(y.r, o.r) - Math.max(y.l, o.l), h = Math.min(y.b, o.b) - Math.max(y.t, o.t);
        if (w > 0.5 && h > 0.5) overlaps.push(`${y.kind} "${y.text}" × ${o.kind} "${o.text}" (${w.toFixed(1)}×${h.toFixed(1)} px)`);
      }
    }
    return { width: svg.getBoundingClientRect().width, panels: panels.length, ytitles: ys, overlaps, n: items.length };
  }, [sel, host]);
}

/** Every y title line lies within its plot's height (±1 px). */
function expectWithinPlots(ytitles) {
  for (const y of ytitles) {
    expect(y.plot, `plot of "${y.text}"`).not.toBeNull();
    expect(y.t, `top of "${y.text}"`).toBeGreaterThanOrEqual(y.plot.t - 1);
    expect(y.b, `bottom of "${y.text}"`).toBeLessThanOrEqual(y.plot.b + 1);
  }
}

async function pageCase(model, width) {
  const W = await watchedPage(env, { viewport: { width, height: 900 } });
  try {
    await W.page.goto(`${env.url}${model ? `?model=${model}` : ''}`);
    await waitDrawn(W.page);
    const name = model ? 'tiny' : 'builtin';
    await W.page.locator('#fig2 .fig-svg').screenshot({ path: join(ARTIFACTS, `fig-layout-page-${name}-fig2-${width}.png`) });
    const out = {};
    for (const f of ['fig1', 'fig2', 'fig4']) out[f] = await textLayout(W.page, { sel: `#${f} .fig-svg svg` });
    expect(W.issues.pageErrors).toEqual([]);
    return out;
  } finally {
    await W.context.close();
  }
}

describe('Fig. 2 (and Figs. 1, 4) on the page keep axis titles off the tick labels', () => {
  for (const [label, model] of [['tiny model', TINY], ['built-in model', null]]) {
    it.skipIf(!model && !HAVE_MODEL)(`at 360 px the panels stack and every y title fits its plot's height (${label})`, async () => {
      const figs = await pageCase(model, 360);
      const f2 = figs.fig2;
      expect(f2.panels).toBe(2);
      expect(f2.width).toBeLessThan(360);
      // the outer-product panel's title did not fit in one line at 14 px: wrapped or shrunk
      const outer = f2.ytitles.filter((y) => y.panel === 0);
      expect(outer.length).toBeGreaterThanOrEqual(1);
      expect(outer.length > 1 || outer[0].size < 14).toBe(true);
      expect(outer.map((y) => y.text).join(' ').replace(/\u200b/g, '')).toBe('Query dimension (Q space)');
      for (const [f, lay] of Object.entries(figs)) {
        expect(lay.overlaps, `${f} at 360 px`).toEqual([]);
        expectWithinPlots(lay.ytitles);
      }
    }, 120_000);
  }

  it('at 1400 px nothing overlaps and the y titles are one line at the label size', async () => {
    const figs = await pageCase(TINY, 1400);
    for (const [f, lay] of Object.entries(figs)) {
      expect(lay.overlaps, `${f} at 1400 px`).toEqual([]);
      for (const y of lay.ytitles) expect(y.size, `${f} "${y.text}"`).toBe(14);
      expect(lay.ytitles.length, f).toBe(lay.panels);   // one line per panel
    }
    expectWithinPlots(figs.fig2.ytitles);
  }, 120_000);
});

describe.skipIf(!HAVE_MODEL)('the <attnlab-figure figure="2"> widget at 360 px', () => {
  it('stacks its panels with the outer-product y title inside the plot\'s height, overlapping nothing', async () => {
    buildWidgetIfStale();
    const srv = await serveRepo();
    const context = await env.browser.newContext({ viewport: { width: 360, height: 900 } });
    try {
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${srv.url}examples/plain-html/`);
      const host = 'attnlab-figure[figure="2"]';
      await page.locator(host).scrollIntoViewIfNeeded();
      await page.waitForFunction((h) => document.querySelector(h).dataset.state === 'ready', host, { timeout: 90_000 });
      await page.locator(host).screenshot({ path: join(ARTIFACTS, 'fig-layout-widget-fig2-360.png') });
      const lay = await textLayout(page, { sel: 'svg[data-figure="fig2"]', host });
      expect(lay.panels).toBe(2);
      expect(lay.overlaps).toEqual([]);
      expectWithinPlots(lay.ytitles);
      expect(lay.ytitles.filter((y) => y.panel === 0).length).toBeGreaterThan(1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await srv.close();
    }
  }, 180_000);
});
