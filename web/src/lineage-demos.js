// lineage-demos.js — the numbers of the lineage demos (Hopfield → attention → linear attention),
// computed from a Lineage (lineage.js). The lineage page draws them live; the widgets' worker
// sends them to <attnlab-figure figure="hopfield|linear|sqrtdk">. One definition, so the page and
// the widgets show the same demo for the same settings.

/** The 2-D memory of the modern Hopfield demo: a cluster of three, two loners; and the start ξ. */
export const X2 = [[2.0, 2.0], [2.5, 1.5], [1.6, 2.5], [-2.5, 1.0], [0.5, -2.5]];
export const XI0 = [0.4, 1.0];

/**
 * The modern Hopfield network in the plane at inverse temperature beta: one step from XI0,
 * the run to its fixed point, the path (at most 40 iterates), the patterns' mean.
 */
export function modernPlane(L, beta) {
  const X = Float32Array.from(X2.flat()), d = 2;
  const one = L.modernStep(X, XI0, { beta, d });
  const run = L.modernRun(X, XI0, { beta, d, maxSteps: 500, tol: 1e-6 });
  const path = [XI0];
  let cur = Float32Array.from(XI0);
  for (let k = 0; k < Math.min(run.steps, 40); k++) { cur = L.modernStep(X, cur, { beta, d }).state; path.push(Array.from(cur)); }
  const mean = [X2.reduce((a, p) => a + p[0], 0) / X2.length, X2.reduce((a, p) => a + p[1], 0) / X2.length];
  return {
    beta, patterns: X2, start: XI0, oneStep: Array.from(one.state), path, fixed: Array.from(run.state), mean,
    weights: Array.from(run.weights), steps: run.steps, energies: Array.from(run.energies),
    move: Math.hypot(one.state[0] - XI0[0], one.state[1] - XI0[1]),
  };
}

/** The equivalence in the plane: one update with β = 1/√2 is attention with q = ξ, K = V = X. */
export function equivalence2d(L) {
  const X = Float32Array.from(X2.flat());
  const hopfield = Array.from(L.modernStep(X, XI0, { beta: 1 / Math.sqrt(2), d: 2 }).state);
  const attention = Array.from(L.attention(XI0, X, X).out);
  return { hopfield, attention, diff: maxAbsDiff(hopfield, attention) };
}

/**
 * Linear attention in its three forms (quadratic, prefix sums, RNN) on one seeded Q, K, V
 * (T = 64, d = 16), against softmax attention: the forms' largest differences and the mean
 * error against softmax.
 */
export function linearForms(L, { featureMap = 'elu', m = 64 } = {}) {
  const T = 64, d = 16;
  const { Q, K, V } = L.randomQKV(T, d, d, { seed: 3, sd: 0.5 });
  const o = { d, featureMap, m, seed: 4 };
  const quad = L.linearAttention(Q, K, V, { ...o, form: 'quadratic' });
  const pre = L.linearAttention(Q, K, V, { ...o, form: 'prefix' });
  const rnn = L.linearAttention(Q, K, V, { ...o, form: 'rnn' });
  const soft = L.softmaxAttention(Q, K, V, { d });
  const softmaxError = soft.reduce((a, v, k) => a + Math.abs(v - rnn[k]), 0) / soft.length;
  return { T, d, featureMap, m, prefixDiff: maxAbsDiff(pre, quad), rnnDiff: maxAbsDiff(rnn, quad), softmaxError };
}

/** The softmax entropy against d_k, with and without the 1/√d_k scale (T = 64, 100 queries). */
export function entropyCurve(L) {
  const dks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
  return {
    dks,
    scaled: dks.map((k) => L.softmaxEntropy({ T: 64, dk: k, queries: 100, scaled: true, seed: 7 })),
    raw: dks.map((k) => L.softmaxEntropy({ T: 64, dk: k, queries: 100, scaled: false, seed: 7 })),
  };
}

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let k = 0; k < a.length; k++) m = Math.max(m, Math.abs(a[k] - b[k]));
  return m;
}
