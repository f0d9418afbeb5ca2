// docs-numbers.mjs — every number the docs quote about a model or a seeded demo,
// computed in one place through the npm API (the built-in model, the wasm engine)
// and written as small Markdown snippets that the pages include
// (VitePress: <!--@include: ./generated/NAME.md-->), plus numbers.json.
//
//   make docs-numbers                 (node scripts/docs-numbers.mjs)
//   node scripts/docs-numbers.mjs --check   exit 1 if a committed snippet differs
//
// When the built-in model is retrained, this one command regenerates every
// quoted number; tests/js/docs-numbers.test.js fails while a snippet is stale.
// Closed-form constants (null(10) = 0.7071, α_c ≈ 0.138, log 64 …) are
// mathematics, not measurements, and stay in the text. Timings live in
// docs/BENCHMARKS.md (make bench), not here.

import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, asymmetry, nullDagScore } from '../web/src/index.js';
import { loadLineage } from '../web/src/lineage.js';
import { measure as evidenceMeasure, table as evidenceTable } from './evidence-numbers.mjs';
import { klDivergence } from '../web/src/page/compare.js';
import {
  DEFAULT_IMP_TEXT, DEFAULT_PAIR, DEFAULT_DAG, DEFAULT_EDIT, uniformRoles, uniformInduction, maskPreset,
} from '../web/src/page/heads.js';
import { BREAK_PRESETS, breakHeads, circuitEffect } from '../web/src/page/circuit.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const OUT_DIR = join(ROOT, 'docs/generated');
export const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const MODEL_DIR = join(ROOT, 'models/brown-gpt2');

const f = (x, d = 3) => x.toFixed(d);
const signed = (x, d = 3) => (x >= 0 ? '+' : '−') + Math.abs(x).toFixed(d);
const head = (i, H) => `L${Math.floor(i / H)}H${i % H}`;

/** Everything the snippets quote, as plain numbers (numbers.json). */
export async function computeNumbers() {
  const m = await loadModel(MODEL_DIR);
  const { nLayer: L, nHead: H, nEmbd: C } = m.config;
  const out = { model: { name: 'brown-gpt2', L, H, C, V: m.config.vocabSize } };
  try {
    // ---- importance on the first 100 tokens of the held-out sample (docs/heads.md §5)
    const heldout = readFileSync(join(MODEL_DIR, 'heldout_sample.txt'), 'utf8');
    const ids100 = m.tokenize(heldout).ids.slice(0, 100);
    const imp = m.headImportance(ids100);
    const byDelta = Array.from(imp.delta.keys()).sort((a, b) => imp.delta[b] - imp.delta[a] || a - b);
    const curve = Array.from(imp.pruning);
    let kMin = 0;
    for (let k = 1; k < curve.length; k++) if (curve[k] < curve[kMin]) kMin = k;
    out.importance = {
      T: ids100.length, baseLoss: imp.baseLoss, lossAtHalf: imp.lossAtHalf, half: Math.floor((L * H) / 2),
      lossAll: curve.at(-1), curve, kMin, lossMin: curve[kMin],
      top: byDelta.slice(0, 4).map((i) => ({ head: head(i, H), delta: imp.delta[i] })),
      bottom: byDelta.slice(-3).reverse().map((i) => ({ head: head(i, H), delta: imp.delta[i] })),
    };

    // ---- roles on the first 600 characters, induction on repeatedTokens(50, {seed: 1})
    const rolesIds = m.tokenize(heldout.slice(0, 600)).ids;
    const roles = m.headRoles(rolesIds, { top: 3 });
    const u = uniformRoles(Array.from(rolesIds));
    const rep = m.repeatedTokens(50, { seed: 1 });
    const ind = m.headRoles(rep, { top: 3 });
    const top = (list) => list.map((x) => ({ head: `L${x.layer}H${x.head}`, score: x.score }));
    out.roles = {
      T: rolesIds.length, uniform: { prev: u.prev, sink: u.sink, dup: u.dup },
      prev: top(roles.top.prev), sink: top(roles.top.sink), dup: top(roles.top.dup),
      inductionT: rep.length, inductionUniform: uniformInduction(50), induction: top(ind.top.induction),
    };

    // ---- DAG profile of the page's four sentences, causal and full
    const prof = m.dagProfile(DEFAULT_DAG);
    const full = m.dagProfile(DEFAULT_DAG, { mask: 'full' });
    let hiH = 0, loH = 0;
    for (let i = 1; i < prof.mean.head.length; i++) {
      if (prof.mean.head[i] > prof.mean.head[hiH]) hiH = i;
      if (prof.mean.head[i] < prof.mean.head[loH]) loH = i;
    }
    out.dagProfile = {
      Ts: prof.sentences.map((s) => s.T), overall: prof.mean.overall, null: prof.mean.null,
      layer: Array.from(prof.mean.layer), headMax: { head: head(hiH, H), score: prof.mean.head[hiH] },
      headMin: { head: head(loH, H), score: prof.mean.head[loH] },
      fullOverall: full.mean.overall, fullNull: full.mean.null,
    };

    // ---- the chapter's sentence: Fig. 1 and Fig. 3 on the last layer, head average
    const rc = m.run(CHAPTER);
    const rf = m.run(CHAPTER, { mask: 'full' });
    const T = rc.T;
    const Ac = asymmetry(rc.attention(L - 1, 'avg')), Af = asymmetry(rf.attention(L - 1, 'avg'));
    let lowerPos = 0, fullNeg = 0, lower = 0;
    for (let i = 1; i < T; i++) for (let j = 0; j < i; j++) {
      lower += 1;
      if (Ac[i * T + j] > 0) lowerPos += 1;
      if (Af[i * T + j] < 0) fullNeg += 1;
    }
    const heads = rc.dagScores[L - 1];
    out.chapter = {
      T, dag: rc.dagScore, null: rc.nullDagScore, fullDag: rf.dagScore, fullNull: rf.nullDagScore,
      windowNull: nullDagScore(T, 'window:3'), lower, lowerPos, fullNeg,
      headScores: heads, headsAboveNull: heads.filter((s) => s > rc.nullDagScore).length,
      top: rc.top.slice(0, 3).map((x) => ({ token: x.token, prob: x.prob })),
    };

    // ---- the heads panel's defaults (docs/page.md)
    const impText = m.tokenize(DEFAULT_IMP_TEXT).ids;
    const imp2 = m.headImportance(impText);
    const roles2 = m.headRoles(impText, { top: 3 });
    const u2 = uniformRoles(Array.from(impText));
    const base = m.run(CHAPTER, { topK: 10 });
    const mixed = m.run(CHAPTER, { mask: maskPreset('lowerFull', L), topK: 10 });
    const cf = m.counterfactual(DEFAULT_PAIR[0], DEFAULT_PAIR[1], { topK: 10 });
    // ---- the "break the circuit" card's three presets on its defaults (docs/heads.md §5, docs/page.md)
    const plainLosses = m.tokenLosses(rep);
    out.circuit = BREAK_PRESETS.map((preset) => {
      const hs = breakHeads(preset, roles2, ind);
      const ablate = hs.map((x) => [x.layer, x.head]);
      const fx = circuitEffect({ plain: plainLosses, broken: m.tokenLosses(rep, { ablate }), ind,
        indBroken: m.headRoles(rep, { ablate }), n: 50, nHead: H, ablated: hs });
      return { preset, heads: hs.map((x) => ({ head: `L${x.layer}H${x.head}`, score: x.score })),
        first: [fx.plain.first, fx.broken.first], second: [fx.plain.second, fx.broken.second],
        gain: [fx.plain.gain, fx.broken.gain],
        others: [fx.plain.others.score, fx.broken.others.score],
        othersHead: [head(fx.plain.others.layer * H + fx.plain.others.head, H), head(fx.broken.others.layer * H + fx.broken.others.head, H)],
        induction: [fx.plain.induction.score, fx.broken.induction.score],
        inductionHead: [head(fx.plain.induction.layer * H + fx.plain.induction.head, H),
          head(fx.broken.induction.layer * H + fx.broken.induction.head, H)] };
    });
    out.circuitChance = Math.log(m.config.vocabSize);
    // the weight-edit card's default edit on the page's sentence
    const edit = { kind: DEFAULT_EDIT.kind, layer: DEFAULT_EDIT.layer, head: DEFAULT_EDIT.head };
    const edited = m.run(CHAPTER, { interventions: [edit], topK: 10 });
    const scaled = m.run(CHAPTER, { interventions: [{ kind: 'scaleQ', layer: DEFAULT_EDIT.layer, head: DEFAULT_EDIT.head, alpha: 2 }], topK: 10 });
    out.edit = { kl: klDivergence(base.logits, edited.logits), top: [base.top[0].token, edited.top[0].token],
      scaleQ2Kl: klDivergence(base.logits, scaled.logits) };
    const indRange = Array.from(ind.induction);
    out.panel = {
      T: impText.length, baseLoss: imp2.baseLoss, lossAtHalf: imp2.lossAtHalf, lossAll: imp2.pruning.at(-1),
      sinkTop: { head: `L${roles2.top.sink[0].layer}H${roles2.top.sink[0].head}`, score: roles2.top.sink[0].score },
      sinkUniform: u2.sink,
      prevTop: { head: `L${roles2.top.prev[0].layer}H${roles2.top.prev[0].head}`, score: roles2.top.prev[0].score },
      prevUniform: u2.prev,
      inductionTop: { head: `L${ind.top.induction[0].layer}H${ind.top.induction[0].head}`, score: ind.top.induction[0].score },
      inductionMin: Math.min(...indRange), inductionMax: Math.max(...indRange), inductionUniform: uniformInduction(50),
      maskKl: klDivergence(base.logits, mixed.logits), pairKl: cf.next.kl,
      dagOverall: prof.mean.overall, dagNull: prof.mean.null,
    };
  } finally {
    m.dispose();
  }

  // ---- the lineage demos at their default seeds (docs/lineage.md)
  const lab = await loadLineage();
  try {
    const favor = [4, 16, 64, 256, 2048].map((mm) => ({ m: mm, error: lab.linearError({ featureMap: 'favor', m: mm }).error }));
    const elu = lab.linearError({ featureMap: 'elu' }).error;
    // where the capacity curve (default loads, noise, threshold 0.95, trials, seed) crosses one half
    const half = (N) => {
      const c = lab.hopfieldCapacity({ N });
      const s = Array.from(c.success), a = Array.from(c.loads);
      const k = s.findIndex((x) => x < 0.5);
      if (k <= 0) return k === 0 ? a[0] : null;
      return a[k - 1] + ((s[k - 1] - 0.5) / (s[k - 1] - s[k])) * (a[k] - a[k - 1]);
    };
    out.lineage = {
      favor, elu, T: 64, d: 16, sd: 0.5, glyphOverlap08: lab.overlap(lab.glyph(0), lab.glyph(8)),
      capacityHalf: { 200: half(200), 400: half(400) },
      entropy: { scaled64: lab.softmaxEntropy({ dk: 64 }), scaled256: lab.softmaxEntropy({ dk: 256 }),
                 raw256: lab.softmaxEntropy({ dk: 256, scaled: false }) },
    };
  } finally {
    if (lab.dispose) lab.dispose();
  }
  // ---- does attention explain? (docs/evidence.md): the built-in model's tables
  out.evidence = await evidenceMeasure('brown-gpt2 (built-in)', MODEL_DIR);
  return out;
}

/** The Markdown snippets, by file name (docs/generated/NAME). */
const PRESET_NAMES = { prev: 'previous-token head (best on the default text)', induction: 'best induction head', induction2: 'two best induction heads' };

export function renderSnippets(n) {
  const gen = '<!-- generated by `make docs-numbers` (scripts/docs-numbers.mjs): do not edit -->\n';
  const I = n.importance, R = n.roles, D = n.dagProfile, Ch = n.chapter, P = n.panel, Li = n.lineage;
  const curve0 = I.curve.slice(0, 4).map((x) => f(x)).join(', ');
  const halfWord = I.lossAtHalf <= I.baseLoss ? 'lowers it' : 'raises it';
  const roleRow = (name, list) => `| ${name} | ${list.map((x) => `${x.head} ${f(x.score)}`).join(', ')} |`;
  const excess = D.overall - D.null;

  const heads = `${gen}
**Importance**, on the first ${I.T} tokens of \`models/brown-gpt2/heldout_sample.txt\` (held-out Brown text):

- base loss **${f(I.baseLoss)}** nats;
- the most important heads (loss increase when removed alone): ${I.top.map((x) => `${x.head} (${signed(x.delta)})`).join(', ')};
- the least important: ${I.bottom.map((x) => `${x.head} (${signed(x.delta)})`).join(', ')}${I.bottom[0].delta < 0 ? ' — a negative value means removing the head *lowers* the loss' : ''};
- pruning curve (the k least important heads removed together): ${curve0}, … with its minimum **${f(I.lossMin)} at k = ${I.kMin}**;
  **${f(I.lossAtHalf)} with half the heads removed** (k = ${I.half}, ${signed(I.lossAtHalf - I.baseLoss)} nats: removing half ${halfWord});
  **${f(I.lossAll)} with all ${I.curve.length - 1} heads removed** (${signed(I.lossAll - I.baseLoss)} nats).

**Roles**, on the first 600 characters of the same text (T = ${R.T}; uniform causal attention scores
prev ${f(R.uniform.prev)}, sink ${f(R.uniform.sink)}, duplicate ${f(R.uniform.dup)}):

| role | top heads (score) |
|---|---|
${roleRow('previous-token', R.prev)}
${roleRow('first-token / sink', R.sink)}
${roleRow('duplicate-token', R.dup)}

and on \`repeatedTokens(50, {seed: 1})\` (T = ${R.inductionT}; uniform causal attention: ${f(R.inductionUniform, 4)}):

| role | top heads (score) |
|---|---|
${roleRow('induction', R.induction)}

**Breaking the circuit** (the page's card, on its defaults): the loss on each copy of \`repeatedTokens(50, {seed: 1})\`
(mean over the 49 predictable positions of each; guessing among the ${n.model.V} ids costs ln V = ${f(n.circuitChance)}
nats), the copying gain (first copy − second copy), the best induction score of the heads left working, and the
best induction score over every head (an ablated head included: its own pattern is still computed), with every
head and with the preset's heads ablated:

| preset | ablated (score) | first copy | second copy | copying gain | best induction, heads left working | best induction, every head |
|---|---|---|---|---|---|---|
${n.circuit.map((c) => `| ${PRESET_NAMES[c.preset]} | ${c.heads.map((x) => `${x.head} ${f(x.score)}`).join(', ')} | ${f(c.first[0], 2)} → ${f(c.first[1], 2)} | ${f(c.second[0], 2)} → ${f(c.second[1], 2)} | ${f(c.gain[0], 2)} → ${f(c.gain[1], 2)} | ${f(c.others[0])} (${c.othersHead[0]}) → ${f(c.others[1])} (${c.othersHead[1]}) | ${f(c.induction[0])} (${c.inductionHead[0]}) → ${f(c.induction[1])} (${c.inductionHead[1]}) |`).join('\n')}

**DAG profile** of the four default sentences of the page's panel (T = ${D.Ts.join(', ')}), causal mask: mean over
all heads and layers **${f(D.overall)} against a null of ${f(D.null)}** (excess ${signed(excess)}); per layer
${D.layer.map((x) => f(x)).join(' ')}; per head from ${f(D.headMin.score)} (${D.headMin.head}) to ${f(D.headMax.score)}
(${D.headMax.head}). Without a mask (\`{mask: 'full'}\`): ${f(D.fullOverall)} against ${f(D.fullNull)}.
`;

  const C0 = n.circuit[0];
  const page = `${gen}
On the built-in model, with the panel's defaults: on the default importance text (${P.T} tokens) the base loss is
${f(P.baseLoss)} nats, ${f(P.lossAtHalf)} with half the heads removed and ${f(P.lossAll)} with all removed
(${signed(P.lossAll - P.baseLoss)} nats); the strongest previous-token head is ${P.prevTop.head} (${f(P.prevTop.score)}, against
${f(P.prevUniform)} for uniform attention), the strongest sink head ${P.sinkTop.head} (${f(P.sinkTop.score)}, against
${f(P.sinkUniform)}); on \`repeatedTokens(50, {seed: 1})\` the strongest induction head is ${P.inductionTop.head}
(${f(P.inductionTop.score)}; all heads range over ${f(P.inductionMin)}–${f(P.inductionMax)}, uniform attention scores
${f(P.inductionUniform)}); the default "break the circuit" preset (${C0.heads.map((x) => x.head).join(' + ')}) moves the
second copy's loss from ${f(C0.second[0], 2)} to ${f(C0.second[1], 2)} nats, the copying gain from ${f(C0.gain[0], 2)} to ${f(C0.gain[1], 2)} nats and the best
induction score from ${f(C0.induction[0])} to ${f(C0.induction[1])}; the default weight edit (W_Q ↔ W_K of L${DEFAULT_EDIT.layer}H${DEFAULT_EDIT.head}) moves the
prediction on the chapter's sentence by KL ${f(n.edit.kl, 4)} nats (top token "${n.edit.top[0].trim()}" → "${n.edit.top[1].trim()}"; W_Q × 2 of
the same head, the old default: ${n.edit.scaleQ2Kl.toExponential(1)}); "lower full, upper causal" moves the prediction by KL ${f(P.maskKl, 4)} nats;
the default sentence pair by KL ${f(P.pairKl, 4)} nats; the DAG profile of the four default sentences is
${f(P.dagOverall)} against a null of ${f(P.dagNull)}.
`;

  const lineage = `${gen}
FAVOR+'s mean |error| against causal softmax attention at T = ${Li.T}, d = ${Li.d}, inputs N(0, ${Li.sd ** 2}), the demo's
default seed: ${Li.favor.map((x) => `m = ${x.m}: ${x.error.toPrecision(3)}`).join('; ')}. elu + 1, a different
kernel with no feature count to raise, is at ${Li.elu.toPrecision(3)}. The glyphs 0 and 8 overlap by ${f(Li.glyphOverlap08, 2)}.
Capacity (the page's defaults: 5 % noise, success when the final overlap ≥ 0.95, seed 1): the success rate falls
through one half at α ≈ ${f(Li.capacityHalf[200], 2)} for N = 200 and α ≈ ${f(Li.capacityHalf[400], 2)} for N = 400.
Softmax entropy over 64 random keys: ${f(Li.entropy.scaled64, 2)} nats at d_k = 64 and ${f(Li.entropy.scaled256, 2)} at
d_k = 256 with the 1/√d_k scale; ${f(Li.entropy.raw256, 2)} nats at d_k = 256 without it.
`;

  const chapterEn = `${gen}
| on "${CHAPTER}" (T = ${Ch.T}), last layer, head average | value |
|---|---|
| DAG score, causal mask | ${f(Ch.dag)} |
| null: uniform causal attention | ${f(Ch.null)} |
| heads of the last layer above that null | ${Ch.headsAboveNull} of ${Ch.headScores.length} |
| DAG score without a mask | ${f(Ch.fullDag)} |
| null without a mask, (T − 1)/(2T) | ${f(Ch.fullNull)} |
| null of \`window:3\` | ${f(Ch.windowNull)} |
| cells below the diagonal where A − Aᵀ > 0, causal mask | ${Ch.lowerPos} of ${Ch.lower} |
| cells below the diagonal where A − Aᵀ < 0, no mask | ${Ch.fullNeg} of ${Ch.lower} |
| most likely next tokens | ${Ch.top.map((x) => `"${x.token}" ${f(x.prob)}`).join(', ')} |
`;
  const chapterZh = `${gen}
| 原章的例句（T = ${Ch.T}）：${CHAPTER}，最后一层，各头平均 | 数值 |
|---|---|
| DAG 得分，因果掩码 | ${f(Ch.dag)} |
| 零假设：均匀因果注意力 | ${f(Ch.null)} |
| 最后一层中高于零假设的头 | ${Ch.headScores.length} 个中的 ${Ch.headsAboveNull} 个 |
| 不加掩码时的 DAG 得分 | ${f(Ch.fullDag)} |
| 不加掩码时的零假设 (T − 1)/(2T) | ${f(Ch.fullNull)} |
| \`window:3\` 的零假设 | ${f(Ch.windowNull)} |
| 因果掩码下对角线以下 A − Aᵀ > 0 的单元 | ${Ch.lower} 个中的 ${Ch.lowerPos} 个 |
| 不加掩码时对角线以下 A − Aᵀ < 0 的单元 | ${Ch.lower} 个中的 ${Ch.fullNeg} 个 |
| 最可能的下一个词元 | ${Ch.top.map((x) => `"${x.token}" ${f(x.prob)}`).join('，')} |
`;
  return {
    'heads-builtin.md': heads, 'page-builtin.md': page, 'lineage-numbers.md': lineage,
    'chapter-en.md': chapterEn, 'chapter-zh.md': chapterZh,
    'evidence-builtin.md': `${gen}\n${evidenceTable(n.evidence)}\n`,
  };
}

/** numbers.json as committed: stable key order, 9 significant digits. */
export function numbersJson(n) {
  return `${JSON.stringify(n, (k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v), 2)}\n`;
}

async function main() {
  const check = process.argv.includes('--check');
  const n = await computeNumbers();
  const files = { ...renderSnippets(n), 'numbers.json': numbersJson(n) };
  let stale = 0;
  mkdirSync(OUT_DIR, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    const path = join(OUT_DIR, name);
    let old = null;
    try { old = readFileSync(path, 'utf8'); } catch { /* new */ }
    if (old === text) continue;
    stale += 1;
    if (check) console.error(`stale: docs/generated/${name}`);
    else { writeFileSync(path, text); console.log(`wrote docs/generated/${name}`); }
  }
  if (check && stale) process.exit(1);
  if (!stale) console.log('docs/generated: up to date');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
