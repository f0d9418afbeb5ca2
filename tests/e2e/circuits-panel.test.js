// circuits-panel.test.js — the page's "Where a head looks, what it moves" cards (circuits-panel.js) in Chromium
// on the built-in model: pattern vs value on the induction pairs (three layer × head grids with the API's means and
// intervals, the verdict in words, the other direction redrawn without a new computation), path patching into
// L1H0 on the induction-prev pairs (hatched where a sender has no path, the previous-token head strongest into the
// keys), direct logit attribution with its per-source bars, composition scores with the null's 97.5 % line, a set
// this model does not separate, the exports, and the Chinese page.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, useBrowser, openPanels, computeCard, fmtValue } from './helpers.js';
import { loadModel } from '../../web/src/index.js';

const env = useBrowser({ artifacts: true, ref: () => loadModel() });

const fx = (x, d) => { const s = x.toFixed(d); return /^-0\.0*$/.test(s) ? s.slice(1) : s; };
const iv = (s, d) => `${fx(s.mean, d)} [${fx(s.lo, d)}, ${fx(s.hi, d)}]`;

/** Compute card `id`, on the sentence or (given `set`) on the first `limit` pairs of a built-in set. */
async function compute(page, id, set, limit) {
  if (set) {
    await page.selectOption(`#${id}-set`, set);
    await page.fill(`#${id}-limit`, String(limit));
  }
  return computeCard(page, id);
}

/** The cells of the grid with data-role `role` in a card: [{k, name, v, lo, hi, missing}]. */
const cells = (page, id, role) => page.$$eval(`#${id}-charts [data-role="${role}"] rect[data-k]`, (rs) => rs.map((r) => ({
  k: Number(r.dataset.k), name: r.dataset.name, v: r.dataset.v, lo: r.dataset.lo, hi: r.dataset.hi, missing: r.dataset.missing === '1' })));

describe('where a head looks, what it moves', () => {
  it('pattern vs value, path patching, attribution and composition give the API\'s numbers; exports; Chinese', async () => {
    const w = await openPanels(env, 'en');
    const { page } = w;
    const { nLayer: L, nHead: H } = env.ref.config, LH = L * H, L1H0 = H;
    await page.$eval('#cx', (n) => n.scrollIntoView());
    expect(await page.textContent('#cx-title')).toBe('Where a head looks, what it moves');
    // the Break-the-circuit card links to the composition card, and following the link scrolls there without a new view
    await page.$eval('#hp-circ', (n) => n.scrollIntoView());
    const search = await page.evaluate(() => location.search + location.hash);
    await page.click('#hp-circ a[href="#cx-comp"]');
    await page.waitForFunction(() => { const r = document.getElementById('cx-comp').getBoundingClientRect(); return r.top >= -2 && r.top < innerHeight / 2; });
    expect(await page.evaluate(() => location.search + location.hash)).toBe(search);
    await page.$eval('#cx', (n) => n.scrollIntoView());

    // ── pattern vs value on the induction pairs ──
    expect(await page.inputValue('#cx-pv-set')).toBe('induction');
    const pv = env.ref.patternValueSet('induction', { limit: 8 });
    expect(pv.n).toBeGreaterThan(2);
    expect(await compute(page, 'cx-pv', 'induction', 8)).toBe('done');
    expect(await page.$eval('#cx-pv', (n) => n.dataset.n)).toBe(String(pv.n));
    for (const k of ['pattern', 'value', 'both']) {
      const g = await cells(page, 'cx-pv', `pv-${k}`);
      expect(g).toHaveLength(LH);
      const c = g.find((x) => x.name === 'L1H0'), want = pv.grid.denoise[k][L1H0];
      expect([c.v, c.lo, c.hi]).toEqual([fmtValue(want.mean), fmtValue(want.lo), fmtValue(want.hi)]);
    }
    // on these pairs the induction head's whole-head effect is the largest, and it qualifies for the verdict
    const both = pv.grid.denoise.both.map((x) => x.mean);
    expect(both.indexOf(Math.max(...both))).toBe(L1H0);
    expect(pv.patternShare.denoise[L1H0]).not.toBeNull();
    const verdict = await page.textContent('#cx-pv-verdict');
    expect(verdict).toContain(`L1H0: pattern carries ${iv(pv.patternShare.denoise[L1H0], 2)} of its effect.`);
    expect((await page.$eval('#cx-pv-verdict', (n) => n.dataset.heads)).split(' ')[0]).toBe('L1H0');
    const sum = await page.textContent('#cx-pv-sum');
    expect(sum).toContain(`${pv.n} of 8 pairs kept: the induction pairs`);
    expect(sum).toContain('95 % bootstrap intervals (1000 resamples, seed 1).');
    expect(await page.textContent('#cx-pv-detail')).toContain(`L1H0, denoising: pattern ${iv(pv.grid.denoise.pattern[L1H0], 3)}`);
    // noising: redrawn from the same result
    await page.click('label[for="cx-pv-dir-noise"]');
    expect(await page.$eval('#cx-pv-charts svg[data-dir]', (s) => s.dataset.dir)).toBe('noise');
    const nz = (await cells(page, 'cx-pv', 'pv-value')).find((x) => x.name === 'L1H0');
    expect(nz.v).toBe(fmtValue(pv.grid.noise.value[L1H0].mean));
    // a click on a cell selects that head
    await page.click('#cx-pv-charts [data-role="pv-both"] rect[data-name="L0H1"]');
    expect(await page.inputValue('#cx-pv-head')).toBe('1');
    expect(await page.textContent('#cx-pv-detail')).toContain('L0H1, noising:');
    await page.click('label[for="cx-pv-dir-denoise"]');
    await page.locator('#cx-pv').screenshot({ path: join(ARTIFACTS, 'circuits-pv-en.png') });
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#cx-pv-x-svg')]);
    expect(svg.suggestedFilename()).toBe('attnlab_circuits_pattern_value.svg');
    const text = readFileSync(await svg.path(), 'utf8');
    expect(text.startsWith('<?xml')).toBe(true);
    expect(text).toContain('data-charts="4"'); // three grids and the heads with an effect
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#cx-pv-x-json')]);
    expect(JSON.parse(readFileSync(await json.path(), 'utf8')).result.n).toBe(pv.n);

    // ── path patching into L1H0 on the previous-token pairs ──
    expect(await page.inputValue('#cx-path-layer')).toBe('1');
    expect(await page.inputValue('#cx-path-head')).toBe('0');
    const recv = ['q', 'k', 'v'].map((input) => ({ layer: 1, head: 0, input }));
    const pp = env.ref.pathPatchingSet('induction-prev', { limit: 8, receivers: [...recv, { input: 'logits' }] });
    expect(await compute(page, 'cx-path', 'induction-prev', 8)).toBe('done');
    const kg = await cells(page, 'cx-path', 'path-k');
    expect(kg).toHaveLength(LH);
    expect(kg.filter((x) => x.missing).map((x) => x.k)).toEqual(Array.from({ length: LH - H }, (_, i) => H + i)); // layers 1+: no path
    const live = kg.filter((x) => !x.missing);
    const best = live.reduce((a, x) => (Number(x.v) > Number(a.v) ? x : a));
    expect(best.name).toBe('L0H0');
    expect([best.v, best.lo, best.hi]).toEqual([fmtValue(pp.senders[1][0].mean), fmtValue(pp.senders[1][0].lo), fmtValue(pp.senders[1][0].hi)]);
    expect(await page.$$eval('#cx-path-charts [data-role="na-legend"]', (n) => n.length)).toBe(3);
    expect(await page.textContent('#cx-path-sum')).toContain(`Strongest path into L1H0: L0H0 → L1H0.k ${iv(pp.senders[1][0], 3)}.`);
    await page.locator('#cx-path').screenshot({ path: join(ARTIFACTS, 'circuits-path-en.png') });

    // ── direct logit attribution, and one head's term on the first pair by source position ──
    const da = env.ref.attributionSet('induction', { limit: 4 });
    expect(await compute(page, 'cx-dla', 'induction', 4)).toBe('done');
    const dh = await cells(page, 'cx-dla', 'dla-heads');
    expect(dh.find((x) => x.name === 'L1H0').v).toBe(fmtValue(da.heads[L1H0].mean));
    expect(await page.$$eval('#cx-dla-charts [data-role="bars"] > g', (g) => g.length)).toBe(da.perInput[0].T);
    expect(await page.$$eval('#cx-dla-charts [data-role="bars"] > g[data-mark]', (g) => g.length)).toBe(1); // the one changed position
    // the bars' labels are readable: a token holding part of a character shows its bytes, never U+FFFD
    expect(await page.$eval('#cx-dla-charts [data-role="bars"]', (g) => g.textContent.includes('\uFFFD'))).toBe(false);

    // ── composition scores and their null ──
    const cs = env.ref.compositionScores({ nNull: 200, seed: 1 });
    expect(await compute(page, 'cx-comp')).toBe('done');
    const lines = await page.$$eval('#cx-comp-charts [data-role="null-hi"]', (ls) => ls.map((l) => l.dataset.v));
    expect(lines).toEqual(['q', 'k', 'v'].map((k) => fmtValue(cs.null[k].hi)));
    expect(await page.$$eval('#cx-comp-charts [data-role="kind"][data-kind="k"] [data-role="pair"]', (p) => p.length)).toBe(cs.k.length);
    await page.locator('#cx-comp').screenshot({ path: join(ARTIFACTS, 'circuits-comp-en.png') });

    // ── Chinese: the cards' titles and the verdict, redrawn from the same results ──
    await page.click('#lang');
    await page.waitForFunction(() => document.getElementById('cx-pv-h').textContent === '模式还是值');
    expect(await page.textContent('#cx-title')).toBe('头看向哪里，又搬运了什么');
    expect(await page.textContent('#cx-pv-verdict')).toContain(`L1H0：模式承担其效果的 ${iv(pv.patternShare.denoise[L1H0], 2)}。`);
    expect(await page.textContent('#cx-path-h')).toBe('路径修补：哪个头输入哪个头');
    await page.locator('#cx-pv').screenshot({ path: join(ARTIFACTS, 'circuits-pv-zh.png') });
    expect(w.issues.pageErrors).toEqual([]);
    expect(w.issues.consoleErrors).toEqual([]);
    await w.context.close();
  }, 400000);

  it('a set this model does not separate: the skipped pairs are counted, with their reason, and no grid is drawn for none; cancel; 360 px', async () => {
    const w = await openPanels(env, 'en');
    const { page } = w;
    const pv = env.ref.patternValueSet('pairs', { limit: 10 });
    expect(await compute(page, 'cx-pv', 'pairs', 10)).toBe('done');
    const sum = await page.textContent('#cx-pv-sum');
    expect(sum).toContain(`${pv.n} of 10 pairs kept: the built-in minimal pairs.`);
    expect(pv.skipped.length).toBeGreaterThan(0);
    if (pv.skipped.every((x) => /less than minGap/.test(x.reason)))
      expect(sum).toContain(`${pv.skipped.length} skipped: on them the model does not favour the clean answer by at least 1 nats more`);
    if (pv.n === 0) {
      expect(sum).toContain('No pair is left to average');
      expect(await page.$$eval('#cx-pv-charts svg', (s) => s.length)).toBe(0);
    } else {
      expect(await page.$$eval('#cx-pv-sum .cx-warn', (s) => s.length)).toBe(pv.n < 5 ? 1 : 0);
    }
    await page.locator('#cx-pv').screenshot({ path: join(ARTIFACTS, 'circuits-pv-pairs-en.png') });
    // the whole induction set, cancelled after its first progress event; the card can compute again
    await page.selectOption('#cx-pv-set', 'induction');
    await page.fill('#cx-pv-limit', '100');
    await page.click('#cx-pv-go');
    await page.waitForFunction(() => /\d+ \/ 100/.test(document.getElementById('cx-pv-status').textContent), null, { timeout: 120000 });
    expect(await page.$eval('#cx-pv', (n) => n.dataset.state)).toBe('busy');
    await page.click('#cx-pv-stop');
    await page.waitForFunction(() => document.getElementById('cx-pv').dataset.state === 'error', null, { timeout: 120000 });
    expect(await page.textContent('#cx-pv-status')).toBe('Cancelled.');
    expect(await page.isDisabled('#cx-pv-go')).toBe(false);
    expect(await compute(page, 'cx-pv', 'induction', 4)).toBe('done');
    // at 360 px the cards fit the width
    await page.setViewportSize({ width: 360, height: 800 });
    await page.waitForTimeout(200);
    await page.click('#cx-pv-go');
    await page.waitForFunction(() => document.getElementById('cx-pv').dataset.state === 'done', null, { timeout: 120000 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.locator('#cx-pv').screenshot({ path: join(ARTIFACTS, 'circuits-pv-en-360.png') });
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);
});
