// compare.js (test helper) — how the JS tests compare two arrays of numbers.

/** Max |a - b| over equal-length arrays; Infinity on a length mismatch or a NaN. */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}
