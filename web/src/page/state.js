// state.js — the page's one state: what the reader chose (the view), the language, the model in use and the last
// run. Every module of the page reads it here (S, page) and changes it through the functions below, so a change
// of state has one name to search for:
//
//   setView(patch)    the reader's choices: sentence, layer, head, cell, do, mask, ablations, demo, comparison
//   setLanguage(lang) the language and its translator (t)
//   adoptModel(…)     the model the page uses, with its name, its picker value and its runner
//   setLast(out)      the last run (runner.js), drawn by render.js
//   setBuiltin(src)   where the built-in model is served (models.js builtinSource)
//
// schedule() asks the runner for the view; specOf() is the view as the runner takes it.

import { $ } from '../ui/dom.js';
import { translator } from './i18n.js';

const params = new URLSearchParams(location.search);
/** Characters of ?text= a link may carry: a longer text is refused with a note. */
export const MAX_LINK_TEXT = 4000;
const storedLang = (() => { try { return localStorage.getItem('attnlab-lang'); } catch { return null; } })();

/** Everything the reader chose. sel.text is the text the cell was chosen for. Read it; change it with setView. */
export const S = {
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

/** The model in use and what it last ran. Read it; change it with the functions below. */
export const page = {
  model: null,          // WorkerModel
  modelName: '',
  config: null,
  modelChoice: 'builtin',   // the picker's value for the model in use (the picker returns to it after a failure)
  modelCached: false,   // its files came from the browser's cache
  builtin: null,        // {url, name, custom}: where the built-in model is served
  runner: null,         // runner.js Runner of the model
  last: null,           // the last run: {spec, sel, base, after, plain, fig2Head, intervention, …}
};

let tr = translator(S.lang);
/** The page's translator, in the language shown now. */
export const t = (key, ...args) => tr(key, ...args);

/** Change the reader's choices (any of S's fields). */
export function setView(patch) { Object.assign(S, patch); }

/** Show the page in `lang` from now on (the labels are the caller's: main.js setLang), and remember it. */
export function setLanguage(lang) {
  S.lang = lang;
  tr = translator(lang);
  try { localStorage.setItem('attnlab-lang', lang); } catch { /* private mode */ }
}

/** Where the built-in model is served. */
export function setBuiltin(src) { page.builtin = src; }

/**
 * Make m the page's model: its name, the picker value it was chosen by ('builtin', a hub key or 'local'), whether
 * it came from the cache, and its runner (made by makeRunner(m)). The previous model is disposed; the last run and
 * the cell are forgotten (the chapter's default cell is chosen in the new model's tokens).
 */
export function adoptModel(m, { name, choice, cached, makeRunner }) {
  const old = page.model;
  Object.assign(page, { model: m, modelName: name, config: m.config });
  page.runner = makeRunner(m);
  if (old) old.dispose();
  Object.assign(page, { modelChoice: choice, last: null, modelCached: cached });
  S.sel = null;
}

/** The last run, as drawn. */
export function setLast(out) { page.last = out; }

/** The view as the runner takes it (runner.js). */
export function specOf() {
  return {
    text: S.text, layer: S.layer, head: S.head, sel: S.sel, kind: S.kind, lambda: S.lambda,
    mask: S.mask, window: S.window,
    ablate: [...S.ablate].map((k) => k.split('.').map(Number)).sort((a, b) => a[0] - b[0] || a[1] - b[1]),
  };
}

/** Run the view (the runner keeps one run in flight and the newest waiting). */
export function schedule() {
  if (page.runner) page.runner.request(specOf());
}
