// page-load-path.test.js — how the page gets to its live figures (issue 39 item 3): the small entry module
// starts the worker and the built-in model's load before the rest of the page's code arrives (head-start.js),
// each model file crosses the network once (index.html's preloads are taken over, not repeated), a missing
// model is reported, and the heads and evidence panels are built only when the reader nears them or the page
// is idle after its first live drawing (lazy-panels.js).
//
//   npx vitest run --config tests/e2e/vitest.config.js page-load-path

import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { BUILTIN_WEIGHTS, watchedPage, waitDrawn, holdWeights, useBrowser } from './helpers.js';

const env = useBrowser();

const FILES = ['model.safetensors', 'vocab.json', 'merges.txt', 'config.json'];

const mark = (page, name) => page.evaluate((n) => {
  const m = performance.getEntriesByName(n);
  return m.length ? m[0].startTime : null;
}, name);

describe.runIf(existsSync(BUILTIN_WEIGHTS))('the load path of the built-in model', () => {
  it('the entry module starts the load before the page\'s main code runs; each file is requested once', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    const requests = new Map();
    page.on('request', (r) => {
      const name = new URL(r.url()).pathname.split('/').pop();
      if (r.url().includes('/models/brown-gpt2/')) requests.set(name, (requests.get(name) || 0) + 1);
    });
    try {
      await page.goto(env.url);
      await waitDrawn(page);
      const entry = await mark(page, 'attnlab:entry'), boot = await mark(page, 'attnlab:boot');
      expect(entry).not.toBeNull();
      expect(entry).toBeLessThan(boot);
      // the built-in model's load began in the entry module (head-start.js), not when main.js got to it
      const early = await mark(page, 'attnlab:load-early');
      expect(early).not.toBeNull();
      expect(early).toBeLessThan(boot);
      // one request per file: the preload's, taken over by the entry module's XHR (a second would be a second download)
      expect(Object.fromEntries(requests)).toEqual(Object.fromEntries(FILES.map((f) => [f, 1])));
      // the page shows the built-in model, loaded with half storage like the page promises
      expect(await page.evaluate(() => document.body.dataset.model)).toBe('brown-gpt2');
      const timing = await page.evaluate(() => JSON.parse(document.body.dataset.loadTiming || 'null'));
      expect(timing).not.toBeNull();
      // the progress bar had its events replayed: it is hidden once the model is in
      expect(await page.locator('#model-progress').isHidden()).toBe(true);
      expect(P.issues.pageErrors).toEqual([]);
      expect(P.issues.consoleErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a missing built-in model is told as such, and the page stays usable', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await context.route('**/models/brown-gpt2/model.safetensors', (route) => route.fulfill({ status: 404, body: 'no' }));
      await page.goto(env.url);
      await page.waitForFunction(() => document.body.dataset.state === 'error');
      const text = await page.textContent('#error-text');
      expect(text).toContain('/models/brown-gpt2/');
      expect(text).toMatch(/make model/);
      expect(await page.locator('#model-select').isEnabled()).toBe(true);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

/** The page opened with its weights held back, once its main code runs; resolves to the release function. */
async function openHeld(page, context) {
  const release = await holdWeights(context);
  await page.goto(env.url);
  await page.waitForFunction(() => performance.getEntriesByName('attnlab:boot').length > 0);
  return release;
}

describe.runIf(existsSync(BUILTIN_WEIGHTS))('the heads and evidence panels are built on first need', () => {
  it('not while the model loads; built once the page is live and idle', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      const release = await openHeld(page, context);
      await page.waitForTimeout(300);
      // the panels' sections are there (headings, landmarks), their cards are not — unless a section came within
      // the observer's margin (1200 px) of the viewport: on a loaded machine the first layout can come before the
      // opening pictures have their height, and a reader that near is served at once (lazy-panels.js's rule)
      const early = await page.evaluate(() => {
        const f = document.getElementById('figures');
        return { panels: f.dataset.panels, why: f.dataset.panelsWhy, near: f.dataset.panelsNear, cards: document.getElementById('evidence').children.length };
      });
      if (early.why === undefined) expect([early.panels, early.cards]).toEqual([undefined, 0]);
      else {
        console.log(`[page-load-path] panels built before the model by the reader's nearness: ${early.near}`);
        expect(early.why, 'built before the model only because a section was near').toBe('near');
        expect(Number(early.near.split(':')[1])).toBeLessThanOrEqual(1200);
      }
      release();
      await waitDrawn(page);
      const [live, built] = [await mark(page, 'attnlab:live'), await mark(page, 'attnlab:panels')];
      if (early.why === undefined) {
        expect(built).toBeGreaterThan(live);
        expect(await page.evaluate(() => document.getElementById('figures').dataset.panelsWhy)).toBe('live');
      }
      expect(await page.evaluate(() => document.getElementById('evidence').children.length)).toBeGreaterThan(0);
      // built with the page's model: the evidence panel's layer choice has the model's layers
      const L = await page.evaluate(() => document.getElementById('ev-edge-layer').options.length);
      expect(L).toBeGreaterThan(0);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('scrolled to before the model is in: built at once, then given the model when it arrives', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      const release = await openHeld(page, context);
      await page.evaluate(() => document.getElementById('heads').scrollIntoView());
      await page.waitForFunction(() => document.getElementById('figures').dataset.panels === 'built');
      expect(await mark(page, 'attnlab:live')).toBeNull();
      expect(await page.evaluate(() => document.getElementById('ev-edge-layer').options.length)).toBe(0);
      release();
      await waitDrawn(page);
      expect(await page.evaluate(() => document.getElementById('ev-edge-layer').options.length)).toBeGreaterThan(0);
      expect(await page.evaluate(() => document.getElementById('hp-cf-layer').options.length)).toBeGreaterThan(0);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a link to a card inside a panel (#cx-comp) builds the panels and scrolls there', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}#cx-comp`);
      await page.waitForFunction(() => document.getElementById('cx-comp') !== null);
      await waitDrawn(page);
      const top = await page.evaluate(() => document.getElementById('cx-comp').getBoundingClientRect().top);
      expect(Math.abs(top)).toBeLessThan(900);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('before the page\'s script runs', () => {
  it('the labels are there in English (filled at build time) and the opening view is painted', async () => {
    const { translator } = await import('../../web/src/page/i18n.js');
    const t = translator('en');
    const context = await env.browser.newContext({ viewport: { width: 1400, height: 900 }, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(env.url);
      const labels = await page.$$eval('[data-i18n]', (xs) => xs.map((x) => [x.dataset.i18n, x.textContent]));
      expect(labels.length).toBeGreaterThan(50);
      for (const [key, text] of labels) expect(text, key).toBe(t(key));
      const aria = await page.$$eval('[data-i18n-aria]', (xs) => xs.map((x) => [x.dataset.i18nAria, x.getAttribute('aria-label')]));
      for (const [key, text] of aria) expect(text, key).toBe(t(key));
      if (existsSync(BUILTIN_WEIGHTS)) {
        await page.waitForFunction(() => document.querySelector('.prerender-img').complete);
        expect(await page.$eval('.prerender-img', (x) => x.naturalWidth)).toBeGreaterThan(0);
      }
      await page.screenshot({ path: 'tests/e2e/artifacts/page-before-script.png' });
    } finally {
      await context.close();
    }
  });
});
