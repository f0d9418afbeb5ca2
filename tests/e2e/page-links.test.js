// page-links.test.js — links that reopen a view of the page, in headless Chromium on the tiny model: a link
// sets the layer, head, cell, kind, λ, mask and ablations, the URL follows the view and Back returns to it;
// hostile values are refused with a visible note naming them (issue 36, item 8: also on the first load, for
// the 4 000-character cap on ?text=), and that note stays beside a later error instead of being replaced by it.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/page-links.test.js
import { describe, it, expect } from 'vitest';
import { CHAPTER, TINY, watchedPage, waitDrawn, useBrowser } from './helpers.js';

const env = useBrowser();

describe('links that reopen a view', () => {
  const VIEW = `text=${encodeURIComponent(CHAPTER)}&layer=1&head=2&row=7&col=3&kind=soft&lambda=4.5&mask=window&w=3&ablate=0.1,2.3`;

  it('a link sets the layer, head, cell, kind, λ, mask and ablations; the URL follows the view; back returns', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(`${env.url}?model=${TINY}&${VIEW}`);
    await waitDrawn(page);
    await page.waitForFunction(() => document.getElementById('inmodel').dataset.row === '7');
    expect(await page.inputValue('#layer')).toBe('1');
    expect(await page.inputValue('#head')).toBe('2');
    expect(await page.inputValue('#row')).toBe('7');
    expect(await page.inputValue('#col')).toBe('3');
    expect(await page.isChecked('#kind-soft')).toBe(true);
    expect(await page.inputValue('#lambda')).toBe('4.5');
    expect(await page.inputValue('#mask')).toBe('window');
    expect(await page.inputValue('#window')).toBe('3');
    expect(await page.isChecked('#ablation input[data-layer="0"][data-head="1"]')).toBe(true);
    expect(await page.isChecked('#ablation input[data-layer="2"][data-head="3"]')).toBe(true);
    expect(await page.getAttribute('#inmodel', 'data-lambda')).toBe('4.5');
    expect(await page.getAttribute('#inmodel', 'data-kind')).toBe('soft');
    expect(await page.isHidden('#error')).toBe(true);
    // another layer: a new history entry with the new view
    const n = Number(await page.evaluate(() => document.body.dataset.renders));
    await page.selectOption('#layer', '0');
    await waitDrawn(page, n + 1);
    await page.waitForFunction(() => new URLSearchParams(location.search).get('layer') === '0');
    expect(new URL(page.url()).searchParams.get('row')).toBe('7');
    // back: the link's view again
    await page.goBack();
    await page.waitForFunction(() => document.getElementById('layer').value === '1' && document.body.dataset.state === 'ready');
    await waitDrawn(page, n + 2);
    expect(await page.getAttribute('#inmodel', 'data-row')).toBe('7');
    expect(await page.inputValue('#head')).toBe('2');
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });

  it('hostile values are refused with a visible note and the page draws its own view', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    const bad = 'layer=99&head=-1&row=abc&col=2&kind=evil&lambda=1e9&mask=%3Cscript%3E&w=0&ablate=0.1,9.9';
    await page.goto(`${env.url}?model=${TINY}&${bad}`);
    await waitDrawn(page);
    await page.waitForSelector('#error:not([hidden])');
    const note = await page.textContent('#error-text');
    for (const k of ['layer=99', 'head=-1', 'row=abc', 'kind=evil', 'lambda=1e9', 'mask=<script>', 'w=0', 'ablate=0.1,9.9']) expect(note).toContain(k);
    expect(await page.inputValue('#layer')).toBe('2');   // the tiny model's last layer
    expect(await page.inputValue('#mask')).toBe('causal');
    expect(await page.locator('#error script').count()).toBe(0);
    // a cell outside the sentence
    await page.goto(`${env.url}?model=${TINY}&row=500&col=1`);
    await waitDrawn(page);
    await page.waitForFunction(() => /row=500/.test(document.getElementById('error-text').textContent));
    expect(W.issues.pageErrors).toEqual([]);
    expect(W.issues.dialogs).toEqual([]);
    await W.context.close();
  });
});

describe('link values', () => {
  it('a ?text= over 4 000 characters is refused on the first load: the page runs its own sentence and says why', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    const long = 'storm '.repeat(700); // 4 200 characters
    await page.goto(`${env.url}?model=${TINY}&text=${encodeURIComponent(long)}`);
    await waitDrawn(page);
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error-text')).toContain('text=storm');
    const box = await page.inputValue('#text');
    expect(box.length).toBeLessThan(4000);
    expect(box).not.toContain('storm storm');
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });

  it('the note on refused values stays when the run then fails too', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(`${env.url}?model=${TINY}&text=&layer=99`); // an empty text: the run's own error
    await page.waitForFunction(() => /Type some text/.test(document.getElementById('error-text').textContent), null, { timeout: 60000 });
    const note = await page.textContent('#error-text');
    expect(note).toContain('layer=99');
    expect(note).toMatch(/Type some text/);
    // typing a sentence clears the run's error; the link's note stays until the view changes
    await page.fill('#text', 'The storm sank the ship .');
    await page.press('#text', 'Enter');
    await waitDrawn(page);
    await page.waitForFunction(() => !/Type some text/.test(document.getElementById('error-text').textContent));
    expect(await page.textContent('#error-text')).toContain('layer=99');
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });
});
