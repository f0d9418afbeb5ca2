// helpers.js — shared by the page's browser tests (tests/e2e/*.test.js) and
// bench/bench_page.mjs (and other bench/*.mjs): build the page when it is stale, start
// scripts/serve.mjs on a free port, launch Debian's Chromium through playwright-core, and watch a
// page for everything that must not happen (page errors, console errors, CSP
// violations, requests to any host but the test server). useBrowser() is a test file's
// beforeAll/afterAll around all that; the rest are the page's questions the tests share.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, afterAll } from 'vitest';
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
 * The browser of one test file: registers its beforeAll and afterAll, and returns `env`, which
 * beforeAll fills with what setup() gives (url, browser, server) and
 *   env.ref   what `ref()` resolves to (a model loaded in Node, the page's numbers' reference), disposed in afterAll;
 *   env.main  a watched page ({context, page, issues}) opened at env.url + `open` ('' for the page itself) and drawn,
 *             when `open` is given.
 * artifacts: make tests/e2e/artifacts first (for screenshots); when: false leaves it all out (a file whose
 * tests are skipped, e.g. without the built-in model's weights).
 *
 *   const env = useBrowser({ artifacts: true, ref: () => loadModel(join(ROOT, TINY)), open: `?model=${TINY}` });
 */
export function useBrowser({ artifacts = false, ref = null, open = null, when = true } = {}) {
  const env = {};
  beforeAll(async () => {
    if (!when) return;
    if (artifacts) mkdirSync(ARTIFACTS, { recursive: true });
    Object.assign(env, await setup());
    if (ref) env.ref = await ref();
    if (open !== null) {
      env.main = await watchedPage(env);
      await env.main.page.goto(`${env.url}${open}`);
      await waitDrawn(env.main.page);
    }
  });
  afterAll(async () => {
    if (env.ref) env.ref.dispose();
    if (env.close) await env.close();
  });
  return env;
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

/** A file of the tiny model (tests/fixtures/tiny), as bytes. */
export function tinyFile(name) {
  return readFileSync(join(ROOT, TINY, name));
}

/** Do `click` and take the download it starts: {name, bytes}. */
export async function downloadOf(page, click) {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
}

/** data-v of the cells of heatmap group `role` in page figure `fig`, as a T×T row-major array (NaN where none). */
export function figMatrix(page, fig, role) {
  return page.evaluate(([f, r]) => {
    const rects = [...document.querySelectorAll(`#${f} .fig-svg g[data-role="${r}"] rect[data-i]`)];
    const T = Math.round(Math.sqrt(rects.length));
    const out = new Array(T * T).fill(NaN);
    for (const x of rects) out[Number(x.dataset.i) * T + Number(x.dataset.j)] = Number(x.dataset.v);
    return out;
  }, [fig, role]);
}

/** The page in language `lang` (built-in model), once its model is in and it has drawn: the circuits and evidence panels' tests. */
export async function openPanels(env, lang = 'en', viewport) {
  const w = await watchedPage(env, viewport ? { viewport } : {});
  await w.page.goto(`${env.url}?lang=${lang}`);
  await w.page.waitForFunction(() => document.body.dataset.model, null, { timeout: 60000 });
  await waitDrawn(w.page, 1, 120000);
  return w;
}

/** Press the Compute button of panel card `id` (#id-go) and wait until the card is done or failed; its data-state. */
export async function computeCard(page, id) {
  await page.click(`#${id}-go`);
  await page.waitForFunction((i) => ['done', 'error'].includes(document.getElementById(i).dataset.state), id, { timeout: 240000 });
  return page.$eval(`#${id}`, (n) => n.dataset.state);
}

/** A number as a panel card writes it into data-v: 6 significant digits. */
export const fmtValue = (v) => String(Number(v.toPrecision(6)));

/**
 * tests/e2e/pages/threads.html served at `url`, once it is ready: {page, context, errors} (page errors and console
 * errors). `init` runs in the page before its scripts.
 */
export async function threadsPage(browser, url, init) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  if (init) await page.addInitScript(init);
  await page.goto(new URL('tests/e2e/pages/threads.html', url).href);
  await page.waitForFunction(() => window.threadsReady === true);
  return { page, context, errors };
}

/** Run `spec` on threads.html (window.threadsTest). */
export const threadsCall = (page, spec) => page.evaluate((s) => window.threadsTest(s), spec);

/**
 * Safari's answer to the backend feature test (web/src/core/backend.js): a wasm module holding a relaxed-SIMD
 * instruction (prefix 0xfd, opcodes 0x100-0x113 as LEB128: fd 80..93 02) does not validate. Runs in the page.
 */
export function refuseRelaxed() {
  const validate = WebAssembly.validate;
  WebAssembly.validate = (bytes) => {
    const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes.buffer || bytes);
    for (let i = 0; i + 2 < b.length; i++) if (b[i] === 0xfd && b[i + 1] >= 0x80 && b[i + 1] <= 0x93 && b[i + 2] === 0x02) return false;
    return validate(bytes);
  };
}

// the worker scripts that load a model: the page's and the lineage page's (Vite chunks), and the widget's
const WORKER_SCRIPT = /\/(assets\/worker-[\w-]+|widget\/attnlab-widget-worker)\.js(\?.*)?$/;

/**
 * Give a browser context Safari's answer everywhere the feature test may run: an init script on the main
 * thread, and each worker script served with refuseRelaxed as a prologue (init scripts do not reach workers).
 * Returns the record {workers: the patched scripts' URLs, wasm: the path of every .wasm fetched}.
 */
export async function asSafariAnswers(context) {
  const seen = { workers: [], wasm: [] };
  await context.addInitScript(refuseRelaxed);
  await context.route(WORKER_SCRIPT, async (route) => {
    const res = await route.fetch();
    seen.workers.push(route.request().url());
    await route.fulfill({ response: res, body: `(${refuseRelaxed})();\n${await res.text()}` });
  });
  context.on('request', (r) => { if (/\.wasm(\?.*)?$/.test(r.url())) seen.wasm.push(new URL(r.url()).pathname); });
  return seen;
}
