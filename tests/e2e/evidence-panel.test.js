// evidence-panel.test.js — the page's "Does attention explain?" panel in
// Chromium on the built-in model: each of the four cards computes in the
// worker, draws its charts with the same numbers as the npm API, exports, and
// a long grid can be cancelled; English and Chinese.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setup, watchedPage, waitDrawn, ARTIFACTS, CHAPTER } from './helpers.js';
import { loadModel } from '../../web/src/index.js';

let env, ref;
beforeAll(async () => {
  env = await setup();
  ref = await loadModel();
}, 120000);
afterAll(async () => { ref.dispose(); await env.close(); });

async function openPage(lang = 'en', viewport) {
  const w = await watchedPage(env, viewport ? { viewport } : {});
  await w.page.goto(`${env.url}?lang=${lang}`);
  await w.page.waitForFunction(() => document.body.dataset.model, null, { timeout: 60000 });
  await waitDrawn(w.page, 1, 120000);
  return w;
}

async function compute(page, id) {
  await page.click(`#${id}-go`);
  await page.waitForFunction((i) => ['done', 'error'].includes(document.getElementById(i).dataset.state), id, { timeout: 120000 });
  return page.$eval(`#${id}`, (n) => n.dataset.state);
}

describe('the evidence panel', () => {
  it('computes all four cards with the API\'s numbers', async () => {
    const w = await openPage('en');
    const { page } = w;
    await page.$eval('#evidence', (n) => n.scrollIntoView());
    for (const id of ['ev-edge', 'ev-tok', 'ev-abl', 'ev-pat']) expect(await compute(page, id)).toBe('done');
    const L = ref.config.nLayer;
    const edge = ref.edgeKnockout(CHAPTER, { layer: L - 1, head: 'all' });
    const sum = await page.textContent('#ev-edge-sum');
    expect(sum).toContain(`ρ(A, E) = ${edge.spearman.toFixed(3)}`);
    expect(await page.$$eval('#ev-edge-charts circle', (c) => c.length)).toBe(edge.pairs);
    const tok = ref.tokenKnockout(CHAPTER);
    expect(await page.textContent('#ev-tok-sum')).toContain(tok.spearman.rollout.toFixed(3));
    expect(await page.$$eval('#ev-abl-charts svg', (s) => s.length)).toBe(3);
    const clean = await page.inputValue('#ev-pat-clean'), corrupt = await page.inputValue('#ev-pat-corrupt');
    const p = ref.activationPatching(clean, corrupt);
    expect(await page.textContent('#ev-pat-sum')).toContain(p.ldClean.toFixed(3));
    expect(p.answers[0]).not.toBe(p.answers[1]); // the default pair flips this model's answer
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.$eval('#evidence', (n) => n.scrollIntoView());
    await page.screenshot({ path: join(ARTIFACTS, 'evidence-en.png'), fullPage: false });
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#ev-edge-x-json')]);
    expect(dl.suggestedFilename()).toBe('attnlab_evidence_edge_knockout.json');
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#ev-abl-x-svg')]);
    expect(svg.suggestedFilename()).toBe('attnlab_evidence_ablation.svg');
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);

  it('cancels a long grid and computes again; Chinese labels', async () => {
    const w = await openPage('zh', { width: 360, height: 800 });
    const { page } = w;
    const before = await page.evaluate(() => Number(document.body.dataset.renders || 0));
    await page.fill('#text', 'The rain made the road wet , so the car skidded into the ditch and the driver called for help because the brakes failed .');
    await page.press('#text', 'Enter');
    await waitDrawn(page, before + 1, 120000);
    await page.click('#ev-edge-go');
    await page.click('#ev-edge-stop');
    await page.waitForFunction(() => document.getElementById('ev-edge').dataset.state === 'error', null, { timeout: 120000 });
    expect(await page.textContent('#ev-edge-status')).toBe('已取消。');
    expect(await page.textContent('#ev-title')).toBe('注意力能解释吗？');
    expect(await compute(page, 'ev-tok')).toBe('done');
    await page.$eval('#ev-tok', (n) => n.scrollIntoView());
    await page.screenshot({ path: join(ARTIFACTS, 'evidence-zh-360.png') });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);
});
