// heads.js — the page's "Heads & counterfactuals" panel: which heads
// matter, what each head does, mixed per-layer masks, counterfactuals (a sentence
// pair and weight edits of one head) and where the DAG score comes from.
//
// Seven cards, each a followed card of card.js (FollowCard): read its inputs (spec), compute through the page's
// WorkerModel, draw (heads-charts.js). Nothing computes until the reader asks: a card shows "Press
// Compute…" (data-state="idle") until its Compute button (or a preset button)
// is pressed; after that, changing its inputs recomputes it. Scrolling past a card
// never starts a forward pass. Every worker call goes through one Lane
// (heads-work.js): one call in flight, short calls only (the importance grid is
// 2·L·H + 1 calls of one forward each), and none starts while the chapter's
// figures compute (body[data-state] = busy | loading, set by the page's status.js), so a click on
// a figure waits for at most one short call. Results are cached per model and
// arguments. A card says "Computing… (k of n forward passes)" (data-state="busy",
// data-progress, data-runs) meanwhile, and "Waiting for the figures above…" while
// they have the worker; data-state="done" once drawn, "error" when it failed.
//
// Each card is labelled with its rung of Pearl's ladder (the chapter's table):
// 1 seeing (reading attention: roles, DAG profile), 2 doing (ablation, masks,
// importance, and also weight edits and the sentence pair: the chapter calls those
// counterfactuals, but in a deterministic network given its whole input there is
// no background to infer, so they are interventions; docs/heads.md §7).

import { $, el, replace, setOptions } from '../ui/dom.js';
import { attachTooltip } from '../ui/tooltip.js';
import { breakHeads } from './circuit.js';
import { Lane, importanceInSteps, importanceRuns, dagInSteps } from './heads-work.js';
import { FollowCard } from './card.js';
import { exportCard } from './export.js';
import { HeadsCharts } from './heads-charts.js';

// what the panel's cards compute against and how they write numbers (the tests and docs-numbers read them here)
export { DELTA_FLOOR, fmtS, uniformRoles, uniformInduction, maskCode } from './heads-charts.js';

/** The default text of the importance and role cards: the start of models/brown-gpt2/heldout_sample.txt. */
export const DEFAULT_IMP_TEXT = 'The lyric beauties of Schubert\'s Trout Quintet--its elemental rhythms and infectious melodies--make it a source of pure pleasure for almost all music listeners. But for students of musical forms and would-be classifiers, the work presents its problems. Since it requires only five players, it would seem to fall into the category of chamber music--yet it calls for a double bass, an instrument generally regarded as symphonic.';

export const DEFAULT_PAIR = ['Because the storm intensified , the ship finally sank .', 'Because the storm weakened , the ship finally sank .'];

export const DEFAULT_DAG = [
  'Because the storm intensified , the ship finally sank .',
  'Because the storm weakened , the ship finally sank .',
  'The rain made the road wet , so the car skidded into the ditch and the driver called for help .',
  'She studied hard because the exam was difficult .',
];


/**
 * The weight-edit card's default: swap W_Q and W_K of L0H0 (on the built-in model its previous-token head).
 * Chosen by running candidates through the built-in model on the chapter's sentence: W_Q × 2 of that head,
 * the old default, changed the prediction by KL 6e-8 (the head is already saturated); the swap moves it by
 * about 0.2 nats and changes the top token (tests/e2e/heads-panel.test.js holds it above EDIT_MIN_KL).
 */
export const DEFAULT_EDIT = Object.freeze({ kind: 'swapQK', layer: 0, head: 0, alpha: 0.25 });
/** The KL (nats) the default edit must exceed on the built-in model's default sentence. */
export const EDIT_MIN_KL = 0.05;

/** The figures above have the worker (main.js sets body[data-state]): the panel's next call waits. */
function foregroundBusy() {
  const st = document.body.dataset.state;
  return st === 'busy' || st === 'loading';
}

/** Call wake() whenever body[data-state] changes; returns the unsubscribe. */
function watchForeground(wake) {
  const mo = new MutationObserver(wake);
  mo.observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
  return () => mo.disconnect();
}

const SVG_BOXES = ['hp-imp-grid', 'hp-imp-curve', 'hp-roles-grids', 'hp-circ-loss', 'hp-circ-grid', 'hp-mask-maps', 'hp-mask-delta', 'hp-cf-map', 'hp-cf-bars',
  'hp-ed-maps', 'hp-ed-delta', 'hp-dag-layers', 'hp-dag-heads'];

/**
 * Each card's charts (the boxes they are drawn in, in this order in the exported
 * file), the base name of its SVG / PNG / JSON downloads and its title's i18n key.
 */
export const CARD_EXPORTS = Object.freeze({
  'hp-imp': { boxes: ['hp-imp-grid', 'hp-imp-curve'], file: 'attnlab_heads_importance', title: 'hpImpTitle' },
  'hp-roles': { boxes: ['hp-roles-grids'], file: 'attnlab_heads_roles', title: 'hpRolesTitle' },
  'hp-circ': { boxes: ['hp-circ-loss', 'hp-circ-grid'], file: 'attnlab_heads_break_circuit', title: 'hpCircTitle' },
  'hp-mask': { boxes: ['hp-mask-maps', 'hp-mask-delta'], file: 'attnlab_heads_mixed_masks', title: 'hpMaskTitle' },
  'hp-cf': { boxes: ['hp-cf-map', 'hp-cf-bars'], file: 'attnlab_heads_counterfactual_pair', title: 'hpCfTitle' },
  'hp-ed': { boxes: ['hp-ed-maps', 'hp-ed-delta'], file: 'attnlab_heads_weight_edit', title: 'hpEdTitle' },
  'hp-dag': { boxes: ['hp-dag-layers', 'hp-dag-heads'], file: 'attnlab_heads_dag_profile', title: 'hpDagTitle' },
});

/** The per-layer mask of a preset for L layers: 'causal' | 'full' | 'lowerFull' | 'lowerCausal'. */
export function maskPreset(name, L) {
  const half = Math.ceil(L / 2);
  return Array.from({ length: L }, (_, l) => {
    if (name === 'full') return 'full';
    if (name === 'lowerFull') return l < half ? 'full' : 'causal';
    if (name === 'lowerCausal') return l < half ? 'causal' : 'full';
    return 'causal';
  });
}

export class HeadsPanel {
  /**
   * @param {{t(): Function, lang(): string, sentence(): string}} env the page's translator, language and sentence
   */
  constructor(env) {
    this.env = env;
    this.model = null;
    this.config = null;
    this.name = '';
    this.token = 0;
    this.cache = new Map();
    this.lane = this.#newLane();
    this.calls = 0;
    this.jobs = {};
    this.mask = null;       // per-layer mask choice: ['causal' | 'full' | 'window']
    this.breakPreset = 'prev';   // what the "break the circuit" card ablates (circuit.js BREAK_PRESETS)
    this.charts = {};       // box id -> the svg node trees drawn in it (what the export buttons save)
    this.exportData = {};   // card id -> the numbers it shows (the JSON export)
    this.draw = new HeadsCharts(this);
    this.#build();
  }

  get t() { return this.env.t(); }
  get lang() { return this.env.lang(); }

  /** A Lane whose calls wait while the figures above compute (heads-work.js). */
  #newLane() {
    return new Lane({ busy: foregroundBusy, subscribe: watchForeground });
  }

  /**
   * One worker call through the lane (after the panel's earlier calls, never while the figures compute), not
   * cached. job: the card whose status says when it waits; stop: that card's newer inputs end the call
   * before it starts (ESTALE).
   */
  step(fn, { job = null, stop = false } = {}) {
    const model = this.model, token = this.token;   // the model of the request, even if another is loaded while it waits
    let waited = false;
    return this.lane.run(() => {
      if (waited && job) job.resumed();
      this.calls += 1;   // every worker call of the panel, on #heads as data-calls (tests: none before Compute)
      $('heads').dataset.calls = String(this.calls);
      return fn(model);
    }, {
      onWait: () => { waited = true; if (job) job.paused(); },
      alive: () => token === this.token && !(stop && job && job.stale()),
    });
  }

  /** make() once per model and key; a rejected one is forgotten (so asked again, it is computed again). */
  memo(key, make) {
    const k = JSON.stringify([this.token, key]);
    if (this.cache.has(k)) return this.cache.get(k);
    const p = make();
    this.cache.set(k, p);
    p.catch(() => { if (this.cache.get(k) === p) this.cache.delete(k); });
    if (this.cache.size > 60) this.cache.delete(this.cache.keys().next().value);
    return p;
  }

  /** One worker call, cached per model and key (see step). */
  call(key, fn, job = null) {
    return this.memo(key, () => this.step(fn, { job }));
  }

  /** Token ids of text, at most n_positions of them (the card says when it cut). */
  async ids(text, job = null) {
    const { ids } = await this.call(['tokenize', text], (m) => m.tokenize(text), job);
    return ids.length > this.config.nPositions ? ids.slice(0, this.config.nPositions) : ids;
  }

  /**
   * headImportance as short calls (heads-work.js importanceInSteps), with the card's progress; stopped
   * between two calls when the card's inputs change.
   */
  importance(ids, key, job) {
    const { nLayer, nHead } = this.config;
    return this.memo(['importance', key], () => importanceInSteps(
      (ablate) => this.step((m) => m.tokenLosses(ids, ablate.length ? { ablate } : undefined), { job, stop: true }).then((r) => r.mean),
      { nLayer, nHead, T: ids.length, onStep: (k, n) => job.progress(k, n) }));
  }

  // ── model and language ────────────────────────────────────────────────────

  setModel(model, config, name) {
    this.model = model;
    this.config = config;
    this.name = name;
    this.token += 1;
    this.cache.clear();
    this.lane = this.#newLane();
    const L = config.nLayer;
    this.mask = maskPreset('lowerFull', L);
    this.charts = {};
    this.exportData = {};
    this.#fillSelects();
    this.#buildMaskRow();
    for (const j of Object.values(this.jobs)) j.reset();
    for (const id of SVG_BOXES) replace($(id));
    for (const id of ['hp-imp-summary', 'hp-circ-summary', 'hp-mask-kl', 'hp-cf-kl', 'hp-ed-kl', 'hp-dag-summary']) $(id).textContent = '';
    for (const id of ['hp-mask-top-a', 'hp-mask-top-b', 'hp-ed-top-a', 'hp-ed-top-b', 'hp-dag-table']) replace($(id).tBodies[0]);
    replace($('hp-cf-align'));
    for (const j of Object.values(this.jobs)) j.request();
  }

  setLang() {
    if (!this.config) return;
    this.#fillSelects();
    this.#buildMaskRow();
    for (const j of Object.values(this.jobs)) j.relabel();
  }

  /** The page's sentence changed (the mask and edit cards use it). */
  sentenceChanged() {
    this.jobs.mask.request();
    this.jobs.edit.request();
  }

  // ── controls ──────────────────────────────────────────────────────────────

  #fillSelects() {
    const t = this.t;
    const { nLayer: L, nHead: H } = this.config;
    const layers = Array.from({ length: L }, (_, l) => ({ value: l, label: t('layerOpt', l, l === L - 1) }));
    const keep = (id, def) => { const v = $(id).value; return v === '' ? def : v; };
    setOptions($('hp-cf-layer'), layers, Math.min(Number(keep('hp-cf-layer', L - 1)), L - 1));
    setOptions($('hp-ed-layer'), layers, Math.min(Number(keep('hp-ed-layer', DEFAULT_EDIT.layer)), L - 1));
    const heads = (avg) => [...(avg ? [{ value: 'avg', label: t('headAvg') }] : [{ value: 'all', label: t('hpAllHeads') }]),
      ...Array.from({ length: H }, (_, h) => ({ value: h, label: t('headOpt', h) }))];
    const hv = (id, def) => { const v = keep(id, def); return v === 'avg' || v === 'all' || Number(v) < H ? v : def; };
    setOptions($('hp-cf-head'), heads(true), hv('hp-cf-head', 'avg'));
    setOptions($('hp-ed-head'), heads(false), hv('hp-ed-head', Math.min(DEFAULT_EDIT.head, H - 1)));
  }

  #buildMaskRow() {
    const t = this.t;
    const L = this.config.nLayer;
    const opts = [['causal', t('hpMaskCausal')], ['full', t('hpMaskFull')], ['window', t('hpMaskWindow')]];
    replace($('hp-mask-layers'), this.mask.map((m, l) => el('label', { class: 'hp-layer-mask' },
      el('span', {}, t('hpLayerN', l)),
      el('select', { dataset: { layer: String(l) }, 'aria-label': t('hpMaskOfLayer', l) },
        opts.map(([v, s]) => el('option', { value: v, selected: m === v }, s))))));
    $('hp-mask-layers').dataset.n = String(L);
  }

  #maskOption() {
    const w = Math.max(1, Math.floor(Number($('hp-mask-window').value) || 1));
    return this.mask.map((m) => (m === 'window' ? `window:${w}` : m));
  }

  #build() {
    $('hp-imp-input').value = DEFAULT_IMP_TEXT;
    $('hp-cf-a').value = DEFAULT_PAIR[0];
    $('hp-cf-b').value = DEFAULT_PAIR[1];
    $('hp-dag-input').value = DEFAULT_DAG.join('\n');
    this.#makeJobs();
    this.#wireInputs();
    this.#addExportButtons();
    this.#observe();
    attachTooltip($('tip'), SVG_BOXES.map((id) => $(id)));
    this.#circuitLink();
  }

  /**
   * A link from the "Break the circuit" card to the composition scores and path patching of the same circuit
   * (circuits-panel.js). It scrolls there itself: a followed #fragment would be a history entry, which the page
   * reads as a change of view.
   */
  #circuitLink() {
    const a = el('a', { href: '#cx-comp', id: 'hp-circ-cx', dataset: { i18n: 'hpCircToCx' } }, this.t('hpCircToCx'));
    a.addEventListener('click', (e) => {
      const target = document.getElementById('cx-comp');
      if (!target) return;
      e.preventDefault();
      target.scrollIntoView({ block: 'start' });
      const h = document.getElementById('cx-comp-h');
      if (h) { h.tabIndex = -1; h.focus({ preventScroll: true }); }
    });
    $('hp-circ-summary').after(el('p', { class: 'hint' }, a));
  }

  /** One FollowCard per card: what it computes from which inputs, and how it draws. */
  #makeJobs() {
    this.#makeTextJobs();
    this.#makeSentenceJobs();
  }

  /** The cards on the editable text and on r ++ r: importance, roles, break the circuit. */
  #makeTextJobs() {
    const P = this;
    this.jobs.imp = new FollowCard('hp-imp', this, {
      spec: () => ({ text: $('hp-imp-input').value }),
      busyText: () => P.t('hpImpBusy', importanceRuns(P.config.nLayer, P.config.nHead)),
      compute: async (s, m, job) => {
        const ids = await P.ids(s.text, job);
        const imp = await P.importance(ids, s.text, job);
        return { imp, cut: ids.length === P.config.nPositions };
      },
      draw: (r) => P.draw.importance(r),
    });
    this.jobs.roles = new FollowCard('hp-roles', this, {
      spec: () => ({ text: $('hp-imp-input').value, n: Number($('hp-ind-n').value), seed: Number($('hp-ind-seed').value) }),
      compute: async (s, m, job) => {
        const ids = await P.ids(s.text, job);
        const n = Math.max(2, Math.min(Math.floor(s.n) || 2, Math.floor(P.config.nPositions / 2)));
        const roles = await P.call(['roles', s.text], (mm) => mm.headRoles(ids, { top: 3 }), job);
        const rep = await P.call(['repeated', n, s.seed], (mm) => mm.repeatedTokens(n, { seed: s.seed >>> 0 }), job);
        const ind = await P.call(['roles-rep', n, s.seed], (mm) => mm.headRoles(rep, { top: 3 }), job);
        return { roles, ind, ids, n };
      },
      draw: (r) => P.draw.roles(r),
    });
    this.jobs.circ = new FollowCard('hp-circ', this, {
      spec: () => ({ text: $('hp-imp-input').value, n: Number($('hp-ind-n').value), seed: Number($('hp-ind-seed').value),
        preset: P.breakPreset }),
      compute: (s, m, job) => P.#computeCircuit(s, job),
      draw: (r) => P.draw.circuit(r),
    });
  }

  /** The cards on the page's sentence (mask, weight edit), on a pair, and on a list (DAG). */
  #makeSentenceJobs() {
    const P = this;
    const runOf = (text, job) => P.call(['run', text], (m) => m.run(text, { topK: 10 }), job);
    this.jobs.mask = new FollowCard('hp-mask', this, {
      spec: () => ({ text: P.env.sentence(), mask: P.#maskOption() }),
      compute: async (s, m, job) => {
        const base = await runOf(s.text, job);
        const mixed = s.mask.every((x) => x === 'causal') ? base
          : await P.call(['run-mask', s.text, s.mask], (mm) => mm.run(s.text, { mask: s.mask, topK: 10 }), job);
        return { base, mixed };
      },
      draw: (r, s) => P.draw.mask(r, s),
    });
    this.jobs.cf = new FollowCard('hp-cf', this, {
      spec: () => ({ a: $('hp-cf-a').value, b: $('hp-cf-b').value }),
      compute: (s, m, job) => P.call(['cf', s.a, s.b], (mm) => mm.counterfactual(s.a, s.b, { topK: 10 }), job),
      draw: (r) => P.draw.pair(r),
    });
    this.jobs.edit = new FollowCard('hp-ed', this, {
      spec: () => ({ text: P.env.sentence(), iv: P.#editOf() }),
      compute: async (s, m, job) => {
        const base = await runOf(s.text, job);
        const after = await P.call(['run-edit', s.text, s.iv], (mm) => mm.run(s.text, { interventions: [s.iv], topK: 10 }), job);
        return { base, after };
      },
      draw: (r, s) => P.draw.edit(r, s),
    });
    this.jobs.dag = new FollowCard('hp-dag', this, {
      spec: () => ({
        list: $('hp-dag-input').value.split('\n').map((x) => x.trim()).filter((x) => x.length > 0).slice(0, 32),
        mask: $('hp-dag-mask').value,
      }),
      compute: (s, m, job) => {
        if (!s.list.length) return Promise.reject(Object.assign(new Error('no sentences'), { code: 'EEMPTY' }));
        const { nLayer, nHead } = P.config;
        return P.memo(['dag', s.list, s.mask], () => dagInSteps(
          (x) => P.step((mm) => mm.dagProfile(x, { mask: s.mask }), { job, stop: true }), s.list,
          { mask: s.mask, nLayer, nHead, onStep: (k, n) => job.progress(k, n) }));
      },
      draw: (r, s) => P.draw.dag(r, s),
    });
  }

  /** The weight edit the card's controls say. */
  #editOf() {
    const kind = document.querySelector('input[name="hp-ed-kind"]:checked').value;
    const hv = $('hp-ed-head').value;
    const iv = { kind, layer: Number($('hp-ed-layer').value), head: hv === 'all' ? 'all' : Number(hv) };
    if (kind !== 'swapQK') iv.alpha = Number($('hp-ed-alpha').value);
    return iv;
  }

  /**
   * A card computes when its Compute button (or a break-the-circuit preset) is pressed; after that, a change of
   * its inputs recomputes it (request() without asking does nothing until the reader has asked once).
   */
  #wireInputs() {
    const submit = (form, job, also = []) => $(form).addEventListener('submit', (e) => {
      e.preventDefault();
      this.jobs[job].request(true);
      for (const j of also) this.jobs[j].request();
    });
    submit('hp-imp-form', 'imp', ['roles', 'circ']);
    submit('hp-ind-form', 'roles', ['circ']);
    submit('hp-cf-form', 'cf');
    submit('hp-dag-form', 'dag');
    for (const b of document.querySelectorAll('#hp-circ [data-break]')) {
      b.addEventListener('click', () => {
        this.breakPreset = b.dataset.break;
        for (const o of document.querySelectorAll('#hp-circ [data-break]')) o.setAttribute('aria-pressed', String(o === b));
        this.jobs.circ.request(true);
      });
    }
    for (const [id, job] of [['hp-circ-compute', 'circ'], ['hp-mask-compute', 'mask'], ['hp-ed-compute', 'edit']])
      $(id).addEventListener('click', () => this.jobs[job].request(true));
    $('hp-dag-mask').addEventListener('change', () => this.jobs.dag.request());
    $('hp-cf-layer').addEventListener('change', () => this.jobs.cf.redraw());
    $('hp-cf-head').addEventListener('change', () => this.jobs.cf.redraw());
    $('hp-mask-layers').addEventListener('change', (e) => {
      const l = e.target.dataset.layer;
      if (l === undefined) return;
      this.mask[Number(l)] = e.target.value;
      this.jobs.mask.request();
    });
    for (const b of document.querySelectorAll('#hp-mask [data-preset]')) {
      b.addEventListener('click', () => {
        this.mask = maskPreset(b.dataset.preset, this.config.nLayer);
        this.#buildMaskRow();
        this.jobs.mask.request();
      });
    }
    $('hp-mask-window').addEventListener('input', () => { if (this.mask && this.mask.includes('window')) this.jobs.mask.request(); });
    this.#wireEdit();
  }

  /** The weight-edit controls, set to DEFAULT_EDIT. */
  #wireEdit() {
    const radio = { scaleQ: 'hp-ed-q', scaleK: 'hp-ed-k', swapQK: 'hp-ed-swap' };
    $(radio[DEFAULT_EDIT.kind]).checked = true;
    $('hp-ed-alpha').value = String(DEFAULT_EDIT.alpha);
    $('hp-ed-alpha-out').textContent = DEFAULT_EDIT.alpha.toFixed(2);
    $('hp-ed-alpha').disabled = DEFAULT_EDIT.kind === 'swapQK';
    for (const id of ['hp-ed-layer', 'hp-ed-head']) $(id).addEventListener('change', () => this.jobs.edit.request());
    for (const r of document.querySelectorAll('input[name="hp-ed-kind"]')) {
      r.addEventListener('change', () => {
        $('hp-ed-alpha').disabled = r.value === 'swapQK' && r.checked;
        this.jobs.edit.request();
      });
    }
    $('hp-ed-alpha').addEventListener('input', (e) => {
      $('hp-ed-alpha-out').textContent = Number(e.target.value).toFixed(2);
      this.jobs.edit.request();
    });
  }

  /** Each card's SVG / PNG / JSON downloads, in its header (enabled once it has drawn). */
  #addExportButtons() {
    for (const [card, x] of Object.entries(CARD_EXPORTS)) {
      const head = card === 'hp-ed' ? $('hp-cf').querySelector('h3.hp-sub') : $(card).querySelector('.fig-head');
      this.#job(card).headExports(head, x.title, (kind) => this.#exportCard(card, kind));
    }
  }

  /** Redraw the drawn cards when the width changes (nothing computes because a card came into view). */
  #observe() {
    // redraw at the new width when the layout changes (no recomputing: the results are kept)
    let lastW = 0, raf = 0;
    new ResizeObserver((entries) => {
      const w = Math.round(entries[0].contentRect.width);
      if (Math.abs(w - lastW) < 24) return;
      const first = lastW === 0;
      lastW = w;
      if (first) return;
      cancelAnimationFrame(raf);
      raf = requestAnimationFrame(() => { for (const j of Object.values(this.jobs)) if (j.state === 'done') j.redraw(); });
    }).observe($('heads'));
  }

  // ── export ────────────────────────────────────────────────────────────────

  #job(card) { return Object.values(this.jobs).find((j) => j.id === card); }

  async #exportCard(card, kind) {
    const x = CARD_EXPORTS[card];
    const json = kind === 'json' && this.exportData[card] ? {
      generator: 'attnlab page: heads & counterfactuals', card: x.file.replace(/^attnlab_heads_/, ''),
      created: new Date().toISOString(), model: { name: this.name, nLayer: this.config.nLayer, nHead: this.config.nHead },
      ...this.exportData[card],
    } : null;
    try {
      await exportCard(kind, { file: x.file, json, charts: x.boxes.flatMap((id) => this.charts[id] || []), title: this.t(x.title), lang: this.lang });
    } catch (e) {
      this.#job(card).status(`${this.t('hpExportFailed')} ${e.message}`, 'error');
    }
  }

  // ── computing ─────────────────────────────────────────────────────────────

  /** The circuit card: the roles that name the heads, then the plain and the broken run on r ++ r. */
  async #computeCircuit(s, job) {
    const n = Math.max(2, Math.min(Math.floor(s.n) || 2, Math.floor(this.config.nPositions / 2)));
    const ids = await this.ids(s.text, job);
    const roles = await this.call(['roles', s.text], (m) => m.headRoles(ids, { top: 3 }), job);
    const rep = await this.call(['repeated', n, s.seed], (m) => m.repeatedTokens(n, { seed: s.seed >>> 0 }), job);
    const ind = await this.call(['roles-rep', n, s.seed], (m) => m.headRoles(rep, { top: 3 }), job);
    const heads = breakHeads(s.preset, roles, ind);
    const ablate = heads.map((x) => [x.layer, x.head]);
    const plain = await this.call(['losses', n, s.seed], (m) => m.tokenLosses(rep), job);
    const broken = await this.call(['losses', n, s.seed, ablate], (m) => m.tokenLosses(rep, { ablate }), job);
    const indBroken = await this.call(['roles-rep', n, s.seed, ablate], (m) => m.headRoles(rep, { top: 3, ablate }), job);
    return { n, seed: s.seed, preset: s.preset, heads, plain, broken, ind, indBroken };
  }

  /**
   * The circuit card. What it reports is measured on what the ablated model does: the copying gain (the first
   * copy's loss minus the second's) and the induction scores of the heads left working. An ablated head's own
   * attention is still computed (ablation zeroes what it writes), so its cell is hatched and the card says so.
   */
}
