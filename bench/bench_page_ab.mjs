#!/usr/bin/env node
// bench_page_ab.mjs — two builds of the chapter page, side by side: cold navigations alternating A, B, A, B …
// in one browser and one server, so that a shared machine's load falls on both alike.
//
//   node bench/bench_page_ab.mjs --a DIR --b DIR [--runs 7]
//
// DIR: a built page (a copy of web/dist/page/ from `make page` at some commit; the built-in model is served from
// this checkout's models/). Each navigation: a fresh context on the built-in model and the chapter's sentence,
// until the first result is drawn. web/dist/page/ is swapped for A or B before each navigation and put back at
// the end. Prints medians (ms after navigation start): first contentful paint, the entry module
// (attnlab:entry, builds that have one), the page's main code (attnlab:boot), the model ready, live (the four
// figures drawn from the model), and the worker's load steps; then each navigation's live time.

import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { setup, watchedPage, ROOT } from '../tests/e2e/helpers.js';

function args(argv) {
  const o = { runs: 7, a: null, b: null };
  for (let k = 0; k < argv.length; k++) {
    const x = argv[k];
    if (x === '--runs') o.runs = Number(argv[++k]);
    else if (x === '--a') o.a = argv[++k];
    else if (x === '--b') o.b = argv[++k];
    else { console.error(`bench_page_ab: unknown argument ${x}`); process.exit(2); }
  }
  if (!(o.runs >= 3)) { console.error('bench_page_ab: --runs must be ≥ 3'); process.exit(2); }
  for (const d of [o.a, o.b]) {
    if (!d || !existsSync(join(d, 'index.html'))) { console.error(`bench_page_ab: --a and --b must be built pages (no index.html in ${d})`); process.exit(2); }
  }
  return o;
}

const median = (xs) => { const s = xs.filter((x) => x !== null).sort((p, q) => p - q); const n = s.length; return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

// In the page, once drawn: the marks and the load's timing.
function measure() {
  const m = (n) => { const e = performance.getEntriesByName(n)[0]; return e ? e.startTime : null; };
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const lt = JSON.parse(document.body.dataset.loadTiming || '{}');
  return { fcp: paint ? paint.startTime : null, entry: m('attnlab:entry'), boot: m('attnlab:boot'), ready: m('attnlab:model-ready'),
           live: m('attnlab:live'), wasm: lt.wasmMs ?? null, read: lt.readMs ?? null, build: lt.buildMs ?? null };
}

async function main() {
  const o = args(process.argv.slice(2));
  const page = join(ROOT, 'web/dist/page');
  const keep = join(mkdtempSync(join(tmpdir(), 'attnlab-ab-')), 'page');
  if (existsSync(page)) renameSync(page, keep);
  const env = await setup();
  const res = { a: [], b: [] };
  const loads = [];
  try {
    for (let k = 0; k < o.runs; k++) {
      for (const which of ['a', 'b']) {
        rmSync(page, { recursive: true, force: true });
        cpSync(o[which], page, { recursive: true });
        const P = await watchedPage(env);
        try {
          await P.page.goto(env.url);
          await P.page.waitForFunction(() => Number(document.body.dataset.renders || 0) >= 1 && document.body.dataset.state === 'ready',
            null, { timeout: 120_000 });
          res[which].push(await P.page.evaluate(measure));
          if (P.issues.pageErrors.length) throw new Error(`page error (${which}): ${P.issues.pageErrors[0]}`);
        } finally {
          await P.context.close();
        }
      }
      loads.push(loadavg()[0]);
    }
  } finally {
    await env.close();
    rmSync(page, { recursive: true, force: true });
    if (existsSync(keep)) renameSync(keep, page);
  }
  const rows = [['first contentful paint', 'fcp'], ['the entry module runs', 'entry'], ['the page\'s main code runs', 'boot'],
                ['the model ready in the worker', 'ready'], ['live: four figures drawn from the model', 'live'],
                ['  worker: wasm compiled and started', 'wasm'], ['  worker: files into wasm memory', 'read'], ['  worker: model built', 'build']];
  const fmt = (x) => (x === null ? '—' : `${Math.round(x)} ms`);
  console.log(`\nattnlab page A/B, ${o.runs} alternating cold navigations each, medians; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
  console.log(`A = ${o.a}\nB = ${o.b}\n`);
  console.log('| after navigation | A | B |');
  console.log('|---|---:|---:|');
  for (const [name, key] of rows) console.log(`| ${name} | ${fmt(median(res.a.map((r) => r[key])))} | ${fmt(median(res.b.map((r) => r[key])))} |`);
  console.log(`\nlive, each navigation: A ${res.a.map((r) => Math.round(r.live)).join(', ')}; B ${res.b.map((r) => Math.round(r.live)).join(', ')}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
