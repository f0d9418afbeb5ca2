// wasm.js — the low layer: loads attnlab.wasm without any Emscripten JS glue,
// mirrors the C exports 1:1 and owns wasm memory.
//
// attnlab-relaxed.wasm and attnlab-relaxed-mt.wasm (clang-19, relaxed SIMD:
// backend.js) have the same imports and exports as these two and load the same way.
//
// The module is built with -sSTANDALONE_WASM --no-entry (a WASI "reactor"):
// we instantiate it ourselves, give it the handful of imports it asks for
// (imports.js), call its _initialize, and talk to it through numbers and
// pointers. The multithreaded build, attnlab-mt.wasm, has the same exports and
// more: it imports a shared memory that this file creates, starts with
// __wasm_call_ctors, and with {threads: n} gets n-1 helper threads
// (threads.js) that split its forward pass; numbers are bit for bit the same.
//
// Memory rules of this file
//   - Every buffer this file allocates is freed in the same function, in a
//     finally block; the one exception is a model's safetensors buffer, whose
//     ownership passes to C (alab_model_load_buffers frees it, even on failure).
//   - Results are copied out of wasm memory (Float32Array#slice), so they stay
//     valid after the next forward, after dispose and after memory growth.
//   - Memory may grow during any call, which detaches the old ArrayBuffer;
//     views are therefore re-read from memory.buffer on every access (u8, i32,
//     f32 getters), never kept across a call into wasm.
//   - Pointers come back from wasm as signed i32; with up to 4 GB of memory
//     they are read as unsigned (>>> 0).
//
// Failures throw AttnlabError (errors.js): C return codes become their stable
// code with alab_last_error() as the message; a trap becomes EWASM and the
// instance refuses further calls (its heap can no longer be trusted).
//
// This layer checks only what C cannot see (that an integer argument is one).
// Friendlier names, defaults, string options and argument validation belong to
// the layer above (web/src/model.js, options.js). No module outside core/ calls
// an export itself: each has its method here or in measure-exports.js.

import { AttnlabError, errorFromRc } from './errors.js';
import { makeImports, importsSharedMemory, decodeUtf8, MT_INITIAL_PAGES, MT_MAXIMUM_PAGES } from './imports.js';
import { startHelpers, callerCanBlock, MAX_THREADS } from './threads.js';
import { backendOfLevel } from './backend.js';
import { MEASURE_METHODS } from './measure-exports.js';
import {
  C, CONFIG_FIELDS, INTERVENTION_FIELDS, KERNELS, EXPORTS, UNSIGNED_RESULTS, WEIGHTS, HOPFIELD_MODES, FEATURE_MAPS,
  LINATTN_FORMS,
} from './abi.js';

// What crosses the boundary (constants, error codes, the config and intervention
// layouts, the export list) is generated from the C sources into abi.js.
export const { DO_HARD, DO_SOFT, ABLATE, SCALE_Q, SCALE_K, SWAP_QK, MASK_CAUSAL, MASK_FULL, MASK_WINDOW, ALL_HEADS } = C;
export { CONFIG_FIELDS, KERNELS, HOPFIELD_MODES, FEATURE_MAPS, LINATTN_FORMS };

const IV_FLOATS = INTERVENTION_FIELDS.length;
// What an intervention field is when the caller leaves it out (kind, layer and head must be given).
const IV_DEFAULTS = Object.freeze({ row: 0, col: 0, lambda: 0, alpha: 1 });
// Exports of one build only: the reactor's, and the pthread build's runtime.
const BUILD_EXPORTS = Object.freeze({
  st: ['memory', '_initialize'],
  mt: ['__wasm_call_ctors', '_emscripten_thread_init', 'emscripten_tls_init', 'stackRestore'],
});
const UNSIGNED = new Set(UNSIGNED_RESULTS);

/** Where the .wasm is looked for when no source is given: web/dist/attnlab.wasm. */
export function defaultWasmURL() {
  return new URL('../../dist/attnlab.wasm', import.meta.url);
}
/** The same for the multithreaded build: web/dist/attnlab-mt.wasm. */
export function defaultWasmMTURL() {
  return new URL('../../dist/attnlab-mt.wasm', import.meta.url);
}

const utf8Encoder = new TextEncoder();

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

/**
 * Compile and instantiate attnlab.wasm or attnlab-mt.wasm (told apart by
 * their imports).
 * @param {WebAssembly.Module|ArrayBuffer|ArrayBufferView|Response|URL|string} [source]
 *   the module, its bytes, a fetch Response, or its URL (file: URLs are read
 *   with node:fs); default defaultWasmURL().
 * @param {{threads?: number, threadWorker?: string|URL}} [options]
 *   threads: with attnlab-mt.wasm, the threads to split runs over (1..16, the
 *   caller included; 1 starts no helper); threadWorker: the URL of thread.js
 *   where a bundler cannot find it.
 * @returns {Promise<AttnlabWasm>}
 */
export async function instantiateAttnlab(source = defaultWasmURL(), { threads = 1, threadWorker } = {}) {
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS)
    throw new AttnlabError('ERANGE', `threads must be an integer in [1, ${MAX_THREADS}], got ${threads}`);
  let module;
  try {
    module = await compile(source);
  } catch (e) {
    if (e instanceof AttnlabError) throw e;
    throw new AttnlabError('EWASM', `attnlab.wasm could not be compiled: ${e.message}`, { cause: e });
  }
  const mt = importsSharedMemory(module);
  const exported = new Set(WebAssembly.Module.exports(module).map((x) => x.name));
  const missing = [...EXPORTS, ...BUILD_EXPORTS[mt ? 'mt' : 'st']].filter((name) => !exported.has(name));
  if (missing.length)
    throw new AttnlabError('EWASM', `attnlab.wasm lacks exports: ${missing.join(', ')} (rebuild with make wasm)`);
  if (threads > 1 && !mt)
    throw new AttnlabError('EINVAL', `threads: ${threads} needs the multithreaded build attnlab-mt.wasm, not attnlab.wasm`);

  let memory = null;
  if (mt) {
    try {
      memory = new WebAssembly.Memory({ initial: MT_INITIAL_PAGES, maximum: MT_MAXIMUM_PAGES, shared: true });
    } catch (e) {
      throw new AttnlabError('ETHREAD', `a shared WebAssembly.Memory cannot be made here: ${e.message}`, { cause: e });
    }
  }
  const env = {
    memory, onGrow: null, exports: null, canBlock: callerCanBlock(),
    isMainBrowserThread: typeof window !== 'undefined' && typeof WorkerGlobalScope === 'undefined',
  };
  const imports = makeImports(module, env);
  let instance;
  try {
    instance = await WebAssembly.instantiate(module, imports);
  } catch (e) {
    throw new AttnlabError('EWASM', `attnlab.wasm could not be instantiated: ${e.message}`, { cause: e });
  }
  env.memory = memory || instance.exports.memory;
  env.exports = instance.exports;
  const wasm = new AttnlabWasm(instance, module, env.memory);
  env.onGrow = () => wasm._onGrow();
  try {
    if (mt) instance.exports.__wasm_call_ctors(); // static constructors + the main thread's libc state
    else instance.exports._initialize();          // static constructors of the reactor
  } catch (e) {
    throw new AttnlabError('EWASM', `attnlab.wasm failed to initialise: ${e.message}`, { cause: e });
  }
  if (threads > 1) {
    wasm._threads = await startHelpers(wasm, threads, { workerURL: threadWorker });
  }
  return wasm;
}

async function compile(source) {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (typeof Response !== 'undefined' && source instanceof Response) return compileResponse(source);
  if (typeof source === 'string' || source instanceof URL) {
    const url = new URL(source, typeof location !== 'undefined' ? location.href : undefined);
    if (url.protocol === 'file:') {
      const { readFile } = await import('node:fs/promises');
      return WebAssembly.compile(await readFile(url));
    }
    return compileResponse(await fetch(url));
  }
  throw new AttnlabError('ETYPE', 'attnlab.wasm source must be a WebAssembly.Module, bytes, a Response or a URL');
}

async function compileResponse(res) {
  if (!res.ok) throw new AttnlabError('EWASM', `attnlab.wasm: HTTP ${res.status} for ${res.url}`);
  const type = res.headers.get('content-type') || '';
  if (WebAssembly.compileStreaming && type.split(';')[0].trim() === 'application/wasm')
    return WebAssembly.compileStreaming(res);
  return WebAssembly.compile(await res.arrayBuffer());
}


// ---------------------------------------------------------------------------
// The instance
// ---------------------------------------------------------------------------

function checkInt(name, v) {
  if (typeof v !== 'number') throw new AttnlabError('ETYPE', `${name} must be a number, got ${typeof v}`);
  if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647)
    throw new AttnlabError('EINVAL', `${name} must be a 32-bit integer, got ${v}`);
  return v;
}

function checkNumber(name, v) {
  if (typeof v !== 'number') throw new AttnlabError('ETYPE', `${name} must be a number, got ${typeof v}`);
  return v;
}

// ids as an Int32Array, checking each is an integer (Int32Array.from would truncate 1.5 to 1).
function toIds(name, ids) {
  if (ids instanceof Int32Array) return ids;
  if (ids == null || typeof ids.length !== 'number')
    throw new AttnlabError('ETYPE', `${name} must be an array of token ids`);
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = checkInt(`${name}[${i}]`, ids[i]);
  return out;
}

// The shortest decimal that rounds to the same float32 (1e-5, not 0.0000099999997).
function shortestF32(x) {
  const f = Math.fround(x);
  for (let p = 1; p < 9; p++) {
    const y = Number(f.toPrecision(p));
    if (Math.fround(y) === f) return y;
  }
  return f;
}

function toBytes(name, v) {
  if (typeof v === 'string') return utf8Encoder.encode(v);
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw new AttnlabError('ETYPE', `${name} must be a string, an ArrayBuffer or a typed array`);
}

function rngBigInt(seed) {
  if (typeof seed === 'bigint') return BigInt.asUintN(64, seed);
  if (typeof seed === 'number' && Number.isSafeInteger(seed) && seed >= 0) return BigInt(seed);
  throw new AttnlabError('EINVAL', `seed must be a non-negative integer or a BigInt, got ${seed}`);
}

export class AttnlabWasm {
  constructor(instance, module, memory = instance.exports.memory) {
    this.instance = instance;
    this.module = module;
    this.memory = memory;
    /** True for attnlab-mt.wasm (shared memory). */
    this.multithreaded = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    this._threads = null; // {pool, threads, stop} of threads.js
    this._buf = null;
    this._trap = null;
    // The raw exports, each guarded: unsigned results, traps -> EWASM.
    this.fn = {};
    for (const [name, f] of Object.entries(instance.exports)) {
      if (typeof f !== 'function') continue;
      const unsigned = UNSIGNED.has(name);
      this.fn[name] = (...args) => {
        if (this._trap) throw new AttnlabError('EWASM', `attnlab.wasm trapped earlier (${this._trap.message}); load a new instance`);
        try {
          const r = f(...args);
          return unsigned ? r >>> 0 : r;
        } catch (e) {
          if (e instanceof WebAssembly.RuntimeError) {
            this._trap = e;
            throw new AttnlabError('EWASM', `attnlab.wasm trapped in ${name}: ${e.message}`, { cause: e });
          }
          throw e;
        }
      };
    }
  }

  // ---- memory ------------------------------------------------------------

  _views() {
    const buf = this.memory.buffer;
    if (buf !== this._buf) {
      this._buf = buf;
      this._u8 = new Uint8Array(buf);
      this._i32 = new Int32Array(buf);
      this._f32 = new Float32Array(buf);
    }
  }
  _onGrow() { this._buf = null; }
  get u8() { this._views(); return this._u8; }
  get i32() { this._views(); return this._i32; }
  get f32() { this._views(); return this._f32; }

  /** Bytes of wasm memory (grows, never shrinks). */
  memoryBytes() { return this.memory.buffer.byteLength; }
  /** Bytes in use by malloc (must stay flat across runs and load/free cycles). */
  heapInUse() { return this.fn.alab_wasm_heap_in_use(); }

  /** malloc that throws ENOMEM instead of returning 0. */
  malloc(n) {
    checkNumber('malloc size', n);
    if (!(n >= 0) || !Number.isInteger(n))
      throw new AttnlabError('EINVAL', `malloc size must be a non-negative integer, got ${n}`);
    if (n > 0xffffffff)
      throw new AttnlabError('ELIMIT', `malloc(${n}): ${(n / 2 ** 30).toFixed(1)} GiB requested; WebAssembly memory holds at most 4 GiB`);
    const p = this.fn.malloc(Math.max(n, 1));
    if (p === 0) throw new AttnlabError('ENOMEM', `wasm malloc(${n}) failed (memory ${this.memoryBytes()} bytes)`);
    return p;
  }
  free(p) { this.fn.free(p); }

  /** Copy bytes into wasm memory at ptr + offset. */
  writeBytes(ptr, bytes, offset = 0) { this.u8.set(bytes, ptr + offset); }

  /** Run fn(alloc) where alloc(bytes) mallocs; everything is freed afterwards. */
  scoped(fn) {
    const ptrs = [];
    const alloc = (n) => { const p = this.malloc(n); ptrs.push(p); return p; };
    try {
      return fn(alloc);
    } finally {
      // After a trap the instance is dead: freeing would throw and hide the original error.
      if (!this._trap) for (let i = ptrs.length - 1; i >= 0; i--) this.fn.free(ptrs[i]);
    }
  }

  readF32(ptr, n) { return this.f32.slice(ptr >>> 2, (ptr >>> 2) + n); }
  readI32(ptr, n) { return this.i32.slice(ptr >>> 2, (ptr >>> 2) + n); }
  readBytes(ptr, n) { return this.u8.slice(ptr, ptr + n); }
  readCString(ptr) {
    const u8 = this.u8;
    let end = ptr;
    while (u8[end] !== 0) end++;
    return decodeUtf8(u8.subarray(ptr, end));
  }

  // ---- errors ------------------------------------------------------------

  lastError() { return this.readCString(this.fn.alab_last_error()); }
  strerror(rc) { return this.readCString(this.fn.alab_strerror(rc)); }
  /** Throw the AttnlabError of a negative rc; return a non-negative one. */
  check(rc) {
    if (rc < 0) throw errorFromRc(rc, this.lastError(), this.strerror(rc));
    return rc;
  }

  version() { return this.readCString(this.fn.alab_wasm_version()); }
  /** Whether the kernels use wasm SIMD128 (both backends do; the relaxed build adds relaxed_madd). */
  simd() { return this.fn.alab_wasm_simd() >= 1; }
  /** 'relaxed-simd' (attnlab-relaxed*.wasm) or 'simd128' (attnlab*.wasm), as the module itself says. */
  backend() { return backendOfLevel(this.fn.alab_wasm_simd()); }

  // ---- model -------------------------------------------------------------

  /**
   * Load a model from its four files. Each file is a string or bytes.
   * Returns the model handle (a number; free it with modelFree).
   */
  loadModel({ config, safetensors, vocab, merges }) {
    const st = toBytes('safetensors', safetensors);
    const stPtr = this.malloc(st.length);
    try {
      this.writeBytes(stPtr, st);
    } catch (e) {
      this.free(stPtr);
      throw e;
    }
    return this.loadModelFromHeap({ config, vocab, merges }, stPtr, st.length);
  }

  /**
   * Load a model whose safetensors bytes the caller already wrote into
   * wasm memory at stPtr (from malloc) — e.g. streamed chunk by chunk, so the
   * weights never exist twice. stPtr belongs to the model from this call on,
   * whether it succeeds or throws.
   */
  loadModelFromHeap({ config, vocab, merges }, stPtr, stLen) {
    let owned = true; // stPtr still ours to free if we throw before the C call
    try {
      const cfg = toBytes('config', config);
      const voc = toBytes('vocab', vocab);
      const mrg = toBytes('merges', merges);
      return this.scoped((alloc) => {
        const c = alloc(cfg.length), v = alloc(voc.length), g = alloc(mrg.length);
        this.writeBytes(c, cfg);
        this.writeBytes(v, voc);
        this.writeBytes(g, mrg);
        owned = false;
        const m = this.fn.alab_wasm_load(c, cfg.length, stPtr, stLen, v, voc.length, g, mrg.length);
        if (m === 0) this.check(this.fn.alab_wasm_last_rc() || -1);
        if (this._threads) this.fn.alab_wasm_model_set_pool(m, this._threads.pool);
        return m;
      });
    } finally {
      if (owned) this.fn.free(stPtr);
    }
  }

  /**
   * Load a model from a Hugging Face folder's files: text files (strings or
   * bytes; config required, the rest optional: index, vocab, merges,
   * tokenizer, tokenizerConfig) and shards [{name, ptr, len}], safetensors
   * buffers the caller already wrote into wasm memory (from malloc). Every
   * shard buffer belongs to the model from this call on, whether it succeeds
   * or throws. weights: 'auto' (16-bit storage only when the f32 copy would not fit), 'f32' or 'half'.
   */
  loadModelFiles(files, shards, { weights = 'auto' } = {}) {
    let owned = true;
    try {
      const keys = ['config', 'index', 'vocab', 'merges', 'tokenizer', 'tokenizerConfig'];
      const bytes = keys.map((k) => (files[k] === undefined || files[k] === null ? null : toBytes(k, files[k])));
      if (!bytes[0]) throw new AttnlabError('EINVAL', 'loadModelFiles: no config');
      return this.scoped((alloc) => {
        const args = [];
        bytes.forEach((b) => {
          if (!b) { args.push(0, 0); return; }
          const p = alloc(Math.max(b.length, 1));
          this.writeBytes(p, b);
          args.push(p, b.length);
        });
        const n = shards.length;
        const pData = alloc(4 * Math.max(n, 1)), pLen = alloc(4 * Math.max(n, 1)), pName = alloc(4 * Math.max(n, 1));
        shards.forEach((sh, i) => {
          const nb = utf8Encoder.encode(String(sh.name ?? 'model.safetensors'));
          const pn = alloc(nb.length + 1);
          this.writeBytes(pn, nb);
          new Uint8Array(this.memory.buffer)[pn + nb.length] = 0;
          const u32 = new Uint32Array(this.memory.buffer);
          u32[(pData >>> 2) + i] = sh.ptr;
          u32[(pLen >>> 2) + i] = sh.len;
          u32[(pName >>> 2) + i] = pn;
        });
        owned = false;
        const mode = Object.hasOwn(WEIGHTS, weights) ? WEIGHTS[weights] : undefined;
        if (mode === undefined) throw new AttnlabError('EINVAL', `weights must be 'auto', 'f32' or 'half' (got ${String(weights)})`);
        const m = this.fn.alab_wasm_load_files(...args, n, pData, pLen, pName, mode);
        if (m === 0) this.check(this.fn.alab_wasm_last_rc() || -1);
        if (this._threads) this.fn.alab_wasm_model_set_pool(m, this._threads.pool);
        return m;
      });
    } finally {
      if (owned) for (const sh of shards) this.fn.free(sh.ptr);
    }
  }

  /** True when the model keeps its big matrices in 16 bits (weights: 'half', or auto on a model too big for f32). */
  modelHalf(m) { return this.fn.alab_wasm_model_half(m) === 1; }

  /** The model's family: config.json's model_type (the families: c/src/family.c; ModelConfig.family in types/index.d.ts). */
  modelFamily(m) { return this.readCString(this.fn.alab_wasm_model_family(m)); }

  /** The sliding window of layer l's own (causal) mask from config.json, 0 for none (alab_model_layer_window). */
  layerWindow(m, l) { return this.check(this.fn.alab_model_layer_window(m, l)); }

  modelFree(m) { this.fn.alab_model_free(m); }

  /** Free a tape of alab_wasm_tape_forward (the reverse mode's, backward.c); 0 is nothing. */
  tapeFree(tp) { this.fn.alab_tape_free(tp); }

  // ---- threads -----------------------------------------------------------

  /** Threads a run of this instance uses (1 without helpers). */
  threads() { return this._threads && !this._trap ? this.fn.alab_wasm_pool_parts(this._threads.pool) : 1; }
  /** The pool's threshold: products below this many multiply-adds run on one thread (tests set 0). */
  setParallelMinWork(madds) {
    if (this._threads) this.fn.alab_wasm_pool_set_min_work(this._threads.pool, checkNumber('madds', madds));
  }
  /** Stop the helper threads (idempotent); runs continue on one thread. */
  stopThreads() {
    if (!this._threads) return;
    const t = this._threads;
    this._threads = null;
    t.stop();
  }
  /**
   * For tests: one job over the pool in which part p writes p + 1, or with
   * data (a Float32Array) the f32 sum of its share of data, copied into wasm
   * memory first; with trapPart > 0 that helper traps instead. Returns the
   * parts' values.
   */
  poolSelftest(trapPart = 0, data = null) {
    if (!this._threads) throw new AttnlabError('ESTATE', 'no helper threads');
    return this.scoped((alloc) => {
      const out = alloc(4 * MAX_THREADS);
      this.i32.fill(0, out >>> 2, (out >>> 2) + MAX_THREADS);
      let d = 0;
      if (data) {
        d = alloc(4 * Math.max(data.length, 1));
        this.f32.set(data, d >>> 2);
      }
      const n = this.check(this.fn.alab_wasm_pool_selftest(this._threads.pool, out, checkInt('trapPart', trapPart), d, data ? data.length : 0));
      return data ? Array.from(this.readF32(out, n)) : Array.from(this.readI32(out, n));
    });
  }
  /** {n_layer, n_head, n_embd, vocab_size, n_positions, layer_norm_epsilon} */
  config(m) {
    const out = {};
    CONFIG_FIELDS.forEach((name, i) => { out[name] = this.fn.alab_wasm_config_get(m, i); });
    out.layer_norm_epsilon = shortestF32(out.layer_norm_epsilon);
    return out;
  }

  // ---- tokenizer ---------------------------------------------------------

  /** BPE ids of text (a string, or raw bytes that may be invalid UTF-8). */
  encode(m, text) { return this._encodeWith(this.fn.alab_wasm_encode, m, text); }
  /** The model's tokenizer without the BOS a run's input gets (one answer token is one token of text). */
  encodePlain(m, text) { return this._encodeWith(this.fn.alab_wasm_encode_plain, m, text); }

  // f(ids, cap, handle, text, len): room for one id per byte (plus a prefix
  // space); a text that NFC lengthens is retried with the count C reports.
  _encodeWith(f, h, text) {
    const bytes = toBytes('text', text);
    let cap = bytes.length + 1;
    for (let attempt = 0; ; attempt++) {
      const r = this.scoped((alloc) => {
        const t = alloc(bytes.length);
        this.writeBytes(t, bytes);
        const ids = alloc(4 * cap);
        const n = this.check(f(ids, cap, h, t, bytes.length));
        return n > cap ? n : this.readI32(ids, n);
      });
      if (typeof r !== 'number') return r;
      if (attempt > 0) throw new AttnlabError('ELIMIT', `encode: ${r} ids from ${bytes.length} bytes`);
      cap = r;
    }
  }

  // ---- a tokenizer on its own (tokenizer.json) ------------------------------

  /**
   * Load a Hugging Face tokenizer.json (string or bytes) and its optional
   * tokenizer_config.json; returns a tokenizer handle (free it with bpeFree).
   */
  bpeLoadHf(tokenizerJson, tokenizerConfig = null) {
    const j = toBytes('tokenizer.json', tokenizerJson);
    const c = tokenizerConfig == null ? new Uint8Array(0) : toBytes('tokenizer_config.json', tokenizerConfig);
    return this.scoped((alloc) => {
      const jp = alloc(j.length), cp = alloc(c.length);
      this.writeBytes(jp, j);
      this.writeBytes(cp, c);
      const b = this.fn.alab_wasm_bpe_load_hf(jp, j.length, cp, c.length) >>> 0;
      if (b === 0) this.check(this.fn.alab_wasm_last_rc() || -1);
      return b;
    });
  }
  bpeFree(b) { this.fn.alab_bpe_free(b); }
  /** Number of token ids (vocabulary and added tokens). */
  bpeVocabSize(b) { return this.check(this.fn.alab_bpe_vocab_size(b)); }
  /** The id to put before a text's ids (Llama 3's <|begin_of_text|>), or -1. */
  bpeBosToAdd(b) { return this.fn.alab_bpe_bos_to_add(b); }
  bpeEncode(b, text) { return this._encodeWith(this.fn.alab_wasm_bpe_encode, b, text); }
  bpeDecodeBytes(b, ids) {
    const arr = toIds('ids', ids);
    return this.scoped((alloc) => {
      const p = alloc(4 * Math.max(arr.length, 1));
      this.i32.set(arr, p >>> 2);
      return this._readGrowing((out, cap) => this.fn.alab_wasm_bpe_decode(out, cap, b, p, arr.length),
                               16 * arr.length + 16);
    });
  }
  bpeDisplay(b, id) {
    checkInt('token id', id);
    return decodeUtf8(this._readGrowing((out, cap) => this.fn.alab_wasm_bpe_display(out, cap, b, id), 64));
  }

  // Call f(out, cap) with a growing output buffer until the result fits.
  _readGrowing(f, cap) {
    for (;;) {
      const r = this.scoped((alloc) => {
        const out = alloc(cap);
        const len = this.check(f(out, cap));
        return len < cap ? this.readBytes(out, len) : len;
      });
      if (r instanceof Uint8Array) return r;
      cap = r + 1;
    }
  }

  /** Bytes of the concatenated tokens. */
  decodeBytes(m, ids) {
    const arr = toIds('ids', ids);
    return this.scoped((alloc) => {
      const p = alloc(4 * Math.max(arr.length, 1));
      this.i32.set(arr, p >>> 2);
      return this._readGrowing((out, cap) => this.fn.alab_wasm_decode(out, cap, m, p, arr.length),
                               16 * arr.length + 16);
    });
  }
  decode(m, ids) { return decodeUtf8(this.decodeBytes(m, ids)); }

  /** Bytes of one token decoded alone (none for an id beyond the tokenizer). */
  tokenBytes(m, id) {
    return this._readGrowing((out, cap) => this.fn.alab_wasm_token_bytes(out, cap, m, id), 64);
  }

  /** Display string of one token, for labels (Ġ shown as a space). */
  tokenDisplay(m, id) {
    checkInt('token id', id);
    return decodeUtf8(
      this._readGrowing((out, cap) => this.fn.alab_wasm_token_display(out, cap, m, id), 64));
  }

  // ---- forward -----------------------------------------------------------

  /**
   * Run the model on ids. opts (all numeric, as in C):
   *   interventions  [{kind, layer, head, row, col, lambda, alpha}]  (DO_HARD/DO_SOFT/ABLATE/SCALE_Q/SCALE_K/SWAP_QK,
   *                  head ALL_HEADS = -1; lambda: soft do; alpha: the factor of SCALE_Q/SCALE_K)
   *   mask, window   MASK_* and W;  layerMask, layerWindow  optional per-layer arrays (L)
   *   scale          null = 1/sqrt(HS), else the score scale (0 = uniform attention)
   *   captureLayer, captureHead  -1 = none
   * Results are read with resultAttention, resultLogits, resultQ/K, resultTopk.
   */
  forward(m, ids, opts = {}) {
    const {
      interventions = [], mask = MASK_CAUSAL, window = 0, layerMask = null, layerWindow = null,
      scale = null, captureLayer = -1, captureHead = -1,
    } = opts;
    const idArr = toIds('ids', ids);
    checkInt('mask', mask);
    checkInt('window', window);
    if (scale !== null) checkNumber('scale', scale);
    checkInt('captureLayer', captureLayer);
    checkInt('captureHead', captureHead);
    const iv = new Float32Array(IV_FLOATS * interventions.length);
    interventions.forEach((x, i) => {
      const fields = INTERVENTION_FIELDS.map((f) => x[f] ?? IV_DEFAULTS[f]);
      fields.forEach((v, j) => checkNumber(`intervention ${i} field ${j}`, v));
      iv.set(fields, IV_FLOATS * i);
    });
    return this.scoped((alloc) => {
      const pIds = alloc(4 * Math.max(idArr.length, 1));
      const pIv = alloc(4 * Math.max(iv.length, 1));
      this.i32.set(idArr, pIds >>> 2);
      this.f32.set(iv, pIv >>> 2);
      let pLm = 0, pLw = 0;
      if (layerMask) {
        const a = toIds('layerMask', layerMask);
        pLm = alloc(4 * Math.max(a.length, 1));
        this.i32.set(a, pLm >>> 2);
      }
      if (layerWindow) {
        const a = toIds('layerWindow', layerWindow);
        pLw = alloc(4 * Math.max(a.length, 1));
        this.i32.set(a, pLw >>> 2);
      }
      this.check(this.fn.alab_wasm_forward(m, pIds, idArr.length, pIv, interventions.length, mask,
                                           window, pLm, pLw, scale === null ? 0 : 1, scale ?? 0,
                                           captureLayer, captureHead));
    });
  }

  resultT(m) { return this.fn.alab_result_T(m); }
  /** The address of the last run's attention (L, NH, T, T) in wasm memory, valid until the next run; 0 before any (the measures read it in place). */
  resultAttentionAt(m) { return this.fn.alab_result_attention(m); }

  /** Copy of the last run's attention, (L, NH, T, T); throws ESTATE before any run. */
  resultAttention(m) {
    const { n_layer, n_head } = this.config(m);
    const T = this.resultT(m);
    const p = this.fn.alab_result_attention(m);
    if (!p || T <= 0) throw new AttnlabError('ESTATE', 'no attention: run forward first');
    return this.readF32(p, n_layer * n_head * T * T);
  }

  /**
   * What a figure reads off the last run besides the attention itself, computed
   * in C on the live result buffer: {dagScores: number[L][NH] (each head's DAG
   * score), headAverages: Float32Array (L, T, T) (the mean over each layer's
   * heads), layerDagScores: number[L] (the DAG score of each layer's average)}.
   */
  resultSummary(m) {
    const { n_layer: L, n_head: H } = this.config(m);
    const T = this.resultT(m);
    const att = this.fn.alab_result_attention(m);
    if (!att || T <= 0) throw new AttnlabError('ESTATE', 'no attention: run forward first');
    const TT = T * T;
    const at = (base, i) => base + 4 * i * TT; // the i-th (T, T) matrix from base
    const dagScores = Array.from({ length: L }, (_, l) =>
      Array.from({ length: H }, (_, h) => this.fn.alab_dag_score(at(att, l * H + h), T)));
    const layerDagScores = [];
    const headAverages = this.scoped((alloc) => {
      const avg = alloc(4 * L * TT);
      for (let l = 0; l < L; l++) {
        this.fn.alab_head_average(at(avg, l), at(att, l * H), H, T);
        layerDagScores.push(this.fn.alab_dag_score(at(avg, l), T));
      }
      return this.readF32(avg, L * TT);
    });
    return { dagScores, headAverages, layerDagScores };
  }

  /** Copy of the last position's logits, (V). */
  resultLogits(m) {
    const p = this.fn.alab_result_logits(m);
    if (!p || this.resultT(m) <= 0) throw new AttnlabError('ESTATE', 'no logits: run forward first');
    return this.readF32(p, this.config(m).vocab_size);
  }

  /** Copies of q and k of the captured head, each (T, HS); null if none was captured. */
  resultQ(m) { return this._resultQK(m, this.fn.alab_result_q(m)); }
  resultK(m) { return this._resultQK(m, this.fn.alab_result_k(m)); }
  _resultQK(m, p) {
    if (!p) return null;
    return this.readF32(p, this.resultT(m) * this.config(m).head_dim);
  }

  /** The k most likely next tokens of the last run: {ids: Int32Array, probs: Float32Array}. */
  resultTopk(m, k) {
    checkInt('k', k);
    const kk = Math.max(0, Math.min(k, this.config(m).vocab_size));
    return this.scoped((alloc) => {
      const pi = alloc(4 * Math.max(kk, 1)), pp = alloc(4 * Math.max(kk, 1));
      const n = this.check(this.fn.alab_result_topk(pi, pp, kk, m));
      const got = n > 0 ? Math.min(n, kk) : kk;
      return { ids: this.readI32(pi, got), probs: this.readF32(pp, got) };
    });
  }

  /**
   * Sample up to maxNew tokens after ids. rngState is a BigInt (uint64) that
   * the call advances; the new state is returned with the ids.
   */
  generate(m, ids, { maxNew, temperature = 0, topK = 0, rngState = 0n }) {
    checkInt('maxNew', maxNew);
    checkNumber('temperature', temperature);
    checkInt('topK', topK);
    const idArr = toIds('ids', ids);
    return this.scoped((alloc) => {
      const pIds = alloc(4 * Math.max(idArr.length, 1));
      const pOut = alloc(4 * Math.max(maxNew, 1));
      const pRng = alloc(8);
      this.i32.set(idArr, pIds >>> 2);
      new DataView(this.memory.buffer).setBigUint64(pRng, BigInt.asUintN(64, BigInt(rngState)), true);
      const n = this.check(this.fn.alab_wasm_generate(pOut, maxNew, m, pIds, idArr.length,
                                                      temperature, topK, pRng));
      return {
        ids: this.readI32(pOut, n),
        rngState: new DataView(this.memory.buffer).getBigUint64(pRng, true),
      };
    });
  }

  // ---- analysis (pure functions on arrays) -------------------------------

  // Call f with the arrays copied into wasm memory; returns f's result.
  _withF32(arrays, f) {
    return this.scoped((alloc) => {
      const ptrs = arrays.map((a) => {
        const p = alloc(4 * Math.max(a.length, 1));
        this.f32.set(a, p >>> 2);
        return p;
      });
      return f(ptrs, alloc);
    });
  }

  dagScore(A, T) {
    checkInt('T', T);
    return this._withF32([A], ([a]) => this.fn.alab_dag_score(a, T));
  }
  nullDagScore(T) { return this.fn.alab_null_dag_score(checkInt('T', T)); }
  /** The null of uniform attention under mask mode (0 causal, 1 full, 2 window) and window W. */
  maskNullDagScore(mode, window, T) {
    return this.fn.alab_mask_null_dag_score(checkInt('mode', mode), checkInt('window', window), checkInt('T', T));
  }
  asymmetry(A, T) {
    checkInt('T', T);
    return this._withF32([A], ([a], alloc) => {
      const out = alloc(4 * T * T);
      this.fn.alab_asymmetry(out, a, T);
      return this.readF32(out, T * T);
    });
  }
  headAverage(att, NH, T) {
    checkInt('NH', NH);
    checkInt('T', T);
    return this._withF32([att], ([a], alloc) => {
      const out = alloc(4 * T * T);
      this.fn.alab_head_average(out, a, NH, T);
      return this.readF32(out, T * T);
    });
  }
  /** {out: (HS,HS) q k^T, trace: q.k} */
  outerProduct(q, k, HS) {
    checkInt('HS', HS);
    return this._withF32([q, k], ([pq, pk], alloc) => {
      const out = alloc(4 * HS * HS);
      const trace = this.fn.alab_outer_product(out, pq, pk, HS);
      return { out: this.readF32(out, HS * HS), trace };
    });
  }
  attentionEntropy(A, T) {
    checkInt('T', T);
    return this._withF32([A], ([a]) => this.fn.alab_attention_entropy(a, T));
  }
  displayDo(A, T, row, col, hard, lambda = 0) {
    checkInt('T', T);
    checkInt('row', row);
    checkInt('col', col);
    checkNumber('lambda', lambda);
    return this._withF32([A], ([a], alloc) => {
      const out = alloc(4 * T * T);
      this.check(this.fn.alab_display_do(out, a, T, row, col, hard ? 1 : 0, lambda));
      return this.readF32(out, T * T);
    });
  }

  /** One kernel of ops.h (KERNELS), fast or reference; returns its output. */
  kernel(op, { ref = false, inp, w = null, b = null, T, C, OC = 0 }) {
    checkInt('T', T);
    checkInt('C', C);
    checkInt('OC', OC);
    const outLen = op === KERNELS.matmul || op === KERNELS.matmul_nt ? T * OC : T * C;
    return this._withF32([inp, w ?? [], b ?? []], ([pi, pw, pb], alloc) => {
      const out = alloc(4 * Math.max(outLen, 1));
      this.check(this.fn.alab_wasm_kernel(op, ref ? 1 : 0, out, pi, w ? pw : 0, b ? pb : 0, T, C, OC));
      return this.readF32(out, outLen);
    });
  }

  // ---- lineage demos: Hopfield and linear attention (c/src/hopfield.c, linattn.c) ----
  // Arrays are copied in and out (Float32Array results), sizes are checked to be
  // integers, C codes become AttnlabError. The friendly layer with option objects,
  // string names and argument checks is web/src/lineage.js. An RNG state is a
  // uint64 (BigInt or a non-negative integer Number); the advanced state is not
  // returned: callers pass a seed per call, so every result is reproducible.

  // alloc(8) holding seed; read back with _rngOut
  _rngIn(alloc, seed) {
    const p = alloc(8);
    new DataView(this.memory.buffer).setBigUint64(p, rngBigInt(seed), true);
    return p;
  }
  _f64(p) { return new DataView(this.memory.buffer).getFloat64(p, true); }
  _f64s(p, n) {
    const dv = new DataView(this.memory.buffer);
    const out = new Float64Array(n);
    for (let k = 0; k < n; k++) out[k] = dv.getFloat64(p + 8 * k, true);
    return out;
  }
  _i32at(p) { return this.i32[p >>> 2]; }

  glyph(g) {
    checkInt('g', g);
    return this.scoped((alloc) => {
      const out = alloc(4 * 100);
      this.check(this.fn.alab_glyph(out, g));
      return this.readF32(out, 100);
    });
  }

  hopfieldHebbian(patterns, P, N) {
    checkInt('P', P);
    checkInt('N', N);
    return this._withF32([patterns], ([pp], alloc) => {
      const W = alloc(4 * Math.max(N * N, 1));
      this.check(this.fn.alab_hopfield_hebbian(W, pp, P, N));
      return this.readF32(W, N * N);
    });
  }

  hopfieldEnergy(W, s, N) {
    checkInt('N', N);
    return this._withF32([W, s], ([pw, ps], alloc) => {
      const e = alloc(8);
      this.check(this.fn.alab_hopfield_energy(e, pw, ps, N));
      return this._f64(e);
    });
  }

  hopfieldOverlap(a, b, N) {
    checkInt('N', N);
    return this._withF32([a, b], ([pa, pb]) => this.fn.alab_hopfield_overlap(pa, pb, N));
  }

  /** One step; returns {state, flipped}. */
  hopfieldStep(W, s, N, mode, seed) {
    checkInt('N', N);
    checkInt('mode', mode);
    return this._withF32([W, s], ([pw, ps], alloc) => {
      const f = alloc(4), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_hopfield_step(ps, f, pw, N, mode, r));
      return { state: this.readF32(ps, N), flipped: this._i32at(f) };
    });
  }

  /** Run to a fixed point; returns {state, energies (steps + 1), steps, converged}. */
  hopfieldRun(W, s, N, mode, maxSteps, seed) {
    checkInt('N', N);
    checkInt('mode', mode);
    checkInt('maxSteps', maxSteps);
    return this._withF32([W, s], ([pw, ps], alloc) => {
      const e = alloc(8 * (Math.max(maxSteps, 0) + 1)), n = alloc(4), c = alloc(4), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_hopfield_run(ps, e, n, c, pw, N, mode, maxSteps, r));
      const steps = this._i32at(n);
      return { state: this.readF32(ps, N), energies: this._f64s(e, steps + 1), steps, converged: this._i32at(c) === 1 };
    });
  }

  hopfieldCorrupt(pattern, N, frac, seed) {
    checkInt('N', N);
    checkNumber('frac', frac);
    return this._withF32([pattern], ([pp], alloc) => {
      const out = alloc(4 * Math.max(N, 1)), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_hopfield_corrupt(out, pp, N, frac, r));
      return this.readF32(out, N);
    });
  }

  /** {success, overlap} (Float32Array per load). */
  hopfieldCapacity(loads, N, noise, threshold, trials, seed) {
    checkInt('N', N);
    checkInt('trials', trials);
    checkNumber('noise', noise);
    checkNumber('threshold', threshold);
    return this._withF32([loads], ([pl], alloc) => {
      const L = loads.length;
      const s = alloc(4 * Math.max(L, 1)), o = alloc(4 * Math.max(L, 1)), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_hopfield_capacity(s, o, pl, L, N, noise, threshold, trials, r));
      return { success: this.readF32(s, L), overlap: this.readF32(o, L) };
    });
  }

  /** One modern Hopfield update: {state (d), weights (N)}. X (N,d) rows. */
  mhopfieldStep(X, xi, N, d, beta) {
    checkInt('N', N);
    checkInt('d', d);
    checkNumber('beta', beta);
    return this._withF32([X, xi], ([px, pxi], alloc) => {
      const out = alloc(4 * Math.max(d, 1)), p = alloc(4 * Math.max(N, 1));
      this.check(this.fn.alab_mhopfield_step(out, p, px, pxi, N, d, beta));
      return { state: this.readF32(out, d), weights: this.readF32(p, N) };
    });
  }

  mhopfieldEnergy(X, xi, N, d, beta) {
    checkInt('N', N);
    checkInt('d', d);
    checkNumber('beta', beta);
    return this._withF32([X, xi], ([px, pxi], alloc) => {
      const e = alloc(8);
      this.check(this.fn.alab_mhopfield_energy(e, px, pxi, N, d, beta));
      return this._f64(e);
    });
  }

  /** Iterate to a fixed point: {state, weights, energies (steps + 1), steps, converged}. */
  mhopfieldRun(X, xi, N, d, beta, maxSteps, tol) {
    checkInt('N', N);
    checkInt('d', d);
    checkInt('maxSteps', maxSteps);
    checkNumber('beta', beta);
    checkNumber('tol', tol);
    return this._withF32([X, xi], ([px, pxi], alloc) => {
      const e = alloc(8 * (Math.max(maxSteps, 0) + 1)), p = alloc(4 * Math.max(N, 1));
      const n = alloc(4), c = alloc(4);
      this.check(this.fn.alab_mhopfield_run(pxi, e, p, n, c, px, N, d, beta, maxSteps, tol));
      const steps = this._i32at(n);
      return {
        state: this.readF32(pxi, d), weights: this.readF32(p, N), energies: this._f64s(e, steps + 1),
        steps, converged: this._i32at(c) === 1,
      };
    });
  }

  softmaxAttention(Q, K, V, T, d, dv, scale, causal) {
    for (const [k, v] of [['T', T], ['d', d], ['dv', dv]]) checkInt(k, v);
    checkNumber('scale', scale);
    return this._withF32([Q, K, V], ([pq, pk, pv], alloc) => {
      const out = alloc(4 * Math.max(T * dv, 1));
      this.check(this.fn.alab_softmax_attention(out, pq, pk, pv, T, d, dv, scale, causal ? 1 : 0));
      return this.readF32(out, T * dv);
    });
  }

  /** {out (dv), weights (T)} of one query. */
  attentionSingle(q, K, V, T, d, dv, scale) {
    for (const [k, v] of [['T', T], ['d', d], ['dv', dv]]) checkInt(k, v);
    checkNumber('scale', scale);
    return this._withF32([q, K, V], ([pq, pk, pv], alloc) => {
      const out = alloc(4 * Math.max(dv, 1)), p = alloc(4 * Math.max(T, 1));
      this.check(this.fn.alab_attention_single(out, p, pq, pk, pv, T, d, dv, scale));
      return { out: this.readF32(out, dv), weights: this.readF32(p, T) };
    });
  }

  favorWeights(m, d, seed) {
    checkInt('m', m);
    checkInt('d', d);
    return this.scoped((alloc) => {
      const W = alloc(4 * Math.max(m * d, 1)), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_favor_weights(W, m, d, r));
      return this.readF32(W, m * d);
    });
  }

  featureDim(kind, d, m) { return this.check(this.fn.alab_feature_dim(checkInt('kind', kind), checkInt('d', d), checkInt('m', m))); }

  featureMap(x, T, d, kind, W, m) {
    const M = this.featureDim(kind, d, m);
    checkInt('T', T);
    return this._withF32([x, W ?? []], ([px, pw], alloc) => {
      const out = alloc(4 * Math.max(T * M, 1));
      this.check(this.fn.alab_feature_map(out, px, T, d, kind, W ? pw : 0, m));
      return this.readF32(out, T * M);
    });
  }

  linearAttention(Q, K, V, T, d, dv, kind, W, m, causal, form) {
    for (const [k, v] of [['T', T], ['d', d], ['dv', dv], ['kind', kind], ['m', m], ['form', form]]) checkInt(k, v);
    return this._withF32([Q, K, V, W ?? []], ([pq, pk, pv, pw], alloc) => {
      const out = alloc(4 * Math.max(T * dv, 1));
      this.check(this.fn.alab_linear_attention(out, pq, pk, pv, T, d, dv, kind, W ? pw : 0, m, causal ? 1 : 0, form));
      return this.readF32(out, T * dv);
    });
  }

  /**
   * Wall-clock milliseconds of `reps` calls of softmax attention and of causal
   * linear attention (the recurrent form) on the same Q, K, V already in wasm
   * memory: {softmax: ms per call, linear: ms per call}. `now` is a clock in ms.
   */
  timeAttention(Q, K, V, T, d, dv, kind, W, m, reps, now) {
    for (const [k, v] of [['T', T], ['d', d], ['dv', dv], ['kind', kind], ['m', m], ['reps', reps]]) checkInt(k, v);
    return this._withF32([Q, K, V, W ?? []], ([pq, pk, pv, pw], alloc) => {
      const out = alloc(4 * Math.max(T * dv, 1));
      const scale = 1 / Math.sqrt(d);
      const t0 = now();
      for (let r = 0; r < reps; r++) this.check(this.fn.alab_softmax_attention(out, pq, pk, pv, T, d, dv, scale, 1));
      const t1 = now();
      for (let r = 0; r < reps; r++)
        this.check(this.fn.alab_linear_attention(out, pq, pk, pv, T, d, dv, kind, W ? pw : 0, m, 1, LINATTN_FORMS.rnn));
      const t2 = now();
      return { softmax: (t1 - t0) / reps, linear: (t2 - t1) / reps };
    });
  }

  qkSamples(n, dk, seed) {
    checkInt('n', n);
    checkInt('dk', dk);
    return this.scoped((alloc) => {
      const out = alloc(4 * Math.max(n, 1)), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_qk_samples(out, n, dk, r));
      return this.readF32(out, n);
    });
  }

  /** Float64Array(4): mean, variance of q.k, then of q.k / sqrt(dk). */
  qkStats(n, dk, seed) {
    checkInt('n', n);
    checkInt('dk', dk);
    return this.scoped((alloc) => {
      const out = alloc(32), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_qk_stats(out, n, dk, r));
      return this._f64s(out, 4);
    });
  }

  softmaxEntropyMean(T, dk, nQueries, scaled, seed) {
    checkInt('T', T);
    checkInt('dk', dk);
    checkInt('nQueries', nQueries);
    return this.scoped((alloc) => {
      const out = alloc(8), r = this._rngIn(alloc, seed);
      this.check(this.fn.alab_softmax_entropy_mean(out, T, dk, nQueries, scaled ? 1 : 0, r));
      return this._f64(out);
    });
  }

  // ---- heads: importance and roles (c/src/heads.c) ----
  // The friendly layer (text input, options) is the heads section of
  // web/src/measures.js; the repeated random sequence is web/src/sets.js's.

  /** Next-token loss of the last run: {nllSum (nats), n}. */
  resultNll(m) {
    return this.scoped((alloc) => {
      const s = alloc(8), n = alloc(4);
      this.check(this.fn.alab_result_nll(s, n, m));
      return { nllSum: new DataView(this.memory.buffer).getFloat64(s, true), n: this.i32[n >>> 2] };
    });
  }

  /** The loss of every position of the last run (T - 1 of them, nats): Float64Array. */
  resultNllEach(m, T) {
    checkInt('T', T);
    const n = Math.max(0, T - 1);
    return this.scoped((alloc) => {
      const p = alloc(8 * Math.max(1, n));
      this.check(this.fn.alab_result_nll_each(p, n, m));
      return this._f64s(p, n);
    });
  }

  /** {baseLoss, delta: Float32Array (L*NH)}: loss increase when each head is ablated alone. */
  headImportance(m, ids) {
    const idArr = toIds('ids', ids);
    const { n_layer, n_head } = this.config(m);
    const LH = n_layer * n_head;
    return this.scoped((alloc) => {
      const pIds = alloc(4 * Math.max(idArr.length, 1)), pD = alloc(4 * LH), pB = alloc(8);
      this.i32.set(idArr, pIds >>> 2);
      this.check(this.fn.alab_head_importance(pD, pB, m, pIds, idArr.length));
      return { baseLoss: new DataView(this.memory.buffer).getFloat64(pB, true), delta: this.readF32(pD, LH) };
    });
  }

  /** {loss: Float32Array (L*NH + 1), order: Int32Array (L*NH)}: the pruning curve for delta. */
  pruningCurve(m, ids, delta) {
    const idArr = toIds('ids', ids);
    const { n_layer, n_head } = this.config(m);
    const LH = n_layer * n_head;
    if (delta.length !== LH)
      throw new AttnlabError('EINVAL', `delta must have L*NH = ${LH} entries, got ${delta.length}`);
    return this._withF32([delta], ([pD], alloc) => {
      const pIds = alloc(4 * Math.max(idArr.length, 1)), pL = alloc(4 * (LH + 1)), pO = alloc(4 * LH);
      this.i32.set(idArr, pIds >>> 2);
      this.check(this.fn.alab_pruning_curve(pL, pO, m, pIds, idArr.length, pD));
      return { loss: this.readF32(pL, LH + 1), order: this.readI32(pO, LH) };
    });
  }

  /** Role scores of att (L, NH, T, T): {prev, sink, dup, induction (each L*NH), inductionDefined}. */
  headRoles(att, ids, L, NH, T) {
    checkInt('L', L);
    checkInt('NH', NH);
    checkInt('T', T);
    const idArr = toIds('ids', ids);
    if (idArr.length !== T) throw new AttnlabError('EINVAL', `ids must have T = ${T} entries, got ${idArr.length}`);
    if (att.length !== L * NH * T * T)
      throw new AttnlabError('EINVAL', `att must have L*NH*T*T = ${L * NH * T * T} entries, got ${att.length}`);
    const LH = Math.max(L * NH, 1);
    return this._withF32([att], ([pA], alloc) => {
      const pIds = alloc(4 * Math.max(T, 1));
      const pP = alloc(4 * LH), pS = alloc(4 * LH), pD = alloc(4 * LH), pI = alloc(4 * LH);
      this.i32.set(idArr, pIds >>> 2);
      const rc = this.check(this.fn.alab_head_roles(pP, pS, pD, pI, pA, pIds, L, NH, T));
      return {
        prev: this.readF32(pP, L * NH), sink: this.readF32(pS, L * NH), dup: this.readF32(pD, L * NH),
        induction: this.readF32(pI, L * NH), inductionDefined: rc === 1,
      };
    });
  }

  /** DAG score of every head and layer of att (L, NH, T, T): {head (L*NH), layer (L)}. */
  dagProfile(att, L, NH, T) {
    checkInt('L', L);
    checkInt('NH', NH);
    checkInt('T', T);
    if (att.length !== L * NH * T * T)
      throw new AttnlabError('EINVAL', `att must have L*NH*T*T = ${L * NH * T * T} entries, got ${att.length}`);
    return this._withF32([att], ([pA], alloc) => {
      const pH = alloc(4 * Math.max(L * NH, 1)), pL = alloc(4 * Math.max(L, 1));
      this.check(this.fn.alab_dag_profile(pH, pL, pA, L, NH, T));
      return { head: this.readF32(pH, L * NH), layer: this.readF32(pL, L) };
    });
  }
}

// The measures' exports (statistics, readings, evidence, circuits: every C function marked ALAB_MEASURE) are
// methods too, generated into measure-exports.js by scripts/gen-abi.mjs; installed as class methods are (not enumerable), never over one of the class's own.
for (const [name, f] of Object.entries(MEASURE_METHODS)) {
  if (name in AttnlabWasm.prototype) throw new Error(`measure-exports.js: AttnlabWasm already has a method ${name}`);
  Object.defineProperty(AttnlabWasm.prototype, name, { value: f, writable: true, configurable: true });
}
