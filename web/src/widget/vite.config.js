// widget/vite.config.js — the prebuilt, no-build-step copy of 'attnlab/widget':
//   npx vite build --config web/src/widget/vite.config.js     (make widget)
// → web/dist/widget/attnlab-widget.js (d3 bundled in, ES module),
//   web/dist/widget/attnlab-widget-worker.js (the shared worker) and
//   web/dist/widget/attnlab-widget-thread-worker.js (its helper threads, on isolated pages).
// Same depth below the package root as web/src/widget/, so the module's
// relative defaults (../../dist/attnlab.wasm, ../../../models/brown-gpt2/)
// hold for both. The wasm is not copied (dropWasmCopy): the widget passes its URL to the worker.

import { defineConfig, createLogger } from 'vite';
import { fileURLToPath } from 'node:url';

const logger = createLogger('warn');
const warn = logger.warn;
// Node-only branches of the API (node:fs …) are externalized; expected.
const EXPECTED = /externalized for browser compatibility|doesn't exist at build time/;
logger.warn = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };
logger.warnOnce = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

// The API's default wasm URL (sources.js: new URL('../dist/attnlab.wasm', import.meta.url))
// makes Vite emit a copy of the wasm next to the bundle. The widget always hands the
// worker its wasm URL (../attnlab.wasm from the bundle), so the copy is dropped.
function dropWasmCopy() {
  return {
    name: 'attnlab-drop-wasm-copy',
    generateBundle(_, bundle) {
      for (const k of Object.keys(bundle)) if (k.endsWith('.wasm')) delete bundle[k];
    },
  };
}

export default defineConfig({
  root: ROOT,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  customLogger: logger,
  build: {
    outDir: 'web/dist/widget',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: false,
    sourcemap: false,
    reportCompressedSize: false,
    copyPublicDir: false,
    rollupOptions: {
      input: { 'attnlab-widget': fileURLToPath(new URL('./index.js', import.meta.url)) },
      preserveEntrySignatures: 'strict',
      output: {
        format: 'es',
        entryFileNames: '[name].js',
        chunkFileNames: 'attnlab-widget-[name].js',
        assetFileNames: 'attnlab-widget-[name][extname]',
      },
    },
  },
  plugins: [dropWasmCopy()],
  worker: {
    format: 'es',
    plugins: () => [dropWasmCopy()],
    // two workers: the widgets' shared model worker, and inside it the helper threads' worker
    // (web/src/core/thread.js) that a cross-origin isolated page starts
    rollupOptions: { output: {
      entryFileNames: (chunk) => (chunk.name === 'thread' ? 'attnlab-widget-thread-worker.js' : 'attnlab-widget-worker.js'),
      chunkFileNames: 'attnlab-widget-worker-[name].js', assetFileNames: 'attnlab-widget-[name][extname]' } },
  },
});
