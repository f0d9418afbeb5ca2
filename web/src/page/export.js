// export.js — what the page exports: a figure as SVG or PNG, a card's charts as one
// SVG, the run as JSON (the download itself is ui/download.js).

import { toString, h, SVG_NS, FONT_FAMILY, FONT_FAMILY_ZH, FIGURE_FILES } from '../figures/index.js';
import { downloadBlob, downloadSvg } from '../ui/download.js';

export { downloadBlob };

/** A file-name part from free text: ASCII letters, digits and dots, other runs as one '-'. */
export function fileSlug(s) {
  return String(s).normalize('NFKD').replace(/[^A-Za-z0-9.]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'model';
}

/**
 * What an exported figure shows, as a file-name suffix and one line of text. view: {model, layer, head
 * ('avg', 'all' or a number), mask ('causal', 'full', 'window:W'), more (text added to the line)}.
 */
export function viewLabel({ model, layer, head, mask, more = '' }) {
  const hs = head === 'avg' ? 'avg' : head === 'all' ? 'all' : `H${head}`;
  const hw = head === 'avg' ? 'average of heads' : head === 'all' ? 'all heads' : `head ${head}`;
  return {
    suffix: `${fileSlug(model)}_L${layer}${hs}_${String(mask).replace(':', '')}`,
    text: `attnlab · model ${model} · layer ${layer} · ${hw} · mask ${mask}${more ? ` · ${more}` : ''}`,
  };
}

/**
 * Download figure `key` ('fig1'…'fig4', an SVG node tree) as 'svg' or 'png'. The file is named by the
 * chapter's name and the view (model, layer, head, mask), and says the view inside: a <desc> in the SVG, a
 * Description entry in the PNG (which also states its 150 dpi).
 */
export function exportFigure(key, node, kind, view) {
  const v = viewLabel(view);
  const tree = { ...node, children: [h('desc', null, v.text), ...node.children] };
  return downloadSvg(toString(tree), `${FIGURE_FILES[key]}_${v.suffix}`, kind, { Description: v.text, Software: 'attnlab' });
}

const arr = (a) => (a ? Array.from(a, (v) => Number(v.toPrecision(7))) : null);

/** Nest a flat row-major array by shape [a, b, ...]. */
function nest(flat, shape) {
  if (shape.length === 1) return arr(flat);
  const step = shape.slice(1).reduce((x, y) => x * y, 1);
  return Array.from({ length: shape[0] }, (_, k) => nest(flat.subarray(k * step, (k + 1) * step), shape.slice(1)));
}

/** The run as a JSON-able object (settings, tokens, attentions, top-10s, scores, changes). */
export function runData({ out, modelName, settings, change, kl, klPlain }) {
  const { base, after, plain } = out;
  const { nLayer: L, nHead: H } = base.model;
  const T = base.T;
  const res = (r) => ({
    top: r.top.map(({ id, token, prob }) => ({ id, token, prob })),
    dag_score: r.dagScore,
    layer_dag_scores: r.layerDagScores,
    dag_scores: r.dagScores,
    attentions: nest(r.attentions, [L, H, T, T]),
  });
  return {
    generator: 'attnlab page',
    created: new Date().toISOString(),
    model: { name: modelName, ...base.model },
    text: out.spec.text,
    ids: Array.from(base.ids),
    tokens: base.tokens,
    settings,
    intervention: out.intervention,
    null_dag_score: base.nullDagScore,
    layer_null_dag_scores: base.layerNullDagScores,
    soft_do_masked: Boolean(out.masked),
    capture: { layer: base.captureQK.layer, head: base.captureQK.head, q: nest(base.q, [T, base.q.length / T]), k: nest(base.k, [T, base.k.length / T]) },
    before: res(base),
    after: res(after),
    kl_before_after: kl,
    attention_change: { mean_abs: change.mean, max_abs: change.max },
    unmodified: plain ? { top: plain.top.map(({ id, token, prob }) => ({ id, token, prob })), kl_unmodified_this: klPlain } : null,
  };
}

// ── the heads panel's cards: several charts in one file ────────────────────

/**
 * Presentation attributes for the page's CSS classes inside charts (delta.js's ΔA
 * bars are styled by page.css), light scheme: an exported file has no stylesheet.
 */
export const CLASS_ATTRS = Object.freeze({
  'd-label': { fill: '#5d6166' },
  'd-label-do': { fill: '#1f4fd1' },
  'd-value': { fill: '#1c1d1f', 'font-family': "'DejaVu Sans Mono', monospace", 'font-size': '11.5' },
  'd-track': { fill: '#f0f0ec' },
  'd-bar': { fill: '#5d6166' },
  'd-bar-do': { fill: '#1f4fd1' },
  'd-frame': { stroke: '#999999', 'stroke-width': '0.5' },
});

/** A copy of a node tree with CLASS_ATTRS written onto the nodes of those classes (later classes win). */
export function withClassAttrs(node, map = CLASS_ATTRS) {
  if (typeof node.text === 'string') return node;
  const extra = {};
  for (const c of String(node.attrs.class || '').split(/\s+/)) if (map[c]) Object.assign(extra, map[c]);
  return { ...node, attrs: { ...node.attrs, ...extra }, children: node.children.map((k) => withClassAttrs(k, map)) };
}

/**
 * Several chart <svg> node trees as one <svg>: an optional title line, then the
 * charts left to right, wrapping to a new row past maxWidth, each nested at its
 * own size (x, y), on white. Returns the node tree.
 */
export function composeSvg(nodes, { title = '', lang = 'en', maxWidth = 1200, gap = 16, pad = 12 } = {}) {
  if (!nodes.length) throw new Error('nothing to export: the card has not drawn yet');
  const size = (n) => [Number(n.attrs.width), Number(n.attrs.height)];
  const top = pad + (title ? 26 : 0);
  const placed = [];
  let x = pad, y = top, rowH = 0, W = 0;
  for (const n of nodes) {
    const [w, hh] = size(n);
    if (x > pad && x + w > maxWidth - pad) { x = pad; y += rowH + gap; rowH = 0; }
    const c = withClassAttrs(n);
    placed.push({ ...c, attrs: { ...c.attrs, x: String(x), y: String(y) } });
    W = Math.max(W, x + w);
    rowH = Math.max(rowH, hh);
    x += w + gap;
  }
  const width = Math.round(Math.max(W, title ? 200 : 0) + pad), height = Math.round(y + rowH + pad);
  return h('svg', {
    xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': lang === 'zh' ? FONT_FAMILY_ZH : FONT_FAMILY,
    lang: lang === 'zh' ? 'zh-Hans' : 'en', role: 'img', 'aria-label': title, 'data-charts': nodes.length,
  }, h('rect', { x: 0, y: 0, width, height, fill: '#ffffff' }),
  title ? h('text', { x: pad, y: pad + 16, 'font-size': 15, 'font-weight': 'bold', fill: '#262626' }, title) : null,
  placed);
}

/**
 * Download an SVG node tree as `${base}.svg` or `${base}.png` (the chapter's 150 dpi). With `desc` (one line:
 * the model and what the card computed on), the SVG carries it as a <desc> and the PNG as its Description.
 */
export function exportSvgNode(node, base, kind, desc = '') {
  if (!desc) return downloadSvg(toString(node), base, kind);
  const tree = { ...node, children: [h('desc', null, desc), ...node.children] };
  return downloadSvg(toString(tree), base, kind, { Description: desc, Software: 'attnlab' });
}

/** The <desc> line of a panel card's export: the model in use (the page's body data-model), the card, and more. */
export function cardDesc(title, ...more) {
  const model = typeof document !== 'undefined' ? document.body.dataset.model || '' : '';
  return ['attnlab', model && `model ${model}`, title, ...more].filter(Boolean).join(' · ');
}

/** Download a JSON-able object as `${base}.json`. */
export function exportJsonData(data, base) {
  downloadBlob(new Blob([JSON.stringify(data)], { type: 'application/json' }), `${base}.json`);
}

/** Download a panel card: its JSON, or its charts as one SVG (or PNG) under its title (card.js). */
export async function exportCard(kind, { file, json, charts, title, lang, desc = '' }) {
  if (kind === 'json') return json && exportJsonData(json, file);
  if (!charts || !charts.length) return;
  await exportSvgNode(composeSvg(charts, { title, lang }), file, kind, desc);
}

/** A flat row-major array as rows of `cols` numbers (7 significant digits; NaN → null). */
export function rows(flat, cols) {
  const out = [];
  for (let k = 0; k < flat.length; k += cols) {
    out.push(Array.from(flat.slice(k, k + cols), (v) => (Number.isFinite(v) ? Number(v.toPrecision(7)) : null)));
  }
  return out;
}
