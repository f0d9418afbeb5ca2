// index.js — the public API of 'attnlab'. This file only names it: every
// export of the package's main entry is listed here and nowhere else
// (tests/js/exports.test.js asserts the list, so changes are deliberate).
// 'attnlab/worker' (worker-client.js) exports the same names, with a
// loadModel that runs the model in a Web Worker.

export { loadModel } from './model.js';
export { AttnlabError, ERROR_CODES } from './core/errors.js';
export { dagScore, nullDagScore, asymmetry, headAverage, outerProduct, entropy, displayDo } from './analysis.js';
export { alignTokens, nextTokenDiff } from './counterfactual.js';
// The chapter's lineage demos (classical Hopfield → modern Hopfield = attention → linear attention).
export { loadLineage, Lineage, GLYPH_SIDE, HOPFIELD_CAPACITY } from './lineage.js';
// Random-weight twins of a gpt2 model (the control of issue 50): a new Model on the main thread, so not in the worker entry.
export { randomTwin } from './twins.js';
export { controlledEvidence } from './verdicts.js';
