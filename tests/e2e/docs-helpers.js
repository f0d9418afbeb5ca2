// docs-helpers.js — for the widget and docs-site browser tests
// (tests/e2e/widget*.test.js, docs*.test.js) and bench/bench_docs.mjs:
// build the widget bundle and the VitePress site when stale, and serve
// directories statically (with ETags, so a warm reload revalidates with 304s,
// and optionally the page's Content-Security-Policy from scripts/serve.mjs).
// The browser itself comes from helpers.js (Debian's Chromium via playwright-core).

import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync, readdirSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, CHROMIUM, ARGS } from './helpers.js';

export const WIDGET_BUNDLE = path.join(ROOT, 'web/dist/widget/attnlab-widget.js');
export const DOCS_DIST = path.join(ROOT, 'docs/.vitepress/dist');

function newestMtime(p) {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const e of readdirSync(p)) {
    if (e === 'node_modules' || e === 'cache' || e === 'dist' || e === 'public') continue;
    m = Math.max(m, newestMtime(path.join(p, e)));
  }
  return m;
}

const srcInputs = () => [path.join(ROOT, 'web/src'), path.join(ROOT, 'web/dist/attnlab.wasm')];

/** `make widget` when web/dist/widget is missing or older than web/src. */
export function buildWidgetIfStale() {
  if (existsSync(WIDGET_BUNDLE) && statSync(WIDGET_BUNDLE).mtimeMs >= Math.max(...srcInputs().map(newestMtime))) return false;
  execFileSync('make', ['widget'], { cwd: ROOT, stdio: 'pipe' });
  return true;
}

/** `make docs` when the built site is missing or older than docs/ or web/src. */
export function buildDocsIfStale() {
  const out = path.join(DOCS_DIST, 'index.html');
  const inputs = [path.join(ROOT, 'docs'), ...srcInputs()];
  if (existsSync(out) && statSync(out).mtimeMs >= Math.max(...inputs.map(newestMtime))) return false;
  execFileSync('make', ['docs'], { cwd: ROOT, stdio: 'pipe', maxBuffer: 64 << 20 });
  return true;
}

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.txt': 'text/plain; charset=utf-8', '.md': 'text/markdown; charset=utf-8',
  '.woff2': 'font/woff2', '.safetensors': 'application/octet-stream', '.ico': 'image/x-icon',
};

async function resolveIn(root, rel, cleanUrls) {
  const tries = [rel];
  if (cleanUrls && !path.extname(rel)) tries.push(`${rel}.html`);
  for (const r of tries) {
    let file = path.join(root, r);
    try {
      let st = await stat(file);
      if (st.isDirectory()) { file = path.join(file, 'index.html'); st = await stat(file); }
      if (!st.isFile()) continue;
      const [rf, rr] = await Promise.all([realpath(file), realpath(root)]);
      if (rf !== rr && !rf.startsWith(rr + path.sep)) continue;
      return { file: rf, st };
    } catch { /* next */ }
  }
  return null;
}

/**
 * Serve mounts [[urlPrefix, dir], …] (longest prefix first) on 127.0.0.1.
 * csp: a Content-Security-Policy header value or null. cleanUrls: /a → a.html.
 * Counts requests and bytes sent (server.stats) for the benchmark.
 * @returns {Promise<{server, url, stats: {requests, bytes, notModified}, close()}>}
 */
export function startStatic({ mounts, csp = null, cleanUrls = false }) {
  const stats = { requests: 0, bytes: 0, notModified: 0 };
  const sorted = [...mounts].sort((a, b) => b[0].length - a[0].length);
  const server = createServer(async (req, res) => {
    stats.requests += 1;
    if (csp) res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    let p;
    try { p = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { res.writeHead(400).end(); return; }
    const m = sorted.find(([pre]) => p.startsWith(pre));
    const rel = m ? p.slice(m[0].length) : null;
    if (!m || rel.split('/').some((s) => s === '..') || rel.includes('\0')) { res.writeHead(404).end('not found'); return; }
    const found = await resolveIn(m[1], rel, cleanUrls);
    if (!found) {
      const nf = cleanUrls ? await resolveIn(m[1], '404.html', false) : null;
      res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' });
      if (nf) createReadStream(nf.file).pipe(res); else res.end('not found');
      return;
    }
    const etag = `"${found.st.size.toString(16)}-${Math.floor(found.st.mtimeMs).toString(16)}"`;
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'no-cache');   // always revalidate: a warm load costs 304s, not bodies
    if (req.headers['if-none-match'] === etag) { stats.notModified += 1; res.writeHead(304).end(); return; }
    res.writeHead(200, { 'Content-Type': MIME[path.extname(found.file).toLowerCase()] || 'application/octet-stream', 'Content-Length': found.st.size });
    if (req.method === 'HEAD') { res.end(); return; }
    stats.bytes += found.st.size;
    createReadStream(found.file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ server, stats, url: `http://localhost:${port}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** The plain-HTML example's server: the repository root (examples/, web/dist/, models/), with the page's CSP. */
export async function serveRepo({ csp } = {}) {
  const { CSP } = await import('../../scripts/serve.mjs');
  return startStatic({ mounts: [['/', ROOT]], csp: csp === undefined ? CSP : csp });
}

/** The built docs site at / (clean URLs, as VitePress links them). */
export function serveDocs() {
  return startStatic({ mounts: [['/', DOCS_DIST]], cleanUrls: true });
}

export function launch() {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** Wait until every widget matching sel on the page has drawn (data-state=ready). */
export async function waitWidgets(page, sel = 'attnlab-figure, attnlab-lab', timeout = 90_000) {
  await page.waitForFunction((s) => {
    const els = [...document.querySelectorAll(s)];
    return els.length > 0 && els.every((e) => e.dataset.state === 'ready' || e.dataset.state === 'error');
  }, sel, { timeout });
}

/** Per widget: {figure, state, svgs, rects, texts, renders, lang, theme} read from its shadow root. */
export function widgetInfo(page, sel = 'attnlab-figure, attnlab-lab') {
  return page.$$eval(sel, (els) => els.map((e) => {
    const r = e.shadowRoot;
    const svgs = [...r.querySelectorAll('.figure svg')];
    return {
      figure: e.getAttribute('figure') || e.tagName.toLowerCase(), state: e.dataset.state, renders: Number(e.dataset.renders || 0),
      svgs: svgs.length, figures: svgs.map((s) => s.getAttribute('data-figure')),
      rects: svgs.reduce((a, s) => a + s.querySelectorAll('rect').length, 0),
      cells: svgs.reduce((a, s) => a + s.querySelectorAll('rect[data-i][data-j]').length, 0),
      texts: svgs.map((s) => s.textContent).join(' '),
      note: r.querySelector('.note') ? r.querySelector('.note').textContent : '',
      theme: r.querySelector('.frame').dataset.theme,
      lang: svgs[0] ? svgs[0].getAttribute('lang') : null,
    };
  }));
}
