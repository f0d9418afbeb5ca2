// draw.js — the chapter's four figures on the page, from the last run (state.js page.last) and the view (S): each
// built by its pure function of web/src/figures at the largest size its box allows (the size search, ui/fit.js,
// cached by shape), turned into DOM (toElement: text nodes only), its cell outlined, its finding and what it
// cannot show written under it (fig-findings.js), and exported at the chapter's size. A figure whose inputs did
// not change is not rebuilt; at big T (bitmaps, figures/raster.js) its build and its DOM are tasks of their own,
// so no main-thread task runs over 50 ms. render.js says when to draw; inmodel.js draws the panel below.

import { $ } from '../ui/dom.js';
import { figAttentionAsymmetry, figOuterProduct, outerProductDemo, figDag, figDoIntervention, toElement } from '../figures/index.js';
import { outlineCell } from '../ui/selection.js';
import { fitSearch, fitWidth } from '../ui/fit.js';
import { figureArgs } from '../ui/figure-args.js';
import { setRasterThreshold, vectorOnly } from '../figures/raster.js';
import { maskOption } from './runner.js';
import { readableTokens } from './readable.js';
import { exportFigure } from './export.js';
import { explain } from './models.js';
import { fig1Finding, fig2Finding, fig3Finding, fig4Finding } from './fig-findings.js';
import { S, page, t } from './state.js';
import { showError } from './status.js';

// Heatmaps of more than this many cells are drawn as one bitmap each (figures/raster.js):
// T > 32. The exports still write every cell as a vector rect.
export const RASTER_CELLS = 1024;
setRasterThreshold(RASTER_CELLS);
const BIG_T_RASTER_CELLS = 512;
// Fig. 1's and Fig. 4's heatmaps never get cells under this (px): a long text makes the figure
// wider than its box, which then scrolls (issue 38 item 2: at T = 256 the cells were under 1 px)
const MIN_CELL = 3;

/** key -> [figure function, args] of what is on screen (the exports rebuild from it). */
export const figArgs = {};

// ── sizes ───────────────────────────────────────────────────────────────────

/** The box figure `key` is drawn in. */
export function figBox(key) {
  return document.querySelector(`#${key} .fig-svg`);
}

// Box widths, read once per redraw before anything changes: reading a width after
// a change forces a layout of the whole page.
let sizes = null;
export function measure() {
  const w = (node) => Math.floor(node.clientWidth || 0);
  sizes = { maxH: Math.max(380, Math.round(window.innerHeight * 0.82)), deltaBars: w($('delta-bars')) || 400, deltaMaps: w($('delta-maps')) || 400 };
  for (const [key] of FIGURES) sizes[key] = Math.max(240, (w(figBox(key)) || 800) - 2);
}

/** The box widths of this redraw (measured now when there are none yet). */
export function boxSizes() {
  if (!sizes) measure();
  return sizes;
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
export function baseId(r) {
  if (!baseIds.has(r)) baseIds.set(r, nextBaseId++);
  return baseIds.get(r);
}

/** True (and remembers) when figure `key` must be redrawn for `inputs`. */
export function changed(key, inputs) {
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
export function labelsOf(out) {
  if (!out.view || out.view.lang !== S.lang) {
    out.view = { ...readableTokens(out.tokBytes || out.base.tokens.map((s) => new TextEncoder().encode(s)), t('tokBytes')), lang: S.lang };
  }
  return out.view;
}

// ── the four figures ────────────────────────────────────────────────────────

/** The sentence for Fig. 1's title: as typed, cut after 160 characters (a 256-token text filled the figure). */
export function titleSentence(text) {
  const s = Array.from(text.trim().replace(/\s+/g, ' '));
  return s.length > 160 ? `${s.slice(0, 159).join('')}…` : s.join('');
}

/** The attention matrix the view shows: its layer, and its head or their average. */
export function viewMatrix(r) {
  return r.attention(S.layer, S.head);
}

// Fig. 1's comparison: the same text and ablations with mask 'full', run on demand
// (the button) and kept for that text; {key, r} or a pending promise.
let fullRun = null;
function fullMaskView(r) {
  if (!S.compareFull) return null;
  const ablate = page.last.spec.ablate;
  const key = JSON.stringify([page.modelName, page.last.spec.text, ablate]);
  if (maskOption(page.last.spec) === 'full') return viewMatrix(r);
  if (fullRun && fullRun.key === key) return fullRun.r ? fullRun.r.attention(S.layer, S.head) : null;
  const mine = { key, r: null };
  fullRun = mine;
  page.model.run(page.last.spec.text, { mask: 'full', ablate, topK: 0 }).then((full) => {
    if (fullRun !== mine) return;
    mine.r = full;
    if (page.last && page.config) drawFig1();
  }, (e) => { if (fullRun === mine) fullRun = null; showError(explain(e, t), 'run'); });
  return null;
}

/** The mask the chosen layer ran under: the page's choice, but "causal" is the model's own causal mask, which on
 * a sliding-window layer (Mistral, Gemma 3) sees only the last W tokens: the figures then say "window:W". */
export function layerMask(spec) {
  const m = maskOption(spec);
  const own = page.config?.layerMasks?.[S.layer];
  return m === 'causal' && own ? own : m;
}

/** The page's view of run r, for figureArgs. */
function pageView(r) {
  return {
    tokens: labelsOf(page.last).labels, layer: S.layer, head: S.head, row: S.sel.row, col: S.sel.col,
    lambda: S.lambda, mask: layerMask(page.last.spec),
  };
}

export async function drawFig1({ split = false } = {}) {
  const r = page.last.base;
  const compare = fullMaskView(r);
  if (!changed('fig1', [baseId(r), page.modelName, S.layer, S.head, S.sel.row, S.sel.col, layerMask(page.last.spec), compare !== null])) return;
  const svg = await mount('fig1', figAttentionAsymmetry, {
    ...figureArgs('fig1', r, { ...pageView(r), sentence: titleSentence(page.last.spec.text), model: page.modelName, nLayer: page.config.nLayer, compare: compare ?? undefined }),
    mark: { row: S.sel.row, col: S.sel.col }, minCell: MIN_CELL, maskFromModel: layerMask(page.last.spec) !== maskOption(page.last.spec),
  }, { split });
  if (!svg) return;
  outlineCell(svg, ['attention', 'asymmetry', 'asymmetry-full'], S.sel.row, S.sel.col);
  scrollToCell('fig1', svg);
  const btn = $('fig1-compare');
  if (btn) btn.setAttribute('aria-pressed', String(S.compareFull));
}

export async function drawFig2({ split = false } = {}) {
  const r = page.last.base;
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

export async function drawFig3({ split = false } = {}) {
  const r = page.last.base;
  if (!changed('fig3', [baseId(r), S.layer, S.head, layerMask(page.last.spec)])) return;
  await mount('fig3', figDag, figureArgs('fig3', r, pageView(r)), { split });
}

export async function drawFig4({ split = false } = {}) {
  const r = page.last.base;
  if (!changed('fig4', [baseId(r), S.layer, S.head, S.sel.row, S.sel.col, S.lambda, layerMask(page.last.spec)])) return;
  const svg = await mount('fig4', figDoIntervention, { ...figureArgs('fig4', r, pageView(r)), minCell: MIN_CELL }, { split });
  if (!svg) return;
  outlineCell(svg, ['original', 'soft-do', 'hard-do'], S.sel.row, S.sel.col);
  scrollToCell('fig4', svg);
}

/** The figures in the order they are drawn: each one's key (its section's id in index.html) and its draw step. */
export const FIGURES = [['fig1', drawFig1], ['fig2', drawFig2], ['fig3', drawFig3], ['fig4', drawFig4]];

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

/** Each figure's finding and what it cannot show (fig-findings.js), from the arguments it was drawn with. */
export function writeFindings() {
  if (!page.last || !S.sel) return;
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
  line('fig2', a2 && !S.demo && a2.q ? fig2Finding({ ...a2, mask: layerMask(page.last.spec) }, t) : null);
  line('fig3', a3 ? fig3Finding(a3, t) : null);
  // the in-model KL belongs to this line only when the run's do is the drawn cell's
  const iv = page.last.intervention;
  const kl = a4 && iv && iv.row === a4.row && iv.col === a4.col && Number.isFinite(page.last.kl) ? page.last.kl : null;
  line('fig4', a4 ? fig4Finding(a4, { kl }, t) : null);
}

/** True when the last run's heatmaps are bitmaps (big T): then drawing yields between figures. */
export function bigT() {
  return !!page.last && page.last.base.T * page.last.base.T > RASTER_CELLS;
}

/** Let the browser run other tasks (input, paint) before the next step of a redraw. */
export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
// After the next frame: a big figure put into the DOM then has a frame (style, layout,
// paint) of its own instead of sharing one with the figures mounted before it.
export const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

/**
 * Append `nodes` to `parent` `batch` at a time, a frame between batches (big T: a frame then
 * styles and lays out a batch, not all of them). Resolves to false when `stale()` turns true.
 */
export async function appendInFrames(parent, nodes, batch, stale) {
  for (let k = 0; k < nodes.length; k += batch) {
    await nextFrame();
    if (stale()) return false;
    parent.append(...nodes.slice(k, k + batch));
  }
  return true;
}

// ── export ──────────────────────────────────────────────────────────────────

/** What figure `key` shows, for its export's name and text (page/export.js viewLabel). */
function exportView(key) {
  const r = page.last.base;
  const view = { model: page.modelName, layer: S.layer, head: S.head, mask: layerMask(page.last.spec) };
  const ablated = (page.last.spec.ablate || []).map(([l, h]) => `L${l}H${h}`).join(' ');
  const more = [`text "${titleSentence(page.last.spec.text)}"`, ablated ? `ablated ${ablated}` : ''];
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

/** Download figure `key` as `kind` (svg | png), at the chapter's size. */
export async function exportOne(key, kind) {
  if (!figArgs[key] || !page.last) return;
  const [fn, args] = figArgs[key];
  try {
    await exportFigure(key, vectorOnly(() => fn({ ...args, lang: S.lang, tight: true })), kind, exportView(key));
  } catch (e) {
    showError(explain(e, t), 'export');
  }
}
