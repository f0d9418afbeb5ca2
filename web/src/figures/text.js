// text.js — fonts, sizes and number formats of the figures; token labels; text
// measured without a DOM (per-character estimates for DejaVu Sans), rich text with
// sub/superscripts, title blocks and word wrapping. Every function here is pure.

import { format } from 'd3-format';
import { h } from './svg.js';

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

// ── number formats ──────────────────────────────────────────────────────────

export const fmt2 = format('.2f');
export const fmt3 = format('.3f');
/** A value for data-v attributes and tooltips: up to 6 significant digits. */
export function fmtValue(v) {
  return String(Number(v.toPrecision(6)));
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

const TITLE_MIN = 6.5;

/**
 * Several centred lines starting at baseline y; returns the <g>. A line wider than
 * maxW is drawn smaller so that it fits (down to TITLE_MIN px).
 */
export function titleBlock(cx, y, lines, { size, weight, role, maxW = Infinity } = {}) {
  const lh = size * 1.25;
  return h('g', { 'data-role': role }, lines.map((ln, k) => {
    const w = lineWidth(ln, size, weight === 'bold');
    // shrunk to fit maxW, down to TITLE_MIN px: a floor of 0.6 × size left Fig. 4's long subtitle
    // cut at the figure's edge on a phone (issue 38)
    const sz = w > maxW ? Math.max(TITLE_MIN, (size * maxW) / w) : size;
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
