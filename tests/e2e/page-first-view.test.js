// page-first-view.test.js — the page's opening view drawn at build time (make page: scripts/figures.mjs
// --page-view into web/dist/page/prerender/<lang>/): shown before the worker has the model, replaced by the
// live figures, in the reader's language, and only for the view it shows.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-first-view

import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { FIGURE_FILES } from '../../web/src/figures/names.js';
import { ROOT, CHAPTER, TINY, BUILTIN_WEIGHTS, watchedPage, waitDrawn, holdWeights, useBrowser } from './helpers.js';

const env = useBrowser();

describe.runIf(existsSync(BUILTIN_WEIGHTS))('the opening view, drawn at build time', () => {
  it('is on screen before the model is loaded, holds the live model\'s numbers, and the live figures replace it', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      const release = await holdWeights(context);
      // the pictures' paints (Element Timing), counted from the start
      await page.addInitScript(() => {
        window.__painted = [];
        new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__painted.push(e.renderTime || e.loadTime); })
          .observe({ type: 'element', buffered: true });
      });
      await page.goto(env.url);
      // the first figure's picture is painted from the HTML at once; the others are lazy images
      // (loading="lazy"), fetched and painted as the reader nears them: scrolled to here, one by one, while the
      // weights are still held
      await page.waitForFunction(() => window.__painted.length >= 1 && document.querySelector('#fig1 .prerender-img').naturalWidth > 0);
      for (const [k, f] of [[2, 'fig2'], [3, 'fig3'], [4, 'fig4']]) {
        await page.evaluate((id) => document.getElementById(id).scrollIntoView(), f);
        await page.waitForFunction((n) => window.__painted.length >= n, k);
      }
      await page.waitForFunction(() => Number(document.body.dataset.prerender || 0) === 4);
      expect(await page.evaluate(() => window.__painted.length)).toBe(4);
      await page.evaluate(() => window.scrollTo(0, 0));
      expect(await page.evaluate(() => document.body.dataset.renders || '0')).toBe('0');
      const srcs = await page.$$eval('.prerender-img', (xs) => xs.map((x) => [new URL(x.src).pathname, x.naturalWidth > 0]));
      expect(srcs).toEqual(['fig1', 'fig2', 'fig3', 'fig4'].map((k) => [`/prerender/en/${FIGURE_FILES[k]}.svg`, true]));
      await page.screenshot({ path: join(ROOT, 'tests/e2e/artifacts/page-prerender.png') });
      // the pictures show the numbers the live model gives: Fig. 1's cells, the default do cell in Fig. 4
      const svg = readFileSync(join(ROOT, 'web/dist/page/prerender/en', `${FIGURE_FILES.fig1}.svg`), 'utf8');
      const m = await loadModel();
      try {
        const r = m.run(CHAPTER);
        const A = r.attention(m.config.nLayer - 1, 'avg');
        const cells = [...svg.matchAll(/<g data-role="attention"[\s\S]*?<\/g>/g)][0][0];
        const vals = [...cells.matchAll(/data-i="(\d+)" data-j="(\d+)" data-v="([^"]+)"/g)];
        expect(vals.length).toBe(r.T * r.T);
        for (const [, i, j, v] of vals) expect(Math.abs(Number(v) - A[Number(i) * r.T + Number(j)])).toBeLessThan(1e-6);
      } finally {
        m.dispose();
      }
      release();
      await waitDrawn(page);
      expect(await page.locator('.prerender').count()).toBe(0);
      for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) expect(await page.locator(`#${f} .fig-svg > svg`).count()).toBe(1);
      // the pictured do cell is the one the live page chose
      const live = [await page.inputValue('#row'), await page.inputValue('#col')];
      const fig4 = readFileSync(join(ROOT, 'web/dist/page/prerender/en', `${FIGURE_FILES.fig4}.svg`), 'utf8');
      expect(fig4).toContain(`data-row="${live[0]}"`);
      expect(fig4).toContain(`data-col="${live[1]}"`);
      expect(P.issues.pageErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('comes in the reader\'s language, and follows a language switch while it is shown', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      const release = await holdWeights(context);
      await page.goto(`${env.url}?lang=zh`);
      await page.waitForFunction(() => Number(document.body.dataset.prerender || 0) >= 1 && document.querySelector('#fig1 .prerender-img').naturalWidth > 0);
      const src = () => page.$eval('#fig1 .prerender-img', (x) => new URL(x.src).pathname);
      expect(await src()).toBe(`/prerender/zh/${FIGURE_FILES.fig1}.svg`);
      expect(await page.textContent('#fig1 .prerender-note')).toContain('构建页面时');
      expect(await page.getAttribute('#fig1 .prerender-img', 'alt')).toBe('构建页面时绘制的初始视图');
      await page.click('#lang');
      expect(await src()).toBe(`/prerender/en/${FIGURE_FILES.fig1}.svg`);
      release();
      await waitDrawn(page);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('is not shown for another view: a link with a view, another sentence, another model', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      for (const q of ['?layer=2', `?text=${encodeURIComponent('The ship sank .')}`, `?model=${TINY}`]) {
        await page.goto(`${env.url}${q}`);
        await page.waitForFunction(() => document.body.dataset.state !== undefined);
        expect(await page.locator('.prerender').count(), q).toBe(0);
        await waitDrawn(page);
        expect(await page.evaluate(() => document.body.dataset.prerender ?? null), q).toBe(null);
      }
    } finally {
      await context.close();
    }
  });
});
