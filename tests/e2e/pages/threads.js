// threads.js (test page) — window.threadsTest({api, model, threads, text, runs}): load a model with
// 'attnlab/worker' (api 'worker') or 'attnlab' on this page's main thread (api 'main'), with the
// given threads (and backend) option, run it, and return the engine, crossOriginIsolated and the numbers as plain
// arrays, for tests/e2e/threads.test.js to compare bit for bit.

import { loadModel as loadInWorker } from '/src/worker-client.js';
import { loadModel as loadHere } from '/src/index.js';

async function threadsTest({ api = 'worker', model, threads, backend, text, runs = [{}] }) {
  const load = api === 'worker' ? loadInWorker : loadHere;
  const m = await load(model, { ...(threads === undefined ? {} : { threads }), ...(backend === undefined ? {} : { backend }) });
  try {
    const out = { isolated: globalThis.crossOriginIsolated === true, cores: navigator.hardwareConcurrency, engine: m.engine, runs: [] };
    for (const opts of runs) {
      const r = await m.run(text, opts);
      out.runs.push({ attentions: Array.from(new Uint32Array(r.attentions.buffer, r.attentions.byteOffset, r.attentions.length)),
                      logits: Array.from(new Uint32Array(r.logits.buffer, r.logits.byteOffset, r.logits.length)), top: r.top });
    }
    return out;
  } finally {
    await m.dispose();
  }
}

window.threadsTest = threadsTest;
window.threadsReady = true;
document.getElementById('status').textContent = 'ready';
