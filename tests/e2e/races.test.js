// races.test.js — clicks and key presses that arrive while the worker computes
// (issue 19, items 1 and 3), driven in headless Chromium on the built-in model
// exactly as a hurried reader does them:
//   1. change the heads panel's text, then press Compute twice 50 ms apart: both
//      cards (importance and roles) must finish drawing, not stay "Computing…";
//   3. six ArrowUp presses with no gap from row 9 must end at row 3: a result that
//      arrives for an older selection must not overwrite the newer one.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/races.test.js
//
// Skipped when the built-in model's weights are missing.

import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { BUILTIN_WEIGHTS, watchedPage, waitDrawn, useBrowser } from './helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const suite = HAVE_MODEL ? describe : describe.skip;

const env = useBrowser({ when: HAVE_MODEL });

/** Poll (from Node: the CSP forbids eval in the page) until every card in ids is data-state="done". */
async function cardsReady(page, ids, timeout) {
  const t0 = Date.now();
  for (;;) {
    const states = await page.evaluate((xs) => xs.map((i) => document.getElementById(i).dataset.state), ids);
    if (states.every((s) => s === 'done')) return states;
    if (Date.now() - t0 > timeout) return states;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Wait until the page is idle (no run in flight or waiting) for a little while. */
async function settled(page, timeout = 60_000) {
  const t0 = Date.now();
  let quiet = 0;
  while (Date.now() - t0 < timeout) {
    const st = await page.evaluate(() => document.body.dataset.state);
    quiet = st === 'ready' ? quiet + 1 : 0;
    if (quiet >= 5) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the page did not settle');
}

suite('races on the built-in model', () => {
  it('a double click on Compute after changing the text draws both cards (no card stays busy)', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    await page.locator('#hp-imp').scrollIntoViewIfNeeded();
    // the cards compute the default text when their Compute buttons are pressed; then the reader edits
    await page.click('#hp-imp [data-compute]');
    await page.click('#hp-roles [data-compute]');
    expect(await cardsReady(page, ['hp-imp', 'hp-roles'], 90_000)).toEqual(['done', 'done']);
    await page.fill('#hp-imp-input', 'The ship sank because the storm grew stronger . The crew was saved .');
    const button = page.locator('#hp-imp-form button[type="submit"]');
    await button.click();
    await page.waitForTimeout(50);
    await button.click();
    const states = await cardsReady(page, ['hp-imp', 'hp-roles'], 90_000);
    expect(states).toEqual(['done', 'done']);
    expect(await page.textContent('#hp-imp-status')).toBe('');
    expect(await page.textContent('#hp-roles-status')).toBe('');
    // what is drawn is the new text's result
    expect(Number(await page.getAttribute('#hp-roles', 'data-t'))).toBeGreaterThan(10);
    // and Compute still works afterwards: a third text is computed and drawn
    await page.fill('#hp-imp-input', 'The storm passed . The ship sailed on .');
    await button.click();
    expect(await cardsReady(page, ['hp-imp', 'hp-roles'], 90_000)).toEqual(['done', 'done']);
    expect(Number(await page.getAttribute('#hp-roles', 'data-t'))).toBeLessThan(12);
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  }, 240_000);

  it('six ArrowUp presses with no gap from row 9 end at row 3 (no step is lost)', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    await page.selectOption('#row', '9');
    await settled(page);
    expect(await page.inputValue('#row')).toBe('9');
    const col = await page.inputValue('#col');
    await page.focus('#fig1 .fig-svg');
    for (let k = 0; k < 6; k++) await page.keyboard.press('ArrowUp', { delay: 0 });
    await settled(page);
    expect(await page.inputValue('#row')).toBe('3');
    expect(await page.inputValue('#col')).toBe(col);
    expect(await page.getAttribute('#inmodel', 'data-row')).toBe('3');
    expect(await page.getAttribute('#fig4 svg', 'data-row')).toBe('3');
    // a second burst from there, mixed with columns (the column stays within 0..T − 1 = 9)
    for (const key of ['ArrowDown', 'ArrowDown', 'ArrowLeft', 'ArrowDown', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(key, { delay: 0 });
    await settled(page);
    expect(await page.inputValue('#row')).toBe('6');
    expect(await page.inputValue('#col')).toBe(String(Math.min(Number(col) + 1, 9)));
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  }, 120_000);
});
