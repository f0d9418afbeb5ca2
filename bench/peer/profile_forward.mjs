// profile_forward.mjs — where a forward's time goes, by wasm function: V8's sampling CPU profiler (node:inspector)
// around `--runs` forwards of one model at each T, self time summed per function name (docs/BENCHMARKS.md).
//
//   make profile-peer   (the three shapes of make bench-peer), or
//   node --experimental-wasm-relaxed-simd bench/peer/profile_forward.mjs WASM --model DIR [--T 11,128] [--runs 20]
//
// WASM must keep its name section (`make wasm-prof`: build/prof/attnlab-relaxed-prof.wasm), or every function
// shows as wasm-function[n]. Inlined kernels count in their caller (ops.c's micro-kernels are always_inline).
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { readFolder, loadFolder } from './load_folder.mjs';

const argv = process.argv.slice(2);
const opt = (name, d) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : d; };
const wasmPath = argv[0];
const dir = opt('--model', 'build/bench/distilgpt2');
const Ts = opt('--T', '11,128').split(',').map(Number);
const runs = Number(opt('--runs', '20'));

/** self time (ms) per function name from a Profiler.Profile: samples x interval */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const dt = (profile.endTime - profile.startTime) / 1000 / profile.samples.length;
  const out = new Map();
  for (const [id, c] of counts) {
    const name = byId.get(id).callFrame.functionName || '(anonymous)';
    out.set(name, (out.get(name) ?? 0) + c * dt);
  }
  return out;
}

const w = await instantiateAttnlab(readFileSync(wasmPath));
const { m } = loadFolder(w, readFolder(dir));
const V = w.config(m).vocab_size;
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
console.log(`${wasmPath} on ${dir}, ${runs} forwards per T, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const T of Ts) {
  const ids = Array.from({ length: T }, (_, t) => (t * 7919 + 13) % V);
  w.forward(m, ids);
  await session.post('Profiler.start');
  for (let r = 0; r < runs; r++) { w.forward(m, ids); w.resultLogits(m); }
  const { profile } = await session.post('Profiler.stop');
  const times = [...selfTimes(profile)].sort((a, b) => b[1] - a[1]);
  const total = times.reduce((s, [, t]) => s + t, 0);
  console.log(`\nT = ${T}: ${(total / runs).toFixed(1)} ms per forward (sampled)\n| function | ms per forward | share |\n|---|---:|---:|`);
  for (const [name, t] of times.filter(([, t]) => t / total >= 0.003))
    console.log(`| ${name} | ${(t / runs).toFixed(2)} | ${((100 * t) / total).toFixed(1)} % |`);
}
session.disconnect();
