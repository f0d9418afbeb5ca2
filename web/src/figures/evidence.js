// figures/evidence.js — the two charts of the evidence measurements (page panel, widget) that
// are not heatmaps, as SVG node trees (svg.js): a scatter of a reading against
// an effect, and grouped bars of an effect beside readings. Data in, node out.
// Points and bars carry data-* values and a <title> for the hover tooltip.

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
