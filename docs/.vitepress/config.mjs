// docs/.vitepress/config.mjs — the attnlab site (VitePress): the guide, the
// reference pages of docs/*.md, and the chapter (Chinese) with live figures.
//   npm run docs:build   (make docs: copies the wasm and the built-in model to docs/public/attnlab/ first)
//   npm run docs:dev
// Base path: DOCS_BASE (default '/'), e.g. DOCS_BASE=/attnlab/ for a project site.

import { defineConfig } from 'vitepress';
import { createLogger } from 'vite';
import { fileURLToPath } from 'node:url';
import { texmath } from './texmath.mjs';

// The API's Node-only branches (node:fs …) are externalized in the browser
// bundle, and the built-in model's default URL is resolved at run time: expected.
const logger = createLogger('warn');
const warn = logger.warn;
const EXPECTED = /externalized for browser compatibility|doesn't exist at build time|Some chunks are larger/;
logger.warn = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };
logger.warnOnce = (msg, opts) => { if (!EXPECTED.test(msg)) warn(msg, opts); };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default defineConfig({
  title: 'attnlab',
  description: 'Does attention mark causes? A GPT-2 engine in C/WebAssembly that tests it live in the reader\'s browser, with embeddable figures.',
  lang: 'en-US',
  base: process.env.DOCS_BASE || '/',
  cleanUrls: true,
  lastUpdated: false,
  // docs/generated/: the numbers of `make docs-numbers`, included into pages, not pages themselves
  srcExclude: ['**/README.md', 'generated/**'],
  // Links from docs/*.md to the repository's sources (../c/include/attnlab.h …) are
  // meant for readers of the repository; they have no page on the site.
  ignoreDeadLinks: [/^\.?\.?\/?\.\.\/(c|web|tests|models|scripts|bench|examples|types)\//, /^\.?\/?\.\.\/(README|LICENSE|Makefile|package\.json)/],
  head: [['meta', { name: 'theme-color', content: '#1f4fd1' }], ['link', { rel: 'icon', type: 'image/svg+xml', href: `${process.env.DOCS_BASE || '/'}favicon.svg` }]],
  markdown: {
    config: (md) => md.use(texmath),
  },
  vue: {
    template: {
      compilerOptions: {
        // <attnlab-figure>, <attnlab-lab>: custom elements, registered in the browser by the theme
        isCustomElement: (tag) => tag.startsWith('attnlab-'),
      },
    },
  },
  vite: {
    customLogger: logger,
    worker: { format: 'es' },
    optimizeDeps: { exclude: ['attnlab'] },   // (here it is the workspace itself; authors' sites need it: docs/guide/embedding.md)
    build: { chunkSizeWarningLimit: 1000 },
    server: { fs: { allow: [ROOT] } },
  },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Embedding', link: '/guide/embedding' },
      { text: '章节：注意力即因果', link: '/chapter/' },
      { text: 'Chapter guide (English)', link: '/chapter/en' },
      { text: 'API', link: '/api' },
    ],
    sidebar: [
      {
        text: 'Guide',
        items: [
          { text: 'Getting started', link: '/guide/getting-started' },
          { text: 'Embedding live figures', link: '/guide/embedding' },
          { text: 'The page', link: '/page' },
          { text: 'The lineage demos', link: '/lineage' },
          { text: 'Heads', link: '/heads' },
          { text: 'Does attention explain?', link: '/evidence' },
        ],
      },
      {
        text: 'The chapter',
        items: [
          { text: '注意力即因果（中文）', link: '/chapter/' },
          { text: 'A guided walk (English)', link: '/chapter/en' },
          { text: 'The mathematics', link: '/math' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'JavaScript API', link: '/api' },
          { text: 'C API', link: '/c-api' },
          { text: 'Architecture', link: '/architecture' },
          { text: 'Security', link: '/security' },
          { text: 'Benchmarks', link: '/BENCHMARKS' },
        ],
      },
    ],
    outline: { level: [2, 3] },
    search: { provider: 'local' },
    footer: { message: 'MIT licensed. Every figure is computed in your browser; nothing is sent anywhere.' },
  },
});
