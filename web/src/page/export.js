// export.js — downloads from the page: a figure as SVG or PNG, the run as JSON.
// Files are Blobs handed to an <a download> through a Blob URL (revoked after
// the click). PNG: the SVG string is drawn on a canvas through an <img> of a
// Blob URL (CSP img-src blob:), at the chapter's 150 dpi, on white.

import { toString, FIGURE_FILES, CHAPTER_SCALE } from '../figures/index.js';

/** Offer `blob` as a download named `name`. */
export function downloadBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** An SVG string as PNG bytes (Blob), scale pixels per SVG unit. */
export function svgToPngBlob(svg, scale = CHAPTER_SCALE) {
  const m = /<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"/.exec(svg);
  if (!m) return Promise.reject(new Error('the SVG has no width/height'));
  const w = Math.round(Number(m[1]) * scale), hgt = Math.round(Number(m[2]) * scale);
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      try {
        const canvas = document.createElement('canvas');
        canvas.width = w;
        canvas.height = hgt;
        const ctx = canvas.getContext('2d');
        ctx.fillStyle = '#ffffff';
        ctx.fillRect(0, 0, w, hgt);
        ctx.drawImage(img, 0, 0, w, hgt);
        canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('canvas.toBlob gave nothing'))), 'image/png');
      } catch (e) {
        reject(e);
      } finally {
        URL.revokeObjectURL(url);
      }
    };
    img.onerror = () => { URL.revokeObjectURL(url); reject(new Error('the SVG could not be drawn')); };
    img.src = url;
  });
}

/** Download figure `key` ('fig1'…'fig4', an SVG node tree) as 'svg' or 'png'. */
export async function exportFigure(key, node, kind) {
  const svg = toString(node);
  const base = FIGURE_FILES[key];
  if (kind === 'svg') downloadBlob(new Blob([svg], { type: 'image/svg+xml' }), `${base}.svg`);
  else downloadBlob(await svgToPngBlob(svg), `${base}.png`);
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
    capture: { layer: base.captureQK.layer, head: base.captureQK.head, q: nest(base.q, [T, base.q.length / T]), k: nest(base.k, [T, base.k.length / T]) },
    before: res(base),
    after: res(after),
    kl_before_after: kl,
    attention_change: { mean_abs: change.mean, max_abs: change.max },
    unmodified: plain ? { top: plain.top.map(({ id, token, prob }) => ({ id, token, prob })), kl_unmodified_this: klPlain } : null,
  };
}
