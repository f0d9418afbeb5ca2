// delta.js — the in-model panel's two small charts, as SVG node trees (svg.js):
// a bar per layer of mean |ΔA| (the intervened layer marked), and small-multiple
// heatmaps of the head-average ΔA of the intervened layer and the layers above it
// (RdBu_r centred at 0, one symmetric scale for all). Cells carry data-i/data-j/
// data-v and a <title>, like the chapter's figures.

import { scaleLinear } from 'd3-scale';
import { h, SVG_NS } from './svg.js';
import { rdBuR } from './colour.js';
import { rasterize, rasterImage } from './raster.js';
import { fmtValue, tokenLabel, textWidth, FONT_FAMILY, FONT_FAMILY_ZH } from './text.js';
import { format } from 'd3-format';

const fmtSmall = format('.2~e');
const fmtBar = (v) => (v === 0 ? '0' : v >= 0.001 ? v.toFixed(4) : fmtSmall(v));

/**
 * Horizontal bars, one per layer. o: {mean, max, doLayer, width, lang, t, floor}
 * floor (default 0): the full width of a bar is at least this much |ΔA|, so a change
 * that rounding alone leaves (1e-6) is not drawn as a full bar. The scale is on the
 * <svg> as data-scale-max (when a floor is given).
 */
export function deltaBars({ mean, max, doLayer, width, lang, t, floor = 0 }) {
  const L = mean.length;
  const label = (l) => (l === doLayer ? `${t('deltaLayer', l)} (do)` : t('deltaLayer', l));
  const rowH = 22, top = 6, right = 70;
  const left = Math.ceil(Math.max(...mean.map((_, l) => textWidth(label(l), 12, l === doLayer)))) + 12;
  const W = Math.max(220, width);
  const H = top + L * rowH + 6;
  const mx = Math.max(...mean, floor, 1e-12);
  const x = scaleLinear().domain([0, mx]).range([0, W - left - right]);
  const rows = mean.map((v, l) => {
    const y = top + l * rowH;
    const isDo = l === doLayer;
    return h('g', { 'data-role': 'delta-bar', 'data-layer': l, 'data-v': fmtValue(v), 'data-max': fmtValue(max[l]) },
      h('title', null, t('deltaBar', l, fmtValue(v), fmtValue(max[l]))),
      h('text', { x: left - 8, y: y + 15, 'text-anchor': 'end', class: isDo ? 'd-label d-label-do' : 'd-label', 'font-weight': isDo ? 'bold' : null }, label(l)),
      h('rect', { x: left, y: y + 3, width: W - left - right, height: rowH - 6, class: 'd-track', rx: 2 }),
      h('rect', { x: left, y: y + 3, width: Math.max(v > 0 ? 1.5 : 0, x(v)), height: rowH - 6, class: isDo ? 'd-bar d-bar-do' : 'd-bar', rx: 2 }),
      h('text', { x: W - right + 6, y: y + 15, class: 'd-value' }, fmtBar(v)));
  });
  return h('svg', {
    xmlns: SVG_NS, width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'delta-bars', role: 'img',
    'aria-label': t('deltaTitle'), 'font-family': lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY, 'font-size': 12,
    'data-scale-max': floor > 0 ? fmtValue(mx) : null,
  }, rows);
}

/**
 * One small ΔA heatmap. o: {D (T×T), T, tokens, scale, layer, size, t, lang}
 */
function deltaMap({ D, T, tokens, scale, layer, size, t, lang }) {
  const lab = 14;
  const cell = (size - lab) / T;
  const cells = [];
  const tip = (i, j, v) => t('deltaCell', `${i} (${tokenLabel(tokens[i], 30)})`, `${j} (${tokenLabel(tokens[j], 30)})`, fmtValue(v));
  const bitmap = rasterize(T, T);
  if (bitmap) {
    cells.push(rasterImage(lab, lab, size - lab, size - lab, { values: D, R: T, C: T, color: scale, title: (i, j) => tip(i, j, D[i * T + j]), value: (i, j) => fmtValue(D[i * T + j]) }));
  }
  for (let i = 0; i < T && !bitmap; i++) {
    for (let j = 0; j < T; j++) {
      const v = D[i * T + j];
      cells.push(h('rect', {
        x: lab + j * cell, y: lab + i * cell, width: cell, height: cell, fill: scale(v),
        'data-i': i, 'data-j': j, 'data-v': fmtValue(v),
      }, h('title', null, t('deltaCell', `${i} (${tokenLabel(tokens[i], 30)})`, `${j} (${tokenLabel(tokens[j], 30)})`, fmtValue(v)))));
    }
  }
  return h('svg', {
    xmlns: SVG_NS, width: size, height: size, viewBox: `0 0 ${size} ${size}`, class: 'delta-map', role: 'img',
    'data-layer': layer, 'aria-label': t('deltaLayer', layer), 'font-family': lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY,
  },
  h('text', { x: lab, y: lab - 2, 'font-size': 10, class: 'd-label' }, 'i ↓  j →'),   // its baseline in the margin: in a CJK font the arrows rise above y = 10 − 10
  h('g', { 'shape-rendering': 'crispEdges', 'data-role': 'delta' }, cells),
  h('rect', { x: lab, y: lab, width: size - lab, height: size - lab, fill: 'none', class: 'd-frame' }));
}

/**
 * Small multiples of ΔĀ for layers doLayer..L−1, each on its own symmetric scale
 * (±max |ΔĀ| of that layer): the change shrinks as it travels up, and one shared
 * scale showed the layers above the do as blank. Returns {maps: [{layer, node, scaleMax}]}.
 */
export function deltaMaps({ avgDelta, doLayer, T, tokens, size, t, lang }) {
  const maps = [];
  for (let l = doLayer; l < avgDelta.length; l++) {
    let m = 0;
    for (const v of avgDelta[l]) m = Math.max(m, Math.abs(v));
    const scale = rdBuR(m > 0 ? m : 1e-6);
    const node = deltaMap({ D: avgDelta[l], T, tokens, scale, layer: l, size, t, lang });
    node.attrs['data-scale-max'] = fmtValue(m);
    maps.push({ layer: l, node, scaleMax: m });
  }
  return { maps };
}
