// card.js — one card of the page's panels (heads.js, evidence-panel.js, circuits-panel.js), made one way:
//
//   state    data-state on the card: idle (nothing asked yet, or cleared) | busy | done | error; while busy,
//            data-progress and data-runs when the work counts its steps, and data-n after a set
//   status   the line under the form (#id-status): "Computing in the worker…", the progress, the error
//   compute  a card is asked by its Compute button; how it then runs is one of two:
//            pressed (PressCards: the evidence and circuits cards) — it computes once, Cancel stops it;
//            followed (FollowCard: the heads cards) — it computes, then again whenever its inputs change,
//            newer inputs first, through the heads panel's lane and cache
//   source   this sentence | a built-in set, up to a limit | your list (one input or one pair a line)
//   lines    what the card found and what it cannot show (its summary), its notes, a detail line
//   export   SVG and PNG (its charts in one file, under its title) and JSON (the numbers it shows)
//
// Strings: the page's table (i18n.js). A card's own words are its panel's prefix and the word (evComputing,
// cxListBad, hpProgress), or 'card' and the word for the words every card says alike (CARD_WORDS: cardCompute).

import { $, el, replace, setOptions } from '../ui/dom.js';
import { toElement } from '../figures/index.js';
import { exportCard, cardDesc } from './export.js';
import { translator } from './i18n.js';
import { explain } from './models.js';

/** The one vocabulary of data-state, on every card of every panel. */
export const CARD_STATES = Object.freeze(['idle', 'busy', 'done', 'error']);
/** The built-in sets whose inputs are GPT-2 token ids: offered to a model with GPT-2's vocabulary only. */
const GPT2_SETS = new Set(['repeated', 'induction', 'induction-prev']);
const GPT2_VOCAB = 50257;
const KINDS = ['svg', 'png', 'json'];
/** The words every card says alike: one key each (cardCompute); a card's other words are its panel's (evComputing). */
const CARD_WORDS = new Set(['Compute', 'Cancel', 'Cancelled', 'Rung1', 'Rung2', 'SrcList', 'SetLabel', 'Limit', 'NameList', 'PairCount']);
/** The key of a card's word: its panel's prefix p and the word, or 'card' and the word. */
const wordKey = (p, word) => `${CARD_WORDS.has(word) ? 'card' : p}${word}`;

/** "your list": one input a line; of pairs, `clean | corrupted` with optional `| answer | answer`. {inputs} or {bad: line}. */
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

// ── one card ────────────────────────────────────────────────────────────────

/** A card's state, status line, progress and export buttons. */
export class Card {
  /**
   * @param {string} id     the card's element id
   * @param {string} p      its panel's key prefix ('hp', 'ev', 'cx'): its words are t(p + word)
   * @param {() => Function} tr the page's translator in the language shown now
   */
  constructor(id, p, tr) {
    this.id = id;
    this.p = p;
    this.tr = tr;
    this.exports = [];   // its SVG / PNG / JSON buttons (data-export)
  }

  get node() { return $(this.id); }
  get t() { return this.tr(); }
  /** One of the card's words in the language shown (wordKey). */
  word(word, ...args) { return this.t(wordKey(this.p, word), ...args); }

  get state() { return this.node.dataset.state; }
  set state(s) {
    if (!CARD_STATES.includes(s)) throw new Error(`card ${this.id}: no state ${s}`);
    this.node.dataset.state = s;
  }

  /** The status line: its text, and busy (a spinner) or error (red). */
  status(text, kind = '') {
    const s = $(`${this.id}-status`);
    s.textContent = text;
    s.className = `hp-status ${kind}`.trim();
  }

  /** The status line's text only (progress while busy). */
  statusText(text) { $(`${this.id}-status`).textContent = text; }

  /** k of n steps done (data-progress, data-runs), or none counted (null). */
  steps(k, n) {
    if (k !== null) Object.assign(this.node.dataset, { progress: String(k), runs: String(n) });
    else for (const key of ['progress', 'runs']) delete this.node.dataset[key];
  }

  /** The buttons SVG, PNG and JSON at the card's foot (#id-x-svg, …): the evidence and circuits cards. */
  footExports() {
    this.exports = KINDS.map((kind) => el('button', { class: 'btn btn-small', type: 'button', id: `${this.id}-x-${kind}`, disabled: true,
      dataset: { export: kind } }, kind.toUpperCase()));
    return el('div', { class: 'hp-presets' }, ...this.exports);
  }

  /** The buttons in the card's header (the heads cards), each with an aria-label naming the card: `titleKey` its title. */
  headExports(into, titleKey, onClick) {
    this.titleKey = titleKey;
    this.exports = KINDS.map((kind) => el('button', { type: 'button', class: 'btn btn-small', disabled: true, dataset: { export: kind, card: this.id },
      on: { click: () => onClick(kind) } }, kind.toUpperCase()));
    into.appendChild(el('div', { class: 'fig-actions hp-actions', dataset: { card: this.id } }, this.exports));
    this.labelExports();
  }

  /** The header buttons' aria-labels in the language shown. */
  labelExports() {
    if (!this.titleKey) return;
    for (const b of this.exports) b.setAttribute('aria-label', this.word('ExportAria', this.t(this.titleKey), b.textContent));
  }

  /** Exports on (the card has drawn) or off; SVG and PNG need charts (`pictures`), JSON only the numbers. */
  exportable(on, pictures = on) {
    for (const b of this.exports) b.disabled = !(b.dataset.export === 'json' ? on : pictures);
  }
}

// ── followed: the heads cards ───────────────────────────────────────────────

/**
 * A card that computes when the reader asks (Compute, or a preset), then again whenever its inputs change: a
 * request while it computes waits for it (and stops it between two worker calls when the inputs changed,
 * ESTALE), the newest inputs are computed last, and what was computed for a model is kept by its key. Its host
 * (heads.js HeadsPanel) gives the model, its token (a new model: a new token) and the config.
 */
export class FollowCard extends Card {
  /**
   * @param {string} id the card's element id
   * @param {{model, token: number, config, t: Function}} host
   * @param {{spec(): object, compute(spec, model, card): Promise<any>, draw(result, spec): void, busyText?(spec): string}} f
   */
  constructor(id, host, f) {
    super(id, 'hp', () => host.t);
    this.host = host;
    this.f = f;
    this.want = false;
    this.running = false;
    this.asked = false;     // the reader pressed Compute (or a preset) since the model was loaded
    this.current = null;    // the key being computed
    this.last = null;       // {result, spec, key}
    this.drawn = null;      // the key of what the card shows (null: nothing, or busy/error since)
  }

  reset() {
    this.last = null;
    this.drawn = null;
    this.asked = false;
    this.exportable(false);
    this.waitForReader();
  }

  /** Nothing asked yet: say how to start it. */
  waitForReader() {
    this.state = 'idle';
    this.steps(null);
    this.status(this.word('PressCompute'));
  }

  /** k of n worker calls done (the importance grid, the DAG list). */
  progress(k, n) {
    this.steps(k, n);
    this.status(this.word('Progress', k, n), 'busy');
  }

  /** The figures above have the worker: this card's next call waits for them. */
  paused() { this.status(this.word('WaitFigures'), 'busy'); }

  /** Resumed after a pause. */
  resumed() {
    const d = this.node.dataset;
    if (d.runs) this.progress(Number(d.progress), Number(d.runs));
    else this.status(this.word('Computing'), 'busy');
  }

  /** The language changed: the card's words again, or its drawing. */
  relabel() {
    this.labelExports();
    if (this.state === 'idle') this.status(this.word('PressCompute'));
    if (this.state === 'busy') this.resumed();
    if (this.state === 'done') this.redraw();
  }

  /** A newer request with other inputs waits (or the model changed): the running computation may stop. */
  stale() {
    const H = this.host;
    if (!this.current || !this.current.startsWith(`[${H.token},`)) return true;
    if (!this.want) return false;
    try {
      return JSON.stringify([H.token, this.f.spec()]) !== this.current;
    } catch {
      return true;
    }
  }

  /** Compute (if needed) and draw, once the reader has asked (ask: this request is the asking). */
  request(ask = false) {
    if (ask) this.asked = true;
    if (!this.host.model) return;
    if (!this.asked) {
      this.waitForReader();
      return;
    }
    this.want = true;
    if (!this.running) this.#pump();
  }

  async #pump() {
    this.running = true;
    const H = this.host;
    while (this.want) {
      this.want = false;
      const token = H.token;
      let spec;
      try {
        spec = this.f.spec();
      } catch (e) {
        this.fail(e);
        continue;
      }
      const key = JSON.stringify([token, spec]);
      if (this.last && this.last.key === key) {
        // Already computed. A second request for the same inputs that arrived while
        // they computed must still draw them: the card says "Computing…" until then.
        if ((this.drawn !== key || this.state !== 'done') && !this.want) this.redraw();
        continue;
      }
      this.drawn = null;
      this.current = key;
      this.state = 'busy';
      this.steps(null);
      this.status(this.f.busyText ? this.f.busyText(spec) : this.word('Computing'), 'busy');
      try {
        const result = await this.f.compute(spec, H.model, this);
        if (token !== H.token) continue;   // another model meanwhile: its request (if any) is in this.want
        this.last = { result, spec, key };
        if (this.want) continue;   // newer inputs: compute them first (cached parts are free)
        this.redraw();
      } catch (e) {
        if (token !== H.token) continue;
        if (e && e.code === 'ESTALE') { this.want = true; continue; }   // stopped for newer inputs: compute those
        this.fail(e);
      } finally {
        this.current = null;
      }
    }
    this.running = false;
  }

  fail(e) {
    this.drawn = null;
    this.exportable(false);
    this.state = 'error';
    this.status(explain(e, this.t, { nPositions: this.host.config?.nPositions }), 'error');
  }

  redraw() {
    if (!this.last) return;
    try {
      this.f.draw(this.last.result, this.last.spec);
      this.drawn = this.last.key;
      this.exportable(true);
      this.state = 'done';
      this.status('');
    } catch (e) {
      this.fail(e);
    }
  }
}

// ── pressed: the evidence and circuits cards ────────────────────────────────

/** A labelled field of a card's form: label#id-field > span#id-label (its text) and the control. */
export const field = (id, child) => el('label', { class: 'field', id: `${id}-field` }, el('span', { id: `${id}-label` }), child);
const LIST_HINT = {
  inputs: 'The cat sat on the mat .\nShe opened the door and the dog ran out .',
  pairs: 'The man promised that | The woman promised that |  he |  she\nThe keys to the cabinet | The key to the cabinet',
};

/**
 * The cards of one panel that compute when pressed, built from a table of card specs. A spec:
 *   key        its strings' middle part: t(p + key + 'Title'), t(p + key + 'Text')
 *   rung       the rungs it stands on, [2] or [1, 2] (a reading against an intervention)
 *   file       the base name of its downloads
 *   controls   () => the fields before the source; more: () => the fields after it (before the buttons)
 *   view       () => the controls of its drawing (shown once it has charts), or none
 *   sources    of 'sentence' | 'set' | 'list', the first chosen at start ([] : it reads the weights alone)
 *   sets, defaultSet, limit, fixedSet   the built-in sets offered, the one chosen, the default limit, a set that cannot be changed
 *   pairs      the list is of pairs (clean | corrupted)
 *   onSource(src)  shows the fields of a source
 *   compute(run)   resolves to what it computed ({one, set, …}); run: {model, args, src, text, signal, progress(phase), aborted}
 *   draw(c)        fills c.charts, c.sum (lines or elements), c.notes, c.detail, c.json from c.d (what it computed)
 * The panel (a subclass) gives: prefix, the cards, its header's ids, the sets' sizes and names, whether each card has a
 * detail line under its charts and one more class, and hooks (ownTexts, wire, modelChanged, context, exportView).
 */
export class PressCards {
  /** @param {{lang(): string, sentence?(): string}} env @param {{prefix, cards, head, sizes, setKeys, nameKeys, detail?, cardClass?}} def */
  constructor(env, def) {
    this.env = env;
    this.def = def;
    this.p = def.prefix;
    this.model = null;
    this.config = null;
    this.data = {};   // card id -> what it computed: {source, setName, view, …}
    this.cards = Object.fromEntries(Object.keys(def.cards).map((id) => [id, new Card(id, def.prefix, () => this.t)]));
    this.built = false;
  }

  get t() { return translator(this.env.lang()); }
  get ids() { return Object.keys(this.def.cards); }
  spec(id) { return this.def.cards[id]; }
  word(word, ...args) { return this.t(wordKey(this.p, word), ...args); }

  setModel(model, config) {
    this.model = model;
    this.config = config;
    for (const id of this.ids) this.reset(id);
    this.modelChanged();
    this.fillSets();
  }

  setLang() {
    if (!this.built) return;
    this.texts();
    for (const id of this.ids) if (this.data[id]) this.draw(id);
  }

  /** After each drawn result of the page (the evidence panel clears its cards of an older sentence). */
  sentenceChanged() {}

  // hooks of the panel
  ownTexts() {}
  wire() {}
  modelChanged() {}
  context() {}
  exportView() { return ['mask: the model\'s own (causal)']; }

  // ── building ─────────────────────────────────────────────────────────────

  /** The header and the cards, into `root` (at its start, or its end: the circuits cards follow the evidence cards). */
  build(root, header, { atEnd = false } = {}) {
    if (!root) return;
    const nodes = [header, ...this.ids.map((id) => this.#section(id))];
    if (atEnd) root.append(...nodes); else root.prepend(...nodes);
    this.built = true;
    for (const id of this.ids) this.#wireCard(id);
    this.wire();
    this.texts();
    this.fillSets();
    for (const id of this.ids) if (this.spec(id).sources.length) this.sourceShown(id);
  }

  /** A card's markup: head, text, form (controls, source, more, buttons), list, status, view, charts, lines, notes, exports. */
  #section(id) {
    const s = this.spec(id), card = this.cards[id], list = s.sources.includes('list');
    return el('section', { class: `fig hp ev-card${this.def.cardClass ? ` ${this.def.cardClass}` : ''}`, id, dataset: { state: 'idle', source: s.sources[0] ?? 'weights' } },
      el('header', { class: 'fig-head' }, el('h2', { id: `${id}-h` }), el('span', { class: `rung rung-${s.rung[s.rung.length - 1]}`, id: `${id}-rung` })),
      el('p', { class: 'fig-text', id: `${id}-text` }),
      el('div', { class: 'hp-form hp-inline ev-form' }, ...(s.controls ? s.controls() : []), ...this.#sourceFields(id), ...(s.more ? s.more() : []),
        el('span', { class: 'ev-buttons' },
          el('button', { class: 'btn btn-primary', type: 'button', id: `${id}-go` }),
          el('button', { class: 'btn', type: 'button', id: `${id}-stop`, disabled: true }))),
      list ? el('div', { class: 'ev-list', id: `${id}-list-box`, hidden: true },
        el('label', { class: 'field' }, el('span', { id: `${id}-list-label` }),
          el('textarea', { id: `${id}-list`, rows: 4, spellcheck: 'false', placeholder: LIST_HINT[s.pairs ? 'pairs' : 'inputs'] })),
        el('p', { class: 'hint', id: `${id}-list-count` })) : null,
      el('p', { class: 'hp-status', id: `${id}-status`, role: 'status', 'aria-live': 'polite' }),
      s.view ? el('div', { class: 'hp-form hp-inline cx-view', id: `${id}-view`, hidden: true }, ...s.view()) : null,
      el('div', { class: 'hp-row', id: `${id}-charts` }),
      this.def.detail ? el('p', { class: 'cx-detail', id: `${id}-detail`, 'aria-live': 'polite' }) : null,
      el('div', { class: 'hp-summary', id: `${id}-sum` }),
      el('ul', { class: 'ev-notes', id: `${id}-notes` }),
      card.footExports());
  }

  /** The source radios, the set and its limit (none for a card on the weights alone). */
  #sourceFields(id) {
    const s = this.spec(id);
    if (!s.sources.length) return [];
    const radio = (v) => [el('input', { type: 'radio', id: `${id}-src-${v}`, name: `${id}-src`, value: v, checked: v === s.sources[0] }),
      el('label', { for: `${id}-src-${v}`, id: `${id}-src-${v}-label` })];
    return [
      el('fieldset', { class: 'field segmented ev-src' }, el('legend', { id: `${id}-src-legend` }), ...s.sources.map(radio)),
      field(`${id}-set`, el('select', { id: `${id}-set`, disabled: !!s.fixedSet })),
      field(`${id}-limit`, el('span', { class: 'ev-limit' },
        el('input', { id: `${id}-limit`, type: 'number', min: '1', step: '1', value: String(s.limit), inputmode: 'numeric' }),
        el('span', { class: 'ev-of', id: `${id}-of` }))),
    ];
  }

  #wireCard(id) {
    const card = this.cards[id];
    $(`${id}-go`).addEventListener('click', () => this.compute(id));
    $(`${id}-stop`).addEventListener('click', () => card.abort?.abort());
    for (const b of card.exports) b.addEventListener('click', () => this.export(id, b.dataset.export));
    if (!this.spec(id).sources.length) return;
    for (const v of this.spec(id).sources) $(`${id}-src-${v}`).addEventListener('change', () => this.sourceShown(id));
    $(`${id}-set`).addEventListener('change', () => this.limitShown(id));
    if (this.spec(id).sources.includes('list')) $(`${id}-list`).addEventListener('input', () => this.listCount(id));
  }

  /** Every label in the language shown: the panel's header, each card's words, then the panel's own. */
  texts() {
    const [title, intro] = this.def.head;
    const set = (id, v) => { const n = document.getElementById(id); if (n) n.textContent = v; };
    set(title, this.word('Title'));
    set(intro, this.word('Intro'));
    for (const id of this.ids) {
      const s = this.spec(id);
      set(`${id}-h`, this.word(`${s.key}Title`));
      set(`${id}-text`, this.word(`${s.key}Text`));
      set(`${id}-rung`, s.rung.map((r) => this.word(`Rung${r}`)).join(' → '));
      set(`${id}-go`, this.word('Compute'));
      set(`${id}-stop`, this.word('Cancel'));
      if (!s.sources.length) continue;
      set(`${id}-src-legend`, this.word('Source'));
      if (s.sources.includes('sentence')) set(`${id}-src-sentence-label`, this.word(s.pairs ? 'SrcPair' : 'SrcSentence'));
      set(`${id}-src-set-label`, this.word('SrcSet'));
      set(`${id}-src-list-label`, this.word('SrcList'));
      set(`${id}-set-label`, this.word('SetLabel'));
      set(`${id}-limit-label`, this.word('Limit'));
      set(`${id}-list-label`, this.word(s.pairs ? 'PairsLabel' : 'ListLabel'));
      this.limitShown(id);
      this.listCount(id);
    }
    this.ownTexts(this.t, set);
    this.fillSets();
  }

  // ── the source ───────────────────────────────────────────────────────────

  /** The built-in sets offered to the model: the ones of GPT-2 ids only to a model of GPT-2's vocabulary. */
  fillSets() {
    const ok = (s) => !GPT2_SETS.has(s) || !this.config || this.config.vocabSize === GPT2_VOCAB;
    for (const id of this.ids) {
      const s = this.spec(id), sel = document.getElementById(`${id}-set`);
      if (!sel) continue;
      const sets = s.sets.filter(ok), def = s.defaultSet ?? s.sets[0];
      const cur = sets.includes(sel.value) ? sel.value : sets.includes(def) ? def : sets[0];
      setOptions(sel, sets.map((x) => ({ value: x, label: this.word(this.def.setKeys[x], this.def.sizes[x]) })), cur);
      this.limitShown(id);
    }
  }

  source(id) {
    const s = this.spec(id);
    return s.sources.find((v) => $(`${id}-src-${v}`).checked) || s.sources[0] || 'weights';
  }

  /** Show the fields of the source chosen. */
  sourceShown(id) {
    const src = this.source(id), s = this.spec(id);
    $(id).dataset.source = src;
    $(`${id}-set-field`).hidden = src !== 'set';
    $(`${id}-limit-field`).hidden = src !== 'set';
    if (s.onSource) s.onSource(src);
    $(`${id}-list-box`).hidden = src !== 'list';
    this.limitShown(id);
  }

  /** "of N" beside the limit, N the chosen set's size. */
  limitShown(id) {
    const sel = document.getElementById(`${id}-set`), inp = document.getElementById(`${id}-limit`);
    if (!sel || !inp) return;
    const s = this.spec(id), size = this.def.sizes[sel.value] || this.def.sizes[s.defaultSet ?? s.sets[0]];
    inp.max = String(size);
    $(`${id}-of`).textContent = this.word('Of', size);
  }

  /** How many inputs (or pairs) the list holds, or the line that is not one. */
  listCount(id) {
    const box = document.getElementById(`${id}-list-count`);
    if (!box) return;
    const pairs = !!this.spec(id).pairs, r = parseList($(`${id}-list`).value, pairs);
    box.textContent = r.bad ? this.word('ListBad', r.bad) : this.word(pairs ? 'PairCount' : 'ListCount', r.inputs.length);
  }

  /** The name of what d was computed on, for its summary: this sentence, your list, or the set's name. */
  setName(d) {
    if (d.source === 'sentence') return this.word('NameSentence');
    if (d.source === 'list') return this.word('NameList');
    const key = this.def.nameKeys[d.setName];
    return key ? this.word(key) : String(d.setName);
  }

  /** What the source gives: {name (the set's, or 'list'), set (its name, or the list), opts}; {error} for a bad list. */
  args(id, src) {
    const s = this.spec(id);
    if (src === 'set') {
      const name = $(`${id}-set`).value, size = this.def.sizes[name];
      const v = Math.floor(Number($(`${id}-limit`).value));
      const limit = Number.isFinite(v) && v >= 1 ? Math.min(v, size) : Math.min(s.limit, size);
      $(`${id}-limit`).value = String(limit);
      return { name, set: name, opts: { limit } };
    }
    const r = parseList($(`${id}-list`).value, !!s.pairs);
    if (r.bad) return { error: this.word('ListBad', r.bad) };
    if (!r.inputs.length) return { error: this.word('ListEmpty') };
    return { name: 'list', set: r.inputs, opts: {} };
  }

  // ── computing ────────────────────────────────────────────────────────────

  /** Clear card id: stop what it computes, forget what it computed. */
  reset(id) {
    const card = this.cards[id];
    card.abort?.abort();   // a computation on the old sentence or model stops and is forgotten
    Object.assign(card, { abort: null, running: null, charts: null, json: null });
    delete this.data[id];
    if (!document.getElementById(id)) return;
    card.state = 'idle';
    delete card.node.dataset.n;
    for (const k of ['charts', 'notes', 'sum', 'detail']) { const n = document.getElementById(`${id}-${k}`); if (n) replace(n); }
    const view = document.getElementById(`${id}-view`);
    if (view) view.hidden = true;
    card.status('');
    card.exportable(false);
    this.#buttons(id, false);
  }

  #buttons(id, busy) {
    $(`${id}-go`).disabled = busy;
    $(`${id}-stop`).disabled = !busy;
  }

  /** Compute card id on its source, with progress; Cancel (or a reset) stops it. */
  async compute(id) {
    if (!this.model) return;
    const card = this.cards[id];
    card.abort?.abort();
    const src = this.source(id);
    const args = src === 'set' || src === 'list' ? this.args(id, src) : null;
    if (args && args.error) return card.status(args.error, 'error');
    const ac = new AbortController(), signal = ac.signal, model = this.model, computing = this.word('Computing');
    Object.assign(card, { abort: ac, running: src });
    card.state = 'busy';
    this.#buttons(id, true);
    card.status(computing, 'busy');
    const progress = (phase) => (e) => { if (card.abort === ac) card.statusText(`${computing} ${phase ? `${phase} ` : ''}${e.done} / ${e.total}`); };
    // the calls that take no signal race against this (the sets take the signal)
    const aborted = new Promise((_, reject) => signal.addEventListener('abort', () =>
      reject(Object.assign(new Error('cancelled'), { code: 'EABORT' })), { once: true }));
    aborted.catch(() => {});
    try {
      const d = { source: src, setName: args ? args.name : null, view: this.exportView(id, src) };   // what it runs on (read now)
      Object.assign(d, await this.spec(id).compute.call(this, { model, args, src, text: this.env.sentence?.(), signal, progress, aborted }));
      if (card.abort !== ac || model !== this.model) return;
      this.data[id] = d;
      card.status('');
      card.state = 'done';
      if (d.set) card.node.dataset.n = String(d.set.n);
      else delete card.node.dataset.n;
      this.draw(id);
    } catch (e) {
      if (card.abort !== ac) return;
      card.state = 'error';
      const cancelled = e && e.code === 'EABORT';
      card.status(cancelled ? this.word('Cancelled') : `${e.code ? e.code + ': ' : ''}${e.message}`, cancelled ? '' : 'error');
    } finally {
      if (card.abort === ac) {
        card.running = null;
        $(`${id}-status`).classList.remove('busy');
        this.#buttons(id, false);
      }
    }
  }

  // ── drawing and exporting ────────────────────────────────────────────────

  /** Draw what card id computed: the panel's draw fills the charts and lines, the card shows them. */
  draw(id) {
    const d = this.data[id], box = $(`${id}-charts`);
    const c = { id, d, t: this.t, lang: this.env.lang(), bw: box.clientWidth || 900, charts: [], sum: [], notes: [], detail: '', json: {} };
    this.context(c);
    this.spec(id).draw.call(this, c);
    const card = this.cards[id];
    card.charts = c.charts;
    card.json = c.json;
    replace(box, ...c.charts.map((x) => el('div', { class: 'hp-svg' }, toElement(x, document))));
    const detail = document.getElementById(`${id}-detail`);
    if (detail) detail.textContent = c.detail;
    replace($(`${id}-sum`), ...c.sum.filter(Boolean).map((x) => (typeof x === 'string' ? el('p', null, x) : x)));
    replace($(`${id}-notes`), ...c.notes.filter(Boolean).map((x) => el('li', null, x)));
    const view = document.getElementById(`${id}-view`);
    if (view) view.hidden = !c.charts.length;
    card.exportable(true, c.charts.length > 0);
  }

  async export(id, kind) {
    const card = this.cards[id], title = $(`${id}-h`).textContent;
    await exportCard(kind, { file: this.spec(id).file, json: card.json, charts: card.charts, title, lang: this.env.lang(),
      desc: cardDesc(title, ...(this.data[id]?.view || [])) });
  }
}
