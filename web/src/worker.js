// worker.js — the Web Worker entry: holds one Model and answers the messages
// of worker-client.js. Runs in a browser (dedicated module worker) and in Node
// (worker_threads). Not imported by pages: worker-client.js starts it.
//
// Protocol (structured clone; big buffers are transferred, never copied):
//   client -> worker  {id, op, args}        op: load | tokenize | decode | tokenBytes | run |
//                                            generate | memoryUsage | headImportance |
//                                            headRoles | repeatedTokens | dagProfile |
//                                            counterfactual | edgeKnockout | tokenKnockout |
//                                            ablationSemantics | activationPatching | dispose
//   client -> worker  {op: 'cancel', target}  (not queued) stops the evidence computation
//                                            `target` between two of its parts (EABORT)
//   worker -> client  {id, progress: event}  (load only, any number of times)
//                     {id, ok: true, value}  |  {id, ok: false, error: {name, code, message, rc}}
// Requests are handled one at a time, in order.

import { AttnlabError, asAttnlabError } from './core/errors.js';
import { loadModel, resultToMessage, counterfactualToMessage, EVIDENCE_JOB } from './model.js';
import { runStepsAsync } from './evidence.js';

let model = null;
const cancelled = new Set(); // ids of requests a 'cancel' message named

// Every failure crosses as an AttnlabError with its code (asAttnlabError:
// EWASM for a trap, EINTERNAL for an unexpected JS error).
function errorMessage(e) {
  const a = asAttnlabError(e);
  return { name: 'AttnlabError', code: a.code, message: a.message, rc: a.rc };
}

function needModel() {
  if (!model) throw new AttnlabError('ESTATE', 'no model: send load first');
  return model;
}

// One request -> {value, transfer}
async function handle(op, args, progress, id) {
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
    case 'tokenBytes':
      return { value: needModel().tokenBytes(...args) };
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
    // evidence (docs/evidence.md): run in parts, with progress and a cancel message between them
    case 'edgeKnockout':
    case 'tokenKnockout':
    case 'ablationSemantics': {
      const job = needModel()[EVIDENCE_JOB](op, ...args);
      try {
        return { value: job.finish(await runStepsAsync(job.steps, { onProgress: progress, cancelled: () => cancelled.has(id) })) };
      } finally {
        cancelled.delete(id);
      }
    }
    case 'activationPatching':
      return { value: needModel().activationPatching(...args) };
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
    if (msg && msg.op === 'cancel') { // not queued: it must reach a computation that is running
      cancelled.add(msg.target);
      return;
    }
    queue = queue.then(async () => {
      const { id, op, args } = msg || {};
      try {
        const { value, transfer = [] } = await handle(op, args || [], (event) => post({ id, progress: event }), id);
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
