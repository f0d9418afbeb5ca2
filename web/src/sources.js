// sources.js — where a model's four files come from, and how they reach wasm
// memory without the weights ever being held twice.
//
// A model source is one of
//   - nothing (undefined/null): the built-in model, models/brown-gpt2/ next to
//     this package (defaultModelURL());
//   - a URL (URL object or string) of a Hugging Face model directory: http(s)
//     is fetched and streamed, file: URLs (and, in Node, plain paths) are read
//     with node:fs;
//   - an object {config, safetensors, vocab, merges} (GPT-2's files) or, for
//     any family, {config, safetensors | index + shards: {fileName: data},
//     vocab + merges | tokenizer (+ tokenizerConfig)}, whose values are
//     strings (not for weights), ArrayBuffers, typed arrays or Blobs/Files;
//   - a FileList or an array of File objects (a browser's <input type=file
//     multiple webkitdirectory> or a drop), matched by file name.
// Which files a folder has (folderPlan): config.json; model.safetensors, or
// model.safetensors.index.json and the shards it names; for gpt2 vocab.json +
// merges.txt, for the other families tokenizer.json (+ tokenizer_config.json
// when there), whose pre-tokenizer is the family's own.
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

/** The four files of a GPT-2 model directory, in the order they are read. */
export const MODEL_FILES = Object.freeze(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
const KEYS = { 'config.json': 'config', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'model.safetensors': 'safetensors',
               'tokenizer.json': 'tokenizer', 'tokenizer_config.json': 'tokenizerConfig',
               'model.safetensors.index.json': 'index' };
const SHARD = /^model-\d+-of-\d+\.safetensors$/;
const INDEX = 'model.safetensors.index.json';

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
      else if (SHARD.test(name)) (files.shards ??= {})[name] = f;
    }
    const missing = missingFiles(files);
    if (missing.length)
      throw new AttnlabError('EIO', `the files given lack ${missing.join(', ')} (a model needs config.json, ` +
                             'model.safetensors or its index and shards, and vocab.json + merges.txt or tokenizer.json)');
    return { kind: 'files', files };
  }
  if (typeof source === 'object' && !Array.isArray(source) && !ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer)) {
    const extra = Object.keys(source).filter((k) => !Object.values(KEYS).includes(k) && k !== 'shards');
    if (extra.length)
      throw new AttnlabError('EINVAL', `unknown model file key(s) ${extra.join(', ')}; expected config, safetensors, vocab, merges ` +
                             '(or tokenizer, tokenizerConfig, index, shards)');
    const isData = (v, key) => isBlob(v) || v instanceof ArrayBuffer || (ArrayBuffer.isView(v) && !(v instanceof DataView)) ||
                               (typeof v === 'string' && key !== 'safetensors' && key !== 'shard');
    const files = {};
    const hf = ['tokenizer', 'tokenizerConfig', 'index', 'shards'].some((k) => source[k] !== undefined);
    const required = hf ? ['config'] : ['config', 'safetensors', 'vocab', 'merges'];
    for (const key of Object.values(KEYS)) {
      const v = source[key];
      if (v === undefined && !required.includes(key)) continue;
      if (!isData(v, key))
        throw new AttnlabError('ETYPE', v === undefined ? `source.${key} is missing`
          : `source.${key} must be ${key === 'safetensors' ? '' : 'a string, '}an ArrayBuffer, a typed array or a Blob`);
      files[key] = v;
    }
    if (source.shards !== undefined) {
      if (typeof source.shards !== 'object' || source.shards === null || Array.isArray(source.shards))
        throw new AttnlabError('ETYPE', 'source.shards must be an object {fileName: data}');
      for (const [n, v] of Object.entries(source.shards))
        if (!isData(v, 'shard')) throw new AttnlabError('ETYPE', `source.shards['${n}'] must be an ArrayBuffer, a typed array or a Blob`);
      files.shards = { ...source.shards };
    }
    const missing = missingFiles(files);
    if (missing.length) throw new AttnlabError('ETYPE', `source lacks ${missing.join(', ')}`);
    return { kind: 'files', files };
  }
  throw new AttnlabError('ETYPE', 'a model source must be omitted (built-in model), a URL of a model directory, ' +
                         '{config, safetensors, vocab, merges} buffers, or File objects');
}

// What a set of files (by key) lacks to be a model folder.
function missingFiles(f) {
  const out = [];
  if (!f.config) out.push('config.json');
  if (!f.safetensors && !(f.index && f.shards)) out.push('model.safetensors (or model.safetensors.index.json and its shards)');
  if (!(f.vocab && f.merges) && !f.tokenizer) out.push('vocab.json + merges.txt (or tokenizer.json)');
  return out;
}

/**
 * Which files of a folder to read after config.json, from its model_type:
 * {tokenizer: [[name, required]...]}. GPT-2 keeps its vocab.json + merges.txt;
 * the other families read tokenizer.json, whose pre-tokenizer is theirs.
 */
export function folderPlan(configBytes) {
  let type = 'gpt2';
  try {
    const c = JSON.parse(new TextDecoder().decode(configBytes));
    if (c && typeof c.model_type === 'string') type = c.model_type;
  } catch { /* the C loader reports a bad config.json */ }
  return type === 'gpt2'
    ? { family: type, tokenizer: [['vocab.json', true], ['merges.txt', true]] }
    : { family: type, tokenizer: [['tokenizer.json', true], ['tokenizer_config.json', false]] };
}

/** The shard file names an index names (distinct, in order of first use). */
export function shardNames(indexBytes) {
  let wm;
  try {
    wm = JSON.parse(new TextDecoder().decode(indexBytes)).weight_map;
  } catch (e) {
    throw new AttnlabError('EJSON', `${INDEX}: ${e.message}`);
  }
  if (!wm || typeof wm !== 'object') throw new AttnlabError('EFORMAT', `${INDEX}: no "weight_map" object`);
  const names = [...new Set(Object.values(wm))];
  for (const n of names)
    if (typeof n !== 'string' || n === '' || n === '..' || /[\\/]/.test(n))
      throw new AttnlabError('EFORMAT', `${INDEX}: ${JSON.stringify(n)} is not a file name`);
  return names;
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
 * Read a model's files (src from resolveSource): the text files as bytes, the
 * safetensors file(s) straight into wasm memory of w (an AttnlabWasm).
 * @returns {Promise<{config: Uint8Array, vocab?, merges?, tokenizer?, tokenizerConfig?, index?: Uint8Array,
 *   shards: {name: string, ptr: number, len: number}[], stPtr: number, stLen: number, name: string}>}
 *   Every shard ptr is a malloc'ed wasm buffer the caller must hand to C or free (stPtr/stLen: the first).
 */
export async function readModelInto(w, src, emit) {
  const name = src.kind === 'url' ? src.url.href : 'buffers';
  const out = { name, stPtr: 0, stLen: 0, shards: [] };
  let r = null;
  const open = (file, key, shard) => (src.kind === 'url' ? openURL(new URL(file, src.url), file, src.builtin)
    : openValue(shard ? src.files.shards[file] : src.files[key]));
  const has = (file) => src.kind === 'url' || (SHARD.test(file) ? !!(src.files.shards && src.files.shards[file]) : !!src.files[KEYS[file]]);
  const text = async (file, required = true) => {
    emit({ status: 'initiate', file });
    if (!has(file)) {
      if (required) throw new AttnlabError('EIO', `${file} is missing`);
      return;
    }
    try {
      r = await open(file, KEYS[file]);
    } catch (e) {
      if (!required && e.code === 'EIO') return; // an optional file a server does not have
      throw e;
    }
    out[KEYS[file]] = await readAll(r, file, emit);
    r = null;
    emit({ status: 'done', file, loaded: out[KEYS[file]].length, total: out[KEYS[file]].length });
  };
  const weights = async (file, rr) => {
    r = rr;
    const { ptr, len } = await readIntoWasm(w, r, file, emit);
    r = null;
    out.shards.push({ name: file, ptr, len });
    emit({ status: 'done', file, loaded: len, total: len });
  };
  try {
    await text('config.json');
    const plan = folderPlan(out.config);
    // A file list or buffers say which tokenizer they hold; a URL is asked for the family's own.
    const tok = src.kind === 'url' ? plan.tokenizer
      : src.files.vocab && src.files.merges && (plan.family === 'gpt2' || !src.files.tokenizer)
        ? [['vocab.json', true], ['merges.txt', true]] : [['tokenizer.json', true], ['tokenizer_config.json', false]];
    if (src.kind === 'url' && plan.family !== 'gpt2') {
      // tokenizer.json when the folder has it (its pre-tokenizer is the family's); else GPT-2-style files
      await text('tokenizer.json', false);
      if (out.tokenizer) await text('tokenizer_config.json', false);
      else for (const f of ['vocab.json', 'merges.txt']) await text(f);
    } else {
      for (const [file, required] of tok) await text(file, required);
    }
    const file = 'model.safetensors';
    emit({ status: 'initiate', file });
    let single = null;
    if (has(file)) {
      try {
        single = await open(file, 'safetensors');
      } catch (e) {
        if (src.kind !== 'url' || e.code !== 'EIO') throw e;
        try { // not there: a sharded checkpoint?
          await text(INDEX);
        } catch {
          throw e;
        }
      }
    } else {
      await text(INDEX);
    }
    if (single) {
      await weights(file, single);
    } else {
      for (const shard of shardNames(out.index)) {
        emit({ status: 'initiate', file: shard });
        if (!has(shard)) throw new AttnlabError('EMISSING', `shard ${shard} (named by ${INDEX}) is missing`);
        await weights(shard, await open(shard, null, true));
      }
    }
    out.stPtr = out.shards[0].ptr;
    out.stLen = out.shards[0].len;
    return out;
  } catch (e) {
    for (const sh of out.shards) w.free(sh.ptr);
    if (r && r.release) await r.release(); // the file or body being read when it failed
    throw e;
  }
}
