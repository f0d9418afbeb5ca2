// evidence-panel.test.js — the page's "Does attention explain?" panel in
// Chromium on the built-in model: each of the four cards computes in the
// worker, draws its charts with the same numbers as the npm API, exports, and
// a long grid can be cancelled; over a set (the built-in held-out sentences,
// or a typed list) the aggregates, their intervals and the permutation null
// are the API's, a set can be cancelled mid-way; English and Chinese.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pngMeta } from '../../web/src/figures/png-meta.js';
import { waitDrawn, ARTIFACTS, CHAPTER, useBrowser, openPanels, computeCard, fmtValue } from './helpers.js';
import { loadModel } from '../../web/src/index.js';

const env = useBrowser({ artifacts: true, ref: () => loadModel() });

// the source buttons are radio inputs drawn as a segmented control: a reader clicks the label
const source = (page, id, v) => page.click(`label[for="${id}-src-${v}"]`);
const f3 = (x) => x.toFixed(3);
const interval = (s) => `${f3(s.mean)} [${f3(s.lo)}, ${f3(s.hi)}]`;
const fint = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');

describe('the evidence panel', () => {
  it('computes all four cards on this sentence with the API\'s numbers', async () => {
    const w = await openPanels(env, 'en');
    const { page } = w;
    await page.$eval('#evidence', (n) => n.scrollIntoView());
    for (const id of ['ev-edge', 'ev-tok', 'ev-abl', 'ev-pat']) {
      expect(await page.$eval(`#${id}`, (n) => n.dataset.source)).toBe('sentence'); // the default source
      expect(await computeCard(page, id)).toBe('done');
    }
    const L = env.ref.config.nLayer;
    const edge = env.ref.edgeKnockout(CHAPTER, { layer: L - 1, head: 'all' });
    const sum = await page.textContent('#ev-edge-sum');
    expect(sum).toContain(`ρ(A, E) = ${edge.spearman.toFixed(3)}`);
    // the card's finding in one line, from the same numbers (findings.js), naming the sign's meaning
    expect(sum).toMatch(new RegExp(`^Found in this sentence: .*ρ = ${edge.spearman.toFixed(3).replace('.', '\\.')}`));
    expect(await page.$$eval('#ev-edge-charts [data-role="points"] circle', (c) => c.length)).toBe(edge.pairs);
    // on one sentence: the permutation null of its correlation, and no interval over inputs
    const one = env.ref.edgeKnockoutSet([CHAPTER], { layer: L - 1, head: 'all' });
    const band = await page.$eval('#ev-edge-charts [data-role="null-band"]', (r) => ({ lo: r.dataset.lo, hi: r.dataset.hi }));
    expect(band).toEqual({ lo: fmtValue(one.local.spearman.nullLo), hi: fmtValue(one.local.spearman.nullHi) });
    expect(await page.textContent('#ev-edge-notes')).toContain('One input: no interval over inputs; the null still applies.');
    const tok = env.ref.tokenKnockout(CHAPTER);
    expect(await page.textContent('#ev-tok-sum')).toContain(tok.spearman.rollout.toFixed(3));
    // four readings: the last layer, its value-weighted form (issue 35 item 4), rollout and flow; and two that know
    // only positions (recency, the first token: issue 50), each with its null band
    expect(await page.$$eval('#ev-tok-charts [data-role="null-band"]', (r) => r.length)).toBe(6);
    expect(await page.textContent('#ev-tok-sum')).toContain('Readings that know only positions');
    expect(await page.textContent('#ev-tok-notes')).toContain('random weights and attention as peaked');
    expect(await page.$$eval('#ev-abl-charts svg', (s) => s.length)).toBe(3);
    // the ablation card's finding names the head its zero-ablation grid draws as the largest loss increase
    const peak = await page.$$eval('#ev-abl-charts svg', (ss) => {
      const zero = ss.find((x) => x.querySelector('[data-role="title"]')?.textContent === 'zero');
      let b = null;
      for (const r of zero.querySelectorAll('rect[data-i][data-j]')) { const v = Number(r.dataset.v); if (!b || v > b.v) b = { l: r.dataset.i, h: r.dataset.j, v }; }
      return b;
    });
    const ablSum = await page.textContent('#ev-abl-sum');
    expect(ablSum).toMatch(new RegExp(`^Found: removing L${peak.l} H${peak.h} raises the loss most \\(by ${peak.v.toFixed(3)} nats, zeroed\\); `));
    expect(ablSum).toContain('Cannot show: which way of removing a head is right');
    expect(await page.textContent('#ev-pat-sum')).toMatch(/^Found: the clean residual entering layer \d+ at “.+” brings back -?\d\.\d{3} of the answer's logit difference, the most of any layer; of the heads, L\d+ H\d+ the most/);
    const clean = await page.inputValue('#ev-pat-clean'), corrupt = await page.inputValue('#ev-pat-corrupt');
    const p = env.ref.activationPatching(clean, corrupt);
    expect(await page.textContent('#ev-pat-sum')).toContain(p.ldClean.toFixed(3));
    expect(p.answers[0]).not.toBe(p.answers[1]); // the default pair flips this model's answer
    await page.$eval('#evidence', (n) => n.scrollIntoView());
    await page.screenshot({ path: join(ARTIFACTS, 'evidence-en.png'), fullPage: false });
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#ev-edge-x-json')]);
    expect(dl.suggestedFilename()).toBe('attnlab_evidence_edge_knockout.json');
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#ev-abl-x-svg')]);
    expect(svg.suggestedFilename()).toBe('attnlab_evidence_ablation.svg');
    // the file says what it was computed on: the model, the card, the source and the mask
    expect(readFileSync(await svg.path(), 'utf8')).toMatch(/<desc>attnlab · model brown-gpt2 · Three ways to remove a head · source sentence · mask: the model(&#39;|&apos;|')s own \(causal\)<\/desc>/);
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('#ev-edge-x-png')]);
    const meta = pngMeta(readFileSync(await png.path()));
    expect(meta.text.Description).toBe(`attnlab · model brown-gpt2 · ${await page.textContent('#ev-edge-h')} · layer ${L - 1} · head all · knockout renorm · source sentence · mask: the model's own (causal)`);
    expect(Math.abs(meta.dpi - 150)).toBeLessThanOrEqual(0.0127);
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);

  it('over the built-in set: the API\'s mean, interval, null band, p-value and noise floor; cancel mid-set', async () => {
    const w = await openPanels(env, 'en');
    const { page } = w;
    await source(page, 'ev-edge', 'set');
    expect(await page.isVisible('#ev-edge-limit')).toBe(true);
    expect(await page.textContent('#ev-edge-of')).toBe('of 125');
    expect(await page.inputValue('#ev-edge-set')).toBe('heldout');
    await page.fill('#ev-edge-limit', '6');
    expect(await computeCard(page, 'ev-edge')).toBe('done');
    const L = env.ref.config.nLayer;
    const s = env.ref.edgeKnockoutSet('heldout', { limit: 6 });
    expect(s.n).toBe(6);
    expect(await page.$eval('#ev-edge', (n) => n.dataset.n)).toBe('6');
    const sum = await page.textContent('#ev-edge-sum');
    expect(sum).toContain('6 inputs: held-out sentences; 1000 bootstrap resamples, 1000 permutations, seed 1.');
    expect(sum).toMatch(/^Found on this set: (the weights rank the local effects (better|worse) than shuffled attention|no evidence that the weights rank)/);
    expect(sum).toContain(`local: ρ = ${interval(s.local.spearman)}, τ = ${interval(s.local.kendall)}; null ${interval({
      mean: s.local.spearman.nullMean, lo: s.local.spearman.nullLo, hi: s.local.spearman.nullHi })}`);
    expect(sum).toContain(`uniform ρ = ${interval(s.local.uniform)}; row-permuted ρ = ${interval(s.local.permuted)}`);
    expect(sum).toContain(`last: ρ = ${interval(s.last.spearman)}`);
    expect(sum).toContain(`Mean per-row ρ ${interval(s.rows)}; top-k overlap ${interval(s.topKOverlap)}.`);
    expect(sum).toContain(`Value-weighted reading A‖v W_O‖ (Kobayashi et al. 2020): local ρ = ${interval(s.valueWeighted.local.spearman)}; last ρ = ${interval(s.valueWeighted.last.spearman)}.`);
    // the charts: the attention row's dot and whisker, and its null band, are the API's
    const rows = await page.$$eval('#ev-edge-charts [data-role="interval"]', (gs) => gs.map((g) => ({ ...g.dataset })));
    const att = rows.filter((r) => r.label === 'attention');
    expect(att.map((r) => [r.mean, r.lo, r.hi])).toEqual(['local', 'last'].map((k) =>
      [fmtValue(s[k].spearman.mean), fmtValue(s[k].spearman.lo), fmtValue(s[k].spearman.hi)]));
    const bands = await page.$$eval('#ev-edge-charts [data-role="null-band"]', (rs) => rs.map((r) => ({ ...r.dataset })));
    expect(bands[0]).toEqual({ role: 'null-band', lo: fmtValue(s.local.spearman.nullLo), hi: fmtValue(s.local.spearman.nullHi),
      mean: fmtValue(s.local.spearman.nullMean) });
    expect(bands.length).toBeGreaterThanOrEqual(5); // attention, uniform, row-permuted (local) + attention, row-permuted (last)
    const width = await page.$eval('#ev-edge-charts [data-role="null-band"]', (r) => r.getBoundingClientRect().width);
    expect(width).toBeGreaterThan(3); // drawn, not a hairline
    expect(await page.$$eval('#ev-edge-charts [data-role="p"]', (ts) => ts.map((x) => x.textContent))).toContain('p ≤ 0.001');
    expect(await page.$$eval('#ev-edge-charts [data-role="input"]', (c) => c.length)).toBe(12); // each input, twice
    const notes = await page.textContent('#ev-edge-notes');
    expect(notes).toContain(`Effects above the noise floor: ${fint(s.local.spearman.nAboveFloor)} of ${fint(s.local.spearman.nPoints)}`);
    expect(notes).toContain('last: in the last layer only row T−1 can reach the output; other rows are structural zeros and are left out.');
    expect(notes).toContain('local: the weight ranks the effect at the query\'s own position');
    expect(notes).not.toContain('One input');
    expect(s.layer).toBe(L - 1);
    await page.$eval('#ev-edge', (n) => n.scrollIntoView());
    await page.waitForTimeout(300); // let the layout settle (the page swaps its figures in as they are drawn)
    await page.locator('#ev-edge').screenshot({ path: join(ARTIFACTS, 'evidence-set-en.png') });
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#ev-edge-x-json')]);
    expect(dl.suggestedFilename()).toBe('attnlab_evidence_edge_knockout.json');

    // cancel mid-set: the whole held-out set, stopped after its first progress event
    await page.fill('#ev-edge-limit', '125');
    await page.click('#ev-edge-go');
    await page.waitForFunction(() => /\d+ \/ \d+/.test(document.getElementById('ev-edge-status').textContent), null, { timeout: 120000 });
    expect(await page.$eval('#ev-edge', (n) => n.dataset.state)).toBe('busy');
    await page.click('#ev-edge-stop');
    await page.waitForFunction(() => document.getElementById('ev-edge').dataset.state === 'error', null, { timeout: 120000 });
    expect(await page.textContent('#ev-edge-status')).toBe('Cancelled.');
    expect(await page.isDisabled('#ev-edge-go')).toBe(false);
    expect(await page.isDisabled('#ev-edge-stop')).toBe(true);
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);

  it('"your list": three typed sentences (token knockout) and two typed pairs (patching) give the API\'s numbers', async () => {
    const w = await openPanels(env, 'en');
    const { page } = w;
    const lines = ['The cat sat on the mat and looked at the door .', 'She opened the window because the room was hot .',
                   'The old man walked to the river every morning .'];
    await source(page, 'ev-tok', 'list');
    expect(await page.isVisible('#ev-tok-list')).toBe(true);
    expect(await page.isVisible('#ev-tok-limit')).toBe(false);
    await page.fill('#ev-tok-list', lines.join('\n') + '\n\n');
    expect(await page.textContent('#ev-tok-list-count')).toBe('3 inputs');
    expect(await computeCard(page, 'ev-tok')).toBe('done');
    expect(await page.$eval('#ev-tok', (n) => n.dataset.n)).toBe('3');
    const s = env.ref.tokenKnockoutSet(lines);
    const sum = await page.textContent('#ev-tok-sum');
    expect(sum).toContain('3 inputs: your list;');
    for (const k of ['lastLayer', 'valueWeighted', 'rollout', 'flow']) expect(sum).toContain(`ρ = ${interval(s.readings[k])}`);
    // the position readings, with the API's numbers
    for (const k of ['recency', 'first', 'early']) expect(sum).toContain(`ρ = ${interval(s.positions[k])}`);
    expect(await page.$$eval('#ev-tok-charts [data-role="null-band"]', (r) => r.length)).toBe(6);

    // patching: one pair a line, clean | corrupted, the second with its answers (" he" with its space)
    await source(page, 'ev-pat', 'list');
    expect(await page.isVisible('#ev-pat-clean')).toBe(false);
    await page.fill('#ev-pat-list', 'The cat sat on the | The cats sat on the\nThen Martha lowered | Then Tom lowered | her | his');
    expect(await page.textContent('#ev-pat-list-count')).toBe('2 pairs');
    expect(await computeCard(page, 'ev-pat')).toBe('done');
    const pt = env.ref.patchingSet([['The cat sat on the', 'The cats sat on the'], ['Then Martha lowered', 'Then Tom lowered', [' her', ' his']]]);
    // the second pair is one the model gets the wrong way round (its gap is −1.25 nats): kept by the old |gap| rule,
    // skipped by the signed one (issue 50), and the card says why
    expect(pt.n).toBe(1);
    expect(pt.skipped.map((x) => x.index)).toEqual([1]);
    const psum = await page.textContent('#ev-pat-sum');
    expect(psum).toContain('1 pair: your list;');
    expect(psum).toContain('#2 (the clean run favours the clean answer over the corrupted one by -1.251 nats more');
    const heads = await page.$$eval('#ev-pat-charts [data-role="interval"]', (gs) => gs.map((g) => g.dataset).filter((d) => d.label === 'L0 H0')
      .map((d) => d.mean));
    expect(heads).toEqual([fmtValue(pt.heads[0].mean)]);
    // a malformed line is named, and nothing is computed
    await page.fill('#ev-pat-list', 'only one sentence here');
    expect(await page.textContent('#ev-pat-list-count')).toContain('Line 1');
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);

  it('cancels a long grid and computes again; Chinese labels and a set in Chinese', async () => {
    const w = await openPanels(env, 'zh', { width: 360, height: 800 });
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
    expect(await page.textContent('#ev-tok-src-sentence-label')).toBe('本句');
    expect(await page.textContent('#ev-tok-src-set-label')).toBe('内置数据集');
    expect(await page.textContent('#ev-tok-src-list-label')).toBe('自定义列表');
    expect(await page.textContent('#ev-pat-src-sentence-label')).toBe('本句对');
    expect(await computeCard(page, 'ev-tok')).toBe('done');
    expect(await page.textContent('#ev-tok-notes')).toContain('只有一条输入：没有对输入的区间；置换零分布仍然适用。');
    await page.$eval('#ev-tok', (n) => n.scrollIntoView());
    await page.screenshot({ path: join(ARTIFACTS, 'evidence-zh-360.png') });
    // a small set in Chinese
    await source(page, 'ev-tok', 'set');
    expect(await page.textContent('#ev-tok-of')).toBe('共 125 条');
    await page.fill('#ev-tok-limit', '4');
    expect(await computeCard(page, 'ev-tok')).toBe('done');
    const sum = await page.textContent('#ev-tok-sum');
    expect(sum).toContain('4 条输入：留出句子；自助重采样 1000 次，置换 1000 次，种子 1。');
    const s = env.ref.tokenKnockoutSet('heldout', { limit: 4 });
    expect(sum).toContain(`读法「注意力展开」与效果：ρ = ${interval(s.readings.rollout)}`);
    const notes = await page.textContent('#ev-tok-notes');
    expect(notes).toContain('灰色带：置换零分布');
    expect(notes).toContain('高于噪声底线的效果');
    await page.$eval('#ev-tok', (n) => n.scrollIntoView());
    await page.waitForTimeout(300); // let the layout settle (the page swaps its figures in as they are drawn)
    await page.locator('#ev-tok').screenshot({ path: join(ARTIFACTS, 'evidence-set-zh-360.png') });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);

  it('Chinese at full width: the set charts and their legends', async () => {
    const w = await openPanels(env, 'zh');
    const { page } = w;
    await source(page, 'ev-edge', 'set');
    await page.fill('#ev-edge-limit', '6');
    expect(await computeCard(page, 'ev-edge')).toBe('done');
    const texts = await page.$$eval('#ev-edge-charts text', (ts) => ts.map((x) => x.textContent));
    expect(texts).toContain('置换零分布，中间 95%');
    expect(texts).toContain('局部：A 与位置 i 的效果');
    expect(await page.textContent('#ev-edge-notes')).toContain('末位：在最后一层，只有第 T−1 行能影响输出；其余各行的效果在结构上为零，不计入。');
    await page.$eval('#ev-edge', (n) => n.scrollIntoView());
    await page.waitForTimeout(300); // let the layout settle (the page swaps its figures in as they are drawn)
    await page.locator('#ev-edge').screenshot({ path: join(ARTIFACTS, 'evidence-set-zh.png') });
    expect(w.issues.pageErrors).toEqual([]);
    await w.context.close();
  }, 300000);
});
