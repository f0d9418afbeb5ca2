#!/usr/bin/env node
// bench_click.mjs — how long a reader waits after choosing a cell at T = 250, in headless Chromium, with the
// built-in model, while other panels work or not (issue 38 item 5: "a click at T = 250 stays ≤ 0.6 s whatever
// else is open").
//
//   node bench/bench_click.mjs [--runs 7]
//
// The text is the chapter's sentence 25 times (250 tokens). A "click" sets the effect row through the page's
// own control (the same path as a click on a heatmap cell: setSelection → the worker's runs → every figure and
// the in-model panel redrawn) and the time is taken from the event to the next frame after the page counts the
// result as drawn. Three situations, medians of --runs clicks each (one warm-up click first):
//   alone              nothing else computing
//   evidence set       the edge-knockout card computing its built-in set (many parts, in the same worker)
//   heads panel        every heads-panel card scrolled through (they compute only when asked since issue 38)
//   importance         the heads panel's importance grid computing on the same text (one forward a call)
// Prints a markdown table (docs/BENCHMARKS.md) and the raw numbers as JSON.

import { cpus } from 'node:os';
import { setup, watchedPage, waitDrawn, CHAPTER } from '../tests/e2e/helpers.js';

const runs = (() => { const k = process.argv.indexOf('--runs'); return k > 0 ? Number(process.argv[k + 1]) : 7; })();
const TEXT = Array.from({ length: 25 }, () => CHAPTER).join(' ');

/** In the page: choose row `row` (column 0) and resolve to ms until the result is drawn and painted. */
function clickRow(row) {
  return new Promise((resolve) => {
    const before = Number(document.body.dataset.renders);
    const t0 = performance.now();
    const col = document.getElementById('col');
    col.value = '0';
    col.dispatchEvent(new Event('change', { bubbles: true }));
    const sel = document.getElementById('row');
    sel.value = String(row);
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    const wait = () => {
      if (Number(document.body.dataset.renders) > before) requestAnimationFrame(() => resolve(performance.now() - t0));
      else setTimeout(wait, 2);
    };
    wait();
  });
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[(s.length - 1) >> 1] : NaN; };

async function clicks(page, n) {
  const out = [];
  for (let k = 0; k <= n; k++) {
    const ms = await page.evaluate(clickRow, 200 + (k % 40));
    if (k > 0) out.push(ms);
  }
  return out;
}

async function main() {
  const env = await setup();
  const res = {};
  try {
    const P = await watchedPage(env, { viewport: { width: 1400, height: 900 } });
    const { page } = P;
    await page.goto(`${env.url}?text=${encodeURIComponent(TEXT)}`);
    await waitDrawn(page, 1, 180_000);
    const T = await page.$$eval('#tokens li', (l) => l.length);
    res.alone = await clicks(page, runs);
    // an evidence set computing in the same worker
    await page.$eval('#ev-edge', (n) => n.scrollIntoView());
    await page.click('label[for="ev-edge-src-set"]');
    await page.click('#ev-edge-go');
    await page.waitForFunction(() => document.getElementById('ev-edge').dataset.state === 'busy');
    res.evidence = await clicks(page, runs);
    res.evidenceStillBusy = await page.$eval('#ev-edge', (n) => n.dataset.state === 'busy');
    await page.click('#ev-edge-stop').catch(() => {});
    // the heads panel scrolled through
    for (const id of ['hp-imp', 'hp-roles', 'hp-circ', 'hp-mask', 'hp-cf', 'hp-dag']) {
      await page.$eval(`#${id}`, (n) => n.scrollIntoView());
      await page.waitForTimeout(150);
    }
    res.heads = await clicks(page, runs);
    // the importance card computing on the same 250-token text (2·L·H + 1 forward passes, one a call)
    await page.fill('#hp-imp-input', TEXT);
    await page.$eval('#hp-imp', (n) => n.scrollIntoView());
    await page.click('#hp-imp [data-compute="imp"]');
    await page.waitForFunction(() => document.getElementById('hp-imp').dataset.state === 'busy');
    res.importance = await clicks(page, runs);
    res.importanceStillBusy = await page.$eval('#hp-imp', (n) => n.dataset.state === 'busy');
    await P.context.close();
    console.log(`\nattnlab page, click → all redrawn at T = ${T}, headless Chromium, ${cpus().length} cores, built-in model, medians of ${runs}\n`);
    console.log('| situation | median ms | min | max |');
    console.log('|---|---|---|---|');
    const row = (name, xs) => console.log(`| ${name} | ${median(xs).toFixed(0)} | ${Math.min(...xs).toFixed(0)} | ${Math.max(...xs).toFixed(0)} |`);
    row('nothing else computing', res.alone);
    row(`the edge-knockout card computing its built-in set${res.evidenceStillBusy ? '' : ' (it ended during the clicks)'}`, res.evidence);
    row('the heads panel scrolled through (it computes only when asked)', res.heads);
    row(`the heads panel's importance grid computing on the same text${res.importanceStillBusy ? '' : ' (it ended during the clicks)'}`, res.importance);
    console.log('\n' + JSON.stringify({ T, runs, ...res }));
  } finally {
    await env.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
