// figure-args.js — one run of the model → the arguments of the chapter's four figures.
// The page, the widget and `npm run figures` all draw from a Result this way, so the
// three show the same numbers for the same view.

/**
 * The arguments of figure `key` ('fig1' … 'fig4') for result r and view v:
 *   {tokens (labels to show), layer, head ('avg' or a head), row, col (the do's cell),
 *    lambda, mask, A (the matrix shown: r.attention(layer, head) unless given),
 *    model, nLayer, sentence, title, compare (Fig. 1's full-mask panel),
 *    at ({i, j}: Fig. 2's cell, default the do's cell), threshold (Fig. 3's edges)}.
 * Fields left undefined take the figure's defaults.
 */
export function figureArgs(key, r, v) {
  const { layer, head = 'avg', tokens = r.tokens } = v;
  const A = () => v.A ?? r.attention(layer, head);
  switch (key) {
    case 'fig1':
      return {
        tokens, A: A(), model: v.model, layer, nLayer: v.nLayer, head, sentence: v.sentence, title: v.title,
        mask: v.mask, compare: v.compare,
      };
    case 'fig2': {
      const at = v.at ?? { i: v.row, j: v.col };
      return { q: r.q, k: r.k, i: at.i, j: at.j, tokens, attention: r.attention(layer, r.captureQK.head) };
    }
    case 'fig3':
      return {
        tokens, A: A(), dagScores: r.dagScores[layer],
        nullDagScore: r.layerNullDagScores ? r.layerNullDagScores[layer] : r.nullDagScore,
        overallDag: head === 'avg' ? r.layerDagScores[layer] : r.dagScores[layer][head],
        threshold: v.threshold, mask: v.mask,
      };
    case 'fig4':
      return { tokens, A: A(), row: v.row, col: v.col, lambda: v.lambda, mask: v.mask };
    default:
      throw new TypeError(`figureArgs: not a chapter figure: ${key}`);
  }
}
