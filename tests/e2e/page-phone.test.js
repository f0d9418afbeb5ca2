// page-phone.test.js — issue 38 item 6, the page on a phone (360 × 740) in headless Chromium, in English and
// Chinese: the first figure starts on the first screen (the controls other than the sentence fold under one
// button), nothing is wider than the screen, no card's content runs past its card's edge, and no figure's text
// runs past its own drawing. The fold opens on a press and by itself when a model error needs the Load button.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-phone

import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { ARTIFACTS, watchedPage, waitDrawn, useBrowser } from './helpers.js';

const PHONE = { width: 360, height: 740 };
const env = useBrowser();

/**
 * Every box on the page that sticks out: wider than the viewport, or (for the descendants of a card) past the
 * card's right or left edge. Content inside a scrolling box counts against that box, not the card (it scrolls).
 */
function overflowing(page) {
  return page.evaluate(() => {
    const out = [];
    const vw = document.documentElement.clientWidth;
    const name = (e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : ''}`;
    const scrolls = (e) => { const s = getComputedStyle(e); return /(auto|scroll|hidden)/.test(s.overflowX) && e !== document.body; };
    if (document.documentElement.scrollWidth > vw + 1) out.push(`page scrollWidth ${document.documentElement.scrollWidth} > ${vw}`);
    const cards = document.querySelectorAll('.panel, #figures > .fig, .hp, #evidence > section, .controls-toggle, .tokens-wrap');
    for (const card of cards) {
      const cb = card.getBoundingClientRect();
      if (cb.width === 0) continue;   // not shown (folded)
      if (cb.left < -1 || cb.right > vw + 1) out.push(`${name(card)} [${cb.left.toFixed(0)}, ${cb.right.toFixed(0)}] outside the screen`);
      const walk = (node, lim) => {
        for (const c of node.children) {
          if (c.closest('svg') && c.tagName.toLowerCase() !== 'svg') continue;   // SVG contents: checked by drawing
          const b = c.getBoundingClientRect();
          if (b.width > 0 && (b.right > lim.right + 1 || b.left < lim.left - 1)) {
            out.push(`${name(c)} [${b.left.toFixed(0)}, ${b.right.toFixed(0)}] past ${name(card)} [${lim.left.toFixed(0)}, ${lim.right.toFixed(0)}]`);
          }
          walk(c, scrolls(c) ? b : lim);
        }
      };
      walk(card, cb);
    }
    return out;
  });
}

/** Text of the live figures' drawings that runs past the drawing's own width (clipped by the <svg>). */
function clippedText(page) {
  return page.evaluate(() => {
    const out = [];
    for (const svg of document.querySelectorAll('#figures > .fig svg[width]')) {
      // on screen, with every transform applied (a rotated axis title's own box is not where it is drawn)
      const s = svg.getBoundingClientRect();
      for (const tx of svg.querySelectorAll('text')) {
        if (!tx.textContent.trim()) continue;
        const b = tx.getBoundingClientRect();
        const x0 = b.left - s.left, x1 = b.right - s.left, y0 = b.top - s.top, y1 = b.bottom - s.top;
        if (x0 < -1 || x1 > s.width + 1 || y0 < -1 || y1 > s.height + 1) {
          out.push(`${svg.closest('.fig').id}: "${tx.textContent.slice(0, 40)}" x [${x0.toFixed(0)}, ${x1.toFixed(0)}] y [${y0.toFixed(0)}, ${y1.toFixed(0)}] of ${s.width.toFixed(0)} × ${s.height.toFixed(0)}`);
        }
      }
    }
    return out;
  });
}

describe('the page on a 360 × 740 phone', () => {
  for (const lang of ['en', 'zh']) {
    it(`${lang}: Fig. 1 starts on the first screen, and nothing overflows or is clipped, folded or open`, async () => {
      const W = await watchedPage(env, { viewport: PHONE });
      const { page } = W;
      try {
        await page.goto(`${env.url}?lang=${lang}`);
        await waitDrawn(page);
        // the controls are folded; the sentence and the fold's summary are shown
        expect(await page.getAttribute('#controls-toggle', 'aria-expanded')).toBe('false');
        expect(await page.isVisible('#layer')).toBe(false);
        expect(await page.isVisible('#text')).toBe(true);
        expect(await page.textContent('#controls-summary')).toMatch(/^brown-gpt2 · /);
        expect(await page.$eval('#tokens-box', (d) => d.open)).toBe(false);   // the figures label every token
        const fig = await page.locator('#fig1 .fig-svg svg').boundingBox();
        expect(fig.y).toBeLessThan(PHONE.height - 120);   // the drawing begins on the first screen
        await page.screenshot({ path: join(ARTIFACTS, `phone-first-screen-${lang}.png`) });
        expect(await overflowing(page)).toEqual([]);
        expect(await clippedText(page)).toEqual([]);
        // open: every control is there and fits
        await page.click('#controls-toggle');
        expect(await page.getAttribute('#controls-toggle', 'aria-expanded')).toBe('true');
        expect(await page.isVisible('#layer')).toBe(true);
        expect(await page.isVisible('#model-select')).toBe(true);
        expect(await overflowing(page)).toEqual([]);
        await page.click('#controls-toggle');
        expect(await page.isVisible('#layer')).toBe(false);
        expect(W.issues.pageErrors).toEqual([]);
      } finally {
        await W.context.close();
      }
    }, 180_000);
  }

  it('the fold opens by itself when a model fails to load, so its error is seen beside the Load button', async () => {
    const W = await watchedPage(env, { viewport: PHONE });
    const { page } = W;
    try {
      await page.goto(`${env.url}?model=/nonexistent/`);
      await page.waitForSelector('#error:not([hidden])');
      await page.waitForSelector('#model-error:not([hidden])');
      expect(await page.getAttribute('#controls-toggle', 'aria-expanded')).toBe('true');
      expect(await page.isVisible('#model-error')).toBe(true);
    } finally {
      await W.context.close();
    }
  }, 120_000);

  it('at 1400 px the fold does not exist: every control is shown and the button is not', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    try {
      await page.goto(env.url);
      await waitDrawn(page);
      expect(await page.isVisible('#controls-toggle')).toBe(false);
      for (const id of ['#model-select', '#layer', '#row', '#mask', '#export-json']) expect(await page.isVisible(id), id).toBe(true);
    } finally {
      await W.context.close();
    }
  }, 120_000);
});
