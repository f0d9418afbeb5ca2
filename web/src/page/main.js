// main.js — the chapter page: it starts the page and ties its parts together.
//
// The parts, each around the one state of the page (state.js: the reader's view S, the model in use and its last
// run, the language):
//
//   loading.js    the model: built-in, hub or local files, with progress, Cancel and errors
//   permalink.js  the view in the URL: links, back/forward, copy link
//   controls.js   the controls of the view and the figures' clicks and keys
//   render.js     a run to the screen: the four figures (draw.js), the tokens and the in-model panel (inmodel.js)
//   panels.js     the three panels below the figures (heads, evidence, circuits), built lazily
//   status.js     the page's state on the body, the status line, the error banner
//
// The model always runs in a Web Worker (attnlab/worker), so the page never freezes; the figures are the pure
// functions of web/src/figures, turned into DOM with toElement (text nodes only: token strings are never parsed as
// HTML). Here: the language switch, the opening view's static pictures, and the boot.
//
// URL parameters: ?model=/path/on/this/server/ (a model directory; tests use /tests/fixtures/tiny/), ?lang=zh,
// ?text=… (the sentence), and the view's (permalink.js).

import { $ } from '../ui/dom.js';
import { applyStatic } from './i18n.js';
import { builtinSource, explain } from './models.js';
import { FIGURE_FILES } from '../figures/names.js';
import { wireFold } from './fold.js';
import { S, page, t, setLanguage, setBuiltin } from './state.js';
import { setStatus, showError, clearError } from './status.js';
import { configureLoading, switchModel, fillModelSelect, modelStatus, wireModelControls } from './loading.js';
import { VIEW_KEYS, paintLinkModel, viewAfterLoad, summarize, afterDraw, wireHistory, copyLink } from './permalink.js';
import { setupModelControls, wireControls } from './controls.js';
import { renderAll, onDrawn } from './render.js';
import { makePanels } from './panels.js';

let panels = null;       // the three panels below the figures (panels.js), made once the page's first frame is painted
let liveNow = null;
const firstDrawn = new Promise((resolve) => { liveNow = resolve; });   // the page's first live drawing

/** Show the page in `lang`: every label, the picker, the figures and the panels. */
function setLang(lang) {
  setLanguage(lang);
  document.documentElement.lang = lang === 'zh' ? 'zh-Hans' : 'en';
  applyStatic(document, t);
  document.title = t('docTitle');
  fillModelSelect();
  paintLinkModel();
  if (document.querySelector('.prerender')) openingView();   // still the static pictures: in the new language
  if (page.config) {
    setupModelControls();
    modelStatus();
    summarize();
  }
  renderAll();
  panels.setLang();
}

/** A model is now the page's (loading.js): its controls, the link's view, the panels. */
function adopted(what) {
  setupModelControls();
  viewAfterLoad(what);
  panels.setModel(page.model, page.config, page.modelName);
}

/** After each final result is drawn (render.js): the panels follow the sentence, the page is live, the URL. */
function drawn() {
  panels.sentenceChanged();
  liveNow();
  afterDraw();
}

/**
 * The opening view as static pictures: index.html shows prerender/en/ (drawn at
 * build time by the figure code from the built-in model: scripts/figures.mjs
 * --page-view), so they paint before this script runs; the first live drawing of
 * each figure replaces them (draw.js mount). Here: the reader's language, and none at all
 * for a view they do not show (another model, sentence or view in the link).
 */
function openingView() {
  const boxes = [...document.querySelectorAll('.prerender')];
  const p = new URLSearchParams(location.search);
  if (page.builtin.custom || S.text !== $('text').defaultValue || VIEW_KEYS.some((k) => p.has(k))) {
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

/** The controls' handlers and the panels (after the first frame). */
function wireUi() {
  $('lang').addEventListener('click', () => setLang(S.lang === 'en' ? 'zh' : 'en'));
  $('error-dismiss').addEventListener('click', () => clearError());
  wireFold();
  wireModelControls();
  $('copy-link').addEventListener('click', copyLink);
  wireControls();
  // the panels below the figures: built when the reader nears them or once the page is live and idle
  panels = makePanels({ t: () => t, lang: () => S.lang, sentence: () => S.text }, firstDrawn);
  onDrawn(drawn);
  // a link to a card of a panel (index.html#cx-comp): the panels now, then the scroll the browser could not do
  const target = location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : '';
  if (target && !document.getElementById(target)) {
    panels.buildNow();
    const to = document.getElementById(target);
    if (to) to.scrollIntoView({ block: 'start' });
  }
  wireHistory();
}

function boot(early) {
  performance.mark('attnlab:boot');
  document.documentElement.lang = S.lang === 'zh' ? 'zh-Hans' : 'en';
  $('text').value = S.text;
  applyStatic(document, t);
  document.title = t('docTitle');
  setStatus(t('statusLoadingWasm'));
  try {
    setBuiltin(builtinSource(location.search, document.baseURI));
  } catch (e) {
    setBuiltin(builtinSource('', document.baseURI));
    // kept when the built-in model then loads (a 'load' error would be cleared by that success)
    showError(explain(e, t), 'param');
  }
  fillModelSelect();
  openingView();
  // the worker starts at once; the rest (the controls' handlers, the panels) waits for the
  // first frame, so that the opening view's pictures are painted before that work
  const ready = new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
    wireUi();
    resolve();
  }, 0)));
  configureLoading({ early, ready, adopted });
  switchModel('builtin');
}

/** The entry module's call (entry.js): early is what it started (head-start.js), claimed by the first load. */
export function start(started) {
  boot(started);
}
