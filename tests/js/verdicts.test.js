// verdicts.test.js — the controlled evidence table (web/src/verdicts.js): its verdict sentences change when a
// control comes out the same as the trained model (fed made-up comparisons, both ways), and on a real model its
// paired differences are the differences of the per-input numbers the two runs give, on the same inputs, with
// Holm's adjustment over the table and the documents of the held-out set as clusters.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { controlledEvidence, verdictSentences, clustersOf, perInputRows } from '../../web/src/verdicts.js';
import { EVIDENCE_SETS } from '../../web/src/evidence-sets.js';
import { codeOfAsync } from './helpers/errors.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TEXTS = ['the storm grew and the ship sank in the night', 'a small dog ran to the old man by the door',
  'she said that the rain would stop before noon today', 'the ship left the port when the wind fell'];
const iv = (mean, lo, hi) => ({ mean, lo, hi });

describe('the verdict sentences follow the controls', () => {
  const trained = iv(0.9, 0.88, 0.92);
  it('a trained model that does not beat its entropy-matched twin is told so', () => {
    const s = verdictSentences({ label: 'local ρ', trained,
      twins: { matched: { value: iv(0.95, 0.93, 0.97), diff: { ...iv(-0.05, -0.07, -0.03), p: 0.001, pHolm: 0.004 } } } });
    expect(s[0]).toMatch(/control comes out the same/);
    expect(s[0]).toMatch(/the twin is ahead, by 0\.050 \[0\.030, 0\.070\]/);
    expect(s[0]).not.toMatch(/trained model is ahead/);
  });
  it('one whose interval includes 0 is not called ahead either', () => {
    const s = verdictSentences({ label: 'local ρ', trained,
      twins: { matched: { value: iv(0.89, 0.86, 0.92), diff: { ...iv(0.01, -0.01, 0.03), p: 0.3, pHolm: 0.6 } } } });
    expect(s[0]).toMatch(/the difference 0\.010 \[-0\.010, 0\.030\] does not exclude 0, so the control comes out the same/);
  });
  it('one that beats it is, with the paired difference and the adjusted p', () => {
    const s = verdictSentences({ label: 'local ρ', trained,
      twins: { matched: { value: iv(0.5, 0.45, 0.55), diff: { ...iv(0.4, 0.35, 0.45), p: 0.001, pHolm: 0.004 } } } });
    expect(s[0]).toMatch(/ahead by 0\.400 \[0\.350, 0\.450\]/);
    expect(s[0]).toMatch(/p = 0\.004 after Holm/);
  });
  it('position: the best position reading is named, and "does as well" when the weights are not ahead of it', () => {
    const positions = [{ label: 'recency', value: iv(0.91, 0.9, 0.92), diff: iv(-0.01, -0.02, 0) },
      { label: 'the first token', value: iv(0.1, 0, 0.2), diff: iv(0.8, 0.7, 0.9) }];
    expect(verdictSentences({ label: 'x', trained, positions })[0]).toMatch(/^Position alone does as well: recency/);
    const ahead = [{ label: 'recency', value: iv(0.5, 0.4, 0.6), diff: iv(0.4, 0.3, 0.5) }];
    expect(verdictSentences({ label: 'x', trained, positions: ahead })[0]).toMatch(/^Position alone does less/);
  });
});

describe('clusters', () => {
  it('the held-out set is clustered by the document each sentence comes from', () => {
    const c = clustersOf('heldout', 12);
    expect(c).toEqual(EVIDENCE_SETS.heldout.sentences.slice(0, 12).map((s) => s.doc));
    expect(new Set(clustersOf('heldout', 125)).size).toBe(25);
    expect(clustersOf(['a b c', 'd e f'], 2)).toBeNull();
    expect(clustersOf('heldout', 2, ['x', 'x'])).toEqual(['x', 'x']);
  });
});

describe('controlledEvidence on a model and its random-weight twins', () => {
  let m, r;
  beforeAll(async () => {
    m = await loadModel(join(ROOT, 'tests/fixtures/tiny'));
    r = await controlledEvidence(m, 'edgeKnockoutSet', TEXTS, { layer: 1, nBoot: 100, nPerm: 100, twins: ['matched', 'gpt2-init'],
      clusters: ['a', 'a', 'b', 'b'] });
  }, 300_000);
  afterAll(() => m.dispose());

  it('runs the trained model and both twins on the same inputs', () => {
    expect(r.n).toBe(TEXTS.length);
    expect(r.clusters).toBe(2);
    expect(r.clusteredBy).toBe('document');
    for (const tk of ['matched', 'gpt2-init']) {
      expect(r.twins[tk].result.n).toBe(TEXTS.length);
      expect(r.twins[tk].result.perInput.map((p) => p.T)).toEqual(r.trained.perInput.map((p) => p.T));
      expect(r.twins[tk].twin.kind).toBe(tk);
    }
  });

  it('each paired difference is the mean of the per-input differences; Holm never lowers a p', () => {
    const rows = perInputRows('edgeKnockoutSet', r.trained);
    for (const f of r.focus) {
      for (const [tk, t] of Object.entries(f.twins)) {
        const tr = perInputRows('edgeKnockoutSet', r.twins[tk].result)[f.name];
        const d = rows[f.name].map((x, k) => (x === null || tr[k] === null ? null : x - tr[k])).filter((x) => x !== null);
        if (!d.length) { expect(t.diff.mean).toBeNull(); continue; }
        expect(Math.abs(t.diff.mean - d.reduce((a, b) => a + b, 0) / d.length)).toBeLessThan(1e-12);
        expect(t.diff.nPairs).toBe(d.length);
        if (t.diff.p !== null) expect(t.diff.pHolm).toBeGreaterThanOrEqual(t.diff.p - 1e-15);
      }
      expect(f.verdict.length).toBeGreaterThan(0);
    }
    expect(r.comparisons).toBeGreaterThan(4);
  });

  it('refuses an unknown kind, twin or option', async () => {
    expect(await codeOfAsync(controlledEvidence(m, 'patchingSet', TEXTS))).toBe('EINVAL');
    expect(await codeOfAsync(controlledEvidence(m, 'edgeKnockoutSet', TEXTS, { twins: ['flat'] }))).toBe('EINVAL');
  });
});
