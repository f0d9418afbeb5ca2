// lineage.js — the chapter's lineage as an API: classical Hopfield (Hebbian,
// ±1 units) → modern Hopfield, whose update is one step of attention → linear
// attention, whose causal form is a prefix sum; plus the √d_k statistics.
// Every number is computed by the C core (c/src/hopfield.c, c/src/linattn.c)
// in its own WebAssembly instance; this layer checks arguments, names things
// with strings and hands out copies (Float32Array / Float64Array / numbers).
//
//   const lab = await loadLineage();                       // { wasm, wasmRelaxed, backend } optional
//   lab.backend                                            // 'relaxed-simd' | 'simd128', as loadModel chooses
//   const W = lab.hebbian([lab.glyph(0), lab.glyph(1)]);   // N×N
//   const noisy = lab.corrupt(lab.glyph(0), 0.2, { seed: 7 });
//   const r = lab.hopfieldRun(W, noisy, { mode: 'async' }); // {state, energies, steps, converged}
//   lab.modernStep(X, xi, { d, beta })                      // === attention(q = xi, K = V = X, 1/√d)
//   lab.linearAttention(Q, K, V, { d, featureMap: 'elu', form: 'prefix' })
//   lab.dispose();
//
// Layouts: a ±1 state or pattern is a flat array of N numbers; a list of
// patterns is an array of such arrays (or one flat array with { N }); the
// modern Hopfield memory X holds N patterns of size d as ROWS (N×d, the
// layout of attention's K and V); Q, K (T×d) and V (T×dv) are row-major.
// Random numbers come from the C core's xorshift64* seeded per call
// ({ seed }, default 1), so every result is reproducible.

import { instantiateAttnlab, HOPFIELD_MODES, FEATURE_MAPS, LINATTN_FORMS } from './core/wasm.js';
import { AttnlabError } from './core/errors.js';
import { checkNumbers, checkIndex, checkFinite } from './analysis.js';
import { defaultWasmURL, defaultWasmRelaxedURL, resolveURL } from './sources.js';
import { BACKENDS, relaxedSimdSupported } from './core/backend.js';

/** Glyphs of the C core: 10×10 digits 0–9, +1 ink, −1 paper. */
export const GLYPH_SIDE = 10;
const N_GLYPHS = 10;
/** The classical capacity of a Hebbian Hopfield network, patterns per neuron (Amit, Gutfreund & Sompolinsky 1985). */
export const HOPFIELD_CAPACITY = 0.138;

const INT_MAX = 2 ** 31 - 1;

function checkOpts(where, o, keys) {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object' || Array.isArray(o)) throw new AttnlabError('ETYPE', `${where}: options must be an object`);
  for (const k of Object.keys(o))
    if (!keys.includes(k)) throw new AttnlabError('EINVAL', `${where}: unknown option '${k}' (known: ${keys.join(', ')})`);
  return o;
}

function checkSeed(seed) {
  if (typeof seed === 'bigint') return seed;
  checkIndex('seed', seed, 0, Number.MAX_SAFE_INTEGER);
  return seed;
}

function pick(name, v, table) {
  if (!Object.hasOwn(table, v)) throw new AttnlabError('EINVAL', `${name} must be one of ${Object.keys(table).join(', ')}; got ${JSON.stringify(v)}`);
  return table[v];
}

// Rows (Array of arrays) or one flat array with N; returns {flat: Float32Array, P, N}.
function patternsOf(patterns, N) {
  if (Array.isArray(patterns) && patterns.length && typeof patterns[0] === 'object') {
    const n = patterns[0].length;
    const flat = new Float32Array(patterns.length * n);
    patterns.forEach((p, k) => {
      checkNumbers(`patterns[${k}]`, p);
      if (p.length !== n) throw new AttnlabError('ESHAPE', `patterns[${k}] has ${p.length} units, patterns[0] has ${n}`);
      flat.set(p, k * n);
    });
    return { flat, P: patterns.length, N: n };
  }
  checkNumbers('patterns', patterns);
  const n = N ?? patterns.length;
  checkIndex('N', n, 1, INT_MAX);
  if (patterns.length === 0 || patterns.length % n !== 0)
    throw new AttnlabError('ESHAPE', `patterns: ${patterns.length} values are not P×N with N = ${n}`);
  return { flat: Float32Array.from(patterns), P: patterns.length / n, N: n };
}

// W (N×N) and a state s (N)
function stateAndWeights(W, s) {
  checkNumbers('state', s);
  checkNumbers('W', W);
  const N = s.length;
  if (N === 0) throw new AttnlabError('EEMPTY', 'the state is empty');
  if (W.length !== N * N) throw new AttnlabError('ESHAPE', `W must be N×N = ${N * N} values for a state of ${N}, got ${W.length}`);
  return N;
}

// a (rows×cols) matrix given flat; returns rows
function rowsOf(name, A, cols) {
  checkNumbers(name, A);
  checkIndex(`${name} columns`, cols, 1, INT_MAX);
  if (A.length === 0 || A.length % cols !== 0)
    throw new AttnlabError('ESHAPE', `${name}: ${A.length} values are not rows of ${cols}`);
  return A.length / cols;
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * The lineage demos on one WebAssembly instance (synchronous methods).
 * Make one with loadLineage(); dispose() drops the instance.
 */
export class Lineage {
  constructor(wasm, backendNote = null) {
    if (!wasm || typeof wasm !== 'object' || typeof wasm.glyph !== 'function')
      throw new AttnlabError('ETYPE', 'Lineage: make one with loadLineage(), not with new Lineage(…)');
    this._w = wasm;
    /** Why 'auto' runs the SIMD128 build where it could have run the relaxed one (null otherwise). */
    this.backendNote = backendNote;
  }

  /** The build that runs: 'relaxed-simd' or 'simd128' (as the module itself reports it). */
  get backend() { return this._wasm.backend(); }

  get _wasm() {
    if (!this._w) throw new AttnlabError('EDISPOSED', 'this Lineage was disposed');
    return this._w;
  }

  /** Drop the WebAssembly instance (its memory goes with it). */
  dispose() { this._w = null; }

  // ── classical Hopfield ──────────────────────────────────────────────────

  /** Glyph g (0–9) as a Float32Array of 100 ±1 values (10×10, row-major, +1 = ink). */
  glyph(g) {
    checkIndex('glyph', g, 0, N_GLYPHS - 1);
    return this._wasm.glyph(g);
  }

  /** Hebbian weights W = (1/N) Σ p pᵀ with a zero diagonal, as a Float32Array N×N. */
  hebbian(patterns, options) {
    const { N } = checkOpts('hebbian', options, ['N']);
    const p = patternsOf(patterns, N);
    return this._wasm.hopfieldHebbian(p.flat, p.P, p.N);
  }

  /** E = −½ sᵀ W s. */
  energy(W, state) {
    const N = stateAndWeights(W, state);
    return this._wasm.hopfieldEnergy(W, state, N);
  }

  /** (1/N) Σ aᵢ bᵢ: 1 for equal states, −1 for inverse ones. */
  overlap(a, b) {
    checkNumbers('a', a);
    checkNumbers('b', b);
    if (a.length !== b.length || a.length === 0) throw new AttnlabError('ESHAPE', 'overlap: two non-empty states of one length are needed');
    return this._wasm.hopfieldOverlap(a, b, a.length);
  }

  /** A copy of pattern with exactly round(fraction·N) units flipped (seeded). */
  corrupt(pattern, fraction, options) {
    const { seed = 1 } = checkOpts('corrupt', options, ['seed']);
    checkNumbers('pattern', pattern);
    checkFinite('fraction', fraction);
    return this._wasm.hopfieldCorrupt(pattern, pattern.length, fraction, checkSeed(seed));
  }

  /**
   * One step: mode 'async' (a sweep of N single-unit updates in a random
   * order), 'sequential' (a sweep in the order 0..N−1) or 'sync' (all units
   * at once). Returns {state, flipped, energy}.
   */
  hopfieldStep(W, state, options) {
    const { mode = 'async', seed = 1 } = checkOpts('hopfieldStep', options, ['mode', 'seed']);
    const N = stateAndWeights(W, state);
    const r = this._wasm.hopfieldStep(W, state, N, pick('mode', mode, HOPFIELD_MODES), checkSeed(seed));
    return { ...r, energy: this._wasm.hopfieldEnergy(W, r.state, N) };
  }

  /**
   * Steps until nothing changes (a fixed point) or maxSteps:
   * {state, energies (Float64Array, energies[0] = start), steps, converged}.
   */
  hopfieldRun(W, state, options) {
    const { mode = 'async', seed = 1, maxSteps = 100 } = checkOpts('hopfieldRun', options, ['mode', 'seed', 'maxSteps']);
    const N = stateAndWeights(W, state);
    checkIndex('maxSteps', maxSteps, 0, 100000);
    return this._wasm.hopfieldRun(W, state, N, pick('mode', mode, HOPFIELD_MODES), maxSteps, checkSeed(seed));
  }

  /**
   * The capacity experiment: for each load α (patterns per neuron), P = αN
   * random patterns are stored and each is retrieved from `noise` corruption;
   * success = the fraction ending with overlap ≥ threshold.
   * Returns {N, loads, success, overlap, capacity: 0.138}.
   */
  hopfieldCapacity(options) {
    const {
      N = 200, loads = Array.from({ length: 15 }, (_, k) => 0.02 * (k + 1)), noise = 0.05, threshold = 0.95,
      trials = 2, seed = 1,
    } = checkOpts('hopfieldCapacity', options, ['N', 'loads', 'noise', 'threshold', 'trials', 'seed']);
    checkIndex('N', N, 1, 4096);
    checkNumbers('loads', loads);
    checkIndex('trials', trials, 1, 10000);
    checkFinite('noise', noise);
    checkFinite('threshold', threshold);
    const r = this._wasm.hopfieldCapacity(Float32Array.from(loads), N, noise, threshold, trials, checkSeed(seed));
    return { N, loads: Float32Array.from(loads), ...r, capacity: HOPFIELD_CAPACITY };
  }

  // ── modern Hopfield (= attention) ────────────────────────────────────────

  /** {N, d} of a memory X (N×d rows) and a state xi (d). */
  _memory(X, xi, d) {
    checkNumbers('xi', xi);
    const dd = d ?? xi.length;
    if (xi.length !== dd) throw new AttnlabError('ESHAPE', `xi has ${xi.length} values, d = ${dd}`);
    return { N: rowsOf('X', X, dd), d: dd };
  }

  /** E = −lse(β, X ξ) + ½ ξᵀξ + β⁻¹ log N + ½ M² (≥ 0). */
  modernEnergy(X, xi, options) {
    const { beta = 1, d } = checkOpts('modernEnergy', options, ['beta', 'd']);
    const m = this._memory(X, xi, d);
    return this._wasm.mhopfieldEnergy(X, xi, m.N, m.d, checkFinite('beta', beta));
  }

  /**
   * One update ξ ← Xᵀ softmax(β X ξ): {state, weights, energyBefore, energyAfter}.
   * With β = 1/√d this is attention with q = ξ and K = V = X (see attention()).
   */
  modernStep(X, xi, options) {
    const { beta = 1, d } = checkOpts('modernStep', options, ['beta', 'd']);
    const m = this._memory(X, xi, d);
    checkFinite('beta', beta);
    const w = this._wasm;
    const r = w.mhopfieldStep(X, xi, m.N, m.d, beta);
    return { ...r, energyBefore: w.mhopfieldEnergy(X, xi, m.N, m.d, beta), energyAfter: w.mhopfieldEnergy(X, r.state, m.N, m.d, beta) };
  }

  /** Iterate to a fixed point: {state, weights, energies, steps, converged}. */
  modernRun(X, xi, options) {
    const { beta = 1, d, maxSteps = 100, tol = 1e-6 } = checkOpts('modernRun', options, ['beta', 'd', 'maxSteps', 'tol']);
    const m = this._memory(X, xi, d);
    checkIndex('maxSteps', maxSteps, 0, 100000);
    return this._wasm.mhopfieldRun(X, xi, m.N, m.d, checkFinite('beta', beta), maxSteps, checkFinite('tol', tol));
  }

  /** Single-query attention softmax(q Kᵀ·scale) V: {out, weights}; scale defaults to 1/√d. */
  attention(q, K, V, options) {
    const { scale } = checkOpts('attention', options, ['scale']);
    checkNumbers('q', q);
    const d = q.length;
    const T = rowsOf('K', K, d);
    checkNumbers('V', V);
    const dv = V.length / T;
    if (!Number.isInteger(dv) || dv < 1) throw new AttnlabError('ESHAPE', `V must be T×dv with T = ${T}`);
    return this._wasm.attentionSingle(q, K, V, T, d, dv, scale === undefined ? 1 / Math.sqrt(d) : checkFinite('scale', scale));
  }

  // ── attention: softmax and linear ──────────────────────────────────────

  _qkv(Q, K, V, d) {
    checkIndex('d', d, 1, 1024);
    const T = rowsOf('Q', Q, d);
    checkNumbers('K', K);
    checkNumbers('V', V);
    if (K.length !== Q.length) throw new AttnlabError('ESHAPE', `K must be T×d like Q (${Q.length} values), got ${K.length}`);
    const dv = V.length / T;
    if (!Number.isInteger(dv) || dv < 1) throw new AttnlabError('ESHAPE', `V must be T×dv with T = ${T}, got ${V.length} values`);
    return { T, dv };
  }

  /** softmax(Q Kᵀ·scale [causal mask]) V, Float32Array T×dv; scale defaults to 1/√d. */
  softmaxAttention(Q, K, V, options) {
    const { d, causal = true, scale } = checkOpts('softmaxAttention', options, ['d', 'causal', 'scale']);
    const { T, dv } = this._qkv(Q, K, V, d);
    return this._wasm.softmaxAttention(Q, K, V, T, d, dv, scale === undefined ? 1 / Math.sqrt(d) : checkFinite('scale', scale), !!causal);
  }

  /** The FAVOR+ projection W (m×d), Gaussian, seeded. */
  favorWeights(m, d, options) {
    const { seed = 1 } = checkOpts('favorWeights', options, ['seed']);
    checkIndex('m', m, 1, 16384);
    checkIndex('d', d, 1, 1024);
    return this._wasm.favorWeights(m, d, checkSeed(seed));
  }

  // {kind, W, m} of a feature-map option set
  _features(featureMap, m, W, seed, d) {
    const kind = pick('featureMap', featureMap, FEATURE_MAPS);
    if (kind !== FEATURE_MAPS.favor) return { kind, W: null, m: 0 };
    checkIndex('m', m, 1, 16384);
    if (W) {
      checkNumbers('W', W);
      if (W.length !== m * d) throw new AttnlabError('ESHAPE', `W must be m×d = ${m * d} values`);
      return { kind, W, m };
    }
    return { kind, W: this.favorWeights(m, d, { seed }), m };
  }

  /** φ(x) row by row (T × feature size): 'elu' (elu+1), 'relu' or 'favor' (m random features). */
  featureMap(x, options) {
    const { d, featureMap = 'elu', m = 64, W, seed = 1 } = checkOpts('featureMap', options, ['d', 'featureMap', 'm', 'W', 'seed']);
    checkIndex('d', d, 1, 1024);
    const T = rowsOf('x', x, d);
    const f = this._features(featureMap, m, W, seed, d);
    return this._wasm.featureMap(x, T, d, f.kind, f.W, f.m);
  }

  /**
   * Linear attention φ(Q)(φ(K)ᵀV) / (φ(Q)·Σφ(K) + 1e-6), Float32Array T×dv.
   *   featureMap 'elu' | 'relu' | 'favor' (m features, W or seed)
   *   causal     true (default): prefix sums S_t = Σ_{j≤t} φ(k_j)v_jᵀ, z_t = Σ_{j≤t} φ(k_j)
   *   form       'prefix' (all S_t kept; non-causal: the global sums), 'rnn'
   *              (one running state; causal only), 'quadratic' (the T×T
   *              matrix φ(Q)φ(K)ᵀ, masked, row-normalised — the same numbers in O(T²))
   */
  linearAttention(Q, K, V, options) {
    const { d, featureMap = 'elu', m = 64, W, seed = 1, causal = true, form = 'prefix' } =
      checkOpts('linearAttention', options, ['d', 'featureMap', 'm', 'W', 'seed', 'causal', 'form']);
    const { T, dv } = this._qkv(Q, K, V, d);
    const f = this._features(featureMap, m, W, seed, d);
    return this._wasm.linearAttention(Q, K, V, T, d, dv, f.kind, f.W, f.m, !!causal, pick('form', form, LINATTN_FORMS));
  }

  /** Q, K, V ~ N(0, sd²) (T×d, T×d, T×dv), from the C core's RNG. */
  randomQKV(T, d, dv = d, options) {
    const { seed = 1, sd = 1 } = checkOpts('randomQKV', options, ['seed', 'sd']);
    checkIndex('T', T, 1, 65536);
    checkIndex('d', d, 1, 1024);
    checkIndex('dv', dv, 1, 1024);
    checkFinite('sd', sd);
    // favorWeights(T, d) is exactly a T×d matrix of N(0, 1) draws.
    const w = this._wasm;
    const s = BigInt(checkSeed(seed));
    const scale = (a) => { if (sd !== 1) for (let k = 0; k < a.length; k++) a[k] *= sd; return a; };
    return {
      Q: scale(w.favorWeights(T, d, s * 3n + 1n)),
      K: scale(w.favorWeights(T, d, s * 3n + 2n)),
      V: w.favorWeights(T, dv, s * 3n + 3n),
    };
  }

  /**
   * Mean |linear − softmax| over all outputs of causal attention on random
   * inputs, for a feature map: {error, T, d}. (FAVOR+ shrinks it as m grows.)
   */
  linearError(options) {
    const { T = 64, d = 16, featureMap = 'favor', m = 64, seed = 1, sd = 0.5 } =
      checkOpts('linearError', options, ['T', 'd', 'featureMap', 'm', 'seed', 'sd']);
    const { Q, K, V } = this.randomQKV(T, d, d, { seed, sd });
    const ref = this.softmaxAttention(Q, K, V, { d });
    const lin = this.linearAttention(Q, K, V, { d, featureMap, m, seed: seed + 1, form: 'rnn' });
    let e = 0;
    for (let k = 0; k < ref.length; k++) e += Math.abs(lin[k] - ref[k]);
    return { error: e / ref.length, T, d };
  }

  /**
   * Time causal softmax attention (O(T²d)) against causal linear attention in
   * its recurrent form (O(T·m·dv)) at one T, in this instance (single thread):
   * {T, softmaxMs, linearMs, reps}. Repeats small sizes until ~minMs have passed.
   */
  timeAttention(options) {
    const { T, d = 64, featureMap = 'elu', m = 64, minMs = 20, seed = 1 } =
      checkOpts('timeAttention', options, ['T', 'd', 'featureMap', 'm', 'minMs', 'seed']);
    checkIndex('T', T, 1, 65536);
    checkIndex('d', d, 1, 1024);
    checkFinite('minMs', minMs);
    const { Q, K, V } = this.randomQKV(T, d, d, { seed, sd: 0.5 });
    const f = this._features(featureMap, m, null, seed, d);
    const w = this._wasm;
    // one call of each to size the repetitions (and warm up); then the best
    // of three batches (of one batch when a call takes over 200 ms), which
    // filters out the time other processes take from a shared machine
    const one = w.timeAttention(Q, K, V, T, d, d, f.kind, f.W, f.m, 1, now);
    const reps = Math.max(1, Math.min(1000, Math.ceil(minMs / Math.max(1e-3, Math.min(one.softmax, one.linear)))));
    let best = one;
    const batches = one.softmax > 200 ? 1 : 3;
    for (let b = 0; b < batches; b++) {
      const r = w.timeAttention(Q, K, V, T, d, d, f.kind, f.W, f.m, reps, now);
      best = b === 0 && reps > 1 ? r : { softmax: Math.min(best.softmax, r.softmax), linear: Math.min(best.linear, r.linear) };
    }
    return { T, d, softmaxMs: best.softmax, linearMs: best.linear, reps, batches };
  }

  // ── √d_k ─────────────────────────────────────────────────────────────────

  /** n samples of q·k for q, k ~ N(0, I_dk), unscaled (divide by √dk for the scaled ones). */
  qkSamples(n, dk, options) {
    const { seed = 1 } = checkOpts('qkSamples', options, ['seed']);
    checkIndex('n', n, 1, 1 << 24);
    checkIndex('dk', dk, 1, 1024);
    return this._wasm.qkSamples(n, dk, checkSeed(seed));
  }

  /** Sample mean and variance of q·k and of q·k/√dk: {mean, variance, scaledMean, scaledVariance}. */
  qkStats(n, dk, options) {
    const { seed = 1 } = checkOpts('qkStats', options, ['seed']);
    checkIndex('n', n, 2, 1 << 24);
    checkIndex('dk', dk, 1, 1024);
    const s = this._wasm.qkStats(n, dk, checkSeed(seed));
    return { mean: s[0], variance: s[1], scaledMean: s[2], scaledVariance: s[3] };
  }

  /** Mean entropy (nats) of softmax over T random keys, scaled by 1/√dk or not; the maximum is log T. */
  softmaxEntropy(options) {
    const { T = 64, dk, queries = 200, scaled = true, seed = 1 } =
      checkOpts('softmaxEntropy', options, ['T', 'dk', 'queries', 'scaled', 'seed']);
    checkIndex('T', T, 1, 65536);
    checkIndex('dk', dk, 1, 1024);
    checkIndex('queries', queries, 1, 1 << 20);
    return this._wasm.softmaxEntropyMean(T, dk, queries, !!scaled, checkSeed(seed));
  }
}

/**
 * A Lineage on a new WebAssembly instance. backend: 'auto' (default) runs the relaxed-SIMD build where this engine
 * validates a relaxed instruction (core/backend.js) and its location is known (wasmRelaxed, defaulting to the
 * package's own unless wasm moved its SIMD128 twin), else the SIMD128 build, and falls back to SIMD128 when the
 * relaxed build cannot start (lab.backendNote says why); 'relaxed-simd' or 'simd128' is that build or an error —
 * the same rule as loadModel's.
 * @param {{wasm?: string|URL|ArrayBuffer|ArrayBufferView|Response|WebAssembly.Module,
 *          wasmRelaxed?: string|URL|ArrayBuffer|ArrayBufferView|Response|WebAssembly.Module,
 *          backend?: 'auto'|'relaxed-simd'|'simd128'}} [options]
 * @returns {Promise<Lineage>}
 */
export async function loadLineage(options) {
  const { wasm, wasmRelaxed, backend } = checkOpts('loadLineage', options, ['wasm', 'wasmRelaxed', 'backend']);
  const asked = backend === undefined || backend === null ? 'auto' : backend;
  if (asked !== 'auto' && !BACKENDS.includes(asked))
    throw new AttnlabError(typeof asked === 'string' ? 'EINVAL' : 'ETYPE',
                           `options.backend must be 'auto', ${BACKENDS.map((b) => `'${b}'`).join(' or ')}, got ${String(asked)}`);
  const start = async (src, fallback) => {
    let s = src ?? fallback();
    if (typeof s === 'string' || s instanceof URL) s = await resolveURL(s, 'wasm URL');
    return instantiateAttnlab(s);
  };
  if (asked === 'relaxed-simd') {
    if (!relaxedSimdSupported())
      throw new AttnlabError('EWASM', 'options.backend: this engine does not run relaxed SIMD (WebAssembly.validate refused ' +
                             'f32x4.relaxed_madd; Node 20 needs --experimental-wasm-relaxed-simd)');
    return new Lineage(await start(wasmRelaxed, defaultWasmRelaxedURL));
  }
  let note = null;
  if (asked === 'auto') {
    if (!relaxedSimdSupported()) note = 'this engine does not run relaxed SIMD (WebAssembly.validate refused f32x4.relaxed_madd)';
    else if (wasm != null && wasmRelaxed == null) note = 'options.wasm was given without options.wasmRelaxed';
    else {
      try {
        return new Lineage(await start(wasmRelaxed, defaultWasmRelaxedURL));
      } catch (e) {
        if (!(e instanceof AttnlabError) || e.code === 'ETYPE') throw e;
        note = `the relaxed-SIMD build could not start (${e.code}: ${e.message}); running the SIMD128 build`;
      }
    }
  }
  return new Lineage(await start(wasm, defaultWasmURL), note);
}
