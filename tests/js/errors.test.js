// errors.test.js — every bad argument of every public function of 'attnlab'
// throws an AttnlabError with its stable code (table-driven); every C error
// code that a caller can provoke surfaces with its code; a disposed model
// throws EDISPOSED; and after each error the model still gives the reference
// numbers.
//
// C codes not provokable through the public API: ESTATE (run() always runs the
// forward pass before reading results). ENOMEM is provoked with a model whose
// activations exceed the 4 GB wasm address space.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as api from '../../web/src/index.js';
import { checkpointBuffers } from './helpers/checkpoint.js';
import { caught, caughtAsync, expectError } from './helpers/errors.js';
import { modelFiles } from './helpers/model-files.js';

const { loadModel } = api;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');
const golden = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/golden.json'), 'utf8'));
const plain = golden.cases.find((c) => c.model === 'tiny' && c.name === 'plain_chapter');
const CHAPTER = plain.text;
const T = plain.ids.length; // 19
const L = 3, H = 4, V = 1257, P = 64;

const files = () => modelFiles(TINY);
const tinyConfig = () => JSON.parse(readFileSync(join(TINY, 'config.json'), 'utf8'));

let m;
beforeAll(async () => { m = await loadModel(TINY); });
afterAll(() => m && m.dispose());

// After every error the model must still reproduce the reference.
function stillWorks() {
  const r = m.run(CHAPTER);
  let d = 0;
  for (let i = 0; i < plain.logits.length; i++) d = Math.max(d, Math.abs(r.logits[i] - plain.logits[i]));
  expect(d).toBeLessThanOrEqual(golden.tolerance.logits_max_abs);
}

const hard = (o) => ({ interventions: [{ kind: 'hard', layer: 1, head: 0, row: 5, col: 2, ...o }] });
const soft = (o) => ({ interventions: [{ kind: 'soft', layer: 1, head: 0, row: 5, col: 2, lambda: 1, ...o }] });

// [name, code, (model) => call]
const MODEL_CASES = [
  // tokenize
  ['tokenize(42)', 'ETYPE', (x) => x.tokenize(42)],
  ['tokenize(null)', 'ETYPE', (x) => x.tokenize(null)],
  ['tokenize([1, 2]) (ids are not text)', 'ETYPE', (x) => x.tokenize([1, 2])],
  ['tokenize(2 MB of text)', 'ELIMIT', (x) => x.tokenize('a'.repeat(2 << 20))],
  ['tokenize(1 MiB + 1 byte of UTF-8)', 'ELIMIT', (x) => x.tokenize('é'.repeat((1 << 19) + 1))],
  // decode
  ['decode("abc")', 'ETYPE', (x) => x.decode('abc')],
  ['decode([V])', 'ERANGE', (x) => x.decode([V])],
  ['decode([-1])', 'ERANGE', (x) => x.decode([-1])],
  ['decode([1.5])', 'EINVAL', (x) => x.decode([1.5])],
  ['decode([NaN])', 'ENAN', (x) => x.decode([NaN])],
  ['decode(["1"])', 'ETYPE', (x) => x.decode(['1'])],
  // run: input
  ['run(42)', 'ETYPE', (x) => x.run(42)],
  ['run(undefined)', 'ETYPE', (x) => x.run(undefined)],
  ['run("") (no tokens, from C)', 'EEMPTY', (x) => x.run('')],
  ['run([]) (from C)', 'EEMPTY', (x) => x.run([])],
  ['run(65 tokens) (from C)', 'ETOOLONG', (x) => x.run(new Array(P + 1).fill(262))],
  ['run([V])', 'ERANGE', (x) => x.run([V])],
  ['run([Infinity])', 'ENAN', (x) => x.run([Infinity])],
  ['run(2 MB of text)', 'ELIMIT', (x) => x.run('a'.repeat(2 << 20))],
  // run: options
  ['run(text, 5)', 'ETYPE', (x) => x.run(CHAPTER, 5)],
  ['run(text, [])', 'ETYPE', (x) => x.run(CHAPTER, [])],
  ['run(text, {intervention: []}) (typo)', 'EINVAL', (x) => x.run(CHAPTER, { intervention: [] })],
  ['interventions: {}', 'ETYPE', (x) => x.run(CHAPTER, { interventions: {} })],
  ['interventions: [null]', 'ETYPE', (x) => x.run(CHAPTER, { interventions: [null] })],
  ['intervention with an unknown field', 'EINVAL', (x) => x.run(CHAPTER, hard({ lamda: 1 }))],
  ['kind: 3', 'ETYPE', (x) => x.run(CHAPTER, hard({ kind: 3 }))],
  ["kind: 'medium'", 'EINVAL', (x) => x.run(CHAPTER, hard({ kind: 'medium' }))],
  ['layer: L', 'ERANGE', (x) => x.run(CHAPTER, hard({ layer: L }))],
  ['layer: -1', 'ERANGE', (x) => x.run(CHAPTER, hard({ layer: -1 }))],
  ['layer: 0.5', 'EINVAL', (x) => x.run(CHAPTER, hard({ layer: 0.5 }))],
  ['layer: NaN', 'ENAN', (x) => x.run(CHAPTER, hard({ layer: NaN }))],
  ['layer: Infinity', 'ENAN', (x) => x.run(CHAPTER, hard({ layer: Infinity }))],
  ["layer: '1'", 'ETYPE', (x) => x.run(CHAPTER, hard({ layer: '1' }))],
  ['layer missing', 'ETYPE', (x) => x.run(CHAPTER, hard({ layer: undefined }))],
  ['head: H', 'ERANGE', (x) => x.run(CHAPTER, hard({ head: H }))],
  ["head: 'every'", 'EINVAL', (x) => x.run(CHAPTER, hard({ head: 'every' }))],
  ['head: null', 'ETYPE', (x) => x.run(CHAPTER, hard({ head: null }))],
  ['row: T', 'ERANGE', (x) => x.run(CHAPTER, hard({ row: T }))],
  ['row: -1', 'ERANGE', (x) => x.run(CHAPTER, hard({ row: -1 }))],
  ['col: T', 'ERANGE', (x) => x.run(CHAPTER, soft({ col: T }))],
  ['col: NaN', 'ENAN', (x) => x.run(CHAPTER, hard({ col: NaN }))],
  ['row missing on a hard do', 'ETYPE', (x) => x.run(CHAPTER, hard({ row: undefined }))],
  ['lambda: NaN', 'ENAN', (x) => x.run(CHAPTER, soft({ lambda: NaN }))],
  ['lambda: -Infinity', 'ENAN', (x) => x.run(CHAPTER, soft({ lambda: -Infinity }))],
  ['lambda missing on a soft do', 'ETYPE', (x) => x.run(CHAPTER, soft({ lambda: undefined }))],
  ["lambda: '2'", 'ETYPE', (x) => x.run(CHAPTER, soft({ lambda: '2' }))],
  ['ablate head: H', 'ERANGE', (x) => x.run(CHAPTER, { interventions: [{ kind: 'ablate', layer: 0, head: H }] })],
  ['4097 interventions (from C)', 'ELIMIT', (x) => x.run(CHAPTER, { interventions: new Array(4097).fill({ kind: 'ablate', layer: 0, head: 0 }) })],
  ['ablate: "1.2"', 'ETYPE', (x) => x.run(CHAPTER, { ablate: '1.2' })],
  ['ablate: [1, 2] (not pairs)', 'ETYPE', (x) => x.run(CHAPTER, { ablate: [1, 2] })],
  ['ablate: [[1]]', 'ETYPE', (x) => x.run(CHAPTER, { ablate: [[1]] })],
  ['ablate: [[L, 0]]', 'ERANGE', (x) => x.run(CHAPTER, { ablate: [[L, 0]] })],
  ['ablate: [[0, NaN]]', 'ENAN', (x) => x.run(CHAPTER, { ablate: [[0, NaN]] })],
  ["mask: 'bidirectional'", 'EINVAL', (x) => x.run(CHAPTER, { mask: 'bidirectional' })],
  ["mask: 'window:0'", 'ERANGE', (x) => x.run(CHAPTER, { mask: 'window:0' })],
  ["mask: 'window:-2'", 'ERANGE', (x) => x.run(CHAPTER, { mask: 'window:-2' })],
  ["mask: 'window:x'", 'EINVAL', (x) => x.run(CHAPTER, { mask: 'window:x' })],
  ["mask: 'window:1.5'", 'EINVAL', (x) => x.run(CHAPTER, { mask: 'window:1.5' })],
  ['mask: 42', 'ETYPE', (x) => x.run(CHAPTER, { mask: 42 })],
  ["mask: {mode: 'diag'}", 'EINVAL', (x) => x.run(CHAPTER, { mask: { mode: 'diag' } })],
  ["mask: {mode: 'window'} (no window)", 'ETYPE', (x) => x.run(CHAPTER, { mask: { mode: 'window' } })],
  ["mask: {mode: 'window', window: NaN}", 'ENAN', (x) => x.run(CHAPTER, { mask: { mode: 'window', window: NaN } })],
  ["mask: {mode: 'full', size: 2}", 'EINVAL', (x) => x.run(CHAPTER, { mask: { mode: 'full', size: 2 } })],
  ['mask: per-layer array of the wrong length', 'EINVAL', (x) => x.run(CHAPTER, { mask: ['causal', 'full'] })],
  ['mask: per-layer array with a bad entry', 'EINVAL', (x) => x.run(CHAPTER, { mask: ['causal', 'full', 'nope'] })],
  ['scale: NaN', 'ENAN', (x) => x.run(CHAPTER, { scale: NaN })],
  ['scale: Infinity', 'ENAN', (x) => x.run(CHAPTER, { scale: Infinity })],
  ["scale: '0.5'", 'ETYPE', (x) => x.run(CHAPTER, { scale: '0.5' })],
  ['captureQK: 1', 'ETYPE', (x) => x.run(CHAPTER, { captureQK: 1 })],
  ['captureQK: {layer: L, head: 0}', 'ERANGE', (x) => x.run(CHAPTER, { captureQK: { layer: L, head: 0 } })],
  ["captureQK: {layer: 0, head: 'all'} (one head only)", 'ETYPE', (x) => x.run(CHAPTER, { captureQK: { layer: 0, head: 'all' } })],
  ['captureQK: {layer: 0}', 'ETYPE', (x) => x.run(CHAPTER, { captureQK: { layer: 0 } })],
  ['topK: -1', 'ERANGE', (x) => x.run(CHAPTER, { topK: -1 })],
  ['topK: 2.5', 'EINVAL', (x) => x.run(CHAPTER, { topK: 2.5 })],
  ["topK: '5'", 'ETYPE', (x) => x.run(CHAPTER, { topK: '5' })],
  // generate
  ['generate(42)', 'ETYPE', (x) => x.generate(42)],
  ['generate(text, {max: 3}) (typo)', 'EINVAL', (x) => x.generate(CHAPTER, { max: 3 })],
  ['generate maxTokens: -1', 'ERANGE', (x) => x.generate(CHAPTER, { maxTokens: -1 })],
  ['generate maxTokens: 1.5', 'EINVAL', (x) => x.generate(CHAPTER, { maxTokens: 1.5 })],
  ['generate past n_positions (from C)', 'ETOOLONG', (x) => x.generate(CHAPTER, { maxTokens: P })],
  ['generate("") (from C)', 'EEMPTY', (x) => x.generate('', { maxTokens: 2 })],
  ['generate temperature: NaN', 'ENAN', (x) => x.generate(CHAPTER, { temperature: NaN })],
  ['generate temperature: -1', 'ERANGE', (x) => x.generate(CHAPTER, { temperature: -1 })],
  ['generate topK: -3', 'ERANGE', (x) => x.generate(CHAPTER, { topK: -3 })],
  ['generate seed: -1', 'ERANGE', (x) => x.generate(CHAPTER, { seed: -1 })],
  ['generate seed: 2n ** 64n', 'ERANGE', (x) => x.generate(CHAPTER, { seed: 2n ** 64n })],
  ["generate seed: '7'", 'ETYPE', (x) => x.generate(CHAPTER, { seed: '7' })],
  ['generate seed: 0.5', 'EINVAL', (x) => x.generate(CHAPTER, { seed: 0.5 })],
];

describe('Model methods reject bad arguments with their code, and the model still works after each', () => {
  it.each(MODEL_CASES)('%s → %s', (_, code, call) => {
    expectError(caught(() => call(m)), code);
    stillWorks();
  });
});

describe('Result methods reject bad arguments', () => {
  const cases = [
    ['attention(L, 0)', 'ERANGE', (r) => r.attention(L, 0)],
    ['attention(0, H)', 'ERANGE', (r) => r.attention(0, H)],
    ["attention(0, 'mean')", 'EINVAL', (r) => r.attention(0, 'mean')],
    ['attention(NaN)', 'ENAN', (r) => r.attention(NaN)],
    ["attention('0')", 'ETYPE', (r) => r.attention('0')],
    ['headAverage(-1)', 'ERANGE', (r) => r.headAverage(-1)],
    ['headAverage(0.5)', 'EINVAL', (r) => r.headAverage(0.5)],
  ];
  it.each(cases)('%s → %s', (_, code, call) => {
    expectError(caught(() => call(m.run(CHAPTER))), code);
  });
});

describe('analysis functions reject bad arguments', () => {
  const A = new Float32Array([1, 0, 0.5, 0.5]);
  const cases = [
    ['dagScore(42)', 'ETYPE', () => api.dagScore(42)],
    ['dagScore(length 3)', 'EINVAL', () => api.dagScore([1, 2, 3])],
    ['dagScore([NaN])', 'ENAN', () => api.dagScore([NaN])],
    ["dagScore(['1'])", 'ETYPE', () => api.dagScore(['1'])],
    ['nullDagScore(-1)', 'ERANGE', () => api.nullDagScore(-1)],
    ['nullDagScore(2.5)', 'EINVAL', () => api.nullDagScore(2.5)],
    ["nullDagScore('10')", 'ETYPE', () => api.nullDagScore('10')],
    ["nullDagScore(10, 'window:0')", 'ERANGE', () => api.nullDagScore(10, 'window:0')],
    ["nullDagScore(10, 'diagonal')", 'EINVAL', () => api.nullDagScore(10, 'diagonal')],
    ['nullDagScore(10, 3)', 'ETYPE', () => api.nullDagScore(10, 3)],
    ['asymmetry(null)', 'ETYPE', () => api.asymmetry(null)],
    ['asymmetry(length 5)', 'EINVAL', () => api.asymmetry(new Float32Array(5))],
    ['headAverage(A, 0)', 'ERANGE', () => api.headAverage(A, 0)],
    ['headAverage(A, 3) (length not 3·T·T)', 'EINVAL', () => api.headAverage(A, 3)],
    ['headAverage(A) (no nHead)', 'ETYPE', () => api.headAverage(A)],
    ['outerProduct([1], [1, 2])', 'EINVAL', () => api.outerProduct([1], [1, 2])],
    ['outerProduct([Infinity], [1])', 'ENAN', () => api.outerProduct([Infinity], [1])],
    ["outerProduct('ab', 'cd')", 'ETYPE', () => api.outerProduct('ab', 'cd')],
    ['entropy({})', 'ETYPE', () => api.entropy({})],
    ['displayDo(A) (no op)', 'ETYPE', () => api.displayDo(A)],
    ["displayDo(A, {kind: 'medium'})", 'EINVAL', () => api.displayDo(A, { kind: 'medium', row: 0, col: 0 })],
    ["displayDo(A, {kind: 'hard', row: 2})", 'ERANGE', () => api.displayDo(A, { kind: 'hard', row: 2, col: 0 })],
    ["displayDo(A, {kind: 'hard', col: -1})", 'ERANGE', () => api.displayDo(A, { kind: 'hard', row: 0, col: -1 })],
    ["displayDo(A, {kind: 'soft', lambda: NaN})", 'ENAN', () => api.displayDo(A, { kind: 'soft', row: 0, col: 0, lambda: NaN })],
    ["displayDo([], {kind: 'hard'})", 'EEMPTY', () => api.displayDo([], { kind: 'hard', row: 0, col: 0 })],
  ];
  it.each(cases)('%s → %s', (_, code, call) => {
    expectError(caught(call), code);
  });
});

describe('loadModel rejects bad sources and options, and surfaces every loader code of the C', () => {
  const cfgWith = (over) => JSON.stringify({ ...tinyConfig(), ...over });
  const patched = (find, repl) => {
    const st = files().safetensors;
    const i = Buffer.from(st).indexOf(find);
    if (i < 0) throw new Error(`${find} not in the header`);
    st.set(new TextEncoder().encode(repl), i);
    return st;
  };
  const cases = [
    ['source 42', 'ETYPE', () => loadModel(42)],
    ['source true', 'ETYPE', () => loadModel(true)],
    ['source {} (files missing)', 'ETYPE', () => loadModel({})],
    ['source without merges', 'ETYPE', () => loadModel({ ...files(), merges: undefined })],
    ['safetensors as a string', 'ETYPE', () => loadModel({ ...files(), safetensors: 'abc' })],
    ['source with an unknown key', 'EINVAL', () => loadModel({ ...files(), weights: new Uint8Array(1) })],
    ["source ''", 'EINVAL', () => loadModel('')],
    ['options 5', 'ETYPE', () => loadModel(TINY, 5)],
    ['options {progress} (typo)', 'EINVAL', () => loadModel(TINY, { progress: () => {} })],
    ['onProgress: 1', 'ETYPE', () => loadModel(TINY, { onProgress: 1 })],
    ['wasm: 42', 'ETYPE', () => loadModel(TINY, { wasm: 42 })],
    ['wasm: garbage bytes', 'EWASM', () => loadModel(TINY, { wasm: new Uint8Array([0, 1, 2, 3]) })],
    ['a directory that does not exist', 'EIO', () => loadModel(join(ROOT, 'no/such/dir'))],
    ['config.json that is not JSON', 'EJSON', () => loadModel({ ...files(), config: '{"n_layer": 3,' })],
    ['config.json without n_head', 'ECONFIG', () => loadModel({ ...files(), config: cfgWith({ n_head: undefined }) })],
    ['n_embd not a multiple of n_head', 'ECONFIG', () => loadModel({ ...files(), config: cfgWith({ n_head: 5 }) })],
    ['a truncated safetensors', 'EFORMAT', () => loadModel({ ...files(), safetensors: files().safetensors.subarray(0, 5000) })],
    ['a safetensors of 3 bytes', 'EFORMAT', () => loadModel({ ...files(), safetensors: new Uint8Array(3) })],
    ['a tensor of dtype I32', 'EDTYPE', () => loadModel({ ...files(), safetensors: patched('"F32"', '"I32"') })],
    ['a missing tensor', 'EMISSING', () => loadModel({ ...files(), safetensors: patched('ln_f.weight', 'ln_f.weighX') })],
    ['a tensor of the wrong shape', 'ESHAPE', () => loadModel({ ...files(), config: cfgWith({ n_positions: 63 }) })],
    ['vocab.json that is an array', 'EVOCAB', () => loadModel({ ...files(), vocab: '[1, 2]' })],
    ['vocab.json with one token', 'EVOCAB', () => loadModel({ ...files(), vocab: '{"a": 0}' })],
    ['a malformed merges.txt line', 'EMERGES', () => loadModel({ ...files(), merges: '#version: 0.2\nab\n' })],
  ];
  it.each(cases)('%s → %s', async (_, code, call) => {
    expectError(await caughtAsync(call), code);
    stillWorks();
  });
});

describe('ENOMEM', () => {
  it('activations beyond the 4 GB wasm address space fail with ENOMEM, not a trap, and the model stays usable', async () => {
    // L = NH = 1, T = 32768: the attention capture alone is 2^30 floats = 4 GiB. On wasm32 the byte count
    // overflows a 32-bit size_t unless alab_ensure_activations (c/src/forward.c) computes it in 64 bits and
    // checks it: without that check the C allocates a few KB and the forward pass traps (EWASM).
    const big = await loadModel(checkpointBuffers({ n_layer: 1, n_head: 1, n_embd: 4, n_positions: 32768 }));
    try {
      const before = big.run('hello world').logits;
      expectError(caught(() => big.run(new Int32Array(32768).fill(262), { topK: 1 })), 'ENOMEM');
      expect(big.run('hello world').logits).toEqual(before);
    } finally {
      big.dispose();
    }
  });
});

describe('a disposed model', () => {
  it('throws EDISPOSED from every method; dispose() is idempotent; its results stay valid', async () => {
    const d = await loadModel(TINY);
    const r = d.run(CHAPTER);
    d.dispose();
    d.dispose();
    expect(d.disposed).toBe(true);
    for (const call of [() => d.run(CHAPTER), () => d.tokenize('a'), () => d.decode([1]), () => d.generate('a'),
      () => d.memoryUsage(), () => d.run(CHAPTER, { mask: 'nonsense' })])
      expectError(caught(call), 'EDISPOSED');
    expect(r.attention(0, 0)).toHaveLength(T * T);
    expect(d.config.nLayer).toBe(L);
    stillWorks();
  });

  it('cannot be constructed except by loadModel', async () => {
    const ctor = m.constructor;
    expectError(caught(() => new ctor()), 'ETYPE');
  });
});

describe('AttnlabError', () => {
  it('has name, code and rc; C codes carry their ALAB_E* number', () => {
    const e = caught(() => m.run(''));
    expect(e.name).toBe('AttnlabError');
    expect(e).toBeInstanceOf(Error);
    expect(e.rc).toBe(-12);
    const js = caught(() => m.run(42));
    expect(js.rc).toBe(0);
  });
});
