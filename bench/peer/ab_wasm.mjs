// ab_wasm.mjs — two builds of attnlab.wasm on the same model in one process, alternating A B A B:
// how a kernel change is measured before it is kept (docs/BENCHMARKS.md, issue 8).
//
//   node bench/peer/ab_wasm.mjs A.wasm B.wasm [--model build/bench/distilgpt2] [--runs 9] [--T 11,128]
//
// Prints per T the median and min of each and B/A of both, and the max |logit difference| (packing or
// reordering a kernel must not move the logits beyond rounding). Any family's folder (load_folder.mjs).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { readFolder, loadFolder } from './load_folder.mjs';

const argv = process.argv.slice(2);
const files = argv.filter((a, i) => !a.startsWith('--') && !(i > 0 && argv[i - 1].startsWith('--')));
const opt = (name, d) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : d; };
if (files.length !== 2) {
  console.error('usage: node bench/peer/ab_wasm.mjs A.wasm B.wasm [--model DIR] [--runs N] [--T 11,128]');
  process.exit(2);
}
const dir = opt('--model', 'build/bench/distilgpt2');
const runs = Number(opt('--runs', '9'));
const Ts = opt('--T', '11,128').split(',').map(Number);
const folder = readFolder(dir);
const ws = [await instantiateAttnlab(readFileSync(files[0])), await instantiateAttnlab(readFileSync(files[1]))];
const ms = ws.map((w) => loadFolder(w, folder).m);
const V = ws[0].config(ms[0]).vocab_size;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[n >> 1] : (s[n / 2 - 1] + s[n / 2]) / 2; };
console.log(`A = ${files[0]}, B = ${files[1]}; ${dir}; ${runs} runs; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
// CPU time (process.cpuUsage, user + system of the process) beside wall time: on a loaded machine the process is
// descheduled for part of a run, which wall time counts and CPU time does not.
console.log('| T | A median (min) ms | B median (min) ms | B/A median | B/A min | CPU ms median A / B | max abs logit diff |\n|---:|---:|---:|---:|---:|---:|---:|');
for (const T of Ts) {
  const ids = Array.from({ length: T }, (_, t) => (t * 7919 + 13) % V);
  const L = ws.map((w, i) => { w.forward(ms[i], ids); return w.resultLogits(ms[i]); });
  let d = 0;
  for (let i = 0; i < L[0].length; i++) d = Math.max(d, Math.abs(L[0][i] - L[1][i]));
  const t = [[], []], c = [[], []];
  for (let r = 0; r < runs; r++) {
    for (let k = 0; k < 2; k++) {
      const s = performance.now(), u = process.cpuUsage();
      ws[k].forward(ms[k], ids);
      ws[k].resultLogits(ms[k]);
      const du = process.cpuUsage(u);
      t[k].push(performance.now() - s);
      c[k].push((du.user + du.system) / 1000);
    }
  }
  const [ma, mb] = [median(t[0]), median(t[1])], [na, nb] = [Math.min(...t[0]), Math.min(...t[1])];
  const [ca, cb] = [median(c[0]), median(c[1])];
  console.log(`| ${T} | ${ma.toFixed(1)} (${na.toFixed(1)}) | ${mb.toFixed(1)} (${nb.toFixed(1)}) | ${(mb / ma).toFixed(3)} | ` +
              `${(nb / na).toFixed(3)} | ${ca.toFixed(1)} / ${cb.toFixed(1)} = ${(cb / ca).toFixed(3)} | ${d.toExponential(2)} |`);
}
