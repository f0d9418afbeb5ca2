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
// how well a rank correlation says a reading orders the effects (the words the verdicts use)
const how = (r) => (r === null || r === undefined ? 'not at all (undefined)' : r >= 0.7 ? `well (ρ = ${f3(r)})`
  : r >= 0.4 ? `moderately (ρ = ${f3(r)})` : r >= 0 ? `weakly (ρ = ${f3(r)})` : `in reverse (ρ = ${f3(r)})`);

function verdicts(res) {
  const e = res.edge[0], t = res.token.spearman, a = res.ablation.agreement;
  const best = Object.entries(t).sort((x, y) => (y[1] ?? -2) - (x[1] ?? -2))[0];
  const name = { lastLayer: 'the last layer', rollout: 'rollout', flow: 'flow' };
  return [
    `* In layer ${e.layer} (all heads), the weights order the local effects of knocking out an edge ${how(e.spearman)}, ` +
      `and the effects on the sentence's next token ${how(e.spearmanLast)}.`,
    `* Among the readings of the whole tensor, ${name[best[0]]} orders the token knockout effects best, ${how(best[1])}; ` +
      `the last layer alone ${how(t.lastLayer)}.`,
    `* The head rankings of zero and resample ablation agree ${how(a['zero-resample'].spearman)}; zero and mean ${how(a['zero-mean'].spearman)}.`,
  ].join('\n');
}

export async function measure(name, source) {
  const m = await loadModel(source);
  const { nLayer, nHead } = m.config;
  const out = { name, nLayer, nHead, sentence: SENTENCE };
  const edges = [];
  for (const [layer, head] of [[nLayer - 1, 'all'], [nLayer - 1, 0], [0, 'all']]) {
    const r = m.edgeKnockout(SENTENCE, { layer, head });
    edges.push({ layer, head, T: r.T, pairs: r.pairs, spearman: r.spearman, kendall: r.kendall,
                 spearmanLast: r.spearmanLast, topK: r.topK, topKOverlap: r.topKOverlap, meanRowSpearman: r.meanRowSpearman });
  }
  out.edge = edges;
  const t = m.tokenKnockout(SENTENCE);
  out.token = { T: t.T, spearman: t.spearman, kendall: t.kendall, top: t.tokens[Array.from(t.effect).indexOf(Math.max(...t.effect))] };
  const a = m.ablationSemantics(SENTENCE);
  out.ablation = { referenceT: a.referenceT, baseLoss: a.zero.baseLoss, agreement: a.agreement,
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
  L.push('| edge knockout | pairs | Spearman ρ(A, E) | Kendall τ | ρ(A, E at last position) | top-k overlap (k) | mean per-row ρ |', '|---|---|---|---|---|---|---|');
  for (const e of res.edge)
    L.push(`| layer ${e.layer}, ${e.head === 'all' ? 'all heads' : `head ${e.head}`} | ${e.pairs} | ${f3(e.spearman)} | ${f3(e.kendall)} | ${f3(e.spearmanLast)} | ${f3(e.topKOverlap)} (${e.topK}) | ${f3(e.meanRowSpearman)} |`);
  L.push('', '| token knockout vs | Spearman ρ | Kendall τ |', '|---|---|---|');
  for (const k of ['lastLayer', 'rollout', 'flow'])
    L.push(`| ${{ lastLayer: 'last layer, head average', rollout: 'attention rollout', flow: 'attention flow' }[k]} | ${f3(res.token.spearman[k])} | ${f3(res.token.kendall[k])} |`);
  L.push('', `Ablation (base loss ${f3(res.ablation.baseLoss)} nats; mean and resample from the ${res.ablation.referenceT}-token reference text):`, '');
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
  L.push('', `What it says for ${res.name}:`, '', verdicts(res));
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
