// widget-posters.test.js — the posters of <attnlab-figure> (make widget: scripts/widget-posters.mjs draws the
// default view of Figs. 1–4 with the widget's own figure code from the built-in model): shown at once, before the
// figure is in view and before the model arrives, with the live model's numbers; replaced by the live figure; in the
// element's language; none for another view; the poster attribute and configure({posters}) choose or turn them off.
//
//   npx vitest run --config tests/e2e/vitest.config.js widget-posters

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { ARTIFACTS, BUILTIN_WEIGHTS, CHAPTER, ROOT } from './helpers.js';
import { buildWidgetIfStale, serveRepo, launch } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
let srv, browser;

beforeAll(async () => {
  if (!HAVE_MODEL) return;
  buildWidgetIfStale();
  srv = await serveRepo();
  browser = await launch();
}, 240_000);

afterAll(async () => {
  if (browser) await browser.close();
  if (srv) await srv.close();
});

/** The example page with the model's weights held back until release(). */
async function openHeld() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  let release;
  const gate = new Promise((r) => { release = r; });
  await context.route('**/models/brown-gpt2/model.safetensors', async (route) => { await gate; await route.continue(); });
  await page.goto(srv.url + 'examples/plain-html/');
  return { context, page, errors, release };
}

const poster = (page, sel) => page.$eval(sel, (e) => {
  const img = e.shadowRoot.querySelector('img.poster');
  return img ? { path: new URL(img.src).pathname, w: img.naturalWidth, state: e.dataset.state, shown: e.dataset.poster ?? null } : null;
});

describe.skipIf(!HAVE_MODEL)('the posters of <attnlab-figure>', () => {
  it('show Figs. 1–4 at once, with the live model\'s numbers, and give way to the live figures', async () => {
    const { context, page, errors, release } = await openHeld();
    try {
      await page.waitForFunction(() => ['1', '2', '3', '4'].every((f) => document.querySelector(`attnlab-figure[figure="${f}"]`).dataset.poster === 'shown'));
      for (const f of ['1', '2', '3', '4']) {
        const p = await poster(page, `attnlab-figure[figure="${f}"]`);
        expect(p.path).toBe(`/web/dist/widget/posters/en/fig${f}.svg`);
        expect(p.w).toBeGreaterThan(200);
        expect(p.state === 'waiting' || p.state === 'loading').toBe(true);   // the live figure is not there yet
      }
      // lineage figures have none (they need no model and draw at once)
      expect(await poster(page, 'attnlab-figure[figure="hopfield"]')).toBe(null);
      await page.locator('attnlab-figure[figure="1"]').screenshot({ path: join(ARTIFACTS, 'widget-poster-fig1.png') });
      // the poster's cells are the model's (Fig. 1: last layer, head average)
      const m = await loadModel();
      try {
        const r = m.run(CHAPTER);
        const A = r.attention(m.config.nLayer - 1, 'avg');
        const svg = readFileSync(join(ROOT, 'web/dist/widget/posters/en/fig1.svg'), 'utf8');
        const group = svg.match(/<g data-role="attention"[\s\S]*?<\/g>/)[0];
        const vals = [...group.matchAll(/data-i="(\d+)" data-j="(\d+)" data-v="([^"]+)"/g)];
        expect(vals.length).toBe(r.T * r.T);
        for (const [, i, j, v] of vals) expect(Math.abs(Number(v) - A[Number(i) * r.T + Number(j)])).toBeLessThan(1e-6);
      } finally {
        m.dispose();
      }
      release();
      await page.waitForFunction(() => document.querySelector('attnlab-figure[figure="1"]').dataset.state === 'ready', null, { timeout: 90_000 });
      expect(await page.$eval('attnlab-figure[figure="1"]', (e) => [e.shadowRoot.querySelectorAll('img.poster').length, e.shadowRoot.querySelectorAll('.figure svg').length]))
        .toEqual([0, 1]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('follow the view: another view has none, the language picks the Chinese poster, poster="" and configure({posters: false}) turn them off', async () => {
    const { context, page, errors } = await openHeld();
    try {
      const f = 'attnlab-figure[figure="2"]';
      await page.waitForFunction((s) => document.querySelector(s).dataset.poster === 'shown', f);
      await page.$eval(f, (e) => e.setAttribute('lang', 'zh'));
      expect((await poster(page, f)).path).toBe('/web/dist/widget/posters/zh/fig2.svg');
      await page.$eval(f, (e) => e.setAttribute('row', '3'));
      expect(await poster(page, f)).toBe(null);                 // not the default view any more
      await page.$eval(f, (e) => e.removeAttribute('row'));
      expect((await poster(page, f)).path).toBe('/web/dist/widget/posters/zh/fig2.svg');
      const f1 = 'attnlab-figure[figure="1"]';
      await page.$eval(f1, (e) => e.setAttribute('compare', 'full'));
      expect((await poster(page, f1)).path).toBe('/web/dist/widget/posters/en/fig1-full.svg');
      await page.$eval(f1, (e) => e.setAttribute('poster', ''));
      expect(await poster(page, f1)).toBe(null);
      await page.$eval(f1, (e) => e.setAttribute('poster', '/web/dist/widget/posters/zh/fig3.svg'));
      expect((await poster(page, f1)).path).toBe('/web/dist/widget/posters/zh/fig3.svg');
      await page.evaluate(() => globalThis.attnlabWidget.configure({ posters: false }));
      expect(await poster(page, 'attnlab-figure[figure="3"]')).toBe(null);
      expect(await page.evaluate(() => { try { globalThis.attnlabWidget.configure({ posters: 3 }); return 'no throw'; } catch (e) { return e.message; } }))
        .toMatch(/posters must be a URL string, false or null/);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
