// checks.js — input checks shared by the figures: matrices, sizes, indices, language.

import { AttnlabError } from '../core/errors.js';

// ── input checks ────────────────────────────────────────────────────────────

/** A T×T matrix as a Float64Array (row-major), from a flat array-like or an array of rows. */
export function asMatrix(A, T, name = 'A') {
  if (!Number.isInteger(T) || T < 1) throw new AttnlabError('EINVAL', `${name}: T must be a positive integer, got ${T}`);
  if (A == null || typeof A !== 'object') throw new AttnlabError('ETYPE', `${name} must be a T×T matrix`);
  const out = new Float64Array(T * T);
  if (ArrayBuffer.isView(A) && A.length === T * T) {
    out.set(A);   // typed arrays (the usual case): one copy, no per-element access of a polymorphic array
  } else if (A.length === T && T > 1 && A[0] != null && typeof A[0] === 'object') {
    for (let i = 0; i < T; i++) {
      if (!A[i] || A[i].length !== T) throw new AttnlabError('ESHAPE', `${name}: row ${i} must have ${T} values`);
      for (let j = 0; j < T; j++) out[i * T + j] = A[i][j];
    }
  } else {
    if (A.length !== T * T) throw new AttnlabError('ESHAPE', `${name}: expected ${T * T} values (T = ${T}), got ${A.length}`);
    for (let k = 0; k < T * T; k++) out[k] = A[k];
  }
  for (let k = 0; k < out.length; k++) {
    if (!Number.isFinite(out[k])) throw new AttnlabError('ENAN', `${name}: value ${k} is not finite`);
  }
  return out;
}

/** T from the tokens, or from a square matrix's length when tokens are absent. */
export function sizeOf(tokens, A) {
  if (Array.isArray(tokens)) return tokens.length;
  if (A && A.length && typeof A[0] === 'object') return A.length;
  const T = Math.round(Math.sqrt(A ? A.length : 0));
  if (!A || T * T !== A.length || T < 1) throw new AttnlabError('ESHAPE', 'cannot infer T: pass tokens or a square matrix');
  return T;
}

export function checkLang(lang) {
  if (lang !== 'en' && lang !== 'zh') throw new AttnlabError('EINVAL', `lang must be 'en' or 'zh', got ${JSON.stringify(lang)}`);
  return lang;
}
