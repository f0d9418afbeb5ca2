// widget/worker.js — the one Web Worker of a page's attnlab widgets. Every
// <attnlab-figure> and <attnlab-lab> on a page talks to this worker through
// client.js (a module-level singleton), so a page with six figures starts one
// worker, compiles the wasm once per model and holds each model once.
//
// It holds any number of models (keyed by their directory URL; normally just
// the built-in one) and, on first use, one Lineage instance for the Hopfield,
// linear-attention and √d_k demos.
//
// The messages are ui/protocol.js's; result buffers are transferred. Methods:
//   load      [modelURL, wasmURL]             -> {config, source}   (progress: the loader's events)
//   run       [modelURL, text, runOptions]    -> a Result message (model.js resultToMessage)
//   tokenize  [modelURL, text]                -> {ids, tokens}
//   evidence  [modelURL, kind, text, options] -> an edge or token knockout
//   lineage   [wasmURL, demo, params]         -> plain data for that demo (lineageData below)

import { AttnlabError } from '../core/errors.js';
import { loadModel, resultToMessage } from '../model.js';
import { loadLineage } from '../lineage.js';
import { serve, reply } from '../ui/protocol.js';

const models = new Map();   // model URL -> Promise<Model>
let lineage = null;         // Promise<Lineage>

function modelAt(url) {
  const m = models.get(url);
  if (!m) throw new AttnlabError('ESTATE', `no model loaded from ${url}: send load first`);
  return m;
}

// ── the lineage demos: everything a widget draws, computed here ─────────────

const X2 = [[2.0, 2.0], [2.5, 1.5], [1.6, 2.5], [-2.5, 1.0], [0.5, -2.5]];   // the lineage page's 2-D memory
const XI0 = [0.4, 1.0];

function hopfieldData(L, { glyph = 3, store = [0, 1, 3], noise = 0.2, seed = 1, beta = 1 } = {}) {
  const target = L.glyph(glyph);
  const W = L.hebbian(store.map((g) => L.glyph(g)));
  const start = L.corrupt(target, noise, { seed });
  const run = L.hopfieldRun(W, start, { mode: 'async', seed, maxSteps: 50 });
  // modern Hopfield in the plane: one step, the path to the fixed point
  const X = Float32Array.from(X2.flat());
  const one = L.modernStep(X, XI0, { beta, d: 2 });
  const fixed = L.modernRun(X, XI0, { beta, d: 2, maxSteps: 500, tol: 1e-6 });
  const path = [XI0];
  let cur = Float32Array.from(XI0);
  for (let k = 0; k < Math.min(fixed.steps, 40); k++) { cur = L.modernStep(X, cur, { beta, d: 2 }).state; path.push(Array.from(cur)); }
  // the equivalence: one update with β = 1/√d is attention with q = ξ, K = V = X
  const hop = L.modernStep(X, XI0, { beta: 1 / Math.sqrt(2), d: 2 }).state;
  const att = L.attention(XI0, X, X).out;
  let diff = 0;
  for (let k = 0; k < 2; k++) diff = Math.max(diff, Math.abs(hop[k] - att[k]));
  return {
    glyph, store, noise, target: Array.from(target), start: Array.from(start), final: Array.from(run.state),
    energies: Array.from(run.energies), steps: run.steps, converged: run.converged,
    overlap: L.overlap(run.state, target), startOverlap: L.overlap(start, target),
    modern: {
      beta, patterns: X2, start: XI0, oneStep: Array.from(one.state), path, fixed: Array.from(fixed.state),
      weights: Array.from(fixed.weights), steps: fixed.steps,
      mean: [X2.reduce((a, p) => a + p[0], 0) / X2.length, X2.reduce((a, p) => a + p[1], 0) / X2.length],
    },
    equivalence: { hopfield: Array.from(hop), attention: Array.from(att), diff },
  };
}

function linearData(L, { featureMap = 'elu', m = 64, Ts = [64, 128, 256, 512, 1024, 2048] } = {}) {
  const T = 64, d = 16;
  const { Q, K, V } = L.randomQKV(T, d, d, { seed: 3, sd: 0.5 });
  const o = { d, featureMap, m, seed: 4 };
  const quad = L.linearAttention(Q, K, V, { ...o, form: 'quadratic' });
  const pre = L.linearAttention(Q, K, V, { ...o, form: 'prefix' });
  const rnn = L.linearAttention(Q, K, V, { ...o, form: 'rnn' });
  const soft = L.softmaxAttention(Q, K, V, { d });
  let dp = 0, dr = 0, err = 0;
  for (let k = 0; k < quad.length; k++) {
    dp = Math.max(dp, Math.abs(pre[k] - quad[k]));
    dr = Math.max(dr, Math.abs(rnn[k] - quad[k]));
    err += Math.abs(soft[k] - rnn[k]);
  }
  const timing = Ts.map((t) => L.timeAttention({ T: t, d: 64, featureMap, m, minMs: 25 }));
  return { featureMap, m, T, d, prefixDiff: dp, rnnDiff: dr, softmaxError: err / quad.length, timing };
}

function sqrtdkData(L, { dk = 64 } = {}) {
  const raw = L.qkSamples(4000, dk, { seed: 6 });
  const stats = L.qkStats(4000, dk, { seed: 6 });
  const dks = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
  return {
    dk, raw: Array.from(raw), stats,
    entropy: {
      dks,
      scaled: dks.map((k) => L.softmaxEntropy({ T: 64, dk: k, queries: 100, scaled: true, seed: 7 })),
      raw: dks.map((k) => L.softmaxEntropy({ T: 64, dk: k, queries: 100, scaled: false, seed: 7 })),
    },
  };
}

const DEMOS = { hopfield: hopfieldData, linear: linearData, sqrtdk: sqrtdkData };

// ── requests ────────────────────────────────────────────────────────────────

const HANDLERS = {
  async load([url, wasm], { progress }) {
    if (!models.has(url)) {
      // the multithreaded build sits beside attnlab.wasm; it is used only on a cross-origin isolated
      // page, and where it is missing the model runs on one thread
      const wasmMT = wasm ? new URL('attnlab-mt.wasm', wasm).href : undefined;
      const p = loadModel(url, { wasm, wasmMT, onProgress: progress });
      models.set(url, p);
      p.catch(() => models.delete(url));   // a failed load can be retried
    }
    const m = await models.get(url);
    return { config: m.config, source: m.source };
  },
  async run([url, text, options]) {
    const { data, transfer } = resultToMessage((await modelAt(url)).run(text, options));
    return reply(data, transfer);
  },
  async tokenize([url, text]) {
    const r = (await modelAt(url)).tokenize(text);
    return reply(r, [r.ids.buffer]);
  },
  async evidence([url, kind, text, options]) {
    const m = await modelAt(url);
    if (kind === 'edge') return m.edgeKnockout(text, options);
    if (kind === 'tokens') return m.tokenKnockout(text);
    throw new AttnlabError('EINVAL', `unknown evidence figure '${kind}' (known: edge, tokens)`);
  },
  async lineage([wasm, demo, params]) {
    const f = DEMOS[demo];
    if (!f) throw new AttnlabError('EINVAL', `unknown lineage demo '${demo}' (known: ${Object.keys(DEMOS).join(', ')})`);
    if (!lineage) {
      lineage = loadLineage(wasm ? { wasm } : undefined);
      lineage.catch(() => { lineage = null; });
    }
    return f(await lineage, params || {});
  },
};

// Not ordered: a model download (async) must not hold back a lineage demo; the
// computations themselves are synchronous, so two never interleave.
serve(HANDLERS);
