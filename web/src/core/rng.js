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

/**
 * The C side's generator (c/include/attnlab.h, alab_rng_*): splitmix64 seeded with state = seed (a uint32), kept
 * as two uint32 halves (no BigInt, no heap numbers in the hot loop: the twins draw millions). Methods:
 *   next()     one draw as [hi, lo] (two uint32)
 *   below(n)   uniform on [0, n) by rejection of r = next() >> 32 (the high word) at or above 2^32 − (2^32 mod n),
 *              as alab_rng_below: the same seed draws the same indices as every resample of the C statistics
 *   uniform()  (draw >> 11) · 2^-53, in [0, 1)
 *   normal()   sqrt(−2 ln(1 − u1)) · cos(2π u2) from two uniforms (Box–Muller, cosine branch; twins.js)
 */
export function splitmix64(seed) {
  // state and last draw in typed arrays: st = [hi, lo] of the state, r = [hi, lo] of the draw
  const st = new Uint32Array([0, seed >>> 0]), r = new Uint32Array(2);
  // z · (bh·2^32 + bl) mod 2^64, z = (h, l): the 64-bit product of the low words from 16-bit pieces (each
  // partial product < 2^32, exact in a double), the cross terms mod 2^32 with Math.imul; into r
  const mul64 = (h, l, bh, bl) => {
    const a0 = l & 0xffff, a1 = l >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
    const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
    r[1] = ((mid & 0xffff) << 16) | (p00 & 0xffff);
    r[0] = p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(h, bl) + Math.imul(l, bh);
  };
  const draw = () => {
    const lo0 = st[1] + 0x7f4a7c15;                               // state += 0x9E3779B97F4A7C15
    st[1] = lo0;
    st[0] = st[0] + 0x9e3779b9 + (lo0 > 0xffffffff ? 1 : 0);
    let h = st[0], l = st[1];
    l = (l ^ ((l >>> 30) | (h << 2))) >>> 0; h = h >>> 30 ^ h;    // z ^= z >> 30
    mul64(h >>> 0, l, 0xbf58476d, 0x1ce4e5b9);
    h = r[0]; l = r[1];
    l = (l ^ ((l >>> 27) | (h << 5))) >>> 0; h = h >>> 27 ^ h;    // z ^= z >> 27
    mul64(h >>> 0, l, 0x94d049bb, 0x133111eb);
    h = r[0]; l = r[1];
    r[1] = l ^ ((l >>> 31) | (h << 1)); r[0] = h ^ (h >>> 31);    // z ^= z >> 31
  };
  const uniform = () => {
    draw();
    return (r[0] * 2097152 + (r[1] >>> 11)) * 1.1102230246251565e-16; // (z >> 11) · 2^-53
  };
  return {
    next() { draw(); return [r[0], r[1]]; },
    below(n) {
      if (n === 0) return 0;
      const lim = 4294967296 - (4294967296 % n);
      do draw();
      while (r[0] >= lim);
      return r[0] % n;
    },
    uniform,
    normal() {
      const u1 = uniform(), u2 = uniform();
      return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(6.283185307179586 * u2);
    },
  };
}

/** The q-quantile of sorted values by linear interpolation between order statistics (numpy's default, type 7). */
export function quantile7(sorted, q) {
  const h = (sorted.length - 1) * q, f = Math.floor(h);
  return f + 1 < sorted.length ? sorted[f] + (h - f) * (sorted[f + 1] - sorted[f]) : sorted[f];
}
