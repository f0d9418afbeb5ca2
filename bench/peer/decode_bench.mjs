// decode_bench.mjs — generation with the KV cache in wasm (Node; --threads N > 1 runs attnlab-mt.wasm with
// N - 1 helper threads, default 1): tokens per second and
// the cost of one decode step against a full prefill of T = 1, and wasm memory against the file size.
// Run by `make bench-decode`; see bench/peer/README.md.
//
//   node bench/peer/decode_bench.mjs MODEL_DIR [MODEL_DIR ...] [--prompt 11] [--new 32] [--runs 5] [--threads 1]
//        [--wasm F.wasm] [--wasm-mt F.wasm] [--weights auto|f32|half]   (another build, e.g. attnlab-relaxed.wasm)
//
// Per model: greedy generation of --new tokens after a --prompt-token prompt (pseudo-random ids),
// median of --runs; decode step = (time(prompt + new) - time(prompt + 1)) / (new - 1), i.e. the
// generation minus its prefill and first token, per further token. "prefill T=1" is alab_forward on
// one token (every attention captured), the cost a step would have without the cache at position 0;
// "full forward at T=prompt+new" is what the last step cost without the cache. Any family's folder
// (load_folder.mjs: GPT-2's four files as always, tokenizer.json folders through the general loader; the weights
// as stored: f32 files stay f32, f16 ones are converted at load unless the general loader chooses half storage).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { instantiateAttnlab, defaultWasmURL, defaultWasmMTURL } from '../../web/src/core/wasm.js';
import { readFolder, loadFolder } from './load_folder.mjs';

const argv = process.argv.slice(2);
const dirs = [];
const opt = { prompt: 11, new: 32, runs: 5, threads: 1 };
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith('--')) {
    const k = argv[i].slice(2);
    opt[k] = ['wasm', 'wasm-mt', 'weights'].includes(k) ? argv[i + 1] : Number(argv[i + 1]);
    i++;
  } else dirs.push(argv[i]);
}
if (!dirs.length) {
  console.error('usage: node bench/peer/decode_bench.mjs MODEL_DIR [MODEL_DIR ...] [--prompt 11] [--new 32] [--runs 5]');
  process.exit(2);
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const time = (f) => { const t = performance.now(); f(); return performance.now() - t; };

console.log(`# generation with the KV cache, ${opt.wasm || opt['wasm-mt'] || 'attnlab.wasm'}, weights ${opt.weights ?? 'auto'}, ` +
            `Node ${process.version}, ${opt.threads} thread(s); ` +
            `load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`prompt ${opt.prompt} tokens, ${opt.new} new, greedy, median of ${opt.runs}\n`);
console.log('| model | file MB | wasm memory / file | prefill T=1 ms | decode step ms | tokens/s (decode) | ' +
            `tokens/s (incl. prefill) | full forward T=${opt.prompt + opt.new} ms |`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const rows = [];
for (const dir of dirs) {
  const src = opt.threads > 1 ? (opt['wasm-mt'] ? readFileSync(opt['wasm-mt']) : defaultWasmMTURL())
    : (opt.wasm ? readFileSync(opt.wasm) : defaultWasmURL());
  const w = await instantiateAttnlab(src, { threads: opt.threads });
  const folder = readFolder(dir);
  const st = { length: folder.bytes };
  const { m } = loadFolder(w, folder, { weights: opt.weights ?? 'auto' });
  const V = w.config(m).vocab_size;
  const ids = Array.from({ length: opt.prompt }, (_, t) => (t * 7919 + 13) % V);
  const long = Array.from({ length: opt.prompt + opt.new }, (_, t) => (t * 7919 + 13) % V);
  // warm-up (and the activations for the longest run, so memory is measured at its peak)
  w.forward(m, long);
  w.generate(m, ids, { maxNew: opt.new });
  const p1 = [], g1 = [], gN = [], fN = [];
  for (let r = 0; r < opt.runs; r++) {
    p1.push(time(() => w.forward(m, [ids[0]])));
    g1.push(time(() => w.generate(m, ids, { maxNew: 1 })));
    gN.push(time(() => w.generate(m, ids, { maxNew: opt.new })));
    fN.push(time(() => w.forward(m, long)));
  }
  const step = (median(gN) - median(g1)) / (opt.new - 1);
  const mem = w.memoryBytes() / st.length;
  console.log(`| ${dir} | ${(st.length / 1e6).toFixed(1)} | ${mem.toFixed(3)} | ${median(p1).toFixed(1)} | ` +
              `${step.toFixed(1)} | ${(1000 / step).toFixed(1)} | ${(1000 * opt.new / median(gN)).toFixed(1)} | ` +
              `${median(fN).toFixed(1)} |`);
  rows.push({ dir, step, prefill1: median(p1), mem });
  w.modelFree(m);
  w.stopThreads();
}
for (const r of rows)
  console.log(`${r.dir}: decode step ${r.step.toFixed(1)} ms vs prefill T=1 ${r.prefill1.toFixed(1)} ms — ` +
              `${r.step <= r.prefill1 ? 'no slower' : `${((r.step / r.prefill1 - 1) * 100).toFixed(0)} % slower`}`);
