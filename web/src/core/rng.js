// rng.js — the one seeded generator of the JS side: mulberry32 (32-bit state, period 2^32).
// model.repeatedTokens, Fig. 2's random demo and the tests draw from it, and
// models/train (train.py) reimplements it bit for bit, so a seed names the same ids everywhere.

/** A generator of uniform numbers in [0, 1) from `seed` (an integer, taken mod 2^32). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
