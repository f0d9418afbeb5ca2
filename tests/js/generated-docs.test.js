// generated-docs.test.js — the pages of docs/generated/ that take too long to recompute in a test
// (evidence-sets.*: tens of minutes; circuits.*: minutes) are checked for staleness by spot: the first inputs
// of each table are recomputed here and must equal the per-input numbers the generator stored. A change in the
// code or the model that moves a number fails this test until `make docs-numbers` is run again.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (p) => JSON.parse(readFileSync(`${ROOT}docs/generated/${p}`, 'utf8'));
const K = 3; // inputs recomputed per table
const stale = 'is stale: run make docs-numbers (scripts/evidence-sets-numbers.mjs, scripts/circuits-numbers.mjs)';

describe('docs/generated/evidence-sets.json and circuits.json match what the code computes now', () => {
  let m, L;
  beforeAll(async () => { m = await loadModel(); L = m.config.nLayer; }, 60_000);
  afterAll(() => m.dispose());

  it('edge knockout: the first held-out sentences\' per-input rho, layers L−1 and 0', () => {
    const j = read('evidence-sets.json');
    expect(j.n, `evidence-sets.json ${stale}`).toBe(125);
    for (const layer of [L - 1, 0]) {
      const want = j.edges[layer].trained.perInput.slice(0, K);
      const got = m.edgeKnockoutSet('heldout', { limit: K, layer, nBoot: 0, nPerm: 0 }).perInput;
      got.forEach((p, k) => {
        expect(Math.abs(p.spearman - want[k].spearman), `edge layer ${layer} input ${k}: evidence-sets.json ${stale}`).toBeLessThan(1e-9);
        expect(Math.abs(p.spearmanLast - want[k].spearmanLast)).toBeLessThan(1e-9);
      });
    }
  }, 300_000);

  it('token knockout: the first held-out sentences\' per-input rho of each reading', () => {
    const j = read('evidence-sets.json');
    const want = j.tokens.trained.perInput.slice(0, K);
    const got = m.tokenKnockoutSet('heldout', { limit: K, nBoot: 0, nPerm: 0 }).perInput;
    got.forEach((p, k) => {
      for (const r of ['lastLayer', 'rollout', 'flow', 'valueWeighted'])
        expect(Math.abs(p[r] - want[k][r]), `tokens ${r} input ${k}: evidence-sets.json ${stale}`).toBeLessThan(1e-9);
    });
  }, 300_000);

  it('composition: every layer pair\'s scores', () => {
    const j = read('circuits.json').composition;
    expect(j.pairs, `circuits.json ${stale}`).toBeDefined();
    const r = m.compositionScores({ nNull: 0 });
    expect(r.pairs).toEqual(j.pairs);
    for (const k of ['q', 'k', 'v']) {
      expect(j[k]).toHaveLength(r[k].length);
      let d = 0;
      for (let i = 0; i < j[k].length; i++) d = Math.max(d, Math.abs(j[k][i] - r[k][i]));
      expect(d, `composition ${k}: circuits.json ${stale}`).toBeLessThan(1e-6);
    }
  });
});
