// svg.js — a tiny, safe SVG builder: virtual nodes in, an XML string or real DOM out.
//
// h(tag, attrs, ...children) builds a plain-object tree; toString(node) serialises
// it with strict XML escaping (Node export, tests); toElement(node, document) builds
// real DOM with createElementNS / createTextNode (browser). Text is always a text
// node — a token like `<img src=x onerror=alert(1)>` stays text — and there is no
// innerHTML anywhere. Only the SVG tags in TAGS can be built, attribute names must be
// plain XML names, and event-handler attributes (on*) and href are refused, so a
// figure cannot carry script whatever data it is given.

import { AttnlabError } from '../core/errors.js';

export const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * The only tags a figure may contain (h() refuses any other). The one exception is
 * the bitmap heatmap node of rasterNode(): an empty <foreignObject> that only
 * toElement fills, with a <canvas> it paints itself from numbers.
 */
export const TAGS = Object.freeze(new Set([
  'svg', 'g', 'rect', 'line', 'path', 'circle', 'polygon', 'polyline',
  'text', 'tspan', 'title', 'desc',
]));

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.:-]*$/;

function checkAttrName(name) {
  if (!NAME_RE.test(name)) throw new AttnlabError('EINVAL', `svg: bad attribute name ${JSON.stringify(name)}`);
  const lower = name.toLowerCase();
  if (lower.startsWith('on') || lower === 'href' || lower.endsWith(':href') || lower === 'style') {
    throw new AttnlabError('EINVAL', `svg: attribute ${name} is not allowed in figures`);
  }
}

/** A number as it appears in an attribute: finite, at most 2 decimals. */
export function num(x) {
  if (!Number.isFinite(x)) throw new AttnlabError('ENAN', `svg: non-finite number ${x} in an attribute`);
  const r = Math.round(x * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

function attrValue(v) {
  return typeof v === 'number' ? num(v) : String(v);
}

function pushChildren(out, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) pushChildren(out, c);
    else if (typeof c === 'string' || typeof c === 'number') out.push({ text: String(c) });
    else if (c && (c.tag || typeof c.text === 'string')) out.push(c);
    else throw new AttnlabError('ETYPE', 'svg: a child must be a node, a string, a number or an array');
  }
  return out;
}

/**
 * Build a virtual node. attrs: {name: string|number} (null/undefined values are
 * dropped); children: nodes, strings (text), numbers, arrays, null/false (skipped).
 */
export function h(tag, attrs, ...children) {
  if (!TAGS.has(tag)) throw new AttnlabError('EINVAL', `svg: tag <${tag}> is not allowed in figures`);
  const a = {};
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    checkAttrName(k);
    a[k] = attrValue(v);
  }
  return { tag, attrs: a, children: pushChildren([], children) };
}

/**
 * A bitmap heatmap (raster.js rasterImage): an empty <foreignObject> with checked
 * attributes and `raster` ({values, R, C, color, title(i, j)}), which toElement
 * paints into a <canvas>. No figure code can give it children.
 */
export function rasterNode(attrs, raster) {
  const node = h('g', attrs);
  return { tag: 'foreignObject', attrs: node.attrs, children: [], raster };
}

// ── serialisation ───────────────────────────────────────────────────────────

// XML 1.0 forbids most C0 controls even as references; drop them (and lone surrogates).
const BAD_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Escape text content: & < > (and drop characters XML cannot carry). */
export function escapeText(s) {
  return String(s).replace(BAD_XML_CHARS, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escape an attribute value for a double-quoted attribute. */
export function escapeAttr(s) {
  return escapeText(s).replace(/"/g, '&quot;').replace(/'/g, '&apos;')
    .replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

function serialise(node, out) {
  if (typeof node.text === 'string') { out.push(escapeText(node.text)); return; }
  out.push('<', node.tag);
  for (const [k, v] of Object.entries(node.attrs)) out.push(' ', k, '="', escapeAttr(v), '"');
  if (node.children.length === 0) { out.push('/>'); return; }
  out.push('>');
  for (const c of node.children) serialise(c, out);
  out.push('</', node.tag, '>');
}

/** Serialise a node tree to an XML string (a standalone .svg file when node is <svg>). */
export function toString(node) {
  const out = [];
  if (node.tag === 'svg') out.push('<?xml version="1.0" encoding="UTF-8"?>\n');
  serialise(node, out);
  return out.join('');
}

/**
 * Build real DOM nodes with `document` (window.document in a browser, any object
 * with createElementNS/createTextNode in tests). Attributes are set with
 * setAttribute; xmlns declarations are implied by createElementNS and skipped.
 */
export function toElement(node, document) {
  if (typeof node.text === 'string') return document.createTextNode(node.text);
  const el = document.createElementNS(SVG_NS, node.tag);
  for (const [k, v] of Object.entries(node.attrs)) {
    if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
    el.setAttribute(k, v);
  }
  for (const c of node.children) el.appendChild(toElement(c, document));
  if (node.raster) paintRaster(el, node.raster, document);
  return el;
}

/**
 * The colour of every value through a lookup table: the scale sampled at 1024
 * points of its domain (d3's sequential and symmetric diverging scales are linear
 * in the value), so a 256×256 bitmap costs 65 536 table reads, not 65 536 calls of
 * the scale and parses of its CSS colour. One table per scale object.
 */
const tables = new WeakMap();
function colorTable(color, n = 1024) {
  if (tables.has(color)) return tables.get(color);
  const d = color.domain ? color.domain() : [0, 1];
  const lo = d[0], hi = d[d.length - 1];
  const rgb = new Uint8ClampedArray(3 * n);
  for (let k = 0; k < n; k++) rgb.set(parseColor(color(lo + ((hi - lo) * k) / (n - 1))), 3 * k);
  const table = { lo, hi, n, rgb };
  if (typeof color === 'function') tables.set(color, table);
  return table;
}

function parseColor(s) {
  let m = /^rgb\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(s);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  m = /^#([0-9a-f]{6})$/i.exec(s);
  if (m) return [0, 2, 4].map((k) => parseInt(m[1].slice(k, k + 2), 16));
  return [128, 128, 128];
}

/**
 * Paint a bitmap heatmap (raster.js rasterImage, a <foreignObject>): a <canvas>
 * of one pixel per cell, stretched over the plot and drawn crisp. No image
 * encoding: the pixels go straight to the canvas.
 */
function paintRaster(el, r, document) {
  el.__raster = r;
  if (typeof document.createElementNS !== 'function') return;
  const canvas = document.createElementNS('http://www.w3.org/1999/xhtml', 'canvas');
  if (!canvas || typeof canvas.getContext !== 'function') return;
  canvas.width = r.C;
  canvas.height = r.R;
  canvas.setAttribute('data-raster-canvas', '1');
  canvas.__raster = r;
  if (canvas.style) {   // CSSOM (allowed by the CSP, unlike a style attribute)
    canvas.style.width = '100%';
    canvas.style.height = '100%';
    canvas.style.display = 'block';
    canvas.style.imageRendering = 'pixelated';
  }
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(r.C, r.R);
  const { lo, hi, n, rgb } = colorTable(r.color);
  const k1 = (n - 1) / (hi - lo || 1);
  const px = img.data, vals = r.values, N = r.R * r.C, top = n - 1;
  for (let k = 0; k < N; k++) {
    let q = ((vals[k] - lo) * k1 + 0.5) | 0;
    if (!(q >= 0)) q = 0; else if (q > top) q = top;
    const c = 3 * q, o = 4 * k;
    px[o] = rgb[c];
    px[o + 1] = rgb[c + 1];
    px[o + 2] = rgb[c + 2];
    px[o + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  el.appendChild(canvas);
  el.setAttribute('data-painted', '1');
}

/** Depth-first list of all element nodes (tests and the page's lookups). */
export function walk(node, out = []) {
  if (node && node.tag) {
    out.push(node);
    for (const c of node.children) walk(c, out);
  }
  return out;
}

/** The concatenated text of a node's subtree. */
export function textOf(node) {
  if (typeof node.text === 'string') return node.text;
  return node.children.map(textOf).join('');
}
