// figures/circuits.js — the charts of "Where a head looks, what it moves" (page/circuits-panel.js,
// docs/evidence.md § 6–11), as SVG node trees (svg.js): data in, node out, no DOM, so they run in Node too.
//
//   headGrid          a layers × heads grid of estimates {mean, lo, hi}: each cell coloured by its mean,
//                     the mean printed in it, its interval in its tooltip and data-lo / data-hi; a cell with
//                     no value (null mean: "not applicable") grey and hatched, never 0; one cell outlined
//   compositionStrip  one row per kind (Q, K, V): every head pair's score a dot, the null's 95 % range a grey
//                     band and its 97.5 % point a dashed line; the pairs above it named
//   sourceBars        signed bars, one per source position (a head's direct logit term split by the token it
//                     reads), the positions where the pair differs marked

import { scaleLinear } from 'd3-scale';
import { h, SVG_NS } from './svg.js';
import { colorbar } from './axes.js';
import { textColorOn } from './colour.js';
import { MISSING_FILL } from './heatmap.js';
import { fmtValue, textWidth, wrapLines, INK, FONT_FAMILY, FONT_FAMILY_ZH } from './text.js';

const family = (lang) => (lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY);
const finite = (v) => typeof v === 'number' && Number.isFinite(v);
const HATCH = '#8c8c8c';

function svgRoot(W, H, lang, attrs, kids) {
  return h('svg', {
    xmlns: SVG_NS, width: Math.round(W), height: Math.round(H), viewBox: `0 0 ${Math.round(W)} ${Math.round(H)}`,
    'font-family': family(lang), role: 'img', ...attrs,
  }, h('rect', { x: 0, y: 0, width: Math.round(W), height: Math.round(H), fill: '#ffffff', 'data-role': 'background' }), kids);
}

function hatchPath(x, y, c) {
  const p = (a, b) => `${a.toFixed(2)} ${b.toFixed(2)}`;
  return `M${p(x, y + c)}L${p(x + c, y)}M${p(x, y + c / 2)}L${p(x + c / 2, y)}M${p(x + c / 2, y + c)}L${p(x + c, y + c / 2)}`;
}

/** The cells of headGrid: a rect a cell (data-k, data-name, data-v, data-lo, data-hi, a tooltip), hatches, printed means. */
function gridCells(o, x0, y0, cell) {
  const { R, C } = o;
  const rects = [], hatch = [], ann = [];
  const size = Math.max(7, Math.min(11, cell * 0.34));
  for (let i = 0; i < R; i++) {
    for (let j = 0; j < C; j++) {
      const k = i * C + j, it = o.cells[k], ok = !!it && finite(it.mean);
      const x = x0 + j * cell, y = y0 + i * cell;
      const fill = ok ? o.color(it.mean) : MISSING_FILL;
      rects.push(h('rect', {
        x, y, width: cell, height: cell, fill, 'data-i': i, 'data-j': j, 'data-k': k, 'data-name': o.names ? o.names(k) : null,
        'data-v': ok ? fmtValue(it.mean) : 'NaN', 'data-lo': ok && finite(it.lo) ? fmtValue(it.lo) : null,
        'data-hi': ok && finite(it.hi) ? fmtValue(it.hi) : null, 'data-missing': ok ? null : '1',
      }, h('title', null, o.cellTitle ? o.cellTitle(k, it) : `${k}: ${ok ? fmtValue(it.mean) : '—'}`)));
      if (!ok) hatch.push(hatchPath(x, y, cell));
      else if (o.annotate && cell >= 20) {
        const s = o.annotate(it.mean);
        if (s !== null && s !== undefined) ann.push(h('text', { x: x + cell / 2, y: y + cell / 2 + size * 0.36, 'font-size': size, 'text-anchor': 'middle', fill: textColorOn(fill) }, s));
      }
    }
  }
  return { rects, hatch, ann };
}

/**
 * A grid of estimates. o: {
 *   cells: ({mean, lo, hi} | null)[] R*C row-major (a null mean: no value, hatched),
 *   R, C, color: v → css, cell (px; or maxW to fit, between 14 and 40),
 *   rowLabels, colLabels, rowTitle, colTitle, title,
 *   names: k → string (data-name of cell k, e.g. 'L1H0'),
 *   cellTitle: (k, cell) → string (the tooltip), annotate: v → string | null,
 *   selected: k | null (outlined), cbar: {scale, format} | null, rowGroup: n (a line after every n rows),
 *   naLegend: string | null (beside a hatched swatch under the grid, when a cell has no value),
 *   role, lang, attrs }
 */
export function headGrid(o) {
  const { R, C } = o;
  const tick = 11;
  const rl = o.rowLabels || null, cl = o.colLabels || null;
  const rowLabW = rl ? Math.max(...rl.map((s) => textWidth(s, tick))) + 6 : 0;
  const left = 8 + (o.rowTitle ? 18 : 0) + rowLabW;
  const top = 6 + (o.title ? 20 : 0) + (o.colTitle ? 16 : 0) + (cl ? tick + 6 : 0);
  const cbarTickW = o.cbar ? Math.max(...o.cbar.scale.ticks(5).map((t) => textWidth(o.cbar.format(t), 11))) : 0;
  const right = o.cbar ? 14 + 12 + 6 + cbarTickW + 6 : 8;
  let cell = o.cell;
  if (!cell) cell = Math.max(14, Math.min(40, o.maxW ? (o.maxW - left - right) / C : 30));
  const missing = o.cells.some((x) => !x || !finite(x.mean));
  const legendH = o.naLegend && missing ? 22 : 0;
  const pw = cell * C, ph = cell * R;
  const titleW = Math.max(o.title ? textWidth(o.title, 13, true) + 16 : 0, o.colTitle ? left + textWidth(o.colTitle, 11.5) + 8 : 0);
  const legendW = legendH ? 8 + 16 + 6 + textWidth(o.naLegend, 10.5) + 8 : 0;
  const W = Math.max(left + pw + right, titleW, legendW);
  const x0 = left + Math.max(0, (W - (left + pw + right)) / 2), y0 = top;
  const bottom = 8 + legendH;
  const kids = [];
  if (o.title) kids.push(h('text', { x: W / 2, y: 18, 'text-anchor': 'middle', 'font-size': 13, 'font-weight': 'bold', fill: INK, 'data-role': 'title' }, o.title));
  if (o.colTitle) kids.push(h('text', { x: x0 + pw / 2, y: (o.title ? 20 : 0) + 16, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555' }, o.colTitle));
  const { rects, hatch, ann } = gridCells(o, x0, y0, cell);
  kids.push(h('g', { 'data-role': o.role || 'grid', 'shape-rendering': 'crispEdges' }, rects));
  if (hatch.length) kids.push(h('path', { d: hatch.join(''), stroke: HATCH, 'stroke-width': 0.8, fill: 'none', 'pointer-events': 'none', 'data-role': 'hatch' }));
  if (ann.length) kids.push(h('g', { 'data-role': 'annotations', 'pointer-events': 'none' }, ann));
  kids.push(h('rect', { x: x0, y: y0, width: pw, height: ph, fill: 'none', stroke: '#999999', 'stroke-width': 0.6, 'pointer-events': 'none' }));
  if (o.rowGroup > 1 && o.rowGroup < R) {
    // a line between groups of rows (the layers of a grid whose rows are heads)
    const d = [];
    for (let i = o.rowGroup; i < R; i += o.rowGroup) d.push(`M${x0.toFixed(2)} ${(y0 + i * cell).toFixed(2)}h${pw.toFixed(2)}`);
    kids.push(h('path', { d: d.join(''), stroke: '#666666', 'stroke-width': 1, fill: 'none', 'pointer-events': 'none', 'data-role': 'row-groups' }));
  }
  if (o.selected !== null && o.selected !== undefined && o.selected >= 0 && o.selected < R * C) {
    const i = Math.floor(o.selected / C), j = o.selected % C;
    kids.push(h('rect', { x: x0 + j * cell + 1, y: y0 + i * cell + 1, width: cell - 2, height: cell - 2, fill: 'none', stroke: '#1f4fd1',
      'stroke-width': 2.5, 'pointer-events': 'none', 'data-role': 'selected', 'data-k': o.selected }));
  }
  if (rl) {
    const step = Math.max(1, Math.ceil((tick * 1.1) / cell));
    const g = [];
    for (let i = 0; i < R; i += step) g.push(h('text', { x: x0 - 5, y: y0 + (i + 0.5) * cell + tick * 0.35, 'text-anchor': 'end' }, rl[i]));
    kids.push(h('g', { 'font-size': tick, fill: INK, 'data-role': 'rowlabels' }, g));
  }
  if (o.rowTitle) {
    const x = x0 - rowLabW - 10, y = y0 + ph / 2;
    kids.push(h('text', { x, y, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555', transform: `rotate(-90 ${x} ${y})` }, o.rowTitle));
  }
  if (cl) {
    const need = Math.max(...cl.map((s) => textWidth(s, tick))) + 4;
    const step = Math.max(1, Math.ceil(need / cell));
    const g = [];
    for (let j = 0; j < C; j += step) g.push(h('text', { x: x0 + (j + 0.5) * cell, y: y0 - 5, 'text-anchor': 'middle' }, cl[j]));
    kids.push(h('g', { 'font-size': tick, fill: INK, 'data-role': 'collabels' }, g));
  }
  if (o.cbar) kids.push(colorbar(x0 + pw + 14, y0 + 2, 12, Math.max(40, ph - 4), o.cbar.scale, o.cbar.format));
  if (legendH) {
    const ly = y0 + ph + 10, lx = 8;
    kids.push(h('g', { 'data-role': 'na-legend' },
      h('rect', { x: lx, y: ly, width: 16, height: 12, fill: MISSING_FILL, stroke: '#999999', 'stroke-width': 0.6 }),
      h('path', { d: hatchPath(lx + 2, ly, 12), stroke: HATCH, 'stroke-width': 0.8, fill: 'none' }),
      h('text', { x: lx + 22, y: ly + 10, 'font-size': 10.5, fill: '#555' }, o.naLegend)));
  }
  return svgRoot(W, top + ph + bottom, o.lang, { 'aria-label': o.title || '', ...o.attrs }, kids);
}

/**
 * Composition scores against their null. o: {
 *   rows: [{key, label, color, points: [{v, name}], null: {mean, lo, hi}}],
 *   title, xTitle, width, lang, top (how many pairs above the null to name per row, default 2),
 *   pointTitle: (row, point) → string,
 *   legend: {points, band, line} (strings) }
 */
export function compositionStrip(o) {
  const W = o.width || 520, rowH = 64, nameTop = o.top ?? 2;
  const labW = Math.max(...o.rows.map((r) => textWidth(r.label, 12, true))) + 14;
  const left = labW + 6, right = 14;
  const lg = o.legend || {};
  const entries = [['points', lg.points], ['band', lg.band], ['line', lg.line]].filter(([, s]) => s);
  // the legend on as many lines as it needs
  const lines = [[]];
  let lx = 8;
  for (const [kind, text] of entries) {
    const w = 22 + textWidth(text, 10.5) + 14;
    if (lx > 8 && lx + w > W - 6) { lines.push([]); lx = 8; }
    lines.at(-1).push({ kind, text, x: lx });
    lx += w;
  }
  const top0 = o.title ? 26 : 8, top = top0 + (entries.length ? lines.length * 16 + 6 : 0);
  const plotBottom = top + o.rows.length * rowH, H = plotBottom + (o.xTitle ? 38 : 22);
  let hi = 0;
  for (const r of o.rows) {
    for (const p of r.points) if (finite(p.v)) hi = Math.max(hi, p.v);
    if (r.null && finite(r.null.hi)) hi = Math.max(hi, r.null.hi);
  }
  const x = scaleLinear().domain([0, hi > 0 ? hi * 1.04 : 1]).nice().range([left, W - right]);
  const kids = [];
  if (o.title) kids.push(h('text', { x: 8, y: 16, 'font-size': 13, 'font-weight': 'bold', fill: INK, 'data-role': 'title' }, o.title));
  lines.forEach((line, li) => {
    const y = top0 + li * 16 + 8;
    for (const { kind, text, x: gx } of line) {
      if (kind === 'points') kids.push(h('circle', { cx: gx + 9, cy: y, r: 3.5, fill: '#555', 'fill-opacity': 0.8 }));
      else if (kind === 'band') kids.push(h('rect', { x: gx, y: y - 6, width: 18, height: 12, fill: '#8c8c8c', 'fill-opacity': 0.28 }));
      else kids.push(h('line', { x1: gx + 9, y1: y - 7, x2: gx + 9, y2: y + 7, stroke: '#b2182b', 'stroke-width': 1.6, 'stroke-dasharray': '4 2' }));
      kids.push(h('text', { x: gx + 22, y: y + 3.5, 'font-size': 10.5, fill: INK }, text));
    }
  });
  for (const t of x.ticks(6)) {
    kids.push(h('line', { x1: x(t), y1: top, x2: x(t), y2: plotBottom, stroke: '#ececec', 'stroke-width': 0.8 }),
      h('text', { x: x(t), y: plotBottom + 13, 'text-anchor': 'middle', 'font-size': 10, fill: '#444' }, fmtValue(t)));
  }
  kids.push(h('line', { x1: left, y1: plotBottom, x2: W - right, y2: plotBottom, stroke: '#666' }));
  if (o.xTitle) kids.push(h('text', { x: (left + W - right) / 2, y: plotBottom + 29, 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }, o.xTitle));
  o.rows.forEach((r, ri) => {
    const y0 = top + ri * rowH, cy = y0 + rowH / 2, g = [];
    if (ri % 2 === 1) kids.push(h('rect', { x: 0, y: y0, width: W, height: rowH, fill: '#f6f6f3' }));
    g.push(h('text', { x: labW, y: cy + 4, 'text-anchor': 'end', 'font-size': 12, 'font-weight': 'bold', fill: INK }, r.label));
    const nul = r.null || {};
    if (finite(nul.lo) && finite(nul.hi)) {
      g.push(h('rect', { x: x(nul.lo), y: y0 + 14, width: Math.max(1.5, x(nul.hi) - x(nul.lo)), height: rowH - 28, fill: '#8c8c8c', 'fill-opacity': 0.28,
        'data-role': 'null-band', 'data-lo': fmtValue(nul.lo), 'data-hi': fmtValue(nul.hi), 'data-mean': finite(nul.mean) ? fmtValue(nul.mean) : null }));
    }
    const line = finite(nul.hi) ? nul.hi : null;
    const pts = r.points.map((p, k) => ({ ...p, k })).filter((p) => finite(p.v));
    // the strongest pairs above the line are named, on a lane above (first) and below (second) the dots
    const named = new Map(pts.filter((p) => line !== null && p.v > line).sort((a, b) => b.v - a.v).slice(0, nameTop).map((p, ni) => [p.k, ni]));
    const band = rowH - 30; // the dots' jitter, between the two lanes
    pts.forEach((p, pi) => {
      const above = line !== null && p.v > line;
      const j = named.has(p.k) ? 0 : ((pi * 0.6180339887) % 1 - 0.5) * band;
      g.push(h('circle', { cx: x(p.v), cy: cy + j, r: named.has(p.k) ? 4.2 : above ? 3.4 : 2.6, fill: above ? r.color : '#8a8a8a',
        'fill-opacity': above ? 0.95 : 0.55, stroke: named.has(p.k) ? INK : null, 'stroke-width': named.has(p.k) ? 1 : null,
        'data-role': 'pair', 'data-name': p.name, 'data-v': fmtValue(p.v), 'data-above': above ? '1' : null },
      h('title', null, o.pointTitle ? o.pointTitle(r, p) : `${p.name}: ${fmtValue(p.v)}`)));
    });
    if (line !== null) {
      g.push(h('line', { x1: x(line), y1: y0 + 12, x2: x(line), y2: y0 + rowH - 12, stroke: '#b2182b', 'stroke-width': 1.6, 'stroke-dasharray': '4 2',
        'data-role': 'null-hi', 'data-v': fmtValue(line) }));
    }
    for (const [k, ni] of named) {
      const p = pts.find((q) => q.k === k), px = x(p.v), tw = textWidth(p.name, 10.5);
      const ly = ni === 0 ? y0 + 10 : y0 + rowH - 3;
      const tx = Math.max(left, Math.min(W - right - tw, px - tw / 2));
      g.push(h('line', { x1: px, y1: ni === 0 ? ly + 2 : cy + 4, x2: px, y2: ni === 0 ? cy - 4 : ly - 9, stroke: '#777', 'stroke-width': 0.8 }),
        h('text', { x: tx, y: ly, 'font-size': 10.5, fill: INK, stroke: '#ffffff', 'stroke-width': 3, 'paint-order': 'stroke',
          'stroke-linejoin': 'round', 'data-role': 'pair-label' }, p.name));
    }
    kids.push(h('g', { 'data-role': 'kind', 'data-kind': r.key }, g));
  });
  return svgRoot(W, H, o.lang, { 'aria-label': o.title || '' }, kids);
}

/**
 * Signed bars, one a row. o: {items: [{label, v, mark}], title, width, lang, markText (the note beside a marked
 * row), barTitle: (k, item) → string, xTitle}
 */
export function sourceBars(o) {
  const items = o.items, rowH = 18, W = o.width || 420;
  const labW = Math.min(150, Math.max(30, ...items.map((it) => textWidth(it.label, 11)))) + 10;
  const noteW = o.markText && items.some((it) => it.mark) ? textWidth(o.markText, 10.5) + 12 : 8;
  const valW = 52;
  const left = labW, right = noteW + valW;
  // a long title (a pair's answers) wraps to the chart's width instead of running past it (at 360 px it was cut)
  const titleLines = o.title ? wrapLines([o.title], 13, W - 16, true) : [];
  const top = o.title ? 12 + 16 * titleLines.length : 8;
  const H = top + items.length * rowH + (o.xTitle ? 34 : 20);
  const m = Math.max(1e-9, ...items.map((it) => Math.abs(it.v)).filter(Number.isFinite));
  const x = scaleLinear().domain([-m, m]).nice(4).range([left, W - right]);
  const kids = [];
  if (o.title) kids.push(h('text', { x: 8, y: 16, 'font-size': 13, 'font-weight': 'bold', fill: INK, 'data-role': 'title' },
    titleLines.map((ln, k) => h('tspan', { x: 8, dy: k ? 16 : 0 }, ln))));
  const yEnd = top + items.length * rowH;
  for (const t of x.ticks(4)) {
    kids.push(h('line', { x1: x(t), y1: top, x2: x(t), y2: yEnd, stroke: t === 0 ? '#777' : '#ececec', 'stroke-width': t === 0 ? 1 : 0.8 }),
      h('text', { x: x(t), y: yEnd + 13, 'text-anchor': 'middle', 'font-size': 10, fill: '#444' }, fmtValue(t)));
  }
  if (o.xTitle) kids.push(h('text', { x: (left + W - right) / 2, y: yEnd + 28, 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }, o.xTitle));
  kids.push(h('g', { 'data-role': 'bars' }, items.map((it, k) => {
    const y = top + k * rowH, v = Number.isFinite(it.v) ? it.v : 0;
    const x1 = x(Math.min(0, v)), x2 = x(Math.max(0, v));
    return h('g', { 'data-k': k, 'data-v': fmtValue(v), 'data-mark': it.mark ? '1' : null },
      h('title', null, o.barTitle ? o.barTitle(k, it) : `${it.label}: ${fmtValue(v)}`),
      it.mark ? h('rect', { x: 0, y, width: W, height: rowH, fill: '#fdf1e3' }) : null,
      h('text', { x: left - 6, y: y + rowH * 0.7, 'text-anchor': 'end', 'font-size': 11, fill: INK, 'font-weight': it.mark ? 'bold' : null }, it.label),
      h('rect', { x: x1, y: y + 3, width: Math.max(1, x2 - x1), height: rowH - 6, fill: v >= 0 ? '#b2182b' : '#2166ac', rx: 1.5 }),
      h('text', { x: W - right + 6, y: y + rowH * 0.7, 'font-size': 10.5, fill: '#444', 'font-family': 'monospace' }, Math.abs(v) < 0.0005 ? '0.000' : (v > 0 ? '+' : '−') + Math.abs(v).toFixed(3)),
      it.mark && o.markText ? h('text', { x: W - noteW + 4, y: y + rowH * 0.7, 'font-size': 10.5, fill: '#a0522d' }, o.markText) : null);
  })));
  return svgRoot(W, H, o.lang, { 'aria-label': o.title || '' }, kids);
}
