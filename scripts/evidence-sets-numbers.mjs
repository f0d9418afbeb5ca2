#!/usr/bin/env node
// evidence-sets-numbers.mjs — the built-in model's evidence over its sets, read against controls that could come out
// the same (docs/evidence.md § "Over the built-in sets"). Every table comes from the npm API:
//   - edge knockout (layers L−1 and 0) and token knockout (column) through controlledEvidence (web/src/verdicts.js):
//     the trained model beside its two random-weight twins and the position readings, on all 125 held-out sentences,
//     intervals clustered by the 25 documents, differences paired, Holm over each table, the verdicts it writes;
//   - the zero knockout beside the renormalised one, token deletion, and each head of the last layer alone
//     (trained model, clustered intervals);
//   - natural-text induction: each held-out sentence repeated twice, against random-token repeats;
//   - ablation and patching as before (patching pairs kept by the signed gap).
// Writes docs/generated/evidence-sets.md and evidence-sets.json. It takes tens of minutes (hundreds of thousands of
// forward passes), so `make docs-numbers` runs it but tests/js/docs-numbers.test.js does not; instead it recomputes
// the first inputs of each table and checks them against the per-input numbers this script stores (so a change in
// the code or the model that moves a number fails the test until this script is run again).
//   node scripts/evidence-sets-numbers.mjs [--resume] [--limit N]
import { writeFileSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, controlledEvidence } from '../web/src/index.js';
import { EVIDENCE_SETS } from '../web/src/evidence-sets.js';
import { modelInternals } from '../web/src/model.js';
import { clusterBootstrapMean, pairedDiff } from '../web/src/stats.js';
import { clustersOf } from '../web/src/verdicts.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = join(ROOT, 'docs/generated');
const argv = process.argv.slice(2);
const N = argv.includes('--limit') ? Number(argv[argv.indexOf('--limit') + 1]) : EVIDENCE_SETS.heldout.sentences.length;
const ABL_N = 10, ABL_DRAWS = 20, HEAD_N = 40;
const STAT = { nBoot: 1000, nPerm: 1000, seed: 1, level: 0.95 };

const f3 = (x) => (x === null || x === undefined ? '—' : x.toFixed(3));
const fp = (p) => (p === null || p === undefined ? '—' : p < 0.001 ? '< 0.001' : p.toFixed(3));
const ci = (s) => `${f3(s.mean)} [${f3(s.lo)}, ${f3(s.hi)}]`;
const nats = (x) => (x === null || x === undefined ? '—' : x.toExponential(1));

// Each stage's result is kept in build/evidence-sets-cache.json (with --resume a failed run restarts from it).
const CACHE = join(ROOT, 'build/evidence-sets-cache.json');
const cache = argv.includes('--resume') && existsSync(CACHE) ? JSON.parse(readFileSync(CACHE, 'utf8')) : {};
async function stage(name, f) {
  if (!(name in cache)) {
    const t0 = Date.now();
    cache[name] = await f();
    console.error(`${name}: ${Math.round((Date.now() - t0) / 1000)} s`);
    mkdirSync(join(ROOT, 'build'), { recursive: true });
    writeFileSync(CACHE, JSON.stringify(cache));
  }
  return cache[name];
}

// a controlled table as plain data (the results keep their per-input numbers: the staleness check reads them)
const plain = (x) => JSON.parse(JSON.stringify(x));

// a p at the floor of its permutations (1 / (nPerm + 1)) is a bound, not a measurement: say so
const FLOOR = 1 / (STAT.nPerm + 1);
const holmP = (d) => (d.p !== null && d.p <= FLOOR * (1 + 1e-9) ? `≤ ${fp(d.pHolm)}†` : fp(d.pHolm));

/** The rows of one controlled table: each focus reading, its twins, its best position reading. */
function controlledRows(t, title) {
  const L = [`| ${title} | trained model | entropy-matched twin | trained − twin (paired) | Holm p | GPT-2-init twin | best position reading | reading − it | Holm p |`,
    '|---|---|---|---|---|---|---|---|---|'];
  for (const f of t.focus) {
    const m = f.twins.matched, g = f.twins['gpt2-init'];
    const best = f.positions.length ? f.positions.reduce((a, p) => ((p.value.mean ?? -Infinity) > (a.value.mean ?? -Infinity) ? p : a)) : null;
    L.push(`| ${f.label} | ${ci(f.trained)} | ${m ? ci(m.value) : '—'} | ${m ? ci(m.diff) : '—'} | ${m ? holmP(m.diff) : '—'} | ` +
      `${g ? ci(g.value) : '—'} | ${best ? `${best.label}: ${ci(best.value)}` : '—'} | ${best ? ci(best.diff) : '—'} | ${best ? holmP(best.diff) : '—'} |`);
  }
  return L;
}

function effectsLine(e, what) {
  return `${what}: ${e.n} points; |effect| median ${nats(e.median)}, 90th percentile ${nats(e.p90)}, 99th ${nats(e.p99)}, ` +
    `largest ${nats(e.max)} nats; ${e.nAbove} (${f3(e.nAbove / Math.max(1, e.n))} of them) reach ${e.threshold} nats.`;
}

async function main() {
  const m = await loadModel();
  const w = modelInternals(m).wasm;
  const L = m.config.nLayer, H = m.config.nHead;
  const clusters = clustersOf('heldout', N), clustersAll = clustersOf('heldout', Math.max(N, HEAD_N));
  const docs = new Set(clusters).size;
  const iv = (v) => clusterBootstrapMean(w, v, clustersAll.slice(0, v.length), { nBoot: STAT.nBoot, level: STAT.level, seed: STAT.seed });
  const t0 = Date.now();

  const edges = {};
  for (const layer of [L - 1, 0])
    edges[layer] = await stage(`edge${layer}`, async () => plain(await controlledEvidence(m, 'edgeKnockoutSet', 'heldout',
      { limit: N, layer, ...STAT })));
  const zero = {};
  for (const layer of [L - 1, 0]) zero[layer] = await stage(`edge${layer}-zero`, () => plain(m.edgeKnockoutSet('heldout', { limit: N, layer, knockout: 'zero', ...STAT })));
  const tokens = await stage('tokens', async () => plain(await controlledEvidence(m, 'tokenKnockoutSet', 'heldout', { limit: N, ...STAT })));
  const tokensDelete = await stage('tokens-delete', () => plain(m.tokenKnockoutSet('heldout', { limit: N, mode: 'delete', ...STAT })));
  const heads = await stage('heads', () => Array.from({ length: H }, (_, h) => plain(m.edgeKnockoutSet('heldout', { limit: HEAD_N, layer: L - 1, head: h, ...STAT }))));

  // natural-text induction: a held-out sentence s repeated (s ++ s) against random-token repeats r ++ r
  const induction = await stage('natural-induction', () => {
    const gain = (ids, n) => {
      const l = m.tokenLosses(ids).losses;
      let a = 0, b = 0;
      for (let t = 0; t < n - 1; t++) { a += l[t]; b += l[n + t]; }
      return (a - b) / (n - 1); // nats a token the second copy is easier than the first
    };
    const natural = EVIDENCE_SETS.heldout.sentences.slice(0, N).map((s) => {
      const { ids } = m.tokenize(s.text);
      return gain([...ids, ...ids], ids.length);
    });
    const random = Array.from({ length: 40 }, (_, k) => gain(Array.from(m.repeatedTokens(20, { seed: k + 1 })), 20));
    return { natural, random };
  });

  const abl = await stage('ablation', () => plain(m.ablationSet('heldout', { limit: ABL_N, draws: ABL_DRAWS })));
  const inductionPairs = await stage('induction', () => plain(m.patchingSet('induction')));
  const pairs = await stage('pairs', () => plain(m.patchingSet('pairs', { minGap: 0 })));

  const nat = iv(induction.natural), rnd = clusterBootstrapMean(w, induction.random, null, { nBoot: STAT.nBoot, level: STAT.level, seed: STAT.seed });
  const gaps = pairs.perInput.map((p) => p.ldClean - p.ldCorrupt);
  const name = (i) => `L${Math.floor(i / H)}H${i % H}`;
  const bestHead = inductionPairs.heads.reduce((b, x, i) => (x.mean > inductionPairs.heads[b].mean ? i : b), 0);
  const [eLast, e0] = [edges[L - 1], edges[0]];
  const headRows = heads.map((r, h) => `| L${L - 1}H${h} | ${ci(iv(r.perInput.map((p) => p.spearman)))} | ${ci(iv(r.perInput.map((p) => p.rowSpearman)))} | ` +
    `${ci(iv(r.positions.recency.perInput.map((p) => p.local)))} | ${ci(pairedDiff(w, r.perInput.map((p) => p.spearman), r.positions.recency.perInput.map((p) => p.local), clustersAll.slice(0, HEAD_N), STAT))} |`);
  const zeroRow = (layer) => {
    const z = zero[layer], r = edges[layer].trained;
    const d = pairedDiff(w, r.perInput.map((p) => p.spearman), z.perInput.map((p) => p.spearman), clusters, STAT);
    return `| layer ${layer} | ${ci(iv(r.perInput.map((p) => p.spearman)))} | ${ci(iv(z.perInput.map((p) => p.spearman)))} | ${ci(d)} |`;
  };

  const heldout = EVIDENCE_SETS.heldout;
  const md = [
    '<!-- generated by scripts/evidence-sets-numbers.mjs (make docs-numbers): do not edit -->',
    '',
    `#### brown-gpt2 (built-in), over all ${N} held-out sentences of its ${docs} held-out documents`,
    '',
    `Every interval is 95 %, from 1000 resamples of **whole documents** (the sentences of one document are not independent); ` +
      'every difference is **paired** on the same sentences, with a two-sided p from 1000 document-level sign flips, and the ' +
      'p-values of each table are adjusted together by **Holm** († marks a raw p at the floor of its 1000 sign flips, ' +
      '1/1001: the adjusted value is then a bound, and more flips would give a smaller one). Each reading is set beside controls that could come out ' +
      'the same: two random-weight twins of the model (docs/evidence.md, "Random-weight twins": one with attention as peaked ' +
      'as the trained model\'s, layer by layer, and one with GPT-2\'s initialisation) and readings that know only positions ' +
      '(recency, the first token, the query\'s own token, earliness).',
    '',
    `**The random-weight twins** of this model, calibrated on the same ${N} sentences (seed ${eLast.twins.matched.twin.seed}): each layer's mean ` +
      'attention entropy in nats (over heads and query rows 1 … T−1), and the factor s_l on the matched twin\'s queries:',
    '',
    `| layer | ${Array.from({ length: L }, (_, l) => l).join(' | ')} |`,
    `|---|${'---:|'.repeat(L)}`,
    `| trained model | ${eLast.twins.matched.twin.entropies.trained.map((x) => x.toFixed(4)).join(' | ')} |`,
    `| matched twin | ${eLast.twins.matched.twin.entropies.twin.map((x) => x.toFixed(4)).join(' | ')} |`,
    `| s_l | ${eLast.twins.matched.twin.scales.map((x) => x.toFixed(2)).join(' | ')} |`,
    `| GPT-2-init twin | ${eLast.twins['gpt2-init'].twin.entropies.twin.map((x) => x.toFixed(4)).join(' | ')} |`,
    `| uniform attention | ${Array.from({ length: L }, () => eLast.twins.matched.twin.entropies.uniform.toFixed(4)).join(' | ')} |`,
    '',
    `**Edge knockout, layer ${L - 1}** (the last; all heads; renormalised), ${heldout.tokens.min}–${heldout.tokens.max} tokens a sentence:`,
    '',
    ...controlledRows(eLast, `layer ${L - 1}`),
    '',
    effectsLine(eLast.trained.effects.local, 'Local effects (KL at the query\'s own position)'),
    effectsLine(eLast.trained.effects.last, 'Effects at the last position (row T−1)'),
    `Against only the local effects of at least ${eLast.trained.aboveThreshold.threshold} nats: ρ ${ci(eLast.trained.aboveThreshold.local)} ` +
      `(${eLast.trained.aboveThreshold.local.nPoints} points).`,
    '',
    ...eLast.focus.flatMap((f) => f.verdict.map((s) => `* ${s}`)),
    '',
    `**Edge knockout, layer 0**:`,
    '',
    ...controlledRows(e0, 'layer 0'),
    '',
    effectsLine(e0.trained.effects.local, 'Local effects'),
    `Against only the local effects of at least ${e0.trained.aboveThreshold.threshold} nats: ρ ${ci(e0.trained.aboveThreshold.local)}.`,
    '',
    ...e0.focus.flatMap((f) => f.verdict.map((s) => `* ${s}`)),
    '',
    'What the edge table is. A renormalised knockout of edge (i, j) changes the head\'s output by A/(1−A)·(y_i − v_j), a ' +
      'zero knockout by −A·v_j: any model with peaked attention orders its edge effects by A. The local ρ is therefore a ' +
      'check of the knockout\'s algebra, and the finding, if any, is the difference between the trained model and the ' +
      'twin whose attention is as peaked. The zero knockout beside the renormalised one (local ρ, trained model):',
    '',
    '| | renormalised | zero | difference (paired) |',
    '|---|---|---|---|',
    zeroRow(L - 1), zeroRow(0),
    '',
    `Each head of layer ${L - 1} alone, the first ${HEAD_N} sentences (local ρ, per-row ρ, recency's local ρ, and the head − recency):`,
    '',
    '| head | local ρ | per-row ρ | recency | head − recency (paired) |',
    '|---|---|---|---|---|',
    ...headRows,
    '',
    '**Token knockout** (each token\'s column knocked out in every layer; the effect is the KL of the next-token distribution after the sentence):',
    '',
    ...controlledRows(tokens, 'reading'),
    '',
    effectsLine(tokens.trained.effects, 'Token effects'),
    `Deleting the token from the input instead: last layer ρ ${ci(iv(tokensDelete.perInput.map((p) => p.lastLayer)))}, rollout ` +
      `${ci(iv(tokensDelete.perInput.map((p) => p.rollout)))}, flow ${ci(iv(tokensDelete.perInput.map((p) => p.flow)))}.`,
    '',
    ...tokens.focus.flatMap((f) => f.verdict.map((s) => `* ${s}`)),
    '',
    `**Induction on natural text.** Each held-out sentence repeated twice (s ++ s): the second copy is easier than the first by ` +
      `${ci(nat)} nats a token (clustered by document); a random-token sequence repeated (r ++ r, |r| = 20, 40 seeds) by ${ci(rnd)}. ` +
      `${nat.hi !== null && rnd.lo !== null && nat.hi < 0.5 * rnd.lo
        ? 'The copying the induction circuit was trained for is a random-token effect: on repeated natural sentences the second copy gains less than half as much, so the induction results below are about the synthetic probe, not about natural text.'
        : 'On repeated natural sentences the model copies comparably, so the induction results below speak for natural text too.'}`,
    '',
    `**Ablation**, the first ${ABL_N} held-out sentences, resample averaged over ${ABL_DRAWS} windows of the reference: agreement of the head rankings (ρ per input, mean [95 % CI over inputs]): ` +
      `zero–mean ${ci(abl.agreement['zero-mean'])}, zero–resample ${ci(abl.agreement['zero-resample'])}, mean–resample ${ci(abl.agreement['mean-resample'])}.`,
    '',
    `**Patching, induction pairs** (${inductionPairs.n} of ${inductionPairs.n + inductionPairs.skipped.length} pairs on which the model favours the clean answer by at least 1 nat more on the clean input): ` +
      `the head whose output restores most is ${name(bestHead)}, ${ci(inductionPairs.heads[bestHead])}; the last position's residual restores ` +
      `${inductionPairs.residLast.map((x) => f3(x.mean)).join(', ')} entering layers 0…${L - 1}. The induction circuit was planted by training (the model card): this is the tools recovering it.`,
    '',
    `**Patching, minimal pairs**: the model does not separate them. Of ${pairs.n} pairs, ${gaps.filter((g) => g > 0).length} have the clean answer ahead in the clean run relative to the corrupted one, ` +
      `${gaps.filter((g) => g >= 1).length} by at least 1 nat (largest gap ${f3(Math.max(...gaps))}): a patching score, which divides by that gap, says nothing here, and none is reported.`,
    '',
  ].join('\n');
  // what the JSON keeps: every summary, and the trained model's per-input numbers (the staleness check reads them)
  const slim = (t) => ({ kind: t.kind, n: t.n, clusters: t.clusters, focus: t.focus,
    trained: { perInput: t.trained.perInput, effects: t.trained.effects },
    twins: Object.fromEntries(Object.entries(t.twins).map(([k, v]) => [k, { twin: v.twin }])) });
  const nums = { n: N, documents: docs, edges: { [L - 1]: slim(eLast), 0: slim(e0) },
    zero: Object.fromEntries(Object.entries(zero).map(([k, z]) => [k, { perInput: z.perInput.map((p) => p.spearman) }])),
    tokens: slim(tokens), tokensDelete: { perInput: tokensDelete.perInput }, heads: heads.map((r) => ({ head: r.head, perInput: r.perInput })),
    induction: { natural: nat, random: rnd, perInput: induction },
    ablation: { n: abl.n, draws: abl.draws, agreement: abl.agreement },
    patching: { n: inductionPairs.n, skipped: inductionPairs.skipped.length, best: name(bestHead), bestScore: inductionPairs.heads[bestHead] },
    pairs: { n: pairs.n, rightSign: gaps.filter((g) => g > 0).length, maxGap: Math.max(...gaps), aboveOne: gaps.filter((g) => g >= 1).length } };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'evidence-sets.md'), md);
  writeFileSync(join(OUT, 'evidence-sets.json'), `${JSON.stringify(nums)}\n`);
  console.log(md);
  console.error(`computed in ${Math.round((Date.now() - t0) / 1000)} s`);
  m.dispose();
}

main().catch((e) => { console.error(e); process.exit(1); });
