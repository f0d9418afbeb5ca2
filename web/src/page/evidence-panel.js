// evidence-panel.js — the page's "Does attention explain?" panel (docs/evidence.md): four cards that set a
// reading of attention (rung 1, seeing) beside an interventional effect (rung 2, doing) on the live model. Each
// card is a pressed card of card.js: it computes when its button is pressed, in the page's worker, with progress
// and a Cancel button, on one of three sources: the page's sentence (the grids of that sentence, and the
// permutation null of its correlation), a built-in evaluation set (web/src/evidence-sets.js, up to `limit`
// inputs) or the reader's own list; over a set each aggregate comes with its bootstrap interval over inputs, the
// permutation null, its p-value and the baselines. Each card exports SVG / PNG / JSON. Here: what each card
// computes and how it draws it; its strings are strings/evidence.js's (keys ev*).

import { $, el, setOptions } from '../ui/dom.js';
import { gridMap } from '../figures/charts.js';
import { scatter, groupedBars, intervalChart } from '../figures/evidence.js';
import { rows } from './export.js';
import { ylOrRd, rdBuR } from '../figures/colour.js';
import { PATCHING_PAIRS } from '../evidence.js';
import { EVIDENCE_SETS } from '../evidence-sets.js';
import { PressCards, field } from './card.js';
import { oneInputFinding, setFinding, topCell, weakestAgreement } from './findings.js';

const f = (x) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3));
const fint = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
const fexp = (x) => (x === 0 ? '0' : x.toExponential(2).replace('-', '−'));
/** The sizes of the built-in sets (the page's default limits keep a press under a minute; the API's is the whole set). */
const SET_SIZE = { heldout: EVIDENCE_SETS.heldout.sentences.length, repeated: EVIDENCE_SETS.repeated.sequences.length,
                   pairs: EVIDENCE_SETS.pairs.pairs.length, induction: EVIDENCE_SETS.repeated.sequences.length };
const SET_KEYS = { heldout: 'SetHeldout', repeated: 'SetRepeated', pairs: 'SetPairs', induction: 'SetInduction' };
const NAME_KEYS = { heldout: 'NameHeldout', repeated: 'NameRepeated', pairs: 'NamePairs', induction: 'NameInduction' };
const SOURCES = ['sentence', 'set', 'list'];
const C_ATT = '#d7301f', C_UNI = '#e08a00', C_PERM = '#4575b4';
const C_LAST = '#e08a00', C_ROLL = '#74add1', C_FLOW = '#4575b4', C_VW = '#8c510a';
const C_POS = '#7a7a7a'; // the readings that know only positions (controls.js)
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
const ablNames = (t) => ({ zero: t('evAblZero'), mean: t('evAblMean'), resample: t('evAblRes') });
const PATCH_COLOR = rdBuR(1); // 0 = corrupted (white), 1 = clean (red), clamped
const nullText = (s) => (s && s.nullMean !== null && s.nullMean !== undefined ? `${f(s.nullMean)} [${f(s.nullLo)}, ${f(s.nullHi)}]` : '—');
/** The legend of a set's interval chart. */
const legend = (t, n, withNull) => ({ interval: n > 1 ? t('evLgInterval') : t('evLgOne'), points: n > 1 ? t('evLgPoints') : null,
  null: withNull ? t('evLgNull') : null, nullMean: withNull ? t('evLgNullMean') : null });

// ── the cards ───────────────────────────────────────────────────────────────

const numberField = (id, attrs) => field(id, el('input', { id, type: 'number', ...attrs }));

/** The edge card: each edge of the chosen head knocked out; on this sentence also the set API on it, for its null. */
async function computeEdge({ model, args, src, text, signal, progress }) {
  const hv = $('ev-edge-head').value;
  const o = { layer: Number($('ev-edge-layer').value), head: hv === 'all' ? 'all' : Number(hv), knockout: $('ev-edge-ko').value };
  if (src !== 'sentence') return { set: await model.edgeKnockoutSet(args.set, { ...o, ...args.opts, onProgress: progress(), signal }) };
  const one = await model.edgeKnockout(text, { ...o, onProgress: progress(`${this.word('PhaseGrid')}:`), signal });
  return { one, set: await model.edgeKnockoutSet([text], { ...o, onProgress: progress(`${this.word('PhaseNull')}:`), signal }) };
}

/** The token card: each token made unreadable; on this sentence also the set API on it. */
async function computeTok({ model, args, src, text, signal, progress }) {
  const o = { mode: $('ev-tok-mode').value };
  if (src !== 'sentence') return { set: await model.tokenKnockoutSet(args.set, { ...o, ...args.opts, onProgress: progress(), signal }) };
  const one = await model.tokenKnockout(text, { ...o, onProgress: progress(`${this.word('PhaseGrid')}:`), signal });
  return { one, set: await model.tokenKnockoutSet([text], { ...o, onProgress: progress(`${this.word('PhaseNull')}:`), signal }) };
}

/** The ablation card: three ways to remove each head, on this sentence or over a set (with its resample draws). */
async function computeAbl({ model, args, src, text, signal, progress }) {
  if (src === 'sentence') return { one: await model.ablationSemantics(text, { onProgress: progress(), signal }) };
  const v = Math.floor(Number($('ev-abl-draws').value));
  const draws = Number.isFinite(v) && v >= 1 ? Math.min(v, 200) : 20;
  $('ev-abl-draws').value = String(draws);
  return { set: await model.ablationSet(args.set, { ...args.opts, draws, onProgress: progress(), signal }) };
}

/** The patching card: the pair typed, or a set of pairs with its minimum gap. */
async function computePat({ model, args, src, signal, progress }) {
  if (src === 'sentence') return { one: await model.activationPatching($('ev-pat-clean').value, $('ev-pat-corrupt').value) };
  const g = Number($('ev-pat-gap').value), minGap = Number.isFinite(g) && g >= 0 ? g : 1;
  $('ev-pat-gap').value = String(minGap);
  return { set: await model.patchingSet(args.set, { ...args.opts, minGap, onProgress: progress(), signal }), minGap };
}

/** A card's drawing: the one input's part, then the set's (its JSON holds the API's set result). */
const parts = (one, set) => (c) => {
  if (c.d.one) one(c, c.d.one);
  if (c.d.set) {
    set(c, c.d.set);
    c.json.set = c.d.set;
  }
};

const CARDS = {
  'ev-edge': { key: 'Edge', rung: [1, 2], file: 'attnlab_evidence_edge_knockout', sources: SOURCES, sets: ['heldout', 'repeated'], limit: 20,
    controls: () => [field('ev-edge-layer', el('select', { id: 'ev-edge-layer' })), field('ev-edge-head', el('select', { id: 'ev-edge-head' })),
      field('ev-edge-ko', el('select', { id: 'ev-edge-ko' }))],
    compute: computeEdge, draw: parts(edgeOne, edgeSet) },
  'ev-tok': { key: 'Tok', rung: [1, 2], file: 'attnlab_evidence_token_knockout', sources: SOURCES, sets: ['heldout', 'repeated'], limit: 60,
    controls: () => [field('ev-tok-mode', el('select', { id: 'ev-tok-mode' }))],
    compute: computeTok, draw: parts(tokOne, tokSet) },
  'ev-abl': { key: 'Abl', rung: [1, 2], file: 'attnlab_evidence_ablation', sources: SOURCES, sets: ['heldout', 'repeated'], limit: 3,
    more: () => [numberField('ev-abl-draws', { min: '1', max: '200', step: '1', value: '20' })],
    onSource: (src) => { $('ev-abl-draws-field').hidden = src === 'sentence'; },
    compute: computeAbl, draw: parts(ablOne, ablSet) },
  'ev-pat': { key: 'Pat', rung: [1, 2], file: 'attnlab_evidence_patching', sources: SOURCES, sets: ['induction', 'pairs'], limit: SET_SIZE.induction,
    pairs: true, fixedSet: true,
    controls: () => [field('ev-pat-clean', el('input', { id: 'ev-pat-clean', type: 'text', spellcheck: 'false' })),
      field('ev-pat-corrupt', el('input', { id: 'ev-pat-corrupt', type: 'text', spellcheck: 'false' }))],
    more: () => [numberField('ev-pat-gap', { min: '0', step: '0.1', value: '1' })],
    onSource: (src) => {
      $('ev-pat-gap-field').hidden = src === 'sentence';
      for (const k of ['clean', 'corrupt']) $(`ev-pat-${k}-field`).hidden = src !== 'sentence';
    },
    compute: computePat, draw: parts(patOne, patSet) },
};

export class EvidencePanel extends PressCards {
  /** @param {{lang(): string, sentence(): string}} env */
  constructor(env) {
    super(env, { prefix: 'ev', cards: CARDS, head: ['ev-title', 'ev-intro'], sizes: SET_SIZE, setKeys: SET_KEYS, nameKeys: NAME_KEYS });
    this.sentence = null;
    this.build(document.getElementById('evidence'),
      el('header', { class: 'heads-head' }, el('h2', { id: 'ev-title' }), el('p', { class: 'fig-text', id: 'ev-intro' })));
  }

  /** Called after each drawn result of the page: the cards on the sentence are cleared only when it changed. */
  sentenceChanged() {
    const text = this.env.sentence();
    if (text === this.sentence) return;
    this.sentence = text;
    for (const id of ['ev-edge', 'ev-tok', 'ev-abl']) {
      const busy = this.cards[id].running, done = this.data[id] && this.data[id].source;
      if (busy === 'sentence' || (!busy && (!done || done === 'sentence'))) this.reset(id);
    }
  }

  modelChanged() {
    const L = this.config.nLayer;
    setOptions($('ev-edge-layer'), Array.from({ length: L }, (_, l) => ({ value: String(l), label: String(l) })), String(L - 1));
    this.#fillHeads();
    this.#pickPair();
  }

  wire() {
    $('ev-edge-layer').addEventListener('change', () => this.#fillHeads());
  }

  ownTexts(t, set) {
    set('ev-edge-layer-label', t('evLayer'));
    set('ev-edge-head-label', t('evHead'));
    set('ev-edge-ko-label', t('evKnockout'));
    set('ev-tok-mode-label', t('evTokMode'));
    set('ev-abl-draws-label', t('evDraws'));
    set('ev-pat-gap-label', t('evMinGap'));
    set('ev-pat-clean-label', t('evPatClean'));
    set('ev-pat-corrupt-label', t('evPatCorrupt'));
    const ko = $('ev-edge-ko'), mode = $('ev-tok-mode');
    setOptions(ko, [{ value: 'renorm', label: t('evKoRenorm') }, { value: 'zero', label: t('evKoZero') }], ko.value || 'renorm');
    setOptions(mode, [{ value: 'column', label: t('evTokColumn') }, { value: 'delete', label: t('evTokDelete') },
      { value: 'replace', label: t('evTokReplace') }], mode.value || 'column');
    this.#fillHeads();
  }

  /** What every card's drawing shares: its widths, its number of inputs, the words of its charts. */
  context(c) {
    const maxW = Math.max(240, Math.min(520, c.bw / 2 - 12)), setW = Math.max(280, Math.min(520, c.bw - 4));
    const n = c.d.set ? c.d.set.n : 1;
    Object.assign(c, { maxW, setW, n, pairW: c.bw >= 2 * 300 + 18 ? maxW : setW,   // two charts side by side, or one a row
      U: c.t('evUndef'), xRho: c.t(n > 1 ? 'evXRho' : 'evXRhoOne'), pOf: (nPerm) => (it) => pOfRow(it, nPerm), name: this.setName(c.d) });
  }

  /** What a card's export computed on, for its <desc>: the source, and the edge card's layer, head and knockout. */
  exportView(id, src) {
    const out = [`source ${src}`, 'mask: the model\'s own (causal)'];
    if (id === 'ev-edge') out.unshift(`layer ${$('ev-edge-layer').value}`, `head ${$('ev-edge-head').value}`, `knockout ${$('ev-edge-ko').value}`);
    return out;
  }

  #fillHeads() {
    if (!this.config) return;
    const cur = $('ev-edge-head').value || 'all';
    setOptions($('ev-edge-head'), [{ value: 'all', label: this.t('evAll') },
      ...Array.from({ length: this.config.nHead }, (_, h) => ({ value: String(h), label: String(h) }))], cur);
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
    this.cards['ev-pat'].statusText(this.t('evNoPair'));
  }
}

// ── drawing: each card's charts, lines, notes and JSON ──────────────────────

function edgeOne(c, r) {
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
  c.charts.push(grid(r.A, t('evEdgeA'), vmaxA), grid(r.E, t('evEdgeE'), vmaxE),
    scatter({ points: pts, xTitle: t('evScatterX'), yTitle: t('evScatterY'), width: maxW, height: maxW * 0.8, lang }));
  c.sum.push(t('evFindEdgeOne', oneInputFinding(r.spearman)), t('evCannotEdge'), t('evEdgeSum', r));
  c.json.sentence = { layer: r.layer, head: r.head, mode: r.mode, tokens: r.tokens, A: rows(r.A, T), E: rows(r.E, T), E_last: rows(r.ELast, T),
    spearman: r.spearman, kendall: r.kendall, spearmanLast: r.spearmanLast, topK: r.topK, topKOverlap: r.topKOverlap, rows: r.rows };
}

function edgeSet(c, s) {
  const { t, n, U } = c;
  const rowsOf = (k) => [
    { label: t('evRowAttention'), items: [{ ...s[k].spearman, color: C_ATT,
      points: n > 1 ? s.perInput.map((p) => (k === 'local' ? p.spearman : p.spearmanLast)) : null }] },
    ...(s.valueWeighted ? [{ label: t('evRowValueWeighted'), items: [{ ...s.valueWeighted[k].spearman, color: C_VW }] }] : []),
    { label: t('evRowUniform'), items: [{ ...s[k].uniform, color: C_UNI }] },
    { label: t('evRowPermuted'), items: [{ ...s[k].permuted, color: C_PERM }] },
    ...(s.positions ? [['recency', 'evRowRecency'], ['first', 'evRowFirst']].map(([p, key]) =>
      ({ label: t(key), items: [{ ...s.positions[p][k], color: C_POS }] })) : [])];
  for (const k of ['local', 'last'])
    c.charts.push(intervalChart({ rows: rowsOf(k), domain: [-1, 1], title: t(k === 'local' ? 'evLocalTitle' : 'evLastTitle'), xTitle: c.xRho,
      width: c.pairW, lang: c.lang, legend: legend(t, n, true), pText: c.pOf(s.nPerm), undefinedText: U }));
  const line = (k) => t(k === 'local' ? 'evSumLocal' : 'evSumLast', iv(s[k].spearman, 'ρ', U), iv(s[k].kendall, 'τ', U),
    t('evNullOf', nullText(s[k].spearman), pText(s[k].spearman.p, s.nPerm) || 'p —'), iv(s[k].uniform, 'ρ', U), iv(s[k].permuted, 'ρ', U));
  // on this sentence the one-input finding is already there: the set of one adds its numbers, not a second finding
  if (c.n > 1 || !c.sum.includes(t('evCannotEdge'))) {
    c.sum.push(t('evFindEdgeSet', setFinding(s.local.spearman)));
    if (s.positions) c.sum.push(positionFinding(c, s.local.spearman, ['recency', 'first', 'diagonal', 'early'].map((p) => [p, s.positions[p].local])));
    c.sum.push(t('evCannotEdge'));
  }
  if (!c.d.one) c.sum.push(t('evEdgeHow', s.layer, s.head, s.mode));
  c.sum.push(t('evSetHead', n, c.name, t('evHow', s.nBoot, s.nPerm, s.seed)), line('local'), line('last'),
    t('evSumRows', iv(s.rows, '', U), iv(s.topKOverlap, '', U)));
  if (s.valueWeighted)
    c.sum.push(t('evSumValueWeighted', iv(s.valueWeighted.local.spearman, 'ρ', U), iv(s.valueWeighted.last.spearman, 'ρ', U)));
  if (s.positions) {
    c.sum.push(t('evSumPositions', ['recency', 'first', 'diagonal', 'early'].map((p) => [t(`evPos_${p}`), iv(s.positions[p].local, 'ρ', U)])));
    c.sum.push(t('evSumEffects', s.effects.local, iv(s.aboveThreshold.local, 'ρ', U)));
    c.notes.push(t('evNoteTwin'));
  }
  if (n === 1) c.notes.push(t('evOneInput'));
  c.notes.push(t('evNoteLocal'), t(s.lastRowOnly ? 'evNoteLastRow' : 'evNoteLastAll'), t('evNoteBase'), t('evNoteNull', s.nPerm));
  if (n > 1) c.notes.push(t('evNoteInterval', n, s.nBoot));
  c.notes.push(floor(c, s.local.spearman, s, s.last.spearman));
}

/** The finding against position alone: the best position reading, and whether attention's interval clears its. */
function positionFinding(c, att, readings) {
  const { t, U } = c;
  const best = readings.filter(([, v]) => v.mean !== null).reduce((a, b) => (!a || b[1].mean > a[1].mean ? b : a), null);
  if (!best || att.mean === null) return t('evFindPosition', '—', U, false);
  const ahead = att.lo !== null && best[1].hi !== null && att.lo > best[1].hi;
  return t('evFindPosition', t(`evPos_${best[0]}`), iv(best[1], 'ρ', U), ahead);
}

function tokOne(c, r) {
  const { t } = c;
  c.charts.push(groupedBars({ labels: tokenLabels(r.tokens), width: Math.min(620, c.maxW * 2), lang: c.lang, series: [
    { name: t('evTokEffect'), values: Array.from(r.effect), color: '#d7301f' },
    { name: t('evTokLast'), values: Array.from(r.readings.lastLayer), color: '#fdae61' },
    { name: t('evTokRoll'), values: Array.from(r.readings.rollout), color: '#74add1' },
    { name: t('evTokFlow'), values: Array.from(r.readings.flow), color: '#4575b4' },
    ...(r.readings.valueWeighted ? [{ name: t('evTokVW'), values: Array.from(r.readings.valueWeighted), color: C_VW }] : [])] }));
  c.sum.push(t('evFindTokOne', oneInputFinding(r.spearman.lastLayer), t('evTokLast')), t('evCannotTok'), t('evTokSum', r));
  c.json.sentence = { tokens: r.tokens, mode: r.mode, effect: Array.from(r.effect),
    readings: Object.fromEntries(Object.entries(r.readings).map(([k, v]) => [k, Array.from(v)])), spearman: r.spearman, kendall: r.kendall };
}

function tokSet(c, s) {
  const { t, n, U } = c, R = s.readings;
  const row = (k, label, color) => ({ label, items: [{ ...R[k], color, points: n > 1 ? s.perInput.map((p) => p[k]) : null }] });
  const vw = R.valueWeighted ? [row('valueWeighted', t('evTokVW'), C_VW)] : [];
  const pos = s.positions ? [['recency', 'evRowRecency'], ['first', 'evRowFirst']].map(([p, key]) => ({ label: t(key), items: [{ ...s.positions[p], color: C_POS }] })) : [];
  c.charts.push(intervalChart({ rows: [row('lastLayer', t('evTokLast'), C_LAST), ...vw, row('rollout', t('evTokRoll'), C_ROLL), row('flow', t('evTokFlow'), C_FLOW), ...pos],
    domain: [-1, 1], title: t('evTokSetTitle'), xTitle: c.xRho, width: c.setW, lang: c.lang, legend: legend(t, n, true),
    pText: c.pOf(s.nPerm), undefinedText: U }));
  const one = (k) => `${iv(R[k], 'ρ', U)}; ${t('evNullOf', nullText(R[k]), pText(R[k].p, s.nPerm) || 'p —')}`;
  if (c.n > 1 || !c.sum.includes(t('evCannotTok'))) {
    c.sum.push(t('evFindTokSet', setFinding(R.lastLayer), t('evTokLast')));
    if (s.positions) c.sum.push(positionFinding(c, R.lastLayer, ['recency', 'first', 'early'].map((p) => [p, s.positions[p]])));
    c.sum.push(t('evCannotTok'));
  }
  c.sum.push(t('evSetHead', n, c.name, t('evHow', s.nBoot, s.nPerm, s.seed)),
    ...[['lastLayer', 'evTokLast'], ...(R.valueWeighted ? [['valueWeighted', 'evTokVW']] : []), ['rollout', 'evTokRoll'], ['flow', 'evTokFlow']]
      .map(([k, name]) => t('evSumTokOne', t(name), one(k))));
  if (s.positions) {
    c.sum.push(t('evSumPositions', ['recency', 'first', 'early'].map((p) => [t(`evPos_${p}`), iv(s.positions[p], 'ρ', U)])));
    c.sum.push(t('evSumEffects', s.effects, iv(s.aboveThreshold.lastLayer, 'ρ', U)));
    c.notes.push(t('evNoteTwin'));
  }
  if (n === 1) c.notes.push(t('evOneInput'));
  c.notes.push(t('evNoteTok'), t('evNoteTokNull', s.nPerm));
  if (n > 1) c.notes.push(t('evNoteInterval', n, s.nBoot));
  c.notes.push(floor(c, R.lastLayer, s));
}

function ablAxes(c, L, H) {
  return { rowLabels: Array.from({ length: L }, (_, l) => String(l)), colLabels: Array.from({ length: H }, (_, h) => String(h)),
    rowTitle: c.t('evLayerAxis'), colTitle: c.t('evHeadAxis'), cell: 30, annotate: (v) => v.toFixed(2), lang: c.lang };
}

function ablOne(c, r) {
  const { t } = c, L = r.nLayer, H = r.nHead, names = ablNames(t);
  const all = ['zero', 'mean', 'resample'].flatMap((k) => Array.from(r[k].delta));
  const color = rdBuR(Math.max(1e-6, ...all.map(Math.abs)));
  for (const k of ['zero', 'mean', 'resample']) c.charts.push(gridMap({ values: r[k].delta, R: L, C: H, color, title: names[k], ...ablAxes(c, L, H) }));
  const top = topCell(Array.from(r.zero.delta), H);
  if (top) c.sum.push(t('evFindAbl', top, weakestAgreement(r.agreement), names));
  c.sum.push(t('evCannotAbl'), t('evAblSum', r));
  c.json.sentence = { nLayer: L, nHead: H, agreement: r.agreement, ...Object.fromEntries(['zero', 'mean', 'resample'].map((k) =>
    [k, { baseLoss: r[k].baseLoss, delta: rows(r[k].delta, H), pruning: Array.from(r[k].pruning) }])) };
}

function ablSet(c, s) {
  const { t, n } = c, L = s.nLayer, H = s.nHead, names = ablNames(t), none = t('evUndefNone'), w = Math.min(c.setW, 420);
  const means = Object.fromEntries(['zero', 'mean', 'resample'].map((k) => [k, Float32Array.from(s.delta[k], (x) => x.mean ?? NaN)]));
  const color = rdBuR(Math.max(1e-6, ...Object.values(means).flatMap((v) => Array.from(v).filter(Number.isFinite).map(Math.abs))));
  for (const k of ['zero', 'mean', 'resample'])
    c.charts.push(gridMap({ values: means[k], R: L, C: H, color, title: t('evAblMeanTitle', names[k]), ...ablAxes(c, L, H), annotate: cellText }));
  const cols = { zero: C_ZERO, mean: C_MEAN, resample: C_RES };
  const heads = [];
  for (let l = 0; l < L; l++) for (let h = 0; h < H; h++)
    heads.push({ label: `L${l} H${h}`, items: ['zero', 'mean', 'resample'].map((k) => ({ ...s.delta[k][l * H + h], name: names[k], color: cols[k] })) });
  const lg = { ...legend(t, n, false), points: null, series: ['zero', 'mean', 'resample'].map((k) => ({ name: names[k], color: cols[k] })) };
  c.charts.push(intervalChart({ rows: heads, title: t('evAblHeadsTitle'), xTitle: t('evXLoss'), width: w, lang: c.lang, legend: lg, undefinedText: none }));
  const keys = ['zero-mean', 'zero-resample', 'mean-resample'];
  const agreeRows = keys.map((k) => ({ label: k.split('-').map((x) => names[x]).join('–'),
    items: [{ ...s.agreement[k], color: '#555', points: n > 1 ? s.perInput.map((p) => p.agreement[k]) : null }] }));
  c.charts.push(intervalChart({ rows: agreeRows, domain: [-1, 1], title: t('evAblAgreeTitle'), xTitle: t('evXAgree'), width: w, lang: c.lang,
    legend: legend(t, n, false), undefinedText: none }));
  const top = topCell(s.delta.zero, H);
  if (top) c.sum.push(t('evFindAbl', top, weakestAgreement(s.agreement), names));
  c.sum.push(t('evCannotAbl'));
  c.sum.push(t('evSetHead', n, c.name, t('evHow', s.nBoot, 0, s.seed)), t('evSumAblSet', ...keys.map((k) => iv(s.agreement[k], 'ρ', none))));
  if (n === 1) c.notes.push(t('evOneInput'));
  c.notes.push(t('evNoteAblSet', n, s.draws), t('evNoteAblAgree'));
}

function patOne(c, r) {
  const { t, lang } = c, { nLayer: L, nHead: H, T } = r;
  const lab = Array.from({ length: L }, (_, l) => String(l));
  c.charts.push(
    gridMap({ values: r.resid, R: L, C: T, color: PATCH_COLOR, maxW: c.maxW * 1.3, rowLabels: lab, colLabels: tokenLabels(r.tokens), rotate: true,
      rowTitle: t('evLayerAxis'), title: t('evPatResid'), annotate: T <= 16 ? (v) => v.toFixed(2) : null, lang }),
    gridMap({ values: r.heads, R: L, C: H, color: PATCH_COLOR, cell: 30, rowLabels: lab, colLabels: Array.from({ length: H }, (_, h) => String(h)),
      rowTitle: t('evLayerAxis'), colTitle: t('evHeadAxis'), title: t('evPatHeads'), annotate: (v) => v.toFixed(2), lang }));
  const resid = topCell(Array.from(r.resid), T);
  c.sum.push(t('evFindPat', resid && { l: resid.l, v: resid.v, pos: tokenLabels(r.tokens)[resid.h] }, topCell(Array.from(r.heads), H)),
    t('evCannotPat'), t('evPatSum', r));
  c.json.sentence = { tokens: r.tokens, corruptTokens: r.corruptTokens, answers: r.answerTokens, ldClean: r.ldClean, ldCorrupt: r.ldCorrupt,
    resid: rows(r.resid, T), heads: rows(r.heads, H) };
}

function patSet(c, s) {
  const { t, lang } = c, { nLayer: L, nHead: H } = s, none = t('evUndefNone'), w = Math.min(c.setW, 420);
  if (s.n > 0) {
    c.charts.push(gridMap({ values: Float32Array.from(s.heads, (x) => x.mean ?? NaN), R: L, C: H, color: PATCH_COLOR, cell: 30,
      rowLabels: Array.from({ length: L }, (_, l) => String(l)), colLabels: Array.from({ length: H }, (_, h) => String(h)),
      rowTitle: t('evLayerAxis'), colTitle: t('evHeadAxis'), title: t('evPatHeadsMean'), annotate: cellText, lang }));
    const resid = s.residLast.map((x, l) => ({ label: t('evLayerRow', l),
      items: [{ ...x, color: '#b2182b', points: s.n > 1 ? s.perInput.map((p) => p.residLast && p.residLast[l]) : null }] }));
    c.charts.push(intervalChart({ rows: resid, title: t('evPatResidTitle'), xTitle: t('evXScore'), width: w, lang,
      legend: legend(t, s.n, false), undefinedText: none }));
    const heads = [];
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) heads.push({ label: `L${l} H${h}`, items: [{ ...s.heads[l * H + h], color: '#b2182b' }] });
    c.charts.push(intervalChart({ rows: heads, title: t('evPatHeadsTitle'), xTitle: t('evXScore'), width: w, lang,
      legend: { ...legend(t, s.n, false), points: null }, undefinedText: none }));
  }
  if (s.n > 0) c.sum.push(t('evFindPat', topCell(s.residLast, 1), topCell(s.heads, H)), t('evCannotPat'));
  c.sum.push(t('evPairHead', s.n, c.name, t('evHow', s.nBoot, 0, s.seed)));
  if (s.n > 0 && s.ldClean && s.ldCorrupt) c.sum.push(t('evSumPatSet', iv(s.ldClean, '', none), iv(s.ldCorrupt, '', none)));
  if (s.skipped && s.skipped.length) {
    // the API's reasons are English: the Chinese page names the pairs and leaves the reasons to the JSON export
    const k = s.skipped.length, zh = lang === 'zh', show = zh ? 8 : 3;
    const shown = s.skipped.slice(0, show).map((x) => (zh ? `#${x.index + 1}` : `#${x.index + 1} (${x.reason})`)).join(zh ? '、' : '; ');
    c.sum.push(t('evSkipped', k, k > show ? `${shown}${zh ? '，' : '; '}${t('evAndMore', k - show)}` : shown));
  }
  if (s.n === 0) c.sum.push(t('evNoPairLeft'));
  if (s.n === 1) c.notes.push(t('evOneInput'));
  c.notes.push(t('evNotePatSet'), t('evNotePatGap', c.d.minGap ?? 1), t('evNotePatNot'));
}

/** "effects above the noise floor: a of b (ε = …)" and how ε was chosen. */
function floor(c, r, s, last) {
  if (!r || s.eps === undefined || s.eps === null) return null;
  const t = c.t, sep = c.lang === 'zh' ? '' : ' ';
  return t('evFloor', fint(r.nAboveFloor), fint(r.nPoints), fexp(s.eps)) +
    (last ? sep + t('evFloorLast', fint(last.nAboveFloor), fint(last.nPoints)) : '') +
    (s.noise ? sep + t('evFloorHow', s.noise.factor, s.noise.inputs) : '');
}
