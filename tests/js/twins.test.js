// twins.test.js — the random-weight twins (web/src/twins.js; docs/evidence.md "Random-weight twins"): the
// generator and the gpt2-init weights against the float64 reference tests/ref/twins_ref.py (its golden,
// tests/fixtures/twins_golden.json, and, where /usr/bin/python3 has numpy, a live run at the scales this code
// chose), reproducibility from the seed, the matched twin's entropies against the trained model's, and the
// named errors of bad inputs.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/model.js';
import * as api from '../../web/src/index.js';
import {
  randomTwin, twinEntropies, twinRng, gpt2InitSafetensors, uniformEntropy, TWIN_KINDS, LOG_SCALE_BRACKET, BISECTION_STEPS,
} from '../../web/src/twins.js';

const ROOT = new URL('../../', import.meta.url);
const path = (p) => fileURLToPath(new URL(p, ROOT));
const TINY = path('tests/fixtures/tiny');
const GOLDEN = JSON.parse(readFileSync(path('tests/fixtures/twins_golden.json'), 'utf8'));
const tinyCfg = JSON.parse(readFileSync(path('tests/fixtures/tiny/config.json'), 'utf8'));
const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
const f32sha = (a) => sha(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
const hasNumpy = spawnSync('/usr/bin/python3', ['-c', 'import numpy'], { encoding: 'utf8' }).status === 0;

async function codeOf(p) {
  try {
    await p;
  } catch (e) {
    return e.code;
  }
  return 'no error';
}

let tiny, builtin;
beforeAll(async () => {
  tiny = await loadModel(TINY);
  builtin = await loadModel();
}, 60_000);
afterAll(() => {
  tiny?.dispose();
  builtin?.dispose();
});

describe('the generator (splitmix64, Box–Muller) and the gpt2-init weights', () => {
  it('draws what the reference draws from seed 1', () => {
    const r = twinRng(1);
    const draws = Array.from({ length: 4 }, () => { const [h, l] = r.next(); return String((BigInt(h) << 32n) | BigInt(l)); });
    expect(draws).toEqual(GOLDEN.draws_seed1);
    const n = twinRng(1);
    for (const z of GOLDEN.normals_seed1) expect(Math.abs(n.normal() - z)).toBeLessThan(1e-15);
  });

  it('gives the reference\'s tensors, bit for bit, for seeds 1 and 7 (sha256 of each float32 tensor, sums, first values)', () => {
    for (const seed of [1, 7]) {
      const { views } = gpt2InitSafetensors(tinyCfg, seed);
      const want = GOLDEN.weights[String(seed)];
      expect(Object.keys(views).sort()).toEqual(Object.keys(want).sort());
      for (const [name, a] of Object.entries(views)) {
        expect(f32sha(a), `${name}, seed ${seed}`).toBe(want[name].sha256);
        expect(Array.from(a.subarray(0, 4))).toEqual(want[name].first);
        expect(Math.abs(a.reduce((s, x) => s + x, 0) - want[name].sum)).toBeLessThan(1e-9);
      }
    }
  });

  it('has GPT-2\'s scales: 0.02 for the matrices, 0.02/sqrt(2L) for the residual projections, biases 0, LayerNorm 1', () => {
    const { views } = gpt2InitSafetensors(tinyCfg, 3);
    const sd = (a) => { const m = a.reduce((s, x) => s + x, 0) / a.length; return Math.sqrt(a.reduce((s, x) => s + (x - m) ** 2, 0) / a.length); };
    expect(sd(views['wte.weight'])).toBeCloseTo(0.02, 3);
    expect(sd(views['h.0.mlp.c_fc.weight'])).toBeCloseTo(0.02, 3);
    expect(sd(views['h.1.mlp.c_proj.weight']) / (0.02 / Math.sqrt(6))).toBeCloseTo(1, 1);
    expect(views['h.2.attn.c_attn.bias'].every((x) => x === 0) && views['ln_f.weight'].every((x) => x === 1)).toBe(true);
    expect(views['lm_head.weight']).toBeUndefined();
  });

  it('same seed: byte-identical files and twins; another seed: different weights', async () => {
    const a = gpt2InitSafetensors(tinyCfg, 5).bytes, b = gpt2InitSafetensors(tinyCfg, 5).bytes, c = gpt2InitSafetensors(tinyCfg, 6).bytes;
    expect(sha(a)).toBe(sha(b));
    expect(sha(a)).not.toBe(sha(c));
    const t1 = await randomTwin(tiny, { kind: 'gpt2-init', seed: 5, set: GOLDEN.inputs });
    const t2 = await randomTwin(tiny, { kind: 'gpt2-init', seed: 5, set: GOLDEN.inputs });
    const t3 = await randomTwin(tiny, { kind: 'gpt2-init', seed: 6, set: GOLDEN.inputs });
    try {
      const run = (m) => m.run(GOLDEN.inputs[2]);
      expect(sha(run(t1).logits)).toBe(sha(run(t2).logits));
      expect(sha(run(t1).attentions)).toBe(sha(run(t2).attentions));
      expect(sha(run(t1).logits)).not.toBe(sha(run(t3).logits));
      expect(t1.twin.entropies.twin).toEqual(t2.twin.entropies.twin);
    } finally {
      t1.dispose(); t2.dispose(); t3.dispose();
    }
  }, 60_000);
});

describe('the matched twin of the tiny fixture against the float64 reference', () => {
  let twin;
  beforeAll(async () => { twin = await randomTwin(tiny, { kind: 'matched', seed: 1, set: GOLDEN.inputs }); }, 60_000);
  afterAll(() => twin?.dispose());

  it('reports what it is, and reuses the trained model\'s config shapes and tokenizer', () => {
    const t = twin.twin;
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.keys(t).sort()).toEqual(['entropies', 'inputs', 'kind', 'scales', 'seed', 'tolerance']);
    expect([t.kind, t.seed, t.inputs, t.tolerance, t.scales.length]).toEqual(['matched', 1, GOLDEN.inputs.length, 1e-3, 3]);
    for (const k of ['nLayer', 'nHead', 'nEmbd', 'vocabSize', 'nPositions', 'family']) expect(twin.config[k]).toBe(tiny.config[k]);
    expect(Array.from(twin.tokenize('Because the storm intensified').ids)).toEqual(Array.from(tiny.tokenize('Because the storm intensified').ids));
    expect(twin.source).toBe('buffers');
  });

  it('the trained entropies are the reference\'s (1e-5), and the twin\'s match them within the tolerance', () => {
    const { trained, twin: tw } = twin.twin.entropies;
    trained.forEach((h, l) => expect(Math.abs(h - GOLDEN.matched.trained[l])).toBeLessThan(1e-5));
    tw.forEach((h, l) => expect(Math.abs(h - trained[l])).toBeLessThanOrEqual(1e-3));
    expect(twinEntropies(tiny, GOLDEN.inputs)).toEqual(trained);
  });

  it('its scales are the reference\'s float64 bisection\'s (relative 1e-4), and its entropies the reference\'s at them (1e-5)', () => {
    twin.twin.scales.forEach((s, l) => expect(Math.abs(s / GOLDEN.matched.scales[l] - 1)).toBeLessThan(1e-4));
    twin.twin.entropies.twin.forEach((h, l) => expect(Math.abs(h - GOLDEN.matched.entropies[l])).toBeLessThan(1e-5));
    expect([GOLDEN.bracket, GOLDEN.steps]).toEqual([[...LOG_SCALE_BRACKET], BISECTION_STEPS]);
  });

  it.skipIf(!hasNumpy)('the reference\'s float64 entropies at exactly this twin\'s scales agree within 1e-5 (live, numpy)', () => {
    const r = spawnSync('/usr/bin/python3', [path('tests/ref/twins_ref.py'), 'entropies', TINY, '1', twin.twin.scales.join(','),
      JSON.stringify(GOLDEN.inputs)], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const { entropies } = JSON.parse(r.stdout);
    twin.twin.entropies.twin.forEach((h, l) => expect(Math.abs(h - entropies[l])).toBeLessThan(1e-5));
  }, 60_000);
});

describe('twins of the built-in model on 20 held-out sentences', () => {
  let init, matched;
  beforeAll(async () => {
    init = await randomTwin(builtin, { kind: 'gpt2-init', seed: 1, set: 'heldout', limit: 20 });
    matched = await randomTwin(builtin, { kind: 'matched', seed: 1, set: 'heldout', limit: 20 });
  }, 120_000);
  afterAll(() => { init?.dispose(); matched?.dispose(); });

  it('matched: every layer\'s mean entropy within 1e-3 nats of the trained model\'s', () => {
    const { trained, twin } = matched.twin.entropies;
    expect(trained).toHaveLength(builtin.config.nLayer);
    expect(matched.twin.inputs).toBe(20);
    twin.forEach((h, l) => expect(Math.abs(h - trained[l]), `layer ${l}`).toBeLessThanOrEqual(1e-3));
    expect(matched.twin.scales.every((s) => s > 1)).toBe(true); // the trained model's attention is more peaked than GPT-2's init
  });

  it('gpt2-init: attention nearly uniform — each layer within 0.01 nats of the uniform entropy mean ln(i+1), far above the trained', () => {
    const { trained, twin, uniform } = init.twin.entropies;
    expect(uniform).toBeCloseTo(uniformEntropy(builtin.evidenceSet('heldout', { limit: 20 })), 12);
    expect(init.twin.scales).toEqual(new Array(builtin.config.nLayer).fill(1));
    twin.forEach((h, l) => {
      expect(h).toBeLessThanOrEqual(uniform + 1e-9);
      expect(uniform - h, `layer ${l}`).toBeLessThan(0.01);
      expect(h - trained[l], `layer ${l}`).toBeGreaterThan(0.4);
    });
  });

  it('the two twins share the gpt2-init draws: they differ in the query columns only (same embeddings)', () => {
    const ids = builtin.evidenceSet('heldout', { limit: 1 })[0];
    const a = init.run(ids).attentions, b = matched.run(ids).attentions;
    const T = ids.length, L = builtin.config.nLayer, H = builtin.config.nHead;
    expect(a.length).toBe(L * H * T * T);
    // row 1 of layer 0 sees two keys: scaling q sharpens it, the same way round in both
    for (let h = 0; h < H; h++) {
      const o = h * T * T + T;
      expect(Math.sign(b[o] - b[o + 1])).toBe(Math.sign(a[o] - a[o + 1]));
    }
  });
});

describe('other families and bad inputs: named codes', () => {
  it('a model of another family is ECONFIG, naming it; gpt2 variants (untied, unscaled) are built', async () => {
    const llama = await loadModel(path('tests/fixtures/families/llama'));
    try {
      const e = await randomTwin(llama).catch((x) => x);
      expect(e.code).toBe('ECONFIG');
      expect(e.message).toBe(`random twins are built for gpt2-family models: ${llama.config.family}`);
    } finally {
      llama.dispose();
    }
    for (const dir of ['gpt2-untied', 'gpt2-noscale']) {
      const m = await loadModel(path(`tests/fixtures/families/${dir}`));
      try {
        const t = await randomTwin(m, { set: GOLDEN.inputs.map((x) => x.map((id) => id % m.config.vocabSize)).slice(0, 3) });
        t.twin.entropies.twin.forEach((h, l) => expect(Math.abs(h - t.twin.entropies.trained[l])).toBeLessThanOrEqual(1e-3));
        t.dispose();
      } finally {
        m.dispose();
      }
    }
  }, 60_000);

  it('unknown kind, seed out of range, empty set, bad tolerance, unknown option, not a model', async () => {
    const set = GOLDEN.inputs.slice(0, 2);
    expect(TWIN_KINDS).toEqual(['gpt2-init', 'matched']);
    expect(await codeOf(randomTwin(tiny, { kind: 'uniform', set }))).toBe('EINVAL');
    expect(await codeOf(randomTwin(tiny, { kind: 3, set }))).toBe('ETYPE');
    expect(await codeOf(randomTwin(tiny, { seed: -1, set }))).toBe('ERANGE');
    expect(await codeOf(randomTwin(tiny, { seed: 2 ** 32, set }))).toBe('ERANGE');
    expect(await codeOf(randomTwin(tiny, { seed: 1.5, set }))).toBe('EINVAL');
    expect(await codeOf(randomTwin(tiny, { seed: '1', set }))).toBe('ETYPE');
    expect(await codeOf(randomTwin(tiny, { set: [] }))).toBe('EEMPTY');
    expect(await codeOf(randomTwin(tiny, { set: 'nonesuch' }))).toBe('EINVAL');
    expect(await codeOf(randomTwin(tiny, { set, tolerance: 0 }))).toBe('ERANGE');
    expect(await codeOf(randomTwin(tiny, { set, tolerance: NaN }))).toBe('ENAN');
    expect(await codeOf(randomTwin(tiny, { set, limit: 0 }))).toBe('ERANGE');
    expect(await codeOf(randomTwin(tiny, { colour: 'red' }))).toBe('EINVAL');
    expect(await codeOf(randomTwin({}, {}))).toBe('ETYPE');
    expect(() => twinEntropies(tiny, [])).toThrow(expect.objectContaining({ code: 'EEMPTY' }));
    // a matched twin's calibration holds one layer's scores: 4 heads · (64·65/2 − 1) per input of 64 ids, over 2^25
    // with 4,100 of them, refused before the first run (a gpt2-init twin holds none)
    const many = Array.from({ length: 4100 }, () => GOLDEN.inputs[5].concat(GOLDEN.inputs[5]).slice(0, 64));
    const t0 = performance.now();
    expect(await codeOf(randomTwin(tiny, { set: many }))).toBe('ELIMIT');
    expect(performance.now() - t0).toBeLessThan(5000);
    const m = await loadModel(TINY);
    m.dispose();
    expect(await codeOf(randomTwin(m))).toBe('EDISPOSED');
  });

  it('is the package\'s randomTwin', () => {
    expect(api.randomTwin).toBe(randomTwin);
  });
});
