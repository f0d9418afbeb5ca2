// loading.js — the page's model: the built-in one (its first load is the entry module's, head-start.js, already
// under way when this code arrives), a hub model downloaded with one progress bar in bytes over all its files and
// kept in the browser's Cache API, or local files (chosen, or dropped on the page). One load at a time: a newer
// choice, or Cancel, stops the one under way and the page keeps the model it has. A failed load says why (naming
// the files the family needs) in the banner and beside the Load button. A loaded model becomes the page's through
// state.js adoptModel; the rest of the page follows through the `adopted` hook (main.js).

import { $, setOptions } from '../ui/dom.js';
import { loadModel } from '../worker-client.js';
import { HUB_MODELS, LARGE_MODEL_BYTES, fetchHubModel, fetchBuiltinModel, BUILTIN_WEIGHTS, pickModelFiles, explain, familyOfFiles } from './models.js';
import { startPageWorker } from './head-start.js';
import { page, t, adoptModel, schedule } from './state.js';
import { setState, setStatus, showError, clearError } from './status.js';
import { makeRunner } from './render.js';
import { linkedHub } from './permalink.js';

let loadToken = 0;        // each load's number: what an older load still delivers is dropped
let loadAbort = null;    // aborts a hub download that a newer choice replaced
let loading = null;      // {name}: the model being loaded, while its download or reading runs (Cancel stops it)
const hooks = {
  early: null,           // the worker and downloads the entry module started (head-start.js)
  ready: Promise.resolve(),   // the controls and panels are set up (main.js boot: after the first frame)
  adopted: () => {},     // a model is the page's: the controls, the link's view, the panels (main.js)
};

/** What the loads need from the page: what the entry module started, when the page is ready, what a new model sets up. */
export function configureLoading({ early, ready, adopted }) { Object.assign(hooks, { early, ready, adopted }); }

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
export function cancelLoad() {
  if (!loading || !loading.cancellable) return;
  const name = loading.name;
  loadToken++;             // whatever the stopped load still delivers is dropped
  if (loadAbort) loadAbort.abort();
  loadAbort = null;
  loading = null;
  $('model-progress').hidden = true;
  $('model-cancel').hidden = true;
  $('model-load').disabled = false;
  if (page.model) {
    modelStatus();
    $('model-status').textContent = t('loadCancelled', name, page.modelName);
    setState(page.runner.busy ? 'busy' : 'ready');
  } else {
    $('model-status').textContent = t('loadCancelledNone', name);
    setState('error');
  }
}

/** The files of a model choice: the built-in URL, a hub model's downloaded files, or local files. */
async function sourceOf(what, token, signal) {
  if (what === 'builtin') {
    if (page.builtin.custom) return { source: page.builtin.url.href, name: page.builtin.name, cached: false };
    // the default model's files (a reload of it: the first load is the entry module's, earlyLoad); the bytes go
    // to the worker
    const files = await fetchBuiltinModel(page.builtin.url, { signal, onProgress: (p) => { if (token === loadToken) progressUI(p.file, p.loaded, p.total); } });
    return { source: files, name: page.builtin.name, cached: false, transfer: true };
  }
  if (typeof what !== 'string') return { source: pickModelFiles(what.files), name: t('localName'), cached: false };
  const hub = HUB_MODELS[what];
  $('model-status').textContent = t('modelLoading', hub.name);
  if (!page.model) setStatus(t('statusDownloading', hub.name));
  const progress = hubProgress(hub.name, hub);
  const got = await fetchHubModel(hub.base, { signal, files: hub.files, onProgress: (p) => { if (token === loadToken) progress(p); } });
  if (got.cacheFailed) showError(t('errCache'), 'cache');
  return { source: got.files, name: hub.name, cached: got.cached };
}

/** Make m (loaded for choice what, named name) the page's model. */
function adopt(m, what, name, cached) {
  adoptModel(m, { name, choice: typeof what === 'string' ? what : 'local', cached, makeRunner });
  clearError('load');
  hooks.adopted(what);
  modelStatus();
  document.body.dataset.model = page.modelName;
  document.body.dataset.threads = String(m.engine.threads);
  schedule();
}

/** A failed load: the message (naming the family chosen and its files), and the page back on its model. */
async function loadFailed(e, what, token) {
  const keep = page.model ? ' ' + t('errKeepPrevious', page.modelName) : '';
  const missing = what === 'builtin' && e && e.code === 'EIO' && /built-in model missing|HTTP 404/.test(e.message);
  // the family chosen (a hub entry's, a local folder's config.json's) names the files it needs in the message
  const family = what === 'builtin' ? 'gpt2' : typeof what === 'string' ? HUB_MODELS[what].family : await familyOfFiles(what.files);
  if (token !== loadToken) return;
  const msg = missing ? t('errBuiltinMissing', page.builtin.url.pathname) : explain(e, t, { nPositions: page.config?.nPositions, family });
  showError(msg + keep, 'load');
  // the picker and the status line say which model the page uses (not the one that failed)
  $('model-select').value = page.model ? page.modelChoice : (typeof what === 'string' ? what : 'local');
  syncLocal();
  if (page.model) modelStatus(); else $('model-status').textContent = t('errNoModel');
  if (!page.model) setStatus('');
  setState(page.model ? 'ready' : 'error');
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
  const pending = hooks.early.takeLoad((e) => {
    if (token !== loadToken) return;
    if (e.kind === 'fetch') progressUI(e.file, e.loaded, e.total);
    else if (e.kind === 'files') {
      $('model-status').textContent = t('modelLoading', page.builtin.name);
      if (!page.model) setStatus(t('statusLoadingWasm'));
    } else onLoadEvent(e);
  }, signal);
  return pending && pending.then((m) => ({ m, name: page.builtin.name, cached: false }));
}

/** Fetch the files of a model choice (sourceOf) and load them in a new worker: {m, name, cached}. */
async function loadChoice(what, token, signal) {
  // the worker (its script, then the wasm) starts while the files download; the first load takes the one the
  // entry module started
  const worker = hooks.early.takeWorker() ?? startPageWorker();
  let got;
  try {
    got = await sourceOf(what, token, signal);
  } catch (e) {
    worker.terminate();
    throw e;
  }
  const { source, name, cached, transfer = false } = got;
  $('model-status').textContent = t('modelLoading', name);
  if (!page.model) setStatus(t('statusLoadingWasm'));
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
export async function switchModel(what) {
  const token = ++loadToken;
  performance.mark('attnlab:load-start');
  if (loadAbort) loadAbort.abort();
  loadAbort = new AbortController();
  const signal = loadAbort.signal;
  const loadBtn = $('model-load');
  loadBtn.disabled = true;
  loading = { name: what === 'builtin' ? page.builtin.name : typeof what === 'string' ? HUB_MODELS[what].name : t('localName'),
              cancellable: what !== 'builtin' };
  $('model-cancel').hidden = what === 'builtin';   // the built-in model is served with the page: nothing to stop
  setState(page.model ? 'busy' : 'loading');
  try {
    // the page's first load on the built-in model is the entry module's, already under way
    const { m, name, cached } = await ((what === 'builtin' && earlyLoad(token, signal)) || loadChoice(what, token, signal));
    performance.mark('attnlab:model-ready');
    await hooks.ready;   // the controls and the panels exist (boot sets them up after the first frame)
    if (token !== loadToken) { m.dispose(); return; }
    // local files have no model name: the folder they came from, else the shape ("local files" read as a model name in the titles)
    adopt(m, what, typeof what !== 'string' ? localModelName(what.files, m.config) : name, cached);
  } catch (e) {
    if (token === loadToken) await loadFailed(e, what, token);
  } finally {
    if (token === loadToken) {
      loading = null;
      $('model-cancel').hidden = true;
      $('model-progress').hidden = true;
      loadBtn.disabled = false;
      if (page.model && !page.runner.busy) setState('ready');
    }
  }
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
export function modelStatus() {
  if (!page.model || !page.config) return;
  $('model-status').textContent = t('modelLoaded', page.modelName, page.config) + (page.modelCached ? ` (${t('modelCached')})` : '') +
    ' · ' + t('engineThreads', page.model.engine.threads, page.model.engine.backend === 'relaxed-simd');
  $('model-status').title = page.model.engine.note ? t('engineNote', page.model.engine.note) : '';
  document.body.dataset.backend = page.model.engine.backend; // 'relaxed-simd' or 'simd128' (tests/e2e/backend.test.js)
}

/** Show the local-files chooser when the picker says "Local files…". */
export function syncLocal() {
  const v = $('model-select').value;
  const local = v === 'local';
  $('model-local').hidden = !local;
  $('model-load').hidden = local;
  const hub = HUB_MODELS[v];
  const warn = $('model-large');
  warn.hidden = !(hub && hub.bytes > LARGE_MODEL_BYTES);
  warn.textContent = warn.hidden ? '' : t('modelLarge', hub.name, hub.bytes);
}

/** The model picker's entries in the language shown: the built-in model, the hub models with their sizes, local files. */
export function fillModelSelect() {
  const sel = $('model-select');
  const value = sel.value || 'builtin';
  setOptions(sel, [
    { value: 'builtin', label: page.builtin && page.builtin.custom ? t('modelCustom', page.builtin.url.pathname) : t('modelBuiltin') },
    ...Object.entries(HUB_MODELS).map(([value, m]) => ({ value, label: t('modelHub', m.name, m.bytes) })),
    { value: 'local', label: t('modelLocal') },
  ], value);
  syncLocal();
}

/** The model picker, Load, Cancel, the link's model's Load, the file and folder choosers, and drops on the page. */
export function wireModelControls() {
  // another choice while a model loads stops that load (Load then fetches the new one)
  $('model-select').addEventListener('change', () => { if (loading) cancelLoad(); syncLocal(); });
  $('model-cancel').addEventListener('click', cancelLoad);
  $('model-link-load').addEventListener('click', () => {
    const hub = linkedHub();
    if (!hub) return;
    $('model-select').value = hub;
    syncLocal();
    switchModel(hub);
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
  wireFileDrop();
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
