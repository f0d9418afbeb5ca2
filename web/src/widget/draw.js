// widget/draw.js — what each widget figure draws, from the worker's data: pure
// functions returning svg.js node trees (the same figure functions as the page
// and `npm run figures`: web/src/figures/), never DOM.

import { tokenLabel } from '../figures/text.js';
import { figGrid, figLines, figHistogram, figModern2D, crossover, LINEAGE_COLORS as C } from '../figures/lineage.js';
import { scatter, groupedBars } from '../figures/evidence.js';
import { fitWidth } from '../ui/fit.js';
import { chapterFigures, drawFigure } from '../ui/figure-args.js';

/** Figures 1–4 need the model; the others are the lineage demos. */
/** The chapter's figures (the registry of ui/figure-args.js: '1' … '4', and any registered later). */
export const isModelFigure = (f) => chapterFigures().includes(`fig${f}`);
export const MODEL_FIGURES = new Set(chapterFigures().map((k) => k.slice(3)));
export const LINEAGE_FIGURES = new Set(['hopfield', 'linear', 'sqrtdk']);
/** Does attention explain? (docs/evidence.md): edge knockout against the weights, token knockout against three readings. */
export const EVIDENCE_FIGURES = new Set(['edge', 'tokens']);
export const FIGURES = [...MODEL_FIGURES, ...LINEAGE_FIGURES, ...EVIDENCE_FIGURES];

/** The evidence figure of d (Model#edgeKnockout or #tokenKnockout). */
export function evidenceFigures(kind, d, { lang, width, t }) {
  const w = Math.max(240, Math.min(760, Math.floor(width)));
  const lab = (s, k) => `${k} ${tokenLabel(s, 14)}`;
  if (kind === 'edge') {
    const T = d.T, pts = [];
    for (let i = 0; i < T; i++)
      for (let j = 0; j <= i; j++)
        pts.push({ x: d.A[i * T + j], y: d.E[i * T + j], title: `${lab(d.tokens[j], j)} → ${lab(d.tokens[i], i)}: A ${d.A[i * T + j].toFixed(3)}, KL ${d.E[i * T + j].toFixed(4)}` });
    return [scatter({ points: pts, xTitle: t('evA'), yTitle: t('evE'), title: t('evEdgeTitle', d.layer, d.head), width: w, height: Math.round(w * 0.62), lang })];
  }
  return [groupedBars({ labels: d.tokens.map(lab), width: w, lang, title: t('evTokTitle'), series: [
    { name: t('evTokEffect'), values: Array.from(d.effect), color: '#d7301f' },
    { name: t('evTokLast'), values: Array.from(d.readings.lastLayer), color: '#fdae61' },
    { name: t('evTokRoll'), values: Array.from(d.readings.rollout), color: '#74add1' },
    { name: t('evTokFlow'), values: Array.from(d.readings.flow), color: '#4575b4' }] })];
}

const f3 = (x) => Number(x).toFixed(3);
const sci = (x) => (x === 0 ? '0' : Number(x).toExponential(1));

const CHAPTER_TOKENS = ['Because', ' the', ' storm', ' intensified', ' ,', ' the', ' ship', ' finally', ' sank', ' .'];

/**
 * The height (px) a figure will take in a box `width` px wide, for the
 * placeholder, so that the page does not jump when the figure arrives. Model
 * figures: the figure itself, built from stand-in data of the chapter's
 * sentence's shape (10 tokens, head size 32, 4 heads); the lineage demos: their
 * measured layouts.
 */
export function reserveHeight(figure, width, { maxHeight = 640, lang = 'en', compare = false } = {}) {
  const w = Math.max(240, Math.floor(width));
  if (isModelFigure(figure)) {
    const T = 10, HS = 32;
    // q, k of alternating sign, so that Fig. 2's colour-bar ticks and trace carry minus signs and two digits,
    // as a trained head's do (zeros gave labels of one character and a figure 5 px too short)
    const qk = Float32Array.from({ length: T * HS }, (_, x) => (x % 2 ? -1.5 : 1.5));
    const A = new Float64Array(T * T);
    for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) A[i * T + j] = 1 / (i + 1);
    const base = {
      T, tokens: CHAPTER_TOKENS, q: qk, k: qk, captureQK: { layer: 0, head: 0 },
      dagScores: [[0.8, 0.8, 0.8, 0.8]], layerDagScores: [0.8], nullDagScore: 0.7071, attention: () => A,
    };
    const n = modelFigure({ figure, base, lang, width: w, maxHeight, layer: 0, head: 'avg', row: 8, col: 2, lambda: 3, modelName: 'brown-gpt2', config: { nLayer: 1, nHead: 4 },
      ...(compare && figure === '1' ? { compare: A } : {}) });
    return Number(n.attrs.height) * Math.min(1, w / Number(n.attrs.width));
  }
  if (figure === 'edge') return Math.round(Math.min(760, w) * 0.62);
  if (figure === 'tokens') return 26 + 18 + 10 * 30 + 8; // the chapter's sentence: 10 tokens of 4 bars
  if (figure === 'hopfield') return w >= 960 ? 720 : w >= 640 ? 960 : 750;
  if (figure === 'linear') return 332;
  return w >= 880 ? 310 : 582;   // sqrtdk: two plots side by side, or stacked
}

/**
 * The figure as large as a box cw px wide and maxH px high allows (ui/fit.js); in a
 * widget a row of panels may be scaled down further than on the page (to 55 %).
 */
export function fitFigure(build, cw, maxH) {
  return fitWidth(build, cw, maxH, { minShrink: 0.55, widen: [1.15, 1.3, 1.5, 1.75, 2] }).node;
}

/**
 * One of the chapter's figures from a base run (and, for Fig. 4, the run with
 * the do inside the model). v: {figure, base, lang, width, layer, head, row, col,
 * lambda, modelName, config}. Returns the svg node.
 */
export function modelFigure(v) {
  const maxH = v.maxHeight || 640;
  return fitFigure((w) => buildModelFigure(v, w), Math.max(240, Math.floor(v.width)), maxH);
}

function buildModelFigure(v, width) {
  const { base: r, lang, config } = v;
  return drawFigure(`fig${v.figure}`, r, { ...v, tokens: r.tokens, model: v.modelName, nLayer: config.nLayer, mask: undefined },
    { lang, width: Math.max(240, width), tight: true });
}

/** The Hopfield demo: three grids (input, result, stored), the energy, the modern Hopfield plane. */
export function hopfieldFigures(d, { lang, width, t }) {
  const gridSize = Math.max(76, Math.min(160, Math.floor((width - 24) / 3) - 8));
  const plot = Math.max(240, Math.min(460, width - 8));
  const m = d.modern;
  return [
    figGrid({ values: d.start, diff: d.target, title: t('noisy'), size: gridSize, lang, figure: 'hopfield-start' }),
    figGrid({ values: d.final, diff: d.target, title: t('retrieved'), size: gridSize, lang, figure: 'hopfield-final' }),
    figGrid({ values: d.target, title: t('stored'), size: gridSize, lang, figure: 'hopfield-target' }),
    figLines({
      series: [{ name: 'E', xs: d.energies.map((_, k) => k), ys: d.energies, color: C.energy, role: 'energy' }],
      title: t('energyTitle'), xLabel: t('energyX'), yLabel: 'E', width: plot, height: 230,
      xDomain: [0, Math.max(3, d.energies.length - 1)], lang, figure: 'hopfield-energy',
    }),
    figModern2D({
      patterns: m.patterns, start: m.start, oneStep: m.oneStep, path: m.path, fixed: m.fixed, mean: m.mean, weights: m.weights,
      labels: { patterns: t('lPatterns'), start: t('lStart'), oneStep: t('lOne'), fixed: t('lFixed'), mean: t('lMean') },
      title: t('modernTitle', Number(m.beta.toPrecision(3))), size: Math.max(200, Math.min(360, width - 60)), lang, figure: 'modern-hopfield-2d',
    }),
  ];
}

export function hopfieldNote(d, t) {
  const ok = d.overlap >= 0.999;
  return [t('hopRetrieval', ok, f3(d.startOverlap), f3(d.overlap), d.steps), t('hopEquiv', sci(d.equivalence.diff))];
}

/** The linear-attention demo: the timing sweep, softmax against the recurrent linear form. */
export function linearFigures(d, { lang, width, t }) {
  const xs = d.timing.map((p) => p.T);
  const soft = d.timing.map((p) => p.softmaxMs), lin = d.timing.map((p) => p.linearMs);
  const cross = crossover(xs, soft, lin);
  const fname = { elu: 'elu+1', relu: 'relu', favor: `FAVOR+ m=${d.m}` }[d.featureMap];
  return [figLines({
    series: [
      { name: t('tSoftmax'), xs, ys: soft, color: C.softmax, role: 'softmax' },
      { name: t('tLinear', fname), xs, ys: lin, color: C.linear, role: 'linear' },
    ],
    vlines: cross ? [{ at: cross, label: t('cross', Math.round(cross)), role: 'crossover' }] : [],
    title: t('timingTitle'), xLabel: t('timingX'), yLabel: t('timingY'), xLog: true, yLog: true,
    xDomain: [48, Math.max(...xs) * 1.3], width: Math.max(280, Math.min(640, width - 8)), height: 330, lang,
    figure: 'attention-timing', legendAt: 'below',
  })];
}

export function linearNote(d, t) {
  return [t('linEquiv', sci(d.prefixDiff), sci(d.rnnDiff)), t('linErr', f3(d.softmaxError))];
}

/** The √d_k demo: the q·k histogram with and without the scale, and the softmax entropy against d_k. */
export function sqrtdkFigures(d, { lang, width, t }) {
  const w = width >= 880 ? Math.min(620, Math.floor((width - 12) / 2)) : Math.max(280, Math.min(560, width - 8));
  const lim = Math.max(4.5, 4.5 * Math.sqrt(d.dk));
  const scaled = d.raw.map((x) => x / Math.sqrt(d.dk));
  return [
    figHistogram({
      series: [
        { name: t('histRaw'), values: d.raw, color: C.raw, role: 'raw' },
        { name: t('histScaled'), values: scaled, color: C.scaled, role: 'scaled' },
      ],
      bins: 60, range: [-lim, lim], title: t('histTitle', d.dk), xLabel: t('histX'), width: w, height: 270, lang, figure: 'qk-histogram',
    }),
    figLines({
      series: [
        { name: t('entScaled'), xs: d.entropy.dks, ys: d.entropy.scaled, color: C.scaled, role: 'scaled' },
        { name: t('entRaw'), xs: d.entropy.dks, ys: d.entropy.raw, color: C.raw, role: 'raw' },
      ],
      hlines: [{ at: Math.log(64), label: t('entMax'), role: 'log-t' }],
      vlines: [{ at: d.dk, label: `d_k = ${d.dk}`, role: 'dk-line', color: C.muted }],
      title: t('entropyTitle'), xLabel: t('entropyX'), yLabel: t('entropyY'), xLog: true, yDomain: [0, 4.5],
      width: w, height: 300, lang, figure: 'softmax-entropy', legendAt: 'below',
    }),
  ];
}

export function sqrtdkNote(d, t) {
  return [t('sqrtStats', d.stats, d.dk)];
}

export { tokenLabel };
