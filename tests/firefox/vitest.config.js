// vitest.config.js — the Firefox smoke suite: the page, the widget and the lineage page in Debian's
// Firefox ESR (headless, WebDriver BiDi via puppeteer-core; tests/firefox/helpers.js).
//   npx vitest run --config tests/firefox/vitest.config.js            (all of it; `make test-firefox`)
//   npx vitest run --config tests/firefox/vitest.config.js widget     (one file)
// Needs web/dist (make wasm page widget) and firefox-esr (scripts/install-deps.sh).
// The browser suites' settings (tests/e2e/vitest.config.js: one file at a time, hang guards, Node on the
// relaxed build like the browser) with this suite's files.

import { defineConfig } from 'vitest/config';
import e2e from '../e2e/vitest.config.js';

export default defineConfig({ ...e2e, test: { ...e2e.test, include: ['tests/firefox/**/*.test.js'] } });
