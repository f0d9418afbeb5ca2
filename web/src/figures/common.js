// common.js — what the four figures share: fonts and sizes, colour maps, input
// checks, text measurement, rich (sub/superscript) text, the heatmap and colour-bar
// panels, and the figure layout that places panels like matplotlib's subplots with
// bbox_inches="tight".
//
// A figure is built from panels. A panel has a plot area of (aw·s) × (ah·s) px and
// fixed margins (left/right/top/bottom, from its labels); layoutFigure() picks the
// largest s that fits the figure's width (and its default height, the chapter's
// figsize at 96 dpi), stacks the panels in a column when the width is too small for
// a row (phones), and returns the <svg> node. Every function here is pure.

import { scaleLinear, scaleSequential, scaleDiverging } from 'd3-scale';
import { interpolateYlOrRd, interpolateRdBu, interpolateGreens } from 'd3-scale-chromatic';
import { format } from 'd3-format';
import { h, SVG_NS, rasterNode } from './svg.js';
import { AttnlabError } from '../core/errors.js';

// ── fonts and sizes ─────────────────────────────────────────────────────────

/**
 * DejaVu Sans is matplotlib's default face (what the chapter's PNGs use); the CJK
 * faces cover the Chinese labels (Debian: fonts-noto-cjk, fonts-wqy-zenhei), then
 * common Latin and CJK faces of other systems.
 */
export const FONT_FAMILY = "'DejaVu Sans', 'Noto Sans CJK SC', 'Noto Sans SC', 'WenQuanYi Zen Hei', " +
  "'Source Han Sans SC', 'PingFang SC', 'Microsoft YaHei', 'Liberation Sans', Arial, sans-serif";

/**
 * Chinese figures start with the CJK faces so that every glyph of a label comes from
 * one face (a per-glyph fallback loses the bold weight of the titles in resvg).
 */
export const FONT_FAMILY_ZH = "'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', 'WenQuanYi Zen Hei', " +
  "'PingFang SC', 'Microsoft YaHei', 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif";

/** Font sizes in px (seaborn font_scale 1.1 and the chapter's 8 pt tick labels, at 96 dpi). */
export const FONT = Object.freeze({ suptitle: 15, title: 15, label: 14, tick: 11, cbar: 11, annot: 11, legend: 12, node: 11 });

export const INK = '#262626';   // matplotlib/seaborn ".15"
export const PAD = 12;          // outer padding of a figure (bbox_inches="tight" pad)

/** Default figure sizes: the chapter's figsize (inches) at 96 px per inch. */
export const FIGSIZE = Object.freeze({
  fig1: [13 * 96, 5 * 96],
  fig2: [13 * 96, 5 * 96],
  fig3: [13 * 96, 5 * 96],
  fig4: [16 * 96, 5 * 96],
});

/** {width, height} of a figure: the given width (default: the chapter's), height scaled with it. */
export function figSize(name, width) {
  const [W, H] = FIGSIZE[name];
  const w = width ?? W;
  if (typeof w !== 'number' || !(w >= 200) || !Number.isFinite(w)) {
    throw new AttnlabError('ERANGE', `figure width must be a number ≥ 200 px, got ${w}`);
  }
  return { width: w, height: (H * w) / W };
}

// ── number formats ──────────────────────────────────────────────────────────

export const fmt2 = format('.2f');
export const fmt3 = format('.3f');
/** A value for data-v attributes and tooltips: up to 6 significant digits. */
export function fmtValue(v) {
  return String(Number(v.toPrecision(6)));
}

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

// ── input checks ────────────────────────────────────────────────────────────

/** A T×T matrix as a Float64Array (row-major), from a flat array-like or an array of rows. */
export function asMatrix(A, T, name = 'A') {
  if (!Number.isInteger(T) || T < 1) throw new AttnlabError('EINVAL', `${name}: T must be a positive integer, got ${T}`);
  if (A == null || typeof A !== 'object') throw new AttnlabError('ETYPE', `${name} must be a T×T matrix`);
  const out = new Float64Array(T * T);
  if (ArrayBuffer.isView(A) && A.length === T * T) {
    out.set(A);   // typed arrays (the usual case): one copy, no per-element access of a polymorphic array
  } else if (A.length === T && T > 1 && A[0] != null && typeof A[0] === 'object') {
    for (let i = 0; i < T; i++) {
      if (!A[i] || A[i].length !== T) throw new AttnlabError('ESHAPE', `${name}: row ${i} must have ${T} values`);
      for (let j = 0; j < T; j++) out[i * T + j] = A[i][j];
    }
  } else {
    if (A.length !== T * T) throw new AttnlabError('ESHAPE', `${name}: expected ${T * T} values (T = ${T}), got ${A.length}`);
    for (let k = 0; k < T * T; k++) out[k] = A[k];
  }
  for (let k = 0; k < out.length; k++) {
    if (!Number.isFinite(out[k])) throw new AttnlabError('ENAN', `${name}: value ${k} is not finite`);
  }
  return out;
}

/** T from the tokens, or from a square matrix's length when tokens are absent. */
export function sizeOf(tokens, A) {
  if (Array.isArray(tokens)) return tokens.length;
  if (A && A.length && typeof A[0] === 'object') return A.length;
  const T = Math.round(Math.sqrt(A ? A.length : 0));
  if (!A || T * T !== A.length || T < 1) throw new AttnlabError('ESHAPE', 'cannot infer T: pass tokens or a square matrix');
  return T;
}

export function checkIndex(x, T, name) {
  if (!Number.isInteger(x) || x < 0 || x >= T) throw new AttnlabError('ERANGE', `${name} = ${x} is outside 0..${T - 1}`);
}

export function checkLang(lang) {
  if (lang !== 'en' && lang !== 'zh') throw new AttnlabError('EINVAL', `lang must be 'en' or 'zh', got ${JSON.stringify(lang)}`);
  return lang;
}

// ── token labels ────────────────────────────────────────────────────────────

/**
 * A token's display string as a tick label: trimmed (the chapter strips GPT-2's Ġ),
 * whitespace-only tokens made visible, long ones shortened. Always plain text.
 */
export function tokenLabel(tok, max = 14) {
  let s = String(tok);
  const t = s.trim();
  if (t.length > 0) s = t;
  else s = s.replace(/\n/g, '↵').replace(/\t/g, '⇥').replace(/ /g, '␣') || '∅';
  const chars = Array.from(s);
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : s;
}

// ── text measurement (no DOM in Node: per-character estimates for DejaVu Sans) ──

const NARROW = new Set([...'iIjlt.,:;!|\'"()[]{} `ᵢⱼ·']);
const WIDE = new Set([...'mwMW@%']);

function isWide(cp) {
  return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) || cp >= 0x1f300;
}

/** Estimated advance width (px) of a plain string. Errs a little wide on purpose. */
export function textWidth(s, size, bold = false) {
  let em = 0;
  for (const ch of String(s)) {
    const cp = ch.codePointAt(0);
    if (isWide(cp)) em += 1.0;
    else if (NARROW.has(ch)) em += 0.34;
    else if (WIDE.has(ch)) em += 0.9;
    else if (ch >= 'A' && ch <= 'Z') em += 0.7;
    else em += 0.62;
  }
  return em * size * (bold ? 1.15 : 1);
}

/**
 * Rich text: a line is a string or an array of segments, each a string or
 * {sub: string} / {sup: string}. Segments are text nodes in <tspan>s; nothing is
 * parsed, so token strings can be segments safely.
 */
function segmentsOf(line) {
  return Array.isArray(line) ? line : [line];
}

export function lineWidth(line, size, bold = false) {
  let w = 0;
  for (const seg of segmentsOf(line)) {
    if (typeof seg === 'string') w += textWidth(seg, size, bold);
    else w += textWidth(seg.sub ?? seg.sup, size * 0.72, bold);
  }
  return w;
}

/** One <text> line with sub/superscripts as shifted, smaller <tspan>s (dy works in every renderer). */
export function richText(x, y, line, { size, weight, anchor = 'middle', fill = INK, transform, role } = {}) {
  const kids = [];
  let shift = 0;
  for (const seg of segmentsOf(line)) {
    if (typeof seg === 'string') {
      kids.push(h('tspan', { dy: shift ? -shift : null }, seg));
      shift = 0;
    } else {
      const d = seg.sub !== undefined ? size * 0.25 : -size * 0.38;
      kids.push(h('tspan', { dy: d - shift, 'font-size': size * 0.72 }, seg.sub ?? seg.sup));
      shift = d;
    }
  }
  if (shift) kids.push(h('tspan', { dy: -shift }, '\u200b'));
  return h('text', {
    x, y, 'font-size': size, 'font-weight': weight, 'text-anchor': anchor, fill, transform, 'data-role': role,
  }, kids);
}

/**
 * Several centred lines starting at baseline y; returns the <g>. A line wider than
 * maxW is drawn smaller so that it fits (down to 60 % of size).
 */
export function titleBlock(cx, y, lines, { size, weight, role, maxW = Infinity } = {}) {
  const lh = size * 1.25;
  return h('g', { 'data-role': role }, lines.map((ln, k) => {
    const w = lineWidth(ln, size, weight === 'bold');
    const sz = w > maxW ? Math.max(size * 0.6, (size * maxW) / w) : size;
    return richText(cx, y + k * lh, ln, { size: sz, weight });
  }));
}

/**
 * Wrap plain-string lines at spaces (or anywhere, for unbroken CJK or long words)
 * so that each fits maxW; rich lines (segment arrays) are kept whole.
 */
export function wrapLines(lines, size, maxW, bold = false) {
  const out = [];
  for (const ln of lines) {
    if (typeof ln !== 'string' || textWidth(ln, size, bold) <= maxW) { out.push(ln); continue; }
    let cur = '';
    const flush = () => { if (cur) out.push(cur); cur = ''; };
    for (const word of ln.split(/(?<= )/)) {
      if (textWidth(cur + word, size, bold) <= maxW) { cur += word; continue; }
      flush();
      if (textWidth(word, size, bold) <= maxW) { cur = word; continue; }
      for (const ch of word) {
        if (textWidth(cur + ch, size, bold) > maxW) flush();
        cur += ch;
      }
    }
    flush();
  }
  return out.map((l) => (typeof l === 'string' ? l.trim() : l));
}

export function blockHeight(lines, size) {
  return lines.length ? lines.length * size * 1.25 : 0;
}

// ── heatmap panel ───────────────────────────────────────────────────────────

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

/** Width a centred panel title may use: the plot plus the smaller of its two margins, twice. */
export function titleRoom(pw, left, right) {
  return pw + 2 * Math.min(left, right) + 24;
}

const SIN45 = Math.SQRT1_2;

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

/**
 * A heatmap panel. o: {
 *   values: Float64Array R*C (row-major), R, C,
 *   color: v → css colour, cbar: {scale (d3 scale with .domain()/.ticks()), format} | null,
 *   xLabels, yLabels: string[] (plain text; null → none), rotateX: boolean,
 *   xTitle, yTitle: line | null, title: line[],
 *   annotate: (v) → string | null (values printed in cells),
 *   cellTitle: (i, j, v) → string (hover tooltip), role: data-role of the cell group,
 *   box: {row} | {row, col} | null (an outline on a row or a cell), boxColor }
 */
export function heatmapPanel(o, yFit = { lines: yTitleLines(o.yTitle), size: FONT.label }) {
  const R = o.R, C = o.C;
  const xl = o.xLabels || null, yl = o.yLabels || null;
  const tick = FONT.tick;
  const yLabW = yl ? Math.max(...yl.map((s) => textWidth(s, tick))) : 0;
  const xLabW = xl ? Math.max(...xl.map((s) => textWidth(s, tick))) : 0;
  const yLines = yFit.lines, ySize = yFit.size;
  const yTitleW = ySize * 1.25 * yLines.length;
  const left = yTitleW + (yl ? yLabW + 6 : 0) + 4;
  const xLabH = xl ? (o.rotateX ? xLabW * SIN45 + tick * SIN45 + 6 : tick * 1.3 + 4) : 0;
  const bottom = xLabH + (o.xTitle ? FONT.label * 1.3 + 4 : 0) + 2;
  const cbarTickW = o.cbar ? Math.max(...o.cbar.scale.ticks(6).map((t) => textWidth(o.cbar.format(t), FONT.cbar))) : 0;
  const right = o.cbar ? 16 + 14 + 5 + cbarTickW + 4 : 4;
  const top = blockHeight(o.title, FONT.title) + 8;
  const aw = C >= R ? 1 : C / R, ah = R >= C ? 1 : R / C;
  // Rotated x labels hang left of the plot; make sure the left margin covers them.
  const hang = xl && o.rotateX ? Math.max(0, xLabW * SIN45 - left) : 0;

  function render(x0, y0, s) {
    const cell = (aw * s) / C;
    const pw = cell * C, ph = cell * R;
    const kids = [];
    // title
    kids.push(titleBlock(x0 + pw / 2, y0 - top + FONT.title, o.title, { size: FONT.title, weight: 'bold', role: 'panel-title', maxW: titleRoom(pw, left, right) }));
    // cells
    const raster = rasterize(R, C);
    const tip = (i, j, v) => (o.cellTitle ? o.cellTitle(i, j, v) : `(${i}, ${j}): ${fmtValue(v)}`);
    if (raster) {
      kids.push(h('g', { 'data-role': o.role || 'heatmap' }, rasterImage(x0, y0, pw, ph, {
        values: o.values, R, C, color: o.color, title: (i, j) => tip(i, j, o.values[i * C + j]), value: (i, j) => fmtValue(o.values[i * C + j]),
      })));
    } else {
      const cells = [];
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          const v = o.values[i * C + j];
          cells.push(h('rect', {
            x: x0 + j * cell, y: y0 + i * cell, width: cell, height: cell, fill: o.color(v),
            'data-i': i, 'data-j': j, 'data-v': fmtValue(v),
          }, h('title', null, tip(i, j, v))));
        }
      }
      kids.push(h('g', { 'data-role': o.role || 'heatmap', 'shape-rendering': 'crispEdges' }, cells));
    }
    // annotations (not on a bitmap: its cells are too small to print in)
    if (o.annotate && !raster) {
      const size = Math.max(4, Math.min(FONT.annot, cell * 0.3));
      const ann = [];
      for (let i = 0; i < R; i++) {
        for (let j = 0; j < C; j++) {
          const v = o.values[i * C + j];
          ann.push(h('text', {
            x: x0 + (j + 0.5) * cell, y: y0 + (i + 0.5) * cell + size * 0.36, 'font-size': size,
            'text-anchor': 'middle', fill: textColorOn(o.color(v)), 'data-i': i, 'data-j': j,
          }, o.annotate(v)));
        }
      }
      kids.push(h('g', { 'data-role': 'annotations', 'pointer-events': 'none' }, ann));
    }
    // outline box (Fig. 4's intervened row, Fig. 2's chosen cell)
    if (o.box) {
      const bx = o.box.col === undefined ? x0 : x0 + o.box.col * cell;
      const bw = o.box.col === undefined ? pw : cell;
      kids.push(h('rect', {
        x: bx, y: y0 + o.box.row * cell, width: bw, height: cell, fill: 'none',
        stroke: o.boxColor || '#0000ff', 'stroke-width': 2.5, 'data-role': 'box', 'data-row': o.box.row,
        'data-col': o.box.col, 'pointer-events': 'none',
      }));
    }
    // tick labels
    if (yl) {
      const st = labelStep(cell, labelNeed('y', tick));
      const g = [];
      for (let i = 0; i < R; i += st) {
        g.push(h('text', { x: x0 - 6, y: y0 + (i + 0.5) * cell + tick * 0.35, 'text-anchor': 'end', 'data-i': i }, yl[i]));
      }
      kids.push(h('g', { 'data-role': 'ylabels', 'font-size': tick, fill: INK }, g));
    }
    if (xl) {
      const st = labelStep(cell, o.rotateX ? labelNeed('rotated', tick) : labelNeed('horizontal', tick, xLabW));
      const g = [];
      for (let j = 0; j < C; j += st) {
        const x = x0 + (j + 0.5) * cell;
        if (o.rotateX) {
          const y = y0 + ph + 6;
          g.push(h('text', { x: x + tick * 0.3, y: y + tick * 0.3, 'text-anchor': 'end', transform: `rotate(-45 ${x + tick * 0.3} ${y + tick * 0.3})`, 'data-j': j }, xl[j]));
        } else {
          g.push(h('text', { x, y: y0 + ph + 4 + tick, 'text-anchor': 'middle', 'data-j': j }, xl[j]));
        }
      }
      kids.push(h('g', { 'data-role': 'xlabels', 'font-size': tick, fill: INK }, g));
    }
    // axis titles
    if (o.xTitle) kids.push(richText(x0 + pw / 2, y0 + ph + xLabH + FONT.label + 2, o.xTitle, { size: FONT.label, role: 'xtitle' }));
    {
      yLines.forEach((ln, k) => {
        const x = x0 - left + ySize * (1.0 + 1.25 * k);
        const y = y0 + ph / 2;
        // never taller than the plot (it would run into the title and the x labels): shrink if it still is
        const w = lineWidth(ln, ySize);
        const size = w > ph ? Math.max(Y_TITLE_MIN, (ySize * ph) / w) : ySize;
        kids.push(richText(x, y, ln, { size, transform: `rotate(-90 ${x} ${y})`, role: 'ytitle' }));
      });
    }
    // colour bar
    if (o.cbar) kids.push(colorbar(x0 + pw + 16, y0 + ph * 0.1, 14, ph * 0.8, o.cbar.scale, o.cbar.format));
    return h('g', { 'data-role': 'panel' }, kids);
  }
  const titleW = Math.max(0, ...o.title.map((l) => lineWidth(l, FONT.title, true)));
  // At scale s the plot is ah·s px tall; a y title longer than that is wrapped (and
  // if need be shrunk) to fit it, which widens the left margin: layoutFigure asks
  // when it stacks the panels.
  const withScale = (s) => {
    const fit = fitYTitle(yTitleLines(o.yTitle), ah * s);
    const same = fit.size === ySize && fit.lines.length === yLines.length && fit.lines.every((l, k) => l === yLines[k]);
    return same ? panel : heatmapPanel(o, fit);
  };
  const panel = { left: left + hang, right, top, bottom, aw, ah, titleW, withScale, render: (x0, y0, s) => render(x0 + hang, y0, s) };
  return panel;
}

/** The smallest font size (px) a y title is shrunk to. */
const Y_TITLE_MIN = 8;

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

// ── figure layout ───────────────────────────────────────────────────────────

/** How far a panel's (possibly shrunk) title reaches out from its plot's centre line, minus half the plot. */
function titleOverhang(p, s) {
  const pw = p.aw * s;
  const w = Math.min(p.titleW || 0, titleRoom(pw, p.left, p.right));
  return Math.max(0, w / 2 - pw / 2);
}

/**
 * The plot side of panels in a row: as wide as the width allows (sW) and as tall as
 * the figure's height allows (sH), but not under min(200 px, 3/4 of sW): the height
 * scales with the width while titles and tick labels do not, so at 600–850 px the
 * height bound alone left 5 px cells under a three-line title. Such a figure grows
 * taller instead; at the chapter's sizes the height bound is above the floor.
 */
function rowScale(sW, sH) {
  return Math.max(40, Math.min(sW, Math.max(sH, Math.min(200, 0.75 * sW))));
}

/** The plot scale s layoutFigure gives these panels: side by side (row) or stacked. */
function panelScale(panels, width, height, supH, minS, gap) {
  const n = panels.length;
  const fixedW = 2 * PAD + panels.reduce((a, p) => a + p.left + p.right, 0) + gap * (n - 1);
  const sW = (width - fixedW) / panels.reduce((a, p) => a + p.aw, 0);
  if (sW >= minS || n === 1) {
    const sH = (height - 2 * PAD - supH - Math.max(...panels.map((p) => p.top)) - Math.max(...panels.map((p) => p.bottom))) /
      Math.max(...panels.map((p) => p.ah));
    return { row: true, s: rowScale(sW, sH) };
  }
  return { row: false, s: Math.max(40, Math.min(...panels.map((p) => (width - 2 * PAD - p.left - p.right) / p.aw))) };
}

/**
 * Place panels under a suptitle. width: the figure width (px); height: the height
 * the row may use at most (the chapter's figsize), the result is cropped to its
 * content like bbox_inches="tight". Below minS px per plot side in a row, panels
 * are stacked in a column (narrow screens). tight: crop the outer spare width too
 * (the figure then is narrower than `width`; for files, not for a page layout).
 * attrs: extra attributes of the <svg> (data-* values the page and tests read).
 */
export function layoutFigure({ width, height, suptitle, panels, figure, ariaLabel, attrs, lang = 'en', tight = false, minS = 150, gap = 36 }) {
  if (!(width > 0)) throw new AttnlabError('EINVAL', `figure width must be positive, got ${width}`);
  suptitle = wrapLines(suptitle, FONT.suptitle, width - 2 * PAD);
  const supH = blockHeight(suptitle, FONT.suptitle) + (suptitle.length ? 10 : 0);
  // Stacked panels (narrow screens) whose margins depend on their size (withScale:
  // a y title wrapped to the plot's height) adapt to the scale they get; the new
  // margins change the scale, so fit again. Panels in a row keep their margins, so
  // a row's layout never depends on it (the render shrinks a y title taller than
  // its plot instead).
  for (let pass = 0; pass < 3; pass++) {
    const { row, s } = panelScale(panels, width, height, supH, minS, gap);
    if (row) break;
    const next = panels.map((p) => (p.withScale ? p.withScale(s) : p));
    if (next.every((p, k) => p === panels[k])) break;
    panels = next;
  }
  const n = panels.length;
  const fixedW = 2 * PAD + panels.reduce((a, p) => a + p.left + p.right, 0) + gap * (n - 1);
  const sumAw = panels.reduce((a, p) => a + p.aw, 0);
  const maxTop = Math.max(...panels.map((p) => p.top));
  const maxBottom = Math.max(...panels.map((p) => p.bottom));
  const maxAh = Math.max(...panels.map((p) => p.ah));
  const sW = (width - fixedW) / sumAw;
  const sH = (height - 2 * PAD - supH - maxTop - maxBottom) / maxAh;
  const kids = [];
  let H;
  if (sW >= minS || n === 1) {
    const s = rowScale(sW, sH);   // as panelScale
    // Like matplotlib's subplots: each panel centred in its slot, so the outer
    // margins get half the spare space of an inner gap. tight crops to the content
    // (bbox_inches="tight", and the inner gaps too): just room for titles that
    // reach beyond their panel.
    const used = fixedW - 2 * PAD - gap * (n - 1) + sumAw * s;
    const spare = Math.max(0, width - 2 * PAD - used - gap * (n - 1));
    const unit = tight ? 0 : spare / (2 * n);
    const ovL = panels.map((p) => Math.max(0, titleOverhang(p, s) - p.left));
    const ovR = panels.map((p) => Math.max(0, titleOverhang(p, s) - p.right));
    const gaps = panels.slice(1).map((p, k) => (tight ? Math.max(gap, ovR[k] + ovL[k + 1] + 24) : gap + 2 * unit));
    let x = PAD + unit;
    if (tight) {
      const content = 2 * PAD + used + gaps.reduce((a, g) => a + g, 0) + ovL[0] + ovR[n - 1];
      const supW = Math.max(0, ...suptitle.map((l) => lineWidth(l, FONT.suptitle))) + 2 * PAD;
      const w = Math.min(width, Math.max(content, supW));
      x = PAD + ovL[0] + (w - content) / 2;
      width = w;
    }
    const y0 = PAD + supH + maxTop;
    panels.forEach((p, k) => {
      const ph = p.ah * s;
      kids.push(p.render(x + p.left, y0 + (maxAh * s - ph) / 2, s));
      x += p.left + p.aw * s + p.right + (k < n - 1 ? gaps[k] : 0);
    });
    H = y0 + maxAh * s + maxBottom + PAD;
  } else {
    const s = Math.max(40, Math.min(...panels.map((p) => (width - 2 * PAD - p.left - p.right) / p.aw)));   // as panelScale
    let y = PAD + supH;
    for (const p of panels) {
      const pw = p.left + p.aw * s + p.right;
      kids.push(p.render((width - pw) / 2 + p.left, y + p.top, s));
      y += p.top + p.ah * s + p.bottom + 16;
    }
    H = y - 16 + PAD;
  }
  kids.unshift(h('rect', { x: 0, y: 0, width, height: H, fill: '#ffffff', 'data-role': 'background' }),
    suptitle.length ? titleBlock(width / 2, PAD + FONT.suptitle, suptitle, { size: FONT.suptitle, role: 'suptitle', maxW: width - 2 * PAD }) : null);
  return h('svg', {
    xmlns: SVG_NS, width: Math.round(width), height: Math.round(H), viewBox: `0 0 ${Math.round(width)} ${Math.round(H)}`,
    'font-family': lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY, lang: lang === 'zh' ? 'zh-Hans' : 'en', role: 'img', 'aria-label': ariaLabel, 'data-figure': figure, ...attrs,
  }, kids);
}
