// bench_heads.mjs — the head-importance grid and the pruning curve through the
// npm API (wasm SIMD128 under Node), on the first T tokens of a text file.
//   node bench/bench_heads.mjs [model_dir] [text_file] [T]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadModel } from '../web/src/index.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const dir = process.argv[2] ?? join(ROOT, 'models/brown-gpt2');
const txt = process.argv[3] ?? join(ROOT, 'models/brown-gpt2/heldout_sample.txt');
const T = Number(process.argv[4] ?? 100);
const m = await loadModel(dir);
const ids = m.tokenize(readFileSync(txt, 'utf8')).ids.slice(0, T);
const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];
const grid = [], curve = [], run = [];
let imp;
const REPS = Number(process.env.REPS ?? 5);
for (let r = 0; r < REPS; r++) {
  let t = performance.now();
  m.run(ids);
  run.push(performance.now() - t);
  t = performance.now();
  imp = m.headImportance(ids, { pruning: false });
  grid.push(performance.now() - t);
  t = performance.now();
  imp = m.headImportance(ids);
  curve.push(performance.now() - t - grid.at(-1)); // the curve alone
}
const { nLayer, nHead } = m.config;
console.log(`model ${dir}: L=${nLayer} NH=${nHead}, T=${ids.length}, median of ${REPS} (wasm, Node ${process.version})`);
console.log(`run() ${median(run).toFixed(1)} ms; importance grid (${1 + nLayer * nHead} runs) ${median(grid).toFixed(0)} ms; ` +
            `pruning curve (${1 + nLayer * nHead} runs) ${median(curve).toFixed(0)} ms`);
console.log(`base loss ${imp.baseLoss.toFixed(4)}, loss at half ${imp.lossAtHalf.toFixed(4)}, all removed ${imp.pruning.at(-1).toFixed(4)}`);
m.dispose();
