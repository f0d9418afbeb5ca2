// bench_soak.mjs — the "load held" soak at scale (issue 21), for docs/BENCHMARKS.md:
//   node bench/bench_soak.mjs [CALLS=12000] [MODEL=tests/fixtures/tiny]
// CALLS calls through attnlab/worker: every 7th an invalid one, the rest (10 286 of 12 000) random valid
// runs with random interventions;
// and the worker's wasm memory, malloc heap and the process RSS at the start (after a warm-up at the
// longest input) and at the end. Exits non-zero if the wasm memory or the heap is not exactly flat.
import { soak, TINY } from '../tests/js/helpers/soak.js';

const runs = Number(process.argv[2] || 12000);
const source = process.argv[3] || TINY;
const s = await soak({ runs, seed: 2021, invalidEvery: 7, source, onProgress: (n) => process.stderr.write(`\r${n} calls`) });
process.stderr.write('\n');
const mib = (b) => (b / 2 ** 20).toFixed(1);
console.log(`| calls | valid runs | invalid calls (codes) | time | wasm memory start → end | heap start → end | RSS start → end |`);
console.log(`|---:|---:|---|---:|---|---|---|`);
console.log(`| ${runs} | ${s.runs} | ${s.invalid} (${Object.entries(s.codes).map(([k, v]) => `${k} ${v}`).join(', ')}) | ` +
  `${(s.ms / 1000).toFixed(1)} s | ${mib(s.start.wasmBytes)} → ${mib(s.end.wasmBytes)} MiB | ` +
  `${s.start.heapBytes} → ${s.end.heapBytes} B | ${mib(s.start.rss)} → ${mib(s.end.rss)} MiB |`);
if (s.end.wasmBytes !== s.start.wasmBytes || s.end.heapBytes !== s.start.heapBytes) {
  console.error('the wasm memory or the heap grew');
  process.exit(1);
}
