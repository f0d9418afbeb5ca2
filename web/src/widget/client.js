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

import { AttnlabError } from '../core/errors.js';
import { resultFromMessage } from '../model.js';

let worker = null;
let nextId = 1;
const pending = new Map();   // id -> {resolve, reject, onProgress}
const models = new Map();    // model URL -> {promise, listeners: Set<fn>, last: progress event | null}
const counters = { workersStarted: 0, modelLoads: 0, requests: 0 };
let workerURL = null;        // set by configure() (index.js)

/** Where worker.js is: next to this module unless configured. */
export function setWorkerURL(url) { workerURL = url; }

function fail(err) {
  for (const p of pending.values()) p.reject(err);
  pending.clear();
  models.clear();
  worker = null;              // the next request starts a new worker
}

function ensureWorker() {
  if (worker) return worker;
  worker = workerURL
    ? new Worker(workerURL, { type: 'module', name: 'attnlab-widget' })
    : new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'attnlab-widget' });
  counters.workersStarted += 1;
  worker.addEventListener('message', (e) => {
    const msg = e.data;
    const p = msg && pending.get(msg.id);
    if (!p) return;
    if ('progress' in msg) { if (p.onProgress) p.onProgress(msg.progress); return; }
    pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.value);
    else {
      const er = msg.error || {};
      p.reject(er.code ? new AttnlabError(er.code, er.message) : Object.assign(new Error(er.message), { name: er.name }));
    }
  });
  worker.addEventListener('error', (e) => {
    e.preventDefault?.();
    fail(new AttnlabError('EWASM', `the attnlab widget worker failed: ${e.message || 'it could not be started'}`));
  });
  if (typeof document !== 'undefined')
    document.dispatchEvent(new CustomEvent('attnlab-worker-start', { detail: { count: counters.workersStarted } }));
  return worker;
}

function call(op, args, onProgress = null) {
  const w = ensureWorker();
  const id = nextId++;
  counters.requests += 1;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    w.postMessage({ id, op, args });
  });
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
      for (const f of entry.listeners) f(ev);
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
  return { ...counters, workerAlive: worker !== null };
}
