// bench_evidence.mjs — what the evidence measurements cost in WebAssembly
// (Node, one thread): the edge-knockout grid of one head at T = 10 and T = 32 on
// the built-in model and at T = 10 on the distilgpt2-shaped checkpoint of
// `make bench`, the token knockout, the three ablation semantics and
// activation patching. Medians of RUNS runs (default 5), after one warm-up.
//   node bench/bench_evidence.mjs [RUNS]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../web/src/index.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RUNS = Number(process.argv[2] || 5);
const T10 = 'Because the storm intensified , the ship finally sank .';
const T32 = 'The rain made the road wet , so the car skidded into the ditch and the driver called for help because the brakes had failed on the steep hill .';

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
function time(f, runs = RUNS) {
  f();
  const ts = [];
  for (let i = 0; i < runs; i++) { const t = performance.now(); f(); ts.push(performance.now() - t); }
  return median(ts);
}

async function bench(name, source, runs) {
  const m = await loadModel(source);
  const L = m.config.nLayer;
  const t10 = m.tokenize(T10).ids.length, t32 = m.tokenize(T32).ids.slice(0, 32);
  const rows = [
    [`edge knockout, layer ${L - 1} head 0, T = ${t10}`, time(() => m.edgeKnockout(T10, { layer: L - 1, head: 0 }), runs)],
    [`edge knockout, layer 0 head 0, T = ${t10}`, time(() => m.edgeKnockout(T10, { layer: 0, head: 0 }), runs)],
    [`edge knockout, layer ${L - 1} head 0, T = ${t32.length}`, time(() => m.edgeKnockout(t32, { layer: L - 1, head: 0 }), runs)],
    [`token knockout + rollout + flow, T = ${t10}`, time(() => m.tokenKnockout(T10), runs)],
    [`three ablation semantics, T = ${t10}`, time(() => m.ablationSemantics(T10), Math.min(runs, 3))],
    ['activation patching, "They said that they" / "He said that he"', time(() => m.activationPatching('They said that they', 'He said that he', { answers: [1, 2] }), runs)],
  ];
  m.dispose();
  console.log(`### ${name}`);
  console.log('| measurement | median ms |\n|---|---|');
  for (const [k, v] of rows) console.log(`| ${k} | ${v.toFixed(1)} |`);
}

await bench('brown-gpt2 (built-in, 6 × 4, C = 128)', undefined, RUNS);
const distil = join(ROOT, 'build/bench/distilgpt2');
if (existsSync(join(distil, 'model.safetensors'))) await bench('distilgpt2-shaped (6 × 12, C = 768, F32)', distil, Math.min(RUNS, 3));
else console.log('(no build/bench/distilgpt2: `make bench` generates it with PyTorch)');
