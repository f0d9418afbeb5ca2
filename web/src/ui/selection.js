// selection.js — the intervened cell (effect row i, cause column j) as the page, the
// widget and the poster script choose it and outline it on the figures.

import { tokenLabel } from '../figures/text.js';

/** The chapter's cell: row "sank" (effect), column "storm" (cause); else the last row and column min(2, T−1). */
export function defaultSelection(tokens) {
  const labels = tokens.map((s) => tokenLabel(s, 1000).toLowerCase());
  const T = tokens.length;
  const row = labels.lastIndexOf('sank');
  const col = labels.indexOf('storm');
  return { row: row >= 0 ? row : T - 1, col: col >= 0 && col < T ? col : Math.min(2, T - 1) };
}

/** The geometry of cell (i, j) of a bitmap heatmap (figures/raster.js rasterImage), in its svg's units. */
export function rasterCell(img, i, j) {
  const r = img.__raster;
  const x = Number(img.getAttribute('x')), y = Number(img.getAttribute('y'));
  const cw = Number(img.getAttribute('width')) / r.C, ch = Number(img.getAttribute('height')) / r.R;
  return { x: x + j * cw, y: y + i * ch, width: cw, height: ch };
}

/**
 * Outline cell (row, col) in the heatmap groups `roles` of a figure's <svg> element, vector
 * or bitmap cells alike; `attrs` style the outline (the page styles it by a class, the
 * widget inline, as its shadow root has no page stylesheet).
 */
export function outlineCell(svg, roles, row, col, attrs = { class: 'sel-outline' }) {
  for (const role of roles) {
    const r = svg.querySelector(`g[data-role="${role}"] rect[data-i="${row}"][data-j="${col}"]`);
    const img = r ? null : svg.querySelector(`g[data-role="${role}"] [data-raster]`);
    if (!r && !(img && img.__raster)) continue;
    const o = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    const geo = img ? rasterCell(img, row, col) : null;
    for (const a of ['x', 'y', 'width', 'height']) o.setAttribute(a, geo ? String(geo[a]) : r.getAttribute(a));
    for (const [k, v] of Object.entries(attrs)) o.setAttribute(k, v);
    o.setAttribute('data-role', 'selection');
    svg.appendChild(o);
  }
}
