// helpers.js — shared by the page's browser tests (tests/e2e/*.test.js) and
// bench/bench_page.mjs: build the page when it is stale, start scripts/serve.mjs
// on a free port, launch Debian's Chromium through playwright-core, and watch a
// page for everything that must not happen (page errors, console errors, CSP
// violations, requests to any host but the test server).

import { execFileSync } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHAPTER = 'Because the storm intensified , the ship finally sank .';
export const TINY = '/tests/fixtures/tiny/';
export const BUILTIN_WEIGHTS = join(ROOT, 'models/brown-gpt2/model.safetensors');
export const ARTIFACTS = join(ROOT, 'tests/e2e/artifacts');
export const CHROMIUM = '/usr/bin/chromium';
export const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                     '--disable-component-update', '--disable-sync', '--no-first-run'];

function newestMtime(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const e of readdirSync(path)) m = Math.max(m, newestMtime(join(path, e)));
  return m;
}

/** Run `vite build` when web/dist/page is missing or older than its inputs. */
export function buildPageIfStale() {
  const out = join(ROOT, 'web/dist/page/index.html');
  const wasm = join(ROOT, 'web/dist/attnlab.wasm');
  if (!existsSync(wasm)) throw new Error('web/dist/attnlab.wasm is missing: run `make wasm` first');
  const inputs = [join(ROOT, 'web/src'), join(ROOT, 'web/index.html'), join(ROOT, 'vite.config.js'), wasm];
  if (existsSync(out) && statSync(out).mtimeMs >= Math.max(...inputs.map(newestMtime))) return false;
  execFileSync(join(ROOT, 'node_modules/.bin/vite'), ['build'], { cwd: ROOT, stdio: 'pipe' });
  return true;
}

/** Server + browser for one test file. */
export async function setup() {
  buildPageIfStale();
  const { server, url } = await startServer({ port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    server, url, browser,
    async close() {
      await browser.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A new context + page that records problems: {pageErrors, consoleErrors, csp,
 * foreign (requests not to the server, blob: or data:), dialogs}.
 */
export async function watchedPage(env, { viewport = { width: 1400, height: 900 }, colorScheme = 'light', allowHosts = [] } = {}) {
  const context = await env.browser.newContext({ viewport, colorScheme, acceptDownloads: true });
  const page = await context.newPage();
  const issues = { pageErrors: [], consoleErrors: [], csp: [], foreign: [], dialogs: [] };
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.on('pageerror', (e) => issues.pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') issues.consoleErrors.push(m.text());
    if (/Content Security Policy|Refused to/.test(m.text())) issues.csp.push(m.text());
  });
  page.on('dialog', (d) => { issues.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  const origin = new URL(env.url).origin;
  page.on('request', (r) => {
    const u = r.url();
    if (u.startsWith('blob:') || u.startsWith('data:')) return;
    const o = new URL(u).origin;
    if (o !== origin && !allowHosts.includes(new URL(u).host)) issues.foreign.push(u);
  });
  return {
    context, page, issues,
    async cspViolations() {
      const inPage = await page.evaluate(() => window.__csp || []).catch(() => []);
      return [...issues.csp, ...inPage];
    },
  };
}

/** Wait until the page has drawn at least `n` results and is idle. */
export async function waitDrawn(page, n = 1, timeout = 60_000) {
  // and the heads and evidence panels built (the page builds them once idle after its first drawing,
  // lazy-panels.js): a test may go on to their cards at once
  await page.waitForFunction((k) => Number(document.body.dataset.renders || 0) >= k && document.body.dataset.state === 'ready' &&
    (!document.getElementById('heads') || document.getElementById('figures').dataset.panels === 'built'), n, { timeout });
}

/** The number of results drawn so far. */
export function renders(page) {
  return page.evaluate(() => Number(document.body.dataset.renders || 0));
}

/** Do `action`, then wait for a new drawn result that satisfies the optional predicate. */
export async function afterRender(page, action, timeout = 60_000) {
  const before = await renders(page);
  await action();
  await waitDrawn(page, before + 1, timeout);
}

/**
 * The page's default do cell for text, computed here with the API (the rule of
 * web/src/page/runner.js, re-implemented): the last row, and among the candidate
 * columns the hard do at the last layer (all heads) with the largest KL.
 */
export async function expectedDefaultCell(model, text) {
  const { defaultCandidates } = await import('../../web/src/page/runner.js');
  const { klDivergence } = await import('../../web/src/page/compare.js');
  const L = model.config.nLayer;
  const base = model.run(text, { topK: 10 });
  const T = base.T, row = T - 1;
  const A = base.attention(L - 1, 'avg');
  let best = null;
  const tried = [];
  for (const col of defaultCandidates(base.tokens, A.subarray(row * T, row * T + T))) {
    const after = model.run(text, { interventions: [{ kind: 'hard', layer: L - 1, head: 'all', row, col }], topK: 10 });
    const kl = klDivergence(base.logits, after.logits);
    tried.push({ col, kl });
    if (!best || kl > best.kl) best = { row, col, kl };
  }
  return { ...best, tried };
}

/** The cells [i, j, value] a page figure draws in its heatmap group `role` (vector cells only). */
export function figCells(page, fig, role) {
  return page.evaluate(([f, r]) => [...document.querySelectorAll(`#${f} .fig-svg g[data-role="${r}"] rect[data-i]`)]
    .map((x) => [Number(x.dataset.i), Number(x.dataset.j), Number(x.dataset.v)]), [fig, role]);
}

/** Hold the built-in model's weights (every request for them) until release() is called; returns release. */
export async function holdWeights(context) {
  let release;
  const gate = new Promise((r) => { release = r; });
  await context.route('**/models/brown-gpt2/model.safetensors', async (route) => { await gate; await route.continue(); });
  return release;
}
