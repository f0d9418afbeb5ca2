// controls.js — the controls of the view: the layer and head, the cell (the selects, a click on a figure, the arrow
// keys), the do's kind and λ, Fig. 2's demo, the mask and its window, the ablation grid, the sentence (taken as
// it is typed, debounced), the run's JSON export and the redraw on a resize. Each changes the view through
// state.js setView, redraws what it moves at once (render.js renderLocal) and asks the runner for the rest.

import { $, el, replace, setOptions } from '../ui/dom.js';
import { attachTooltip, titleText } from '../ui/tooltip.js';
import { rovingGrid } from '../ui/roving.js';
import { tokenLabel } from '../figures/index.js';
import { S, page, t, setView, schedule } from './state.js';
import { FIGURES, figBox, labelsOf, viewMatrix, drawFig1, drawFig2, exportOne } from './draw.js';
import { exportJson } from './inmodel.js';
import { renderAll, renderLocal } from './render.js';

/** The controls show S (after a link or back/forward). */
export function syncControls() {
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

/** The controls of a new model (or language): its layers and heads, the ablation grid, the window's bound. */
export function setupModelControls() {
  const L = page.config.nLayer, H = page.config.nHead;
  if (S.layer === null || S.layer >= L) setView({ layer: L - 1 });
  if (S.head !== 'avg' && S.head >= H) setView({ head: 'avg' });
  setOptions($('layer'), Array.from({ length: L }, (_, l) => ({ value: l, label: t('layerOpt', l, l === L - 1) })), S.layer);
  setOptions($('head'), [{ value: 'avg', label: t('headAvg') }, ...Array.from({ length: H }, (_, h) => ({ value: h, label: t('headOpt', h) }))], S.head);
  setView({ ablate: new Set([...S.ablate].filter((k) => { const [l, h] = k.split('.').map(Number); return l < L && h < H; })) });
  buildAblationGrid();
  $('window').max = String(page.config.nPositions);
}

function buildAblationGrid() {
  const L = page.config.nLayer, H = page.config.nHead;
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
  if (!page.last) return;
  const T = page.last.base.T;
  row = Math.max(0, Math.min(T - 1, row));
  col = Math.max(0, Math.min(T - 1, col));
  setView({ sel: { row, col, text: S.text } });
  renderLocal({ fig1: true, fig2: true, fig4: true });
  schedule();
  if (focusFig) document.querySelector(`#${focusFig} .fig-svg`)?.focus();
}

/** Say the chosen cell to a screen reader (#cell-live, polite): its row and column tokens and the attention. */
function announceCell() {
  if (!page.last || !S.sel) return;
  const { row, col } = S.sel;
  const { labels } = labelsOf(page.last);
  const A = viewMatrix(page.last.base), T = page.last.base.T;
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

/** The figures: a click or the arrow keys choose the cell; each figure's export (and Fig. 1's compare) buttons; tooltips. */
function wireFigures() {
  for (const [key] of FIGURES) {
    const box = figBox(key);
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
        on: { click: () => { setView({ compareFull: !S.compareFull }); if (page.last && page.config) drawFig1(); } },
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


/** The figures and the controls of the view (the model's controls are loading.js's; the language and the link main.js's). */
export function wireControls() {
  wireTextControls();
  wireViewControls();
  wireMaskControls();
  $('export-json').addEventListener('click', exportJson);
  wireResize();
  wireFigures();
}

/** The text: taken live (debounced) and on submit / Enter. */
function wireTextControls() {
  let timer = 0;
  const takeText = () => {
    clearTimeout(timer);
    const v = $('text').value;
    if (v === S.text) return;
    setView({ text: v });
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
    setView({ layer: Number(e.target.value) });
    renderLocal({ fig1: true, fig4: true });
    schedule();
  });
  $('head').addEventListener('change', (e) => {
    setView({ head: e.target.value === 'avg' ? 'avg' : Number(e.target.value) });
    renderLocal({ fig1: true, fig4: true });
    schedule();
  });

  // do
  $('row').addEventListener('change', (e) => setSelection(Number(e.target.value), S.sel.col));
  $('col').addEventListener('change', (e) => setSelection(S.sel.row, Number(e.target.value)));
  for (const r of document.querySelectorAll('input[name="kind"]')) {
    r.addEventListener('change', (e) => { if (e.target.checked) { setView({ kind: e.target.value }); schedule(); } });
  }
  $('lambda').addEventListener('input', (e) => {
    setView({ lambda: Number(e.target.value) });
    $('lambda-out').textContent = S.lambda.toFixed(1);
    renderLocal({ fig4: true });
    if (S.kind === 'soft') schedule();
  });
  $('demo').addEventListener('change', (e) => {
    setView({ demo: e.target.checked });
    if (page.last) drawFig2();
  });
  $('kl-zero-fix').addEventListener('click', () => {
    setView({ layer: 0 });
    $('layer').value = '0';
    renderLocal({ fig1: true, fig4: true });
    schedule();
  });
}

/** The attention mask, its window W and the head ablation grid. */
function wireMaskControls() {
  $('mask').addEventListener('change', (e) => {
    setView({ mask: e.target.value });
    $('window').disabled = S.mask !== 'window';
    schedule();
  });
  // the window W: a whole number from 1 to the model's context; anything else is
  // refused with a note beside the box (it was ignored silently)
  $('window').addEventListener('input', (e) => {
    const raw = e.target.value;
    const w = Number(raw);
    const max = page.config ? page.config.nPositions : 1024;
    const ok = raw.trim() !== '' && Number.isInteger(w) && w >= 1 && w <= max;
    const note = $('window-note');
    note.hidden = ok;
    note.textContent = ok ? '' : t('windowBad', raw === '' ? '—' : raw, max, S.window);
    if (ok) e.target.removeAttribute('aria-invalid'); else e.target.setAttribute('aria-invalid', 'true');
    if (!ok) return;
    setView({ window: w });
    if (S.mask === 'window') schedule();
  });
  $('ablation').addEventListener('change', (e) => {
    const c = e.target;
    if (!c.dataset.layer) return;
    const key = `${c.dataset.layer}.${c.dataset.head}`;
    const ablate = new Set(S.ablate);
    if (c.checked) ablate.add(key); else ablate.delete(key);
    setView({ ablate });
    schedule();
  });
  $('ablation-clear').addEventListener('click', () => {
    if (!S.ablate.size) return;
    setView({ ablate: new Set() });
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
