// head-start.js — what the page starts before the rest of its code is fetched (entry.js runs it): the model
// worker (its script, then the wasm, compile while the page's main bundle downloads and evaluates) and, when
// the page opens on the built-in model, the whole load: the four downloads index.html started (taken over),
// handed to the worker as they complete, and the model built there. main.js claims it on its first load; the
// events that came before are replayed to it (the progress bar, the load's timing).

import { loadModel } from '../worker-client.js';
import { builtinSource, fetchBuiltinModel, BUILTIN_WEIGHTS } from './builtin-files.js';

/** A new model worker (attnlab/worker's own script): loadModel takes it over, and dispose ends it. */
export function startPageWorker() {
  return new Worker(new URL('../worker.js', import.meta.url), { type: 'module', name: 'attnlab' });
}

/** The built-in model's load, from its files to a model in the worker; events go to emit. */
async function loadBuiltin(url, worker, signal, emit) {
  let files;
  try {
    files = await fetchBuiltinModel(url, { signal, onProgress: (p) => emit({ kind: 'fetch', ...p }) });
  } catch (e) {
    worker.terminate();
    throw e;
  }
  emit({ kind: 'files' });
  return loadModel(files, { signal, transfer: true, worker, weights: BUILTIN_WEIGHTS, onProgress: (e) => emit({ kind: 'load', ...e }) });
}

/**
 * Start the worker, and the built-in model's load unless the link names another model (?model=, or a bad value:
 * main.js reports it). Returns {takeWorker(), takeLoad(onEvent, signal)}, each giving its object once (then
 * null). takeWorker: the worker when no load took it. takeLoad: the load's Promise<WorkerModel>; onEvent gets
 * {kind: 'fetch', file, loaded, total} (the weights' download), {kind: 'files'} (all four arrived) and
 * {kind: 'load', ...} (loadModel's progress events), the last download event and every other one so far
 * replayed first; signal's abort ends the load (EABORT, the worker terminated).
 */
export function headStart(search, base) {
  let worker = startPageWorker();
  let src = null;
  try { src = builtinSource(search, base); } catch { src = null; }
  if (!src || src.custom) return { takeWorker() { const w = worker; worker = null; return w; }, takeLoad: () => null };
  performance.mark('attnlab:load-early');   // the built-in model's load starts here, before main.js runs
  const abort = new AbortController();
  let lastFetch = null, listener = null;
  const events = [];
  const emit = (e) => {
    if (e.kind === 'fetch') lastFetch = e; else events.push(e);
    if (listener) listener(e);
  };
  let load = loadBuiltin(src.url, worker, abort.signal, emit);
  worker = null;
  load.catch(() => {});   // claimed later: the error is seen there, not as an unhandled rejection
  return {
    takeWorker: () => null,
    takeLoad(onEvent, signal) {
      const p = load;
      load = null;
      if (!p) return null;
      listener = onEvent;
      if (lastFetch) onEvent(lastFetch);
      for (const e of events) onEvent(e);
      if (signal) {
        if (signal.aborted) abort.abort();
        else signal.addEventListener('abort', () => abort.abort(), { once: true });
      }
      return p;
    },
  };
}
