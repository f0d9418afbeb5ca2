// page-findings.test.js — issue 38 item 3 in Chromium: the captions say what their own numbers show. The ΔA
// maps' caption is made from the maps' own scales (compare.js describeTrend), so it can say "fades" only when no
// layer's largest |ΔA| rises; checked against the scales printed under the maps, in en and zh.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-findings

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { TINY, setup, watchedPage, waitDrawn } from './helpers.js';
import { describeTrend } from '../../web/src/page/compare.js';

let env;
beforeAll(async () => { env = await setup(); }, 120_000);
afterAll(async () => { if (env) await env.close(); });

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
      expect(await page.textContent('#delta-trend')).toMatch(/本次运行中|变化只在/);
      expect(P.issues.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
