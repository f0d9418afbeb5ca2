// page.test.js — the chapter page (web/dist/page/, `make page`) in Firefox ESR on the built-in model:
// it goes live on the build the loader picks (printed with its threads), a click on a Fig. 1 cell runs the
// do at that cell, the DAG-profile card computes, a typed sentence runs, and the Chinese page has Chinese
// labels. Drawn numbers are compared with the JS API's in Node on the same build (backend) and weights.
// No page error, console error, CSP violation, dialog or request to another origin, throughout.
//
//   npx vitest run --config tests/firefox/vitest.config.js page
//
// The tests of the first describe are one reader's session on one page, in order.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, displayDo } from '../../web/src/index.js';
import { klDivergence } from '../../web/src/page/compare.js';
import { DEFAULT_DAG } from '../../web/src/page/heads.js';
import { STRINGS } from '../../web/src/page/i18n.js';
import { BUILTIN_WEIGHTS as PAGE_WEIGHTS } from '../../web/src/page/builtin-files.js';
import { AUTO_MAX_THREADS } from '../../web/src/core/threads.js';
import {
  ROOT, CHAPTER, BUILTIN_WEIGHTS, BUILDS, RELAXED_PROBE, NO_PROBLEMS, buildOf, setup, watchedPage, waitDrawn,
  afterRender, figCells, worstError, seconds,
} from './helpers.js';

// data-v keeps 6 significant digits, and both sides run the same build on the same 16-bit weights:
// |page − API| ≤ 1e-5·|API| + 1e-6 (tests/e2e/page.test.js's tolerance)
const TOL = { rel: 1e-5, abs: 1e-6 };
const NEW_TEXT = 'The rain made the road wet , so the car skidded into the ditch .';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
let env, W, local, engine, L;

const value = (page, sel) => page.$eval(sel, (e) => e.value);
const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
const attr = (page, sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name);
const topOf = (page, id) => page.$$eval(`#${id} tbody tr`, (rs) => rs.map((r) => ({ id: Number(r.dataset.id), p: Number(r.dataset.p) })));

/** What the page says it runs, and what the browser offers. */
function engineOf(page) {
  return page.evaluate((probe) => ({
    backend: document.body.dataset.backend, threads: Number(document.body.dataset.threads),
    status: document.getElementById('model-status').textContent, note: document.getElementById('model-status').title,
    isolated: globalThis.crossOriginIsolated === true, sab: typeof SharedArrayBuffer !== 'undefined',
    cores: navigator.hardwareConcurrency, relaxed: WebAssembly.validate(new Uint8Array(probe)),
    loadTiming: document.body.dataset.loadTiming || '',
  }), RELAXED_PROBE);
}

beforeAll(async () => {
  if (!HAVE_MODEL) return;
  env = await setup();
  W = await watchedPage(env);
  const t0 = performance.now();
  await W.page.goto(env.url);
  await waitDrawn(W.page);
  const liveMs = performance.now() - t0;
  engine = await engineOf(W.page);
  engine.build = buildOf(engine.backend, engine.threads);
  console.log(`[firefox] page live in ${seconds(liveMs)} (goto → first drawing, panels built); load ${engine.loadTiming}`);
  console.log(`[firefox] build ${engine.build}: backend ${engine.backend}, ${engine.threads} thread(s); ` +
    `crossOriginIsolated ${engine.isolated}, SharedArrayBuffer ${engine.sab}, hardwareConcurrency ${engine.cores}, ` +
    `relaxed SIMD validates ${engine.relaxed}${engine.note ? `; note: ${engine.note}` : ''}`);
  console.log(`[firefox] status line: ${engine.status}`);
  // the Node side: the page's backend and weights (16-bit for the built-in model)
  local = await loadModel(join(ROOT, 'models/brown-gpt2'), { weights: PAGE_WEIGHTS, backend: engine.backend });
  L = local.config.nLayer;
}, 240_000);

afterAll(async () => {
  if (local) local.dispose();
  if (env) await env.close();
});

describe.skipIf(!HAVE_MODEL)('the page in Firefox ESR, on the built-in model', () => {
  it('goes live: four drawn figures, a build the loader can pick, threads as the browser allows', async () => {
    const { page } = W;
    for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) {
      const n = await page.$$eval(`#${f} .fig-svg svg[data-figure="${f}"]`, (s) => s.length);
      expect(n, f).toBe(1);
      const marks = await page.$eval(`#${f} .fig-svg svg`, (s) => s.querySelectorAll('rect, path, circle, line').length);
      expect(marks, `${f} draws marks`).toBeGreaterThan(10);
    }
    const T = local.tokenize(CHAPTER).tokens.length;
    expect((await figCells(page, 'fig1', 'attention')).length).toBe(T * T);
    expect(await value(page, '#text')).toBe(CHAPTER);
    // the backend the page names is the one this browser validates; the threads are the loader's rule
    expect(BUILDS).toContain(engine.build);
    expect(engine.backend).toBe(engine.relaxed ? 'relaxed-simd' : 'simd128');
    const want = engine.isolated && engine.sab ? Math.max(1, Math.min(engine.cores || 1, AUTO_MAX_THREADS)) : 1;
    expect(engine.threads).toBe(want);
    if (!engine.isolated) console.log('[firefox] NOT cross-origin isolated over http://127.0.0.1: the page runs on one thread');
    expect(engine.status).toMatch(new RegExp(` · ${STRINGS.en.engineThreads(engine.threads, engine.backend === 'relaxed-simd')}$`));
    // the build fetched (Vite adds a content hash to its name) is the one the page names
    const fetched = W.requests.filter((u) => /\.wasm$/.test(new URL(u).pathname))
      .map((u) => new URL(u).pathname.split('/').pop().replace(/-[\w-]{8}\.wasm$/, '.wasm'));
    console.log(`[firefox] wasm fetched: ${fetched.join(', ')}`);
    expect(fetched).toContain(engine.build);
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });

  it('draws the API\'s attention for the default sentence', async () => {
    const { page } = W;
    const layer = Number(await value(page, '#layer'));
    const head = await value(page, '#head');
    expect(layer).toBe(L - 1);
    const r = local.run(CHAPTER, { topK: 10 });
    const A = r.attention(layer, head === 'avg' ? 'avg' : Number(head));
    const cells = await figCells(page, 'fig1', 'attention');
    const worst = worstError(cells, A, r.T, TOL);
    console.log(`[firefox] Fig. 1 attention vs Node: worst error ${worst.toFixed(3)} tolerance units (${cells.length} cells)`);
    expect(worst).toBeLessThanOrEqual(1);
  });

  it('a click on a Fig. 1 cell runs the do at that cell: row/col, a new drawing, Fig. 4 and the in-model panel follow', async () => {
    const { page } = W;
    // the last row (the prediction's position), a column other than the page's default cell
    const T = local.tokenize(CHAPTER).tokens.length;
    const row = T - 1, col = (await value(page, '#col')) === '3' ? 2 : 3;
    const layer = Number(await value(page, '#layer'));
    const head = await value(page, '#head');
    expect(await page.$eval('#kind-hard', (e) => e.checked)).toBe(true);
    const before = await page.evaluate(() => Number(document.body.dataset.renders));
    const ms = await afterRender(page, () => page.click(`#fig1 g[data-role="attention"] rect[data-i="${row}"][data-j="${col}"]`));
    console.log(`[firefox] do click → redrawn in ${seconds(ms)}`);
    expect(await page.evaluate(() => Number(document.body.dataset.renders))).toBe(before + 1);
    expect(await value(page, '#row')).toBe(String(row));
    expect(await value(page, '#col')).toBe(String(col));
    expect(await attr(page, '#inmodel', 'data-row')).toBe(String(row));
    expect(await attr(page, '#inmodel', 'data-col')).toBe(String(col));
    expect(await attr(page, '#fig4 svg', 'data-row')).toBe(String(row));
    expect(await attr(page, '#fig4 svg', 'data-col')).toBe(String(col));
    // Fig. 4's hard do on the drawn matrix, the top-10 after the do inside the model, and the KL: the API's
    const base = local.run(CHAPTER, { topK: 10 });
    const A = base.attention(layer, head === 'avg' ? 'avg' : Number(head));
    const hard = await figCells(page, 'fig4', 'hard-do');
    expect(hard.length).toBe(base.T * base.T);
    expect(worstError(hard, displayDo(A, { kind: 'hard', row, col }), base.T, TOL)).toBeLessThanOrEqual(1);
    const after = local.run(CHAPTER, { interventions: [{ kind: 'hard', layer, head: head === 'avg' ? 'all' : Number(head), row, col }], topK: 10 });
    const got = await topOf(page, 'top-after');
    expect(got.map((x) => x.id)).toEqual(after.top.map((x) => x.id));
    const pErr = worstError(got.map((x, k) => [0, k, x.p]), after.top.map((x) => x.prob), 1, TOL);
    const kl = Number(await attr(page, '#kl', 'data-v'));
    const klWant = klDivergence(base.logits, after.logits);
    console.log(`[firefox] do (${row}, ${col}): top-1 p ${got[0].p} (Node ${after.top[0].prob.toPrecision(6)}), KL ${kl} (Node ${klWant.toPrecision(6)})`);
    expect(pErr).toBeLessThanOrEqual(1);
    expect(Math.abs(kl - klWant)).toBeLessThanOrEqual(TOL.rel * Math.abs(klWant) + TOL.abs);
    expect(klWant).toBeGreaterThan(0);   // the do moves the prediction: the comparison is not of two unchanged runs
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });

  it('computes a card: the heads panel\'s DAG profile, with the API\'s numbers', async () => {
    const { page } = W;
    expect(await attr(page, '#hp-dag', 'data-state')).toBe('idle');
    const t0 = performance.now();
    await page.click('#hp-dag [data-compute="dag"]');
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('hp-dag').dataset.state),
      { timeout: 180_000, polling: 100 });
    const d = await page.$eval('#hp-dag', (e) => ({ ...e.dataset }));
    console.log(`[firefox] DAG-profile card computed in ${seconds(performance.now() - t0)}: overall ${d.overall}, null ${d.null}`);
    expect(d.state, await text(page, '#hp-dag-status')).toBe('done');
    const api = local.dagProfile(DEFAULT_DAG);
    expect(Math.abs(Number(d.overall) - api.mean.overall)).toBeLessThanOrEqual(1e-5 * Math.abs(api.mean.overall) + 1e-6);
    expect(await page.$$eval('#hp-dag-layers g[data-role="bars"] rect', (rs) => rs.length)).toBe(L);
    expect(await page.$$eval('#hp-dag-table tbody tr', (rs) => rs.length)).toBe(DEFAULT_DAG.length);
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });

  it('a sentence typed into the box and Enter runs and redraws', async () => {
    const { page } = W;
    const ms = await afterRender(page, async () => {
      await page.$eval('#text', (e) => { e.focus(); e.select(); });
      await page.type('#text', NEW_TEXT);
      await page.keyboard.press('Enter');
    });
    console.log(`[firefox] typed sentence → redrawn in ${seconds(ms)}`);
    expect(await value(page, '#text')).toBe(NEW_TEXT);
    const r = local.run(NEW_TEXT, { topK: 10 });
    expect(await page.$$eval('#tokens li', (x) => x.length)).toBe(r.T);
    const layer = Number(await value(page, '#layer'));
    const head = await value(page, '#head');
    const cells = await figCells(page, 'fig1', 'attention');
    expect(cells.length).toBe(r.T * r.T);
    expect(worstError(cells, r.attention(layer, head === 'avg' ? 'avg' : Number(head)), r.T, TOL)).toBeLessThanOrEqual(1);
    const before = await topOf(page, 'top-before');
    expect(before.map((x) => x.id)).toEqual(r.top.map((x) => x.id));
    expect(await W.problems()).toEqual(NO_PROBLEMS);
  });

  it('the English labels are English', async () => {
    const { page } = W;
    expect(await page.evaluate(() => document.documentElement.lang)).toMatch(/^en/);
    expect(await text(page, '#heads-h')).toBe(STRINGS.en.hpTitle);
  });
});

describe.skipIf(!HAVE_MODEL)('the Chinese page (?lang=zh) in Firefox ESR', () => {
  it('goes live with Chinese labels, figures and status line', async () => {
    const Z = await watchedPage(env);
    try {
      const t0 = performance.now();
      await Z.page.goto(`${env.url}?lang=zh`);
      await waitDrawn(Z.page);
      console.log(`[firefox] Chinese page live in ${seconds(performance.now() - t0)}`);
      const { page } = Z;
      expect(await page.evaluate(() => document.documentElement.lang)).toMatch(/^zh/);
      expect(await text(page, '#heads-h')).toBe(STRINGS.zh.hpTitle);
      const e = await engineOf(page);
      expect(e.status).toMatch(new RegExp(`${STRINGS.zh.engineThreads(e.threads, e.backend === 'relaxed-simd')}$`));
      for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) {
        const t = await page.$eval(`#${f} .fig-svg svg`, (s) => s.textContent);
        expect(t, `${f} has Chinese text`).toMatch(/[\u4e00-\u9fff]/);
      }
      expect(await Z.problems()).toEqual(NO_PROBLEMS);
    } finally {
      await Z.context.close();
    }
  });
});
