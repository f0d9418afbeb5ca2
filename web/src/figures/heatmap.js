// heatmap.js — the heatmap panel every figure's matrices are drawn with.

import { SIN45, Y_TITLE_MIN, colorbar, fitYTitle, labelNeed, labelStep, yTitleLines } from './axes.js';
import { textColorOn } from './colour.js';
import { titleRoom } from './layout.js';
import { rasterImage, rasterize } from './raster.js';
import { h } from './svg.js';
import { FONT, INK, blockHeight, fmtValue, lineWidth, richText, textWidth, titleBlock } from './text.js';

/**
 * A heatmap panel. o: {
 *   values: Float64Array R*C (row-major), R, C,
 *   color: v → css colour, cbar: {scale (d3 scale with .domain()/.ticks()), format} | null,
 *   xLabels, yLabels: string[] (plain text; null → none), rotateX: boolean,
 *   xTitle, yTitle: line | null, title: line[],
 *   annotate: (v) → string | null (values printed in cells),
 *   cellTitle: (i, j, v) → string (hover tooltip), role: data-role of the cell group,
 *   box: {row} | {row, col} | null (an outline on a row or a cell), boxColor,
 *   mark: {row, col} | null (the chosen cell: its row's and column's labels always drawn, bold) }
 */
export function heatmapPanel(o, yFit = { lines: yTitleLines(o.yTitle), size: FONT.label }) {
  const m = margins(o, yFit);
  const titleW = Math.max(0, ...o.title.map((l) => lineWidth(l, FONT.title, true)));
  // At scale s the plot is ah·s px tall; a y title longer than that is wrapped (and
  // if need be shrunk) to fit it, which widens the left margin: layoutFigure asks
  // when it stacks the panels.
  const withScale = (s) => {
    const fit = fitYTitle(yTitleLines(o.yTitle), m.ah * s);
    const same = fit.size === yFit.size && fit.lines.length === yFit.lines.length &&
      fit.lines.every((l, k) => l === yFit.lines[k]);
    return same ? panel : heatmapPanel(o, fit);
  };
  const { left, right, top, bottom, aw, ah, hang } = m;
  const panel = {
    left: left + hang, right, top, bottom, aw, ah, titleW, withScale,
    render: (x0, y0, s, vis) => renderPanel(o, m, yFit, x0 + hang, y0, s, vis),
  };
  return panel;
}

/** The panel's margins from its labels, titles and colour bar, and its aspect (aw × ah). */
function margins(o, yFit) {
  const { R, C } = o;
  const xl = o.xLabels || null, yl = o.yLabels || null;
  const tick = FONT.tick;
  const yLabW = yl ? Math.max(...yl.map((s) => textWidth(s, tick))) : 0;
  const xLabW = xl ? Math.max(...xl.map((s) => textWidth(s, tick))) : 0;
  const yTitleW = yFit.size * 1.25 * yFit.lines.length;
  const left = yTitleW + (yl ? yLabW + 6 : 0) + 4;
  const xLabH = xl ? (o.rotateX ? xLabW * SIN45 + tick * SIN45 + 6 : tick * 1.3 + 4) : 0;
  const bottom = xLabH + (o.xTitle ? FONT.label * 1.3 + 4 : 0) + 2;
  const cbarTickW = o.cbar ? Math.max(...o.cbar.scale.ticks(6).map((t) => textWidth(o.cbar.format(t), FONT.cbar))) : 0;
  const right = o.cbar ? 16 + 14 + 5 + cbarTickW + 4 : 4;
  const top = blockHeight(o.title, FONT.title) + 8;
  const aw = C >= R ? 1 : C / R, ah = R >= C ? 1 : R / C;
  // Rotated x labels hang left of the plot; make sure the left margin covers them.
  const hang = xl && o.rotateX ? Math.max(0, xLabW * SIN45 - left) : 0;
  return { left, right, top, bottom, aw, ah, hang, xLabW, xLabH };
}

/**
 * The panel's nodes with its plot's top left corner at (x0, y0), at scale s. vis: how much of
 * the plot a scrolled box shows first (a stacked figure wider than its box): the titles are
 * centred in that part.
 */
function renderPanel(o, m, yFit, x0, y0, s, vis) {
  const cell = (m.aw * s) / o.C;
  const g = { x0, y0, cell, pw: cell * o.C, ph: cell * o.R };
  const raster = rasterize(o.R, o.C);
  const cw = vis > 0 ? Math.min(g.pw, vis) : g.pw;
  const kids = [
    titleBlock(x0 + cw / 2, y0 - m.top + FONT.title, o.title,
      { size: FONT.title, weight: 'bold', role: 'panel-title', maxW: titleRoom(cw, m.left, m.right) }),
    raster ? bitmapCells(o, g) : vectorCells(o, g),
  ];
  // values printed in the cells (not on a bitmap: its cells are too small to print in)
  if (o.annotate && !raster) kids.push(annotations(o, g));
  if (o.box) kids.push(outline(o, g));
  if (o.yLabels) kids.push(yTicks(o, g));
  if (o.xLabels) kids.push(xTicks(o, g, m.xLabW));
  if (o.xTitle) kids.push(richText(x0 + cw / 2, y0 + g.ph + m.xLabH + FONT.label + 2, o.xTitle, { size: FONT.label, role: 'xtitle' }));
  kids.push(...yTitle(yFit, x0 - m.left, y0 + g.ph / 2, g.ph));
  if (o.cbar) kids.push(colorbar(x0 + g.pw + 16, y0 + g.ph * 0.1, 14, g.ph * 0.8, o.cbar.scale, o.cbar.format));
  return h('g', { 'data-role': 'panel' }, kids);
}

function tipOf(o) {
  return (i, j, v) => (o.cellTitle ? o.cellTitle(i, j, v) : `(${i}, ${j}): ${fmtValue(v)}`);
}

function bitmapCells(o, { x0, y0, pw, ph }) {
  const { R, C, values } = o;
  const tip = tipOf(o);
  return h('g', { 'data-role': o.role || 'heatmap' }, rasterImage(x0, y0, pw, ph, {
    values, R, C, color: o.color,
    title: (i, j) => tip(i, j, values[i * C + j]), value: (i, j) => fmtValue(values[i * C + j]),
  }));
}

/** A missing value (NaN): its cell is grey and hatched, marked data-missing, and not annotated. */
export const MISSING_FILL = '#d9d9d9';
const HATCH = '#8c8c8c';

/**
 * The cells of a heatmap as <rect>s (with data-i/j/v and a tooltip) in the group
 * o.role, and a hatch over missing ones. o: {values, R, C, color, cellTitle, role};
 * g: {x0, y0, cell}.
 */
export function vectorCells(o, { x0, y0, cell }, defaultRole = 'heatmap') {
  const tip = tipOf(o);
  const cells = [], hatch = [];
  for (let i = 0; i < o.R; i++) {
    for (let j = 0; j < o.C; j++) {
      const v = o.values[i * o.C + j];
      const ok = Number.isFinite(v);
      const x = x0 + j * cell, y = y0 + i * cell;
      cells.push(h('rect', {
        x, y, width: cell, height: cell, fill: ok ? o.color(v) : MISSING_FILL,
        'data-i': i, 'data-j': j, 'data-v': fmtValue(v), 'data-missing': ok ? null : '1',
      }, h('title', null, tip(i, j, v))));
      if (!ok) hatch.push(hatchPath(x, y, cell));
    }
  }
  const g = h('g', { 'data-role': o.role || defaultRole, 'shape-rendering': 'crispEdges' }, cells);
  if (!hatch.length) return g;
  return [g, h('path', { d: hatch.join(''), stroke: HATCH, 'stroke-width': 0.8, fill: 'none', 'pointer-events': 'none', 'data-role': 'hatch' })];
}

function hatchPath(x, y, c) {
  const p = (a, b) => `${a.toFixed(2)} ${b.toFixed(2)}`;
  return `M${p(x, y + c)}L${p(x + c, y)}M${p(x, y + c / 2)}L${p(x + c / 2, y)}M${p(x + c / 2, y + c)}L${p(x + c, y + c / 2)}`;
}

/** The values printed in the cells (o.annotate(v); null, and missing values, print nothing), at least minSize px. */
export function annotations(o, { x0, y0, cell }, minSize = 4) {
  const size = Math.max(minSize, Math.min(FONT.annot, cell * 0.3));
  const ann = [];
  for (let i = 0; i < o.R; i++) {
    for (let j = 0; j < o.C; j++) {
      const v = o.values[i * o.C + j];
      const s = Number.isFinite(v) ? o.annotate(v) : null;
      if (s === null || s === undefined) continue;
      ann.push(h('text', {
        x: x0 + (j + 0.5) * cell, y: y0 + (i + 0.5) * cell + size * 0.36, 'font-size': size,
        'text-anchor': 'middle', fill: textColorOn(o.color(v)), 'data-i': i, 'data-j': j,
      }, s));
    }
  }
  return h('g', { 'data-role': 'annotations', 'pointer-events': 'none' }, ann);
}

/** The outline on a row (Fig. 4's intervened row) or a cell (Fig. 2's chosen cell). */
function outline(o, { x0, y0, cell, pw }) {
  const bx = o.box.col === undefined ? x0 : x0 + o.box.col * cell;
  const bw = o.box.col === undefined ? pw : cell;
  return h('rect', {
    x: bx, y: y0 + o.box.row * cell, width: bw, height: cell, fill: 'none',
    stroke: o.boxColor || '#0000ff', 'stroke-width': 2.5, 'data-role': 'box', 'data-row': o.box.row,
    'data-col': o.box.col, 'pointer-events': 'none',
  });
}

// The chosen row's and column's labels (o.mark = {row, col}) are always drawn, bold and in the
// page's row / column colours, whatever the label step (at T = 256 a label every fifth token or
// so); the regular labels too close to them are left out.
const MARK_ROW = '#1f5fbf', MARK_COL = '#c2410c';

/** The indices whose labels are drawn along an axis of n cells: every st-th, and `marked` (skipping its neighbours). */
function labelled(n, st, need, cell, marked) {
  const ks = [];
  const near = marked === undefined || marked === null ? () => false : (k) => k !== marked && Math.abs(k - marked) * cell < need;
  for (let k = 0; k < n; k += st) if (!near(k)) ks.push(k);
  if (marked !== undefined && marked !== null && marked >= 0 && marked < n && !ks.includes(marked)) ks.push(marked);
  return ks.sort((a, b) => a - b);
}

const markAttrs = (on, colour) => (on ? { 'font-weight': 'bold', fill: colour, 'data-mark': '1' } : {});

function yTicks(o, { x0, y0, cell }) {
  const tick = FONT.tick;
  const need = labelNeed('y', tick);
  const mark = o.mark ? o.mark.row : null;
  const g = labelled(o.R, labelStep(cell, need), need, cell, mark).map((i) => h('text', {
    x: x0 - 6, y: y0 + (i + 0.5) * cell + tick * 0.35, 'text-anchor': 'end', 'data-i': i, ...markAttrs(i === mark, MARK_ROW),
  }, o.yLabels[i]));
  return h('g', { 'data-role': 'ylabels', 'font-size': tick, fill: INK }, g);
}

function xTicks(o, { x0, y0, cell, ph }, xLabW) {
  const tick = FONT.tick;
  const need = o.rotateX ? labelNeed('rotated', tick) : labelNeed('horizontal', tick, xLabW);
  const mark = o.mark ? o.mark.col : null;
  const g = labelled(o.C, labelStep(cell, need), need, cell, mark).map((j) => {
    const x = x0 + (j + 0.5) * cell;
    const m = markAttrs(j === mark, MARK_COL);
    if (!o.rotateX) return h('text', { x, y: y0 + ph + 4 + tick, 'text-anchor': 'middle', 'data-j': j, ...m }, o.xLabels[j]);
    const y = y0 + ph + 6;
    const ax = x + tick * 0.3, ay = y + tick * 0.3;
    return h('text', { x: ax, y: ay, 'text-anchor': 'end', transform: `rotate(-45 ${ax} ${ay})`, 'data-j': j, ...m }, o.xLabels[j]);
  });
  return h('g', { 'data-role': 'xlabels', 'font-size': tick, fill: INK }, g);
}

/** The y title's lines, rotated, from the panel's left edge xl, centred on y. */
function yTitle({ lines, size: ySize }, xl, y, ph) {
  return lines.map((ln, k) => {
    const x = xl + ySize * (1.0 + 1.25 * k);
    // never taller than the plot (it would run into the title and the x labels): shrink if it still is
    const w = lineWidth(ln, ySize);
    const size = w > ph ? Math.max(Y_TITLE_MIN, (ySize * ph) / w) : ySize;
    return richText(x, y, ln, { size, transform: `rotate(-90 ${x} ${y})`, role: 'ytitle' });
  });
}
