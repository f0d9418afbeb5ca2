// page-models.test.js — the page's model picker in headless Chromium:
//   - distilgpt2 / gpt2 "from Hugging Face": huggingface.co is not reachable from
//     the test machine, so Playwright answers the hub's URLs with the tiny model's
//     files; the page's real code path runs (fetch, the CSP's connect-src, progress,
//     the Cache API) and no request leaves the machine. Playwright does not route
//     the request that follows a redirect, so the hub's 302 to its CDN is not
//     replayed; instead the page fetches each CDN host the CSP lists (all allowed)
//     and one it does not (blocked);
//   - a redirect to a host the CSP does not list is blocked, a network failure
//     gives a readable message, and the page keeps its model;
//   - drag and drop of the four files;
//   - the built-in model (models/brown-gpt2), whenever its weights exist: the four
//     figures with the API's numbers, and screenshots.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-models

import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, displayDo } from '../../web/src/index.js';
import { klDivergence } from '../../web/src/page/compare.js';
import {
  ROOT, CHAPTER, TINY, ARTIFACTS, BUILTIN_WEIGHTS, watchedPage, waitDrawn, afterRender, expectedDefaultCell,
  figCells, useBrowser, tinyFile,
} from './helpers.js';

const DISTIL = 'https://huggingface.co/distilbert/distilgpt2/resolve/main/';
const GPT2 = 'https://huggingface.co/openai-community/gpt2/resolve/main/';
const CDN_HOSTS = ['cdn-lfs.huggingface.co', 'cdn-lfs-us-1.huggingface.co', 'cdn-lfs.hf.co', 'cdn-lfs-us-1.hf.co',
                   'cas-bridge.xethub.hf.co', 'us.aws.cdn.hf.co'];
const env = useBrowser({ artifacts: true });

const cells = figCells;

/** Route the hub's URLs (and its CDN) to the tiny model; returns the hit log. */
async function fakeHub(context, { redirectTo = null, hold = null } = {}) {
  const hits = [];
  const cors = { 'access-control-allow-origin': '*' };
  await context.route(`${DISTIL}**`, async (route) => {
    const url = route.request().url();
    hits.push(url);
    const file = url.slice(DISTIL.length);
    if (file === 'model.safetensors') {
      if (hold) await hold;
      if (redirectTo) return route.fulfill({ status: 302, headers: { ...cors, location: redirectTo }, body: '' });
    }
    const body = tinyFile(file);
    return route.fulfill({ status: 200, headers: { ...cors, 'content-type': 'application/octet-stream', 'content-length': String(body.length) }, body });
  });
  for (const host of CDN_HOSTS) {
    await context.route(`https://${host}/**`, (route) => {
      hits.push(route.request().url());
      return route.fulfill({ status: 200, headers: { ...cors, 'content-type': 'text/plain' }, body: `ok ${host}` });
    });
  }
  await context.route('https://evil.example.com/**', (route) => {
    hits.push(route.request().url());
    return route.fulfill({ status: 200, headers: cors, body: tinyFile('model.safetensors') });
  });
  await context.route(`${GPT2}**`, (route) => { hits.push(route.request().url()); return route.abort('internetdisconnected'); });
  return hits;
}

describe('the model picker', () => {
  it('loads distilgpt2 from the hub URLs with a progress bar, then from the Cache API', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      let release;
      const hold = new Promise((r) => { release = r; });
      const hits = await fakeHub(context, { hold });
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      // the weights are held back: the progress bar is up, the page is usable
      await page.waitForSelector('#model-progress:not([hidden])');
      expect(await page.textContent('#model-status')).toMatch(/merges\.txt|vocab\.json|config\.json|distilgpt2/);
      expect(await page.isDisabled('#model-load')).toBe(true);
      await afterRender(page, async () => { await page.fill('#text', 'The ship sank .'); await page.click('#run'); });
      release();
      await page.waitForFunction(() => document.body.dataset.model === 'distilgpt2' && document.body.dataset.state === 'ready');
      await waitDrawn(page, Number(await page.evaluate(() => document.body.dataset.renders)));
      expect(await page.textContent('#model-status')).toContain('distilgpt2: 3 layers × 4 heads');
      expect(await page.isHidden('#model-progress')).toBe(true);
      expect(hits.filter((u) => u.startsWith(DISTIL)).length).toBe(4);
      // the four files are in the Cache API under their hub URLs
      const cached = await page.evaluate(async () => (await (await caches.open('attnlab-models-v1')).keys()).map((r) => r.url).sort());
      expect(cached).toEqual(['config.json', 'merges.txt', 'model.safetensors', 'vocab.json'].map((f) => DISTIL + f));
      // the hub model draws the same numbers as the tiny model loaded in Node (same files)
      const local = await loadModel(join(ROOT, TINY));
      try {
        const r = local.run('The ship sank .');
        const A = r.attention(local.config.nLayer - 1, 'avg');
        for (const [i, j, v] of await cells(page, 'fig1', 'attention')) expect(Math.abs(v - A[i * r.T + j])).toBeLessThan(1e-5);
      } finally {
        local.dispose();
      }
      // a new visit loads from the cache: no request to the hub
      const before = hits.length;
      await page.reload();
      await waitDrawn(page);
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      await page.waitForFunction(() => /from the browser cache/.test(document.getElementById('model-status').textContent));
      expect(hits.length).toBe(before);
      expect(await P.cspViolations()).toEqual([]);
      expect(P.issues.pageErrors).toEqual([]);
      expect(P.issues.foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the CSP lets the page fetch from the hub\'s CDN hosts and from no other host', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co', ...CDN_HOSTS] });
    const { page, context } = P;
    try {
      const hits = await fakeHub(context);
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const got = await page.evaluate(async (hosts) => Promise.all(hosts.map((h) =>
        fetch(`https://${h}/repos/x/model.safetensors`).then((r) => r.text(), (e) => `refused ${e.name}`))), [...CDN_HOSTS, 'evil.example.com']);
      expect(got).toEqual([...CDN_HOSTS.map((h) => `ok ${h}`), 'refused TypeError']);
      expect(hits.some((u) => u.includes('evil.example.com'))).toBe(false);
      expect((await P.cspViolations()).join(' ')).toMatch(/connect-src.*evil\.example\.com/);
    } finally {
      await context.close();
    }
  });

  it('a network failure or a redirect to a host outside the CSP gives a readable error; the page keeps its model', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      const hits = await fakeHub(context, { redirectTo: 'https://evil.example.com/model.safetensors' });
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      // gpt2: the network is down
      await page.selectOption('#model-select', 'gpt2');
      await page.click('#model-load');
      await page.waitForSelector('#error:not([hidden])');
      expect(await page.textContent('#error-text')).toMatch(/^Network error: huggingface\.co could not be reached.*keeps using tiny\.$/);
      // distilgpt2: the CDN host is not in connect-src, so the browser refuses the redirect
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      await page.waitForFunction(() => document.getElementById('error-text').textContent.includes('Network error') && !document.getElementById('model-load').disabled);
      expect(hits.some((u) => u.startsWith('https://evil.example.com'))).toBe(false);
      expect((await P.cspViolations()).join(' ')).toMatch(/connect-src.*evil\.example\.com|evil\.example\.com/);
      // still usable
      await afterRender(page, async () => { await page.fill('#text', 'The storm .'); await page.click('#run'); });
      expect(await page.textContent('#model-status')).toContain('tiny: 3 layers');
      // the only other request was the refused one (blocked before it left the browser: the route never saw it)
      expect(P.issues.foreign).toEqual(['https://evil.example.com/model.safetensors']);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('loads the four files dropped onto the page', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const files = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'].map((n) => ({ n, b64: tinyFile(n).toString('base64') }));
      const dt = await page.evaluateHandle((fs) => {
        const d = new DataTransfer();
        for (const { n, b64 } of fs) d.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], n));
        return d;
      }, files);
      const n0 = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.dispatchEvent('body', 'dragenter', { dataTransfer: dt });
      expect(await page.isVisible('#drop')).toBe(true);
      await page.dispatchEvent('body', 'drop', { dataTransfer: dt });
      await waitDrawn(page, n0 + 1);
      expect(await page.isHidden('#drop')).toBe(true);
      // local files are named by their shape, not "local files" (issue 19)
      expect(await page.textContent('#model-status')).toContain('local GPT-2 3×4: 3 layers');
      expect(await page.textContent('#fig1 svg g[data-role="suptitle"]')).toContain('local GPT-2 3×4 Attention');
      expect(await page.inputValue('#model-select')).toBe('local');
      expect(P.issues.pageErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe.runIf(existsSync(BUILTIN_WEIGHTS))('the built-in model (models/brown-gpt2)', () => {
  it('draws the four figures for the chapter sentence with the API\'s numbers, without ?model=', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    const m = await loadModel();
    try {
      await page.goto(env.url);
      await waitDrawn(page);
      const L = m.config.nLayer;
      const r = m.run(CHAPTER, { captureQK: { layer: L - 1, head: 0 }, topK: 10 });
      expect(r.T).toBe(10);
      expect(await page.locator('#tokens li').count()).toBe(10);
      // the default cell: the last row, the cause column whose do moves the prediction most (runner.js)
      const cell = await expectedDefaultCell(m, CHAPTER);
      expect(await page.inputValue('#row')).toBe(String(cell.row));
      expect(await page.inputValue('#col')).toBe(String(cell.col));
      const A = r.attention(L - 1, 'avg');
      const fig1 = await cells(page, 'fig1', 'attention');
      expect(fig1.length).toBe(100);
      for (const [i, j, v] of fig1) expect(Math.abs(v - A[i * 10 + j])).toBeLessThanOrEqual(1e-5 * Math.abs(A[i * 10 + j]) + 1e-6);
      const soft = displayDo(A, { kind: 'soft', row: cell.row, col: cell.col, lambda: 3 });
      for (const [i, j, v] of await cells(page, 'fig4', 'soft-do')) expect(Math.abs(v - soft[i * 10 + j])).toBeLessThanOrEqual(1e-5 * soft[i * 10 + j] + 1e-6);
      expect(Number(await page.locator('#fig3 svg').getAttribute('data-dag'))).toBeCloseTo(r.dagScore, 5);
      expect(Number(await page.locator('#fig3 svg').getAttribute('data-null-dag'))).toBeCloseTo(0.7071, 4);
      expect(await page.locator('#fig3 svg').textContent()).toContain(`DAG score = ${r.dagScore.toFixed(3)}`);
      const after = m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: L - 1, head: 'all', row: cell.row, col: cell.col }], topK: 10 });
      const kl = Number(await page.locator('#kl').getAttribute('data-v'));
      expect(kl).toBeCloseTo(klDivergence(r.logits, after.logits), 6);
      expect(kl).toBeGreaterThan(0);   // the default do changes the prediction (issue 19)
      const ids = await page.$$eval('#top-before tbody tr', (rs) => rs.map((x) => Number(x.dataset.id)));
      expect(ids).toEqual(r.top.map((x) => x.id));
      expect(await page.textContent('#model-status')).toContain('brown-gpt2');
      // screenshots of the four figures and the page
      for (const f of ['fig1', 'fig2', 'fig3', 'fig4', 'inmodel']) {
        await page.locator(`#${f}`).screenshot({ path: join(ARTIFACTS, `builtin-${f}.png`) });
      }
      await page.evaluate(() => window.scrollTo(0, 0));   // the sticky controls follow the scroll position
      await page.screenshot({ path: join(ARTIFACTS, 'page-builtin-1400-light.png'), fullPage: true });
      expect(await P.cspViolations()).toEqual([]);
      expect(P.issues.pageErrors).toEqual([]);
      expect(P.issues.consoleErrors).toEqual([]);
      expect(P.issues.foreign).toEqual([]);
    } finally {
      m.dispose();
      await context.close();
    }
  });

  for (const [width, colorScheme] of [[1400, 'dark'], [360, 'light'], [360, 'dark']]) {
    it(`fits ${width} px (${colorScheme}) with the built-in model`, async () => {
      const P = await watchedPage(env, { viewport: { width, height: 900 }, colorScheme });
      try {
        await P.page.goto(env.url);
        await waitDrawn(P.page);
        expect(await P.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await P.page.screenshot({ path: join(ARTIFACTS, `page-builtin-${width}-${colorScheme}.png`), fullPage: true });
        expect(P.issues.pageErrors).toEqual([]);
      } finally {
        await P.context.close();
      }
    });
  }
});
