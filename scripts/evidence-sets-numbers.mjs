#!/usr/bin/env node
// evidence-sets-numbers.mjs — the built-in model's evidence verdicts over its sets (docs/evidence.md § "Over the
// built-in sets"): edge knockout through the CLI (`attnlab evidence --kind edge --set heldout`, the same numbers
// as Model#edgeKnockoutSet, tests/js/evidence-sets-api.test.js), token knockout, ablation and patching through
// the npm API. Writes docs/generated/evidence-sets.md and evidence-sets.json. It takes minutes (tens of
// thousands of forward passes), so `make docs-numbers` runs it but tests/js/docs-numbers.test.js does not
// recompute it; every number it writes carries its set, n, interval and null.
//   node scripts/evidence-sets-numbers.mjs [--threads N]
import { writeFileSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../web/src/index.js';
import { EVIDENCE_SETS } from '../web/src/evidence-sets.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = join(ROOT, 'docs/generated');
const argv = process.argv.slice(2);
const threads = argv.includes('--threads') ? argv[argv.indexOf('--threads') + 1] : '2';
const EDGE_N = 100, TOKEN_N = 100, ABL_N = 10, ABL_DRAWS = 20;

const f3 = (x) => (x === null || x === undefined ? '—' : x.toFixed(3));
const fp = (p) => (p === null || p === undefined ? '—' : p < 0.001 ? '< 0.001' : p.toFixed(3));
const ci = (s) => `${f3(s.mean)} [${f3(s.lo)}, ${f3(s.hi)}]`;
const nul = (s) => (s.nullMean === null ? '—' : `${f3(s.nullMean)} [${f3(s.nullLo)}, ${f3(s.nullHi)}]`);

// the CLI's JSON in the API's field names
const corrOf = (c) => ({ mean: c.mean, lo: c.lo, hi: c.hi, nullMean: c.null_mean, nullLo: c.null_lo, nullHi: c.null_hi,
  p: c.p, pGreater: c.p_greater, nDefined: c.n_defined, nPoints: c.n_points, nAboveFloor: c.n_above_floor });
function edgeSet(layer) {
  const r = spawnSync(join(ROOT, 'build/attnlab'), ['evidence', '--kind', 'edge', '--set', 'heldout', '--limit', String(EDGE_N),
    '--layer', String(layer), '--threads', threads], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`attnlab evidence --set: ${r.stderr}`);
  const j = JSON.parse(r.stdout);
  const four = (k) => Object.fromEntries(['spearman', 'kendall', 'uniform', 'permuted'].map((n) => [n, corrOf(j[k][n])]));
  return { layer, n: j.n, eps: j.eps, noise: j.noise, lastRowOnly: j.last_row_only, local: four('local'), last: four('last'),
           rows: j.rows, topKOverlap: j.top_k_overlap, meanEffect: j.mean_effect };
}

// KL(softmax(a) || softmax(b)) in double
function klOf(a, b) {
  const lse = (z) => { let mx = -Infinity; for (const x of z) mx = Math.max(mx, x); let s = 0; for (const x of z) s += Math.exp(x - mx); return mx + Math.log(s); };
  const la = lse(a), lb = lse(b);
  let k = 0;
  for (let v = 0; v < a.length; v++) k += Math.exp(a[v] - la) * ((a[v] - la) - (b[v] - lb));
  return Math.max(k, 0);
}

function edgeRows(e) {
  const row = (label, s) => `| ${label} | ${ci(s)} | ${nul(s)} | ${fp(s.p)} | ${s.nDefined} | ${s.nAboveFloor} of ${s.nPoints} |`;
  return [
    `| layer ${e.layer}, all heads | mean ρ [95 % CI] | within-row null [95 %] | p | inputs | effects above the floor |`,
    '|---|---|---|---|---|---|',
    row('local: A against E (every causal pair)', e.local.spearman),
    row('local, Kendall τ', e.local.kendall),
    row('local, uniform attention (row length only)', e.local.uniform),
    row('local, attention shuffled within rows', e.local.permuted),
    row(`last: A against E at the last position${e.lastRowOnly ? ' (row T−1 only)' : ''}`, e.last.spearman),
    row('last, attention shuffled within rows', e.last.permuted),
    '',
    `Mean per-row ρ (rows with ≥ 4 keys): ${f3(e.rows.mean)} [${f3(e.rows.lo)}, ${f3(e.rows.hi)}]; top-T overlap ` +
      `${f3(e.topKOverlap.mean)} [${f3(e.topKOverlap.lo)}, ${f3(e.topKOverlap.hi)}]; mean local effect of one edge ` +
      `${e.meanEffect.mean.toExponential(2)} [${e.meanEffect.lo.toExponential(2)}, ${e.meanEffect.hi.toExponential(2)}] nats. Noise floor ε = ${e.eps.toExponential(2)} ` +
      `nats (10 × the largest KL a no-op renormalisation left on the first ${e.noise ? e.noise.inputs : '—'} inputs: ` +
      `${e.noise ? e.noise.max_kl.toExponential(2) : '—'}).`,
  ];
}

// the sentence a verdict gets: the reading beats the null, or not, with the numbers
function verdict(what, s) {
  if (s.mean === null) return `* ${what}: undefined on these inputs.`;
  const beats = s.mean > s.nullHi ? 'above its null band' : s.mean < s.nullLo ? 'below its null band' : 'inside its null band';
  return `* ${what}: mean ρ ${ci(s)}, ${beats} (null ${nul(s)}, p ${fp(s.p)}).`;
}

// Each stage's result is kept in build/evidence-sets-cache.json (with --resume a failed run restarts from it).
const CACHE = join(ROOT, 'build/evidence-sets-cache.json');
const cache = argv.includes('--resume') && existsSync(CACHE) ? JSON.parse(readFileSync(CACHE, 'utf8')) : {};
function stage(name, f) {
  if (!(name in cache)) {
    cache[name] = f();
    mkdirSync(join(ROOT, 'build'), { recursive: true });
    writeFileSync(CACHE, JSON.stringify(cache));
  }
  return cache[name];
}

async function main() {
  const m = await loadModel();
  const L = m.config.nLayer;
  const t0 = Date.now();
  const edges = [stage('edgeLast', () => edgeSet(L - 1)), stage('edge0', () => edgeSet(0))];
  const tokens = {};
  for (const mode of ['column', 'delete']) tokens[mode] = stage(`tokens-${mode}`, () => m.tokenKnockoutSet('heldout', { limit: TOKEN_N, mode }));
  const abl = stage('ablation', () => m.ablationSet('heldout', { limit: ABL_N, draws: ABL_DRAWS }));
  const induction = stage('induction', () => m.patchingSet('induction'));
  const pairs = stage('pairs', () => m.patchingSet('pairs', { minGap: 0 }));
  // two runs that should be equal: the same sentences with the weights kept 16-bit (converted inside each product)
  const storage = await (async () => {
    if ('storage' in cache) return cache.storage;
    const h = await loadModel(undefined, { weights: 'half' });
    let mx = 0;
    for (const s of EVIDENCE_SETS.heldout.sentences.slice(0, 10)) mx = Math.max(mx, klOf(m.run(s.text).logits, h.run(s.text).logits));
    h.dispose();
    return stage('storage', () => ({ maxKL: mx, weights: h.weights }));
  })();
  const gaps = pairs.perInput.map((p) => p.ldClean - p.ldCorrupt);
  const H = m.config.nHead, name = (i) => `L${Math.floor(i / H)}H${i % H}`;
  const bestHead = induction.heads.reduce((b, x, i) => (x.mean > induction.heads[b].mean ? i : b), 0);
  const nums = { edges, tokens, ablation: { n: abl.n, draws: abl.draws, agreement: abl.agreement },
    induction: { n: induction.n, skipped: induction.skipped.length, best: name(bestHead), bestScore: induction.heads[bestHead],
                 residLast: induction.residLast },
    pairs: { n: pairs.n, rightSign: gaps.filter((g) => g > 0).length, maxGap: Math.max(...gaps), aboveOne: gaps.filter((g) => g >= 1).length } };
  const heldout = EVIDENCE_SETS.heldout;
  const md = [
    '<!-- generated by scripts/evidence-sets-numbers.mjs (make docs-numbers): do not edit -->',
    '',
    `#### brown-gpt2 (built-in), over its sets — 95 % bootstrap intervals over inputs (1000 resamples, seed 1), ` +
      `nulls from 1000 within-row permutations of the readings`,
    '',
    `**Edge knockout**, the first ${EDGE_N} of the ${heldout.sentences.length} held-out sentences (${heldout.tokens.min}–${heldout.tokens.max} tokens):`,
    '',
    ...edgeRows(edges[0]), '', ...edgeRows(edges[1]), '',
    `**Token knockout**, the first ${TOKEN_N} held-out sentences: each reading of the whole tensor against the effect of removing a token on the next-token distribution after the sentence (null: the reading shuffled over the sentence's tokens). Uniform attention gives every token of the row the same weight and ranks nothing, so it has no row here.`,
    '',
    `Noise floor: ε = ${tokens.column.eps.toExponential(2)} nats for the column knockout (every row of every layer divided by its own sum), ` +
      `${tokens.delete.eps.toExponential(2)} for deletion (the same no-op, on the intact input); effects above it: ` +
      `${tokens.column.readings.lastLayer.nAboveFloor} of ${tokens.column.readings.lastLayer.nPoints} and ` +
      `${tokens.delete.readings.lastLayer.nAboveFloor} of ${tokens.delete.readings.lastLayer.nPoints}.`,
    '',
    `Two runs that should be equal, another way: the same 10 sentences with the weights kept 16-bit (\`weights: 'half'\`, converted inside each product) differ from the F32 runs by a KL of at most ${storage.maxKL.toExponential(2)} at the last position, below every ε above.`,
    '',
    '| token removed by | reading | mean ρ [95 % CI] | null [95 %] | p |',
    '|---|---|---|---|---|',
    ...Object.entries(tokens).flatMap(([mode, r]) => [...['lastLayer', 'rollout', 'flow'].map((k) =>
      `| ${mode === 'column' ? 'its column knocked out' : 'deletion from the input'} | ${{ lastLayer: 'last layer', rollout: 'rollout', flow: 'flow' }[k]} | ${ci(r.readings[k])} | ${nul(r.readings[k])} | ${fp(r.readings[k].p)} |`),
      `| ${mode === 'column' ? 'its column knocked out' : 'deletion from the input'} | last layer shuffled within the sentence (baseline) | ${ci(r.baselines.permuted)} | ${nul(r.baselines.permuted)} | ${fp(r.baselines.permuted.p)} |`]),
    '',
    `**Ablation**, the first ${ABL_N} held-out sentences, resample averaged over ${ABL_DRAWS} windows of the reference: agreement of the head rankings (ρ per input, mean [95 % CI]): ` +
      `zero–mean ${ci(abl.agreement['zero-mean'])}, zero–resample ${ci(abl.agreement['zero-resample'])}, mean–resample ${ci(abl.agreement['mean-resample'])}.`,
    '',
    `**Patching, induction pairs** (${induction.n} of ${induction.n + induction.skipped.length} pairs with a logit-difference gap ≥ 1 nat): ` +
      `the head whose output restores most is ${name(bestHead)}, ${ci(induction.heads[bestHead])}; the last position's residual restores ` +
      `${induction.residLast.map((x) => f3(x.mean)).join(', ')} entering layers 0…${L - 1}.`,
    '',
    `**Patching, minimal pairs**: the model does not separate them. Of ${pairs.n} pairs, ${nums.pairs.rightSign} have the clean answer ahead in the clean run relative to the corrupted one, ` +
      `${nums.pairs.aboveOne} by at least 1 nat (largest gap ${f3(nums.pairs.maxGap)}): a patching score, which divides by that gap, says nothing here, and none is reported.`,
    '',
    'What the numbers say for this model (sentences written by the script from the numbers):',
    '',
    verdict(`Layer ${L - 1}, local effects`, edges[0].local.spearman),
    verdict(`Layer ${L - 1}, effect on the next token after the sentence (row T−1)`, edges[0].last.spearman),
    verdict('Layer 0, local effects', edges[1].local.spearman),
    verdict('Layer 0, effect on the next token after the sentence', edges[1].last.spearman),
    ...['lastLayer', 'rollout', 'flow'].map((k) => verdict(`Token knockout (column), ${k === 'lastLayer' ? 'last layer' : k}`, tokens.column.readings[k])),
    '',
    `Computed in ${Math.round((Date.now() - t0) / 1000)} s on ${new Date().toISOString().slice(0, 10)}.`,
    '',
  ].join('\n');
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'evidence-sets.md'), md.replace(/Computed in \d+ s on [\d-]+\.\n/, ''));
  writeFileSync(join(OUT, 'evidence-sets.json'), `${JSON.stringify(nums, null, 1)}\n`);
  console.log(md);
  m.dispose();
}

main().catch((e) => { console.error(e); process.exit(1); });
