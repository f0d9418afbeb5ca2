// vitest.relaxed.config.js — the Node tests that load the engine, again on the relaxed-SIMD builds
// (web/dist/attnlab-relaxed.wasm and attnlab-relaxed-mt.wasm). Node 20 compiles relaxed
// instructions only with --experimental-wasm-relaxed-simd; with it loadModel's backend 'auto'
// picks the relaxed builds, and so does tests/js/helpers/builds.js for the tests that load a
// .wasm file themselves. `make test-js` runs the default config (SIMD128) and then this one:
//   npx vitest run --config tests/js/vitest.relaxed.config.js [file]

import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('../../', import.meta.url)),
  test: {
    // every test file whose numbers or engine reports come from the wasm builds' arithmetic. Left out, as
    // the relaxed flag changes no instruction they exercise (it turns multiply-adds into relaxed_madd, and
    // these read files and tokenize: no float kernel): loading (downloads, streaming, timeouts), real-files
    // (real configs and tokenizers; its forward passes are the families' kernels, which families.test.js
    // runs here) and tokenizer-json — about a minute of the suite's two minutes (tests/README.md)
    include: [
      'analysis', 'backward', 'boundary', 'browser-worker', 'builtin-circuits', 'circuit', 'circuits', 'counterfactual', 'errors',
      'evidence-sets-api', 'evidence', 'families', 'heads', 'heads-synthetic', 'lineage', 'memory', 'model',
      'readable', 'relaxed', 'threads', 'threads-api', 'trained', 'wasm-forward', 'worker',
    ].map((f) => `tests/js/${f}.test.js`),
    execArgv: ['--experimental-wasm-relaxed-simd'],
    // hang guards, not speed limits: a loaded 2-core machine (tests/README.md) stretches the heaviest tests past 2 min
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
