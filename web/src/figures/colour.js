// colour.js — the colour maps of the figures (d3-scale-chromatic) and the text colour
// that stays readable on a cell.

import { scaleDiverging, scaleLinear, scaleSequential } from 'd3-scale';
import { interpolateGreens, interpolateRdBu, interpolateYlOrRd } from 'd3-scale-chromatic';
import { AttnlabError } from '../core/errors.js';
import { INK } from './text.js';

// ── colour maps (d3-scale-chromatic; no hand-rolled colour maps) ────────────

/** YlOrRd over [vmin, vmax], clamped (seaborn's cmap="YlOrRd"). */
export function ylOrRd(vmin, vmax) {
  const hi = vmax > vmin ? vmax : vmin + 1;
  return scaleSequential(interpolateYlOrRd).domain([vmin, hi]).clamp(true);
}

/**
 * RdBu_r centred at 0 with symmetric limits [-m, m] (seaborn center=0,
 * vmin=-vmax). Also stands in for matplotlib's coolwarm in Fig. 2:
 * d3-scale-chromatic has no coolwarm, and its nearest diverging map (blue → near
 * white → red, centred) is reversed RdBu, so we stay within the library.
 */
export function rdBuR(m) {
  const lim = m > 0 && Number.isFinite(m) ? m : 1;
  return scaleDiverging((t) => interpolateRdBu(1 - t)).domain([-lim, 0, lim]).clamp(true);
}

/**
 * seaborn's "Greens_d" palette of n colours: a blend from #333333 through the two
 * colours of color_palette("Greens_r", 2) (Greens at 2/3 and 1/3).
 */
export function greensD(n) {
  const blend = scaleLinear().domain([0, 0.5, 1])
    .range(['#333333', interpolateGreens(2 / 3), interpolateGreens(1 / 3)]);
  return Array.from({ length: n }, (_, k) => blend(n === 1 ? 0 : k / (n - 1)));
}

function parseRgb(css) {
  const m = /^rgb\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(css);
  if (m) return [+m[1], +m[2], +m[3]];
  const x = /^#([0-9a-f]{6})$/i.exec(css);
  if (x) return [0, 2, 4].map((k) => parseInt(x[1].slice(k, k + 2), 16));
  throw new AttnlabError('EINVAL', `unparsable colour ${css}`);
}

/** Relative luminance of a css rgb()/#rrggbb colour (matplotlib's relative_luminance). */
export function luminance(css) {
  const [r, g, b] = parseRgb(css).map((c) => {
    const x = c / 255;
    return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Annotation colour on a cell, as seaborn: dark ink on light cells, white on dark ones. */
export function textColorOn(css) {
  return luminance(css) > 0.408 ? INK : '#ffffff';
}
