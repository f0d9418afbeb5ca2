// figures/index.js — the figures' public surface: four pure functions data → SVG
// node tree (svg.js), the display-level do, the serialisers and the file names.
// PNG export (svgToPng) is Node-only and lives in export.js, imported on its own;
// nothing here imports it, so a browser bundle never sees the native renderer.

export { figAttentionAsymmetry } from './fig1.js';
export { figOuterProduct, outerProductDemo, softmaxScores } from './fig2.js';
export { figDag, dagEdges } from './fig3.js';
export { figDoIntervention } from './fig4.js';
export { hardDo, softDo } from './display-do.js';
export { h, toString, toElement, walk, textOf, SVG_NS } from './svg.js';
export { tokenLabel, FONT_FAMILY, FONT_FAMILY_ZH } from './text.js';
export { FIGSIZE } from './layout.js';
export { FIGURE_FILES, CHAPTER_SCALE } from './names.js';
