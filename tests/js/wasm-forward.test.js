// wasm-forward.test.js — the WebAssembly build (SIMD128 kernels) reproduces the
// independent PyTorch reference on every golden case, through our own loader
// (web/src/core/wasm.js), and reports every error through the boundary with
// its stable code while staying usable afterwards.
//
// Needs web/dist/attnlab.wasm (make wasm), or attnlab-relaxed.wasm where relaxed SIMD runs
// (helpers/builds.js); ATTNLAB_WASM=path overrides it.
// Golden data: tests/fixtures/golden.json (tests/ref/gen_fixtures.py).

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import {
  instantiateAttnlab, DO_HARD, DO_SOFT, ABLATE, ALL_HEADS, KERNELS,
} from '../../web/src/core/wasm.js';
import { ERROR_CODES } from '../../web/src/core/errors.js';
import { maxAbsDiff } from './helpers/compare.js';
import { WASM_PATH } from './helpers/builds.js';
import { expectThrows } from './helpers/errors.js';
import { golden, goldenFiles, forwardOpts } from './helpers/golden.js';

const TOL = golden.tolerance;
const CHAPTER = 'Because the storm intensified , the ship finally sank .';

let w;             // the AttnlabWasm instance shared by the tests
const models = {}; // name -> handle

beforeAll(async () => {
  w = await instantiateAttnlab(new Uint8Array(readFileSync(WASM_PATH)));
  for (const name of Object.keys(golden.models)) models[name] = w.loadModel(goldenFiles(name));
});

afterAll(() => {
  for (const m of Object.values(models)) w.modelFree(m);
});

describe('the module', () => {
  it('is at most 440 KB and was built for SIMD128', () => {
    const bytes = readFileSync(WASM_PATH);
    const gz = gzipSync(bytes, { level: 9 }).length;
    console.log(`attnlab.wasm: ${bytes.length} bytes, ${gz} gzip -9`);
    expect(bytes.length).toBeLessThanOrEqual(440 * 1024);
    expect(w.simd()).toBe(true);
    expect(w.version()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('needs no imports beyond the memory-growth hook, getentropy and WASI stubs our loader provides', () => {
    // getentropy: the random key of the tokenizer's hash tables (c/src/bpe.c, web/src/core/imports.js)
    const imports = WebAssembly.Module.imports(w.module).map((x) => `${x.module}.${x.name}`);
    for (const name of imports) expect(name).toMatch(/^(env\.emscripten_notify_memory_growth|env\.getentropy|wasi_snapshot_preview1\.\w+)$/);
  });

  it('reads every model config through the boundary', () => {
    for (const [name, g] of Object.entries(golden.models)) {
      const c = w.config(models[name]);
      expect(c).toEqual({ n_layer: g.n_layer, n_head: g.n_head, n_embd: g.n_embd, vocab_size: g.vocab_size,
                          n_positions: g.n_positions, layer_norm_epsilon: 1e-5, n_kv_head: g.n_head,
                          head_dim: g.n_embd / g.n_head });
    }
  });
});

describe('tokenization in wasm', () => {
  const rows = [...golden.tokenize, ...golden.cases.map(({ model, text, ids }) => ({ model, text, ids }))];
  it.each(rows.map((r) => [JSON.stringify(r.text).slice(0, 50), r]))('gives the golden ids for %s', (_, r) => {
    expect(Array.from(w.encode(models[r.model], r.text))).toEqual(r.ids);
  });

  it('decodes ids back to the exact text and shows Ġ as a space', () => {
    const m = models.tiny;
    for (const r of golden.tokenize) expect(w.decode(m, r.ids)).toBe(r.text);
    const ids = w.encode(m, CHAPTER);
    const labels = Array.from(ids, (id) => w.tokenDisplay(m, id));
    expect(labels.join('')).toBe(CHAPTER);
    expect(labels[3]).toBe(' the');
  });

  it('decode and display report the room they need, and a bad id is ERANGE', () => {
    const m = models.tiny;
    const ids = w.encode(m, CHAPTER);
    const need = w.scoped((alloc) => {
      const p = alloc(4 * ids.length), out = alloc(8);
      w.i32.set(ids, p >>> 2);
      return w.fn.alab_wasm_decode(out, 8, m, p, ids.length);
    });
    expect(need).toBe(new TextEncoder().encode(CHAPTER).length);
    expectThrows(() => w.tokenDisplay(m, golden.models.tiny.vocab_size), 'ERANGE');
    expectThrows(() => w.decode(m, [0, -1]), 'ERANGE');
  });
});

describe('forward pass in wasm against the PyTorch reference', () => {
  it.each(golden.cases.map((c) => [`${c.model}/${c.name}`, c]))('%s is within tolerance', (_, c) => {
    const m = models[c.model];
    w.forward(m, c.ids, forwardOpts(c.opts));
    expect(w.resultT(m)).toBe(c.ids.length);

    expect(maxAbsDiff(w.resultLogits(m), c.logits)).toBeLessThanOrEqual(TOL.logits_max_abs);
    expect(maxAbsDiff(w.resultAttention(m), c.attentions)).toBeLessThanOrEqual(TOL.attentions_max_abs);
    if (c.q) {
      expect(maxAbsDiff(w.resultQ(m), c.q)).toBeLessThanOrEqual(TOL.qk_max_abs);
      expect(maxAbsDiff(w.resultK(m), c.k)).toBeLessThanOrEqual(TOL.qk_max_abs);
    } else {
      expect(w.resultQ(m)).toBeNull();
      expect(w.resultK(m)).toBeNull();
    }

    const top = w.resultTopk(m, c.top.length);
    expect(top.ids.length).toBe(c.top.length);
    c.top.forEach((g, i) => {
      expect(Math.abs(top.probs[i] - g.prob)).toBeLessThanOrEqual(TOL.top_prob_max_abs);
      if (top.ids[i] !== g.id) {
        // only a near-tie in the reference may swap two ids
        const near = c.top.some((h) => h.id === top.ids[i] && Math.abs(h.prob - g.prob) <= TOL.top_prob_max_abs);
        expect(near, `top[${i}] is ${top.ids[i]}, reference ${g.id}`).toBe(true);
      }
    });
  });

  it('hands out copies that the next run does not overwrite', () => {
    const m = models.tiny;
    const ids = w.encode(m, CHAPTER);
    w.forward(m, ids);
    const att = w.resultAttention(m);
    const before = att.slice();
    w.forward(m, ids, { interventions: [{ kind: DO_HARD, layer: 0, head: ALL_HEADS, row: 5, col: 0 }] });
    expect(maxAbsDiff(att, before)).toBe(0);
    expect(maxAbsDiff(w.resultAttention(m), before)).toBeGreaterThan(0.01);
  });

  it('still gives the reference numbers after wasm memory has grown', () => {
    const m = models.tiny;
    const c = golden.cases.find((x) => x.model === 'tiny' && x.name === 'composed');
    const bytesBefore = w.memoryBytes();
    const big = w.malloc(bytesBefore + (64 << 20)); // forces memory.grow, detaching old views
    try {
      expect(w.memoryBytes()).toBeGreaterThan(bytesBefore);
      w.forward(m, c.ids, forwardOpts(c.opts));
      expect(maxAbsDiff(w.resultAttention(m), c.attentions)).toBeLessThanOrEqual(TOL.attentions_max_abs);
      expect(maxAbsDiff(w.resultQ(m), c.q)).toBeLessThanOrEqual(TOL.qk_max_abs);
    } finally {
      w.free(big);
    }
  });
});

describe('generation in wasm', () => {
  it('greedy generation picks the argmax of each forward pass', () => {
    const m = models.tiny;
    const ids = Array.from(w.encode(m, CHAPTER));
    const { ids: gen } = w.generate(m, ids, { maxNew: 5 });
    expect(gen.length).toBe(5);
    const seq = ids.slice();
    for (const next of gen) {
      w.forward(m, seq);
      const logits = w.resultLogits(m);
      let best = 0;
      for (let v = 1; v < logits.length; v++) if (logits[v] > logits[best]) best = v;
      expect(next).toBe(best);
      seq.push(next);
    }
  });

  it('sampling is reproducible from the RNG state it is given, and advances it', () => {
    const m = models.tiny;
    const ids = w.encode(m, CHAPTER);
    const opts = { maxNew: 8, temperature: 1, topK: 50, rngState: 42n };
    const a = w.generate(m, ids, opts), b = w.generate(m, ids, opts);
    expect(Array.from(a.ids)).toEqual(Array.from(b.ids));
    expect(a.rngState).toBe(b.rngState);
    expect(a.rngState).not.toBe(42n);
    const c = w.generate(m, ids, { ...opts, rngState: a.rngState });
    expect(c.ids.length).toBe(8);
    expectThrows(() => w.generate(m, ids, { maxNew: 64 }), 'ETOOLONG');
    expectThrows(() => w.generate(m, ids, { maxNew: 2, temperature: NaN }), 'ENAN');
  });
});

describe('errors through the boundary', () => {
  const chapterCase = golden.cases.find((x) => x.model === 'tiny' && x.name === 'plain_chapter');
  // After every error the module must still reproduce the reference.
  function stillUsable() {
    const m = models.tiny;
    w.forward(m, chapterCase.ids);
    expect(maxAbsDiff(w.resultLogits(m), chapterCase.logits)).toBeLessThanOrEqual(TOL.logits_max_abs);
  }

  it('every C code has a stable name', () => {
    expect(ERROR_CODES).toEqual(expect.arrayContaining(['EINVAL', 'EFORMAT', 'EEMPTY', 'ETOOLONG', 'ERANGE', 'ENAN', 'ESTATE']));
    for (let rc = -1; rc >= -17; rc--) expect(w.strerror(rc).length).toBeGreaterThan(0);
  });

  it('empty text gives no ids and the forward pass fails with EEMPTY', () => {
    const m = models.tiny;
    expect(w.encode(m, '').length).toBe(0);
    const e = expectThrows(() => w.forward(m, w.encode(m, '')), 'EEMPTY');
    expect(e.rc).toBe(-12);
    expect(e.message.length).toBeGreaterThan(0);
    stillUsable();
  });

  it('a text longer than n_positions fails with ETOOLONG', () => {
    const ids = new Array(golden.models.tiny.n_positions + 1).fill(262);
    expectThrows(() => w.forward(models.tiny, ids), 'ETOOLONG');
    stillUsable();
  });

  it('a safetensors header length past the end of the file fails with EFORMAT', () => {
    const files = goldenFiles('tiny');
    const heap0 = w.heapInUse();
    new DataView(files.safetensors.buffer).setBigUint64(0, BigInt(files.safetensors.length) * 2n, true);
    expectThrows(() => w.loadModel(files), 'EFORMAT');
    expect(w.heapInUse()).toBe(heap0); // the model took the buffer and freed it on failure
    stillUsable();
  });

  it('a truncated safetensors file fails with EFORMAT', () => {
    const files = goldenFiles('tiny');
    files.safetensors = files.safetensors.subarray(0, files.safetensors.length - 100);
    expectThrows(() => w.loadModel(files), 'EFORMAT');
    stillUsable();
  });

  it('a config.json that is not JSON fails with EJSON', () => {
    const files = goldenFiles('tiny');
    files.config = '{"n_layer": 3,';
    expectThrows(() => w.loadModel(files), 'EJSON');
    stillUsable();
  });

  it('out-of-range intervention indices fail with ERANGE', () => {
    const m = models.tiny;
    const { n_layer, n_head } = w.config(m);
    const T = chapterCase.ids.length;
    const bad = [
      { kind: DO_HARD, layer: n_layer, head: 0, row: 1, col: 0 },
      { kind: DO_HARD, layer: -1, head: 0, row: 1, col: 0 },
      { kind: DO_SOFT, layer: 0, head: n_head, row: 1, col: 0, lambda: 1 },
      { kind: DO_HARD, layer: 0, head: 0, row: T, col: 0 },
      { kind: DO_SOFT, layer: 0, head: 0, row: 0, col: T, lambda: 1 },
      { kind: ABLATE, layer: n_layer, head: 0 },
    ];
    for (const iv of bad) {
      expectThrows(() => w.forward(m, chapterCase.ids, { interventions: [iv] }), 'ERANGE');
      stillUsable();
    }
    expectThrows(() => w.forward(m, chapterCase.ids, { captureLayer: n_layer, captureHead: 0 }), 'ERANGE');
    expectThrows(() => w.forward(m, [golden.models.tiny.vocab_size]), 'ERANGE');
    stillUsable();
  });

  it('a NaN or infinite lambda or scale fails with ENAN', () => {
    const m = models.tiny;
    for (const lambda of [NaN, Infinity]) {
      const iv = { kind: DO_SOFT, layer: 1, head: 0, row: 18, col: 3, lambda };
      expectThrows(() => w.forward(m, chapterCase.ids, { interventions: [iv] }), 'ENAN');
      stillUsable();
    }
    expectThrows(() => w.forward(m, chapterCase.ids, { scale: NaN }), 'ENAN');
    expectThrows(() => w.forward(m, chapterCase.ids, { interventions: [{ kind: DO_HARD, layer: NaN, head: 0, row: 1, col: 0 }] }), 'ENAN');
    stillUsable();
  });

  it('a bad kind or mask fails with EINVAL, a non-integer index too', () => {
    const m = models.tiny;
    expectThrows(() => w.forward(m, chapterCase.ids, { interventions: [{ kind: 7, layer: 0, head: 0, row: 1, col: 0 }] }), 'EINVAL');
    expectThrows(() => w.forward(m, chapterCase.ids, { mask: 9 }), 'EINVAL');
    expectThrows(() => w.forward(m, chapterCase.ids, { interventions: [{ kind: DO_HARD, layer: 0.5, head: 0, row: 1, col: 0 }] }), 'EINVAL');
    expectThrows(() => w.forward(m, [1.5, 2]), 'EINVAL');
    stillUsable();
  });

  it('arguments of the wrong type fail with ETYPE before reaching C', () => {
    const m = models.tiny;
    expectThrows(() => w.forward(m, chapterCase.ids, { scale: '0.5' }), 'ETYPE');
    expectThrows(() => w.encode(m, 42), 'ETYPE');
    expectThrows(() => w.loadModel({ ...goldenFiles('tiny'), config: null }), 'ETYPE');
    stillUsable();
  });
});

describe('memory', () => {
  it('load/free cycles and repeated runs leave the malloc heap flat', () => {
    const files = goldenFiles('tiny');
    const ids = w.encode(models.tiny, CHAPTER);
    const cycle = () => {
      const m = w.loadModel(files);
      w.forward(m, ids, { captureLayer: 1, captureHead: 2 });
      w.resultAttention(m);
      w.modelFree(m);
    };
    cycle(); // warm-up
    const heap0 = w.heapInUse();
    for (let i = 0; i < 20; i++) cycle();
    expect(w.heapInUse()).toBe(heap0);

    const m = models.tiny;
    w.forward(m, ids);
    const heap1 = w.heapInUse();
    for (let i = 0; i < 100; i++) {
      w.forward(m, ids, { interventions: [{ kind: DO_SOFT, layer: 1, head: ALL_HEADS, row: 18, col: 3, lambda: 2 }] });
      w.resultTopk(m, 10);
    }
    try { w.forward(m, []); } catch { /* EEMPTY, tested above */ }
    w.forward(m, ids);
    expect(w.heapInUse()).toBe(heap1);
  });
});

describe('SIMD128 kernels against their reference twins', () => {
  // Deterministic pseudo-random data (xorshift32), values in [-1, 1).
  function rand(n, seed) {
    const a = new Float32Array(n);
    let s = seed >>> 0 || 1;
    for (let i = 0; i < n; i++) {
      s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
      a[i] = s / 2 ** 31 - 1;
    }
    return a;
  }
  const shapes = [[1, 1, 1], [3, 5, 7], [7, 33, 17], [13, 64, 65], [5, 97, 131]];

  it.each(shapes)('matmul and matmul_nt agree at T=%i C=%i OC=%i', (T, C, OC) => {
    const inp = rand(T * C, T * 7 + C), w1 = rand(C * OC, OC), b = rand(OC, 3);
    for (const [op, bias] of [[KERNELS.matmul, b], [KERNELS.matmul, null], [KERNELS.matmul_nt, null]]) {
      const fast = w.kernel(op, { inp, w: w1, b: bias, T, C, OC });
      const ref = w.kernel(op, { ref: true, inp, w: w1, b: bias, T, C, OC });
      expect(maxAbsDiff(fast, ref)).toBeLessThanOrEqual(1e-5 * Math.sqrt(C));
      expect(fast.some((x) => x !== 0)).toBe(true);
    }
  });

  it.each(shapes)('layernorm, gelu and softmax agree at T=%i C=%i', (T, C) => {
    const inp = rand(T * C, C * 11 + T).map((x) => 4 * x), g = rand(C, 5), b = rand(C, 9);
    for (const op of [KERNELS.layernorm, KERNELS.gelu, KERNELS.softmax]) {
      const fast = w.kernel(op, { inp, w: g, b, T, C });
      const ref = w.kernel(op, { ref: true, inp, w: g, b, T, C });
      expect(maxAbsDiff(fast, ref)).toBeLessThanOrEqual(2e-6);
    }
    const sm = w.kernel(KERNELS.softmax, { inp, T, C });
    for (let t = 0; t < T; t++) {
      const s = sm.subarray(t * C, (t + 1) * C).reduce((x, y) => x + y, 0);
      expect(Math.abs(s - 1)).toBeLessThanOrEqual(1e-5);
    }
  });

  it('an unknown kernel fails with EINVAL', () => {
    expectThrows(() => w.kernel(99, { inp: [1], T: 1, C: 1 }), 'EINVAL');
  });
});

describe('analysis through the boundary', () => {
  it('the null DAG score of T = 10 is 0.7071 and DAG/asymmetry/outer product follow their definitions', () => {
    expect(w.nullDagScore(10)).toBeCloseTo(0.70710, 4);
    const T = 3;
    const A = Float32Array.from([1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5]);
    expect(w.dagScore(A, T)).toBeCloseTo((0.5 + 0.2 + 0.3) / 3, 6);
    const asym = w.asymmetry(A, T);
    expect(asym[1 * T + 0]).toBeCloseTo(0.5, 6);
    expect(asym[0 * T + 1]).toBeCloseTo(-0.5, 6);
    const { out, trace } = w.outerProduct([1, 2], [3, 4], 2);
    expect(Array.from(out)).toEqual([3, 4, 6, 8]);
    expect(trace).toBeCloseTo(11, 6);
    const hard = w.displayDo(A, T, 2, 0, true);
    expect(Array.from(hard.subarray(6, 9))).toEqual([1, 0, 0]);
    expectThrows(() => w.displayDo(A, T, 3, 0, true), 'ERANGE');
  });
});
