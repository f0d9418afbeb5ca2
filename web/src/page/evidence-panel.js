// evidence-panel.js — the page's "Does attention explain?" panel
// (docs/evidence.md): four cards that set a reading of attention (rung 1,
// seeing) beside an interventional effect (rung 2, doing) on the live model.
// Each card computes when its button is pressed, in the page's worker, with
// progress and a Cancel button, on one of three sources: the page's sentence
// (the grids of that sentence, and the permutation null of its correlation),
// a built-in evaluation set (web/src/evidence-sets.js, up to `limit` inputs) or
// the reader's own list; over a set each aggregate comes with its bootstrap
// interval over inputs, the permutation null, its p-value and the baselines.
// Each card exports SVG / PNG / JSON. Its strings are its own (en / zh).

import { $, el, replace, setOptions } from '../ui/dom.js';
import { makeTranslator } from '../ui/i18n.js';
import { gridMap } from '../figures/charts.js';
import { scatter, groupedBars, intervalChart } from '../figures/evidence.js';
import { composeSvg, exportSvgNode, exportJsonData, rows, cardDesc } from './export.js';
import { toElement } from '../figures/index.js';
import { ylOrRd, rdBuR } from '../figures/colour.js';
import { PATCHING_PAIRS } from '../evidence.js';
import { EVIDENCE_SETS } from '../evidence-sets.js';
import { CircuitsPanel } from './circuits-panel.js';
import { oneInputFinding, setFinding, topCell, weakestAgreement } from './findings.js';

export const EVIDENCE_STRINGS = {
  en: {
    title: 'Does attention explain?',
    intro: 'The chapter reads a large attention weight as a cause. Here each reading of attention (seeing) stands beside the effect of an intervention inside the model (doing), with a rank correlation between them: 1 = the reading orders the effects perfectly, 0 = not at all. Each card runs on this sentence, on a built-in set of inputs or on your own list; over a set every number comes with its 95 % interval over the inputs, and each correlation with the range that chance gives (a permutation null).',
    rung1: 'rung 1 · seeing', rung2: 'rung 2 · doing',
    compute: 'Compute', cancel: 'Cancel', computing: 'Computing in the worker…', cancelled: 'Cancelled.',
    layer: 'layer', head: 'head', all: 'all heads',
    source: 'source', srcSentence: 'this sentence', srcPair: 'this pair', srcSet: 'the built-in set', srcList: 'your list',
    setLabel: 'set', limit: 'limit', ofTotal: (n) => `of ${n}`,
    setHeldout: (n) => `held-out sentences (${n})`, setRepeated: (n) => `repeated random tokens (${n})`, setPairs: (n) => `minimal pairs (${n})`,
    setInduction: (n) => `induction pairs (${n})`, nameInduction: 'induction pairs from the repeated random tokens',
    nameHeldout: 'held-out sentences', nameRepeated: 'repeated random tokens, the induction probe', namePairs: 'the built-in minimal pairs',
    nameList: 'your list', nameSentence: 'this sentence',
    listLabel: 'your inputs, one per line',
    listPairsLabel: 'your pairs, one per line: clean | corrupted, optionally | clean answer | corrupted answer (the answers as written after the bar, " he" with its space)',
    listCount: (n) => (n === 1 ? '1 input' : `${n} inputs`),
    listPairCount: (n) => (n === 1 ? '1 pair' : `${n} pairs`),
    listEmpty: 'Type at least one input, one per line.',
    listBad: (line) => `Line ${line}: write clean | corrupted, or clean | corrupted | answer | answer.`,
    knockout: 'knockout', koRenorm: 'renormalise the row', koZero: 'zero, no renormalisation',
    tokMode: 'token removed by', tokColumn: 'its column in every head', tokDelete: 'deleting it', tokReplace: 'a neutral token in its place',
    draws: 'resample draws', minGap: 'min. logit-difference gap',
    phaseGrid: 'grids', phaseNull: 'null and baselines',
    edgeTitle: 'Edge knockout against attention weight',
    edgeText: 'Every edge j → i of the chosen head is knocked out in turn (its weight set to 0, the row renormalised) and the next-token prediction at i compared with the plain run (KL). A high correlation means the weights rank the local effects; it says nothing about the output unless the last-position column agrees.',
    edgeA: 'attention A (plain run)', edgeE: 'effect E = KL at i (nats)', scatterX: 'attention weight A[i][j]', scatterY: 'effect KL at i',
    edgeSum: (r) => `Spearman ρ(A, E) = ${f(r.spearman)}, Kendall τ = ${f(r.kendall)}, top-${r.topK} overlap ${f(r.topKOverlap)}; against the effect on the last position ρ = ${f(r.spearmanLast)}. ${r.pairs} knockouts.`,
    tokTitle: 'Token knockout against rollout and flow',
    tokText: 'Each token is made unreadable (its column knocked out in every head of every layer) and the change of the last next-token prediction measured. Beside it three readings of attention: the last layer, rollout and flow. Bars are scaled to each series\' maximum.',
    tokEffect: 'knockout effect (KL)', tokLast: 'last layer', tokRoll: 'rollout', tokFlow: 'flow',
    tokVW: 'last layer × ‖v W_O‖', rowValueWeighted: 'value-weighted',
    sumValueWeighted: (a, b) => `Value-weighted reading A‖v W_O‖ (Kobayashi et al. 2020): local ${a}; last ${b}.`,
    tokSum: (r) => `Spearman ρ with the effects: last layer ${f(r.spearman.lastLayer)}, rollout ${f(r.spearman.rollout)}, flow ${f(r.spearman.flow)}.`,
    ablTitle: 'Three ways to remove a head',
    ablText: 'Head importance (loss increase when the head is removed) under zero ablation, mean ablation (its output replaced by its mean over a held-out passage) and resampling (its output taken from that passage\'s run). If the rankings disagree, "this head matters" depends on how it was removed.',
    ablZero: 'zero', ablMean: 'mean', ablRes: 'resample',
    ablSum: (r) => `Agreement of the rankings (Spearman ρ): zero–mean ${f(r.agreement['zero-mean'].spearman)}, zero–resample ${f(r.agreement['zero-resample'].spearman)}, mean–resample ${f(r.agreement['mean-resample'].spearman)}.`,
    patTitle: 'Activation patching',
    patText: 'A clean and a corrupted sentence of equal length. Each cell copies one piece of the clean run into the corrupted one — the residual stream at a layer and position, or one head\'s output — and shows how much of the clean answer comes back: 0 = corrupted, 1 = clean.',
    patClean: 'clean', patCorrupt: 'corrupted', patResid: 'residual stream (layer × position)', patHeads: 'head outputs (layer × head)',
    patSum: (r) => `Answers ${JSON.stringify(r.answerTokens[0])} (clean) vs ${JSON.stringify(r.answerTokens[1])} (corrupted); logit difference ${f(r.ldClean)} clean, ${f(r.ldCorrupt)} corrupted.`,
    noPair: 'None of the example pairs changes this model\'s next token; type your own pair.',
    exportSvg: 'SVG', exportPng: 'PNG', exportJson: 'JSON', position: 'position', layerAxis: 'layer', headAxis: 'head',
    // over a set: charts
    rowAttention: 'attention', rowUniform: 'uniform', rowPermuted: 'row-permuted',
    lgInterval: 'mean over inputs, 95 % interval', lgOne: 'the one input', lgPoints: 'each input', lgNull: 'permutation null, middle 95 %', lgNullMean: 'null mean',
    localTitle: 'local: A against the effect at i', lastTitle: 'last: A against the effect on the last position',
    xRho: 'Spearman ρ, mean over inputs', xRhoOne: 'Spearman ρ', undef: 'undefined (a constant reading has no ranks)',
    undefNone: 'undefined (no input gives a value)',
    tokSetTitle: 'readings against the token-knockout effects',
    ablMeanTitle: (name) => `${name}: mean over inputs`, ablHeadsTitle: 'each head, 95 % interval over inputs',
    ablAgreeTitle: 'agreement of the rankings', xLoss: 'loss increase (nats)', xAgree: 'Spearman ρ between two rankings',
    patHeadsMean: 'head outputs: mean score (layer × head)', patResidTitle: 'residual stream at the last position', patHeadsTitle: 'head outputs, 95 % interval over pairs',
    xScore: 'patching score (0 = corrupted, 1 = clean)', layerRow: (l) => `layer ${l}`,
    // over a set: summaries
    setHead: (n, name, how) => `${n === 1 ? '1 input' : `${n} inputs`}: ${name}; ${how}.`,
    pairHead: (n, name, how) => `${n === 1 ? '1 pair' : `${n} pairs`}: ${name}; ${how}.`,
    how: (nBoot, nPerm, seed) => `${nBoot} bootstrap resamples${nPerm ? `, ${nPerm} permutations` : ''}, seed ${seed}`,
    edgeHow: (layer, head, mode) => `Layer ${layer}, ${head === 'all' ? 'all heads' : `head ${head}`}, knockout ${mode === 'zero' ? 'without renormalisation' : 'with the row renormalised'}.`,
    nullOf: (s, p) => `null ${s}, ${p}`,
    sumLocal: (a, k, nl, u, pm) => `local: ${a}, ${k}; ${nl}; uniform ${u}; row-permuted ${pm}.`,
    sumLast: (a, k, nl, u, pm) => `last: ${a}, ${k}; ${nl}; uniform ${u}; row-permuted ${pm}.`,
    sumRows: (r, k) => `Mean per-row ρ ${r}; top-k overlap ${k}.`,
    sumTokOne: (name, v) => `${name} against the effects: ${v}.`,
    sumAblSet: (a, b, c) => `Agreement of the rankings: zero–mean ${a}; zero–resample ${b}; mean–resample ${c}.`,
    sumPatSet: (c, x) => `Logit difference of the answers: clean ${c}, corrupted ${x}.`,
    skipped: (n, list) => `${n === 1 ? '1 pair' : `${n} pairs`} skipped: ${list}.`,
    andMore: (n) => `and ${n} more (the JSON export lists every one with its reason)`,
    noPairLeft: 'No pair is left to average: every pair was skipped (each pair needs two different answers whose logit difference moves between the runs). Type pairs whose next tokens this model tells apart.',
    floor: (above, total, eps) => `Effects above the noise floor: ${above} of ${total} (ε = ${eps} nats); effects below ε count as ties.`,
    floorLast: (above, total) => `On the last position (last): ${above} of ${total}.`,
    floorHow: (factor, n) => `ε is ${factor} × the largest KL that a knockout changing nothing leaves by rounding alone, measured on ${n === 1 ? '1 input' : `${n} inputs`}.`,
    // over a set: what a number means and what it does not
    findAbl: (top, weak, names) => `Found: removing L${top.l} H${top.h} raises the loss most (by ${f(top.v)} nats${top.lo !== undefined && top.lo !== null ? `, 95 % interval ${f(top.lo)} to ${f(top.hi)}` : ''}, zeroed); ${weak ? (weak.rho >= 0.6 ? `the three removals rank the heads alike (lowest ρ ${f(weak.rho)}, ${pairName(weak.pair, names)})` : `the removals disagree on the order (ρ ${f(weak.rho)} for ${pairName(weak.pair, names)}): which heads matter depends on how they are removed`) : 'no agreement could be measured'}.`,
    findPat: (resid, head) => `Found: ${resid ? `the clean residual entering layer ${resid.l}${resid.pos !== undefined ? ` at “${resid.pos}”` : ''} brings back ${f(resid.v)} of the answer's logit difference, the most of any layer${resid.lo !== undefined && resid.lo !== null ? ` (95 % interval ${f(resid.lo)} to ${f(resid.hi)})` : ''}` : 'no layer could be scored'}; ${head ? `of the heads, L${head.l} H${head.h} the most (${f(head.v)})` : 'no head could be scored'}.`,
    cannotEdge: 'Cannot show: that a heavy edge matters for the output, or what the head moves along it (the patching cards below separate where a head looks from what it moves).',
    cannotTok: 'Cannot show: how much a token matters, or anything about positions other than the last.',
    cannotAbl: 'Cannot show: which way of removing a head is right, or why a head matters (where it looks or what it moves).',
    cannotPat: 'Cannot show: the share of the effect that flows through one piece: pieces overlap and their scores need not add to 1.',
    oneInput: 'One input: no interval over inputs; the null still applies.',
    // what the card found, in one line (findings.js)
    findEdgeOne: (d) => `Found in this sentence: ${d.sign > 0 ? `a ${d.size} positive relation (ρ = ${f(d.rho)}): heavier edges go with larger local effects`
      : d.sign < 0 ? `a ${d.size} negative relation (ρ = ${f(d.rho)}): heavier edges go with smaller local effects, so the weights rank these effects backwards`
      : d.size === 'undefined' ? 'no defined correlation' : `no monotone relation between weight and local effect (ρ = ${f(d.rho)})`}. One sentence gives no interval; the set card says whether it holds.`,
    findEdgeSet: (d) => ({
      above: `Found on this set: the weights rank the local effects better than shuffled attention does (mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}], above the null's band, which ends at ${f(d.nullHi)}).`,
      below: `Found on this set: the weights rank the local effects worse than shuffled attention does (mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}], below the null's band, which starts at ${f(d.nullLo)}): heavier edges go with smaller effects.`,
      inside: `Found on this set: no evidence that the weights rank the local effects (mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}] meets the null's band [${f(d.nullLo)}, ${f(d.nullHi)}]).`,
      one: `Found on one input: ρ = ${f(d.rho)} (${d.size === 'none' ? 'no monotone relation' : `${d.size}, ${d.sign > 0 ? 'heavier edges, larger effects' : 'heavier edges, smaller effects'}`}); one input gives no interval.`,
      nonull: `Found on this set: mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}] (no permutation null was drawn).`,
      undefined: 'No correlation is defined on this set.',
    })[d.verdict],
    findTokOne: (d, name) => `Found in this sentence: the ${name} reading ${d.sign > 0 ? `ranks the tokens' knockout effects with a ${d.size} positive ρ = ${f(d.rho)}`
      : d.sign < 0 ? `ranks them backwards (ρ = ${f(d.rho)}): the tokens it weighs most change the prediction least when removed`
      : d.size === 'undefined' ? 'has no defined correlation with the effects' : `does not rank the knockout effects (ρ = ${f(d.rho)})`}. One sentence gives no interval.`,
    findTokSet: (d, name) => ({
      above: `Found on this set: the ${name} reading ranks the knockout effects better than chance (mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}], above the null's band).`,
      below: `Found on this set: the ${name} reading ranks the knockout effects backwards (mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}], below the null's band).`,
      inside: `Found on this set: no evidence that the ${name} reading ranks the knockout effects (mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}] meets the null's band).`,
      one: `Found on one input: the ${name} reading, ρ = ${f(d.rho)}; one input gives no interval.`,
      nonull: `Found on this set: the ${name} reading, mean ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}].`,
      undefined: `The ${name} reading has no defined correlation on this set.`,
    })[d.verdict],
    noteLocal: 'local: the weight ranks the effect at the query\'s own position — for each edge j → i, the change of the next-token prediction at i. It does not say that the edge matters for the output.',
    noteLastRow: 'last: in the last layer only row T−1 can reach the output; other rows are structural zeros and are left out.',
    noteLastAll: 'last: the change of the prediction at the last position, for every edge; an edge of row i < T−1 acts on it only through the layers above.',
    noteBase: 'Baselines on the same effects: uniform (every key of row i weighted 1/(i+1): what the row alone predicts; shuffling within a row leaves it as it is, so its null is a line) and row-permuted (the head\'s weights shuffled within each row: the same weights, not the same keys).',
    noteNull: (nPerm) => `Grey band: the permutation null — the reading shuffled within each row, ${nPerm} times, each input apart; the band holds the middle 95 % of the shuffled means, the dashed tick their mean; p is two-sided. A dot above the band: the weights order the effects better than the same weights in a random order; not that the head causes the output.`,
    noteInterval: (n, nBoot) => `Dot and whisker: the mean of the per-input ρ over ${n} inputs and its 95 % bootstrap interval (${nBoot} resamples of the inputs); faint dots: each input. The interval is over these inputs, not over sentences in general.`,
    noteTok: 'Each reading is set against the knockout effects over the tokens of one input (the change of the last next-token prediction when a token is removed). A high ρ says the reading orders which tokens matter to that prediction; it says nothing of how much, or of any other position.',
    noteTokNull: (nPerm) => `Grey band: the permutation null — each reading shuffled across the tokens of its input, ${nPerm} times; the middle 95 % of the shuffled means, the dashed tick their mean; p is two-sided.`,
    noteAblSet: (n, draws) => `Each cell: the mean loss increase over ${n} inputs when the head is removed (resample: averaged over ${draws} windows of the reference passage). The interval chart gives each head's 95 % interval over the inputs, not over passages or draws.`,
    noteAblAgree: 'Agreement: the Spearman ρ between two rankings of the heads on each input, averaged. No permutation null here: two interventions are compared, not a reading with an effect. Low agreement means that "this head matters" depends on how the head is removed; high agreement does not say which removal is right.',
    notePatSet: 'Score: 0 = the corrupted run\'s logit difference, 1 = the clean run\'s; above 1 the patch overshoots, below 0 it pushes the other way. The residual stream is taken at the last position, entering each layer. Means over pairs with 95 % bootstrap intervals.',
    notePatGap: (g) => `A pair is skipped when its two runs' logit differences are less than ${g} apart: the score divides by that gap, and a small gap blows noise up without bound.`,
    notePatNot: 'A score says how much of the answer comes back when one piece is copied in; it is not the share of the effect that flows through that piece (pieces overlap, scores need not add to 1). No permutation null here.',
  },
  zh: {
    title: '注意力能解释吗？',
    intro: '本章把大的注意力权重读作原因。这里每一种对注意力的读法（观察）都与模型内部干预的效果（干预）并排，并给出二者的秩相关：1 表示读法完全排对了效果的大小，0 表示毫无关系。每张卡片可以在本句、内置的输入集或你自己的列表上计算；在一组输入上，每个数都附有对输入的 95% 区间，每个相关系数都附有偶然所能给出的范围（置换零分布）。',
    rung1: '第一阶 · 观察', rung2: '第二阶 · 干预',
    compute: '计算', cancel: '取消', computing: '正在 worker 中计算…', cancelled: '已取消。',
    layer: '层', head: '头', all: '所有头',
    source: '数据来源', srcSentence: '本句', srcPair: '本句对', srcSet: '内置数据集', srcList: '自定义列表',
    setLabel: '数据集', limit: '数量上限', ofTotal: (n) => `共 ${n} 条`,
    setHeldout: (n) => `留出句子（${n}）`, setRepeated: (n) => `重复的随机词元（${n}）`, setPairs: (n) => `最小句对（${n}）`,
    setInduction: (n) => `归纳句对（${n}）`, nameInduction: '由重复随机词元构成的归纳句对',
    nameHeldout: '留出句子', nameRepeated: '重复的随机词元（归纳头探针）', namePairs: '内置最小句对',
    nameList: '自定义列表', nameSentence: '本句',
    listLabel: '你的输入，每行一条',
    listPairsLabel: '你的句对，每行一对：干净句 | 污染句，可再加 | 干净答案 | 污染答案（答案按竖线后原样读取，" he" 连同空格）',
    listCount: (n) => `${n} 条输入`,
    listPairCount: (n) => `${n} 对`,
    listEmpty: '请至少输入一条，每行一条。',
    listBad: (line) => `第 ${line} 行：请写成 干净句 | 污染句，或 干净句 | 污染句 | 答案 | 答案。`,
    knockout: '敲除方式', koRenorm: '该行重新归一化', koZero: '置零，不重新归一化',
    tokMode: '移除词的方式', tokColumn: '在每个头中敲除它的列', tokDelete: '删除该词', tokReplace: '换成中性词',
    draws: '重采样次数', minGap: 'logit 差的最小间隔',
    phaseGrid: '网格', phaseNull: '零分布与基线',
    edgeTitle: '逐边敲除与注意力权重',
    edgeText: '依次敲除所选头的每条边 j → i（权重置 0，该行重新归一化），比较位置 i 的下一词分布与原始运行的 KL。相关高说明权重排对了局部效果；除非最后位置那一列也一致，它并不说明输出的原因。',
    edgeA: '注意力 A（原始运行）', edgeE: '效果 E = 位置 i 的 KL（nats）', scatterX: '注意力权重 A[i][j]', scatterY: '位置 i 的 KL',
    edgeSum: (r) => `Spearman ρ(A, E) = ${f(r.spearman)}，Kendall τ = ${f(r.kendall)}，前 ${r.topK} 重合率 ${f(r.topKOverlap)}；与最后位置效果的 ρ = ${f(r.spearmanLast)}。共 ${r.pairs} 次敲除。`,
    tokTitle: '逐词敲除与注意力展开、注意力流',
    tokText: '让每个词无法被读取（在每层每个头中敲除它的列），测量最后一个下一词预测的变化。旁边是三种注意力读法：最后一层、注意力展开（逐层相乘）与注意力流（最大流）。每组条形按各自最大值缩放。',
    tokEffect: '敲除效果（KL）', tokLast: '最后一层', tokRoll: '注意力展开', tokFlow: '注意力流',
    tokVW: '最后一层 × ‖v W_O‖', rowValueWeighted: '按值加权',
    sumValueWeighted: (a, b) => `按值加权的读法 A‖v W_O‖（Kobayashi 等，2020）：局部 ${a}；最后位置 ${b}。`,
    tokSum: (r) => `与效果的 Spearman ρ：最后一层 ${f(r.spearman.lastLayer)}，注意力展开 ${f(r.spearman.rollout)}，注意力流 ${f(r.spearman.flow)}。`,
    ablTitle: '移除一个头的三种方式',
    ablText: '头的重要性（移除后损失的增加），分别用置零、均值替换（输出换成它在一段留出文本上的均值）与重采样（输出取自该文本的运行）。若三种排序不一致，“这个头重要”就取决于怎样移除它。',
    ablZero: '置零', ablMean: '均值', ablRes: '重采样',
    ablSum: (r) => `排序一致性（Spearman ρ）：置零–均值 ${f(r.agreement['zero-mean'].spearman)}，置零–重采样 ${f(r.agreement['zero-resample'].spearman)}，均值–重采样 ${f(r.agreement['mean-resample'].spearman)}。`,
    patTitle: '激活修补',
    patText: '一对等长的干净句与污染句。每个格子把干净运行的一部分（某层某位置的残差流，或某个头的输出）复制进污染运行，显示干净答案恢复了多少：0 = 污染，1 = 干净。',
    patClean: '干净', patCorrupt: '污染', patResid: '残差流（层 × 位置）', patHeads: '头输出（层 × 头）',
    patSum: (r) => `答案 ${JSON.stringify(r.answerTokens[0])}（干净）对 ${JSON.stringify(r.answerTokens[1])}（污染）；logit 差：干净 ${f(r.ldClean)}，污染 ${f(r.ldCorrupt)}。`,
    noPair: '示例句对都不改变这个模型的下一个词；请输入你自己的句对。',
    exportSvg: 'SVG', exportPng: 'PNG', exportJson: 'JSON', position: '位置', layerAxis: '层', headAxis: '头',
    rowAttention: '注意力', rowUniform: '均匀', rowPermuted: '行内置换',
    lgInterval: '对输入的均值，95% 区间', lgOne: '唯一的输入', lgPoints: '各条输入', lgNull: '置换零分布，中间 95%', lgNullMean: '零分布均值',
    localTitle: '局部：A 与位置 i 的效果', lastTitle: '末位：A 与最后位置的效果',
    xRho: 'Spearman ρ，对输入取均值', xRhoOne: 'Spearman ρ', undef: '无定义（读法为常数，没有秩）',
    undefNone: '无定义（没有输入给出数值）',
    tokSetTitle: '三种读法与逐词敲除效果',
    ablMeanTitle: (name) => `${name}：对输入的均值`, ablHeadsTitle: '每个头，对输入的 95% 区间',
    ablAgreeTitle: '排序一致性', xLoss: '损失增加（nats）', xAgree: '两种排序之间的 Spearman ρ',
    patHeadsMean: '头输出：平均分数（层 × 头）', patResidTitle: '最后位置的残差流', patHeadsTitle: '头输出，对句对的 95% 区间',
    xScore: '修补分数（0 = 污染，1 = 干净）', layerRow: (l) => `第 ${l} 层`,
    setHead: (n, name, how) => `${n} 条输入：${name}；${how}。`,
    pairHead: (n, name, how) => `${n} 对：${name}；${how}。`,
    how: (nBoot, nPerm, seed) => `自助重采样 ${nBoot} 次${nPerm ? `，置换 ${nPerm} 次` : ''}，种子 ${seed}`,
    edgeHow: (layer, head, mode) => `第 ${layer} 层，${head === 'all' ? '所有头' : `第 ${head} 个头`}，${mode === 'zero' ? '敲除后不重新归一化' : '敲除后该行重新归一化'}。`,
    nullOf: (s, p) => `零分布 ${s}，${p}`,
    sumLocal: (a, k, nl, u, pm) => `局部：${a}，${k}；${nl}；均匀 ${u}；行内置换 ${pm}。`,
    sumLast: (a, k, nl, u, pm) => `末位：${a}，${k}；${nl}；均匀 ${u}；行内置换 ${pm}。`,
    sumRows: (r, k) => `逐行 ρ 的均值 ${r}；前 k 重合率 ${k}。`,
    sumTokOne: (name, v) => `读法「${name}」与效果：${v}。`,
    sumAblSet: (a, b, c) => `排序一致性：置零–均值 ${a}；置零–重采样 ${b}；均值–重采样 ${c}。`,
    sumPatSet: (c, x) => `答案的 logit 差：干净 ${c}，污染 ${x}。`,
    skipped: (n, list) => `跳过 ${n} 对：${list}（各对的跳过原因见 JSON 导出）。`,
    andMore: (n) => `另有 ${n} 对`,
    noPairLeft: '没有可平均的句对：所有句对都被跳过（每对需要两个不同的答案，且两次运行的 logit 差要有足够变化）。请输入这个模型能区分下一个词的句对。',
    floor: (above, total, eps) => `高于噪声底线的效果：${total} 个中有 ${above} 个（ε = ${eps} nats）；低于 ε 的效果按并列处理。`,
    floorLast: (above, total) => `最后位置（末位）：${total} 个中有 ${above} 个。`,
    floorHow: (factor, n) => `ε 取一次什么也不改变的敲除仅因舍入误差留下的最大 KL 的 ${factor} 倍，在 ${n} 条输入上测得。`,
    findAbl: (top, weak, names) => `本次结果：移除 L${top.l} H${top.h} 使损失增加最多（置零，${f(top.v)} 奈特${top.lo !== undefined && top.lo !== null ? `，95% 区间 ${f(top.lo)} 至 ${f(top.hi)}` : ''}）；${weak ? (weak.rho >= 0.6 ? `三种移除方式给出的头排序相近（最低 ρ ${f(weak.rho)}，${pairName(weak.pair, names)}）` : `不同移除方式的排序不一致（${pairName(weak.pair, names)} 的 ρ 为 ${f(weak.rho)}）：哪些头重要取决于怎样移除`) : '无法计算一致性'}。`,
    findPat: (resid, head) => `本次结果：${resid ? `把干净运行进入第 ${resid.l} 层的残差${resid.pos !== undefined ? `（“${resid.pos}”处）` : ''}复制进来，答案的 logit 差恢复 ${f(resid.v)}，为各层之最${resid.lo !== undefined && resid.lo !== null ? `（95% 区间 ${f(resid.lo)} 至 ${f(resid.hi)}）` : ''}` : '没有可计分的层'}；${head ? `各头中 L${head.l} H${head.h} 最多（${f(head.v)}）` : '没有可计分的头'}。`,
    cannotEdge: '不能说明：权重大的边对输出重要，或这个头沿它搬运了什么（下方的修补卡片把“看向哪里”与“搬运什么”分开）。',
    cannotTok: '不能说明：一个词重要多少，也不涉及最后位置以外的位置。',
    cannotAbl: '不能说明：哪种移除方式是对的，或一个头为什么重要（看向哪里还是搬运了什么）。',
    cannotPat: '不能说明：效果经由某一部分传递的份额：各部分相互重叠，分数之和不必为 1。',
    oneInput: '只有一条输入：没有对输入的区间；置换零分布仍然适用。',
    findEdgeOne: (d) => `本句结果：${d.sign > 0 ? `${({ weak: '弱', moderate: '中等', strong: '强' })[d.size]}正相关（ρ = ${f(d.rho)}）：权重越大的边，局部效果越大`
      : d.sign < 0 ? `${({ weak: '弱', moderate: '中等', strong: '强' })[d.size]}负相关（ρ = ${f(d.rho)}）：权重越大的边，局部效果反而越小，即权重把这些效果排反了`
      : d.size === 'undefined' ? '相关系数无定义' : `权重与局部效果之间没有单调关系（ρ = ${f(d.rho)}）`}。单个句子没有区间；是否成立请看数据集卡片。`,
    findEdgeSet: (d) => ({
      above: `数据集结果：权重对局部效果的排序优于打乱后的注意力（平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}]，高于零假设区间的上端 ${f(d.nullHi)}）。`,
      below: `数据集结果：权重对局部效果的排序比打乱后的注意力更差（平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}]，低于零假设区间的下端 ${f(d.nullLo)}）：权重越大的边效果越小。`,
      inside: `数据集结果：没有证据表明权重能排对局部效果（平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}] 与零假设区间 [${f(d.nullLo)}, ${f(d.nullHi)}] 相交）。`,
      one: `单个输入的结果：ρ = ${f(d.rho)}；单个输入没有区间。`,
      nonull: `数据集结果：平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}]（未抽取置换零假设）。`,
      undefined: '此数据集上相关系数无定义。',
    })[d.verdict],
    findTokOne: (d, name) => `本句结果：${name}读数${d.sign > 0 ? `与词元敲除效果正相关（ρ = ${f(d.rho)}）`
      : d.sign < 0 ? `把效果排反了（ρ = ${f(d.rho)}）：它最看重的词元被移除时预测变化最小`
      : d.size === 'undefined' ? '与效果的相关系数无定义' : `不能排出敲除效果（ρ = ${f(d.rho)}）`}。单个句子没有区间。`,
    findTokSet: (d, name) => ({
      above: `数据集结果：${name}读数对敲除效果的排序优于随机（平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}]，高于零假设区间）。`,
      below: `数据集结果：${name}读数把敲除效果排反了（平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}]，低于零假设区间）。`,
      inside: `数据集结果：没有证据表明${name}读数能排出敲除效果（平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}] 与零假设区间相交）。`,
      one: `单个输入的结果：${name}读数，ρ = ${f(d.rho)}；单个输入没有区间。`,
      nonull: `数据集结果：${name}读数，平均 ρ = ${f(d.rho)} [${f(d.lo)}, ${f(d.hi)}]。`,
      undefined: `此数据集上${name}读数的相关系数无定义。`,
    })[d.verdict],
    noteLocal: '局部：权重是否排对了查询自身位置上的效果——对每条边 j → i，看位置 i 的下一词预测变了多少。它并不说明这条边对输出重要。',
    noteLastRow: '末位：在最后一层，只有第 T−1 行能影响输出；其余各行的效果在结构上为零，不计入。',
    noteLastAll: '末位：每条边对最后位置预测的改变；第 i < T−1 行的边只能经由上面的层影响它。',
    noteBase: '同一组效果上的基线：均匀（第 i 行每个键的权重都是 1/(i+1)，即仅凭所在行能预测多少；行内置换不改变它，所以它的零分布是一条线）与行内置换（把该头的权重在每行内打乱：权重不变，但落到的键不同）。',
    noteNull: (nPerm) => `灰色带：置换零分布——把读法在每行内打乱 ${nPerm} 次，各条输入分开；灰带是打乱后均值的中间 95%，虚线是它们的均值；p 为双侧。点在灰带之上，说明权重排出的效果顺序好于同样的权重随机排列；并不说明这个头是输出的原因。`,
    noteInterval: (n, nBoot) => `点与须线：${n} 条输入上逐条 ρ 的均值及其 95% 自助区间（对输入重采样 ${nBoot} 次）；浅色小点：各条输入。区间只针对这些输入，不代表一般的句子。`,
    noteTok: '每种读法都与同一条输入各个词的敲除效果（移除某个词后，最后一个下一词预测的变化）作比较。ρ 高说明读法排对了哪些词对这个预测重要；它不说明重要多少，也不涉及其他位置。',
    noteTokNull: (nPerm) => `灰色带：置换零分布——把每种读法在其输入的各个词之间打乱 ${nPerm} 次；打乱后均值的中间 95%，虚线是它们的均值；p 为双侧。`,
    noteAblSet: (n, draws) => `每个格子：移除该头后损失增加量在 ${n} 条输入上的均值（重采样取参考文本中 ${draws} 个窗口的平均）。区间图给出每个头对输入的 95% 区间，不涉及参考文本或重采样次数的变化。`,
    noteAblAgree: '一致性：每条输入上两种头排序之间的 Spearman ρ，再取均值。这里没有置换零分布：比较的是两种干预，而不是读法与效果。一致性低说明“这个头重要”取决于怎样移除它；一致性高也不说明哪种移除方式是对的。',
    notePatSet: '分数：0 = 污染运行的 logit 差，1 = 干净运行的；大于 1 表示修补过头，小于 0 表示推向相反方向。残差流取最后位置、进入各层之前。对句对取均值，附 95% 自助区间。',
    notePatGap: (g) => `两次运行的 logit 差相距不到 ${g} 的句对会被跳过：分数要除以这个差距，差距太小会把噪声无限放大。`,
    notePatNot: '分数说明复制进一部分后答案恢复了多少，并不是效果经由这一部分传递的份额（各部分相互重叠，分数之和不必为 1）。这里没有置换零分布。',
  },
};

const evidenceTranslator = makeTranslator(EVIDENCE_STRINGS, 'evidence panel');

const f = (x) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3));
const pairName = (pair, names) => pair.split('-').map((x) => names[x] ?? x).join('–');
const fint = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
const fexp = (x) => (x === 0 ? '0' : x.toExponential(2).replace('-', '−'));
const CARDS = ['ev-edge', 'ev-tok', 'ev-abl', 'ev-pat'];
const FILES = { 'ev-edge': 'attnlab_evidence_edge_knockout', 'ev-tok': 'attnlab_evidence_token_knockout',
                'ev-abl': 'attnlab_evidence_ablation', 'ev-pat': 'attnlab_evidence_patching' };
/** The sets of each card, and the page's default limit (the API's is the whole set; these keep a press under a minute). */
const SET_SIZE = { heldout: EVIDENCE_SETS.heldout.sentences.length, repeated: EVIDENCE_SETS.repeated.sequences.length,
                   pairs: EVIDENCE_SETS.pairs.pairs.length, induction: EVIDENCE_SETS.repeated.sequences.length };
const SETS = { 'ev-edge': ['heldout', 'repeated'], 'ev-tok': ['heldout', 'repeated'], 'ev-abl': ['heldout', 'repeated'], 'ev-pat': ['induction', 'pairs'] };
const LIMIT = { 'ev-edge': 20, 'ev-tok': 60, 'ev-abl': 3, 'ev-pat': SET_SIZE.induction };
const GPT2_VOCAB = 50257; // the 'repeated' set is GPT-2 token ids
const C_ATT = '#d7301f', C_UNI = '#e08a00', C_PERM = '#4575b4';
const C_LAST = '#e08a00', C_ROLL = '#74add1', C_FLOW = '#4575b4', C_VW = '#8c510a';
const C_ZERO = '#d7301f', C_MEAN = '#4575b4', C_RES = '#1a9850';

/** "ρ = m [lo, hi]" (one input, or no interval: "ρ = m"). */
function iv(s, sym, undef) {
  const pre = sym ? `${sym} ` : '';
  if (!s || s.mean === null || s.mean === undefined) return `${pre}${undef}`;
  const one = s.lo === null || s.lo === undefined || s.hi === s.lo || s.n === 1 || s.nDefined === 1;
  const eq = sym ? `${sym} = ` : '';
  return one ? `${eq}${f(s.mean)}` : `${eq}${f(s.mean)} [${f(s.lo)}, ${f(s.hi)}]`;
}
/** p with the resolution of the permutations: the smallest attainable is 1/(nPerm+1). */
function pText(p, nPerm) {
  if (p === null || p === undefined) return null;
  return nPerm && p <= 1 / (nPerm + 1) + 1e-12 ? `p ≤ ${Number((1 / (nPerm + 1)).toPrecision(1))}`
    : `p = ${p < 0.01 ? Number(p.toPrecision(2)) : p.toFixed(3)}`;
}
/** The p of a chart row: none where the null is a single value (a reading that shuffling leaves as it is). */
const pOfRow = (it, nPerm) => (it.nullLo !== null && it.nullLo !== undefined && it.nullHi - it.nullLo > 1e-12 ? pText(it.p, nPerm) : null);
/** Cell labels that fit a 30-pixel cell. */
const cellText = (v) => (Math.abs(v) >= 9.995 ? v.toFixed(0) : v.toFixed(2));
/** Colour-bar ticks with the digits that tell them apart. */
const tickText = (v) => (v === 0 ? '0' : Math.abs(v) >= 0.1 ? v.toFixed(2) : String(Number(v.toPrecision(2))));
const tokenLabels = (toks) => toks.map((x, i) => `${i} ${JSON.stringify(x).slice(1, -1)}`);
const ablNames = (t) => ({ zero: t('ablZero'), mean: t('ablMean'), resample: t('ablRes') });
const PATCH_COLOR = rdBuR(1); // 0 = corrupted (white), 1 = clean (red), clamped
const nullText = (s) => (s && s.nullMean !== null && s.nullMean !== undefined ? `${f(s.nullMean)} [${f(s.nullLo)}, ${f(s.nullHi)}]` : '—');

/** "your list": one input a line; for patching `clean | corrupted` with optional `| answer | answer`. */
export function parseList(text, pairs) {
  const lines = String(text).split('\n').map((s, i) => ({ s, line: i + 1 })).filter((x) => x.s.trim());
  if (!pairs) return { inputs: lines.map((x) => x.s.trim()) };
  const out = [];
  for (const { s, line } of lines) {
    const parts = s.split('|');
    if (!(parts.length === 2 || parts.length === 4) || !parts[0].trim() || !parts[1].trim()) return { bad: line };
    const p = [parts[0].trim(), parts[1].trim()];
    if (parts.length === 4) {
      const a = [parts[2].replace(/\s+$/, ''), parts[3].replace(/\s+$/, '')];
      if (!a[0].trim() || !a[1].trim()) return { bad: line };
      p.push(a);
    }
    out.push(p);
  }
  return { inputs: out };
}

export class EvidencePanel {
  /** @param {{lang(): string, sentence(): string}} env */
  constructor(env) {
    this.env = env;
    this.model = null;
    this.config = null;
    this.charts = {};
    this.data = {};
    this.abort = {};
    this.running = {};   // id -> the source of the computation under way
    this.sentence = null;
    this.#build();
    // "where a head looks, what it moves" (circuits-panel.js): its own cards, given the model and the language from here
    this.circuits = new CircuitsPanel({ lang: () => this.env.lang(), parseList });
  }

  get t() { return evidenceTranslator(this.env.lang()); }

  setModel(model, config) {
    this.model = model;
    this.config = config;
    for (const id of CARDS) this.#reset(id);
    const L = config.nLayer;
    setOptions($('ev-edge-layer'), Array.from({ length: L }, (_, l) => ({ value: String(l), label: String(l) })), String(L - 1));
    this.#fillHeads();
    this.#fillSets();
    this.#pickPair();
    this.circuits.setModel(model, config);
  }

  setLang() {
    this.#texts();
    for (const id of CARDS) if (this.data[id]) this.#draw(id);
    this.circuits.setLang();
  }

  /** Called after each drawn result of the page: the cards on the sentence are cleared only when it changed. */
  sentenceChanged() {
    const text = this.env.sentence();
    if (text === this.sentence) return;
    this.sentence = text;
    for (const id of ['ev-edge', 'ev-tok', 'ev-abl']) {
      const busy = this.running[id], done = this.data[id] && this.data[id].source;
      if (busy === 'sentence' || (!busy && (!done || done === 'sentence'))) this.#reset(id);
    }
  }

  // ── building ─────────────────────────────────────────────────────────────

  #build() {
    const root = $('evidence');
    if (!root) return;
    const field = (id, child, extra) => el('label', { class: 'field', id: `${id}-field` }, el('span', { id: `${id}-label` }), child, extra || null);
    const source = (id) => {
      const pair = id === 'ev-pat';
      const radio = (v) => [el('input', { type: 'radio', id: `${id}-src-${v}`, name: `${id}-src`, value: v, checked: v === 'sentence' }),
        el('label', { for: `${id}-src-${v}`, id: `${id}-src-${v}-label` })];
      return [
        el('fieldset', { class: 'field segmented ev-src' }, el('legend', { id: `${id}-src-legend` }), ...['sentence', 'set', 'list'].map(radio)),
        field(`${id}-set`, el('select', { id: `${id}-set`, disabled: pair })),
        field(`${id}-limit`, el('span', { class: 'ev-limit' },
          el('input', { id: `${id}-limit`, type: 'number', min: '1', step: '1', value: String(LIMIT[id]), inputmode: 'numeric' }),
          el('span', { class: 'ev-of', id: `${id}-of` }))),
        id === 'ev-abl' ? field('ev-abl-draws', el('input', { id: 'ev-abl-draws', type: 'number', min: '1', max: '200', step: '1', value: '20' })) : null,
        id === 'ev-pat' ? field('ev-pat-gap', el('input', { id: 'ev-pat-gap', type: 'number', min: '0', step: '0.1', value: '1' })) : null,
      ];
    };
    const card = (id, rung, controls) => el('section', { class: 'fig hp ev-card', id, dataset: { state: 'idle', source: 'sentence' } },
      el('header', { class: 'fig-head' }, el('h2', { id: `${id}-h` }), el('span', { class: `rung rung-${rung}`, id: `${id}-rung` })),
      el('p', { class: 'fig-text', id: `${id}-text` }),
      el('div', { class: 'hp-form hp-inline ev-form' }, ...controls, ...source(id),
        el('span', { class: 'ev-buttons' },
          el('button', { class: 'btn btn-primary', type: 'button', id: `${id}-go` }),
          el('button', { class: 'btn', type: 'button', id: `${id}-stop`, disabled: true }))),
      el('div', { class: 'ev-list', id: `${id}-list-box`, hidden: true },
        el('label', { class: 'field' }, el('span', { id: `${id}-list-label` }),
          el('textarea', { id: `${id}-list`, rows: 4, spellcheck: 'false', placeholder: id === 'ev-pat'
            ? 'The man promised that | The woman promised that |  he |  she\nThe keys to the cabinet | The key to the cabinet'
            : 'The cat sat on the mat .\nShe opened the door and the dog ran out .' })),
        el('p', { class: 'hint', id: `${id}-list-count` })),
      el('p', { class: 'hp-status', id: `${id}-status`, role: 'status', 'aria-live': 'polite' }),
      el('div', { class: 'hp-row', id: `${id}-charts` }),
      el('div', { class: 'hp-summary', id: `${id}-sum` }),
      el('ul', { class: 'ev-notes', id: `${id}-notes` }),
      el('div', { class: 'hp-presets' }, ...['svg', 'png', 'json'].map((k) =>
        el('button', { class: 'btn btn-small', type: 'button', id: `${id}-x-${k}`, disabled: true }))));
    replace(root,
      el('header', { class: 'heads-head' }, el('h2', { id: 'ev-title' }), el('p', { class: 'fig-text', id: 'ev-intro' })),
      card('ev-edge', 2, [field('ev-edge-layer', el('select', { id: 'ev-edge-layer' })), field('ev-edge-head', el('select', { id: 'ev-edge-head' })),
        field('ev-edge-ko', el('select', { id: 'ev-edge-ko' }))]),
      card('ev-tok', 2, [field('ev-tok-mode', el('select', { id: 'ev-tok-mode' }))]),
      card('ev-abl', 2, []),
      card('ev-pat', 2, [field('ev-pat-clean', el('input', { id: 'ev-pat-clean', type: 'text', spellcheck: 'false' })),
        field('ev-pat-corrupt', el('input', { id: 'ev-pat-corrupt', type: 'text', spellcheck: 'false' }))]));
    $('ev-edge-layer').addEventListener('change', () => this.#fillHeads());
    for (const id of CARDS) {
      $(`${id}-go`).addEventListener('click', () => this.#compute(id));
      $(`${id}-stop`).addEventListener('click', () => this.abort[id]?.abort());
      for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).addEventListener('click', () => this.#export(id, k));
      for (const v of ['sentence', 'set', 'list']) $(`${id}-src-${v}`).addEventListener('change', () => this.#sourceShown(id));
      $(`${id}-set`).addEventListener('change', () => this.#limitShown(id));
      $(`${id}-list`).addEventListener('input', () => this.#listCount(id));
    }
    this.#texts();
    this.#fillSets();
    for (const id of CARDS) this.#sourceShown(id);
  }

  #texts() {
    const t = this.t;
    const set = (id, v) => { const n = document.getElementById(id); if (n) n.textContent = v; };
    set('ev-title', t('title'));
    set('ev-intro', t('intro'));
    for (const [id, key] of [['ev-edge', 'edge'], ['ev-tok', 'tok'], ['ev-abl', 'abl'], ['ev-pat', 'pat']]) {
      set(`${id}-h`, t(`${key}Title`));
      set(`${id}-text`, t(`${key}Text`));
      set(`${id}-rung`, `${t('rung1')} → ${t('rung2')}`);
      set(`${id}-go`, t('compute'));
      set(`${id}-stop`, t('cancel'));
      set(`${id}-x-svg`, t('exportSvg'));
      set(`${id}-x-png`, t('exportPng'));
      set(`${id}-x-json`, t('exportJson'));
      set(`${id}-src-legend`, t('source'));
      set(`${id}-src-sentence-label`, id === 'ev-pat' ? t('srcPair') : t('srcSentence'));
      set(`${id}-src-set-label`, t('srcSet'));
      set(`${id}-src-list-label`, t('srcList'));
      set(`${id}-set-label`, t('setLabel'));
      set(`${id}-limit-label`, t('limit'));
      set(`${id}-list-label`, id === 'ev-pat' ? t('listPairsLabel') : t('listLabel'));
      this.#limitShown(id);
      this.#listCount(id);
    }
    set('ev-edge-layer-label', t('layer'));
    set('ev-edge-head-label', t('head'));
    set('ev-edge-ko-label', t('knockout'));
    set('ev-tok-mode-label', t('tokMode'));
    set('ev-abl-draws-label', t('draws'));
    set('ev-pat-gap-label', t('minGap'));
    set('ev-pat-clean-label', t('patClean'));
    set('ev-pat-corrupt-label', t('patCorrupt'));
    const ko = $('ev-edge-ko'), mode = $('ev-tok-mode');
    setOptions(ko, [{ value: 'renorm', label: t('koRenorm') }, { value: 'zero', label: t('koZero') }], ko.value || 'renorm');
    setOptions(mode, [{ value: 'column', label: t('tokColumn') }, { value: 'delete', label: t('tokDelete') },
      { value: 'replace', label: t('tokReplace') }], mode.value || 'column');
    this.#fillHeads();
    this.#fillSets();
  }

  #fillHeads() {
    if (!this.config) return;
    const cur = $('ev-edge-head').value || 'all';
    setOptions($('ev-edge-head'), [{ value: 'all', label: this.t('all') },
      ...Array.from({ length: this.config.nHead }, (_, h) => ({ value: String(h), label: String(h) }))], cur);
  }

  #fillSets() {
    const t = this.t;
    const label = { heldout: t('setHeldout', SET_SIZE.heldout), repeated: t('setRepeated', SET_SIZE.repeated), pairs: t('setPairs', SET_SIZE.pairs),
                    induction: t('setInduction', SET_SIZE.induction) };
    for (const id of CARDS) {
      const sel = document.getElementById(`${id}-set`);
      if (!sel) continue;
      // the repeated sequences (and the induction pairs made of them) are GPT-2 token ids: offered only to a
      // model with GPT-2's vocabulary
      const sets = SETS[id].filter((s) => (s !== 'repeated' && s !== 'induction') || !this.config || this.config.vocabSize === GPT2_VOCAB);
      setOptions(sel, sets.map((s) => ({ value: s, label: label[s] })), sel.value || sets[0]);
    }
  }

  #source(id) {
    return ['sentence', 'set', 'list'].find((v) => $(`${id}-src-${v}`).checked) || 'sentence';
  }

  #sourceShown(id) {
    const src = this.#source(id);
    $(id).dataset.source = src;
    $(`${id}-set-field`).hidden = src !== 'set';
    $(`${id}-limit-field`).hidden = src !== 'set';
    if (id === 'ev-abl') $('ev-abl-draws-field').hidden = src === 'sentence';
    if (id === 'ev-pat') $('ev-pat-gap-field').hidden = src === 'sentence';
    if (id === 'ev-pat') for (const k of ['clean', 'corrupt']) $(`ev-pat-${k}-field`).hidden = src !== 'sentence';
    $(`${id}-list-box`).hidden = src !== 'list';
    this.#limitShown(id);
  }

  #limitShown(id) {
    const sel = document.getElementById(`${id}-set`), inp = document.getElementById(`${id}-limit`);
    if (!sel || !inp) return;
    const size = SET_SIZE[sel.value] || SET_SIZE[SETS[id][0]];
    inp.max = String(size);
    $(`${id}-of`).textContent = this.t('ofTotal', size);
  }

  #listCount(id) {
    const box = document.getElementById(`${id}-list-count`);
    if (!box) return;
    const r = parseList($(`${id}-list`).value, id === 'ev-pat');
    box.textContent = r.bad ? this.t('listBad', r.bad) : id === 'ev-pat' ? this.t('listPairCount', r.inputs.length) : this.t('listCount', r.inputs.length);
  }

  // the first example pair whose two sentences get different next tokens from this model
  async #pickPair() {
    const model = this.model;
    for (const [a, b] of PATCHING_PAIRS) {
      try {
        const [ra, rb] = [await model.run(a), await model.run(b)];
        if (model !== this.model) return;
        if (ra.T === rb.T && ra.top[0].id !== rb.top[0].id) {
          $('ev-pat-clean').value = a;
          $('ev-pat-corrupt').value = b;
          return;
        }
      } catch { return; }
    }
    $('ev-pat-clean').value = PATCHING_PAIRS[0][0];
    $('ev-pat-corrupt').value = PATCHING_PAIRS[0][1];
    $('ev-pat-status').textContent = this.t('noPair');
  }

  // ── computing ────────────────────────────────────────────────────────────

  #reset(id) {
    this.abort[id]?.abort(); // a computation on the old sentence or model stops and is forgotten
    delete this.abort[id];
    delete this.running[id];
    delete this.data[id];
    delete this.charts[id];
    const card = document.getElementById(id);
    if (!card) return;
    card.dataset.state = 'idle';
    delete card.dataset.n;
    replace($(`${id}-charts`));
    replace($(`${id}-notes`));
    replace($(`${id}-sum`));
    $(`${id}-status`).textContent = '';
    $(`${id}-status`).classList.remove('busy', 'error');
    for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).disabled = true;
    $(`${id}-go`).disabled = false;
    $(`${id}-stop`).disabled = true;
  }

  /** The set argument and options of a card's source; null (and a message) when the list cannot be read. */
  #setArgs(id, src) {
    if (src === 'set') {
      const name = $(`${id}-set`).value, size = SET_SIZE[name];
      const v = Math.floor(Number($(`${id}-limit`).value));
      const limit = Number.isFinite(v) && v >= 1 ? Math.min(v, size) : Math.min(LIMIT[id], size);
      $(`${id}-limit`).value = String(limit);
      return { set: name, opts: { limit } };
    }
    const r = parseList($(`${id}-list`).value, id === 'ev-pat');
    if (r.bad) return { error: this.t('listBad', r.bad) };
    if (!r.inputs.length) return { error: this.t('listEmpty') };
    return { set: r.inputs, opts: {} };
  }

  async #compute(id) {
    if (!this.model) return;
    this.abort[id]?.abort();
    const src = this.#source(id);
    const status = $(`${id}-status`);
    const args = src === 'sentence' ? null : this.#setArgs(id, src);
    if (args && args.error) {
      status.textContent = args.error;
      status.classList.add('error');
      return;
    }
    const ac = new AbortController();
    this.abort[id] = ac;
    this.running[id] = src;
    const model = this.model, text = this.env.sentence();
    const card = $(id);
    card.dataset.state = 'busy';
    $(`${id}-go`).disabled = true;
    $(`${id}-stop`).disabled = false;
    status.classList.remove('error');
    status.classList.add('busy');
    status.textContent = this.t('computing');
    const progress = (phase) => (e) => {
      if (this.abort[id] === ac) status.textContent = `${this.t('computing')} ${phase ? `${phase} ` : ''}${e.done} / ${e.total}`;
    };
    const signal = ac.signal;
    try {
      const d = { source: src, view: this.#exportView(id) };   // what it runs on, for its exports (read now)
      if (id === 'ev-edge') {
        const hv = $('ev-edge-head').value;
        const o = { layer: Number($('ev-edge-layer').value), head: hv === 'all' ? 'all' : Number(hv), knockout: $('ev-edge-ko').value };
        if (src === 'sentence') {
          d.one = await model.edgeKnockout(text, { ...o, onProgress: progress(`${this.t('phaseGrid')}:`), signal });
          d.set = await model.edgeKnockoutSet([text], { ...o, onProgress: progress(`${this.t('phaseNull')}:`), signal });
        } else d.set = await model.edgeKnockoutSet(args.set, { ...o, ...args.opts, onProgress: progress(), signal });
      } else if (id === 'ev-tok') {
        const o = { mode: $('ev-tok-mode').value };
        if (src === 'sentence') {
          d.one = await model.tokenKnockout(text, { ...o, onProgress: progress(`${this.t('phaseGrid')}:`), signal });
          d.set = await model.tokenKnockoutSet([text], { ...o, onProgress: progress(`${this.t('phaseNull')}:`), signal });
        } else d.set = await model.tokenKnockoutSet(args.set, { ...o, ...args.opts, onProgress: progress(), signal });
      } else if (id === 'ev-abl') {
        if (src === 'sentence') d.one = await model.ablationSemantics(text, { onProgress: progress(), signal });
        else {
          const v = Math.floor(Number($('ev-abl-draws').value));
          const draws = Number.isFinite(v) && v >= 1 ? Math.min(v, 200) : 20;
          $('ev-abl-draws').value = String(draws);
          d.set = await model.ablationSet(args.set, { ...args.opts, draws, onProgress: progress(), signal });
        }
      } else if (src === 'sentence') {
        d.one = await model.activationPatching($('ev-pat-clean').value, $('ev-pat-corrupt').value);
      } else {
        const g = Number($('ev-pat-gap').value), minGap = Number.isFinite(g) && g >= 0 ? g : 1;
        $('ev-pat-gap').value = String(minGap);
        d.set = await model.patchingSet(args.set, { ...args.opts, minGap, onProgress: progress(), signal });
        d.minGap = minGap;
      }
      if (this.abort[id] !== ac || model !== this.model) return;
      d.setName = src === 'set' ? args.set : null;
      this.data[id] = d;
      status.textContent = '';
      card.dataset.state = 'done';
      if (d.set) card.dataset.n = String(d.set.n);
      else delete card.dataset.n;
      this.#draw(id);
    } catch (e) {
      if (this.abort[id] !== ac) return;
      card.dataset.state = 'error';
      status.classList.add('error');
      status.textContent = e && e.code === 'EABORT' ? this.t('cancelled') : `${e.code ? e.code + ': ' : ''}${e.message}`;
    } finally {
      if (this.abort[id] === ac) {
        delete this.running[id];
        status.classList.remove('busy');
        if (card.dataset.state === 'error' && status.textContent === this.t('cancelled')) status.classList.remove('error');
        $(`${id}-go`).disabled = false;
        $(`${id}-stop`).disabled = true;
      }
    }
  }

  // ── drawing ──────────────────────────────────────────────────────────────

  #setLegend(n, withNull) {
    const t = this.t;
    return { interval: n > 1 ? t('lgInterval') : t('lgOne'), points: n > 1 ? t('lgPoints') : null,
             null: withNull ? t('lgNull') : null, nullMean: withNull ? t('lgNullMean') : null };
  }

  #setName(d) {
    const t = this.t;
    if (d.source === 'sentence') return t('nameSentence');
    if (d.source === 'list') return t('nameList');
    return { heldout: t('nameHeldout'), repeated: t('nameRepeated'), pairs: t('namePairs'), induction: t('nameInduction') }[d.setName] || String(d.setName);
  }

  #draw(id) {
    const d = this.data[id], t = this.t, lang = this.env.lang();
    const box = $(`${id}-charts`), bw = box.clientWidth || 900;
    const maxW = Math.max(240, Math.min(520, bw / 2 - 12));
    const setW = Math.max(280, Math.min(520, bw - 4));
    const n = d.set ? d.set.n : 1;
    // what every card's drawing shares; each adds its charts, summary lines, notes and JSON
    const c = { d, t, lang, maxW, setW, n, pairW: bw >= 2 * 300 + 18 ? maxW : setW, // two charts side by side, or one a row
      U: t('undef'), xRho: t(n > 1 ? 'xRho' : 'xRhoOne'), pOf: (nPerm) => (it) => pOfRow(it, nPerm),
      charts: [], sum: [], notes: [], json: {} };
    const parts = { 'ev-edge': [this.#edgeOne, this.#edgeSet], 'ev-tok': [this.#tokOne, this.#tokSet],
                    'ev-abl': [this.#ablOne, this.#ablSet], 'ev-pat': [this.#patOne, this.#patSet] }[id];
    if (d.one) parts[0].call(this, c, d.one);
    if (d.set) {
      parts[1].call(this, c, d.set);
      c.json.set = d.set;
    }
    this.charts[id] = c.charts;
    this.data[`${id}:json`] = c.json;
    replace(box, ...c.charts.map((x) => el('div', { class: 'hp-svg' }, toElement(x, document))));
    replace($(`${id}-notes`), ...c.notes.filter(Boolean).map((x) => el('li', null, x)));
    replace($(`${id}-sum`), ...c.sum.map((x) => el('p', null, x)));
    for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).disabled = false;
  }

  #edgeOne(c, r) {
    const { t, lang, maxW } = c, T = r.T, tl = tokenLabels(r.tokens);
    const vmaxA = Math.max(1e-9, ...r.A), vmaxE = Math.max(1e-9, ...Array.from(r.E).filter(Number.isFinite));
    const grid = (values, title, vmax) => {
      const scale = ylOrRd(0, vmax);
      return gridMap({ values, R: T, C: T, color: scale, maxW, maxH: maxW, rowLabels: tl, colLabels: tl, rotate: true, title, lang,
        cbar: { scale, format: tickText } });
    };
    const pts = [];
    for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++)
      if (!Number.isNaN(r.E[i * T + j])) pts.push({ x: r.A[i * T + j], y: r.E[i * T + j], title: `${tl[j]} → ${tl[i]}: A ${r.A[i * T + j].toFixed(3)}, KL ${r.E[i * T + j].toFixed(4)}` });
    c.charts.push(grid(r.A, t('edgeA'), vmaxA), grid(r.E, t('edgeE'), vmaxE),
      scatter({ points: pts, xTitle: t('scatterX'), yTitle: t('scatterY'), width: maxW, height: maxW * 0.8, lang }));
    c.sum.push(t('findEdgeOne', oneInputFinding(r.spearman)), t('cannotEdge'), t('edgeSum', r));
    c.json.sentence = { layer: r.layer, head: r.head, mode: r.mode, tokens: r.tokens, A: rows(r.A, T), E: rows(r.E, T), E_last: rows(r.ELast, T),
      spearman: r.spearman, kendall: r.kendall, spearmanLast: r.spearmanLast, topK: r.topK, topKOverlap: r.topKOverlap, rows: r.rows };
  }

  #edgeSet(c, s) {
    const { t, n, U } = c;
    const rowsOf = (k) => [
      { label: t('rowAttention'), items: [{ ...s[k].spearman, color: C_ATT,
        points: n > 1 ? s.perInput.map((p) => (k === 'local' ? p.spearman : p.spearmanLast)) : null }] },
      ...(s.valueWeighted ? [{ label: t('rowValueWeighted'), items: [{ ...s.valueWeighted[k].spearman, color: C_VW }] }] : []),
      { label: t('rowUniform'), items: [{ ...s[k].uniform, color: C_UNI }] },
      { label: t('rowPermuted'), items: [{ ...s[k].permuted, color: C_PERM }] }];
    for (const k of ['local', 'last'])
      c.charts.push(intervalChart({ rows: rowsOf(k), domain: [-1, 1], title: t(k === 'local' ? 'localTitle' : 'lastTitle'), xTitle: c.xRho,
        width: c.pairW, lang: c.lang, legend: this.#setLegend(n, true), pText: c.pOf(s.nPerm), undefinedText: U }));
    const line = (k) => t(k === 'local' ? 'sumLocal' : 'sumLast', iv(s[k].spearman, 'ρ', U), iv(s[k].kendall, 'τ', U),
      t('nullOf', nullText(s[k].spearman), pText(s[k].spearman.p, s.nPerm) || 'p —'), iv(s[k].uniform, 'ρ', U), iv(s[k].permuted, 'ρ', U));
    // on this sentence the one-input finding is already there: the set of one adds its numbers, not a second finding
    if (c.n > 1 || !c.sum.includes(t('cannotEdge'))) c.sum.push(t('findEdgeSet', setFinding(s.local.spearman)), t('cannotEdge'));
    if (!c.d.one) c.sum.push(t('edgeHow', s.layer, s.head, s.mode));
    c.sum.push(t('setHead', n, this.#setName(c.d), t('how', s.nBoot, s.nPerm, s.seed)), line('local'), line('last'),
      t('sumRows', iv(s.rows, '', U), iv(s.topKOverlap, '', U)));
    if (s.valueWeighted)
      c.sum.push(t('sumValueWeighted', iv(s.valueWeighted.local.spearman, 'ρ', U), iv(s.valueWeighted.last.spearman, 'ρ', U)));
    if (n === 1) c.notes.push(t('oneInput'));
    c.notes.push(t('noteLocal'), t(s.lastRowOnly ? 'noteLastRow' : 'noteLastAll'), t('noteBase'), t('noteNull', s.nPerm));
    if (n > 1) c.notes.push(t('noteInterval', n, s.nBoot));
    c.notes.push(this.#floor(s.local.spearman, s, s.last.spearman));
  }

  #tokOne(c, r) {
    const { t } = c;
    c.charts.push(groupedBars({ labels: tokenLabels(r.tokens), width: Math.min(620, c.maxW * 2), lang: c.lang, series: [
      { name: t('tokEffect'), values: Array.from(r.effect), color: '#d7301f' },
      { name: t('tokLast'), values: Array.from(r.readings.lastLayer), color: '#fdae61' },
      { name: t('tokRoll'), values: Array.from(r.readings.rollout), color: '#74add1' },
      { name: t('tokFlow'), values: Array.from(r.readings.flow), color: '#4575b4' },
      ...(r.readings.valueWeighted ? [{ name: t('tokVW'), values: Array.from(r.readings.valueWeighted), color: C_VW }] : [])] }));
    c.sum.push(t('findTokOne', oneInputFinding(r.spearman.lastLayer), t('tokLast')), t('cannotTok'), t('tokSum', r));
    c.json.sentence = { tokens: r.tokens, mode: r.mode, effect: Array.from(r.effect),
      readings: Object.fromEntries(Object.entries(r.readings).map(([k, v]) => [k, Array.from(v)])), spearman: r.spearman, kendall: r.kendall };
  }

  #tokSet(c, s) {
    const { t, n, U } = c, R = s.readings;
    const row = (k, label, color) => ({ label, items: [{ ...R[k], color, points: n > 1 ? s.perInput.map((p) => p[k]) : null }] });
    const vw = R.valueWeighted ? [row('valueWeighted', t('tokVW'), C_VW)] : [];
    c.charts.push(intervalChart({ rows: [row('lastLayer', t('tokLast'), C_LAST), ...vw, row('rollout', t('tokRoll'), C_ROLL), row('flow', t('tokFlow'), C_FLOW)],
      domain: [-1, 1], title: t('tokSetTitle'), xTitle: c.xRho, width: c.setW, lang: c.lang, legend: this.#setLegend(n, true),
      pText: c.pOf(s.nPerm), undefinedText: U }));
    const one = (k) => `${iv(R[k], 'ρ', U)}; ${t('nullOf', nullText(R[k]), pText(R[k].p, s.nPerm) || 'p —')}`;
    if (c.n > 1 || !c.sum.includes(t('cannotTok'))) c.sum.push(t('findTokSet', setFinding(R.lastLayer), t('tokLast')), t('cannotTok'));
    c.sum.push(t('setHead', n, this.#setName(c.d), t('how', s.nBoot, s.nPerm, s.seed)),
      ...[['lastLayer', 'tokLast'], ...(R.valueWeighted ? [['valueWeighted', 'tokVW']] : []), ['rollout', 'tokRoll'], ['flow', 'tokFlow']]
        .map(([k, name]) => t('sumTokOne', t(name), one(k))));
    if (n === 1) c.notes.push(t('oneInput'));
    c.notes.push(t('noteTok'), t('noteTokNull', s.nPerm));
    if (n > 1) c.notes.push(t('noteInterval', n, s.nBoot));
    c.notes.push(this.#floor(R.lastLayer, s));
  }

  #ablAxes(c, L, H) {
    return { rowLabels: Array.from({ length: L }, (_, l) => String(l)), colLabels: Array.from({ length: H }, (_, h) => String(h)),
      rowTitle: c.t('layerAxis'), colTitle: c.t('headAxis'), cell: 30, annotate: (v) => v.toFixed(2), lang: c.lang };
  }

  #ablOne(c, r) {
    const { t } = c, L = r.nLayer, H = r.nHead, names = ablNames(t);
    const all = ['zero', 'mean', 'resample'].flatMap((k) => Array.from(r[k].delta));
    const color = rdBuR(Math.max(1e-6, ...all.map(Math.abs)));
    for (const k of ['zero', 'mean', 'resample']) c.charts.push(gridMap({ values: r[k].delta, R: L, C: H, color, title: names[k], ...this.#ablAxes(c, L, H) }));
    const top = topCell(Array.from(r.zero.delta), H);
    if (top) c.sum.push(t('findAbl', top, weakestAgreement(r.agreement), names));
    c.sum.push(t('cannotAbl'), t('ablSum', r));
    c.json.sentence = { nLayer: L, nHead: H, agreement: r.agreement, ...Object.fromEntries(['zero', 'mean', 'resample'].map((k) =>
      [k, { baseLoss: r[k].baseLoss, delta: rows(r[k].delta, H), pruning: Array.from(r[k].pruning) }])) };
  }

  #ablSet(c, s) {
    const { t, n } = c, L = s.nLayer, H = s.nHead, names = ablNames(t), none = t('undefNone'), w = Math.min(c.setW, 420);
    const means = Object.fromEntries(['zero', 'mean', 'resample'].map((k) => [k, Float32Array.from(s.delta[k], (x) => x.mean ?? NaN)]));
    const color = rdBuR(Math.max(1e-6, ...Object.values(means).flatMap((v) => Array.from(v).filter(Number.isFinite).map(Math.abs))));
    for (const k of ['zero', 'mean', 'resample'])
      c.charts.push(gridMap({ values: means[k], R: L, C: H, color, title: t('ablMeanTitle', names[k]), ...this.#ablAxes(c, L, H), annotate: cellText }));
    const cols = { zero: C_ZERO, mean: C_MEAN, resample: C_RES };
    const heads = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++)
      heads.push({ label: `L${l} H${h}`, items: ['zero', 'mean', 'resample'].map((k) => ({ ...s.delta[k][l * H + h], name: names[k], color: cols[k] })) });
    const lg = { ...this.#setLegend(n, false), points: null, series: ['zero', 'mean', 'resample'].map((k) => ({ name: names[k], color: cols[k] })) };
    c.charts.push(intervalChart({ rows: heads, title: t('ablHeadsTitle'), xTitle: t('xLoss'), width: w, lang: c.lang, legend: lg, undefinedText: none }));
    const keys = ['zero-mean', 'zero-resample', 'mean-resample'];
    const agreeRows = keys.map((k) => ({ label: k.split('-').map((x) => names[x]).join('–'),
      items: [{ ...s.agreement[k], color: '#555', points: n > 1 ? s.perInput.map((p) => p.agreement[k]) : null }] }));
    c.charts.push(intervalChart({ rows: agreeRows, domain: [-1, 1], title: t('ablAgreeTitle'), xTitle: t('xAgree'), width: w, lang: c.lang,
      legend: this.#setLegend(n, false), undefinedText: none }));
    const top = topCell(s.delta.zero, H);
    if (top) c.sum.push(t('findAbl', top, weakestAgreement(s.agreement), names));
    c.sum.push(t('cannotAbl'));
    c.sum.push(t('setHead', n, this.#setName(c.d), t('how', s.nBoot, 0, s.seed)), t('sumAblSet', ...keys.map((k) => iv(s.agreement[k], 'ρ', none))));
    if (n === 1) c.notes.push(t('oneInput'));
    c.notes.push(t('noteAblSet', n, s.draws), t('noteAblAgree'));
  }

  #patOne(c, r) {
    const { t, lang } = c, { nLayer: L, nHead: H, T } = r;
    const lab = Array.from({ length: L }, (_, l) => String(l));
    c.charts.push(
      gridMap({ values: r.resid, R: L, C: T, color: PATCH_COLOR, maxW: c.maxW * 1.3, rowLabels: lab, colLabels: tokenLabels(r.tokens), rotate: true,
        rowTitle: t('layerAxis'), title: t('patResid'), annotate: T <= 16 ? (v) => v.toFixed(2) : null, lang }),
      gridMap({ values: r.heads, R: L, C: H, color: PATCH_COLOR, cell: 30, rowLabels: lab, colLabels: Array.from({ length: H }, (_, h) => String(h)),
        rowTitle: t('layerAxis'), colTitle: t('headAxis'), title: t('patHeads'), annotate: (v) => v.toFixed(2), lang }));
    const resid = topCell(Array.from(r.resid), T);
    c.sum.push(t('findPat', resid && { l: resid.l, v: resid.v, pos: tokenLabels(r.tokens)[resid.h] }, topCell(Array.from(r.heads), H)),
      t('cannotPat'), t('patSum', r));
    c.json.sentence = { tokens: r.tokens, corruptTokens: r.corruptTokens, answers: r.answerTokens, ldClean: r.ldClean, ldCorrupt: r.ldCorrupt,
      resid: rows(r.resid, T), heads: rows(r.heads, H) };
  }

  #patSet(c, s) {
    const { t, lang } = c, { nLayer: L, nHead: H } = s, none = t('undefNone'), w = Math.min(c.setW, 420);
    if (s.n > 0) {
      c.charts.push(gridMap({ values: Float32Array.from(s.heads, (x) => x.mean ?? NaN), R: L, C: H, color: PATCH_COLOR, cell: 30,
        rowLabels: Array.from({ length: L }, (_, l) => String(l)), colLabels: Array.from({ length: H }, (_, h) => String(h)),
        rowTitle: t('layerAxis'), colTitle: t('headAxis'), title: t('patHeadsMean'), annotate: cellText, lang }));
      const resid = s.residLast.map((x, l) => ({ label: t('layerRow', l),
        items: [{ ...x, color: '#b2182b', points: s.n > 1 ? s.perInput.map((p) => p.residLast && p.residLast[l]) : null }] }));
      c.charts.push(intervalChart({ rows: resid, title: t('patResidTitle'), xTitle: t('xScore'), width: w, lang,
        legend: this.#setLegend(s.n, false), undefinedText: none }));
      const heads = [];
      for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) heads.push({ label: `L${l} H${h}`, items: [{ ...s.heads[l * H + h], color: '#b2182b' }] });
      c.charts.push(intervalChart({ rows: heads, title: t('patHeadsTitle'), xTitle: t('xScore'), width: w, lang,
        legend: { ...this.#setLegend(s.n, false), points: null }, undefinedText: none }));
    }
    if (s.n > 0) c.sum.push(t('findPat', topCell(s.residLast, 1), topCell(s.heads, H)), t('cannotPat'));
    c.sum.push(t('pairHead', s.n, this.#setName(c.d), t('how', s.nBoot, 0, s.seed)));
    if (s.n > 0 && s.ldClean && s.ldCorrupt) c.sum.push(t('sumPatSet', iv(s.ldClean, '', none), iv(s.ldCorrupt, '', none)));
    if (s.skipped && s.skipped.length) {
      // the API's reasons are English: the Chinese page names the pairs and leaves the reasons to the JSON export
      const k = s.skipped.length, zh = lang === 'zh', show = zh ? 8 : 3;
      const shown = s.skipped.slice(0, show).map((x) => (zh ? `#${x.index + 1}` : `#${x.index + 1} (${x.reason})`)).join(zh ? '、' : '; ');
      c.sum.push(t('skipped', k, k > show ? `${shown}${zh ? '，' : '; '}${t('andMore', k - show)}` : shown));
    }
    if (s.n === 0) c.sum.push(t('noPairLeft'));
    if (s.n === 1) c.notes.push(t('oneInput'));
    c.notes.push(t('notePatSet'), t('notePatGap', c.d.minGap ?? 1), t('notePatNot'));
  }

  /** "effects above the noise floor: a of b (ε = …)" and how ε was chosen. */
  #floor(c, s, last) {
    if (!c || s.eps === undefined || s.eps === null) return null;
    const t = this.t, sep = this.env.lang() === 'zh' ? '' : ' ';
    return t('floor', fint(c.nAboveFloor), fint(c.nPoints), fexp(s.eps)) +
      (last ? sep + t('floorLast', fint(last.nAboveFloor), fint(last.nPoints)) : '') +
      (s.noise ? sep + t('floorHow', s.noise.factor, s.noise.inputs) : '');
  }

  /** What a card's export computed on, for its <desc>: the source, and the edge card's layer, head and knockout. */
  #exportView(id) {
    const out = [`source ${this.#source(id)}`, 'mask: the model\'s own (causal)'];
    if (id === 'ev-edge') out.unshift(`layer ${$('ev-edge-layer').value}`, `head ${$('ev-edge-head').value}`, `knockout ${$('ev-edge-ko').value}`);
    return out;
  }

  async #export(id, kind) {
    const charts = this.charts[id];
    if (!charts) return;
    if (kind === 'json') return exportJsonData(this.data[`${id}:json`], FILES[id]);
    const title = $(`${id}-h`).textContent;
    await exportSvgNode(composeSvg(charts, { title, lang: this.env.lang() }), FILES[id], kind, cardDesc(title, ...(this.data[id]?.view || [])));
  }
}
