// thread.js — the entry of one helper thread of attnlab-mt.wasm: a Web Worker
// in a browser, a worker_threads Worker in Node. Started by threads.js, never
// imported by pages.
//
// It gets one message {module, memory, pool, tid, stackTop}: the compiled
// module, the model's shared WebAssembly.Memory and its pool. It instantiates
// the module on that memory (the data segments are not written again: the
// module's start function initialises memory once per memory), moves its
// stack pointer to its own stack, says {type: 'ready'}, and runs the pool's
// helper loop (c/src/parallel.c) until the pool is stopped, then says
// {type: 'exit'} and closes. It never runs __wasm_call_ctors: the libc state
// in the shared memory belongs to the model's thread.
// If the helper traps (a bug), it marks the pool failed, so that the model's
// thread stops waiting for it and its run fails with ETHREAD instead of
// hanging, and says {type: 'error', message}.

import { makeImports } from './imports.js';

function start(post, close, data) {
  const { module, memory, pool, tid, stackTop } = data;
  let ex;
  try {
    const env = { memory, onGrow: null, exports: null, canBlock: true, isMainBrowserThread: false };
    const instance = new WebAssembly.Instance(module, makeImports(module, env));
    ex = env.exports = instance.exports;
    ex.stackRestore(stackTop);
  } catch (e) {
    post({ type: 'error', tid, message: `helper ${tid} could not start: ${e && e.message ? e.message : e}` });
    close();
    return;
  }
  post({ type: 'ready', tid });
  try {
    ex.alab_wasm_pool_helper(pool, tid);
  } catch (e) {
    try { ex.alab_wasm_pool_fail(pool); } catch { /* the pool is marked by the model's side too */ }
    post({ type: 'error', tid, message: `helper ${tid} trapped: ${e && e.message ? e.message : e}` });
    close();
    return;
  }
  post({ type: 'exit', tid });
  close();
}

// No top-level await: bundlers emit workers as classic scripts by default.
if (typeof WorkerGlobalScope !== 'undefined' && typeof self !== 'undefined' && self instanceof WorkerGlobalScope) {
  self.addEventListener('message', (e) => start((m) => self.postMessage(m), () => self.close(), e.data), { once: true });
} else {
  import('node:worker_threads').then(({ parentPort }) => {
    if (!parentPort) throw new Error('attnlab: thread.js is a worker entry, started by attnlab itself');
    parentPort.once('message', (data) => start((m) => parentPort.postMessage(m), () => parentPort.close(), data));
  });
}
