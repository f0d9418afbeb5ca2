// draw-tasks.test.js — the first view's four figures are not drawn in one main-thread task (issue 38
// item 5): a Chrome trace of the page's first draw at the chapter's sentence, and each figure's steps
// (User Timing attnlab:build:figN, attnlab:dom:figN) found in the renderer's main-thread tasks. Asserted:
// the structure — every figure's build and its DOM end in different tasks, no task ends the steps of two
// figures, and the result's own task draws nothing. No time is asserted (a busy machine makes any time
// limit flaky): the longest task is printed, and measured by bench/bench_page.mjs (docs/BENCHMARKS.md).
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/draw-tasks.test.js

import { describe, it, expect } from 'vitest';
import { useBrowser, watchedPage, waitDrawn, TINY } from './helpers.js';
import { mainThreadTasks } from './thread-clock.js';

const env = useBrowser();

const FIGS = ['fig1', 'fig2', 'fig3', 'fig4'];

describe('the first view, figure by figure', () => {
  it('each figure is built in tasks of its own and put into the DOM in another; no task holds two figures', async () => {
    const W = await watchedPage(env);
    const { page } = W;
    await env.browser.startTracing(page, { categories: ['devtools.timeline', 'toplevel', 'disabled-by-default-devtools.timeline', 'blink.user_timing'] });
    await page.goto(`${env.url}?model=${TINY}`);
    await waitDrawn(page, 1, 120_000);
    await page.waitForTimeout(300);
    const ev = JSON.parse((await env.browser.stopTracing()).toString()).traceEvents;
    const tasks = mainThreadTasks(ev);
    expect(tasks.length, 'the trace saw the main thread\'s tasks').toBeGreaterThan(10);
    // the first draw's steps: the end event of each measure (it lies in the task that called performance.measure)
    const ends = ev.filter((e) => (e.ph === 'e' || e.ph === 'E') && /^attnlab:(build|dom):fig\d$/.test(e.name));
    const taskOf = (e) => tasks.findIndex((t) => t.pid === e.pid && e.ts >= t.ts && e.ts <= t.ts + t.dur);
    const first = (name) => ends.filter((e) => e.name === name).sort((a, b) => a.ts - b.ts)[0];
    const where = {};
    for (const f of FIGS) {
      const b = first(`attnlab:build:${f}`), d = first(`attnlab:dom:${f}`);
      expect(b, `${f} build measured`).toBeTruthy();
      expect(d, `${f} dom measured`).toBeTruthy();
      where[f] = { build: taskOf(b), dom: taskOf(d) };
      expect(where[f].build, `${f}: its build lies in a main-thread task`).toBeGreaterThanOrEqual(0);
      expect(where[f].dom).toBeGreaterThanOrEqual(0);
      expect(where[f].dom, `${f}: build and DOM in different tasks`).not.toBe(where[f].build);
    }
    // no task ends the steps of two figures
    const byTask = new Map();
    for (const f of FIGS) for (const k of [where[f].build, where[f].dom]) byTask.set(k, new Set([...(byTask.get(k) || []), f]));
    for (const [k, figs] of byTask) expect([...figs], `task ${k}`).toHaveLength(1);
    // before issue 38 the whole draw ran in the worker's message task: now that task draws no figure
    const msgTasks = new Set(tasks.map((t, k) => [t, k]).filter(([t]) => ev.some((e) => e.name === 'HandlePostMessage' && e.pid === t.pid &&
      e.tid === t.tid && e.ts >= t.ts && e.ts <= t.ts + t.dur)).map(([, k]) => k));
    for (const f of FIGS) expect(msgTasks.has(where[f].build) || msgTasks.has(where[f].dom), `${f} not in a message task`).toBe(false);
    const longest = Math.max(...[...byTask.keys()].map((k) => tasks[k].dur / 1000));
    console.log(`[draw-tasks] the figures' steps in ${byTask.size} tasks; the longest of them ${longest.toFixed(1)} ms (wall, printed only)`);
    expect(W.issues.pageErrors).toEqual([]);
    await W.context.close();
  });
});
