#!/usr/bin/env node
// bench_api.mjs — load time and first-run time of the JS API, in Node (main
// thread) and in headless Chromium (attnlab/worker in a module Web Worker),
// for the built-in model (the tiny fixture while it is absent) and a
// distilgpt2-shaped checkpoint (build/bench/distilgpt2); and the wasm sizes.
// Prints a Markdown table for docs/BENCHMARKS.md (medians of N, default 5).
//
//   node bench/bench_api.mjs [--n 5] [--no-browser] [--json]
//
// Load = loadModel() until it resolves: reading/fetching the four files,
// instantiating the wasm (compiled once per process in Node; in Chromium
// every sample starts a new worker, which compiles it again) and building the
// model. First run = the first run() of the chapter sentence after loading
// (activations allocated, token strings looked up). Steady run = the median
// of the 10 runs after it.

import { createServer } from 'node:http';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join, extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { loadModel } from '../web/src/index.js';
import { CSP } from '../scripts/serve.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const argv = process.argv.slice(2);
const N = Number(argv[argv.indexOf('--n') + 1]) > 0 && argv.includes('--n') ? Number(argv[argv.indexOf('--n') + 1]) : 5;
const BROWSER = !argv.includes('--no-browser');
const JSON_OUT = argv.includes('--json');

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const ms = (x) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

// The models: [label, repo-relative dir]
const builtinPresent = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].every((f) => existsSync(join(ROOT, 'models/brown-gpt2', f)));
const MODELS = [
  builtinPresent ? ['built-in brown-gpt2 (F16)', 'models/brown-gpt2'] : ['tiny fixture (built-in model absent)', 'tests/fixtures/tiny'],
  ...(existsSync(join(ROOT, 'build/bench/distilgpt2/model.safetensors')) ? [['distilgpt2-shaped (F32)', 'build/bench/distilgpt2']] : []),
];

const fileMB = (dir) => statSync(join(ROOT, dir, 'model.safetensors')).size / 2 ** 20;

// ---------------------------------------------------------------------------
// Node
// ---------------------------------------------------------------------------

async function benchNode(dir) {
  const loads = [], firsts = [], steadies = [];
  let cold = null, memory = null, T = 0;
  for (let i = 0; i < N + 1; i++) {
    const t0 = performance.now();
    const m = await loadModel(join(ROOT, dir));
    const t1 = performance.now();
    const r = m.run(CHAPTER);
    const t2 = performance.now();
    const st = [];
    for (let k = 0; k < 10; k++) { const a = performance.now(); m.run(CHAPTER); st.push(performance.now() - a); }
    memory = m.memoryUsage();
    T = r.T;
    m.dispose();
    if (i === 0) { cold = t1 - t0; continue; } // includes compiling the wasm
    loads.push(t1 - t0); firsts.push(t2 - t1); steadies.push(median(st));
  }
  return { coldLoad: cold, load: median(loads), firstRun: median(firsts), steadyRun: median(steadies), T, wasmMB: memory.wasmBytes / 2 ** 20 };
}

// ---------------------------------------------------------------------------
// Chromium: a static server for web/, tests/, models/ and build/bench/ with the page's CSP
// ---------------------------------------------------------------------------

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.json': 'application/json',
               '.wasm': 'application/wasm', '.txt': 'text/plain; charset=utf-8', '.safetensors': 'application/octet-stream' };
const MOUNTS = [['/models/', 'models'], ['/tests/', 'tests'], ['/build/bench/', 'build/bench'], ['/', 'web']];

function startBenchServer() {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const [prefix, dir] = MOUNTS.find(([p]) => path.startsWith(p));
    const base = resolve(ROOT, dir);
    const file = resolve(base, '.' + path.slice(prefix.length - 1));
    if (!file.startsWith(base + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'Content-Security-Policy': CSP });
      return res.end('not found');
    }
    res.writeHead(200, { 'Content-Type': MIME[extname(file)] || 'application/octet-stream', 'Content-Length': statSync(file).size,
                         'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' });
    createReadStream(file).pipe(res);
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `http://127.0.0.1:${server.address().port}/` })));
}

async function benchBrowser(models) {
  const { chromium } = await import('playwright-core');
  const { server, url } = await startBenchServer();
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(new URL('tests/e2e/pages/worker.html', url).href);
    await page.waitForFunction(() => window.attnlabReady === true, null, { timeout: 30_000 });
    const out = {};
    for (const [label, dir] of models) {
      const loads = [], firsts = [], steadies = [];
      for (let i = 0; i < N + 1; i++) {
        const r = await page.evaluate((spec) => window.attnlabTest(spec),
          { model: `/${dir}/`, text: CHAPTER, runs: new Array(11).fill({}), timing: true });
        if (i === 0) continue; // warm-up: the browser's HTTP and code caches
        loads.push(r.loadMs); firsts.push(r.runMs[0]); steadies.push(median(r.runMs.slice(1)));
      }
      out[label] = { load: median(loads), firstRun: median(firsts), steadyRun: median(steadies) };
    }
    return { version: browser.version(), results: out };
  } finally {
    await browser.close();
    server.close();
  }
}

// ---------------------------------------------------------------------------

const wasmBytes = readFileSync(join(ROOT, 'web/dist/attnlab.wasm'));
const sizes = { wasm: wasmBytes.length, gzip: gzipSync(wasmBytes, { level: 9 }).length };
const node = {};
for (const [label, dir] of MODELS) node[label] = await benchNode(dir);
const browser = BROWSER ? await benchBrowser(MODELS) : null;

if (JSON_OUT) {
  console.log(JSON.stringify({ n: N, sizes, node, browser }, null, 2));
} else {
  console.log(`## JS API (bench/bench_api.mjs, medians of ${N}; Node ${process.version}` +
              `${browser ? `, Chromium ${browser.version}` : ''})\n`);
  console.log(`attnlab.wasm: ${sizes.wasm} bytes (${(sizes.wasm / 1024).toFixed(1)} KB), gzip -9 ${sizes.gzip} bytes (${(sizes.gzip / 1024).toFixed(1)} KB)\n`);
  console.log('| model | file | where | load (ms) | first run (ms) | steady run (ms) |');
  console.log('|---|---|---|---|---|---|');
  for (const [label, dir] of MODELS) {
    const n = node[label];
    console.log(`| ${label} | ${fileMB(dir).toFixed(1)} MB | Node, main thread | ${ms(n.load)} (first load with compile ${ms(n.coldLoad)}) | ${ms(n.firstRun)} | ${ms(n.steadyRun)} |`);
    if (browser) {
      const b = browser.results[label];
      console.log(`| ${label} | ${fileMB(dir).toFixed(1)} MB | Chromium, Web Worker | ${ms(b.load)} | ${ms(b.firstRun)} | ${ms(b.steadyRun)} |`);
    }
  }
  console.log(`\nChapter sentence: ${Object.values(node).map((n) => `T = ${n.T}`).join(', ')} tokens. ` +
              `Wasm memory after one run (Node): ${Object.entries(node).map(([l, n]) => `${l} ${n.wasmMB.toFixed(0)} MB`).join('; ')}.`);
}
