// docs.test.js — the built VitePress site (docs/.vitepress/dist, `make docs`) in
// headless Chromium: the chapter page draws its seven live figures in Chinese
// from one worker and one download of the model, without layout jumps; its
// formulas render as MathML; the site's dark switch reaches the widgets; 360 px
// has no horizontal overflow; the embedding guide's snippet is the live element
// beside it; every page of the sidebar loads without errors.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/docs.test.js
// (rebuilds the site when stale). Skipped without the built-in model's weights.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { ARTIFACTS, BUILTIN_WEIGHTS, CHAPTER, ROOT } from './helpers.js';
import { buildDocsIfStale, serveDocs, launch, waitWidgets, widgetInfo, openRecorded, scrollThrough } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
let srv, browser, ref;

const open = (path, viewport) => openRecorded(browser, srv.url + path, viewport);

const boxHeights = (page) => page.$$eval('attnlab-figure', (els) => els.map((e) => [e.getAttribute('figure'), e.shadowRoot.querySelector('.figure').getBoundingClientRect().height]));

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  if (!HAVE_MODEL) return;
  buildDocsIfStale();
  srv = await serveDocs();
  browser = await launch();
  const m = await loadModel(join(ROOT, 'models/brown-gpt2'));
  ref = m.run(CHAPTER, { topK: 5 });
  m.dispose();
}, 600_000);

afterAll(async () => {
  if (browser) await browser.close();
  if (srv) await srv.close();
});

describe.skipIf(!HAVE_MODEL)('the chapter page', () => {
  let W, reserved;
  beforeAll(async () => {
    W = await open('chapter/');
    reserved = await boxHeights(W.page);   // the placeholders, before anything is drawn below the fold
  }, 60_000);
  afterAll(async () => { await W.context.close(); });

  it('embeds Figs. 1–4 and the Hopfield, √d_k and linear-attention demos, each drawn, in Chinese, with its caption', async () => {
    const { page } = W;
    await scrollThrough(page, 450);
    await waitWidgets(page);
    const info = await widgetInfo(page);
    expect(info.map((w) => w.figure)).toEqual(['hopfield', 'sqrtdk', 'linear', '1', '2', '3', '4']);
    expect(info.map((w) => w.state)).toEqual(Array(7).fill('ready'));
    for (const w of info) {
      expect(w.lang, w.figure).toBe('zh-Hans');             // from the chapter's <div lang="zh-CN">
      expect(w.svgs, w.figure).toBeGreaterThan(0);
    }
    const by = Object.fromEntries(info.map((w) => [w.figure, w]));
    const T = ref.T;
    expect(by['1'].cells).toBe(3 * T * T);                // attention, A − Aᵀ, and A − Aᵀ with the mask off (compare="full")
    expect(by['4'].cells).toBe(3 * T * T);
    expect(by['1'].texts).toMatch(/平均注意力/);
    expect(by['3'].texts).toMatch(/由注意力读出的边/);
    expect(by['4'].texts).toMatch(/作用于注意力矩阵的 do 算子/);
    expect(by.hopfield.note).toMatch(/检索成功/);
    // the DAG scores drawn are the API's
    const bars = await page.$eval('attnlab-figure[figure="3"]', (e) => [...e.shadowRoot.querySelectorAll('g[data-role="bars"] rect')].map((r) => Number(r.dataset.v)));
    bars.forEach((v, h) => expect(v).toBeCloseTo(ref.dagScores[ref.model.nLayer - 1][h], 4));
    // captions: light DOM, shown under each figure
    const caps = await page.$$eval('attnlab-figure', (els) => els.map((e) => [e.textContent.trim().slice(0, 4), e.shadowRoot.querySelector('figcaption').hidden]));
    expect(caps.map((c) => c[0])).toEqual(['图 A.', '图 B.', '图 C.', '图 1.', '图 2.', '图 3.', '图 4.']);
    expect(caps.every((c) => c[1] === false)).toBe(true);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'docs-chapter-1400-light.png'), fullPage: true });
    for (const [k, e] of (await page.$$('attnlab-figure')).entries()) await e.screenshot({ path: join(ARTIFACTS, `docs-chapter-fig-${k}.png`) });
  });

  it('shares one worker and one download of the model between the seven figures', async () => {
    const { page, issues } = W;
    expect(await page.evaluate(() => window.__workers)).toBe(1);
    expect(await page.evaluate(() => globalThis.attnlabWidget.stats())).toMatchObject({ workersStarted: 1, modelLoads: 1 });
    expect(issues.requests.filter((u) => u.endsWith('/model.safetensors'))).toHaveLength(1);
    expect(issues.foreign).toEqual([]);
  });

  it('does not jump: each model figure lands in the room its placeholder kept', async () => {
    const drawn = Object.fromEntries(await boxHeights(W.page));
    for (const [f, h] of reserved) {
      if (['1', '2', '3', '4'].includes(f)) expect(Math.abs(drawn[f] - h), `figure ${f}: reserved ${h}, drawn ${drawn[f]}`).toBeLessThanOrEqual(2);
      else expect(Math.abs(drawn[f] - h) / drawn[f], `figure ${f}: reserved ${h}, drawn ${drawn[f]}`).toBeLessThanOrEqual(0.3);
    }
  });

  it('renders its formulas as MathML (no TeX left over)', async () => {
    const { page } = W;
    const m = await page.evaluate(() => ({
      inline: document.querySelectorAll('.vp-doc math:not([display="block"])').length,
      display: [...document.querySelectorAll('.vp-doc math[display="block"]')].map((x) => x.getBoundingClientRect().height),
      fallback: document.querySelectorAll('.tex-fallback').length,
      dollars: (document.querySelector('.vp-doc').innerText.match(/\$/g) || []).length,
    }));
    expect(m.fallback).toBe(0);
    expect(m.dollars).toBe(0);
    expect(m.inline).toBeGreaterThan(30);
    // every $$ … $$ block of the chapter's source is a display formula on the page
    const blocks = readFileSync(join(ROOT, 'docs/chapter/index.md'), 'utf8').split('\n').filter((l) => l.trim() === '$$').length / 2;
    expect(blocks).toBeGreaterThanOrEqual(5);
    expect(m.display.length).toBe(blocks);
    for (const h of m.display) expect(h).toBeGreaterThan(18);   // laid out as formulas, not collapsed
  });

  it('redraws a figure when an attribute changes', async () => {
    const { page } = W;
    const sel = 'attnlab-figure[figure="4"]';
    const before = await page.$eval(sel, (e) => Number(e.dataset.renders));
    await page.$eval(sel, (e) => e.setAttribute('lambda', '7'));
    await page.waitForFunction(([s, n]) => Number(document.querySelector(s).dataset.renders) > n, [sel, before]);
    expect(await page.$eval(sel, (e) => e.shadowRoot.querySelector('svg').dataset.lambda)).toBe('7');
  });

  it("follows the site's dark switch", async () => {
    const { page } = W;
    await page.click('.VPNavBar button.VPSwitchAppearance');
    await page.waitForFunction(() => [...document.querySelectorAll('attnlab-figure')].every((e) => e.shadowRoot.querySelector('.frame').dataset.theme === 'dark'));
    const bg = await page.$eval('attnlab-figure', (e) => getComputedStyle(e.shadowRoot.querySelector('.frame')).backgroundColor);
    expect(bg).toBe('rgb(30, 30, 34)');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'docs-chapter-1400-dark.png') });
    await page.click('.VPNavBar button.VPSwitchAppearance');
    await page.waitForFunction(() => document.querySelector('attnlab-figure').shadowRoot.querySelector('.frame').dataset.theme === 'light');
  });

  it('logs no error', () => {
    expect(W.issues.pageErrors).toEqual([]);
    expect(W.issues.consoleErrors).toEqual([]);
  });
});

describe.skipIf(!HAVE_MODEL)('the site', () => {
  it('the chapter at 360 px, dark: every figure drawn, no horizontal overflow', async () => {
    const W = await open('chapter/', { width: 360, height: 740, colorScheme: 'dark' });
    await scrollThrough(W.page, 450);
    await waitWidgets(W.page);
    const info = await widgetInfo(W.page);
    expect(info.map((w) => w.state)).toEqual(Array(7).fill('ready'));
    expect(info.every((w) => w.theme === 'dark')).toBe(true);
    expect(await W.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await W.page.evaluate(() => window.scrollTo(0, 0));
    await W.page.screenshot({ path: join(ARTIFACTS, 'docs-chapter-360-dark.png'), fullPage: true });
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });

  it("the embedding guide's snippet is the live figure beside it", async () => {
    const W = await open('guide/embedding');
    const snippet = await W.page.$eval('.vp-doc div[class*="language-html"] code', (c) => c.innerText.trim());
    expect(snippet).toBe(`<attnlab-figure figure="1" text="${CHAPTER}"></attnlab-figure>`);
    await W.page.$eval('.vp-doc attnlab-figure', (e) => e.scrollIntoView());
    await waitWidgets(W.page, '.vp-doc > div > attnlab-figure, .vp-doc p > attnlab-figure');
    const [live] = await widgetInfo(W.page, '.vp-doc attnlab-figure');
    expect(live).toMatchObject({ figure: '1', state: 'ready', svgs: 1, lang: 'en' });
    expect(live.cells).toBe(2 * ref.T * ref.T);
    await W.page.screenshot({ path: join(ARTIFACTS, 'docs-embedding-1400.png') });
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });

  it('keeps its one worker and model across the site\'s client-side navigation', async () => {
    const W = await open('guide/embedding');
    await W.page.$eval('.vp-doc attnlab-figure', (e) => e.scrollIntoView());
    await waitWidgets(W.page, '.vp-doc attnlab-figure');
    await W.page.click('.VPNavBar a[href$="/chapter/"]');
    await W.page.waitForFunction(() => document.querySelectorAll('.vp-doc attnlab-figure').length === 7);
    await W.page.$eval('attnlab-figure[figure="1"]', (e) => e.scrollIntoView());
    await W.page.waitForFunction(() => document.querySelector('attnlab-figure[figure="1"]').dataset.state === 'ready', null, { timeout: 60_000 });
    expect(await W.page.evaluate(() => window.__workers)).toBe(1);
    expect(await W.page.evaluate(() => globalThis.attnlabWidget.stats())).toMatchObject({ workersStarted: 1, modelLoads: 1 });
    expect(W.issues.requests.filter((u) => u.endsWith('/model.safetensors'))).toHaveLength(1);
    // the home page has one live figure (the feature cards only name the tag)
    await W.page.click('.VPNavBar a.title');
    await W.page.waitForSelector('.VPHome');
    expect(await W.page.$$eval('attnlab-figure', (x) => x.length)).toBe(1);
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });

  it("serves the chapter's static figures (npm run figures, in Chinese) that the chapter links to", async () => {
    const W = await open('chapter/');
    const links = await W.page.$$eval('.vp-doc a[href*="/figures/"]', (as) => as.map((a) => a.href));
    expect(links).toHaveLength(8);
    for (const u of links) {
      const res = await W.page.request.get(u);
      expect(res.status(), u).toBe(200);
      const body = await res.body();
      if (u.endsWith('.svg')) expect(body.toString('utf8')).toMatch(/<svg[^>]*lang="zh-Hans"/);
      else expect([...body.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    }
    await W.context.close();
  });

  it('every page of the sidebar loads, with its title and no errors', async () => {
    const W = await open('guide/getting-started');
    const links = await W.page.$$eval('.VPSidebar a.VPLink, .VPNavBar a.VPLink', (as) => [...new Set(as.map((a) => new URL(a.href).pathname))]);
    expect(links.length).toBeGreaterThanOrEqual(12);
    for (const p of links) {
      const res = await W.page.goto(srv.url + p.replace(/^\//, ''));
      expect(res.status(), p).toBe(200);
      expect(await W.page.$eval('.vp-doc h1, .VPHero .name', (h) => h.textContent.trim().length), p).toBeGreaterThan(0);
    }
    expect(W.issues.pageErrors).toEqual([]);
    expect(W.issues.consoleErrors).toEqual([]);
    await W.context.close();
  });
});
