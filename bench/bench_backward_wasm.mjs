// bench_backward_wasm.mjs — bench/bench_backward.c in wasm under Node (single thread, SIMD128 unless the
// relaxed flag is given to Node): rounds A B A B, A a plain forward, B the tape forward then a backward of a logit
// difference with every gradient part asked for, through AttnlabWasm's generated methods; medians.
//   node bench/bench_backward_wasm.mjs MODEL_DIR [rounds] [T]   (default: 15 rounds, T = 128)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { instantiateAttnlab } from '../web/src/core/wasm.js';
import { C } from '../web/src/core/abi.js';

const [dir, roundsArg, tArg] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node bench/bench_backward_wasm.mjs MODEL_DIR [rounds] [T]');
  process.exit(2);
}
const rounds = Number(roundsArg ?? 15), T = Number(tArg ?? 128);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const w = await instantiateAttnlab();
const m = w.loadModel({
  config: readFileSync(join(dir, 'config.json')), vocab: readFileSync(join(dir, 'vocab.json')),
  merges: readFileSync(join(dir, 'merges.txt')), safetensors: readFileSync(join(dir, 'model.safetensors')),
});
const cfg = w.config(m);
const ids = Array.from({ length: T }, (_, t) => (t * 7919 + 13) % cfg.vocab_size);
const fw = [], tf = [], bw = [];
w.scoped((alloc) => {
  const pIds = alloc(4 * T), pTape = alloc(4), pOff = alloc(4 * (C.GRAD_PARTS + 1)), pVal = alloc(8);
  w.i32.set(ids, pIds >>> 2);
  w.gradLayout(pOff, m, T, C.GRAD_ALL);
  const n = w.i32[(pOff >>> 2) + C.GRAD_PARTS] >>> 0;
  const pG = alloc(4 * n);
  for (let r = -1; r < rounds; r++) { // round -1: warm-up
    const t0 = performance.now();
    w.forward(m, ids);
    const t1 = performance.now();
    w.wasmTapeForward(pTape, m, pIds, T, 0, 0, C.MASK_CAUSAL, 0, 0, 0, 0, 0);
    const t2 = performance.now();
    const tape = w.i32[pTape >>> 2] >>> 0;
    w.backward(pG, n, pVal, m, tape, C.METRIC_LOGIT_DIFF, 1, 2, C.GRAD_ALL);
    const t3 = performance.now();
    w.tapeFree(tape);
    if (r < 0) continue;
    fw.push(t1 - t0);
    tf.push(t2 - t1);
    bw.push(t3 - t2);
  }
  console.log(`model ${dir}: L=${cfg.n_layer} NH=${cfg.n_head} C=${cfg.n_embd} V=${cfg.vocab_size}, T=${T}, ` +
              `wasm ${w.backend()} in Node ${process.version}, 1 thread, ${rounds} rounds A B A B; ` +
              `gradient block ${(n * 4 / 2 ** 20).toFixed(1)} MB`);
  const f = median(fw), a = median(tf), b = median(bw);
  console.log('| forward (A) | tape forward | backward | backward / forward | tape forward + backward / forward |');
  console.log('|---|---|---|---|---|');
  console.log(`| ${f.toFixed(1)} ms | ${a.toFixed(1)} ms | ${b.toFixed(1)} ms | ${(b / f).toFixed(2)} | ${((a + b) / f).toFixed(2)} |`);
});
w.modelFree(m);
