// model.js — the friendly layer: loadModel, Model (tokenize, decode, run,
// generate, dispose) and Result. It hides pointers and numeric codes, checks
// every argument (AttnlabError with a stable .code before anything reaches C),
// and hands out plain JS data.
//
// One WebAssembly instance per model. The compiled WebAssembly.Module is
// cached per wasm URL, so a second model costs an instantiation (~1 ms), not
// a compile. Why per model and not one instance shared by all models:
//   - wasm memory can grow but never shrink; with a shared instance, loading
//     distilgpt2 once would keep its ~400 MB for the life of the page. With an
//     instance per model, dispose() drops the instance and the engine frees
//     all of its memory;
//   - a model that is dropped without dispose() is garbage-collected with its
//     instance, so forgetting dispose() cannot leak;
//   - a trap (EWASM) poisons only its own model;
//   - it is what the worker does anyway (one model per worker).
// The cost is 16 MB of initial wasm memory per live model.
//
// Ownership (see docs/api.md):
//   - everything a Model method returns is a copy in JS memory; it stays valid
//     after the next run, after dispose() and after wasm memory grows;
//   - a Result holds one Float32Array of all attentions (L·NH·T·T) and one of
//     the head averages (L·T·T); attention() and headAverage() return views
//     (subarrays) into them — no copy, so writing into a view changes the
//     Result; take .slice() for a private copy.

import { instantiateAttnlab } from './core/wasm.js';
import { C, INTERVENTION_KINDS, INTERVENTION_SHAPES, MASKS } from './core/abi.js';
import { AttnlabError } from './core/errors.js';
import { mulberry32 } from './core/rng.js';
import { checkIndex, checkFinite } from './analysis.js';
import { alignTokens, attentionDiff, nextTokenDiff } from './counterfactual.js';
import { Result } from './result.js';
import * as evidence from './evidence.js';
import * as circuits from './circuits.js';
import { REFERENCE_TEXT } from './evidence-reference.js';
import { EVIDENCE_SETS } from './evidence-sets.js';
import {
  checkReadOptions, defaultWasmURL, defaultWasmMTURL, defaultWasmRelaxedURL, defaultWasmRelaxedMTURL, readModelInto,
  resolveSource, resolveURL,
} from './sources.js';
import { autoThreads, threadSupport, MAX_THREADS } from './core/threads.js';
import { BACKENDS, BUILDS, relaxedSimdSupported } from './core/backend.js';

/** Limits of c/include/attnlab.h that the JS side checks first. */
export const MAX_TEXT_BYTES = C.MAX_TEXT_BYTES;
const INT_MAX = 2 ** 31 - 1;

const { ALL_HEADS, ABLATE, MASK_CAUSAL, MASK_WINDOW } = C;
const KIND = INTERVENTION_KINDS;
// Fields each kind takes (besides kind), from its class in attention.c's IV_KINDS: do-operations act on
// one cell, weight edits (interventions on a mechanism) on a whole head. Every non-weight kind accepts
// row/col/lambda whether it uses them or not, so a caller may switch kinds without rebuilding the object.
const DO_FIELDS = ['layer', 'head', 'row', 'col', 'lambda'];
const KIND_FIELDS = Object.fromEntries(Object.entries(INTERVENTION_SHAPES).map(([kind, { on, param }]) =>
  [kind, on === 'weights' ? ['layer', 'head', ...(param === 'alpha' ? ['alpha'] : [])] : DO_FIELDS]));
const MASK = MASKS;
/** The stepwise form of the evidence methods, for worker.js (progress and cancel between parts). */
/**
 * Induction pairs for activation patching, derived from the repeated-token set (GPT-2 ids): sequence k's
 * block r (10 ids) is followed by its first 5 ids, so the next token is r[5] by copying (clean); the
 * corrupted input has r[5] in the first copy replaced by x = sequence k+1's r[5] (the last takes the
 * first's), so copying predicts x. Same length (15), one-token answers [r[5], x]. Only for a vocabulary
 * that holds every id of the set.
 */
export function inductionPairs(vocabSize) {
  const seqs = EVIDENCE_SETS.repeated.sequences, B = EVIDENCE_SETS.repeated.block, K = 5;
  if (seqs.some((q) => q.some((id) => id >= vocabSize)))
    throw new AttnlabError('ERANGE', `the induction pairs are GPT-2 ids; this model's vocabulary has ${vocabSize}`);
  return seqs.map((q, k) => {
    const r = q.slice(0, B), x = seqs[(k + 1) % seqs.length][K];
    const alt = r.slice();
    alt[K] = x === r[K] ? seqs[(k + 2) % seqs.length][K] : x;
    return [[...r, ...r.slice(0, K)], [...alt, ...r.slice(0, K)], [r[K], alt[K]]];
  });
}

/**
 * Induction pairs that move the previous token instead of the answer: clean = r ++ r[0..K) (the next token is
 * r[K] by copying); the corrupted input swaps r[K-1] and r[M-1] in the first copy (M = 8), so the token the
 * second copy ends on is followed by r[M] there and copying predicts r[M]. The tokens the copy reads (r[K] and
 * r[M]) stay where they were; only which token precedes them changes — what a previous-token head writes and an
 * induction head's keys read (K-composition). Answers [r[K], r[M]]; a sequence with r[K] = r[M] is left out.
 */
export function inductionPrevPairs(vocabSize) {
  const seqs = EVIDENCE_SETS.repeated.sequences, B = EVIDENCE_SETS.repeated.block, K = 5, M = 8;
  if (seqs.some((q) => q.some((id) => id >= vocabSize)))
    throw new AttnlabError('ERANGE', `the induction pairs are GPT-2 ids; this model's vocabulary has ${vocabSize}`);
  return seqs.filter((q) => q[K] !== q[M] && q[K - 1] !== q[M - 1]).map((q) => {
    const r = q.slice(0, B), alt = r.slice();
    alt[K - 1] = r[M - 1];
    alt[M - 1] = r[K - 1];
    return [[...r, ...r.slice(0, K)], [...alt, ...r.slice(0, K)], [r[K], r[M]]];
  });
}

export { Result };

export const EVIDENCE_JOB = Symbol('attnlab.evidenceJob');
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------
// The wasm module: compiled once per location, instantiated per model
// ---------------------------------------------------------------------------

const moduleCache = new Map(); // href -> Promise<WebAssembly.Module>

async function newInstance(wasm, { mt = false, threads = 1, threadWorker, what = mt ? 'options.wasmMT' : 'options.wasm' } = {}) {
  let src = wasm ?? (mt ? defaultWasmMTURL() : defaultWasmURL());
  let key = null;
  if (typeof src === 'string' || src instanceof URL) {
    src = await resolveURL(src, 'wasm URL');
    key = src.href;
  } else if (!(src instanceof WebAssembly.Module || src instanceof ArrayBuffer ||
               (ArrayBuffer.isView(src) && !(src instanceof DataView)) ||
               (typeof Response !== 'undefined' && src instanceof Response))) {
    throw new AttnlabError('ETYPE', `${what} must be a URL, a string, bytes, a Response or a WebAssembly.Module`);
  }
  const opts = { threads, threadWorker };
  const cached = key && moduleCache.get(key);
  if (cached) return instantiateAttnlab(await cached, opts);
  const p = instantiateAttnlab(src, opts);
  if (key) {
    const mp = p.then((w) => w.module);
    moduleCache.set(key, mp);
    mp.catch(() => moduleCache.delete(key));
  }
  return p;
}

/**
 * The instance for loadModel's backend and thread options. The backend: 'auto'
 * takes the relaxed-SIMD builds where this engine validates a relaxed
 * instruction (core/backend.js) and their location is known (wasmRelaxed and
 * wasmRelaxedMT, each defaulting to the package's own unless the caller moved
 * its SIMD128 twin with wasm or wasmMT), else the SIMD128 builds;
 * if the relaxed build cannot start, 'auto' falls back to SIMD128 and says why
 * (engine.backendNote); a backend asked for by name is that one or an error.
 * The threads: the backend's multithreaded build with helper threads where they
 * are asked for ('auto' or a number > 1) and this environment can run them,
 * else its one-thread build. Returns {w, engine}; engine says what was asked,
 * what runs and, when that is fewer threads or not the relaxed build, why.
 */
async function instanceFor({ wasm, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threads, threadWorker }) {
  const askedBackend = backend === undefined || backend === null ? 'auto' : backend;
  if (askedBackend !== 'auto' && !BACKENDS.includes(askedBackend))
    throw new AttnlabError(typeof askedBackend === 'string' ? 'EINVAL' : 'ETYPE',
                           `options.backend must be 'auto', ${BACKENDS.map((b) => `'${b}'`).join(' or ')}, got ${String(askedBackend)}`);
  let backendNote = null;
  if (askedBackend === 'relaxed-simd' && !relaxedSimdSupported())
    throw new AttnlabError('EWASM', 'options.backend: this engine does not run relaxed SIMD (WebAssembly.validate refused ' +
                           'f32x4.relaxed_madd; Node 20 needs --experimental-wasm-relaxed-simd)');
  if (askedBackend === 'auto') {
    if (!relaxedSimdSupported()) backendNote = 'this engine does not run relaxed SIMD (WebAssembly.validate refused f32x4.relaxed_madd)';
    else if (wasm != null && wasmRelaxed == null) backendNote = 'options.wasm was given without options.wasmRelaxed';
    else if (wasmMT != null && wasmRelaxedMT == null) backendNote = 'options.wasmMT was given without options.wasmRelaxedMT';
    else {
      const relaxed = { wasm: wasmRelaxed ?? defaultWasmRelaxedURL(), wasmMT: wasmRelaxedMT ?? defaultWasmRelaxedMTURL() };
      try {
        return await threadedInstance({ ...relaxed, threads, threadWorker, relaxedNames: true });
      } catch (e) {
        if (!(e instanceof AttnlabError) || e.code === 'ETYPE' || e.code === 'ERANGE') throw e;
        backendNote = `the relaxed-SIMD build could not start (${e.code}: ${e.message}); running the SIMD128 build`;
      }
    }
  } else if (askedBackend === 'relaxed-simd') {
    return threadedInstance({ wasm: wasmRelaxed ?? defaultWasmRelaxedURL(), wasmMT: wasmRelaxedMT ?? defaultWasmRelaxedMTURL(),
                              threads, threadWorker, relaxedNames: true });
  }
  const r = await threadedInstance({ wasm, wasmMT, threads, threadWorker, relaxedNames: false });
  r.engine.backendNote = backendNote;
  return r;
}

// One backend's builds: its multithreaded one where threads can run, else its one-thread one.
async function threadedInstance({ wasm, wasmMT, threads, threadWorker, relaxedNames }) {
  const names = relaxedNames ? { st: 'options.wasmRelaxed', mt: 'options.wasmRelaxedMT' } : { st: 'options.wasm', mt: 'options.wasmMT' };
  const asked = threads === undefined || threads === null ? 'auto' : threads;
  if (asked !== 'auto' && (!Number.isInteger(asked) || asked < 1 || asked > MAX_THREADS))
    throw new AttnlabError(typeof asked === 'number' ? 'ERANGE' : 'ETYPE',
                           `options.threads must be 'auto' or an integer in [1, ${MAX_THREADS}], got ${String(asked)}`);
  let n = asked === 'auto' ? autoThreads() : asked;
  let note = null;
  const support = threadSupport();
  if (n > 1 && !support.ok) { note = support.reason; n = 1; }
  if (asked === 'auto' && n === 1 && !note) {
    if (!support.ok) note = support.reason;
    else if (typeof window === 'undefined' && typeof WorkerGlobalScope === 'undefined') note = "'auto' is one thread in Node: pass threads: n for more";
    else note = 'this machine reports one core';
  }
  if (n > 1) {
    try {
      const w = await newInstance(wasmMT, { mt: true, threads: n, threadWorker, what: names.mt });
      return { w, engine: engineOf(w, { threads: w.threads(), asked, mt: true, note: null }) };
    } catch (e) {
      if (!(e instanceof AttnlabError) || e.code === 'ETYPE') throw e;
      note = `the multithreaded build could not start (${e.code}: ${e.message}); running on one thread`;
    }
  }
  const w = await newInstance(wasm, { what: names.st });
  return { w, engine: engineOf(w, { threads: 1, asked, mt: false, note }) };
}

// model.engine: the backend as the running module reports it (alab_wasm_simd), and its build's file name.
function engineOf(w, { threads, asked, mt, note }) {
  const backend = w.backend();
  const build = (BUILDS[backend] || BUILDS.simd128)[mt ? 1 : 0];
  return { threads, asked, build, backend, note, backendNote: null };
}

// ---------------------------------------------------------------------------
// Argument checks
// ---------------------------------------------------------------------------

// Finite inputs must give finite scores (c/include/attnlab.h: ALAB_MAX_SOFT_LAMBDA, ALAB_MAX_SCALE; the C
// also bounds the product of one head's alphas). Checked here too, so a double that would overflow a float
// is ERANGE, not ENAN.
const { MAX_SOFT_LAMBDA, MAX_SCALE } = C;
function checkMagnitude(name, v, max) {
  const x = checkFinite(name, v);
  if (Math.abs(x) > max) throw new AttnlabError('ERANGE', `${name} = ${x} is outside [-${max}, ${max}]`);
  return x;
}

function checkOptions(where, options, keys) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options))
    throw new AttnlabError('ETYPE', `${where}: options must be an object`);
  for (const k of Object.keys(options))
    if (!keys.includes(k))
      throw new AttnlabError('EINVAL', `${where}: unknown option '${k}' (known: ${keys.join(', ')})`);
  return options;
}

function checkString(name, v) {
  if (typeof v !== 'string') throw new AttnlabError('ETYPE', `${name} must be a string, got ${v === null ? 'null' : typeof v}`);
  return v;
}

// UTF-8 bytes of text, ELIMIT above the C limit.
function textBytes(text) {
  checkString('text', text);
  if (text.length > MAX_TEXT_BYTES) // UTF-8 never has fewer bytes than UTF-16 code units
    throw new AttnlabError('ELIMIT', `text of ${text.length} characters exceeds the limit of ${MAX_TEXT_BYTES} bytes`);
  const bytes = utf8.encode(text);
  if (bytes.length > MAX_TEXT_BYTES)
    throw new AttnlabError('ELIMIT', `text of ${bytes.length} UTF-8 bytes exceeds the limit of ${MAX_TEXT_BYTES}`);
  return bytes;
}

// An array of token ids as an Int32Array, each checked against [0, V).
function checkIds(ids, V) {
  if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView))))
    throw new AttnlabError('ETYPE', 'token ids must be an array or a typed array of integers');
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = checkIndex(`ids[${i}]`, ids[i], 0, V - 1);
  return out;
}

function checkObject(name, v, keys) {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new AttnlabError('ETYPE', `${name} must be an object`);
  for (const k of Object.keys(v))
    if (!keys.includes(k)) throw new AttnlabError('EINVAL', `${name}: unknown field '${k}' (known: ${keys.join(', ')})`);
  return v;
}

// head: an index or 'all'
function checkHead(name, v, H) {
  if (v === 'all') return ALL_HEADS;
  if (typeof v === 'string') throw new AttnlabError('EINVAL', `${name} must be a head index or 'all', got '${v}'`);
  return checkIndex(name, v, 0, H - 1);
}

/**
 * A mask option as the C wants it. Accepted: 'causal' | 'full' | 'window:W' |
 * {mode: 'causal'|'full'|'window', window} | an array of those, one per layer.
 */
export function parseMask(mask, nLayer) {
  const one = (m, where) => {
    if (typeof m === 'string') {
      if (m === 'causal' || m === 'full') return { mode: MASK[m], window: 0 };
      const w = /^window:(.*)$/.exec(m);
      if (w) {
        if (!/^-?\d+$/.test(w[1].trim()))
          throw new AttnlabError('EINVAL', `${where}: '${m}' needs an integer window, as in 'window:4'`);
        return { mode: MASK_WINDOW, window: checkIndex(`${where} window`, Number(w[1]), 1, INT_MAX) };
      }
      throw new AttnlabError('EINVAL', `${where}: unknown mask '${m}' (causal, full, window:W)`);
    }
    if (m !== null && typeof m === 'object' && !Array.isArray(m)) {
      checkObject(where, m, ['mode', 'window']);
      checkString(`${where}.mode`, m.mode);
      if (!Object.hasOwn(MASK, m.mode)) throw new AttnlabError('EINVAL', `${where}: unknown mask mode '${m.mode}' (causal, full, window)`);
      if (m.mode !== 'window') return { mode: MASK[m.mode], window: 0 };
      return { mode: MASK_WINDOW, window: checkIndex(`${where}.window`, m.window, 1, INT_MAX) };
    }
    throw new AttnlabError('ETYPE', `${where} must be 'causal', 'full', 'window:W', {mode, window} or an array of those per layer`);
  };
  if (mask === undefined || mask === null) return { mask: MASK_CAUSAL, window: 0, layerMask: null, layerWindow: null };
  if (Array.isArray(mask)) {
    if (mask.length !== nLayer)
      throw new AttnlabError('EINVAL', `a per-layer mask needs ${nLayer} entries (one per layer), got ${mask.length}`);
    const parts = mask.map((m, l) => one(m, `mask[${l}]`));
    return { mask: MASK_CAUSAL, window: 0, layerMask: parts.map((p) => p.mode), layerWindow: parts.map((p) => p.window) };
  }
  const p = one(mask, 'mask');
  return { mask: p.mode, window: p.window, layerMask: null, layerWindow: null };
}

/**
 * Interventions (+ the ablate shorthand) as the C wants them. T is the number
 * of tokens; row/col ranges are checked only when 0 < T <= n_positions (else
 * the forward pass fails with EEMPTY / ETOOLONG anyway).
 */
export function parseInterventions(interventions, ablate, cfg, T) {
  const { nLayer: L, nHead: H } = cfg;
  const maxPos = T > 0 && T <= cfg.nPositions ? T - 1 : INT_MAX;
  const out = [];
  if (interventions !== undefined && interventions !== null) {
    if (!Array.isArray(interventions)) throw new AttnlabError('ETYPE', 'interventions must be an array');
    interventions.forEach((x, i) => {
      const name = `interventions[${i}]`;
      checkObject(name, x, ['kind', 'layer', 'head', 'row', 'col', 'lambda', 'alpha']);
      checkString(`${name}.kind`, x.kind);
      if (!Object.hasOwn(KIND, x.kind))
        throw new AttnlabError('EINVAL', `${name}: unknown kind '${x.kind}' (${Object.keys(KIND).join(', ')})`);
      for (const k of Object.keys(x))
        if (k !== 'kind' && !KIND_FIELDS[x.kind].includes(k))
          throw new AttnlabError('EINVAL', `${name}: '${k}' is not a field of kind '${x.kind}' (${KIND_FIELDS[x.kind].join(', ')})`);
      const iv = { kind: KIND[x.kind], layer: checkIndex(`${name}.layer`, x.layer, 0, L - 1),
                   head: checkHead(`${name}.head`, x.head, H), row: 0, col: 0, lambda: 0 };
      if (x.kind === 'hard' || x.kind === 'soft') {
        iv.row = checkIndex(`${name}.row`, x.row, 0, maxPos);
        iv.col = checkIndex(`${name}.col`, x.col, 0, maxPos);
      }
      if (x.kind === 'soft') iv.lambda = checkMagnitude(`${name}.lambda`, x.lambda, MAX_SOFT_LAMBDA);
      if (x.kind === 'scaleQ' || x.kind === 'scaleK') iv.alpha = checkMagnitude(`${name}.alpha`, x.alpha, MAX_SCALE);
      out.push(iv);
    });
  }
  if (ablate !== undefined && ablate !== null) {
    if (!Array.isArray(ablate)) throw new AttnlabError('ETYPE', 'ablate must be an array of [layer, head] pairs');
    ablate.forEach((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2)
        throw new AttnlabError('ETYPE', `ablate[${i}] must be a [layer, head] pair`);
      out.push({ kind: ABLATE, layer: checkIndex(`ablate[${i}][0] (layer)`, pair[0], 0, L - 1),
                 head: checkHead(`ablate[${i}][1] (head)`, pair[1], H), row: 0, col: 0, lambda: 0 });
    });
  }
  return out;
}

// ---------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------

const NEW = Symbol('attnlab.Model');
const RUN_OPTIONS = ['interventions', 'ablate', 'mask', 'scale', 'captureQK', 'topK'];
const GENERATE_OPTIONS = ['maxTokens', 'temperature', 'topK', 'seed'];
let internals;

export class Model {
  #w;        // the AttnlabWasm of this model (null after dispose)
  #h;        // the alab_model handle
  #display = new Map(); // token id -> display string

  #windows; // each layer's own sliding window (0: none), what MASK_CAUSAL means on it

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
    const cfg = this.config;
    const { nLayer: L, nHead: H, vocabSize: V } = cfg;
    const interventions = parseInterventions(o.interventions, o.ablate, cfg, T);
    const mask = parseMask(o.mask, L);
    const scale = o.scale === undefined || o.scale === null ? null : checkMagnitude('scale', o.scale, MAX_SCALE);
    let capture = null;
    if (o.captureQK !== undefined && o.captureQK !== null) {
      checkObject('captureQK', o.captureQK, ['layer', 'head']);
      capture = { layer: checkIndex('captureQK.layer', o.captureQK.layer, 0, L - 1),
                  head: checkIndex('captureQK.head', o.captureQK.head, 0, H - 1) };
    }
    const topK = o.topK === undefined ? 10 : Math.min(checkIndex('topK', o.topK, 0, INT_MAX), V);

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
    const maxNew = o.maxTokens === undefined ? 20 : checkIndex('maxTokens', o.maxTokens, 0, INT_MAX);
    const temperature = o.temperature === undefined ? 0 : checkFinite('temperature', o.temperature);
    if (temperature < 0 || temperature > C.MAX_TEMPERATURE)
      throw new AttnlabError('ERANGE', `temperature must be in [0, ${C.MAX_TEMPERATURE}], got ${temperature}`);
    const topK = o.topK === undefined ? 0 : checkIndex('topK', o.topK, 0, INT_MAX);
    let seed = 0n;
    if (typeof o.seed === 'bigint') {
      if (o.seed < 0n || o.seed >= 2n ** 64n) throw new AttnlabError('ERANGE', 'seed must be in [0, 2^64)');
      seed = o.seed;
    } else if (o.seed !== undefined) {
      seed = BigInt(checkIndex('seed', o.seed, 0, Number.MAX_SAFE_INTEGER));
    }
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
  // Heads: importance and roles (c/src/heads.c; docs/heads.md)
  // -------------------------------------------------------------------------
  // Losses are mean next-token losses in nats. Each method runs the model
  // itself; Results returned earlier by run() are copies and stay valid.
  // =========================================================================

  /**
   * Which heads matter: the loss increase when each head is ablated alone,
   * and the pruning curve (the k least important heads removed together).
   * @param {string|ArrayLike<number>} input a text or ids (at least 2 tokens)
   * @param {{pruning?: boolean}} [options] pruning: false skips the curve (L·NH + 1 runs)
   * @returns {{baseLoss: number, delta: Float32Array, order: Int32Array,
   *   pruning: Float32Array|null, lossAtHalf: number|null, nLayer: number, nHead: number, T: number}}
   *   delta[l*NH + h]; order: heads by delta ascending; pruning[k], k = 0 … L·NH;
   *   lossAtHalf = pruning[floor(L·NH / 2)]
   */
  headImportance(input, options) {
    const w = this.#live();
    const o = checkOptions('headImportance', options, ['pruning']);
    if (o.pruning !== undefined && typeof o.pruning !== 'boolean')
      throw new AttnlabError('ETYPE', 'headImportance: options.pruning must be a boolean');
    const ids = this.#idsOf(input);
    if (ids.length < 2) throw new AttnlabError('EEMPTY', `headImportance needs at least 2 tokens, got ${ids.length}`);
    if (ids.length > this.config.nPositions)
      throw new AttnlabError('ETOOLONG', `${ids.length} tokens exceed n_positions = ${this.config.nPositions}`);
    const { nLayer, nHead } = this.config;
    const LH = nLayer * nHead;
    const { baseLoss, delta } = w.headImportance(this.#h, ids);
    let order, pruning = null, lossAtHalf = null;
    if (o.pruning === false) {
      order = Int32Array.from(delta.keys()).sort((a, b) => delta[a] - delta[b] || a - b);
    } else {
      const c = w.pruningCurve(this.#h, ids, delta);
      order = c.order;
      pruning = c.loss;
      lossAtHalf = pruning[Math.floor(LH / 2)];
    }
    return { baseLoss, delta, order, pruning, lossAtHalf, nLayer, nHead, T: ids.length };
  }

  /**
   * What each head does: previous-token, first-token (sink), duplicate-token
   * and induction scores of a plain (causal) run on input. The induction
   * score is defined only when the ids are two copies of one sequence (see
   * repeatedTokens); otherwise it is all zeros and inductionDefined is false.
   * @param {string|ArrayLike<number>} input
   * @param {{top?: number, interventions?: object[], ablate?: object[]}} [options] top: how many heads to
   *   name per role (default 3); interventions / ablate as in run: the roles of the heads of a run under them
   *   (an ablated head's attention is still read, and scored, as computed)
   * @returns {{prev: Float32Array, sink: Float32Array, dup: Float32Array, induction: Float32Array,
   *   inductionDefined: boolean, top: {prev, sink, dup, induction: {layer, head, score}[]},
   *   nLayer: number, nHead: number, T: number}}
   */
  headRoles(input, options) {
    const w = this.#live();
    const o = checkOptions('headRoles', options, ['top', 'interventions', 'ablate']);
    const nTop = o.top === undefined ? 3 : checkIndex('top', o.top, 0, INT_MAX);
    const ids = this.#idsOf(input);
    if (ids.length < 1) throw new AttnlabError('EEMPTY', 'headRoles needs at least 1 token');
    if (ids.length > this.config.nPositions)
      throw new AttnlabError('ETOOLONG', `${ids.length} tokens exceed n_positions = ${this.config.nPositions}`);
    const { nLayer, nHead } = this.config;
    w.forward(this.#h, ids, { interventions: parseInterventions(o.interventions, o.ablate, this.config, ids.length) });
    const T = ids.length;
    const r = w.headRoles(w.resultAttention(this.#h), ids, nLayer, nHead, T);
    const rank = (s) => Array.from(s.keys()).sort((a, b) => s[b] - s[a] || a - b).slice(0, nTop)
      .map((i) => ({ layer: Math.floor(i / nHead), head: i % nHead, score: s[i] }));
    const top = { prev: rank(r.prev), sink: rank(r.sink), dup: rank(r.dup),
                  induction: r.inductionDefined ? rank(r.induction) : [] };
    return { ...r, top, nLayer, nHead, T };
  }

  /**
   * The next-token loss of every position of a run, with interventions as in run:
   * losses[t] = −log p(ids[t+1] | ids[0..t]) in nats, t = 0 … T−2 (what headImportance
   * averages). With repeatedTokens(n) as input, losses[0 … n−2] score the first copy and
   * losses[n … 2n−2] the second (predictable only by copying from the first).
   * @param {string|ArrayLike<number>} input at least 2 tokens
   * @param {{interventions?: object[], ablate?: object[], mask?: string|string[]}} [options]
   * @returns {{losses: Float64Array, mean: number, T: number}}
   */
  tokenLosses(input, options) {
    const w = this.#live();
    const o = checkOptions('tokenLosses', options, ['interventions', 'ablate', 'mask']);
    const ids = this.#idsOf(input);
    if (ids.length < 2) throw new AttnlabError('EEMPTY', 'tokenLosses needs at least 2 tokens');
    if (ids.length > this.config.nPositions)
      throw new AttnlabError('ETOOLONG', `${ids.length} tokens exceed n_positions = ${this.config.nPositions}`);
    const interventions = parseInterventions(o.interventions, o.ablate, this.config, ids.length);
    w.forward(this.#h, ids, { interventions, ...parseMask(o.mask, this.config.nLayer) });
    const losses = w.resultNllEach(this.#h, ids.length);
    let sum = 0;
    for (const v of losses) sum += v;
    return { losses, mean: sum / losses.length, T: ids.length };
  }

  /**
   * Where the DAG score comes from: the DAG score of every head and every
   * layer for each input, next to the null score of uniform attention of its
   * length under the same mask (alab_mask_null_dag_score: causal (1/T) Σ i/(i+1); full (T−1)/(2T)).
   * @param {string|ArrayLike<number>|Array<string|ArrayLike<number>>} inputs one input or a list
   * @param {{mask?: 'causal'|'full'}} [options]
   * @returns {{mask: string, sentences: {T: number, head: Float32Array, layer: Float32Array, overall: number, null: number}[],
   *   mean: {head: Float64Array, layer: Float64Array, overall: number, null: number}, nLayer: number, nHead: number}}
   *   mean.* averages over the inputs; excess over the null = mean.overall − mean.null
   */
  dagProfile(inputs, options) {
    const w = this.#live();
    const o = checkOptions('dagProfile', options, ['mask']);
    const maskName = o.mask === undefined ? 'causal' : o.mask;
    if (maskName !== 'causal' && maskName !== 'full')
      throw new AttnlabError('EINVAL', `dagProfile: options.mask must be 'causal' or 'full', got ${String(maskName)}`);
    const list = Array.isArray(inputs) && inputs.length > 0 && typeof inputs[0] !== 'number' ? inputs : [inputs];
    const { nLayer, nHead } = this.config;
    const idsList = list.map((x) => this.#idsOf(x)); // check every input before running any
    idsList.forEach((ids, k) => {
      if (ids.length < 1) throw new AttnlabError('EEMPTY', `dagProfile: input ${k} has no tokens`);
      if (ids.length > this.config.nPositions)
        throw new AttnlabError('ETOOLONG', `dagProfile: input ${k} has ${ids.length} tokens > n_positions = ${this.config.nPositions}`);
    });
    const mean = { head: new Float64Array(nLayer * nHead), layer: new Float64Array(nLayer), overall: 0, null: 0 };
    const sentences = idsList.map((ids) => {
      const T = ids.length;
      w.forward(this.#h, ids, { mask: MASK[maskName] });
      const p = w.dagProfile(w.resultAttention(this.#h), nLayer, nHead, T);
      const overall = p.layer.reduce((a, b) => a + b, 0) / nLayer;
      let nul = 0; // the layers' mean, as overall: each layer's own mask under 'causal'
      for (let l = 0; l < nLayer; l++) nul += this.#layerNull(l, MASK[maskName], 0, T) / nLayer;
      p.head.forEach((x, i) => { mean.head[i] += x / idsList.length; });
      p.layer.forEach((x, i) => { mean.layer[i] += x / idsList.length; });
      mean.overall += overall / idsList.length;
      mean.null += nul / idsList.length;
      return { T, head: p.head, layer: p.layer, overall, null: nul };
    });
    return { mask: maskName, sentences, mean, nLayer, nHead };
  }

  /**
   * Counterfactual pair (docs/heads.md): run inputA and inputB with the same
   * run options and compare them — which positions align (alignTokens), the
   * attention difference B − A on A's positions (NaN where a row or column
   * has no partner), and how the next-token distribution moves.
   * @returns {{a: Result, b: Result, alignment: object, aligned: [number, number][],
   *   attentionDiff: Float32Array, headDiff: Float32Array,
   *   next: {kl: number, tv: number, top: {id, token, pA, pB, delta}[]}}}
   */
  counterfactual(inputA, inputB, options) {
    this.#live();
    const a = this.run(inputA, options);
    const b = this.run(inputB, options);
    const alignment = alignTokens(a.ids, b.ids);
    const { attentionDiff: avg, headDiff } = attentionDiff(a, b, alignment.pairs);
    const next = nextTokenDiff(a.logits, b.logits, { k: 10, token: (id) => this.#token(id) });
    return { a, b, alignment, aligned: alignment.pairs, attentionDiff: avg, headDiff, next };
  }

  // ---- does attention explain? (docs/evidence.md) -------------------------
  // Each effect is a real forward pass with the intervention inside it. Long
  // computations take onProgress({done, total}) and an AbortSignal (EABORT).

  #evidenceInput(where, input) {
    const ids = this.#idsOf(input);
    if (ids.length < 2) throw new AttnlabError('EEMPTY', `${where} needs at least 2 tokens, got ${ids.length}`);
    if (ids.length > this.config.nPositions)
      throw new AttnlabError('ETOOLONG', `${where}: ${ids.length} tokens exceed n_positions = ${this.config.nPositions}`);
    return ids;
  }

  #progressOptions(where, o) {
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function')
      throw new AttnlabError('ETYPE', `${where}: options.onProgress must be a function`);
    if (o.signal !== undefined && (o.signal === null || typeof o.signal !== 'object' || typeof o.signal.aborted !== 'boolean'))
      throw new AttnlabError('ETYPE', `${where}: options.signal must be an AbortSignal`);
    return { onProgress: o.onProgress, signal: o.signal };
  }

  /**
   * Edge knockout against attention weight: for every causal pair j <= i, the
   * edge j -> i is knocked out of head (layer, head) (or of every head of the
   * layer, head 'all') and the next-token distributions at i and at the last
   * position are compared with the plain run's (KL).
   * @param {string|ArrayLike<number>} input
   * @param {{layer?: number, head?: number|'all', topK?: number, knockout?: 'renorm'|'zero', onProgress?: Function,
   *   signal?: AbortSignal}} [options] layer: default the last; head: default 'all'; topK: default T;
   *   knockout: renormalise the row after removing the key (default) or leave its sum below 1
   */
  edgeKnockout(input, options) { return this.#runJob(this.#edgeJob(input, options)); }

  /**
   * Token knockout against three readings of attention: for each token j, the
   * token is removed (mode 'column': its column knocked out in every head of
   * every layer, renormalised or, with knockout 'zero', not; 'delete': deleted
   * from the input; 'replace': replaced by `neutral`, default " the") and the
   * next-token distribution after the input compared with the plain run's
   * (KL); beside it the last layer's head average, attention rollout and
   * attention flow to the last position, with their rank correlations.
   * @param {{mode?: 'column'|'delete'|'replace', knockout?: 'renorm'|'zero', neutral?: string|number,
   *   onProgress?: Function, signal?: AbortSignal}} [options]
   */
  tokenKnockout(input, options) { return this.#runJob(this.#tokenJob(input, options)); }

  /**
   * Head importance and the pruning curve under three ways of removing a head:
   * zero (its output set to 0), mean (its output replaced by its mean over the
   * reference text's positions) and resample (its output at each position
   * taken from the run of a second text); and how much the rankings agree.
   * @param {{reference?: string|ArrayLike<number>, resample?: string|ArrayLike<number>, draws?: number,
   *   seed?: number, onProgress?: Function, signal?: AbortSignal}} [options]
   *   reference: default a held-out passage of the built-in model's corpus
   *   (REFERENCE_TEXT, cut at n_positions); without `resample`, the resample
   *   ablation averages `draws` (default 20) windows of the reference at
   *   offsets drawn with `seed` (default 1; alab_resample_draws, as the CLI),
   *   with a bootstrap interval per head over the draws; with `resample`, one
   *   run of that text, aligned (it must have at least as many tokens as input)
   */
  ablationSemantics(input, options) { return this.#runJob(this.#ablationJob(input, options)); }

  /** For worker.js: the stepwise form of an evidence method (steps, finish), options without callbacks. */
  [EVIDENCE_JOB](kind, input, options) {
    if (kind === 'edgeKnockout') return this.#edgeJob(input, options);
    if (kind === 'tokenKnockout') return this.#tokenJob(input, options);
    if (kind === 'ablationSemantics') return this.#ablationJob(input, options);
    if (kind === 'edgeKnockoutSet') return this.#edgeSetJob(input, options);
    if (kind === 'tokenKnockoutSet') return this.#tokenSetJob(input, options);
    if (kind === 'ablationSet') return this.#ablationSetJob(input, options);
    if (kind === 'patchingSet') return this.#patchingSetJob(input, options);
    if (['patternValueSet', 'pathPatchingSet', 'componentTracingSet', 'attributionSet'].includes(kind))
      return this.#circuitSetJob(kind, input, options);
    throw new AttnlabError('EINVAL', `unknown evidence computation '${kind}'`);
  }

  #runJob(job) {
    return job.finish(evidence.runSteps(job.steps, { ...job.progress, alive: () => this.#w !== null }));
  }

  #edgeJob(input, options) {
    const w = this.#live();
    const o = checkOptions('edgeKnockout', options, ['layer', 'head', 'topK', 'knockout', 'onProgress', 'signal']);
    const { nLayer, nHead } = this.config;
    const layer = o.layer === undefined ? nLayer - 1 : checkIndex('layer', o.layer, 0, nLayer - 1);
    const head = o.head === undefined || o.head === 'all' ? 'all' : checkIndex('head', o.head, 0, nHead - 1);
    const ids = this.#evidenceInput('edgeKnockout', input);
    const topK = o.topK === undefined ? undefined : checkIndex('topK', o.topK, 1, INT_MAX);
    const mode = this.#knockoutMode('edgeKnockout', o.knockout);
    return { steps: evidence.edgeKnockoutSteps(w, this.#h, ids, { layer, head, topK, nLayer, mode }),
             progress: this.#progressOptions('edgeKnockout', o),
             finish: (r) => ({ ...r, ids, tokens: Array.from(ids, (id) => this.#token(id)) }) };
  }

  #tokenJob(input, options) {
    const w = this.#live();
    const o = checkOptions('tokenKnockout', options, ['mode', 'neutral', 'knockout', 'onProgress', 'signal']);
    const ids = this.#evidenceInput('tokenKnockout', input);
    const { nLayer, nHead } = this.config;
    const { mode, neutral } = this.#tokenMode('tokenKnockout', o);
    return { steps: evidence.tokenKnockoutSteps(w, this.#h, ids, { nLayer, nHead, mode, neutral }),
             progress: this.#progressOptions('tokenKnockout', o),
             finish: (r) => ({ ...r, ids, tokens: Array.from(ids, (id) => this.#token(id)) }) };
  }

  // The head outputs of a reference text, computed once per model and text (the default reference's
  // serve every ablationSemantics call); a few are kept.
  // The token knockout's mode (column, columnZero, delete, replace) and neutral token from options.
  #tokenMode(where, o) {
    let mode = o.mode ?? 'column';
    if (!['column', 'delete', 'replace'].includes(mode))
      throw new AttnlabError('EINVAL', `${where}: options.mode must be 'column', 'delete' or 'replace', not ${JSON.stringify(mode)}`);
    if (mode !== 'column' && o.knockout !== undefined)
      throw new AttnlabError('EINVAL', `${where}: options.knockout applies to the column knockout, not to mode '${mode}'`);
    if (mode === 'column' && this.#knockoutMode(where, o.knockout) === 'zero') mode = 'columnZero';
    const neutral = o.neutral === undefined ? this.#defaultNeutral() : this.#oneToken(where, 'neutral', o.neutral);
    const V = this.config.vocabSize;
    if (neutral < 0 || neutral >= V) throw new AttnlabError('ERANGE', `${where}: the neutral token ${neutral} is outside [0, ${V})`);
    return { mode, neutral };
  }

  #knockoutMode(where, m) {
    if (m === undefined) return 'renorm';
    if (m !== 'renorm' && m !== 'zero')
      throw new AttnlabError('EINVAL', `${where}: options.knockout must be 'renorm' or 'zero', not ${JSON.stringify(m)}`);
    return m;
  }

  // The default replacement token of a token knockout: " the" when it is one token (a frequent word that
  // carries little content), else id 0. The CLI uses the same rule.
  #defaultNeutral() {
    const t = this.#idsOf(' the');
    return t.length === 1 ? t[0] : 0;
  }

  #oneToken(where, name, v) {
    if (typeof v !== 'string') return checkIndex(name, v, 0, this.config.vocabSize - 1);
    // an answer is a token of text, not a run's input: without the BOS a Llama 3 tokenizer puts first
    const t = this.#live().encodePlain(this.#h, textBytes(v));
    if (t.length !== 1) throw new AttnlabError('EINVAL', `${where}: ${name} ${JSON.stringify(v)} is ${t.length} tokens, not one`);
    return t[0];
  }

  /**
   * The inputs of a set: 'heldout' (held-out sentences of the built-in model's corpus), 'repeated' (random
   * tokens repeated twice; GPT-2 vocabulary ids), or a list of strings / id arrays. Each becomes ids, cut
   * at n_positions; inputs of fewer than 2 tokens are an error naming their index.
   */
  evidenceSet(set, options) {
    const { limit } = checkOptions('evidenceSet', options, ['limit']);
    let list = set;
    if (typeof set === 'string') {
      const s = EVIDENCE_SETS[set];
      if (!s || set === 'pairs') throw new AttnlabError('EINVAL', `evidence set ${JSON.stringify(set)}: the sets are 'heldout' and 'repeated' (or a list of inputs)`);
      list = set === 'heldout' ? s.sentences.map((x) => x.text) : s.sequences;
    }
    if (!Array.isArray(list) || list.length === 0) throw new AttnlabError('ETYPE', 'an evidence set is a name or a non-empty list of inputs');
    if (limit !== undefined) list = list.slice(0, checkIndex('limit', limit, 1, INT_MAX));
    return list.map((x, k) => {
      if (Array.isArray(x) && x.some((id) => !Number.isInteger(id) || id < 0 || id >= this.config.vocabSize))
        throw new AttnlabError('ERANGE', `evidence set input ${k}: a token id outside [0, ${this.config.vocabSize})`);
      const ids = this.#idsOf(x);
      if (ids.length < 2) throw new AttnlabError('EEMPTY', `evidence set input ${k} has ${ids.length} tokens; at least 2 are needed`);
      const P = this.config.nPositions;
      return ids.length > P ? ids.slice(0, P) : ids;
    });
  }

  /**
   * Edge knockout of one layer over a set of inputs: the mean per-input rank correlation of attention with
   * the knockout effects, each with a 95 % bootstrap interval over inputs, a within-row permutation null and
   * its p-value, the uniform and row-permuted baselines, and the noise floor (docs/evidence.md § 5, over a set of inputs).
   * @param {string|Array<string|ArrayLike<number>>} set 'heldout', 'repeated' or a list of inputs
   * @param {{layer?: number, head?: number|'all', knockout?: 'renorm'|'zero', limit?: number, nBoot?: number,
   *   nPerm?: number, seed?: number, level?: number, epsilon?: number, onProgress?: Function, signal?: AbortSignal}} [options]
   */
  edgeKnockoutSet(set, options) { return this.#runJob(this.#edgeSetJob(set, options)); }

  #edgeSetJob(set, options) {
    const w = this.#live();
    const o = checkOptions('edgeKnockoutSet', options, ['layer', 'head', 'knockout', 'limit', 'nBoot', 'nPerm', 'seed',
      'level', 'epsilon', 'onProgress', 'signal']);
    const { nLayer, nHead } = this.config;
    const layer = o.layer === undefined ? nLayer - 1 : checkIndex('layer', o.layer, 0, nLayer - 1);
    const head = o.head === undefined || o.head === 'all' ? 'all' : checkIndex('head', o.head, 0, nHead - 1);
    const mode = this.#knockoutMode('edgeKnockoutSet', o.knockout);
    const inputs = this.evidenceSet(set, { limit: o.limit });
    const count = (name, v, lo) => (v === undefined ? undefined : checkIndex(name, v, lo, 1000000));
    const nBoot = count('nBoot', o.nBoot, 0), nPerm = count('nPerm', o.nPerm, 0);
    const seed = o.seed === undefined ? undefined : checkIndex('seed', o.seed, 0, 0xffffffff);
    if (o.level !== undefined && !(typeof o.level === 'number' && o.level > 0 && o.level < 1))
      throw new AttnlabError('ERANGE', 'edgeKnockoutSet: options.level must be in (0, 1)');
    if (o.epsilon !== undefined && !(typeof o.epsilon === 'number' && o.epsilon >= 0 && Number.isFinite(o.epsilon)))
      throw new AttnlabError('ERANGE', 'edgeKnockoutSet: options.epsilon must be a finite number >= 0');
    return { steps: evidence.edgeKnockoutSetSteps(w, this.#h, inputs, { layer, head, nLayer, nHead: this.config.nHead, mode, nBoot, nPerm, seed,
               level: o.level, epsilon: o.epsilon }),
             progress: this.#progressOptions('edgeKnockoutSet', o),
             finish: (r) => ({ ...r, set: typeof set === 'string' ? set : 'list' }) };
  }

  #setStats(where, o) {
    const count = (name, v) => (v === undefined ? undefined : checkIndex(name, v, 0, 1000000));
    const r = { nBoot: count('nBoot', o.nBoot), nPerm: count('nPerm', o.nPerm),
                seed: o.seed === undefined ? undefined : checkIndex('seed', o.seed, 0, 0xffffffff), level: o.level };
    if (o.level !== undefined && !(typeof o.level === 'number' && o.level > 0 && o.level < 1))
      throw new AttnlabError('ERANGE', `${where}: options.level must be in (0, 1)`);
    for (const k of Object.keys(r)) if (r[k] === undefined) delete r[k];
    return r;
  }

  /**
   * Token knockout over a set of inputs: the mean per-input rank correlation of each reading (last layer,
   * rollout, flow) with the token-knockout effects, with a bootstrap interval, a permutation null and its
   * p-value, and the noise floor (docs/evidence.md § 5, over a set of inputs).
   * @param {string|Array<string|ArrayLike<number>>} set
   * @param {{mode?: 'column'|'delete'|'replace', knockout?: 'renorm'|'zero', neutral?: string|number, limit?: number,
   *   nBoot?: number, nPerm?: number, seed?: number, level?: number, epsilon?: number, onProgress?: Function, signal?: AbortSignal}} [options]
   */
  tokenKnockoutSet(set, options) { return this.#runJob(this.#tokenSetJob(set, options)); }

  #tokenSetJob(set, options) {
    const w = this.#live();
    const o = checkOptions('tokenKnockoutSet', options, ['mode', 'knockout', 'neutral', 'limit', 'nBoot', 'nPerm', 'seed',
      'level', 'epsilon', 'onProgress', 'signal']);
    const { nLayer, nHead } = this.config;
    const { mode, neutral } = this.#tokenMode('tokenKnockoutSet', o);
    if (o.epsilon !== undefined && !(typeof o.epsilon === 'number' && o.epsilon >= 0 && Number.isFinite(o.epsilon)))
      throw new AttnlabError('ERANGE', 'tokenKnockoutSet: options.epsilon must be a finite number >= 0');
    const inputs = this.evidenceSet(set, { limit: o.limit });
    return { steps: evidence.tokenKnockoutSetSteps(w, this.#h, inputs, { nLayer, nHead, mode, neutral, epsilon: o.epsilon,
               ...this.#setStats('tokenKnockoutSet', o) }),
             progress: this.#progressOptions('tokenKnockoutSet', o),
             finish: (r) => ({ ...r, set: typeof set === 'string' ? set : 'list' }) };
  }

  /**
   * Head ablation over a set of inputs: each head's loss increase under zero, mean and resample ablation
   * (resample averaged over `draws` windows of the reference), with bootstrap intervals over inputs, and how
   * far the three rankings agree (docs/evidence.md § 5, over a set of inputs).
   * @param {{draws?: number, reference?: string|ArrayLike<number>, limit?: number, nBoot?: number, seed?: number,
   *   level?: number, onProgress?: Function, signal?: AbortSignal}} [options] draws: default 20
   */
  ablationSet(set, options) { return this.#runJob(this.#ablationSetJob(set, options)); }

  #ablationSetJob(set, options) {
    const w = this.#live();
    const o = checkOptions('ablationSet', options, ['draws', 'reference', 'limit', 'nBoot', 'seed', 'level', 'onProgress', 'signal']);
    const inputs = this.evidenceSet(set, { limit: o.limit });
    const refIds = this.#referenceIds('ablationSet', o.reference);
    const draws = o.draws === undefined ? 20 : checkIndex('draws', o.draws, 1, 10000);
    const { nLayer, nHead } = this.config;
    return { steps: evidence.ablationSetSteps(w, this.#h, inputs, { refIds, refOut: this.#headOutputs(refIds), nLayer, nHead,
               draws, ...this.#setStats('ablationSet', o) }),
             progress: this.#progressOptions('ablationSet', o),
             finish: (r) => ({ ...r, set: typeof set === 'string' ? set : 'list' }) };
  }

  // The ids of a reference text (default REFERENCE_TEXT), cut at n_positions.
  #referenceIds(where, v, name = 'reference') {
    const r = this.#idsOf(v === undefined ? REFERENCE_TEXT : v);
    if (r.length < 1) throw new AttnlabError('EEMPTY', `${where}: the ${name} text has no tokens`);
    const P = this.config.nPositions;
    return r.length > P ? r.subarray(0, P) : r;
  }

  /**
   * Activation patching over clean/corrupted pairs: 'pairs' (the built-in minimal pairs, with their one-token
   * answers) or a list of [clean, corrupted] or [clean, corrupted, [answerClean, answerCorrupt]]; without
   * answers each run's top next token. Each head's patching score and the last position's residual stream
   * per layer, averaged over pairs with bootstrap intervals; pairs whose runs give the same logit difference
   * are skipped and listed.
   * @param {{limit?: number, minGap?: number, nBoot?: number, seed?: number, level?: number, onProgress?: Function,
   *   signal?: AbortSignal}} [options] minGap: pairs whose two logit differences are closer than this (default
   *   1 nat) are skipped, since the normalised score divides by that gap
   */
  patchingSet(pairs, options) { return this.#runJob(this.#patchingSetJob(pairs, options)); }

  #patchingSetJob(pairs, options) {
    const w = this.#live();
    const o = checkOptions('patchingSet', options, ['limit', 'minGap', 'nBoot', 'seed', 'level', 'onProgress', 'signal']);
    const prepared = this.#preparePairs('patchingSet', pairs, o);
    const { nLayer, nHead } = this.config;
    return { steps: evidence.patchingSetSteps(w, this.#h, prepared, { nLayer, nHead, minGap: o.minGap ?? 1, ...this.#setStats('patchingSet', o) }),
             progress: this.#progressOptions('patchingSet', o),
             finish: (r) => this.#pairsFinish(r, pairs, prepared) };
  }

  /** A set of clean/corrupted pairs as ids with answers: a built-in set's name or a list (patchingSet's forms). */
  #preparePairs(where, pairs, o) {
    const w = this.#live();
    if (o.minGap !== undefined && !(typeof o.minGap === 'number' && o.minGap >= 0 && Number.isFinite(o.minGap)))
      throw new AttnlabError('ERANGE', `${where}: options.minGap must be a finite number >= 0`);
    let list = pairs;
    if (pairs === 'pairs') list = EVIDENCE_SETS.pairs.pairs.map((p) => [p.clean, p.corrupt, p.answers]);
    else if (pairs === 'induction') list = inductionPairs(this.config.vocabSize);
    else if (pairs === 'induction-prev') list = inductionPrevPairs(this.config.vocabSize);
    else if (typeof pairs === 'string')
      throw new AttnlabError('EINVAL', `${where}: the built-in sets are 'pairs', 'induction' and 'induction-prev', not ${JSON.stringify(pairs)}`);
    if (!Array.isArray(list) || list.length === 0) throw new AttnlabError('ETYPE', `${where}: pairs must be a built-in set's name or a non-empty list of [clean, corrupted]`);
    if (o.limit !== undefined) list = list.slice(0, checkIndex('limit', o.limit, 1, INT_MAX));
    return list.map((p, k) => {
      if (!Array.isArray(p) || p.length < 2) throw new AttnlabError('ETYPE', `${where}: pair ${k} is not [clean, corrupted]`);
      const c = this.#evidenceInput(`${where} pair ${k} (clean)`, p[0]);
      const d = this.#evidenceInput(`${where} pair ${k} (corrupted)`, p[1]);
      if (c.length !== d.length)
        throw new AttnlabError('EINVAL', `${where}: pair ${k} has ${c.length} and ${d.length} tokens; they must be equal`);
      let answers;
      if (p[2] === undefined) answers = [c, d].map((x) => { w.forward(this.#h, x); return w.resultTopk(this.#h, 1).ids[0]; });
      else {
        if (!Array.isArray(p[2]) || p[2].length !== 2)
          throw new AttnlabError('ETYPE', `${where}: pair ${k}'s answers must be [clean answer, corrupted answer]`);
        answers = p[2].map((a) => this.#oneToken(`${where} pair ${k}`, 'answer', a));
      }
      return { clean: c, corrupt: d, answers };
    });
  }

  #pairsFinish(r, pairs, prepared) {
    return { ...r, set: typeof pairs === 'string' ? pairs : 'list',
      perInput: r.perInput.map((x) => ({ ...x, clean: this.decode(prepared[x.index].clean), corrupt: this.decode(prepared[x.index].corrupt),
        answerTokens: x.answers.map((id) => this.#token(id)) })) };
  }

  // ---- where a head looks versus what it moves (docs/evidence.md § 6–11) ----

  /** One pair's answers: [a, b] as one-token strings or ids, or the top next token of each run. */
  #pairAnswers(where, c, d, answers) {
    const w = this.#live();
    if (answers === undefined) return [c, d].map((x) => { w.forward(this.#h, x); return w.resultTopk(this.#h, 1).ids[0]; });
    if (!Array.isArray(answers) || answers.length !== 2)
      throw new AttnlabError('ETYPE', `${where}: options.answers must be [clean answer, corrupted answer]`);
    return answers.map((a) => this.#oneToken(where, 'answer', a));
  }

  #pair(where, clean, corrupt, o) {
    const c = this.#evidenceInput(`${where} (clean)`, clean);
    const d = this.#evidenceInput(`${where} (corrupted)`, corrupt);
    if (c.length !== d.length)
      throw new AttnlabError('EINVAL', `${where}: the clean input has ${c.length} tokens, the corrupted one ${d.length}; they must be equal`);
    return { c, d, answers: this.#pairAnswers(where, c, d, o.answers) };
  }

  #pairTokens(c, d, answers) {
    return { tokens: Array.from(c, (id) => this.#token(id)), corruptTokens: Array.from(d, (id) => this.#token(id)),
             answerTokens: answers.map((id) => this.#token(id)) };
  }

  /**
   * Pattern versus value patching of every head, denoising and noising: the head's attention pattern alone,
   * its values alone, or both taken from the other run (docs/evidence.md § 6). grid.denoise.pattern etc. are
   * Float32Array (nLayer * nHead) of normalised logit differences (0 = corrupted, 1 = clean).
   * @param {{answers?: [string|number, string|number]}} [options]
   */
  patternValuePatching(clean, corrupt, options) {
    const o = checkOptions('patternValuePatching', options, ['answers']);
    const { c, d, answers } = this.#pair('patternValuePatching', clean, corrupt, o);
    const r = circuits.patternValuePatching(this.#live(), this.#h, c, d, { answers, nLayer: this.config.nLayer, nHead: this.config.nHead });
    return { ...r, ...this.#pairTokens(c, d, answers) };
  }

  /**
   * Path patching (Wang et al. 2022): each sender head's output patched only along its path into each
   * receiver — a head's 'q', 'k' or 'v' input, or the 'logits' (docs/evidence.md § 7 for the freezing rule).
   * @param {{answers?: Array, receivers: Array<{layer?: number, head?: number, input: 'q'|'k'|'v'|'logits'}>,
   *   direction?: 'denoise'|'noise', freezeMlp?: boolean}} options
   */
  pathPatching(clean, corrupt, options) {
    const o = checkOptions('pathPatching', options, ['answers', 'receivers', 'direction', 'freezeMlp']);
    const { c, d, answers } = this.#pair('pathPatching', clean, corrupt, o);
    const r = circuits.pathPatching(this.#live(), this.#h, c, d, { answers, receivers: o.receivers, direction: o.direction ?? 'denoise',
      freezeMlp: !!o.freezeMlp, nLayer: this.config.nLayer, nHead: this.config.nHead });
    return { ...r, ...this.#pairTokens(c, d, answers) };
  }

  /**
   * Direct logit attribution at the last position, the final norm's scale frozen at the plain run's (docs/evidence.md § 8).
   * @param {{answers: [string|number] | [string|number, string|number]}} options u = W_U[a] (- W_U[b])
   */
  directLogitAttribution(input, options) {
    const o = checkOptions('directLogitAttribution', options, ['answers']);
    const ids = this.#evidenceInput('directLogitAttribution', input);
    if (!Array.isArray(o.answers) || o.answers.length < 1 || o.answers.length > 2)
      throw new AttnlabError('ETYPE', 'directLogitAttribution: options.answers must be [answer] or [answer, other answer]');
    const answers = o.answers.map((a) => this.#oneToken('directLogitAttribution', 'answer', a));
    const r = circuits.directLogitAttribution(this.#live(), this.#h, ids, { answers, nLayer: this.config.nLayer, nHead: this.config.nHead });
    return { ...r, tokens: Array.from(ids, (id) => this.#token(id)), answerTokens: answers.map((id) => this.#token(id)) };
  }

  /** ||v_j W_O^h|| per (layer, head, position) (Kobayashi et al. 2020): Float32Array (nLayer * nHead * T). */
  valueNorms(input) {
    const ids = this.#evidenceInput('valueNorms', input);
    return circuits.valueNorms(this.#live(), this.#h, ids, { nLayer: this.config.nLayer, nHead: this.config.nHead });
  }

  /** Causal tracing by component: the clean run's attention or MLP output restored at each (layer, position). */
  componentTracing(clean, corrupt, options) {
    const o = checkOptions('componentTracing', options, ['answers']);
    const { c, d, answers } = this.#pair('componentTracing', clean, corrupt, o);
    const r = circuits.componentTracing(this.#live(), this.#h, c, d, { answers, nLayer: this.config.nLayer });
    return { ...r, ...this.#pairTokens(c, d, answers) };
  }

  /**
   * Q-, K- and V-composition scores of every head pair in adjacent layers (Elhage et al. 2021), with the scores
   * of Gaussian matrices of the same shapes as a null (nNull draws, default 200).
   * @param {{nNull?: number, seed?: number}} [options]
   */
  compositionScores(options) {
    const o = checkOptions('compositionScores', options, ['nNull', 'seed']);
    if (this.config.nLayer < 2) throw new AttnlabError('EINVAL', 'compositionScores: a one-layer model has no pair of layers');
    const nNull = o.nNull === undefined ? 200 : checkIndex('nNull', o.nNull, 0, 100000);
    const seed = o.seed === undefined ? 1 : checkIndex('seed', o.seed, 0, 0xffffffff);
    return circuits.compositionScores(this.#live(), this.#h, { nLayer: this.config.nLayer, nHead: this.config.nHead, nNull, seed });
  }

  /** patternValuePatching over a set of pairs (patchingSet's forms), with intervals and the pattern's share of each head's effect. */
  patternValueSet(pairs, options) { return this.#runJob(this.#circuitSetJob('patternValueSet', pairs, options)); }
  /** pathPatching over a set of pairs, options.receivers as pathPatching. */
  pathPatchingSet(pairs, options) { return this.#runJob(this.#circuitSetJob('pathPatchingSet', pairs, options)); }
  /** componentTracing over a set of pairs: per layer at the corrupted positions, the last and the others. */
  componentTracingSet(pairs, options) { return this.#runJob(this.#circuitSetJob('componentTracingSet', pairs, options)); }
  /** directLogitAttribution of each pair's clean input along W_U[answer clean] - W_U[answer corrupted]. */
  attributionSet(pairs, options) { return this.#runJob(this.#circuitSetJob('attributionSet', pairs, options)); }

  #circuitSetJob(kind, pairs, options) {
    const extra = { patternValueSet: ['minEffect'], pathPatchingSet: ['receivers', 'direction', 'freezeMlp'] }[kind] || [];
    const o = checkOptions(kind, options, ['limit', 'minGap', 'nBoot', 'seed', 'level', 'onProgress', 'signal', ...extra]);
    const prepared = this.#preparePairs(kind, pairs, o);
    const w = this.#live(), { nLayer, nHead } = this.config;
    const base = { nLayer, nHead, minGap: o.minGap ?? 1, ...this.#setStats(kind, o) };
    let steps;
    if (kind === 'patternValueSet') {
      if (o.minEffect !== undefined && !(typeof o.minEffect === 'number' && o.minEffect >= 0 && Number.isFinite(o.minEffect)))
        throw new AttnlabError('ERANGE', 'patternValueSet: options.minEffect must be a finite number >= 0');
      steps = circuits.patternValueSetSteps(w, this.#h, prepared, { ...base, minEffect: o.minEffect ?? 0.1 });
    } else if (kind === 'pathPatchingSet') {
      if (o.direction !== undefined && !(o.direction in circuits.DIRECTIONS))
        throw new AttnlabError('EINVAL', `pathPatchingSet: direction is 'denoise' or 'noise', not ${JSON.stringify(o.direction)}`);
      steps = circuits.pathPatchingSetSteps(w, this.#h, prepared, { ...base, receivers: o.receivers, direction: o.direction ?? 'denoise', freezeMlp: !!o.freezeMlp });
    } else if (kind === 'componentTracingSet') steps = circuits.componentTracingSetSteps(w, this.#h, prepared, base);
    else steps = circuits.attributionSetSteps(w, this.#h, prepared, base);
    return { steps, progress: this.#progressOptions(kind, o), finish: (r) => this.#pairsFinish(r, pairs, prepared) };
  }

  #headOutCache = new Map();
  #headOutputs(ids) {
    const key = Array.prototype.join.call(ids, ',');
    let v = this.#headOutCache.get(key);
    if (!v) {
      const { nLayer, nHead, headDim } = this.config;
      v = evidence.captureHeadOutputs(this.#live(), this.#h, ids, nLayer, nHead * headDim);
      if (this.#headOutCache.size >= 4) this.#headOutCache.delete(this.#headOutCache.keys().next().value);
      this.#headOutCache.set(key, v);
    }
    return v;
  }

  #ablationJob(input, options) {
    const w = this.#live();
    const o = checkOptions('ablationSemantics', options, ['reference', 'resample', 'draws', 'seed', 'onProgress', 'signal']);
    const ids = this.#evidenceInput('ablationSemantics', input);
    const reference = this.#referenceIds('ablationSemantics', o.reference);
    // without a resample text: K seeded windows of the reference (the CLI's default too); with one: its run, aligned
    if (o.resample !== undefined && o.draws !== undefined)
      throw new AttnlabError('EINVAL', 'ablationSemantics: options.draws takes windows of the reference; it does not go with options.resample');
    const draws = o.resample === undefined ? (o.draws === undefined ? 20 : checkIndex('draws', o.draws, 1, 10000)) : 0;
    const seed = o.seed === undefined ? 1 : checkIndex('seed', o.seed, 0, 0xffffffff);
    const resample = o.resample === undefined ? reference : this.#referenceIds('ablationSemantics', o.resample, 'resample');
    if (resample.length < ids.length)
      throw new AttnlabError('ETOOLONG', `ablationSemantics: the ${draws ? 'reference' : 'resample'} text has ${resample.length} tokens, fewer than the input's ${ids.length}`);
    const { nLayer, nHead } = this.config;
    const refOut = this.#headOutputs(reference), resOut = resample === reference ? refOut : this.#headOutputs(resample);
    return { steps: evidence.ablationSemanticsSteps(w, this.#h, ids, { reference, resample, refOut, resOut, nLayer, nHead, draws, seed }),
             progress: this.#progressOptions('ablationSemantics', o),
             finish: (r) => ({ ...r, ids, tokens: Array.from(ids, (id) => this.#token(id)) }) };
  }

  /**
   * Activation patching from a clean into a corrupted input of equal length:
   * the residual stream entering each layer at each position, and each head's
   * output at every position, taken from the clean run. Metric: the logit
   * difference of two answers at the last position, 0 = corrupted, 1 = clean.
   * @param {{answers?: [string|number, string|number]}} [options] default: the
   *   top next token of each run; a string answer must be exactly one token
   */
  activationPatching(clean, corrupt, options) {
    const w = this.#live();
    const o = checkOptions('activationPatching', options, ['answers']);
    const c = this.#evidenceInput('activationPatching (clean)', clean);
    const d = this.#evidenceInput('activationPatching (corrupted)', corrupt);
    if (c.length !== d.length)
      throw new AttnlabError('EINVAL', `activationPatching: the clean input has ${c.length} tokens, the corrupted one ${d.length}; they must be equal`);
    let answers;
    if (o.answers === undefined) {
      answers = [c, d].map((x) => { w.forward(this.#h, x); return w.resultTopk(this.#h, 1).ids[0]; });
    } else {
      if (!Array.isArray(o.answers) || o.answers.length !== 2)
        throw new AttnlabError('ETYPE', 'activationPatching: options.answers must be [clean answer, corrupted answer]');
      answers = o.answers.map((a, k) => {
        return this.#oneToken('activationPatching', `answer ${k}`, a);
      });
    }
    const r = evidence.activationPatching(w, this.#h, c, d, { answers, nLayer: this.config.nLayer, nHead: this.config.nHead });
    return { ...r, tokens: Array.from(c, (id) => this.#token(id)), corruptTokens: Array.from(d, (id) => this.#token(id)),
             answerTokens: answers.map((id) => this.#token(id)) };
  }

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
    const o = checkOptions('repeatedTokens', options, ['seed', 'lo', 'hi']);
    const V = this.config.vocabSize;
    checkIndex('n', n, 2, Math.floor(this.config.nPositions / 2));
    const seed = o.seed === undefined ? 0 : checkIndex('seed', o.seed, 0, 2 ** 32 - 1);
    const lo = o.lo === undefined ? 0 : checkIndex('lo', o.lo, 0, V - 1);
    const hi = o.hi === undefined ? V - 1 : checkIndex('hi', o.hi, lo + 1, V);
    const next = mulberry32(seed);
    const out = new Int32Array(2 * n);
    for (let i = 0; i < n; i++) out[i] = out[i + n] = lo + Math.floor(next() * (hi - lo));
    return out;
  }
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
          weights = 'auto' } =
    checkOptions('loadModel', options, ['onProgress', 'wasm', 'threads', 'wasmMT', 'wasmRelaxed', 'wasmRelaxedMT', 'backend',
                                        'threadWorker', 'signal', 'timeoutMs', 'redirects', 'weights']);
  if (!['auto', 'f32', 'half'].includes(weights))
    throw new AttnlabError(typeof weights === 'string' ? 'EINVAL' : 'ETYPE', "options.weights must be 'auto', 'f32' or 'half'");
  if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function')
    throw new AttnlabError('ETYPE', 'options.onProgress must be a function');
  const readOpts = checkReadOptions({ signal, timeoutMs, redirects });
  const emit = onProgress ? (e) => onProgress(e) : () => {};
  const src = await resolveSource(source);
  const t0 = performance.now();
  const { w, engine } = await instanceFor({ wasm, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threads, threadWorker });
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
