// circuits-panel.js — "Where a head looks, what it moves" (docs/evidence.md § 6–11): five cards under the
// evidence cards, on the model's circuits API through the page's worker (WorkerModel: progress events, cancel
// by AbortSignal):
//
//   cx-pv     pattern vs value patching over a set of pairs (patternValueSet): three layer × head grids
//             (pattern, value, both) for the direction chosen, and the pattern's share of each head's effect
//   cx-path   path patching into one receiver head's query, key and value, and into the logits (pathPatchingSet)
//   cx-dla    direct logit attribution (attributionSet), and one head's term on the first pair by source position
//             (directLogitAttribution)
//   cx-comp   Q-, K- and V-composition scores of every pair of layers against their Gaussian and within-model nulls (compositionScores)
//   cx-trace  causal tracing by component: attention and MLP per layer (componentTracingSet)
//
// Each is a pressed card of card.js (a rung label, a source: a built-in pair set up to the page's default
// limit or the reader's own pairs, Compute and Cancel, a status line with progress, the charts, summary lines,
// notes, SVG / PNG / JSON exports, data-state and data-n); a click on a cell of a grid selects its head in every
// grid of the card. Every number drawn or written comes from the API's result. Strings: strings/circuits.js (cx*).

import { $, el, setOptions } from '../ui/dom.js';
import { attachTooltip } from '../ui/tooltip.js';
import { intervalChart } from '../figures/evidence.js';
import { headGrid, compositionStrip, sourceBars } from '../figures/circuits.js';
import { rdBuR } from '../figures/colour.js';
import { tokenLabel } from '../figures/text.js';
import { readableTokens } from './readable.js';
import { EVIDENCE_SETS } from '../evidence-sets.js';
import { inductionPairs, inductionPrevPairs } from '../sets.js';
import { PressCards, field } from './card.js';

const GPT2_VOCAB = 50257; // the induction sets are GPT-2 token ids
export const CX_CARDS = Object.freeze(['cx-pv', 'cx-path', 'cx-dla', 'cx-comp', 'cx-trace']);
const SETS = ['induction', 'induction-prev', 'pairs'];
/** The pairs of a built-in set, as the API builds them (ids for the induction sets, text for the minimal pairs). */
const setPairs = (name) => (name === 'induction' ? inductionPairs(GPT2_VOCAB) : name === 'induction-prev' ? inductionPrevPairs(GPT2_VOCAB)
  : EVIDENCE_SETS.pairs.pairs.map((p) => [p.clean, p.corrupt, p.answers]));
const SET_SIZE = Object.fromEntries(SETS.map((s) => [s, setPairs(s).length]));
const SET_KEYS = { induction: 'SetInduction', 'induction-prev': 'SetPrev', pairs: 'SetPairs' };
const NAME_KEYS = { induction: 'NameInduction', 'induction-prev': 'NamePrev', pairs: 'NamePairs' };
/** The page's default limit, as the patching card's: the whole induction set (each card's press stays under a minute). */
const LIMIT = SET_SIZE.induction;
/** Fewer pairs than this: the card says that its means are rough. */
const FEW = 5;
/** The cards whose grids select a head (a click on a cell, or this select). */
const SELECT = { 'cx-pv': 'cx-pv-head', 'cx-path': 'cx-path-sender', 'cx-dla': 'cx-dla-head' };
const SCORE_COLOR = rdBuR(1); // 0 = corrupted (white), 1 = clean (red), below 0 blue; clamped (the evidence panel's patching colours)
const C_PAT = '#1f4fd1', C_VAL = '#e08a00', C_BOTH = '#b2182b';
const C_KIND = { q: '#4575b4', k: '#d7301f', v: '#1a9850' };
const C_TRACE = { attnC: '#b2182b', attnL: '#ef8a62', mlpC: '#2166ac', mlpL: '#67a9cf' };

const finite = (x) => typeof x === 'number' && Number.isFinite(x);
/** x with d decimals ('—' when missing), never "-0.00". */
function fx(x, d = 3) {
  if (!finite(x)) return '—';
  const s = x.toFixed(d);
  return /^-0\.0*$/.test(s) ? s.slice(1) : s;
}
/** "m [lo, hi]" of an estimate (just "m" without an interval). */
function iv(s, d = 3) {
  if (!s || !finite(s.mean)) return '—';
  return finite(s.lo) && finite(s.hi) && s.hi > s.lo ? `${fx(s.mean, d)} [${fx(s.lo, d)}, ${fx(s.hi, d)}]` : fx(s.mean, d);
}
const cellText = (v) => (Math.abs(v) >= 9.995 ? fx(v, 0) : fx(v, 2));
const headName = (k, H) => `L${Math.floor(k / H)}H${k % H}`;
const range = (n) => Array.from({ length: n }, (_, i) => i);

// ── the cards ───────────────────────────────────────────────────────────────

const numberInput = (id, value, step, min = '0') => el('input', { id, type: 'number', min, step, value: String(value), inputmode: 'decimal' });
const gapField = (id) => field(`${id}-gap`, numberInput(`${id}-gap`, 1, '0.1'));
const select = (id) => field(id, el('select', { id }));

/** A card's min. gap (1 when none or not a number), written back into its field. */
function minGap(id) {
  const box = document.getElementById(`${id}-gap`);
  const g = Number(box?.value), v = Number.isFinite(g) && g >= 0 ? g : 1;
  if (box) box.value = String(v);
  return v;
}

async function computePv({ model, args, signal, progress }) {
  const gap = minGap('cx-pv'), m = Number($('cx-pv-min').value), minEffect = Number.isFinite(m) && m >= 0 ? m : 0.1;
  $('cx-pv-min').value = String(minEffect);
  return { set: await model.patternValueSet(args.set, { ...args.opts, minGap: gap, minEffect, onProgress: progress(), signal }), minGap: gap };
}

async function computePath({ model, args, signal, progress }) {
  const gap = minGap('cx-path'), layer = Number($('cx-path-layer').value), head = Number($('cx-path-head').value), L = this.config.nLayer;
  const receivers = [...(L > 1 ? ['q', 'k', 'v'].map((input) => ({ layer, head, input })) : []), { input: 'logits' }];
  const set = await model.pathPatchingSet(args.set, { ...args.opts, minGap: gap, receivers, direction: $('cx-path-dir').value,
    freezeMlp: $('cx-path-freeze').checked, onProgress: progress(), signal });
  return { receiver: L > 1 ? { layer, head } : null, set, minGap: gap };
}

async function computeDla({ model, args, signal, progress, aborted }) {
  const gap = minGap('cx-dla');
  const set = await model.attributionSet(args.set, { ...args.opts, onProgress: progress(), signal });
  const list = args.name === 'list' ? args.set : setPairs(args.name).slice(0, args.opts.limit);
  return { set, ...(set.n > 0 ? await firstPairSources(set, model, list, aborted) : {}), minGap: gap };
}

/** One head's term on the first pair kept, by the position it reads from (the grids stand without it): {one} or {oneError}. */
async function firstPairSources(set, model, list, aborted) {
  const p0 = set.perInput[0], pair = list[p0.index];
  try {
    const one = await Promise.race([model.directLogitAttribution(pair[0], { answers: p0.answers }), aborted]);
    const ids = async (x) => (typeof x === 'string' ? Array.from((await model.tokenize(x)).ids) : Array.from(x));
    const [a, b] = [await ids(pair[0]), await ids(pair[1])];
    // labels a reader can read: a token that holds part of a character is shown by its bytes, never as "\uFFFD"
    const readable = readableTokens(await model.tokenBytes(a));
    return { one: { ...one, changed: a.map((x, j) => x !== b[j]), pair: p0.index, answerTokens: p0.answerTokens, labels: readable.labels } };
  } catch (e) {
    if (e && e.code === 'EABORT') throw e;
    return { oneError: `${e.code ? e.code + ': ' : ''}${e.message}` };
  }
}

async function computeComp({ model, aborted }) {
  const v = Math.floor(Number($('cx-comp-null').value)), nNull = Number.isFinite(v) && v >= 1 ? Math.min(v, 5000) : 200;
  $('cx-comp-null').value = String(nNull);
  return { comp: await Promise.race([model.compositionScores({ nNull, seed: 1 }), aborted]) };
}

async function computeTrace({ model, args, signal, progress }) {
  const gap = minGap('cx-trace');
  return { set: await model.componentTracingSet(args.set, { ...args.opts, minGap: gap, onProgress: progress(), signal }), minGap: gap };
}

const pairCard = (key, rung, file, more) => ({ key, rung: [rung], file, sources: ['set', 'list'], sets: SETS, limit: LIMIT, pairs: true, ...more });
const dirRadio = (v) => [el('input', { type: 'radio', id: `cx-pv-dir-${v}`, name: 'cx-pv-dir', value: v, checked: v === 'denoise' }),
  el('label', { for: `cx-pv-dir-${v}`, id: `cx-pv-dir-${v}-label` })];

const CARDS = {
  'cx-pv': pairCard('Pv', 2, 'attnlab_circuits_pattern_value', {
    more: () => [gapField('cx-pv'), field('cx-pv-min', numberInput('cx-pv-min', 0.1, '0.05'))],
    view: () => [el('fieldset', { class: 'field segmented' }, el('legend', { id: 'cx-pv-dir-legend' }), ...dirRadio('denoise'), ...dirRadio('noise')),
      select('cx-pv-head')],
    compute: computePv, draw: pv }),
  'cx-path': pairCard('Path', 2, 'attnlab_circuits_path_patching', {
    controls: () => [select('cx-path-layer'), select('cx-path-head'), select('cx-path-dir'),
      el('label', { class: 'check cx-check' }, el('input', { type: 'checkbox', id: 'cx-path-freeze' }), el('span', { id: 'cx-path-freeze-label' }))],
    more: () => [gapField('cx-path')], view: () => [select('cx-path-sender')],
    compute: computePath, draw: path }),
  'cx-dla': pairCard('Dla', 1, 'attnlab_circuits_logit_attribution', {
    view: () => [select('cx-dla-head')], compute: computeDla, draw: dla }),
  'cx-comp': { key: 'Comp', rung: [1], file: 'attnlab_circuits_composition', sources: [],
    controls: () => [field('cx-comp-null', numberInput('cx-comp-null', 200, '1', '1'))], compute: computeComp, draw: comp },
  'cx-trace': pairCard('Tr', 2, 'attnlab_circuits_component_tracing', { more: () => [gapField('cx-trace')], compute: computeTrace, draw: trace }),
};

export class CircuitsPanel extends PressCards {
  /** @param {{lang(): string}} env */
  constructor(env) {
    super(env, { prefix: 'cx', cards: CARDS, head: ['cx-title', 'cx-intro'], sizes: SET_SIZE, setKeys: SET_KEYS, nameKeys: NAME_KEYS,
      detail: true, cardClass: 'cx-card' });
    this.build(document.getElementById('evidence'),
      el('header', { class: 'heads-head cx-head', id: 'cx' }, el('h2', { id: 'cx-title' }), el('p', { class: 'fig-text', id: 'cx-intro' })),
      { atEnd: true });
  }

  modelChanged() { this.#fillSelects(); }

  wire() {
    // a click on a cell of a grid selects its head (or sender) in every grid of the card
    for (const [id, sel] of Object.entries(SELECT)) {
      $(`${id}-charts`).addEventListener('click', (e) => {
        const cell = e.target.closest && e.target.closest('[data-k][data-v]');
        if (!cell || !this.data[id] || cell.dataset.missing) return;
        this.#select(id, Number(cell.dataset.k));
      });
      $(sel).addEventListener('change', () => this.#select(id, Number($(sel).value)));
    }
    for (const v of ['denoise', 'noise']) $(`cx-pv-dir-${v}`).addEventListener('change', () => { if (this.data['cx-pv']) this.draw('cx-pv'); });
    $('cx-path-layer').addEventListener('change', () => this.#fillReceiverHeads());
    const tip = document.getElementById('tip');
    if (tip) attachTooltip(tip, CX_CARDS.map((id) => $(`${id}-charts`)));
  }

  ownTexts(t, set) {
    for (const id of ['cx-pv', 'cx-path', 'cx-trace']) set(`${id}-gap-label`, t('cxMinGap'));
    set('cx-pv-min-label', t('cxMinEffect'));
    set('cx-pv-dir-legend', t('cxDirection'));
    set('cx-pv-dir-denoise-label', t('cxDenoise'));
    set('cx-pv-dir-noise-label', t('cxNoise'));
    set('cx-pv-head-label', t('cxPickHead'));
    set('cx-path-layer-label', t('cxRecvLayer'));
    set('cx-path-head-label', t('cxRecvHead'));
    set('cx-path-dir-label', t('cxDirection'));
    set('cx-path-freeze-label', t('cxFreeze'));
    set('cx-path-sender-label', t('cxPickSender'));
    set('cx-dla-head-label', t('cxPickHead'));
    set('cx-comp-null-label', t('cxNNull'));
    const dir = $('cx-path-dir');
    setOptions(dir, [{ value: 'denoise', label: t('cxDenoise') }, { value: 'noise', label: t('cxNoise') }], dir.value || 'denoise');
  }

  /** What every card's drawing shares: the model's shape, the grids' axes, the set's name, the interval's level. */
  context(c) {
    const { nLayer: L, nHead: H } = this.config, t = c.t;
    Object.assign(c, { L, H, name: this.setName(c.d), level: (s) => t('cxLevel', Math.round((s.level ?? 0.95) * 100)),
      json: { generator: 'attnlab page', card: c.id },
      axes: { rowLabels: range(L).map(String), colLabels: range(H).map(String), rowTitle: t('cxLayerAxis'), colTitle: t('cxHeadAxis'),
        names: (k) => headName(k, H), lang: c.lang } });
  }

  #select(id, k) {
    if (!this.data[id] || !Number.isInteger(k)) return;
    this.data[id].sel = k;
    this.draw(id);
  }

  #fillSelects() {
    const { nLayer: L, nHead: H } = this.config;
    const layers = range(L).filter((l) => l >= 1).map((l) => ({ value: l, label: String(l) }));
    const cur = $('cx-path-layer').value;
    setOptions($('cx-path-layer'), layers, cur !== '' && Number(cur) < L ? cur : '1');
    $('cx-path-layer').disabled = layers.length === 0;
    this.#fillReceiverHeads();
    const heads = range(L * H).map((k) => ({ value: k, label: headName(k, H) }));
    for (const id of ['cx-pv-head', 'cx-path-sender', 'cx-dla-head']) setOptions($(id), heads, $(id).value || '0');
  }

  #fillReceiverHeads() {
    if (!this.config) return;
    const H = this.config.nHead, cur = $('cx-path-head').value;
    setOptions($('cx-path-head'), range(H).map((h) => ({ value: h, label: String(h) })), cur !== '' && Number(cur) < H ? cur : '0');
    $('cx-path-head').disabled = $('cx-path-layer').disabled;
  }
}

// ── drawing: each card's charts, lines, notes and JSON ──────────────────────

/** The lines every pair card starts with: how many pairs, which, how the intervals were made, and what was skipped. */
function pairsHead(c, s) {
  const t = c.t, skipped = s.skipped || [];
  c.sum.push(t('cxKept', s.n, s.n + skipped.length, c.name));
  if (skipped.length) {
    // the API's reasons are English and carry each pair's numbers: the too-close runs are counted and said in
    // the page's language, the others shown as they are (in Chinese: counted; the JSON export lists them)
    const gap = skipped.filter((x) => /less than minGap/.test(x.reason)), other = skipped.filter((x) => !/less than minGap/.test(x.reason));
    const g = s.minGap ?? c.d.minGap;
    if (!other.length) c.sum.push(t('cxSkippedGap', skipped.length, g));
    else {
      const parts = [];
      if (gap.length) parts.push(t('cxSkipGap', gap.length, g));
      parts.push(t('cxSkipOther', other.length, other.slice(0, 2).map((x) => `#${x.index + 1}: ${x.reason}`).join('; ')));
      c.sum.push(t('cxSkipped', skipped.length, parts.join(c.lang === 'zh' ? '；' : '; ')));
    }
  }
  c.sum.push(t('cxHow', c.level(s), s.nBoot, s.seed));
  if (s.n === 0) c.sum.push(el('p', { class: 'cx-warn' }, t('cxNone')));
  else if (s.n < FEW) c.sum.push(el('p', { class: 'cx-warn' }, t('cxFew', s.n)));
  c.json.set = s.set ?? c.d.setName;
  c.json.n = s.n;
  c.json.skipped = skipped;
}

function grid(c, o) {
  return headGrid({ ...c.axes, R: c.L, C: c.H, annotate: cellText, ...o });
}

/** One cell size for n layer × head grids side by side in the card, with a colour bar right of the last. */
function cellSize(c, n) {
  const labW = 48, cbarW = 64, gap = 18;
  return Math.max(18, Math.min(34, Math.floor((c.bw - (n - 1) * gap - n * labW - cbarW) / (n * c.H))));
}

function pv(c) {
  const { t, d, L, H } = c, s = d.set, LH = L * H;
  const dir = $('cx-pv-dir-noise').checked ? 'noise' : 'denoise';
  const dirName = t(dir === 'noise' ? 'cxNoiseShort' : 'cxDenoiseShort');
  pairsHead(c, s);
  $('cx-pv').dataset.dir = dir;
  if (s.n > 0) {
    const g = s.grid[dir];
    const effect = (x) => (finite(g.both[x].mean) ? (dir === 'denoise' ? g.both[x].mean : 1 - g.both[x].mean) : -Infinity);
    const sel = d.sel ?? range(LH).reduce((a, x) => (effect(x) > effect(a) ? x : a), 0);
    d.sel = sel;
    $('cx-pv-head').value = String(sel);
    const names = { pattern: t('cxPattern'), value: t('cxValue'), both: t('cxBoth') };
    const cell = cellSize(c, 3);
    ['pattern', 'value', 'both'].forEach((k, i) => c.charts.push(grid(c, {
      cells: g[k], color: SCORE_COLOR, title: t('cxGridTitle', names[k], dirName), cell, selected: sel, role: `pv-${k}`,
      cellTitle: (x, it) => t('cxCell', headName(x, H), names[k], iv(it)),
      cbar: i === 2 ? { scale: SCORE_COLOR, format: (v) => fx(v, 1) } : null,
      attrs: { 'data-kind': k, 'data-dir': dir } })));
    const at = (k) => g[k][sel];
    c.detail = t('cxPvDetail', headName(sel, H), dirName, iv(at('pattern')), iv(at('value')), iv(at('both')), c.level(s), s.n);
    // the verdict: the pattern's share of each head's effect, for the heads whose whole-head effect reaches minEffect
    const share = s.patternShare[dir];
    const heads = range(LH).filter((x) => share[x] !== null && share[x] !== undefined).sort((a, b) => effect(b) - effect(a));
    const verdict = el('p', { class: 'cx-verdict', id: 'cx-pv-verdict', dataset: { heads: heads.map((x) => headName(x, H)).join(' ') } });
    if (heads.length) {
      const shown = heads.slice(0, 6).map((x) => t('cxPvVerdict', headName(x, H), iv(share[x], 2)));
      if (heads.length > 6) shown.push(t('cxAndMore', heads.length - 6));
      verdict.append(el('strong', null, t('cxPvVerdictHead', fx(s.minEffect, 2), dirName)), ' ', shown.join(c.lang === 'zh' ? '' : ' '));
    } else verdict.textContent = t('cxPvNoHead', fx(s.minEffect, 2), dirName);
    c.sum.push(verdict);
    if (heads.length) {
      const rows = heads.slice(0, 8).map((x) => ({ label: headName(x, H), items: [
        { ...g.pattern[x], name: names.pattern, color: C_PAT }, { ...g.value[x], name: names.value, color: C_VAL },
        { ...g.both[x], name: names.both, color: C_BOTH }] }));
      c.charts.push(intervalChart({ rows, title: t('cxPvIvTitle', dirName), xTitle: t('cxXScore'), width: Math.min(420, Math.max(280, c.bw - 4)),
        lang: c.lang, legend: { interval: t('cxLgInterval', c.level(s)), series: ['pattern', 'value', 'both'].map((k, i) =>
          ({ name: names[k], color: [C_PAT, C_VAL, C_BOTH][i] })) }, undefinedText: t('cxUndef') }));
    }
  }
  c.notes.push(t('cxPvNoteDir'), t('cxPvNoteShare'), t('cxNoteGap', c.d.minGap));
  c.json.options = { minGap: s.minGap, minEffect: s.minEffect, nBoot: s.nBoot, level: s.level, seed: s.seed };
  c.json.result = s;
}

function path(c) {
  const { t, d, L, H } = c, s = d.set, LH = L * H;
  const recv = d.receiver ? headName(d.receiver.layer * H + d.receiver.head, H) : null;
  pairsHead(c, s);
  c.sum.unshift(t('cxPathSum', recv ?? '—', t(s.direction === 'noise' ? 'cxNoiseShort' : 'cxDenoiseShort'),
    t(s.freezeMlp ? 'cxMlpFrozen' : 'cxMlpRecomputed')));
  const inputs = s.receivers.map((r) => r.input);
  if (s.n > 0) {
    // the strongest sender into the receiver head (its q, k or v), or into the logits when the receiver is the logits alone
    const heads = s.receivers.map((r, i) => i).filter((i) => s.receivers[i].input !== 'logits');
    const cols = (heads.length ? heads : s.receivers.map((r, i) => i)).map((i) => s.senders[i]);
    const score = (x) => Math.max(...cols.map((col) => (finite(col[x].mean) ? Math.abs(col[x].mean) : -Infinity)));
    const sel = d.sel ?? range(LH).reduce((a, x) => (score(x) > score(a) ? x : a), 0);
    d.sel = sel;
    $('cx-path-sender').value = String(sel);
    const title = (input) => (input === 'logits' ? t('cxInLogits') : t('cxIn', recv, input));
    const cell = cellSize(c, s.receivers.length);
    s.receivers.forEach((r, i) => c.charts.push(grid(c, {
      cells: s.senders[i], color: SCORE_COLOR, title: title(r.input), cell, selected: sel, role: `path-${r.input}`,
      naLegend: t('cxNoPath'), cellTitle: (x, it) => (it && finite(it.mean) ? t('cxPathCell', headName(x, H), title(r.input), iv(it)) : t('cxPathNa', headName(x, H))),
      cbar: i === s.receivers.length - 1 ? { scale: SCORE_COLOR, format: (v) => fx(v, 1) } : null,
      attrs: { 'data-input': r.input, 'data-receiver': r.input === 'logits' ? 'logits' : recv } })));
    c.detail = t('cxPathDetail', headName(sel, H), inputs.map((input, i) => `${input === 'logits' ? t('cxLogits') : input} ${
      finite(s.senders[i][sel].mean) ? iv(s.senders[i][sel]) : t('cxNa')}`)
      .join(c.lang === 'zh' ? '；' : ' · '), c.level(s), s.n);
    // the strongest paths, with their intervals
    const all = [];
    s.receivers.forEach((r, i) => s.senders[i].forEach((it, x) => { if (finite(it.mean)) all.push({ x, i, it, input: r.input }); }));
    all.sort((a, b) => Math.abs(b.it.mean) - Math.abs(a.it.mean));
    const top = all.slice(0, 8);
    if (top.length) {
      c.charts.push(intervalChart({ rows: top.map((p) => ({ label: `${headName(p.x, H)} → ${p.input === 'logits' ? t('cxLogits') : `${recv}.${p.input}`}`,
        items: [{ ...p.it, color: p.input === 'logits' ? '#555555' : C_KIND[p.input] }] })),
      title: t('cxPathTop'), xTitle: t('cxXScore'), width: Math.min(420, Math.max(280, c.bw - 4)), lang: c.lang,
      legend: { interval: t('cxLgInterval', c.level(s)) }, undefinedText: t('cxUndef') }));
      // the strongest path into the receiver head, and into the logits
      const into = (logits) => all.find((p) => (p.input === 'logits') === logits);
      const bh = into(false), bl = into(true);
      if (bh) c.sum.push(t('cxPathBest', recv, `${headName(bh.x, H)} → ${recv}.${bh.input}`, iv(bh.it)));
      if (bl) c.sum.push(t('cxPathBestLogits', headName(bl.x, H), iv(bl.it)));
    }
  }
  c.notes.push(t('cxPathNote'), t('cxNoteGap', c.d.minGap));
  c.json.options = { receiver: d.receiver, direction: s.direction, freezeMlp: s.freezeMlp, minGap: s.minGap, nBoot: s.nBoot, level: s.level, seed: s.seed };
  c.json.result = s;
}

function dla(c) {
  const { t, d, L, H } = c, s = d.set, LH = L * H;
  c.sum.push(t('cxPairs', s.n, c.name), t('cxHow', c.level(s), s.nBoot, s.seed));
  if (s.n > 0) {
    const sel = d.sel ?? range(LH).reduce((a, x) => (Math.abs(s.heads[x].mean ?? 0) > Math.abs(s.heads[a].mean ?? 0) ? x : a), 0);
    d.sel = sel;
    $('cx-dla-head').value = String(sel);
    const m = Math.max(1e-6, ...[...s.heads, ...s.fromDiff].map((x) => (finite(x.mean) ? Math.abs(x.mean) : 0)));
    const color = rdBuR(m);
    const cell = cellSize(c, 3);
    c.charts.push(
      grid(c, { cells: s.heads, color, title: t('cxDlaHeads'), cell, selected: sel, role: 'dla-heads',
        cellTitle: (x, it) => t('cxCell', headName(x, H), t('cxDlaHeads'), iv(it)) }),
      grid(c, { cells: s.fromDiff, color, title: t('cxDlaDiff'), cell, selected: sel, role: 'dla-diff',
        cellTitle: (x, it) => t('cxCell', headName(x, H), t('cxDlaDiff'), iv(it)), cbar: { scale: color, format: (v) => fx(v, 2) } }));
    c.detail = t('cxDlaDetail', headName(sel, H), iv(s.heads[sel]), iv(s.fromDiff[sel]), c.level(s), s.n);
    c.sum.push(t('cxDlaSum', iv(s.ld)));
    if (d.one) {
      const o = d.one, T = o.T;
      const items = range(T).map((j) => ({ label: `${j} ${tokenLabel(o.labels ? o.labels[j] : o.tokens[j], 12)}`, v: o.sources[sel * T + j], mark: !!o.changed[j] }));
      c.charts.push(sourceBars({ items, title: t('cxDlaBars', headName(sel, H), o.pair + 1, JSON.stringify(o.answerTokens[0]), JSON.stringify(o.answerTokens[1])), width: Math.min(460, Math.max(280, c.bw - 4)),
        lang: c.lang, markText: t('cxDlaChanged'), xTitle: t('cxDlaX'),
        barTitle: (j, it) => t('cxDlaBar', j, JSON.stringify(o.labels ? o.labels[j] : o.tokens[j]), fx(it.v, 4)) }));
      c.sum.push(t('cxDlaPair', o.pair + 1, JSON.stringify(o.answerTokens[0]), JSON.stringify(o.answerTokens[1]), fx(o.ld), fx(o.heads[sel]), headName(sel, H)));
      c.json.pair = { index: o.pair, tokens: o.tokens, answers: o.answerTokens, ld: o.ld, changed: o.changed,
        heads: Array.from(o.heads), sources: Array.from({ length: LH }, (_, x) => Array.from(o.sources.slice(x * T, (x + 1) * T))), terms: o.terms };
    }
  }
  if (d.oneError) c.sum.push(el('p', { class: 'cx-warn' }, t('cxDlaOneError', d.oneError)));
  c.notes.push(t('cxDlaNote'));
  c.json.options = { nBoot: s.nBoot, level: s.level, seed: s.seed };
  c.json.set = s.set ?? d.setName;
  c.json.n = s.n;
  c.json.result = s;
}

function comp(c) {
  const { t, d, L, H } = c, r = d.comp;
  const kinds = ['q', 'k', 'v'], upper = { q: 'Q', k: 'K', v: 'V' };
  const HH = H * H;
  const pairName = (x) => { const [l1, l2] = r.pairs[Math.floor(x / HH)], h1 = Math.floor(x / H) % H, h2 = x % H; return `L${l1}H${h1} → L${l2}H${h2}`; };
  const rows = kinds.map((k) => ({ key: k, label: upper[k], color: C_KIND[k], null: r.null[k],
    points: Array.from(r[k], (v, x) => ({ v, name: pairName(x) })) }));
  c.charts.push(compositionStrip({ rows, title: t('cxCompStrip'), xTitle: t('cxCompX'), width: Math.min(900, Math.max(300, c.bw - 4)), lang: c.lang,
    legend: { points: t('cxCompPoints'), band: t('cxCompBand'), line: t('cxCompLine') },
    pointTitle: (row, p) => t('cxCompPoint', row.label, p.name, fx(p.v), fx(row.null.hi)) }));
  // the grids, for the adjacent layers (every pair is in the strip above): sender (layer l, head) × receiver
  // head of layer l + 1, coloured by the excess over the null's 97.5 %
  const adjacent = r.pairs.map(([l1, l2], p) => (l2 === l1 + 1 ? p : -1)).filter((p) => p >= 0);
  const R = adjacent.length * H;
  if (R <= 48) {
    const at = (i) => adjacent[Math.floor(i / HH)] * HH + (i % HH); // grid cell i -> its index in the scores
    const ex = Math.max(1e-6, ...kinds.flatMap((k) => adjacent.flatMap((p) => Array.from(r[k].subarray(p * HH, (p + 1) * HH), (v) => Math.abs(v - (r.null[k].hi ?? 0))))));
    const div = rdBuR(ex);
    const rowLabels = range(R).map((x) => `L${r.pairs[adjacent[Math.floor(x / H)]][0]}H${x % H}`);
    for (const k of kinds) {
      const hi = r.null[k].hi ?? 0;
      c.charts.push(headGrid({ cells: range(R * H).map((i) => ({ mean: r[k][at(i)] })), R, C: H, color: (v) => div(v - hi), cell: R > 12 ? 16 : 28,
        annotate: R > 12 ? null : (v) => fx(v, 2), title: t('cxCompGrid', upper[k]), rowLabels, colLabels: range(H).map(String),
        rowTitle: t('cxCompRows'), colTitle: t('cxCompCols'), names: (i) => pairName(at(i)), role: `comp-${k}`, lang: c.lang, rowGroup: H,
        cellTitle: (i, it) => t('cxCompPoint', upper[k], pairName(at(i)), fx(it.mean), fx(hi)), attrs: { 'data-kind': k, 'data-null-hi': fx(hi, 6) } }));
    }
  }
  for (const k of kinds) {
    const hi = r.null[k].hi, vals = Array.from(r[k]), wm = r.withinModel[k];
    const above = finite(hi) ? vals.filter((v) => v > hi).length : 0;
    const aboveModel = vals.filter((v) => v > wm.hi).length;
    const best = vals.reduce((a, v, x) => (v > vals[a] ? x : a), 0);
    c.sum.push(t('cxCompSum', upper[k], above, vals.length, fx(hi), pairName(best), fx(vals[best])));
    c.sum.push(t('cxCompModel', upper[k], fx(wm.median), fx(wm.lo), fx(wm.hi), aboveModel));
  }
  c.sum.push(t('cxCompHow', r.nNull, r.seed));
  c.notes.push(t('cxCompNote'), t('cxCompGridNote'));
  c.json.result = { nLayer: r.nLayer, nHead: r.nHead, nNull: r.nNull, seed: r.seed, null: r.null, withinModel: r.withinModel,
    ...Object.fromEntries(kinds.map((k) => [k, Array.from(r[k], (v, x) => ({ pair: pairName(x), score: v, rankInLayerPair: r.rank[k][x] }))])) };
}

function trace(c) {
  const { t, d, L } = c, s = d.set;
  pairsHead(c, s);
  if (s.n > 0) {
    const series = [['attnC', s.attn.corrupted, t('cxTrAttnC')], ['attnL', s.attn.last, t('cxTrAttnL')],
                    ['mlpC', s.mlp.corrupted, t('cxTrMlpC')], ['mlpL', s.mlp.last, t('cxTrMlpL')]];
    c.charts.push(intervalChart({ rows: range(L).map((l) => ({ label: t('cxLayerRow', l),
      items: series.map(([k, v, name]) => ({ ...v[l], name, color: C_TRACE[k] })) })),
    title: t('cxTrChart'), xTitle: t('cxXScore'), width: Math.min(560, Math.max(300, c.bw - 4)), lang: c.lang,
    legend: { interval: t('cxLgInterval', c.level(s)), series: series.map(([k, , name]) => ({ name, color: C_TRACE[k] })) },
    undefinedText: t('cxUndef') }));
    let best = null;
    for (const [, v, name] of series) v.forEach((it, l) => { if (finite(it.mean) && (!best || it.mean > best.it.mean)) best = { it, l, name }; });
    if (best) c.sum.push(t('cxTrBest', best.name, best.l, iv(best.it)));
  }
  c.notes.push(t('cxTrNote'), t('cxNoteGap', c.d.minGap));
  c.json.options = { minGap: s.minGap, nBoot: s.nBoot, level: s.level, seed: s.seed };
  c.json.result = s;
}
