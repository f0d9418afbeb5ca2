// vitest.config.js — the browser tests of the page (Chromium via playwright-core).
//   npx vitest run --config tests/e2e/vitest.config.js            (all of them)
//   npx vitest run --config tests/e2e/vitest.config.js page       (one file)
// They build the page when it is stale (tests/e2e/helpers.js) and need
// web/dist/attnlab.wasm (`make wasm`). One file at a time: each starts a browser.

import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('../../', import.meta.url)),
  test: {
    include: ['tests/e2e/**/*.test.js'],
    // hang guards, not speed limits: a loaded 2-core machine (tests/README.md) stretches the heaviest tests past 2 min
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Chromium runs the relaxed-SIMD build (tests/e2e/backend.test.js); with this flag the Node side of the
    // tests, which computes what the page must show, runs the same build, so they compare like with like
    execArgv: ['--experimental-wasm-relaxed-simd'],
    maxWorkers: 1,
    fileParallelism: false,
  },
});
