// vitest.config.js — the Firefox smoke suite: the page, the widget and the lineage page in Debian's
// Firefox ESR (headless, WebDriver BiDi via puppeteer-core; tests/firefox/helpers.js).
//   npx vitest run --config tests/firefox/vitest.config.js            (all of it; `make test-firefox`)
//   npx vitest run --config tests/firefox/vitest.config.js widget     (one file)
// Needs web/dist (make wasm page widget) and firefox-esr (scripts/install-deps.sh).
// One file at a time: each starts a browser.

import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('../../', import.meta.url)),
  test: {
    include: ['tests/firefox/**/*.test.js'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Firefox runs the relaxed-SIMD build where it validates relaxed SIMD; with this flag the Node side can load
    // the same build (loadModel's backend option, set to what the page reports), so like is compared with like
    execArgv: ['--experimental-wasm-relaxed-simd'],
    maxWorkers: 1,
    fileParallelism: false,
  },
});
