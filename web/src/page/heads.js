// heads.js — the page's "Heads & counterfactuals" panel: which heads
// matter, what each head does, mixed per-layer masks, counterfactuals (a sentence
// pair and weight edits of one head) and where the DAG score comes from.
//
// Seven cards, each a Job: read its inputs (spec), compute through the page's
// WorkerModel, draw. Nothing computes until the reader asks: a card shows "Press
// Compute…" (data-state="waiting") until its Compute button (or a preset button)
// is pressed; after that, changing its inputs recomputes it. Scrolling past a card
// never starts a forward pass. Every worker call goes through one Lane
// (heads-work.js): one call in flight, short calls only (the importance grid is
// 2·L·H + 1 calls of one forward each), and none starts while the chapter's
// figures compute (body[data-state] = busy | loading, set by main.js), so a click on
// a figure waits for at most one short call. Results are cached per model and
// arguments. A card says "Computing… (k of n forward passes)" (data-state="busy",
// data-progress, data-runs) meanwhile, and "Waiting for the figures above…" while
// they have the worker.
//
// Each card is labelled with its rung of Pearl's ladder (the chapter's table):
// 1 seeing (reading attention: roles, DAG profile), 2 doing (ablation, masks,
// importance, and also weight edits and the sentence pair: the chapter calls those
// counterfactuals, but in a deterministic network given its whole input there is
// no background to infer, so they are interventions; docs/heads.md §7).

import { $, el, replace, setOptions } from '../ui/dom.js';
import { attachTooltip } from '../ui/tooltip.js';
import { explain } from './models.js';
import { klDivergence, attentionChange, rankMoves } from './compare.js';
import { deltaBars } from '../figures/delta.js';
import { topTable } from './top-table.js';
import { gridMap, lineChart, layerBars, diffBars, lossLines } from '../figures/charts.js';
import { breakHeads, circuitEffect, copies, COPY_MARGIN } from './circuit.js';
import { Lane, importanceInSteps, importanceRuns, dagInSteps } from './heads-work.js';
import { composeSvg, exportSvgNode, exportJsonData, rows } from './export.js';
import { toElement, tokenLabel, walk } from '../figures/index.js';
import { ylOrRd, rdBuR } from '../figures/colour.js';
import { fmt2, fmt3 } from '../figures/text.js';

/** The default text of the importance and role cards: the start of models/brown-gpt2/heldout_sample.txt. */
export const DEFAULT_IMP_TEXT = 'The lyric beauties of Schubert\'s Trout Quintet--its elemental rhythms and infectious melodies--make it a source of pure pleasure for almost all music listeners. But for students of musical forms and would-be classifiers, the work presents its problems. Since it requires only five players, it would seem to fall into the category of chamber music--yet it calls for a double bass, an instrument generally regarded as symphonic.';

export const DEFAULT_PAIR = ['Because the storm intensified , the ship finally sank .', 'Because the storm weakened , the ship finally sank .'];

export const DEFAULT_DAG = [
  'Because the storm intensified , the ship finally sank .',
  'Because the storm weakened , the ship finally sank .',
  'The rain made the road wet , so the car skidded into the ditch and the driver called for help .',
  'She studied hard because the exam was difficult .',
];

/** The top of the role grids' colour scale (YlOrRd from 0): at least this, so near-uniform heads stay pale. */
const ROLE_VMAX = 0.25;

/**
 * The weight-edit card's default: swap W_Q and W_K of L0H0 (on the built-in model its previous-token head).
 * Chosen by running candidates through the built-in model on the chapter's sentence: W_Q × 2 of that head,
 * the old default, changed the prediction by KL 6e-8 (the head is already saturated); the swap moves it by
 * about 0.2 nats and changes the top token (tests/e2e/heads-panel.test.js holds it above EDIT_MIN_KL).
 */
export const DEFAULT_EDIT = Object.freeze({ kind: 'swapQK', layer: 0, head: 0, alpha: 0.25 });
/** The KL (nats) the default edit must exceed on the built-in model's default sentence. */
export const EDIT_MIN_KL = 0.05;

/**
 * ΔA below this is not drawn as a change: the ΔA bars' full width is at least DELTA_FLOOR (attention
 * probability), and a ΔA map's colour scale reaches at least ±DELTA_FLOOR; when the largest |ΔA| of a card
 * is under it, the card says "no visible change" with the number (a weight moving by less than 0.01 is not
 * visible in the maps' colours).
 */
export const DELTA_FLOOR = 0.01;

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

/** A signed difference with 3 decimals: +0.012, −0.004, 0.000 (never −0.000). */
export const fmtS = (v) => (Math.abs(v) < 0.0005 ? '0.000' : (v > 0 ? '+' : '−') + Math.abs(v).toFixed(3));
const fmtA = (v) => (Math.abs(v) >= 0.1 ? v.toFixed(2) : Math.abs(v) < 0.0005 ? '0.000' : v.toFixed(3));
const fmtKL = (v) => (v === 0 ? '0' : v < 1e-4 ? v.toExponential(2) : v.toFixed(4));
const headName = (l, h) => `L${l}H${h}`;

// ── reference values of uniform causal attention (docs/heads.md) ─────────────

/** Role scores of uniform causal attention A[i][j] = 1/(i+1) on these ids: what "no specialisation" scores. */
export function uniformRoles(ids) {
  const T = ids.length;
  let prev = 0, sink = 0, dup = 0, nd = 0;
  for (let i = 1; i < T; i++) prev += 1 / (i + 1);
  prev = T > 1 ? prev / (T - 1) : 0;
  for (let i = 0; i < T; i++) sink += 1 / (i + 1);
  sink /= T;
  const seen = new Map();
  for (let i = 0; i < T; i++) {
    const c = seen.get(ids[i]) || 0;
    if (c > 0) { dup += c / (i + 1); nd += 1; }
    seen.set(ids[i], c + 1);
  }
  return { prev, sink, dup: nd ? dup / nd : 0 };
}

/** Induction score of uniform causal attention on r ++ r, |r| = n. */
export function uniformInduction(n) {
  let s = 0;
  for (let i = n; i < 2 * n; i++) s += 1 / (i + 1);
  return s / n;
}

/** A per-layer mask in short: one letter per layer, layer 0 first (C causal, F full, W3 window of 3). */
export function maskCode(mask) {
  return mask.map((m) => (m === 'causal' ? 'C' : m === 'full' ? 'F' : `W${m.slice(7)}`)).join('');
}

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

// ── the panel ───────────────────────────────────────────────────────────────

class Job {
  /**
   * @param {HeadsPanel} panel
   * @param {string} id   the card's element id
   * @param {{spec(): object, compute(spec, model, job): Promise<any>, draw(result, spec): void, busyText?(spec): string}} f
   */
  constructor(panel, id, f) {
    this.panel = panel;
    this.id = id;
    this.f = f;
    this.want = false;
    this.running = false;
    this.asked = false;     // the reader pressed Compute (or a preset) since the model was loaded
    this.current = null;    // the key being computed
    this.last = null;       // {result, spec, key}
    this.drawn = null;      // the key of what the card shows (null: nothing, or busy/error since)
  }

  get card() { return $(this.id); }

  reset() {
    this.last = null;
    this.drawn = null;
    this.asked = false;
    this.panel.exportable(this.id, false);
    this.waitForReader();
  }

  /** Nothing asked yet: say how to start it. */
  waitForReader() {
    this.card.dataset.state = 'waiting';
    delete this.card.dataset.progress;
    delete this.card.dataset.runs;
    this.status(this.panel.t('hpPressCompute'));
  }

  status(text, kind = '') {
    const s = $(`${this.id}-status`);
    s.textContent = text;
    s.className = `hp-status ${kind}`.trim();
  }

  /** k of n worker calls done (the importance grid, the DAG list). */
  progress(k, n) {
    Object.assign(this.card.dataset, { progress: String(k), runs: String(n) });
    this.status(this.panel.t('hpProgress', k, n), 'busy');
  }

  /** The figures above have the worker: this card's next call waits for them. */
  paused() { this.status(this.panel.t('hpWaitFigures'), 'busy'); }

  /** Resumed after a pause. */
  resumed() {
    const d = this.card.dataset;
    if (d.runs) this.progress(Number(d.progress), Number(d.runs));
    else this.status(this.panel.t('hpComputing'), 'busy');
  }

  /** A newer request with other inputs waits (or the model changed): the running computation may stop. */
  stale() {
    const P = this.panel;
    if (!this.current || !this.current.startsWith(`[${P.token},`)) return true;
    if (!this.want) return false;
    try {
      return JSON.stringify([P.token, this.f.spec()]) !== this.current;
    } catch {
      return true;
    }
  }

  /** Compute (if needed) and draw, once the reader has asked (ask: this request is the asking). */
  request(ask = false) {
    if (ask) this.asked = true;
    if (!this.panel.model) return;
    if (!this.asked) {
      this.waitForReader();
      return;
    }
    this.want = true;
    if (!this.running) this.#pump();
  }

  async #pump() {
    this.running = true;
    const P = this.panel;
    while (this.want) {
      this.want = false;
      const token = P.token;
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
        if ((this.drawn !== key || this.card.dataset.state !== 'ready') && !this.want) this.redraw();
        continue;
      }
      this.drawn = null;
      this.current = key;
      this.card.dataset.state = 'busy';
      delete this.card.dataset.progress;
      delete this.card.dataset.runs;
      this.status(this.f.busyText ? this.f.busyText(spec) : P.t('hpComputing'), 'busy');
      try {
        const result = await this.f.compute(spec, P.model, this);
        if (token !== P.token) continue;   // another model meanwhile: its request (if any) is in this.want
        this.last = { result, spec, key };
        if (this.want) continue;   // newer inputs: compute them first (cached parts are free)
        this.redraw();
      } catch (e) {
        if (token !== P.token) continue;
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
    this.panel.exportable(this.id, false);
    this.card.dataset.state = 'error';
    this.status(explain(e, this.panel.t, { nPositions: this.panel.config?.nPositions }), 'error');
  }

  redraw() {
    if (!this.last) return;
    try {
      this.f.draw(this.last.result, this.last.spec);
      this.drawn = this.last.key;
      this.panel.exportable(this.id, true);
      this.card.dataset.state = 'ready';
      this.status('');
    } catch (e) {
      this.fail(e);
    }
  }
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
    for (const card of Object.keys(CARD_EXPORTS)) this.exportable(card);
    for (const j of Object.values(this.jobs)) {
      if (j.card.dataset.state === 'waiting') j.status(this.t('hpPressCompute'));
      if (j.card.dataset.state === 'busy') j.resumed();
      if (j.card.dataset.state === 'ready') j.redraw();
    }
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

  /** One Job per card: what it computes from which inputs, and how it draws. */
  #makeJobs() {
    this.#makeTextJobs();
    this.#makeSentenceJobs();
  }

  /** The cards on the editable text and on r ++ r: importance, roles, break the circuit. */
  #makeTextJobs() {
    const P = this;
    this.jobs.imp = new Job(this, 'hp-imp', {
      spec: () => ({ text: $('hp-imp-input').value }),
      busyText: () => P.t('hpImpBusy', importanceRuns(P.config.nLayer, P.config.nHead)),
      compute: async (s, m, job) => {
        const ids = await P.ids(s.text, job);
        const imp = await P.importance(ids, s.text, job);
        return { imp, cut: ids.length === P.config.nPositions };
      },
      draw: (r) => P.#drawImportance(r),
    });
    this.jobs.roles = new Job(this, 'hp-roles', {
      spec: () => ({ text: $('hp-imp-input').value, n: Number($('hp-ind-n').value), seed: Number($('hp-ind-seed').value) }),
      compute: async (s, m, job) => {
        const ids = await P.ids(s.text, job);
        const n = Math.max(2, Math.min(Math.floor(s.n) || 2, Math.floor(P.config.nPositions / 2)));
        const roles = await P.call(['roles', s.text], (mm) => mm.headRoles(ids, { top: 3 }), job);
        const rep = await P.call(['repeated', n, s.seed], (mm) => mm.repeatedTokens(n, { seed: s.seed >>> 0 }), job);
        const ind = await P.call(['roles-rep', n, s.seed], (mm) => mm.headRoles(rep, { top: 3 }), job);
        return { roles, ind, ids, n };
      },
      draw: (r) => P.#drawRoles(r),
    });
    this.jobs.circ = new Job(this, 'hp-circ', {
      spec: () => ({ text: $('hp-imp-input').value, n: Number($('hp-ind-n').value), seed: Number($('hp-ind-seed').value),
        preset: P.breakPreset }),
      compute: (s, m, job) => P.#computeCircuit(s, job),
      draw: (r) => P.#drawCircuit(r),
    });
  }

  /** The cards on the page's sentence (mask, weight edit), on a pair, and on a list (DAG). */
  #makeSentenceJobs() {
    const P = this;
    const runOf = (text, job) => P.call(['run', text], (m) => m.run(text, { topK: 10 }), job);
    this.jobs.mask = new Job(this, 'hp-mask', {
      spec: () => ({ text: P.env.sentence(), mask: P.#maskOption() }),
      compute: async (s, m, job) => {
        const base = await runOf(s.text, job);
        const mixed = s.mask.every((x) => x === 'causal') ? base
          : await P.call(['run-mask', s.text, s.mask], (mm) => mm.run(s.text, { mask: s.mask, topK: 10 }), job);
        return { base, mixed };
      },
      draw: (r, s) => P.#drawMask(r, s),
    });
    this.jobs.cf = new Job(this, 'hp-cf', {
      spec: () => ({ a: $('hp-cf-a').value, b: $('hp-cf-b').value }),
      compute: (s, m, job) => P.call(['cf', s.a, s.b], (mm) => mm.counterfactual(s.a, s.b, { topK: 10 }), job),
      draw: (r) => P.#drawPair(r),
    });
    this.jobs.edit = new Job(this, 'hp-ed', {
      spec: () => ({ text: P.env.sentence(), iv: P.#editOf() }),
      compute: async (s, m, job) => {
        const base = await runOf(s.text, job);
        const after = await P.call(['run-edit', s.text, s.iv], (mm) => mm.run(s.text, { interventions: [s.iv], topK: 10 }), job);
        return { base, after };
      },
      draw: (r, s) => P.#drawEdit(r, s),
    });
    this.jobs.dag = new Job(this, 'hp-dag', {
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
      draw: (r, s) => P.#drawDag(r, s),
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

  /** Each card's SVG / PNG / JSON downloads (enabled once it has drawn). */
  #addExportButtons() {
    const P = this;
    for (const [card, x] of Object.entries(CARD_EXPORTS)) {
      const head = card === 'hp-ed' ? $('hp-cf').querySelector('h3.hp-sub') : $(card).querySelector('.fig-head');
      head.appendChild(el('div', { class: 'fig-actions hp-actions', dataset: { card } },
        ['svg', 'png', 'json'].map((kind) => el('button', {
          type: 'button', class: 'btn btn-small', disabled: true, dataset: { export: kind, card },
          'aria-label': P.t('hpExportAria', P.t(x.title), kind.toUpperCase()),
          on: { click: () => P.#exportCard(card, kind) },
        }, kind.toUpperCase()))));
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
      raf = requestAnimationFrame(() => { for (const j of Object.values(this.jobs)) if (j.card.dataset.state === 'ready') j.redraw(); });
    }).observe($('heads'));
  }

  // ── export ────────────────────────────────────────────────────────────────

  /** Enable or disable a card's export buttons (on when it has drawn); without `on`, relabel them only. */
  exportable(card, on) {
    for (const b of document.querySelectorAll(`.hp-actions[data-card="${card}"] button`)) {
      if (on !== undefined) b.disabled = !on;
      b.setAttribute('aria-label', this.t('hpExportAria', this.t(CARD_EXPORTS[card].title), b.dataset.export.toUpperCase()));
    }
  }

  async #exportCard(card, kind) {
    const x = CARD_EXPORTS[card];
    const job = Object.values(this.jobs).find((j) => j.id === card);
    try {
      if (kind === 'json') {
        if (!this.exportData[card]) return;
        exportJsonData({
          generator: 'attnlab page: heads & counterfactuals', card: x.file.replace(/^attnlab_heads_/, ''),
          created: new Date().toISOString(), model: { name: this.name, nLayer: this.config.nLayer, nHead: this.config.nHead },
          ...this.exportData[card],
        }, x.file);
        return;
      }
      const nodes = x.boxes.flatMap((id) => this.charts[id] || []);
      if (!nodes.length) return;
      await exportSvgNode(composeSvg(nodes, { title: this.t(x.title), lang: this.lang }), x.file, kind);
    } catch (e) {
      if (job) job.status(`${this.t('hpExportFailed')} ${e.message}`, 'error');
    }
  }

  // ── drawing ───────────────────────────────────────────────────────────────

  /** The width of box id (a block or a growing flex item), at least 200 px. */
  #width(id, fallback = 400) {
    return Math.max(200, Math.floor($(id).clientWidth || fallback));
  }

  /**
   * The width a content-sized box (a heatmap beside another chart) may take: a
   * share of its card's content width on a wide card, all of it on a narrow one
   * (the row wraps). Measured on the card, so it follows resizes both ways.
   */
  #share(card, share, max) {
    const c = $(card);
    const w = Math.max(200, c.clientWidth - 36);
    return Math.floor(w >= 640 ? Math.min(max, w * share) : Math.min(max, w));
  }

  #mount(id, node) {
    this.charts[id] = [node];
    replace($(id), toElement(node, document));
  }

  #headGrid({ values, role, title, color, cbar, annotate, cellTitle, maxW, attrs }) {
    const { nLayer: L, nHead: H } = this.config;
    const t = this.t;
    const maxCell = H <= 6 ? 46 : 34;
    const cellGuess = Math.min(maxCell, (maxW - 90) / H);
    return gridMap({
      values, R: L, C: H, color, cbar, role, title, maxW, maxCell, minCell: 8,
      annotate: cellGuess >= 26 ? annotate : null,
      rowLabels: Array.from({ length: L }, (_, l) => `L${l}`), colLabels: Array.from({ length: H }, (_, h) => `H${h}`),
      rowTitle: t('layer'), colTitle: t('head'), cellTitle, lang: this.lang, attrs,
    });
  }

  #drawImportance({ imp, cut }) {
    const t = this.t;
    const { nLayer: L, nHead: H } = this.config;
    const LH = L * H;
    const half = Math.floor(LH / 2);
    let m = 0;
    for (const v of imp.delta) m = Math.max(m, Math.abs(v));
    const scale = rdBuR(m > 0 ? m : 1e-6);
    const gridW = this.#share('hp-imp', 0.42, 420);
    this.#mount('hp-imp-grid', this.#headGrid({
      values: imp.delta, role: 'importance', title: t('hpImpGridTitle'), color: scale,
      cbar: { scale, format: (v) => (m < 0.01 ? v.toFixed(4) : m < 0.1 ? v.toFixed(3) : v.toFixed(2)) },
      annotate: fmtA,
      cellTitle: (i, j, v) => t('hpImpCell', i, j, v.toFixed(5), (imp.baseLoss + v).toFixed(4)),
      maxW: gridW, attrs: { 'data-base': String(imp.baseLoss), 'data-n': String(LH) },
    }));
    const curveW = this.#width('hp-imp-curve', 500);
    const atHalf = imp.lossAtHalf;
    this.#mount('hp-imp-curve', lineChart({
      loss: imp.pruning, half, base: imp.baseLoss, width: curveW, height: Math.round(Math.min(300, Math.max(220, curveW * 0.5))),
      xTitle: t('hpCurveX'), yTitle: t('hpCurveY'), lang: this.lang,
      halfLabel: t('hpHalfLabel', half, atHalf.toFixed(3), fmtS(atHalf - imp.baseLoss)),
      halfLabelShort: `k = ${half}: ${atHalf.toFixed(3)} (${fmtS(atHalf - imp.baseLoss)})`,
      baseLabel: t('hpCurveBase', imp.baseLoss.toFixed(3)),
      pointTitle: (k, v) => t('hpCurvePoint', k, v.toFixed(4), fmtS(v - imp.baseLoss)),
      attrs: { 'data-half': String(half), 'data-loss-at-half': String(atHalf), 'data-base': String(imp.baseLoss) },
    }));
    const most = Array.from(imp.order).reverse().slice(0, 3).map((k) => `${headName(Math.floor(k / H), k % H)} (${fmtS(imp.delta[k])})`);
    const least = Array.from(imp.order).slice(0, 3).map((k) => `${headName(Math.floor(k / H), k % H)} (${fmtS(imp.delta[k])})`);
    const all = imp.pruning[LH];
    $('hp-imp-summary').textContent = [
      t('hpImpBase', imp.baseLoss.toFixed(3), imp.T, cut),
      t('hpImpHalf', half, LH, atHalf.toFixed(3), fmtS(atHalf - imp.baseLoss)),
      t('hpImpAll', all.toFixed(3), fmtS(all - imp.baseLoss)),
      t('hpImpMost', most.join(', ')),
      t('hpImpLeast', least.join(', ')),
    ].join(this.lang === 'zh' ? '' : ' ');
    this.exportData['hp-imp'] = {
      text: $('hp-imp-input').value, T: imp.T, cut_to_context: cut, base_loss: imp.baseLoss,
      delta_loss: rows(imp.delta, H), pruning_order: Array.from(imp.order, (k) => headName(Math.floor(k / H), k % H)),
      pruning_loss: Array.from(imp.pruning), half, loss_at_half: atHalf, loss_all_removed: all,
    };
    const card = $('hp-imp');
    card.dataset.baseLoss = String(imp.baseLoss);
    card.dataset.lossAtHalf = String(atHalf);
    card.dataset.lossAll = String(all);
    card.dataset.t = String(imp.T);
  }

  #drawRoles({ roles, ind, ids, n }) {
    const t = this.t;
    const uni = { ...uniformRoles(Array.from(ids)), induction: uniformInduction(n) };
    const total = this.#width('hp-roles-grids', 800);
    const per = total >= 760 ? Math.floor((total - 3 * 14) / 4) : total >= 400 ? Math.floor((total - 14) / 2) : Math.min(total, 320);
    const specs = [
      ['prev', roles.prev, roles.top.prev, t('hpRolePrev'), roles.T],
      ['sink', roles.sink, roles.top.sink, t('hpRoleSink'), roles.T],
      ['dup', roles.dup, roles.top.dup, t('hpRoleDup'), roles.T],
      ['induction', ind.induction, ind.top.induction, t('hpRoleInd', n), ind.T],
    ];
    this.charts['hp-roles-grids'] = [];
    replace($('hp-roles-grids'), specs.map(([key, values, top, title]) => {
      let mx = 0;
      for (const v of values) mx = Math.max(mx, v);
      // one honest scale: a head near uniform attention stays pale whatever the largest score
      const scale = ylOrRd(0, Math.max(mx, ROLE_VMAX));
      const svg = this.#headGrid({
        values, role: `role-${key}`, title, color: scale, cbar: null, maxW: per,
        annotate: (v) => v.toFixed(3).replace(/^0/, ''),
        cellTitle: (i, j, v) => t('hpRoleCell', title, i, j, v.toFixed(4)),
        attrs: { 'data-role-name': key },
      });
      this.charts['hp-roles-grids'].push(svg);
      const tops = top.map((x) => `${headName(x.layer, x.head)} ${x.score.toFixed(3)}`).join(' · ');
      const ratio = top.length && uni[key] > 0 ? top[0].score / uni[key] : 0;
      return el('figure', { class: 'hp-role', dataset: { role: key, top: top.length ? headName(top[0].layer, top[0].head) : '' } },
        toElement(svg, document),
        el('figcaption', {},
          el('span', { class: 'hp-top' }, t('hpRoleTop', tops)),
          el('span', { class: 'muted' }, t('hpRoleUniform', uni[key].toFixed(3), ratio.toFixed(1)))));
    }));
    const byHead = (v) => rows(v, this.config.nHead);
    const tops = (list) => list.map((x) => ({ layer: x.layer, head: x.head, score: x.score }));
    this.exportData['hp-roles'] = {
      text: $('hp-imp-input').value, T: roles.T, induction_n: n, induction_seed: Number($('hp-ind-seed').value),
      scores: { prev: byHead(roles.prev), sink: byHead(roles.sink), dup: byHead(roles.dup), induction: byHead(ind.induction) },
      top: { prev: tops(roles.top.prev), sink: tops(roles.top.sink), dup: tops(roles.top.dup), induction: tops(ind.top.induction) },
      uniform: uni, induction_defined: ind.inductionDefined,
    };
    $('hp-roles').dataset.t = String(roles.T);
    $('hp-roles').dataset.inductionDefined = String(ind.inductionDefined);
  }

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
  #drawCircuit(r) {
    const t = this.t;
    const { nHead: H, vocabSize: V } = this.config;
    const fx = circuitEffect({ ...r, nHead: H, ablated: r.heads });
    const names = r.heads.map((x) => headName(x.layer, x.head)).join(' + ');
    const w = this.#width('hp-circ-loss', 560);
    this.#mount('hp-circ-loss', lossLines({
      a: r.plain.losses, b: r.broken.losses, n: r.n, chance: Math.log(V), width: w, height: Math.round(Math.min(300, Math.max(220, w * 0.42))),
      labelA: t('hpCircPlain'), labelB: t('hpCircBroken', names), chanceLabel: t('hpCircChance', Math.log(V).toFixed(2)),
      copyLabel: t('hpCircSecond'), xTitle: t('hpCircX'), yTitle: t('hpCircY'), lang: this.lang,
      pointTitle: (s, k, v) => t('hpCircPoint', s ? names : t('hpCircPlain'), k, v.toFixed(3)),
      attrs: { 'data-n': String(r.n) },
    }));
    this.#circuitGrid(r, names);
    $('hp-circ-summary').textContent = this.#circuitSentence(r, fx, names);
    this.exportData['hp-circ'] = {
      induction_n: r.n, induction_seed: r.seed, preset: r.preset, ablated: r.heads,
      losses_plain: Array.from(r.plain.losses), losses_ablated: Array.from(r.broken.losses),
      copy_loss: { plain: { first: fx.plain.first, second: fx.plain.second }, ablated: { first: fx.broken.first, second: fx.broken.second } },
      copy_gain: { plain: fx.plain.gain, ablated: fx.broken.gain },
      induction_plain: rows(r.ind.induction, H), induction_ablated: rows(this.#hatchAblated(r.indBroken.induction, r.heads), H),
      induction_ablated_heads_own: r.heads.map((x) => ({ layer: x.layer, head: x.head, score: r.indBroken.induction[x.layer * H + x.head] })),
      induction_others: { plain: fx.plain.others, ablated: fx.broken.others },
    };
    const others = (o) => (o ? String(o.score) : '');
    Object.assign($('hp-circ').dataset, {
      heads: names, preset: r.preset, copies: String(copies(fx)), secondPlain: String(fx.plain.second), secondBroken: String(fx.broken.second),
      firstPlain: String(fx.plain.first), firstBroken: String(fx.broken.first), gainPlain: String(fx.plain.gain), gainBroken: String(fx.broken.gain),
      inductionPlain: String(fx.plain.induction.score), inductionBroken: String(fx.broken.induction.score),
      othersPlain: others(fx.plain.others), othersBroken: others(fx.broken.others),
    });
  }

  /** The induction scores of the ablated run with the ablated heads' cells NaN (drawn hatched). */
  #hatchAblated(values, heads) {
    const H = this.config.nHead;
    const out = Float32Array.from(values);
    for (const x of heads) out[x.layer * H + x.head] = NaN;
    return out;
  }

  #circuitGrid(r, names) {
    const t = this.t;
    const H = this.config.nHead;
    let mx = 0;
    for (const v of r.ind.induction) mx = Math.max(mx, v);
    const scale = ylOrRd(0, Math.max(mx, ROLE_VMAX));
    const own = (i, j) => r.indBroken.induction[i * H + j].toFixed(4);
    this.#mount('hp-circ-grid', this.#headGrid({
      values: this.#hatchAblated(r.indBroken.induction, r.heads), role: 'circ-induction', title: t('hpCircGridTitle', names),
      color: scale, cbar: null, maxW: this.#share('hp-circ', 0.36, 360), annotate: (v) => v.toFixed(3).replace(/^0/, ''),
      cellTitle: (i, j, v) => (Number.isFinite(v) ? t('hpCircCell', headName(i, j), v.toFixed(4), r.ind.induction[i * H + j].toFixed(4), false)
        : t('hpCircCellAblated', headName(i, j), own(i, j))),
      attrs: { 'data-heads': names },
    }));
  }

  /** The card's sentence: what was ablated, the copying gain, the losses, the induction of the heads left. */
  #circuitSentence(r, fx, names) {
    const t = this.t;
    const f = (v) => v.toFixed(2), f3 = (v) => v.toFixed(3);
    const oh = (o) => (o ? headName(o.layer, o.head) : '—');
    const H = this.config.nHead;
    const best = fx.plain.induction;
    const ablatedBest = r.heads.some((x) => x.layer === best.layer && x.head === best.head);
    const own = r.indBroken.induction[best.layer * H + best.head];
    return [
      t('hpCircSumHeads', r.preset, names, r.heads.map((x) => x.score.toFixed(3)).join(', ')),
      t('hpCircSumGain', f(fx.plain.gain), f(fx.broken.gain), names, fmtS(fx.delta.gain)),
      t('hpCircSumLoss', f(fx.plain.second), f(fx.broken.second), fmtS(fx.delta.second), f(fx.plain.first), f(fx.broken.first), fmtS(fx.delta.first)),
      fx.plain.others ? t('hpCircSumOthers', oh(fx.plain.others), f3(fx.plain.others.score), oh(fx.broken.others), f3(fx.broken.others.score)) : '',
      ablatedBest ? t('hpCircOwnPattern', headName(best.layer, best.head), f3(best.score), f3(own)) : '',
      copies(fx) ? '' : t('hpCircNoCopy', f(fx.plain.first - fx.plain.second), COPY_MARGIN),
    ].filter(Boolean).join(this.lang === 'zh' ? '' : ' ');
  }

  /** ' No visible change in attention: the largest |ΔA| is …' when every |ΔA| is below DELTA_FLOOR, else ''. */
  #noChange(change) {
    const mx = Math.max(...change.max);
    return mx < DELTA_FLOOR ? ` ${this.t('hpNoChange', mx === 0 ? '0' : mx.toExponential(0), DELTA_FLOOR)}` : '';
  }

  #tokenMaps(id, mats, { T, tokens, titles, scale, cbarLast = true, role = 'attn', cellTitle, attrsOf = () => ({}) }) {
    const total = this.#width(id, 800);
    const n = mats.length;
    const stacked = total < 600;
    const per = stacked ? total : Math.floor((total - (n - 1) * 16) / n);
    const labels = tokens.map((s) => tokenLabel(s, 12));
    // side by side: one colour bar, right of the last map; stacked: one on each, so the maps keep one size
    const nodes = mats.map((values, k) => gridMap({
      values, R: T, C: T, color: scale, cbar: stacked || (cbarLast && k === n - 1) ? { scale, format: fmt2 } : null,
      role: `${role}-${k}`, title: titles[k], maxW: per, maxCell: 30, minCell: 4,
      rowLabels: labels, colLabels: labels, rotate: true, lang: this.lang,
      cellTitle: (i, j, v) => cellTitle(k, i, j, v), attrs: attrsOf(k),
    }));
    this.charts[id] = nodes;
    replace($(id), nodes.map((node) => toElement(node, document)));
  }

  #topPair(idA, idB, a, b) {
    topTable($(idA), a.top, null, this.t);
    topTable($(idB), b.top, rankMoves(a.top, b.top), this.t);
  }

  #drawMask({ base, mixed }, s) {
    const t = this.t;
    const L = this.config.nLayer;
    const T = base.T;
    const A0 = base.attention(L - 1, 'avg'), A1 = mixed.attention(L - 1, 'avg');
    let mx = 0;
    for (let k = 0; k < T * T; k++) mx = Math.max(mx, A0[k], A1[k]);
    const scale = ylOrRd(0, mx);
    const tl = (k) => `${k} (${tokenLabel(base.tokens[k], 30)})`;
    this.#tokenMaps('hp-mask-maps', [A0, A1], {
      T, tokens: base.tokens, scale, titles: [t('hpMaskAllCausal'), t('hpMaskMixed', maskCode(s.mask))],
      cellTitle: (k, i, j, v) => t('deltaCell', tl(i), tl(j), v.toFixed(4)),
    });
    const kl = klDivergence(base.logits, mixed.logits);
    const change = attentionChange(base, mixed);
    $('hp-mask-kl').textContent = `${t('hpKlMask', fmtKL(kl))} ${topMove(t, base, mixed)}${this.#noChange(change)}`;
    this.#topPair('hp-mask-top-a', 'hp-mask-top-b', base, mixed);
    this.#mount('hp-mask-delta', deltaBars({ mean: change.mean, max: change.max, doLayer: -1, width: Math.min(520, this.#width('hp-mask-delta')),
      lang: this.lang, t, floor: DELTA_FLOOR }));
    this.exportData['hp-mask'] = {
      text: s.text, mask: s.mask, tokens: base.tokens, layer: L - 1, head: 'avg',
      attention_all_causal: rows(A0, T), attention_mixed: rows(A1, T),
      top_all_causal: plainTop(base.top), top_mixed: plainTop(mixed.top), kl_causal_mixed: kl,
      attention_change: { mean_abs: Array.from(change.mean), max_abs: Array.from(change.max) },
    };
    const card = $('hp-mask');
    card.dataset.kl = String(kl);
    card.dataset.mask = s.mask.join(',');
    card.dataset.maxDelta = String(Math.max(...change.max));
  }

  #drawPair(cf) {
    const t = this.t;
    const { nLayer: L, nHead: H } = this.config;
    const { a, b } = cf;
    const TA = a.T;
    const layer = Math.min(Number($('hp-cf-layer').value) || 0, L - 1);
    const hv = $('hp-cf-head').value;
    const TT = TA * TA;
    const D = hv === 'avg' ? cf.attentionDiff.subarray(layer * TT, (layer + 1) * TT)
      : cf.headDiff.subarray((layer * H + Number(hv)) * TT, (layer * H + Number(hv) + 1) * TT);
    let m = 0, aligned = 0, missing = 0;
    for (const v of D) { if (Number.isFinite(v)) { m = Math.max(m, Math.abs(v)); aligned += 1; } else missing += 1; }
    const scale = rdBuR(Math.max(m, DELTA_FLOOR));   // a change of 1e-6 is not drawn in full colour
    // the aligned partner of each of A's positions
    const partner = new Map(cf.aligned.map(([i, j]) => [i, j]));
    const tl = (k) => `${k} (${tokenLabel(a.tokens[k], 30)}${partner.has(k) ? '' : ' · ' + t('hpUnaligned')})`;
    const total = this.#share('hp-cf', 0.55, 560);
    const cA = (cf.alignment || { changedA: [0, 0] }).changedA;
    const labels = a.tokens.map((s, k) => (!partner.has(k) ? `${tokenLabel(s, 12)}*`
      : k >= cA[0] && k < cA[1] ? `${tokenLabel(s, 12)}→${tokenLabel(b.tokens[partner.get(k)], 12)}` : tokenLabel(s, 12)));
    this.#mount('hp-cf-map', gridMap({
      values: D, R: TA, C: TA, color: scale, cbar: { scale, format: (v) => v.toFixed(3) },
      role: 'cf-diff', title: t('hpCfMapTitle', layer, hv === 'avg' ? t('headAvg') : t('headOpt', Number(hv))),
      maxW: total, maxCell: 32, minCell: 4, rowLabels: labels, colLabels: labels, rotate: true, lang: this.lang,
      cellTitle: (i, j, v) => (Number.isFinite(v) ? t('hpCfCell', tl(i), tl(j), v.toFixed(5)) : t('hpCfCellNaN', tl(i), tl(j))),
      attrs: { 'data-aligned': String(aligned), 'data-missing': String(missing) },
    }));
    // alignment: A's and B's tokens, the unaligned ones marked
    const alignedA = new Set(cf.aligned.map((p) => p[0])), alignedB = new Set(cf.aligned.map((p) => p[1]));
    const al = cf.alignment || { changedA: [0, 0], changedB: [0, 0] };
    const line = (r, set, [c0, c1], label) => el('div', { class: 'hp-align-row' }, el('span', { class: 'hp-align-label' }, label),
      el('ol', { class: 'tokens' }, r.tokens.map((tok, k) => {
        const cls = !set.has(k) ? 'is-unaligned' : k >= c0 && k < c1 ? 'is-changed' : null;
        return el('li', { class: cls, title: cls ? t(cls === 'is-changed' ? 'hpSubstituted' : 'hpUnaligned') : null },
          el('span', { class: 'tok-i' }, String(k)), el('span', { class: 'tok-s' }, tokenLabel(tok, 30)));
      })));
    replace($('hp-cf-align'), line(a, alignedA, al.changedA, 'A'), line(b, alignedB, al.changedB, 'B'));
    // next-token Δp
    const items = cf.next.top.slice(0, 12).map((x) => ({
      label: tokenLabel(x.token, 14), v: x.delta, note: `${x.pA.toFixed(3)} → ${x.pB.toFixed(3)}`, id: x.id,
    }));
    this.#mount('hp-cf-bars', diffBars({
      items, width: Math.min(520, this.#width('hp-cf-bars', 420)), lang: this.lang, ariaLabel: t('hpCfBarsTitle'),
      barTitle: (k, it) => t('hpCfBar', it.label, it.note, fmtS(it.v)),
    }));
    $('hp-cf-kl').textContent = `${t('hpCfKl', fmtKL(cf.next.kl), cf.next.tv.toFixed(4))} ${topMove(t, a, b)}${this.#noChange({ max: [m] })}`;
    this.exportData['hp-cf'] = {
      a: { text: $('hp-cf-a').value, tokens: a.tokens }, b: { text: $('hp-cf-b').value, tokens: b.tokens },
      aligned: cf.aligned.map(([i, j]) => [i, j]), alignment: cf.alignment || null,
      layer, head: hv === 'avg' ? 'avg' : Number(hv), attention_diff_b_minus_a: rows(D, TA),
      next: cf.next.top.slice(0, 12).map((x) => ({ id: x.id, token: x.token, p_a: x.pA, p_b: x.pB, delta: x.delta })),
      kl_a_b: cf.next.kl, total_variation: cf.next.tv,
    };
    const card = $('hp-cf');
    card.dataset.kl = String(cf.next.kl);
    card.dataset.tv = String(cf.next.tv);
    card.dataset.aligned = String(cf.aligned.length);
  }

  #drawEdit({ base, after }, s) {
    const t = this.t;
    const { iv } = s;
    const T = base.T;
    const head = iv.head === 'all' ? 'avg' : iv.head;
    const A0 = base.attention(iv.layer, head), A1 = after.attention(iv.layer, head);
    let mx = 0;
    for (let k = 0; k < T * T; k++) mx = Math.max(mx, A0[k], A1[k]);
    const scale = ylOrRd(0, mx);
    const what = iv.head === 'all' ? t('whereAll', iv.layer) : t('whereHead', iv.layer, iv.head);
    const op = iv.kind === 'swapQK' ? t('hpEdSwapShort') : t(iv.kind === 'scaleQ' ? 'hpEdScaleQShort' : 'hpEdScaleKShort', iv.alpha.toFixed(2));
    const tl = (k) => `${k} (${tokenLabel(base.tokens[k], 30)})`;
    this.#tokenMaps('hp-ed-maps', [A0, A1], {
      T, tokens: base.tokens, scale, titles: [t('hpEdBefore', what), t('hpEdAfter', op)],
      cellTitle: (k, i, j, v) => t('deltaCell', tl(i), tl(j), v.toFixed(4)),
    });
    const kl = klDivergence(base.logits, after.logits);
    const change = attentionChange(base, after);
    $('hp-ed-kl').textContent = `${t('hpKlEdit', fmtKL(kl))} ${topMove(t, base, after)}${this.#noChange(change)}`;
    this.#topPair('hp-ed-top-a', 'hp-ed-top-b', base, after);
    // an edit, not a do: the edited layer's label says so (measured by deltaBars with its " (do)", then dropped)
    const tEdit = (key, ...a) => (key === 'deltaLayer' && a[0] === iv.layer ? `${t('deltaLayer', a[0])} (${t('hpEdited')})` : t(key, ...a));
    const bars = deltaBars({ mean: change.mean, max: change.max, doLayer: iv.layer, width: Math.min(520, this.#width('hp-ed-delta')),
      lang: this.lang, t: tEdit, floor: DELTA_FLOOR });
    this.#mount('hp-ed-delta', relabel(bars, ' (do)', ''));
    this.exportData['hp-ed'] = {
      text: s.text, edit: iv, tokens: base.tokens, layer: iv.layer, head: head,
      attention_before: rows(A0, T), attention_after: rows(A1, T),
      top_before: plainTop(base.top), top_after: plainTop(after.top), kl_before_after: kl,
      attention_change: { mean_abs: Array.from(change.mean), max_abs: Array.from(change.max) },
    };
    const card = $('hp-ed');
    card.dataset.kl = String(kl);
    card.dataset.maxDelta = String(Math.max(...change.max));
    card.dataset.edit = JSON.stringify(iv);
  }

  #drawDag(p, s) {
    const t = this.t;
    const L = this.config.nLayer;
    const w = this.#width('hp-dag-layers', 420);
    this.#mount('hp-dag-layers', layerBars({
      values: Array.from(p.mean.layer), ref: p.mean.null, labels: Array.from({ length: L }, (_, l) => `L${l}`),
      width: Math.min(520, w), height: 230, yTitle: t('hpDagY'), refLabel: t('hpDagNull', p.mean.null.toFixed(3)), lang: this.lang,
      barTitle: (k, v) => t('hpDagBar', k, v.toFixed(4), fmtS(v - p.mean.null)),
      attrs: { 'data-null': String(p.mean.null), 'data-overall': String(p.mean.overall) },
    }));
    const ex = Float64Array.from(p.mean.head, (v) => v - p.mean.null);
    let m = 0;
    for (const v of ex) m = Math.max(m, Math.abs(v));
    const scale = rdBuR(m > 0 ? m : 1e-6);
    this.#mount('hp-dag-heads', this.#headGrid({
      values: ex, role: 'dag-excess', title: t('hpDagHeadsTitle'), color: scale, cbar: { scale, format: fmt3 },
      annotate: (v) => fmtS(v), maxW: this.#share('hp-dag', 0.45, 440),
      cellTitle: (i, j, v) => t('hpDagCell', i, j, (v + p.mean.null).toFixed(4), fmtS(v)),
    }));
    const body = $('hp-dag-table').tBodies[0];
    replace(body, p.sentences.map((x, k) => el('tr', {},
      el('td', { class: 'hp-sent', title: s.list[k] }, s.list[k]),
      el('td', {}, String(x.T)), el('td', {}, x.overall.toFixed(3)), el('td', {}, x.null.toFixed(3)),
      el('td', {}, fmtS(x.overall - x.null)))));
    $('hp-dag-summary').textContent = t('hpDagSummary', p.sentences.length, p.mean.overall.toFixed(3), p.mean.null.toFixed(3),
      fmtS(p.mean.overall - p.mean.null), s.mask);
    this.exportData['hp-dag'] = {
      mask: s.mask, overall: p.mean.overall, null: p.mean.null, layer_mean: Array.from(p.mean.layer),
      head_mean: rows(p.mean.head, this.config.nHead),
      sentences: p.sentences.map((x, k) => ({ text: s.list[k], T: x.T, overall: x.overall, null: x.null })),
    };
    const card = $('hp-dag');
    card.dataset.overall = String(p.mean.overall);
    card.dataset.null = String(p.mean.null);
  }
}

/** The node tree with every text `from` at the end of a text node replaced by `to`. */
function relabel(node, from, to) {
  for (const n of walk(node)) {
    for (const c of n.children) if (typeof c.text === 'string' && c.text.endsWith(from)) c.text = c.text.slice(0, -from.length) + to;
  }
  return node;
}

/** A top-k list as plain JSON rows. */
function plainTop(top) {
  return top.map(({ id, token, prob }) => ({ id, token, prob }));
}

/** "top token x → y." or "top token x unchanged." */
function topMove(t, a, b) {
  const x = a.top[0], y = b.top[0];
  if (!x || !y) return '';
  return x.id === y.id ? t('hpTopSame', tokenLabel(x.token, 24)) : t('hpTopMove', tokenLabel(x.token, 24), tokenLabel(y.token, 24));
}

