// widget.test.js — 'attnlab/widget' in the no-build example (examples/plain-html/,
// one <script type="module"> loading web/dist/widget/attnlab-widget.js), served
// as static files from the repository root under the page's strict
// Content-Security-Policy, in headless Chromium:
//   every figure draws real SVG whose numbers are the API's, all elements share
//   one worker and one download of the model, nothing loads before it is needed,
//   attributes redraw, dark mode and 中文 apply, 360 px has no horizontal
//   overflow, and nothing breaks the CSP or reaches another host.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/widget.test.js
// (builds web/dist/widget when stale: `make widget`). The model figures use the
// built-in model; without its weights (models/brown-gpt2/model.safetensors) the
// file is skipped.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, loadLineage } from '../../web/src/index.js';
import { ARTIFACTS, BUILTIN_WEIGHTS, CHAPTER, ROOT } from './helpers.js';
import { buildWidgetIfStale, serveRepo, launch, waitWidgets, widgetInfo, openRecorded, scrollThrough } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const URL_PATH = 'examples/plain-html/';

let srv, browser, model, lab, ref;

/** A page of the example (openRecorded: what must not happen, and a count of Worker constructions). */
const open = ({ path = URL_PATH, ...viewport } = {}) => openRecorded(browser, srv.url + path, viewport);

const cellValues = (page, sel, role) => page.$eval(sel, (e, r) => [...e.shadowRoot.querySelectorAll(`svg g[data-role="${r}"] rect[data-i][data-j]`)]
  .map((c) => [Number(c.dataset.i), Number(c.dataset.j), Number(c.dataset.v)]), role);

function expectMatrix(cells, A, T, tol = 1e-4) {
  expect(cells.length).toBe(T * T);
  for (const [i, j, v] of cells) expect(Math.abs(v - A[i * T + j]), `cell ${i},${j}`).toBeLessThanOrEqual(tol);
}

const renders = (page, sel) => page.$eval(sel, (e) => Number(e.dataset.renders || 0));
async function afterRedraw(page, sel, action) {
  const before = await renders(page, sel);
  await action();
  await page.waitForFunction(([s, n]) => Number(document.querySelector(s).dataset.renders || 0) > n && document.querySelector(s).dataset.state === 'ready',
    [sel, before], { timeout: 60_000 });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  if (!HAVE_MODEL) return;
  buildWidgetIfStale();
  srv = await serveRepo();
  browser = await launch();
  model = await loadModel(join(ROOT, 'models/brown-gpt2'));
  lab = await loadLineage();
  ref = model.run(CHAPTER, { topK: 5 });
}, 240_000);

afterAll(async () => {
  if (model) model.dispose();
  if (lab) lab.dispose();
  if (browser) await browser.close();
  if (srv) await srv.close();
});

describe.skipIf(!HAVE_MODEL)('the plain-HTML example (no build step)', () => {
  let W;
  beforeAll(async () => { W = await open(); }, 60_000);
  afterAll(async () => { await W.context.close(); });

  it('loads nothing heavy before a figure is in view, and shows placeholders with a progress bar', async () => {
    const { page, issues } = W;
    await page.waitForFunction(() => document.querySelector('attnlab-figure[figure="1"]').dataset.state === 'ready', null, { timeout: 90_000 });
    const last = await page.$eval('attnlab-figure[figure="sqrtdk"]', (e) => ({
      state: e.dataset.state, svgs: e.shadowRoot.querySelectorAll('.figure svg').length,
      progress: e.shadowRoot.querySelectorAll('.placeholder progress').length,
      reserve: e.shadowRoot.querySelector('.figure').getBoundingClientRect().height,
    }));
    expect(last.state).toBe('waiting');
    expect(last.svgs).toBe(0);
    expect(last.progress).toBe(1);
    expect(last.reserve).toBeGreaterThan(200);   // the placeholder keeps the figure's room: no layout jump
    expect(issues.requests.filter((u) => u.endsWith('model.safetensors'))).toHaveLength(1);
  });

  it('draws all seven figures with real SVG content, in one worker with one download of the model', async () => {
    const { page, issues } = W;
    await scrollThrough(page, 400);
    await waitWidgets(page);
    const info = await widgetInfo(page);
    expect(info.map((w) => w.state)).toEqual(Array(7).fill('ready'));
    const by = Object.fromEntries(info.map((w) => [w.figure, w]));
    const T = ref.T, HS = ref.model.headSize ?? ref.model.nEmbd / ref.model.nHead;
    expect(by['1'].figures).toEqual(['fig1']);
    expect(by['1'].cells).toBe(2 * T * T);                     // attention + asymmetry
    expect(by['2'].cells).toBe(T * T + HS * HS);               // posterior + outer product
    expect(by['3'].figures).toEqual(['fig3']);
    expect(by['4'].cells).toBe(3 * T * T);                     // original, soft, hard
    expect(by.hopfield.figures).toEqual(['hopfield-start', 'hopfield-final', 'hopfield-target', 'hopfield-energy', 'modern-hopfield-2d']);
    expect(by.linear.figures).toEqual(['attention-timing']);
    expect(by.sqrtdk.figures).toEqual(['qk-histogram', 'softmax-entropy']);
    for (const w of info) expect(w.texts.length, w.figure).toBeGreaterThan(20);
    // the page's one worker, counted two ways
    expect(await page.evaluate(() => window.__workers)).toBe(1);
    expect(await page.evaluate(() => globalThis.attnlabWidget.stats())).toMatchObject({ workersStarted: 1, modelLoads: 1, workerAlive: true });
    expect(issues.requests.filter((u) => u.endsWith('model.safetensors'))).toHaveLength(1);
    expect(issues.requests.filter((u) => u.endsWith('.wasm'))).toHaveLength(2); // one model instance + one lineage instance
    await page.screenshot({ path: join(ARTIFACTS, 'widget-example-1400-light.png'), fullPage: true });
    const els = await page.$$('attnlab-figure');
    for (const [k, e] of els.entries()) await e.screenshot({ path: join(ARTIFACTS, `widget-example-${k}.png`) });
  });

  it('draws the API\'s numbers: Fig. 1 is the last layer\'s head average, Fig. 3 the DAG scores, the lineage demos the lineage API', async () => {
    const { page } = W;
    const L = ref.model.nLayer;
    expectMatrix(await cellValues(page, 'attnlab-figure[figure="1"]', 'attention'), ref.attention(L - 1, 'avg'), ref.T);
    const bars = await page.$eval('attnlab-figure[figure="3"]', (e) => [...e.shadowRoot.querySelectorAll('g[data-role="bars"] rect')].map((r) => Number(r.dataset.v)));
    expect(bars).toHaveLength(ref.model.nHead);
    bars.forEach((v, h) => expect(v).toBeCloseTo(ref.dagScores[L - 1][h], 4));
    const nullDag = await page.$eval('attnlab-figure[figure="3"]', (e) => Number(e.shadowRoot.querySelector('svg').getAttribute('data-null-dag')));
    expect(nullDag).toBeCloseTo(0.7071, 4);
    // Hopfield: the corrupted glyph 3 (20 %, seed 1) as the API makes it
    const start = await page.$eval('attnlab-figure[figure="hopfield"]', (e) => [...e.shadowRoot.querySelectorAll('svg[data-figure="hopfield-start"] g[data-role="grid"] rect')].map((r) => Number(r.dataset.v)));
    expect(start).toEqual(Array.from(lab.corrupt(lab.glyph(3), 0.2, { seed: 1 })));
    const final = await page.$eval('attnlab-figure[figure="hopfield"]', (e) => [...e.shadowRoot.querySelectorAll('svg[data-figure="hopfield-final"] g[data-role="grid"] rect')].map((r) => Number(r.dataset.v)));
    expect(final).toEqual(Array.from(lab.glyph(3)));          // retrieved
    // √d_k: the scaled variance is ~1 and the raw one ~d_k, as the API says
    const stats = lab.qkStats(4000, 64, { seed: 6 });
    const note = await page.$eval('attnlab-figure[figure="sqrtdk"]', (e) => e.shadowRoot.querySelector('.note').textContent);
    expect(note).toContain(stats.variance.toFixed(1));
    expect(note).toContain(stats.scaledVariance.toFixed(2));
  });

  it('redraws when an attribute changes: layer, text, row/col, lambda', async () => {
    const { page } = W;
    const f1 = 'attnlab-figure[figure="1"]';
    await afterRedraw(page, f1, () => page.$eval(f1, (e) => e.setAttribute('layer', '0')));
    expectMatrix(await cellValues(page, f1, 'attention'), ref.attention(0, 'avg'), ref.T);
    expect(await page.$eval(f1, (e) => e.shadowRoot.querySelector('select').value)).toBe('0');   // the control follows
    const text = 'The storm sank the ship .';
    const r2 = model.run(text, { topK: 5 });
    await afterRedraw(page, f1, () => page.$eval(f1, (e, t) => e.setAttribute('text', t), text));
    expectMatrix(await cellValues(page, f1, 'attention'), r2.attention(0, 'avg'), r2.T);
    expect(await page.$eval(f1, (e) => e.shadowRoot.querySelector('svg').getAttribute('data-text'))).toBe(text);
    const f4 = 'attnlab-figure[figure="4"]';
    await afterRedraw(page, f4, () => page.$eval(f4, (e) => { e.setAttribute('row', '5'); e.setAttribute('col', '1'); e.setAttribute('lambda', '6'); }));
    const svg4 = await page.$eval(f4, (e) => { const s = e.shadowRoot.querySelector('svg'); return { row: s.dataset.row, col: s.dataset.col, lambda: s.dataset.lambda }; });
    expect(svg4).toEqual({ row: '5', col: '1', lambda: '6' });
    // the hard do drawn: row 5 is one-hot at column 1
    const hard = (await cellValues(page, f4, 'hard-do')).filter(([i]) => i === 5);
    for (const [, j, v] of hard) expect(v).toBeCloseTo(j === 1 ? 1 : 0, 6);
    // a click on a cell sets row and col
    const f2 = 'attnlab-figure[figure="2"]';
    await afterRedraw(page, f2, async () => {
      const cell = await page.evaluateHandle((s) => document.querySelector(s).shadowRoot.querySelector('g[data-role="posterior"] rect[data-i="7"][data-j="3"]'), f2);
      await cell.asElement().click();
    });
    expect(await page.$eval(f2, (e) => [e.getAttribute('row'), e.getAttribute('col')])).toEqual(['7', '3']);
    expect(await page.$eval(f2, (e) => [e.shadowRoot.querySelector('svg').dataset.i, e.shadowRoot.querySelector('svg').dataset.j])).toEqual(['7', '3']);
    // still one worker
    expect(await page.evaluate(() => window.__workers)).toBe(1);
  });

  it('Fig. 1 with compare="full" draws A − Aᵀ with the mask off; a masked soft do in Fig. 4 is labelled, not an error', async () => {
    const { page } = W;
    const f1 = 'attnlab-figure[figure="1"]';
    const L = ref.model.nLayer;
    await afterRedraw(page, f1, () => page.$eval(f1, (e, [t, l]) => { e.setAttribute('layer', String(l)); e.setAttribute('text', t); e.setAttribute('compare', 'full'); }, [CHAPTER, L - 1]));
    const full = model.run(CHAPTER, { mask: 'full' });
    const A = full.attention(L - 1, 'avg'), T = full.T;
    const want = Float32Array.from({ length: T * T }, (_, k) => A[k] - A[(k % T) * T + Math.floor(k / T)]);
    expectMatrix(await cellValues(page, f1, 'asymmetry-full'), want, T);
    expect(await page.$eval(f1, (e) => e.shadowRoot.querySelector('svg').dataset.compare)).toBe('full');
    const f4 = 'attnlab-figure[figure="4"]';
    await afterRedraw(page, f4, () => page.$eval(f4, (e, t) => { e.setAttribute('text', t); e.setAttribute('kind', 'soft'); e.setAttribute('row', '1'); e.setAttribute('col', '8'); }, CHAPTER));
    expect(await page.$eval(f4, (e) => e.dataset.state)).toBe('ready');
    expect(await page.$eval(f4, (e) => e.shadowRoot.querySelector('svg').dataset.masked)).toBe('true');
    expect(await page.$eval(f4, (e) => e.shadowRoot.querySelector('[data-masked="true"]').textContent)).toMatch(/EMASKED/);
    await afterRedraw(page, f4, () => page.$eval(f4, (e) => { e.setAttribute('kind', 'hard'); e.setAttribute('row', '5'); e.setAttribute('col', '1'); }));
    // back to the state the previous test left
    await afterRedraw(page, f1, () => page.$eval(f1, (e) => { e.removeAttribute('compare'); e.setAttribute('layer', '0'); e.setAttribute('text', 'The storm sank the ship .'); }));
  });

  it('speaks Chinese with lang="zh" (and follows a lang change)', async () => {
    const { page } = W;
    const zh = await page.$eval('attnlab-figure[figure="sqrtdk"]', (e) => ({ lang: e.shadowRoot.querySelector('svg').getAttribute('lang'), text: e.shadowRoot.querySelector('svg').textContent }));
    expect(zh.lang).toBe('zh-Hans');
    expect(zh.text).toMatch(/随机 q、k/);
    const f3 = 'attnlab-figure[figure="3"]';
    await afterRedraw(page, f3, () => page.$eval(f3, (e) => e.setAttribute('lang', 'zh')));
    const t3 = await page.$eval(f3, (e) => ({ svg: e.shadowRoot.querySelector('svg').textContent, controls: e.shadowRoot.querySelector('.controls').textContent }));
    expect(t3.svg).toMatch(/各注意力头的 DAG 得分/);
    expect(t3.controls).toMatch(/句子/);
    await e2eShot(page, f3, 'widget-fig3-zh.png');
  });

  it('follows the system\'s dark scheme, and the theme attribute overrides it', async () => {
    const { page } = W;
    const theme = (sel) => page.$eval(sel, (e) => {
      const f = e.shadowRoot.querySelector('.frame');
      return { theme: f.dataset.theme, bg: getComputedStyle(f).backgroundColor };
    });
    expect(await theme('attnlab-figure[figure="1"]')).toEqual({ theme: 'light', bg: 'rgb(255, 255, 255)' });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => document.querySelector('attnlab-figure').shadowRoot.querySelector('.frame').dataset.theme === 'dark');
    const dark = await theme('attnlab-figure[figure="1"]');
    expect(dark.bg).toBe('rgb(30, 30, 34)');
    await page.$eval('attnlab-figure[figure="2"]', (e) => e.setAttribute('theme', 'light'));
    expect((await theme('attnlab-figure[figure="2"]')).theme).toBe('light');
    await page.$eval('attnlab-figure[figure="2"]', (e) => e.removeAttribute('theme'));
    expect((await theme('attnlab-figure[figure="2"]')).theme).toBe('dark');
    // the figures themselves stay on white, as exported
    expect(await page.$eval('attnlab-figure[figure="1"]', (e) => getComputedStyle(e.shadowRoot.querySelector('svg')).backgroundColor)).toBe('rgb(255, 255, 255)');
    await page.screenshot({ path: join(ARTIFACTS, 'widget-example-1400-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('breaks no CSP rule, logs no error and asks no other host', async () => {
    const { page, issues } = W;
    expect(await page.evaluate(() => window.__csp)).toEqual([]);
    expect(issues.pageErrors).toEqual([]);
    expect(issues.consoleErrors).toEqual([]);
    expect(issues.foreign).toEqual([]);
  });
});

async function e2eShot(page, sel, name) {
  const h = await page.$(sel);
  await h.screenshot({ path: join(ARTIFACTS, name) });
}

describe.skipIf(!HAVE_MODEL)('at 360 px, dark', () => {
  it('every figure fits the width (panels stacked), with no horizontal overflow', async () => {
    const W = await open({ width: 360, height: 740, colorScheme: 'dark' });
    const { page, issues } = W;
    await scrollThrough(page, 400);
    await waitWidgets(page);
    const info = await widgetInfo(page);
    expect(info.map((w) => w.state)).toEqual(Array(7).fill('ready'));
    expect(info.every((w) => w.theme === 'dark')).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    const widths = await page.$$eval('attnlab-figure', (els) => els.map((e) => {
      const box = e.getBoundingClientRect();
      return { host: box.right, svgs: [...e.shadowRoot.querySelectorAll('.figure svg')].map((s) => s.getBoundingClientRect().right) };
    }));
    for (const w of widths) {
      expect(w.host).toBeLessThanOrEqual(360);
      for (const r of w.svgs) expect(r).toBeLessThanOrEqual(w.host + 0.5);
    }
    // Fig. 1's two panels are stacked: the attention panel is above the asymmetry panel
    const stacked = await page.$eval('attnlab-figure[figure="1"]', (e) => {
      const a = e.shadowRoot.querySelector('g[data-role="attention"]').getBoundingClientRect();
      const b = e.shadowRoot.querySelector('g[data-role="asymmetry"]').getBoundingClientRect();
      return b.top >= a.bottom;
    });
    expect(stacked).toBe(true);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'widget-example-360-dark.png'), fullPage: true });
    expect(await page.evaluate(() => window.__workers)).toBe(1);
    expect(issues.pageErrors).toEqual([]);
    expect(issues.consoleErrors).toEqual([]);
    await W.context.close();
  });
});

describe.skipIf(!HAVE_MODEL)('<attnlab-lab> (examples/plain-html/lab.html)', () => {
  it('draws the four figures on one sentence, in the page\'s language, and a click intervenes inside the model', async () => {
    const W = await open({ path: `${URL_PATH}lab.html` });
    const { page, issues } = W;
    await waitWidgets(page, 'attnlab-lab');
    const [info] = await widgetInfo(page, 'attnlab-lab');
    expect(info.figures).toEqual(['fig1', 'fig2', 'fig3', 'fig4']);
    expect(info.lang).toBe('zh-Hans');                        // <html lang="zh-CN">
    const T = ref.T, L = ref.model.nLayer;
    expectMatrix(await cellValues(page, 'attnlab-lab', 'attention'), ref.attention(L - 1, 'avg'), T);
    const tops = () => page.$eval('attnlab-lab', (e) => ({ ...e.shadowRoot.querySelector('.tops').dataset }));
    expect((await tops()).before).toBe(ref.top[0].token);
    // hard do at layer 0 on the last row towards column 2, all heads: the API's next token after it
    const after = model.run(CHAPTER, { topK: 5, interventions: [{ kind: 'hard', layer: 0, head: 'all', row: T - 1, col: 2 }] });
    await afterRedraw(page, 'attnlab-lab', () => page.$eval('attnlab-lab', (e) => e.setAttribute('layer', '0')));
    await afterRedraw(page, 'attnlab-lab', async () => {
      const cell = await page.evaluateHandle((t) => document.querySelector('attnlab-lab').shadowRoot.querySelector(`g[data-role="original"] rect[data-i="${t - 1}"][data-j="2"]`), T);
      await cell.asElement().click();
    });
    expect(await page.$eval('attnlab-lab', (e) => [e.getAttribute('row'), e.getAttribute('col')])).toEqual([String(T - 1), '2']);
    expect((await tops()).after).toBe(after.top[0].token);
    expect(await page.evaluate(() => window.__workers)).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'widget-lab-1400.png'), fullPage: true });
    expect(issues.pageErrors).toEqual([]);
    expect(issues.consoleErrors).toEqual([]);
    expect(await page.evaluate(() => window.__csp)).toEqual([]);
    await W.context.close();
  });
});

describe.skipIf(!HAVE_MODEL)('a model that cannot be loaded', () => {
  it('shows its error in that element only; the others, on the same worker, keep working', async () => {
    const W = await open();
    const { page } = W;
    await page.waitForFunction(() => document.querySelector('attnlab-figure[figure="1"]').dataset.state === 'ready', null, { timeout: 90_000 });
    await page.evaluate(() => {
      const bad = document.createElement('attnlab-figure');
      bad.setAttribute('figure', '3');
      bad.setAttribute('model', '/no/such/model/');
      bad.id = 'bad';
      document.querySelector('main').prepend(bad);
    });
    await page.waitForFunction(() => document.getElementById('bad').dataset.state === 'error', null, { timeout: 60_000 });
    const msg = await page.$eval('#bad', (e) => e.shadowRoot.querySelector('.note').textContent);
    expect(msg).toMatch(/could not be drawn/);
    expect(msg).toMatch(/config\.json/);
    expect(await page.$eval('#bad', (e) => !!e.shadowRoot.querySelector('.note button'))).toBe(true);   // "Try again"
    // the shared worker survived: the good figure still redraws
    await afterRedraw(page, 'attnlab-figure[figure="1"]', () => page.$eval('attnlab-figure[figure="1"]', (e) => e.setAttribute('head', '1')));
    expectMatrix(await cellValues(page, 'attnlab-figure[figure="1"]', 'attention'), ref.attention(ref.model.nLayer - 1, 1), ref.T);
    expect(await page.evaluate(() => globalThis.attnlabWidget.stats())).toMatchObject({ workersStarted: 1, modelLoads: 2 });
    await W.context.close();
  });
});
