// instance.js — the wasm instance of a model: which build (the relaxed-SIMD or the SIMD128 kernels, one
// thread or helper threads) runs where, compiled once per location and instantiated per model.
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
// The builds' default locations and URL resolution are sources.js's; model.js hands them in (`where`),
// so core/ imports nothing from the layer above it.

import { instantiateAttnlab } from './wasm.js';
import { AttnlabError } from './errors.js';
import { autoThreads, threadSupport, MAX_THREADS } from './threads.js';
import { BACKENDS, BUILDS, relaxedSimdSupported } from './backend.js';


const moduleCache = new Map(); // href -> Promise<WebAssembly.Module>

async function newInstance(wasm, where, { mt = false, threads = 1, threadWorker, what = mt ? 'options.wasmMT' : 'options.wasm' } = {}) {
  let src = wasm ?? (mt ? where.wasmMT() : where.wasm());
  let key = null;
  if (typeof src === 'string' || src instanceof URL) {
    src = await where.resolveURL(src, 'wasm URL');
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
 * where: {wasm, wasmMT, wasmRelaxed, wasmRelaxedMT} (each () => the default URL of that build) and
 * resolveURL (a string or URL option as an absolute URL): sources.js's, passed in by model.js.
 */
export async function instanceFor({ wasm, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threads, threadWorker }, where) {
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
      const relaxed = { wasm: wasmRelaxed ?? where.wasmRelaxed(), wasmMT: wasmRelaxedMT ?? where.wasmRelaxedMT() };
      try {
        return await threadedInstance({ ...relaxed, threads, threadWorker, relaxedNames: true }, where);
      } catch (e) {
        if (!(e instanceof AttnlabError) || e.code === 'ETYPE' || e.code === 'ERANGE') throw e;
        backendNote = `the relaxed-SIMD build could not start (${e.code}: ${e.message}); running the SIMD128 build`;
      }
    }
  } else if (askedBackend === 'relaxed-simd') {
    return threadedInstance({ wasm: wasmRelaxed ?? where.wasmRelaxed(), wasmMT: wasmRelaxedMT ?? where.wasmRelaxedMT(),
                              threads, threadWorker, relaxedNames: true }, where);
  }
  const r = await threadedInstance({ wasm, wasmMT, threads, threadWorker, relaxedNames: false }, where);
  r.engine.backendNote = backendNote;
  return r;
}

// One backend's builds: its multithreaded one where threads can run, else its one-thread one.
async function threadedInstance({ wasm, wasmMT, threads, threadWorker, relaxedNames }, where) {
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
      const w = await newInstance(wasmMT, where, { mt: true, threads: n, threadWorker, what: names.mt });
      return { w, engine: engineOf(w, { threads: w.threads(), asked, mt: true, note: null }) };
    } catch (e) {
      if (!(e instanceof AttnlabError) || e.code === 'ETYPE') throw e;
      note = `the multithreaded build could not start (${e.code}: ${e.message}); running on one thread`;
    }
  }
  const w = await newInstance(wasm, where, { what: names.st });
  return { w, engine: engineOf(w, { threads: 1, asked, mt: false, note }) };
}

// model.engine: the backend as the running module reports it (alab_wasm_simd), and its build's file name.
function engineOf(w, { threads, asked, mt, note }) {
  const backend = w.backend();
  const build = (BUILDS[backend] || BUILDS.simd128)[mt ? 1 : 0];
  return { threads, asked, build, backend, note, backendNote: null };
}
