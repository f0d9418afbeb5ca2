// model.js — the friendly layer: loadModel, Model (tokenize, decode, run,
// generate, dispose) and Result. It hides pointers and numeric codes, checks
// every argument (AttnlabError with a stable .code before anything reaches C),
// and hands out plain JS data.
//
// One WebAssembly instance per model (core/instance.js says why).
//
// Ownership (see docs/api.md):
//   - everything a Model method returns is a copy in JS memory; it stays valid
//     after the next run, after dispose() and after wasm memory grows;
//   - a Result holds one Float32Array of all attentions (L·NH·T·T) and one of
//     the head averages (L·T·T); attention() and headAverage() return views
//     (subarrays) into them — no copy, so writing into a view changes the
//     Result; take .slice() for a private copy.

import { C } from './core/abi.js';
import { AttnlabError } from './core/errors.js';
import { Result } from './result.js';
import { runSteps } from './evidence.js';
import * as measures from './measures.js';
import { MEASURES } from './measure-table.js';
import { repeatedTokens } from './sets.js';
import {
  RUN_OPTIONS, GENERATE_OPTIONS, checkOptions, checkString, textBytes, checkIds, checkLoadOptions, parseRunOptions,
  parseGenerateOptions,
} from './options.js';
import {
  checkReadOptions, defaultWasmURL, defaultWasmMTURL, defaultWasmRelaxedURL, defaultWasmRelaxedMTURL, readModelInto,
  resolveSource, resolveURL,
} from './sources.js';
import { instanceFor } from './core/instance.js';

// Where instanceFor finds the builds: this package's web/dist, or a URL the caller gave.
const WHERE = Object.freeze({ wasm: defaultWasmURL, wasmMT: defaultWasmMTURL, wasmRelaxed: defaultWasmRelaxedURL,
                              wasmRelaxedMT: defaultWasmRelaxedMTURL, resolveURL });

export { Result };

const { MASK_CAUSAL, MASK_WINDOW } = C;

/** The stepwise form of the evidence methods, for worker.js (progress and cancel between parts). */
export const EVIDENCE_JOB = Symbol('attnlab.evidenceJob');

// ---------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------

const NEW = Symbol('attnlab.Model');
let internals;

export class Model {
  #w;        // the AttnlabWasm of this model (null after dispose)
  #h;        // the alab_model handle
  #display = new Map(); // token id -> display string

  #windows; // each layer's own sliding window (0: none), what MASK_CAUSAL means on it
  #m;       // what measures.js sees of this model (its header says what)

  /** The null DAG score of layer l under a mask mode and window: the model's own mask where the mode is causal. */
  #layerNull(l, mode, window, T) {
    const own = mode === MASK_CAUSAL && this.#windows[l] > 0;
    return this.#w.maskNullDagScore(own ? MASK_WINDOW : mode, own ? this.#windows[l] : window, T);
  }

  /** @private use loadModel() */
  constructor(token, w, handle, source, engine = { threads: 1, asked: 1, build: 'attnlab.wasm', backend: 'simd128', note: null, backendNote: null }) {
    if (token !== NEW) throw new AttnlabError('ETYPE', 'use loadModel() to create a Model');
    this.#w = w;
    this.#h = handle;
    /**
     * {threads, asked, build, backend, note, backendNote}: the threads runs are split over, what was asked, the
     * wasm build, its kernels ('relaxed-simd' or 'simd128'), why fewer threads (or null), why not relaxed (or null).
     */
    this.engine = Object.freeze({ ...engine });
    /** 'relaxed-simd' (attnlab-relaxed*.wasm) or 'simd128' (attnlab*.wasm): the kernels this model runs. */
    this.backend = this.engine.backend;
    /** How the weights are held: 'f32', or 'half' (16-bit, converted inside the products; loadModel's weights option). */
    this.weights = w.modelHalf(handle) ? 'half' : 'f32';
    const c = w.config(handle);
    const windows = Array.from({ length: c.n_layer }, (_, l) => w.layerWindow(handle, l));
    /**
     * {nLayer, nHead, nEmbd, vocabSize, nPositions, headSize, layerNormEpsilon, family, nKvHead, headDim, layerMasks}:
     * family is config.json's model_type; nKvHead the key/value heads (< nHead with grouped-query
     * attention); headDim = headSize, the size of one head (not always nEmbd / nHead: Qwen3);
     * layerMasks the mask each layer runs under by default, 'causal' or 'window:W' (a causal mask within a
     * sliding window of W keys, from config.json: Mistral's sliding_window, Gemma 3's sliding layers). The
     * run option mask 'causal' means these; 'window:W' with W >= T removes a window.
     */
    this.config = Object.freeze({
      nLayer: c.n_layer, nHead: c.n_head, nEmbd: c.n_embd, vocabSize: c.vocab_size,
      nPositions: c.n_positions, headSize: c.head_dim, layerNormEpsilon: c.layer_norm_epsilon,
      family: w.modelFamily(handle), nKvHead: c.n_kv_head, headDim: c.head_dim,
      layerMasks: Object.freeze(windows.map((W) => (W > 0 ? `window:${W}` : 'causal'))),
    });
    this.#windows = windows;
    const self = this;
    this.#m = Object.freeze({
      get w() { return self.#live(); },
      get h() { return self.#h; },
      get config() { return self.config; },
      token: (id) => this.#token(id),
      idsOf: (input) => this.#idsOf(input),
      decode: (ids) => this.decode(ids),
      run: (input, options) => this.run(input, options),
      layerNull: (l, mode, window, T) => this.#layerNull(l, mode, window, T),
      headOutCache: new Map(), // the head outputs of a few reference texts (measures.js headOutputs)
    });
    /** Where the model came from: its directory URL, or 'buffers'. */
    this.source = source;
  }

  static {
    internals = (m) => ({ wasm: m.#w, handle: m.#h });
  }

  /** True once dispose() was called. */
  get disposed() { return this.#w === null; }

  #live() {
    if (this.#w === null) throw new AttnlabError('EDISPOSED', 'the model was disposed');
    return this.#w;
  }

  #token(id) {
    let s = this.#display.get(id);
    if (s === undefined) {
      s = this.#w.tokenDisplay(this.#h, id);
      this.#display.set(id, s);
    }
    return s;
  }

  // text (string) or ids (array) -> Int32Array of ids
  #idsOf(input) {
    const w = this.#live();
    if (typeof input === 'string') return w.encode(this.#h, textBytes(input));
    if (Array.isArray(input) || ArrayBuffer.isView(input)) return checkIds(input, this.config.vocabSize);
    throw new AttnlabError('ETYPE', `input must be a string or an array of token ids, got ${input === null ? 'null' : typeof input}`);
  }

  /**
   * GPT-2 BPE tokens of text.
   * @returns {{ids: Int32Array, tokens: string[]}} tokens are display strings (Ġ shown as a space)
   */
  tokenize(text) {
    this.#live();
    const ids = this.#idsOf(checkString('text', text));
    return { ids, tokens: Array.from(ids, (id) => this.#token(id)) };
  }

  /**
   * The bytes of each token (byte-level BPE: a token may hold part of a UTF-8
   * character, which its display string shows as U+FFFD).
   * @returns {Uint8Array[]}
   */
  tokenBytes(ids) {
    const w = this.#live();
    return Array.from(checkIds(ids, this.config.vocabSize), (id) => w.tokenBytes(this.#h, id).slice());
  }

  /** The text of token ids (invalid UTF-8 shown as U+FFFD). */
  decode(ids) {
    const w = this.#live();
    return w.decode(this.#h, checkIds(ids, this.config.vocabSize));
  }

  /**
   * Run the model on a text (or token ids), with interventions, and capture.
   * @param {string|ArrayLike<number>} input
   * @param {object} [options] {interventions, ablate, mask, scale, captureQK, topK}
   * @returns {Result}
   */
  run(input, options) {
    const w = this.#live();
    const o = checkOptions('run', options, RUN_OPTIONS);
    const ids = this.#idsOf(input);
    const T = ids.length;
    const cfg = this.config, L = cfg.nLayer;
    const { interventions, mask, scale, capture, topK } = parseRunOptions(o, cfg, T);
    w.forward(this.#h, ids, {
      interventions, ...mask, scale,
      captureLayer: capture ? capture.layer : -1, captureHead: capture ? capture.head : -1,
    });

    const { dagScores, headAverages, layerDagScores } = w.resultSummary(this.#h);
    const top = topK > 0 ? w.resultTopk(this.#h, topK) : { ids: [], probs: [] };
    // the null of the mask each layer ran under (uniform attention over what it lets a row see)
    // (causal: the layer's own mask, within its sliding window if config.json gives one)
    const layerNullDagScores = Array.from({ length: L }, (_, l) => (mask.layerMask
      ? this.#layerNull(l, mask.layerMask[l], mask.layerWindow[l], T) : this.#layerNull(l, mask.mask, mask.window, T)));
    return new Result({
      model: cfg,
      T,
      ids,
      tokens: Array.from(ids, (id) => this.#token(id)),
      attentions: w.resultAttention(this.#h),
      headAverages,
      logits: w.resultLogits(this.#h),
      top: Array.from(top.ids, (id, i) => ({ id, token: this.#token(id), prob: top.probs[i] })),
      dagScore: layerDagScores[L - 1],
      dagScores,
      layerDagScores,
      nullDagScore: layerNullDagScores[L - 1],
      layerNullDagScores,
      captureQK: capture,
      q: capture ? w.resultQ(this.#h) : null,
      k: capture ? w.resultK(this.#h) : null,
    });
  }

  /**
   * Continue a text: maxTokens new tokens, greedy (temperature 0, the default)
   * or sampled with a seeded RNG (same seed, same text).
   * @returns {{ids: Int32Array, tokens: string[], text: string}} the new tokens only
   */
  generate(input, options) {
    const w = this.#live();
    const o = checkOptions('generate', options, GENERATE_OPTIONS);
    const ids = this.#idsOf(input);
    const { maxNew, temperature, topK, seed } = parseGenerateOptions(o);
    // The context is checked before anything is allocated for the new ids
    // (maxTokens 2^28 would otherwise grow wasm memory by 1 GB first).
    const nPos = this.config.nPositions;
    if (ids.length + maxNew > nPos)
      throw new AttnlabError('ETOOLONG', `${ids.length} tokens + ${maxNew} new exceed the model's context of ${nPos}`);
    const out = w.generate(this.#h, ids, { maxNew, temperature, topK, rngState: seed });
    return { ids: out.ids, tokens: Array.from(out.ids, (id) => this.#token(id)), text: w.decode(this.#h, out.ids) };
  }

  /** {wasmBytes: size of this model's wasm memory, heapBytes: bytes malloc'ed in it}. */
  memoryUsage() {
    const w = this.#live();
    return { wasmBytes: w.memoryBytes(), heapBytes: w.heapInUse() };
  }

  /** Free the model and its wasm instance. Idempotent; later calls throw EDISPOSED. */
  dispose() {
    if (this.#w === null) return;
    const w = this.#w;
    this.#w = null;
    this.#display.clear();
    try {
      w.modelFree(this.#h);
    } catch {
      // a trapped instance (EWASM) cannot free; it is dropped whole anyway
    }
    w.stopThreads(); // the helper workers end with their model
    this.#h = 0;
  }

  // =========================================================================
  // The measures (measure-table.js): one method per row, installed below. Each checks its arguments and calls
  // the body of its name in measures.js with this model's view; a stepwise one runs its parts to the end here,
  // with options.onProgress({done, total}) after each and options.signal looked at between them (EABORT).
  // Each runs the model itself; Results returned earlier by run() are copies and stay valid. What each takes
  // and returns: docs/api.md, types/index.d.ts.
  // =========================================================================

  static {
    for (const [name, spec] of Object.entries(MEASURES)) {
      const body = measures[name];
      const method = spec.stepwise
        ? { [name](...args) { return this.#runJob(body(this.#m, ...args)); } }[name]
        : { [name](...args) { return body(this.#m, ...args); } }[name];
      Object.defineProperty(method, 'length', { value: spec.args.length });
      Object.defineProperty(Model.prototype, name, { value: method, writable: true, configurable: true });
    }
  }

  /** For worker.js: the job of a stepwise measure ({steps, progress, finish}), its options without callbacks. */
  [EVIDENCE_JOB](name, ...args) {
    if (!Object.hasOwn(MEASURES, name) || !MEASURES[name].stepwise)
      throw new AttnlabError('EINVAL', `unknown evidence computation '${name}'`);
    return measures[name](this.#m, ...args);
  }

  #runJob(job) {
    return job.finish(runSteps(job.steps, { ...job.progress, alive: () => this.#w !== null }));
  }

  /**
   * The inputs of a set: 'heldout' (held-out sentences of the built-in model's corpus), 'repeated' (random
   * tokens repeated twice; GPT-2 vocabulary ids), or a list of strings / id arrays. Each becomes ids, cut
   * at n_positions; inputs of fewer than 2 tokens are an error naming their index.
   */
  evidenceSet(set, options) { return measures.evidenceSet(this.#m, set, options); }

  /**
   * A seeded random token sequence r of length n, repeated: r ++ r (2n ids),
   * the input of the induction score. Ids are uniform in [lo, hi) (default
   * [0, V - 1): every id but the last, GPT-2's <|endoftext|>), drawn with
   * mulberry32(seed), so the same seed gives the same ids everywhere.
   * @param {number} n length of r, 2 ≤ n ≤ floor(n_positions / 2)
   * @param {{seed?: number, lo?: number, hi?: number}} [options]
   * @returns {Int32Array}
   */
  repeatedTokens(n, options) {
    this.#live();
    return repeatedTokens(n, options, this.config);
  }
}

// The tokenizer and config files a gpt2-family model was loaded from (copies: a caller's buffers stay theirs), for
// twins.js, which builds a model of the same shapes from them. Kept for gpt2 only (about 1.5 MB for GPT-2's
// vocab.json + merges.txt); a model of another family keeps nothing here.
const loadedFiles = new WeakMap();

/** The {config, vocab, merges} (or {config, tokenizer, tokenizerConfig}) bytes a gpt2-family model was loaded from; null for other families. */
export function modelFiles(model) {
  return loadedFiles.get(model) ?? null;
}

/** For tests: the AttnlabWasm and handle behind a Model (wasm is null after dispose). */
export function modelInternals(model) {
  return internals(model);
}

// ---------------------------------------------------------------------------
// loadModel
// ---------------------------------------------------------------------------

/**
 * Load a GPT-2-family model into its own WebAssembly instance.
 * @param {undefined|null|string|URL|object|FileList|File[]} [source] see sources.js
 * @param {{onProgress?: (e: object) => void, wasm?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          threads?: 'auto'|number, wasmMT?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          wasmRelaxed?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          wasmRelaxedMT?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          backend?: 'auto'|'relaxed-simd'|'simd128',
 *          threadWorker?: string|URL, signal?: AbortSignal, timeoutMs?: number,
 *          redirects?: 'same-origin'|'any'|'none'}} [options]
 *   backend: 'auto' (default) runs the relaxed-SIMD build (attnlab-relaxed.wasm, -mt: every multiply-add
 *   of the kernels one f32x4.relaxed_madd) where WebAssembly.validate accepts a relaxed instruction, else
 *   the SIMD128 build; 'relaxed-simd' or 'simd128' asks for one (EWASM where relaxed SIMD does not run).
 *   wasmRelaxed, wasmRelaxedMT: where the relaxed builds are. model.backend says which runs.
 *   signal: aborts the load (EABORT); timeoutMs: a download that goes this long without a byte is
 *   ended (ETIMEDOUT; default 30000, 0 for none); redirects: which HTTP redirects are followed
 *   (default 'same-origin': only within the origin of the URL given). See sources.js.
 *   threads: split runs over this many threads ('auto', the default: min(cores, 4) on a cross-origin
 *   isolated page, 1 elsewhere and in Node); wasmMT: where attnlab-mt.wasm is; threadWorker: the URL
 *   of core/thread.js where a bundler cannot find it. Numbers are bit for bit the same either way.
 * @returns {Promise<Model>}
 */
export async function loadModel(source, options) {
  const { onProgress, wasm, threads, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threadWorker, signal, timeoutMs, redirects,
          weights } = checkLoadOptions(options);
  const readOpts = checkReadOptions({ signal, timeoutMs, redirects });
  const emit = onProgress ? (e) => onProgress(e) : () => {};
  const src = await resolveSource(source);
  const t0 = performance.now();
  const { w, engine } = await instanceFor({ wasm, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threads, threadWorker }, WHERE);
  const t1 = performance.now();
  let files;
  try {
    files = await readModelInto(w, src, emit, readOpts);
  } catch (e) {
    w.stopThreads();
    throw e;
  }
  const t2 = performance.now();
  let handle;
  try {
    // GPT-2's four files take the path they always took; any other folder the general loader
    // (shards, index, tokenizer.json). Both own the weight buffers from here.
    const legacy = weights === 'auto' && files.shards.length === 1 && !files.index && !files.tokenizer && files.vocab && files.merges;
    handle = legacy ? w.loadModelFromHeap(files, files.stPtr, files.stLen) : w.loadModelFiles(files, files.shards, { weights });
  } catch (e) {
    w.stopThreads();
    throw e;
  }
  const t3 = performance.now();
  let model;
  try {
    model = new Model(NEW, w, handle, files.name, engine);
    if (model.config.family === 'gpt2') {
      const kept = {};
      for (const k of ['config', 'vocab', 'merges', 'tokenizer', 'tokenizerConfig']) if (files[k]) kept[k] = files[k].slice();
      loadedFiles.set(model, Object.freeze(kept));
    }
  } catch (e) {
    w.modelFree(handle);
    w.stopThreads();
    throw e;
  }
  try {
    // where the load's time went (the page's benchmark reports it): the engine's wasm compiled and
    // started (0 when an earlier load did it), the files read into wasm memory, the model built from them
    const ms = (x) => Math.round(x * 10) / 10;
    emit({ status: 'ready', file: null, timing: { wasmMs: ms(t1 - t0), readMs: ms(t2 - t1), buildMs: ms(t3 - t2) } });
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}
