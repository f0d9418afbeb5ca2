// page-findings.test.js — issue 38 item 3 in Chromium: the captions say what their own numbers show. The ΔA
// maps' caption is made from the maps' own scales (compare.js describeTrend), so it can say "fades" only when no
// layer's largest |ΔA| rises; checked against the scales printed under the maps, in en and zh.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-findings

import { describe, it, expect } from 'vitest';
import { TINY, watchedPage, waitDrawn, useBrowser } from './helpers.js';
import { describeTrend } from '../../web/src/page/compare.js';

const env = useBrowser();

describe('the ΔA caption', () => {
  it('follows the maps\' own scales (en, zh) and changes with them', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?model=${TINY}&layer=0`);
      await waitDrawn(page);
      await page.waitForFunction(() => document.getElementById('delta-trend').textContent.length > 0);
      const scales = await page.$$eval('#delta-maps .dmap-scale', (xs) => xs.map((x) => Number(x.textContent.replace(/^[^0-9-]*±?\s*/, '').replace(/[^0-9.e-]/g, ''))));
      expect(scales.length).toBeGreaterThanOrEqual(2);
      const d = describeTrend(scales, 0);
      const text = await page.textContent('#delta-trend');
      const verb = { fades: /fades/, grows: /grows/, peak: /first grows/, mixed: /goes up and down/, one: /alone/ }[d.kind];
      expect(text).toMatch(verb);
      if (d.kind !== 'fades') expect(text).not.toMatch(/fades/);
      await page.click('#lang');
      await expect.poll(() => page.textContent('#delta-trend')).toMatch(/本次运行中|变化只在/);   // redrawn in tasks after the click
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('each figure\'s finding line', () => {
  it('states the numbers its figure draws, follows a new cell, and says what it cannot show (en, zh)', async () => {
    const P = await watchedPage(env);
    const { page, context } = P;
    try {
      await page.goto(`${env.url}?row=8&col=2`);
      await waitDrawn(page);
      const line = (k) => page.textContent(`#${k}-finding`);
      // Fig. 1: the row's largest weight as the heatmap draws it
      const peak = await page.$$eval('#fig1 g[data-role="attention"] rect[data-i="8"]', (rs) => Math.max(...rs.map((r) => Number(r.dataset.v))));
      expect(await line('fig1')).toContain(`largest weight, ${peak.toFixed(3)},`);
      expect(await line('fig1')).toMatch(/Cannot show: that “.+” is a cause of “sank”/);
      // Fig. 4: the soft do's new weight is the middle panel's cell
      const soft = await page.$eval('#fig4 g[data-role="soft-do"] rect[data-i="8"][data-j="2"]', (r) => Number(r.dataset.v));
      expect(await line('fig4')).toContain(`to ${soft.toFixed(3)};`);
      expect(await line('fig4')).toMatch(/\(KL = [0-9.e-]+ nats\)\.$/);
      // Fig. 3: the score and the null are the legend's
      expect(await line('fig3')).toMatch(/^Found: DAG score \d\.\d{3} against 0\.707 for uniform attention under the causal mask/);
      // a new cell: the lines follow it
      const before = await page.evaluate(() => Number(document.body.dataset.renders));
      await page.selectOption('#row', '5');
      await waitDrawn(page, before + 1);
      expect(await line('fig1')).toMatch(/^Found: row 5 “the” /);
      expect(await line('fig2')).toMatch(/rank \d+ of the 6 keys it may weigh\./);
      await page.click('#lang');
      await expect.poll(() => line('fig1')).toMatch(/^本次结果：第 5 行 “the” /);   // redrawn in tasks after the click
      expect(await line('fig3')).toMatch(/不能说明：这种顺序是因果的。/);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
