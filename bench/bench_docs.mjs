#!/usr/bin/env node
// bench_docs.mjs — the chapter page of the docs site (docs/.vitepress/dist,
// `make docs`) in headless Chromium: bytes transferred and time until the
// embedded figures are drawn, with a cold cache (a new browser context) and a
// warm one (a second visit with the same browser profile, whose disk cache
// revalidates every file: the server answers unchanged files with 304, as a
// static host with ETags does).
//
//   node bench/bench_docs.mjs [--runs 5]
//
// Two readers per run, each following a link to one figure (chapter/#fig-a,
// chapter/#fig-1: the site scrolls it into view on load):
//   hopfield  Fig. A, the first figure of the chapter (the lineage demos need
//             the wasm, not the model);
//   fig1      Fig. 1, the first of the model's figures: the time includes the
//             17 MB model's download and the first run in the shared worker.
// Times are from navigation start (performance.now() in the page) to the
// element's first 'attnlab-render' event, and for Fig. 1 also to its poster (the
// picture of its default view drawn at build time, make widget) on screen. Bytes are the response bodies the
// server sent (no compression), counted by the server, workers included.
// Prints one JSON object (medians) for docs/BENCHMARKS.md.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { chromium } from 'playwright-core';
import { CHROMIUM, ARGS } from '../tests/e2e/helpers.js';
import { serveDocs, buildDocsIfStale, DOCS_DIST } from '../tests/e2e/docs-helpers.js';

const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1]) || 5;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };

if (!existsSync(join(DOCS_DIST, 'index.html'))) buildDocsIfStale();
const srv = await serveDocs();

const INIT = (target) => {
  window.__renders = [];
  document.addEventListener('attnlab-render', (e) => {
    window.__renders.push({ figure: e.detail.figure, t: performance.now() });
  });
  // Fig. 1's poster (make widget: drawn at build time), the frame after it loaded
  window.__poster = null;
  const poll = () => {
    const f = document.getElementById('fig-1');
    if (f && f.dataset.poster === 'shown') { window.__poster = performance.now(); return; }
    requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
};

async function visit(context, target) {
  const page = await context.newPage();
  await page.addInitScript(INIT, target);
  const before = { ...srv.stats };
  await page.goto(`${srv.url}chapter/#${target === '1' ? 'fig-1' : 'fig-a'}`);
  const want = target;
  try {
    await page.waitForFunction((f) => window.__renders.some((r) => r.figure === f), want, { timeout: 120_000 });
  } catch (e) {
    const state = await page.evaluate(() => ({ y: scrollY, states: [...document.querySelectorAll('attnlab-figure')].map((x) => x.dataset.state) }));
    throw new Error(`${want}: not drawn in 120 s (${JSON.stringify(state)})`, { cause: e });
  }
  const t = await page.evaluate((f) => window.__renders.find((r) => r.figure === f).t, want);
  const poster = target === '1' ? await page.evaluate(() => window.__poster) : null;
  // let the other requests of this view finish before counting
  await page.waitForLoadState('networkidle');
  const out = {
    ms: t,
    posterMs: poster,
    bytes: srv.stats.bytes - before.bytes,
    requests: srv.stats.requests - before.requests,
    notModified: srv.stats.notModified - before.notModified,
  };
  await page.close();
  return out;
}

const results = {};
for (const target of ['hopfield', '1']) {
  const key = target === '1' ? 'fig1' : target;
  const cold = [], warm = [];
  for (let k = 0; k < RUNS; k++) {
    // a persistent profile has a disk cache, as a reader's browser does (an
    // incognito context's memory cache does not keep the 15 MB weights)
    const dir = mkdtempSync(join(os.tmpdir(), 'attnlab-bench-docs-'));
    const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, args: ARGS, viewport: { width: 1400, height: 900 } });
    try {
      cold.push(await visit(context, target));
      warm.push(await visit(context, target));
    } finally {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const sum = (xs) => ({
    ms: +median(xs.map((x) => x.ms)).toFixed(0),
    posterMs: xs.every((x) => x.posterMs !== null) ? +median(xs.map((x) => x.posterMs)).toFixed(0) : null,
    bytes: median(xs.map((x) => x.bytes)),
    requests: median(xs.map((x) => x.requests)),
    notModified: median(xs.map((x) => x.notModified)),
  });
  results[key] = { cold: sum(cold), warm: sum(warm) };
}

await srv.close();
console.log(JSON.stringify({ runs: RUNS, loadavg: os.loadavg().map((x) => +x.toFixed(2)), cpus: os.cpus().length, ...results }, null, 2));
