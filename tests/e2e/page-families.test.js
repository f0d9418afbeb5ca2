// page-families.test.js — the page on the other model families, in headless Chromium:
//   - the picker lists Pythia-70m, SmolLM2-135M, Qwen2.5-0.5B, Qwen3-0.6B and Llama-3.2-1B with their
//     Hugging Face URLs and sizes, and warns before a download above 1 GB;
//   - a hub model of another family (Llama-3.2-1B; huggingface.co is not reachable here, so Playwright
//     answers its URLs with the synthetic Llama 3 checkpoint of tests/fixtures/families/llama) loads
//     through tokenizer.json and tokenizer_config.json, with its BOS drawn as token 0;
//   - an optional file the hub does not have (404) is left out and remembered in the cache;
//   - a local SmolLM2-shaped folder (tests/fixtures/families/smollm2), chosen through the file input and
//     through the folder input, draws the four figures with the API's numbers.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-families

import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel, displayDo } from '../../web/src/index.js';
import { HUB_MODELS, LARGE_MODEL_BYTES } from '../../web/src/page/models.js';
import { ROOT, TINY, ARTIFACTS, watchedPage, waitDrawn, afterRender, figCells, useBrowser } from './helpers.js';

const FAM = join(ROOT, 'tests/fixtures/families');
const LLAMA_HUB = 'https://huggingface.co/unsloth/Llama-3.2-1B/resolve/main/';
const SMOL_HUB = 'https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/';
// The synthetic tokenizers have 20 merges, so the chapter's sentence is 41 tokens, past the size at which the
// heatmaps become bitmaps; a shorter sentence keeps their cells in the SVG, where their values can be read.
const TEXT = 'The ship sank 3 times .';

const env = useBrowser({ artifacts: true });

const cells = figCells;

/** Answer a hub base URL with the files of a fixture folder (404 for the names in `absent`); returns the hit log. */
async function fakeHub(context, base, dir, { absent = [] } = {}) {
  const hits = [];
  const cors = { 'access-control-allow-origin': '*' };
  await context.route(`${base}**`, (route) => {
    const file = route.request().url().slice(base.length);
    hits.push(file);
    if (absent.includes(file)) return route.fulfill({ status: 404, headers: cors, body: 'Entry not found' });
    const body = readFileSync(join(dir, file));
    return route.fulfill({ status: 200, headers: { ...cors, 'content-type': 'application/octet-stream', 'content-length': String(body.length) }, body });
  });
  return hits;
}

/** The page's four figures against the API on the same folder: Fig. 1's cells, Fig. 4's soft do, Fig. 3's DAG score. */
async function expectFiguresMatch(page, dir) {
  await afterRender(page, async () => { await page.fill('#text', TEXT); await page.click('#run'); });
  const m = await loadModel(dir);
  try {
    const L = m.config.nLayer;
    const r = m.run(TEXT);
    const T = r.T;
    expect(await page.locator('#tokens li').count()).toBe(T);
    const A = r.attention(L - 1, 'avg');
    const fig1 = await cells(page, 'fig1', 'attention');
    expect(fig1.length).toBe(T * T);
    for (const [i, j, v] of fig1) expect(Math.abs(v - A[i * T + j])).toBeLessThanOrEqual(1e-5 * Math.abs(A[i * T + j]) + 1e-6);
    const row = Number(await page.inputValue('#row')), col = Number(await page.inputValue('#col'));
    const soft = displayDo(A, { kind: 'soft', row, col, lambda: 3 });
    for (const [i, j, v] of await cells(page, 'fig4', 'soft-do')) expect(Math.abs(v - soft[i * T + j])).toBeLessThanOrEqual(1e-5 * soft[i * T + j] + 1e-6);
    expect(Number(await page.locator('#fig3 svg').getAttribute('data-dag'))).toBeCloseTo(r.dagScore, 5);
    expect(await page.locator('#fig2 .fig-svg').count()).toBe(1);
    return { r, config: m.config };
  } finally {
    m.dispose();
  }
}

describe('the model picker lists the families', () => {
  it('names each hub model with its size, and warns before a download above 1 GB', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const options = await page.$$eval('#model-select option', (os) => os.map((o) => [o.value, o.textContent]));
      const values = options.map((o) => o[0]);
      for (const v of ['distilgpt2', 'gpt2', 'pythia-70m', 'smollm2-135m', 'qwen2.5-0.5b', 'qwen3-0.6b', 'llama-3.2-1b'])
        expect(values).toContain(v);
      const label = Object.fromEntries(options);
      expect(label['pythia-70m']).toBe('Pythia-70m (Hugging Face, 141 MB)');
      expect(label['smollm2-135m']).toBe('SmolLM2-135M (Hugging Face, 269 MB)');
      expect(label['qwen2.5-0.5b']).toBe('Qwen2.5-0.5B (Hugging Face, 988 MB)');
      expect(label['qwen3-0.6b']).toBe('Qwen3-0.6B (Hugging Face, 1.2 GB, large)');
      expect(label['llama-3.2-1b']).toBe('Llama-3.2-1B (Hugging Face, 2.5 GB, large)');
      // the warning follows the choice, in both languages
      await page.selectOption('#model-select', 'llama-3.2-1b');
      expect(await page.isVisible('#model-large')).toBe(true);
      expect(await page.textContent('#model-large')).toMatch(/^Llama-3\.2-1B is about 2\.5 GB of weights/);
      await page.click('#lang');
      expect(await page.textContent('#model-large')).toMatch(/^Llama-3\.2-1B 的权重约 2\.5 GB/);
      await page.click('#lang');
      await page.selectOption('#model-select', 'smollm2-135m');
      expect(await page.isHidden('#model-large')).toBe(true);
      for (const [v, m] of Object.entries(HUB_MODELS)) {
        expect(m.base).toMatch(/^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+\/resolve\/main\/$/);
        await page.selectOption('#model-select', v);
        expect(await page.isVisible('#model-large'), v).toBe(m.bytes > LARGE_MODEL_BYTES);
      }
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('another family from the hub', () => {
  it('loads Llama-3.2-1B through tokenizer.json with its BOS, and the figures hold the API\'s numbers', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      const hits = await fakeHub(context, LLAMA_HUB, join(FAM, 'llama'));
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const n0 = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.selectOption('#model-select', 'llama-3.2-1b');
      await page.click('#model-load');
      await page.waitForFunction(() => document.body.dataset.model === 'Llama-3.2-1B');
      await waitDrawn(page, n0 + 1);
      expect(hits.sort()).toEqual(['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
      expect(await page.textContent('#model-status')).toContain('Llama-3.2-1B: 2 layers × 4 heads (2 key-value), d = 32');
      const { r } = await expectFiguresMatch(page, join(FAM, 'llama'));
      // Llama 3 puts <|begin_of_text|> first; the page draws it as token 0
      expect(r.tokens[0]).toBe('<|begin_of_text|>');
      expect((await page.locator('#tokens li').first().textContent()).trim()).toContain('<|begin_of_text|>');
      const cached = await page.evaluate(async () => (await (await caches.open('attnlab-models-v1')).keys()).map((q) => q.url).sort());
      expect(cached).toEqual(['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map((f) => LLAMA_HUB + f));
      await page.locator('#fig1').screenshot({ path: join(ARTIFACTS, 'family-llama-fig1.png') });
      expect(P.issues.pageErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('leaves out an optional file the hub does not have, and remembers that for a visit from the cache', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    try {
      const hits = await fakeHub(context, SMOL_HUB, join(FAM, 'smollm2'), { absent: ['tokenizer_config.json'] });
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      await page.selectOption('#model-select', 'smollm2-135m');
      await page.click('#model-load');
      await page.waitForFunction(() => document.body.dataset.model === 'SmolLM2-135M' && document.body.dataset.state === 'ready');
      expect(hits.length).toBe(4);
      const before = hits.length;
      await page.reload();
      await waitDrawn(page);
      await page.selectOption('#model-select', 'smollm2-135m');
      await page.click('#model-load');
      await page.waitForFunction(() => /from the browser cache/.test(document.getElementById('model-status').textContent));
      expect(hits.length).toBe(before);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

// Gemma 3 (gemma3_text): its sliding-window layers are the model's own mask. The status line says how many
// layers slide, and Fig. 1 on a sliding layer says "window" where a full layer says "causal". The generated
// checkpoint (tests/fixtures/families/gemma3: layer 0 slides with W = 4, layer 1 is full) is served as the hub
// model, with its GPT-2 vocabulary as a tokenizer.json.
describe('a sliding-window family from the hub', () => {
  it('Gemma-3-270M: the status names the sliding layers and Fig. 1 shows the window on them', async () => {
    const P = await watchedPage(env, { allowHosts: ['huggingface.co'] });
    const { page, context } = P;
    const GEMMA_HUB = HUB_MODELS['gemma-3-270m'].base;
    const dir = join(FAM, 'gemma3');
    const vocab = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8'));
    const merges = readFileSync(join(dir, 'merges.txt'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#version'));
    const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
    const tokenizer = JSON.stringify({ version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
      pre_tokenizer: byteLevel, post_processor: null, decoder: byteLevel,
      model: { type: 'BPE', dropout: null, unk_token: null, fuse_unk: false, byte_fallback: false, vocab, merges } });
    try {
      const hits = [];
      await context.route(`${GEMMA_HUB}**`, (route) => {
        const file = route.request().url().slice(GEMMA_HUB.length);
        hits.push(file);
        const cors = { 'access-control-allow-origin': '*' };
        if (file === 'tokenizer_config.json') return route.fulfill({ status: 404, headers: cors, body: 'Entry not found' });
        const body = file === 'tokenizer.json' ? Buffer.from(tokenizer) : readFileSync(join(dir, file));
        return route.fulfill({ status: 200, headers: { ...cors, 'content-length': String(body.length) }, body });
      });
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      const n0 = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.selectOption('#model-select', 'gemma-3-270m');
      await page.click('#model-load');
      await page.waitForFunction(() => document.body.dataset.model === 'Gemma-3-270M');
      await waitDrawn(page, n0 + 1);
      expect(await page.textContent('#model-status')).toContain('1 of 2 layers see only the last 4 tokens (sliding window)');
      const sub = () => page.textContent('#fig1 svg');
      expect(await sub()).toContain('causal mask: red below = the mask'); // layer 1, full attention
      const n1 = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.selectOption('#layer', '0');
      await waitDrawn(page, n1 + 1);
      expect(await sub()).toContain('window mask: red below = the mask');
      await page.click('#lang');
      expect(await page.textContent('#model-status')).toContain('2 层中有 1 层只看最近 4 个词元（滑动窗口）');
      await page.locator('#fig1').screenshot({ path: join(ARTIFACTS, 'family-gemma3-fig1-window.png') });
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('a local folder of another family', () => {
  const dir = join(FAM, 'smollm2');
  const files = readdirSync(dir).map((n) => join(dir, n));

  it('draws the four figures on a SmolLM2-shaped folder chosen through the file input', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      await page.selectOption('#model-select', 'local');
      expect(await page.isVisible('#model-files')).toBe(true);
      const n0 = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.setInputFiles('#model-files', files);
      await waitDrawn(page, n0 + 1);
      expect(await page.textContent('#model-status')).toContain('local Llama 2×6: 2 layers × 6 heads (2 key-value), d = 48');
      expect(await page.textContent('#fig1 svg g[data-role="suptitle"]')).toContain('local Llama 2×6');
      const { r } = await expectFiguresMatch(page, dir);
      expect(r.tokens[0]).not.toBe('<|endoftext|>');   // SmolLM2 adds no BOS
      for (const f of ['fig1', 'fig2', 'fig3', 'fig4']) await page.locator(`#${f}`).screenshot({ path: join(ARTIFACTS, `family-smollm2-${f}.png`) });
      // an incomplete folder: what is missing is named, and the model stays
      await page.setInputFiles('#model-files', [join(dir, 'config.json'), join(dir, 'tokenizer.json')]);
      await page.waitForFunction(() => /missing/.test(document.getElementById('error-text').textContent));
      expect(await page.textContent('#error-text')).toContain('model.safetensors');
      expect(await page.textContent('#error-text')).toContain('local Llama 2×6');
      expect(P.issues.pageErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('takes the same folder through the folder input, named after the folder', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}`);
      await waitDrawn(page);
      await page.selectOption('#model-select', 'local');
      const n0 = Number(await page.evaluate(() => document.body.dataset.renders));
      await page.setInputFiles('#model-dir', dir);
      await waitDrawn(page, n0 + 1);
      expect(await page.textContent('#model-status')).toContain('smollm2: 2 layers × 6 heads (2 key-value)');
      await expectFiguresMatch(page, dir);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
