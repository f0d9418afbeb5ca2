// helpers.js — the Firefox smoke suite (tests/firefox/*.test.js): Debian's
// Firefox ESR, headless, driven over WebDriver BiDi by puppeteer-core, on the
// page served by scripts/serve.mjs (COOP/COEP, the page's CSP).
//
// Firefox gets a fresh profile and HOME in a temp dir (removed on close), its
// background services are switched off by prefs, and every proxied connection
// it still makes goes to a sink on 127.0.0.1 that records the host and refuses
// it: nothing leaves the machine. Pages are watched for page errors, console
// errors, CSP violations, dialogs and requests to another origin.

import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { startServer } from '../../scripts/serve.mjs';
import { BUILDS as BACKEND_BUILDS, RELAXED_PROBE } from '../../web/src/core/backend.js';
import { buildPageIfStale } from '../e2e/helpers.js';

export { ROOT, CHAPTER, BUILTIN_WEIGHTS } from '../e2e/helpers.js';
export const FIREFOX = process.env.ATTNLAB_FIREFOX || '/usr/bin/firefox-esr';

// The four builds the loader can pick, by backend and threads, and its feature test's module (f32x4.relaxed_madd)
export const BUILDS = Object.values(BACKEND_BUILDS).flat();
export const buildOf = (backend, threads) => BACKEND_BUILDS[backend][threads > 1 ? 1 : 0];
export { RELAXED_PROBE };

/** Prefs that stop Firefox's own network traffic (updates, telemetry, safe browsing, portals, experiments). */
function quietPrefs(sinkPort) {
  return {
    // every non-local connection goes to the sink (127.0.0.1 and localhost are never proxied)
    'network.proxy.type': 1,
    'network.proxy.http': '127.0.0.1',
    'network.proxy.http_port': sinkPort,
    'network.proxy.ssl': '127.0.0.1',
    'network.proxy.ssl_port': sinkPort,
    'network.proxy.share_proxy_settings': true,
    'network.proxy.allow_hijacking_localhost': false,
    'network.proxy.socks_remote_dns': true,
    'network.dns.disablePrefetch': true,
    'network.prefetch-next': false,
    'network.predictor.enabled': false,
    'network.http.speculative-parallel-limit': 0,
    'network.trr.mode': 5,
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    'app.update.enabled': false,
    'app.update.auto': false,
    'app.update.checkInstallTime': false,
    'app.normandy.enabled': false,
    'app.normandy.api_url': '',
    'app.shield.optoutstudies.enabled': false,
    'messaging-system.rsexperimentloader.enabled': false,
    'browser.safebrowsing.malware.enabled': false,
    'browser.safebrowsing.phishing.enabled': false,
    'browser.safebrowsing.blockedURIs.enabled': false,
    'browser.safebrowsing.downloads.enabled': false,
    'browser.safebrowsing.downloads.remote.enabled': false,
    'browser.safebrowsing.update.enabled': false,
    'browser.safebrowsing.provider.google4.updateURL': '',
    'browser.safebrowsing.provider.google.updateURL': '',
    'browser.safebrowsing.provider.mozilla.updateURL': '',
    'datareporting.policy.dataSubmissionEnabled': false,
    'datareporting.healthreport.uploadEnabled': false,
    'datareporting.usage.uploadEnabled': false,
    'toolkit.telemetry.enabled': false,
    'toolkit.telemetry.unified': false,
    'toolkit.telemetry.archive.enabled': false,
    'toolkit.telemetry.server': '',
    'toolkit.telemetry.reportingpolicy.firstRun': false,
    'browser.ping-centre.telemetry': false,
    'browser.newtabpage.activity-stream.feeds.telemetry': false,
    'browser.newtabpage.activity-stream.telemetry': false,
    'browser.region.update.enabled': false,
    'browser.region.network.url': '',
    'browser.search.geoip.url': '',
    'browser.topsites.contile.enabled': false,
    'extensions.blocklist.enabled': false,
    'extensions.systemAddon.update.enabled': false,
    'extensions.getAddons.cache.enabled': false,
    'media.gmp-manager.updateEnabled': false,
    'media.gmp-manager.url': '',
    'geo.provider.network.url': '',
    'security.OCSP.enabled': 0,
    'security.remote_settings.crlite_filters.enabled': false,
    'security.remote_settings.intermediates.enabled': false,
    'identity.fxaccounts.enabled': false,
  };
}

/**
 * A sink for proxied connections: records the host each asks for (CONNECT host:port, or an absolute
 * http:// URL) and refuses it. Release builds of Firefox still sync Remote Settings at start
 * (services.settings.server is honoured only with MOZ_REMOTE_SETTINGS_DEVTOOLS): that ends here.
 */
function startSink() {
  const seen = [];
  const server = createServer((sock) => {
    sock.once('data', (buf) => {
      const target = buf.toString('latin1').split('\r\n')[0].split(' ')[1] || '?';
      seen.push(/^[a-z]+:\/\//.test(target) ? new URL(target).host : target);
      sock.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    sock.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, seen, port: server.address().port })));
}

/** Launch Firefox ESR headless over WebDriver BiDi; close() also removes its profile and HOME. */
export async function launchFirefox() {
  const sink = await startSink();
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-firefox-'));
  const home = join(dir, 'home'), profile = join(dir, 'profile');
  mkdirSync(home);
  mkdirSync(profile);
  const t0 = performance.now();
  let browser;
  try {
    browser = await puppeteer.launch({
      browser: 'firefox', protocol: 'webDriverBiDi', executablePath: FIREFOX, headless: true,
      userDataDir: profile, extraPrefsFirefox: quietPrefs(sink.port), protocolTimeout: 240_000,
      env: { ...process.env, HOME: home, MOZ_HEADLESS: '1', XDG_CACHE_HOME: join(home, '.cache') },
    });
  } catch (e) {
    sink.server.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const launchMs = performance.now() - t0;
  return {
    browser, launchMs, version: await browser.version(), sink: sink.seen,
    async close() {
      await browser.close().catch(() => {});
      sink.server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Server + Firefox for one test file: {url (http://127.0.0.1:port/), server, ff, close()}.
 * Builds the page when stale (tests/e2e/helpers.js).
 */
export async function setup() {
  buildPageIfStale();
  const { server } = await startServer({ port: 0 });
  const url = `http://127.0.0.1:${server.address().port}/`;
  let ff;
  try {
    ff = await launchFirefox();
  } catch (e) {
    await new Promise((r) => server.close(r));
    throw e;
  }
  console.log(`[firefox] ${ff.version} (${FIREFOX}) launched in ${(ff.launchMs / 1000).toFixed(1)} s`);
  return {
    url, server, ff, browser: ff.browser,
    async close() {
      if (ff.sink.length) console.log(`[firefox] connections sent to the sink (refused, not on the network): ${[...new Set(ff.sink)].join(', ')}`);
      await ff.close();
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A new browser context + page that records what must not happen:
 * {pageErrors, consoleErrors, csp, foreign, dialogs}; requests lists every URL asked for.
 */
export async function watchedPage(env, { width = 1400, height = 900 } = {}) {
  const context = await env.browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width, height });
  const issues = { pageErrors: [], consoleErrors: [], csp: [], foreign: [], dialogs: [] };
  const requests = [];
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on('pageerror', (e) => issues.pageErrors.push(String(e && e.message || e)));
  page.on('console', (m) => {
    if (m.type() === 'error') issues.consoleErrors.push(m.text());
    if (/Content-Security-Policy|Content Security Policy/.test(m.text())) issues.csp.push(m.text());
  });
  page.on('dialog', (d) => { issues.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  const origin = new URL(env.url).origin;
  page.on('request', (r) => {
    const u = r.url();
    requests.push(u);
    if (u.startsWith('blob:') || u.startsWith('data:') || u === 'about:blank') return;
    if (new URL(u).origin !== origin) issues.foreign.push(u);
  });
  return {
    context, page, issues, requests,
    /** Everything recorded so far, the page's own CSP reports included. */
    async problems() {
      const inPage = await page.evaluate(() => window.__csp || []).catch(() => []);
      return { ...issues, csp: [...issues.csp, ...inPage] };
    },
  };
}

/** The same shape, all empty: what problems() must equal. */
export const NO_PROBLEMS = { pageErrors: [], consoleErrors: [], csp: [], foreign: [], dialogs: [] };

/** Wait until the page has drawn at least n results, is idle and has built its panels (tests/e2e/helpers.js waitDrawn). */
export async function waitDrawn(page, n = 1, timeout = 120_000) {
  await page.waitForFunction((k) => Number(document.body.dataset.renders || 0) >= k && document.body.dataset.state === 'ready' &&
    (!document.getElementById('heads') || document.getElementById('figures').dataset.panels === 'built'), { timeout, polling: 100 }, n);
}

export function renders(page) {
  return page.evaluate(() => Number(document.body.dataset.renders || 0));
}

/** Do action, then wait for one more drawn result; returns the time it took in ms. */
export async function afterRender(page, action, timeout = 120_000) {
  const before = await renders(page);
  const t0 = performance.now();
  await action();
  await waitDrawn(page, before + 1, timeout);
  return performance.now() - t0;
}

/** data-v of the cells of heatmap group role in figure fig: [[i, j, v], ...]. */
export function figCells(page, fig, role) {
  return page.evaluate((f, r) => [...document.querySelectorAll(`#${f} .fig-svg g[data-role="${r}"] rect[data-i]`)]
    .map((x) => [Number(x.dataset.i), Number(x.dataset.j), Number(x.dataset.v)]), fig, role);
}

/** The largest |got − want| / (rel·|want| + abs) over cells [i, j, v] against a row-major T×T array. */
export function worstError(cells, want, T, { rel = 1e-5, abs = 1e-6 } = {}) {
  let worst = 0;
  for (const [i, j, v] of cells) {
    const w = want[i * T + j];
    const e = Math.abs(v - w) / (rel * Math.abs(w) + abs);
    worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
  }
  return worst;
}

export const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
