// bench_relaxed.mjs — the kernels' GFLOP/s on the SIMD128 build (emcc 3.1.6: clang 14, binaryen 108)
// and the relaxed-SIMD build (clang-19 -mrelaxed-simd, binaryen 132: every multiply-add one
// f32x4.relaxed_madd), side by side in one Node process, interleaved (A B C A B C ...), with the
// same C by clang-19 without -mrelaxed-simd as the third column: relaxed vs that one is the
// instruction's share, that one vs emcc's is the toolchain's. Each cell is the median over the
// rounds of each round's median of --reps runs; "% peak" is against that build's register-only
// multiply-add peak (bench_peak_gflops: 12 independent chains, best of 5).
// Needs Node 20's --experimental-wasm-relaxed-simd (make bench-relaxed passes it).
//
//   node --experimental-wasm-relaxed-simd bench/bench_relaxed.mjs --simd F --simd19 F --relaxed F
//        [--rounds N] [--reps N]
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt; };
const rounds = Number(opt('--rounds', '7')), reps = Number(opt('--reps', '9'));
const BUILDS = [
  ['SIMD128 (emcc)', opt('--simd', 'build/bench/bench_ops_simd.wasm')],
  ['SIMD128 (clang-19)', opt('--simd19', 'build/bench/bench_ops_simd19.wasm')],
  ['relaxed SIMD', opt('--relaxed', 'build/bench/bench_ops_relaxed.wasm')],
];
// the packed GEMM (the layer products) at decode, a short prompt and prefill; the unpacked kernel (the
// attention's score and value products: matmul_forward_ld); the one-row product (the LM head of one position)
const SHAPES = [
  ['matmul_packed', 1, 768, 2304], ['matmul_packed', 1, 3072, 768],
  ['matmul_packed', 11, 768, 2304], ['matmul_packed', 11, 3072, 768],
  ['matmul_packed', 128, 768, 2304], ['matmul_packed', 128, 768, 3072], ['matmul_packed', 128, 3072, 768],
  ['matmul', 128, 64, 128], ['matmul', 128, 128, 64],
  ['matmul_nt', 1, 768, 50257],
  // SmolLM2-135M's products (d 576, key/value 192, SwiGLU 1536, V 49152); Pythia-160m's are GPT-2's shapes
  ['matmul_packed', 11, 576, 576], ['matmul_packed', 11, 576, 1536], ['matmul_packed', 11, 1536, 576],
  ['matmul_packed', 128, 576, 192], ['matmul_packed', 128, 576, 1536], ['matmul_packed', 128, 1536, 576],
  ['matmul_nt', 1, 576, 49152],
];
const KIND = { matmul: 0, matmul_nt: 2, matmul_packed: 4 };

async function load(path) {
  let memory = null;
  const imports = {
    wasi_snapshot_preview1: {
      clock_time_get(id, precision, out) {
        new DataView(memory.buffer).setBigUint64(out, process.hrtime.bigint(), true);
        return 0;
      },
    },
    env: { emscripten_notify_memory_growth() {} },
  };
  const { instance } = await WebAssembly.instantiate(readFileSync(path), imports);
  memory = instance.exports.memory;
  instance.exports._initialize();
  return instance.exports;
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const gflops = (T, C, OC, ms) => (2 * T * C * OC) / (ms * 1e6);
const fmt = (x, d = 1) => x.toFixed(d);

const ex = [];
for (const [name, path] of BUILDS) {
  const e = await load(path);
  const mask = e.bench_selfcheck();
  if (mask !== 0) { console.error(`${name}: selfcheck failed (mask ${mask})`); process.exit(1); }
  ex.push(e);
}
// warm up every path so V8's optimised code is in place before timing (see bench_ops_wasm.mjs)
for (let i = 0; i < 3; i++) {
  for (const e of ex) {
    e.bench_peak_gflops(1_000_000);
    for (const [k, T, C, OC] of SHAPES) e.bench_time_ms(KIND[k], Math.min(T, 5), Math.min(C, 64), Math.min(OC, 96), 2);
  }
  await new Promise((r) => setTimeout(r, 100));
}
const peaks = ex.map(() => 0);
for (let i = 0; i < 5; i++) ex.forEach((e, b) => { peaks[b] = Math.max(peaks[b], e.bench_peak_gflops(20_000_000)); });

console.log(`${new Date().toISOString().slice(0, 10)}, ${cpus()[0].model}, ${cpus().length} cores (shared), Node ${process.versions.node} (V8 ${process.versions.v8})`);
console.log(`register-only multiply-add peak (best of 5): ${BUILDS.map(([n], b) => `${n} ${fmt(peaks[b])}`).join(', ')} GFLOP/s`);
console.log(`median over ${rounds} interleaved rounds of each round's median of ${reps} runs; GFLOP/s = 2·T·C·OC / time\n`);
const head = ['kernel', 'T', 'C', 'OC', ...BUILDS.map(([n]) => `${n}`), 'relaxed % peak', 'relaxed / emcc', 'relaxed / clang-19'];
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
for (const [k, T, C, OC] of SHAPES) {
  const t = ex.map(() => []);
  for (let r = 0; r < rounds; r++) ex.forEach((e, b) => t[b].push(e.bench_time_ms(KIND[k], T, C, OC, reps)));
  const g = t.map((ms) => gflops(T, C, OC, median(ms)));
  console.log(`| ${[k, T, C, OC, ...g.map((x) => fmt(x)), `${fmt((100 * g[2]) / peaks[2], 0)}%`, `${fmt(g[2] / g[0], 2)}×`, `${fmt(g[2] / g[1], 2)}×`].join(' | ')} |`);
}
