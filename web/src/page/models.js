// models.js — where the page's model comes from, and what to say when it fails.
//
// Three kinds of source:
//   built-in   models/brown-gpt2/ next to the page: index.html starts the four
//              downloads, the entry module (head-start.js) takes them over and
//              the bytes go to the worker (builtin-files.js). ?model=/a/path/ on
//              this server (tests): the worker fetches that folder itself.
//   hub        a model of HUB_MODELS from Hugging Face. The page downloads its
//              files with a progress bar and keeps them in the Cache API
//              (cache 'attnlab-models-v1', one entry per file URL), so a second
//              visit loads from disk. The body is tee'd: one branch streams into
//              the cache, the other only counts bytes, and the file is then read
//              back from the cache as a disk-backed Blob, so the weights are not
//              held in JS memory. Blobs are posted to the worker as handles.
//              huggingface.co answers a weights file with a redirect to its
//              LFS/Xet CDN; scripts/serve.mjs's CSP connect-src lists those hosts.
//   local      the files of a model folder from <input type=file multiple>, a
//              folder chooser (webkitdirectory) or a drop, sorted by name.

import { AttnlabError } from '../worker-client.js';
import { modelFilesOf } from '../sources.js';
import { PageError } from './builtin-files.js';

// the built-in model's directory and files live in builtin-files.js (light: the page's entry module reads them)
export { PageError, builtinSource, BUILTIN_FILES, BUILTIN_WEIGHTS, fetchBuiltinModel } from './builtin-files.js';

/** A GPT-2 folder as the hub serves it. */
export const MODEL_FILES = Object.freeze(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
/** The other families' folder: [name, required]; tokenizer_config.json says whether a BOS is prepended. */
export const HF_FILES = Object.freeze([['config.json', true], ['tokenizer.json', true], ['tokenizer_config.json', false],
                                       ['model.safetensors', true]]);
const GPT2_FILES = Object.freeze(MODEL_FILES.map((n) => [n, true]));

/** Above this many bytes of weights the picker warns before a download. */
export const LARGE_MODEL_BYTES = 1e9;

// bytes: the weights as published (parameters from the published tensor shapes,
// tests/fixtures/configs, times 2 bytes for F16/BF16, 4 for F32), an estimate of
// the download. Llama-3.2-1B: Meta's repository is gated (a login and a licence
// click), so the page reads unsloth's ungated copy of the same files.
const hub = (name, repo, family, bytes) => Object.freeze({
  name, family, bytes, base: `https://huggingface.co/${repo}/resolve/main/`,
  files: family === 'gpt2' ? GPT2_FILES : HF_FILES,
});
export const HUB_MODELS = Object.freeze({
  distilgpt2: hub('distilgpt2', 'distilbert/distilgpt2', 'gpt2', 353e6),
  gpt2: hub('gpt2', 'openai-community/gpt2', 'gpt2', 548e6),
  'pythia-70m': hub('Pythia-70m', 'EleutherAI/pythia-70m', 'gpt_neox', 141e6),
  'smollm2-135m': hub('SmolLM2-135M', 'HuggingFaceTB/SmolLM2-135M', 'llama', 269e6),
  'qwen2.5-0.5b': hub('Qwen2.5-0.5B', 'Qwen/Qwen2.5-0.5B', 'qwen2', 988e6),
  'qwen3-0.6b': hub('Qwen3-0.6B', 'Qwen/Qwen3-0.6B', 'qwen3', 1192e6),
  'llama-3.2-1b': hub('Llama-3.2-1B', 'unsloth/Llama-3.2-1B', 'llama', 2472e6),
  // SentencePiece-style tokenizers (Llama 2's; Gemma 3's 262 144 tokens). Gemma 3: Google's repository is gated
  // like Meta's, so unsloth's ungated copy; TinyLlama's size is v0.6's published tensors, the same shapes as v1.0's.
  'tinyllama-1.1b': hub('TinyLlama-1.1B-Chat', 'TinyLlama/TinyLlama-1.1B-Chat-v1.0', 'llama', 2200e6),
  'gemma-3-270m': hub('Gemma-3-270M', 'unsloth/gemma-3-270m', 'gemma3_text', 536e6),
});

export const CACHE_NAME = 'attnlab-models-v1';
const ABSENT = 'x-attnlab-absent';

/**
 * Local files (a FileList or an array of Files): the files of a model folder by
 * name (config.json, the weights or their index and shards, the tokenizer).
 * Throws PageError 'missing' listing what is absent; other files are ignored.
 */
export function pickModelFiles(fileList) {
  const { files, missing } = modelFilesOf(fileList);
  if (missing.length) throw new PageError('missing', `missing ${missing.join(', ')}`, { missing });
  return files;
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
 * Download (or read from the cache) the files of a hub model: files is a list of
 * [name, required] (HUB_MODELS[..].files; GPT-2's four by default). An optional
 * file the hub answers with 404 is left out.
 * onProgress({file, loaded, total, cached}) per chunk.
 * @returns {Promise<{files: File[], cached: boolean, cacheFailed: boolean}>}
 */
export async function fetchHubModel(base, { onProgress = () => {}, signal, files = GPT2_FILES } = {}) {
  const cache = await openCache();
  const out = [];
  const names = [];
  let cached = true, cacheFailed = false;
  for (const [file, required] of files) {
    const url = base + file;
    const hit = cache ? await cache.match(url) : null;
    if (hit && hit.headers.get(ABSENT) === '1') continue;   // an optional file the hub does not have
    if (hit) {
      const blob = await hit.blob();
      onProgress({ file, loaded: blob.size, total: blob.size, cached: true });
      names.push(file);
      out.push(blob);
      continue;
    }
    let got;
    try {
      got = await download(url, file, signal);
    } catch (e) {
      if (!required && e instanceof PageError && e.kind === 'http' && e.status === 404) {
        // remembered, so that a visit from the cache does not need the network to learn it again
        if (cache) await cache.put(url, new Response('', { status: 200, headers: { [ABSENT]: '1' } })).catch(() => {});
        continue;
      }
      throw e;
    }
    cached = false;
    names.push(file);
    const { res, total } = got;
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
  return { files: out.map((b, k) => new File([b], names[k])), cached, cacheFailed };
}

const WRONG_FILES = new Set(['EJSON', 'ECONFIG', 'EFORMAT', 'EDTYPE', 'EMISSING', 'ESHAPE', 'EVOCAB', 'EMERGES']);

/** The family (config.json's model_type) of a set of local files, when their config.json says one; else null. */
export async function familyOfFiles(fileList) {
  try {
    const cfg = Array.from(fileList || []).find((f) => f.name === 'config.json');
    const type = cfg ? JSON.parse(await cfg.text()).model_type : null;
    return typeof type === 'string' && type.length < 40 ? type : null;
  } catch {
    return null;
  }
}

/**
 * A readable message for any error of loading or running, in the page's language.
 * ctx: {nPositions} for ETOOLONG; {family} (model_type) of the model being loaded, when known, so that the
 * message names that family and the files it needs.
 */
export function explain(e, t, ctx = {}) {
  if (e instanceof PageError) {
    switch (e.kind) {
      case 'network': return t('errNetwork', e.host);
      case 'http': return t('errHttp', e.status, e.file);
      case 'missing': return t('errMissing', e.missing.join(', '), ctx.family ?? null);
      case 'param': return t('errParam', e.param);
      default: return t('errOther', '', e.message);
    }
  }
  if (e instanceof AttnlabError || (e && typeof e.code === 'string')) {
    const code = e.code;
    if (WRONG_FILES.has(code)) return t('errWrongFiles', code, e.message, ctx.family ?? null);
    if (code === 'ENOMEM') return t('errMemory');
    if (code === 'ETOOLONG') return t('errTooLong', ctx.nPositions ?? '?');
    if (code === 'EEMPTY') return t('errEmpty');
    if (code === 'EWASM') return t('errWasm', e.message);
    if (code === 'EIO' && /the files given lack/.test(e.message)) return t('errMissing', e.message.replace(/^.*lack (.*?) \(.*$/, '$1'), ctx.family ?? null);
    if (code === 'EIO' && /Failed to fetch|NetworkError|network/i.test(e.message)) {
      return t('errNetwork', (/https?:\/\/([^/]+)/.exec(e.message) || [])[1] || 'the server');
    }
    return t('errOther', code, e.message);
  }
  if (e instanceof RangeError || (e && /out of memory|Array buffer allocation failed/i.test(e.message || ''))) return t('errMemory');
  return t('errOther', '', String((e && e.message) || e));
}
