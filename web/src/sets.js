// sets.js — the evidence sets as a measure's inputs: a set's name as its list of inputs or of clean/corrupted
// pairs, the induction pair sets built from the repeated tokens, and a seeded repeated sequence (repeatedTokens). The sets themselves are evidence-sets.js
// (generated: scripts/make-evidence-sets.mjs).

import { AttnlabError } from './core/errors.js';
import { EVIDENCE_SETS } from './evidence-sets.js';
import { mulberry32 } from './core/rng.js';
import { checkIndex } from './analysis.js';
import { checkOptions, show } from './options.js';

/** The inputs of a set named 'heldout' (its sentences' texts) or 'repeated' (its id sequences); a list as it is. */
export function setInputs(set) {
  if (typeof set !== 'string') return set;
  // compared with the names, never looked up on EVIDENCE_SETS ('toString' and '__proto__' are found on any object)
  if (set !== 'heldout' && set !== 'repeated')
    throw new AttnlabError('EINVAL', `evidence set ${show(set)}: the sets are 'heldout' and 'repeated' (or a list of inputs)`);
  const s = EVIDENCE_SETS[set];
  return set === 'heldout' ? s.sentences.map((x) => x.text) : s.sequences;
}

/**
 * The [clean, corrupted, answers] of a pair set named 'pairs' (the minimal pairs), 'induction' or 'induction-prev'
 * (for a model of vocabSize ids); a list as it is.
 */
export function setPairs(where, pairs, vocabSize) {
  if (pairs === 'pairs') return EVIDENCE_SETS.pairs.pairs.map((p) => [p.clean, p.corrupt, p.answers]);
  if (pairs === 'induction') return inductionPairs(vocabSize);
  if (pairs === 'induction-prev') return inductionPrevPairs(vocabSize);
  if (typeof pairs === 'string')
    throw new AttnlabError('EINVAL', `${where}: the built-in sets are 'pairs', 'induction' and 'induction-prev', not ${show(pairs)}`);
  return pairs;
}

/**
 * Induction pairs for activation patching, derived from the repeated-token set (GPT-2 ids): sequence k's
 * block r (10 ids) is followed by its first 5 ids, so the next token is r[5] by copying (clean); the
 * corrupted input has r[5] in the first copy replaced by x = sequence k+1's r[5] (the last takes the
 * first's), so copying predicts x. Same length (15), one-token answers [r[5], x]. Only for a vocabulary
 * that holds every id of the set.
 */
export function inductionPairs(vocabSize) {
  const seqs = EVIDENCE_SETS.repeated.sequences, B = EVIDENCE_SETS.repeated.block, K = 5;
  if (seqs.some((q) => q.some((id) => id >= vocabSize)))
    throw new AttnlabError('ERANGE', `the induction pairs are GPT-2 ids; this model's vocabulary has ${vocabSize}`);
  return seqs.map((q, k) => {
    const r = q.slice(0, B), x = seqs[(k + 1) % seqs.length][K];
    const alt = r.slice();
    alt[K] = x === r[K] ? seqs[(k + 2) % seqs.length][K] : x;
    return [[...r, ...r.slice(0, K)], [...alt, ...r.slice(0, K)], [r[K], alt[K]]];
  });
}

/**
 * Induction pairs that move the previous token instead of the answer: clean = r ++ r[0..K) (the next token is
 * r[K] by copying); the corrupted input swaps r[K-1] and r[M-1] in the first copy (M = 8), so the token the
 * second copy ends on is followed by r[M] there and copying predicts r[M]. The tokens the copy reads (r[K] and
 * r[M]) stay where they were; only which token precedes them changes — what a previous-token head writes and an
 * induction head's keys read (K-composition). Answers [r[K], r[M]]; a sequence with r[K] = r[M] is left out.
 */
export function inductionPrevPairs(vocabSize) {
  const seqs = EVIDENCE_SETS.repeated.sequences, B = EVIDENCE_SETS.repeated.block, K = 5, M = 8;
  if (seqs.some((q) => q.some((id) => id >= vocabSize)))
    throw new AttnlabError('ERANGE', `the induction pairs are GPT-2 ids; this model's vocabulary has ${vocabSize}`);
  return seqs.filter((q) => q[K] !== q[M] && q[K - 1] !== q[M - 1]).map((q) => {
    const r = q.slice(0, B), alt = r.slice();
    alt[K - 1] = r[M - 1];
    alt[M - 1] = r[K - 1];
    return [[...r, ...r.slice(0, K)], [...alt, ...r.slice(0, K)], [r[K], r[M]]];
  });
}

/** Model#repeatedTokens for a model of this config (its doc there): r ++ r, r seeded uniform ids in [lo, hi). */
export function repeatedTokens(n, options, config) {
  const o = checkOptions('repeatedTokens', options, ['seed', 'lo', 'hi']);
  const V = config.vocabSize;
  checkIndex('n', n, 2, Math.floor(config.nPositions / 2));
  const seed = o.seed === undefined ? 0 : checkIndex('seed', o.seed, 0, 2 ** 32 - 1);
  const lo = o.lo === undefined ? 0 : checkIndex('lo', o.lo, 0, V - 1);
  const hi = o.hi === undefined ? V - 1 : checkIndex('hi', o.hi, lo + 1, V);
  const next = mulberry32(seed);
  const out = new Int32Array(2 * n);
  for (let i = 0; i < n; i++) out[i] = out[i + n] = lo + Math.floor(next() * (hi - lo));
  return out;
}
