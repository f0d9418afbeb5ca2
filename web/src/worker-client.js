// worker-client.js — 'attnlab/worker': the same API as 'attnlab', with the
// model running in a Web Worker (browsers) or a worker_threads Worker (Node),
// so a page never blocks. Every Model method returns a Promise; progress
// events and errors (AttnlabError with the same codes) cross the boundary;
// the big result buffers (attentions, head averages, logits, q, k, ids) are
// transferred from the worker, not copied. One model per worker:
// dispose() frees the model and terminates its worker.
//
// The names exported at the bottom of this file are the public API of
// 'attnlab/worker' (asserted by tests/js/exports.test.js): index.js's names
// but the lineage demos (loadLineage, Lineage, GLYPH_SIDE, HOPFIELD_CAPACITY),
// which run their own wasm instance and need no worker of a model.

import { AttnlabError } from './core/errors.js';
import { resultFromMessage, counterfactualFromMessage } from './result.js';
import { MEASURES } from './measure-table.js';
import { checkReadOptions, resolveSource, resolveURL } from './sources.js';
import { readField } from './options.js';
import { connect, isWorker } from './ui/protocol.js';

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);

// ---------------------------------------------------------------------------
// Starting a worker (a Web Worker, or a worker_threads Worker in Node)
// ---------------------------------------------------------------------------

// Node workers inherit process.execArgv, but refuse the flags that are per
// process (--max-old-space-size, --expose-gc, --title, --stack-size, ...:
// ERR_WORKER_INVALID_EXEC_ARGV, thrown by the constructor, which lists them);
// --input-type (valid only with -e) would stop a file-based worker. So: the
// parent's flags without --input-type; then without the flags the error
// names; then none at all.
function workerExecArgv(execArgv, refused = []) {
  const bad = new Set(refused);
  return execArgv.filter((a) => !a.startsWith('--input-type') && !bad.has(a) && !bad.has(a.split('=')[0]));
}

function refusedFlags(e) {
  const m = /invalid execArgv flags: (.*)$/.exec(String((e && e.message) || ''));
  return m ? m[1].split(/,\s*/).map((f) => f.trim()).filter(Boolean) : [];
}

async function newNodeWorker(url) {
  const { Worker: NodeWorker } = await import('node:worker_threads');
  let execArgv = workerExecArgv(process.execArgv);
  for (let attempt = 0; ; attempt++) {
    try {
      return new NodeWorker(url, { execArgv });
    } catch (e) {
      if (!e || e.code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || execArgv.length === 0) throw e;
      execArgv = attempt === 0 ? workerExecArgv(execArgv, refusedFlags(e)) : [];
    }
  }
}

async function startWorker(option) {
  if (option !== undefined && option !== null) {
    if (isWorker(option)) return option;
    if (typeof option === 'string' || option instanceof URL) {
      const url = await resolveURL(option, 'worker URL');
      if (typeof Worker !== 'undefined') return new Worker(url, { type: 'module', name: 'attnlab' });
      if (isNode) return newNodeWorker(url);
    }
    throw new AttnlabError('ETYPE', 'options.worker must be a Worker, a worker_threads Worker or the URL of worker.js');
  }
  if (typeof Worker !== 'undefined')
    return new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'attnlab' });
  if (isNode) return newNodeWorker(new URL('./worker.js', import.meta.url));
  throw new AttnlabError('EWASM', 'this environment has no Web Worker; use the main entry \'attnlab\' instead');
}

// ---------------------------------------------------------------------------
// Arguments that cross the boundary
// ---------------------------------------------------------------------------

// The model source as a message: URLs absolute (relative to this document or
// working directory, not to the worker), buffers copied or transferred.
async function sourceMessage(source, transfer, doTransfer) {
  const src = await resolveSource(source); // checks types before anything is posted
  if (source === undefined || source === null) return undefined;
  if (src.kind === 'url') return src.url.href;
  if (typeof FileList !== 'undefined' && source instanceof FileList) return Array.from(source);
  if (Array.isArray(source)) return source;
  const one = (v) => {
    if (v instanceof ArrayBuffer) {
      if (doTransfer) transfer.push(v);
      return v;
    }
    if (ArrayBuffer.isView(v)) {
      const whole = v.byteOffset === 0 && v.byteLength === v.buffer.byteLength;
      if (doTransfer && whole) { transfer.push(v.buffer); return v; }
      return whole ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
    }
    return v; // string or Blob/File
  };
  const out = {};
  for (const [key, v] of Object.entries(src.files)) {
    if (key === 'shards') out.shards = Object.fromEntries(Object.entries(v).map(([n, d]) => [n, one(d)]));
    else out[key] = one(v);
  }
  return out;
}

async function wasmMessage(wasm) {
  if (wasm === undefined || wasm === null) return undefined;
  if (typeof wasm === 'string' || wasm instanceof URL) return (await resolveURL(wasm, 'wasm URL')).href;
  if (typeof Response !== 'undefined' && wasm instanceof Response) return new Uint8Array(await wasm.arrayBuffer());
  return wasm; // WebAssembly.Module and bytes are cloneable; the worker checks the rest
}

// ---------------------------------------------------------------------------
// The model proxy
// ---------------------------------------------------------------------------

// How a measure's answer is decoded where it is not used as it came (its row's `crosses`; result.js).
const FROM_MESSAGE = { counterfactual: counterfactualFromMessage };

/** A measure's arguments as sent: its parameters, without a trailing options left undefined. */
function argsOf(spec, args) {
  const out = spec.args.map((_, k) => args[k]);
  if (spec.args.at(-1) === 'options' && out.at(-1) === undefined) out.pop();
  return out;
}

const NEW = Symbol('attnlab.WorkerModel');
let loadInto; // (model, source, options) -> Promise: the 'load' request of a new WorkerModel
let failInto; // (model, err): reject every pending call with err and terminate the worker

class WorkerModel {
  #client;              // ui/protocol.js's WorkerClient of this model's worker
  #disposed = false;

  constructor(token, worker) {
    if (token !== NEW) throw new AttnlabError('ETYPE', 'use loadModel() from attnlab/worker');
    this.#client = connect(worker, { name: 'attnlab worker' });
    /** {nLayer, nHead, nEmbd, vocabSize, nPositions, headSize, layerNormEpsilon, family, nKvHead, headDim} (after load) */
    this.config = null;
    /** The model's directory URL, or 'buffers' (after load). */
    this.source = null;
    /** {threads, asked, build, backend, note, backendNote} of the model in the worker (after load); see Model#engine. */
    this.engine = null;
    /** 'relaxed-simd' or 'simd128' (after load); see Model#backend. */
    this.backend = null;
    /** 'f32' or 'half' (after load); see Model#weights. */
    this.weights = null;
  }

  #call(method, args, { onProgress = null, signal = null, transfer = [] } = {}) {
    if (this.#disposed) return Promise.reject(new AttnlabError('EDISPOSED', 'the model was disposed'));
    return this.#client.call(method, args, { onProgress: this.#ending(method, onProgress), signal, transfer });
  }

  // A throwing onProgress rejects its call (the protocol). Here it also ends the worker, once that
  // rejection is made: a load cannot be stopped inside the worker any other way, and every call
  // of a model that reports progress is treated alike.
  #ending(method, onProgress) {
    if (!onProgress) return null;
    const what = method === 'load' ? 'load' : `${method} call`;
    return (event) => {
      try {
        onProgress(event);
      } catch (e) {
        queueMicrotask(() => this.#client.fail(new AttnlabError('EDISPOSED', `the ${what} was aborted by its onProgress callback`)));
        throw e;
      }
    };
  }

  static {
    loadInto = (m, source, options) => m.#load(source, options);
    failInto = (m, err) => m.#client.fail(err);
  }

  async #load(source, options) {
    const o = {};
    for (const k of ['wasm', 'wasmMT', 'wasmRelaxed', 'wasmRelaxedMT', 'backend', 'threads', 'threadWorker', 'timeoutMs', 'redirects', 'weights'])
      if (options[k] !== undefined) o[k] = options[k];
    const value = await this.#call('load', [source, o], { transfer: options.transfer, onProgress: options.onProgress });
    this.config = Object.freeze(value.config);
    this.source = value.source;
    this.engine = Object.freeze(value.engine);
    this.backend = this.engine.backend;
    this.weights = value.weights;
  }

  /** True once dispose() was called. */
  get disposed() { return this.#disposed; }

  /** @returns {Promise<{ids: Int32Array, tokens: string[]}>} */
  tokenize(text) { return this.#call('tokenize', [text]); }
  /** @returns {Promise<string>} */
  decode(ids) { return this.#call('decode', [ids]); }
  /** @returns {Promise<Uint8Array[]>} the bytes of each token */
  tokenBytes(ids) { return this.#call('tokenBytes', [ids]); }
  /** @returns {Promise<Result>} */
  async run(input, options) { return resultFromMessage(await this.#call('run', options === undefined ? [input] : [input, options])); }
  /** @returns {Promise<{ids: Int32Array, tokens: string[], text: string}>} */
  generate(input, options) { return this.#call('generate', options === undefined ? [input] : [input, options]); }
  /** @returns {Promise<{wasmBytes: number, heapBytes: number}>} the worker's wasm memory */
  memoryUsage() { return this.#call('memoryUsage', []); }
  /** @returns {Promise<Int32Array>} see Model#repeatedTokens */
  repeatedTokens(n, options) { return this.#call('repeatedTokens', options === undefined ? [n] : [n, options]); }

  // ---- the measures (measure-table.js): the Model methods of that name, as Promises ----
  // A stepwise one takes onProgress and signal: progress events come from the worker, an aborted signal sends
  // the cancel, which stops the worker between two parts (EABORT).

  static {
    for (const [name, spec] of Object.entries(MEASURES)) {
      const n = spec.args.length, fromMessage = FROM_MESSAGE[spec.crosses];
      const method = spec.stepwise
        ? { [name](...args) { return this.#evidenceCall(name, args.slice(0, n - 1), args[n - 1]); } }[name]
        : { [name](...args) {
          const answer = this.#call(name, argsOf(spec, args));
          return fromMessage ? answer.then(fromMessage) : answer;
        } }[name];
      Object.defineProperty(method, 'length', { value: n });
      Object.defineProperty(WorkerModel.prototype, name, { value: method, writable: true, configurable: true });
    }
  }

  #evidenceCall(op, inputs, options) {
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options)))
      return Promise.reject(new AttnlabError('ETYPE', `${op}: options must be an object`));
    // read once, each own field caught (a getter or a Proxy that throws is ETYPE), as the Model reads options
    let keys;
    try { keys = options ? Object.keys(options) : []; } catch (e) {
      return Promise.reject(new AttnlabError('ETYPE', `${op}: the options' keys could not be listed (${e && e.message})`, { cause: e }));
    }
    const rest = Object.create(null); // an own "__proto__" stays a key (the worker refuses it as an unknown option)
    let onProgress, signal;
    try {
      for (const k of keys) {
        const v = readField(`${op}: options`, options, k);
        if (k === 'onProgress') onProgress = v;
        else if (k === 'signal') signal = v;
        else rest[k] = v;
      }
      if (signal !== undefined && signal !== null && typeof signal === 'object') readField(`${op}: options.signal`, signal, 'aborted');
    } catch (e) {
      return Promise.reject(e);
    }
    if (onProgress !== undefined && typeof onProgress !== 'function')
      return Promise.reject(new AttnlabError('ETYPE', `${op}: options.onProgress must be a function`));
    if (signal !== undefined && (signal === null || typeof signal !== 'object' || typeof signal.aborted !== 'boolean'))
      return Promise.reject(new AttnlabError('ETYPE', `${op}: options.signal must be an AbortSignal`));
    if (signal && signal.aborted) return Promise.reject(new AttnlabError('EABORT', `${op}: cancelled before it started`));
    return this.#call(op, [...inputs, rest], { onProgress: onProgress || null, signal: signal || null });
  }

  /** Free the model and terminate its worker. Idempotent. */
  async dispose() {
    if (this.#disposed) return;
    try {
      if (!this.#client.failed) await this.#call('dispose', []);
    } catch {
      // the worker is terminated below either way
    } finally {
      this.#disposed = true;
      await this.#client.terminate(new AttnlabError('EDISPOSED', 'the model was disposed'));
    }
  }
}

/**
 * Load a model in a new worker. Same source and options as 'attnlab' loadModel,
 * plus: worker (a Worker you created, or the URL of worker.js) and transfer
 * (true: ArrayBuffers of a buffer source are transferred to the worker,
 * leaving yours detached; default false: they are copied).
 * @returns {Promise<WorkerModel>}
 */
async function loadModel(source, options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options)))
    throw new AttnlabError('ETYPE', 'loadModel: options must be an object');
  const o = options || {};
  const known = ['onProgress', 'wasm', 'wasmMT', 'wasmRelaxed', 'wasmRelaxedMT', 'backend', 'threads', 'threadWorker', 'weights', 'worker',
                 'transfer', 'signal', 'timeoutMs', 'redirects'];
  for (const k of Object.keys(o))
    if (!known.includes(k)) throw new AttnlabError('EINVAL', `loadModel: unknown option '${k}' (known: ${known.join(', ')})`);
  if (o.onProgress !== undefined && o.onProgress !== null && typeof o.onProgress !== 'function')
    throw new AttnlabError('ETYPE', 'options.onProgress must be a function');
  if (o.transfer !== undefined && typeof o.transfer !== 'boolean')
    throw new AttnlabError('ETYPE', 'options.transfer must be a boolean');
  const { signal, timeoutMs, redirects } = checkReadOptions({ signal: o.signal, timeoutMs: o.timeoutMs, redirects: o.redirects });
  if (signal && signal.aborted) throw new AttnlabError('EABORT', 'the load was aborted before it started (options.signal)');
  const transfer = [];
  const src = await sourceMessage(source, transfer, o.transfer === true);
  const wasm = await wasmMessage(o.wasm);
  const wasmMT = await wasmMessage(o.wasmMT);
  const wasmRelaxed = await wasmMessage(o.wasmRelaxed);
  const wasmRelaxedMT = await wasmMessage(o.wasmRelaxedMT);
  const threadWorker = o.threadWorker === undefined || o.threadWorker === null ? undefined
    : (await resolveURL(o.threadWorker, 'threadWorker URL')).href;
  const model = new WorkerModel(NEW, await startWorker(o.worker));
  // An abort ends the worker: whatever it was reading and all of its memory go with it.
  const onAbort = () => failInto(model, new AttnlabError('EABORT', 'the load was aborted (options.signal); its worker was terminated'));
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal && signal.aborted) onAbort();
    await loadInto(model, src, { wasm, wasmMT, wasmRelaxed, wasmRelaxedMT, backend: o.backend, threads: o.threads, threadWorker, weights: o.weights, transfer, timeoutMs, redirects,
      onProgress: o.onProgress || null });
  } catch (e) {
    await model.dispose();
    throw e;
  } finally {
    if (signal) signal.removeEventListener('abort', onAbort);
  }
  return model;
}

// The public API of 'attnlab/worker' (the names of index.js).
export { loadModel };
export { AttnlabError, ERROR_CODES } from './core/errors.js';
export { dagScore, nullDagScore, asymmetry, headAverage, outerProduct, entropy, displayDo } from './analysis.js';
export { alignTokens, nextTokenDiff } from './counterfactual.js';
