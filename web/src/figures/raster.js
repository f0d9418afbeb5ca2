// raster.js — heatmaps drawn as bitmaps above a size threshold.

import { rasterNode } from './svg.js';

// ── big heatmaps as bitmaps ─────────────────────────────────────────────────
//
// A heatmap of T×T cells as T² <rect>s with a <title> each costs seconds of the
// main thread to build, lay out and paint once T is in the hundreds (measured:
// 19.5 s at T = 209). Above a threshold a page may ask for one <image> per
// heatmap instead: a bitmap of one pixel per cell (a <canvas> that toElement
// paints, stretched crisp over the plot), carrying the values, the colour scale and the
// tooltip text for hover and clicks. Off by default: files (SVG export, Node,
// figures.mjs) always get the vector cells.

let rasterCells = Infinity;

/**
 * Heatmaps of more than `cells` cells are drawn as bitmaps (Infinity: never, the
 * default). Returns the previous threshold.
 */
export function setRasterThreshold(cells) {
  const old = rasterCells;
  rasterCells = cells > 0 ? cells : Infinity;
  return old;
}

/** Build with the vector cells whatever the threshold (exports). */
export function vectorOnly(fn) {
  const old = setRasterThreshold(Infinity);
  try { return fn(); } finally { setRasterThreshold(old); }
}

/** True when an R×C heatmap is drawn as a bitmap under the current threshold. */
export function rasterize(R, C) {
  return R * C > rasterCells;
}

/**
 * The <foreignObject> of a bitmap heatmap at (x, y), w × h px. The virtual node
 * carries `raster` (values, R, C, color, title(i, j)); svg.js's toElement puts a
 * <canvas> of one pixel per cell in it.
 */
export function rasterImage(x, y, w, hgt, raster) {
  return rasterNode({ x, y, width: w, height: hgt, 'data-raster': `${raster.R}x${raster.C}` }, raster);
}
