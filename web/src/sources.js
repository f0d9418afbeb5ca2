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
//   {status: 'waiting', file, loaded, total, idleMs}  about once a second while
//                                                 no byte arrives (a slow or stalled server)
// and, while bytes trickle in too slowly for the 1 % steps, a 'progress' event
// about once a second.
// and {status: 'ready'} from loadModel once the model is built. total is null
// when unknown; progress is a percentage (null when total is unknown). For a
// URL, 'download' and 'done' also carry url: the final URL, after redirects.
//
// Bounds (hostile input must not hang or exhaust memory), the same for every kind of source:
//   - each file is held to the C limit of its kind (FILE_LIMITS) while it is
//     read, not after: a size known in advance (Content-Length, a file's or a
//     Blob's size, a buffer's length) is checked before the first byte, and a
//     stream is stopped at the first chunk past the limit (ELIMIT);
//   - a download that goes timeoutMs (default 30 s) without a byte is ended
//     (ETIMEDOUT), and options.signal ends a load at any point (EABORT); either
//     way the body is cancelled, the file handle closed and the wasm buffer
//     freed;
//   - redirects are followed only within the origin of the URL given, unless
//     options.redirects is 'any' ('none' refuses them all); only http(s);
//   - paths and file: URLs are read only if they are regular files (checked
//     before opening, and again on the open handle, which is opened without
//     blocking: a FIFO cannot hang the loader);
//   - every failure is an AttnlabError with a stable code.

import { AttnlabError } from './core/errors.js';
import { C } from './core/abi.js';

/** The four files of a GPT-2 model directory, in the order they are read. */
export const MODEL_FILES = Object.freeze(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
// null-prototype: a File named 'constructor', 'toString' or '__proto__' is not a model file (KEYS[name] was Object's)
const KEYS = Object.freeze(Object.assign(Object.create(null), {
  'config.json': 'config', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'model.safetensors': 'safetensors',
  'tokenizer.json': 'tokenizer', 'tokenizer_config.json': 'tokenizerConfig', 'model.safetensors.index.json': 'index' }));
const SHARD = /^model-\d+-of-\d+\.safetensors$/;
const INDEX = 'model.safetensors.index.json';

/**
 * The largest file of each kind, in bytes: the C limits (ALAB_MAX_CONFIG_BYTES,
 * ALAB_MAX_VOCAB_BYTES, ALAB_MAX_MERGES_BYTES in c/include/attnlab.h) and, for
 * the weights, what a 32-bit WebAssembly memory can hold.
 */
export const FILE_LIMITS = Object.freeze({
  'config.json': C.MAX_CONFIG_BYTES,
  'vocab.json': C.MAX_VOCAB_BYTES,
  'merges.txt': C.MAX_MERGES_BYTES,
  'tokenizer.json': 256 << 20,
  'tokenizer_config.json': 16 << 20,
  'model.safetensors.index.json': C.MAX_INDEX_BYTES,
  'model.safetensors': 2 ** 32 - 1,
});

/** Bytes a file of this name may have: its kind's limit; any other .safetensors (a shard) as the weights;
 *  any other file 256 MiB (a kind added later should add its C limit to FILE_LIMITS). */
export function limitOf(file) {
  if (Object.hasOwn(FILE_LIMITS, file)) return FILE_LIMITS[file];
  if (/\.safetensors$/.test(file)) return FILE_LIMITS['model.safetensors'];
  return 256 << 20;
}

/** A download that goes this long without a byte is ended (ETIMEDOUT), unless options.timeoutMs says otherwise. */
export const DEFAULT_STALL_TIMEOUT_MS = 30000;
/** How often a 'waiting' progress event is sent while no byte arrives. */
export const WAITING_EVENT_MS = 1000;
const MAX_REDIRECTS = 20;

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

/** The default location of the relaxed-SIMD build: web/dist/attnlab-relaxed.wasm of this package. */
export function defaultWasmRelaxedURL() {
  return new URL('../dist/attnlab-relaxed.wasm', import.meta.url);
}

/** The default location of its multithreaded twin: web/dist/attnlab-relaxed-mt.wasm of this package. */
export function defaultWasmRelaxedMTURL() {
  return new URL('../dist/attnlab-relaxed-mt.wasm', import.meta.url);
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
  if (!['http:', 'https:', 'file:'].includes(url.protocol))
    throw new AttnlabError('EINVAL', `a model URL must be http:, https: or file: (got ${url.protocol} in ${String(u).slice(0, 80)})`);
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

/**
 * Sort a list of Files (a folder, a multiple choice, a drop) into a model's
 * files by name: {files: File[] (the ones a model reads, in a fixed order),
 * missing: string[] (what the folder lacks, [] when it is complete)}. Other
 * files (README.md, pytorch_model.bin, ...) are left out.
 */
export function modelFilesOf(list) {
  const byName = new Map();
  for (const f of Array.from(list || [])) {
    const name = String((f && f.name) || '').split(/[\\/]/).pop();
    if (KEYS[name] || SHARD.test(name)) byName.set(name, f);
  }
  const keyed = {};
  for (const name of byName.keys()) {
    if (KEYS[name]) keyed[KEYS[name]] = true;
    else (keyed.shards ??= {})[name] = true;
  }
  const order = [...Object.keys(KEYS), ...[...byName.keys()].filter((n) => SHARD.test(n)).sort()];
  return { files: order.filter((n) => byName.has(n)).map((n) => byName.get(n)), missing: missingFiles(keyed) };
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
  if (!wm || typeof wm !== 'object' || Array.isArray(wm)) throw new AttnlabError('EFORMAT', `${INDEX}: no "weight_map" object`);
  const names = new Set();
  for (const [tensor, n] of Object.entries(wm)) {
    if (!isShardName(n))
      throw new AttnlabError('EFORMAT', `${INDEX}: the file of ${JSON.stringify(tensor.slice(0, 80))} is not a plain shard file name ` +
        "(letters, digits, '.', '_', '-', '+', ending in .safetensors)");
    names.add(n);
    // the C limit, before the first request: an index naming more shards is refused from the index alone
    if (names.size > C.MAX_SHARDS) throw new AttnlabError('ELIMIT', `${INDEX} names more than ${C.MAX_SHARDS} shard files (ALAB_MAX_SHARDS)`);
  }
  return [...names];
}

/**
 * A shard name an index may give: 1 to 255 ASCII letters, digits, '.', '_', '-', '+', not starting with '.',
 * ending in .safetensors (alab_shard_name_ok in c/src/load.c: the same rule). No scheme, colon, percent escape,
 * separator, control or NUL character can pass, so the name cannot leave the model's folder as a URL or a path.
 */
export function isShardName(n) {
  return typeof n === 'string' && n.length > 12 && n.length <= 255 && /^[A-Za-z0-9_+-][A-Za-z0-9._+-]*\.safetensors$/.test(n);
}

/** url of file in the folder url: refused unless it is the folder's origin and path plus the name (checked after resolution). */
export function fileInFolder(folder, file) {
  const u = new URL(file, folder);
  const dirPath = folder.pathname.endsWith('/') ? folder.pathname : folder.pathname.slice(0, folder.pathname.lastIndexOf('/') + 1);
  if (u.origin !== folder.origin || u.protocol !== folder.protocol || u.pathname !== dirPath + file || u.search || u.hash)
    throw new AttnlabError('EFORMAT', `${JSON.stringify(file)} does not resolve to a file in the model's folder ${folder.href}`);
  return u;
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

function notFound(file, where, builtin, detail) {
  const msg = builtin
    ? `built-in model missing: ${file} not found at ${where} (${detail}). The npm package ships it; in a source ` +
      'checkout build it with `make model`, or pass a model directory URL or buffers to loadModel'
    : `${file} could not be read from ${where} (${detail})`;
  return new AttnlabError('EIO', msg);
}

function tooLarge(file, n, known) {
  const mib = (x) => `${(x / 2 ** 20).toFixed(1)} MiB`;
  const lim = limitOf(file);
  return new AttnlabError('ELIMIT', `${file} is ${known ? '' : 'more than '}${n} bytes (${mib(n)}), over the limit of ${lim} ` +
    `bytes (${mib(lim)}) for this file${known ? '' : '; stopped while reading it'}`);
}

/** Any error met while reading `file` as an AttnlabError with a code. */
function asLoadError(e, file) {
  if (e instanceof AttnlabError) return e;
  const name = e && e.name;
  const msg = String((e && e.message) || e);
  if (name === 'AbortError') return new AttnlabError('EABORT', `${file}: the load was aborted`, { cause: e });
  if (name === 'NotReadableError' || name === 'NotFoundError')
    return new AttnlabError('EIO', `${file} cannot be read any more (it was changed, moved or deleted after it was picked): ${msg}`, { cause: e });
  if (msg === 'terminated' || (e && e.cause && /closed|terminated|socket/i.test(String(e.cause.message || e.cause.code))))
    return new AttnlabError('EIO', `${file}: the connection ended before the whole file arrived (${msg})`, { cause: e });
  return new AttnlabError('EIO', `${file} could not be read: ${msg}`, { cause: e });
}

// ---------------------------------------------------------------------------
// Guards: abort, stall timeout, 'waiting' events
// ---------------------------------------------------------------------------

/**
 * The guard of one file's read: an AbortController that the caller's signal
 * and the stall timer abort (the fetch and its body are bound to it), a
 * promise that rejects when it is aborted (raced against every wait), and a
 * heartbeat that sends 'waiting' events while no byte arrives.
 */
function makeGuard(opts, file, emit) {
  const ac = new AbortController();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  let last = Date.now();
  let loaded = 0;
  let total = null;
  let beatLoaded = 0;   // the heartbeat's last 'progress' event: bytes and time
  let beatAt = last;
  const abort = (err) => { if (!ac.signal.aborted) ac.abort(err); };
  const onUserAbort = () => abort(new AttnlabError('EABORT', `${file}: the load was aborted (options.signal)`));
  let rejectAborted;
  const aborted = new Promise((_, rej) => { rejectAborted = rej; });
  aborted.catch(() => {}); // observed through race() only
  ac.signal.addEventListener('abort', () => rejectAborted(ac.signal.reason), { once: true });
  if (opts.signal) {
    opts.signal.addEventListener('abort', onUserAbort, { once: true });
    if (opts.signal.aborted) onUserAbort();
  }
  const timer = setInterval(() => {
    const idle = Date.now() - last;
    if (timeoutMs > 0 && idle >= timeoutMs) {
      abort(new AttnlabError('ETIMEDOUT', `${file}: no byte for ${Math.round(idle / 1000)} s (${loaded} bytes read); ` +
        'the server stalled (options.timeoutMs changes the limit)'));
      return;
    }
    try {
      if (idle >= WAITING_EVENT_MS) {
        emit({ status: 'waiting', file, loaded, total, idleMs: idle });
      } else if (loaded !== beatLoaded && Date.now() - beatAt >= WAITING_EVENT_MS) {
        // bytes trickle in, too few for the 1 % steps: say so about once a second
        beatLoaded = loaded;
        beatAt = Date.now();
        emit({ status: 'progress', file, loaded, total, progress: total ? (100 * loaded) / total : null });
      }
    } catch (err) {
      abort(err); // an onProgress that throws ends the load, as it does elsewhere
    }
  }, Math.min(WAITING_EVENT_MS, timeoutMs > 0 ? timeoutMs : WAITING_EVENT_MS));
  if (typeof timer.unref === 'function') timer.unref();
  return {
    signal: ac.signal,
    /** p, unless the read is aborted or times out first. */
    race: (p) => Promise.race([p, aborted]),
    /** Bytes arrived: the stall clock restarts. */
    progress(n, t = total) { loaded = n; total = t; last = Date.now(); },
    check() { if (ac.signal.aborted) throw ac.signal.reason; },
    abort,
    dispose() {
      clearInterval(timer);
      if (opts.signal) opts.signal.removeEventListener('abort', onUserAbort);
    },
  };
}

// ---------------------------------------------------------------------------
// Readers: one file as {total, url?, chunks() | fh | bytes, release()}
// ---------------------------------------------------------------------------

// Node: a path or file: URL, opened only if it is a regular file. The open
// uses O_NONBLOCK, so a FIFO swapped in between the stat and the open cannot
// block a thread of libuv's pool (four of them used to hang every fs call of
// the process); the handle is checked again with fstat.
async function openFile(url, file, builtin, guard) {
  const fs = await import('node:fs/promises');
  const { constants } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const path = fileURLToPath(url);
  const kindOf = (st) => (st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket'
    : st.isCharacterDevice() ? 'a character device' : st.isBlockDevice() ? 'a block device' : 'not a regular file');
  let st;
  try {
    st = await guard.race(fs.stat(path));
  } catch (e) {
    if (e instanceof AttnlabError) throw e;
    throw notFound(file, url.href, builtin, e.code || e.message);
  }
  if (!st.isFile()) throw new AttnlabError('EIO', `${file} at ${url.href} is ${kindOf(st)}, not a regular file`);
  if (st.size > limitOf(file)) throw tooLarge(file, st.size, true);
  let fh;
  try {
    fh = await guard.race(fs.open(path, constants.O_RDONLY | (constants.O_NONBLOCK || 0)));
  } catch (e) {
    if (e instanceof AttnlabError) throw e;
    throw notFound(file, url.href, builtin, e.code || e.message);
  }
  let closed = false;
  const release = async () => { // idempotent: after a full read and on every failure path
    if (closed) return;
    closed = true;
    await fh.close().catch(() => {});
  };
  try {
    st = await fh.stat();
  } catch (e) {
    await release();
    throw notFound(file, url.href, builtin, e.code || e.message);
  }
  if (!st.isFile()) {
    await release();
    throw new AttnlabError('EIO', `${file} at ${url.href} is ${kindOf(st)}, not a regular file`);
  }
  if (st.size > limitOf(file)) {
    await release();
    throw tooLarge(file, st.size, true);
  }
  return { total: st.size, fh, release };
}

// HTTP(S): fetch bound to the guard's signal. Redirects are followed by hand
// in Node (redirect: 'manual' gives the 3xx there) so that no request goes to
// an origin the caller did not allow; a browser hides the 3xx ('opaqueredirect'),
// so there the final URL is checked after the fact (and the page's CSP has
// already kept the request to its allowed hosts).
async function fetchFollowing(url, file, builtin, guard, opts) {
  const policy = opts.redirects || 'same-origin';
  const origin = url.origin;
  const allowed = (u) => policy === 'any' || (policy === 'same-origin' && u.origin === origin);
  const refuse = (to) => new AttnlabError('EIO', `${file}: ${url.href} redirects to ${to.href}` +
    (policy === 'none' ? ', and options.redirects is \'none\'' : `, outside ${origin}; pass {redirects: 'any'} to allow it`));
  let current = url;
  for (let hop = 0; ; hop++) {
    let res;
    try {
      res = await guard.race(fetch(current, { signal: guard.signal, redirect: isNode ? 'manual' : 'follow' }));
    } catch (e) {
      if (e instanceof AttnlabError) throw e;
      if (guard.signal.aborted) throw guard.signal.reason;
      throw notFound(file, current.href, builtin, e.message + (e.cause ? `: ${e.cause.message || e.cause.code}` : ''));
    }
    if (!isNode) {
      const final = new URL(res.url || current.href);
      if (res.type === 'opaqueredirect' || (res.redirected && !allowed(final))) {
        if (res.body) res.body.cancel().catch(() => {});
        throw refuse(final);
      }
      return { res, final };
    }
    if (res.status >= 300 && res.status < 400 && res.headers.has('location')) {
      if (res.body) await res.body.cancel().catch(() => {});
      let next;
      try {
        next = new URL(res.headers.get('location'), current);
      } catch {
        throw new AttnlabError('EIO', `${file}: ${current.href} redirects to an invalid URL`);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        throw new AttnlabError('EIO', `${file}: ${current.href} redirects to a ${next.protocol} URL (only http and https are followed)`);
      if (!allowed(next)) throw refuse(next);
      if (hop + 1 >= MAX_REDIRECTS) throw new AttnlabError('EIO', `${file}: more than ${MAX_REDIRECTS} redirects from ${url.href}`);
      current = next;
      continue;
    }
    return { res, final: current };
  }
}

async function openURL(url, file, builtin, guard, opts) {
  if (url.protocol === 'file:') {
    if (!isNode) throw notFound(file, url.href, builtin, 'file: URLs can only be read in Node');
    return openFile(url, file, builtin, guard);
  }
  const { res, final } = await fetchFollowing(url, file, builtin, guard, opts);
  const release = async () => { if (res.body) await res.body.cancel().catch(() => {}); };
  if (!res.ok) {
    await release();
    throw notFound(file, final.href, builtin, `HTTP ${res.status}`);
  }
  const len = res.headers.get('content-length');
  const enc = (res.headers.get('content-encoding') || 'identity').toLowerCase();
  // A compressed body's Content-Length counts compressed bytes: treat as unknown.
  const total = len !== null && enc === 'identity' && /^\d+$/.test(len) ? Number(len) : null;
  if (total !== null && total > limitOf(file)) {
    await release(); // refused before the first byte of the body
    throw tooLarge(file, total, true);
  }
  return {
    total,
    url: final.href,
    // Cancel the body when the read is abandoned (a limit, a timeout, an
    // abort, a truncated or overlong body): the connection is closed now, not
    // when the server gives up.
    release,
    async *chunks() {
      if (!res.body) { yield new Uint8Array(await guard.race(res.arrayBuffer())); return; }
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await guard.race(reader.read());
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    },
  };
}

// A buffer or string: its length is checked before it is copied anywhere.
function bytesOf(v, file) {
  if (typeof v === 'string') {
    // UTF-8 is at most 3 bytes per UTF-16 unit: a string that cannot be over the limit is not measured first
    if (v.length > limitOf(file)) throw tooLarge(file, v.length, false);
    return utf8.encode(v);
  }
  try {
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  } catch (e) {
    // a detached ArrayBuffer (transferred to a worker, or structuredClone'd with transfer)
    throw new AttnlabError('ETYPE', `the buffer given for ${file} is detached (it was transferred elsewhere)`, { cause: e });
  }
}

function openValue(v, file, guard) {
  if (!isBlob(v)) {
    const bytes = bytesOf(v, file);
    if (bytes.length > limitOf(file)) throw tooLarge(file, bytes.length, true);
    return { total: bytes.length, bytes };
  }
  // Blob / File: the size first; the stream is counted too (a File can change after it was picked)
  if (v.size > limitOf(file)) throw tooLarge(file, v.size, true);
  return {
    total: v.size,
    blob: true,
    async *chunks() {
      if (typeof v.stream !== 'function') { yield new Uint8Array(await guard.race(v.arrayBuffer())); return; }
      const reader = v.stream().getReader();
      let done = false;
      try {
        for (;;) {
          const next = await guard.race(reader.read());
          if (next.done) { done = true; return; }
          yield next.value;
        }
      } finally {
        if (!done) reader.cancel().catch(() => {});
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

// The chunks of a streamed reader, each counted against the file's limit (and
// the announced size) before it is handed on, restarting the stall clock.
async function* counted(r, file, guard, tick) {
  const limit = limitOf(file);
  let loaded = 0;
  for await (const c of r.chunks()) {
    if (r.total !== null && loaded + c.length > r.total)
      throw new AttnlabError('EIO', `${file}: received more than the announced ${r.total} bytes`);
    if (loaded + c.length > limit) throw tooLarge(file, loaded + c.length, false);
    loaded += c.length;
    guard.progress(loaded, r.total);
    tick(loaded);
    yield c;
  }
  guard.check();
}

// Read a small file completely into a Uint8Array.
async function readAll(r, file, emit, guard) {
  if (r.bytes) return r.bytes;
  emit(r.url ? { status: 'download', file, total: r.total, url: r.url } : { status: 'download', file, total: r.total });
  const tick = progressEmitter(emit, file, r.total);
  if (r.fh) {
    try {
      const b = new Uint8Array(r.total);
      let loaded = 0;
      while (loaded < r.total) {
        const { bytesRead } = await guard.race(r.fh.read(b, loaded, r.total - loaded, loaded));
        if (bytesRead === 0) break;
        loaded += bytesRead;
        guard.progress(loaded, r.total);
      }
      if (loaded !== r.total) throw new AttnlabError('EIO', `${file}: truncated, got ${loaded} of ${r.total} bytes (did it change while it was read?)`);
      tick(loaded, true);
      return b;
    } finally {
      await r.release();
    }
  }
  const parts = [];
  let loaded = 0;
  for await (const c of counted(r, file, guard, tick)) {
    parts.push(c);
    loaded += c.length;
  }
  if (r.total !== null && loaded !== r.total)
    throw new AttnlabError('EIO', `${file}: truncated, got ${loaded} of ${r.total} bytes`);
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
async function readIntoWasm(w, r, file, emit, guard) {
  if (r.bytes) {
    const ptr = w.malloc(r.bytes.length);
    w.writeBytes(ptr, r.bytes);
    return { ptr, len: r.bytes.length };
  }
  emit(r.url ? { status: 'download', file, total: r.total, url: r.url } : { status: 'download', file, total: r.total });
  const tick = progressEmitter(emit, file, r.total);
  if (r.total === null) {
    // Unknown size: collect, then one copy (the only case of a transient JS
    // copy); the limit is applied chunk by chunk, so it bounds the collection.
    const parts = [];
    let loaded = 0;
    for await (const c of counted(r, file, guard, tick)) { parts.push(c); loaded += c.length; }
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
          guard.check();
          const n = Math.min(CHUNK, total - loaded);
          const view = new Uint8Array(w.memory.buffer, ptr + loaded, n);
          // Not raced against an abort: the read writes into the wasm buffer, which is freed on
          // failure, so it must be over first (a regular file's read does not stall; an abort is
          // seen at the next chunk, at most 8 MiB later).
          const { bytesRead } = await r.fh.read(view, 0, n, loaded);
          if (bytesRead === 0) break;
          loaded += bytesRead;
          guard.progress(loaded, total);
          tick(loaded);
        }
      } finally {
        await r.release();
      }
    } else {
      for await (const c of counted(r, file, guard, tick)) {
        w.writeBytes(ptr, c, loaded);
        loaded += c.length;
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
 * Check the reading options of loadModel: {signal, timeoutMs, redirects}.
 * @returns {{signal?: AbortSignal, timeoutMs: number, redirects: string}}
 */
export function checkReadOptions({ signal, timeoutMs, redirects } = {}) {
  if (signal !== undefined && signal !== null) {
    const ok = (typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal) ||
      (typeof signal === 'object' && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function');
    if (!ok) throw new AttnlabError('ETYPE', 'options.signal must be an AbortSignal');
  }
  if (timeoutMs !== undefined && timeoutMs !== null) {
    if (typeof timeoutMs !== 'number') throw new AttnlabError('ETYPE', 'options.timeoutMs must be a number (milliseconds; 0 for none)');
    if (Number.isNaN(timeoutMs)) throw new AttnlabError('ENAN', 'options.timeoutMs is NaN');
    if (!(timeoutMs >= 0) || !Number.isInteger(timeoutMs) || timeoutMs > 2 ** 31 - 1)
      throw new AttnlabError('ERANGE', `options.timeoutMs must be an integer in [0, 2^31 - 1] (0: no stall timeout), got ${timeoutMs}`);
  }
  if (redirects !== undefined && redirects !== null && !['same-origin', 'any', 'none'].includes(redirects))
    throw new AttnlabError('EINVAL', `options.redirects must be 'same-origin', 'any' or 'none', got ${String(redirects)}`);
  return { signal: signal ?? undefined, timeoutMs: timeoutMs ?? DEFAULT_STALL_TIMEOUT_MS, redirects: redirects ?? 'same-origin' };
}

/**
 * Read a model's files (src from resolveSource): the text files as bytes, the
 * safetensors file(s) straight into wasm memory of w (an AttnlabWasm). Each file
 * is held to the limit of its kind while it streams (limitOf), with the stall
 * timeout, the signal and the redirect rule of opts (checkReadOptions).
 * @returns {Promise<{config: Uint8Array, vocab?, merges?, tokenizer?, tokenizerConfig?, index?: Uint8Array,
 *   shards: {name: string, ptr: number, len: number}[], stPtr: number, stLen: number, name: string, urls?: object}>}
 *   Every shard ptr is a malloc'ed wasm buffer the caller must hand to C or free (stPtr/stLen: the first).
 */
export async function readModelInto(w, src, emit, opts = {}) {
  const reader = new ModelReader(w, src, emit, checkReadOptions(opts));
  try {
    return await reader.read();
  } catch (e) {
    throw await reader.fail(e);
  }
}

/** The steps of readModelInto, sharing the file being read and its stall guard. */
class ModelReader {
  constructor(w, src, emit, o) {
    Object.assign(this, { w, src, emit, o });
    this.out = { name: src.kind === 'url' ? src.url.href : 'buffers', stPtr: 0, stLen: 0, shards: [] };
    if (src.kind === 'url') this.out.urls = {};
    this.r = null;       // the file or response being read
    this.guard = null;   // its stall timeout and abort watch
    this.current = 'the model';
  }

  async read() {
    if (this.o.signal && this.o.signal.aborted)
      throw new AttnlabError('EABORT', 'the load was aborted before it started (options.signal)');
    await this.text('config.json');
    await this.tokenizer(folderPlan(this.out.config));
    await this.safetensors();
    this.out.stPtr = this.out.shards[0].ptr;
    this.out.stLen = this.out.shards[0].len;
    return this.out;
  }

  /** Free what was read and name the file that failed. */
  async fail(e) {
    this.drop();
    for (const sh of this.out.shards) this.w.free(sh.ptr);
    if (this.r && this.r.release) await this.r.release();
    return asLoadError(e, this.current);
  }

  drop() {
    if (this.guard) this.guard.dispose();
    this.guard = null;
  }

  open(file, key, shard) {
    const { src, o } = this;
    this.current = file;
    this.drop();
    this.guard = makeGuard(o, file, this.emit);
    return src.kind === 'url' ? openURL(fileInFolder(src.url, file), file, src.builtin, this.guard, o)
      : openValue(shard ? src.files.shards[file] : src.files[key], file, this.guard);
  }

  has(file, shard = false) {
    const { src } = this;
    if (src.kind === 'url') return true;
    return shard || SHARD.test(file) ? !!(src.files.shards && Object.hasOwn(src.files.shards, file) && src.files.shards[file])
      : !!src.files[KEYS[file]];
  }

  finish(file, size) {
    const { r } = this;
    this.guard.check();
    this.drop();
    if (r.url) this.out.urls[file] = r.url;
    this.emit(r.url ? { status: 'done', file, loaded: size, total: size, url: r.url }
      : { status: 'done', file, loaded: size, total: size });
    this.r = null;
  }

  /** A text file into out[KEYS[file]]; an optional one may be absent. */
  async text(file, required = true) {
    this.emit({ status: 'initiate', file });
    if (!this.has(file)) {
      if (required) throw new AttnlabError('EIO', `${file} is missing`);
      return;
    }
    try {
      this.r = await this.open(file, KEYS[file]);
    } catch (e) {
      this.drop();
      if (!required && e.code === 'EIO') return; // an optional file a server does not have
      throw e;
    }
    const bytes = await readAll(this.r, file, this.emit, this.guard);
    this.out[KEYS[file]] = bytes;
    this.finish(file, bytes.length);
  }

  /** A file list or buffers say which tokenizer they hold; a URL is asked for the family's own. */
  async tokenizer(plan) {
    const { src, out } = this;
    if (src.kind === 'url' && plan.family !== 'gpt2') {
      // tokenizer.json when the folder has it (its pre-tokenizer is the family's); else GPT-2-style files
      await this.text('tokenizer.json', false);
      if (out.tokenizer) await this.text('tokenizer_config.json', false);
      else for (const f of ['vocab.json', 'merges.txt']) await this.text(f);
      return;
    }
    const tok = src.kind === 'url' ? plan.tokenizer
      : src.files.vocab && src.files.merges && (plan.family === 'gpt2' || !src.files.tokenizer)
        ? [['vocab.json', true], ['merges.txt', true]] : [['tokenizer.json', true], ['tokenizer_config.json', false]];
    for (const [file, required] of tok) await this.text(file, required);
  }

  /** model.safetensors, or the shards its index names, straight into wasm memory. */
  async safetensors() {
    const { src } = this;
    const file = 'model.safetensors';
    this.emit({ status: 'initiate', file });
    let single = null;
    if (this.has(file)) {
      try {
        single = await this.open(file, 'safetensors');
      } catch (e) {
        this.drop();
        if (src.kind !== 'url' || e.code !== 'EIO') throw e;
        try { // not there: a sharded checkpoint?
          await this.text(INDEX);
        } catch {
          throw e;
        }
      }
    } else {
      await this.text(INDEX);
    }
    if (single) return this.weights(file, single);
    for (const shard of shardNames(this.out.index)) {
      this.emit({ status: 'initiate', file: shard });
      if (!this.has(shard, true)) throw new AttnlabError('EMISSING', `shard ${shard} (named by ${INDEX}) is missing`);
      await this.weights(shard, await this.open(shard, null, true));
    }
  }

  async weights(file, r) {
    this.r = r;
    const { ptr, len } = await readIntoWasm(this.w, r, file, this.emit, this.guard);
    this.out.shards.push({ name: file, ptr, len });
    this.finish(file, len);
  }
}
