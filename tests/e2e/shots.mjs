// shots.mjs — screenshots for looking at the page by eye (not a test):
//   node tests/e2e/shots.mjs <outdir> <width> <lang> [query] [selector ...]
// Builds the page when stale, serves it, and saves <outdir>/<width>-<lang>-<selector>.png
// (the whole page when no selector is given; '@screen' is the first screen). A heads-panel card (one
// Compute button inside the selector) is computed first: nothing in that panel computes until asked.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { setup, watchedPage, waitDrawn } from './helpers.js';

const [out, width = '1400', lang = 'en', query = '', ...sels] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const env = await setup();
try {
  const W = await watchedPage(env, { viewport: { width: Number(width), height: Number(width) < 600 ? 740 : 900 } });
  const { page } = W;
  await page.goto(`${env.url}?lang=${lang}${query ? '&' + query : ''}`);
  await waitDrawn(page, 1, 120_000);
  await page.waitForTimeout(300);
  if (!sels.length) await page.screenshot({ path: join(out, `${width}-${lang}-page.png`), fullPage: true });
  for (const s of sels) {
    if (s === '@screen') {   // the first screen only, as a reader sees it on arrival
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(out, `${width}-${lang}-screen.png`) });
      continue;
    }
    const loc = page.locator(s).first();
    await loc.scrollIntoViewIfNeeded();
    // a heads-panel card computes only when asked: press its Compute button and wait for its drawing
    const compute = page.locator(`${s} [data-compute]`);
    if (await compute.count() === 1) {
      await compute.click();
      await page.waitForFunction((x) => document.querySelector(x).dataset.state === 'ready', s, { timeout: 120_000 });
    }
    await page.waitForTimeout(200);
    await loc.screenshot({ path: join(out, `${width}-${lang}-${s.replace(/[^a-z0-9]+/gi, '_')}.png`) });
  }
  if (W.issues.pageErrors.length) console.log('page errors', W.issues.pageErrors);
} finally {
  await env.close();
}
