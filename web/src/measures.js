// measures.js — the bodies of the Model's measures, one export per row of measure-table.js and of the same name:
// the heads' (docs/heads.md) and the evidence and circuit measures (docs/evidence.md). Each checks its options
// against its row's list (optionsOf), tokenizes its inputs and pairs, and either returns its value or, for a
// stepwise row, sets up a generator of evidence.js / circuits.js as a job ({steps, progress, finish}) that
// model.js runs to the end and worker.js runs in parts. Each takes the model's view `m` (model.js): {w: the live
// AttnlabWasm (EDISPOSED once disposed), h: the model handle, config, token(id), idsOf(input), decode(ids),
// run(input, options), layerNull(l, mode, window, T), headOutCache}. What each measure computes and returns:
// docs/api.md and types/index.d.ts.

import { AttnlabError } from './core/errors.js';
import { C, MASKS } from './core/abi.js';
import { checkIndex } from './analysis.js';
import { alignTokens, attentionDiff, nextTokenDiff } from './counterfactual.js';
import * as evidence from './evidence.js';
import * as circuits from './circuits.js';
import { REFERENCE_TEXT } from './evidence-reference.js';
import { MEASURES } from './measure-table.js';
import { setInputs, setPairs } from './sets.js';
import { checkWork } from './work.js';
import {
  INT_MAX, checkOptions, textBytes, parseMask, parseInterventions, progressOptions, knockoutMode, setStats,
  denseArray, lookup, show, table,
} from './options.js';

const MASK_MODES = table(MASKS);
// the token knockout's modes (tokenMode)
const TOKEN_MODES = table({ column: 'column', delete: 'delete', replace: 'replace' });

/** A measure's options, checked against the names its row of measure-table.js lists. */
function optionsOf(name, options) {
  return checkOptions(name, options, MEASURES[name].options);
}

// ---- heads: importance and roles (c/src/heads.c; docs/heads.md) ----

export function headImportance(m, input, options) {
  const w = m.w;
  const o = optionsOf('headImportance', options);
  if (o.pruning !== undefined && typeof o.pruning !== 'boolean')
    throw new AttnlabError('ETYPE', 'headImportance: options.pruning must be a boolean');
  const ids = m.idsOf(input);
  if (ids.length < 2) throw new AttnlabError('EEMPTY', `headImportance needs at least 2 tokens, got ${ids.length}`);
  if (ids.length > m.config.nPositions)
    throw new AttnlabError('ETOOLONG', `${ids.length} tokens exceed n_positions = ${m.config.nPositions}`);
  const { nLayer, nHead } = m.config;
  const LH = nLayer * nHead;
  const { baseLoss, delta } = w.headImportance(m.h, ids);
  let order, pruning = null, lossAtHalf = null;
  if (o.pruning === false) {
    order = Int32Array.from(delta.keys()).sort((a, b) => delta[a] - delta[b] || a - b);
  } else {
    const c = w.pruningCurve(m.h, ids, delta);
    order = c.order;
    pruning = c.loss;
    lossAtHalf = pruning[Math.floor(LH / 2)];
  }
  return { baseLoss, delta, order, pruning, lossAtHalf, nLayer, nHead, T: ids.length };
}

export function headRoles(m, input, options) {
  const w = m.w;
  const o = optionsOf('headRoles', options);
  const nTop = o.top === undefined ? 3 : checkIndex('top', o.top, 0, INT_MAX);
  const ids = m.idsOf(input);
  if (ids.length < 1) throw new AttnlabError('EEMPTY', 'headRoles needs at least 1 token');
  if (ids.length > m.config.nPositions)
    throw new AttnlabError('ETOOLONG', `${ids.length} tokens exceed n_positions = ${m.config.nPositions}`);
  const { nLayer, nHead } = m.config;
  w.forward(m.h, ids, { interventions: parseInterventions(o.interventions, o.ablate, m.config, ids.length) });
  const T = ids.length;
  const r = w.headRoles(w.resultAttention(m.h), ids, nLayer, nHead, T);
  const rank = (s) => Array.from(s.keys()).sort((a, b) => s[b] - s[a] || a - b).slice(0, nTop)
    .map((i) => ({ layer: Math.floor(i / nHead), head: i % nHead, score: s[i] }));
  const top = { prev: rank(r.prev), sink: rank(r.sink), dup: rank(r.dup),
                induction: r.inductionDefined ? rank(r.induction) : [] };
  return { ...r, top, nLayer, nHead, T };
}

export function tokenLosses(m, input, options) {
  const w = m.w;
  const o = optionsOf('tokenLosses', options);
  const ids = m.idsOf(input);
  if (ids.length < 2) throw new AttnlabError('EEMPTY', 'tokenLosses needs at least 2 tokens');
  if (ids.length > m.config.nPositions)
    throw new AttnlabError('ETOOLONG', `${ids.length} tokens exceed n_positions = ${m.config.nPositions}`);
  const interventions = parseInterventions(o.interventions, o.ablate, m.config, ids.length);
  w.forward(m.h, ids, { interventions, ...parseMask(o.mask, m.config.nLayer) });
  const losses = w.resultNllEach(m.h, ids.length);
  let sum = 0;
  for (const v of losses) sum += v;
  return { losses, mean: sum / losses.length, T: ids.length };
}

export function dagProfile(m, inputs, options) {
  const w = m.w;
  const o = optionsOf('dagProfile', options);
  const maskName = o.mask === undefined ? 'causal' : o.mask;
  if (maskName !== 'causal' && maskName !== 'full')
    throw new AttnlabError(typeof maskName === 'string' ? 'EINVAL' : 'ETYPE', `dagProfile: options.mask must be 'causal' or 'full', got ${show(maskName)}`);
  // a list of inputs, or one input (ids: numbers); a list is dense and holds at most EVIDENCE_MAX_N inputs
  const list = Array.isArray(inputs) && inputs.length > 0 && typeof inputs[0] !== 'number'
    ? denseArray('dagProfile: inputs', inputs, C.EVIDENCE_MAX_N) : [inputs];
  const { nLayer, nHead } = m.config;
  const idsList = list.map((x) => m.idsOf(x)); // check every input before running any
  idsList.forEach((ids, k) => {
    if (ids.length < 1) throw new AttnlabError('EEMPTY', `dagProfile: input ${k} has no tokens`);
    if (ids.length > m.config.nPositions)
      throw new AttnlabError('ETOOLONG', `dagProfile: input ${k} has ${ids.length} tokens > n_positions = ${m.config.nPositions}`);
  });
  const mean = { head: new Float64Array(nLayer * nHead), layer: new Float64Array(nLayer), overall: 0, null: 0 };
  const sentences = idsList.map((ids) => {
    const T = ids.length;
    w.forward(m.h, ids, { mask: lookup(MASK_MODES, maskName) });
    const p = w.dagProfile(w.resultAttention(m.h), nLayer, nHead, T);
    const overall = p.layer.reduce((a, b) => a + b, 0) / nLayer;
    let nul = 0; // the layers' mean, as overall: each layer's own mask under 'causal'
    for (let l = 0; l < nLayer; l++) nul += m.layerNull(l, MASKS[maskName], 0, T) / nLayer;
    p.head.forEach((x, i) => { mean.head[i] += x / idsList.length; });
    p.layer.forEach((x, i) => { mean.layer[i] += x / idsList.length; });
    mean.overall += overall / idsList.length;
    mean.null += nul / idsList.length;
    return { T, head: p.head, layer: p.layer, overall, null: nul };
  });
  return { mask: maskName, sentences, mean, nLayer, nHead };
}

/**
 * Two runs with the same run options (checked by run) and how they differ: which positions align, the attention
 * difference B − A on A's positions (NaN where a row or column has no partner), the next-token distributions.
 */
export function counterfactual(m, inputA, inputB, options) {
  const a = m.run(inputA, options);
  const b = m.run(inputB, options);
  const alignment = alignTokens(a.ids, b.ids);
  const { attentionDiff: avg, headDiff } = attentionDiff(a, b, alignment.pairs);
  const next = nextTokenDiff(a.logits, b.logits, { k: 10, token: (id) => m.token(id) });
  return { a, b, alignment, aligned: alignment.pairs, attentionDiff: avg, headDiff, next };
}

// ---- inputs ----

function evidenceInput(m, where, input) {
  const ids = m.idsOf(input);
  if (ids.length < 2) throw new AttnlabError('EEMPTY', `${where} needs at least 2 tokens, got ${ids.length}`);
  if (ids.length > m.config.nPositions)
    throw new AttnlabError('ETOOLONG', `${where}: ${ids.length} tokens exceed n_positions = ${m.config.nPositions}`);
  return ids;
}

// A one-token answer or neutral token: an id, or a text that is exactly one token.
function oneToken(m, where, name, v) {
  if (typeof v !== 'string') return checkIndex(name, v, 0, m.config.vocabSize - 1);
  // an answer is a token of text, not a run's input: without the BOS a Llama 3 tokenizer puts first
  const t = m.w.encodePlain(m.h, textBytes(v));
  if (t.length !== 1) throw new AttnlabError('EINVAL', `${where}: ${name} ${JSON.stringify(v)} is ${t.length} tokens, not one`);
  return t[0];
}

// The default replacement token of a token knockout: " the" when it is one token (a frequent word that
// carries little content), else id 0. The CLI uses the same rule.
function defaultNeutral(m) {
  const t = m.idsOf(' the');
  return t.length === 1 ? t[0] : 0;
}

// The token knockout's mode (column, columnZero, delete, replace) and neutral token from options.
function tokenMode(m, where, o) {
  let mode = o.mode ?? 'column';
  if (lookup(TOKEN_MODES, mode) === undefined)
    throw new AttnlabError(typeof mode === 'string' ? 'EINVAL' : 'ETYPE', `${where}: options.mode must be 'column', 'delete' or 'replace', not ${show(mode)}`);
  if (mode !== 'column' && o.knockout !== undefined)
    throw new AttnlabError('EINVAL', `${where}: options.knockout applies to the column knockout, not to mode '${mode}'`);
  if (mode === 'column' && knockoutMode(where, o.knockout) === 'zero') mode = 'columnZero';
  const neutral = o.neutral === undefined ? defaultNeutral(m) : oneToken(m, where, 'neutral', o.neutral);
  const V = m.config.vocabSize;
  if (neutral < 0 || neutral >= V) throw new AttnlabError('ERANGE', `${where}: the neutral token ${neutral} is outside [0, ${V})`);
  return { mode, neutral };
}

// The ids of a reference text (default REFERENCE_TEXT), cut at n_positions.
function referenceIds(m, where, v, name = 'reference') {
  const r = m.idsOf(v === undefined ? REFERENCE_TEXT : v);
  if (r.length < 1) throw new AttnlabError('EEMPTY', `${where}: the ${name} text has no tokens`);
  const P = m.config.nPositions;
  return r.length > P ? r.subarray(0, P) : r;
}

// The head outputs of a reference text, computed once per model and text (the default reference's
// serve every ablationSemantics call); a few are kept.
function headOutputs(m, ids) {
  const key = Array.prototype.join.call(ids, ',');
  let v = m.headOutCache.get(key);
  if (!v) {
    const { nLayer, nHead, headDim } = m.config;
    v = evidence.captureHeadOutputs(m.w, m.h, ids, nLayer, nHead * headDim);
    if (m.headOutCache.size >= 4) m.headOutCache.delete(m.headOutCache.keys().next().value);
    m.headOutCache.set(key, v);
  }
  return v;
}

// The inputs of a set as ids, cut at n_positions; with `points` (evidence.js's SET_POINTS.edge or .tokens) the
// set's points are counted as the inputs are tokenized, and a set over the cap is ELIMIT at the input that
// crosses it, before the rest is tokenized and before any forward pass.
export function evidenceSet(m, set, options, points = null, where = 'evidence set') {
  const { limit } = checkOptions('evidenceSet', options, ['limit']);
  let list = setInputs(set);
  if (!Array.isArray(list) || list.length === 0) throw new AttnlabError('ETYPE', 'an evidence set is a name or a non-empty list of inputs');
  if (limit !== undefined) list = list.slice(0, checkIndex('limit', limit, 1, INT_MAX));
  denseArray(`${where}: the set`, list); // a hole is EINVAL, not a raw TypeError (edgeKnockoutSet(new Array(3)))
  let total = 0;
  return list.map((x, k) => {
    if (Array.isArray(x) && x.some((id) => !Number.isInteger(id) || id < 0 || id >= m.config.vocabSize))
      throw new AttnlabError('ERANGE', `evidence set input ${k}: a token id outside [0, ${m.config.vocabSize})`);
    const ids = m.idsOf(x);
    if (ids.length < 2) throw new AttnlabError('EEMPTY', `evidence set input ${k} has ${ids.length} tokens; at least 2 are needed`);
    const P = m.config.nPositions;
    const cut = ids.length > P ? ids.slice(0, P) : ids;
    if (points && (total += points(cut.length)) > C.EVIDENCE_MAX_N)
      throw new AttnlabError('ELIMIT', `${where}: the set holds more than ${C.EVIDENCE_MAX_N} points (ALAB_EVIDENCE_MAX_N) by its input ${k} ` +
        `(${total} so far), checked before the first forward pass; use options.limit = ${Math.max(k, 1)} or fewer inputs`);
    return cut;
  });
}

// ---- one input: the stepwise evidence measures (docs/evidence.md § 2-4) ----

/** A stepwise measure's finish on one input: its result with the input's ids and tokens. */
const withTokens = (m, ids) => (r) => ({ ...r, ids, tokens: Array.from(ids, (id) => m.token(id)) });

export function edgeKnockout(m, input, options) {
  const w = m.w;
  const o = optionsOf('edgeKnockout', options);
  const { nLayer, nHead } = m.config;
  const layer = o.layer === undefined ? nLayer - 1 : checkIndex('layer', o.layer, 0, nLayer - 1);
  const head = o.head === undefined || o.head === 'all' ? 'all' : checkIndex('head', o.head, 0, nHead - 1);
  const ids = evidenceInput(m, 'edgeKnockout', input);
  const topK = o.topK === undefined ? undefined : checkIndex('topK', o.topK, 1, INT_MAX);
  const mode = knockoutMode('edgeKnockout', o.knockout);
  checkWork('edgeKnockout', m.config, [ids.length], { layer }, o.budget);
  return { steps: evidence.edgeKnockoutSteps(w, m.h, ids, { layer, head, topK, nLayer, mode }),
           progress: progressOptions('edgeKnockout', o),
           finish: withTokens(m, ids) };
}

export function tokenKnockout(m, input, options) {
  const w = m.w;
  const o = optionsOf('tokenKnockout', options);
  const ids = evidenceInput(m, 'tokenKnockout', input);
  const { nLayer, nHead } = m.config;
  const { mode, neutral } = tokenMode(m, 'tokenKnockout', o);
  checkWork('tokenKnockout', m.config, [ids.length], {}, o.budget);
  return { steps: evidence.tokenKnockoutSteps(w, m.h, ids, { nLayer, nHead, mode, neutral }),
           progress: progressOptions('tokenKnockout', o),
           finish: withTokens(m, ids) };
}

export function ablationSemantics(m, input, options) {
  const w = m.w;
  const o = optionsOf('ablationSemantics', options);
  const ids = evidenceInput(m, 'ablationSemantics', input);
  const reference = referenceIds(m, 'ablationSemantics', o.reference);
  // without a resample text: K seeded windows of the reference (the CLI's default too); with one: its run, aligned
  if (o.resample !== undefined && o.draws !== undefined)
    throw new AttnlabError('EINVAL', 'ablationSemantics: options.draws takes windows of the reference; it does not go with options.resample');
  const draws = o.resample === undefined ? (o.draws === undefined ? 20 : checkIndex('draws', o.draws, 1, 10000)) : 0;
  const seed = o.seed === undefined ? 1 : checkIndex('seed', o.seed, 0, 0xffffffff);
  const resample = o.resample === undefined ? reference : referenceIds(m, 'ablationSemantics', o.resample, 'resample');
  if (resample.length < ids.length)
    throw new AttnlabError('ETOOLONG', `ablationSemantics: the ${draws ? 'reference' : 'resample'} text has ${resample.length} tokens, fewer than the input's ${ids.length}`);
  const { nLayer, nHead } = m.config;
  checkWork('ablationSemantics', m.config, [ids.length], { refT: reference.length, draws: Math.max(draws, 1) }, o.budget);
  const refOut = headOutputs(m, reference), resOut = resample === reference ? refOut : headOutputs(m, resample);
  return { steps: evidence.ablationSemanticsSteps(w, m.h, ids, { reference, resample, refOut, resOut, nLayer, nHead, draws, seed }),
           progress: progressOptions('ablationSemantics', o),
           finish: withTokens(m, ids) };
}

// ---- over a set of inputs (docs/evidence.md § 5) ----

export function edgeKnockoutSet(m, set, options) {
  const w = m.w;
  const o = optionsOf('edgeKnockoutSet', options);
  const { nLayer, nHead } = m.config;
  const layer = o.layer === undefined ? nLayer - 1 : checkIndex('layer', o.layer, 0, nLayer - 1);
  const head = o.head === undefined || o.head === 'all' ? 'all' : checkIndex('head', o.head, 0, nHead - 1);
  const mode = knockoutMode('edgeKnockoutSet', o.knockout);
  const inputs = evidenceSet(m, set, { limit: o.limit }, evidence.SET_POINTS.edge, 'edgeKnockoutSet');
  const count = (name, v, lo) => (v === undefined ? undefined : checkIndex(name, v, lo, 1000000));
  const nBoot = count('nBoot', o.nBoot, 0), nPerm = count('nPerm', o.nPerm, 0);
  const seed = o.seed === undefined ? undefined : checkIndex('seed', o.seed, 0, 0xffffffff);
  if (o.level !== undefined && !(typeof o.level === 'number' && o.level > 0 && o.level < 1))
    throw new AttnlabError('ERANGE', 'edgeKnockoutSet: options.level must be in (0, 1)');
  if (o.epsilon !== undefined && !(typeof o.epsilon === 'number' && o.epsilon >= 0 && Number.isFinite(o.epsilon)))
    throw new AttnlabError('ERANGE', 'edgeKnockoutSet: options.epsilon must be a finite number >= 0');
  const epsilon = o.epsilon === undefined ? undefined : o.epsilon + 0; // -0 is 0
  checkWork('edgeKnockoutSet', m.config, inputs.map((x) => x.length), { layer, noise: epsilon === undefined ? 10 : 0,
    resamples: (nBoot ?? evidence.SET_DEFAULTS.nBoot) + (nPerm ?? evidence.SET_DEFAULTS.nPerm) }, o.budget);
  return { steps: evidence.edgeKnockoutSetSteps(w, m.h, inputs, { layer, head, nLayer, nHead: m.config.nHead, mode, nBoot, nPerm, seed,
             level: o.level, epsilon }),
           progress: progressOptions('edgeKnockoutSet', o),
           finish: (r) => ({ ...r, set: typeof set === 'string' ? set : 'list' }) };
}

export function tokenKnockoutSet(m, set, options) {
  const w = m.w;
  const o = optionsOf('tokenKnockoutSet', options);
  const { nLayer, nHead } = m.config;
  const { mode, neutral } = tokenMode(m, 'tokenKnockoutSet', o);
  if (o.epsilon !== undefined && !(typeof o.epsilon === 'number' && o.epsilon >= 0 && Number.isFinite(o.epsilon)))
    throw new AttnlabError('ERANGE', 'tokenKnockoutSet: options.epsilon must be a finite number >= 0');
  const inputs = evidenceSet(m, set, { limit: o.limit }, evidence.SET_POINTS.tokens, 'tokenKnockoutSet');
  const stats = setStats('tokenKnockoutSet', o), epsilon = o.epsilon === undefined ? undefined : o.epsilon + 0; // -0 is 0
  checkWork('tokenKnockoutSet', m.config, inputs.map((x) => x.length), { noise: epsilon === undefined ? 10 : 0,
    resamples: (stats.nBoot ?? evidence.SET_DEFAULTS.nBoot) + (stats.nPerm ?? evidence.SET_DEFAULTS.nPerm) }, o.budget);
  return { steps: evidence.tokenKnockoutSetSteps(w, m.h, inputs, { nLayer, nHead, mode, neutral, epsilon, ...stats }),
           progress: progressOptions('tokenKnockoutSet', o),
           finish: (r) => ({ ...r, set: typeof set === 'string' ? set : 'list' }) };
}

export function ablationSet(m, set, options) {
  const w = m.w;
  const o = optionsOf('ablationSet', options);
  const inputs = evidenceSet(m, set, { limit: o.limit }, evidence.SET_POINTS.perInput, 'ablationSet');
  const refIds = referenceIds(m, 'ablationSet', o.reference);
  const draws = o.draws === undefined ? 20 : checkIndex('draws', o.draws, 1, 10000);
  const { nLayer, nHead } = m.config;
  checkWork('ablationSet', m.config, inputs.map((x) => x.length), { refT: refIds.length, draws }, o.budget);
  return { steps: evidence.ablationSetSteps(w, m.h, inputs, { refIds, refOut: headOutputs(m, refIds), nLayer, nHead,
             draws, ...setStats('ablationSet', o) }),
           progress: progressOptions('ablationSet', o),
           finish: (r) => ({ ...r, set: typeof set === 'string' ? set : 'list' }) };
}

export function patchingSet(m, pairs, options) {
  const w = m.w;
  const o = optionsOf('patchingSet', options);
  const prepared = preparePairs(m, 'patchingSet', pairs, o, {});
  const { nLayer, nHead } = m.config;
  return { steps: evidence.patchingSetSteps(w, m.h, prepared, { nLayer, nHead, minGap: o.minGap ?? 1, ...setStats('patchingSet', o) }),
           progress: progressOptions('patchingSet', o),
           finish: (r) => pairsFinish(m, r, pairs, prepared) };
}

// ---- clean/corrupted pairs ----

/** A set of clean/corrupted pairs as ids with answers: a built-in set's name or a list (patchingSet's forms). */
function preparePairs(m, where, pairs, o, work) {
  const w = m.w;
  if (o.minGap !== undefined && !(typeof o.minGap === 'number' && o.minGap >= 0 && Number.isFinite(o.minGap)))
    throw new AttnlabError('ERANGE', `${where}: options.minGap must be a finite number >= 0`);
  let list = setPairs(where, pairs, m.config.vocabSize);
  if (!Array.isArray(list) || list.length === 0) throw new AttnlabError('ETYPE', `${where}: pairs must be a built-in set's name or a non-empty list of [clean, corrupted]`);
  if (o.limit !== undefined) list = list.slice(0, checkIndex('limit', o.limit, 1, INT_MAX));
  denseArray(`${where}: pairs`, list);
  evidence.checkSetPoints(where, list, evidence.SET_POINTS.perInput); // before the answers' forward passes
  const ids = list.map((p, k) => {
    if (!Array.isArray(p) || p.length < 2 || p.length > 3) throw new AttnlabError('ETYPE', `${where}: pair ${k} is not [clean, corrupted] or [clean, corrupted, answers]`);
    denseArray(`${where}: pair ${k}`, p);
    const c = evidenceInput(m, `${where} pair ${k} (clean)`, p[0]);
    const d = evidenceInput(m, `${where} pair ${k} (corrupted)`, p[1]);
    if (c.length !== d.length)
      throw new AttnlabError('EINVAL', `${where}: pair ${k} has ${c.length} and ${d.length} tokens; they must be equal`);
    return [c, d];
  });
  checkWork(where, m.config, ids.map(([c]) => c.length), work, o.budget); // before the answers' forward passes
  return list.map((p, k) => {
    const [c, d] = ids[k];
    let answers;
    if (p[2] === undefined) answers = [c, d].map((x) => { w.forward(m.h, x); return w.resultTopk(m.h, 1).ids[0]; });
    else {
      if (!Array.isArray(p[2]) || p[2].length !== 2)
        throw new AttnlabError('ETYPE', `${where}: pair ${k}'s answers must be [clean answer, corrupted answer]`);
      denseArray(`${where}: pair ${k}'s answers`, p[2]);
      answers = p[2].map((a) => oneToken(m, `${where} pair ${k}`, 'answer', a));
    }
    return { clean: c, corrupt: d, answers };
  });
}

function pairsFinish(m, r, pairs, prepared) {
  return { ...r, set: typeof pairs === 'string' ? pairs : 'list',
    perInput: r.perInput.map((x) => ({ ...x, clean: m.decode(prepared[x.index].clean), corrupt: m.decode(prepared[x.index].corrupt),
      answerTokens: x.answers.map((id) => m.token(id)) })) };
}

/** One pair's answers: [a, b] as one-token strings or ids, or the top next token of each run. */
function pairAnswers(m, where, c, d, answers) {
  const w = m.w;
  if (answers === undefined) return [c, d].map((x) => { w.forward(m.h, x); return w.resultTopk(m.h, 1).ids[0]; });
  if (!Array.isArray(answers) || answers.length !== 2)
    throw new AttnlabError('ETYPE', `${where}: options.answers must be [clean answer, corrupted answer]`);
  denseArray(`${where}: options.answers`, answers);
  return answers.map((a) => oneToken(m, where, 'answer', a));
}

function pair(m, where, clean, corrupt, o, work = {}) {
  const c = evidenceInput(m, `${where} (clean)`, clean);
  const d = evidenceInput(m, `${where} (corrupted)`, corrupt);
  if (c.length !== d.length)
    throw new AttnlabError('EINVAL', `${where}: the clean input has ${c.length} tokens, the corrupted one ${d.length}; they must be equal`);
  checkWork(where, m.config, [c.length], work, o.budget); // before the answers' forward passes
  return { c, d, answers: pairAnswers(m, where, c, d, o.answers) };
}

function pairTokens(m, c, d, answers) {
  return { tokens: Array.from(c, (id) => m.token(id)), corruptTokens: Array.from(d, (id) => m.token(id)),
           answerTokens: answers.map((id) => m.token(id)) };
}

/** The warning gap below which one pair's normalised scores are flagged (the sets' default minGap). */
const ONE_PAIR_MIN_GAP = 1;

/**
 * The signed gap ldClean − ldCorrupt every normalised score of one pair divides by, and a warning when it is
 * below ONE_PAIR_MIN_GAP nats (a set would skip the pair: gapShortfall of evidence.js); the scores are kept.
 */
function gapOf(r) {
  const gap = r.ldClean - r.ldCorrupt;
  const short = evidence.gapShortfall(r, ONE_PAIR_MIN_GAP);
  return short ? { gap, warning: `the scores divide by a small or negative gap: ${short}; a set would skip this pair` } : { gap };
}

export function activationPatching(m, clean, corrupt, options) {
  const w = m.w;
  const o = optionsOf('activationPatching', options);
  const c = evidenceInput(m, 'activationPatching (clean)', clean);
  const d = evidenceInput(m, 'activationPatching (corrupted)', corrupt);
  if (c.length !== d.length)
    throw new AttnlabError('EINVAL', `activationPatching: the clean input has ${c.length} tokens, the corrupted one ${d.length}; they must be equal`);
  checkWork('activationPatching', m.config, [c.length], {}, o.budget);
  let answers;
  if (o.answers === undefined) {
    answers = [c, d].map((x) => { w.forward(m.h, x); return w.resultTopk(m.h, 1).ids[0]; });
  } else {
    if (!Array.isArray(o.answers) || o.answers.length !== 2)
      throw new AttnlabError('ETYPE', 'activationPatching: options.answers must be [clean answer, corrupted answer]');
    denseArray('activationPatching: options.answers', o.answers);
    answers = o.answers.map((a, k) => {
      return oneToken(m, 'activationPatching', `answer ${k}`, a);
    });
  }
  const r = evidence.activationPatching(w, m.h, c, d, { answers, nLayer: m.config.nLayer, nHead: m.config.nHead });
  return { ...r, ...pairTokens(m, c, d, answers), ...gapOf(r) };
}

// ---- where a head looks versus what it moves (docs/evidence.md § 6-11) ----

export function patternValuePatching(m, clean, corrupt, options) {
  const o = optionsOf('patternValuePatching', options);
  const { c, d, answers } = pair(m, 'patternValuePatching', clean, corrupt, o);
  const r = circuits.patternValuePatching(m.w, m.h, c, d, { answers, nLayer: m.config.nLayer, nHead: m.config.nHead });
  return { ...r, ...pairTokens(m, c, d, answers), ...gapOf(r) };
}

export function pathPatching(m, clean, corrupt, options) {
  const o = optionsOf('pathPatching', options);
  const R = circuits.receiversOf(o.receivers, m.config.nLayer, m.config.nHead);
  if (o.direction !== undefined) circuits.checkDirection('pathPatching', o.direction);
  const { c, d, answers } = pair(m, 'pathPatching', clean, corrupt, o, { receivers: R.length });
  const r = circuits.pathPatching(m.w, m.h, c, d, { answers, receivers: o.receivers, direction: o.direction ?? 'denoise',
    freezeMlp: !!o.freezeMlp, nLayer: m.config.nLayer, nHead: m.config.nHead });
  return { ...r, ...pairTokens(m, c, d, answers), ...gapOf(r) };
}

export function directLogitAttribution(m, input, options) {
  const o = optionsOf('directLogitAttribution', options);
  const ids = evidenceInput(m, 'directLogitAttribution', input);
  checkWork('directLogitAttribution', m.config, [ids.length], {}, o.budget);
  if (!Array.isArray(o.answers) || o.answers.length < 1 || o.answers.length > 2)
    throw new AttnlabError('ETYPE', 'directLogitAttribution: options.answers must be [answer] or [answer, other answer]');
  denseArray('directLogitAttribution: options.answers', o.answers);
  const answers = o.answers.map((a) => oneToken(m, 'directLogitAttribution', 'answer', a));
  const r = circuits.directLogitAttribution(m.w, m.h, ids, { answers, nLayer: m.config.nLayer, nHead: m.config.nHead });
  return { ...r, tokens: Array.from(ids, (id) => m.token(id)), answerTokens: answers.map((id) => m.token(id)) };
}

export function valueNorms(m, input) {
  const ids = evidenceInput(m, 'valueNorms', input);
  return circuits.valueNorms(m.w, m.h, ids, { nLayer: m.config.nLayer, nHead: m.config.nHead });
}

export function componentTracing(m, clean, corrupt, options) {
  const o = optionsOf('componentTracing', options);
  const { c, d, answers } = pair(m, 'componentTracing', clean, corrupt, o);
  const r = circuits.componentTracing(m.w, m.h, c, d, { answers, nLayer: m.config.nLayer });
  return { ...r, ...pairTokens(m, c, d, answers), ...gapOf(r) };
}

export function compositionScores(m, options) {
  const o = optionsOf('compositionScores', options);
  if (m.config.nLayer < 2) throw new AttnlabError('EINVAL', 'compositionScores: a one-layer model has no pair of layers');
  const nNull = o.nNull === undefined ? 200 : checkIndex('nNull', o.nNull, 0, 100000);
  const seed = o.seed === undefined ? 1 : checkIndex('seed', o.seed, 0, 0xffffffff);
  checkWork('compositionScores', m.config, [], { nNull }, o.budget);
  return circuits.compositionScores(m.w, m.h, { nLayer: m.config.nLayer, nHead: m.config.nHead, nNull, seed });
}

// The four circuit measures over a set of pairs share their pairs, statistics and finish.
function circuitSet(m, kind, pairs, options, stepsOf, work = () => ({})) {
  const o = optionsOf(kind, options);
  const prepared = preparePairs(m, kind, pairs, o, work(o));
  const { nLayer, nHead } = m.config;
  const base = { nLayer, nHead, minGap: o.minGap ?? 1, ...setStats(kind, o) };
  return { steps: stepsOf(m.w, prepared, base, o), progress: progressOptions(kind, o), finish: (r) => pairsFinish(m, r, pairs, prepared) };
}

export function patternValueSet(m, pairs, options) {
  return circuitSet(m, 'patternValueSet', pairs, options, (w, prepared, base, o) => {
    if (o.minEffect !== undefined && !(typeof o.minEffect === 'number' && o.minEffect >= 0 && Number.isFinite(o.minEffect)))
      throw new AttnlabError('ERANGE', 'patternValueSet: options.minEffect must be a finite number >= 0');
    return circuits.patternValueSetSteps(w, m.h, prepared, { ...base, minEffect: o.minEffect ?? 0.1 });
  });
}

export function pathPatchingSet(m, pairs, options) {
  return circuitSet(m, 'pathPatchingSet', pairs, options, (w, prepared, base, o) => {
    return circuits.pathPatchingSetSteps(w, m.h, prepared, { ...base, receivers: o.receivers, direction: o.direction ?? 'denoise', freezeMlp: !!o.freezeMlp });
  }, (o) => { // receivers and direction checked before any pair runs (a bad one gave n: 0, every pair skipped)
    const receivers = circuits.receiversOf(o.receivers, m.config.nLayer, m.config.nHead).length;
    if (o.direction !== undefined) circuits.checkDirection('pathPatchingSet', o.direction);
    return { receivers };
  });
}

export function componentTracingSet(m, pairs, options) {
  return circuitSet(m, 'componentTracingSet', pairs, options, (w, prepared, base) => circuits.componentTracingSetSteps(w, m.h, prepared, base));
}

export function attributionSet(m, pairs, options) {
  return circuitSet(m, 'attributionSet', pairs, options, (w, prepared, base) => circuits.attributionSetSteps(w, m.h, prepared, base));
}

// ---- readings from gradients (c/src/backward.c; docs/evidence.md § 12) ----

const GRAD_METRICS = table({ logitDiff: C.METRIC_LOGIT_DIFF, logProb: C.METRIC_LOGPROB, loss: C.METRIC_LOSS });

/** gradientReadings' options checked: {metric, code, answers, baseline ('zero' or an id), steps}. */
function gradientOptions(m, o, T) {
  const where = 'gradientReadings';
  let answers = [];
  if (o.answers !== undefined) {
    if (!Array.isArray(o.answers) || o.answers.length < 1 || o.answers.length > 2)
      throw new AttnlabError('ETYPE', `${where}: options.answers must be [answer] or [answer, other answer]`);
    denseArray(`${where}: options.answers`, o.answers);
    answers = o.answers.map((a, k) => oneToken(m, where, `answer ${k}`, a));
  }
  const metric = o.metric ?? (answers.length === 2 ? 'logitDiff' : 'logProb');
  const code = lookup(GRAD_METRICS, metric);
  if (code === undefined)
    throw new AttnlabError(typeof metric === 'string' ? 'EINVAL' : 'ETYPE', `${where}: options.metric must be 'logitDiff', 'logProb' or 'loss', not ${show(metric)}`);
  if (metric === 'logitDiff' && answers.length !== 2)
    throw new AttnlabError('EINVAL', `${where}: metric 'logitDiff' needs options.answers = [answer, other answer]`);
  if (metric === 'logProb' && answers.length > 1)
    throw new AttnlabError('EINVAL', `${where}: metric 'logProb' takes one answer (default: the top next token)`);
  if (metric === 'loss' && answers.length)
    throw new AttnlabError('EINVAL', `${where}: metric 'loss' takes no answers (it reads the input's own next tokens)`);
  if (metric === 'loss' && T < 2) throw new AttnlabError('EEMPTY', `${where}: metric 'loss' needs at least 2 tokens, got ${T}`);
  const baseline = o.baseline === undefined || o.baseline === 'zero' ? 'zero'
    : typeof o.baseline === 'string' ? oneToken(m, where, 'baseline', o.baseline)
    : checkIndex('baseline', o.baseline, 0, m.config.vocabSize - 1);
  const steps = o.steps === undefined ? 32 : checkIndex('steps', o.steps, 1, 4096);
  return { metric, code, answers, baseline, steps };
}

export function gradientReadings(m, input, options) {
  const o = optionsOf('gradientReadings', options);
  const ids = m.idsOf(input);
  if (ids.length < 1) throw new AttnlabError('EEMPTY', 'gradientReadings needs at least 1 token');
  if (ids.length > m.config.nPositions)
    throw new AttnlabError('ETOOLONG', `gradientReadings: ${ids.length} tokens exceed n_positions = ${m.config.nPositions}`);
  const g = gradientOptions(m, o, ids.length);
  checkWork('gradientReadings', m.config, [ids.length], { steps: g.steps }, o.budget);
  return { steps: gradientSteps(m, ids, g), progress: progressOptions('gradientReadings', o),
           finish: (r) => ({ ...r, ids, tokens: Array.from(ids, (id) => m.token(id)),
                             answerTokens: r.answers.map((id) => m.token(id)) }) };
}

// The tape of a plain run of ids from embedding rows at pRows (0: the lookup), and its backward into pG: the value.
function tapeBackward(w, h, pIds, T, pRows, pTape, pG, nG, pVal, g, want) {
  w.wasmTapeForward(pTape, h, pIds, T, 0, 0, MASKS.causal, 0, 0, 0, 0, 0, pRows);
  const tape = w.i32[pTape >>> 2] >>> 0;
  try {
    const att = want & (1 << C.GRAD_ATTN) ? w.resultAttention(h) : null; // the run's, before the backward reuses it
    w.backward(pG, nG, pVal, h, tape, g.code, g.answers[0] ?? 0, g.answers[1] ?? 0, want);
    return { att, value: new DataView(w.memory.buffer).getFloat64(pVal, true) };
  } finally {
    w.tapeFree(tape);
  }
}

// The readings as a generator: the input's gradients (1 part), the baseline's value, then one part per step of
// the integrated gradients' path; wasm memory freed on return or when abandoned.
function* gradientSteps(m, ids, g) {
  const w = m.w, h = m.h, T = ids.length, { nLayer: L, nHead: NH, nEmbd: Cd } = m.config;
  const TC = T * Cd, want = (1 << C.GRAD_EMBED) | (1 << C.GRAD_ATTN), total = g.steps + 2;
  const ptrs = [];
  const alloc = (n) => { const p = w.malloc(n); ptrs.push(p); return p; };
  try {
    const pIds = alloc(4 * T), pTape = alloc(4), pVal = alloc(8), pOff = alloc(4 * (C.GRAD_PARTS + 1));
    w.i32.set(ids, pIds >>> 2);
    if (g.metric === 'logProb' && g.answers.length === 0) {
      w.forward(h, ids);
      g = { ...g, answers: [w.resultTopk(h, 1).ids[0]] };
    }
    w.gradLayout(pOff, h, T, want);
    const off = Array.from(w.i32.subarray(pOff >>> 2, (pOff >>> 2) + C.GRAD_PARTS + 1), (x) => x >>> 0);
    const nG = off[C.GRAD_PARTS], pG = alloc(4 * nG);
    const pE = alloc(4 * TC), pB = alloc(4 * TC), pP = alloc(4 * TC);
    w.embeddingRows(pE, h, pIds, T);
    const e = w.readF32(pE, TC);
    const b = new Float32Array(TC);
    if (g.baseline !== 'zero') {
      w.i32.fill(g.baseline, pIds >>> 2, (pIds >>> 2) + T);
      w.embeddingRows(pB, h, pIds, T);
      b.set(w.readF32(pB, TC));
      w.i32.set(ids, pIds >>> 2);
    }
    w.f32.set(b, pB >>> 2);
    // the input: its gradient, attention and value
    const x = tapeBackward(w, h, pIds, T, 0, pTape, pG, nG, pVal, g, want);
    const dE = w.readF32(pG + 4 * off[C.GRAD_EMBED], TC), dA = w.readF32(pG + 4 * off[C.GRAD_ATTN], L * NH * T * T);
    const gradNorm = new Float64Array(T), gradTimesInput = new Float64Array(T);
    for (let j = 0; j < T; j++) {
      let s2 = 0, gi = 0;
      for (let c = j * Cd; c < (j + 1) * Cd; c++) { s2 += dE[c] * dE[c]; gi += e[c] * dE[c]; }
      gradNorm[j] = Math.sqrt(s2);
      gradTimesInput[j] = gi;
    }
    const attnGrad = new Float32Array(dA.length), attnGradSaliency = new Float64Array(L * T);
    for (let i = 0; i < dA.length; i++) attnGrad[i] = x.att[i] * dA[i];
    for (let l = 0; l < L; l++)
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let hh = 0; hh < NH; hh++) s += attnGrad[((l * NH + hh) * T + T - 1) * T + j];
        attnGradSaliency[l * T + j] = Math.abs(s);
      }
    yield { done: 1, total };
    // the baseline's value (a forward and a backward of no part)
    const baselineValue = tapeBackward(w, h, pIds, T, pB, pTape, 0, 0, pVal, g, 0).value;
    yield { done: 2, total };
    // the straight path from the baseline, at the midpoints of `steps` equal parts
    const acc = new Float64Array(TC), path = new Float32Array(TC);
    for (let k = 0; k < g.steps; k++) {
      const alpha = (k + 0.5) / g.steps;
      for (let i = 0; i < TC; i++) path[i] = b[i] + alpha * (e[i] - b[i]);
      w.f32.set(path, pP >>> 2);
      tapeBackward(w, h, pIds, T, pP, pTape, pG, nG, pVal, g, 1 << C.GRAD_EMBED);
      const d = w.f32.subarray((pG >>> 2) + off[C.GRAD_EMBED], (pG >>> 2) + off[C.GRAD_EMBED] + TC);
      for (let i = 0; i < TC; i++) acc[i] += d[i];
      yield { done: k + 3, total };
    }
    const integratedGradients = new Float64Array(T);
    let sum = 0;
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let c = j * Cd; c < (j + 1) * Cd; c++) s += (e[c] - b[c]) * acc[c];
      integratedGradients[j] = s / g.steps;
      sum += integratedGradients[j];
    }
    return { metric: g.metric, answers: g.answers, baseline: g.baseline, steps: g.steps, value: x.value, baselineValue,
             gradNorm, gradTimesInput, integratedGradients, completenessError: sum - (x.value - baselineValue),
             attnGrad, attnGradSaliency, nLayer: L, nHead: NH, T };
  } finally {
    if (!w._trap) for (let i = ptrs.length - 1; i >= 0; i--) w.free(ptrs[i]);
  }
}
