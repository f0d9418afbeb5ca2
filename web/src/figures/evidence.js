// figures/evidence.js — the charts of the evidence measurements (page panel, widget) that
// are not heatmaps, as SVG node trees (svg.js): a scatter of a reading against
// an effect, grouped bars of an effect beside readings, and dots with whiskers of
// aggregates over a set of inputs with their permutation nulls. Data in, node out.
// Points, bars and intervals carry data-* values and a <title> for the hover tooltip.

import { scaleLinear } from 'd3-scale';
import { h, SVG_NS } from './svg.js';
import { fmtValue, textWidth, INK, FONT_FAMILY, FONT_FAMILY_ZH } from './text.js';

const family = (lang) => (lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY);

function frame(W, H, lang, title, kids) {
  return h('svg', {
    xmlns: SVG_NS, width: Math.round(W), height: Math.round(H), viewBox: `0 0 ${Math.round(W)} ${Math.round(H)}`,
    'font-family': family(lang), role: 'img', 'aria-label': title || '',
  }, h('rect', { x: 0, y: 0, width: Math.round(W), height: Math.round(H), fill: '#ffffff', 'data-role': 'background' }),
  title ? h('text', { x: 8, y: 16, 'font-size': 13, 'font-weight': 'bold', fill: INK, 'data-role': 'title' }, title) : null,
  kids);
}

function axis(scale, x0, y0, len, vertical, label, n = 5) {
  const kids = [h('line', vertical ? { x1: x0, y1: y0, x2: x0, y2: y0 - len } : { x1: x0, y1: y0, x2: x0 + len, y2: y0, stroke: '#666' })];
  kids[0].attrs.stroke = '#666';
  for (const t of scale.ticks(n)) {
    const p = scale(t);
    kids.push(vertical
      ? h('text', { x: x0 - 4, y: p + 3.5, 'text-anchor': 'end', 'font-size': 10, fill: '#444' }, fmtValue(t))
      : h('text', { x: p, y: y0 + 13, 'text-anchor': 'middle', 'font-size': 10, fill: '#444' }, fmtValue(t)));
  }
  if (label) kids.push(vertical
    ? h('text', { x: 12, y: y0 - len / 2, 'text-anchor': 'middle', 'font-size': 11, fill: '#555', transform: `rotate(-90 12 ${y0 - len / 2})` }, label)
    : h('text', { x: x0 + len / 2, y: y0 + 28, 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }, label));
  return h('g', { 'data-role': vertical ? 'y-axis' : 'x-axis' }, kids);
}

/**
 * Scatter of points {x, y, title}. o: {points, xTitle, yTitle, title, width, height, lang}.
 * Both axes start at 0 (weights and KL effects are non-negative).
 */
export function scatter(o) {
  const W = o.width || 360, H = o.height || 280;
  const left = 54, right = 12, top = o.title ? 28 : 10, bottom = 40;
  const xs = o.points.map((p) => p.x), ys = o.points.map((p) => p.y);
  const x = scaleLinear().domain([0, Math.max(1e-9, ...xs)]).nice().range([left, W - right]);
  const y = scaleLinear().domain([0, Math.max(1e-9, ...ys)]).nice().range([H - bottom, top]);
  const dots = o.points.map((p) => h('circle', {
    cx: x(p.x).toFixed(2), cy: y(p.y).toFixed(2), r: 3.5, fill: '#d7301f', 'fill-opacity': 0.7, stroke: '#7f0000', 'stroke-width': 0.5,
    'data-x': fmtValue(p.x), 'data-y': fmtValue(p.y),
  }, h('title', null, p.title)));
  return frame(W, H, o.lang, o.title, [
    axis(x, left, H - bottom, W - left - right, false, o.xTitle),
    axis(y, left, H - bottom, H - bottom - top, true, o.yTitle),
    h('g', { 'data-role': 'points' }, dots),
  ]);
}

/**
 * Grouped bars: for each of the labels, one bar per series, each series scaled
 * to its own maximum (so shapes compare, not units). o: {labels, series: [{name,
 * values, color}], title, width, lang}.
 */
export function groupedBars(o) {
  const n = o.labels.length, k = o.series.length;
  const labW = Math.max(...o.labels.map((s) => textWidth(s, 11))) + 8;
  const rowH = 6 * k + 6;
  const legendH = 18;
  const top = (o.title ? 26 : 8) + legendH, left = labW + 6, W = o.width || 420, right = 10;
  const H = top + n * rowH + 8;
  const x = scaleLinear().domain([0, 1]).range([left, W - right]);
  const kids = [];
  o.series.forEach((s, si) => {
    const lx = left + si * ((W - left) / k);
    kids.push(h('rect', { x: lx, y: top - legendH + 2, width: 10, height: 10, fill: s.color }),
      h('text', { x: lx + 14, y: top - legendH + 11, 'font-size': 10.5, fill: INK }, s.name));
  });
  for (let i = 0; i < n; i++) {
    const y0 = top + i * rowH;
    kids.push(h('text', { x: labW, y: y0 + rowH / 2 + 3.5, 'text-anchor': 'end', 'font-size': 11, fill: INK }, o.labels[i]));
    o.series.forEach((s, si) => {
      const mx = Math.max(1e-12, ...s.values.map((v) => Math.abs(v)));
      const v = s.values[i], w = Math.max(0, x(Math.max(0, v) / mx) - left);
      kids.push(h('rect', { x: left, y: y0 + 3 + si * 6, width: w.toFixed(2), height: 5, fill: s.color, 'data-v': fmtValue(v), 'data-series': s.name },
        h('title', null, `${o.labels[i]} — ${s.name}: ${fmtValue(v)}`)));
    });
  }
  kids.push(h('line', { x1: left, y1: top, x2: left, y2: top + n * rowH, stroke: '#666' }));
  return frame(W, H, o.lang, o.title, h('g', { 'data-role': 'bars' }, kids));
}

const clampTo = (v, [a, b]) => Math.min(b, Math.max(a, v));
const finite = (v) => typeof v === 'number' && Number.isFinite(v);
const NULL_FILL = '#8c8c8c';

// the legend of intervalChart: entries {kind, text, color} placed on lines no wider than W
function legendLines(lg, W) {
  const entries = [];
  for (const s of lg.series || []) entries.push({ kind: 'series', text: s.name, color: s.color });
  for (const kind of ['interval', 'points', 'null', 'nullMean']) if (lg[kind]) entries.push({ kind, text: lg[kind] });
  const lines = [[]];
  let lx = 8;
  for (const e of entries) {
    const w = 22 + textWidth(e.text, 10.5) + 14;
    if (lx > 8 && lx + w > W - 6) { lines.push([]); lx = 8; }
    lines.at(-1).push({ ...e, x: lx });
    lx += w;
  }
  return entries.length ? lines : [];
}

function legendNodes(lines, top0) {
  const kids = [];
  lines.forEach((line, li) => {
    const y = top0 + li * 16 + 8;
    for (const { kind, x: gx, text, color } of line) {
      if (kind === 'series') kids.push(h('circle', { cx: gx + 9, cy: y, r: 4, fill: color }));
      else if (kind === 'interval') kids.push(h('line', { x1: gx, y1: y, x2: gx + 18, y2: y, stroke: INK, 'stroke-width': 2 }),
        h('circle', { cx: gx + 9, cy: y, r: 4, fill: INK }));
      else if (kind === 'points') kids.push(...[3, 9, 15].map((d, i) => h('circle', { cx: gx + d, cy: y + (i - 1) * 2, r: 2, fill: INK, 'fill-opacity': 0.35 })));
      else if (kind === 'null') kids.push(h('rect', { x: gx, y: y - 6, width: 18, height: 12, fill: NULL_FILL, 'fill-opacity': 0.28 }));
      else kids.push(h('line', { x1: gx + 9, y1: y - 6, x2: gx + 9, y2: y + 6, stroke: '#444', 'stroke-width': 1.5, 'stroke-dasharray': '3 2' }));
      kids.push(h('text', { x: gx + 22, y: y + 3.5, 'font-size': 10.5, fill: INK }, text));
    }
  });
  return kids;
}

// the x domain: the means, intervals and nulls, 0 included
function dataDomain(rows) {
  const vals = [0];
  for (const r of rows) for (const it of r.items)
    for (const v of [it.mean, it.lo, it.hi, it.nullLo, it.nullHi]) if (finite(v)) vals.push(v);
  const d = [Math.min(...vals), Math.max(...vals)];
  return d[1] - d[0] < 1e-9 ? [d[0] - 1, d[1] + 1] : d;
}

// one estimate of a row: its null band and tick, its per-input dots, its dot and whisker, its p
function itemNodes(it, label, cy, half, X, c) {
  const color = it.color || '#d7301f';
  const g = [];
  if (finite(it.nullLo) && finite(it.nullHi)) {
    const a = X(it.nullLo), b = X(it.nullHi);
    g.push(h('rect', { x: a, y: cy - half, width: Math.max(1.5, b - a), height: 2 * half, fill: NULL_FILL, 'fill-opacity': 0.28,
      'data-role': 'null-band', 'data-lo': fmtValue(it.nullLo), 'data-hi': fmtValue(it.nullHi), 'data-mean': finite(it.nullMean) ? fmtValue(it.nullMean) : null }));
    if (finite(it.nullMean)) g.push(h('line', { x1: X(it.nullMean), y1: cy - half, x2: X(it.nullMean), y2: cy + half, stroke: '#444',
      'stroke-width': 1.5, 'stroke-dasharray': '3 2', 'data-role': 'null-mean' }));
  }
  (it.points || []).forEach((v, pi) => {
    if (!finite(v)) return;
    const j = ((pi * 0.6180339887) % 1 - 0.5) * half * 1.4; // a fixed jitter, so that equal values stay visible
    g.push(h('circle', { cx: X(v), cy: cy + j, r: 2, fill: color, 'fill-opacity': 0.35, 'data-role': 'input', 'data-v': fmtValue(v) }));
  });
  if (finite(it.mean)) {
    const w = [];
    if (finite(it.lo) && finite(it.hi) && it.hi > it.lo) {
      const a = X(it.lo), b = X(it.hi), cap = Math.min(5, half - 1);
      w.push(h('line', { x1: a, y1: cy, x2: b, y2: cy, stroke: color, 'stroke-width': 2 }),
        h('line', { x1: a, y1: cy - cap, x2: a, y2: cy + cap, stroke: color, 'stroke-width': 1.5 }),
        h('line', { x1: b, y1: cy - cap, x2: b, y2: cy + cap, stroke: color, 'stroke-width': 1.5 }));
    }
    w.push(h('circle', { cx: X(it.mean), cy, r: c.single ? 4.5 : 3.5, fill: color, stroke: '#ffffff', 'stroke-width': 1 }));
    const tip = `${label}${it.name ? ` — ${it.name}` : ''}: ${fmtValue(it.mean)}${finite(it.lo) ? ` [${fmtValue(it.lo)}, ${fmtValue(it.hi)}]` : ''}`;
    g.push(h('g', { 'data-role': 'interval', 'data-label': label, 'data-series': it.name || null, 'data-mean': fmtValue(it.mean),
      'data-lo': finite(it.lo) ? fmtValue(it.lo) : null, 'data-hi': finite(it.hi) ? fmtValue(it.hi) : null }, h('title', null, tip), w));
  } else if (c.undefinedText) {
    g.push(h('text', { x: c.left + 6, y: cy + 3.5, 'font-size': 10.5, 'font-style': 'italic', fill: '#777', 'data-role': 'undefined' }, c.undefinedText));
  }
  const p = c.pText(it);
  if (p) g.push(h('text', { x: c.W - 8, y: cy + 3.5, 'text-anchor': 'end', 'font-size': 10.5, fill: '#444', 'data-role': 'p' }, p));
  return h('g', { 'data-role': 'item' }, g);
}

/**
 * Dots with whiskers over a set of inputs: for each row one or more estimates, each its mean (dot), its
 * interval lo..hi (whisker), optionally the permutation null of the same statistic (a shaded band
 * nullLo..nullHi with a dashed tick at nullMean), the per-input values (faint dots) and a p-value (right
 * column). o: {rows: [{label, items: [{name, mean, lo, hi, color, nullMean, nullLo, nullHi, p, points}]}],
 * domain ([lo, hi]; default: the means, intervals and nulls, 0 included; per-input values outside it are
 * drawn at its edge), xTitle, title, width, lang, pText (item -> string|null), legend: {interval, null,
 * nullMean, points, series: [{name, color}]} (strings; a missing one is not shown), undefinedText (shown
 * where a mean is null)}.
 */
export function intervalChart(o) {
  const W = o.width || 420, k = Math.max(1, ...o.rows.map((r) => r.items.length));
  const itemH = k === 1 ? 24 : 9, rowH = itemH * k + (k === 1 ? 4 : 8), half = Math.min(10, itemH / 2 - 1);
  const pText = o.pText || (() => null);
  const labW = Math.min(W * 0.38, Math.max(20, ...o.rows.map((r) => textWidth(r.label, 11))) + 10);
  const pW = Math.max(0, ...o.rows.flatMap((r) => r.items.map((it) => { const s = pText(it); return s ? textWidth(s, 10.5) + 10 : 0; })));
  const left = labW + 4, right = 12 + pW;
  const lines = legendLines(o.legend || {}, W);
  const top0 = o.title ? 26 : 8, top = top0 + (lines.length ? lines.length * 16 + 4 : 0) + 4;
  const plotBottom = top + o.rows.length * rowH, H = plotBottom + (o.xTitle ? 38 : 22);
  const x = scaleLinear().domain(o.domain || dataDomain(o.rows)).nice().range([left, W - right]);
  const dom = x.domain(), X = (v) => x(clampTo(v, dom));
  const shade = [], grid = [], kids = [];
  for (const t of x.ticks(6)) {
    grid.push(h('line', { x1: x(t), y1: top, x2: x(t), y2: plotBottom, stroke: t === 0 ? '#9a9a9a' : '#ececec', 'stroke-width': t === 0 ? 1 : 0.8 }),
      h('text', { x: x(t), y: plotBottom + 13, 'text-anchor': 'middle', 'font-size': 10, fill: '#444' }, fmtValue(t)));
  }
  grid.push(h('line', { x1: left, y1: plotBottom, x2: W - right, y2: plotBottom, stroke: '#666' }));
  if (o.xTitle) grid.push(h('text', { x: (left + W - right) / 2, y: plotBottom + 29, 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }, o.xTitle));
  const c = { single: k === 1, left, W, pText, undefinedText: o.undefinedText };
  o.rows.forEach((r, ri) => {
    const y0 = top + ri * rowH, n = r.items.length;
    if (ri % 2 === 1) shade.push(h('rect', { x: 0, y: y0, width: W, height: rowH, fill: '#f6f6f3' }));
    kids.push(h('text', { x: labW, y: y0 + rowH / 2 + 3.5, 'text-anchor': 'end', 'font-size': 11, fill: INK }, r.label));
    r.items.forEach((it, ii) => kids.push(itemNodes(it, r.label, y0 + rowH / 2 + (ii - (n - 1) / 2) * itemH, half, X, c)));
  });
  return frame(W, H, o.lang, o.title, h('g', { 'data-role': 'intervals' }, shade, legendNodes(lines, top0), grid, kids));
}
