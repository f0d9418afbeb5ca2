// layout.js — figure sizes and the figure layout that places panels like matplotlib's
// subplots with bbox_inches="tight".
//
// A figure is built from panels. A panel has a plot area of (aw·s) × (ah·s) px and
// fixed margins (left/right/top/bottom, from its labels); layoutFigure() picks the
// largest s that fits the figure's width (and its default height, the chapter's
// figsize at 96 dpi), stacks the panels in a column when the width is too small for
// a row (phones), and returns the <svg> node.

import { AttnlabError } from '../core/errors.js';
import { SVG_NS, h } from './svg.js';
import { FONT, FONT_FAMILY, FONT_FAMILY_ZH, blockHeight, lineWidth, titleBlock, wrapLines } from './text.js';

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

/** Width a centred panel title may use: the plot plus the smaller of its two margins, twice. */
export function titleRoom(pw, left, right) {
  return pw + 2 * Math.min(left, right) + 24;
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
 * minPlot: the smallest plot side (px; a page passes min cell size × T): a figure whose
 * plots would be smaller is drawn wider (and taller) than `width`, its suptitle centred in
 * the first `width` px, for a box that scrolls.
 */
export function layoutFigure({ width, height, suptitle, panels, figure, ariaLabel, attrs, lang = 'en', tight = false, minS = 150, gap = 36,
  minPlot = 0 }) {
  if (!(width > 0)) throw new AttnlabError('EINVAL', `figure width must be positive, got ${width}`);
  const view = width;   // the width asked for (a page's box): a figure grown by minPlot centres its suptitle in it
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
    const next = panels.map((p) => (p.withScale ? p.withScale(Math.max(s, minPlot)) : p));
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
    const s = Math.max(rowScale(sW, sH), minPlot);   // as panelScale; not under minPlot (the figure grows wider)
    const grown = s > sW + 0.01;
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
    if (tight || grown) {
      const content = 2 * PAD + used + gaps.reduce((a, g) => a + g, 0) + ovL[0] + ovR[n - 1];
      const supW = Math.max(0, ...suptitle.map((l) => lineWidth(l, FONT.suptitle))) + 2 * PAD;
      const w = grown ? Math.max(content, width) : Math.min(width, Math.max(content, supW));
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
    const s = Math.max(40, minPlot, Math.min(...panels.map((p) => (width - 2 * PAD - p.left - p.right) / p.aw)));   // as panelScale
    // grown by minPlot: as wide as the widest panel, the panels at the left (where a scrolled box starts)
    width = Math.max(width, ...panels.map((p) => 2 * PAD + p.left + p.aw * s + p.right));
    const grown = width > view + 0.5;
    let y = PAD + supH;
    for (const p of panels) {
      const pw = p.left + p.aw * s + p.right;
      // (grown: its titles centred in the part of the plot the box shows first, `vis` px)
      kids.push(p.render((grown ? PAD : (width - pw) / 2) + p.left, y + p.top, s, grown ? view - 2 * PAD - p.left : undefined));
      y += p.top + p.ah * s + p.bottom + 16;
    }
    H = y - 16 + PAD;
  }
  kids.unshift(h('rect', { x: 0, y: 0, width, height: H, fill: '#ffffff', 'data-role': 'background' }),
    suptitle.length ? titleBlock(Math.min(width, view) / 2, PAD + FONT.suptitle, suptitle, { size: FONT.suptitle, role: 'suptitle', maxW: Math.min(width, view) - 2 * PAD }) : null);
  return h('svg', {
    xmlns: SVG_NS, width: Math.round(width), height: Math.round(H), viewBox: `0 0 ${Math.round(width)} ${Math.round(H)}`,
    'font-family': lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY, lang: lang === 'zh' ? 'zh-Hans' : 'en', role: 'img', 'aria-label': ariaLabel, 'data-figure': figure, ...attrs,
  }, kids);
}
