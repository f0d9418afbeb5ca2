// page-legibility.test.js — what a new reader sees on the page is legible and says what happened
// (issue 19 listed what went wrong), in headless Chromium on the built-in model: byte-level tokens
// shown readably (never "�"), a failed model load that is seen, a default do that changes the
// prediction, legends and notes that fit at 360 px, per-layer ΔA scales, Fig. 4 large enough to
// label, and the lineage page linked, in Chinese and at 360 px.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/page-legibility.test.js
//
// Skipped when the built-in model's weights are missing.

import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { ARTIFACTS, BUILTIN_WEIGHTS, CHAPTER, TINY, watchedPage, waitDrawn, expectedDefaultCell, useBrowser } from './helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const suite = HAVE_MODEL ? describe : describe.skip;

const env = useBrowser({ artifacts: true });

const UNICODE = 'The 🌧 storm over 泳池 made שלום sink .';

suite('byte-level tokens', () => {
  it('shows emoji, Chinese and RTL tokens readably: merged characters or ⟨bytes⟩, never "�"; Fig. 1\'s title is the sentence', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(`${env.url}?text=${encodeURIComponent(UNICODE)}`);
    await waitDrawn(page);
    const chips = await page.$$eval('#tokens li', (ls) => ls.map((l) => ({ s: l.querySelector('.tok-s').textContent, title: l.title, bytes: l.classList.contains('is-bytes') })));
    expect(chips.length).toBeGreaterThan(8);
    for (const c of chips) expect(c.s).not.toContain('\uFFFD');
    // the model splits these characters into partial tokens: some chips are byte tokens, with the bytes in the tooltip
    const partial = chips.filter((c) => c.bytes);
    expect(partial.length).toBeGreaterThan(0);
    for (const c of partial) {
      expect(c.title).toMatch(/^bytes [0-9a-f]{2}( [0-9a-f]{2})* · /);
      expect(c.s === '🌧' || /^⟨[0-9a-f]{2}( [0-9a-f]{2})*⟩$/.test(c.s) || /[\u0590-\u05ff\u4e00-\u9fff]/u.test(c.s), c.s).toBe(true);
    }
    // every character of the sentence is shown somewhere (merged where the partial tokens complete it)
    const shown = chips.map((c) => c.s).join('');
    for (const ch of ['🌧', '泳', '池']) expect(shown).toContain(ch);
    // the figures' axis labels and the row/col options
    const ticks = await page.$$eval('#fig1 g[data-role="xlabels"] text, #fig4 g[data-role="xlabels"] text, #fig2 g[data-role="xlabels"] text', (ts) => ts.map((x) => x.textContent));
    expect(ticks.length).toBeGreaterThan(0);
    for (const s of ticks) expect(s).not.toContain('\uFFFD');
    const opts = await page.$$eval('#row option', (os) => os.map((o) => o.textContent));
    for (const s of opts) expect(s).not.toContain('\uFFFD');
    // Fig. 1's title quotes the sentence as typed
    const sup = await page.textContent('#fig1 svg g[data-role="suptitle"]');
    expect(sup).not.toContain('\uFFFD');
    expect(sup.replace(/\s+/g, ' ')).toContain('泳池');
    await page.screenshot({ path: join(ARTIFACTS, 'legibility-unicode-1400.png'), fullPage: false });
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });
});

suite('a failed model load is visible', () => {
  it('at 360 px the error is shown beside the Load button; the picker and the status line keep the model in use', async () => {
    const W = await watchedPage(env, { viewport: { width: 360, height: 740 }, allowHosts: ['huggingface.co'] });
    const { page, context } = W;
    await context.route('https://huggingface.co/**', (r) => r.abort('internetdisconnected'));
    await page.goto(`${env.url}?model=${TINY}`);
    await waitDrawn(page);
    const status = await page.textContent('#model-status');
    expect(status).toMatch(/^tiny: 3 layers.* · wasm relaxed SIMD, \d threads?$/); // Chromium runs the relaxed build
    await page.click('#controls-toggle');   // on a phone the model panel is folded under one button (issue 38 item 6)
    await page.selectOption('#model-select', 'gpt2');
    await page.click('#model-load');
    await page.waitForSelector('#model-error:not([hidden])');
    await page.waitForFunction(() => !document.getElementById('model-load').disabled);
    expect(await page.textContent('#model-error')).toMatch(/^Network error: huggingface\.co could not be reached.*keeps using tiny\.$/);
    // within a phone's screen of the button: no scrolling to find out what happened
    const btn = await page.locator('#model-load').boundingBox();
    const err = await page.locator('#model-error').boundingBox();
    expect(err.y - (btn.y + btn.height)).toBeLessThan(200);
    expect(err.y + err.height).toBeLessThan(740);
    // the picker shows the model the page uses, the status line keeps its engine part
    expect(await page.inputValue('#model-select')).toBe('builtin');
    expect(await page.textContent('#model-status')).toBe(status);
    await page.screenshot({ path: join(ARTIFACTS, 'legibility-load-error-360.png') });
    expect(W.issues.pageErrors).toEqual([]);
    await context.close();
  });

  it('?model=/nonexistent/ shows the error alone (no "Starting the WebAssembly worker…" beside it)', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(`${env.url}?model=/nonexistent/`);
    await page.waitForSelector('#error:not([hidden])');
    await page.waitForFunction(() => document.body.dataset.state === 'error');
    expect(await page.textContent('#error-text')).toContain('/nonexistent/');
    expect(await page.textContent('#status')).toBe('');
    expect(await page.isVisible('#model-error')).toBe(true);
    await W.context.close();
  });

  it('?model=https://other.host/ is refused with a visible notice, and the built-in model is used', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(`${env.url}?model=${encodeURIComponent('https://other.host/')}`);
    await waitDrawn(page);
    expect(await page.isVisible('#error')).toBe(true);
    expect(await page.textContent('#error-text')).toMatch(/\?model=https:\/\/other\.host\/.*refused.*built-in model is used instead/);
    expect(await page.isVisible('#model-error')).toBe(true);
    expect(await page.textContent('#model-status')).toMatch(/^brown-gpt2: /);
    expect(W.issues.foreign).toEqual([]);
    await W.context.close();
  });
});

suite('the first impression', () => {
  it('the default do changes the prediction (KL > 0, no "Unchanged" note), chosen on the live model by the documented rule', async () => {
    const m = await loadModel();
    const cell = await expectedDefaultCell(m, CHAPTER);
    m.dispose();
    expect(cell.kl).toBeGreaterThan(0);
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    expect(await page.inputValue('#row')).toBe(String(cell.row));
    expect(await page.inputValue('#col')).toBe(String(cell.col));
    const kl = Number(await page.getAttribute('#kl', 'data-v'));
    expect(kl).toBeGreaterThan(0);
    expect(Math.abs(kl - cell.kl)).toBeLessThanOrEqual(1e-4 * Math.max(1, cell.kl));
    expect(await page.isHidden('#kl-zero')).toBe(true);
    // the page says how the cell was chosen, and which candidates it tried
    expect(await page.isVisible('#default-note')).toBe(true);
    expect(await page.textContent('#default-note')).toContain(`i = ${cell.row} → j = ${cell.col}`);
    const tried = JSON.parse(await page.getAttribute('#inmodel', 'data-default-tried'));
    expect(tried.map((x) => x.col)).toEqual(cell.tried.map((x) => x.col));
    // choosing another cell hides the note
    await page.selectOption('#col', String(cell.col === 0 ? 1 : 0));
    await page.waitForFunction(() => document.getElementById('default-note').hidden);
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });
});

suite('legends, notes and scales', () => {
  it('Fig. 3\'s legend fits at 360 px', async () => {
    const W = await watchedPage(env, { viewport: { width: 360, height: 740 } });
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    const box = await page.evaluate(() => {
      const svg = document.querySelector('#fig3 svg');
      const leg = svg.querySelector('g[data-role="legend"]');
      const b = leg.getBBox();
      const texts = [...leg.querySelectorAll('text')].map((x) => { const r = x.getBBox(); return r.x + r.width; });
      return { w: Number(svg.getAttribute('width')), x0: b.x, x1: b.x + b.width, textEnd: Math.max(...texts), rectEnd: (() => { const r = leg.querySelector('rect'); return Number(r.getAttribute('x')) + Number(r.getAttribute('width')); })() };
    });
    expect(box.x0).toBeGreaterThanOrEqual(0);
    expect(box.x1).toBeLessThanOrEqual(box.w);
    expect(box.textEnd).toBeLessThanOrEqual(box.rectEnd);
    expect(await page.textContent('#fig3 g[data-role="legend-null"]')).toMatch(/T = 10 \(0\.707\)$/);
    await page.locator('#fig3').screenshot({ path: join(ARTIFACTS, 'legibility-fig3-360.png') });
    await W.context.close();
  });

  it('the window W box refuses 0, −3, 1.5 and 99999 with a visible note, and takes 5', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    await page.selectOption('#mask', 'window');
    await waitDrawn(page, 2);
    const max = await page.getAttribute('#window', 'max');
    for (const bad of ['0', '-3', '1.5', '99999']) {
      await page.fill('#window', bad);
      expect(await page.isVisible('#window-note'), bad).toBe(true);
      expect(await page.textContent('#window-note')).toBe(`W must be a whole number from 1 to ${max} (got ${bad}); the window stays at W = 4.`);
      expect(await page.getAttribute('#window', 'aria-invalid')).toBe('true');
    }
    const before = Number(await page.evaluate(() => document.body.dataset.renders));
    await page.fill('#window', '5');
    expect(await page.isHidden('#window-note')).toBe(true);
    await waitDrawn(page, before + 1);
    expect(await page.getAttribute('#window', 'aria-invalid')).toBeNull();
    await W.context.close();
  });

  it('the ΔA small multiples each have their own scale, written under them', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    const n = Number(await page.evaluate(() => document.body.dataset.renders));
    await page.selectOption('#layer', '0');
    await waitDrawn(page, n + 1);
    await page.waitForFunction(() => document.querySelectorAll('#delta-maps svg').length > 2);
    const maps = await page.$$eval('#delta-maps figure', (fs) => fs.map((f) => ({
      scale: Number(f.querySelector('svg').dataset.scaleMax),
      max: Math.max(...[...f.querySelectorAll('rect[data-v]')].map((r) => Math.abs(Number(r.dataset.v)))),
      caption: f.querySelector('.dmap-scale').textContent,
      fill: (() => { const v = Math.max(...[...f.querySelectorAll('rect[data-v]')].map((r) => Math.abs(Number(r.dataset.v)))); const r = [...f.querySelectorAll('rect[data-v]')].find((x) => Math.abs(Number(x.dataset.v)) === v); return r.getAttribute('fill'); })(),
    })));
    expect(maps.length).toBeGreaterThan(2);
    for (const m of maps) {
      expect(Math.abs(m.scale - m.max)).toBeLessThanOrEqual(1e-5 * Math.max(1e-9, m.max));
      expect(m.caption).toMatch(/^scale ±/);
      // the largest change of every layer is drawn at full strength (with one shared scale the upper layers were pale)
      if (m.max > 0) expect(['rgb(103, 0, 31)', 'rgb(5, 48, 97)', '#67001f', '#053061']).toContain(m.fill);
    }
    expect(new Set(maps.map((m) => m.scale)).size).toBeGreaterThan(1);
    await W.context.close();
  });

  it('Fig. 4\'s heatmaps are large enough at 1400 px to label every token; tokens are quoted in running text', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(env.url);
    await waitDrawn(page);
    const g = await page.evaluate(() => {
      const svg = document.querySelector('#fig4 svg');
      const scale = svg.getBoundingClientRect().width / Number(svg.getAttribute('width'));
      return ['original', 'soft-do', 'hard-do'].map((role) => {
        const grp = svg.querySelector(`g[data-role="${role}"]`);
        return { px: grp.getBBox().width * scale, labels: grp.parentNode.querySelectorAll('g[data-role="xlabels"] text').length };
      });
    });
    for (const p of g) {
      expect(p.px).toBeGreaterThanOrEqual(160);
      expect(p.labels).toBe(10);
    }
    // the mask line quotes the top tokens (punctuation read as punctuation)
    await page.selectOption('#mask', 'full');
    await page.waitForSelector('#ref-line:not([hidden])');
    expect(await page.textContent('#ref-line')).toMatch(/top token “[^”]+” → “[^”]+”\.$/);
    await W.context.close();
  });
});

describe('the lineage page', () => {
  const done = (page) => page.waitForFunction(() => document.body.dataset.capacity === 'done' && document.body.dataset.timing === 'done', null, { timeout: 150_000 });

  it('is linked from the main page\'s header', async () => {
    const W = await watchedPage(env);
    await W.page.goto(`${env.url}?model=${TINY}`);
    const a = W.page.locator('header.masthead a[href="lineage.html"]');
    expect(await a.count()).toBe(1);
    expect(await a.isVisible()).toBe(true);
    await W.context.close();
  });

  it('in Chinese every label and the capacity status are Chinese (also after switching); the entropy legend is below the curves', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await page.goto(`${env.url}lineage.html?lang=en`);
    await done(page);
    await page.click('#lang');
    expect(await page.textContent('#cap-status')).toMatch(/[\u4e00-\u9fff]/);
    expect(await page.textContent('#cap-status')).not.toMatch(/random|trials|Web Worker in/);
    expect(await page.textContent('#feature option[value="favor"]')).toMatch(/随机特征/);
    expect(await page.textContent('#frameworks')).not.toMatch(/per step/);
    // the legend of the entropy chart sits below every data point (it covered the curves)
    const g = await page.evaluate(() => {
      const svg = document.querySelector('#fig-entropy svg');
      const leg = svg.querySelector('g[data-role="legend"]').getBBox();
      const ys = [...svg.querySelectorAll('circle')].map((c) => Number(c.getAttribute('cy')));
      return { legTop: leg.y, maxY: Math.max(...ys), n: ys.length };
    });
    expect(g.n).toBeGreaterThan(4);
    expect(g.legTop).toBeGreaterThan(g.maxY);
    await W.context.close();
  }, 180_000);

  it('at 360 px the charts are drawn at the width they are shown (no CSS shrinking: text stays readable), titles inside', async () => {
    const W = await watchedPage(env, { viewport: { width: 360, height: 740 } });
    const { page } = W;
    await page.goto(`${env.url}lineage.html?lang=zh`);
    await done(page);
    const charts = await page.$$eval('.lin-fig .fig-svg svg', (ss) => ss.map((s) => {
      const title = s.querySelector('[data-role="title"]');
      const tb = title ? title.getBBox() : null;
      return { id: s.parentNode.id, w: Number(s.getAttribute('width')), shown: s.getBoundingClientRect().width, tx0: tb ? tb.x : 0, tx1: tb ? tb.x + tb.width : 0 };
    }));
    expect(charts.length).toBeGreaterThan(6);
    for (const c of charts) {
      expect(c.shown / c.w, c.id).toBeGreaterThan(0.97);
      expect(c.tx0, c.id).toBeGreaterThanOrEqual(-1);
      expect(c.tx1, c.id).toBeLessThanOrEqual(c.w + 1);
    }
    await page.locator('#fig-capacity').screenshot({ path: join(ARTIFACTS, 'legibility-lineage-360-zh-capacity.png') });
    await W.context.close();
  }, 180_000);
});
