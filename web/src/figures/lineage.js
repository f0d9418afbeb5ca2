// lineage.js — the figures of the lineage page (web/lineage.html): pure
// functions, data in, an <svg> node tree out (svg.js), like fig1…fig4.
//
//   figGrid       a ±1 state (or a continuous one) as a side×side grid of cells
//   figLines      x–y line plot, linear or log axes, vertical/horizontal markers
//                 (energy per step, the capacity curve, timing, entropy vs d_k)
//   figHistogram  overlaid histograms on shared bins (q·k with and without 1/√d_k)
//   figModern2D   a 2-D modern Hopfield network: stored patterns, the start, one
//                 update, the path to the fixed point, the mean of all patterns
//
// Every mark carries data-* attributes with its numbers, so tests read what is
// drawn. Text is always a text node.

import { scaleLinear, scaleLog } from 'd3-scale';
import { schemeTableau10 } from 'd3-scale-chromatic';
import { h, SVG_NS } from './svg.js';
import { FONT, FONT_FAMILY, FONT_FAMILY_ZH, INK, textWidth, fmtValue } from './text.js';
import { AttnlabError } from '../core/errors.js';

export { toString, toElement } from './svg.js';

/** Colours of the lineage figures (Tableau 10, as matplotlib's default cycle). */
export const LINEAGE_COLORS = Object.freeze({
  softmax: schemeTableau10[1], linear: schemeTableau10[0], scaled: schemeTableau10[0], raw: schemeTableau10[1],
  energy: schemeTableau10[2], capacity: schemeTableau10[3], marker: '#b2182b', muted: '#888888',
  patterns: schemeTableau10[0], query: schemeTableau10[1], fixed: schemeTableau10[3], mean: schemeTableau10[4],
});

function svgRoot({ width, height, lang, figure, label }, kids) {
  return h('svg', {
    xmlns: SVG_NS, width: Math.round(width), height: Math.round(height),
    viewBox: `0 0 ${Math.round(width)} ${Math.round(height)}`,
    'font-family': lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY, lang: lang === 'zh' ? 'zh-Hans' : 'en',
    role: 'img', 'aria-label': label, 'data-figure': figure,
  }, h('rect', { x: 0, y: 0, width, height, fill: '#ffffff', 'data-role': 'background' }), kids);
}

function checkArray(name, a) {
  if (!a || typeof a.length !== 'number') throw new AttnlabError('ETYPE', `${name} must be an array`);
  for (let k = 0; k < a.length; k++)
    if (!Number.isFinite(a[k])) throw new AttnlabError('ENAN', `${name}[${k}] is not finite`);
}

// ── grid ────────────────────────────────────────────────────────────────────

/**
 * A chart's bold title centred over its plot; on a narrow chart (a phone) drawn
 * smaller, centred on the chart, so that it is not cut at the edges.
 */
function chartTitle(title, cx, width) {
  const w = 1.1 * textWidth(title, FONT.title, true);
  const room = width - 8;
  const size = w > room ? Math.max(8, (FONT.title * room) / w) : FONT.title;
  const x = Math.min(Math.max(cx, 4 + (w * size) / FONT.title / 2), width - 4 - (w * size) / FONT.title / 2);
  return h('text', { x, y: FONT.title + 2, 'font-size': size, 'font-weight': 'bold', 'text-anchor': 'middle', fill: INK, 'data-role': 'title' }, title);
}

/**
 * A state as a grid: values (side·side, row-major), ±1 drawn ink/paper;
 * continuous values in [−1, 1] drawn as greys. diff (optional, same length):
 * cells where diff ≠ values get a red outline (the units that differ from a
 * target). {values, side = 10, title, size = 200, lang, figure}
 */
export function figGrid({ values, side = 10, title = '', size = 200, diff = null, lang = 'en', figure = 'grid' }) {
  checkArray('values', values);
  if (values.length !== side * side) throw new AttnlabError('ESHAPE', `grid: ${values.length} values are not ${side}×${side}`);
  const top = title ? FONT.title + 10 : 4;
  const cell = size / side;
  const cells = [], marks = [];
  for (let i = 0; i < side; i++)
    for (let j = 0; j < side; j++) {
      const v = values[i * side + j];
      const g = Math.round(255 * (1 - (Math.max(-1, Math.min(1, v)) + 1) / 2));
      cells.push(h('rect', {
        x: 4 + j * cell, y: top + i * cell, width: cell, height: cell, fill: `rgb(${g},${g},${g})`,
        'data-i': i, 'data-j': j, 'data-v': fmtValue(v),
      }));
      if (diff && diff[i * side + j] !== v)
        marks.push(h('rect', { x: 4 + j * cell + 1, y: top + i * cell + 1, width: cell - 2, height: cell - 2, fill: 'none', stroke: LINEAGE_COLORS.marker, 'stroke-width': 1.5 }));
    }
  return svgRoot({ width: size + 8, height: top + size + 4, lang, figure, label: title }, [
    title ? h('text', { x: 4 + size / 2, y: FONT.title, 'font-size': FONT.title, 'font-weight': 'bold', 'text-anchor': 'middle', fill: INK, 'data-role': 'title' }, title) : null,
    h('g', { 'data-role': 'grid', 'shape-rendering': 'crispEdges' }, cells),
    h('rect', { x: 4, y: top, width: size, height: size, fill: 'none', stroke: INK, 'stroke-width': 1 }),
    h('g', { 'data-role': 'diff', 'pointer-events': 'none' }, marks),
  ]);
}

// ── axes ────────────────────────────────────────────────────────────────────

function fmtTick(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e4 || a < 1e-3)) return v.toExponential(0).replace('e+', 'e');
  return String(Number(v.toPrecision(3)));
}

function axes(x, y, { x0, y0, pw, ph, xLabel, yLabel, xLog, yLog }) {
  const xt = xLog ? x.ticks().filter((t) => Math.abs(Math.log2(t) - Math.round(Math.log2(t))) < 1e-9 || Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9) : x.ticks(6);
  const yt = yLog ? y.ticks().filter((t) => Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9) : y.ticks(5);
  const tick = FONT.tick;
  const step = Math.max(1, Math.ceil(xt.length / Math.max(1, Math.floor(pw / 44))));
  return h('g', { 'data-role': 'axes', 'font-size': tick, fill: INK },
    h('rect', { x: x0, y: y0, width: pw, height: ph, fill: 'none', stroke: INK, 'stroke-width': 1 }),
    xt.filter((_, k) => k % step === 0).map((t) => h('g', null,
      h('line', { x1: x(t), x2: x(t), y1: y0 + ph, y2: y0 + ph + 4, stroke: INK }),
      h('text', { x: x(t), y: y0 + ph + 6 + tick, 'text-anchor': 'middle' }, fmtTick(t)))),
    yt.map((t) => h('g', null,
      h('line', { x1: x0 - 4, x2: x0, y1: y(t), y2: y(t), stroke: INK }),
      h('text', { x: x0 - 6, y: y(t) + tick * 0.35, 'text-anchor': 'end' }, fmtTick(t)))),
    xLabel ? h('text', { x: x0 + pw / 2, y: y0 + ph + 2 * tick + 14, 'text-anchor': 'middle', 'font-size': FONT.label, 'data-role': 'xtitle' }, xLabel) : null,
    yLabel ? h('text', { x: 0, y: 0, transform: `translate(${x0 - 46} ${y0 + ph / 2}) rotate(-90)`, 'text-anchor': 'middle', 'font-size': FONT.label, 'data-role': 'ytitle' }, yLabel) : null);
}

function legend(items, x, y) {
  let yy = y;
  return h('g', { 'data-role': 'legend', 'font-size': FONT.legend, fill: INK }, items.map((it) => {
    const g = h('g', { 'data-role': `legend-${it.role || 'item'}` },
      h('line', { x1: x, x2: x + 22, y1: yy - 4, y2: yy - 4, stroke: it.color, 'stroke-width': 2.2, 'stroke-dasharray': it.dash || null }),
      h('text', { x: x + 28, y: yy }, it.name));
    yy += FONT.legend * 1.4;
    return g;
  }));
}

function extent(values, log) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (Number.isFinite(v) && (!log || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!(lo <= hi)) return log ? [1, 10] : [0, 1];
  if (lo === hi) return log ? [lo / 2, hi * 2] : [lo - 1, hi + 1];
  return [lo, hi];
}

/**
 * Line plot. series: [{name, xs, ys, color, dash, role, points}] (points: draw
 * dots). vlines / hlines: [{at, label, role, color}]. xDomain / yDomain fix
 * the axes (else fitted). xLog / yLog: log scales (positive data only).
 */
export function figLines({
  series, title = '', xLabel = '', yLabel = '', width = 520, height = 300, xLog = false, yLog = false,
  xDomain = null, yDomain = null, vlines = [], hlines = [], lang = 'en', figure = 'lines', legendAt = 'right',
}) {
  // legendAt: 'right' | 'left' (inside the plot, at the top) | 'below' (under the x title)
  for (const s of series) {
    checkArray(`${s.name} xs`, s.xs);
    checkArray(`${s.name} ys`, s.ys);
    if (s.xs.length !== s.ys.length) throw new AttnlabError('ESHAPE', `${s.name}: xs and ys differ in length`);
  }
  const below = legendAt === 'below' ? series.length * FONT.legend * 1.4 + 10 : 0;
  const left = 62, right = 14, top = title ? FONT.title + 14 : 10, bottom = 2 * FONT.tick + 26 + below;
  const pw = width - left - right, ph = height - top - bottom;
  const xd = xDomain || extent([...series.flatMap((s) => Array.from(s.xs)), ...vlines.map((v) => v.at)], xLog);
  const yd = yDomain || extent([...series.flatMap((s) => Array.from(s.ys)), ...hlines.map((v) => v.at)], yLog);
  if (!yLog && !yDomain) { const pad = (yd[1] - yd[0]) * 0.06; yd[0] -= pad; yd[1] += pad; }
  const x = (xLog ? scaleLog() : scaleLinear()).domain(xd).range([left, left + pw]);
  const y = (yLog ? scaleLog() : scaleLinear()).domain(yd).range([top + ph, top]);
  const inX = (v) => v >= Math.min(...xd) && v <= Math.max(...xd);
  const kids = [];
  if (title) kids.push(chartTitle(title, left + pw / 2, width));
  kids.push(axes(x, y, { x0: left, y0: top, pw, ph, xLabel, yLabel, xLog, yLog }));
  for (const v of vlines) {
    if (!inX(v.at)) continue;
    kids.push(h('g', { 'data-role': v.role || 'vline', 'data-v': fmtValue(v.at) },
      h('line', { x1: x(v.at), x2: x(v.at), y1: top, y2: top + ph, stroke: v.color || LINEAGE_COLORS.marker, 'stroke-width': 1.5, 'stroke-dasharray': '6 4' }),
      v.label ? h('text', { x: x(v.at) + 4, y: top + 14, 'font-size': FONT.tick, fill: v.color || LINEAGE_COLORS.marker }, v.label) : null));
  }
  for (const v of hlines) {
    kids.push(h('g', { 'data-role': v.role || 'hline', 'data-v': fmtValue(v.at) },
      h('line', { x1: left, x2: left + pw, y1: y(v.at), y2: y(v.at), stroke: v.color || LINEAGE_COLORS.muted, 'stroke-width': 1.2, 'stroke-dasharray': '3 3' }),
      v.label ? h('text', { x: left + 4, y: y(v.at) - 4, 'font-size': FONT.tick, fill: v.color || LINEAGE_COLORS.muted }, v.label) : null));
  }
  for (const s of series) {
    const pts = [];
    for (let k = 0; k < s.xs.length; k++) if ((!xLog || s.xs[k] > 0) && (!yLog || s.ys[k] > 0)) pts.push([x(s.xs[k]), y(s.ys[k]), k]);
    kids.push(h('g', { 'data-role': `series-${s.role || s.name}`, 'data-n': pts.length },
      pts.length > 1 ? h('polyline', { points: pts.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' '), fill: 'none', stroke: s.color, 'stroke-width': 2, 'stroke-dasharray': s.dash || null }) : null,
      (s.points ?? true) ? pts.map(([a, b, k]) => h('circle', { cx: a, cy: b, r: 3, fill: s.color, 'data-x': fmtValue(s.xs[k]), 'data-y': fmtValue(s.ys[k]) },
        h('title', null, `${s.name}: (${fmtValue(s.xs[k])}, ${fmtValue(s.ys[k])})`))) : null));
  }
  const items = series.map((s) => ({ name: s.name, color: s.color, dash: s.dash, role: s.role }));
  const lw = Math.max(0, ...items.map((it) => textWidth(it.name, FONT.legend))) + 34;
  if (below) {
    kids.push(legend(items, left + 8, top + ph + 2 * FONT.tick + 26 + FONT.legend));
  } else if (items.length > 1 || (items.length === 1 && items[0].name)) {
    const lx = legendAt === 'left' ? left + 8 : left + pw - lw - 4;
    kids.push(h('rect', { x: lx - 4, y: top + 6, width: lw + 4, height: items.length * FONT.legend * 1.4 + 6, fill: '#ffffff', 'fill-opacity': 0.85, stroke: '#cccccc', rx: 3 }));
    kids.push(legend(items, lx, top + 6 + FONT.legend));
  }
  return svgRoot({ width, height, lang, figure, label: title }, kids);
}

// ── histogram ─────────────────────────────────────────────────────────────

/** Overlaid density histograms on shared bins. series: [{name, values, color, role}]. */
export function figHistogram({ series, bins = 40, title = '', xLabel = '', width = 520, height = 280, range = null, lang = 'en', figure = 'hist' }) {
  for (const s of series) checkArray(s.name, s.values);
  let [lo, hi] = range || extent(series.flatMap((s) => Array.from(s.values)), false);
  if (lo === hi) { lo -= 1; hi += 1; }
  const bw = (hi - lo) / bins;
  const dens = series.map((s) => {
    const c = new Float64Array(bins);
    let n = 0;
    for (const v of s.values) {
      if (v < lo || v > hi) continue;
      c[Math.min(bins - 1, Math.floor((v - lo) / bw))]++;
      n++;
    }
    return Array.from(c, (k) => k / Math.max(1, s.values.length) / bw);
  });
  const left = 62, right = 14, top = title ? FONT.title + 14 : 10, bottom = 2 * FONT.tick + 26;
  const pw = width - left - right, ph = height - top - bottom;
  const x = scaleLinear().domain([lo, hi]).range([left, left + pw]);
  const y = scaleLinear().domain([0, Math.max(1e-9, ...dens.flat()) * 1.05]).range([top + ph, top]);
  const kids = [];
  if (title) kids.push(chartTitle(title, left + pw / 2, width));
  kids.push(axes(x, y, { x0: left, y0: top, pw, ph, xLabel, yLabel: lang === 'zh' ? '密度' : 'density' }));
  series.forEach((s, k) => {
    kids.push(h('g', { 'data-role': `hist-${s.role || k}`, fill: s.color, 'fill-opacity': 0.55 }, dens[k].map((v, b) =>
      h('rect', { x: x(lo + b * bw), y: y(v), width: Math.max(0.5, x(lo + (b + 1) * bw) - x(lo + b * bw) - 0.5), height: y(0) - y(v), 'data-bin': b, 'data-v': fmtValue(v) }))));
  });
  const items = series.map((s) => ({ name: s.name, color: s.color, role: s.role }));
  const lw = Math.max(0, ...items.map((it) => textWidth(it.name, FONT.legend))) + 34;
  kids.push(h('rect', { x: left + pw - lw - 8, y: top + 6, width: lw + 4, height: items.length * FONT.legend * 1.4 + 6, fill: '#ffffff', 'fill-opacity': 0.85, stroke: '#cccccc', rx: 3 }));
  kids.push(legend(items, left + pw - lw - 4, top + 6 + FONT.legend));
  return svgRoot({ width, height, lang, figure, label: title }, kids);
}

// ── modern Hopfield in 2-D ─────────────────────────────────────────────────

/**
 * {patterns: [[x, y], ...], start: [x, y], oneStep: [x, y], path: [[x, y], ...]
 * (the iterates, start first), fixed: [x, y], mean: [x, y], weights (N) of the
 * fixed point, labels: {patterns, start, oneStep, fixed, mean}, title, lang}
 */
export function figModern2D({ patterns, start, oneStep, path, fixed, mean, weights, labels, title = '', size = 360, lang = 'en', figure = 'modern2d' }) {
  const all = [...patterns, start, oneStep, fixed, mean, ...path];
  for (const p of all) checkArray('point', p);
  const lim = Math.max(1, ...all.map((p) => Math.max(Math.abs(p[0]), Math.abs(p[1])))) * 1.15;
  const top = title ? FONT.title + 14 : 8, left = 40, legendH = 5 * FONT.legend * 1.4 + 10;
  const x = scaleLinear().domain([-lim, lim]).range([left, left + size]);
  const y = scaleLinear().domain([-lim, lim]).range([top + size, top]);
  const C = LINEAGE_COLORS;
  const kids = [];
  if (title) kids.push(h('text', { x: left + size / 2, y: FONT.title + 2, 'font-size': FONT.title, 'font-weight': 'bold', 'text-anchor': 'middle', fill: INK, 'data-role': 'title' }, title));
  kids.push(axes(x, y, { x0: left, y0: top, pw: size, ph: size }));
  kids.push(h('g', { 'data-role': 'patterns' }, patterns.map((p, i) => h('g', null,
    h('circle', { cx: x(p[0]), cy: y(p[1]), r: 4 + 10 * Math.sqrt(weights ? weights[i] : 0), fill: C.patterns, 'fill-opacity': 0.25, stroke: C.patterns, 'data-i': i, 'data-w': weights ? fmtValue(weights[i]) : null }),
    h('circle', { cx: x(p[0]), cy: y(p[1]), r: 3.5, fill: C.patterns }),
    h('text', { x: x(p[0]) + 7, y: y(p[1]) - 6, 'font-size': FONT.tick, fill: INK }, `x${i + 1}`)))));
  kids.push(h('polyline', { 'data-role': 'path', 'data-n': path.length, points: path.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' '), fill: 'none', stroke: C.query, 'stroke-width': 1.5, 'stroke-dasharray': '4 3' }));
  const mark = (p, role, color, shape) => (shape === 'square'
    ? h('rect', { x: x(p[0]) - 5, y: y(p[1]) - 5, width: 10, height: 10, fill: color, 'data-role': role, 'data-x': fmtValue(p[0]), 'data-y': fmtValue(p[1]) })
    : h('circle', { cx: x(p[0]), cy: y(p[1]), r: 6, fill: shape === 'ring' ? '#ffffff' : color, stroke: color, 'stroke-width': 2.5, 'data-role': role, 'data-x': fmtValue(p[0]), 'data-y': fmtValue(p[1]) }));
  kids.push(mark(mean, 'mean', C.mean, 'square'));
  kids.push(mark(start, 'start', C.query, 'dot'));
  kids.push(mark(oneStep, 'one-step', C.query, 'ring'));
  kids.push(mark(fixed, 'fixed', C.fixed, 'dot'));
  const ly = top + size + 2 * FONT.tick + 12;
  kids.push(legend([
    { name: labels.patterns, color: C.patterns }, { name: labels.start, color: C.query }, { name: labels.oneStep, color: C.query, dash: '2 2' },
    { name: labels.fixed, color: C.fixed }, { name: labels.mean, color: C.mean },
  ], left, ly));
  return svgRoot({ width: left + size + 12, height: ly + legendH, lang, figure, label: title }, kids);
}

/** Where two curves over the same xs cross (a below b before, above after), by log-log interpolation; null if never. */
export function crossover(xs, a, b) {
  for (let k = 1; k < xs.length; k++) {
    const d0 = Math.log(a[k - 1]) - Math.log(b[k - 1]), d1 = Math.log(a[k]) - Math.log(b[k]);
    if (d0 <= 0 && d1 > 0) {
      const t = d0 === d1 ? 0 : -d0 / (d1 - d0);
      return Math.exp(Math.log(xs[k - 1]) + t * (Math.log(xs[k]) - Math.log(xs[k - 1])));
    }
  }
  return null;
}
