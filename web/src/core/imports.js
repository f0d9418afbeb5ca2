// imports.js — what attnlab's two WebAssembly builds import, given without
// any Emscripten JS glue.
//
//   attnlab.wasm     -sSTANDALONE_WASM: a WASI reactor that owns its memory and
//                    asks for a few WASI calls (stdio, clock, random).
//   attnlab-mt.wasm  -pthread: imports a shared WebAssembly.Memory and a dozen
//                    functions of Emscripten's runtime (c/src/.. Makefile
//                    says why it is linked that way). The library never
//                    starts a pthread, proxies a call or touches a canvas, so
//                    most of those are inert; memory growth and the main
//                    thread's start are done here as the glue would do them.
// An import not listed here makes instantiation fail with a clear message,
// so a rebuilt module that needs something new cannot run half-supported.
// Used by wasm.js (the model's instance) and thread.js (a helper's instance).

import { AttnlabError } from './errors.js';

const utf8Decoder = new TextDecoder('utf-8'); // invalid bytes -> U+FFFD

/** Pages of the shared memory attnlab-mt.wasm is linked for (-sINITIAL_MEMORY=16MB, -sMAXIMUM_MEMORY=4GB). */
export const MT_INITIAL_PAGES = 256;
export const MT_MAXIMUM_PAGES = 65536;

/** True if module is the multithreaded build (it imports its memory). */
export function importsSharedMemory(module) {
  return WebAssembly.Module.imports(module).some((i) => i.kind === 'memory');
}

/**
 * UTF-8 bytes to a string. TextDecoder refuses views of a SharedArrayBuffer
 * (the memory of attnlab-mt.wasm), so those are copied first.
 */
export function decodeUtf8(view) {
  if (typeof SharedArrayBuffer !== 'undefined' && view.buffer instanceof SharedArrayBuffer) view = view.slice();
  return utf8Decoder.decode(view);
}

// Emscripten's runtime imports of the -pthread build (its library_pthread.js
// and library.js), each doing what the glue does, or refusing.
function threadedEnv(env) {
  const unsupported = (name) => () => {
    throw new AttnlabError('EWASM', `attnlab-mt.wasm called ${name}, which attnlab's loader does not support`);
  };
  return {
    // The main thread's start, from __wasm_call_ctors: libc's view of this
    // thread (may it block in a futex wait?), then its thread-local storage.
    __emscripten_init_main_thread_js(tb) {
      env.exports._emscripten_thread_init(tb, env.isMainBrowserThread ? 1 : 0, 1, env.canBlock ? 1 : 0);
      env.exports.emscripten_tls_init();
    },
    __emscripten_thread_cleanup: () => {},
    __pthread_create_js: () => 6, // EAGAIN: threads are attnlab's own workers (threads.js), not pthreads
    _emscripten_notify_thread_queue: () => 0,
    emscripten_receive_on_main_thread_js: unsupported('emscripten_receive_on_main_thread_js'),
    emscripten_unwind_to_js_event_loop: unsupported('emscripten_unwind_to_js_event_loop'),
    emscripten_webgl_create_context: () => 0,
    emscripten_set_canvas_element_size: () => -1, // EMSCRIPTEN_RESULT_NOT_SUPPORTED
    emscripten_get_now: () => performance.now(),
    emscripten_memcpy_big(dest, src, num) {
      new Uint8Array(env.memory.buffer).copyWithin(dest >>> 0, src >>> 0, (src >>> 0) + (num >>> 0));
    },
    // malloc needs more memory: grow to what it asks plus 1/16 of the memory (at
    // most 16 MB) for the small allocations that follow, never past 4 GB. A
    // shared memory grows in place (nothing is copied), so the glue's 20 %
    // overgrowth would only add to the footprint (a distilgpt2 load: 1.21 x
    // the file with it, 1.03 x without). 1 on success.
    emscripten_resize_heap(requested) {
      requested >>>= 0;
      const old = env.memory.buffer.byteLength;
      const max = MT_MAXIMUM_PAGES * 65536 - 65536;
      if (requested <= old || requested > max) return 0;
      for (const slack of [Math.min(old / 16, 16 << 20), 0]) {
        const size = Math.min(max, Math.ceil((requested + slack) / 65536) * 65536);
        try {
          env.memory.grow((size - env.memory.buffer.byteLength + 65535) >>> 16);
          if (env.onGrow) env.onGrow();
          return 1;
        } catch {
          // try without the slack
        }
      }
      return 0;
    },
    exit(code) {
      throw new AttnlabError('EWASM', `attnlab-mt.wasm called exit(${code})`);
    },
  };
}

/**
 * The import object for module. env: {memory, onGrow, exports, canBlock,
 * isMainBrowserThread}; memory and exports may be filled in after
 * instantiation (the imports read them when called).
 */
export function makeImports(module, env) {
  const known = { env: envImports(env), wasi_snapshot_preview1: wasiImports(env) };
  const imports = {};
  for (const { module: mod, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind === 'memory' && mod === 'env' && name === 'memory' && env.memory) {
      (imports.env ||= {}).memory = env.memory; // the shared memory of attnlab-mt.wasm
      continue;
    }
    const value = known[mod] && known[mod][name];
    if (kind !== 'function' || !value)
      throw new AttnlabError('EWASM', `attnlab.wasm imports ${mod}.${name} (${kind}), which this loader does not provide`);
    (imports[mod] ||= {})[name] = value;
  }
  return imports;
}

function envImports(env) {
  return {
    emscripten_notify_memory_growth: () => env.onGrow && env.onGrow(),
    // libc's getentropy (len <= 256): the random key of the tokenizer's hash
    // tables (c/src/bpe.c). Copied through a private array: getRandomValues
    // refuses views of a shared memory.
    getentropy(ptr, len) {
      len >>>= 0;
      if (len > 256) return -1;
      const bytes = new Uint8Array(len);
      crypto.getRandomValues(bytes);
      new Uint8Array(env.memory.buffer, ptr >>> 0, len).set(bytes);
      return 0;
    },
    ...threadedEnv(env),
  };
}

/** The WASI calls libc makes: stdout/stderr, clocks and randomness; files and exit are refused. */
function wasiImports(env) {
  const WASI_ESUCCESS = 0;
  const WASI_EBADF = 8;
  const WASI_ENOSYS = 52;
  const view = () => new DataView(env.memory.buffer);
  const stdio = ['', '', ''];
  const noEntries = (countPtr, sizePtr) => {
    const dv = view();
    dv.setUint32(countPtr >>> 0, 0, true);
    dv.setUint32(sizePtr >>> 0, 0, true);
    return WASI_ESUCCESS;
  };
  return {
    // fd_write(fd, iovs, iovs_len, nwritten): stdout/stderr go to the console by line.
    fd_write(fd, iovs, iovsLen, nwrittenPtr) {
      if (fd !== 1 && fd !== 2) return WASI_EBADF;
      iovs >>>= 0;
      nwrittenPtr >>>= 0;
      const dv = view();
      let total = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = dv.getUint32(iovs + 8 * i, true);
        const len = dv.getUint32(iovs + 8 * i + 4, true);
        stdio[fd] += decodeUtf8(new Uint8Array(env.memory.buffer, ptr, len));
        total += len;
      }
      const lines = stdio[fd].split('\n');
      stdio[fd] = lines.pop();
      for (const line of lines) (fd === 1 ? console.log : console.error)(line);
      dv.setUint32(nwrittenPtr, total, true);
      return WASI_ESUCCESS;
    },
    fd_close: () => WASI_ENOSYS,
    fd_seek: () => WASI_ENOSYS,
    fd_read: () => WASI_ENOSYS,
    fd_fdstat_get: () => WASI_ENOSYS,
    proc_exit(code) {
      throw new AttnlabError('EWASM', `attnlab.wasm called exit(${code})`);
    },
    // no environment variables and no arguments: zero entries of zero bytes
    environ_sizes_get: noEntries,
    environ_get: () => WASI_ESUCCESS,
    args_sizes_get: noEntries,
    args_get: () => WASI_ESUCCESS,
    clock_time_get(id, precision, timePtr) {
      const ns = BigInt(Math.round(performance.now() * 1e6));
      view().setBigUint64(timePtr >>> 0, ns, true);
      return WASI_ESUCCESS;
    },
    random_get(ptr, len) {
      // getRandomValues fills at most 65536 bytes per call
      for (let off = 0; off < len; off += 65536)
        crypto.getRandomValues(new Uint8Array(env.memory.buffer, (ptr >>> 0) + off, Math.min(65536, len - off)));
      return WASI_ESUCCESS;
    },
  };
}
