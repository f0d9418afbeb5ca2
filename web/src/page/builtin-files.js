// builtin-files.js — the built-in model's directory and its four files, with nothing heavy imported: the page's
// entry module (entry.js, through head-start.js) uses it before the rest of the page's code is fetched.
//
// The files are read with XMLHttpRequest (responseType 'arraybuffer'): the body is assembled by the browser's
// network code, not by a JS loop over stream chunks (that loop cost the main thread ~0.3 s for the 15 MB of
// weights in a CPU profile under load), and its progress events still drive the progress bar. The request's mode
// is that of index.html's <link rel="preload" as="fetch" crossorigin="anonymous"> (cors, same-origin
// credentials), so the downloads the HTML started are taken over, not repeated.

import { AttnlabError } from '../core/errors.js';

/** An error of the page's own (network, HTTP), with a kind the message table knows (models.js explain). */
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

/** How the page keeps the built-in model's F16 weights: in 16 bits (no conversion pass at load, half the memory). */
export const BUILTIN_WEIGHTS = 'half';

/** The built-in model's four files, in the order index.html preloads them. */
export const BUILTIN_FILES = Object.freeze(['model.safetensors', 'vocab.json', 'merges.txt', 'config.json']);
const BUILTIN_KEYS = { 'model.safetensors': 'safetensors', 'vocab.json': 'vocab', 'merges.txt': 'merges', 'config.json': 'config' };

/** One file's bytes (a Uint8Array over the response's own buffer); onBytes(loaded, total|null) as it arrives. */
function readFile(url, signal, onBytes) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(new AttnlabError('EABORT', 'the load was aborted')); return; }
    const xhr = new XMLHttpRequest();
    const onAbort = () => xhr.abort();
    const settle = () => { if (signal) signal.removeEventListener('abort', onAbort); };
    xhr.open('GET', url);
    xhr.responseType = 'arraybuffer';
    xhr.onprogress = (e) => onBytes(e.loaded, e.lengthComputable ? e.total : null);
    xhr.onload = () => {
      settle();
      if (xhr.status !== 200) { reject(new AttnlabError('EIO', `${url}: HTTP ${xhr.status}`)); return; }
      const len = xhr.getResponseHeader('content-length');
      const bytes = new Uint8Array(xhr.response);
      // the server announced a length (no compression) and the connection ended before it: not a model file
      if (len !== null && /^\d+$/.test(len) && !xhr.getResponseHeader('content-encoding') && bytes.byteLength < Number(len)) {
        reject(new AttnlabError('EIO', `${url}: received ${bytes.byteLength} of ${len} bytes (the connection ended early)`));
        return;
      }
      resolve(bytes);
    };
    xhr.onerror = () => { settle(); reject(new AttnlabError('EIO', `${url}: the download failed (network error)`)); };
    xhr.onabort = () => { settle(); reject(new AttnlabError('EABORT', 'the load was aborted')); };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    xhr.send();
  });
}

/**
 * The built-in model's files from base (a URL of a directory): all four in parallel; onProgress({file, loaded,
 * total}) for the weights (total null when the server does not say), then once with done: true. Returns
 * {config, vocab, merges, safetensors} as Uint8Arrays, ready to hand to the worker (loadModel's object source,
 * transferred). A missing file is an EIO error naming the URL and the HTTP status; signal aborts (EABORT).
 */
export async function fetchBuiltinModel(base, { signal, onProgress = () => {} } = {}) {
  const one = async (file) => {
    const url = new URL(file, base).href;
    const weights = file === 'model.safetensors';
    const bytes = await readFile(url, signal, weights ? (loaded, total) => onProgress({ file, loaded, total }) : () => {});
    if (weights) onProgress({ file, loaded: bytes.byteLength, total: bytes.byteLength, done: true });
    return [BUILTIN_KEYS[file], bytes];
  };
  return Object.fromEntries(await Promise.all(BUILTIN_FILES.map(one)));
}
