// stats.test.js — web/src/stats.js, the clustered intervals, paired differences and corrections of
// c/src/stats.c in WebAssembly (docs/evidence.md § 5, "Clustered intervals, paired differences,
// corrections"): every case of the independent float64 reference tests/ref/stats_ref.py
// (tests/fixtures/stats_golden.json) within 1e-12 relative (|got − want| <= 1e-12 · max(1, |want|); the
// p-values, which are counts, exactly), on the single-threaded and the multithreaded build; the cluster
// bootstrap with no clusters equal to bootstrapMean bit for bit; and the error code of each bad input.
import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiateAttnlab, defaultWasmMTURL } from '../../web/src/core/wasm.js';
import { C } from '../../web/src/core/abi.js';
import { bootstrapMean } from '../../web/src/evidence.js';
import { clusterBootstrapMean, pairedDiff, holm, partialSpearman, quantiles } from '../../web/src/stats.js';
import { codeOf } from './helpers/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const G = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/stats_golden.json'), 'utf8'));
const TOL = 1e-12;

const near = (got, want) => (want === null ? got === null : got !== null && Math.abs(got - want) <= TOL * Math.max(1, Math.abs(want)));
function expectNear(got, want, what) {
  expect(near(got, want), `${what}: ${got} against ${want}`).toBe(true);
}

for (const build of ['attnlab.wasm', 'attnlab-mt.wasm']) {
  describe(`web/src/stats.js against the float64 reference (${build})`, () => {
    let w;
    beforeAll(async () => { w = build === 'attnlab.wasm' ? await instantiateAttnlab() : await instantiateAttnlab(defaultWasmMTURL()); });

    it('clusterBootstrapMean: every golden case', () => {
      expect(G.cluster_bootstrap.length).toBeGreaterThan(5);
      for (const c of G.cluster_bootstrap) {
        const r = clusterBootstrapMean(w, c.x, c.cluster, { nBoot: c.n_boot, level: c.level, seed: c.seed });
        for (const k of ['mean', 'lo', 'hi']) expectNear(r[k], c[k], `${c.name} ${k}`);
        const finite = c.x.map((x, i) => [x, c.cluster ? c.cluster[i] : i]).filter(([x]) => x !== null);
        expect(r.n).toBe(finite.length);
        expect(r.nClusters).toBe(new Set(finite.map(([, id]) => id)).size);
      }
    });

    it('clusterBootstrapMean without clusters is bootstrapMean, bit for bit', () => {
      for (const c of G.bootstrap) {
        const o = { nBoot: c.n_boot, level: c.level, seed: c.seed };
        const a = clusterBootstrapMean(w, c.x, null, o), b = bootstrapMean(w, c.x, o);
        expect([a.mean, a.lo, a.hi]).toEqual([b.mean, b.lo, b.hi]);
      }
    });

    it('pairedDiff: every golden case, p exactly', () => {
      expect(G.paired.length).toBeGreaterThan(4);
      for (const c of G.paired) {
        const r = pairedDiff(w, c.x, c.y, c.cluster, { nBoot: c.n_boot, nPerm: c.n_perm, level: c.level, seed: c.seed });
        const got = [r.mean, r.lo, r.hi, r.p, r.nPairs, r.nClusters];
        got.forEach((g, k) => expectNear(g, c.out[k], `${c.name} out[${k}]`));
        expect(r.p).toBe(c.out[3]);
      }
    });

    it('holm, partialSpearman, quantiles: every golden case', () => {
      for (const c of G.holm) holm(w, c.p).forEach((a, i) => expectNear(a, c.adjusted[i], `holm ${i}`));
      for (const c of G.partial_spearman) expectNear(partialSpearman(w, c.x, c.y, c.z), c.rho, c.name);
      for (const c of G.quantiles) quantiles(w, c.x, c.q).forEach((v, k) => expectNear(v, c.out[k], `quantile ${c.q[k]}`));
    });
  });
}

describe('web/src/stats.js: clusters, missing values, results', () => {
  let w;
  beforeAll(async () => { w = await instantiateAttnlab(); });

  it('cluster ids are names: strings or numbers, the same numbers', () => {
    const c = G.cluster_bootstrap.find((x) => x.name === 'documents');
    const o = { nBoot: c.n_boot, level: c.level, seed: c.seed };
    const a = clusterBootstrapMean(w, c.x, c.cluster, o);
    const b = clusterBootstrapMean(w, c.x, c.cluster.map((id) => `doc-${id}`), o);
    expect(b).toEqual(a);
    expect(a.nClusters).toBe(25);
    // documents widen the interval over sentences resampled one by one
    const s = clusterBootstrapMean(w, c.x, null, o);
    expect(a.hi - a.lo).toBeGreaterThan(s.hi - s.lo);
  });

  it('missing values: null and NaN are skipped, and a pair with one missing side is dropped', () => {
    const r = clusterBootstrapMean(w, [1, null, 3, NaN], ['a', 'b', 'a', 'c'], { nBoot: 10 });
    expect(r).toMatchObject({ mean: 2, lo: 2, hi: 2, n: 2, nClusters: 1 });
    const d = pairedDiff(w, [1, 2, null, 4], [0, NaN, 1, 1], [1, 1, 2, 2], { nBoot: 0, nPerm: 0 });
    expect(d).toEqual({ mean: 2, lo: null, hi: null, p: null, nPairs: 2, nClusters: 2 });
    expect(holm(w, [0.01, null, 0.04])).toEqual([0.02, null, 0.04]);
    expect(quantiles(w, [null, NaN], [0.5])).toEqual([null]);
    expect(partialSpearman(w, [1, 2, 3, 4], [1, 2, 3, 4], [7, 7, 7, 7])).toBeNull();
    expect(clusterBootstrapMean(w, [], null)).toEqual({ mean: null, lo: null, hi: null, n: 0, nClusters: 0 });
  });

  it('typed arrays are values too, and the defaults are 1000 resamples at 95 % with seed 1', () => {
    const x = Float64Array.from({ length: 30 }, (_, i) => Math.sin(i));
    const ids = Int32Array.from({ length: 30 }, (_, i) => i >> 2);
    expect(clusterBootstrapMean(w, x, ids)).toEqual(clusterBootstrapMean(w, Array.from(x), Array.from(ids), { nBoot: 1000, level: 0.95, seed: 1 }));
    expect(pairedDiff(w, x, x.map((v) => v / 2), ids).nPairs).toBe(30);
  });
});

describe('web/src/stats.js: bad inputs', () => {
  let w;
  beforeAll(async () => { w = await instantiateAttnlab(); });

  it('each bad input has its code, before or from the C', () => {
    const x = [1, 2, 3], y = [0, 1, 1];
    expect(codeOf(() => clusterBootstrapMean(w, 'abc', null))).toBe('ETYPE');
    expect(codeOf(() => clusterBootstrapMean(w, [1, '2'], null))).toBe('ETYPE');
    expect(codeOf(() => clusterBootstrapMean(w, x, [1, 2]))).toBe('EINVAL');
    expect(codeOf(() => clusterBootstrapMean(w, x, [1, null, 2]))).toBe('ETYPE');
    expect(codeOf(() => clusterBootstrapMean(w, x, null, { nboot: 5 }))).toBe('EINVAL');
    expect(codeOf(() => clusterBootstrapMean(w, x, null, { nBoot: -1 }))).toBe('ERANGE');
    expect(codeOf(() => clusterBootstrapMean(w, x, null, { nBoot: 1e6 + 1 }))).toBe('ERANGE');
    expect(codeOf(() => clusterBootstrapMean(w, x, null, { nBoot: 2.5 }))).toBe('EINVAL');
    expect(codeOf(() => clusterBootstrapMean(w, x, null, { level: 1 }))).toBe('ERANGE');
    expect(codeOf(() => clusterBootstrapMean(w, x, null, { seed: 2 ** 32 }))).toBe('ERANGE');
    expect(codeOf(() => clusterBootstrapMean(w, [1, Infinity], null))).toBe('ENAN');
    expect(codeOf(() => clusterBootstrapMean(w, new Float64Array(C.EVIDENCE_MAX_N + 1), null))).toBe('ELIMIT');
    expect(codeOf(() => pairedDiff(w, x, [1, 2], null))).toBe('EINVAL');
    expect(codeOf(() => pairedDiff(w, x, y, null, { nPerm: -1 }))).toBe('ERANGE');
    expect(codeOf(() => pairedDiff(w, x, [0, -Infinity, 1], null))).toBe('ENAN');
    expect(codeOf(() => pairedDiff(w, [1.7e308, 0], [-1.7e308, 0], null))).toBe('ENAN');
    expect(codeOf(() => holm(w, [0.5, 1.5]))).toBe('ERANGE');
    expect(codeOf(() => holm(w, [-0.1]))).toBe('ERANGE');
    expect(codeOf(() => holm(w, [Infinity]))).toBe('ENAN');
    expect(codeOf(() => partialSpearman(w, x, y, [1, 2]))).toBe('EINVAL');
    expect(codeOf(() => partialSpearman(w, x, y, [1, NaN, 2]))).toBe('ENAN');
    expect(codeOf(() => quantiles(w, x, [0.5, 2]))).toBe('ERANGE');
    expect(codeOf(() => quantiles(w, x, [null]))).toBe('ERANGE');
    expect(codeOf(() => quantiles(w, [1, -Infinity], [0.5]))).toBe('ENAN');
    // nothing leaks on the error paths
    const before = w.heapInUse();
    for (let k = 0; k < 50; k++) codeOf(() => pairedDiff(w, x, [0, Infinity, 1], [1, 1, 2]));
    expect(w.heapInUse()).toBe(before);
  });
});
