// widget-evidence.test.js — the evidence figures of 'attnlab/widget'
// (<attnlab-figure figure="edge|tokens">, docs/evidence.md) on the no-build
// example page, in headless Chromium: each draws the API's numbers (the scatter
// has one point per causal pair, the summary the API's ρ), in English and 中文.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { loadModel } from '../../web/src/index.js';
import { BUILTIN_WEIGHTS, CHAPTER } from './helpers.js';
import { buildWidgetIfStale, serveRepo, launch, waitWidgets } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
let srv, browser, ref;

beforeAll(async () => {
  if (!HAVE_MODEL) return;
  buildWidgetIfStale();
  srv = await serveRepo();
  browser = await launch();
  ref = await loadModel();
}, 240_000);
afterAll(async () => {
  if (ref) ref.dispose();
  if (browser) await browser.close();
  if (srv) await srv.close();
});

describe.skipIf(!HAVE_MODEL)('evidence figures in the widget', () => {
  it('figure="edge" and figure="tokens" draw the API\'s numbers, in en and zh', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(srv.url + 'examples/plain-html/');
    await page.evaluate(() => {
      for (const [figure, lang] of [['edge', 'en'], ['tokens', 'zh']]) {
        const e = document.createElement('attnlab-figure');
        e.setAttribute('figure', figure);
        e.setAttribute('lang', lang);
        e.setAttribute('layer', '5');
        e.id = `ev-${figure}`;
        document.body.prepend(e);
      }
    });
    await waitWidgets(page, '#ev-edge, #ev-tokens', 180_000);
    const info = await page.$$eval('#ev-edge, #ev-tokens', (els) => els.map((e) => ({
      id: e.id, state: e.dataset.state,
      points: e.shadowRoot.querySelectorAll('svg g[data-role="points"] circle').length,
      bars: e.shadowRoot.querySelectorAll('svg g[data-role="bars"] rect[data-series]').length,
      note: e.shadowRoot.querySelector('.note').textContent,
    })));
    const edge = info.find((x) => x.id === 'ev-edge'), tok = info.find((x) => x.id === 'ev-tokens');
    expect(edge.state).toBe('ready');
    expect(tok.state).toBe('ready');
    const e = ref.edgeKnockout(CHAPTER, { layer: 5, head: 'all' });
    expect(edge.points).toBe(e.pairs);
    expect(edge.note).toContain(`ρ(A, E) = ${e.spearman.toFixed(3)}`);
    const t = ref.tokenKnockout(CHAPTER);
    expect(tok.bars).toBe(4 * t.T);
    expect(tok.note).toContain(t.spearman.flow.toFixed(3));
    expect(tok.note).toContain('最后一层');
    expect(errors).toEqual([]);
    await context.close();
  }, 300_000);
});
