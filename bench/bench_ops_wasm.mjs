// bench_ops_wasm.mjs — run bench/bench_ops.c compiled to WebAssembly (SIMD128 and
// scalar builds) under Node, straight from the raw .wasm bytes: Emscripten's own JS
// glue is not used. The module is built -sSTANDALONE_WASM --no-entry, so it needs
// only two imports, provided here: WASI clock_time_get (for clock_gettime) and
// emscripten_notify_memory_growth (a no-op: views of memory are made per read).
//
// Each build first runs bench_selfcheck() (every fast kernel vs its reference twin,
// non-zero mask = failure, exit code 1), then the matmul timings at distilgpt2
// shapes. With the native binary (default build/bench/bench_ops, run with --tsv)
// its columns are merged into one markdown table.
//
//   node bench/bench_ops_wasm.mjs [--simd F.wasm] [--scalar F.wasm] [--native BIN|none]
//                                 [--reps N] [--check-only] [--cpu-time]
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
};
const simdPath = opt('--simd', 'build/bench/bench_ops_simd.wasm');
const scalarPath = opt('--scalar', 'build/bench/bench_ops_scalar.wasm');
const nativePath = opt('--native', 'build/bench/bench_ops');
const reps = Number(opt('--reps', '15'));
const checkOnly = args.includes('--check-only');
const cpuTime = args.includes('--cpu-time'); // time with CPU clocks (steadier on a busy machine)

const SHAPES = [
  ['matmul', 11, 768, 2304], ['matmul', 11, 768, 768], ['matmul', 11, 768, 3072], ['matmul', 11, 3072, 768],
  ['matmul', 128, 768, 2304], ['matmul', 128, 768, 768], ['matmul', 128, 768, 3072], ['matmul', 128, 3072, 768],
  // the model's layer weights are packed at load (matmul_pack_weights): this is the kernel the forward runs
  ['matmul_packed', 1, 768, 2304], ['matmul_packed', 1, 3072, 768],
  ['matmul_packed', 11, 768, 2304], ['matmul_packed', 11, 768, 768], ['matmul_packed', 11, 768, 3072],
  ['matmul_packed', 11, 3072, 768], ['matmul_packed', 128, 768, 2304], ['matmul_packed', 128, 768, 768],
  ['matmul_packed', 128, 768, 3072], ['matmul_packed', 128, 3072, 768],
  ['matmul_nt', 1, 768, 50257],
];
const KIND = { matmul: 0, matmul_nt: 2, matmul_packed: 4 };
const CHECK_NAMES = ['matmul', 'matmul_nt', 'exp', 'gelu', 'softmax', 'softmax all -inf', 'layernorm', 'dot', 'axpy', 'add', 'argmax'];

async function load(path) {
  const bytes = readFileSync(path);
  let memory = null;
  const imports = {
    wasi_snapshot_preview1: {
      // (clock id, precision: i64, out: *u64) -> errno; ids 2 and 3 are the CPU-time clocks
      clock_time_get(id, precision, out) {
        let ns;
        if (id === 2 || id === 3) {
          const u = process.cpuUsage();
          ns = BigInt(u.user + u.system) * 1000n;
        } else {
          ns = process.hrtime.bigint();
        }
        new DataView(memory.buffer).setBigUint64(out, ns, true);
        return 0;
      },
    },
    env: { emscripten_notify_memory_growth() {} },
  };
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  memory = instance.exports.memory;
  instance.exports._initialize(); // reactor: run the C constructors
  return instance.exports;
}

function failedChecks(mask) {
  return CHECK_NAMES.filter((_, i) => mask & (1 << i)).join(', ');
}

const gflops = (T, C, OC, ms) => (2 * T * C * OC) / (ms * 1e6);
const fmt = (x, d = 1) => (x == null || !Number.isFinite(x) ? '—' : x.toFixed(d));

// ---- checks: every fast kernel vs its twin, in both builds -----------------------
let passed = 0, failed = 0;
const check = (ok, what) => {
  if (ok) passed++;
  else { failed++; console.error(`FAILED: ${what}`); }
};
const builds = [];
for (const [name, path, width] of [[/relaxed/.test(simdPath) ? 'wasm relaxed SIMD' : 'wasm SIMD128', simdPath, 4], ['wasm scalar', scalarPath, 1]]) {
  if (!existsSync(path)) {
    console.error(`missing ${path}: build it first (see bench/README.md)`);
    process.exit(2);
  }
  const ex = await load(path);
  check(ex.bench_simd_width() === width, `${name}: ALAB_SIMD_WIDTH ${ex.bench_simd_width()}, expected ${width}`);
  const mask = ex.bench_selfcheck();
  check(mask === 0, `${name} selfcheck: ${failedChecks(mask)}`);
  console.log(`${name} (${path}): selfcheck of ${CHECK_NAMES.length} kernels ${mask === 0 ? 'ok' : 'FAILED'}`);
  if (cpuTime) ex.bench_use_cpu_time(1);
  builds.push({ name, ex });
}
// fast vs ref at every benchmark shape (T = 128 exercises the packed path, the LM head the nt kernel)
let worstErr = 0;
for (const b of builds) {
  for (const [k, T, C, OC] of SHAPES) {
    const e = b.ex.bench_check_error(KIND[k], T, C, OC);
    check(e >= 0 && e <= 2e-6, `${b.name} ${k} (${T},${C},${OC}): max error ${e} > 2e-6`);
    if (e > worstErr) worstErr = e;
  }
}
console.log(`fast vs ref at every benchmark shape, both wasm builds: max error ${worstErr.toExponential(1)} ` +
  '(tolerance 2e-6 of sum |terms|)');
if (checkOnly || failed) {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

// native columns, if the binary is there
let native = null;
if (nativePath !== 'none' && existsSync(nativePath)) {
  const r = spawnSync(nativePath, cpuTime ? ['--tsv', '--cpu-time'] : ['--tsv'], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) {
    console.error(`native ${nativePath} failed (${r.status}):\n${r.stdout}${r.stderr}`);
    process.exit(1);
  }
  native = { rows: new Map() };
  for (const line of r.stdout.trim().split('\n')) {
    const f = line.split('\t');
    if (f[0] === 'simd') native.simd = f[1];
    else if (f[0] === 'peak_gflops') native.peak = Number(f[1]);
    else if (f[0] === 'matmul' || f[0] === 'matmul_nt' || f[0] === 'matmul_packed')
      native.rows.set(f.slice(0, 4).join(','), { err: Number(f[4]), fast: Number(f[5]), ref: Number(f[6]), best: Number(f[7]) });
  }
}

// V8 runs a wasm function first in its baseline compiler (Liftoff) and swaps in the
// optimised code only for later calls, so warm every exported path up with a few
// small calls and let the background compiles finish before timing anything.
for (const b of builds) {
  for (let i = 0; i < 3; i++) {
    b.ex.bench_peak_gflops(1_000_000);
    b.ex.bench_time_ms(0, 5, 64, 96, 2);
    b.ex.bench_time_ms(2, 1, 64, 96, 2);
    b.ex.bench_time_ms(4, 1, 64, 96, 2); // the packed kernel, its few-rows tile
    b.ex.bench_time_ms(4, 5, 64, 96, 2);
    await new Promise((r) => setTimeout(r, 100));
  }
}
// peak = the best of 5 runs (what the machine can do when nothing else is running)
const peak = (ex) => Math.max(...Array.from({ length: 5 }, () => ex.bench_peak_gflops(20_000_000)));
const peakSimd = peak(builds[0].ex);
const peakScalar = peak(builds[1].ex);
console.log(`\nregister-only multiply-add peak (best of 5): wasm SIMD128 ${fmt(peakSimd)} GFLOP/s, wasm scalar ${fmt(peakScalar)} GFLOP/s` +
  (native ? `, native ${native.simd} ${fmt(native.peak)} GFLOP/s` : ''));
console.log(`median of ${reps} runs after one warm-up, ${cpuTime ? 'process CPU time' : 'wall clock'}; ` +
  'GFLOP/s = 2·T·C·OC / time\n');

const head = ['kernel', 'T', 'C', 'OC'];
if (native) head.push('native ref', `native ${native.simd} (best)`, 'native % peak', 'native fast/ref');
head.push('wasm scalar', 'wasm SIMD128 (best)', 'SIMD128 % peak', 'SIMD128/scalar');
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
for (const [k, T, C, OC] of SHAPES) {
  const sc = gflops(T, C, OC, builds[1].ex.bench_time_ms(KIND[k], T, C, OC, reps));
  const si = gflops(T, C, OC, builds[0].ex.bench_time_ms(KIND[k], T, C, OC, reps));
  const siBest = gflops(T, C, OC, builds[0].ex.bench_last_min_ms());
  const row = [k, T, C, OC];
  if (native) {
    const n = native.rows.get([k, T, C, OC].join(','));
    const nf = n ? gflops(T, C, OC, n.fast) : null, nr = n ? gflops(T, C, OC, n.ref) : null;
    const nb = n ? gflops(T, C, OC, n.best) : null;
    row.push(fmt(nr, 2), `${fmt(nf)} (${fmt(nb)})`, n ? fmt((100 * nf) / native.peak, 0) + '%' : '—',
      n ? fmt(nf / nr, 0) + '×' : '—');
  }
  row.push(fmt(sc, 2), `${fmt(si)} (${fmt(siBest)})`, fmt((100 * si) / peakSimd, 0) + '%', fmt(si / sc, 1) + '×');
  console.log(`| ${row.join(' | ')} |`);
}
console.log('\nGFLOP/s: median of the runs, (best) the fastest run; % peak and ratios use the medians.');
