#!/usr/bin/env node
// evidence-numbers.mjs — the numbers docs/evidence.md quotes, computed by the
// engine (attnlab's npm API): measure() and table() serve `make docs-numbers`
// (scripts/docs-numbers.mjs: the built-in model, docs/generated/evidence-builtin.md),
// and run as a script they write the same tables for the distilgpt2-shaped random
// checkpoint of `make bench` (docs/generated/evidence-distil.md):
//   node scripts/evidence-numbers.mjs [--distil build/bench/distilgpt2]
// Timings are not written here (they are benchmarks: docs/BENCHMARKS.md).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../web/src/index.js';
import { PATCHING_PAIRS } from '../web/src/evidence.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SENTENCE = 'Because the storm intensified , the ship finally sank .';
const argv = process.argv.slice(2);
const distil = argv.includes('--distil') ? argv[argv.indexOf('--distil') + 1] : join(ROOT, 'build/bench/distilgpt2');

const f3 = (x) => (x === null || x === undefined ? '—' : x.toFixed(3));
// One input gives a description, not a verdict: no interval over inputs and no null. The verdicts are over
// the sets (scripts/evidence-sets-numbers.mjs, docs/generated/evidence-sets.md).
function verdicts(res) {
  const e = res.edge[0], T = e.T;
  return [
    `* This is one sentence of ${T} tokens: each ρ above is a description of it, with no interval and no null. ` +
      `Over ${T} points a rank correlation needs to be large before it differs from 0 at all; the tables over the sets give the verdicts.`,
    `* In the last layer the effect at the last position is taken over row ${T - 1} alone (${e.pairsLast} pairs): ` +
      'an edge of an earlier row cannot reach that position, so its effect there is an exact zero, not a measurement.',
  ].join('\n');
}

export async function measure(name, source) {
  const m = await loadModel(source);
  const { nLayer, nHead } = m.config;
  const out = { name, nLayer, nHead, sentence: SENTENCE };
  const edges = [];
  for (const [layer, head] of [[nLayer - 1, 'all'], [nLayer - 1, 0], [0, 'all']]) {
    const r = m.edgeKnockout(SENTENCE, { layer, head });
    edges.push({ layer, head, T: r.T, pairs: r.pairs, pairsLast: r.pairsLast, spearman: r.spearman, kendall: r.kendall,
                 spearmanLast: r.spearmanLast, topK: r.topK, topKOverlap: r.topKOverlap, meanRowSpearman: r.meanRowSpearman });
  }
  out.edge = edges;
  const t = m.tokenKnockout(SENTENCE);
  out.token = { T: t.T, spearman: t.spearman, kendall: t.kendall, top: t.tokens[Array.from(t.effect).indexOf(Math.max(...t.effect))] };
  const a = m.ablationSemantics(SENTENCE);
  out.ablation = { referenceT: a.referenceT, draws: a.resample.draws, baseLoss: a.zero.baseLoss, agreement: a.agreement,
                   lossAtHalf: Object.fromEntries(['zero', 'mean', 'resample'].map((k) => [k, a[k].pruning[Math.floor((nLayer * nHead) / 2)]])) };
  for (const [clean, corrupt] of PATCHING_PAIRS) {
    const rc = m.run(clean), rd = m.run(corrupt);
    if (rc.T !== rd.T || rc.top[0].id === rd.top[0].id) continue;
    const p = m.activationPatching(clean, corrupt);
    let best = 0;
    p.heads.forEach((v, i) => { if (Math.abs(v) > Math.abs(p.heads[best])) best = i; });
    const lastPos = Array.from({ length: nLayer }, (_, l) => p.resid[l * p.T + p.T - 1]);
    out.patching = { clean, corrupt, answers: p.answerTokens, ldClean: p.ldClean, ldCorrupt: p.ldCorrupt,
                     bestHead: { layer: Math.floor(best / nHead), head: best % nHead, value: p.heads[best] }, lastPositionByLayer: lastPos };
    break;
  }
  m.dispose();
  return out;
}

export function table(res) {
  const L = [];
  L.push(`#### ${res.name} (${res.nLayer} layers × ${res.nHead} heads), on "${res.sentence}"`, '');
  L.push('| edge knockout (one input) | pairs | Spearman ρ(A, E) | Kendall τ | ρ(A, E at the last position) (pairs) | top-k overlap (k) | mean per-row ρ |', '|---|---|---|---|---|---|---|');
  for (const e of res.edge)
    L.push(`| layer ${e.layer}, ${e.head === 'all' ? 'all heads' : `head ${e.head}`} | ${e.pairs} | ${f3(e.spearman)} | ${f3(e.kendall)} | ${f3(e.spearmanLast)} (${e.pairsLast}) | ${f3(e.topKOverlap)} (${e.topK}) | ${f3(e.meanRowSpearman)} |`);
  L.push('', '| token knockout vs | Spearman ρ | Kendall τ |', '|---|---|---|');
  for (const k of ['lastLayer', 'rollout', 'flow'])
    L.push(`| ${{ lastLayer: 'last layer, head average', rollout: 'attention rollout', flow: 'attention flow' }[k]} | ${f3(res.token.spearman[k])} | ${f3(res.token.kendall[k])} |`);
  L.push('', `Ablation (base loss ${f3(res.ablation.baseLoss)} nats; mean over the ${res.ablation.referenceT}-token reference text, resample averaged over ${res.ablation.draws} windows of it):`, '');
  L.push('| rankings compared | Spearman ρ | Kendall τ |', '|---|---|---|');
  for (const [k, v] of Object.entries(res.ablation.agreement)) L.push(`| ${k.replace('-', ' vs ')} | ${f3(v.spearman)} | ${f3(v.kendall)} |`);
  L.push('', `Loss with half the heads removed: zero ${f3(res.ablation.lossAtHalf.zero)}, mean ${f3(res.ablation.lossAtHalf.mean)}, resample ${f3(res.ablation.lossAtHalf.resample)}.`);
  if (res.patching) {
    const p = res.patching;
    L.push('', `Patching "${p.clean}" → "${p.corrupt}" (answers ${JSON.stringify(p.answers[0])} vs ${JSON.stringify(p.answers[1])}; logit difference ${f3(p.ldClean)} clean, ${f3(p.ldCorrupt)} corrupted): ` +
      `the head whose output restores most is L${p.bestHead.layer}H${p.bestHead.head} (${f3(p.bestHead.value)}); the last position's residual restores ${p.lastPositionByLayer.map(f3).join(', ')} entering layers 0…${res.nLayer - 1}.`);
  } else {
    L.push('', 'Patching: none of the candidate pairs changes this model\'s next token, so there is nothing to restore.');
  }
  L.push('', `How to read it (${res.name}):`, '', verdicts(res));
  return L.join('\n');
}

async function main() {
  // The built-in model's numbers are part of `make docs-numbers` (docs/generated/evidence-builtin.md);
  // this script adds those of the distilgpt2-shaped checkpoint, which needs PyTorch to generate.
  if (!existsSync(join(distil, 'model.safetensors'))) {
    console.error(`no ${distil}/model.safetensors: run \`make bench\` first (tests/ref/make_checkpoint.py --shape distilgpt2)`);
    process.exit(1);
  }
  const res = await measure('distilgpt2-shaped random checkpoint', distil);
  mkdirSync(join(ROOT, 'docs/generated'), { recursive: true });
  writeFileSync(join(ROOT, 'docs/generated/evidence-distil.json'), JSON.stringify(res, null, 1) + '\n');
  writeFileSync(join(ROOT, 'docs/generated/evidence-distil.md'),
    '<!-- written by scripts/evidence-numbers.mjs (needs build/bench/distilgpt2); do not edit -->\n\n' + table(res) + '\n');
  console.log(table(res));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
