// vite.config.js — builds the chapter page (web/index.html + web/src/page/) into
// web/dist/page/: bare imports (d3-*) bundled, the worker (web/src/worker.js) and
// attnlab.wasm emitted as files, no inline script or style, so the page runs under
// scripts/serve.mjs's strict Content-Security-Policy. `make page` (or
// `npx vite build`) runs it; run `make wasm` first (the wasm is an input).
// The models are not bundled: the page fetches models/brown-gpt2/ from the server.

import { defineConfig, createLogger } from 'vite';
import { fileURLToPath } from 'node:url';
import { translator } from './web/src/page/i18n.js';

// Vite warns that the API's Node-only branches (node:fs, node:worker_threads …,
// never taken in a browser) are externalized, and that the built-in model's
// default URL is resolved at run time; both are expected (docs/api.md, Bundlers).
const logger = createLogger('warn');
const warn = logger.warn;
const EXPECTED = /externalized for browser compatibility|models\/brown-gpt2\/'?, import\.meta\.url\) doesn't exist at build time/;
logger.warn = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };
logger.warnOnce = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };

const escapeHtml = (x) => String(x).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * index.html's static labels (data-i18n, data-i18n-aria, data-i18n-title) filled with the English strings at build
 * time, as the page's script fills them at boot (ui/i18n.js applyStatic), so that the first paint is readable
 * before the script runs; a Chinese reader's labels are replaced at boot, like the opening view's pictures.
 */
function englishLabels(html) {
  const t = translator('en');
  const out = html.replace(/(<([a-z][a-z0-9]*)\b[^>]*\bdata-i18n="([A-Za-z0-9_]+)"[^>]*>)([^<]*)(<\/\2>)/g,
    (all, open, tag, key, text, close) => `${open}${escapeHtml(t(key))}${close}`);
  return out.replace(/<[a-z][a-z0-9]*\b[^>]*\bdata-i18n-(aria|title)="([A-Za-z0-9_]+)"[^>]*>/g, (tagText, kind, key) => {
    const attr = kind === 'aria' ? 'aria-label' : 'title';
    if (new RegExp(`\\s${attr}="`).test(tagText)) return tagText;
    return tagText.replace(/\s*\/?>$/, (end) => ` ${attr}="${escapeHtml(t(key))}"${end}`);
  });
}

/**
 * The chapter page's entry module (web/src/page/entry.js) is small and imports the rest of the page (main.js)
 * itself, after starting the model's load; so that the rest downloads beside the entry instead of after it,
 * index.html gets a <link rel="modulepreload"> for main.js's chunk and the chunks it imports.
 */
function preloadPageMain() {
  return {
    name: 'attnlab-preload-page-main',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        if (!ctx.bundle || ctx.path !== '/index.html') return html;
        const main = Object.values(ctx.bundle).find((c) => c.type === 'chunk' && c.facadeModuleId &&
          c.facadeModuleId.replaceAll('\\', '/').endsWith('/src/page/main.js'));
        if (!main) throw new Error('vite.config.js: no chunk for web/src/page/main.js (the entry imports it)');
        const files = [main.fileName, ...main.imports].filter((f) => !html.includes(f));
        return { html: englishLabels(html), tags: files.map((f) => ({ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `./${f}` }, injectTo: 'head' })) };
      },
    },
  };
}

export default defineConfig({
  plugins: [preloadPageMain()],
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
