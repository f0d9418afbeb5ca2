// fig3.js — the chapter's Fig. 3: a bar per head of the chosen layer's DAG score
// (with the null: the DAG score of uniform attention under the mask the run used
// and at its length; a head is "more forward than uniform" only above it — the
// chapter's fixed 0.5 is that null only without a mask, as T grows, and is drawn
// only as a labelled reference) beside the graph read off the attention matrix.
// Saved as ch09_causal_fig3_dag.
//
// The graph follows the chapter's layout: token k sits at (k, T−1−k), on a diagonal
// from top left to bottom right, in a light-yellow box; an edge is drawn for each
// off-diagonal weight above `threshold` times the largest off-diagonal weight (the
// chapter: tril(A, −1) / max > 0.05), width ∝ that relative weight, coloured with
// YlOrRd. Edges run from cause j to effect i (arrowhead at the effect); the chapter's
// script draws each arrow from node i as a horizontal stub towards column j, which
// does not reach node j — we draw the edge between the two nodes instead, as an arc
// (forward-in-time edges bulge to the lower left, backward ones, possible only
// without a causal mask, to the upper right).

import { scaleLinear } from 'd3-scale';
import { interpolateYlOrRd } from 'd3-scale-chromatic';
import { h } from './svg.js';
import { yTitleLines } from './axes.js';
import { asMatrix, sizeOf, checkLang } from './checks.js';
import { greensD, textColorOn } from './colour.js';
import { figSize, titleRoom, layoutFigure } from './layout.js';
import { tokenLabel, fmt2, fmt3, fmtValue, textWidth, lineWidth, titleBlock, richText, blockHeight, FONT, INK } from './text.js';
import { dagScore, nullDagScore } from '../analysis.js';
import { AttnlabError } from '../core/errors.js';

/** A mask's name in Chinese, before 掩码: causal → 因果, full → 完全, window:W → 窗口 W (others as given). */
const zhMask = (m) => (m === 'causal' ? '因果' : m === 'full' ? '完全' : /^window:\d+$/.test(m) ? `窗口 ${m.slice(7)} ` : `${m} `);

const TEXT = {
  en: {
    sup: 'How much attention looks back, head by head',
    bars: 'DAG score per head',
    barsSub: 'above the red line = more forward than uniform',
    barsX: 'Attention Head',
    barsY: { lines: ['DAG score', '(share below the diagonal)'] },
    random: 'the chapter\'s 0.5 (uniform attention without a mask, T → ∞)',
    null: (T, v, m) => `null: uniform attention, mask ${m}, T = ${T} (${v})`,
    graph: (v) => `Edges read off the attention (DAG score = ${v})`,
    graphSub: 'edges ∝ attention weight',
    graphSubTop: (k, n) => [`the ${k} strongest of ${n} edges, ∝ weight`, '(hover a node for its token)'],
    bar: (hd, v) => `head ${hd}: DAG score ${v}`,
    edge: (j, i, v) => `${j} → ${i}: attention ${v}`,
  },
  zh: {
    sup: '各注意力头回看前文的程度',
    bars: '各注意力头的 DAG 得分',
    barsSub: '高于红线 = 比均匀注意力更偏向前文',
    barsX: '注意力头',
    barsY: { lines: ['DAG 得分', '（对角线以下的质量）'] },
    random: '原章的 0.5（无掩码的均匀注意力，T → ∞）',
    null: (T, v, m) => `零假设：均匀注意力，${zhMask(m)}掩码，T = ${T} (${v})`,
    graph: (v) => `由注意力读出的边（DAG 得分 = ${v}）`,
    graphSub: '边宽 ∝ 注意力权重',
    graphSubTop: (k, n) => [`${n} 条边中最强的 ${k} 条，边宽 ∝ 权重`, '（悬停节点可见其词元）'],
    bar: (hd, v) => `注意力头 ${hd}：DAG 得分 ${v}`,
    edge: (j, i, v) => `${j} → ${i}：注意力 ${v}`,
  },
};

const RANDOM_STYLE = { stroke: '#808080', 'stroke-width': 1.6, 'stroke-dasharray': '7 4' };
const NULL_STYLE = { stroke: '#b2182b', 'stroke-width': 1.6, 'stroke-dasharray': '10 3 2 3' };

// ── bar panel ───────────────────────────────────────────────────────────────

function barPanel({ scores, nullScore, maskLabel, T, t }) {
  const H = scores.length;
  const tick = FONT.tick;
  const yLines = yTitleLines(t.barsY);
  const yTicks = [0, 0.2, 0.4, 0.6, 0.8, 1.0];
  const left = FONT.label * 1.25 * yLines.length + textWidth('0.0', tick) + 10;
  const legend = [
    { style: RANDOM_STYLE, label: t.random, role: 'legend-random' },
    { style: NULL_STYLE, label: t.null(T, fmt3(nullScore), maskLabel), role: 'legend-null' },
  ];
  const bottom = tick * 1.3 + 6 + FONT.label * 1.3 + 8 + legend.length * FONT.legend * 1.5 + 8;
  const top = blockHeight([t.bars, t.barsSub], FONT.title) + 8;
  const colors = greensD(H);

  function render(x0, y0, s) {
    const pw = 1.35 * s, ph = s;
    const y = scaleLinear().domain([0, 1]).range([y0 + ph, y0]);
    const slot = pw / H;
    const kids = [titleBlock(x0 + pw / 2, y0 - top + FONT.title, [t.bars, t.barsSub], { size: FONT.title, weight: 'bold', role: 'panel-title', maxW: titleRoom(pw, left, 8) })];
    // a head whose score is ~0 still gets a visible stub (MIN_BAR px) and its value printed
    kids.push(h('g', { 'data-role': 'bars' }, scores.map((v, hd) => {
      const vv = Math.min(1, Math.max(0, v));
      const bh = Math.max(MIN_BAR, y(0) - y(vv));
      return h('rect', {
        x: x0 + slot * (hd + 0.1), y: y(0) - bh, width: slot * 0.8, height: bh, fill: colors[hd],
        'data-head': hd, 'data-v': fmtValue(v),
      }, h('title', null, t.bar(hd, fmt3(v))));
    })));
    kids.push(barValues(scores, colors, { x0, slot, y }));
    // reference lines
    kids.push(h('line', { x1: x0, x2: x0 + pw, y1: y(0.5), y2: y(0.5), ...RANDOM_STYLE, 'data-role': 'baseline-random', 'data-v': '0.5' }));
    kids.push(h('line', { x1: x0, x2: x0 + pw, y1: y(nullScore), y2: y(nullScore), ...NULL_STYLE, 'data-role': 'baseline-null', 'data-v': fmtValue(nullScore) }));
    // frame and ticks
    kids.push(h('rect', { x: x0, y: y0, width: pw, height: ph, fill: 'none', stroke: INK, 'stroke-width': 1 }));
    kids.push(h('g', { 'font-size': tick, fill: INK, 'data-role': 'yticks' }, yTicks.map((v) => h('g', null,
      h('line', { x1: x0 - 4, x2: x0, y1: y(v), y2: y(v), stroke: INK, 'stroke-width': 0.8 }),
      h('text', { x: x0 - 6, y: y(v) + tick * 0.35, 'text-anchor': 'end' }, v.toFixed(1))))));
    const hstep = Math.max(1, Math.ceil((textWidth(String(H - 1), tick) + 6) / slot));
    const xt = [];
    for (let hd = 0; hd < H; hd += hstep) {
      xt.push(h('text', { x: x0 + slot * (hd + 0.5), y: y0 + ph + 4 + tick, 'text-anchor': 'middle' }, String(hd)));
    }
    kids.push(h('g', { 'font-size': tick, fill: INK, 'data-role': 'xticks' }, xt));
    const xTitleY = y0 + ph + tick * 1.3 + 6 + FONT.label;
    kids.push(richText(x0 + pw / 2, xTitleY, t.barsX, { size: FONT.label, role: 'xtitle' }));
    yLines.forEach((ln, k) => {
      const x = x0 - left + FONT.label * (1.0 + 1.25 * k), yy = y0 + ph / 2;
      kids.push(richText(x, yy, ln, { size: FONT.label, transform: `rotate(-90 ${x} ${yy})`, role: 'ytitle' }));
    });
    // legend, below the axis title (the bars fill the plot)
    // on a narrow figure (a phone) the legend's text is drawn smaller so that the
    // box fits the panel with its axis labels (it was cut at the figure's edge)
    // (the width estimate is per character; 12 % more keeps the drawn text inside the box)
    const room = pw + left + 4;
    const textW = 1.12 * Math.max(...legend.map((l) => textWidth(l.label, FONT.legend)));
    const fs = textW + 44 > room ? Math.max(7, FONT.legend * (room - 44) / textW) : FONT.legend;
    const lw = Math.min(room, 1.12 * Math.max(...legend.map((l) => textWidth(l.label, fs))) + 44);
    const lx = Math.max(x0 - left, Math.min(x0 + pw / 2 - lw / 2, x0 + pw + 4 - lw));
    let ly = xTitleY + 10;
    const items = legend.map((l) => {
      const row = h('g', { 'data-role': l.role },
        h('line', { x1: lx + 6, x2: lx + 34, y1: ly + FONT.legend * 0.75, y2: ly + FONT.legend * 0.75, ...l.style }),
        h('text', { x: lx + 40, y: ly + FONT.legend * 1.1, 'font-size': fs, fill: INK }, l.label));
      ly += FONT.legend * 1.5;
      return row;
    });
    kids.push(h('g', { 'data-role': 'legend' },
      h('rect', { x: lx, y: xTitleY + 6, width: lw, height: ly - xTitleY - 2, fill: '#ffffff', stroke: '#cccccc', rx: 3 }),
      items));
    return h('g', { 'data-role': 'panel' }, kids);
  }
  const titleW = Math.max(lineWidth(t.bars, FONT.title, true), lineWidth(t.barsSub, FONT.title, true));
  return { left, right: 8, top, bottom, aw: 1.35, ah: 1, titleW, render };
}

const MIN_BAR = 2;

/** Each bar's value, printed inside its top when the bar is tall enough, else just above it (none if the slot is too narrow). */
function barValues(scores, colors, { x0, slot, y }) {
  const labels = scores.map((v) => fmt2(v));
  const size = Math.min(FONT.tick, (0.9 * slot * FONT.tick) / Math.max(...labels.map((l) => textWidth(l, FONT.tick))));
  if (size < 7) return h('g', { 'data-role': 'bar-values' }, []);
  return h('g', { 'data-role': 'bar-values', 'font-size': size, 'text-anchor': 'middle', 'pointer-events': 'none' }, scores.map((v, hd) => {
    const top = y(Math.min(1, Math.max(0, v)));
    const inside = y(0) - top > size + 6;
    return h('text', {
      x: x0 + slot * (hd + 0.5), y: inside ? top + size + 2 : Math.min(y(0), top) - MIN_BAR - 3,
      fill: inside ? textColorOn(colors[hd]) : INK, 'data-head': hd,
    }, labels[hd]);
  }));
}

// ── graph panel ─────────────────────────────────────────────────────────────

function bezier(p0, c, p2, u) {
  const a = (1 - u) * (1 - u), b = 2 * (1 - u) * u, d = u * u;
  return [a * p0[0] + b * c[0] + d * p2[0], a * p0[1] + b * c[1] + d * p2[1]];
}

function bezierTangent(p0, c, p2, u) {
  return [2 * (1 - u) * (c[0] - p0[0]) + 2 * u * (p2[0] - c[0]), 2 * (1 - u) * (c[1] - p0[1]) + 2 * u * (p2[1] - c[1])];
}

function inBox(p, ctr, hw, hh) {
  return Math.abs(p[0] - ctr[0]) <= hw && Math.abs(p[1] - ctr[1]) <= hh;
}

/** Off-diagonal edges {i, j, v, w} with w = A_ij / max off-diagonal > threshold, weakest first. */
export function dagEdges(A, T, threshold) {
  let mx = 0;
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (i !== j) mx = Math.max(mx, A[i * T + j]);
  const edges = [];
  if (mx <= 0) return edges;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      if (i === j) continue;
      const w = A[i * T + j] / mx;
      if (w > threshold) edges.push({ i, j, v: A[i * T + j], w });
    }
  }
  return edges.sort((a, b) => a.w - b.w);
}

// A long text (more than LONG_GRAPH tokens): the graph keeps its TOP_EDGES strongest edges (the
// caption says how many of how many), draws each token as a dot with its token in a tooltip, and
// writes the tokens of those edges' ends beside their dots where they do not overlap. At T = 256
// the labelled boxes of every token and 150 edges were one smear (issue 38 item 2).
const LONG_GRAPH = 40, TOP_EDGES = 40, DOT_LABEL = 10;

function graphPanel({ tokens, A, T, threshold, overall, t }) {
  const labels = tokens ? tokens.map((s) => tokenLabel(s)) : Array.from({ length: T }, (_, k) => String(k));
  const long = T > LONG_GRAPH;
  let edges = dagEdges(A, T, threshold);
  const nAll = edges.length;
  if (long && edges.length > TOP_EDGES) edges = edges.slice(edges.length - TOP_EDGES);
  const ends = new Set(edges.flatMap((e) => [e.i, e.j]));
  const boxSize = (size) => ({ boxW: labels.map((l) => textWidth(l, size) + size * 0.9), boxH: size * 1.7 });
  const half = long ? 8 : Math.max(...boxSize(FONT.node).boxW) / 2;
  const right = long ? Math.max(8, ...[...ends].map((k) => textWidth(labels[k], DOT_LABEL) + 12)) : half;
  const titleLines = [t.graph(fmt3(overall)), ...(long ? t.graphSubTop(edges.length, nAll) : [t.graphSub])];
  const top = blockHeight(titleLines, FONT.title) + 8;

  function render(x0, y0, s) {
    const c = s / T;
    // the boxes of neighbouring tokens must not touch: smaller labels for long texts
    const size = Math.max(7, Math.min(FONT.node, (c - 2) / 1.7));
    const dot = Math.max(1.5, Math.min(4, c * 0.4));
    const { boxW, boxH } = long ? { boxW: labels.map(() => 2 * dot), boxH: 2 * dot } : boxSize(size);
    const pos = (k) => [x0 + (k + 0.5) * c, y0 + (k + 0.5) * c];
    const kids = [titleBlock(x0 + s / 2, y0 - top + FONT.title, titleLines, { size: FONT.title, weight: 'bold', role: 'panel-title', maxW: titleRoom(s, half, right) })];
    kids.push(h('g', { 'data-role': 'edges' }, edges.map((e) => edgeNode(e, { pos, boxW, boxH, labels, t }))));
    kids.push(long ? dotNodes(labels, ends, pos, dot, c) : boxNodes(labels, pos, size, boxW, boxH));
    return h('g', { 'data-role': 'panel' }, kids);
  }
  const titleW = Math.max(...titleLines.map((l) => lineWidth(l, FONT.title, true)));
  return { left: half, right, top, bottom: 8, aw: 1, ah: 1, titleW, render };
}

/** One edge from cause j to effect i: an arc trimmed at the two nodes, with an arrowhead at i. */
function edgeNode({ i, j, v, w }, { pos, boxW, boxH, labels, t }) {
  const p0 = pos(j), p2 = pos(i);
  const dx = p2[0] - p0[0], dy = p2[1] - p0[1], len = Math.hypot(dx, dy);
  const ctrl = [(p0[0] + p2[0]) / 2 - (dy / len) * len * 0.3, (p0[1] + p2[1]) / 2 + (dx / len) * len * 0.3];
  // trim the curve where it leaves the source box and enters the target box
  let u0 = 0, u1 = 1;
  while (u0 < 0.5 && inBox(bezier(p0, ctrl, p2, u0), p0, boxW[j] / 2 + 2, boxH / 2 + 2)) u0 += 0.005;
  while (u1 > 0.5 && inBox(bezier(p0, ctrl, p2, u1), p2, boxW[i] / 2 + 2, boxH / 2 + 2)) u1 -= 0.005;
  const lw = 0.5 + 3.5 * w;
  const head = 5 + 2.2 * lw, headW = 3 + 1.3 * lw;
  const tip = bezier(p0, ctrl, p2, u1);
  const tg = bezierTangent(p0, ctrl, p2, u1), tl = Math.hypot(tg[0], tg[1]) || 1;
  const ux = tg[0] / tl, uy = tg[1] / tl;
  const base = [tip[0] - ux * head * 0.9, tip[1] - uy * head * 0.9];
  // the sub-curve [u0, u1] as a quadratic: control = B(u0) + (u1 − u0)/2 · B'(u0)
  const s0 = bezier(p0, ctrl, p2, u0), d0 = bezierTangent(p0, ctrl, p2, u0);
  const sc = [s0[0] + ((u1 - u0) / 2) * d0[0], s0[1] + ((u1 - u0) / 2) * d0[1]];
  const color = interpolateYlOrRd(0.2 + 0.8 * w);
  return h('g', { opacity: 0.8, 'data-role': 'edge', 'data-i': i, 'data-j': j, 'data-v': fmtValue(v), 'data-w': fmtValue(w) },
    h('title', null, t.edge(`${j} ${labels[j]}`, `${i} ${labels[i]}`, fmtValue(v))),
    h('path', { d: `M${num2(s0)} Q${num2(sc)} ${num2(base)}`, fill: 'none', stroke: color, 'stroke-width': lw }),
    h('polygon', {
      points: `${num2(tip)} ${num2([base[0] - uy * headW, base[1] + ux * headW])} ${num2([base[0] + uy * headW, base[1] - ux * headW])}`,
      fill: color,
    }));
}

/** The chapter's nodes: each token in a light-yellow box. */
function boxNodes(labels, pos, size, boxW, boxH) {
  return h('g', { 'data-role': 'nodes', 'font-size': size }, labels.map((l, k) => {
    const [cx, cy] = pos(k);
    return h('g', { 'data-k': k },
      h('rect', { x: cx - boxW[k] / 2, y: cy - boxH / 2, width: boxW[k], height: boxH, rx: 4, fill: '#ffffe0', stroke: '#808080', 'stroke-width': 1 }),
      h('text', { x: cx, y: cy + size * 0.36, 'text-anchor': 'middle', fill: INK }, l));
  }));
}

/** A long text's nodes: a dot per token (its token in a tooltip), the drawn edges' ends labelled where there is room. */
function dotNodes(labels, ends, pos, dot, c) {
  const named = [];
  for (const k of [...ends].sort((a, b) => a - b)) {
    if (!named.length || (k - named[named.length - 1]) * c >= DOT_LABEL * 1.15) named.push(k);
  }
  const nodes = labels.map((l, k) => {
    const [cx, cy] = pos(k);
    return h('g', { 'data-k': k, 'data-role': 'node' }, h('title', null, `${k} ${l}`),
      h('circle', { cx, cy, r: dot, fill: ends.has(k) ? '#fdd49e' : '#ffffe0', stroke: '#808080', 'stroke-width': 0.6 }));
  });
  const text = named.map((k) => {
    const [cx, cy] = pos(k);
    return h('text', { x: cx + dot + 4, y: cy + DOT_LABEL * 0.35, 'data-k': k }, labels[k]);
  });
  return [h('g', { 'data-role': 'nodes' }, nodes),
    h('g', { 'data-role': 'node-labels', 'font-size': DOT_LABEL, fill: INK, 'pointer-events': 'none' }, text)];
}

function num2(p) {
  return `${Math.round(p[0] * 100) / 100},${Math.round(p[1] * 100) / 100}`;
}

/**
 * Fig. 3 as an SVG node tree.
 * @param {object} p
 * @param {string[]} p.tokens  T display strings
 * @param {number[]} p.dagScores  DAG score of each head of the chosen layer (r.dagScores[layer])
 * @param {number} [p.nullDagScore]  null DAG score (default: computed for T and mask; pass r.layerNullDagScores[layer])
 * @param {string|object} [p.mask='causal']  the mask the scores were computed under ('causal', 'full', 'window:W')
 * @param {number} [p.overallDag]  DAG score of A shown in the graph title (default: computed from A)
 * @param {ArrayLike<number>|number[][]} p.A  T×T attention the graph is drawn from (head average)
 * @param {number} [p.threshold=0.05]  edges where A_ij / max off-diagonal A > threshold
 * @param {'en'|'zh'} [p.lang='en']
 * @param {number} [p.width]  px (default 1248)
 * @param {boolean} [p.tight=false]
 */
export function figDag({ tokens, dagScores, nullDagScore: nullGiven, overallDag, A, threshold = 0.05, lang = 'en', width, tight = false,
  mask = 'causal' } = {}) {
  const t = TEXT[checkLang(lang)];
  const T = sizeOf(tokens, A);
  const M = asMatrix(A, T, 'A');
  if (!dagScores || typeof dagScores.length !== 'number' || dagScores.length < 1) {
    throw new AttnlabError('ETYPE', 'figDag: dagScores must be a non-empty array (one score per head)');
  }
  const scores = Array.from(dagScores, Number);
  if (scores.some((v) => !Number.isFinite(v))) throw new AttnlabError('ENAN', 'figDag: a DAG score is not finite');
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold < 1)) {
    throw new AttnlabError('ERANGE', `threshold must be in [0, 1), got ${threshold}`);
  }
  const nullScore = nullGiven ?? nullDagScore(T, mask);
  nullDagScore(0, mask); // checks the mask when a null was given
  const maskLabel = typeof mask === 'string' ? mask : mask.mode === 'window' ? `window:${mask.window}` : mask.mode;
  const overall = overallDag ?? dagScore(M);
  if (!Number.isFinite(nullScore) || !Number.isFinite(overall)) throw new AttnlabError('ENAN', 'figDag: a score is not finite');
  return layoutFigure({
    ...figSize('fig3', width), tight, lang, suptitle: [t.sup],
    panels: [barPanel({ scores, nullScore, maskLabel, T, t }), graphPanel({ tokens, A: M, T, threshold, overall, t })],
    figure: 'fig3', ariaLabel: t.graph(fmt3(overall)),
    attrs: { 'data-dag': fmtValue(overall), 'data-null-dag': fmtValue(nullScore), 'data-mask': maskLabel, 'data-threshold': fmtValue(threshold) },
  });
}
