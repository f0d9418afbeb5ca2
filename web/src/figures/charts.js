// charts.js — the small charts of the "Heads & counterfactuals" panel, as SVG
// node trees (svg.js): data in, node out, no DOM and no state, so they run in Node
// (tests/e2e/page-units.test.js style) as well as in the page.
//
//   gridMap      a heatmap of R×C values (layers × heads, or T×T attention) in a compact
//                layout: heatmap.js's cells (NaN grey and hatched), annotations, a colour bar
//   lineChart    the pruning curve: loss against the number of heads removed
//   layerBars    one bar per layer (the DAG profile) with a dashed reference line
//   diffBars     signed horizontal bars centred at 0 (next-token Δp)
//   lossLines    per-position losses of two runs (plain and with heads ablated) on r ++ r,
//                the second copy shaded, a dashed line at the loss of guessing (ln V)
//
// Cells, points and bars carry data-* values (data-v with 6 significant digits,
// 'NaN' for a missing value) and a <title> for the hover tooltip, like the
// chapter's figures. Colour maps come from figures/colour.js (d3-scale-chromatic).

import { scaleLinear } from 'd3-scale';
import { h, SVG_NS } from './svg.js';
import { colorbar } from './axes.js';
import { vectorCells, annotations } from './heatmap.js';
import { fmtValue, textWidth, INK, FONT_FAMILY, FONT_FAMILY_ZH } from './text.js';

const family = (lang) => (lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY);
const fmtV = (v) => (Number.isFinite(v) ? fmtValue(v) : 'NaN');

function svgRoot(W, H, lang, attrs, kids) {
  return h('svg', {
    xmlns: SVG_NS, width: Math.round(W), height: Math.round(H), viewBox: `0 0 ${Math.round(W)} ${Math.round(H)}`,
    'font-family': family(lang), role: 'img', ...attrs,
  }, h('rect', { x: 0, y: 0, width: Math.round(W), height: Math.round(H), fill: '#ffffff', 'data-role': 'background' }), kids);
}

/**
 * A heatmap. o: {
 *   values: ArrayLike<number> R*C row-major (NaN = no value: grey, hatched),
 *   R, C, color: v → css, cell: px per cell (or maxW/maxH to fit: the cell is
 *   the largest that fits both, between minCell and maxCell),
 *   rowLabels, colLabels: string[] | null, rotate: rotate column labels 45°,
 *   rowTitle, colTitle, title: string | null, annotate: v → string | null,
 *   cellTitle: (i, j, v) → string, role: data-role of the cell group,
 *   cbar: {scale, format} | null, lang, attrs: extra <svg> attributes }
 */
export function gridMap(o) {
  const { R, C } = o;
  const tick = 11;
  const rl = o.rowLabels || null, cl = o.colLabels || null;
  const rowLabW = rl ? Math.max(...rl.map((s) => textWidth(s, tick))) + 6 : 0;
  const colLabW = cl ? Math.max(...cl.map((s) => textWidth(s, tick))) : 0;
  const left = 8 + (o.rowTitle ? 18 : 0) + rowLabW;
  const top = 6 + (o.title ? 20 : 0) + (o.colTitle ? 16 : 0) + (cl && !o.rotate ? tick + 6 : 0);
  const bottom = 8 + (cl && o.rotate ? colLabW * 0.72 + 10 : 0);
  const cbarTickW = o.cbar ? Math.max(...o.cbar.scale.ticks(5).map((t) => textWidth(o.cbar.format(t), 10))) : 0;
  const right = o.cbar ? 14 + 12 + 6 + cbarTickW + 6 : 8;
  let cell = o.cell;
  if (!cell) {
    const byW = o.maxW ? (o.maxW - left - right) / C : Infinity;
    const byH = o.maxH ? (o.maxH - top - bottom) / R : Infinity;
    cell = Math.max(o.minCell ?? 6, Math.min(o.maxCell ?? 48, byW, byH));
  }
  const pw = cell * C, ph = cell * R;
  const titleW = o.title ? textWidth(o.title, 13, true) + 16 : 0;
  const W = Math.max(left + pw + right, titleW);
  const x0 = left, y0 = top;
  const kids = [];
  if (o.title) kids.push(h('text', { x: W / 2, y: 18, 'text-anchor': 'middle', 'font-size': 13, 'font-weight': 'bold', fill: INK, 'data-role': 'title' }, o.title));
  if (o.colTitle) kids.push(h('text', { x: x0 + pw / 2, y: (o.title ? 20 : 0) + 16, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555' }, o.colTitle));
  const g = { x0, y0, cell };
  const cells = vectorCells(o, g, 'grid');
  kids.push(...(Array.isArray(cells) ? cells : [cells]));
  if (o.annotate) kids.push(annotations(o, g, 5));
  kids.push(h('rect', { x: x0, y: y0, width: pw, height: ph, fill: 'none', stroke: '#999999', 'stroke-width': 0.6, 'pointer-events': 'none' }));
  if (rl) {
    const step = Math.max(1, Math.ceil((tick * 1.1) / cell));
    const g = [];
    for (let i = 0; i < R; i += step) g.push(h('text', { x: x0 - 5, y: y0 + (i + 0.5) * cell + tick * 0.35, 'text-anchor': 'end' }, rl[i]));
    kids.push(h('g', { 'font-size': tick, fill: INK, 'data-role': 'rowlabels' }, g));
  }
  if (o.rowTitle) {
    const x = 8 + 10, y = y0 + ph / 2;
    kids.push(h('text', { x, y, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555', transform: `rotate(-90 ${x} ${y})` }, o.rowTitle));
  }
  if (cl) {
    const need = o.rotate ? tick * 1.1 : Math.max(...cl.map((s) => textWidth(s, tick))) + 4;
    const step = Math.max(1, Math.ceil(need / cell));
    const g = [];
    for (let j = 0; j < C; j += step) {
      const x = x0 + (j + 0.5) * cell;
      if (o.rotate) {
        const y = y0 + ph + 6;
        g.push(h('text', { x: x + 3, y: y + 3, 'text-anchor': 'end', transform: `rotate(-45 ${x + 3} ${y + 3})` }, cl[j]));
      } else {
        g.push(h('text', { x, y: y0 - 5, 'text-anchor': 'middle' }, cl[j]));
      }
    }
    kids.push(h('g', { 'font-size': tick, fill: INK, 'data-role': 'collabels' }, g));
  }
  if (o.cbar) kids.push(colorbar(x0 + pw + 14, y0 + Math.min(ph * 0.05, 4), 12, Math.max(40, ph - Math.min(ph * 0.1, 8)), o.cbar.scale, o.cbar.format));
  return svgRoot(W, top + ph + bottom, o.lang, { 'aria-label': o.title || '', ...o.attrs }, kids);
}

/**
 * The pruning curve. o: {loss: ArrayLike (K+1), half: index marked, base,
 * width, height, xTitle, yTitle, pointTitle: (k, v) → string, halfLabel,
 * halfLabelShort (used when halfLabel is wider than the plot), baseLabel (beside the
 * dashed line at base), lang, attrs}
 */
export function lineChart(o) {
  const n = o.loss.length;
  const W = o.width, H = o.height;
  const left = 62, right = 14, top = 14, bottom = 40;
  const vals = Array.from(o.loss);
  let lo = Math.min(...vals), hi = Math.max(...vals);
  if (!(hi > lo)) { lo -= 0.01; hi += 0.01; }
  const pad = (hi - lo) * 0.08;
  const x = scaleLinear().domain([0, Math.max(1, n - 1)]).range([left, W - right]);
  const y = scaleLinear().domain([lo - pad, hi + pad]).range([H - bottom, top]).nice(5);
  const kids = [];
  // axes and grid
  for (const tv of y.ticks(5)) {
    kids.push(h('line', { x1: left, x2: W - right, y1: y(tv), y2: y(tv), stroke: '#e6e6e6', 'stroke-width': 1 }));
    kids.push(h('text', { x: left - 6, y: y(tv) + 3.5, 'text-anchor': 'end', 'font-size': 10.5, fill: INK }, String(Number(tv.toPrecision(6)))));
  }
  const xt = x.ticks(Math.min(8, n - 1)).filter((v) => Number.isInteger(v));
  for (const tv of xt) kids.push(h('text', { x: x(tv), y: H - bottom + 15, 'text-anchor': 'middle', 'font-size': 10.5, fill: INK }, String(tv)));
  kids.push(h('rect', { x: left, y: top, width: W - left - right, height: H - top - bottom, fill: 'none', stroke: '#999999', 'stroke-width': 0.8 }));
  kids.push(h('text', { x: (left + W - right) / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555' }, o.xTitle));
  const yx = 13, yy = (top + H - bottom) / 2;
  kids.push(h('text', { x: yx, y: yy, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555', transform: `rotate(-90 ${yx} ${yy})` }, o.yTitle));
  // base loss and the half mark
  if (Number.isFinite(o.base)) {
    kids.push(h('line', { x1: left, x2: W - right, y1: y(o.base), y2: y(o.base), stroke: '#808080', 'stroke-dasharray': '6 4', 'stroke-width': 1.2, 'data-role': 'base' }));
    if (o.baseLabel) kids.push(h('text', { x: W - right - 4, y: y(o.base) + 14, 'text-anchor': 'end', 'font-size': 11, fill: '#666666', 'data-role': 'base-label' }, o.baseLabel));
  }
  if (o.half !== undefined && o.half < n) {
    const hx = x(o.half);
    kids.push(h('line', { x1: hx, x2: hx, y1: top, y2: H - bottom, stroke: '#b2182b', 'stroke-dasharray': '4 3', 'stroke-width': 1.2, 'data-role': 'half' }));
    if (o.halfLabel) {
      // right of the line if it fits, else left of it, else as far in as it goes (on a white box)
      let label = o.halfLabel;
      if (textWidth(label, 11.5, true) * 1.06 > W - left - right - 8 && o.halfLabelShort) label = o.halfLabelShort;
      const lw = textWidth(label, 11.5, true) * 1.06;
      let x = hx + 6;
      if (x + lw > W - right - 4) x = hx - 6 - lw >= left + 4 ? hx - 6 - lw : Math.max(left + 4, W - right - 4 - lw);
      kids.push(h('rect', { x: x - 2, y: top + 2, width: lw + 4, height: 15, fill: '#ffffff', 'fill-opacity': 0.85 }));
      kids.push(h('text', { x, y: top + 13, 'font-size': 11.5, fill: '#b2182b', 'font-weight': 'bold', 'data-role': 'half-label' }, label));
    }
  }
  const d = vals.map((v, k) => `${k ? 'L' : 'M'}${x(k).toFixed(2)} ${y(v).toFixed(2)}`).join('');
  kids.push(h('path', { d, fill: 'none', stroke: '#1f4fd1', 'stroke-width': 1.8 }));
  const r = n > 60 ? 2 : 3;
  kids.push(h('g', { 'data-role': 'points' }, vals.map((v, k) => h('circle', {
    cx: x(k), cy: y(v), r: k === o.half ? r + 1.5 : r, fill: k === o.half ? '#b2182b' : '#1f4fd1', 'data-k': k, 'data-v': fmtV(v),
  }, h('title', null, o.pointTitle ? o.pointTitle(k, v) : `${k}: ${fmtV(v)}`)))));
  return svgRoot(W, H, o.lang, { 'aria-label': o.yTitle, ...o.attrs }, kids);
}

/**
 * One bar per layer with a reference line per bar (the null of the DAG score).
 * o: {values: number[], ref: number, labels: string[], width, height, yTitle,
 *     refLabel, barTitle: (k, v) → string, lang, attrs, domain: [lo, hi]}
 */
export function layerBars(o) {
  const n = o.values.length;
  const W = o.width, H = o.height;
  const left = 50, right = 12, top = 24, bottom = 26;
  const [lo, hi] = o.domain || [0, 1];
  const y = scaleLinear().domain([lo, hi]).range([H - bottom, top]);
  const slot = (W - left - right) / n;
  const kids = [];
  for (const tv of y.ticks(5)) {
    kids.push(h('line', { x1: left, x2: W - right, y1: y(tv), y2: y(tv), stroke: '#e6e6e6' }));
    kids.push(h('text', { x: left - 6, y: y(tv) + 3.5, 'text-anchor': 'end', 'font-size': 10.5, fill: INK }, String(Number(tv.toPrecision(4)))));
  }
  kids.push(h('g', { 'data-role': 'bars' }, o.values.map((v, k) => {
    const vv = Math.min(hi, Math.max(lo, v));
    return h('rect', {
      x: left + slot * (k + 0.15), y: y(vv), width: slot * 0.7, height: Math.max(0, y(lo) - y(vv)), fill: '#3a7d44',
      'data-layer': k, 'data-v': fmtV(v),
    }, h('title', null, o.barTitle ? o.barTitle(k, v) : `${k}: ${fmtV(v)}`));
  })));
  kids.push(h('line', { x1: left, x2: W - right, y1: y(o.ref), y2: y(o.ref), stroke: '#b2182b', 'stroke-width': 1.6, 'stroke-dasharray': '10 3 2 3', 'data-role': 'ref', 'data-v': fmtV(o.ref) }));
  if (o.refLabel) kids.push(h('text', { x: W - right, y: Math.max(12, y(o.ref) - 5), 'text-anchor': 'end', 'font-size': 11, fill: '#b2182b' }, o.refLabel));
  kids.push(h('g', { 'font-size': 10.5, fill: INK }, o.labels.map((s, k) => h('text', { x: left + slot * (k + 0.5), y: H - bottom + 14, 'text-anchor': 'middle' }, s))));
  kids.push(h('rect', { x: left, y: top, width: W - left - right, height: H - top - bottom, fill: 'none', stroke: '#999999', 'stroke-width': 0.8 }));
  const yx = 12, yy = (top + H - bottom) / 2;
  kids.push(h('text', { x: yx, y: yy, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555', transform: `rotate(-90 ${yx} ${yy})` }, o.yTitle));
  return svgRoot(W, H, o.lang, { 'aria-label': o.yTitle, ...o.attrs }, kids);
}

/**
 * Signed bars centred at 0, one row per item. o: {items: [{label, v, note}],
 * width, rowH, barTitle: (k, item) → string, lang, attrs}
 */
export function diffBars(o) {
  const items = o.items;
  const rowH = o.rowH || 20;
  const W = o.width;
  const labW = Math.min(120, Math.max(30, ...items.map((it) => textWidth(it.label, 11.5)))) + 10;
  const noteW = Math.max(40, ...items.map((it) => textWidth(it.note || '', 10.5))) + 8;
  const left = labW, right = noteW;
  const H = 8 + items.length * rowH + 18;
  const m = Math.max(1e-9, ...items.map((it) => Math.abs(it.v)));
  const x = scaleLinear().domain([-m, m]).range([left, W - right]);
  const kids = [];
  kids.push(h('line', { x1: x(0), x2: x(0), y1: 4, y2: H - 16, stroke: '#777777', 'stroke-width': 1 }));
  kids.push(h('g', { 'data-role': 'bars' }, items.map((it, k) => {
    const y = 8 + k * rowH;
    const x1 = x(Math.min(0, it.v)), x2 = x(Math.max(0, it.v));
    return h('g', { 'data-k': k, 'data-v': fmtV(it.v) },
      h('title', null, o.barTitle ? o.barTitle(k, it) : `${it.label}: ${fmtV(it.v)}`),
      h('text', { x: left - 6, y: y + rowH * 0.68, 'text-anchor': 'end', 'font-size': 11.5, fill: INK, 'font-family': 'monospace' }, it.label),
      h('rect', { x: x1, y: y + 3, width: Math.max(1, x2 - x1), height: rowH - 6, fill: it.v >= 0 ? '#b2182b' : '#2166ac', rx: 1.5 }),
      h('text', { x: W - right + 6, y: y + rowH * 0.68, 'font-size': 10.5, fill: '#444444' }, it.note || ''));
  })));
  const fm = (v) => (Math.abs(v) >= 0.01 ? v.toFixed(2) : v.toPrecision(1));
  kids.push(h('g', { 'font-size': 10, fill: '#555' },
    h('text', { x: x(-m), y: H - 4, 'text-anchor': 'start' }, fm(-m)),
    h('text', { x: x(0), y: H - 4, 'text-anchor': 'middle' }, '0'),
    h('text', { x: x(m), y: H - 4, 'text-anchor': 'end' }, `+${fm(m)}`)));
  return svgRoot(W, H, o.lang, { 'aria-label': o.ariaLabel || '', ...o.attrs }, kids);
}

/**
 * The legend of lossLines: one entry per series and one for the dashed line, laid left to right
 * above the plot and wrapped to a new row when the next entry does not fit.
 * @returns {{kids: object[], rows: number}}
 */
function lossLegend(entries, left, right) {
  const kids = [];
  let x = left, row = 0;
  for (const [label, colour, dash, role] of entries) {
    const w = 24 + textWidth(label, 11.5) + 18;
    if (x > left && x + w - 18 > right) { x = left; row += 1; }
    const y = 14 + row * 18;
    kids.push(h('g', { 'data-role': role },
      h('line', { x1: x, x2: x + 18, y1: y, y2: y, stroke: colour, 'stroke-width': dash ? 1.4 : 2.4, 'stroke-dasharray': dash || null }),
      h('text', { x: x + 24, y: y + 4, 'font-size': 11.5, fill: INK }, label)));
    x += w;
  }
  return { kids, rows: row + 1 };
}

/**
 * Two loss curves over the positions of r ++ r. o: {a, b: ArrayLike (T − 1 losses, nats),
 * n: |r| (positions n … 2n − 2 predict the second copy), chance: ln V (dashed), width, height,
 * labelA, labelB, chanceLabel, copyLabel, xTitle, yTitle, pointTitle: (series, k, v) → string, lang, attrs}
 * The dashed line's label is a legend entry above the plot (data-role="chance-label"), so it covers no data.
 */
export function lossLines(o) {
  const W = o.width, N = o.a.length, n = o.n;
  const left = 50, right = 14, bottom = 38;
  const legend = lossLegend([[o.labelA, '#1f4fd1', null, 'legend-a'], [o.labelB, '#b2182b', null, 'legend-b'],
    [o.chanceLabel, '#808080', '6 4', 'chance-label']], left, W - right);
  const top = 30 + 18 * (legend.rows - 1);
  const H = o.height + 18 * (legend.rows - 1);
  let hi = o.chance;
  for (const v of [...o.a, ...o.b]) if (Number.isFinite(v)) hi = Math.max(hi, v);
  const x = scaleLinear().domain([0, Math.max(1, N - 1)]).range([left, W - right]);
  const y = scaleLinear().domain([0, hi * 1.04]).range([H - bottom, top]).nice(5);
  const kids = [];
  const x0 = x(Math.min(n, N - 1)) - (x(1) - x(0)) / 2;
  kids.push(h('rect', { x: x0, y: top, width: W - right - x0, height: H - top - bottom, fill: '#f3f0fa', 'data-role': 'second-copy' }));
  kids.push(h('text', { x: W - right - 4, y: H - bottom - 6, 'text-anchor': 'end', 'font-size': 10.5, fill: '#6a51a3' }, o.copyLabel));
  for (const tv of y.ticks(5)) {
    kids.push(h('line', { x1: left, x2: W - right, y1: y(tv), y2: y(tv), stroke: '#e6e6e6', 'stroke-width': 1 }));
    kids.push(h('text', { x: left - 6, y: y(tv) + 3.5, 'text-anchor': 'end', 'font-size': 10.5, fill: INK }, String(tv)));
  }
  for (const tv of x.ticks(Math.min(8, N - 1)).filter(Number.isInteger)) {
    kids.push(h('text', { x: x(tv), y: H - bottom + 15, 'text-anchor': 'middle', 'font-size': 10.5, fill: INK }, String(tv)));
  }
  kids.push(h('rect', { x: left, y: top, width: W - left - right, height: H - top - bottom, fill: 'none', stroke: '#999999', 'stroke-width': 0.8, 'data-role': 'plot' }));
  kids.push(h('text', { x: (left + W - right) / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555' }, o.xTitle));
  const yy = (top + H - bottom) / 2;
  kids.push(h('text', { x: 13, y: yy, 'text-anchor': 'middle', 'font-size': 11.5, fill: '#555', transform: `rotate(-90 13 ${yy})` }, o.yTitle));
  kids.push(h('line', { x1: left, x2: W - right, y1: y(o.chance), y2: y(o.chance), stroke: '#808080', 'stroke-dasharray': '6 4', 'stroke-width': 1.2, 'data-role': 'chance' }));
  [['a', o.a, '#1f4fd1'], ['b', o.b, '#b2182b']].forEach(([key, vals, colour], s) => {
    const d = Array.from(vals, (v, k) => `${k ? 'L' : 'M'}${x(k).toFixed(2)} ${y(v).toFixed(2)}`).join('');
    kids.push(h('path', { d, fill: 'none', stroke: colour, 'stroke-width': 1.6, 'data-role': `line-${key}` }));
    kids.push(h('g', { 'data-role': `points-${key}` }, Array.from(vals, (v, k) => h('circle', {
      cx: x(k), cy: y(v), r: 2, fill: colour, 'data-k': k, 'data-v': fmtV(v),
    }, h('title', null, o.pointTitle ? o.pointTitle(s, k, v) : `${k}: ${fmtV(v)}`)))));
  });
  kids.push(...legend.kids);
  return svgRoot(W, H, o.lang, { 'aria-label': o.yTitle, ...o.attrs }, kids);
}
