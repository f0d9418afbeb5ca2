// findings.test.js — the one-line findings of the evidence cards (web/src/page/findings.js): a correlation's size
// and sign in words, a negative one said as what it means, and a set's verdict from its interval and the null's band.
import { describe, it, expect } from 'vitest';
import { strength, oneInputFinding, setFinding } from '../../web/src/page/findings.js';
import { STRINGS } from '../../web/src/page/i18n.js';

describe('findings', () => {
  it('names the size of |ρ| and keeps its sign', () => {
    expect([0.05, -0.2, 0.45, -0.9, null, NaN].map(strength)).toEqual(['none', 'weak', 'moderate', 'strong', 'undefined', 'undefined']);
    expect(oneInputFinding(-0.345)).toEqual({ size: 'moderate', sign: -1, rho: -0.345 });
    expect(oneInputFinding(0.05).sign).toBe(0);
  });

  it('a set: above, below or inside the null band; one input; no interval', () => {
    const s = (mean, lo, hi, nullLo = -0.1, nullHi = 0.1) => ({ mean, lo, hi, nullLo, nullHi });
    expect(setFinding(s(0.4, 0.3, 0.5)).verdict).toBe('above');
    expect(setFinding(s(-0.4, -0.5, -0.3)).verdict).toBe('below');
    expect(setFinding(s(0.08, -0.02, 0.2)).verdict).toBe('inside');
    expect(setFinding({ mean: 0.3, lo: null, hi: null, nullLo: -0.1, nullHi: 0.1 }).verdict).toBe('one');
    expect(setFinding({ mean: null }).verdict).toBe('undefined');
  });

  it('says what a negative ρ means, in both languages', () => {
    const en = STRINGS.en.evFindEdgeOne(oneInputFinding(-0.345));
    expect(en).toMatch(/^Found in this sentence: a moderate negative relation \(ρ = -0\.345\): heavier edges go with smaller local effects/);
    expect(en).toMatch(/One sentence gives no interval/);
    expect(STRINGS.zh.evFindEdgeOne(oneInputFinding(-0.345))).toMatch(/负相关.*排反/);
    expect(STRINGS.en.evFindEdgeSet(setFinding({ mean: 0.41, lo: 0.33, hi: 0.49, nullLo: -0.05, nullHi: 0.06 })))
      .toBe("Found on this set: the weights rank the local effects better than shuffled attention does (mean ρ = 0.410 [0.330, 0.490], above the null's band, which ends at 0.060).");
    expect(STRINGS.en.evFindTokSet(setFinding({ mean: 0.02, lo: -0.1, hi: 0.14, nullLo: -0.12, nullHi: 0.12 }), 'last layer'))
      .toMatch(/no evidence that the last layer reading ranks/);
  });
});

describe('topCell and weakestAgreement (the ablation and patching cards\' findings)', async () => {
  const { topCell, weakestAgreement } = await import('../../web/src/page/findings.js');
  it('finds the largest cell of a grid of numbers or intervals, skipping what is not finite', () => {
    expect(topCell([0.1, NaN, 0.5, 0.2, -1, 0.4], 3)).toEqual({ l: 0, h: 2, v: 0.5, lo: undefined, hi: undefined });
    expect(topCell([{ mean: 0.1, lo: 0, hi: 0.2 }, { mean: null }, { mean: 0.3, lo: 0.1, hi: 0.5 }, { mean: 0.2 }], 2))
      .toEqual({ l: 1, h: 0, v: 0.3, lo: 0.1, hi: 0.5 });
    expect(topCell([NaN, { mean: null }], 1)).toBe(null);
  });
  it('names the pair of removals that agree least', () => {
    expect(weakestAgreement({ 'zero-mean': { spearman: 0.9 }, 'zero-resample': { spearman: 0.2 }, 'mean-resample': { spearman: 0.5 } }))
      .toEqual({ pair: 'zero-resample', rho: 0.2 });
    expect(weakestAgreement({ 'zero-mean': { mean: 0.7, lo: 0.6, hi: 0.8 }, 'zero-resample': { mean: null } })).toEqual({ pair: 'zero-mean', rho: 0.7 });
    expect(weakestAgreement({})).toBe(null);
  });
});
