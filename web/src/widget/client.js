// widget/client.js — the page's one attnlab worker, shared by every widget.
//
// A module-level singleton: the first widget that scrolls into view starts
// the worker (worker.js next to this file); every later widget, whatever its
// figure, posts to the same worker. Models are loaded once per URL and shared
// (their load promise and progress are fanned out to every widget waiting on
// them). Nothing here touches the DOM.
//
// For tests and authors: stats() (also globalThis.attnlabWidget.stats()) says
// how many workers were started (1 on any page with widgets), how many model
// loads were requested and how many requests were sent.

import { resultFromMessage } from '../result.js';
import { connect } from '../ui/protocol.js';

let client = null;           // ui/protocol.js's WorkerClient of the shared worker, once started
const models = new Map();    // model URL -> {promise, listeners: Set<fn>, last: progress event | null}
const counters = { workersStarted: 0, modelLoads: 0, requests: 0 };
let workerURL = null;        // set by configure() (index.js)

/** Where worker.js is: next to this module unless configured. */
export function setWorkerURL(url) { workerURL = url; }

function ensureClient() {
  if (client) return client;
  const worker = workerURL
    ? new Worker(workerURL, { type: 'module', name: 'attnlab-widget' })
    : new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'attnlab-widget' });
  // A worker that dies takes its models with it; the next request starts a new one.
  client = connect(worker, { name: 'attnlab widget worker', onFail: () => { models.clear(); client = null; } });
  counters.workersStarted += 1;
  if (typeof document !== 'undefined')
    document.dispatchEvent(new CustomEvent('attnlab-worker-start', { detail: { count: counters.workersStarted } }));
  return client;
}

function call(method, args, onProgress = null) {
  const c = ensureClient();
  counters.requests += 1;
  return c.call(method, args, { onProgress });
}

// One widget's listener that throws must not fail the load the others wait on: it is reported as
// an uncaught error, as any event listener's would be.
function fanOut(listeners, ev) {
  for (const f of listeners) {
    try {
      f(ev);
    } catch (e) {
      queueMicrotask(() => { throw e; });
    }
  }
}

/**
 * The model at `url` (a directory URL string), loaded once in the shared worker.
 * onProgress receives the loader's events ({status, file, loaded, total}); a
 * widget that arrives late gets the last event at once.
 * @returns {Promise<{config, source, url}>}
 */
export function useModel(url, wasm, onProgress) {
  let entry = models.get(url);
  if (!entry) {
    counters.modelLoads += 1;
    entry = { listeners: new Set(), last: null, promise: null };
    models.set(url, entry);
    entry.promise = call('load', [url, wasm], (ev) => {
      entry.last = ev;
      fanOut(entry.listeners, ev);
    }).then((v) => ({ ...v, url }), (e) => { models.delete(url); throw e; });
  }
  if (onProgress) {
    entry.listeners.add(onProgress);
    if (entry.last) onProgress(entry.last);
    entry.promise.finally(() => entry.listeners.delete(onProgress)).catch(() => {});
  }
  return entry.promise;
}

/** Run the model at `url` (loaded with useModel) on text; resolves to a Result (docs/api.md). */
export async function runModel(url, text, options) {
  return resultFromMessage(await call('run', [url, text, options]));
}

/** Tokenize text with the model at `url`: {ids, tokens}. */
export function tokenize(url, text) {
  return call('tokenize', [url, text]);
}

/** An evidence measurement ('edge' | 'tokens') of the model at `url` on text (docs/evidence.md). */
export function evidenceData(url, kind, text, options) {
  return call('evidence', [url, kind, text, options]);
}

/** Data of a lineage demo ('hopfield' | 'linear' | 'sqrtdk'), computed in the worker. */
export function lineageData(wasm, demo, params) {
  return call('lineage', [wasm, demo, params]);
}

/** {workersStarted, modelLoads, requests, workerAlive} */
export function stats() {
  return { ...counters, workerAlive: client !== null };
}
