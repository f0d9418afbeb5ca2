// ui/protocol.js — the one message protocol between attnlab's workers and the code that
// starts them: the model worker (worker.js ↔ worker-client.js), the widgets' shared worker
// (widget/worker.js ↔ widget/client.js) and the lineage page's workers (lineage/worker.js ↔
// lineage/main.js). Request ids, progress, cancel and errors are defined here once, so the
// three cannot drift apart.
//
// Messages (structured clone; the buffers named as transfer are moved, not copied):
//   client -> worker  {id, method, args}        a request; ids are unique per client
//                     {cancel: id}              not queued: it must reach a handler that is running
//   worker -> client  {id, progress}            any number of times, before the answer
//                     {id, ok: true, value}  |  {id, ok: false, error: {code, message, rc}}
//
// Worker side: serve({method: (args, ctx) => value}, {ordered}). A handler returns its value
// (or reply(value, transfer)), or throws: the error crosses as {code, message, rc} and the
// client rejects with an AttnlabError of that code. ctx.progress(event) reports; ctx.signal is
// aborted by a cancel (its reason an EABORT error), so a handler that works in parts and looks at
// it between them is cancellable, and one that never looks runs to its end.
//
// Client side: connect(worker) -> a WorkerClient; call(method, args, {onProgress, signal,
// transfer}) returns a Promise. When the worker dies every pending and later call rejects with
// EWASM; after terminate() with EDISPOSED (or the error given).

import { AttnlabError, asAttnlabError } from '../core/errors.js';

// ---------------------------------------------------------------------------
// The worker's side
// ---------------------------------------------------------------------------

class Reply {
  constructor(value, transfer) {
    this.value = value;
    this.transfer = transfer;
  }
}

/** A handler's answer whose buffers are moved to the client instead of copied. */
export function reply(value, transfer = []) {
  return new Reply(value, transfer);
}

// asAttnlabError gives every thrown value a code (EWASM for a trap, EINTERNAL for a bug).
function errorToMessage(e) {
  const a = asAttnlabError(e);
  return { code: a.code, message: a.message, rc: a.rc };
}

function errorFromMessage(e) {
  if (e && typeof e.code === 'string' && e.code) return new AttnlabError(e.code, String(e.message), { rc: e.rc ?? 0 });
  return new AttnlabError('EINTERNAL', `${(e && e.name) || 'Error'}: ${(e && e.message) || String(e)}`);
}

async function answer(handlers, post, { id, method, args }, signal, pause) {
  const ctx = { signal, cancelled: () => signal.aborted, progress: (event) => post({ id, progress: event }), pause };
  let out;
  try {
    if (typeof method !== 'string' || !Object.hasOwn(handlers, method) || typeof handlers[method] !== 'function')
      throw new AttnlabError('EINVAL', `unknown method '${method}' (known: ${Object.keys(handlers).join(', ')})`);
    signal.throwIfAborted(); // cancelled while it waited in the queue
    out = await handlers[method](Array.isArray(args) ? args : [], ctx);
  } catch (e) {
    post({ id, ok: false, error: errorToMessage(e) });
    return;
  }
  const r = out instanceof Reply ? out : new Reply(out, []);
  try {
    post({ id, ok: true, value: r.value }, r.transfer);
  } catch (e) {
    // a value that cannot be cloned (DataCloneError -> ETYPE): the caller still gets an answer
    post({ id, ok: false, error: errorToMessage(e) });
  }
}

/**
 * The worker's end as a function of each incoming message, answering through post(msg, transfer).
 * ordered: handle one request at a time, in the order they came (a model is not reentrant);
 * otherwise each starts at once (a download then does not hold back a synchronous computation).
 * preempt: methods answered at once when they arrive while an ordered handler waits in ctx.pause.
 */
export function createServer(handlers, post, { ordered = false, preempt = [] } = {}) {
  const live = new Map(); // id -> AbortController, from arrival until answered
  let queue = Promise.resolve();
  // ctx.pause: a handler that works in parts awaits it between two parts; while one is pending the handler is
  // idle (its state between parts), so a message of `preempt` that arrives then is answered at once instead of
  // after the whole computation. Such a call must be one synchronous piece of work (it ends before the pause does).
  const jump = new Set(preempt);
  let paused = 0;
  const pause = () => {
    paused += 1;
    return new Promise((resolve) => setTimeout(() => { paused -= 1; resolve(); }, 0));
  };
  return (msg) => {
    if (!msg || typeof msg !== 'object') return;
    if ('cancel' in msg) {
      const c = live.get(msg.cancel);
      if (c) c.ac.abort(new AttnlabError('EABORT', `${c.method}: cancelled by the caller`));
      return;
    }
    const ac = new AbortController();
    live.set(msg.id, { ac, method: msg.method });
    // answer() posts every outcome; it can only throw if the port itself is gone, and then no one
    // is listening, but the queue must go on
    const run = () => answer(handlers, post, msg, ac.signal, pause).catch(() => {}).finally(() => live.delete(msg.id));
    if (ordered && !(paused > 0 && jump.has(msg.method))) queue = queue.then(run);
    else run();
  };
}

/**
 * Answer the messages of this worker (a dedicated Web Worker, or a worker_threads Worker in Node)
 * with handlers: {method: (args, ctx) => value | reply(value, transfer) | Promise of either}.
 */
export function serve(handlers, options) {
  if (typeof WorkerGlobalScope !== 'undefined' && typeof self !== 'undefined' && self instanceof WorkerGlobalScope) {
    const onMessage = createServer(handlers, (msg, transfer) => self.postMessage(msg, transfer), options);
    self.addEventListener('message', (e) => onMessage(e.data));
    return;
  }
  // Node: messages wait in parentPort until the listener is attached. No top-level await here or
  // in the entries: bundlers emit workers as classic scripts by default.
  import('node:worker_threads').then(({ parentPort }) => {
    if (!parentPort) throw new Error('attnlab: a worker entry was imported outside a worker; use its client instead');
    const onMessage = createServer(handlers, (msg, transfer) => parentPort.postMessage(msg, transfer), options);
    parentPort.on('message', onMessage);
  });
}

// ---------------------------------------------------------------------------
// The client's side: both kinds of worker behind one small interface
//   {post(msg, transfer), onMessage(f), onFailure(f), terminate(), busy(bool)}
// ---------------------------------------------------------------------------

function webPort(worker) {
  return {
    post: (msg, transfer) => worker.postMessage(msg, transfer),
    onMessage: (f) => worker.addEventListener('message', (e) => f(e.data)),
    onFailure: (f) => {
      worker.addEventListener('error', (e) => {
        e.preventDefault?.(); // reported through the rejected calls, not again as an uncaught error
        f(e.message || 'the worker script failed to load or threw');
      });
      worker.addEventListener('messageerror', () => f('a message from the worker could not be deserialized'));
    },
    terminate: () => worker.terminate(),
    busy: () => {},
  };
}

function nodePort(worker) {
  let terminated = false;
  return {
    // looked up at each call, not bound once, so a test can hold messages back from the worker
    post: (msg, transfer) => worker.postMessage(msg, transfer),
    onMessage: (f) => worker.on('message', f),
    onFailure: (f) => {
      worker.on('error', (e) => f(e && e.message ? e.message : String(e)));
      worker.on('messageerror', () => f('a message from the worker could not be deserialized'));
      worker.on('exit', (code) => { if (!terminated) f(`the worker exited (code ${code})`); });
    },
    terminate: () => { terminated = true; return worker.terminate(); },
    // Keep the process alive only while calls are pending, so a worker that is never terminated
    // does not keep Node running.
    busy: (b) => (b ? worker.ref() : worker.unref()),
  };
}

/** True for a Web Worker or a worker_threads Worker, the two kinds connect() takes. */
export function isWorker(w) {
  if (typeof Worker !== 'undefined' && w instanceof Worker) return true;
  return !!w && typeof w === 'object' && typeof w.postMessage === 'function' && typeof w.on === 'function';
}

function portOf(worker) {
  if (typeof Worker !== 'undefined' && worker instanceof Worker) return webPort(worker);
  if (isWorker(worker)) return nodePort(worker);
  throw new AttnlabError('ETYPE', 'connect: expected a Worker or a worker_threads Worker');
}

export class WorkerClient {
  #port;
  #name;
  #onFail;
  #pending = new Map(); // id -> {resolve, reject, onProgress, unlisten}
  #nextId = 1;
  #failed = null;       // the AttnlabError every call rejects with once the worker is gone

  /**
   * @param {Worker|import('node:worker_threads').Worker} worker
   * @param {{name?: string, onFail?: (err: AttnlabError) => void}} [options]  name: how messages
   *   call the worker; onFail: told once when the worker dies (not after terminate())
   */
  constructor(worker, { name = 'worker', onFail = null } = {}) {
    this.#port = portOf(worker);
    this.#name = name;
    this.#onFail = onFail;
    this.#port.onMessage((msg) => this.#onMessage(msg));
    this.#port.onFailure((why) => this.fail(new AttnlabError('EWASM', `the ${name} failed: ${why}`)));
    this.#port.busy(false);
  }

  /** null while the worker is usable; else the error every call rejects with. */
  get failed() { return this.#failed; }

  /** How many calls wait for their answer. */
  get pending() { return this.#pending.size; }

  /**
   * Ask the worker to run `method` on args. onProgress receives its progress events (one that
   * throws rejects the call with what it threw and cancels it in the worker); aborting signal
   * cancels it in the worker; transfer lists the buffers of args to move rather than copy.
   * @returns {Promise<any>} the handler's value, or an AttnlabError with the handler's code
   */
  call(method, args = [], { onProgress = null, signal = null, transfer = [] } = {}) {
    if (this.#failed) return Promise.reject(this.#failed);
    if (signal && signal.aborted) return Promise.reject(new AttnlabError('EABORT', `${method}: cancelled before it started`));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.#port.post({ id, method, args }, transfer);
      } catch (e) {
        // DataCloneError: a function, a symbol, a class instance ... in the arguments
        reject(new AttnlabError('ETYPE', `${method}: the arguments cannot be sent to the worker (${e.message})`, { cause: e }));
        return;
      }
      let unlisten = null;
      if (signal) {
        const cancel = () => this.#cancel(id);
        signal.addEventListener('abort', cancel, { once: true });
        unlisten = () => signal.removeEventListener('abort', cancel);
      }
      this.#pending.set(id, { resolve, reject, onProgress, unlisten });
      this.#port.busy(true);
    });
  }

  #cancel(id) {
    try {
      this.#port.post({ cancel: id }, []);
    } catch {
      // the worker is gone: nothing runs that could be stopped
    }
  }

  #onMessage(msg) {
    const p = msg && this.#pending.get(msg.id);
    if (!p) return; // an answer to a call already settled (cancelled, or rejected by its onProgress)
    if ('progress' in msg) {
      if (!p.onProgress) return;
      try {
        p.onProgress(msg.progress);
      } catch (e) {
        this.#settle(msg.id);
        this.#cancel(msg.id);
        p.reject(e);
      }
      return;
    }
    this.#settle(msg.id);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(errorFromMessage(msg.error));
  }

  #settle(id) {
    const p = this.#pending.get(id);
    if (p && p.unlisten) p.unlisten();
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#port.busy(false);
  }

  #rejectAll(err) {
    for (const [id, p] of [...this.#pending]) {
      this.#settle(id);
      p.reject(err);
    }
  }

  /** The worker is unusable: reject every pending and later call with err, end it, tell onFail. */
  fail(err) {
    if (this.#failed) return;
    this.#failed = err;
    this.#rejectAll(err);
    this.#port.terminate();
    if (this.#onFail) this.#onFail(err);
  }

  /** End the worker; pending calls reject with err, later ones with the first such error. */
  terminate(err = new AttnlabError('EDISPOSED', `the ${this.#name} was terminated`)) {
    this.#failed ??= err;
    this.#rejectAll(err);
    return this.#port.terminate();
  }
}

/** A WorkerClient for worker (see the class). */
export function connect(worker, options) {
  return new WorkerClient(worker, options);
}
