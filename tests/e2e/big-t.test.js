// big-t.test.js — a sentence of T = 256 tokens (the built-in model's context) in
// headless Chromium (issue 19 item 2): heatmaps above a size threshold are drawn
// as one bitmap each (same colours, hover, click and keyboard selection), so the
// main thread never runs a task over 50 ms while the page draws; the SVG export
// still has every cell as a vector rect. No main-thread task over 50 ms of the
// thread's own CPU time (from a Chrome trace, so other processes on a busy machine
// do not count) is asserted; the wall-clock long-task count and the time a λ step
// takes to redraw are measured and printed (not asserted).
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/big-t.test.js
//
// Skipped when the built-in model's weights are missing.

import { describe, it, expect, beforeAll } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import { ARTIFACTS, BUILTIN_WEIGHTS, useBrowser, watchedPage, waitDrawn } from './helpers.js';
import { traceTaskTimes } from './thread-clock.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const suite = HAVE_MODEL ? describe : describe.skip;

const env = useBrowser({ when: HAVE_MODEL, artifacts: true });
let W, TEXT, T;

/** A text of exactly n tokens of the built-in model (whole words of a Brown-like sentence). */
function textOfTokens(m, n) {
  const words = 'The storm grew stronger over the sea , and the old ship finally sank near the coast while the crew watched from the boats .'.split(' ');
  let text = '';
  for (let k = 0; ; k++) {
    const next = text + (text ? ' ' : '') + words[k % words.length];
    if (m.tokenize(next).tokens.length > n) break;
    text = next;
  }
  // pad with single-token words until exactly n
  while (m.tokenize(text).tokens.length < n) text += ' .';
  return text;
}

beforeAll(async () => {
  if (!HAVE_MODEL) return;
  const m = await loadModel();
  TEXT = textOfTokens(m, m.config.nPositions);
  T = m.tokenize(TEXT).tokens.length;
  m.dispose();
  W = await watchedPage(env);
  // long tasks of the main thread, from the first paint on
  await W.page.addInitScript(() => {
    window.__long = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__long.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  await W.page.goto(env.url);
  await waitDrawn(W.page);
}, 240_000);

const longTasks = (page, since = 0) => page.evaluate((s) => window.__long.filter((x) => x.start >= s), since);

/**
 * Run action under a Chrome trace and return the page's main-thread tasks longer than 50 ms of the thread's
 * own time ({wallMs, ms, measure, inside}). A long task in the browser's own sense (PerformanceObserver
 * 'longtask') is wall time: on a machine whose other processes hold the CPU a 10 ms task takes 50. The
 * thread's own time comes from the trace (tdur) where Chromium records it, else from the kernel's per-thread
 * CPU count sampled beside the trace, else (no clock at all) from wall time: thread-clock.js, which says which.
 */
async function cpuLongTasks(page, action) {
  const { measure, why, timed, ev } = await traceTaskTimes(env.browser, page, action, ['devtools.timeline', 'toplevel',
    'disabled-by-default-devtools.timeline', 'blink.user_timing', 'disabled-by-default-devtools.timeline.stack']);
  expect(timed.length).toBeGreaterThan(10);                     // the trace saw the page's tasks
  const byTime = [...timed].sort((a, b) => b.ms - a.ms);
  console.log(`[big-t] task clock: ${measure}${why.length ? ` (${why.join('; ')})` : ''}; main-thread tasks: ${timed.length}, ` +
              `longest ${byTime.slice(0, 5).map((x) => x.ms.toFixed(1)).join(', ')} ms (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores)`);
  // where the trace has thread time and /proc was sampled too, the two clocks must agree: the fallback is
  // checked on every machine that has both (bounds widened by one 4 ms tick for the kernel's lag, and 1 ms)
  const both = byTime.filter((x) => x.proc).slice(0, 5);
  if (both.length) {
    console.log(`[big-t] the same tasks by /proc: ${both.map((x) => `${x.ms.toFixed(1)} in [${x.proc.lo.toFixed(1)}, ${x.proc.hi.toFixed(1)}]`).join(', ')}`);
    for (const x of both) {
      expect(x.ms, 'trace thread time within the /proc bounds').toBeGreaterThanOrEqual(x.proc.lo - 1);
      expect(x.ms, 'trace thread time within the /proc bounds').toBeLessThanOrEqual(x.proc.hi + 1);
    }
  }
  // each long one with what ran inside it (events of 2 ms or more, by the same clock where the trace has it): what to make shorter
  const own = (e) => (measure === 'trace' ? e.tdur : e.dur);
  const inside = (t) => [
    ...ev.filter((e) => e.ph === 'X' && e.pid === t.pid && e.tid === t.tid && e !== t && e.ts >= t.ts &&
      e.ts + e.dur <= t.ts + t.dur && own(e) >= 2000 && !/RunTask/.test(e.name))
      .map((e) => `${e.name}${e.args && e.args.data && e.args.data.functionName ? ` ${e.args.data.functionName}` : ''}` +
        `${e.args && e.args.elementCount ? ` (${e.args.elementCount} elements)` : ''} ${(own(e) / 1000).toFixed(1)}`),
    // a timer's callback: where it was set (the stack of its TimerInstall)
    ...ev.filter((e) => e.ph === 'X' && e.name === 'TimerFire' && e.pid === t.pid && e.tid === t.tid && e.ts >= t.ts && e.ts <= t.ts + t.dur)
      .map((e) => {
        const inst = ev.find((x) => x.name === 'TimerInstall' && x.args && x.args.data && x.args.data.timerId === e.args.data.timerId);
        const st = inst && (inst.args.data.stackTrace || inst.args.data.stack) || [];
        return `timer set by ${st.slice(0, 4).map((f) => `${f.functionName || '?'}:${f.lineNumber}`).join(' < ')}`;
      }),
    // the page's steps (User Timing, attnlab:<step>) that ended inside this task
    ...ev.filter((e) => e.pid === t.pid && /^attnlab:/.test(e.name) && (e.ph === 'e' || e.ph === 'E') && e.ts >= t.ts && e.ts <= t.ts + t.dur)
      .map((e) => `ends ${e.name}`)];
  // the longest three with what ran inside them: what to make shorter next
  for (const x of byTime.slice(0, 3)) console.log(`[big-t] ${x.ms.toFixed(1)} ms (${measure}): ${inside(x.task).join(', ')}`);
  return byTime.filter((x) => x.ms > 50).map((x) => ({ wallMs: +(x.task.dur / 1000).toFixed(1), ms: +x.ms.toFixed(1), measure, inside: inside(x.task) }));
}

/**
 * cpuLongTasks up to three times (five where only wall time is had), until one attempt has no task over
 * 50 ms. Other processes on a shared machine can only add to a task's time (cache and core contention,
 * and for wall time the waits for a core), never take from it, so the least of a few attempts is the
 * measure of the page's own cost; every attempt is printed. `prepare` runs before each attempt, outside
 * the trace.
 */
async function leastOver(page, prepare, action) {
  let over = null;
  for (let k = 0; k < (over && over.length && over[0].measure === 'wall' ? 5 : 3) && (over === null || over.length); k++) {
    if (k) console.log(`[big-t] attempt ${k} had ${over.length} task(s) over 50 ms: ${JSON.stringify(over)}; again`);
    await prepare(k);
    over = await cpuLongTasks(page, () => action(k));
  }
  return over;
}

suite('T = 256 on the built-in model', () => {
  it('draws a 256-token sentence with no main-thread task over 50 ms of thread time', async () => {
    const { page } = W;
    expect(T).toBe(256);
    let t0 = 0, n = 0;
    const over = await leastOver(page, async (k) => {
      if (k) {   // back to a short sentence, so that the attempt draws T = 256 anew
        const m = Number(await page.evaluate(() => document.body.dataset.renders));
        await page.fill('#text', 'A short sentence .');
        await page.press('#text', 'Enter');
        await waitDrawn(page, m + 1, 120_000);
        await page.waitForTimeout(500);
      }
      t0 = await page.evaluate(() => performance.now());
      n = Number(await page.evaluate(() => document.body.dataset.renders));
    }, async () => {
      await page.fill('#text', TEXT);
      await page.press('#text', 'Enter');
      await waitDrawn(page, n + 1, 120_000);
      await page.waitForTimeout(500);   // anything drawn after the result (the in-model panel, the heads cards)
    });
    const long = await longTasks(page, t0);
    const t1 = await page.evaluate(() => performance.now());
    console.log(`[big-t] T = ${T}: navigation-free redraw ${(t1 - t0).toFixed(0)} ms, long tasks: ${long.length} ${JSON.stringify(long)}`);
    console.log(`[big-t] draw profile (ms): ${await page.evaluate(() => document.body.dataset.prof)}`);
    expect(await page.locator('#tokens li').count()).toBe(T);
    expect(over, 'drawing T = 256').toEqual([]);
    // the heatmaps are bitmaps on screen
    for (const [f, role] of [['fig1', 'attention'], ['fig1', 'asymmetry'], ['fig2', 'posterior'], ['fig4', 'original'], ['fig4', 'soft-do'], ['fig4', 'hard-do']]) {
      expect(await page.locator(`#${f} g[data-role="${role}"] foreignObject[data-raster]`).count(), `${f} ${role}`).toBe(1);
      expect(await page.locator(`#${f} g[data-role="${role}"] rect[data-i]`).count()).toBe(0);
    }
    await page.locator('#fig1').screenshot({ path: join(ARTIFACTS, 'big-t-fig1.png') });
  });

  it('readable at T = 256 (issue 38 item 2): cells of at least 3 px in Fig. 1 and Fig. 4 alike, the boxes scroll, the chosen row and column labelled; Fig. 3 keeps 40 edges; the token list is folded', async () => {
    const { page } = W;
    const geo = await page.evaluate(() => ['fig1', 'fig4'].map((f) => {
      const box = document.querySelector(`#${f} .fig-svg`);
      const img = box.querySelector('[data-raster]');
      const svg = box.querySelector('svg');
      return { f, cell: Number(img.getAttribute('width')) / img.__raster.C, scroll: box.classList.contains('fig-scroll'),
        svgW: Number(svg.getAttribute('width')), boxW: box.clientWidth, overflow: getComputedStyle(box).overflowX,
        rowMark: [...svg.querySelectorAll('g[data-role="ylabels"] text[data-mark]')].map((x) => x.getAttribute('data-i')),
        colMark: [...svg.querySelectorAll('g[data-role="xlabels"] text[data-mark]')].map((x) => x.getAttribute('data-j')) };
    }));
    const row = await page.inputValue('#row'), col = await page.inputValue('#col');
    console.log(`[big-t] T = ${T}: ${JSON.stringify(geo)}`);
    for (const g of geo) {
      expect(g.cell, g.f).toBeGreaterThanOrEqual(3);
      expect(g.svgW).toBeGreaterThan(g.boxW);
      expect(g.scroll).toBe(true);
      expect(g.overflow).toBe('auto');
      expect(new Set(g.rowMark)).toEqual(new Set([row]));
      expect(new Set(g.colMark)).toEqual(new Set([col]));
    }
    expect(geo[0].cell).toBeCloseTo(geo[1].cell, 6);
    // Fig. 3: the 40 strongest edges, a dot per token with its token on hover
    expect(await page.locator('#fig3 g[data-role="edge"]').count()).toBe(40);
    expect(await page.locator('#fig3 g[data-role="node"]').count()).toBe(T);
    expect(await page.textContent('#fig3 g[data-role="node"][data-k="7"] > title')).toMatch(/^7 /);
    // the token list: folded, with its count; opening it shows every chip
    expect(await page.evaluate(() => document.getElementById('tokens-box').open)).toBe(false);
    expect(await page.textContent('#tokens-count')).toBe(`(${T} tokens)`);
    expect(await page.isVisible('#tokens li >> nth=0')).toBe(false);
    await page.click('#tokens-box > summary');
    expect(await page.isVisible('#tokens li >> nth=0')).toBe(true);
    await page.click('#tokens-box > summary');
  });

  it('the bitmap has the colours of the vector cells (the SVG export), and hover shows the cell\'s value', async () => {
    const { page } = W;
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#fig1 [data-export="svg"]')]);
    const svg = readFileSync(await dl.path(), 'utf8');
    const fillOf = (i, j) => {
      const m = new RegExp(`<rect [^>]*fill="([^"]+)" data-i="${i}" data-j="${j}"`).exec(svg.slice(0, svg.indexOf('data-role="asymmetry"')));
      return m[1].match(/\d+/g).map(Number);
    };
    const probes = [[0, 0], [200, 3], [255, 255], [128, 64], [255, 0]];
    const pixels = await page.evaluate((ps) => {
      const c = document.querySelector('#fig1 g[data-role="attention"] foreignObject[data-raster] canvas');
      const ctx = c.getContext('2d');
      return { w: c.width, h: c.height, px: ps.map(([i, j]) => Array.from(ctx.getImageData(j, i, 1, 1).data.slice(0, 3))) };
    }, probes);
    expect([pixels.w, pixels.h]).toEqual([T, T]);
    probes.forEach(([i, j], k) => {
      const want = fillOf(i, j);
      for (let c = 0; c < 3; c++) expect(Math.abs(pixels.px[k][c] - want[c]), `cell (${i}, ${j}) ${pixels.px[k]} vs ${want}`).toBeLessThanOrEqual(2);
    });
    // hover over cell (200, 3): the tooltip names it
    await page.locator('#fig1 .fig-svg').scrollIntoViewIfNeeded();
    const box = await page.locator('#fig1 g[data-role="attention"] foreignObject[data-raster]').boundingBox();
    await page.mouse.move(box.x + (3.5 / T) * box.width, box.y + (200.5 / T) * box.height);
    await page.waitForSelector('#tip:not([hidden])');
    expect(await page.textContent('#tip')).toMatch(/^effect i=200 \(.*\), cause j=3 \(.*\): [0-9.e-]+$/);
  });

  it('a click and the arrow keys select cells on the bitmap', async () => {
    const { page } = W;
    await page.locator('#fig1 .fig-svg').scrollIntoViewIfNeeded();
    const box = await page.locator('#fig1 g[data-role="attention"] foreignObject[data-raster]').boundingBox();
    const n = Number(await page.evaluate(() => document.body.dataset.renders));
    // click a whole pixel (events carry the pointer's position in px; a cell is under 1 px here)
    const x = Math.round(box.x + (10.5 / T) * box.width), y = Math.round(box.y + (100.5 / T) * box.height);
    await page.mouse.click(x, y);
    const row = Math.floor(((y - box.y) / box.height) * T), col = Math.floor(((x - box.x) / box.width) * T);
    expect(Math.abs(row - 100)).toBeLessThanOrEqual(1);
    expect(Math.abs(col - 10)).toBeLessThanOrEqual(1);
    expect(await page.inputValue('#row')).toBe(String(row));
    expect(await page.inputValue('#col')).toBe(String(col));
    expect(await page.locator('#fig1 rect[data-role="selection"]').count()).toBe(2);
    await page.focus('#fig1 .fig-svg');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    expect(await page.inputValue('#row')).toBe(String(row + 1));
    expect(await page.inputValue('#col')).toBe(String(col + 1));
    await waitDrawn(page, n + 1, 120_000);
  });

  it('λ steps redraw Fig. 4 (time measured) with no main-thread task over 50 ms of thread time', async () => {
    const { page } = W;
    await page.check('#kind-soft');
    await page.waitForTimeout(300);
    const t0 = await page.evaluate(() => performance.now());
    let ms = [];
    const over = await leastOver(page, async () => { ms = []; }, async (k) => {
    for (const v of k % 2 ? ['7', '5', '3', '2', '8'] : ['1', '2', '4', '6', '8']) {
      ms.push(await page.evaluate((x) => new Promise((resolve) => {
        const el = document.getElementById('lambda');
        const a = performance.now();
        el.value = x;
        el.dispatchEvent(new Event('input', { bubbles: true }));
        requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - a), 0));
      }), v));
    }
    await page.waitForTimeout(300);
    });
    const long = await longTasks(page, t0);
    console.log(`[big-t] λ steps at T = ${T}: input → next frame ${ms.map((x) => x.toFixed(1)).join(', ')} ms; long tasks ${long.length}`);
    writeFileSync(join(ARTIFACTS, 'big-t-lambda.json'), JSON.stringify({ T, ms, long }));
    expect(await page.getAttribute('#fig4 svg', 'data-lambda')).toBe('8');
    expect(over, 'λ steps at T = 256').toEqual([]);
  });

  it('the SVG export has every cell as a vector rect (as before)', async () => {
    const { page } = W;
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#fig1 [data-export="svg"]')]);
    const svg = readFileSync(await dl.path(), 'utf8');
    const cells = svg.match(/<rect [^>]*data-i="\d+" data-j="\d+"/g) || [];
    expect(cells.length).toBe(2 * T * T);
    expect(svg).not.toContain('data-raster');
    expect(svg).not.toContain('foreignObject');
    expect(W.issues.pageErrors).toEqual([]);
    expect(await W.cspViolations()).toEqual([]);
  });
});
