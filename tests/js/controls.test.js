// controls.test.js — the controls of the set tables (web/src/controls.js, docs/evidence.md § 5 "Controls"):
// the position readings go through the same summary as the weights, and each per-input number equals a
// Spearman correlation computed here, independently, from the grids the measure returns for one input; the
// effect sizes are the quantiles of those grids; the restricted correlation keeps exactly the points at or
// above the threshold. On the tiny fixture (fast) and the built-in model (the planted circuit).

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { edgePositionGrids, tokenPositionReadings, effectSizes, EFFECT_THRESHOLD } from '../../web/src/controls.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TEXTS = ['the storm grew and the ship sank in the night', 'a small dog ran to the old man by the door',
  'she said that the rain would stop before noon today'];

/** Spearman's rho with average ranks for ties (the textbook definition), NaN when a side is constant. */
function spearman(a, b) {
  const rank = (v) => {
    const idx = v.map((x, i) => i).sort((i, j) => v[i] - v[j]), r = new Array(v.length);
    for (let s = 0; s < idx.length;) {
      let e = s;
      while (e + 1 < idx.length && v[idx[e + 1]] === v[idx[s]]) e++;
      for (let k = s; k <= e; k++) r[idx[k]] = (s + e) / 2;
      s = e + 1;
    }
    return r;
  };
  const ra = rank(a), rb = rank(b), n = a.length;
  const ma = ra.reduce((x, y) => x + y, 0) / n, mb = rb.reduce((x, y) => x + y, 0) / n;
  let sab = 0, saa = 0, sbb = 0;
  for (let i = 0; i < n; i++) { sab += (ra[i] - ma) * (rb[i] - mb); saa += (ra[i] - ma) ** 2; sbb += (rb[i] - mb) ** 2; }
  return saa && sbb ? sab / Math.sqrt(saa * sbb) : NaN;
}

describe('position readings, effect sizes and the restricted correlation of edgeKnockoutSet', () => {
  let m, set, ones;
  beforeAll(async () => {
    m = await loadModel(join(ROOT, 'tests/fixtures/tiny'));
    set = m.edgeKnockoutSet(TEXTS, { layer: 1, nBoot: 50, nPerm: 50 });
    ones = TEXTS.map((t) => m.edgeKnockout(t, { layer: 1 }));
  }, 120_000);
  afterAll(() => m.dispose());

  it('each position reading\'s per-input local rho is Spearman over the causal pairs of that input', () => {
    for (const name of ['recency', 'first', 'diagonal', 'early']) {
      const p = set.positions[name];
      expect(p.local.mean).not.toBeUndefined();
      ones.forEach((one, k) => {
        const T = one.ids.length, g = edgePositionGrids(T)[name], xs = [], es = [];
        for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) if (Number.isFinite(one.E[i * T + j])) { xs.push(g[i * T + j]); es.push(one.E[i * T + j]); }
        const want = spearman(xs, es), got = p.perInput[k].local;
        if (Number.isNaN(want)) expect(got).toBeNull();
        else expect(Math.abs(got - want)).toBeLessThan(1e-9);
      });
    }
    // the weights' own per-input rho is the same kind of number, from the same effects
    ones.forEach((one, k) => {
      const T = one.ids.length, xs = [], es = [];
      for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) if (Number.isFinite(one.E[i * T + j])) { xs.push(one.A[i * T + j]); es.push(one.E[i * T + j]); }
      expect(Math.abs(set.perInput[k].spearman - spearman(xs, es))).toBeLessThan(1e-6);
    });
  });

  it('the partial correlation of A and E with recency held fixed, per input, is the textbook formula on Spearman ρs', () => {
    expect(set.partial.given).toBe('recency');
    ones.forEach((one, k) => {
      const T = one.ids.length, g = edgePositionGrids(T).recency, a = [], e = [], z = [];
      for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) if (Number.isFinite(one.E[i * T + j])) { a.push(one.A[i * T + j]); e.push(one.E[i * T + j]); z.push(g[i * T + j]); }
      const rae = spearman(a, e), raz = spearman(a, z), rez = spearman(e, z);
      const want = (rae - raz * rez) / Math.sqrt((1 - raz * raz) * (1 - rez * rez));
      expect(Math.abs(set.partial.perInput[k] - want), `input ${k}`).toBeLessThan(1e-6);
    });
    const finite = set.partial.perInput.filter((x) => x !== null);
    expect(Math.abs(set.partial.mean - finite.reduce((x, y) => x + y, 0) / finite.length)).toBeLessThan(1e-12);
  });

  it('the effect sizes are the quantiles of |E| over every causal pair, in nats', () => {
    const all = ones.flatMap((o) => Array.from(o.E).filter(Number.isFinite).map(Math.abs)).sort((a, b) => a - b);
    const e = set.effects.local;
    expect(e.n).toBe(all.length);
    expect(e.max).toBeCloseTo(all.at(-1), 6);
    const h = (all.length - 1) * 0.5, f = Math.floor(h);
    expect(e.median).toBeCloseTo(all[f] + (h - f) * (all[f + 1] - all[f]), 6);
    expect(e.nAbove).toBe(all.filter((x) => x >= EFFECT_THRESHOLD).length);
    expect(e.threshold).toBe(EFFECT_THRESHOLD);
    expect(e.median).toBeLessThanOrEqual(e.p90);
    expect(e.p90).toBeLessThanOrEqual(e.p99);
  });

  it('the restricted correlation counts only the effects at or above the threshold', () => {
    const r = set.aboveThreshold.local;
    expect(set.aboveThreshold.threshold).toBe(EFFECT_THRESHOLD);
    expect(r.nPoints).toBe(set.effects.local.nAbove);
  });
});

describe('the controls as functions', () => {
  it('position grids: recency −(i−j), first [j = 0], diagonal [j = i], early −j', () => {
    const g = edgePositionGrids(4);
    expect(g.recency[3 * 4 + 1]).toBe(-2);
    expect(g.first[2 * 4 + 0]).toBe(1);
    expect(g.first[2 * 4 + 1]).toBe(0);
    expect(g.diagonal[2 * 4 + 2]).toBe(1);
    expect(g.early[3 * 4 + 2]).toBe(-2);
    const t = tokenPositionReadings(5);
    expect(Array.from(t.recency)).toEqual([-4, -3, -2, -1, 0]);
    expect(Array.from(t.early)).toEqual([-0, -1, -2, -3, -4]);
  });

  it('effect sizes leave out the missing pairs and count the threshold inclusively', () => {
    const e = effectSizes([[NaN, 0.002, -0.001], [0.0005, NaN]], 0.001);
    expect(e.n).toBe(3);
    expect(e.nAbove).toBe(2);
    expect(e.max).toBe(0.002);
    expect(effectSizes([[NaN]]).median).toBeNull();
  });
});

describe('tokenKnockoutSet carries the same controls', () => {
  it('position readings, effect sizes, restricted correlations', async () => {
    const m = await loadModel(join(ROOT, 'tests/fixtures/tiny'));
    try {
      const r = m.tokenKnockoutSet(TEXTS, { nBoot: 50, nPerm: 50 });
      const ones = TEXTS.map((t) => m.tokenKnockout(t));
      for (const name of ['recency', 'first', 'early'])
        ones.forEach((one, k) => {
          const want = spearman(Array.from(tokenPositionReadings(one.effect.length)[name]), Array.from(one.effect));
          const got = r.positions[name].perInput[k];
          if (Number.isNaN(want)) expect(got).toBeNull();
          else expect(Math.abs(got - want)).toBeLessThan(1e-9);
        });
      expect(r.effects.n).toBe(ones.reduce((s, o) => s + o.effect.length, 0));
      for (const name of ['lastLayer', 'rollout', 'flow', 'valueWeighted'])
        expect(r.aboveThreshold[name].nPoints).toBe(r.effects.nAbove);
    } finally {
      m.dispose();
    }
  });
});
