// permalink.js — the view in the URL: ?layer=&head=&row=&col=&kind=&lambda=&mask=&w=&ablate=l.h,l.h (with text,
// lang, and hub= or local=1 for a model that is not the built-in one): a link reopens one exact view, and
// back/forward step through the views (a λ change replaces the last entry). Every value is checked against the
// model (and the cell against the sentence); a refused one is named in a visible note and the page keeps its own
// value. A link's hub model is loaded only when the reader says so (it may be gigabytes): until then the page
// shows the built-in model with the link's sentence, and the link's view waits for that model.

import { $ } from '../ui/dom.js';
import { HUB_MODELS } from './models.js';
import { setControlsOpen, foldSummary } from './fold.js';
import { S, page, t, MAX_LINK_TEXT, setView, schedule } from './state.js';
import { showError, clearError } from './status.js';
import { syncControls } from './controls.js';

/** The query keys of a view (besides text and lang). */
export const VIEW_KEYS = ['layer', 'head', 'row', 'col', 'kind', 'lambda', 'mask', 'w', 'ablate', 'hub', 'local'];

const link = {
  first: true,          // no model loaded yet: the first one opens the link's view
  sel: null,            // {row, col, text}: a cell asked for by the URL, checked when the sentence is tokenized
  model: null,          // {hub: key} | {local: true}: the model a link was made with, when it is not the built-in one
  view: null,           // the link's view, applied once the model it names is loaded
  fromHistory: false,   // the view on screen came from back/forward: no new history entry for it
};

/**
 * The model a link names (?hub=key, or ?local=1 for a folder of the reader's own): a hub model is loaded only when
 * the reader says so (it may be gigabytes); a local folder cannot travel in a link, so the note says to choose it
 * again. Returns true when the view must wait for that model.
 */
function readLinkModel(search) {
  const p = new URLSearchParams(search);
  const key = p.get('hub');
  link.model = null;
  if (key !== null) {
    if (!Object.hasOwn(HUB_MODELS, key)) { showError(t('urlRefused', `hub=${Array.from(key).slice(0, 24).join('')}`), 'url'); return false; }
    link.model = { hub: key };
  } else if (p.get('local') === '1') link.model = { local: true };
  paintLinkModel();
  return link.model !== null && link.model.hub !== undefined;
}

/** The note under the model picker naming the link's model (and its Load button). */
export function paintLinkModel() {
  const box = $('model-link'), btn = $('model-link-load');
  box.hidden = !link.model;
  if (!link.model) return;
  setControlsOpen(true);
  if (link.model.hub) {
    const hub = HUB_MODELS[link.model.hub];
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
  const L = page.config.nLayer, H = page.config.nHead;
  const bad = [];
  link.sel = null;
  const int = (v, max) => (/^\d{1,5}$/.test(v) && Number(v) < max ? Number(v) : null);
  const take = (key, parse, set) => {
    if (!p.has(key)) return;
    const v = p.get(key), x = parse(v);
    if (x === null) bad.push(`${key}=${Array.from(v).slice(0, 24).join('')}`); else set(x);
  };
  take('text', (v) => (v.length <= MAX_LINK_TEXT ? v : null), (v) => { setView({ text: v }); $('text').value = v; });
  take('layer', (v) => int(v, L), (v) => setView({ layer: v }));
  take('head', (v) => (v === 'avg' ? 'avg' : int(v, H)), (v) => setView({ head: v }));
  take('kind', (v) => (v === 'hard' || v === 'soft' ? v : null), (v) => setView({ kind: v }));
  take('lambda', (v) => (/^\d{1,2}(\.\d{1,3})?$/.test(v) && Number(v) <= 10 ? Number(v) : null), (v) => setView({ lambda: v }));
  take('mask', (v) => (['causal', 'full', 'window'].includes(v) ? v : null), (v) => setView({ mask: v }));
  take('w', (v) => { const w = int(v, page.config.nPositions + 1); return w >= 1 ? w : null; }, (v) => setView({ window: v }));
  take('ablate', (v) => {
    if (v === '') return [];
    const parts = v.split(',');
    if (parts.length > L * H || !parts.every((x) => /^\d{1,3}\.\d{1,3}$/.test(x))) return null;
    const ok = parts.every((x) => { const [l, h] = x.split('.').map(Number); return l < L && h < H; });
    return ok ? parts : null;
  }, (v) => setView({ ablate: new Set(v.map((x) => x.split('.').map(Number).join('.'))) }));
  const row = p.has('row') ? p.get('row') : null, col = p.has('col') ? p.get('col') : null;
  if (row !== null || col !== null) {
    if (/^\d{1,4}$/.test(row ?? '') && /^\d{1,4}$/.test(col ?? '')) link.sel = { row: Number(row), col: Number(col), text: S.text };
    else bad.push(`row=${Array.from(String(row)).slice(0, 12).join('')}, col=${Array.from(String(col)).slice(0, 12).join('')}`);
  }
  setView({ sel: link.sel ? { ...link.sel } : null });
  return bad;
}

/** Apply a query string's view (a link, or back/forward) to the state and the controls, and run it. */
export function applyView(search, { fromLink = false } = {}) {
  if (!page.config) return;
  const before = S.text;
  const bad = readView(search);
  if (!fromLink && before !== S.text) setView({ sel: link.sel ? { ...link.sel } : null });
  syncControls();
  if (bad.length) showError(t('urlRefused', bad.join('; ')), 'url');
  else clearError('url');
  schedule();
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
  if (page.modelChoice === 'local') p.set('local', '1');
  else if (Object.hasOwn(HUB_MODELS, page.modelChoice)) p.set('hub', page.modelChoice);
  return `?${p.toString()}`;
}

/** The folded controls' one-line summary (fold.js): the model, layer and head in use. */
export function summarize() {
  if (!page.config) return;
  foldSummary(t('controlsSummary', page.modelName, S.layer, S.head === 'avg' ? t('headAvg') : `H${S.head}`));
}

/** After a drawn result: a new view gets a history entry (a λ change replaces the last one). */
function writeView() {
  summarize();
  if (link.fromHistory) { link.fromHistory = false; return; }
  const next = viewSearch();
  if (next === location.search) return;
  const a = new URLSearchParams(location.search), b = new URLSearchParams(next);
  a.delete('lambda'); b.delete('lambda');
  if (a.toString() === b.toString() || !history.state) history.replaceState({ attnlab: 1 }, '', next);
  else history.pushState({ attnlab: 1 }, '', next);
}

/** After each final result is drawn: a cell the link asked for that the sentence does not have is named (the runner
 * chose the default); the view goes into the URL. */
export function afterDraw() {
  const last = page.last;
  if (link.sel && last.spec.text === link.sel.text) {
    if (last.sel.row !== link.sel.row || last.sel.col !== link.sel.col) showError(t('urlRefused', `row=${link.sel.row}, col=${link.sel.col} (T = ${last.base.T})`), 'url');
    link.sel = null;
  }
  writeView();
}

/** After a model is loaded: the link's view (the first model), or the view a link's hub model was waiting for. */
export function viewAfterLoad(what) {
  if (link.first) {
    link.first = false;
    if (readLinkModel(location.search)) {
      // the view belongs to the hub model the link names: keep it for that model, show only its sentence now
      link.view = location.search;
      const text = new URLSearchParams(location.search).get('text');
      applyView(text !== null ? `?${new URLSearchParams({ text })}` : '', { fromLink: true });
    } else applyView(location.search, { fromLink: true });
  } else if (link.view && link.model && what === link.model.hub) {
    const v = link.view;
    link.view = null;
    link.model = null;
    paintLinkModel();
    applyView(v, { fromLink: true });
  }
}

/** The hub model a link names and waits for (its Load button), or null. */
export const linkedHub = () => (link.model && link.model.hub) || null;

/** Back and forward step through the views. */
export function wireHistory() {
  window.addEventListener('popstate', () => {
    link.fromHistory = true;
    applyView(location.search);
  });
}

/** Copy the view's permalink; where the browser refuses, show it selected in a field to copy by hand. */
export async function copyLink() {
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
