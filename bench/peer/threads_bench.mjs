// threads_bench.mjs — attnlab with 1, 2, ... threads on the same model, in one Node process (issue 8):
// attnlab.wasm, attnlab-mt.wasm with threads: 1, and attnlab-mt.wasm with helpers, alternating, medians.
// Also checks that every build gives the same logits bit for bit. Run by `make bench-threads`.
//
//   node bench/peer/threads_bench.mjs MODEL_DIR [--threads 2] [--T 11,32,128] [--runs 9]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { instantiateAttnlab, defaultWasmURL, defaultWasmMTURL } from '../../web/src/core/wasm.js';

const argv = process.argv.slice(2);
const opt = { threads: 2, T: [11, 32, 128], runs: 9 };
let dir = null;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--threads') opt.threads = Number(argv[++i]);
  else if (argv[i] === '--T') opt.T = argv[++i].split(',').map(Number);
  else if (argv[i] === '--runs') opt.runs = Number(argv[++i]);
  else dir = argv[i];
}
if (!dir) { console.error('usage: node bench/peer/threads_bench.mjs MODEL_DIR [--threads 2] [--T 11,32,128] [--runs 9]'); process.exit(2); }
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const files = {
  config: readFileSync(join(dir, 'config.json')), vocab: readFileSync(join(dir, 'vocab.json')),
  merges: readFileSync(join(dir, 'merges.txt')), safetensors: readFileSync(join(dir, 'model.safetensors')),
};
const engines = [
  { name: 'attnlab.wasm', w: await instantiateAttnlab(defaultWasmURL()) },
  { name: 'attnlab-mt.wasm, 1 thread', w: await instantiateAttnlab(defaultWasmMTURL(), { threads: 1 }) },
  { name: `attnlab-mt.wasm, ${opt.threads} threads`, w: await instantiateAttnlab(defaultWasmMTURL(), { threads: opt.threads }) },
];
for (const e of engines) e.m = e.w.loadModel(files);
const V = engines[0].w.config(engines[0].m).vocab_size;
console.log(`# attnlab threads, Node ${process.version}, ${dir}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`\n| T | ${engines.map((e) => `${e.name} median ms (min)`).join(' | ')} | speed-up | logits identical |`);
console.log(`|---:|${engines.map(() => '---:').join('|')}|---:|---|`);
let bad = false;
for (const T of opt.T) {
  const ids = Array.from({ length: T }, (_, t) => (t * 7919 + 13) % V);
  const logits = engines.map((e) => { e.w.forward(e.m, ids); return new Uint32Array(e.w.resultLogits(e.m).buffer); });
  const same = logits.every((l) => l.every((x, i) => x === logits[0][i]));
  if (!same) bad = true;
  const times = engines.map(() => []);
  for (let r = 0; r < opt.runs; r++) {
    engines.forEach((e, k) => { const t = performance.now(); e.w.forward(e.m, ids); times[k].push(performance.now() - t); });
  }
  const med = times.map(median);
  console.log(`| ${T} | ${med.map((m, k) => `${m.toFixed(1)} (${Math.min(...times[k]).toFixed(1)})`).join(' | ')} | ` +
              `**${(med[0] / med[2]).toFixed(2)}×** | ${same ? 'yes' : 'NO'} |`);
}
for (const e of engines) { e.w.modelFree(e.m); e.w.stopThreads(); }
if (bad) { console.error('threads_bench: the builds disagree'); process.exit(1); }
