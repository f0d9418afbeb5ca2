#!/usr/bin/env node
// bench_evidence_set.mjs — one measure over the built-in set (issue 34, item 9): edge knockout of the last
// layer, all heads, the first 100 held-out sentences, intervals (1000 resamples) and null (1000 permutations)
// included. Natively through the CLI on 1 and 2 threads; in WebAssembly through the npm API in Node (one
// thread); in headless Chromium through the page's panel with the page's default threads (--chromium, needs
// `make page`). Medians of RUNS runs (default 3).
//   node bench/bench_evidence_set.mjs [RUNS] [--chromium]
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { loadModel } from '../web/src/index.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RUNS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) || 3);
const N = 100;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

function cli(threads) {
  const t = performance.now();
  const r = spawnSync(join(ROOT, 'build/attnlab'), ['evidence', '--kind', 'edge', '--set', 'heldout', '--limit', String(N),
    '--threads', String(threads)], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(r.stderr);
  return performance.now() - t;
}

const rows = [];
// natively, 1 and 2 threads side by side (A B A B)
const nat = { 1: [], 2: [] };
for (let k = 0; k < RUNS; k++) for (const th of [1, 2]) nat[th].push(cli(th));
rows.push([`native CLI, 1 thread`, median(nat[1])], [`native CLI, 2 threads`, median(nat[2])]);
// wasm in Node, one thread
const m = await loadModel();
const ws = [];
for (let k = 0; k < RUNS; k++) { const t = performance.now(); m.edgeKnockoutSet('heldout', { limit: N }); ws.push(performance.now() - t); }
rows.push(['wasm (Node 20), 1 thread', median(ws)]);
m.dispose();

if (process.argv.includes('--chromium')) {
  const { timePageCard } = await import('./page-card.mjs');
  const c = await timePageCard('ev-edge', RUNS, (page) => page.evaluate((n) => {
    const radio = document.querySelector('#ev-edge-src-set');
    radio.checked = true;
    radio.dispatchEvent(new Event('change', { bubbles: true }));
    const lim = document.querySelector('#ev-edge-limit');
    lim.value = String(n);
    lim.dispatchEvent(new Event('input', { bubbles: true }));
    lim.dispatchEvent(new Event('change', { bubbles: true }));
  }, N));
  rows.push([`headless Chromium, the page's panel, ${c.threads} threads`, c.ms]);
}

console.log(`### Edge knockout over ${N} held-out sentences (layer 5, all heads; 1000 resamples, 1000 permutations) — ${cpus()[0].model}, medians of ${RUNS}`);
console.log('| where | median s |\n|---|---|');
for (const [k, v] of rows) console.log(`| ${k} | ${(v / 1000).toFixed(1)} |`);
