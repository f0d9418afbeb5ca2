// docs-helpers.js — for the widget and docs-site browser tests
// (tests/e2e/widget*.test.js, docs*.test.js) and bench/bench_docs.mjs:
// build the widget bundle and the VitePress site when stale, and serve
// directories statically (scripts/static-server.mjs, as `npm run docs:preview`
// does; optionally with the page's Content-Security-Policy from scripts/serve.mjs).
// The browser itself comes from helpers.js (Debian's Chromium via playwright-core).

import { execFileSync } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT, CHROMIUM, ARGS } from './helpers.js';
import { startStatic } from '../../scripts/static-server.mjs';

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

export { startStatic };

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

/**
 * A new context and page at `url`, with a record of what must not happen — issues: {pageErrors, consoleErrors,
 * requests (every URL the context asked for), foreign (those off the page's origin but data: and blob:)} — and, in
 * the page, window.__workers (Worker constructions) and window.__csp (CSP violations). {context, page, issues, status}.
 */
export async function openRecorded(browser, url, { width = 1400, height = 900, colorScheme = 'light' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme });
  const page = await context.newPage();
  const issues = { pageErrors: [], consoleErrors: [], requests: [], foreign: [] };
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    const W = window.Worker;
    window.__workers = 0;
    window.Worker = class extends W { constructor(...a) { super(...a); window.__workers += 1; } };
  });
  page.on('pageerror', (e) => issues.pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') issues.consoleErrors.push(m.text()); });
  const origin = new URL(url).origin;
  context.on('request', (r) => {
    const u = r.url();
    issues.requests.push(u);
    if (!u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin) issues.foreign.push(u);
  });
  const res = await page.goto(url);
  return { context, page, issues, status: res.status() };
}

/** Scroll the page from top to bottom `step` pixels at a time (lazy content comes in as it is neared). */
export async function scrollThrough(page, step) {
  const h = await page.evaluate(() => document.documentElement.scrollHeight);
  for (let y = 0; y <= h; y += step) { await page.evaluate((yy) => window.scrollTo(0, yy), y); await page.waitForTimeout(60); }
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
