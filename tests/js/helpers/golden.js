// golden.js (test helper) — the PyTorch golden fixtures (tests/fixtures/golden.json, made by
// tests/ref/gen_fixtures.py) as the tests of the low layer (web/src/core/wasm.js) use them: a golden
// model's files, and a golden case's options in the low layer's numeric form.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DO_HARD, DO_SOFT, ABLATE, MASK_CAUSAL, MASK_FULL, MASK_WINDOW } from '../../../web/src/core/wasm.js';
import { modelFiles } from './model-files.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const golden = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/golden.json'), 'utf8'));

/** The files of golden model `name` ('tiny', …) as Uint8Arrays. */
export function goldenFiles(name) {
  return modelFiles(join(ROOT, golden.models[name].dir));
}

const KIND = { hard: DO_HARD, soft: DO_SOFT, ablate: ABLATE };
const MASK = { causal: MASK_CAUSAL, full: MASK_FULL, window: MASK_WINDOW };

/** Golden opts (strings, nulls) -> the low layer's numeric forward options. */
export function forwardOpts(o) {
  return {
    interventions: o.interventions.map((x) => ({ kind: KIND[x.kind], layer: x.layer, head: x.head,
                                                 row: x.row, col: x.col, lambda: x.lambda })),
    mask: MASK[o.mask],
    window: o.window,
    layerMask: o.layer_mask ? o.layer_mask.map((s) => MASK[s]) : null,
    layerWindow: o.layer_window ?? null,
    scale: o.scale ?? null,
    captureLayer: o.capture ? o.capture.layer : -1,
    captureHead: o.capture ? o.capture.head : -1,
  };
}
