// findings.js — what an evidence card found, in one line, made from its own numbers (issue 38 item 3). A
// correlation is named by its sign and size, and a negative one is said as what it means (the heavier weights
// go with the smaller effects); a set's verdict compares the interval over inputs with the permutation null's
// band, and says so when one sentence cannot give one. Pure functions: the card passes its numbers and a
// translator, the strings are in the page's table (strings/evidence.js, ev*).

/** 'none' | 'weak' | 'moderate' | 'strong' for |ρ| (< 0.1, < 0.3, < 0.6, else), or 'undefined'. */
export function strength(rho) {
  if (rho === null || rho === undefined || !Number.isFinite(rho)) return 'undefined';
  const a = Math.abs(rho);
  return a < 0.1 ? 'none' : a < 0.3 ? 'weak' : a < 0.6 ? 'moderate' : 'strong';
}

/** The finding of one input: {size, sign, rho}; sign +1 / −1 / 0 (0 when there is no relation to speak of). */
export function oneInputFinding(rho) {
  const size = strength(rho);
  return { size, sign: size === 'none' || size === 'undefined' ? 0 : Math.sign(rho), rho };
}

/**
 * The verdict of a set: the mean's interval against the null's band (both from the same summary object:
 * {mean, lo, hi, nullLo, nullHi}). 'above' (lo > nullHi), 'below' (hi < nullLo), 'inside' (the intervals meet),
 * 'one' (a single input: no interval), 'undefined'.
 */
export function setFinding(s) {
  if (!s || s.mean === null || s.mean === undefined || !Number.isFinite(s.mean)) return { verdict: 'undefined', ...oneInputFinding(null) };
  const base = oneInputFinding(s.mean);
  const hasInterval = s.lo !== null && s.lo !== undefined && s.hi !== null && s.hi !== undefined && s.hi > s.lo;
  const hasNull = s.nullLo !== null && s.nullLo !== undefined && s.nullHi !== null && s.nullHi !== undefined;
  if (!hasInterval) return { verdict: 'one', ...base };
  if (!hasNull) return { verdict: 'nonull', ...base };
  const verdict = s.lo > s.nullHi ? 'above' : s.hi < s.nullLo ? 'below' : 'inside';
  return { verdict, ...base, lo: s.lo, hi: s.hi, nullLo: s.nullLo, nullHi: s.nullHi };
}

/**
 * The largest of `values` (a flat layer × head grid of H columns, numbers or {mean, lo, hi}), as {l, h, v, lo,
 * hi}; null when none is finite.
 */
export function topCell(values, H) {
  let best = null;
  for (let k = 0; k < values.length; k++) {
    const x = values[k];
    const v = typeof x === 'number' ? x : x && x.mean;
    if (v === null || v === undefined || !Number.isFinite(v)) continue;
    if (!best || v > best.v) best = { l: Math.floor(k / H), h: k % H, v, lo: x && x.lo, hi: x && x.hi };
  }
  return best;
}

/** The weakest agreement of the removals (the smallest ρ among {pair: ρ or {mean}}): {pair, rho}, or null. */
export function weakestAgreement(agreement) {
  let out = null;
  for (const [pair, x] of Object.entries(agreement || {})) {
    const rho = typeof x === 'number' ? x : x && (x.mean ?? x.spearman);
    if (rho === null || rho === undefined || !Number.isFinite(rho)) continue;
    if (!out || rho < out.rho) out = { pair, rho };
  }
  return out;
}
