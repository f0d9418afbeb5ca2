// main.js — the chapter page: state, controls, model loading, and drawing.
//
// Reads top to bottom: settings (S) → model loading → running (runner.js, in the
// worker) → drawing the four figures and the in-model panel → controls → boot.
// The model always runs in a Web Worker (attnlab/worker), so the page never
// freezes; the figures are the pure functions of web/src/figures, turned into
// DOM with toElement (text nodes only: token strings are never parsed as HTML).
//
// URL parameters: ?model=/path/on/this/server/ (a model directory; tests use
// /tests/fixtures/tiny/), ?lang=zh, ?text=… (the sentence).

import { loadModel } from '../worker-client.js';
import {
  figAttentionAsymmetry, figOuterProduct, outerProductDemo, figDag, figDoIntervention, toElement, tokenLabel,
} from '../figures/index.js';
import { translator, applyStatic } from './i18n.js';
import { asymmetry } from '../analysis.js';
import { $, el, replace, setOptions } from '../ui/dom.js';
import { outlineCell } from '../ui/selection.js';
import { fitSearch, fitWidth } from '../ui/fit.js';
import { attachTooltip, titleText } from '../ui/tooltip.js';
import { figureArgs } from '../ui/figure-args.js';
import { builtinSource, HUB_MODELS, LARGE_MODEL_BYTES, fetchHubModel, fetchBuiltinModel, BUILTIN_WEIGHTS, pickModelFiles, explain, familyOfFiles } from './models.js';
import { startPageWorker } from './head-start.js';
import { Runner, maskOption } from './runner.js';
import { describeTrend, klDivergence, attentionChange, attentionChangeSliced, rankMoves } from './compare.js';
import { deltaBars, deltaMaps } from '../figures/delta.js';
import { topTable } from './top-table.js';
import { exportFigure, downloadBlob, runData } from './export.js';
import { HeadsPanel } from './heads.js';
import { EvidencePanel } from './evidence-panel.js';
import { LazyPanel, deferPanels } from './lazy-panels.js';
import { readableTokens, readableToken } from './readable.js';
import { setRasterThreshold, vectorOnly } from '../figures/raster.js';
import { FIGURE_FILES } from '../figures/names.js';
import { wireFold, setControlsOpen, foldSummary } from './fold.js';
import { rovingGrid } from '../ui/roving.js';
import { fig1Finding, fig2Finding, fig3Finding, fig4Finding } from './fig-findings.js';

// Heatmaps of more than this many cells are drawn as one bitmap each (figures/raster.js):
// T > 32. The exports still write every cell as a vector rect.
export const RASTER_CELLS = 1024;
setRasterThreshold(RASTER_CELLS);
const BIG_T_RASTER_CELLS = 512;
// Fig. 1's and Fig. 4's heatmaps never get cells under this (px): a long text makes the figure
// wider than its box, which then scrolls (issue 38 item 2: at T = 256 the cells were under 1 px)
const MIN_CELL = 3;

// ── settings ────────────────────────────────────────────────────────────────

const params = new URLSearchParams(location.search);
const MAX_LINK_TEXT = 4000; // characters of ?text= a link may carry
const storedLang = (() => { try { return localStorage.getItem('attnlab-lang'); } catch { return null; } })();

/** Everything the reader chose. sel.text is the text the cell was chosen for. */
const S = {
  lang: params.get('lang') === 'zh' || (params.get('lang') === null && storedLang === 'zh') ? 'zh' : 'en',
  // a link's text is capped as readView caps it (at 4000 characters; longer is refused with a note), from the first load on
  text: (params.has('text') && params.get('text').length <= MAX_LINK_TEXT ? params.get('text') : null) ?? $('text').value,
  layer: null,          // set when a model is loaded (default: the last layer)
  head: 'avg',          // 'avg' or a head index
  sel: null,            // {row, col, text}
  kind: 'hard',
  lambda: 3,
  mask: 'causal',
  window: 4,
  ablate: new Set(),    // 'layer.head'
  demo: false,
  compareFull: false,   // Fig. 1: draw A − Aᵀ of the same view with mask 'full' beside it
};
let t = translator(S.lang);

// The loaded model and the last run
let model = null;        // WorkerModel
let modelName = '';
let config = null;
let runner = null;
let last = null;         // runner output: {spec, sel, base, after, plain, fig2Head, intervention}
let renders = 0;
let errorFrom = null;    // 'load' | 'run' | null
const figArgs = {};      // key -> [figure function, args] of what is on screen (export rebuilds from it)
const FIG_FNS = { fig1: figAttentionAsymmetry, fig2: figOuterProduct, fig3: figDag, fig4: figDoIntervention };
let early = null;        // the worker and downloads the entry module started (head-start.js)
let heads = null;        // the "Heads & counterfactuals" panel (heads.js), built on first need (lazy-panels.js)
let uiReady = Promise.resolve();   // the controls and panels are set up (boot: after the first frame)
let evidence = null;     // the "Does attention explain?" panel (evidence-panel.js), the same
let buildPanels = () => {};   // builds both panels now (lazy-panels.js deferPanels)
let liveNow = null;
const firstDrawn = new Promise((resolve) => { liveNow = resolve; });   // the page's first live drawing
let defaultFound = null; // {text, row, col, n}: the default cell the runner found for this text

function specOf() {
  return {
    text: S.text, layer: S.layer, head: S.head, sel: S.sel, kind: S.kind, lambda: S.lambda,
    mask: S.mask, window: S.window,
    ablate: [...S.ablate].map((k) => k.split('.').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]),
  };
}

// ── status and errors ───────────────────────────────────────────────────────

function setState(state) { document.body.dataset.state = state; }

function setStatus(text) { $('status').textContent = text; }

// Errors about the model (a failed load, a refused ?model=) are also shown in the
// Model panel, beside the Load button: on a phone the banner above the figures is
// far below it.
const MODEL_ERRORS = new Set(['load', 'param', 'cache']);

// The note naming refused link values stays beside any later error until the view changes (a run's error used to
// replace it, and the reader never learned why the link did not open what it named).
let urlNote = null;        // the refused link values, or null
let shown = null;          // {message, from}: the error of another source, or null

function paintError() {
  const parts = [];
  if (urlNote) parts.push(urlNote);
  if (shown) parts.push(shown.message);
  const near = $('model-error');
  if (!parts.length) {
    $('error').hidden = true;
    near.hidden = true;
    errorFrom = null;
    delete document.body.dataset.error;
    return;
  }
  $('error-text').textContent = parts.join(' · ');
  $('error').hidden = false;
  errorFrom = shown ? shown.from : 'url';
  document.body.dataset.error = errorFrom;
  const model = shown && MODEL_ERRORS.has(shown.from);
  near.hidden = !model;
  near.textContent = model ? shown.message : '';
  if (model) setControlsOpen(true);   // on a phone the error sits beside the Load button: unfold it
}

function showError(message, from) {
  if (from === 'url') urlNote = message;
  else shown = { message, from };
  paintError();
}

function clearError(from) {
  if (!from) { urlNote = null; shown = null; }
  else if (from === 'url') urlNote = null;
  else if (shown && shown.from === from) shown = null;
  else return;
  paintError();
}

// ── loading a model ─────────────────────────────────────────────────────────

let loadToken = 0;
let modelChoice = 'builtin';   // the picker's value for the model in use (the picker returns to it after a failure)
let loadAbort = null;    // aborts a hub download that a newer choice replaced
let loading = null;      // {name}: the model being loaded, while its download or reading runs (Cancel stops it)
let builtin = null;

const mb = (n) => (n / 1048576).toFixed(n < 10485760 ? 1 : 0);
const mbDecimal = (n) => (n / 1e6).toFixed(n < 1e7 ? 1 : 0);   // as the picker states sizes (1 MB = 10⁶ bytes)

function progressUI(file, loaded, total) {
  const bar = $('model-progress');
  bar.hidden = false;
  if (total) { bar.max = total; bar.value = Math.min(loaded, total); } else bar.removeAttribute('value');
  const pct = total ? Math.min(100, Math.floor((100 * loaded) / total)) : null;
  const text = t('progressFile', file, pct, mb(loaded));
  if ($('model-status').textContent !== text) $('model-status').textContent = text;
}

/**
 * A hub download's progress as one figure in bytes over all its files: done = what has arrived of every file so
 * far, total = the finished files plus the current one's size, or the published weights' size while it is not
 * known yet (then marked "about").
 */
function hubProgress(name, hub) {
  const got = new Map();
  return (p) => {
    got.set(p.file, p.loaded);
    let done = 0;
    for (const v of got.values()) done += v;
    const weights = p.file.endsWith('.safetensors') && p.total !== null;
    const total = weights ? done + (p.total - p.loaded) : Math.max(hub.bytes, done);
    const bar = $('model-progress');
    bar.hidden = false;
    bar.max = total;
    bar.value = Math.min(done, total);
    const text = t('progressTotal', name, p.file, mbDecimal(done), mbDecimal(total), !weights, Math.min(100, Math.floor((100 * done) / total)));
    if ($('model-status').textContent !== text) $('model-status').textContent = text;
  };
}

/** Stop the model being loaded (its download at once): the page keeps the model it has, the picker returns to it. */
function cancelLoad() {
  if (!loading || !loading.cancellable) return;
  const name = loading.name;
  loadToken++;             // whatever the stopped load still delivers is dropped
  if (loadAbort) loadAbort.abort();
  loadAbort = null;
  loading = null;
  $('model-progress').hidden = true;
  $('model-cancel').hidden = true;
  $('model-load').disabled = false;
  if (model) {
    modelStatus();
    $('model-status').textContent = t('loadCancelled', name, modelName);
    setState(runner.busy ? 'busy' : 'ready');
  } else {
    $('model-status').textContent = t('loadCancelledNone', name);
    setState('error');
  }
}

/** The files of a model choice: the built-in URL, a hub model's downloaded files, or local files. */
async function sourceOf(what, token, signal) {
  if (what === 'builtin') {
    if (builtin.custom) return { source: builtin.url.href, name: builtin.name, cached: false };
    // the default model's files (a reload of it: the first load is the entry module's, earlyLoad); the bytes go
    // to the worker
    const files = await fetchBuiltinModel(builtin.url, { signal, onProgress: (p) => { if (token === loadToken) progressUI(p.file, p.loaded, p.total); } });
    return { source: files, name: builtin.name, cached: false, transfer: true };
  }
  if (typeof what !== 'string') return { source: pickModelFiles(what.files), name: t('localName'), cached: false };
  const hub = HUB_MODELS[what];
  $('model-status').textContent = t('modelLoading', hub.name);
  if (!model) setStatus(t('statusDownloading', hub.name));
  const progress = hubProgress(hub.name, hub);
  const got = await fetchHubModel(hub.base, { signal, files: hub.files, onProgress: (p) => { if (token === loadToken) progress(p); } });
  if (got.cacheFailed) showError(t('errCache'), 'cache');
  return { source: got.files, name: hub.name, cached: got.cached };
}

/** After the first model: the link's view (or the view a link's hub model was waiting for). */
function viewAfterLoad(what) {
  if (firstModel) {
    firstModel = false;
    if (readLinkModel(location.search)) {
      // the view belongs to the hub model the link names: keep it for that model, show only its sentence now
      linkView = location.search;
      const text = new URLSearchParams(location.search).get('text');
      applyView(text !== null ? `?${new URLSearchParams({ text })}` : '', { fromLink: true });
    } else applyView(location.search, { fromLink: true });
  } else if (linkView && linkModel && what === linkModel.hub) {
    const v = linkView;
    linkView = null;
    linkModel = null;
    paintLinkModel();
    applyView(v, { fromLink: true });
  }
}

/** Make m (loaded for choice what, named name) the page's model. */
function adoptModel(m, what, name, cached) {
  const old = model;
  model = m;
  modelName = name;
  config = m.config;
  const ref = {};
  runner = new Runner(m, runHandlers(ref));
  ref.runner = runner;
  if (old) old.dispose();
  modelChoice = typeof what === 'string' ? what : 'local';
  last = null;
  S.sel = null;   // the chapter's default cell in the new model's tokens
  modelCached = cached;
  clearError('load');
  setupModelControls();
  viewAfterLoad(what);
  heads.setModel(m, config, modelName);
  evidence.setModel(m, config);
  modelStatus();
  document.body.dataset.model = modelName;
  document.body.dataset.threads = String(m.engine.threads);
  schedule();
}

/** A failed load: the message (naming the family chosen and its files), and the page back on its model. */
async function loadFailed(e, what, token) {
  const keep = model ? ' ' + t('errKeepPrevious', modelName) : '';
  const missing = what === 'builtin' && e && e.code === 'EIO' && /built-in model missing|HTTP 404/.test(e.message);
  // the family chosen (a hub entry's, a local folder's config.json's) names the files it needs in the message
  const family = what === 'builtin' ? 'gpt2' : typeof what === 'string' ? HUB_MODELS[what].family : await familyOfFiles(what.files);
  if (token !== loadToken) return;
  const msg = missing ? t('errBuiltinMissing', builtin.url.pathname) : explain(e, t, { nPositions: config?.nPositions, family });
  showError(msg + keep, 'load');
  // the picker and the status line say which model the page uses (not the one that failed)
  $('model-select').value = model ? modelChoice : (typeof what === 'string' ? what : 'local');
  syncLocal();
  if (model) modelStatus(); else $('model-status').textContent = t('errNoModel');
  if (!model) setStatus('');
  setState(model ? 'ready' : 'error');
}

/** The load events of loadModel: the progress bar, and the load's timing on the body (bench_page reads it). */
function onLoadEvent(e) {
  if (e.status === 'progress' || e.status === 'done') progressUI(e.file, e.loaded, e.total);
  if (e.status === 'ready' && e.timing) document.body.dataset.loadTiming = JSON.stringify(e.timing);
}

/**
 * The built-in model's load the entry module started (head-start.js: its files taken over from index.html's
 * preloads, the worker building the model while this bundle arrived), claimed once; null when there is none
 * (another model in the link, or claimed already). Resolves {m, name, cached} like loadChoice.
 */
function earlyLoad(token, signal) {
  const pending = early.takeLoad((e) => {
    if (token !== loadToken) return;
    if (e.kind === 'fetch') progressUI(e.file, e.loaded, e.total);
    else if (e.kind === 'files') {
      $('model-status').textContent = t('modelLoading', builtin.name);
      if (!model) setStatus(t('statusLoadingWasm'));
    } else onLoadEvent(e);
  }, signal);
  return pending && pending.then((m) => ({ m, name: builtin.name, cached: false }));
}

/** Fetch the files of a model choice (sourceOf) and load them in a new worker: {m, name, cached}. */
async function loadChoice(what, token, signal) {
  // the worker (its script, then the wasm) starts while the files download; the first load takes the one the
  // entry module started
  const worker = early.takeWorker() ?? startPageWorker();
  let got;
  try {
    got = await sourceOf(what, token, signal);
  } catch (e) {
    worker.terminate();
    throw e;
  }
  const { source, name, cached, transfer = false } = got;
  $('model-status').textContent = t('modelLoading', name);
  if (!model) setStatus(t('statusLoadingWasm'));
  const m = await loadModel(source, {
    signal, transfer, worker,
    // the built-in model's F16 weights stay in 16 bits: no conversion pass at load, half the memory
    weights: what === 'builtin' ? BUILTIN_WEIGHTS : 'auto',
    onProgress: onLoadEvent,
  });
  return { m, name, cached };
}

/**
 * Load a model and make it the page's model. what: 'builtin' | a HUB_MODELS key | {files: FileList|File[]}.
 * On failure the previous model stays; Cancel (or another choice) stops it.
 */
async function switchModel(what) {
  const token = ++loadToken;
  performance.mark('attnlab:load-start');
  if (loadAbort) loadAbort.abort();
  loadAbort = new AbortController();
  const signal = loadAbort.signal;
  const loadBtn = $('model-load');
  loadBtn.disabled = true;
  loading = { name: what === 'builtin' ? builtin.name : typeof what === 'string' ? HUB_MODELS[what].name : t('localName'),
              cancellable: what !== 'builtin' };
  $('model-cancel').hidden = what === 'builtin';   // the built-in model is served with the page: nothing to stop
  setState(model ? 'busy' : 'loading');
  try {
    // the page's first load on the built-in model is the entry module's, already under way
    const { m, name, cached } = await ((what === 'builtin' && earlyLoad(token, signal)) || loadChoice(what, token, signal));
    performance.mark('attnlab:model-ready');
    await uiReady;   // the controls and the panels exist (boot sets them up after the first frame)
    if (token !== loadToken) { m.dispose(); return; }
    // local files have no model name: the folder they came from, else the shape ("local files" read as a model name in the titles)
    adoptModel(m, what, typeof what !== 'string' ? localModelName(what.files, m.config) : name, cached);
  } catch (e) {
    if (token === loadToken) await loadFailed(e, what, token);
  } finally {
    if (token === loadToken) {
      loading = null;
      $('model-cancel').hidden = true;
      $('model-progress').hidden = true;
      loadBtn.disabled = false;
      if (model && !runner.busy) setState('ready');
    }
  }
}

let modelCached = false;

// ── the view in the URL ─────────────────────────────────────────────────────
//
// ?layer=&head=&row=&col=&kind=&lambda=&mask=&w=&ablate=l.h,l.h (with text, lang,
// model): a link reopens one exact view, and back/forward step through the views.
// Every value is checked against the model (and the cell against the sentence);
// a refused one is named in a visible note and the page keeps its own value.

let firstModel = true;
let linkSel = null;        // {row, col, text}: a cell asked for by the URL, checked when the sentence is tokenized
const VIEW_KEYS = ['layer', 'head', 'row', 'col', 'kind', 'lambda', 'mask', 'w', 'ablate', 'hub', 'local'];
let linkModel = null;      // {hub: key} | {local: true}: the model a link was made with, when it is not the built-in one
let linkView = null;       // the link's view, applied once the model it names is loaded

/**
 * The model a link names (?hub=key, or ?local=1 for a folder of the reader's own): a hub model is loaded only when
 * the reader says so (it may be gigabytes); a local folder cannot travel in a link, so the note says to choose it
 * again. Returns true when the view must wait for that model.
 */
function readLinkModel(search) {
  const p = new URLSearchParams(search);
  const key = p.get('hub');
  linkModel = null;
  if (key !== null) {
    if (!Object.hasOwn(HUB_MODELS, key)) { showError(t('urlRefused', `hub=${Array.from(key).slice(0, 24).join('')}`), 'url'); return false; }
    linkModel = { hub: key };
  } else if (p.get('local') === '1') linkModel = { local: true };
  paintLinkModel();
  return linkModel !== null && linkModel.hub !== undefined;
}

function paintLinkModel() {
  const box = $('model-link'), btn = $('model-link-load');
  box.hidden = !linkModel;
  if (!linkModel) return;
  setControlsOpen(true);
  if (linkModel.hub) {
    const hub = HUB_MODELS[linkModel.hub];
    $('model-link-text').textContent = t('linkHub', hub.name, hub.bytes) + ' ';
    btn.hidden = false;
  } else {
    $('model-link-text').textContent = t('linkLocal');
    btn.hidden = true;
  }
}

/** Read the view of a query string into S (only valid values); returns the refused "name=value"s. */
function readView(search) {
  const p = new URLSearchParams(search);
  const L = config.nLayer, H = config.nHead;
  const bad = [];
  linkSel = null;
  const int = (v, max) => (/^\d{1,5}$/.test(v) && Number(v) < max ? Number(v) : null);
  const take = (key, parse, set) => {
    if (!p.has(key)) return;
    const v = p.get(key), x = parse(v);
    if (x === null) bad.push(`${key}=${Array.from(v).slice(0, 24).join('')}`); else set(x);
  };
  take('text', (v) => (v.length <= MAX_LINK_TEXT ? v : null), (v) => { S.text = v; $('text').value = v; });
  take('layer', (v) => int(v, L), (v) => { S.layer = v; });
  take('head', (v) => (v === 'avg' ? 'avg' : int(v, H)), (v) => { S.head = v; });
  take('kind', (v) => (v === 'hard' || v === 'soft' ? v : null), (v) => { S.kind = v; });
  take('lambda', (v) => (/^\d{1,2}(\.\d{1,3})?$/.test(v) && Number(v) <= 10 ? Number(v) : null), (v) => { S.lambda = v; });
  take('mask', (v) => (['causal', 'full', 'window'].includes(v) ? v : null), (v) => { S.mask = v; });
  take('w', (v) => { const w = int(v, config.nPositions + 1); return w >= 1 ? w : null; }, (v) => { S.window = v; });
  take('ablate', (v) => {
    if (v === '') return [];
    const parts = v.split(',');
    if (parts.length > L * H || !parts.every((x) => /^\d{1,3}\.\d{1,3}$/.test(x))) return null;
    const ok = parts.every((x) => { const [l, h] = x.split('.').map(Number); return l < L && h < H; });
    return ok ? parts : null;
  }, (v) => { S.ablate = new Set(v.map((x) => x.split('.').map(Number).join('.'))); });
  const row = p.has('row') ? p.get('row') : null, col = p.has('col') ? p.get('col') : null;
  if (row !== null || col !== null) {
    if (/^\d{1,4}$/.test(row ?? '') && /^\d{1,4}$/.test(col ?? '')) linkSel = { row: Number(row), col: Number(col), text: S.text };
    else bad.push(`row=${Array.from(String(row)).slice(0, 12).join('')}, col=${Array.from(String(col)).slice(0, 12).join('')}`);
  }
  S.sel = linkSel ? { ...linkSel } : null;
  return bad;
}

/** Apply a query string's view (a link, or back/forward) to the state and the controls, and run it. */
function applyView(search, { fromLink = false } = {}) {
  if (!config) return;
  const before = S.text;
  const bad = readView(search);
  if (!fromLink && before !== S.text) S.sel = linkSel ? { ...linkSel } : null;
  syncControls();
  if (bad.length) showError(t('urlRefused', bad.join('; ')), 'url');
  else clearError('url');
  schedule();
}

/** The controls show S (after a link or back/forward). */
function syncControls() {
  $('layer').value = String(S.layer);
  $('head').value = String(S.head);
  $(S.kind === 'soft' ? 'kind-soft' : 'kind-hard').checked = true;
  $('lambda').value = String(S.lambda);
  $('lambda-out').textContent = S.lambda.toFixed(1);
  $('mask').value = S.mask;
  $('window').value = String(S.window);
  $('window').disabled = S.mask !== 'window';
  buildAblationGrid();
}

/** The query string of the current view. */
function viewSearch() {
  const p = new URLSearchParams(location.search);
  for (const k of VIEW_KEYS) p.delete(k);
  p.set('text', S.text);
  p.set('layer', String(S.layer));
  p.set('head', String(S.head));
  if (S.sel) { p.set('row', String(S.sel.row)); p.set('col', String(S.sel.col)); }
  p.set('kind', S.kind);
  if (S.kind === 'soft') p.set('lambda', String(S.lambda));
  p.set('mask', S.mask);
  if (S.mask === 'window') p.set('w', String(S.window));
  if (S.ablate.size) p.set('ablate', [...S.ablate].sort().join(','));
  // the model, when it is not the built-in one: a hub model by its key, a local folder as a mark
  if (modelChoice === 'local') p.set('local', '1');
  else if (Object.hasOwn(HUB_MODELS, modelChoice)) p.set('hub', modelChoice);
  return `?${p.toString()}`;
}

/** The folded controls' one-line summary (fold.js): the model, layer and head in use. */
function summarize() {
  if (!config) return;
  foldSummary(t('controlsSummary', modelName, S.layer, S.head === 'avg' ? t('headAvg') : `H${S.head}`));
}

let viewFromHistory = false;
/** After a drawn result: a new view gets a history entry (a λ change replaces the last one). */
function writeView() {
  summarize();
  if (viewFromHistory) { viewFromHistory = false; return; }
  const next = viewSearch();
  if (next === location.search) return;
  const a = new URLSearchParams(location.search), b = new URLSearchParams(next);
  a.delete('lambda'); b.delete('lambda');
  if (a.toString() === b.toString() || !history.state) history.replaceState({ attnlab: 1 }, '', next);
  else history.pushState({ attnlab: 1 }, '', next);
}

/** A name for a model chosen as local files: their folder (when the browser tells it), else "local GPT-2 L×H". */
function localModelName(files, cfg) {
  for (const f of Array.from(files || [])) {
    const parts = String(f.webkitRelativePath || '').split('/').filter(Boolean);
    if (parts.length >= 2) return parts[parts.length - 2];
  }
  return t('localModel', cfg);
}

/** The model line: name, shape, cached, engine (threads); the engine's note as its tooltip. */
function modelStatus() {
  if (!model || !config) return;
  $('model-status').textContent = t('modelLoaded', modelName, config) + (modelCached ? ` (${t('modelCached')})` : '') +
    ' · ' + t('engineThreads', model.engine.threads, model.engine.backend === 'relaxed-simd');
  $('model-status').title = model.engine.note ? t('engineNote', model.engine.note) : '';
  document.body.dataset.backend = model.engine.backend; // 'relaxed-simd' or 'simd128' (tests/e2e/backend.test.js)
}

/** Show the local-files chooser when the picker says "Local files…". */
function syncLocal() {
  const v = $('model-select').value;
  const local = v === 'local';
  $('model-local').hidden = !local;
  $('model-load').hidden = local;
  const hub = HUB_MODELS[v];
  const warn = $('model-large');
  warn.hidden = !(hub && hub.bytes > LARGE_MODEL_BYTES);
  warn.textContent = warn.hidden ? '' : t('modelLarge', hub.name, hub.bytes);
}

// ── running ─────────────────────────────────────────────────────────────────

function runHandlers(ref) {
  const mine = () => runner !== null && runner === ref.runner;
  return {
    onBusy(busy) {
      if (!mine()) return;
      setState(busy ? 'busy' : 'ready');
      setStatus(busy ? t('statusRunning') : '');
    },
    onResult(out) {
      if (!mine()) return;
      // The run chose the cell only when the reader had none for this text (a new
      // sentence: the default cell). A run for an older selection (arrow keys
      // faster than the worker) must not undo the reader's newer choice.
      // (A cell outside the sentence, from a link, is replaced by the run's too; so is a provisional one.)
      const mineSel = S.sel && !S.sel.provisional && S.sel.text === S.text && S.sel.row < out.base.T && S.sel.col < out.base.T;
      if (out.spec.text === S.text && !mineSel) S.sel = out.provisional ? { ...out.sel, provisional: true } : out.sel;
      clearError('run');
      if (out.provisional) {   // the search's first candidate, drawn while the others run (runner.js)
        last = out;
        renderAll();
        return;
      }
      document.body.dataset.runMs = out.ms.toFixed(1);   // the worker's calls for this view (bench/bench_page.mjs)
      resultToDraw = { t0: performance.now() };
      // the search kept the cell already drawn: the same picture; only the note of what was searched changes
      if (last && last.provisional && last.spec === out.spec && last.sel.row === out.sel.row && last.sel.col === out.sel.col) {
        Object.assign(last, { provisional: false, defaultSearch: out.defaultSearch, ms: out.ms });
        if (!provisionalDrawing) finishDraw();
        return;
      }
      last = out;
      renderAll();
    },
    onError(e) {
      if (!mine()) return;
      showError(runErrorMessage(e), 'run');
      // the figures on screen are not of the text that failed: say so (dimmed, a note)
      if (last && last.spec.text !== S.text) markStale(true);
    },
  };
}

/**
 * A run's error for the reader. Too long: how many tokens the text has (the tokenizer's count, which the model's
 * ETOOLONG message carries: "312 tokens exceed n_positions = 256") and the model's limit.
 */
function runErrorMessage(e) {
  const count = e && e.code === 'ETOOLONG' ? /(\d+) tokens\b/.exec(String(e.message)) : null;
  if (count && config) return t('errTooLongCount', Number(count[1]), config.nPositions);
  return explain(e, t, { nPositions: config?.nPositions });
}

/** Dim the figures and the token list with a note while they are of an older text than the one typed. */
function markStale(on) {
  const box = $('figures');
  box.classList.toggle('is-stale', on);
  let note = document.getElementById('stale-note');
  if (on && !note) {
    note = el('p', { id: 'stale-note', class: 'stale-note' });
    box.querySelector('.tokens-wrap').after(note);
  }
  if (note) {
    note.hidden = !on;
    note.textContent = on ? t('figsStale') : '';
  }
}

function schedule() {
  if (runner) runner.request(specOf());
}

// ── drawing ─────────────────────────────────────────────────────────────────

function figBox(key) {
  return document.querySelector(`#${key} .fig-svg`);
}

// Box widths, read once per redraw before anything changes: reading a width after
// a change forces a layout of the whole page.
let sizes = null;
function measure() {
  const w = (node) => Math.floor(node.clientWidth || 0);
  sizes = { maxH: Math.max(380, Math.round(window.innerHeight * 0.82)), deltaBars: w($('delta-bars')) || 400, deltaMaps: w($('delta-maps')) || 400 };
  for (const key of ['fig1', 'fig2', 'fig3', 'fig4']) sizes[key] = Math.max(240, (w(figBox(key)) || 800) - 2);
}

/** The figure as large as its box allows: the box's width and 82 % of the window's height (ui/fit.js). */
const fitCache = new Map();     // figure and shape -> the nominal width found last time
const FIG4_PAGE_ASPECT = 0.5;   // height / width of Fig. 4 on the page (the chapter: 5/16)

/** How figure `key` is built for the page: {build(width), cw, maxH, shape (the fit cache's key)}. */
function fitPlan(fn, args, key) {
  if (!sizes) measure();
  const cw = sizes[key], maxH = sizes.maxH;
  // Fig. 4's three heatmaps in the chapter's 16 × 5 in were ~110 px wide in the page's
  // column: the page draws it taller (the export keeps the chapter's size)
  const tall = key === 'fig4' ? (w) => ({ height: w * FIG4_PAGE_ASPECT, oneColorbar: true }) : () => ({});
  // big T: every heatmap of 512 cells or more as a bitmap (Fig. 2's d_k × d_k outer product too), so a
  // frame never styles thousands of new cells
  const threshold = bigT() ? BIG_T_RASTER_CELLS : null;
  const build = (w) => {
    const old = threshold !== null ? setRasterThreshold(threshold) : null;
    try {
      return fn({ ...args, lang: S.lang, width: w, tight: true, ...tall(w) });
    } finally {
      if (old !== null) setRasterThreshold(old);
    }
  };
  const shape = JSON.stringify([key, cw, maxH, S.lang, args.tokens ? args.tokens.length : args.T, args.q ? args.q.length : 0,
    args.tokens ? args.tokens.join('') : '', args.compare ? 1 : 0]);
  // big T: one build at the box width, no search (each build of a 256-token figure
  // is 10-25 ms; a second one would put the task over 50 ms)
  if (args.tokens && args.tokens.length ** 2 > RASTER_CELLS && !fitCache.has(shape)) fitCache.set(shape, cw);
  return { build, cw, maxH, shape };
}

/** The figure as large as its box allows, in this task (the size search: ui/fit.js). */
function fitted(fn, args, key) {
  const { build, cw, maxH, shape } = fitPlan(fn, args, key);
  const known = fitCache.get(shape);
  if (known) return build(known);
  const { width, node } = fitWidth(build, cw, maxH);
  fitCache.set(shape, width);
  return node;
}

/**
 * fitted, giving the thread back between the size search's builds (a cold build is 5-20 ms
 * and the search makes up to eight: the first view's four figures were one task of
 * 170-450 ms); resolves to null when `stale()` turns true meanwhile.
 */
async function fittedSplit(fn, args, key, stale) {
  const { build, cw, maxH, shape } = fitPlan(fn, args, key);
  const known = fitCache.get(shape);
  if (known) return build(known);
  const search = fitSearch(build, cw, maxH);
  for (let step = search.next(); ; step = search.next()) {
    if (step.done) {
      fitCache.set(shape, step.value.width);
      return step.value.node;
    }
    await nextTask();
    if (stale()) return null;
  }
}


// What each figure was last drawn from: a figure whose inputs did not change is
// not rebuilt (a λ change with a cached base run redraws only Fig. 4 and the
// in-model panel).
const drawnFrom = {};
const baseIds = new WeakMap();
let nextBaseId = 1;
function baseId(r) {
  if (!baseIds.has(r)) baseIds.set(r, nextBaseId++);
  return baseIds.get(r);
}

/** True (and remembers) when figure `key` must be redrawn for `inputs`. */
function changed(key, inputs) {
  const k = JSON.stringify([inputs, S.lang, sizes && sizes[key], sizes && sizes.maxH]);
  if (drawnFrom[key] === k) return false;
  drawnFrom[key] = k;
  return true;
}

/**
 * Build figure `key` and put it on screen; resolves to its <svg>, or null when a
 * newer drawing of the same figure took over. With `split` (every full redraw, and any
 * redraw at big T) the build and its DOM are separate tasks (for big T a frame apart),
 * so no main-thread task runs over 50 ms; otherwise (a λ step or a click at small T)
 * the figure is on screen when the call returns, in the same task.
 */
async function mount(key, fn, args, { split = false } = {}) {
  const mine = [fn, args];
  figArgs[key] = mine;
  const stale = () => figArgs[key] !== mine;
  split = split || bigT();
  const t0 = performance.now();
  const node = split ? await fittedSplit(fn, args, key, stale) : fitted(fn, args, key);
  if (!node || stale()) return null;
  performance.measure(`attnlab:build:${key}`, { start: t0 });
  if (split) {
    await (bigT() && !document.hidden ? nextFrame() : nextTask());
    if (stale()) return null;
  }
  const t1 = performance.now();
  const svg = toElement(node, document);
  // Big T: in a figure of many elements (Fig. 3's 256 nodes and its edges), a group of
  // many children goes in a batch a frame; all of Fig. 3's 1400 elements in one frame
  // was a task of 35-50 ms. (The smaller figures go in at once: their callers mark the
  // selected cell on the whole figure right after.)
  const later = [];
  if (bigT() && !document.hidden && svg.getElementsByTagName('*').length > STAGED_ELEMENTS) {
    for (const g of svg.querySelectorAll('g')) {
      if (g.childElementCount > GROUP_BATCH) later.push([g, [...g.children].slice(GROUP_BATCH)]);
    }
    for (const [, rest] of later) for (const c of rest) c.remove();
  }
  const box = figBox(key);
  box.replaceChildren(svg);
  // a long text: the figure is wider than its box (MIN_CELL), which scrolls
  box.classList.toggle('fig-scroll', Number(node.attrs.width) > sizes[key] + 2);
  performance.measure(`attnlab:dom:${key}`, { start: t1 });
  // the figure's export and compare buttons work once it holds a live figure
  for (const b of document.querySelectorAll(`.fig-actions[data-fig="${key}"] button`)) b.disabled = false;
  for (const [g, rest] of later) {
    if (!await appendInFrames(g, rest, GROUP_BATCH, stale)) return null;
  }
  return svg;
}
const GROUP_BATCH = 60, STAGED_ELEMENTS = 800;



/**
 * Readable labels of the last run's tokens (readable.js): byte-level tokens that
 * hold part of a character show the character they complete or their bytes.
 */
function labelsOf(out) {
  if (!out.view || out.view.lang !== S.lang) {
    out.view = { ...readableTokens(out.tokBytes || out.base.tokens.map((s) => new TextEncoder().encode(s)), t('tokBytes')), lang: S.lang };
  }
  return out.view;
}

/** A predicted token's label and tooltip. */
function topLabel(x) {
  const bytes = last && last.idBytes ? last.idBytes.get(x.id) : null;
  return bytes ? readableToken(bytes, x.token, t('tokBytes')) : { label: x.token, title: '' };
}

/** A token quoted for running text: “.” (punctuation reads as punctuation otherwise). */
function quoted(label) {
  return `“${tokenLabel(label, 24)}”`;
}

/** The sentence for Fig. 1's title: as typed, cut after 160 characters (a 256-token text filled the figure). */
function titleSentence(text) {
  const s = Array.from(text.trim().replace(/\s+/g, ' '));
  return s.length > 160 ? `${s.slice(0, 159).join('')}…` : s.join('');
}

function viewMatrix(r) {
  return r.attention(S.layer, S.head);
}

// Fig. 1's comparison: the same text and ablations with mask 'full', run on demand
// (the button) and kept for that text; {key, r} or a pending promise.
let fullRun = null;
function fullMaskView(r) {
  if (!S.compareFull) return null;
  const ablate = last.spec.ablate;
  const key = JSON.stringify([modelName, last.spec.text, ablate]);
  if (maskOption(last.spec) === 'full') return viewMatrix(r);
  if (fullRun && fullRun.key === key) return fullRun.r ? fullRun.r.attention(S.layer, S.head) : null;
  const mine = { key, r: null };
  fullRun = mine;
  model.run(last.spec.text, { mask: 'full', ablate, topK: 0 }).then((full) => {
    if (fullRun !== mine) return;
    mine.r = full;
    if (last && config) drawFig1();
  }, (e) => { if (fullRun === mine) fullRun = null; showError(explain(e, t), 'run'); });
  return null;
}

/** The mask the chosen layer ran under: the page's choice, but "causal" is the model's own causal mask, which on
 * a sliding-window layer (Mistral, Gemma 3) sees only the last W tokens: the figures then say "window:W". */
function layerMask(spec) {
  const m = maskOption(spec);
  const own = config?.layerMasks?.[S.layer];
  return m === 'causal' && own ? own : m;
}

/** The page's view of run r, for figureArgs. */
function pageView(r) {
  return {
    tokens: labelsOf(last).labels, layer: S.layer, head: S.head, row: S.sel.row, col: S.sel.col,
    lambda: S.lambda, mask: layerMask(last.spec),
  };
}

async function drawFig1({ split = false } = {}) {
  const r = last.base;
  const compare = fullMaskView(r);
  if (!changed('fig1', [baseId(r), modelName, S.layer, S.head, S.sel.row, S.sel.col, layerMask(last.spec), compare !== null])) return;
  const svg = await mount('fig1', figAttentionAsymmetry, {
    ...figureArgs('fig1', r, { ...pageView(r), sentence: titleSentence(last.spec.text), model: modelName, nLayer: config.nLayer, compare: compare ?? undefined }),
    mark: { row: S.sel.row, col: S.sel.col }, minCell: MIN_CELL, maskFromModel: layerMask(last.spec) !== maskOption(last.spec),
  }, { split });
  if (!svg) return;
  outlineCell(svg, ['attention', 'asymmetry', 'asymmetry-full'], S.sel.row, S.sel.col);
  scrollToCell('fig1', svg);
  const btn = $('fig1-compare');
  if (btn) btn.setAttribute('aria-pressed', String(S.compareFull));
}

async function drawFig2({ split = false } = {}) {
  const r = last.base;
  if (!changed('fig2', S.demo ? ['demo'] : [baseId(r), S.layer, S.head, S.sel.row, S.sel.col])) return;
  if (S.demo) {
    await mount('fig2', figOuterProduct, { ...outerProductDemo({ dK: 16, T: 8, seed: 0 }) }, { split });
    $('fig2-head').textContent = '';
    return;
  }
  if (r.captureQK.layer !== S.layer) { drawnFrom.fig2 = null; return; } // a new run for this layer is on its way
  const head = r.captureQK.head;
  await mount('fig2', figOuterProduct, figureArgs('fig2', r, pageView(r)), { split });
  $('fig2-head').textContent = t('fig2Head', head, S.head === 'avg');
}

async function drawFig3({ split = false } = {}) {
  const r = last.base;
  if (!changed('fig3', [baseId(r), S.layer, S.head, layerMask(last.spec)])) return;
  await mount('fig3', figDag, figureArgs('fig3', r, pageView(r)), { split });
}

async function drawFig4({ split = false } = {}) {
  const r = last.base;
  if (!changed('fig4', [baseId(r), S.layer, S.head, S.sel.row, S.sel.col, S.lambda, layerMask(last.spec)])) return;
  const svg = await mount('fig4', figDoIntervention, { ...figureArgs('fig4', r, pageView(r)), minCell: MIN_CELL }, { split });
  if (!svg) return;
  outlineCell(svg, ['original', 'soft-do', 'hard-do'], S.sel.row, S.sel.col);
  scrollToCell('fig4', svg);
}

/**
 * A figure wider than its box (a long text): scroll the box so that the chosen cell of its first
 * heatmap is in view, in the next frame (when the browser lays the figure out anyway).
 */
function scrollToCell(key, svg) {
  const box = figBox(key);
  if (!box.classList.contains('fig-scroll')) return;
  const o = svg.querySelector('rect[data-role="selection"]');
  if (!o) return;
  const x = Number(o.getAttribute('x')) + Number(o.getAttribute('width')) / 2;
  requestAnimationFrame(() => {
    if (!svg.isConnected) return;
    const w = box.clientWidth;
    if (x < box.scrollLeft + 40 || x > box.scrollLeft + w - 40) box.scrollLeft = Math.max(0, x - w / 2);
  });
}

async function drawInModel() {
  const { base, after, plain, intervention: iv } = last;
  const where = iv.head === 'all' ? t('whereAll', iv.layer) : t('whereHead', iv.layer, iv.head);
  const kind = iv.kind === 'hard' ? t('kindHard') : t('kindSoft', iv.lambda);
  $('inmodel-text').textContent = last.masked ? t('inModelMasked', where, kind) : t('inModelText', where, kind);
  $('inmodel').dataset.masked = String(Boolean(last.masked));
  noteDefault();
  const kl = klDivergence(base.logits, after.logits);
  $('kl').textContent = kl === 0 ? '0' : kl < 1e-4 ? kl.toExponential(2) : kl.toFixed(4);
  $('kl-zero').hidden = kl !== 0 || Boolean(last.masked);
  $('kl-zero-fix').hidden = iv.layer === 0;
  $('kl').dataset.v = String(kl);
  $('inmodel').dataset.lambda = String(iv.lambda ?? '');
  $('inmodel').dataset.kind = iv.kind;
  $('inmodel').dataset.row = String(iv.row);
  $('inmodel').dataset.col = String(iv.col);
  const a = quoted(topLabel(base.top[0] ?? { token: '' }).label), b = quoted(topLabel(after.top[0] ?? { token: '' }).label);
  $('top-change').textContent = base.top[0] && after.top[0] && base.top[0].id !== after.top[0].id ? t('topChange', a, b) : '';
  topTable($('top-before'), base.top, null, t, topLabel);
  topTable($('top-after'), after.top, rankMoves(base.top, after.top), t, topLabel);
  const ref = $('ref-line');
  if (plain) {
    const klp = klDivergence(plain.logits, base.logits);
    ref.textContent = `${t('refTitle')}: ${t('refText', klp.toFixed(4), quoted(topLabel(plain.top[0] ?? { token: '' }).label), quoted(topLabel(base.top[0] ?? { token: '' }).label))}`;
    ref.hidden = false;
  } else ref.hidden = true;

  if (bigT()) {   // the ΔA charts in a frame of their own (no task over 50 ms)
    const mine = last;
    await (document.hidden ? nextTask() : nextFrame());
    if (last !== mine) return;
  }
  let t0 = performance.now();
  const drawing = last;   // a layer a task at big T
  const change = bigT() && !document.hidden ? await attentionChangeSliced(base, after, nextTask, () => last !== drawing) : attentionChange(base, after);
  if (!change) return;
  performance.measure('attnlab:inmodel:change', { start: t0 });
  last.change = change;
  last.kl = kl;
  if (!sizes) measure();
  const boxW = sizes.deltaBars;
  $('delta-note').textContent = iv.layer === config.nLayer - 1 ? `${t('deltaNote')} ${t('deltaLastLayer')}` : t('deltaNote');
  t0 = performance.now();
  replace($('delta-bars'), toElement(deltaBars({ mean: change.mean, max: change.max, doLayer: iv.layer, width: boxW, lang: S.lang, t }), document));
  performance.measure('attnlab:inmodel:bars', { start: t0 });
  const n = config.nLayer - iv.layer;
  const size = Math.max(96, Math.min(170, Math.floor((sizes.deltaMaps - 12 * (Math.min(n, 4) - 1)) / Math.min(n, 4))));
  if (bigT()) {   // the maps (a bitmap each) in a task of their own
    const mine = last;
    await nextTask();
    if (last !== mine) return;
  }
  const { maps } = deltaMaps({ avgDelta: change.avgDelta, doLayer: iv.layer, T: base.T, tokens: labelsOf(last).labels, size, t, lang: S.lang });
  replace($('delta-maps'), maps.map(({ layer, node, scaleMax }) => el('figure', { class: 'dmap' }, toElement(node, document),
    el('figcaption', {}, layer === iv.layer ? `${t('deltaLayer', layer)} · ${t('deltaDoHere')}` : t('deltaLayer', layer),
      el('br'), el('span', { class: 'dmap-scale' }, t('deltaScale', fmtScale(scaleMax)))))));
  // the caption says what these maps' own scales show (a rise is said as a rise)
  $('delta-trend').textContent = t('deltaTrend', describeTrend(maps.map((x) => x.scaleMax), maps[0].layer), fmtScale);
}

/** The note under the in-model panel: the default cell of this sentence (runner.js: the strongest of a few dos), while it is the one shown. */
function noteDefault() {
  const iv = last.intervention;
  if (last.defaultSearch && !last.provisional) defaultFound = { text: last.spec.text, row: last.sel.row, col: last.sel.col, n: last.defaultSearch.tried.length, tried: last.defaultSearch.tried };
  const dn = $('default-note');
  dn.hidden = !(defaultFound && defaultFound.text === last.spec.text && defaultFound.row === iv.row && defaultFound.col === iv.col);
  if (!dn.hidden) dn.textContent = t('defaultNote', defaultFound.n, iv.row, iv.col);
  $('inmodel').dataset.defaultTried = defaultFound ? JSON.stringify(defaultFound.tried) : '';
}

/** ±max of a ΔA map's colour scale, short. */
function fmtScale(m) {
  return m === 0 ? '0' : m < 1e-3 ? m.toExponential(1) : m.toPrecision(2);
}

let chipsFor = null;   // [base id, lang] of the token chips and options on screen
const CHIPS_PER_FRAME = 64;

let tokensGen = 0;
// The token list is collapsed for a new text longer than this (a <details>): 250 chips pushed Fig. 1 a screen down
const TOKENS_OPEN_MAX = 40;
let tokensText = null;   // the text the list's open state was set for (a cell or language change keeps the reader's)

/** Mark the chips of the selected row and column, and set the two selects to them. */
function markChips() {
  for (const li of $('tokens').children) {
    const k = Number(li.dataset.k);
    li.classList.toggle('is-row', k === S.sel.row);
    li.classList.toggle('is-col', k === S.sel.col);
  }
  $('row').value = String(S.sel.row);
  $('col').value = String(S.sel.col);
}

/**
 * The token list's summary: the count, and (new text) open for a short text, closed for a long one, and closed
 * on a phone, where the chips would stand between the sentence and Fig. 1 (the figures label every token).
 */
function tokensSummary(T, fresh) {
  $('tokens-count').textContent = `(${t('tokensCount', T)})`;
  if (fresh) $('tokens-box').open = T <= TOKENS_OPEN_MAX && !window.matchMedia('(max-width: 520px)').matches;
}

async function drawTokens() {
  const r = last.base;
  if (!changed('tokens', [baseId(r), S.sel.row, S.sel.col])) return;
  const key = `${baseId(r)}|${S.lang}`;
  tokensSummary(r.T, chipsFor !== key && tokensText !== last.spec.text);
  tokensText = last.spec.text;
  // the same tokens, another cell: move the marks (rebuilding 256 chips and 512 options was a long task)
  if (chipsFor === key) return markChips();
  const mine = ++tokensGen;
  chipsFor = null;
  const { labels, titles, partial } = labelsOf(last);
  const chips = labels.map((tok, k) => el('li', {
    class: [k === S.sel.row ? 'is-row' : '', k === S.sel.col ? 'is-col' : '', partial[k] ? 'is-bytes' : ''].join(' ').trim() || null,
    dataset: { k: String(k) }, title: titles[k] || null,
  }, el('span', { class: 'tok-i' }, String(k)), el('span', { class: 'tok-s' }, tokenLabel(tok, 40))));
  const opts = labels.map((tok, k) => ({ value: k, label: t('tokOpt', k, tokenLabel(tok, 24)) }));
  if (!bigT() || document.hidden) {
    replace($('tokens'), chips);
    setOptions($('row'), opts, S.sel.row);
    setOptions($('col'), opts, S.sel.col);
    chipsFor = key;
    return;
  }
  // Big T: the chips a batch a frame and the two selects in a frame of their own. All of
  // them in one frame (2300 elements to style and lay out) was a task of 40-60 ms.
  const stale = () => mine !== tokensGen || !last;
  replace($('tokens'), chips.slice(0, CHIPS_PER_FRAME));
  if (!await appendInFrames($('tokens'), chips.slice(CHIPS_PER_FRAME), CHIPS_PER_FRAME, stale)) return;
  for (const id of ['row', 'col']) {
    await nextFrame();
    if (stale()) return;
    setOptions($(id), opts, S.sel[id]);
  }
  chipsFor = key;
  markChips();   // the selection may have moved while the chips went in
}

/** Each figure's finding and what it cannot show (fig-findings.js), from the arguments it was drawn with. */
function writeFindings() {
  if (!last || !S.sel) return;
  const line = (key, r) => {
    const p = $(`${key}-finding`);
    p.hidden = !r;
    if (!r) return;
    p.querySelector('.found').textContent = r.found;
    p.querySelector('.cannot').textContent = r.cannot;
  };
  const drawn = (key) => (figArgs[key] ? figArgs[key][1] : null);
  const [a1, a2, a3, a4] = ['fig1', 'fig2', 'fig3', 'fig4'].map(drawn);
  line('fig1', a1 && a1.A ? fig1Finding(a1, { row: S.sel.row }, t) : null);
  line('fig2', a2 && !S.demo && a2.q ? fig2Finding({ ...a2, mask: layerMask(last.spec) }, t) : null);
  line('fig3', a3 ? fig3Finding(a3, t) : null);
  // the in-model KL belongs to this line only when the run's do is the drawn cell's
  const iv = last.intervention;
  const kl = a4 && iv && iv.row === a4.row && iv.col === a4.col && Number.isFinite(last.kl) ? last.kl : null;
  line('fig4', a4 ? fig4Finding(a4, { kl }, t) : null);
}

// A result waiting to be counted as drawn ({t0}); renderAll counts it when it finishes.
let resultToDraw = null;
let provisionalDrawing = 0;   // the renderGen of a provisional result's draw under way (0: none)
let renderGen = 0, localGen = 0;

/** True when the last run's heatmaps are bitmaps (big T): then drawing yields between figures. */
function bigT() {
  return !!last && last.base.T * last.base.T > RASTER_CELLS;
}

/** Let the browser run other tasks (input, paint) before the next step of a redraw. */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
// After the next frame: a big figure put into the DOM then has a frame (style, layout,
// paint) of its own instead of sharing one with the figures mounted before it.
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

/**
 * Append `nodes` to `parent` `batch` at a time, a frame between batches (big T: a frame then
 * styles and lays out a batch, not all of them). Resolves to false when `stale()` turns true.
 */
async function appendInFrames(parent, nodes, batch, stale) {
  for (let k = 0; k < nodes.length; k += batch) {
    await nextFrame();
    if (stale()) return false;
    parent.append(...nodes.slice(k, k + batch));
  }
  return true;
}

/**
 * Draw everything for `last`, each step in tasks of its own: the box sizes, the token
 * chips, each figure (its size search a build a task, its DOM a task after) and the
 * in-model panel, so that no main-thread task runs over 50 ms (issue 38 item 5: the
 * first view's four figures were one task of 170-450 ms). A newer call abandons an
 * older one between steps. Resolves to true when it drew to the end.
 */
async function renderAll() {
  if (!last || !config) return false;
  const gen = ++renderGen;
  provisionalDrawing = last.provisional ? gen : 0;
  const slice = bigT();
  const prof = {};
  markStale(false);
  const steps = [['tokens', drawTokens], ['fig1', drawFig1], ['fig2', drawFig2], ['fig3', drawFig3], ['fig4', drawFig4],
    ['inmodel', drawInModel]];
  // the result arrives in the worker's message task: the drawing starts in a task of its own
  await nextTask();
  if (gen !== renderGen || !last) return false;
  measure();
  for (const [name, f] of steps) {
    // after the token chips at big T, a frame of their own (256 of them are a layout's worth)
    await (slice && name === 'fig1' && !document.hidden ? nextFrame() : nextTask());
    if (gen !== renderGen || !last) return false;
    const t0 = performance.now();
    await f({ split: true });
    // a User Timing entry per step: profiles and the big-T test's trace name them
    performance.measure(`attnlab:${name}`, { start: t0 });
    if (gen !== renderGen || !last) return false;
    prof[name] = +(performance.now() - t0).toFixed(1);
  }
  writeFindings();
  document.body.dataset.prof = JSON.stringify(prof);
  if (provisionalDrawing === gen) provisionalDrawing = 0;
  if (last.provisional) {
    // the first live picture of the page (bench/bench_page.mjs): the search for the default cell still runs
    if (!performance.getEntriesByName('attnlab:live').length) performance.mark('attnlab:live');
    return true;
  }
  finishDraw();
  return true;
}

/** After a final result is drawn: count it, let the panels know, check the link's cell, write the URL. */
function finishDraw() {
  if (!resultToDraw) return;
  noteDefault();
  document.body.dataset.drawMs = (performance.now() - resultToDraw.t0).toFixed(1);
  resultToDraw = null;
  renders += 1;
  document.body.dataset.renders = String(renders);
  heads.sentenceChanged();
  evidence.sentenceChanged();
  if (!performance.getEntriesByName('attnlab:live').length) performance.mark('attnlab:live');
  performance.mark('attnlab:drawn', { detail: renders });
  liveNow();
  // a cell the link asked for that the sentence does not have: say so (the runner chose the default)
  if (linkSel && last.spec.text === linkSel.text) {
    if (last.sel.row !== linkSel.row || last.sel.col !== linkSel.col) showError(t('urlRefused', `row=${linkSel.row}, col=${linkSel.col} (T = ${last.base.T})`), 'url');
    linkSel = null;
  }
  writeView();
}

/** A quick redraw after a selection or λ change, before the worker answers (for big T, one figure a task). */
async function renderLocal({ fig1 = false, fig2 = false, fig4 = true } = {}) {
  if (!last || !config) return;
  const gen = ++localGen;
  const slice = bigT();
  measure();
  const steps = [];
  if (fig1) steps.push(drawTokens, drawFig1);
  if (fig2 && !S.demo) steps.push(drawFig2);
  if (fig4) steps.push(drawFig4);
  for (const f of steps) {
    if (slice && f !== steps[0]) {
      await nextTask();
      if (gen !== localGen || !last) return;
    }
    await f();
  }
  if (gen === localGen) writeFindings();
}

// ── controls ────────────────────────────────────────────────────────────────

function setupModelControls() {
  const L = config.nLayer, H = config.nHead;
  if (S.layer === null || S.layer >= L) S.layer = L - 1;
  if (S.head !== 'avg' && S.head >= H) S.head = 'avg';
  setOptions($('layer'), Array.from({ length: L }, (_, l) => ({ value: l, label: t('layerOpt', l, l === L - 1) })), S.layer);
  setOptions($('head'), [{ value: 'avg', label: t('headAvg') }, ...Array.from({ length: H }, (_, h) => ({ value: h, label: t('headOpt', h) }))], S.head);
  for (const k of [...S.ablate]) { const [l, h] = k.split('.').map(Number); if (l >= L || h >= H) S.ablate.delete(k); }
  buildAblationGrid();
  $('window').max = String(config.nPositions);
}

function buildAblationGrid() {
  const L = config.nLayer, H = config.nHead;
  const head = el('tr', {}, el('th', { scope: 'col', class: 'corner' }, `${t('layerShort')}\\${t('headShort')}`),
    Array.from({ length: H }, (_, h) => el('th', { scope: 'col' }, String(h))));
  const rows = Array.from({ length: L }, (_, l) => el('tr', {}, el('th', { scope: 'row' }, String(l)),
    Array.from({ length: H }, (_, h) => el('td', {}, el('input', {
      type: 'checkbox', checked: S.ablate.has(`${l}.${h}`), 'aria-label': t('ablateCell', l, h),
      dataset: { layer: String(l), head: String(h) },
    })))));
  replace($('ablation'), el('table', { class: 'ablation-grid' }, el('thead', {}, head), el('tbody', {}, rows)));
  rovingGrid($('ablation'));   // one Tab stop, arrows inside: the figures are not 512 stops away on a 1 B model
}

function setSelection(row, col, { focusFig } = {}) {
  if (!last) return;
  const T = last.base.T;
  row = Math.max(0, Math.min(T - 1, row));
  col = Math.max(0, Math.min(T - 1, col));
  S.sel = { row, col, text: S.text };
  renderLocal({ fig1: true, fig2: true, fig4: true });
  schedule();
  if (focusFig) document.querySelector(`#${focusFig} .fig-svg`)?.focus();
}

/** Say the chosen cell to a screen reader (#cell-live, polite): its row and column tokens and the attention. */
function announceCell() {
  if (!last || !S.sel) return;
  const { row, col } = S.sel;
  const { labels } = labelsOf(last);
  const A = viewMatrix(last.base), T = last.base.T;
  const v = A[row * T + col];
  $('cell-live').textContent = t('cellLive', row, tokenLabel(labels[row], 24), col, tokenLabel(labels[col], 24),
    Number.isFinite(v) ? v.toFixed(3) : t('cellNoPair'));
}

const CLICKABLE = new Set(['attention', 'asymmetry', 'asymmetry-full', 'posterior', 'original', 'soft-do', 'hard-do']);

/** The cell of a bitmap heatmap under the pointer: {img, i, j} or null. */
function rasterHit(target, e) {
  const img = target && target.closest ? target.closest('[data-raster]') : null;
  if (!img || !img.__raster) return null;
  const b = img.getBoundingClientRect();
  const r = img.__raster;
  const j = Math.floor(((e.clientX - b.left) / b.width) * r.C), i = Math.floor(((e.clientY - b.top) / b.height) * r.R);
  if (!(i >= 0 && i < r.R && j >= 0 && j < r.C)) return null;
  return { img, i, j };
}

function cellOf(target, e) {
  const hit = e ? rasterHit(target, e) : null;
  if (hit) return { rect: hit.img, role: hit.img.parentNode.getAttribute('data-role'), i: hit.i, j: hit.j };
  const r = target && target.closest ? target.closest('rect[data-i][data-j]') : null;
  if (!r || !r.parentNode) return null;
  const role = r.parentNode.getAttribute('data-role');
  return { rect: r, role, i: Number(r.getAttribute('data-i')), j: Number(r.getAttribute('data-j')) };
}

function wireFigures() {
  for (const key of ['fig1', 'fig2', 'fig3', 'fig4']) {
    const box = document.querySelector(`#${key} .fig-svg`);
    box.addEventListener('click', (e) => {
      const c = cellOf(e.target, e);
      if (!c || !CLICKABLE.has(c.role) || (key === 'fig2' && S.demo)) return;
      setSelection(c.i, c.j);
    });
    box.addEventListener('keydown', (e) => {
      if (!S.sel || (key === 'fig2' && S.demo) || key === 'fig3') return;
      const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
      if (!d) return;
      e.preventDefault();
      setSelection(S.sel.row + d[0], S.sel.col + d[1]);
      announceCell();
    });
    // the figure's actions: SVG and PNG downloads (Fig. 1 also: compare with full attention)
    const actions = document.querySelector(`.fig-actions[data-fig="${key}"]`);
    if (key === 'fig1') {
      actions.appendChild(el('button', {
        type: 'button', class: 'btn btn-small', id: 'fig1-compare', 'aria-pressed': 'false', dataset: { i18n: 'fig1Compare' }, disabled: true,
        on: { click: () => { S.compareFull = !S.compareFull; if (last && config) drawFig1(); } },
      }, t('fig1Compare')));
    }
    for (const kind of ['svg', 'png']) {
      actions.appendChild(el('button', {
        type: 'button', class: 'btn btn-small', dataset: { export: kind, fig: key }, disabled: true,
        on: { click: () => exportOne(key, kind) },
      }, kind.toUpperCase()));
    }
  }
  // hover: the cell's value in a tooltip (the <title> text; a bitmap cell's from its values)
  attachTooltip($('tip'), document.querySelectorAll('.fig-svg, #delta-bars, #delta-maps'), (e) => {
    const hit = rasterHit(e.target, e);
    return hit ? hit.img.__raster.title(hit.i, hit.j) : titleText(e.target, '[data-v], g[data-role="edge"], g[data-role="node"]');
  });
}

/** What figure `key` shows, for its export's name and text (page/export.js viewLabel). */
function exportView(key) {
  const r = last.base;
  const view = { model: modelName, layer: S.layer, head: S.head, mask: layerMask(last.spec) };
  const ablated = (last.spec.ablate || []).map(([l, h]) => `L${l}H${h}`).join(' ');
  const more = [`text "${titleSentence(last.spec.text)}"`, ablated ? `ablated ${ablated}` : ''];
  if (key === 'fig2') {
    if (S.demo) return { ...view, layer: '-', head: 'all', mask: 'none', more: 'a random demo, not the model' };
    view.layer = r.captureQK.layer;
    view.head = r.captureQK.head;
    more.push(`cell (${S.sel.row}, ${S.sel.col})`);
  }
  if (key === 'fig3') view.head = 'all';
  if (key === 'fig4') more.push(`do on cell (${S.sel.row}, ${S.sel.col}), soft λ = ${S.lambda}`);
  return { ...view, more: more.filter(Boolean).join(' · ') };
}

async function exportOne(key, kind) {
  if (!figArgs[key] || !last) return;
  const [fn, args] = figArgs[key];
  try {
    await exportFigure(key, vectorOnly(() => fn({ ...args, lang: S.lang, tight: true })), kind, exportView(key));
  } catch (e) {
    showError(explain(e, t), 'export');
  }
}

function exportJson() {
  if (!last || !last.change) return;
  const settings = {
    layer: S.layer, head: S.head, row: S.sel.row, col: S.sel.col, kind: S.kind, lambda: S.lambda,
    mask: S.mask === 'window' ? `window:${S.window}` : S.mask, ablate: specOf().ablate, demo: S.demo, lang: S.lang,
  };
  const klPlain = last.plain ? klDivergence(last.plain.logits, last.base.logits) : null;
  const data = runData({ out: last, modelName, settings, change: last.change, kl: last.kl, klPlain });
  const cmp = figArgs.fig1 && figArgs.fig1[1].compare;
  if (cmp) { // Fig. 1's comparison as drawn: the view's attention with mask 'full', and its A − Aᵀ
    data.compare_full_mask = { layer: S.layer, head: S.head, attention: Array.from(cmp), asymmetry: Array.from(asymmetry(cmp)) };
  }
  downloadBlob(new Blob([JSON.stringify(data)], { type: 'application/json' }), 'attnlab-run.json');
}

/** Copy the view's permalink; where the browser refuses, show it selected in a field to copy by hand. */
async function copyLink() {
  writeView();
  const url = location.href, field = $('copy-link-field');
  try {
    await navigator.clipboard.writeText(url);
    field.hidden = true;
    $('copy-link-note').textContent = t('copyLinkDone');
  } catch {
    field.value = url;
    field.hidden = false;
    field.select();
    $('copy-link-note').textContent = t('copyLinkManual');
  }
}

function setLang(lang) {
  S.lang = lang;
  t = translator(lang);
  try { localStorage.setItem('attnlab-lang', lang); } catch { /* private mode */ }
  document.documentElement.lang = lang === 'zh' ? 'zh-Hans' : 'en';
  applyStatic(document, t);
  document.title = t('docTitle');
  fillModelSelect();
  paintLinkModel();
  if (document.querySelector('.prerender')) openingView();   // still the static pictures: in the new language
  if (config) {
    setupModelControls();
    modelStatus();
    summarize();
  }
  renderAll();
  heads.setLang();
  evidence.setLang();
}

function fillModelSelect() {
  const sel = $('model-select');
  const value = sel.value || 'builtin';
  setOptions(sel, [
    { value: 'builtin', label: builtin && builtin.custom ? t('modelCustom', builtin.url.pathname) : t('modelBuiltin') },
    ...Object.entries(HUB_MODELS).map(([value, m]) => ({ value, label: t('modelHub', m.name, m.bytes) })),
    { value: 'local', label: t('modelLocal') },
  ], value);
  syncLocal();
}

function wireControls() {
  $('lang').addEventListener('click', () => setLang(S.lang === 'en' ? 'zh' : 'en'));
  $('error-dismiss').addEventListener('click', () => clearError());
  wireFold();
  wireModelControls();
  wireFileDrop();
  wireTextControls();
  wireViewControls();
  wireMaskControls();
  $('export-json').addEventListener('click', exportJson);
  $('copy-link').addEventListener('click', copyLink);
  wireResize();
}

function wireModelControls() {
  // another choice while a model loads stops that load (Load then fetches the new one)
  $('model-select').addEventListener('change', () => { if (loading) cancelLoad(); syncLocal(); });
  $('model-cancel').addEventListener('click', cancelLoad);
  $('model-link-load').addEventListener('click', () => {
    if (!linkModel || !linkModel.hub) return;
    $('model-select').value = linkModel.hub;
    syncLocal();
    switchModel(linkModel.hub);
  });
  $('model-load').addEventListener('click', () => {
    const v = $('model-select').value;
    if (v !== 'local') switchModel(v);
  });
  for (const id of ['model-files', 'model-dir']) {
    $(id).addEventListener('change', (e) => {
      if (e.target.files && e.target.files.length) switchModel({ files: Array.from(e.target.files) });
      e.target.value = '';
    });
  }
}

/** Drag and drop of a model's files, anywhere on the page. */
function wireFileDrop() {
  const drop = $('drop');
  let depth = 0;
  const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');
  document.addEventListener('dragenter', (e) => { if (!hasFiles(e)) return; depth += 1; drop.hidden = false; });
  document.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) drop.hidden = true; });
  document.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
  document.addEventListener('drop', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth = 0;
    drop.hidden = true;
    $('model-select').value = 'local';
    syncLocal();
    switchModel({ files: Array.from(e.dataTransfer.files) });
  });
}

/** The text: taken live (debounced) and on submit / Enter. */
function wireTextControls() {
  let timer = 0;
  const takeText = () => {
    clearTimeout(timer);
    const v = $('text').value;
    if (v === S.text) return;
    S.text = v;
    schedule();
  };
  $('text').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(takeText, 350); });
  $('text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); takeText(); }
  });
  $('text-form').addEventListener('submit', (e) => {
    e.preventDefault();
    if ($('text').value === S.text) schedule();
    else takeText();
  });
}

/** Layer and head shown, the do cell and its kind and λ, Fig. 2's random demo. */
function wireViewControls() {
  $('layer').addEventListener('change', (e) => {
    S.layer = Number(e.target.value);
    renderLocal({ fig1: true, fig4: true });
    schedule();
  });
  $('head').addEventListener('change', (e) => {
    S.head = e.target.value === 'avg' ? 'avg' : Number(e.target.value);
    renderLocal({ fig1: true, fig4: true });
    schedule();
  });

  // do
  $('row').addEventListener('change', (e) => setSelection(Number(e.target.value), S.sel.col));
  $('col').addEventListener('change', (e) => setSelection(S.sel.row, Number(e.target.value)));
  for (const r of document.querySelectorAll('input[name="kind"]')) {
    r.addEventListener('change', (e) => { if (e.target.checked) { S.kind = e.target.value; schedule(); } });
  }
  $('lambda').addEventListener('input', (e) => {
    S.lambda = Number(e.target.value);
    $('lambda-out').textContent = S.lambda.toFixed(1);
    renderLocal({ fig4: true });
    if (S.kind === 'soft') schedule();
  });
  $('demo').addEventListener('change', (e) => {
    S.demo = e.target.checked;
    if (last) drawFig2();
  });
  $('kl-zero-fix').addEventListener('click', () => {
    S.layer = 0;
    $('layer').value = '0';
    renderLocal({ fig1: true, fig4: true });
    schedule();
  });
}

/** The attention mask, its window W and the head ablation grid. */
function wireMaskControls() {
  $('mask').addEventListener('change', (e) => {
    S.mask = e.target.value;
    $('window').disabled = S.mask !== 'window';
    schedule();
  });
  // the window W: a whole number from 1 to the model's context; anything else is
  // refused with a note beside the box (it was ignored silently)
  $('window').addEventListener('input', (e) => {
    const raw = e.target.value;
    const w = Number(raw);
    const max = config ? config.nPositions : 1024;
    const ok = raw.trim() !== '' && Number.isInteger(w) && w >= 1 && w <= max;
    const note = $('window-note');
    note.hidden = ok;
    note.textContent = ok ? '' : t('windowBad', raw === '' ? '—' : raw, max, S.window);
    if (ok) e.target.removeAttribute('aria-invalid'); else e.target.setAttribute('aria-invalid', 'true');
    if (!ok) return;
    S.window = w;
    if (S.mask === 'window') schedule();
  });
  $('ablation').addEventListener('change', (e) => {
    const c = e.target;
    if (!c.dataset.layer) return;
    const key = `${c.dataset.layer}.${c.dataset.head}`;
    if (c.checked) S.ablate.add(key); else S.ablate.delete(key);
    schedule();
  });
  $('ablation-clear').addEventListener('click', () => {
    if (!S.ablate.size) return;
    S.ablate.clear();
    for (const c of $('ablation').querySelectorAll('input')) c.checked = false;
    schedule();
  });
}

/** Redraw at the new width when the layout changes (phones rotating, windows resizing). */
function wireResize() {
  let lastW = 0, raf = 0;
  new ResizeObserver((entries) => {
    const w = Math.round(entries[0].contentRect.width);
    if (Math.abs(w - lastW) < 8) return;
    lastW = w;
    cancelAnimationFrame(raf);
    raf = requestAnimationFrame(renderAll);
  }).observe($('figures'));
}

// ── boot ────────────────────────────────────────────────────────────────────

/**
 * The opening view as static pictures: index.html shows prerender/en/ (drawn at
 * build time by the figure code from the built-in model: scripts/figures.mjs
 * --page-view), so they paint before this script runs; the first live drawing of
 * each figure replaces them (mount). Here: the reader's language, and none at all
 * for a view they do not show (another model, sentence or view in the link).
 */
function openingView() {
  const boxes = [...document.querySelectorAll('.prerender')];
  const p = new URLSearchParams(location.search);
  if (builtin.custom || S.text !== $('text').defaultValue || VIEW_KEYS.some((k) => p.has(k))) {
    for (const b of boxes) b.remove();
    return;
  }
  let loaded = 0;
  const done = () => { loaded += 1; document.body.dataset.prerender = String(loaded); };
  for (const box of boxes) {
    const img = box.querySelector('img');
    const want = new URL(`prerender/${S.lang}/${FIGURE_FILES[box.dataset.prerender]}.svg`, document.baseURI).href;
    if (img.src !== want) img.src = want;
    else if (img.complete) { if (img.naturalWidth > 0) done(); else box.remove(); continue; }
    img.addEventListener('load', done, { once: true });
    img.addEventListener('error', () => box.remove(), { once: true });   // a page built without the model
  }
}

function boot() {
  performance.mark('attnlab:boot');
  document.documentElement.lang = S.lang === 'zh' ? 'zh-Hans' : 'en';
  $('text').value = S.text;
  applyStatic(document, t);
  document.title = t('docTitle');
  setStatus(t('statusLoadingWasm'));
  try {
    builtin = builtinSource(location.search, document.baseURI);
  } catch (e) {
    builtin = builtinSource('', document.baseURI);
    // kept when the built-in model then loads (a 'load' error would be cleared by that success)
    showError(explain(e, t), 'param');
  }
  fillModelSelect();
  openingView();
  // the worker starts at once; the rest (the controls' handlers, the two panels) waits for the
  // first frame, so that the opening view's pictures are painted before that work
  const ui = new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
    wireControls();
    wireFigures();
    // the two panels below the figures: built when the reader nears them or once the page is live and idle
    heads = new LazyPanel(() => new HeadsPanel({ t: () => t, lang: () => S.lang, sentence: () => S.text }));
    evidence = new LazyPanel(() => new EvidencePanel({ lang: () => S.lang, sentence: () => S.text }));
    buildPanels = deferPanels([heads, evidence], [$('heads'), $('evidence')], firstDrawn);
    // a link to a card of a panel (index.html#cx-comp): the panels now, then the scroll the browser could not do
    const target = location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : '';
    if (target && !document.getElementById(target)) {
      buildPanels();
      const to = document.getElementById(target);
      if (to) to.scrollIntoView({ block: 'start' });
    }
    window.addEventListener('popstate', () => {
      viewFromHistory = true;
      applyView(location.search);
    });
    resolve();
  }, 0)));
  uiReady = ui;
  switchModel('builtin');
}

/** The entry module's call (entry.js): early is what it started (head-start.js), claimed by the first load. */
export function start(started) {
  early = started;
  boot();
}
