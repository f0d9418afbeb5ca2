// bench_forward_wasm.mjs — prefill time of the wasm forward pass in Node (single thread, SIMD128),
// all attentions captured, median of N runs after a warm-up. Mirrors bench/bench_forward.c.
//   node bench/bench_forward_wasm.mjs MODEL_DIR [runs] [T ...]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { instantiateAttnlab } from '../web/src/core/wasm.js';

const [dir, runsArg, ...tArgs] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node bench/bench_forward_wasm.mjs MODEL_DIR [runs] [T ...]');
  process.exit(2);
}
const runs = Number(runsArg ?? 15);
const Ts = tArgs.length ? tArgs.map(Number) : [11, 128];
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const w = await instantiateAttnlab();
const files = {
  config: readFileSync(join(dir, 'config.json')),
  vocab: readFileSync(join(dir, 'vocab.json')),
  merges: readFileSync(join(dir, 'merges.txt')),
};
const st = readFileSync(join(dir, 'model.safetensors'));
const t0 = performance.now();
const m = w.loadModel({ ...files, safetensors: st });
const loadMs = performance.now() - t0;
const cfg = w.config(m);
console.log(`model ${dir}: L=${cfg.n_layer} NH=${cfg.n_head} C=${cfg.n_embd} V=${cfg.vocab_size}; ` +
            `load ${loadMs.toFixed(1)} ms (bytes in memory -> model); simd128=${w.simd()}`);
console.log('| T | median ms | min ms | runs |\n|---|---|---|---|');
for (const T of Ts) {
  const ids = Array.from({ length: T }, (_, t) => (t * 7919 + 13) % cfg.vocab_size);
  w.forward(m, ids);
  const ms = [];
  for (let r = 0; r < runs; r++) {
    const a = performance.now();
    w.forward(m, ids);
    ms.push(performance.now() - a);
  }
  console.log(`| ${T} | ${median(ms).toFixed(2)} | ${Math.min(...ms).toFixed(2)} | ${runs} |`);
}
w.modelFree(m);
