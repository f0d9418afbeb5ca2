// stats.js — the statistics a reviewer asks for, over plain arrays (docs/evidence.md § 5, "Clustered
// intervals, paired differences, corrections"): the mean with a cluster bootstrap interval (whole documents
// resampled, not sentences), paired differences with that interval and a cluster sign-flip test, Holm's
// adjustment of a table's p-values, Spearman's correlation with a third variable held fixed, and type-7
// quantiles. Each is one call of its C function (c/src/stats.c, declared in c/include/attnlab.h) through the
// generated method of an AttnlabWasm instance `w` (core/measure-exports.js); the arguments are checked here
// first (AttnlabError with a stable .code) and the numbers come back as plain JS values, NaN as null.
//
// Values: an array or a typed array of numbers; null, undefined and NaN stand for a missing value (skipped
// where the C skips NaN, ENAN where it does not). Clusters: one id per value (numbers or strings: two values
// share a cluster when their ids are equal), or null for "every value its own cluster".

import { AttnlabError } from './core/errors.js';
import { C } from './core/abi.js';
import { SET_DEFAULTS, checkOptions, setStats } from './options.js';

const nanToNull = (x) => (Number.isNaN(x) ? null : x);

/** The values of xs as a Float64Array (null / undefined → NaN); ETYPE for anything else that is not a number. */
function values(name, xs) {
  if (!(Array.isArray(xs) || (ArrayBuffer.isView(xs) && !(xs instanceof DataView))))
    throw new AttnlabError('ETYPE', `${name} must be an array or a typed array of numbers`);
  if (xs.length > C.EVIDENCE_MAX_N)
    throw new AttnlabError('ELIMIT', `${name} has ${xs.length} values, more than ${C.EVIDENCE_MAX_N}`);
  const out = new Float64Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (x === null || x === undefined) out[i] = NaN;
    else if (typeof x === 'number') out[i] = x;
    else throw new AttnlabError('ETYPE', `${name}[${i}] must be a number, got ${typeof x}`);
  }
  return out;
}

/** Cluster ids as an Int32Array (each distinct id → 0, 1, … in order of first appearance), or null. */
function clusterIds(clusters, n) {
  if (clusters === null || clusters === undefined) return null;
  if (!(Array.isArray(clusters) || ArrayBuffer.isView(clusters)))
    throw new AttnlabError('ETYPE', 'clusters must be an array of ids (numbers or strings) or null');
  if (clusters.length !== n)
    throw new AttnlabError('EINVAL', `clusters has ${clusters.length} ids for ${n} values: one id per value`);
  const index = new Map();
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = clusters[i];
    if (typeof c !== 'number' && typeof c !== 'string')
      throw new AttnlabError('ETYPE', `clusters[${i}] must be a number or a string, got ${c === null ? 'null' : typeof c}`);
    if (!index.has(c)) index.set(c, index.size);
    out[i] = index.get(c);
  }
  return out;
}

function sameLength(names, arrays) {
  for (let k = 1; k < arrays.length; k++)
    if (arrays[k].length !== arrays[0].length)
      throw new AttnlabError('EINVAL', `${names[0]} has ${arrays[0].length} values and ${names[k]} ${arrays[k].length}: they are paired`);
}

/** Copy a Float64Array (or Int32Array) into fresh wasm memory from alloc; 0 for null. */
function put(w, alloc, a) {
  if (a === null) return 0;
  const p = alloc(a.BYTES_PER_ELEMENT * Math.max(a.length, 1));
  if (a instanceof Float64Array) new Float64Array(w.memory.buffer, p, a.length).set(a);
  else new Int32Array(w.memory.buffer, p, a.length).set(a);
  return p;
}

const readF64 = (w, p, n) => Array.from(new Float64Array(w.memory.buffer, p, n));

function statsOptions(where, opts, keys) {
  const o = checkOptions(where, opts, keys);
  return { ...SET_DEFAULTS, ...setStats(where, o) };
}

/**
 * The mean of the finite values of x and its percentile interval when whole clusters are resampled
 * (alab_cluster_bootstrap_mean). clusters null: each value its own cluster (alab_bootstrap_mean's numbers).
 * Returns {mean, lo, hi, n (finite values), nClusters (clusters with a finite value)}; nBoot 0: lo = hi = null.
 */
export function clusterBootstrapMean(w, x, clusters = null, opts = {}) {
  const { nBoot, level, seed } = statsOptions('clusterBootstrapMean', opts, ['nBoot', 'level', 'seed']);
  const v = values('x', x);
  const ids = clusterIds(clusters, v.length);
  return w.scoped((alloc) => {
    const out = alloc(24);
    w.clusterBootstrapMean(out, out + 8, out + 16, put(w, alloc, v), put(w, alloc, ids), v.length, nBoot, level, seed);
    const [mean, lo, hi] = readF64(w, out, 3);
    const finite = [];
    for (let i = 0; i < v.length; i++) if (!Number.isNaN(v[i])) finite.push(ids ? ids[i] : i);
    return { mean: nanToNull(mean), lo: nanToNull(lo), hi: nanToNull(hi), n: finite.length,
             nClusters: new Set(finite).size };
  });
}

/**
 * Paired differences d = x − y over the pairs where neither is missing (alab_paired_diff): the mean d, its
 * cluster bootstrap interval, and the two-sided p of a cluster sign-flip permutation test.
 * Returns {mean, lo, hi, p, nPairs, nClusters}; nBoot 0: lo = hi = null; nPerm 0: p = null.
 */
export function pairedDiff(w, x, y, clusters = null, opts = {}) {
  const { nBoot, nPerm, level, seed } = statsOptions('pairedDiff', opts, ['nBoot', 'nPerm', 'level', 'seed']);
  const vx = values('x', x), vy = values('y', y);
  sameLength(['x', 'y'], [vx, vy]);
  const ids = clusterIds(clusters, vx.length);
  return w.scoped((alloc) => {
    const out = alloc(8 * C.PAIRED_OUT);
    w.pairedDiff(out, put(w, alloc, vx), put(w, alloc, vy), put(w, alloc, ids), vx.length, nBoot, nPerm, level, seed);
    const [mean, lo, hi, p, nPairs, nClusters] = readF64(w, out, C.PAIRED_OUT);
    return { mean: nanToNull(mean), lo: nanToNull(lo), hi: nanToNull(hi), p: nanToNull(p), nPairs, nClusters };
  });
}

/** Holm's step-down adjustment of p-values (alab_holm): one adjusted p per p, null where p is missing. */
export function holm(w, p) {
  const v = values('p', p);
  return w.scoped((alloc) => {
    const pp = put(w, alloc, v), out = alloc(8 * Math.max(v.length, 1));
    w.holm(out, pp, v.length);
    return readF64(w, out, v.length).map(nanToNull);
  });
}

/** Spearman's correlation of x and y with z held fixed (alab_partial_spearman); null where undefined. */
export function partialSpearman(w, x, y, z) {
  const vx = values('x', x), vy = values('y', y), vz = values('z', z);
  sameLength(['x', 'y', 'z'], [vx, vy, vz]);
  return w.scoped((alloc) => {
    const out = alloc(8);
    w.partialSpearman(out, put(w, alloc, vx), put(w, alloc, vy), put(w, alloc, vz), vx.length);
    return nanToNull(readF64(w, out, 1)[0]);
  });
}

/** Type-7 quantiles (numpy's default) of the finite values of x at each q in [0, 1] (alab_quantiles); null when x has none. */
export function quantiles(w, x, q) {
  const v = values('x', x), vq = values('q', q);
  return w.scoped((alloc) => {
    const out = alloc(8 * Math.max(vq.length, 1));
    w.quantiles(out, put(w, alloc, v), v.length, put(w, alloc, vq), vq.length);
    return readF64(w, out, vq.length).map(nanToNull);
  });
}
