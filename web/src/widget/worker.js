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
//   load      [modelURL, wasmURL]             -> {config, source, engine}   (progress: the loader's events)
//   run       [modelURL, text, runOptions]    -> a Result message (result.js resultToMessage)
//   tokenize  [modelURL, text]                -> {ids, tokens}
//   evidence  [modelURL, kind, text, options] -> an edge or token knockout
//   lineage   [wasmURL, demo, params]         -> plain data for that demo (lineageData below)

import { AttnlabError } from '../core/errors.js';
import { loadModel } from '../model.js';
import { resultToMessage } from '../result.js';
import { loadLineage } from '../lineage.js';
import { modernPlane, equivalence2d, linearForms, entropyCurve } from '../lineage-demos.js';
import { serve, reply } from '../ui/protocol.js';

const models = new Map();   // model URL -> Promise<Model>
let lineage = null;         // Promise<Lineage>

function modelAt(url) {
  const m = models.get(url);
  if (!m) throw new AttnlabError('ESTATE', `no model loaded from ${url}: send load first`);
  return m;
}

// ── the lineage demos: everything a widget draws, computed here ─────────────

function hopfieldData(L, { glyph = 3, store = [0, 1, 3], noise = 0.2, seed = 1, beta = 1 } = {}) {
  const target = L.glyph(glyph);
  const W = L.hebbian(store.map((g) => L.glyph(g)));
  const start = L.corrupt(target, noise, { seed });
  const run = L.hopfieldRun(W, start, { mode: 'async', seed, maxSteps: 50 });
  const { patterns, start: xi, oneStep, path, fixed, weights, steps, mean } = modernPlane(L, beta);
  return {
    glyph, store, noise, target: Array.from(target), start: Array.from(start), final: Array.from(run.state),
    energies: Array.from(run.energies), steps: run.steps, converged: run.converged,
    overlap: L.overlap(run.state, target), startOverlap: L.overlap(start, target),
    modern: { beta, patterns, start: xi, oneStep, path, fixed, weights, steps, mean },
    equivalence: equivalence2d(L),
  };
}

function linearData(L, { featureMap = 'elu', m = 64, Ts = [64, 128, 256, 512, 1024, 2048] } = {}) {
  const timing = Ts.map((t) => L.timeAttention({ T: t, d: 64, featureMap, m, minMs: 25 }));
  return { ...linearForms(L, { featureMap, m }), timing };
}

function sqrtdkData(L, { dk = 64 } = {}) {
  const raw = L.qkSamples(4000, dk, { seed: 6 });
  const stats = L.qkStats(4000, dk, { seed: 6 });
  return {
    dk, raw: Array.from(raw), stats,
    entropy: entropyCurve(L),
  };
}

const DEMOS = { hopfield: hopfieldData, linear: linearData, sqrtdk: sqrtdkData };

// ── requests ────────────────────────────────────────────────────────────────

const HANDLERS = {
  async load([url, wasm], { progress }) {
    if (!models.has(url)) {
      // the multithreaded build and the relaxed-SIMD twins sit beside attnlab.wasm; the mt builds are
      // used only on a cross-origin isolated page (where missing, the model runs on one thread), the
      // relaxed ones where the browser validates relaxed SIMD (where missing, the SIMD128 ones run)
      const beside = (name) => (wasm ? new URL(name, wasm).href : undefined);
      const p = loadModel(url, {
        wasm, wasmMT: beside('attnlab-mt.wasm'), wasmRelaxed: beside('attnlab-relaxed.wasm'),
        wasmRelaxedMT: beside('attnlab-relaxed-mt.wasm'), onProgress: progress,
      });
      models.set(url, p);
      p.catch(() => models.delete(url));   // a failed load can be retried
    }
    const m = await models.get(url);
    return { config: m.config, source: m.source, engine: m.engine };
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
