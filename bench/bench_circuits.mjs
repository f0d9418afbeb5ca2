#!/usr/bin/env node
// bench_circuits.mjs — issue 35's speed targets over 20 pairs of the built-in induction-prev set: path patching of
// every sender head into the induction head's three inputs (q, k, v of L1H0), and the pattern/value grids in both
// directions. Natively (bench/bench_circuits.c over build/libattnlab.a, 1 and 2 threads, side by side) and in
// WebAssembly through the npm API in Node (one thread). Medians of RUNS runs (default 5).
// With --chromium: the page's path-patching card in headless Chromium (needs `make page`), the same 20 pairs, the
// page's default threads; the card patches into the logits too (a fourth receiver).
//   node bench/bench_circuits.mjs [RUNS] [--chromium]
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../web/src/model.js';
import { inductionPrevPairs } from '../web/src/sets.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RUNS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) || 5), N = 20;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const pairs = inductionPrevPairs(50257).slice(0, N);
mkdirSync(join(ROOT, 'build/bench'), { recursive: true });
const file = join(ROOT, 'build/bench/circuit-pairs.txt');
writeFileSync(file, pairs.map(([c, d, [a, b]]) => [c.length, a, b, ...c, ...d].join(' ')).join('\n') + '\n');
const bin = join(ROOT, 'build/bench/bench_circuits');
const cc = spawnSync(process.env.CC || 'gcc', ['-O3', '-march=native', '-std=c11', '-pthread', '-Ic/include', 'bench/bench_circuits.c',
  'build/libattnlab.a', '-lm', '-o', bin], { cwd: ROOT, encoding: 'utf8' });
if (cc.status !== 0) throw new Error(cc.stderr);
const nat = { 1: [], 2: [] };
for (let k = 0; k < RUNS; k++)
  for (const th of [1, 2]) {
    const r = spawnSync(bin, [join(ROOT, 'models/brown-gpt2'), file, '1', String(th)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    nat[th].push(JSON.parse(r.stdout));
  }
const m = await loadModel();
const recv = [{ layer: 1, head: 0, input: 'q' }, { layer: 1, head: 0, input: 'k' }, { layer: 1, head: 0, input: 'v' }];
const wp = [], wv = [];
for (let k = 0; k < RUNS; k++) {
  let t = performance.now();
  m.pathPatchingSet(pairs, { receivers: recv, nBoot: 0 });
  wp.push(performance.now() - t);
  t = performance.now();
  m.patternValueSet(pairs, { nBoot: 0 });
  wv.push(performance.now() - t);
}
m.dispose();
let chromium = null;
if (process.argv.includes('--chromium')) {
  const { timePageCard } = await import('./page-card.mjs');
  chromium = await timePageCard('cx-path', RUNS, async (page) => {
    await page.selectOption('#cx-path-set', 'induction-prev');
    await page.fill('#cx-path-limit', String(N));
  });
}
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
console.log(`| where (${N} induction-prev pairs, medians of ${RUNS}) | path patching, 24 senders → L1H0 q, k, v | pattern/value grids, both directions |`);
console.log('|---|---|---|');
for (const th of [1, 2])
  console.log(`| native, ${th} thread${th > 1 ? 's' : ''} | ${s(median(nat[th].map((x) => x.path_ms)))} | ${s(median(nat[th].map((x) => x.pattern_value_ms)))} |`);
console.log(`| wasm (Node ${process.version}), 1 thread | ${s(median(wp))} | ${s(median(wv))} |`);
if (chromium) console.log(`| headless Chromium, the page's path card (q, k, v and the logits), ${chromium.threads} threads | ${s(chromium.ms)} | |`);
