// model.test.js — the friendly API (web/src/model.js, sources.js): loadModel from
// every kind of source, run with every option spelled the friendly way, Result
// fields and views, tokenize/decode/generate, one wasm instance per model; parity
// with the PyTorch golden fixtures and with the native CLI; and the built-in
// model models/brown-gpt2, which must be present (these tests fail, not skip,
// when it is missing).
//
// Needs web/dist/attnlab.wasm (make wasm) and build/attnlab (make).

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadModel, AttnlabError, dagScore, nullDagScore, headAverage } from '../../web/src/index.js';
import { modelInternals, Result } from '../../web/src/model.js';
import { startServer } from '../../scripts/serve.mjs';
import { maxAbsDiff } from './helpers/compare.js';
import { WASM_PATH } from './helpers/builds.js';
import { expectThrows } from './helpers/errors.js';
import { modelFiles, expectLoadEvents } from './helpers/model-files.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIX = join(ROOT, 'tests/fixtures');
const BUILTIN = join(ROOT, 'models/brown-gpt2');
const CLI = join(ROOT, 'build/attnlab');
const WASM = WASM_PATH; // helpers/builds.js: attnlab.wasm, or attnlab-relaxed.wasm under its flag
const golden = JSON.parse(readFileSync(join(FIX, 'golden.json'), 'utf8'));
const TOL = golden.tolerance;
const CHAPTER = 'Because the storm intensified , the ship finally sank .';


function cli(args) {
  if (!existsSync(CLI)) throw new Error(`build/attnlab is missing: run make`);
  const r = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 512 << 20, env: { ...process.env, ATTNLAB_MODEL_DIR: '' } });
  if (r.status !== 0) throw new Error(`attnlab ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// A golden case's options, spelled the friendly way. `alt` switches between the
// two spellings of masks ('window:W' strings vs {mode, window} objects).
function friendly(o, alt = false) {
  const opts = {
    interventions: o.interventions.filter((x) => x.kind !== 'ablate' || !alt).map((x) => ({
      kind: x.kind, layer: x.layer, head: x.head === -1 ? 'all' : x.head,
      ...(x.kind === 'ablate' ? {} : { row: x.row, col: x.col }), ...(x.kind === 'soft' ? { lambda: x.lambda } : {}),
    })),
  };
  if (alt) opts.ablate = o.interventions.filter((x) => x.kind === 'ablate').map((x) => [x.layer, x.head === -1 ? 'all' : x.head]);
  const one = (mode, window) => (mode !== 'window' ? mode : alt ? { mode, window } : `window:${window}`);
  if (o.layer_mask) opts.mask = o.layer_mask.map((m, l) => one(m, (o.layer_window ?? [])[l] ?? o.window));
  else opts.mask = one(o.mask, o.window);
  if (o.scale !== null && o.scale !== undefined) opts.scale = o.scale;
  if (o.capture) opts.captureQK = { layer: o.capture.layer, head: o.capture.head };
  return opts;
}

const models = {};
beforeAll(async () => {
  for (const name of Object.keys(golden.models)) models[name] = await loadModel(join(ROOT, golden.models[name].dir));
});
afterAll(() => {
  for (const m of Object.values(models)) m.dispose();
});

describe('run() reproduces the PyTorch reference through the friendly options', () => {
  it.each(golden.cases.flatMap((c, i) => [[`${c.model}/${c.name}`, c, i % 2 === 1]]))('%s', (_, c, alt) => {
    const m = models[c.model];
    const r = m.run(c.text, friendly(c.opts, alt));
    expect(Array.from(r.ids)).toEqual(c.ids);
    expect(r.T).toBe(c.ids.length);
    expect(maxAbsDiff(r.logits, c.logits)).toBeLessThanOrEqual(TOL.logits_max_abs);
    expect(maxAbsDiff(r.attentions, c.attentions)).toBeLessThanOrEqual(TOL.attentions_max_abs);
    if (c.q) {
      expect(r.captureQK).toEqual(c.opts.capture);
      expect(maxAbsDiff(r.q, c.q)).toBeLessThanOrEqual(TOL.qk_max_abs);
      expect(maxAbsDiff(r.k, c.k)).toBeLessThanOrEqual(TOL.qk_max_abs);
    } else {
      expect(r.q).toBeNull();
      expect(r.k).toBeNull();
    }
    expect(r.top).toHaveLength(10);
    r.top.forEach((t, i) => expect(Math.abs(t.prob - c.top[i].prob)).toBeLessThanOrEqual(TOL.top_prob_max_abs));
    expect(r.top.map((t) => t.id)).toEqual(c.top.map((t) => t.id));
  });
});

describe('Result', () => {
  let m, r;
  beforeAll(() => {
    m = models.tiny;
    r = m.run(CHAPTER, { captureQK: { layer: 2, head: 1 }, topK: 7 });
  });

  it('carries the model info, the ids and display tokens', () => {
    expect(r).toBeInstanceOf(Result);
    expect(r.model).toEqual({ nLayer: 3, nHead: 4, nEmbd: 32, vocabSize: 1257, nPositions: 64, headSize: 8, layerNormEpsilon: 1e-5,
                              family: 'gpt2', nKvHead: 4, headDim: 8, layerMasks: ['causal', 'causal', 'causal'] });
    const tok = m.tokenize(CHAPTER);
    expect(Array.from(r.ids)).toEqual(Array.from(tok.ids));
    expect(r.tokens).toEqual(tok.tokens);
    expect(r.tokens.join('')).toBe(CHAPTER);
    expect(r.ids).toBeInstanceOf(Int32Array);
  });

  it('attention(layer, head) is a T×T view into the one attentions buffer, row = query', () => {
    const { nLayer: L, nHead: H } = r.model;
    const T = r.T;
    expect(r.attentions).toHaveLength(L * H * T * T);
    const a = r.attention(1, 2);
    expect(a).toHaveLength(T * T);
    expect(a.buffer).toBe(r.attentions.buffer);
    expect(a.byteOffset).toBe(4 * (1 * H + 2) * T * T);
    for (let i = 0; i < T; i++) {
      const row = a.subarray(i * T, (i + 1) * T);
      expect(Math.abs(row.reduce((s, x) => s + x, 0) - 1)).toBeLessThan(1e-5);
      for (let j = i + 1; j < T; j++) expect(row[j]).toBe(0); // causal
    }
  });

  it("attention(layer, 'avg') and headAverage(layer) are the head mean, computed as analysis.headAverage does", () => {
    const { nHead: H } = r.model;
    const T = r.T;
    for (let l = 0; l < r.model.nLayer; l++) {
      const avg = r.attention(l, 'avg');
      expect(avg.buffer).toBe(r.headAverages.buffer);
      expect(r.headAverage(l)).toEqual(avg);
      const ref = headAverage(r.attentions.subarray(l * H * T * T, (l + 1) * H * T * T), H);
      expect(Array.from(avg)).toEqual(Array.from(ref));
    }
    expect(r.attention(0)).toEqual(r.attention(0, 'avg'));
  });

  it('DAG scores: per layer × head, per layer of the head average, the last layer, and the causal null', () => {
    const { nLayer: L, nHead: H } = r.model;
    expect(r.dagScores).toHaveLength(L);
    for (let l = 0; l < L; l++) {
      expect(r.dagScores[l]).toHaveLength(H);
      for (let h = 0; h < H; h++) expect(r.dagScores[l][h]).toBe(dagScore(r.attention(l, h)));
      expect(r.layerDagScores[l]).toBe(dagScore(r.attention(l, 'avg')));
    }
    expect(r.dagScore).toBe(r.layerDagScores[L - 1]);
    expect(r.nullDagScore).toBe(nullDagScore(r.T));
    // under a causal mask every row puts all its mass on or below the diagonal
    for (const row of r.dagScores) for (const s of row) expect(s).toBeGreaterThan(0.5);
  });

  it('top holds topK tokens, sorted, whose probabilities are the softmax of the logits', () => {
    expect(r.top).toHaveLength(7);
    let mx = -Infinity;
    for (const x of r.logits) mx = Math.max(mx, x);
    let z = 0;
    for (const x of r.logits) z += Math.exp(x - mx);
    for (let i = 0; i < r.top.length; i++) {
      const t = r.top[i];
      expect(Math.abs(t.prob - Math.exp(r.logits[t.id] - mx) / z)).toBeLessThan(1e-6);
      expect(m.run([t.id], { topK: 0 }).tokens[0]).toBe(t.token);
      if (i) expect(t.prob).toBeLessThanOrEqual(r.top[i - 1].prob);
    }
    expect(r.logits).toHaveLength(1257);
    expect(m.run(CHAPTER, { topK: 0 }).top).toEqual([]);
    expect(m.run(CHAPTER, { topK: 100000 }).top).toHaveLength(1257);
  });

  it('q and k of the captured head are (T, headSize) and their dot product is the pre-scale score', () => {
    const T = r.T, HS = r.model.headSize;
    expect(r.q).toHaveLength(T * HS);
    expect(r.k).toHaveLength(T * HS);
    // row i of the softmax over q_i·k_j/√HS (j ≤ i) is the captured attention row
    const a = r.attention(2, 1);
    const i = T - 1;
    const s = [];
    for (let j = 0; j <= i; j++) {
      let d = 0;
      for (let c = 0; c < HS; c++) d += r.q[i * HS + c] * r.k[j * HS + c];
      s.push(d / Math.sqrt(HS));
    }
    const mx = Math.max(...s);
    const z = s.reduce((acc, x) => acc + Math.exp(x - mx), 0);
    s.forEach((x, j) => expect(Math.abs(Math.exp(x - mx) / z - a[i * T + j])).toBeLessThan(1e-5));
  });

  it('is a copy: the next run and dispose() leave it intact', async () => {
    const m2 = await loadModel(join(FIX, 'tiny'));
    const r1 = m2.run(CHAPTER);
    const snap = { att: r1.attentions.slice(), logits: r1.logits.slice(), avg: r1.headAverages.slice() };
    m2.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 0, head: 'all', row: 5, col: 0 }] });
    m2.dispose();
    expect(r1.attentions).toEqual(snap.att);
    expect(r1.logits).toEqual(snap.logits);
    expect(r1.headAverages).toEqual(snap.avg);
  });
});

describe('interventions, masks and scale, spelled the friendly way', () => {
  const T = 19;
  it("a hard do makes the row one-hot in the given head, and in every head with head 'all'", () => {
    const m = models.tiny;
    const r = m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 1, head: 2, row: 18, col: 3 }] });
    const row = r.attention(1, 2).subarray(18 * T, 19 * T);
    expect(Array.from(row)).toEqual(Array.from({ length: T }, (_, j) => (j === 3 ? 1 : 0)));
    expect(r.attention(1, 1)[18 * T + 3]).not.toBe(1);
    const all = m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 18, col: 3 }] });
    for (let h = 0; h < 4; h++) expect(all.attention(1, h)[18 * T + 3]).toBe(1);
  });

  it('a soft do on a cell the mask hides is an EMASKED error (it would change nothing); λ shifts the logit of the cell', () => {
    const m = models.tiny;
    const base = m.run(CHAPTER);
    const soft = (row, col, layer = 1) => ({ kind: 'soft', layer, head: 1, row, col, lambda: 5 });
    expectThrows(() => m.run(CHAPTER, { interventions: [soft(2, 9)] }), 'EMASKED');
    expectThrows(() => m.run(CHAPTER, { interventions: [soft(9, 2)], mask: 'window:3' }), 'EMASKED');
    expect(() => m.run(CHAPTER, { interventions: [soft(9, 7)], mask: 'window:3' })).not.toThrow();
    expect(() => m.run(CHAPTER, { interventions: [soft(2, 9)], mask: 'full' })).not.toThrow();
    // per-layer masks: the layer's own mask decides
    expectThrows(() => m.run(CHAPTER, { interventions: [soft(2, 9, 1)], mask: ['full', 'causal', 'full'] }), 'EMASKED');
    expect(() => m.run(CHAPTER, { interventions: [soft(2, 9, 2)], mask: ['full', 'causal', 'full'] })).not.toThrow();
    // a hard do may still name a future column
    expect(() => m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 1, head: 1, row: 2, col: 9 }] })).not.toThrow();
    const up = m.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 1, head: 0, row: 18, col: 3, lambda: 3 }] });
    const a0 = base.attention(1, 0), a1 = up.attention(1, 0);
    // odds of col 3 against col 4 grow by e^3 in that row
    const ratio = (a1[18 * T + 3] / a1[18 * T + 4]) / (a0[18 * T + 3] / a0[18 * T + 4]);
    expect(ratio).toBeCloseTo(Math.exp(3), 3);
  });

  it('ablate: [[layer, head]] equals an ablate intervention, and changes the logits', () => {
    const m = models.tiny;
    const a = m.run(CHAPTER, { ablate: [[1, 3]] });
    const b = m.run(CHAPTER, { interventions: [{ kind: 'ablate', layer: 1, head: 3 }] });
    expect(a.logits).toEqual(b.logits);
    expect(maxAbsDiff(a.logits, m.run(CHAPTER).logits)).toBeGreaterThan(1e-3);
    const all = m.run(CHAPTER, { ablate: [[2, 'all']] });
    const each = m.run(CHAPTER, { ablate: [[2, 0], [2, 1], [2, 2], [2, 3]] });
    expect(all.logits).toEqual(each.logits);
  });

  it("masks: 'full' attends to the future, 'window:W' and {mode:'window'} keep the last W, per-layer arrays", () => {
    const m = models.tiny;
    const full = m.run(CHAPTER, { mask: 'full' });
    expect(full.attention(0, 0)[0 * T + 5]).toBeGreaterThan(0);
    const w3 = m.run(CHAPTER, { mask: 'window:3' });
    const w3o = m.run(CHAPTER, { mask: { mode: 'window', window: 3 } });
    expect(w3.attentions).toEqual(w3o.attentions);
    const a = w3.attention(2, 1);
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (j > i || j <= i - 3) expect(a[i * T + j]).toBe(0);
    const per = m.run(CHAPTER, { mask: ['causal', 'full', 'window:2'] });
    expect(per.attention(0, 0)[5]).toBe(0);
    expect(per.attention(1, 0)[5]).toBeGreaterThan(0);
    expect(per.attention(2, 0)[18 * T + 10]).toBe(0);
    expect(m.run(CHAPTER, { mask: { mode: 'causal' } }).attentions).toEqual(m.run(CHAPTER).attentions);
  });

  it('scale 0 gives uniform causal attention: row i is 1/(i+1), and the DAG score is the null', () => {
    const r = models.tiny.run(CHAPTER, { scale: 0 });
    const a = r.attention(1, 2);
    for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) expect(a[i * T + j]).toBeCloseTo(1 / (i + 1), 6);
    expect(r.dagScore).toBeCloseTo(r.nullDagScore, 6);
  });

  it('the null DAG score is that of the mask used: scale 0 (uniform attention) scores exactly the null under every mask', () => {
    const m = models.tiny;
    for (const [mask, want] of [['causal', nullDagScore(T)], ['full', (T - 1) / (2 * T)], ['window:3', nullDagScore(T, 'window:3')]]) {
      const r = m.run(CHAPTER, { scale: 0, mask });
      expect(r.nullDagScore).toBeCloseTo(want, 12);
      expect(r.layerNullDagScores).toHaveLength(3);
      for (let l = 0; l < 3; l++) {
        expect(r.layerNullDagScores[l]).toBe(r.nullDagScore);
        expect(r.layerDagScores[l]).toBeCloseTo(r.layerNullDagScores[l], 6);
      }
    }
    // by hand at T = 19: full 18/38; window 3: (0 + 1/2 + 17·2/3)/19
    expect(m.run(CHAPTER, { mask: 'full' }).nullDagScore).toBeCloseTo(18 / 38, 12);
    expect(m.run(CHAPTER, { mask: 'window:3' }).nullDagScore).toBeCloseTo((0.5 + 17 * (2 / 3)) / 19, 12);
    // per layer: each layer's own null, the last layer's as nullDagScore
    const per = m.run(CHAPTER, { scale: 0, mask: ['full', 'window:2', 'causal'] });
    expect(per.layerNullDagScores[0]).toBeCloseTo(18 / 38, 12);
    expect(per.layerNullDagScores[1]).toBeCloseTo(nullDagScore(T, 'window:2'), 12);
    expect(per.layerNullDagScores[2]).toBeCloseTo(nullDagScore(T), 12);
    expect(per.nullDagScore).toBe(per.layerNullDagScores[2]);
    for (let l = 0; l < 3; l++) expect(per.layerDagScores[l]).toBeCloseTo(per.layerNullDagScores[l], 6);
  });

  it('interventions compose in one run: soft ones add up, the last hard one wins', () => {
    const m = models.tiny;
    const soft = (lambda) => ({ kind: 'soft', layer: 1, head: 0, row: 18, col: 3, lambda });
    const twice = m.run(CHAPTER, { interventions: [soft(1.5), soft(1.5)] });
    const once = m.run(CHAPTER, { interventions: [soft(3)] });
    expect(maxAbsDiff(twice.attentions, once.attentions)).toBeLessThanOrEqual(1e-6);
    const hard = (col) => ({ kind: 'hard', layer: 2, head: 'all', row: 12, col });
    const r = m.run(CHAPTER, { interventions: [hard(4), hard(10)], ablate: [[1, 0]], mask: 'window:5', scale: 0.3 });
    for (let h = 0; h < 4; h++) expect(r.attention(2, h)[12 * T + 10]).toBe(1);
    expect(r.attention(2, 0)[12 * T + 4]).toBe(0);
  });

  it('run accepts token ids as well as text', () => {
    const m = models.tiny;
    const ids = m.tokenize(CHAPTER).ids;
    expect(m.run(Array.from(ids)).logits).toEqual(m.run(CHAPTER).logits);
    expect(m.run(ids).logits).toEqual(m.run(CHAPTER).logits);
  });
});

describe('tokenize, decode, generate', () => {
  it('tokenize gives the golden ids and display tokens; decode inverts it exactly', () => {
    const m = models.tiny;
    for (const row of golden.tokenize) {
      const t = m.tokenize(row.text);
      expect(Array.from(t.ids)).toEqual(row.ids);
      expect(t.tokens).toHaveLength(row.ids.length);
      expect(m.decode(t.ids)).toBe(row.text);
      expect(m.decode(row.ids)).toBe(row.text);
    }
    expect(m.tokenize(CHAPTER).tokens[3]).toBe(' the');
  });

  it('greedy generation (the default) follows the argmax of run() step by step', () => {
    const m = models.tiny;
    const g = m.generate(CHAPTER, { maxTokens: 6 });
    expect(g.ids).toHaveLength(6);
    expect(g.tokens).toHaveLength(6);
    expect(g.text).toBe(m.decode(g.ids));
    const seq = Array.from(m.tokenize(CHAPTER).ids);
    for (const id of g.ids) {
      expect(id).toBe(m.run(seq, { topK: 1 }).top[0].id);
      seq.push(id);
    }
    expect(m.generate(CHAPTER, { maxTokens: 0 }).ids).toHaveLength(0);
    expect(m.generate(CHAPTER).ids).toHaveLength(20);
  });

  it('sampling is reproducible from its seed (number or BigInt) and differs across seeds', () => {
    const m = models.tiny;
    const o = { maxTokens: 12, temperature: 1, topK: 40 };
    const a = m.generate('The ship', { ...o, seed: 7 });
    expect(Array.from(m.generate('The ship', { ...o, seed: 7n }).ids)).toEqual(Array.from(a.ids));
    const seen = new Set([0, 1, 2, 3, 4, 5].map((seed) => m.generate('The ship', { ...o, seed }).text));
    expect(seen.size).toBeGreaterThan(1);
  });
});

describe('sources', () => {
  const tinyDir = join(FIX, 'tiny');
  let ref;
  beforeAll(() => { ref = models.tiny.run(CHAPTER).logits; });
  const same = (m) => { expect(m.run(CHAPTER).logits).toEqual(ref); m.dispose(); };

  it('a path, a file: URL (string or URL object), with or without the trailing slash', async () => {
    same(await loadModel(tinyDir));
    same(await loadModel(tinyDir + '/'));
    same(await loadModel(pathToFileURL(tinyDir)));
    same(await loadModel(pathToFileURL(tinyDir).href + '/'));
  });

  it('buffers: Uint8Array, ArrayBuffer, strings, views into bigger buffers; the caller keeps them', async () => {
    const f = modelFiles(tinyDir);
    const dec = new TextDecoder();
    const big = new Uint8Array(f.safetensors.length + 100);
    big.set(f.safetensors, 50);
    const st = big.subarray(50, 50 + f.safetensors.length);
    same(await loadModel({ config: dec.decode(f.config), safetensors: st, vocab: f.vocab.buffer, merges: dec.decode(f.merges) }));
    expect(st.byteLength).toBe(f.safetensors.length); // not detached, still ours
    expect(st[8]).toBe(f.safetensors[8]);
  });

  it('Blob and File objects, as an object or as a list matched by file name', async () => {
    const f = modelFiles(tinyDir);
    same(await loadModel({ config: new Blob([f.config]), safetensors: new Blob([f.safetensors]), vocab: new Blob([f.vocab]), merges: new Blob([f.merges]) }));
    const list = [new File([f.merges], 'merges.txt'), new File([f.safetensors], 'model.safetensors'),
                  new File([f.vocab], 'vocab.json'), new File([f.config], 'config.json'), new File(['x'], 'README.md')];
    same(await loadModel(list));
    const e = await loadModel(list.slice(1)).catch((x) => x);
    expect(e.code).toBe('EIO');
    expect(e.message).toMatch(/merges\.txt/);
  });

  it('an http URL is fetched and streamed, with progress events for every file', async () => {
    const { server, url } = await startServer({ port: 0 });
    try {
      const events = [];
      const m = await loadModel(new URL('tests/fixtures/tiny', url), { onProgress: (e) => events.push(e) });
      same(m);
      expectLoadEvents(events);
      const size = readFileSync(join(tinyDir, 'model.safetensors')).length;
      const prog = events.filter((e) => e.status === 'progress' && e.file === 'model.safetensors');
      expect(prog.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < prog.length; i++) expect(prog[i].loaded).toBeGreaterThan(prog[i - 1].loaded);
      expect(prog.every((e) => e.total === size)).toBe(true);
      expect(prog.at(-1)).toMatchObject({ loaded: size, progress: 100 });
      expect(events.find((e) => e.status === 'download' && e.file === 'model.safetensors').total).toBe(size);
      const e = await loadModel(new URL('tests/fixtures/nope/', url)).catch((x) => x);
      expect(e).toBeInstanceOf(AttnlabError);
      expect(e.code).toBe('EIO');
      expect(e.message).toMatch(/config\.json.*HTTP 404/);
    } finally {
      server.close();
    }
  });

  it('the wasm location can be overridden with a path, a URL, bytes or a compiled module', async () => {
    const bytes = readFileSync(WASM);
    same(await loadModel(tinyDir, { wasm: WASM }));
    same(await loadModel(tinyDir, { wasm: pathToFileURL(WASM) }));
    same(await loadModel(tinyDir, { wasm: new Uint8Array(bytes) }));
    same(await loadModel(tinyDir, { wasm: await WebAssembly.compile(bytes) }));
    const e = await loadModel(tinyDir, { wasm: join(ROOT, 'web/dist/nope.wasm') }).catch((x) => x);
    expect(e.code).toBe('EWASM');
  });
});

describe('one WebAssembly instance per model', () => {
  it('models are isolated: each has its own memory, and disposing one leaves the other working', async () => {
    const a = await loadModel(join(FIX, 'tiny'));
    const b = await loadModel(join(FIX, 'tiny-f16'));
    const wa = modelInternals(a).wasm, wb = modelInternals(b).wasm;
    expect(wa).not.toBe(wb);
    expect(wa.memory).not.toBe(wb.memory);
    expect(wa.module).toBe(wb.module); // compiled once, instantiated twice
    const rb = b.run(CHAPTER).logits;
    a.dispose();
    expect(a.disposed).toBe(true);
    expect(modelInternals(a).wasm).toBeNull();
    expect(b.run(CHAPTER).logits).toEqual(rb);
    b.dispose();
  });

  it('memoryUsage reports the wasm memory and the malloc heap of the model', () => {
    const u = models.tiny.memoryUsage();
    expect(u.wasmBytes).toBe(modelInternals(models.tiny).wasm.memory.buffer.byteLength);
    expect(u.heapBytes).toBeGreaterThan(readFileSync(join(FIX, 'tiny/model.safetensors')).length);
    expect(u.heapBytes).toBeLessThan(u.wasmBytes);
  });
});

describe('native CLI parity (build/attnlab) on the tiny model', () => {
  it('the chapter sentence with a hard do, an ablation and a window mask agrees within 1e-4', () => {
    const out = cli(['run', '--model', join(FIX, 'tiny'), '--text', CHAPTER, '--do', '1,all,18,3,hard',
                     '--do', '2,1,10,6,soft,2.5', '--ablate', '0.3', '--mask', 'window:6', '--json']);
    const r = models.tiny.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 18, col: 3 },
                                                         { kind: 'soft', layer: 2, head: 1, row: 10, col: 6, lambda: 2.5 }],
                                         ablate: [[0, 3]], mask: 'window:6' });
    expect(Array.from(r.ids)).toEqual(out.ids);
    expect(r.tokens).toEqual(out.tokens);
    expect(maxAbsDiff(r.attentions, out.attentions.flat(3))).toBeLessThanOrEqual(1e-4);
    expect(maxAbsDiff(r.logits, out.logits)).toBeLessThanOrEqual(1e-4);
    expect(Math.abs(r.dagScore - out.dag_score)).toBeLessThanOrEqual(1e-4);
    expect(maxAbsDiff(r.dagScores.at(-1), out.dag_scores_last_layer)).toBeLessThanOrEqual(1e-4);
    expect(Math.abs(r.nullDagScore - out.null_dag_score)).toBeLessThanOrEqual(1e-9); // the CLI prints ~10 digits
    expect(r.top.map((t) => t.id)).toEqual(out.top.map((t) => t.id));
    expect(r.top.map((t) => t.token)).toEqual(out.top.map((t) => t.token));
  });
});

// ---------------------------------------------------------------------------
// The built-in model: must be present (fails with "built-in model missing").
// ---------------------------------------------------------------------------

describe('the built-in model (models/brown-gpt2)', () => {
  let m, loadError, events = [];
  const present = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].every((f) => existsSync(join(BUILTIN, f)));
  beforeAll(async () => {
    try {
      m = await loadModel(undefined, { onProgress: (e) => events.push(e) });
    } catch (e) {
      loadError = e;
    }
  });
  afterAll(() => m && m.dispose());
  const need = () => {
    if (loadError) throw loadError; // "built-in model missing: ..." when the files are not there
    return m;
  };

  it('loads with no source, from models/brown-gpt2/ next to the package', () => {
    if (!present) expect(loadError && loadError.message).toMatch(/^built-in model missing/);
    need();
    expect(m.source).toBe(pathToFileURL(BUILTIN).href + '/');
    const cfg = JSON.parse(readFileSync(join(BUILTIN, 'config.json'), 'utf8'));
    expect(m.config).toMatchObject({ nLayer: cfg.n_layer, nHead: cfg.n_head, nEmbd: cfg.n_embd, vocabSize: cfg.vocab_size, nPositions: cfg.n_positions });
    expect(events.at(-1).status).toBe('ready');
  });

  it('tokenizes the chapter sentence into the 10 GPT-2 tokens, with a null DAG score of 0.7071', () => {
    const r = need().run(CHAPTER);
    expect(r.T).toBe(10);
    expect(r.tokens.join('')).toBe(CHAPTER);
    expect(r.nullDagScore).toBeCloseTo(0.70710, 4);
    expect(r.dagScore).toBeGreaterThan(0.5);
    expect(r.dagScore).toBeLessThanOrEqual(1);
  });

  it('agrees with the native CLI within 1e-4, plain and with a hard do on all heads', () => {
    const mm = need();
    const last = mm.config.nLayer - 1;
    for (const [flags, opts] of [[[], {}],
      [['--do', `${last},all,9,2,hard`], { interventions: [{ kind: 'hard', layer: last, head: 'all', row: 9, col: 2 }] }]]) {
      const out = cli(['run', '--model', BUILTIN, '--text', CHAPTER, '--json', ...flags]);
      const r = mm.run(CHAPTER, opts);
      expect(Array.from(r.ids)).toEqual(out.ids);
      expect(maxAbsDiff(r.attentions, out.attentions.flat(3))).toBeLessThanOrEqual(1e-4);
      expect(maxAbsDiff(r.logits, out.logits)).toBeLessThanOrEqual(1e-4);
      expect(Math.abs(r.dagScore - out.dag_score)).toBeLessThanOrEqual(1e-4);
      expect(r.top.map((t) => t.id)).toEqual(out.top.map((t) => t.id));
    }
  });

  it('greedy generation is deterministic and the next-token distribution is far from uniform', () => {
    const mm = need();
    const g1 = mm.generate('The', { maxTokens: 12 });
    const g2 = mm.generate('The', { maxTokens: 12 });
    expect(g1.text).toBe(g2.text);
    expect(g1.ids).toHaveLength(12);
    const r = mm.run('It was the first time that the');
    expect(r.top[0].prob).toBeGreaterThan(10 / mm.config.vocabSize); // far from uniform
  });
});
