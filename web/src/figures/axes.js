// axes.js — tick-label thinning, y titles fitted to the plot, the colour bar.

import { h } from './svg.js';
import { FONT, INK, fmtValue, lineWidth, textWidth } from './text.js';

export const SIN45 = Math.SQRT1_2;

const NICE_STEPS = [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 1000];

/**
 * Show every step-th label so that labels never overlap on cells of `cell` px, when
 * one label needs `need` px along the axis (labelNeed). Steps are "nice" numbers.
 */
export function labelStep(cell, need) {
  const raw = Math.max(1, Math.ceil(need / Math.max(cell, 1e-9)));
  return NICE_STEPS.find((s) => s >= raw) ?? raw;
}

/** Room one tick label needs along its axis: y labels and 45°-rotated x labels by font size, horizontal ones by width. */
export function labelNeed(kind, size, width = 0) {
  if (kind === 'rotated') return (size * 1.05) / SIN45;
  if (kind === 'horizontal') return width + 3;
  return size * 1.15;
}

/** The smallest font size (px) a y title is shrunk to. */
export const Y_TITLE_MIN = 8;

/**
 * A panel's y title fitted to `room` px (the plot's height): as it is when it fits,
 * else wrapped at spaces into lines that fit (words and bracketed groups are never
 * split; rich lines stay whole), and drawn smaller, down to Y_TITLE_MIN, while a line is still too
 * long. Returns {lines, size}.
 */
export function fitYTitle(lines, room, size = FONT.label) {
  const widest = (ls, sz) => Math.max(0, ...ls.map((l) => lineWidth(l, sz)));
  if (widest(lines, size) <= room) return { lines, size };
  const wrapped = [];
  for (const ln of lines) {
    if (typeof ln !== 'string') { wrapped.push(ln); continue; }
    let cur = '';
    // a bracketed group, "(Q space)", stays whole
    for (const word of ln.split(/ (?![^()（）]*[)）])/).filter((x) => x)) {
      const next = cur ? `${cur} ${word}` : word;
      if (cur && textWidth(next, size) > room) { wrapped.push(cur); cur = word; } else cur = next;
    }
    if (cur) wrapped.push(cur);
  }
  const w = widest(wrapped, size);
  return { lines: wrapped, size: w <= room ? size : Math.max(Y_TITLE_MIN, (size * room) / w) };
}

// A y title is a line, or {lines: [line, ...]} for several (Fig. 3 has
// a two-line y title).
export function yTitleLines(t) {
  if (!t) return [];
  return t.lines ? t.lines : [t];
}

/** A vertical colour bar of height hgt at (x, y): 96 stacked bands + ticks on the right. */
export function colorbar(x, y, w, hgt, scale, fmt) {
  const [d0, d1] = [scale.domain()[0], scale.domain()[scale.domain().length - 1]];
  const n = 96;
  const bands = [];
  for (let k = 0; k < n; k++) {
    const v = d1 - ((k + 0.5) / n) * (d1 - d0);
    bands.push(h('rect', { x, y: y + (k * hgt) / n, width: w, height: hgt / n + 0.6, fill: scale(v) }));
  }
  const pos = (v) => y + ((d1 - v) / (d1 - d0 || 1)) * hgt;
  const ticks = scale.ticks(6).filter((t) => t >= Math.min(d0, d1) - 1e-12 && t <= Math.max(d0, d1) + 1e-12);
  const tk = ticks.map((t) => h('g', null,
    h('line', { x1: x + w, x2: x + w + 4, y1: pos(t), y2: pos(t), stroke: INK, 'stroke-width': 0.8 }),
    h('text', { x: x + w + 6, y: pos(t) + FONT.cbar * 0.35, 'font-size': FONT.cbar, fill: INK }, fmt(t))));
  return h('g', { 'data-role': 'colorbar', 'data-min': fmtValue(d0), 'data-max': fmtValue(d1) },
    h('g', { 'shape-rendering': 'crispEdges' }, bands), tk);
}
