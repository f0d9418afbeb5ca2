// worker.js — the Web Worker entry: holds one Model and answers the messages
// of worker-client.js. Runs in a browser (dedicated module worker) and in Node
// (worker_threads). Not imported by pages: worker-client.js starts it.
//
// Protocol (structured clone; big buffers are transferred, never copied):
//   client -> worker  {id, op, args}        op: load | tokenize | decode | run |
//                                            generate | memoryUsage | headImportance |
//                                            headRoles | repeatedTokens | dagProfile |
//                                            counterfactual | dispose
//   worker -> client  {id, progress: event}  (load only, any number of times)
//                     {id, ok: true, value}  |  {id, ok: false, error: {name, code, message, rc}}
// Requests are handled one at a time, in order.

import { AttnlabError } from './core/errors.js';
import { loadModel, resultToMessage, counterfactualToMessage } from './model.js';

let model = null;

function errorMessage(e) {
  if (e instanceof AttnlabError) return { name: 'AttnlabError', code: e.code, message: e.message, rc: e.rc };
  return { name: (e && e.name) || 'Error', code: null, message: String((e && e.message) || e), rc: 0 };
}

function needModel() {
  if (!model) throw new AttnlabError('ESTATE', 'no model: send load first');
  return model;
}

// One request -> {value, transfer}
async function handle(op, args, progress) {
  switch (op) {
    case 'load': {
      if (model) needModel().dispose();
      const [source, options] = args;
      model = await loadModel(source, { ...options, onProgress: progress });
      return { value: { config: model.config, source: model.source, engine: model.engine, weights: model.weights } };
    }
    case 'tokenize': {
      const r = needModel().tokenize(...args);
      return { value: r, transfer: [r.ids.buffer] };
    }
    case 'decode':
      return { value: needModel().decode(...args) };
    case 'run': {
      const { data, transfer } = resultToMessage(needModel().run(...args));
      return { value: data, transfer };
    }
    case 'generate': {
      const r = needModel().generate(...args);
      return { value: r, transfer: [r.ids.buffer] };
    }
    case 'memoryUsage':
      return { value: needModel().memoryUsage() };
    // heads (docs/heads.md)
    case 'headImportance':
      return { value: needModel().headImportance(...args) };
    case 'headRoles':
      return { value: needModel().headRoles(...args) };
    case 'repeatedTokens':
      return { value: needModel().repeatedTokens(...args) };
    case 'dagProfile':
      return { value: needModel().dagProfile(...args) };
    case 'counterfactual': {
      const { data, transfer } = counterfactualToMessage(needModel().counterfactual(...args));
      return { value: data, transfer };
    }
    case 'dispose':
      if (model) model.dispose();
      model = null;
      return { value: undefined };
    default:
      throw new AttnlabError('EINVAL', `unknown op '${op}'`);
  }
}

function serve(post) {
  let queue = Promise.resolve();
  return (msg) => {
    queue = queue.then(async () => {
      const { id, op, args } = msg || {};
      try {
        const { value, transfer = [] } = await handle(op, args || [], (event) => post({ id, progress: event }));
        post({ id, ok: true, value }, transfer);
      } catch (e) {
        post({ id, ok: false, error: errorMessage(e) });
      }
    });
  };
}

// No top-level await: bundlers emit workers as classic scripts by default.
if (typeof WorkerGlobalScope !== 'undefined' && typeof self !== 'undefined' && self instanceof WorkerGlobalScope) {
  const onMessage = serve((msg, transfer) => self.postMessage(msg, transfer));
  self.addEventListener('message', (e) => onMessage(e.data));
} else {
  // Node worker_threads: messages wait in parentPort until the listener is attached.
  import('node:worker_threads').then(({ parentPort }) => {
    if (!parentPort) throw new Error('attnlab: worker.js is a worker entry; import attnlab/worker instead');
    const onMessage = serve((msg, transfer) => parentPort.postMessage(msg, transfer));
    parentPort.on('message', onMessage);
  });
}
