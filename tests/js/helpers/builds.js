// builds.js — which wasm builds the tests of this process run: the relaxed-SIMD ones
// (web/dist/attnlab-relaxed.wasm, -mt) when this Node validates relaxed SIMD (the relaxed
// project of `make test-js`: tests/js/vitest.relaxed.config.js, with
// --experimental-wasm-relaxed-simd), else the SIMD128 ones (web/dist/attnlab.wasm, -mt), as
// loadModel's backend 'auto' chooses. ATTNLAB_WASM / ATTNLAB_WASM_MT override the paths.

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { autoBackend, BUILDS } from '../../../web/src/core/backend.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** 'relaxed-simd' or 'simd128': what loadModel() runs in this process. */
export const BACKEND = autoBackend();
/** File names of this process's builds, one thread and multithreaded. */
export const [ST_BUILD, MT_BUILD] = BUILDS[BACKEND];
/** Their paths. */
export const WASM_PATH = process.env.ATTNLAB_WASM || join(ROOT, 'web/dist', ST_BUILD);
export const WASM_MT_PATH = process.env.ATTNLAB_WASM_MT || join(ROOT, 'web/dist', MT_BUILD);
/** model.engine.backendNote as loadModel's 'auto' leaves it here (a matcher where relaxed SIMD does not run). */
export function backendNoteMatcher(expect) {
  return BACKEND === 'simd128' ? expect.stringMatching(/does not run relaxed SIMD/) : null;
}
