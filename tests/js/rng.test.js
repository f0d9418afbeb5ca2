// rng.test.js — the one seeded generator (web/src/core/rng.js) draws what models/train/rng.py draws:
// the ids below were printed by `python3 -c "from rng import repeated_tokens; print(repeated_tokens(5, 1))"`
// in models/train, so the training probe, the model card and the page name the same sequence by a seed.
import { describe, it, expect } from 'vitest';
import { mulberry32 } from '../../web/src/core/rng.js';
import { outerProductDemo } from '../../web/src/figures/fig2.js';

describe('mulberry32', () => {
  it('gives the ids models/train/rng.py gives for seed 1', () => {
    const next = mulberry32(1);
    expect(Array.from({ length: 5 }, () => Math.floor(next() * 50256))).toEqual([31514, 137, 26507, 49303, 48666]);
  });

  it('is uniform in [0, 1) and a function of the seed only', () => {
    const a = mulberry32(7), b = mulberry32(7), c = mulberry32(8);
    const xs = Array.from({ length: 20000 }, () => a());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(Math.abs(xs.reduce((s, x) => s + x, 0) / xs.length - 0.5)).toBeLessThan(0.01);
    expect(Array.from({ length: 20000 }, () => b())).toEqual(xs);
    expect(c()).not.toBe(mulberry32(7)());
    expect(mulberry32(2 ** 32 + 3)()).toBe(mulberry32(3)());
  });

  it("is what Fig. 2's random demo draws from (seeded, so two calls agree)", () => {
    const d1 = outerProductDemo({ dK: 4, T: 3, seed: 5 }), d2 = outerProductDemo({ dK: 4, T: 3, seed: 5 });
    expect(Array.from(d1.q)).toEqual(Array.from(d2.q));
    expect(Array.from(d1.q)).not.toEqual(Array.from(outerProductDemo({ dK: 4, T: 3, seed: 6 }).q));
  });
});
