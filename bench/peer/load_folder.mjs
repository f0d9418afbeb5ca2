// load_folder.mjs — a Hugging Face folder on disk into an attnlab wasm instance, the way web/src/model.js's
// loadModel does it after reading the files (bench/peer's harnesses share it).
//
// readFolder(dir) reads the files into memory (outside any timing); loadFolder(w, folder) loads them. GPT-2's four
// files (config.json, model.safetensors, vocab.json, merges.txt) take the path they always took, w.loadModel
// (alab_wasm_load), so the GPT-2 figures keep measuring the same code; any other folder (tokenizer.json, or
// model.safetensors.index.json + shards) goes through the general loader, w.loadModelFiles (alab_wasm_load_files),
// its safetensors bytes written into wasm memory first (malloc + copy), as readModelInto does. weights: 'f32' (the
// default here: the benchmark compares f32 against f32), 'half' or 'auto'.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const opt = (dir, f) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f)) : null);

/** {dir, family, files (text files as bytes), shards [{name, bytes}], bytes (weights on disk)} */
export function readFolder(dir) {
  const files = {
    config: readFileSync(join(dir, 'config.json')),
    index: opt(dir, 'model.safetensors.index.json'),
    vocab: opt(dir, 'vocab.json'), merges: opt(dir, 'merges.txt'),
    tokenizer: opt(dir, 'tokenizer.json'), tokenizerConfig: opt(dir, 'tokenizer_config.json'),
  };
  const names = files.index
    ? [...new Set(Object.values(JSON.parse(files.index.toString('utf8')).weight_map))].sort()
    : ['model.safetensors'];
  const shards = names.map((name) => ({ name, bytes: readFileSync(join(dir, name)) }));
  const family = JSON.parse(files.config.toString('utf8')).model_type ?? 'gpt2';
  return { dir, family, files, shards, bytes: shards.reduce((s, sh) => s + sh.bytes.length, 0) };
}

/** Load a readFolder() result into w; returns {m, path: 'gpt2 files' or 'general'}. */
export function loadFolder(w, folder, { weights = 'f32' } = {}) {
  const { family, files, shards } = folder;
  if (weights !== 'half' && family === 'gpt2' && files.vocab && files.merges && !files.index && !files.tokenizer) {
    return { m: w.loadModel({ config: files.config, vocab: files.vocab, merges: files.merges, safetensors: shards[0].bytes }),
             path: 'gpt2 files' };
  }
  const inWasm = [];
  try {
    for (const { name, bytes } of shards) {
      const ptr = w.malloc(bytes.length);
      inWasm.push({ name, ptr, len: bytes.length });
      w.writeBytes(ptr, bytes);
    }
  } catch (e) {
    for (const sh of inWasm) w.free(sh.ptr);
    throw e;
  }
  return { m: w.loadModelFiles(files, inWasm, { weights }), path: 'general' };
}
