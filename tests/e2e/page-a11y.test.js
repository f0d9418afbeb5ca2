// page-a11y.test.js — issue 38 item 7 in headless Chromium: the head-ablation grid is one stop in the Tab order
// (arrow keys inside it), so the figures are as near in Tab presses on a model of many heads as on a small one;
// a cell moved with the arrow keys is said in a polite live region; the permalink can be copied with one press,
// and where the browser refuses the clipboard the link is shown selected.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-a11y

import { describe, it, expect } from 'vitest';
import { CHAPTER, watchedPage, waitDrawn, useBrowser } from './helpers.js';

const env = useBrowser();

/**
 * Press Tab until `done()` holds in the page; the number of presses (or -1). From the top of a page just opened,
 * or (from: 'here') on from the element that has the focus.
 */
async function tabsUntil(page, done, { max = 200, from = 'top' } = {}) {
  if (from === 'top') await page.reload().then(() => waitDrawn(page));
  for (let n = 1; n <= max; n++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(done)) return n;
  }
  return -1;
}

const inAblation = () => !!document.activeElement?.closest('#ablation');
const onFig1 = () => document.activeElement === document.querySelector('#fig1 .fig-svg');

describe('keyboard and screen reader', () => {
  it('the ablation grid is one Tab stop with arrow keys inside; Space ablates a head', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    try {
      await page.goto(env.url);
      await waitDrawn(page);
      const boxes = await page.$$eval('#ablation input[type="checkbox"]', (b) => b.length);
      expect(boxes).toBe(24);   // the built-in model: 6 layers × 4 heads
      expect(await page.$$eval('#ablation input[tabindex="0"]', (b) => b.length)).toBe(1);
      const toGrid = await tabsUntil(page, inAblation);
      expect(toGrid).toBeGreaterThan(0);
      // one more Tab leaves the grid, and the figures come a few stops later: the 24 heads are one stop
      await page.keyboard.press('Tab');
      expect(await page.evaluate(inAblation)).toBe(false);
      const toFig = await tabsUntil(page, onFig1, { from: 'here' });
      expect(toFig).toBeGreaterThan(0);
      expect(toFig).toBeLessThan(10);
      // arrows move inside the grid: right → head 1, down → layer 1, End → the last head, Ctrl+End → the last cell
      await tabsUntil(page, inAblation);
      const at = () => page.evaluate(() => `${document.activeElement.dataset.layer}.${document.activeElement.dataset.head}`);
      expect(await at()).toBe('0.0');
      await page.keyboard.press('ArrowRight');
      expect(await at()).toBe('0.1');
      await page.keyboard.press('ArrowDown');
      expect(await at()).toBe('1.1');
      await page.keyboard.press('End');
      expect(await at()).toBe('1.3');
      await page.keyboard.press('Control+End');
      expect(await at()).toBe('5.3');
      await page.keyboard.press('ArrowLeft');
      // Space ablates L5H2 and the page runs with it; the stop stays where the reader left it
      const before = await page.evaluate(() => Number(document.body.dataset.renders));
      await page.keyboard.press('Space');
      await waitDrawn(page, before + 1);
      expect(new URL(page.url()).searchParams.get('ablate')).toBe('5.2');
      expect(await page.$$eval('#ablation input[tabindex="0"]', (b) => b.map((x) => `${x.dataset.layer}.${x.dataset.head}`))).toEqual(['5.2']);
      expect(W.issues.pageErrors).toEqual([]);
    } finally {
      await W.context.close();
    }
  }, 180_000);

  it('a cell moved with the arrow keys is said in a polite live region, in the page\'s language', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    try {
      await page.goto(`${env.url}?text=${encodeURIComponent(CHAPTER)}&row=8&col=2`);
      await waitDrawn(page);
      expect(await page.getAttribute('#cell-live', 'aria-live')).toBe('polite');
      await page.focus('#fig1 .fig-svg');
      await page.keyboard.press('ArrowLeft');
      await expect.poll(() => page.textContent('#cell-live')).toMatch(/^Row 8 “sank”, column 1 “the”: attention 0\.\d{3}$/);
      // the number said is the one Fig. 1 draws for that cell
      const said = Number((await page.textContent('#cell-live')).split(' ').pop());
      const drawn = await page.$eval('#fig1 g[data-role="attention"] rect[data-i="8"][data-j="1"]', (r) => Number(r.dataset.v));
      expect(Math.abs(said - drawn)).toBeLessThanOrEqual(0.0005);
      await page.click('#lang');
      await page.focus('#fig1 .fig-svg');
      await page.keyboard.press('ArrowUp');
      await expect.poll(() => page.textContent('#cell-live')).toMatch(/^第 7 行“finally”，第 1 列“the”：注意力 0\.\d{3}$/);
      expect(W.issues.pageErrors).toEqual([]);
    } finally {
      await W.context.close();
    }
  }, 180_000);

  it('Copy link puts the view\'s permalink on the clipboard; refused, it shows the link selected', async () => {
    const W = await watchedPage(env);
    const { page, context } = W;
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.url });
      await page.goto(`${env.url}?text=${encodeURIComponent(CHAPTER)}&row=8&col=2&layer=3&head=1`);
      await waitDrawn(page);
      await page.click('#copy-link');
      await expect.poll(() => page.textContent('#copy-link-note')).toMatch(/^Copied/);
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toBe(page.url());
      const p = new URL(copied).searchParams;
      expect([p.get('text'), p.get('row'), p.get('col'), p.get('layer'), p.get('head')]).toEqual([CHAPTER, '8', '2', '3', '1']);
      expect(await page.isHidden('#copy-link-field')).toBe(true);
      // a browser that refuses the clipboard: the link in a field, selected
      await page.evaluate(() => { Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('denied')) } }); });
      await page.click('#copy-link');
      await page.waitForSelector('#copy-link-field:not([hidden])');
      expect(await page.inputValue('#copy-link-field')).toBe(page.url());
      expect(await page.evaluate(() => { const f = document.getElementById('copy-link-field'); return [f.selectionStart, f.selectionEnd, f.value.length]; }))
        .toEqual([0, page.url().length, page.url().length]);
      expect(await page.textContent('#copy-link-note')).toMatch(/^The browser did not allow copying/);
    } finally {
      await W.context.close();
    }
  }, 180_000);
});
