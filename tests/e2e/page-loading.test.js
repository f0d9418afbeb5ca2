// page-loading.test.js — issue 38 item 1, loading a model as a reader meets it, in headless Chromium: a Cancel
// button stops a hub download at once and the page keeps its model; choosing another model in the picker stops the
// one loading; the progress is one figure in bytes over all the files, naming the current one; the status line
// says what happens (downloading, not "starting the worker"); each figure's buttons are disabled until it holds a
// live figure. The hub is answered by Playwright with the tiny model's files (huggingface.co is not reachable).
//
//   npx vitest run --config tests/e2e/vitest.config.js page-loading

import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TINY, ARTIFACTS, watchedPage, waitDrawn, useBrowser, tinyFile } from './helpers.js';

const DISTIL = 'https://huggingface.co/distilbert/distilgpt2/resolve/main/';

const env = useBrowser();

/** The hub answered with the tiny model, the weights held until release(); aborted requests are counted. */
async function heldHub(page, context) {
  let release, hold;
  const rearm = () => { hold = new Promise((r) => { release = r; }); };
  rearm();
  const log = { hits: [], failed: [] };
  page.on('requestfailed', (r) => { if (r.url().startsWith(DISTIL)) log.failed.push(r.url().slice(DISTIL.length)); });
  await context.route(`${DISTIL}**`, async (route) => {
    const file = route.request().url().slice(DISTIL.length);
    log.hits.push(file);
    if (file === 'model.safetensors') await hold;
    const body = tinyFile(file);
    const cors = { 'access-control-allow-origin': '*' };
    await route.fulfill({ status: 200, headers: { ...cors, 'content-length': String(body.length) }, body }).catch(() => {});
  });
  return { log, release: () => release(), rearm };
}

describe('loading a hub model', () => {
  it('Cancel stops the download at once, the page keeps its model, and a late answer changes nothing', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      const hub = await heldHub(page, context);
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const before = await page.evaluate(() => document.body.dataset.model);
      expect(await page.isHidden('#model-cancel')).toBe(true);
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      await page.waitForSelector('#model-cancel:not([hidden])');
      await page.screenshot({ path: join(ARTIFACTS, 'loading-cancel.png'), clip: { x: 0, y: 0, width: 1400, height: 700 } });
      // one progress figure over all the files, in bytes, with the weights' published size until their own arrives
      await page.waitForFunction(() => /Downloading distilgpt2: .* of about 353 MB \(0 %\), now /.test(document.getElementById('model-status').textContent));
      const max = Number(await page.getAttribute('#model-progress', 'max'));
      expect(max).toBeGreaterThan(300e6);
      await expect.poll(() => hub.log.hits).toContain('model.safetensors'); // the weights' request is out
      await page.click('#model-cancel');
      expect(await page.textContent('#model-status')).toBe(`Stopped loading distilgpt2; the page keeps ${before}.`);
      expect(await page.isHidden('#model-cancel')).toBe(true);
      expect(await page.isHidden('#model-progress')).toBe(true);
      expect(await page.isEnabled('#model-load')).toBe(true);
      expect(await page.inputValue('#model-select')).toBe('distilgpt2'); // the picker keeps the reader's choice
      // the weights' request was aborted, not left to finish
      await expect.poll(() => hub.log.failed).toContain('model.safetensors');
      hub.release();
      await page.waitForTimeout(300);
      expect(await page.evaluate(() => document.body.dataset.model)).toBe(before);
      expect(await page.evaluate(() => document.body.dataset.state)).toBe('ready');
      // the figures still answer
      const n = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.fill('#text', 'The ship sank .');
      await page.click('#run');
      await waitDrawn(page, n + 1);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('choosing another model while one loads stops that load', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      const hub = await heldHub(page, context);
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const before = await page.evaluate(() => document.body.dataset.model);
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      await page.waitForSelector('#model-cancel:not([hidden])');
      await expect.poll(() => hub.log.hits).toContain('model.safetensors');
      await page.selectOption('#model-select', 'builtin');
      expect(await page.textContent('#model-status')).toContain('Stopped loading distilgpt2');
      await expect.poll(() => hub.log.failed).toContain('model.safetensors');
      hub.release();
      await page.waitForTimeout(300);
      expect(await page.evaluate(() => document.body.dataset.model)).toBe(before);
      // 中文 (the weights held again)
      hub.rearm();
      await page.click('#lang');
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      await page.waitForSelector('#model-cancel:not([hidden])');
      expect(await page.textContent('#model-cancel')).toBe('取消');
      await page.click('#model-cancel');
      expect(await page.textContent('#model-status')).toBe(`已停止加载 distilgpt2；页面继续使用 ${before}。`);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('before the live figures', () => {
  it("each figure's export and compare buttons are disabled until it holds a live figure", async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}`, { waitUntil: 'domcontentloaded' });
      await page.waitForSelector('.fig-actions[data-fig="fig1"] button');
      const early = await page.$$eval('.fig-actions[data-fig] button', (bs) => bs.map((b) => [b.textContent, b.disabled]));
      const liveEarly = await page.evaluate(() => Number(document.body.dataset.renders || 0));
      if (liveEarly === 0) expect(early.every(([, d]) => d)).toBe(true);
      await waitDrawn(page);
      const after = await page.$$eval('.fig-actions[data-fig] button', (bs) => bs.map((b) => [b.closest('.fig-actions').dataset.fig, b.textContent, b.disabled]));
      expect(after.length).toBeGreaterThanOrEqual(9);
      expect(after.filter(([, , d]) => d)).toEqual([]);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('a permalink names its model', () => {
  it('a hub model goes into the link; opening it asks before loading, then shows the same view', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      const hub = await heldHub(page, context);
      hub.release();
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      await page.selectOption('#model-select', 'distilgpt2');
      await page.click('#model-load');
      await page.waitForFunction(() => document.body.dataset.model === 'distilgpt2' && document.body.dataset.state === 'ready');
      let n = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.selectOption('#layer', '1');
      await waitDrawn(page, n + 1);
      await page.waitForFunction(() => /[?&]hub=distilgpt2(&|$)/.test(location.search) && /layer=1/.test(location.search));
      const link = await page.evaluate(() => location.href);
      // a new visit of the link: the note asks, nothing is downloaded before the reader says so
      const before = hub.log.hits.length;
      const fresh = await context.newPage();
      await fresh.goto(link);
      await waitDrawn(fresh);
      expect(await fresh.isVisible('#model-link')).toBe(true);
      expect(await fresh.textContent('#model-link-text')).toMatch(/^This link was made with distilgpt2 \(353 MB from Hugging Face\)/);
      expect(await fresh.evaluate(() => document.body.dataset.model)).not.toBe('distilgpt2');
      expect(hub.log.hits.length).toBe(before);
      await fresh.screenshot({ path: join(ARTIFACTS, 'link-hub-note.png'), clip: { x: 0, y: 0, width: 1400, height: 700 } });
      n = Number(await fresh.evaluate(() => document.body.dataset.renders));
      await fresh.click('#model-link-load');
      await fresh.waitForFunction(() => document.body.dataset.model === 'distilgpt2' && document.body.dataset.state === 'ready');
      await waitDrawn(fresh, n + 1);
      expect(await fresh.inputValue('#layer')).toBe('1');   // the link's view, on the model it was made with
      expect(await fresh.isHidden('#model-link')).toBe(true);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a local folder is marked in the link, and the note says to choose it again; an unknown hub key is refused', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}&local=1&layer=0`);
      await waitDrawn(page);
      expect(await page.textContent('#model-link-text')).toMatch(/choose that folder again with "Local files…"/);
      expect(await page.isHidden('#model-link-load')).toBe(true);
      await page.click('#lang');
      expect(await page.textContent('#model-link-text')).toMatch(/本地文件…/);
      await page.goto(`${env.url}?model=${TINY}&hub=nope`);
      await waitDrawn(page);
      expect(await page.isHidden('#model-link')).toBe(true);
      expect(await page.textContent('body')).toMatch(/hub=nope/);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('errors name the family chosen and the files it needs', () => {
  it('a Llama folder: a missing tokenizer and a corrupt weights file are told in Llama\'s terms (en, zh)', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    const dir = join(ROOT, 'tests/fixtures/families/smollm2');
    const file = (name, buffer) => ({ name, mimeType: 'application/octet-stream', buffer });
    try {
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      await page.selectOption('#model-select', 'local');
      await page.setInputFiles('#model-files', [file('config.json', readFileSync(join(dir, 'config.json'))),
        file('model.safetensors', readFileSync(join(dir, 'model.safetensors')))]);
      await page.waitForSelector('#error:not([hidden])');
      let msg = await page.textContent('#error-text');
      expect(msg).toMatch(/These files are missing: .*tokenizer\.json/);
      expect(msg).toMatch(/A Llama model needs config\.json, model\.safetensors \(or its index and shards\) and tokenizer\.json/);
      expect(msg).not.toMatch(/GPT-2/);
      await page.setInputFiles('#model-files', [file('config.json', readFileSync(join(dir, 'config.json'))),
        file('tokenizer.json', readFileSync(join(dir, 'tokenizer.json'))), file('model.safetensors', Buffer.alloc(4096, 0x5a))]);
      await page.waitForFunction(() => /EFORMAT/.test(document.getElementById('error-text').textContent));
      msg = await page.textContent('#error-text');
      expect(msg).toMatch(/not the files of a Llama model \(EFORMAT\)/);
      await page.click('#lang');
      await page.setInputFiles('#model-files', [file('config.json', readFileSync(join(dir, 'config.json'))),
        file('model.safetensors', readFileSync(join(dir, 'model.safetensors')))]);
      await page.waitForFunction(() => /缺少这些文件/.test(document.getElementById('error-text').textContent));
      expect(await page.textContent('#error-text')).toMatch(/Llama 模型需要 config\.json/);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
