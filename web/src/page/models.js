// models.js — where the page's model comes from, and what to say when it fails.
//
// Three kinds of source:
//   built-in   models/brown-gpt2/ next to the page (or ?model=/a/path/ on this
//              server, for tests): the worker fetches the files itself.
//   hub        distilgpt2 or gpt2 from Hugging Face. The page downloads the four
//              files with a progress bar and keeps them in the Cache API
//              (cache 'attnlab-models-v1', one entry per file URL), so a second
//              visit loads from disk. The body is tee'd: one branch streams into
//              the cache, the other only counts bytes, and the file is then read
//              back from the cache as a disk-backed Blob, so the weights are not
//              held in JS memory. Blobs are posted to the worker as handles.
//              huggingface.co answers a weights file with a redirect to its
//              LFS/Xet CDN; scripts/serve.mjs's CSP connect-src lists those hosts.
//   local      four File objects from <input type=file multiple> or a drop.

import { AttnlabError } from '../worker-client.js';

export const MODEL_FILES = Object.freeze(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
const KEY = { 'config.json': 'config', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'model.safetensors': 'safetensors' };

export const HUB_MODELS = Object.freeze({
  distilgpt2: { name: 'distilgpt2', base: 'https://huggingface.co/distilbert/distilgpt2/resolve/main/' },
  gpt2: { name: 'gpt2', base: 'https://huggingface.co/openai-community/gpt2/resolve/main/' },
});

export const CACHE_NAME = 'attnlab-models-v1';

/** An error of the page's own (network, HTTP), with a kind the message table knows. */
export class PageError extends Error {
  constructor(kind, message, detail = {}) {
    super(message);
    this.name = 'PageError';
    this.kind = kind;
    Object.assign(this, detail);
  }
}

/**
 * The built-in model's directory, or the ?model= override. The override must be a
 * path on this server (tests use ?model=/tests/fixtures/tiny/); anything else is
 * refused, so a link cannot make the page fetch from elsewhere.
 */
export function builtinSource(search, base) {
  const param = new URLSearchParams(search).get('model');
  const builtin = new URL('models/brown-gpt2/', base);
  if (param === null || param === '') return { url: builtin, name: 'brown-gpt2', custom: false };
  const u = new URL(param, base);
  if (u.origin !== new URL(base).origin || !param.startsWith('/') || param.startsWith('//')) {
    throw new PageError('param', `?model= must be a path on this server, like /tests/fixtures/tiny/ (got ${param})`, { param });
  }
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  const name = u.pathname.replace(/\/+$/, '').split('/').pop() || u.pathname;
  return { url: u, name, custom: true };
}

/**
 * Local files (a FileList or an array of Files): the four model files by name.
 * Throws PageError 'missing' listing what is absent; other files are ignored.
 */
export function pickModelFiles(fileList) {
  const files = {};
  for (const f of Array.from(fileList || [])) {
    const name = String(f.name || '').split(/[\\/]/).pop();
    if (KEY[name]) files[name] = f;
  }
  const missing = MODEL_FILES.filter((n) => !files[n]);
  if (missing.length) throw new PageError('missing', `missing ${missing.join(', ')}`, { missing });
  return MODEL_FILES.map((n) => files[n]);
}

async function openCache() {
  try {
    return typeof caches !== 'undefined' ? await caches.open(CACHE_NAME) : null;
  } catch {
    return null; // e.g. storage disabled: download without caching
  }
}

async function countBytes(stream, total, onBytes, keep) {
  const reader = stream.getReader();
  const chunks = keep ? [] : null;
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    loaded += value.byteLength;
    if (chunks) chunks.push(value);
    onBytes(loaded, total);
  }
  return { loaded, chunks };
}

async function download(url, file, signal) {
  let res;
  try {
    res = await fetch(url, { signal, mode: 'cors', credentials: 'omit', redirect: 'follow' });
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    throw new PageError('network', e.message, { host: new URL(url).host, file });
  }
  if (!res.ok) throw new PageError('http', `HTTP ${res.status}`, { status: res.status, file });
  const len = res.headers.get('content-length');
  const total = len !== null && /^\d+$/.test(len) ? Number(len) : null;
  return { res, total };
}

/**
 * Download (or read from the cache) the four files of a hub model.
 * onProgress({file, loaded, total, cached}) per chunk.
 * @returns {Promise<{files: Blob[] (in MODEL_FILES order), cached: boolean, cacheFailed: boolean}>}
 */
export async function fetchHubModel(base, { onProgress = () => {}, signal } = {}) {
  const cache = await openCache();
  const out = [];
  let cached = true, cacheFailed = false;
  for (const file of MODEL_FILES) {
    const url = base + file;
    const hit = cache ? await cache.match(url) : null;
    if (hit) {
      const blob = await hit.blob();
      onProgress({ file, loaded: blob.size, total: blob.size, cached: true });
      out.push(blob);
      continue;
    }
    cached = false;
    const { res, total } = await download(url, file, signal);
    const onBytes = (loaded) => onProgress({ file, loaded, total, cached: false });
    if (cache && res.body) {
      const [toCache, toCount] = res.body.tee();
      const headers = { 'Content-Type': res.headers.get('content-type') || 'application/octet-stream' };
      if (total !== null) headers['Content-Length'] = String(total);
      const put = cache.put(url, new Response(toCache, { status: 200, headers })).then(() => true, () => false);
      await countBytes(toCount, total, onBytes, false);
      if (await put) {
        const stored = await cache.match(url);
        if (stored) { out.push(await stored.blob()); continue; }
      }
      // the cache refused (quota): download once more and keep it in memory
      cacheFailed = true;
      const again = await download(url, file, signal);
      const { chunks } = await countBytes(again.res.body, again.total, onBytes, true);
      out.push(new Blob(chunks));
    } else {
      const { chunks } = res.body ? await countBytes(res.body, total, onBytes, true) : { chunks: [await res.arrayBuffer()] };
      out.push(new Blob(chunks));
    }
    // (a compressed body is larger than its Content-Length; only a short one is truncated)
    if (total !== null && out[out.length - 1].size < total) {
      throw new PageError('truncated', `${file}: received ${out[out.length - 1].size} of ${total} bytes`, { file });
    }
  }
  return { files: out.map((b, k) => new File([b], MODEL_FILES[k])), cached, cacheFailed };
}

const WRONG_FILES = new Set(['EJSON', 'ECONFIG', 'EFORMAT', 'EDTYPE', 'EMISSING', 'ESHAPE', 'EVOCAB', 'EMERGES']);

/**
 * A readable message for any error of loading or running, in the page's language.
 * ctx: {nPositions} for ETOOLONG.
 */
export function explain(e, t, ctx = {}) {
  if (e instanceof PageError) {
    switch (e.kind) {
      case 'network': return t('errNetwork', e.host);
      case 'http': return t('errHttp', e.status, e.file);
      case 'missing': return t('errMissing', e.missing.join(', '));
      case 'param': return t('errParam', e.param);
      default: return t('errOther', '', e.message);
    }
  }
  if (e instanceof AttnlabError || (e && typeof e.code === 'string')) {
    const code = e.code;
    if (WRONG_FILES.has(code)) return t('errWrongFiles', code, e.message);
    if (code === 'ENOMEM') return t('errMemory');
    if (code === 'ETOOLONG') return t('errTooLong', ctx.nPositions ?? '?');
    if (code === 'EEMPTY') return t('errEmpty');
    if (code === 'EWASM') return t('errWasm', e.message);
    if (code === 'EIO' && /the files given lack/.test(e.message)) return t('errMissing', e.message.replace(/^.*lack (.*?) \(.*$/, '$1'));
    if (code === 'EIO' && /Failed to fetch|NetworkError|network/i.test(e.message)) {
      return t('errNetwork', (/https?:\/\/([^/]+)/.exec(e.message) || [])[1] || 'the server');
    }
    return t('errOther', code, e.message);
  }
  if (e instanceof RangeError || (e && /out of memory|Array buffer allocation failed/i.test(e.message || ''))) return t('errMemory');
  return t('errOther', '', String((e && e.message) || e));
}
