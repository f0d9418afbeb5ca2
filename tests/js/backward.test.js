// backward.test.js — reverse mode in wasm (c/src/backward.c through AttnlabWasm's generated methods
// wasmTapeForward, gradLayout, backward and tapeFree): every model and case of tests/fixtures/backward_golden.json
// (the float64 autograd reference, tests/ref/gen_backward.py) within the tolerance tests/c/test_backward.c uses,
// the same gradients bit for bit on 1 and 2 threads, and the refusals as AttnlabErrors with nothing left on the heap.
import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiateAttnlab, DO_HARD, DO_SOFT, ABLATE, SCALE_Q, SCALE_K, SWAP_QK } from '../../web/src/core/wasm.js';
import { C } from '../../web/src/core/abi.js';
import { WASM_PATH, WASM_MT_PATH } from './helpers/builds.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const golden = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/backward_golden.json'), 'utf8'));
const blob = readFileSync(join(ROOT, 'tests/fixtures/backward_golden.bin'));
const data = new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
const PARTS = golden.parts; // ALAB_GRAD_* order
const KIND = { hard: DO_HARD, soft: DO_SOFT, ablate: ABLATE, scaleQ: SCALE_Q, scaleK: SCALE_K, swapQK: SWAP_QK };
const MASK = { causal: 0, full: 1, window: 2 };
const METRIC = { logit_diff: 0, logprob: 1, kl: 2, loss: 3 };
// |c - r| <= REL |r| + max(ABS, FLOOR max|r| of the part): tests/c/test_backward.c says why
const REL = 1e-4, ABS = 1e-6, FLOOR = 1e-5;

function load(w, dir) {
  const d = join(ROOT, dir), have = readdirSync(d), o = {};
  const r = (f) => new Uint8Array(readFileSync(join(d, f)));
  for (const [k, f] of [['config', 'config.json'], ['index', 'model.safetensors.index.json'], ['vocab', 'vocab.json'],
                        ['merges', 'merges.txt'], ['tokenizer', 'tokenizer.json'], ['tokenizerConfig', 'tokenizer_config.json']])
    if (have.includes(f)) o[k] = r(f);
  const st = have.filter((f) => f.endsWith('.safetensors')).map((f) => {
    const bytes = r(f), ptr = w.malloc(bytes.length);
    w.writeBytes(ptr, bytes);
    return { name: f, ptr, len: bytes.length };
  });
  return w.loadModelFiles(o, st);
}

/** The gradient block of one case ({parts: {name: Float32Array}, value}), through the generated methods. */
function gradients(w, m, ids, opts, metric, a, b, want = C.GRAD_ALL) {
  return w.scoped((alloc) => {
    const T = ids.length, L = w.config(m).n_layer;
    const pIds = alloc(4 * T);
    w.i32.set(ids, pIds >>> 2);
    const ivs = opts.interventions ?? [];
    const pIv = alloc(4 * 7 * Math.max(ivs.length, 1));
    ivs.forEach((iv, i) => w.f32.set([KIND[iv.kind], iv.layer, iv.head, iv.row ?? 0, iv.col ?? 0, iv.lambda ?? 0,
                                      iv.alpha ?? 1], (pIv >>> 2) + 7 * i));
    let pLm = 0, pLw = 0;
    if (opts.layer_mask) {
      pLm = alloc(4 * L);
      pLw = alloc(4 * L);
      w.i32.set(opts.layer_mask.map((s) => MASK[s]), pLm >>> 2);
      w.i32.set(opts.layer_window, pLw >>> 2);
    }
    const pTape = alloc(4), pOff = alloc(4 * (C.GRAD_PARTS + 1)), pVal = alloc(8);
    w.wasmTapeForward(pTape, m, pIds, T, pIv, ivs.length, MASK[opts.mask ?? 'causal'], opts.window ?? 0, pLm, pLw,
                      opts.scale === undefined ? 0 : 1, opts.scale ?? 0);
    const tape = w.i32[pTape >>> 2] >>> 0;
    try {
      w.gradLayout(pOff, m, T, want);
      const off = Array.from(w.i32.subarray(pOff >>> 2, (pOff >>> 2) + C.GRAD_PARTS + 1), (x) => x >>> 0);
      const pG = alloc(4 * Math.max(off[C.GRAD_PARTS], 1));
      w.backward(pG, off[C.GRAD_PARTS], pVal, m, tape, METRIC[metric], a ?? 0, b ?? 0, want);
      const parts = {};
      PARTS.forEach((name, p) => { parts[name] = w.readF32(pG + 4 * off[p], off[p + 1] - off[p]); });
      return { parts, value: new DataView(w.memory.buffer).getFloat64(pVal, true) };
    } finally {
      w.tapeFree(tape);
    }
  });
}

function worstRatio(c, r) {
  let rmax = 0, worst = 0;
  for (let i = 0; i < r.length; i++) rmax = Math.max(rmax, Math.abs(r[i]));
  for (let i = 0; i < r.length; i++) {
    const e = Math.abs(c[i] - r[i]) / (REL * Math.abs(r[i]) + Math.max(ABS, FLOOR * rmax));
    if (!(e <= worst)) worst = e; // NaN shows
  }
  return worst;
}

describe('reverse mode in wasm against the float64 reference', () => {
  let one, two;
  beforeAll(async () => {
    one = await instantiateAttnlab(readFileSync(WASM_PATH));
    two = await instantiateAttnlab(readFileSync(WASM_MT_PATH), { threads: 2 });
    two.setParallelMinWork(0);
  });

  for (const [key, model] of Object.entries(golden.models)) {
    it(`${key}: every case within tolerance, 1 and 2 threads bit for bit`, () => {
      const m1 = load(one, model.dir), m2 = load(two, model.dir);
      for (const c of model.cases) {
        const ids = c.ids ?? model.ids; // the long cases (T = 40) have their own
        const g1 = gradients(one, m1, ids, c.opts, c.metric, c.a, c.b);
        const g2 = gradients(two, m2, ids, c.opts, c.metric, c.a, c.b);
        expect(Math.abs(g1.value - c.value)).toBeLessThanOrEqual(REL * Math.abs(c.value) + ABS);
        expect(g2.value).toBe(g1.value);
        for (const name of PARTS) {
          const [at, n] = c.parts[name];
          expect(g1.parts[name].length).toBe(n);
          const ratio = worstRatio(g1.parts[name], data.subarray(at, at + n));
          expect({ case: c.name, part: name, ok: ratio <= 1 }).toEqual({ case: c.name, part: name, ok: true });
          expect(g2.parts[name]).toEqual(g1.parts[name]);
        }
      }
      // every case again: the model's activations and rotary tables have their size now, so every tape and
      // block must have been freed
      const heap1 = one.heapInUse();
      for (const c of model.cases) gradients(one, m1, c.ids ?? model.ids, c.opts, c.metric, c.a, c.b);
      expect(one.heapInUse()).toBe(heap1);
      one.modelFree(m1);
      two.modelFree(m2);
    });
  }

  it('refusals: codes as AttnlabErrors, and no tape left behind', () => {
    const m = load(one, golden.models.llama.dir);
    const V = one.config(m).vocab_size;
    expect(() => gradients(one, m, [1, 2, 3], {}, 'kl', 0, 0, 0)).not.toThrow();
    const heap = one.heapInUse();
    expect(() => gradients(one, m, [1, 2, 3], {}, 'logit_diff', V, 0)).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => gradients(one, m, [1], {}, 'loss')).toThrow(expect.objectContaining({ code: 'EEMPTY' }));
    expect(() => gradients(one, m, [1, 2, 3], {}, 'loss', 0, 0, 1 << 12)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => gradients(one, m, [1, 2, V], {}, 'loss')).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => gradients(one, m, [1, 2, 3], { interventions: [{ kind: 'soft', layer: 0, head: 0, row: 0, col: 2, lambda: 1 }] },
                           'loss')).toThrow(expect.objectContaining({ code: 'EMASKED' }));
    expect(() => gradients(one, m, [1, 2, 3], {}, 'kl', 0, 0, 0)).not.toThrow();
    expect(one.heapInUse()).toBe(heap);
    one.modelFree(m);
  });
});
