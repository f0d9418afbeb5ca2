// soak.js — the "load held" soak (issue 21): many random valid runs with random interventions through
// attnlab/worker, random invalid calls mixed in, and the memory at the start and the end.
//
//   soak({runs, seed, invalidEvery}) -> {runs, invalid, codes, start, end, ...}
//
// Each valid run is checked (every attention row a distribution, logits finite, T as asked); each invalid
// call must reject with an AttnlabError whose code is the expected one, and the model must keep working
// (the next valid run is checked like any other). Memory: wasm memory size and malloc'ed bytes of the
// worker's instance (memoryUsage), and the process RSS, after a warm-up run at the longest input with every
// output on (so the activation buffers have their largest size), and at the end. Used by
// tests/js/soak.test.js (a small size, in `make test`) and bench/bench_soak.mjs (>= 10 000 runs, `make bench`).

import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { loadModel, AttnlabError, ERROR_CODES } from '../../../web/src/worker-client.js';
import { mulberry32 } from '../../../web/src/core/rng.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const TINY = join(ROOT, 'tests/fixtures/tiny');

const rng = mulberry32;

// A random valid run: ids of length T, options with 0..6 interventions of every kind.
function validCall(r, cfg) {
  const int = (n) => Math.floor(r() * n);
  const { nLayer: L, nHead: H, vocabSize: V, nPositions: P } = cfg;
  const T = 1 + int(P);
  const ids = Array.from({ length: T }, () => int(V));
  const interventions = [];
  // the mask first: a soft do must name a cell its row can see (else EMASKED, not a valid run)
  const m = int(4);
  const W = m === 2 ? 1 + int(T) : 0;
  const visible = (row) => (m === 1 ? [0, T] : m === 2 ? [Math.max(0, row - W + 1), row + 1] : [0, row + 1]);
  const n = int(7);
  for (let i = 0; i < n; i++) {
    const layer = int(L);
    const head = r() < 0.2 ? 'all' : int(H);
    const row = int(T), col = int(T);
    switch (int(6)) {
      case 0: interventions.push({ kind: 'hard', layer, head, row, col }); break;
      case 1: {
        const [lo, hi] = visible(row);
        interventions.push({ kind: 'soft', layer, head, row, col: lo + (col % (hi - lo)), lambda: (r() - 0.5) * 20 });
        break;
      }
      case 2: interventions.push({ kind: 'ablate', layer, head }); break;
      case 3: interventions.push({ kind: 'scaleQ', layer, head, alpha: (r() - 0.5) * 6 }); break;
      case 4: interventions.push({ kind: 'scaleK', layer, head, alpha: (r() - 0.5) * 6 }); break;
      default: interventions.push({ kind: 'swapQK', layer, head }); break;
    }
  }
  const opts = { interventions };
  if (m === 1) opts.mask = 'full';
  if (m === 2) opts.mask = `window:${W}`;
  if (r() < 0.2) opts.scale = r() * 2;
  if (r() < 0.3) opts.captureQK = { layer: int(L), head: int(H) };
  opts.topK = int(20);
  return { ids, opts, T };
}

// A random invalid call and the code it must reject with.
function invalidCall(r, cfg) {
  const { nLayer: L, nHead: H, vocabSize: V, nPositions: P } = cfg;
  const ok = [1, 2, 3, 4];
  const cases = [
    [(m) => m.run(ok, { interventions: [{ kind: 'hard', layer: L, head: 0, row: 0, col: 0 }] }), 'ERANGE'],
    [(m) => m.run(ok, { interventions: [{ kind: 'soft', layer: 0, head: 0, row: 1, col: 0, lambda: NaN }] }), 'ENAN'],
    [(m) => m.run(ok, { interventions: [{ kind: 'soft', layer: 0, head: 0, row: 1, col: 0, lambda: 3e38 }] }), 'ERANGE'],
    [(m) => m.run(ok, { scale: -3e38 }), 'ERANGE'],
    [(m) => m.run(ok, { interventions: [{ kind: 'scaleQ', layer: 0, head: H - 1, alpha: 1e4 }, { kind: 'scaleK', layer: 0, head: 'all', alpha: 1e3 }] }), 'ERANGE'],
    [(m) => m.run(new Array(P + 1).fill(5)), 'ETOOLONG'],
    [(m) => m.run([V]), 'ERANGE'],
    [(m) => m.run(''), 'EEMPTY'],
    [(m) => m.run(42), 'ETYPE'],
    [(m) => m.run(ok, { mask: 'diagonal' }), 'EINVAL'],
    [(m) => m.run(ok, { captureQK: { layer: 0, head: H } }), 'ERANGE'],
    [(m) => m.generate(ok, { maxTokens: 2 ** 28 }), 'ETOOLONG'],
    [(m) => m.run('a'.repeat((1 << 20) + 1)), 'ELIMIT'],
    [(m) => m.decode([-1]), 'ERANGE'],
  ];
  return cases[Math.floor(r() * cases.length)];
}

function checkResult(res, T, cfg) {
  if (res.T !== T) throw new Error(`run gave T = ${res.T}, asked ${T}`);
  const a = res.attentions;
  const rows = cfg.nLayer * cfg.nHead * T;
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let j = 0; j < T; j++) {
      const x = a[i * T + j];
      if (!(x >= 0 && x <= 1)) throw new Error(`attention value ${x} in row ${i}`);
      s += x;
    }
    if (Math.abs(s - 1) > 1e-3) throw new Error(`attention row ${i} sums to ${s}`);
  }
  for (const x of res.logits) if (!Number.isFinite(x)) throw new Error(`a logit is ${x}`);
}

const mem = async (m) => ({ ...(await m.memoryUsage()), rss: process.memoryUsage().rss });

export async function soak({ runs = 200, seed = 21, invalidEvery = 7, source = TINY, onProgress } = {}) {
  const r = rng(seed);
  const m = await loadModel(source);
  try {
    const cfg = m.config;
    // warm-up: the longest input with everything captured, so the buffers have their largest size
    const warm = validCall(rng(1), cfg);
    warm.ids = Array.from({ length: cfg.nPositions }, (_, i) => i % cfg.vocabSize);
    warm.opts = { captureQK: { layer: 0, head: 0 }, topK: 19, interventions: [] };
    checkResult(await m.run(warm.ids, warm.opts), cfg.nPositions, cfg);
    await m.generate([1, 2], { maxTokens: 3, temperature: 1, topK: 0 });
    const start = await mem(m);
    let valid = 0, invalid = 0;
    const codes = {};
    const t0 = Date.now();
    for (let i = 0; i < runs; i++) {
      if (invalidEvery > 0 && i % invalidEvery === invalidEvery - 1) {
        const [call, want] = invalidCall(r, cfg);
        let err = null;
        try { await call(m); } catch (e) { err = e; }
        if (!(err instanceof AttnlabError) || !ERROR_CODES.includes(err.code))
          throw new Error(`invalid call ${i}: expected AttnlabError ${want}, got ${err && (err.code || err.name)}: ${err && err.message}`);
        if (err.code !== want) throw new Error(`invalid call ${i}: expected ${want}, got ${err.code}: ${err.message}`);
        codes[err.code] = (codes[err.code] || 0) + 1;
        invalid++;
        continue;
      }
      const { ids, opts, T } = validCall(r, cfg);
      checkResult(await m.run(ids, opts), T, cfg);
      valid++;
      if (onProgress && i % 1000 === 999) onProgress(i + 1);
    }
    const end = await mem(m);
    return { runs: valid, invalid, codes, start, end, ms: Date.now() - t0 };
  } finally {
    await m.dispose();
  }
}
