// circuits-panel.js — "Where a head looks, what it moves" (docs/evidence.md § 6–11): five cards under the
// evidence panel (evidence-panel.js makes this panel and passes it the model and the language), on the
// model's circuits API through the page's worker (WorkerModel: progress events, cancel by AbortSignal):
//
//   cx-pv     pattern vs value patching over a set of pairs (patternValueSet): three layer × head grids
//             (pattern, value, both) for the direction chosen, and the pattern's share of each head's effect
//   cx-path   path patching into one receiver head's query, key and value, and into the logits (pathPatchingSet)
//   cx-dla    direct logit attribution (attributionSet), and one head's term on the first pair by source position
//             (directLogitAttribution)
//   cx-comp   Q-, K- and V-composition scores of adjacent layers against their Gaussian null (compositionScores)
//   cx-trace  causal tracing by component: attention and MLP per layer (componentTracingSet)
//
// The cards follow the evidence panel's conventions: a rung label, a source (a built-in pair set with the
// page's default limit, or the reader's own pairs), Compute and Cancel, a status line with progress, the
// charts, summary lines, notes, and SVG / PNG / JSON exports; data-state idle | busy | done | error and data-n
// on each card. Every number drawn or written comes from the API's result. Strings: the page's table (i18n.js, cx*).

import { $, el, replace, setOptions } from '../ui/dom.js';
import { attachTooltip } from '../ui/tooltip.js';
import { translator } from './i18n.js';
import { toElement } from '../figures/index.js';
import { intervalChart } from '../figures/evidence.js';
import { headGrid, compositionStrip, sourceBars } from '../figures/circuits.js';
import { rdBuR } from '../figures/colour.js';
import { tokenLabel } from '../figures/text.js';
import { readableTokens } from './readable.js';
import { composeSvg, exportSvgNode, exportJsonData, cardDesc } from './export.js';
import { EVIDENCE_SETS } from '../evidence-sets.js';
import { inductionPairs, inductionPrevPairs } from '../sets.js';

const GPT2_VOCAB = 50257; // the induction sets are GPT-2 token ids
export const CX_CARDS = Object.freeze(['cx-pv', 'cx-path', 'cx-dla', 'cx-comp', 'cx-trace']);
const PAIR_CARDS = ['cx-pv', 'cx-path', 'cx-dla', 'cx-trace'];
const FILES = { 'cx-pv': 'attnlab_circuits_pattern_value', 'cx-path': 'attnlab_circuits_path_patching',
                'cx-dla': 'attnlab_circuits_logit_attribution', 'cx-comp': 'attnlab_circuits_composition',
                'cx-trace': 'attnlab_circuits_component_tracing' };
const SETS = ['induction', 'induction-prev', 'pairs'];
/** The pairs of a built-in set, as the API builds them (ids for the induction sets, text for the minimal pairs). */
const setPairs = (name) => (name === 'induction' ? inductionPairs(GPT2_VOCAB) : name === 'induction-prev' ? inductionPrevPairs(GPT2_VOCAB)
  : EVIDENCE_SETS.pairs.pairs.map((p) => [p.clean, p.corrupt, p.answers]));
const SET_SIZE = Object.fromEntries(SETS.map((s) => [s, setPairs(s).length]));
const DEFAULT_SET = { 'cx-pv': 'induction', 'cx-path': 'induction-prev', 'cx-dla': 'induction', 'cx-trace': 'induction' };
/** The page's default limit, as the patching card's: the whole induction set (each card's press stays under a minute). */
const LIMIT = SET_SIZE.induction;
/** Fewer pairs than this: the card says that its means are rough. */
const FEW = 5;
/** The cards whose grids select a head (a click on a cell, or this select). */
const SELECT = { 'cx-pv': 'cx-pv-head', 'cx-path': 'cx-path-sender', 'cx-dla': 'cx-dla-head' };
const RUNG = { 'cx-pv': 2, 'cx-path': 2, 'cx-dla': 1, 'cx-comp': 1, 'cx-trace': 2 };
const KEY = { 'cx-pv': 'Pv', 'cx-path': 'Path', 'cx-dla': 'Dla', 'cx-comp': 'Comp', 'cx-trace': 'Tr' };
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

// ── the cards' markup (the evidence panel's conventions: ids `${card}-go`, `-stop`, `-status`, `-charts`, …) ──

const field = (id, child) => el('label', { class: 'field', id: `${id}-field` }, el('span', { id: `${id}-label` }), child);
const numberInput = (id, value, step, min = '0') => el('input', { id, type: 'number', min, step, value: String(value), inputmode: 'decimal' });

/** The source of a pair card: a built-in set (with its limit) or the reader's list; the min. gap. */
function sourceFields(id) {
  return [
    el('fieldset', { class: 'field segmented ev-src' }, el('legend', { id: `${id}-src-legend` }),
      ...['set', 'list'].flatMap((v) => [el('input', { type: 'radio', id: `${id}-src-${v}`, name: `${id}-src`, value: v, checked: v === 'set' }),
        el('label', { for: `${id}-src-${v}`, id: `${id}-src-${v}-label` })])),
    field(`${id}-set`, el('select', { id: `${id}-set` })),
    field(`${id}-limit`, el('span', { class: 'ev-limit' },
      el('input', { id: `${id}-limit`, type: 'number', min: '1', step: '1', value: String(LIMIT), inputmode: 'numeric' }),
      el('span', { class: 'ev-of', id: `${id}-of` }))),
    id === 'cx-dla' ? null : field(`${id}-gap`, numberInput(`${id}-gap`, 1, '0.1')),
  ];
}

/** A card: its head, text, form (controls, source, after, buttons), list, status, view controls, charts, lines, notes, exports. */
function cardNode(id, controls, view, after = []) {
  const pairs = PAIR_CARDS.includes(id);
  return el('section', { class: 'fig hp ev-card cx-card', id, dataset: { state: 'idle', source: pairs ? 'set' : 'weights' } },
    el('header', { class: 'fig-head' }, el('h2', { id: `${id}-h` }), el('span', { class: `rung rung-${RUNG[id]}`, id: `${id}-rung` })),
    el('p', { class: 'fig-text', id: `${id}-text` }),
    el('div', { class: 'hp-form hp-inline ev-form' }, ...controls, ...(pairs ? sourceFields(id) : []), ...after,
      el('span', { class: 'ev-buttons' },
        el('button', { class: 'btn btn-primary', type: 'button', id: `${id}-go` }),
        el('button', { class: 'btn', type: 'button', id: `${id}-stop`, disabled: true }))),
    pairs ? el('div', { class: 'ev-list', id: `${id}-list-box`, hidden: true },
      el('label', { class: 'field' }, el('span', { id: `${id}-list-label` }),
        el('textarea', { id: `${id}-list`, rows: 4, spellcheck: 'false',
          placeholder: 'The man promised that | The woman promised that |  he |  she\nThe keys to the cabinet | The key to the cabinet' })),
      el('p', { class: 'hint', id: `${id}-list-count` })) : null,
    el('p', { class: 'hp-status', id: `${id}-status`, role: 'status', 'aria-live': 'polite' }),
    view ? el('div', { class: 'hp-form hp-inline cx-view', id: `${id}-view`, hidden: true }, ...view) : null,
    el('div', { class: 'hp-row', id: `${id}-charts` }),
    el('p', { class: 'cx-detail', id: `${id}-detail`, 'aria-live': 'polite' }),
    el('div', { class: 'hp-summary', id: `${id}-sum` }),
    el('ul', { class: 'ev-notes', id: `${id}-notes` }),
    el('div', { class: 'hp-presets' }, ...['svg', 'png', 'json'].map((k) =>
      el('button', { class: 'btn btn-small', type: 'button', id: `${id}-x-${k}`, disabled: true }))));
}

export class CircuitsPanel {
  /** @param {{lang(): string, parseList(text: string, pairs: true): {inputs?: Array, bad?: number}}} env (parseList: evidence-panel.js's) */
  constructor(env) {
    this.env = env;
    this.model = null;
    this.config = null;
    this.data = {};      // card id -> what it computed
    this.charts = {};    // card id -> the svg node trees drawn (what SVG / PNG export)
    this.json = {};      // card id -> what JSON exports
    this.abort = {};
    this.sel = {};       // card id -> the selected cell (flat index)
    this.#build();
  }

  get t() { return translator(this.env.lang()); }

  setModel(model, config) {
    this.model = model;
    this.config = config;
    for (const id of CX_CARDS) this.#reset(id);
    this.sel = {};
    this.#fillSelects();
    this.#fillSets();
  }

  setLang() {
    if (!document.getElementById('cx')) return;
    this.#texts();
    for (const id of CX_CARDS) if (this.data[id]) this.#draw(id);
  }

  // ── building ─────────────────────────────────────────────────────────────

  #build() {
    const root = document.getElementById('evidence');
    if (!root) return;
    const dirRadio = (v) => [el('input', { type: 'radio', id: `cx-pv-dir-${v}`, name: 'cx-pv-dir', value: v, checked: v === 'denoise' }),
      el('label', { for: `cx-pv-dir-${v}`, id: `cx-pv-dir-${v}-label` })];
    root.append(
      el('header', { class: 'heads-head cx-head', id: 'cx' }, el('h2', { id: 'cx-title' }), el('p', { class: 'fig-text', id: 'cx-intro' })),
      cardNode('cx-pv', [],
        [el('fieldset', { class: 'field segmented' }, el('legend', { id: 'cx-pv-dir-legend' }), ...dirRadio('denoise'), ...dirRadio('noise')),
          field('cx-pv-head', el('select', { id: 'cx-pv-head' }))],
        [field('cx-pv-min', numberInput('cx-pv-min', 0.1, '0.05'))]),
      cardNode('cx-path', [field('cx-path-layer', el('select', { id: 'cx-path-layer' })), field('cx-path-head', el('select', { id: 'cx-path-head' })),
        field('cx-path-dir', el('select', { id: 'cx-path-dir' })),
        el('label', { class: 'check cx-check' }, el('input', { type: 'checkbox', id: 'cx-path-freeze' }), el('span', { id: 'cx-path-freeze-label' }))],
      [field('cx-path-sender', el('select', { id: 'cx-path-sender' }))]),
      cardNode('cx-dla', [], [field('cx-dla-head', el('select', { id: 'cx-dla-head' }))]),
      cardNode('cx-comp', [field('cx-comp-null', numberInput('cx-comp-null', 200, '1', '1'))]),
      cardNode('cx-trace', []));
    this.#wire();
    this.#texts();
    this.#fillSets();
    for (const id of PAIR_CARDS) this.#sourceShown(id);
  }

  #wire() {
    for (const id of CX_CARDS) {
      $(`${id}-go`).addEventListener('click', () => this.#compute(id));
      $(`${id}-stop`).addEventListener('click', () => this.abort[id]?.abort());
      for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).addEventListener('click', () => this.#export(id, k));
      // a click on a cell of a grid selects its head (or sender) in every grid of the card
      if (SELECT[id]) $(`${id}-charts`).addEventListener('click', (e) => {
        const cell = e.target.closest && e.target.closest('[data-k][data-v]');
        if (!cell || !this.data[id] || cell.dataset.missing) return;
        this.#select(id, Number(cell.dataset.k));
      });
      if (!PAIR_CARDS.includes(id)) continue;
      for (const v of ['set', 'list']) $(`${id}-src-${v}`).addEventListener('change', () => this.#sourceShown(id));
      $(`${id}-set`).addEventListener('change', () => this.#limitShown(id));
      $(`${id}-list`).addEventListener('input', () => this.#listCount(id));
    }
    for (const v of ['denoise', 'noise']) $(`cx-pv-dir-${v}`).addEventListener('change', () => { if (this.data['cx-pv']) this.#draw('cx-pv'); });
    for (const [id, sel] of Object.entries(SELECT)) $(sel).addEventListener('change', () => this.#select(id, Number($(sel).value)));
    $('cx-path-layer').addEventListener('change', () => this.#fillReceiverHeads());
    const tip = document.getElementById('tip');
    if (tip) attachTooltip(tip, CX_CARDS.map((id) => $(`${id}-charts`)));
  }

  #texts() {
    const t = this.t;
    const set = (id, v) => { const n = document.getElementById(id); if (n) n.textContent = v; };
    set('cx-title', t('cxTitle'));
    set('cx-intro', t('cxIntro'));
    for (const id of CX_CARDS) {
      const k = KEY[id];
      set(`${id}-h`, t(`cx${k}Title`));
      set(`${id}-text`, t(`cx${k}Text`));
      set(`${id}-rung`, RUNG[id] === 1 ? t('cxRung1') : t('cxRung2'));
      set(`${id}-go`, t('cxCompute'));
      set(`${id}-stop`, t('cxCancel'));
      set(`${id}-x-svg`, 'SVG');
      set(`${id}-x-png`, 'PNG');
      set(`${id}-x-json`, 'JSON');
      if (!PAIR_CARDS.includes(id)) continue;
      set(`${id}-src-legend`, t('cxSource'));
      set(`${id}-src-set-label`, t('cxSrcSet'));
      set(`${id}-src-list-label`, t('cxSrcList'));
      set(`${id}-set-label`, t('cxSetLabel'));
      set(`${id}-limit-label`, t('cxLimit'));
      set(`${id}-gap-label`, t('cxMinGap'));
      set(`${id}-list-label`, t('cxListLabel'));
      this.#limitShown(id);
      this.#listCount(id);
    }
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
    this.#fillSets();
  }

  #fillSelects() {
    if (!this.config) return;
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

  /** The built-in sets this model can take: the induction sets are GPT-2 ids. */
  #sets() {
    return SETS.filter((s) => s === 'pairs' || !this.config || this.config.vocabSize === GPT2_VOCAB);
  }

  #fillSets() {
    const t = this.t;
    const label = { induction: t('cxSetInduction', SET_SIZE.induction), 'induction-prev': t('cxSetPrev', SET_SIZE['induction-prev']),
                    pairs: t('cxSetPairs', SET_SIZE.pairs) };
    const sets = this.#sets();
    for (const id of PAIR_CARDS) {
      const sel = document.getElementById(`${id}-set`);
      if (!sel) continue;
      const cur = sets.includes(sel.value) ? sel.value : sets.includes(DEFAULT_SET[id]) ? DEFAULT_SET[id] : sets[0];
      setOptions(sel, sets.map((s) => ({ value: s, label: label[s] })), cur);
      this.#limitShown(id);
    }
  }

  #source(id) {
    return $(`${id}-src-list`).checked ? 'list' : 'set';
  }

  #sourceShown(id) {
    const src = this.#source(id);
    $(id).dataset.source = src;
    $(`${id}-set-field`).hidden = src !== 'set';
    $(`${id}-limit-field`).hidden = src !== 'set';
    $(`${id}-list-box`).hidden = src !== 'list';
    this.#limitShown(id);
  }

  #limitShown(id) {
    const sel = document.getElementById(`${id}-set`), inp = document.getElementById(`${id}-limit`);
    if (!sel || !inp) return;
    const size = SET_SIZE[sel.value] || SET_SIZE[DEFAULT_SET[id]];
    inp.max = String(size);
    $(`${id}-of`).textContent = this.t('cxOf', size);
  }

  #listCount(id) {
    const box = document.getElementById(`${id}-list-count`);
    if (!box) return;
    const r = this.env.parseList($(`${id}-list`).value, true);
    box.textContent = r.bad ? this.t('cxListBad', r.bad) : this.t('cxListCount', r.inputs.length);
  }

  // ── computing ────────────────────────────────────────────────────────────

  #reset(id) {
    this.abort[id]?.abort();
    delete this.abort[id];
    delete this.data[id];
    delete this.charts[id];
    delete this.json[id];
    const card = document.getElementById(id);
    if (!card) return;
    card.dataset.state = 'idle';
    delete card.dataset.n;
    for (const k of ['charts', 'notes', 'sum', 'detail']) replace($(`${id}-${k}`));
    const view = document.getElementById(`${id}-view`);
    if (view) view.hidden = true;
    $(`${id}-status`).textContent = '';
    $(`${id}-status`).classList.remove('busy', 'error');
    for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).disabled = true;
    $(`${id}-go`).disabled = false;
    $(`${id}-stop`).disabled = true;
  }

  /** The pairs and options of a card's source; {error} when the list cannot be read. */
  #pairArgs(id) {
    const t = this.t;
    const g = Number(document.getElementById(`${id}-gap`)?.value);
    const minGap = Number.isFinite(g) && g >= 0 ? g : 1;
    if (document.getElementById(`${id}-gap`)) $(`${id}-gap`).value = String(minGap);
    if (this.#source(id) === 'set') {
      const name = $(`${id}-set`).value, size = SET_SIZE[name];
      const v = Math.floor(Number($(`${id}-limit`).value));
      const limit = Number.isFinite(v) && v >= 1 ? Math.min(v, size) : Math.min(LIMIT, size);
      $(`${id}-limit`).value = String(limit);
      return { pairs: name, list: setPairs(name).slice(0, limit), name, opts: { limit }, minGap };
    }
    const r = this.env.parseList($(`${id}-list`).value, true);
    if (r.bad) return { error: t('cxListBad', r.bad) };
    if (!r.inputs.length) return { error: t('cxListEmpty') };
    return { pairs: r.inputs, list: r.inputs, name: 'list', opts: {}, minGap };
  }

  /** One head's term on the first pair kept, by the position it reads from (the grids stand without it). */
  async #firstPairSources(d, model, args, aborted) {
    const p0 = d.set.perInput[0], pair = args.list[p0.index];
    try {
      const one = await Promise.race([model.directLogitAttribution(pair[0], { answers: p0.answers }), aborted]);
      const ids = async (x) => (typeof x === 'string' ? Array.from((await model.tokenize(x)).ids) : Array.from(x));
      const [a, b] = [await ids(pair[0]), await ids(pair[1])];
      // labels a reader can read: a token that holds part of a character is shown by its bytes, never as "\uFFFD"
      const readable = readableTokens(await model.tokenBytes(a));
      d.one = { ...one, changed: a.map((x, j) => x !== b[j]), pair: p0.index, answerTokens: p0.answerTokens, labels: readable.labels };
    } catch (e) {
      if (e && e.code === 'EABORT') throw e;
      d.oneError = `${e.code ? e.code + ': ' : ''}${e.message}`;
    }
  }

  async #compute(id) {
    if (!this.model) return;
    this.abort[id]?.abort();
    const t = this.t, status = $(`${id}-status`), card = $(id);
    const args = PAIR_CARDS.includes(id) ? this.#pairArgs(id) : null;
    if (args && args.error) {
      status.textContent = args.error;
      status.classList.add('error');
      return;
    }
    const ac = new AbortController();
    this.abort[id] = ac;
    const model = this.model, signal = ac.signal;
    card.dataset.state = 'busy';
    $(`${id}-go`).disabled = true;
    $(`${id}-stop`).disabled = false;
    status.classList.remove('error');
    status.classList.add('busy');
    status.textContent = t('cxComputing');
    const onProgress = (e) => { if (this.abort[id] === ac) status.textContent = `${this.t('cxComputing')} ${e.done} / ${e.total}`; };
    const aborted = new Promise((_, reject) => signal.addEventListener('abort', () =>
      reject(Object.assign(new Error('cancelled'), { code: 'EABORT' })), { once: true }));
    aborted.catch(() => {}); // only the plain calls (not the sets, which take the signal) race against it
    try {
      const d = { source: args ? (args.name === 'list' ? 'list' : 'set') : 'weights', setName: args ? args.name : null };
      if (id === 'cx-pv') {
        const m = Number($('cx-pv-min').value), minEffect = Number.isFinite(m) && m >= 0 ? m : 0.1;
        $('cx-pv-min').value = String(minEffect);
        d.set = await model.patternValueSet(args.pairs, { ...args.opts, minGap: args.minGap, minEffect, onProgress, signal });
      } else if (id === 'cx-path') {
        const layer = Number($('cx-path-layer').value), head = Number($('cx-path-head').value);
        const receivers = [...(this.config.nLayer > 1 ? ['q', 'k', 'v'].map((input) => ({ layer, head, input })) : []), { input: 'logits' }];
        d.receiver = this.config.nLayer > 1 ? { layer, head } : null;
        d.set = await model.pathPatchingSet(args.pairs, { ...args.opts, minGap: args.minGap, receivers, direction: $('cx-path-dir').value,
          freezeMlp: $('cx-path-freeze').checked, onProgress, signal });
      } else if (id === 'cx-dla') {
        d.set = await model.attributionSet(args.pairs, { ...args.opts, onProgress, signal });
        if (d.set.n > 0) await this.#firstPairSources(d, model, args, aborted);
      } else if (id === 'cx-comp') {
        const v = Math.floor(Number($('cx-comp-null').value)), nNull = Number.isFinite(v) && v >= 1 ? Math.min(v, 5000) : 200;
        $('cx-comp-null').value = String(nNull);
        d.comp = await Promise.race([model.compositionScores({ nNull, seed: 1 }), aborted]);
      } else {
        d.set = await model.componentTracingSet(args.pairs, { ...args.opts, minGap: args.minGap, onProgress, signal });
      }
      if (this.abort[id] !== ac || model !== this.model) return;
      if (args) d.minGap = args.minGap;
      this.data[id] = d;
      delete this.sel[id];
      status.textContent = '';
      card.dataset.state = 'done';
      if (d.set) card.dataset.n = String(d.set.n);
      else delete card.dataset.n;
      this.#draw(id);
    } catch (e) {
      if (this.abort[id] !== ac) return;
      card.dataset.state = 'error';
      status.classList.add('error');
      status.textContent = e && e.code === 'EABORT' ? t('cxCancelled') : `${e.code ? e.code + ': ' : ''}${e.message}`;
    } finally {
      if (this.abort[id] === ac) {
        status.classList.remove('busy');
        if (card.dataset.state === 'error' && status.textContent === this.t('cxCancelled')) status.classList.remove('error');
        $(`${id}-go`).disabled = false;
        $(`${id}-stop`).disabled = true;
      }
    }
  }

  // ── drawing ──────────────────────────────────────────────────────────────

  #select(id, k) {
    if (!this.data[id] || !Number.isInteger(k)) return;
    this.sel[id] = k;
    this.#draw(id);
  }

  #draw(id) {
    const d = this.data[id], t = this.t, lang = this.env.lang();
    const box = $(`${id}-charts`), bw = box.clientWidth || 900;
    const { nLayer: L, nHead: H } = this.config;
    const c = { d, t, lang, bw, L, H, charts: [], sum: [], notes: [], detail: '', json: {},
      axes: { rowLabels: range(L).map(String), colLabels: range(H).map(String), rowTitle: t('cxLayerAxis'), colTitle: t('cxHeadAxis'),
        names: (k) => headName(k, H), lang } };
    const part = { 'cx-pv': this.#pv, 'cx-path': this.#path, 'cx-dla': this.#dla, 'cx-comp': this.#comp, 'cx-trace': this.#trace }[id];
    part.call(this, c);
    this.charts[id] = c.charts;
    this.json[id] = { generator: 'attnlab page', card: id, ...c.json };
    replace(box, ...c.charts.map((x) => el('div', { class: 'hp-svg' }, toElement(x, document))));
    $(`${id}-detail`).textContent = c.detail;
    replace($(`${id}-sum`), ...c.sum.filter(Boolean).map((x) => (typeof x === 'string' ? el('p', null, x) : x)));
    replace($(`${id}-notes`), ...c.notes.filter(Boolean).map((x) => el('li', null, x)));
    const view = document.getElementById(`${id}-view`);
    if (view) view.hidden = !c.charts.length;
    for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).disabled = k !== 'json' && !c.charts.length;
  }

  #setName(d) {
    const t = this.t;
    if (d.source === 'list') return t('cxNameList');
    return { induction: t('cxNameInduction'), 'induction-prev': t('cxNamePrev'), pairs: t('cxNamePairs') }[d.setName] || String(d.setName);
  }

  #level(s) { return this.t('cxLevel', Math.round((s.level ?? 0.95) * 100)); }

  /** The lines every pair card starts with: how many pairs, which, how the intervals were made, and what was skipped. */
  #head(c, s) {
    const t = c.t, skipped = s.skipped || [];
    c.sum.push(t('cxKept', s.n, s.n + skipped.length, this.#setName(c.d)));
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
    c.sum.push(t('cxHow', this.#level(s), s.nBoot, s.seed));
    if (s.n === 0) c.sum.push(el('p', { class: 'cx-warn' }, t('cxNone')));
    else if (s.n < FEW) c.sum.push(el('p', { class: 'cx-warn' }, t('cxFew', s.n)));
    c.json.set = s.set ?? c.d.setName;
    c.json.n = s.n;
    c.json.skipped = skipped;
  }

  #grid(c, o) {
    return headGrid({ ...c.axes, R: c.L, C: c.H, annotate: cellText, ...o });
  }

  /** One cell size for n layer × head grids side by side in the card, with a colour bar right of the last. */
  #cell(c, n) {
    const labW = 48, cbarW = 64, gap = 18;
    return Math.max(18, Math.min(34, Math.floor((c.bw - (n - 1) * gap - n * labW - cbarW) / (n * c.H))));
  }

  #pv(c) {
    const { t, d, L, H } = c, s = d.set, LH = L * H;
    const dir = $('cx-pv-dir-noise').checked ? 'noise' : 'denoise';
    const dirName = t(dir === 'noise' ? 'cxNoiseShort' : 'cxDenoiseShort');
    this.#head(c, s);
    $('cx-pv').dataset.dir = dir;
    if (s.n > 0) {
      const g = s.grid[dir];
      const effect = (x) => (finite(g.both[x].mean) ? (dir === 'denoise' ? g.both[x].mean : 1 - g.both[x].mean) : -Infinity);
      const sel = this.sel['cx-pv'] ?? range(LH).reduce((a, x) => (effect(x) > effect(a) ? x : a), 0);
      this.sel['cx-pv'] = sel;
      $('cx-pv-head').value = String(sel);
      const names = { pattern: t('cxPattern'), value: t('cxValue'), both: t('cxBoth') };
      const cell = this.#cell(c, 3);
      ['pattern', 'value', 'both'].forEach((k, i) => c.charts.push(this.#grid(c, {
        cells: g[k], color: SCORE_COLOR, title: t('cxGridTitle', names[k], dirName), cell, selected: sel, role: `pv-${k}`,
        cellTitle: (x, it) => t('cxCell', headName(x, H), names[k], iv(it)),
        cbar: i === 2 ? { scale: SCORE_COLOR, format: (v) => fx(v, 1) } : null,
        attrs: { 'data-kind': k, 'data-dir': dir } })));
      const at = (k) => g[k][sel];
      c.detail = t('cxPvDetail', headName(sel, H), dirName, iv(at('pattern')), iv(at('value')), iv(at('both')), this.#level(s), s.n);
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
          lang: c.lang, legend: { interval: t('cxLgInterval', this.#level(s)), series: ['pattern', 'value', 'both'].map((k, i) =>
            ({ name: names[k], color: [C_PAT, C_VAL, C_BOTH][i] })) }, undefinedText: t('cxUndef') }));
      }
    }
    c.notes.push(t('cxPvNoteDir'), t('cxPvNoteShare'), t('cxNoteGap', c.d.minGap));
    c.json.options = { minGap: s.minGap, minEffect: s.minEffect, nBoot: s.nBoot, level: s.level, seed: s.seed };
    c.json.result = s;
  }

  #path(c) {
    const { t, d, L, H } = c, s = d.set, LH = L * H;
    const recv = d.receiver ? headName(d.receiver.layer * H + d.receiver.head, H) : null;
    this.#head(c, s);
    c.sum.unshift(t('cxPathSum', recv ?? '—', t(s.direction === 'noise' ? 'cxNoiseShort' : 'cxDenoiseShort'),
      t(s.freezeMlp ? 'cxMlpFrozen' : 'cxMlpRecomputed')));
    const inputs = s.receivers.map((r) => r.input);
    if (s.n > 0) {
      // the strongest sender into the receiver head (its q, k or v), or into the logits when the receiver is the logits alone
      const heads = s.receivers.map((r, i) => i).filter((i) => s.receivers[i].input !== 'logits');
      const cols = (heads.length ? heads : s.receivers.map((r, i) => i)).map((i) => s.senders[i]);
      const score = (x) => Math.max(...cols.map((col) => (finite(col[x].mean) ? Math.abs(col[x].mean) : -Infinity)));
      const sel = this.sel['cx-path'] ?? range(LH).reduce((a, x) => (score(x) > score(a) ? x : a), 0);
      this.sel['cx-path'] = sel;
      $('cx-path-sender').value = String(sel);
      const title = (input) => (input === 'logits' ? t('cxInLogits') : t('cxIn', recv, input));
      const cell = this.#cell(c, s.receivers.length);
      s.receivers.forEach((r, i) => c.charts.push(this.#grid(c, {
        cells: s.senders[i], color: SCORE_COLOR, title: title(r.input), cell, selected: sel, role: `path-${r.input}`,
        naLegend: t('cxNoPath'), cellTitle: (x, it) => (it && finite(it.mean) ? t('cxPathCell', headName(x, H), title(r.input), iv(it)) : t('cxPathNa', headName(x, H))),
        cbar: i === s.receivers.length - 1 ? { scale: SCORE_COLOR, format: (v) => fx(v, 1) } : null,
        attrs: { 'data-input': r.input, 'data-receiver': r.input === 'logits' ? 'logits' : recv } })));
      c.detail = t('cxPathDetail', headName(sel, H), inputs.map((input, i) => `${input === 'logits' ? t('cxLogits') : input} ${
        finite(s.senders[i][sel].mean) ? iv(s.senders[i][sel]) : t('cxNa')}`)
        .join(c.lang === 'zh' ? '；' : ' · '), this.#level(s), s.n);
      // the strongest paths, with their intervals
      const all = [];
      s.receivers.forEach((r, i) => s.senders[i].forEach((it, x) => { if (finite(it.mean)) all.push({ x, i, it, input: r.input }); }));
      all.sort((a, b) => Math.abs(b.it.mean) - Math.abs(a.it.mean));
      const top = all.slice(0, 8);
      if (top.length) {
        c.charts.push(intervalChart({ rows: top.map((p) => ({ label: `${headName(p.x, H)} → ${p.input === 'logits' ? t('cxLogits') : `${recv}.${p.input}`}`,
          items: [{ ...p.it, color: p.input === 'logits' ? '#555555' : C_KIND[p.input] }] })),
        title: t('cxPathTop'), xTitle: t('cxXScore'), width: Math.min(420, Math.max(280, c.bw - 4)), lang: c.lang,
        legend: { interval: t('cxLgInterval', this.#level(s)) }, undefinedText: t('cxUndef') }));
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

  #dla(c) {
    const { t, d, L, H } = c, s = d.set, LH = L * H;
    c.sum.push(t('cxPairs', s.n, this.#setName(d)), t('cxHow', this.#level(s), s.nBoot, s.seed));
    if (s.n > 0) {
      const sel = this.sel['cx-dla'] ?? range(LH).reduce((a, x) => (Math.abs(s.heads[x].mean ?? 0) > Math.abs(s.heads[a].mean ?? 0) ? x : a), 0);
      this.sel['cx-dla'] = sel;
      $('cx-dla-head').value = String(sel);
      const m = Math.max(1e-6, ...[...s.heads, ...s.fromDiff].map((x) => (finite(x.mean) ? Math.abs(x.mean) : 0)));
      const color = rdBuR(m);
      const cell = this.#cell(c, 3);
      c.charts.push(
        this.#grid(c, { cells: s.heads, color, title: t('cxDlaHeads'), cell, selected: sel, role: 'dla-heads',
          cellTitle: (x, it) => t('cxCell', headName(x, H), t('cxDlaHeads'), iv(it)) }),
        this.#grid(c, { cells: s.fromDiff, color, title: t('cxDlaDiff'), cell, selected: sel, role: 'dla-diff',
          cellTitle: (x, it) => t('cxCell', headName(x, H), t('cxDlaDiff'), iv(it)), cbar: { scale: color, format: (v) => fx(v, 2) } }));
      c.detail = t('cxDlaDetail', headName(sel, H), iv(s.heads[sel]), iv(s.fromDiff[sel]), this.#level(s), s.n);
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

  #comp(c) {
    const { t, d, L, H } = c, r = d.comp;
    const kinds = ['q', 'k', 'v'], upper = { q: 'Q', k: 'K', v: 'V' };
    const pairName = (x) => { const l = Math.floor(x / (H * H)), h1 = Math.floor(x / H) % H, h2 = x % H; return `L${l}H${h1} → L${l + 1}H${h2}`; };
    const rows = kinds.map((k) => ({ key: k, label: upper[k], color: C_KIND[k], null: r.null[k],
      points: Array.from(r[k], (v, x) => ({ v, name: pairName(x) })) }));
    c.charts.push(compositionStrip({ rows, title: t('cxCompStrip'), xTitle: t('cxCompX'), width: Math.min(900, Math.max(300, c.bw - 4)), lang: c.lang,
      legend: { points: t('cxCompPoints'), band: t('cxCompBand'), line: t('cxCompLine') },
      pointTitle: (row, p) => t('cxCompPoint', row.label, p.name, fx(p.v), fx(row.null.hi)) }));
    // the grids: sender (layer l, head) × receiver head of layer l + 1, coloured by the excess over the null's 97.5 %
    const R = (L - 1) * H;
    if (R <= 48) {
      const ex = Math.max(1e-6, ...kinds.flatMap((k) => Array.from(r[k], (v) => Math.abs(v - (r.null[k].hi ?? 0)))));
      const div = rdBuR(ex);
      const rowLabels = range(R).map((x) => `L${Math.floor(x / H)}H${x % H}`);
      for (const k of kinds) {
        const hi = r.null[k].hi ?? 0;
        c.charts.push(headGrid({ cells: Array.from(r[k], (v) => ({ mean: v })), R, C: H, color: (v) => div(v - hi), cell: R > 12 ? 16 : 28,
          annotate: R > 12 ? null : (v) => fx(v, 2), title: t('cxCompGrid', upper[k]), rowLabels, colLabels: range(H).map(String),
          rowTitle: t('cxCompRows'), colTitle: t('cxCompCols'), names: pairName, role: `comp-${k}`, lang: c.lang, rowGroup: H,
          cellTitle: (x, it) => t('cxCompPoint', upper[k], pairName(x), fx(it.mean), fx(hi)), attrs: { 'data-kind': k, 'data-null-hi': fx(hi, 6) } }));
      }
    }
    for (const k of kinds) {
      const hi = r.null[k].hi, vals = Array.from(r[k]);
      const above = finite(hi) ? vals.filter((v) => v > hi).length : 0;
      const best = vals.reduce((a, v, x) => (v > vals[a] ? x : a), 0);
      c.sum.push(t('cxCompSum', upper[k], above, vals.length, fx(hi), pairName(best), fx(vals[best])));
    }
    c.sum.push(t('cxCompHow', r.nNull, r.seed));
    c.notes.push(t('cxCompNote'), t('cxCompGridNote'));
    c.json.result = { nLayer: r.nLayer, nHead: r.nHead, nNull: r.nNull, seed: r.seed, null: r.null,
      ...Object.fromEntries(kinds.map((k) => [k, Array.from(r[k], (v, x) => ({ pair: pairName(x), score: v }))])) };
  }

  #trace(c) {
    const { t, d, L } = c, s = d.set;
    this.#head(c, s);
    if (s.n > 0) {
      const series = [['attnC', s.attn.corrupted, t('cxTrAttnC')], ['attnL', s.attn.last, t('cxTrAttnL')],
                      ['mlpC', s.mlp.corrupted, t('cxTrMlpC')], ['mlpL', s.mlp.last, t('cxTrMlpL')]];
      c.charts.push(intervalChart({ rows: range(L).map((l) => ({ label: t('cxLayerRow', l),
        items: series.map(([k, v, name]) => ({ ...v[l], name, color: C_TRACE[k] })) })),
      title: t('cxTrChart'), xTitle: t('cxXScore'), width: Math.min(560, Math.max(300, c.bw - 4)), lang: c.lang,
      legend: { interval: t('cxLgInterval', this.#level(s)), series: series.map(([k, , name]) => ({ name, color: C_TRACE[k] })) },
      undefinedText: t('cxUndef') }));
      let best = null;
      for (const [, v, name] of series) v.forEach((it, l) => { if (finite(it.mean) && (!best || it.mean > best.it.mean)) best = { it, l, name }; });
      if (best) c.sum.push(t('cxTrBest', best.name, best.l, iv(best.it)));
    }
    c.notes.push(t('cxTrNote'), t('cxNoteGap', c.d.minGap));
    c.json.options = { minGap: s.minGap, nBoot: s.nBoot, level: s.level, seed: s.seed };
    c.json.result = s;
  }

  async #export(id, kind) {
    if (kind === 'json') return this.json[id] && exportJsonData(this.json[id], FILES[id]);
    const charts = this.charts[id];
    if (!charts || !charts.length) return;
    const title = $(`${id}-h`).textContent;
    await exportSvgNode(composeSvg(charts, { title, lang: this.env.lang() }), FILES[id], kind, cardDesc(title, 'mask: the model\'s own (causal)'));
  }
}
