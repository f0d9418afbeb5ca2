// bench_gradient_readings.mjs — Model#gradientReadings (integrated gradients, 32 steps by default) on the built-in
// model in Node, beside one forward pass (Model#run) of the same input: rounds A B A B (A a run, B the readings),
// medians; and the completeness error of the integrated gradients against the steps, with the zero baseline and
// with a token baseline (docs/evidence.md § 12, docs/BENCHMARKS.md).
//   node bench/bench_gradient_readings.mjs [rounds] [T] [steps]   (default: 3 rounds, T = 40, 32 steps)
import { performance } from 'node:perf_hooks';
import { loadModel } from '../web/src/index.js';

const [roundsArg, tArg, stepsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 3), T = Number(tArg ?? 40), steps = Number(stepsArg ?? 32);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const m = await loadModel();
const ids = Array.from({ length: T }, (_, t) => (t * 7919 + 13) % m.config.vocabSize);
const fw = [], ig = [];
for (let r = -1; r < rounds; r++) { // round -1: warm-up
  const t0 = performance.now();
  m.run(ids);
  const t1 = performance.now();
  m.gradientReadings(ids, { steps });
  const t2 = performance.now();
  if (r >= 0) { fw.push(t1 - t0); ig.push(t2 - t1); }
}
console.log(`T = ${T}, ${steps} steps, ${rounds} rounds: forward ${median(fw).toFixed(1)} ms, ` +
  `gradientReadings ${median(ig).toFixed(1)} ms (${(median(ig) / median(fw)).toFixed(1)}x)`);
for (const baseline of ['zero', ids[0]]) {
  const row = [];
  for (const s of [1, 4, 16, 32, 64, 256]) {
    const r = m.gradientReadings(ids, { steps: s, baseline });
    row.push(`${s}: ${r.completenessError.toPrecision(3)}`);
    if (s === 1) row.unshift(`m(x) − m(b) = ${(r.value - r.baselineValue).toPrecision(4)}, metric ${r.metric}`);
  }
  console.log(`baseline ${baseline}: ${row.join(', ')}`);
}
m.dispose();
