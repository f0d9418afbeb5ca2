// threads.js — the helper threads of attnlab-mt.wasm: when they can exist,
// how many by default, and starting and stopping them for one instance.
//
// A model instance of the multithreaded build owns a pool (c/src/parallel.c)
// of n threads: its own (the caller, part 0 of every job) and n-1 helpers,
// each a Web Worker (Node: worker_threads) running thread.js on the same
// shared WebAssembly.Memory. Helpers sleep between runs; dispose() (or the
// garbage collection of an undisposed instance) stops them.
//
// Threads need memory that can be shared with a worker: in a browser only on
// a cross-origin isolated page (served with Cross-Origin-Opener-Policy:
// same-origin and Cross-Origin-Embedder-Policy: require-corp), in Node always.
// Where that is missing, or a helper cannot start, the model runs on one
// thread and says why (model.engine.note).

import { AttnlabError } from './errors.js';
import { C } from './abi.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node) &&
  typeof WorkerGlobalScope === 'undefined' && typeof window === 'undefined';

/** The most threads a default ('auto') asks for: the products of GPT-2 small stop scaling after ~4. */
export const AUTO_MAX_THREADS = 4;
/** The most threads a model may have (ALAB_MAX_THREADS in c/src/parallel.h). */
export const MAX_THREADS = C.MAX_THREADS;

/**
 * Whether this environment can run helper threads: {ok: true} or {ok: false, reason}.
 */
export function threadSupport() {
  if (!isNode && globalThis.crossOriginIsolated !== true) // browsers hide SharedArrayBuffer then
    return { ok: false, reason: 'the page is not cross-origin isolated (serve it with COOP: same-origin and COEP: require-corp)' };
  if (typeof SharedArrayBuffer === 'undefined' || typeof Atomics === 'undefined')
    return { ok: false, reason: 'SharedArrayBuffer is not available here' };
  if (isNode) return { ok: true };
  if (typeof Worker === 'undefined') return { ok: false, reason: 'Web Workers are not available here' };
  return { ok: true };
}

/** Threads for 'auto': in a cross-origin isolated page min(cores, 4); in Node 1 (ask for more explicitly). */
export function autoThreads() {
  if (isNode || !threadSupport().ok) return 1;
  const cores = (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 1;
  return Math.max(1, Math.min(cores, AUTO_MAX_THREADS));
}

/** Whether the calling thread may block in Atomics.wait (not a browser's main thread): libc's view of it. */
export function callerCanBlock() {
  if (isNode) return true;
  return typeof WorkerGlobalScope !== 'undefined';
}

const THREAD_ENTRY = './thread.js';

function spawn(url) {
  if (!isNode) {
    const w = url ? new Worker(url, { type: 'module', name: 'attnlab-thread' })
      : new Worker(new URL('./thread.js', import.meta.url), { type: 'module', name: 'attnlab-thread' });
    return Promise.resolve({
      post: (m) => w.postMessage(m),
      on: (f) => {
        w.addEventListener('message', (e) => f(e.data));
        w.addEventListener('error', (e) => f({ type: 'error', message: e.message || 'the thread script failed to load' }));
        w.addEventListener('messageerror', () => f({ type: 'error', message: 'a message could not be deserialized' }));
      },
      terminate: () => w.terminate(),
    });
  }
  return import('node:worker_threads').then(({ Worker: NodeWorker }) => {
    // Workers inherit process.execArgv; --input-type (valid only with -e) would stop a file worker, and
    // worker_threads refuses V8's wasm flags (--experimental-wasm-relaxed-simd, which Node 20 needs for
    // the relaxed build; --liftoff, --no-wasm-tier-up, ...), which hold for the whole process anyway.
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type') && !/^--(no-)?(experimental-wasm-|wasm-|liftoff)/.test(a));
    // not new URL('./thread.js', import.meta.url) literally: bundlers would copy the unbundled file as an
    // asset for this Node-only branch (the browser branch above is the one they bundle)
    const w = new NodeWorker(url || new URL(THREAD_ENTRY, import.meta.url), { execArgv });
    w.unref(); // sleeping helpers must not keep Node alive
    return {
      post: (m) => w.postMessage(m),
      on: (f) => {
        w.on('message', f);
        w.on('error', (e) => f({ type: 'error', message: e && e.message ? e.message : String(e) }));
        w.on('exit', (code) => f({ type: 'gone', code }));
      },
      terminate: () => w.terminate(),
    };
  });
}

// Helpers of instances that were garbage-collected without dispose().
const orphans = typeof FinalizationRegistry !== 'undefined'
  ? new FinalizationRegistry((workers) => { for (const h of workers) h.terminate(); })
  : null;

// A running worker keeps its listeners alive, so a listener must not reach the
// AttnlabWasm (or the instance could never be collected): it calls sink.fn,
// which is cleared once the helpers are up.
function listen(h, sink) {
  h.on((m) => { if (sink.fn) sink.fn(m); });
}

/**
 * Start n-1 helpers for the AttnlabWasm w (of attnlab-mt.wasm) and wait until
 * all are in their loop. Returns {pool, threads, stop()}. On failure the
 * helpers are stopped and an AttnlabError('ETHREAD') is thrown; the pool (a
 * few hundred KB of the instance's memory) is then left allocated, since a
 * helper that has not yet seen the stop may still read it.
 * After the start, a helper that traps marks the pool failed itself
 * (thread.js), and the run that waited for it fails with ETHREAD.
 * @param {import('./wasm.js').AttnlabWasm} w
 * @param {number} n  threads, the caller included (2..16)
 * @param {{workerURL?: string|URL, timeoutMs?: number}} [o]
 */
export async function startHelpers(w, n, { workerURL, timeoutMs = 30000 } = {}) {
  const pool = w.fn.alab_wasm_pool_create(n);
  if (pool === 0) w.check(w.fn.alab_wasm_last_rc() || -1);
  const workers = [];
  const sink = { fn: null };
  let failure = null;
  const stopAll = (list) => {
    w.fn.alab_wasm_pool_stop(pool);
    for (const h of list) h.terminate();
  };
  try {
    const ready = [];
    for (let tid = 1; tid < n; tid++) {
      const h = await spawn(workerURL);
      workers.push(h);
      ready.push(new Promise((resolve) => {
        const prev = sink.fn;
        sink.fn = (m) => { // one chain of handlers, one per helper
          if (prev) prev(m);
          if (m && m.tid !== undefined && m.tid !== tid) return;
          if (m && m.type === 'ready') resolve();
          else if (m && (m.type === 'error' || m.type === 'gone')) {
            failure ||= m.message || `helper ${tid} exited (code ${m.code})`;
            resolve();
          }
        };
      }));
      listen(h, sink);
      h.post({ module: w.module, memory: w.memory, pool, tid, stackTop: w.fn.alab_wasm_pool_stack_top(pool, tid) >>> 0 });
    }
    const deadline = Date.now() + timeoutMs;
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs); });
    await Promise.race([Promise.all(ready), timeout]);
    clearTimeout(timer);
    while (!failure && w.fn.alab_wasm_pool_attached(pool) < n - 1) {
      if (Date.now() > deadline) { failure = `the helper threads did not start within ${timeoutMs} ms`; break; }
      await new Promise((r) => setTimeout(r, 1));
    }
  } catch (e) {
    failure ||= e && e.message ? e.message : String(e);
  }
  sink.fn = null;
  if (failure) {
    stopAll(workers);
    throw new AttnlabError('ETHREAD', `attnlab could not start ${n - 1} helper thread(s): ${failure}`);
  }
  const token = {};
  if (orphans) orphans.register(w, workers.slice(), token);
  return {
    pool,
    threads: n,
    stop() {
      if (orphans) orphans.unregister(token);
      stopAll(workers);
      workers.length = 0;
    },
  };
}
