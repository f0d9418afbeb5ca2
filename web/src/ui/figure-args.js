// figure-args.js — the chapter's figures as one registry: for each key ('fig1' … 'fig4') the
// function that draws it, the file name it is saved under, and how a run of the model and a
// view become its arguments. The page, the widget and `npm run figures` draw from it, so they
// show the same numbers for the same view, and a new figure registered here reaches the widget
// and the figures script without touching them (docs/architecture.md, "Add a figure").

import { figAttentionAsymmetry } from '../figures/fig1.js';
import { figOuterProduct } from '../figures/fig2.js';
import { figDag } from '../figures/fig3.js';
import { figDoIntervention } from '../figures/fig4.js';
import { FIGURE_FILES } from '../figures/names.js';

// A view v: {tokens (labels to show), layer, head ('avg' or a head), row, col (the do's cell),
// lambda, mask, A (the matrix shown: r.attention(layer, head) unless given), model, nLayer,
// sentence, title, compare (Fig. 1's full-mask panel), at ({i, j}: Fig. 2's cell, default the
// do's cell), threshold (Fig. 3's edges)}. Fields left undefined take the figure's defaults.
const view = (r, v) => ({ ...v, head: v.head ?? 'avg', tokens: v.tokens ?? r.tokens });
const shown = (r, v) => v.A ?? r.attention(v.layer, v.head);

const REGISTRY = new Map([
  ['fig1', {
    draw: figAttentionAsymmetry, file: FIGURE_FILES.fig1,
    args: (r, v) => ({
      tokens: v.tokens, A: shown(r, v), model: v.model, layer: v.layer, nLayer: v.nLayer, head: v.head,
      sentence: v.sentence, title: v.title, mask: v.mask, compare: v.compare,
    }),
  }],
  ['fig2', {
    draw: figOuterProduct, file: FIGURE_FILES.fig2,
    args: (r, v) => {
      const at = v.at ?? { i: v.row, j: v.col };
      return { q: r.q, k: r.k, i: at.i, j: at.j, tokens: v.tokens, attention: r.attention(v.layer, r.captureQK.head) };
    },
  }],
  ['fig3', {
    draw: figDag, file: FIGURE_FILES.fig3,
    args: (r, v) => ({
      tokens: v.tokens, A: shown(r, v), dagScores: r.dagScores[v.layer],
      nullDagScore: r.layerNullDagScores ? r.layerNullDagScores[v.layer] : r.nullDagScore,
      overallDag: v.head === 'avg' ? r.layerDagScores[v.layer] : r.dagScores[v.layer][v.head],
      threshold: v.threshold, mask: v.mask,
    }),
  }],
  ['fig4', {
    draw: figDoIntervention, file: FIGURE_FILES.fig4,
    args: (r, v) => ({ tokens: v.tokens, A: shown(r, v), row: v.row, col: v.col, lambda: v.lambda, mask: v.mask }),
  }],
]);

function spec(key) {
  const s = REGISTRY.get(key);
  if (!s) throw new TypeError(`not a chapter figure: ${key} (known: ${[...REGISTRY.keys()].join(', ')})`);
  return s;
}

/** The keys of the chapter's figures, in order. */
export function chapterFigures() {
  return [...REGISTRY.keys()];
}

/** The base file name figure `key` is saved under (add .svg / .png). */
export function figureFile(key) {
  return spec(key).file;
}

/** The arguments of figure `key` for result r and view v (see above). */
export function figureArgs(key, r, v) {
  return spec(key).args(r, view(r, v));
}

/** Figure `key` drawn from result r and view v; `opts` (lang, width, tight, …) go to its draw function. */
export function drawFigure(key, r, v, opts = {}) {
  const s = spec(key);
  return s.draw({ ...s.args(r, view(r, v)), ...opts });
}

/**
 * Add a figure: `draw` (a pure function of its arguments to an SVG node tree), `file` (its
 * base file name) and `args` (result, view → arguments). Returns a function that removes it.
 */
export function registerFigure(key, { draw, file, args }) {
  if (!/^fig\d+$/.test(key) || REGISTRY.has(key)) throw new TypeError(`registerFigure: ${key} is taken or not figN`);
  if (typeof draw !== 'function' || typeof args !== 'function' || typeof file !== 'string' || !file)
    throw new TypeError('registerFigure: give draw, args (functions) and file (a name)');
  REGISTRY.set(key, { draw, file, args });
  return () => REGISTRY.delete(key);
}
