// render.js — from a run to the screen: the runner's handlers (the page's state while it runs, its errors, a
// result kept as the last run), then the drawing of everything in tasks of their own — the token chips, the
// four figures (draw.js) and the in-model panel (inmodel.js) — so that no main-thread task runs over 50 ms; a
// newer result abandons an older drawing between steps. renderLocal redraws what a cell or λ change moves before
// the worker answers. After each final result: its count on the body (data-renders), then the page's hook.

import { $, el } from '../ui/dom.js';
import { Runner } from './runner.js';
import { explain } from './models.js';
import { S, page, t, setView, setLast } from './state.js';
import { setState, setStatus, showError, clearError } from './status.js';
import { FIGURES, measure, bigT, nextTask, nextFrame, writeFindings, drawFig1, drawFig2, drawFig4 } from './draw.js';
import { drawTokens, drawInModel, noteDefault } from './inmodel.js';

let renders = 0;
let drawnHook = () => {};

/** What to do after each final result is drawn (main.js: the panels, the first live drawing, the link, the URL). */
export function onDrawn(fn) { drawnHook = fn; }

// ── running ─────────────────────────────────────────────────────────────────

/** The runner of model m (runner.js), its results drawn here; a runner the page has replaced is not heard. */
export function makeRunner(m) {
  const ref = {};
  ref.runner = new Runner(m, runHandlers(ref));
  return ref.runner;
}

function runHandlers(ref) {
  const mine = () => page.runner !== null && page.runner === ref.runner;
  return {
    onBusy(busy) {
      if (!mine()) return;
      setState(busy ? 'busy' : 'ready');
      setStatus(busy ? t('statusRunning') : '');
    },
    onResult(out) {
      if (!mine()) return;
      // The run chose the cell only when the reader had none for this text (a new
      // sentence: the default cell). A run for an older selection (arrow keys
      // faster than the worker) must not undo the reader's newer choice.
      // (A cell outside the sentence, from a link, is replaced by the run's too; so is a provisional one.)
      const mineSel = S.sel && !S.sel.provisional && S.sel.text === S.text && S.sel.row < out.base.T && S.sel.col < out.base.T;
      if (out.spec.text === S.text && !mineSel) setView({ sel: out.provisional ? { ...out.sel, provisional: true } : out.sel });
      clearError('run');
      if (out.provisional) {   // the search's first candidate, drawn while the others run (runner.js)
        setLast(out);
        renderAll();
        return;
      }
      document.body.dataset.runMs = out.ms.toFixed(1);   // the worker's calls for this view (bench/bench_page.mjs)
      resultToDraw = { t0: performance.now() };
      // the search kept the cell already drawn: the same picture; only the note of what was searched changes
      if (page.last && page.last.provisional && page.last.spec === out.spec && page.last.sel.row === out.sel.row && page.last.sel.col === out.sel.col) {
        Object.assign(page.last, { provisional: false, defaultSearch: out.defaultSearch, ms: out.ms });
        if (!provisionalDrawing) finishDraw();
        return;
      }
      setLast(out);
      renderAll();
    },
    onError(e) {
      if (!mine()) return;
      showError(runErrorMessage(e), 'run');
      // the figures on screen are not of the text that failed: say so (dimmed, a note)
      if (page.last && page.last.spec.text !== S.text) markStale(true);
    },
  };
}

/**
 * A run's error for the reader. Too long: how many tokens the text has (the tokenizer's count, which the model's
 * ETOOLONG message carries: "312 tokens exceed n_positions = 256") and the model's limit.
 */
function runErrorMessage(e) {
  const count = e && e.code === 'ETOOLONG' ? /(\d+) tokens\b/.exec(String(e.message)) : null;
  if (count && page.config) return t('errTooLongCount', Number(count[1]), page.config.nPositions);
  return explain(e, t, { nPositions: page.config?.nPositions });
}

/** Dim the figures and the token list with a note while they are of an older text than the one typed. */
export function markStale(on) {
  const box = $('figures');
  box.classList.toggle('is-stale', on);
  let note = document.getElementById('stale-note');
  if (on && !note) {
    note = el('p', { id: 'stale-note', class: 'stale-note' });
    box.querySelector('.tokens-wrap').after(note);
  }
  if (note) {
    note.hidden = !on;
    note.textContent = on ? t('figsStale') : '';
  }
}

// ── drawing ─────────────────────────────────────────────────────────────────

// A result waiting to be counted as drawn ({t0}); renderAll counts it when it finishes.
let resultToDraw = null;
let provisionalDrawing = 0;   // the renderGen of a provisional result's draw under way (0: none)
let renderGen = 0, localGen = 0;

/**
 * Draw everything for `last`, each step in tasks of its own: the box sizes, the token
 * chips, each figure (its size search a build a task, its DOM a task after) and the
 * in-model panel, so that no main-thread task runs over 50 ms (issue 38 item 5: the
 * first view's four figures were one task of 170-450 ms). A newer call abandons an
 * older one between steps. Resolves to true when it drew to the end.
 */
export async function renderAll() {
  if (!page.last || !page.config) return false;
  const gen = ++renderGen;
  provisionalDrawing = page.last.provisional ? gen : 0;
  const slice = bigT();
  const prof = {};
  markStale(false);
  const steps = [['tokens', drawTokens], ...FIGURES, ['inmodel', drawInModel]];
  // the result arrives in the worker's message task: the drawing starts in a task of its own
  await nextTask();
  if (gen !== renderGen || !page.last) return false;
  measure();
  for (const [name, f] of steps) {
    // after the token chips at big T, a frame of their own (256 of them are a layout's worth)
    await (slice && name === 'fig1' && !document.hidden ? nextFrame() : nextTask());
    if (gen !== renderGen || !page.last) return false;
    const t0 = performance.now();
    await f({ split: true });
    // a User Timing entry per step: profiles and the big-T test's trace name them
    performance.measure(`attnlab:${name}`, { start: t0 });
    if (gen !== renderGen || !page.last) return false;
    prof[name] = +(performance.now() - t0).toFixed(1);
  }
  writeFindings();
  document.body.dataset.prof = JSON.stringify(prof);
  if (provisionalDrawing === gen) provisionalDrawing = 0;
  if (page.last.provisional) {
    // the first live picture of the page (bench/bench_page.mjs): the search for the default cell still runs
    if (!performance.getEntriesByName('attnlab:live').length) performance.mark('attnlab:live');
    return true;
  }
  finishDraw();
  return true;
}

/** After a final result is drawn: count it, then the page's hook (the panels, the link's cell, the URL). */
function finishDraw() {
  if (!resultToDraw) return;
  noteDefault();
  document.body.dataset.drawMs = (performance.now() - resultToDraw.t0).toFixed(1);
  resultToDraw = null;
  renders += 1;
  document.body.dataset.renders = String(renders);
  if (!performance.getEntriesByName('attnlab:live').length) performance.mark('attnlab:live');
  performance.mark('attnlab:drawn', { detail: renders });
  drawnHook();
}

/** A quick redraw after a selection or λ change, before the worker answers (for big T, one figure a task). */
export async function renderLocal({ fig1 = false, fig2 = false, fig4 = true } = {}) {
  if (!page.last || !page.config) return;
  const gen = ++localGen;
  const slice = bigT();
  measure();
  const steps = [];
  if (fig1) steps.push(drawTokens, drawFig1);
  if (fig2 && !S.demo) steps.push(drawFig2);
  if (fig4) steps.push(drawFig4);
  for (const f of steps) {
    if (slice && f !== steps[0]) {
      await nextTask();
      if (gen !== localGen || !page.last) return;
    }
    await f();
  }
  if (gen === localGen) writeFindings();
}
