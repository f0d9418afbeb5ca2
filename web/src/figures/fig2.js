// fig2.js — the chapter's Fig. 2: the d_head × d_head outer product q_i ⊗ k_j
// (diverging, centred at 0; its trace is the dot product q_i·k_j, the raw score)
// beside the softmax attention matrix read as a causal posterior, every value
// printed in its cell. Saved as ch09_causal_fig2_outer_product.
// outerProductDemo() makes the chapter's random-vector case (d_k = 16, T = 8).

import { asMatrix, checkLang } from './checks.js';
import { checkIndex } from '../analysis.js';
import { mulberry32 } from '../core/rng.js';
import { ylOrRd, rdBuR } from './colour.js';
import { heatmapPanel } from './heatmap.js';
import { figSize, layoutFigure } from './layout.js';
import { tokenLabel, fmt2, fmt3, fmtValue } from './text.js';
import { outerProduct } from '../analysis.js';
import { AttnlabError } from '../core/errors.js';

const TEXT = {
  en: {
    sup: ['Outer-Product Decomposition: A', { sub: 'ij' }, ' = softmax', { sub: 'j' }, '(tr(q', { sub: 'i' }, ' ⊗ k', { sub: 'j' }, ')/√d', { sub: 'k' }, ')'],
    outer: (pair) => ['Outer Product q', { sub: 'i' }, ' ⊗ k', { sub: 'j' }, ` (${pair})`],
    outerX: 'Key dimension (K space)',
    outerY: 'Query dimension (Q space)',
    post: 'Attention weights A',
    postSub: 'the chapter reads them as P(j causes i | context)',
    postX: 'Key j (candidate cause)',
    postY: 'Query i (effect)',
    outerCell: (a, b, v) => `q[${a}]·k[${b}] = ${v}`,
    postCell: (i, j, v) => `A[i=${i}][j=${j}] = ${v}`,
  },
  zh: {
    sup: ['外积分解：A', { sub: 'ij' }, ' = softmax', { sub: 'j' }, '(tr(q', { sub: 'i' }, ' ⊗ k', { sub: 'j' }, ')/√d', { sub: 'k' }, ')'],
    outer: (pair) => ['外积 q', { sub: 'i' }, ' ⊗ k', { sub: 'j' }, `（${pair}）`],
    outerX: '键维度（K 空间）',
    outerY: '查询维度（Q 空间）',
    post: '注意力权重 A',
    postSub: '原章将其读作 P(j 是 i 的原因 | 上下文)',
    postX: '键 j（候选原因）',
    postY: '查询 i（果）',
    outerCell: (a, b, v) => `q[${a}]·k[${b}] = ${v}`,
    postCell: (i, j, v) => `A[i=${i}][j=${j}] = ${v}`,
  },
};

/** Row-wise softmax of (Q Kᵀ)·scale over all T columns (no mask), as the chapter's demo. */
export function softmaxScores(q, k, T, HS, scale) {
  const A = new Float64Array(T * T);
  for (let i = 0; i < T; i++) {
    let mx = -Infinity;
    for (let j = 0; j < T; j++) {
      let d = 0;
      for (let c = 0; c < HS; c++) d += q[i * HS + c] * k[j * HS + c];
      A[i * T + j] = d * scale;
      mx = Math.max(mx, A[i * T + j]);
    }
    let z = 0;
    for (let j = 0; j < T; j++) { A[i * T + j] = Math.exp(A[i * T + j] - mx); z += A[i * T + j]; }
    for (let j = 0; j < T; j++) A[i * T + j] /= z;
  }
  return A;
}

/**
 * The chapter's random demo (outer_product_demo): Q, K ~ N(0, 1) of shape (T, dK),
 * attention = softmax(QKᵀ/√dK), example pair i = min(5, T−1), j = min(2, T−1).
 * Seeded and deterministic; the numbers differ from numpy's default_rng(0).
 * @returns {{q: Float64Array, k: Float64Array, attention: Float64Array, T: number, HS: number, i: number, j: number, scale: number}}
 */
export function outerProductDemo({ dK = 16, T = 8, seed = 0 } = {}) {
  if (!Number.isInteger(dK) || dK < 1 || dK > 1024) throw new AttnlabError('ERANGE', `dK must be in 1..1024, got ${dK}`);
  if (!Number.isInteger(T) || T < 1 || T > 256) throw new AttnlabError('ERANGE', `T must be in 1..256, got ${T}`);
  const rnd = mulberry32(seed);
  const normal = () => {
    const u = 1 - rnd(), v = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const q = Float64Array.from({ length: T * dK }, normal);
  const k = Float64Array.from({ length: T * dK }, normal);
  const scale = 1 / Math.sqrt(dK);
  return { q, k, attention: softmaxScores(q, k, T, dK, scale), T, HS: dK, i: Math.min(5, T - 1), j: Math.min(2, T - 1), scale };
}

/**
 * Fig. 2 as an SVG node tree.
 * @param {object} p
 * @param {ArrayLike<number>} p.q  queries of one head, T*HS row-major (r.q)
 * @param {ArrayLike<number>} p.k  keys of the same head, T*HS (r.k)
 * @param {number} p.i  effect (query) position of the outer product
 * @param {number} p.j  cause (key) position
 * @param {string[]} [p.tokens]  T display strings; without them the labels are "i=0", "j=0" (the chapter)
 * @param {ArrayLike<number>} [p.attention]  T×T attention of that head (r.attention(layer, head));
 *   default: softmax(q kᵀ · scale) without a mask, as the chapter's demo
 * @param {number} [p.T]  needed only when neither tokens nor attention is given
 * @param {number} [p.scale]  score scale, default 1/√HS
 * @param {'en'|'zh'} [p.lang='en']
 * @param {number} [p.width]  px (default 1248)
 * @param {boolean} [p.tight=false]
 */
export function figOuterProduct({ q, k, i, j, tokens, attention, T: Tgiven, scale, lang = 'en', width, tight = false } = {}) {
  const t = TEXT[checkLang(lang)];
  const T = tokens ? tokens.length : attention ? Math.round(Math.sqrt(attention.length)) : Tgiven;
  if (!Number.isInteger(T) || T < 1) throw new AttnlabError('EINVAL', 'figOuterProduct: give tokens, attention or T');
  if (!q || !k || typeof q.length !== 'number' || q.length !== k.length || q.length % T !== 0 || q.length === 0) {
    throw new AttnlabError('ESHAPE', `figOuterProduct: q and k must both hold T*HS values (T = ${T})`);
  }
  const HS = q.length / T;
  checkIndex('i', i, 0, T - 1);
  checkIndex('j', j, 0, T - 1);
  const sc = scale ?? 1 / Math.sqrt(HS);
  if (!Number.isFinite(sc)) throw new AttnlabError('ENAN', `scale must be finite, got ${scale}`);
  const A = attention ? asMatrix(attention, T, 'attention') : softmaxScores(q, k, T, HS, sc);

  // the outer product (HS × HS) and its trace, as analysis.js (and the C) computes them
  const { matrix: outer, trace } = outerProduct(q.slice(i * HS, (i + 1) * HS), k.slice(j * HS, (j + 1) * HS));
  let amax = 0;
  for (const v of outer) amax = Math.max(amax, Math.abs(v));

  const dims = Array.from({ length: HS }, (_, c) => String(c));
  const outerScale = rdBuR(amax);
  const pair = tokens ? `i=${i} ${tokenLabel(tokens[i], 10)}, j=${j} ${tokenLabel(tokens[j], 10)}` : `i=${i}, j=${j}`;
  const left = heatmapPanel({
    values: outer, R: HS, C: HS, color: outerScale, cbar: { scale: outerScale, format: outerScale.tickFormat(6) },
    xLabels: dims, yLabels: dims, rotateX: false,
    title: [t.outer(pair), [`tr(q ⊗ k) = q·k = ${fmt3(trace)},  q·k/√d`, { sub: 'k' }, ` = ${fmt3(trace * sc)}`]],
    xTitle: t.outerX, yTitle: t.outerY, role: 'outer-product',
    cellTitle: (a, b, v) => t.outerCell(a, b, fmtValue(v)),
  });

  let vmin = Infinity, vmax = -Infinity;
  for (const v of A) { vmin = Math.min(vmin, v); vmax = Math.max(vmax, v); }
  const attnScale = ylOrRd(vmin, vmax);
  const xl = tokens ? tokens.map((s) => tokenLabel(s)) : Array.from({ length: T }, (_, c) => `j=${c}`);
  const yl = tokens ? tokens.map((s) => tokenLabel(s)) : Array.from({ length: T }, (_, c) => `i=${c}`);
  const right = heatmapPanel({
    values: A, R: T, C: T, color: attnScale, cbar: { scale: attnScale, format: fmt2 },
    xLabels: xl, yLabels: yl, rotateX: true, annotate: fmt2,
    title: [t.post, t.postSub], xTitle: t.postX, yTitle: t.postY, role: 'posterior',
    box: { row: i, col: j }, boxColor: '#1f4fd1',
    cellTitle: (r, c, v) => t.postCell(r, c, fmtValue(v)),
  });

  return layoutFigure({
    ...figSize('fig2', width), tight, lang, suptitle: [t.sup], panels: [left, right],
    figure: 'fig2', ariaLabel: `tr(q ⊗ k) = q·k = ${fmt3(trace)}`,
    attrs: { 'data-trace': fmtValue(trace), 'data-score': fmtValue(trace * sc), 'data-i': i, 'data-j': j },
  });
}
