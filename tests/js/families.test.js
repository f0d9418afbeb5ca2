// families.test.js — every family's synthetic Hugging Face folder (tests/fixtures/families, written by
// tests/ref/gen_families.py) through the npm API in wasm, against the independent float64 reference:
// attentions and q/k within 1e-4, logits within 1e-3 for plain runs and each intervention kind; the folder
// read from a path, from buffers (shards included) and from File objects; model.config's family fields;
// cached generation = full runs; threads bit for bit; a missing shard and a bad config with their codes;
// the sliding windows of mistral and gemma3_text (config.layerMasks, a do outside a window, the nulls).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { loadModel, AttnlabError } from '../../web/src/index.js';
import * as workerApi from '../../web/src/worker-client.js';
import { maxAbsDiff } from './helpers/compare.js';
import { checkpointBuffers } from './helpers/checkpoint.js';
import { instantiateAttnlab, DO_HARD, DO_SOFT, ABLATE, SCALE_Q, SCALE_K, SWAP_QK } from '../../web/src/core/wasm.js';
import { WASM_PATH, WASM_MT_PATH } from './helpers/builds.js';

const KIND = { hard: DO_HARD, soft: DO_SOFT, ablate: ABLATE, scaleQ: SCALE_Q, scaleK: SCALE_K, swapQK: SWAP_QK };

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FAM = join(ROOT, 'tests/fixtures/families');
const golden = JSON.parse(readFileSync(join(FAM, 'golden.json'), 'utf8'));
const blob = readFileSync(join(FAM, 'golden.bin'));
const data = new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
const slice = ([off, n]) => data.subarray(off, off + n);

// A golden case's opts as run() options.
function runOpts(o) {
  const out = {};
  if (o.interventions) {
    out.interventions = o.interventions.map((iv) => {
      const x = { kind: iv.kind, layer: iv.layer, head: iv.head === -1 ? 'all' : iv.head };
      if (iv.kind === 'hard' || iv.kind === 'soft') { x.row = iv.row; x.col = iv.col; }
      if (iv.kind === 'soft') x.lambda = iv.lambda;
      if (iv.kind === 'scaleQ' || iv.kind === 'scaleK') x.alpha = iv.alpha;
      return x;
    });
  }
  if (o.mask) out.mask = o.mask === 'window' ? `window:${o.window}` : o.mask;
  if (o.layer_mask) out.mask = o.layer_mask.map((m, l) => (m === 'window' ? `window:${o.layer_window[l]}` : m));
  if (o.scale !== undefined) out.scale = o.scale;
  if (o.capture) out.captureQK = { layer: o.capture.layer, head: o.capture.head };
  return out;
}

const names = Object.keys(golden.families);

describe('every family against the float64 reference (wasm, npm API)', () => {
  const models = {};
  beforeAll(async () => {
    for (const n of names) models[n] = await loadModel(join(ROOT, golden.families[n].dir));
  });
  afterAll(() => { for (const m of Object.values(models)) m.dispose(); });

  for (const n of names) {
    it(`${n}: every case within 1e-4 (attentions, q, k) and 1e-3 (logits)`, () => {
      const f = golden.families[n], m = models[n];
      expect(m.config).toMatchObject({ nLayer: f.n_layer, nHead: f.n_head, nKvHead: f.n_kv_head, headDim: f.head_dim,
                                       headSize: f.head_dim, vocabSize: f.vocab_size });
      expect(m.config.family).toBe(f.family);
      const own = { mistral: ['window:4', 'window:4'], gemma3: ['window:4', 'causal'] }[n] ?? Array(f.n_layer).fill('causal');
      expect(m.config.layerMasks).toEqual(own);
      expect(f.cases.length).toBeGreaterThanOrEqual(5);
      for (const c of f.cases) {
        const r = m.run(f.ids, runOpts(c.opts));
        const da = maxAbsDiff(r.attentions, slice(c.attentions));
        const dl = maxAbsDiff(r.logits, slice(c.logits));
        expect({ case: c.name, da: da <= 1e-4, dl: dl <= 1e-3 }).toEqual({ case: c.name, da: true, dl: true });
        if (c.q) {
          expect(maxAbsDiff(r.q, slice(c.q))).toBeLessThanOrEqual(1e-4);
          expect(maxAbsDiff(r.k, slice(c.k))).toBeLessThanOrEqual(1e-4);
        }
      }
    });
  }

  it('head importance, roles, the DAG profile and counterfactual pairs run on every family', () => {
    for (const n of names) {
      const f = golden.families[n], m = models[n], LH = f.n_layer * f.n_head;
      const imp = m.headImportance(f.ids);
      // the plain run's loss is the reference's next-token loss (final norm and head at every position)
      expect(Math.abs(imp.baseLoss - f.cases[0].nll / (f.ids.length - 1))).toBeLessThanOrEqual(1e-4);
      expect(imp.delta.length).toBe(LH);
      expect(imp.delta.some((d) => Math.abs(d) > 1e-6)).toBe(true);
      const roles = m.headRoles([...f.ids.slice(0, 3), ...f.ids.slice(0, 3)]);
      expect(roles.inductionDefined).toBe(true);
      expect(roles.prev.length).toBe(LH);
      const dag = m.dagProfile([f.ids, f.ids.slice(0, 4)]);
      expect(dag.sentences[0].head.length).toBe(LH);
      expect(dag.mean.overall).toBeGreaterThan(0);
      const cf = m.counterfactual([40, 81, 33, 200], [40, 81, 34, 200]);
      expect(cf.next.kl).toBeGreaterThan(0);
    }
  });

  it('sliding windows: a soft do outside one is EMASKED, a hard do there is one-hot, the nulls are the windows\'', () => {
    const m = models.mistral, g = models.gemma3, ids = golden.families.mistral.ids, T = ids.length, NH = m.config.nHead;
    const soft = (col, mask) => m.run(ids, { interventions: [{ kind: 'soft', layer: 1, head: 0, row: 9, col, lambda: 2 }], mask });
    expect(() => soft(5)).toThrow(expect.objectContaining({ code: 'EMASKED' }));
    expect(() => soft(6)).not.toThrow();
    expect(() => soft(5, `window:${T}`)).not.toThrow(); // the window removed
    const r = m.run(ids, { interventions: [{ kind: 'hard', layer: 1, head: 0, row: 9, col: 2 }] });
    expect(Array.from(r.attentions.subarray(((NH + 0) * T + 9) * T, ((NH + 0) * T + 10) * T))).toEqual([0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    // the null of each layer is that of its own mask: window 4 on gemma's layer 0, causal on its layer 1
    const p = g.run(ids);
    expect(p.layerNullDagScores[0]).toBeCloseTo(g.run(ids, { mask: 'window:4' }).layerNullDagScores[0], 12);
    expect(p.layerNullDagScores[1]).toBeCloseTo(g.run(ids, { mask: `window:${T}` }).layerNullDagScores[1], 12);
    expect(p.layerNullDagScores[0]).not.toBeCloseTo(p.layerNullDagScores[1], 3);
  });

  it('generation with the cache equals greedy choice by full runs (every family)', () => {
    for (const n of names) {
      const m = models[n];
      const ids = [40, 81, 33, 200];
      const g = m.generate(ids, { maxTokens: 8, temperature: 0 }); // 12 tokens: past the windows of 4
      const seq = [...ids];
      for (let s = 0; s < 8; s++) {
        const r = m.run(seq, { topK: 1 });
        seq.push(r.top[0].id);
      }
      expect(Array.from(g.ids)).toEqual(seq.slice(4));
    }
  });
});

describe('Hugging Face folders in every form', () => {
  const dir = join(FAM, 'qwen3');
  const read = (f) => new Uint8Array(readFileSync(join(dir, f)));
  const plain = async () => { const m = await loadModel(dir); const r = m.run([40, 81, 33]); m.dispose(); return r; };

  it('a sharded folder from buffers and from File objects gives the numbers of the path, bit for bit', async () => {
    const ref = await plain();
    const shards = {};
    for (const f of readdirSync(dir).filter((x) => /^model-\d+-of-\d+\.safetensors$/.test(x))) shards[f] = read(f);
    const m1 = await loadModel({ config: read('config.json'), index: read('model.safetensors.index.json'), shards,
                                 vocab: read('vocab.json'), merges: read('merges.txt') });
    expect(m1.run([40, 81, 33]).attentions).toEqual(ref.attentions);
    m1.dispose();
    const files = readdirSync(dir).map((f) => new File([readFileSync(join(dir, f))], f));
    const events = [];
    const m2 = await loadModel(files, { onProgress: (e) => events.push(e) });
    expect(m2.run([40, 81, 33]).logits).toEqual(ref.logits);
    expect(events.filter((e) => e.status === 'done').map((e) => e.file))
      .toEqual(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors.index.json',
                'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    m2.dispose();
  });

  it('a tokenizer.json folder (Llama 3 style) encodes with its BOS first', async () => {
    const m = await loadModel(join(FAM, 'llama'));
    const t = m.tokenize('Hello there');
    expect(t.ids[0]).toBe(276);
    expect(t.tokens[0]).toBe('<|begin_of_text|>');
    const g = await loadModel(join(FAM, 'qwen2'));
    expect(Array.from(t.ids).slice(1)).toEqual(Array.from(g.tokenize('Hello there').ids));
    m.dispose();
    g.dispose();
  });

  it('a missing shard is EMISSING, a config disagreeing with the tensors ESHAPE', async () => {
    const files = readdirSync(dir).filter((f) => f !== 'model-00002-of-00002.safetensors')
      .map((f) => new File([readFileSync(join(dir, f))], f));
    await expect(loadModel(files)).rejects.toMatchObject({ code: 'EMISSING' });
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    const shards = {};
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.safetensors'))) shards[f] = read(f);
    const bad = { config: JSON.stringify({ ...cfg, head_dim: 8 }), index: read('model.safetensors.index.json'), shards,
                  vocab: read('vocab.json'), merges: read('merges.txt') };
    const e = await loadModel(bad).catch((x) => x);
    expect(e).toBeInstanceOf(AttnlabError);
    expect(e.code).toBe('ESHAPE');
    const unsupported = { ...bad, config: JSON.stringify({ ...cfg, use_sliding_window: true }) };
    await expect(loadModel(unsupported)).rejects.toMatchObject({ code: 'ECONFIG' });
  });

  it('threads: every family on 2 and 3 threads, every product split, gives the one-thread numbers bit for bit', async () => {
    const files = (d) => {
      const r = (f) => new Uint8Array(readFileSync(join(d, f)));
      const have = readdirSync(d), o = {};
      for (const [k, f] of [['config', 'config.json'], ['index', 'model.safetensors.index.json'], ['vocab', 'vocab.json'],
                            ['merges', 'merges.txt'], ['tokenizer', 'tokenizer.json'], ['tokenizerConfig', 'tokenizer_config.json']])
        if (have.includes(f)) o[k] = r(f);
      return { o, st: have.filter((f) => f.endsWith('.safetensors')).map((f) => ({ name: f, bytes: r(f) })) };
    };
    const load = (w, d) => {
      const { o, st } = files(d);
      return w.loadModelFiles(o, st.map(({ name, bytes }) => { const ptr = w.malloc(bytes.length); w.writeBytes(ptr, bytes); return { name, ptr, len: bytes.length }; }));
    };
    const one = await instantiateAttnlab(readFileSync(WASM_PATH));
    for (const threads of [2, 3]) {
      const w = await instantiateAttnlab(readFileSync(WASM_MT_PATH), { threads });
      expect(w.threads()).toBe(threads);
      w.setParallelMinWork(0);
      for (const n of names) {
        const d = join(ROOT, golden.families[n].dir), f = golden.families[n];
        const c = f.cases[f.cases.length - 1]; // the combined case: do, ablation, a weight edit, a capture
        const iv = (runOpts(c.opts).interventions ?? []).map((x) => ({ ...x, kind: KIND[x.kind], head: x.head === 'all' ? -1 : x.head }));
        const opts = { interventions: iv, captureLayer: c.opts.capture.layer, captureHead: c.opts.capture.head };
        const m1 = load(one, d), m2 = load(w, d);
        one.forward(m1, f.ids, opts);
        w.forward(m2, f.ids, opts);
        expect(w.resultAttention(m2)).toEqual(one.resultAttention(m1));
        expect(w.resultLogits(m2)).toEqual(one.resultLogits(m1));
        expect(w.resultK(m2)).toEqual(one.resultK(m1));
        one.modelFree(m1);
        w.modelFree(m2);
      }
      w.stopThreads();
    }
  });

  it('the CLI takes every family folder: its run (with a do, an ablation and a capture) is the npm API run of the same text (native vs wasm)', async () => {
    const text = 'Hello there, the storm';
    for (const n of names) {
      const d = join(ROOT, golden.families[n].dir);
      const r = spawnSync(join(ROOT, 'build/attnlab'), ['run', '--model', d, '--text', text, '--do', '1,all,3,1,hard',
                                                        '--ablate', '0.1', '--capture', '1,1', '--json'],
                          { encoding: 'utf8', maxBuffer: 64 << 20 });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      const m = await loadModel(d);
      const api = m.run(text, { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 3, col: 1 }], ablate: [[0, 1]],
                                captureQK: { layer: 1, head: 1 } });
      expect(out.ids).toEqual(Array.from(api.ids));
      expect(maxAbsDiff(new Float32Array(out.attentions.flat(3)), api.attentions)).toBeLessThanOrEqual(1e-5);
      expect(maxAbsDiff(new Float32Array(out.logits), api.logits)).toBeLessThanOrEqual(1e-4);
      m.dispose();
    }
  });

  it('attnlab/worker takes a sharded folder as buffers (shards included) and gives the main-thread numbers', async () => {
    const read = (f) => new Uint8Array(readFileSync(join(dir, f)));
    const shards = {};
    for (const f of readdirSync(dir).filter((x) => /^model-\d+-of-\d+\.safetensors$/.test(x))) shards[f] = read(f);
    const remote = await workerApi.loadModel({ config: read('config.json'), index: read('model.safetensors.index.json'), shards,
                                               vocab: read('vocab.json'), merges: read('merges.txt') });
    try {
      expect(remote.config).toMatchObject({ family: 'qwen3', nKvHead: 2, headDim: 16 });
      const o = { interventions: [{ kind: 'swapQK', layer: 1, head: 'all' }], captureQK: { layer: 0, head: 3 } };
      const a = await remote.run([40, 81, 33, 200], o);
      const m = await loadModel(dir);
      const b = m.run([40, 81, 33, 200], o);
      expect(a.attentions).toEqual(b.attentions);
      expect(a.k).toEqual(b.k);
      m.dispose();
    } finally {
      await remote.dispose();
    }
  });

  it("weights: 'half' keeps F16/BF16 matrices in 16 bits: the reference's numbers, less memory, in the worker too", async () => {
    for (const n of ['llama', 'qwen3', 'neox']) {
      const f = golden.families[n], d = join(ROOT, f.dir);
      const full = await loadModel(d), half = await loadModel(d, { weights: 'half' });
      expect(full.weights).toBe('f32');
      expect(half.weights).toBe('half');
      for (const c of f.cases) {
        const r = half.run(f.ids, runOpts(c.opts));
        expect(maxAbsDiff(r.attentions, slice(c.attentions))).toBeLessThanOrEqual(1e-4);
        expect(maxAbsDiff(r.logits, slice(c.logits))).toBeLessThanOrEqual(1e-3);
      }
      expect(Array.from(half.generate(f.ids, { maxTokens: 6, temperature: 0 }).ids))
        .toEqual(Array.from(full.generate(f.ids, { maxTokens: 6, temperature: 0 }).ids));
      full.dispose();
      half.dispose();
    }
    // memory: an F16 GPT-2 of 3.4 M parameters holds about half the bytes with 16-bit storage
    const big = checkpointBuffers({ n_layer: 4, n_head: 4, n_embd: 256, n_positions: 64 }, { dtype: 'F16' });
    const bf = await loadModel(big), bh = await loadModel(big, { weights: 'half' });
    expect(bh.weights).toBe('half');
    expect(bh.memoryUsage().heapBytes).toBeLessThan(0.65 * bf.memoryUsage().heapBytes);
    expect(maxAbsDiff(bh.run([5, 6, 7, 8]).logits, bf.run([5, 6, 7, 8]).logits)).toBeLessThanOrEqual(1e-5);
    bf.dispose();
    bh.dispose();
    const f32only = await loadModel(join(FAM, 'gpt2-untied'), { weights: 'half' }); // F32 weights stay F32
    expect(f32only.weights).toBe('f32');
    f32only.dispose();
    await expect(loadModel(join(FAM, 'llama'), { weights: 'bf16' })).rejects.toMatchObject({ code: 'EINVAL' });
    const remote = await workerApi.loadModel(join(FAM, 'qwen3'), { weights: 'half' });
    try {
      expect(remote.weights).toBe('half');
      const local = await loadModel(join(FAM, 'qwen3'), { weights: 'half' });
      expect((await remote.run([40, 81, 33])).logits).toEqual(local.run([40, 81, 33]).logits);
      local.dispose();
    } finally {
      await remote.dispose();
    }
  });

  it('over HTTP: an index whose shard names leave the folder, or name too many shards, makes no request past the index', async () => {
    // issue 36 item 1: a name without '/' could still be a URL of its own ("https:host:port", "file:etc") or an escape
    const other = [];
    const elsewhere = http.createServer((req, res) => { other.push(req.url); res.writeHead(200); res.end('x'); });
    await new Promise((ok) => elsewhere.listen(0, '127.0.0.1', ok));
    const served = [];
    let index = '';
    const srv = http.createServer((req, res) => {
      const f = req.url.slice(1).split('/').pop();
      served.push(decodeURIComponent(f));
      if (f === 'model.safetensors.index.json') { res.writeHead(200); res.end(index); return; }
      let body;
      try { body = readFileSync(join(FAM, 'qwen3', f)); } catch { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { 'content-length': body.length });
      res.end(body);
    });
    await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
    const base = `http://127.0.0.1:${srv.address().port}/qwen3/`;
    const bads = [`https:127.0.0.1:${elsewhere.address().port}.safetensors`, `http:127.0.0.1:${elsewhere.address().port}/x.safetensors`,
      'file:etc.safetensors', '%2e%2e.safetensors', '..safetensors', '.x.safetensors', 'a\\b.safetensors', 'x\u0000.safetensors', 'model.bin'];
    try {
      for (const bad of bads) {
        index = JSON.stringify({ weight_map: { 'model.norm.weight': 'model-00001-of-00002.safetensors', 'model.embed_tokens.weight': bad } });
        served.length = 0;
        await expect(loadModel(base)).rejects.toMatchObject({ code: 'EFORMAT' });
        expect(served.filter((f) => f.endsWith('.safetensors') && f !== 'model.safetensors')).toEqual([]);
      }
      expect(other).toEqual([]);
      // more distinct shards than the C limit: refused from the index, before the first shard request
      const wm = {};
      for (let i = 0; i <= 4096; i++) wm[`t${i}`] = `s${i}.safetensors`;
      index = JSON.stringify({ weight_map: wm });
      served.length = 0;
      await expect(loadModel(base)).rejects.toMatchObject({ code: 'ELIMIT' });
      expect(served.filter((f) => /^s\d+\.safetensors$/.test(f))).toEqual([]);
    } finally {
      srv.close();
      elsewhere.close();
    }
  });

  it('over HTTP: a sharded folder (no model.safetensors: 404, then the index and its shards) and a tokenizer.json folder', async () => {
    const served = [];
    const srv = http.createServer((req, res) => {
      const [dirName, f] = req.url.slice(1).split('/');
      const path = join(FAM, dirName, f);
      let body;
      try { body = readFileSync(path); } catch { res.writeHead(404); res.end(); served.push(`404 ${f}`); return; }
      served.push(f);
      res.writeHead(200, { 'content-length': body.length });
      res.end(body);
    });
    await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
    const base = `http://127.0.0.1:${srv.address().port}/`;
    try {
      const q = await loadModel(base + 'qwen3/');
      const local = await loadModel(dir);
      expect(q.run([40, 81, 33]).logits).toEqual(local.run([40, 81, 33]).logits);
      // qwen3 has no tokenizer.json here: the GPT-2-style files after a 404; the weights from the index
      expect(served).toEqual(['config.json', '404 tokenizer.json', 'vocab.json', 'merges.txt', '404 model.safetensors',
                              'model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
      q.dispose();
      local.dispose();
      served.length = 0;
      const l = await loadModel(base + 'llama/');
      expect(served).toEqual(['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors']);
      expect(l.tokenize('Hello').ids[0]).toBe(276);
      l.dispose();
      await expect(loadModel(base + 'nothing/')).rejects.toMatchObject({ code: 'EIO' });
    } finally {
      srv.close();
    }
  });
});
