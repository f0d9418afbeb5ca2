// circuit.test.js — the numbers of the Heads panel's "Break the circuit" card
// (web/src/page/circuit.js): which heads each preset ablates, the loss on each
// copy of r ++ r, and the effect of the ablation; then once through the model on
// the tiny fixture, checked against tokenLosses and headRoles directly.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { BREAK_PRESETS, breakHeads, copyLosses, bestHead, bestOther, circuitEffect, copies, COPY_MARGIN } from '../../web/src/page/circuit.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const roles = { top: { prev: [{ layer: 0, head: 3, score: 0.9 }, { layer: 2, head: 1, score: 0.2 }] } };
const ind = { top: { induction: [{ layer: 1, head: 0, score: 0.7 }, { layer: 4, head: 2, score: 0.4 }, { layer: 3, head: 3, score: 0.1 }] } };

describe('circuit.js', () => {
  it('each preset names its heads, best first', () => {
    expect(BREAK_PRESETS).toEqual(['prev', 'induction', 'induction2']);
    expect(breakHeads('prev', roles, ind)).toEqual([{ layer: 0, head: 3, score: 0.9, role: 'prev' }]);
    expect(breakHeads('induction', roles, ind)).toEqual([{ layer: 1, head: 0, score: 0.7, role: 'induction' }]);
    expect(breakHeads('induction2', roles, ind).map((x) => [x.layer, x.head])).toEqual([[1, 0], [4, 2]]);
  });

  it('an unknown preset, or roles that name too few heads, throw RangeError', () => {
    expect(() => breakHeads('all', roles, ind)).toThrow(RangeError);
    expect(() => breakHeads('induction', roles, { top: { induction: [] } })).toThrow(/1 induction head/);
    expect(() => breakHeads('induction2', roles, { top: { induction: [ind.top.induction[0]] } })).toThrow(RangeError);
  });

  it('copyLosses averages positions 0 … n−2 and n … 2n−2, and leaves out n − 1', () => {
    const n = 4;
    const losses = [1, 2, 3, 100, 5, 6, 7];   // 2n − 1 = 7; position 3 predicts r[0] again: in neither
    expect(copyLosses(losses, n)).toEqual({ first: 2, second: 6 });
    expect(() => copyLosses(losses, 3)).toThrow(RangeError);
    expect(() => copyLosses([1], 1)).toThrow(RangeError);
  });

  it('bestHead takes the first of equal maxima', () => {
    expect(bestHead(Float32Array.from([0.1, 0.5, 0.5, 0.2]), 2)).toEqual({ layer: 0, head: 1, score: 0.5 });
    expect(bestHead([0.3, 0.1, 0.2, 0.9, 0.0, 0.1], 3)).toEqual({ layer: 1, head: 0, score: 0.9 });
  });

  it('circuitEffect: the changes are broken − plain', () => {
    const n = 3;
    const fx = circuitEffect({
      n, nHead: 2,
      plain: { losses: [10, 10, 9, 2, 4] }, broken: { losses: [10, 12, 9, 9, 11] },
      ind: { induction: [0.0, 0.1, 0.8, 0.2] }, indBroken: { induction: [0.0, 0.1, 0.05, 0.3] },
    });
    expect(fx.plain).toEqual({ first: 10, second: 3, gain: 7, induction: { layer: 1, head: 0, score: 0.8 }, others: { layer: 1, head: 0, score: 0.8 } });
    expect(fx.broken.gain).toBe(1);      // first (10 + 12) / 2 = 11, second 10
    expect(fx.delta.gain).toBe(-6);
    expect(fx.broken.second).toBe(10);
    expect(fx.delta.second).toBe(7);
    expect(fx.delta.first).toBe(1);
    expect(fx.broken.induction).toEqual({ layer: 1, head: 1, score: 0.3 });
    expect(fx.delta.induction).toBeCloseTo(-0.5, 12);
    // the second copy is 7 nats easier than the first: this model copies
    expect(copies(fx)).toBe(true);
  });

  it('an ablated head keeps its own pattern: others and gain measure the break, the all-heads best does not', () => {
    // the case: ablating the induction head L1H0 leaves its attention (and score) as it was,
    // while the copying (first − second) collapses and the heads left working have no induction pattern
    const n = 3;
    const fx = circuitEffect({
      n, nHead: 2, ablated: [{ layer: 1, head: 0 }],
      plain: { losses: [11, 11, 9, 9, 9] }, broken: { losses: [11, 11, 9, 11, 11] },
      ind: { induction: [0.0, 0.1, 0.72, 0.02] }, indBroken: { induction: [0.0, 0.1, 0.72, 0.03] },
    });
    expect(fx.delta.induction).toBe(0);                          // the old headline: "0.718 → 0.718"
    expect(fx.plain.gain).toBe(2);
    expect(fx.broken.gain).toBe(0);                              // what the ablated model does
    expect(fx.plain.others).toEqual({ layer: 0, head: 1, score: 0.1 });
    expect(fx.broken.others).toEqual({ layer: 0, head: 1, score: 0.1 });
    expect(fx.delta.others).toBe(0);
    // every head ablated: no head is left to score
    expect(bestOther([0.5, 0.2], 2, new Set([0, 1]))).toBeNull();
    expect(bestOther([0.5, 0.2, 0.7], 3, new Set([2]))).toEqual({ layer: 0, head: 0, score: 0.5 });
  });

  it('copies: only when the second copy is at least COPY_MARGIN easier than the first', () => {
    const at = (first, second) => copies({ plain: { first, second } });
    expect(COPY_MARGIN).toBe(0.5);
    expect(at(11, 10.5)).toBe(true);
    expect(at(11, 10.51)).toBe(false);
    expect(at(13.87, 13.84)).toBe(false);   // the shipped model on repeatedTokens(50, {seed: 1})
    expect(at(10, 12)).toBe(false);
  });
});

describe('the card\'s computation on the tiny fixture', () => {
  let m;
  beforeAll(async () => { m = await loadModel(join(ROOT, 'tests/fixtures/tiny')); });
  afterAll(() => m.dispose());

  it('breaking the best induction head: the numbers are those of tokenLosses and headRoles under that ablation', () => {
    const n = 8;
    const rep = m.repeatedTokens(n, { seed: 2 });
    const text = m.headRoles('the cat sat on the mat and the cat sat', { top: 3 });
    const plainRoles = m.headRoles(rep, { top: 3 });
    const heads = breakHeads('induction', text, plainRoles);
    const ablate = heads.map((x) => [x.layer, x.head]);
    const plain = m.tokenLosses(rep), broken = m.tokenLosses(rep, { ablate });
    const indBroken = m.headRoles(rep, { ablate });
    const fx = circuitEffect({ plain, broken, ind: plainRoles, indBroken, n, nHead: m.config.nHead });
    let s = 0;
    for (let k = n; k < 2 * n - 1; k++) s += broken.losses[k];
    expect(fx.broken.second).toBeCloseTo(s / (n - 1), 12);
    expect(fx.plain.induction.score).toBe(plainRoles.top.induction[0].score);
    // a random model: ablating a head moves the loss (the effect is real, not a copy of the plain run)
    expect(Math.abs(fx.delta.second) + Math.abs(fx.delta.first)).toBeGreaterThan(1e-6);
  });
});
