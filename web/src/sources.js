// sources.js — where a model's four files come from, and how they reach wasm
// memory without the weights ever being held twice.
//
// A model source is one of
//   - nothing (undefined/null): the built-in model, models/brown-gpt2/ next to
//     this package (defaultModelURL());
//   - a URL (URL object or string) of a directory holding config.json,
//     model.safetensors, vocab.json and merges.txt: http(s) is fetched and
//     streamed, file: URLs (and, in Node, plain paths) are read with node:fs;
//   - an object {config, safetensors, vocab, merges} whose values are strings
//     (not for safetensors), ArrayBuffers, typed arrays or Blobs/Files;
//   - a FileList or an array of File objects (a browser's <input type=file
//     multiple> or a drop), matched by file name.
//
// The safetensors bytes are written straight into a malloc'ed wasm buffer,
// chunk by chunk, whose ownership then passes to the C model
// (AttnlabWasm#loadModelFromHeap): a download or file read never keeps a JS
// copy of the weights. Only when the size is not known in advance (no
// Content-Length, or a compressed response) are the chunks collected in JS
// first and copied once. Buffers you hand over are copied into wasm memory;
// they stay yours.
//
// Progress (transformers.js style), per file in the order config.json,
// vocab.json, merges.txt, model.safetensors:
//   {status: 'initiate', file}                    the file is looked up
//   {status: 'download', file, total}             reading starts (URLs, paths, Blobs)
//   {status: 'progress', file, loaded, total, progress}   at most every 1 % / 1 MiB
//   {status: 'done', file, loaded, total}         the file is complete
// and {status: 'ready'} from loadModel once the model is built. total is null
// when unknown; progress is a percentage (null when total is unknown).

import { AttnlabError } from './core/errors.js';

/** The four files of a model directory, in the order they are read. */
export const MODEL_FILES = Object.freeze(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
const KEYS = { 'config.json': 'config', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'model.safetensors': 'safetensors' };

/** The built-in model's directory: models/brown-gpt2/ of this package. */
export function defaultModelURL() {
  return new URL('../../models/brown-gpt2/', import.meta.url);
}

/** The default location of attnlab.wasm: web/dist/attnlab.wasm of this package. */
export function defaultWasmURL() {
  return new URL('../dist/attnlab.wasm', import.meta.url);
}

/** The default location of the multithreaded build: web/dist/attnlab-mt.wasm of this package. */
export function defaultWasmMTURL() {
  return new URL('../dist/attnlab-mt.wasm', import.meta.url);
}

const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node);
const hasBlob = typeof Blob !== 'undefined';
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------
// Resolving a source
// ---------------------------------------------------------------------------

/**
 * A URL (string or URL) as an absolute URL. In a browser a relative string is
 * resolved against the document; in Node a string without a scheme is a file
 * path relative to the working directory.
 */
export async function resolveURL(u, what = 'URL') {
  if (u instanceof URL) return new URL(u.href);
  if (typeof u !== 'string') throw new AttnlabError('ETYPE', `the ${what} must be a string or a URL`);
  if (u.length === 0) throw new AttnlabError('EINVAL', `the ${what} is an empty string`);
  const hasScheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(u) && !/^[a-zA-Z]:[\\/]/.test(u);
  if (!hasScheme && isNode && typeof location === 'undefined') {
    const { pathToFileURL } = await import('node:url');
    const { resolve } = await import('node:path');
    return pathToFileURL(resolve(u));
  }
  try {
    return new URL(u, typeof location !== 'undefined' ? location.href : undefined);
  } catch (e) {
    throw new AttnlabError('EINVAL', `the ${what} is not a URL: ${u}`, { cause: e });
  }
}

/** resolveURL for a directory: the result's path ends in '/'. */
export async function resolveDirURL(u) {
  const url = await resolveURL(u, 'model URL');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function isBlob(v) { return hasBlob && v instanceof Blob; }
function isFileList(v) { return typeof FileList !== 'undefined' && v instanceof FileList; }

/**
 * Turn any accepted source into {kind: 'url', url, builtin} or
 * {kind: 'files', files: {config, vocab, merges, safetensors}}.
 */
export async function resolveSource(source) {
  if (source === undefined || source === null)
    return { kind: 'url', url: defaultModelURL(), builtin: true };
  if (typeof source === 'string' || source instanceof URL)
    return { kind: 'url', url: await resolveDirURL(source), builtin: false };
  if (isFileList(source) || (Array.isArray(source) && source.length > 0 && source.every(isBlob))) {
    const files = {};
    for (const f of Array.from(source)) {
      const name = String(f.name || '').split(/[\\/]/).pop();
      if (KEYS[name]) files[KEYS[name]] = f;
    }
    const missing = MODEL_FILES.filter((n) => !files[KEYS[n]]);
    if (missing.length)
      throw new AttnlabError('EIO', `the files given lack ${missing.join(', ')} (a model needs ${MODEL_FILES.join(', ')})`);
    return { kind: 'files', files };
  }
  if (typeof source === 'object' && !Array.isArray(source) && !ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer)) {
    const extra = Object.keys(source).filter((k) => !Object.values(KEYS).includes(k));
    if (extra.length)
      throw new AttnlabError('EINVAL', `unknown model file key(s) ${extra.join(', ')}; expected config, safetensors, vocab, merges`);
    for (const key of Object.values(KEYS)) {
      const v = source[key];
      const ok = isBlob(v) || v instanceof ArrayBuffer || (ArrayBuffer.isView(v) && !(v instanceof DataView)) ||
                 (typeof v === 'string' && key !== 'safetensors');
      if (!ok)
        throw new AttnlabError('ETYPE', v === undefined ? `source.${key} is missing`
          : `source.${key} must be ${key === 'safetensors' ? '' : 'a string, '}an ArrayBuffer, a typed array or a Blob`);
    }
    return { kind: 'files', files: { config: source.config, vocab: source.vocab, merges: source.merges, safetensors: source.safetensors } };
  }
  throw new AttnlabError('ETYPE', 'a model source must be omitted (built-in model), a URL of a model directory, ' +
                         '{config, safetensors, vocab, merges} buffers, or File objects');
}

// ---------------------------------------------------------------------------
// Readers: one file as {total, chunks()}
// ---------------------------------------------------------------------------

// A reader yields Uint8Array chunks; total is the byte count when known.
// Every opener throws AttnlabError EIO when the file cannot be had.

function notFound(file, where, builtin, detail) {
  const msg = builtin
    ? `built-in model missing: ${file} not found at ${where} (${detail}). The npm package ships it; in a source ` +
      'checkout build it with `make model`, or pass a model directory URL or buffers to loadModel'
    : `${file} could not be read from ${where} (${detail})`;
  return new AttnlabError('EIO', msg);
}

async function openURL(url, file, builtin) {
  if (url.protocol === 'file:') {
    if (!isNode) throw notFound(file, url.href, builtin, 'file: URLs can only be read in Node');
    const { open } = await import('node:fs/promises');
    let fh;
    try {
      fh = await open(url, 'r');
    } catch (e) {
      throw notFound(file, url.href, builtin, e.code || e.message);
    }
    let closed = false;
    const release = async () => { // idempotent: after a full read and on every failure path
      if (closed) return;
      closed = true;
      await fh.close().catch(() => {});
    };
    let total;
    try {
      total = (await fh.stat()).size;
    } catch (e) {
      await release();
      throw notFound(file, url.href, builtin, e.code || e.message);
    }
    return { total, fh, release };
  }
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw notFound(file, url.href, builtin, e.message);
  }
  if (!res.ok) throw notFound(file, url.href, builtin, `HTTP ${res.status}`);
  const len = res.headers.get('content-length');
  const enc = (res.headers.get('content-encoding') || 'identity').toLowerCase();
  // A compressed body's Content-Length counts compressed bytes: treat as unknown.
  const total = len !== null && enc === 'identity' && /^\d+$/.test(len) ? Number(len) : null;
  return {
    total,
    // Cancel the body when the read is abandoned (a buffer that cannot be
    // allocated, a truncated or overlong body): the connection is closed now,
    // not when the server gives up.
    release: async () => { if (res.body) await res.body.cancel().catch(() => {}); },
    async *chunks() {
      if (!res.body) { yield new Uint8Array(await res.arrayBuffer()); return; }
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    },
  };
}

function openValue(v) {
  if (typeof v === 'string') { const b = utf8.encode(v); return { total: b.length, bytes: b }; }
  if (v instanceof ArrayBuffer) return { total: v.byteLength, bytes: new Uint8Array(v) };
  if (ArrayBuffer.isView(v)) return { total: v.byteLength, bytes: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) };
  // Blob / File
  return {
    total: v.size,
    blob: true,
    async *chunks() {
      if (typeof v.stream !== 'function') { yield new Uint8Array(await v.arrayBuffer()); return; }
      const reader = v.stream().getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    },
  };
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

function progressEmitter(emit, file, total) {
  const step = total ? Math.max(total / 100, 1 << 16) : 1 << 20;
  let next = step;
  return (loaded, force = false) => {
    if (!force && loaded < next) return;
    next = loaded + step;
    emit({ status: 'progress', file, loaded, total, progress: total ? (100 * loaded) / total : null });
  };
}

// ---------------------------------------------------------------------------
// Reading a whole model
// ---------------------------------------------------------------------------

// Read a small file completely into a Uint8Array.
async function readAll(r, file, emit) {
  if (r.bytes) return r.bytes;
  emit({ status: 'download', file, total: r.total });
  const tick = progressEmitter(emit, file, r.total);
  if (r.fh) {
    try {
      const { readFile } = await import('node:fs/promises');
      const b = new Uint8Array(await readFile(r.fh));
      tick(b.length, true);
      return b;
    } finally {
      await r.release();
    }
  }
  const parts = [];
  let loaded = 0;
  for await (const c of r.chunks()) {
    parts.push(c);
    loaded += c.length;
    tick(loaded);
  }
  tick(loaded, true);
  return concat(parts, loaded);
}

function concat(parts, n) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) { out.set(p, off); off += p.length; }
  return out;
}

// Write the safetensors bytes into a new wasm buffer; returns {ptr, len}.
// The buffer is freed here on failure; on success the caller owns it.
async function readIntoWasm(w, r, file, emit) {
  if (r.bytes) {
    const ptr = w.malloc(r.bytes.length);
    w.writeBytes(ptr, r.bytes);
    return { ptr, len: r.bytes.length };
  }
  emit({ status: 'download', file, total: r.total });
  const tick = progressEmitter(emit, file, r.total);
  if (r.total === null) {
    // Unknown size: collect, then one copy (the only case of a transient JS copy).
    const parts = [];
    let loaded = 0;
    for await (const c of r.chunks()) { parts.push(c); loaded += c.length; tick(loaded); }
    tick(loaded, true);
    const ptr = w.malloc(loaded);
    let off = 0;
    for (const p of parts) { w.writeBytes(ptr, p, off); off += p.length; }
    return { ptr, len: loaded };
  }
  const total = r.total;
  const ptr = w.malloc(total);
  let loaded = 0;
  try {
    if (r.fh) {
      // Node file: read straight into wasm memory (no wasm call happens meanwhile,
      // so the memory cannot grow under the view).
      const CHUNK = 8 << 20;
      try {
        while (loaded < total) {
          const n = Math.min(CHUNK, total - loaded);
          const view = new Uint8Array(w.memory.buffer, ptr + loaded, n);
          const { bytesRead } = await r.fh.read(view, 0, n, loaded);
          if (bytesRead === 0) break;
          loaded += bytesRead;
          tick(loaded);
        }
      } finally {
        await r.release();
      }
    } else {
      for await (const c of r.chunks()) {
        if (loaded + c.length > total)
          throw new AttnlabError('EIO', `${file}: received more than the announced ${total} bytes`);
        w.writeBytes(ptr, c, loaded);
        loaded += c.length;
        tick(loaded);
      }
    }
    if (loaded !== total)
      throw new AttnlabError('EIO', `${file}: truncated, got ${loaded} of ${total} bytes`);
    tick(loaded, true);
    return { ptr, len: total };
  } catch (e) {
    w.free(ptr);
    throw e;
  }
}

/**
 * Read a model's files (src from resolveSource): config, vocab and merges as
 * bytes, the safetensors straight into wasm memory of w (an AttnlabWasm).
 * @returns {Promise<{config: Uint8Array, vocab: Uint8Array, merges: Uint8Array, stPtr: number, stLen: number, name: string}>}
 *   stPtr is a malloc'ed wasm buffer the caller must hand to C or free.
 */
export async function readModelInto(w, src, emit) {
  const name = src.kind === 'url' ? src.url.href : 'buffers';
  const out = { name, stPtr: 0, stLen: 0 };
  let r = null;
  try {
    for (const file of MODEL_FILES) {
      emit({ status: 'initiate', file });
      r = src.kind === 'url' ? await openURL(new URL(file, src.url), file, src.builtin) : openValue(src.files[KEYS[file]]);
      if (file === 'model.safetensors') {
        const { ptr, len } = await readIntoWasm(w, r, file, emit);
        out.stPtr = ptr;
        out.stLen = len;
      } else {
        out[KEYS[file]] = await readAll(r, file, emit);
      }
      const size = file === 'model.safetensors' ? out.stLen : out[KEYS[file]].length;
      emit({ status: 'done', file, loaded: size, total: size });
    }
    return out;
  } catch (e) {
    if (out.stPtr) w.free(out.stPtr);
    if (r && r.release) await r.release(); // the file or body being read when it failed
    throw e;
  }
}
