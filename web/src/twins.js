// twins.js — random-weight twins of a gpt2-family model (issue 50, item 1(a)): a model with the trained one's
// config, shapes and tokenizer and random weights, generated from a seed (never shipped), as the control a
// set-level measure is run on beside the trained model. Two kinds:
//
//   'gpt2-init'  GPT-2's initialisation: every matrix N(0, 0.02²) — wte, wpe, attn.c_attn, mlp.c_fc — except the
//                residual output projections attn.c_proj and mlp.c_proj, N(0, (0.02 / sqrt(2 n_layer))²); biases 0,
//                LayerNorm weights 1 and biases 0; the LM head tied to wte. Its attention is nearly uniform
//                (scores of order 0.05), so a within-row reading of it cannot agree with the trained model's.
//   'matched'    the same draws, then in each layer l the query third of attn.c_attn (weight columns [0, n_embd)
//                and their bias, which is 0) multiplied by s_l, chosen so that the layer's mean attention entropy
//                on the given inputs equals the trained model's: attention as peaked as the trained model's, the
//                control that can come out the same.
//
// The generator (docs/evidence.md "Random-weight twins", any language reproduces it; tests/ref/twins_ref.py does):
//   splitmix64, as alab_rng_next of c/include/attnlab.h: state = seed (a uint32), then per draw
//     state += 0x9E3779B97F4A7C15; z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//     z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)      (all mod 2^64)
//   u = (draw >> 11) · 2^-53 in [0, 1); one normal from two draws, u1 then u2 (Box–Muller, cosine branch only):
//     z = sqrt(-2 ln(1 - u1)) · cos(2π u2)
//   a weight is float32(σ · z) (σ · z in double, rounded once to float32).
// One stream for the whole model, the matrices drawn in this order, each row-major in its safetensors layout
// (Conv1D: [in, out]):
//   wte.weight [V, E], wpe.weight [P, E], then for l = 0 .. L-1: h.l.attn.c_attn.weight [E, 3E],
//   h.l.attn.c_proj.weight [E, E], h.l.mlp.c_fc.weight [E, 4E], h.l.mlp.c_proj.weight [4E, E].
// Biases and LayerNorm parameters take no draws. The matched twin's query columns are then float32(w · s_l).
//
// The entropy (twinEntropies): for one input, the mean over the layer's heads and its query rows 1 .. T-1 of the
// row's entropy in nats, −Σ_j A[i][j] ln A[i][j]; row 0 (one visible key, entropy 0 under any weights) is
// excluded. A layer's entropy over a set is the mean of its inputs' means (each input weighs the same).
//
// The calibration (matched): bottom-up, layer l with the scales of layers < l fixed (a layer's attention depends
// on the layers below it only). For each input and head, one forward pass of the gpt2-init twin with scaleQ
// edits of s_0 .. s_{l-1} captures q and k of layer l (its own scale is 1 there); the entropy of
// softmax(s · c_l q_i·k_j), j ≤ i (c_l the layer's score scale, 1/sqrt(head size)), is then computed in float64
// for any s without another forward pass. It is non-increasing in s, so s_l comes from bisection on ln s over
// the bracket [−8, 12] (s from 3.4e-4 to 1.6e5), 50 halvings (the bracket narrows to 1.8e-14 in ln s), s_l the
// midpoint of the last interval: deterministic. Then the weights are scaled, the twin loaded, and every layer's
// entropy measured again through the forward pass; a layer further than `tolerance` from the trained model's
// is an error (ERANGE), as is a trained entropy outside what the bracket reaches.

import { AttnlabError } from './core/errors.js';
import { checkOptions } from './options.js';
import { checkIndex, checkFinite } from './analysis.js';
import { splitmix64 } from './core/rng.js';
import { Model, loadModel, modelFiles, modelInternals } from './model.js';

/** The kinds of twin. */
export const TWIN_KINDS = Object.freeze(['gpt2-init', 'matched']);
/** GPT-2's initialisation scale (its initializer_range). */
export const INIT_STD = 0.02;
/** The bisection's bracket on ln s and its number of halvings. */
export const LOG_SCALE_BRACKET = Object.freeze([-8, 12]);
export const BISECTION_STEPS = 50;
/** The default number of inputs of a named set (the first `limit`) and the default tolerance, nats. */
export const DEFAULT_LIMIT = 20;
export const DEFAULT_TOLERANCE = 1e-3;
/** The most scores a matched twin's calibration holds for one layer (float64: 256 MiB), checked before any run. */
export const MAX_CALIBRATION_SCORES = 2 ** 25;

const OPTIONS = ['kind', 'seed', 'set', 'limit', 'tolerance'];

// ---------------------------------------------------------------------------
// The generator: splitmix64 on two uint32 halves, u53, Box–Muller
// ---------------------------------------------------------------------------

/**
 * The twins' generator, seeded with a uint32 (state = seed): core/rng.js's splitmix64, the C statistics' own
 * (next() → [hi, lo], uniform() → (draw >> 11) · 2^-53, normal() → sqrt(-2 ln(1 - u1)) cos(2π u2)).
 */
export const twinRng = splitmix64;

// ---------------------------------------------------------------------------
// The weights
// ---------------------------------------------------------------------------

/** The shapes a gpt2 config.json (parsed) gives: {V, P, E, L, NH, HS}; ECONFIG for what the generator cannot build. */
export function twinShapes(cfg) {
  const int = (k) => {
    const v = cfg[k];
    if (!Number.isInteger(v) || v < 1) throw new AttnlabError('ECONFIG', `random twin: config.json's ${k} must be a positive integer`);
    return v;
  };
  const V = int('vocab_size'), P = int('n_positions'), E = int('n_embd'), L = int('n_layer'), NH = int('n_head');
  if (cfg.n_inner !== undefined && cfg.n_inner !== null && cfg.n_inner !== 4 * E)
    throw new AttnlabError('ECONFIG', 'random twin: n_inner must be null or 4 * n_embd');
  if (E % NH) throw new AttnlabError('ECONFIG', `random twin: n_embd (${E}) is not a multiple of n_head (${NH})`);
  return { V, P, E, L, NH, HS: E / NH };
}

/**
 * The tensors of a twin in file order: [{name, shape, std}] — std is the σ of a drawn matrix, or 'zeros' / 'ones'
 * for a bias or a LayerNorm parameter (no draws).
 */
export function twinTensors({ V, P, E, L }) {
  const out = [
    { name: 'wte.weight', shape: [V, E], std: INIT_STD },
    { name: 'wpe.weight', shape: [P, E], std: INIT_STD },
  ];
  const resid = INIT_STD / Math.sqrt(2 * L);
  for (let l = 0; l < L; l++) {
    const h = `h.${l}.`;
    out.push(
      { name: `${h}ln_1.weight`, shape: [E], std: 'ones' }, { name: `${h}ln_1.bias`, shape: [E], std: 'zeros' },
      { name: `${h}attn.c_attn.weight`, shape: [E, 3 * E], std: INIT_STD }, { name: `${h}attn.c_attn.bias`, shape: [3 * E], std: 'zeros' },
      { name: `${h}attn.c_proj.weight`, shape: [E, E], std: resid }, { name: `${h}attn.c_proj.bias`, shape: [E], std: 'zeros' },
      { name: `${h}ln_2.weight`, shape: [E], std: 'ones' }, { name: `${h}ln_2.bias`, shape: [E], std: 'zeros' },
      { name: `${h}mlp.c_fc.weight`, shape: [E, 4 * E], std: INIT_STD }, { name: `${h}mlp.c_fc.bias`, shape: [4 * E], std: 'zeros' },
      { name: `${h}mlp.c_proj.weight`, shape: [4 * E, E], std: resid }, { name: `${h}mlp.c_proj.bias`, shape: [E], std: 'zeros' },
    );
  }
  out.push({ name: 'ln_f.weight', shape: [E], std: 'ones' }, { name: 'ln_f.bias', shape: [E], std: 'zeros' });
  return out;
}

/**
 * The gpt2-init weights of a config (parsed config.json) and seed as a model.safetensors file (float32, tensors
 * in twinTensors' order, no lm_head: tied). Returns {bytes: Uint8Array, views: {name: Float32Array into bytes}}.
 */
export function gpt2InitSafetensors(cfg, seed, meta = {}) {
  const shapes = twinShapes(cfg);
  const tensors = twinTensors(shapes);
  const header = { __metadata__: { format: 'pt', attnlab_twin: 'gpt2-init', seed: String(seed), ...meta } };
  let off = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [off, off + 4 * n] };
    t.n = n;
    t.offset = off;
    off += 4 * n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8); // the data starts 8-aligned (JSON here is ASCII)
  const bytes = new Uint8Array(8 + json.length + off);
  const dv = new DataView(bytes.buffer);
  dv.setUint32(0, json.length, true);
  dv.setUint32(4, 0, true);
  for (let i = 0; i < json.length; i++) bytes[8 + i] = json.charCodeAt(i);
  const base = 8 + json.length;
  const rng = twinRng(seed);
  const views = {};
  for (const t of tensors) {
    const a = new Float32Array(bytes.buffer, base + t.offset, t.n); // little-endian hosts (every wasm engine)
    views[t.name] = a;
    if (t.std === 'ones') a.fill(1);
    else if (t.std === 'zeros') continue;
    else for (let i = 0; i < t.n; i++) a[i] = t.std * rng.normal();
  }
  return { bytes, views, shapes };
}

/** Multiply the query third of each layer's c_attn (weight columns [0, E), bias [0, E)) by scales[l], in float32. */
export function scaleQueries(views, { E, L }, scales) {
  for (let l = 0; l < L; l++) {
    const s = scales[l], W = views[`h.${l}.attn.c_attn.weight`], b = views[`h.${l}.attn.c_attn.bias`];
    for (let r = 0; r < E; r++) for (let c = 0; c < E; c++) W[r * 3 * E + c] *= s;
    for (let c = 0; c < E; c++) b[c] *= s;
  }
}

// ---------------------------------------------------------------------------
// Entropies
// ---------------------------------------------------------------------------

function liveModel(model, where) {
  if (!(model instanceof Model)) throw new AttnlabError('ETYPE', `${where}: model must be a Model from loadModel()`);
  if (model.disposed) throw new AttnlabError('EDISPOSED', `${where}: the model was disposed`);
  return model;
}

// a set name or a list of inputs as id arrays (the model's evidenceSet: each cut at n_positions, ≥ 2 tokens)
function inputsOf(model, set, limit, where) {
  if (Array.isArray(set) && set.length === 0) throw new AttnlabError('EEMPTY', `${where}: the set of inputs is empty`);
  return model.evidenceSet(set, limit === undefined ? undefined : { limit });
}

// per-layer entropy of one run's attention (L, NH, T, T): mean over heads and rows 1..T-1 of the row entropy
function runEntropies(A, L, NH, T) {
  const out = new Float64Array(L);
  for (let l = 0; l < L; l++) {
    let sum = 0;
    for (let h = 0; h < NH; h++) {
      const base = (l * NH + h) * T * T;
      for (let i = 1; i < T; i++) {
        let e = 0;
        for (let j = 0, o = base + i * T; j < T; j++) {
          const p = A[o + j];
          if (p > 0) e -= p * Math.log(p);
        }
        sum += e;
      }
    }
    out[l] = sum / (NH * (T - 1));
  }
  return out;
}

/**
 * Each layer's mean attention entropy, nats, of a model over a set of inputs (a set name — 'heldout', 'repeated'
 * — or a list of strings / id arrays, as evidenceSet takes them): per input the mean over the layer's heads and
 * query rows 1 .. T-1 (row 0 sees one key; excluded) of −Σ_j A ln A, then the mean over inputs.
 * @returns {number[]} one per layer
 */
export function twinEntropies(model, inputs) {
  liveModel(model, 'twinEntropies');
  const list = inputsOf(model, inputs, undefined, 'twinEntropies');
  const { nLayer: L, nHead: NH } = model.config;
  const acc = new Float64Array(L);
  for (const ids of list) {
    const r = model.run(ids, { topK: 0 });
    const e = runEntropies(r.attentions, L, NH, r.T);
    for (let l = 0; l < L; l++) acc[l] += e[l];
  }
  return Array.from(acc, (x) => x / list.length);
}

/** The entropy of uniform attention over the visible keys, averaged as twinEntropies averages: mean_n mean_{i≥1} ln(i+1). */
export function uniformEntropy(list) {
  let acc = 0;
  for (const ids of list) {
    let s = 0;
    for (let i = 1; i < ids.length; i++) s += Math.log(i + 1);
    acc += s / (ids.length - 1);
  }
  return acc / list.length;
}

// ---------------------------------------------------------------------------
// The calibration
// ---------------------------------------------------------------------------

/** The score scale of layer l as the engine computes it (alab_arch_attn_scale): float32 1/sqrt(HS), / (l+1) when asked. */
export function scoreScale(cfg, HS, l) {
  let c = cfg.scale_attn_weights === false ? 1 : Math.fround(1 / Math.sqrt(HS));
  if (cfg.scale_attn_by_inverse_layer_idx === true) c = Math.fround(c / (l + 1));
  return c;
}

/**
 * The scores of layer l of a model (the gpt2-init twin, with scaleQ edits of the layers below) on every input and
 * head: {rows: Float64Array[] (each row i ≥ 1's scores c_l q_i·k_j, j ≤ i), per: number[] (the rows' weights,
 * 1 / (NH (T-1)) of their input)}. One forward pass per input and head (captureQK).
 */
function layerScores(twin, list, l, below, c) {
  const { nHead: NH, headSize: HS } = twin.config;
  const interventions = below.map((alpha, k) => ({ kind: 'scaleQ', layer: k, head: 'all', alpha }));
  const rows = [], per = [];
  for (const ids of list) {
    const T = ids.length;
    for (let h = 0; h < NH; h++) {
      const r = twin.run(ids, { topK: 0, interventions, captureQK: { layer: l, head: h } });
      const q = r.q, k = r.k;
      for (let i = 1; i < T; i++) {
        const z = new Float64Array(i + 1);
        for (let j = 0; j <= i; j++) {
          let d = 0;
          for (let x = 0; x < HS; x++) d += q[i * HS + x] * k[j * HS + x];
          z[j] = c * d;
        }
        rows.push(z);
        per.push(1 / (NH * (T - 1) * list.length));
      }
    }
  }
  return { rows, per };
}

/** The layer's mean entropy with its scores multiplied by s (float64). */
function entropyAt({ rows, per }, s) {
  let total = 0;
  for (let r = 0; r < rows.length; r++) {
    const z = rows[r];
    let m = -Infinity;
    for (let j = 0; j < z.length; j++) if (s * z[j] > m) m = s * z[j];
    let S = 0, Sx = 0;
    for (let j = 0; j < z.length; j++) {
      const x = s * z[j] - m, e = Math.exp(x);
      S += e;
      Sx += e * x;
    }
    total += per[r] * (Math.log(S) - Sx / S);
  }
  return total;
}

/** s_l by bisection on ln s: the bracket LOG_SCALE_BRACKET, BISECTION_STEPS halvings, the last midpoint. */
function bisect(scores, target, tolerance, l) {
  let [lo, hi] = LOG_SCALE_BRACKET;
  const hLo = entropyAt(scores, Math.exp(lo)), hHi = entropyAt(scores, Math.exp(hi));
  if (target > hLo) {
    if (target - hLo <= tolerance) return Math.exp(lo);
    throw new AttnlabError('ERANGE', `random twin: layer ${l}'s trained entropy ${target.toFixed(6)} nats is above what the twin ` +
      `reaches at s = e^${lo} (${hLo.toFixed(6)})`);
  }
  if (target < hHi) {
    if (hHi - target <= tolerance) return Math.exp(hi);
    throw new AttnlabError('ERANGE', `random twin: layer ${l}'s trained entropy ${target.toFixed(6)} nats is below what the twin ` +
      `reaches at s = e^${hi} (${hHi.toFixed(6)})`);
  }
  for (let it = 0; it < BISECTION_STEPS; it++) {
    const mid = (lo + hi) / 2;
    if (entropyAt(scores, Math.exp(mid)) > target) lo = mid;
    else hi = mid;
  }
  return Math.exp((lo + hi) / 2);
}

// ---------------------------------------------------------------------------
// randomTwin
// ---------------------------------------------------------------------------

// loadModel options for a twin: the trained model's backend, from its compiled module when it runs on one thread
function twinLoadOptions(model) {
  const { engine, backend } = model;
  if (engine.threads === 1) {
    const { wasm } = modelInternals(model);
    const mod = wasm && wasm.module;
    if (mod instanceof WebAssembly.Module)
      return backend === 'relaxed-simd' ? { backend, wasmRelaxed: mod, threads: 1 } : { backend: 'simd128', wasm: mod, threads: 1 };
  }
  return { backend, threads: engine.threads };
}

function checkTwinOptions(options) {
  const o = checkOptions('randomTwin', options, OPTIONS);
  const kind = o.kind === undefined ? 'matched' : o.kind;
  if (typeof kind !== 'string') throw new AttnlabError('ETYPE', `randomTwin: kind must be a string (${TWIN_KINDS.join(', ')})`);
  if (!TWIN_KINDS.includes(kind)) throw new AttnlabError('EINVAL', `randomTwin: unknown kind '${kind}' (${TWIN_KINDS.join(', ')})`);
  const seed = o.seed === undefined ? 1 : checkIndex('randomTwin: seed', o.seed, 0, 2 ** 32 - 1);
  const set = o.set === undefined ? 'heldout' : o.set;
  let limit;
  if (o.limit !== undefined) limit = checkIndex('randomTwin: limit', o.limit, 1, 2 ** 31 - 1);
  else if (typeof set === 'string') limit = DEFAULT_LIMIT;
  let tolerance = DEFAULT_TOLERANCE;
  if (o.tolerance !== undefined) {
    tolerance = checkFinite('randomTwin: tolerance', o.tolerance);
    if (!(tolerance > 0 && tolerance <= 1)) throw new AttnlabError('ERANGE', `randomTwin: tolerance = ${tolerance} is outside (0, 1] nats`);
  }
  return { kind, seed, set, limit, tolerance };
}

/**
 * A random-weight twin of a gpt2-family model: a new Model with the same config.json (the LM head tied), shapes
 * and tokenizer files and weights drawn from `seed` (see this file's header), loaded through loadModel.
 * options: kind 'matched' (default) or 'gpt2-init'; seed, an integer in [0, 2^32) (default 1); set, the inputs
 * the entropies are measured on (default 'heldout'; a name or a list, as evidenceSet); limit, the first inputs
 * of it (default 20 for a named set, all of a list); tolerance, nats (default 1e-3), how close each layer of a
 * matched twin must come to the trained model's entropy.
 * The twin carries twin: {kind, seed, scales (s_l, 1 for gpt2-init), entropies: {trained, twin, uniform},
 * inputs (how many), tolerance}. Dispose it as any model.
 * @returns {Promise<Model>}
 */
export async function randomTwin(model, options) {
  liveModel(model, 'randomTwin');
  if (model.config.family !== 'gpt2')
    throw new AttnlabError('ECONFIG', `random twins are built for gpt2-family models: ${model.config.family}`);
  const { kind, seed, set, limit, tolerance } = checkTwinOptions(options);
  const files = modelFiles(model);
  if (!files) throw new AttnlabError('ESTATE', 'randomTwin: the model does not hold the files it was loaded from');
  const list = inputsOf(model, set, limit, 'randomTwin');
  if (kind === 'matched') {
    // the scores of one layer, every input and head (rows 1..T-1, keys 0..i), held at once by the bisection
    const n = list.reduce((a, ids) => a + model.config.nHead * ((ids.length * (ids.length + 1)) / 2 - 1), 0);
    if (n > MAX_CALIBRATION_SCORES)
      throw new AttnlabError('ELIMIT', `randomTwin: the calibration would hold ${n} scores a layer, over ${MAX_CALIBRATION_SCORES} ` +
        '(256 MiB); use options.limit or shorter inputs');
  }
  const trained = twinEntropies(model, list);

  let cfg;
  try {
    cfg = JSON.parse(new TextDecoder().decode(files.config));
  } catch (e) {
    throw new AttnlabError('EJSON', `randomTwin: config.json: ${e.message}`, { cause: e });
  }
  const twinCfg = { ...cfg, tie_word_embeddings: true, torch_dtype: 'float32',
                    _name_or_path: `${typeof cfg._name_or_path === 'string' ? cfg._name_or_path : 'model'}-twin-${kind}-${seed}` };
  const { bytes, views, shapes } = gpt2InitSafetensors(twinCfg, seed, { attnlab_twin: kind });
  const sources = { config: JSON.stringify(twinCfg, null, 2), safetensors: bytes };
  for (const k of ['vocab', 'merges', 'tokenizer', 'tokenizerConfig']) if (files[k]) sources[k] = files[k];
  const loadOptions = twinLoadOptions(model);

  let twin = await loadModel(sources, loadOptions);
  const scales = new Array(shapes.L).fill(1);
  try {
    if (kind === 'matched') {
      for (let l = 0; l < shapes.L; l++) {
        const scores = layerScores(twin, list, l, scales.slice(0, l), scoreScale(twinCfg, shapes.HS, l));
        scales[l] = bisect(scores, trained[l], tolerance, l);
      }
      twin.dispose();
      twin = null;
      scaleQueries(views, shapes, scales);
      twin = await loadModel(sources, loadOptions);
    }
    const measured = twinEntropies(twin, list);
    if (kind === 'matched') {
      const off = measured.findIndex((h, l) => !(Math.abs(h - trained[l]) <= tolerance));
      if (off >= 0)
        throw new AttnlabError('ERANGE', `random twin: layer ${off}'s entropy ${measured[off].toFixed(6)} nats is not within ` +
          `${tolerance} of the trained model's ${trained[off].toFixed(6)} after calibration (s = ${scales[off]})`);
    }
    twin.twin = Object.freeze({
      kind, seed, scales: Object.freeze(scales),
      entropies: Object.freeze({ trained: Object.freeze(trained), twin: Object.freeze(measured), uniform: uniformEntropy(list) }),
      inputs: list.length, tolerance,
    });
    return twin;
  } catch (e) {
    if (twin) twin.dispose();
    throw e;
  }
}
