// widget/index.js — 'attnlab/widget': custom elements that put the chapter's
// live figures into any page.
//
//   <script type="module" src="…/attnlab-widget.js"></script>      (no build step)
//   import 'attnlab/widget';                                      (a bundler, VitePress)
//
//   <attnlab-figure figure="1|2|3|4|hopfield|linear|sqrtdk" text="…" layer="5" head="avg|0…"
//                   row="8" col="2" lambda="3" kind="hard|soft" model="/models/gpt2/" lang="zh" theme="dark"
//                   controls="none">caption (light DOM, shown under the figure)</attnlab-figure>
//   <attnlab-lab text="…" lang="zh"></attnlab-lab>                 the whole lab: four figures, one set of controls
//
// Every element renders into an open shadow root (no CSS in or out but the
// --attnlab-* custom properties), sizes itself to its container (down to
// 360 px: the figures' panels stack), follows prefers-color-scheme or its
// theme attribute, and speaks English or 中文 (lang attribute, else the
// nearest [lang] ancestor, else <html lang>). It waits for the reader: a
// placeholder with a progress bar until it scrolls into view
// (IntersectionObserver), then the page's one shared worker (client.js) loads
// the model once for every element and computes. Attributes can change at any
// time; the figure follows (the element's own controls change the same
// attributes).
//
// Configuration (before or after the import): configure({model, wasm, worker,
// modelName, theme}) or, before the import, globalThis.attnlabWidgetConfig =
// {...}. Defaults are relative to this module (import.meta.url): the wasm at
// ../../dist/attnlab.wasm and the built-in model at ../../../models/brown-gpt2/
// — the package layout, for web/src/widget/index.js and for the prebuilt
// web/dist/widget/attnlab-widget.js alike.
//
// For tests and authors: globalThis.attnlabWidget = {configure, stats, version}
// (stats().workersStarted is 1 on a page with any number of widgets); each
// element sets data-state (waiting | loading | ready | error) and data-renders
// on itself and dispatches 'attnlab-render' ({figure, ms}) after each drawing.

import { toElement } from '../figures/svg.js';
import { el, setOptions } from '../ui/dom.js';
import { defaultSelection, outlineCell } from '../ui/selection.js';

const OUTLINE = { fill: 'none', stroke: '#1f4fd1', 'stroke-width': '2.5', 'pointer-events': 'none' };
import { useModel, runModel, lineageData, evidenceData, stats, setWorkerURL } from './client.js';
import { translator, normLang } from './i18n.js';
import { styleSheet } from './style.js';
import {
  isModelFigure, LINEAGE_FIGURES, EVIDENCE_FIGURES, FIGURES, reserveHeight, modelFigure, tokenLabel,
  evidenceFigures,
  hopfieldFigures, hopfieldNote, linearFigures, linearNote, sqrtdkFigures, sqrtdkNote,
} from './draw.js';

export const VERSION = '0.1.0';
export const CHAPTER_SENTENCE = 'Because the storm intensified , the ship finally sank .';

// ── configuration ───────────────────────────────────────────────────────────

// Relative paths kept in variables so that bundlers leave them for run time.
const WASM_REL = '../../dist/attnlab.wasm';
const MODEL_REL = '../../../models/brown-gpt2/';
const POSTERS_REL = '../../dist/widget/posters/';   // make widget: scripts/widget-posters.mjs

const config = { model: null, wasm: null, worker: null, modelName: null, theme: null, posters: null };
const live = new Set();   // connected elements (configure() redraws them)

function abs(u) {
  return new URL(String(u), typeof document !== 'undefined' ? document.baseURI : import.meta.url).href;
}

/** The model directory URL an element uses: its model attribute, else configure()'s, else the built-in. */
function modelURL(attr) {
  const u = attr || config.model || new URL(MODEL_REL, import.meta.url).href;
  const href = abs(u);
  return href.endsWith('/') ? href : `${href}/`;
}

function wasmURL() {
  return config.wasm ? abs(config.wasm) : new URL(WASM_REL, import.meta.url).href;
}

function modelNameOf(url, attrName) {
  if (attrName) return attrName;
  if (config.modelName && !config.model) return config.modelName;
  const segs = new URL(url).pathname.split('/').filter(Boolean);
  return segs.length ? decodeURIComponent(segs[segs.length - 1]) : 'model';
}

/**
 * Set defaults for every widget on the page. Keys: model (URL of a model
 * directory), wasm (URL of attnlab.wasm), worker (URL of the widget worker, for
 * hosts that move files), modelName (shown in Fig. 1's title), theme ('light' |
 * 'dark' | null = follow the system), posters (URL of a directory of posters,
 * scripts/widget-posters.mjs; false: none; null: the built-in model's, beside
 * this module, when no other model is configured). Unknown keys throw. Returns
 * the settings.
 */
export function configure(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('configure: options must be an object');
  for (const k of Object.keys(options))
    if (!(k in config)) throw new TypeError(`configure: unknown option '${k}' (known: ${Object.keys(config).join(', ')})`);
  if ('theme' in options && ![null, undefined, 'light', 'dark', 'auto'].includes(options.theme))
    throw new TypeError("configure: theme must be 'light', 'dark' or 'auto'");
  if ('posters' in options && !(options.posters === null || options.posters === false || typeof options.posters === 'string'))
    throw new TypeError('configure: posters must be a URL string, false or null');
  Object.assign(config, options);
  if (options.worker) setWorkerURL(abs(options.worker));
  for (const el of live) el._configChanged(options);
  return { ...config };
}

export { stats };

const mediaDark = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
const intInRange = (s, lo, hi) => { const n = Number(s); return s !== null && s !== '' && Number.isInteger(n) && n >= lo && n <= hi ? n : null; };

// One IntersectionObserver for every element.
let io = null;
function observe(elm) {
  if (typeof IntersectionObserver === 'undefined') { elm._visible(); return; }
  io ??= new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) { io.unobserve(e.target); e.target._visible(); }
  }, { rootMargin: '300px 0px' });
  io.observe(elm);
}

// ── the base element: shadow DOM, theme, language, lazy start, redraws ─────

const COMMON_ATTRS = ['lang', 'theme', 'model', 'model-name', 'controls'];

// In Node or during server-side rendering there is no HTMLElement: the module
// still imports (configure, stats), the elements are simply not defined.
const ElementBase = typeof HTMLElement !== 'undefined' ? HTMLElement : class {};

class AttnlabBase extends ElementBase {
  constructor() {
    super();
    this._root = this.attachShadow({ mode: 'open' });
    this._root.adoptedStyleSheets = [styleSheet()];
    this._frame = el('div', { class: 'frame', part: 'frame' });
    this._root.append(this._frame);
    this._started = false;
    this._renders = 0;
    this._width = 0;
    this._queued = false;
    this._token = 0;
    this._onScheme = () => this._applyTheme();
  }

  get _lang() {
    const own = this.getAttribute('lang');
    if (own) return normLang(own);
    const anc = this.parentElement && this.parentElement.closest('[lang]');
    return normLang(anc ? anc.getAttribute('lang') : document.documentElement.lang);
  }

  get _t() { return translator(this._lang); }

  connectedCallback() {
    live.add(this);
    mediaDark?.addEventListener('change', this._onScheme);
    this._applyTheme();
    if (!this._built) { this._build(); this._built = true; }
    this._setState(this._started ? this.dataset.state || 'ready' : 'waiting');
    this._ro ??= new ResizeObserver((entries) => {
      const w = Math.round(entries[0].contentRect.width);
      if (Math.abs(w - this._width) < 8) return;
      this._width = w;
      this._reserve();
      if (this._started) this._schedule();
    });
    this._ro.observe(this._frame);
    if (!this._started) observe(this);
  }

  disconnectedCallback() {
    live.delete(this);
    mediaDark?.removeEventListener('change', this._onScheme);
    this._ro?.disconnect();
    io?.unobserve(this);
  }

  attributeChangedCallback(name, old, value) {
    if (old === value || !this._built) return;
    if (name === 'theme') { this._applyTheme(); return; }
    if (this._syncPoster) this._syncPoster();
    if (name === 'lang' || name === 'controls') this._rebuildControls();
    if (this._started) this._schedule();
  }

  _configChanged(o) {
    if ('theme' in o) this._applyTheme();
    if (this._syncPoster) this._syncPoster();
    if (this._started && ('model' in o || 'wasm' in o || 'modelName' in o)) this._schedule();
  }

  _applyTheme() {
    const own = this.getAttribute('theme');
    const set = own === 'light' || own === 'dark' ? own : config.theme === 'light' || config.theme === 'dark' ? config.theme : null;
    this._frame.dataset.theme = set || (mediaDark && mediaDark.matches ? 'dark' : 'light');
  }

  _setState(s) { this.dataset.state = s; }

  _visible() {
    if (this._started) return;
    this._started = true;
    this._schedule();
  }

  /** Coalesce attribute changes of one task into one redraw. */
  _schedule() {
    if (this._queued) return;
    this._queued = true;
    queueMicrotask(() => {
      this._queued = false;
      const token = ++this._token;
      this._redraw(token).catch((e) => { if (token === this._token) this._showError(e); });
    });
  }

  _current(token) { return token === this._token && this.isConnected; }

  _showError(e) {
    this._setState('error');
    const msg = (e && e.message) || String(e);
    this._note.replaceChildren(el('span', { class: 'error' }, this._t('error', msg)), ' ',
      el('button', { type: 'button', on: { click: () => { if (this._progress) this._progress.hidden = false; this._schedule(); } } }, this._t('retry')));
    this._hidePlaceholderProgress();
    if (this._phText && !this._box.classList.contains('has-svg')) this._phText.textContent = this._t('error', msg);
  }

  _rendered(figure, t0) {
    this._renders += 1;
    this.dataset.renders = String(this._renders);
    this._setState('ready');
    this.dispatchEvent(new CustomEvent('attnlab-render', { bubbles: true, composed: true, detail: { figure, ms: performance.now() - t0, renders: this._renders } }));
  }

  /** The figure box with its placeholder (the poster, if any, and a progress bar) until something is drawn. */
  _buildFigureBox() {
    this._box = el('div', { class: 'figure', part: 'figure' });
    this._progress = el('progress', { max: '1', 'aria-label': this._t('computing') });
    this._phText = el('p', {}, this._t('waiting'));
    this._placeholder = el('div', { class: 'placeholder', part: 'placeholder' }, this._phText, this._progress);
    this._box.append(this._placeholder);
    // after the page's configure() (a bundler's import resolves after the elements upgrade): which
    // posters to show depends on it
    setTimeout(() => this._syncPoster(), 0);
    return this._box;
  }

  /** Show the poster of the element's current view in the placeholder (until the live figure replaces it). */
  _syncPoster() {
    if (!this._placeholder || this._box.classList.contains('has-svg')) return;
    const url = posterURL(this, this._figureKind(), this._lang);
    const img = this._poster;
    if (!url) {
      if (img) img.remove();
      this._poster = null;
      this._placeholder.classList.remove('with-poster');
      return;
    }
    if (img && img.src === url) return;
    const next = el('img', { class: 'poster', part: 'poster', src: url, alt: this._t('posterAlt') });
    next.addEventListener('load', () => { this.dataset.poster = 'shown'; }, { once: true });
    next.addEventListener('error', () => {
      next.remove();
      if (this._poster === next) { this._poster = null; this._placeholder.classList.remove('with-poster'); }
    }, { once: true });
    if (img) img.replaceWith(next); else this._placeholder.prepend(next);
    this._poster = next;
    this._placeholder.classList.add('with-poster');
  }

  _reserve() {
    if (this._box && !this._box.classList.contains('has-svg')) {
      const w = this._width ? this._width - 2 : (this._frame.clientWidth || 660) - 22;   // as _width_()
      let h = 320;
      try { h = reserveHeight(this._figureKind(), w, { maxHeight: maxFigureHeight(), lang: this._lang, compare: this.getAttribute('compare') === 'full' }); } catch { /* keep 320 */ }
      this._box.style.setProperty('--reserve', `${Math.round(h)}px`);
    }
  }

  _loadingUI(text, ev) {
    if (this._box.classList.contains('has-svg')) return;
    this._phText.textContent = text;
    if (ev && ev.total) { this._progress.max = ev.total; this._progress.value = Math.min(ev.loaded || 0, ev.total); } else if (!ev) this._progress.removeAttribute('value');
  }

  _hidePlaceholderProgress() { if (this._progress) this._progress.hidden = true; }

  _mount(nodes, { cellable = false } = {}) {
    const els = nodes.map((n) => {
      const svg = toElement(n, document);
      if (cellable) svg.classList.add('cellable');
      return svg;
    });
    this._box.replaceChildren(...els);
    this._box.classList.add('has-svg');
    return els;
  }

  /** Model progress → the placeholder. */
  _progressHandler() {
    const mb = (n) => (n / 1048576).toFixed(1);
    return (ev) => {
      if (ev.status === 'progress' || ev.status === 'done') {
        const pct = ev.total ? Math.min(100, Math.floor((100 * ev.loaded) / ev.total)) : null;
        this._loadingUI(this._t('loadingFile', ev.file, pct, mb(ev.loaded || 0)), ev);
      }
    };
  }

  _width_() {
    return Math.max(240, (this._box.clientWidth || this._frame.clientWidth || 640) - 2);
  }
}

// ── <attnlab-figure> ────────────────────────────────────────────────────────

const FIGURE_ATTRS = ['figure', 'text', 'layer', 'head', 'row', 'col', 'lambda', 'kind',
  'glyph', 'noise', 'beta', 'dk', 'feature', 'm', 'compare', 'poster'];

/**
 * The poster of a figure element: its poster attribute (any URL; "" for none),
 * else, for the default view of Figs. 1–4 (the chapter's sentence, the last
 * layer's average, the chapter's cell, λ = 3, Fig. 1 with or without
 * compare="full") on the model the posters were drawn from, the configured
 * posters directory's <lang>/fig<n>[-full].svg. Null: no poster.
 */
function posterURL(elm, f, lang) {
  const own = elm.getAttribute('poster');
  if (own !== null) return own === '' ? null : abs(own);
  if (!['1', '2', '3', '4'].includes(f) || config.posters === false || elm.hasAttribute('model')) return null;
  if (config.posters === null && config.model) return null;   // another model, and no posters said for it
  const text = elm.getAttribute('text');
  if (text !== null && text !== CHAPTER_SENTENCE) return null;
  if (['layer', 'head', 'row', 'col', 'kind'].some((k) => elm.hasAttribute(k))) return null;
  const lam = elm.getAttribute('lambda');
  if (lam !== null && Number(lam) !== 3) return null;
  const full = f === '1' && elm.getAttribute('compare') === 'full';
  const dir = config.posters ? abs(config.posters) : new URL(POSTERS_REL, import.meta.url).href;
  return new URL(`${lang === 'zh' ? 'zh' : 'en'}/fig${f}${full ? '-full' : ''}.svg`, dir.endsWith('/') ? dir : `${dir}/`).href;
}

export class AttnlabFigure extends AttnlabBase {
  static get observedAttributes() { return [...COMMON_ATTRS, ...FIGURE_ATTRS]; }

  constructor() {
    super();
    this._run = null;       // {key, base, after, config, url}
  }

  _figureKind() {
    const f = (this.getAttribute('figure') || '1').trim().toLowerCase();
    return FIGURES.includes(f) ? f : '1';
  }

  _build() {
    this._controls = el('div', { class: 'controls', part: 'controls' });
    this._note = el('p', { class: 'note', part: 'note', 'aria-live': 'polite' });
    const slot = el('slot');
    this._caption = el('figcaption', { part: 'caption' }, slot);
    const syncCaption = () => { this._caption.hidden = !slot.assignedNodes().some((n) => n.nodeType === 1 || n.textContent.trim()); };
    slot.addEventListener('slotchange', syncCaption);
    this._frame.append(el('figure', { class: 'wrap' }, this._controls, this._buildFigureBox(), this._note, this._caption));
    syncCaption();
    this._box.addEventListener('click', (e) => this._onCellClick(e));
    this._reserve();
    this._rebuildControls();
  }

  // ── controls: each sets an attribute; attributeChangedCallback redraws ──

  _rebuildControls() {
    const t = this._t;
    this._phText.textContent = this._started ? this._phText.textContent : t('waiting');
    if ((this.getAttribute('controls') || '').toLowerCase() === 'none') { this._controls.replaceChildren(); return; }
    const f = this._figureKind();
    const set = (name) => (e) => this.setAttribute(name, e.target.value);
    const kids = [];
    if (isModelFigure(f)) {
      const text = el('input', { type: 'text', value: this.getAttribute('text') || CHAPTER_SENTENCE, 'aria-label': t('sentence'), spellcheck: 'false' });
      const go = () => { if (text.value.trim()) this.setAttribute('text', text.value); };
      text.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); go(); } });
      text.addEventListener('change', go);
      this._textInput = text;
      kids.push(el('label', { class: 'grow' }, t('sentence'), text));
      this._layerSel = el('select', { on: { change: set('layer') } });
      this._headSel = el('select', { on: { change: set('head') } });
      kids.push(el('label', {}, t('layer'), this._layerSel), el('label', {}, t('head'), this._headSel));
      if (f === '2' || f === '4') {
        this._rowSel = el('select', { on: { change: set('row') } });
        this._colSel = el('select', { on: { change: set('col') } });
        kids.push(el('label', {}, t('row'), this._rowSel), el('label', {}, t('col'), this._colSel));
      } else { this._rowSel = this._colSel = null; }
      if (f === '4') {
        const lam = Number(this.getAttribute('lambda') ?? 3);
        const out = el('output', {}, lam.toFixed(1));
        const range = el('input', { type: 'range', min: '0', max: '10', step: '0.5', value: String(lam), 'aria-label': 'λ' });
        range.addEventListener('input', () => { out.textContent = Number(range.value).toFixed(1); this.setAttribute('lambda', range.value); });
        this._lambdaOut = out;
        kids.push(el('label', {}, el('span', {}, 'λ = ', out), range));
      }
    } else if (f === 'hopfield') {
      const glyph = el('select', { on: { change: set('glyph') }, 'aria-label': t('glyph') });
      setOptions(glyph, [0, 1, 3, 4].map((g) => ({ value: g, label: String(g) })), this.getAttribute('glyph') ?? '3');
      const noise = Number(this.getAttribute('noise') ?? 0.2);
      const nOut = el('output', {}, `${Math.round(noise * 100)} %`);
      const nRange = el('input', { type: 'range', min: '0', max: '45', step: '5', value: String(Math.round(noise * 100)), 'aria-label': t('noise') });
      nRange.addEventListener('change', () => this.setAttribute('noise', String(Number(nRange.value) / 100)));
      nRange.addEventListener('input', () => { nOut.textContent = `${nRange.value} %`; });
      const beta = Number(this.getAttribute('beta') ?? 1);
      const bOut = el('output', {}, String(Number(beta.toPrecision(3))));
      const bRange = el('input', { type: 'range', min: '-1', max: '1.5', step: '0.05', value: String(Math.log10(beta)), 'aria-label': 'β' });
      bRange.addEventListener('input', () => { const b = 10 ** Number(bRange.value); bOut.textContent = String(Number(b.toPrecision(3))); this.setAttribute('beta', b.toPrecision(4)); });
      kids.push(el('label', {}, t('glyph'), glyph), el('label', {}, el('span', {}, t('noise'), ' ', nOut), nRange),
        el('label', {}, el('span', {}, 'β = ', bOut), bRange));
    } else if (f === 'linear') {
      const fm = el('select', { on: { change: set('feature') }, 'aria-label': t('featureMap') });
      setOptions(fm, [{ value: 'elu', label: 'elu(x)+1' }, { value: 'relu', label: 'relu(x)' }, { value: 'favor', label: 'FAVOR+' }], this.getAttribute('feature') || 'elu');
      const m = el('select', { on: { change: set('m') }, 'aria-label': t('features') });
      setOptions(m, [16, 64, 256].map((x) => ({ value: x, label: String(x) })), this.getAttribute('m') || '64');
      kids.push(el('label', {}, t('featureMap'), fm), el('label', {}, t('features'), m));
    } else if (f === 'sqrtdk') {
      const dk = Number(this.getAttribute('dk') || 64);
      const out = el('output', {}, String(dk));
      const range = el('input', { type: 'range', min: '0', max: '9', step: '1', value: String(Math.round(Math.log2(dk))), 'aria-label': 'd_k' });
      range.addEventListener('input', () => { out.textContent = String(2 ** Number(range.value)); });
      range.addEventListener('change', () => this.setAttribute('dk', String(2 ** Number(range.value))));
      kids.push(el('label', {}, el('span', {}, 'd_k = ', out), range));
    }
    this._controls.replaceChildren(...kids);
    if (this._run) this._syncModelControls(this._run.config, this._run.base.tokens, this._view);
  }

  _syncModelControls(cfg, tokens, v) {
    const t = this._t;
    if (!this._layerSel || !v) return;
    setOptions(this._layerSel, Array.from({ length: cfg.nLayer }, (_, l) => ({ value: l, label: l === cfg.nLayer - 1 ? t('lastLayer', l) : String(l) })), v.layer);
    setOptions(this._headSel, [{ value: 'avg', label: t('headAvg') }, ...Array.from({ length: cfg.nHead }, (_, h) => ({ value: h, label: String(h) }))], v.head);
    if (this._textInput && document.activeElement !== this && this._textInput.value !== v.text) this._textInput.value = v.text;
    if (this._rowSel) {
      const items = tokens.map((s, k) => ({ value: k, label: t('tokenOpt', k, tokenLabel(s, 16)) }));
      setOptions(this._rowSel, items, v.row);
      setOptions(this._colSel, items, v.col);
    }
  }

  _onCellClick(e) {
    const f = this._figureKind();
    if (f !== '1' && f !== '2' && f !== '4') return;
    const r = e.target && e.target.closest ? e.target.closest('rect[data-i][data-j]') : null;
    if (!r) return;
    const role = r.parentNode && r.parentNode.getAttribute('data-role');
    if (!['attention', 'asymmetry', 'posterior', 'original', 'soft-do', 'hard-do'].includes(role)) return;
    this.setAttribute('row', r.getAttribute('data-i'));
    this.setAttribute('col', r.getAttribute('data-j'));
  }

  // ── drawing ──

  async _redraw(token) {
    const f = this._figureKind();
    if (isModelFigure(f)) return this._redrawModel(token, f);
    if (EVIDENCE_FIGURES.has(f)) return this._redrawEvidence(token, f);
    return this._redrawLineage(token, f);
  }

  async _redrawModel(token, f) {
    const t = this._t;
    const url = modelURL(this.getAttribute('model'));
    if (!this._run || this._run.url !== url) { this._setState('loading'); this._loadingUI(t('loadingModel', modelNameOf(url, this.getAttribute('model-name')))); }
    const model = await useModel(url, wasmURL(), this._progressHandler());
    if (!this._current(token)) return;
    const cfg = model.config;
    const text = this.getAttribute('text') || CHAPTER_SENTENCE;
    const layer = intInRange(this.getAttribute('layer'), 0, cfg.nLayer - 1) ?? cfg.nLayer - 1;
    const headAttr = this.getAttribute('head');
    const head = intInRange(headAttr, 0, cfg.nHead - 1) ?? 'avg';
    const qkHead = head === 'avg' ? 0 : head;
    // Fig. 1 with compare="full": A − Aᵀ of the same text with the mask off, drawn beside the causal one
    const compareFull = f === '1' && this.getAttribute('compare') === 'full';
    const key = JSON.stringify([url, text, f === '2' ? [layer, qkHead] : null, compareFull]);
    let run = this._run && this._run.key === key ? this._run : null;
    const t0 = performance.now();
    if (!run) {
      this._loadingUI(t('running'));
      const base = await runModel(url, text, { topK: 5, ...(f === '2' ? { captureQK: { layer, head: qkHead } } : {}) });
      if (!this._current(token)) return;
      run = { key, url, base, config: cfg };
      if (compareFull) {
        run.full = await runModel(url, text, { topK: 1, mask: 'full' });
        if (!this._current(token)) return;
      }
    }
    const T = run.base.T;
    const def = defaultSelection(run.base.tokens);
    const row = intInRange(this.getAttribute('row'), 0, T - 1) ?? def.row;
    const col = intInRange(this.getAttribute('col'), 0, T - 1) ?? def.col;
    const lamRaw = Number(this.getAttribute('lambda') ?? 3);
    const lambda = Number.isFinite(lamRaw) ? Math.max(-20, Math.min(20, lamRaw)) : 3;
    const kind = this.getAttribute('kind') === 'soft' ? 'soft' : 'hard';
    let after = null, masked = false;
    if (f === '4') {
      const iv = { kind, layer, head: head === 'avg' ? 'all' : head, row, col, ...(kind === 'soft' ? { lambda } : {}) };
      try {
        after = await runModel(url, text, { topK: 5, interventions: [iv] });
      } catch (e) { // a soft do on a cell the mask hides: the model refuses it; the figure still shows the picture
        if (!e || e.code !== 'EMASKED') throw e;
        masked = true;
      }
      if (!this._current(token)) return;
    }
    this._run = run;
    const v = { figure: f, base: run.base, lang: this._lang, width: this._width_(), maxHeight: maxFigureHeight(), layer, head, row, col, lambda, text,
      modelName: modelNameOf(url, this.getAttribute('model-name')), config: cfg,
      ...(run.full ? { compare: run.full.attention(layer, head) } : {}) };
    this._view = v;
    const [svg] = this._mount([modelFigure(v)], { cellable: f !== '3' });
    if (f === '1' || f === '4') outlineCell(svg, f === '1' ? ['attention', 'asymmetry', 'asymmetry-full'] : ['original', 'soft-do', 'hard-do'], row, col, OUTLINE);
    this._syncModelControls(cfg, run.base.tokens, v);
    if (this._lambdaOut) this._lambdaOut.textContent = lambda.toFixed(1);
    // the note: model, and what Fig. 2 / Fig. 4 add
    const parts = [el('span', {}, t('modelLine', v.modelName, cfg))];
    if (f === '2') parts.push(el('br'), el('span', {}, t('fig2Head', qkHead)));
    if (f === '4' && after) {
      const a = run.base.top[0], b = after.top[0];
      const code = (x) => el('code', {}, tokenLabel(x.token, 24));
      parts.push(el('br'), a && b && a.id !== b.id
        ? el('span', { 'data-role': 'in-model' }, ...splitFmt(t('inModel', '\u0001', '\u0002'), code(a), code(b)))
        : el('span', { 'data-role': 'in-model' }, ...splitFmt(t('inModelSame', '\u0001'), a ? code(a) : '—')));
      if (layer === cfg.nLayer - 1 && row !== T - 1) parts.push(el('br'), el('span', {}, t('inModelNoEffect')));
    }
    if (f === '4' && masked) parts.push(el('br'), el('span', { 'data-role': 'in-model', 'data-masked': 'true' }, t('inModelMasked')));
    this._note.replaceChildren(...parts);
    svg.setAttribute('data-text', text);
    this._rendered(f, t0);
  }

  // Does attention explain? (docs/evidence.md): computed in the shared worker, drawn with figures/evidence.js
  async _redrawEvidence(token, f) {
    const t = this._t;
    const t0 = performance.now();
    const url = modelURL(this.getAttribute('model'));
    this._setState('loading');
    this._loadingUI(t('loadingModel', modelNameOf(url, this.getAttribute('model-name'))));
    const model = await useModel(url, wasmURL(), this._progressHandler());
    if (!this._current(token)) return;
    const cfg = model.config;
    const text = this.getAttribute('text') || CHAPTER_SENTENCE;
    const layer = intInRange(this.getAttribute('layer'), 0, cfg.nLayer - 1) ?? cfg.nLayer - 1;
    const head = intInRange(this.getAttribute('head'), 0, cfg.nHead - 1) ?? 'all';
    this._loadingUI(t('computing'));
    const d = await evidenceData(url, f, text, f === 'edge' ? { layer, head } : undefined);
    if (!this._current(token)) return;
    const [svg] = this._mount(evidenceFigures(f, d, { lang: this._lang, width: this._width_(), t }));
    svg.setAttribute('data-text', text);
    this._note.replaceChildren(el('span', { 'data-role': 'evidence-summary' }, f === 'edge' ? t('evEdgeSum', d) : t('evTokSum', d)));
    this._rendered(f, t0);
  }

  async _redrawLineage(token, f) {
    const t = this._t;
    const t0 = performance.now();
    if (!this._box.classList.contains('has-svg')) { this._setState('loading'); this._loadingUI(t('computing')); }
    let params;
    if (f === 'hopfield') {
      const glyph = intInRange(this.getAttribute('glyph'), 0, 9) ?? 3;
      const noise = Math.max(0, Math.min(0.5, Number(this.getAttribute('noise') ?? 0.2) || 0));
      const beta = Math.max(0.01, Math.min(100, Number(this.getAttribute('beta') ?? 1) || 1));
      const store = [...new Set([0, 1, glyph])].sort((a, b) => a - b);
      params = { glyph, store, noise, beta, seed: 1 };
    } else if (f === 'linear') {
      const fm = ['elu', 'relu', 'favor'].includes(this.getAttribute('feature')) ? this.getAttribute('feature') : 'elu';
      params = { featureMap: fm, m: intInRange(this.getAttribute('m'), 1, 4096) ?? 64 };
    } else {
      const dk = intInRange(this.getAttribute('dk'), 1, 4096) ?? 64;
      params = { dk };
    }
    const key = JSON.stringify([f, params]);
    const data = this._lineage && this._lineage.key === key ? this._lineage.data : await lineageData(wasmURL(), f, params);
    if (!this._current(token)) return;
    this._lineage = { key, data };
    const ctx = { lang: this._lang, width: this._width_(), t };
    const nodes = f === 'hopfield' ? hopfieldFigures(data, ctx) : f === 'linear' ? linearFigures(data, ctx) : sqrtdkFigures(data, ctx);
    const lines = f === 'hopfield' ? hopfieldNote(data, t) : f === 'linear' ? linearNote(data, t) : sqrtdkNote(data, t);
    this._mount(nodes);
    this._note.replaceChildren(...lines.flatMap((s, k) => (k ? [el('br'), s] : [s])));
    this._rendered(f, t0);
  }
}

/** The tallest a model figure may be: 85 % of the window (at least 380 px). */
function maxFigureHeight() {
  return Math.max(380, Math.round((typeof innerHeight === 'number' ? innerHeight : 900) * 0.85));
}

/** "a \u0001 b \u0002" with nodes in place of the markers. */
function splitFmt(s, ...nodes) {
  const out = [];
  let rest = s;
  nodes.forEach((n, k) => {
    const mark = String.fromCharCode(1 + k);
    const at = rest.indexOf(mark);
    if (at < 0) return;
    out.push(rest.slice(0, at), n);
    rest = rest.slice(at + 1);
  });
  out.push(rest);
  return out;
}


// ── <attnlab-lab>: the four figures on one sentence, one set of controls ────

const LAB_ATTRS = ['text', 'layer', 'head', 'row', 'col', 'lambda', 'kind'];

export class AttnlabLab extends AttnlabBase {
  static get observedAttributes() { return [...COMMON_ATTRS, ...LAB_ATTRS]; }

  _figureKind() { return 'lab'; }

  _build() {
    this._controls = el('div', { class: 'controls', part: 'controls' });
    this._hint = el('p', { class: 'hint' });
    this._note = el('p', { class: 'note', part: 'note', 'aria-live': 'polite' });
    this._tops = el('div', { class: 'tops' });
    this._frame.append(this._controls, this._hint, this._buildFigureBox(), this._tops, this._note);
    this._box.style.setProperty('--reserve', '1200px');
    this._box.style.setProperty('flex-direction', 'column');
    this._box.addEventListener('click', (e) => {
      const r = e.target && e.target.closest ? e.target.closest('rect[data-i][data-j]') : null;
      const role = r && r.parentNode && r.parentNode.getAttribute('data-role');
      if (!r || !['attention', 'asymmetry', 'posterior', 'original', 'soft-do', 'hard-do'].includes(role)) return;
      this.setAttribute('row', r.getAttribute('data-i'));
      this.setAttribute('col', r.getAttribute('data-j'));
    });
    this._rebuildControls();
  }

  _reserve() {}

  _rebuildControls() {
    const t = this._t;
    this._hint.textContent = t('labHint');
    if ((this.getAttribute('controls') || '').toLowerCase() === 'none') { this._controls.replaceChildren(); return; }
    const set = (name) => (e) => this.setAttribute(name, e.target.value);
    const text = el('input', { type: 'text', value: this.getAttribute('text') || CHAPTER_SENTENCE, 'aria-label': t('sentence'), spellcheck: 'false' });
    const go = () => { if (text.value.trim()) this.setAttribute('text', text.value); };
    text.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); go(); } });
    text.addEventListener('change', go);
    this._textInput = text;
    this._layerSel = el('select', { on: { change: set('layer') } });
    this._headSel = el('select', { on: { change: set('head') } });
    this._rowSel = el('select', { on: { change: set('row') } });
    this._colSel = el('select', { on: { change: set('col') } });
    const kind = el('select', { on: { change: set('kind') } });
    setOptions(kind, [{ value: 'hard', label: t('kindHard') }, { value: 'soft', label: t('kindSoft') }], this.getAttribute('kind') === 'soft' ? 'soft' : 'hard');
    const lam = Number(this.getAttribute('lambda') ?? 3);
    const out = el('output', {}, lam.toFixed(1));
    const range = el('input', { type: 'range', min: '0', max: '10', step: '0.5', value: String(lam), 'aria-label': 'λ' });
    range.addEventListener('input', () => { out.textContent = Number(range.value).toFixed(1); this.setAttribute('lambda', range.value); });
    this._lambdaOut = out;
    this._controls.replaceChildren(el('label', { class: 'grow' }, t('sentence'), text),
      el('label', {}, t('layer'), this._layerSel), el('label', {}, t('head'), this._headSel),
      el('label', {}, t('row'), this._rowSel), el('label', {}, t('col'), this._colSel),
      el('label', {}, t('kind'), kind), el('label', {}, el('span', {}, 'λ = ', out), range));
    if (this._state) AttnlabFigure.prototype._syncModelControls.call(this, this._state.config, this._state.base.tokens, this._state.v);
  }

  async _redraw(token) {
    const t = this._t;
    const url = modelURL(this.getAttribute('model'));
    if (!this._state || this._state.url !== url) { this._setState('loading'); this._loadingUI(t('loadingModel', modelNameOf(url, this.getAttribute('model-name')))); }
    const model = await useModel(url, wasmURL(), this._progressHandler());
    if (!this._current(token)) return;
    const cfg = model.config;
    const text = this.getAttribute('text') || CHAPTER_SENTENCE;
    const layer = intInRange(this.getAttribute('layer'), 0, cfg.nLayer - 1) ?? cfg.nLayer - 1;
    const head = intInRange(this.getAttribute('head'), 0, cfg.nHead - 1) ?? 'avg';
    const qkHead = head === 'avg' ? 0 : head;
    const key = JSON.stringify([url, text, layer, qkHead]);
    const t0 = performance.now();
    let base = this._state && this._state.key === key ? this._state.base : null;
    if (!base) {
      this._loadingUI(t('running'));
      base = await runModel(url, text, { topK: 5, captureQK: { layer, head: qkHead } });
      if (!this._current(token)) return;
    }
    const T = base.T;
    const def = defaultSelection(base.tokens);
    const row = intInRange(this.getAttribute('row'), 0, T - 1) ?? def.row;
    const col = intInRange(this.getAttribute('col'), 0, T - 1) ?? def.col;
    const lamRaw = Number(this.getAttribute('lambda') ?? 3);
    const lambda = Number.isFinite(lamRaw) ? Math.max(-20, Math.min(20, lamRaw)) : 3;
    const kind = this.getAttribute('kind') === 'soft' ? 'soft' : 'hard';
    const iv = { kind, layer, head: head === 'avg' ? 'all' : head, row, col, ...(kind === 'soft' ? { lambda } : {}) };
    const after = await runModel(url, text, { topK: 5, interventions: [iv] });
    if (!this._current(token)) return;
    const modelName = modelNameOf(url, this.getAttribute('model-name'));
    const v = { base, lang: this._lang, width: this._width_(), maxHeight: maxFigureHeight(), layer, head, row, col, lambda, text, modelName, config: cfg };
    this._state = { key, url, base, config: cfg, v };
    const svgs = this._mount(['1', '2', '3', '4'].map((f) => modelFigure({ ...v, figure: f })), { cellable: true });
    outlineCell(svgs[0], ['attention', 'asymmetry'], row, col, OUTLINE);
    outlineCell(svgs[3], ['original', 'soft-do', 'hard-do'], row, col, OUTLINE);
    AttnlabFigure.prototype._syncModelControls.call(this, cfg, base.tokens, v);
    this._lambdaOut.textContent = lambda.toFixed(1);
    const table = (title, top) => el('table', {}, el('thead', {}, el('tr', {}, el('th', { colspan: '2' }, title))),
      el('tbody', {}, top.map((x) => el('tr', {}, el('td', {}, el('code', {}, tokenLabel(x.token, 20))), el('td', {}, x.prob.toFixed(3))))));
    this._tops.replaceChildren(table(t('topBefore'), base.top), table(t('topAfter'), after.top));
    this._tops.dataset.before = base.top[0] ? base.top[0].token : '';
    this._tops.dataset.after = after.top[0] ? after.top[0].token : '';
    this._note.replaceChildren(el('span', {}, t('modelLine', modelName, cfg)), el('br'), el('span', {}, t('fig2Head', qkHead)));
    this._rendered('lab', t0);
  }
}

// ── registration ────────────────────────────────────────────────────────────

if (typeof globalThis.attnlabWidgetConfig === 'object' && globalThis.attnlabWidgetConfig) configure(globalThis.attnlabWidgetConfig);
if (typeof customElements !== 'undefined') {
  if (!customElements.get('attnlab-figure')) customElements.define('attnlab-figure', AttnlabFigure);
  if (!customElements.get('attnlab-lab')) customElements.define('attnlab-lab', AttnlabLab);
}
globalThis.attnlabWidget ??= { configure, stats, version: VERSION };

export { FIGURES };
