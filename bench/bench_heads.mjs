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

// The "Break the circuit" card on repeatedTokens(50, {seed: 1}): the per-position losses of one run
// (tokenLosses: one forward + the LM head on T − 1 rows) against the peer a user without it would write,
// T − 1 prefix runs of run() and a log-softmax of each one's last logits; then the card's whole computation.
const rep = m.repeatedTokens(50, { seed: 1 });
const peer = (ids) => {
  const out = new Float64Array(ids.length - 1);
  for (let t = 0; t + 1 < ids.length; t++) {
    const lg = m.run(ids.subarray(0, t + 1), { topK: 0 }).logits;
    let mx = -Infinity, s = 0;
    for (const v of lg) mx = Math.max(mx, v);
    for (const v of lg) s += Math.exp(v - mx);
    out[t] = mx + Math.log(s) - lg[ids[t + 1]];
  }
  return out;
};
const tl = [], pr = [], card = [];
let maxDiff = 0;
for (let r = 0; r < REPS; r++) {   // A B A B: the two ways alternate
  let t = performance.now();
  const a = m.tokenLosses(rep).losses;
  tl.push(performance.now() - t);
  t = performance.now();
  const b = peer(rep);
  pr.push(performance.now() - t);
  for (let k = 0; k < a.length; k++) maxDiff = Math.max(maxDiff, Math.abs(a[k] - b[k]));
  t = performance.now();
  const ind = m.headRoles(rep, { top: 3 });
  const ablate = [[ind.top.induction[0].layer, ind.top.induction[0].head]];
  m.tokenLosses(rep, { ablate });
  m.headRoles(rep, { ablate });
  card.push(performance.now() - t + tl.at(-1));
}
console.log(`tokenLosses(r ++ r, T = ${rep.length}) ${median(tl).toFixed(1)} ms; peer (${rep.length - 1} prefix runs) ` +
            `${median(pr).toFixed(0)} ms: ${(median(pr) / median(tl)).toFixed(1)}x; largest difference ${maxDiff.toExponential(2)} nats`);
console.log(`break-the-circuit card (2 headRoles + 2 tokenLosses) ${median(card).toFixed(0)} ms`);
m.dispose();
