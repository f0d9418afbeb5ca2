#!/usr/bin/env node
// bench_page.mjs — how fast the chapter page is in headless Chromium.
//
//   node bench/bench_page.mjs [--model /tests/fixtures/tiny/] [--runs 7] [--width 1400]
//
// Default model: the built-in one (models/brown-gpt2) when its weights exist,
// else the tiny test model (the output says which). Measures, medians of --runs:
//   navigation → four figures drawn   a fresh browser context per navigation; the
//                                     time from navigation start to the page's
//                                     'attnlab:drawn' mark (worker started, wasm
//                                     compiled, model fetched and loaded, two runs,
//                                     four figures + in-model panel in the DOM), and
//                                     to the next animation frame (painted)
//   λ change → Fig. 4 redrawn        the display-level do, drawn synchronously
//   λ change → all redrawn           soft do: the worker's run and the redraw of the
//                                     figures and the in-model panel, to the next frame
//   longest main-thread task of the   a PerformanceObserver('longtask') from navigation
//     first draw (wall clock)         on: the longest task that overlaps the first draw
//                                     (the run's result → 'attnlab:drawn'), and the
//                                     page's per-figure User Timing (attnlab:build:figN,
//                                     attnlab:dom:figN) of that draw; a task under 50 ms
//                                     is not reported by the browser (then "none > 50 ms")
// Prints a markdown table (for docs/BENCHMARKS.md) and the raw numbers as JSON.

import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { setup, watchedPage, waitDrawn, BUILTIN_WEIGHTS, TINY } from '../tests/e2e/helpers.js';

function args(argv) {
  const o = { runs: 7, width: 1400, model: null };
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (a === '--runs') o.runs = Number(argv[++k]);
    else if (a === '--width') o.width = Number(argv[++k]);
    else if (a === '--model') o.model = argv[++k];
    else { console.error(`bench_page: unknown argument ${a}`); process.exit(2); }
  }
  if (!(o.runs >= 5)) { console.error('bench_page: --runs must be ≥ 5'); process.exit(2); }
  return o;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const fmt = (x) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;

// In the page: when the first result is drawn, note the next frame's time; and when the first
// picture of the opening view (drawn at build time, make page) was painted.
function initScript() {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.name === 'attnlab:drawn' && e.detail === 1 && window.__painted === undefined) {
        requestAnimationFrame(() => { window.__painted = performance.now(); });
      }
      if (e.name === 'attnlab:live' && window.__livePainted === undefined) {
        requestAnimationFrame(() => { window.__livePainted = performance.now(); });
      }
    }
  }).observe({ type: 'mark', buffered: true });
  // main-thread tasks over 50 ms (wall clock), from navigation on
  window.__long = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__long.push({ start: e.startTime, ms: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  // the opening view's pictures (index.html, elementtiming="prerender"): when the first one is painted
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const t = e.renderTime || e.loadTime;
      if (e.identifier === 'prerender' && (window.__prePainted === undefined || t < window.__prePainted)) window.__prePainted = t;
    }
  }).observe({ type: 'element', buffered: true });
}

// In the page: one λ change; resolves {fig4, all} in ms after the input event.
function lambdaChange(value) {
  return new Promise((resolve, reject) => {
    const n0 = Number(document.body.dataset.renders);
    const s = document.getElementById('lambda');
    const t0 = performance.now();
    s.value = String(value);
    s.dispatchEvent(new Event('input', { bubbles: true }));
    const fig4 = performance.now() - t0;
    if (document.querySelector('#fig4 svg').getAttribute('data-lambda') !== String(value)) reject(new Error('Fig. 4 not redrawn'));
    const deadline = t0 + 60_000;
    const poll = () => {
      const done = Number(document.body.dataset.renders) > n0 && document.getElementById('inmodel').dataset.lambda === String(value) &&
        document.body.dataset.state === 'ready';
      if (done) { requestAnimationFrame(() => resolve({ fig4, all: performance.now() - t0 })); return; }
      if (performance.now() > deadline) { reject(new Error('timeout')); return; }
      setTimeout(poll, 0);
    };
    poll();
  });
}

async function main() {
  const o = args(process.argv.slice(2));
  const model = o.model ?? (existsSync(BUILTIN_WEIGHTS) ? null : TINY);
  const query = model ? `?model=${model}` : '';
  const env = await setup();
  const nav = { live: [], livePainted: [], drawLong: [], drawn: [], painted: [], prerender: [], wasm: [], read: [], build: [], run: [], draw: [], boot: [], loadStart: [], ready: [] };
  const lam = { fig4: [], all: [] };
  const steps = {};   // attnlab:build:figN / attnlab:dom:figN of the first draw, ms
  let info = null;
  try {
    for (let k = 0; k < o.runs; k++) {
      const P = await watchedPage(env, { viewport: { width: o.width, height: 900 } });
      try {
        await P.page.addInitScript(initScript);
        await P.page.goto(env.url + query);
        await waitDrawn(P.page, 1, 120_000);
        await P.page.waitForFunction(() => window.__painted !== undefined);
        const t = await P.page.evaluate(() => ({
          drawn: performance.getEntriesByName('attnlab:drawn')[0].startTime, painted: window.__painted,
          live: performance.getEntriesByName('attnlab:live')[0].startTime, livePainted: window.__livePainted ?? null,
          prerender: window.__prePainted ?? null, load: JSON.parse(document.body.dataset.loadTiming || 'null'),
          run: Number(document.body.dataset.runMs), draw: Number(document.body.dataset.drawMs),
          boot: performance.getEntriesByName('attnlab:boot')[0].startTime,
          loadStart: performance.getEntriesByName('attnlab:load-start')[0].startTime,
          ready: performance.getEntriesByName('attnlab:model-ready')[0].startTime,
          model: document.body.dataset.model, tokens: document.querySelectorAll('#tokens li').length,
          // the first draw: from its first step (or the result) to the 'attnlab:drawn' mark; the longest
          // task overlapping it, and the page's per-figure steps of it
          drawLong: (() => {
            const end = performance.getEntriesByName('attnlab:drawn')[0].startTime;
            // the draw that ended there began with its token step (or, before issue 38, in the result's task)
            const tok = performance.getEntriesByName('attnlab:tokens').filter((m) => m.startTime < end).pop();
            const start = Math.min(tok ? tok.startTime : end, end - Number(document.body.dataset.drawMs));
            const over = window.__long.filter((x) => x.start < end && x.start + x.ms > start);
            return over.length ? Math.max(...over.map((x) => x.ms)) : 0;
          })(),
          steps: Object.fromEntries(performance.getEntriesByType('measure').filter((m) => /^attnlab:(build|dom):/.test(m.name))
            .map((m) => [m.name, m.duration])),
        }));
        nav.live.push(t.live);
        if (t.livePainted !== null) nav.livePainted.push(t.livePainted);
        nav.drawn.push(t.drawn);
        nav.painted.push(t.painted);
        if (t.prerender !== null) nav.prerender.push(t.prerender);
        if (t.load) { nav.wasm.push(t.load.wasmMs); nav.read.push(t.load.readMs); nav.build.push(t.load.buildMs); }
        nav.run.push(t.run);
        nav.boot.push(t.boot);
        nav.loadStart.push(t.loadStart);
        nav.ready.push(t.ready);
        nav.draw.push(t.draw);
        nav.drawLong.push(t.drawLong);
        for (const [k, v] of Object.entries(t.steps)) (steps[k] ??= []).push(v);
        info = t;
        if (k === 0) {
          // λ changes on this page: soft do, so every change runs the model
          await P.page.check('#kind-soft');
          await P.page.waitForFunction(() => document.getElementById('inmodel').dataset.kind === 'soft' && document.body.dataset.state === 'ready');
          for (let j = 0; j < o.runs + 1; j++) {
            const r = await P.page.evaluate(lambdaChange, 4 + j * 0.5);
            if (j === 0) continue; // warm-up
            lam.fig4.push(r.fig4);
            lam.all.push(r.all);
          }
        }
        if (P.issues.pageErrors.length) throw new Error(`page error: ${P.issues.pageErrors[0]}`);
      } finally {
        await P.context.close();
      }
    }
  } finally {
    await env.close();
  }
  const rows = [
    ...(nav.prerender.length ? [['navigation → first figure painted (the opening view drawn at build time)', median(nav.prerender)]] : []),
    ['navigation → live: the four figures drawn from the model (DOM; the default-do search may still run)', median(nav.live)],
    ...(nav.livePainted.length ? [['navigation → live, painted (next frame)', median(nav.livePainted)]] : []),
    ['navigation → four figures drawn (DOM), the default do chosen', median(nav.drawn)],
    ['navigation → four figures painted (next frame)', median(nav.painted)],
    ['  navigation → the page script runs (HTML, CSS, the module bundle evaluated)', median(nav.boot)],
    ['  navigation → the model load starts (boot)', median(nav.loadStart)],
    ['  navigation → the model is ready in the worker', median(nav.ready)],
    ['  of which: the worker compiles and starts the wasm', median(nav.wasm)],
    ['  of which: the model files read into wasm memory', median(nav.read)],
    ['  of which: the model built (checks, F16 → F32, packing)', median(nav.build)],
    ['  of which: the worker\'s runs for the view (base, default-do search, do)', median(nav.run)],
    ['  of which: result → figures in the DOM', median(nav.draw)],
    ['  longest main-thread task during that draw (wall clock; 0 = none over 50 ms)', median(nav.drawLong)],
    ...Object.keys(steps).sort().map((k) => [`    ${k.replace('attnlab:', '')} (one figure's step, User Timing: from its start to its end, over several tasks since issue 38)`, median(steps[k])]),
    ['λ change → Fig. 4 redrawn (display-level do)', median(lam.fig4)],
    ['λ change → in-model run + all figures redrawn, painted', median(lam.all)],
  ];
  console.log(`\nattnlab page, headless Chromium (${CHROMIUM_VERSION()}), ${cpus().length} cores, model ${info.model} ` +
    `(${info.tokens} tokens), ${o.width} px wide, medians of ${o.runs}\n`);
  console.log('| measurement | median |');
  console.log('|---|---|');
  for (const [name, v] of rows) console.log(`| ${name} | ${fmt(v)} |`);
  console.log('\n' + JSON.stringify({ model: info.model, tokens: info.tokens, runs: o.runs, navigation: nav, steps, lambda: lam }));
}

function CHROMIUM_VERSION() {
  try {
    return String(execSync('/usr/bin/chromium --version', { stdio: ['ignore', 'pipe', 'ignore'] })).trim();
  } catch {
    return 'chromium';
  }
}

main().catch((e) => { console.error(`bench_page: ${e.message}`); process.exit(1); });
