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

const M64 = (x) => BigInt.asUintN(64, x);

/**
 * The C side's generator (c/include/attnlab.h, alab_rng_*): splitmix64 seeded with state = seed (a uint32), and
 * below(n), uniform on [0, n) by rejection of r = next() >> 32 at or above 2^32 − (2^32 mod n). The same seed draws
 * the same indices as every resample of the C statistics, so a statistic computed in JS (a ratio of means, say)
 * resamples exactly the pairs the C bootstrap of a mean would.
 */
export function splitmix64(seed) {
  let state = BigInt(seed >>> 0);
  const next = () => {
    state = M64(state + 0x9E3779B97F4A7C15n);
    let z = state;
    z = M64((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n);
    z = M64((z ^ (z >> 27n)) * 0x94D049BB133111EBn);
    return z ^ (z >> 31n);
  };
  const below = (n) => {
    if (n === 0) return 0;
    const lim = 4294967296 - (4294967296 % n);
    let x;
    do x = Number(next() >> 32n);
    while (x >= lim);
    return x % n;
  };
  return { next, below };
}

/** The q-quantile of sorted values by linear interpolation between order statistics (numpy's default, type 7). */
export function quantile7(sorted, q) {
  const h = (sorted.length - 1) * q, f = Math.floor(h);
  return f + 1 < sorted.length ? sorted[f] + (h - f) * (sorted[f + 1] - sorted[f]) : sorted[f];
}
