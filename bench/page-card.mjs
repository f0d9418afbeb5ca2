// page-card.mjs — time one card of the page in headless Chromium (needs `make page`), for the benchmarks that
// measure a computation where a reader runs it: a fresh page on the built-in model for each run, `prepare(page)`
// sets the card's controls, then the time from the card's Compute button to its data-state "done". Medians.

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

/** {threads, ms}: the median of `runs` timings of card `id` (its button `#${id}-go`), and the page's threads. */
export async function timePageCard(id, runs, prepare) {
  const { setup, watchedPage, waitDrawn } = await import('../tests/e2e/helpers.js');
  const env = await setup();
  const times = [];
  let threads = '?';
  try {
    for (let k = 0; k < runs; k++) {
      const w = await watchedPage(env);
      await w.page.goto(env.url);
      await w.page.waitForFunction(() => document.body.dataset.model, null, { timeout: 120000 });
      await waitDrawn(w.page, 1, 120000);
      threads = await w.page.evaluate(() => document.body.dataset.threads);
      await prepare(w.page);
      times.push(await w.page.evaluate(async (cardId) => {
        const card = document.getElementById(cardId);
        const t = performance.now();
        document.getElementById(`${cardId}-go`).click();
        await new Promise((res) => { const iv = setInterval(() => { if (['done', 'error'].includes(card.dataset.state)) { clearInterval(iv); res(); } }, 20); });
        if (card.dataset.state !== 'done') throw new Error(`the card ${cardId} ended in error`);
        return performance.now() - t;
      }, id));
      await w.context.close();
    }
  } finally {
    await env.close();
  }
  return { threads, ms: median(times) };
}
