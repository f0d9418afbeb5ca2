// vite.config.js — builds the chapter page (web/index.html + web/src/page/) into
// web/dist/page/: bare imports (d3-*) bundled, the worker (web/src/worker.js) and
// attnlab.wasm emitted as files, no inline script or style, so the page runs under
// scripts/serve.mjs's strict Content-Security-Policy. `make page` (or
// `npx vite build`) runs it; run `make wasm` first (the wasm is an input).
// The models are not bundled: the page fetches models/brown-gpt2/ from the server.

import { defineConfig, createLogger } from 'vite';
import { fileURLToPath } from 'node:url';

// Vite warns that the API's Node-only branches (node:fs, node:worker_threads …,
// never taken in a browser) are externalized, and that the built-in model's
// default URL is resolved at run time; both are expected (docs/api.md, Bundlers).
const logger = createLogger('warn');
const warn = logger.warn;
const EXPECTED = /externalized for browser compatibility|models\/brown-gpt2\/'?, import\.meta\.url\) doesn't exist at build time/;
logger.warn = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };
logger.warnOnce = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };

export default defineConfig({
  root: 'web',
  base: './',             // relative URLs: the page works under any path prefix
  // build/page-public/: the opening view drawn by the figure code (make page writes
  // prerender/<lang>/ there first); copied as is next to index.html
  publicDir: fileURLToPath(new URL('./build/page-public', import.meta.url)),
  logLevel: 'warn',
  customLogger: logger,
  build: {
    outDir: 'dist/page',  // web/dist/page (web/dist/ is gitignored)
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0, // never inline assets as data: URLs (the wasm must stay a file)
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
    // two pages: the chapter's figures and the lineage demos (web/lineage.html)
    rollupOptions: {
      input: {
        main: fileURLToPath(new URL('./web/index.html', import.meta.url)),
        lineage: fileURLToPath(new URL('./web/lineage.html', import.meta.url)),
      },
    },
  },
  worker: { format: 'es' },
});
