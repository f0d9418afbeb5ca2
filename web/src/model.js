// model.js — the friendly layer: loadModel, Model (tokenize, decode, run,
// generate, dispose) and Result. It hides pointers and numeric codes, checks
// every argument (AttnlabError with a stable .code before anything reaches C),
// and hands out plain JS data.
//
// One WebAssembly instance per model (core/instance.js says why).
//
// Ownership (see docs/api.md):
//   - everything a Model method returns is a copy in JS memory; it stays valid
//     after the next run, after dispose() and after wasm memory grows;
//   - a Result holds one Float32Array of all attentions (L·NH·T·T) and one of
//     the head averages (L·T·T); attention() and headAverage() return views
//     (subarrays) into them — no copy, so writing into a view changes the
//     Result; take .slice() for a private copy.

import { C } from './core/abi.js';
import { AttnlabError } from './core/errors.js';
import { alignTokens, attentionDiff, nextTokenDiff } from './counterfactual.js';
import { Result } from './result.js';
import { runSteps } from './evidence.js';
import * as measures from './measures.js';
import { repeatedTokens } from './sets.js';
import {
  RUN_OPTIONS, GENERATE_OPTIONS, checkOptions, checkString, textBytes, checkIds, checkLoadOptions, parseRunOptions,
  parseGenerateOptions,
} from './options.js';
import {
  checkReadOptions, defaultWasmURL, defaultWasmMTURL, defaultWasmRelaxedURL, defaultWasmRelaxedMTURL, readModelInto,
  resolveSource, resolveURL,
} from './sources.js';
import { instanceFor } from './core/instance.js';

// Where instanceFor finds the builds: this package's web/dist, or a URL the caller gave.
const WHERE = Object.freeze({ wasm: defaultWasmURL, wasmMT: defaultWasmMTURL, wasmRelaxed: defaultWasmRelaxedURL,
                              wasmRelaxedMT: defaultWasmRelaxedMTURL, resolveURL });

export { Result };

const { MASK_CAUSAL, MASK_WINDOW } = C;

/** The stepwise form of the evidence methods, for worker.js (progress and cancel between parts). */
export const EVIDENCE_JOB = Symbol('attnlab.evidenceJob');

// ---------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------

const NEW = Symbol('attnlab.Model');
let internals;

export class Model {
  #w;        // the AttnlabWasm of this model (null after dispose)
  #h;        // the alab_model handle
  #display = new Map(); // token id -> display string

  #windows; // each layer's own sliding window (0: none), what MASK_CAUSAL means on it
  #m;       // what measures.js sees of this model (its header says what)

  /** The null DAG score of layer l under a mask mode and window: the model's own mask where the mode is causal. */
  #layerNull(l, mode, window, T) {
    const own = mode === MASK_CAUSAL && this.#windows[l] > 0;
    return this.#w.maskNullDagScore(own ? MASK_WINDOW : mode, own ? this.#windows[l] : window, T);
  }

  /** @private use loadModel() */
  constructor(token, w, handle, source, engine = { threads: 1, asked: 1, build: 'attnlab.wasm', backend: 'simd128', note: null, backendNote: null }) {
    if (token !== NEW) throw new AttnlabError('ETYPE', 'use loadModel() to create a Model');
    this.#w = w;
    this.#h = handle;
    /**
     * {threads, asked, build, backend, note, backendNote}: the threads runs are split over, what was asked, the
     * wasm build, its kernels ('relaxed-simd' or 'simd128'), why fewer threads (or null), why not relaxed (or null).
     */
    this.engine = Object.freeze({ ...engine });
    /** 'relaxed-simd' (attnlab-relaxed*.wasm) or 'simd128' (attnlab*.wasm): the kernels this model runs. */
    this.backend = this.engine.backend;
    /** How the weights are held: 'f32', or 'half' (16-bit, converted inside the products; loadModel's weights option). */
    this.weights = w.modelHalf(handle) ? 'half' : 'f32';
    const c = w.config(handle);
    const windows = Array.from({ length: c.n_layer }, (_, l) => w.layerWindow(handle, l));
    /**
     * {nLayer, nHead, nEmbd, vocabSize, nPositions, headSize, layerNormEpsilon, family, nKvHead, headDim, layerMasks}:
     * family is config.json's model_type; nKvHead the key/value heads (< nHead with grouped-query
     * attention); headDim = headSize, the size of one head (not always nEmbd / nHead: Qwen3);
     * layerMasks the mask each layer runs under by default, 'causal' or 'window:W' (a causal mask within a
     * sliding window of W keys, from config.json: Mistral's sliding_window, Gemma 3's sliding layers). The
     * run option mask 'causal' means these; 'window:W' with W >= T removes a window.
     */
    this.config = Object.freeze({
      nLayer: c.n_layer, nHead: c.n_head, nEmbd: c.n_embd, vocabSize: c.vocab_size,
      nPositions: c.n_positions, headSize: c.head_dim, layerNormEpsilon: c.layer_norm_epsilon,
      family: w.modelFamily(handle), nKvHead: c.n_kv_head, headDim: c.head_dim,
      layerMasks: Object.freeze(windows.map((W) => (W > 0 ? `window:${W}` : 'causal'))),
    });
    this.#windows = windows;
    const self = this;
    this.#m = Object.freeze({
      get w() { return self.#live(); },
      get h() { return self.#h; },
      get config() { return self.config; },
      token: (id) => this.#token(id),
      idsOf: (input) => this.#idsOf(input),
      decode: (ids) => this.decode(ids),
      layerNull: (l, mode, window, T) => this.#layerNull(l, mode, window, T),
      headOutCache: new Map(), // the head outputs of a few reference texts (measures.js headOutputs)
    });
    /** Where the model came from: its directory URL, or 'buffers'. */
    this.source = source;
  }

  static {
    internals = (m) => ({ wasm: m.#w, handle: m.#h });
  }

  /** True once dispose() was called. */
  get disposed() { return this.#w === null; }

  #live() {
    if (this.#w === null) throw new AttnlabError('EDISPOSED', 'the model was disposed');
    return this.#w;
  }

  #token(id) {
    let s = this.#display.get(id);
    if (s === undefined) {
      s = this.#w.tokenDisplay(this.#h, id);
      this.#display.set(id, s);
    }
    return s;
  }

  // text (string) or ids (array) -> Int32Array of ids
  #idsOf(input) {
    const w = this.#live();
    if (typeof input === 'string') return w.encode(this.#h, textBytes(input));
    if (Array.isArray(input) || ArrayBuffer.isView(input)) return checkIds(input, this.config.vocabSize);
    throw new AttnlabError('ETYPE', `input must be a string or an array of token ids, got ${input === null ? 'null' : typeof input}`);
  }

  /**
   * GPT-2 BPE tokens of text.
   * @returns {{ids: Int32Array, tokens: string[]}} tokens are display strings (Ġ shown as a space)
   */
  tokenize(text) {
    this.#live();
    const ids = this.#idsOf(checkString('text', text));
    return { ids, tokens: Array.from(ids, (id) => this.#token(id)) };
  }

  /**
   * The bytes of each token (byte-level BPE: a token may hold part of a UTF-8
   * character, which its display string shows as U+FFFD).
   * @returns {Uint8Array[]}
   */
  tokenBytes(ids) {
    const w = this.#live();
    return Array.from(checkIds(ids, this.config.vocabSize), (id) => w.tokenBytes(this.#h, id).slice());
  }

  /** The text of token ids (invalid UTF-8 shown as U+FFFD). */
  decode(ids) {
    const w = this.#live();
    return w.decode(this.#h, checkIds(ids, this.config.vocabSize));
  }

  /**
   * Run the model on a text (or token ids), with interventions, and capture.
   * @param {string|ArrayLike<number>} input
   * @param {object} [options] {interventions, ablate, mask, scale, captureQK, topK}
   * @returns {Result}
   */
  run(input, options) {
    const w = this.#live();
    const o = checkOptions('run', options, RUN_OPTIONS);
    const ids = this.#idsOf(input);
    const T = ids.length;
    const cfg = this.config, L = cfg.nLayer;
    const { interventions, mask, scale, capture, topK } = parseRunOptions(o, cfg, T);
    w.forward(this.#h, ids, {
      interventions, ...mask, scale,
      captureLayer: capture ? capture.layer : -1, captureHead: capture ? capture.head : -1,
    });

    const { dagScores, headAverages, layerDagScores } = w.resultSummary(this.#h);
    const top = topK > 0 ? w.resultTopk(this.#h, topK) : { ids: [], probs: [] };
    // the null of the mask each layer ran under (uniform attention over what it lets a row see)
    // (causal: the layer's own mask, within its sliding window if config.json gives one)
    const layerNullDagScores = Array.from({ length: L }, (_, l) => (mask.layerMask
      ? this.#layerNull(l, mask.layerMask[l], mask.layerWindow[l], T) : this.#layerNull(l, mask.mask, mask.window, T)));
    return new Result({
      model: cfg,
      T,
      ids,
      tokens: Array.from(ids, (id) => this.#token(id)),
      attentions: w.resultAttention(this.#h),
      headAverages,
      logits: w.resultLogits(this.#h),
      top: Array.from(top.ids, (id, i) => ({ id, token: this.#token(id), prob: top.probs[i] })),
      dagScore: layerDagScores[L - 1],
      dagScores,
      layerDagScores,
      nullDagScore: layerNullDagScores[L - 1],
      layerNullDagScores,
      captureQK: capture,
      q: capture ? w.resultQ(this.#h) : null,
      k: capture ? w.resultK(this.#h) : null,
    });
  }

  /**
   * Continue a text: maxTokens new tokens, greedy (temperature 0, the default)
   * or sampled with a seeded RNG (same seed, same text).
   * @returns {{ids: Int32Array, tokens: string[], text: string}} the new tokens only
   */
  generate(input, options) {
    const w = this.#live();
    const o = checkOptions('generate', options, GENERATE_OPTIONS);
    const ids = this.#idsOf(input);
    const { maxNew, temperature, topK, seed } = parseGenerateOptions(o);
    // The context is checked before anything is allocated for the new ids
    // (maxTokens 2^28 would otherwise grow wasm memory by 1 GB first).
    const nPos = this.config.nPositions;
    if (ids.length + maxNew > nPos)
      throw new AttnlabError('ETOOLONG', `${ids.length} tokens + ${maxNew} new exceed the model's context of ${nPos}`);
    const out = w.generate(this.#h, ids, { maxNew, temperature, topK, rngState: seed });
    return { ids: out.ids, tokens: Array.from(out.ids, (id) => this.#token(id)), text: w.decode(this.#h, out.ids) };
  }

  /** {wasmBytes: size of this model's wasm memory, heapBytes: bytes malloc'ed in it}. */
  memoryUsage() {
    const w = this.#live();
    return { wasmBytes: w.memoryBytes(), heapBytes: w.heapInUse() };
  }

  /** Free the model and its wasm instance. Idempotent; later calls throw EDISPOSED. */
  dispose() {
    if (this.#w === null) return;
    const w = this.#w;
    this.#w = null;
    this.#display.clear();
    try {
      w.modelFree(this.#h);
    } catch {
      // a trapped instance (EWASM) cannot free; it is dropped whole anyway
    }
    w.stopThreads(); // the helper workers end with their model
    this.#h = 0;
  }

  // =========================================================================
  // Heads: importance and roles (c/src/heads.c; docs/heads.md)
  // -------------------------------------------------------------------------
  // Losses are mean next-token losses in nats. Each method runs the model
  // itself; Results returned earlier by run() are copies and stay valid.
  // =========================================================================

  /**
   * Which heads matter: the loss increase when each head is ablated alone,
   * and the pruning curve (the k least important heads removed together).
   * @param {string|ArrayLike<number>} input a text or ids (at least 2 tokens)
   * @param {{pruning?: boolean}} [options] pruning: false skips the curve (L·NH + 1 runs)
   * @returns {{baseLoss: number, delta: Float32Array, order: Int32Array,
   *   pruning: Float32Array|null, lossAtHalf: number|null, nLayer: number, nHead: number, T: number}}
   *   delta[l*NH + h]; order: heads by delta ascending; pruning[k], k = 0 … L·NH;
   *   lossAtHalf = pruning[floor(L·NH / 2)]
   */
  headImportance(input, options) { return measures.headImportance(this.#m, input, options); }

  /**
   * What each head does: previous-token, first-token (sink), duplicate-token
   * and induction scores of a plain (causal) run on input. The induction
   * score is defined only when the ids are two copies of one sequence (see
   * repeatedTokens); otherwise it is all zeros and inductionDefined is false.
   * @param {string|ArrayLike<number>} input
   * @param {{top?: number, interventions?: object[], ablate?: object[]}} [options] top: how many heads to
   *   name per role (default 3); interventions / ablate as in run: the roles of the heads of a run under them
   *   (an ablated head's attention is still read, and scored, as computed)
   * @returns {{prev: Float32Array, sink: Float32Array, dup: Float32Array, induction: Float32Array,
   *   inductionDefined: boolean, top: {prev, sink, dup, induction: {layer, head, score}[]},
   *   nLayer: number, nHead: number, T: number}}
   */
  headRoles(input, options) { return measures.headRoles(this.#m, input, options); }

  /**
   * The next-token loss of every position of a run, with interventions as in run:
   * losses[t] = −log p(ids[t+1] | ids[0..t]) in nats, t = 0 … T−2 (what headImportance
   * averages). With repeatedTokens(n) as input, losses[0 … n−2] score the first copy and
   * losses[n … 2n−2] the second (predictable only by copying from the first).
   * @param {string|ArrayLike<number>} input at least 2 tokens
   * @param {{interventions?: object[], ablate?: object[], mask?: string|string[]}} [options]
   * @returns {{losses: Float64Array, mean: number, T: number}}
   */
  tokenLosses(input, options) { return measures.tokenLosses(this.#m, input, options); }

  /**
   * Where the DAG score comes from: the DAG score of every head and every
   * layer for each input, next to the null score of uniform attention of its
   * length under the same mask (alab_mask_null_dag_score: causal (1/T) Σ i/(i+1); full (T−1)/(2T)).
   * @param {string|ArrayLike<number>|Array<string|ArrayLike<number>>} inputs one input or a list
   * @param {{mask?: 'causal'|'full'}} [options]
   * @returns {{mask: string, sentences: {T: number, head: Float32Array, layer: Float32Array, overall: number, null: number}[],
   *   mean: {head: Float64Array, layer: Float64Array, overall: number, null: number}, nLayer: number, nHead: number}}
   *   mean.* averages over the inputs; excess over the null = mean.overall − mean.null
   */
  dagProfile(inputs, options) { return measures.dagProfile(this.#m, inputs, options); }

  /**
   * Counterfactual pair (docs/heads.md): run inputA and inputB with the same
   * run options and compare them — which positions align (alignTokens), the
   * attention difference B − A on A's positions (NaN where a row or column
   * has no partner), and how the next-token distribution moves.
   * @returns {{a: Result, b: Result, alignment: object, aligned: [number, number][],
   *   attentionDiff: Float32Array, headDiff: Float32Array,
   *   next: {kl: number, tv: number, top: {id, token, pA, pB, delta}[]}}}
   */
  counterfactual(inputA, inputB, options) {
    this.#live();
    const a = this.run(inputA, options);
    const b = this.run(inputB, options);
    const alignment = alignTokens(a.ids, b.ids);
    const { attentionDiff: avg, headDiff } = attentionDiff(a, b, alignment.pairs);
    const next = nextTokenDiff(a.logits, b.logits, { k: 10, token: (id) => this.#token(id) });
    return { a, b, alignment, aligned: alignment.pairs, attentionDiff: avg, headDiff, next };
  }

  // ---- does attention explain? (docs/evidence.md) -------------------------
  // Each effect is a real forward pass with the intervention inside it. Long
  // computations take onProgress({done, total}) and an AbortSignal (EABORT).



  /**
   * Edge knockout against attention weight: for every causal pair j <= i, the
   * edge j -> i is knocked out of head (layer, head) (or of every head of the
   * layer, head 'all') and the next-token distributions at i and at the last
   * position are compared with the plain run's (KL).
   * @param {string|ArrayLike<number>} input
   * @param {{layer?: number, head?: number|'all', topK?: number, knockout?: 'renorm'|'zero', onProgress?: Function,
   *   signal?: AbortSignal}} [options] layer: default the last; head: default 'all'; topK: default T;
   *   knockout: renormalise the row after removing the key (default) or leave its sum below 1
   */
  edgeKnockout(input, options) { return this.#runJob(measures.edgeJob(this.#m, input, options)); }

  /**
   * Token knockout against three readings of attention: for each token j, the
   * token is removed (mode 'column': its column knocked out in every head of
   * every layer, renormalised or, with knockout 'zero', not; 'delete': deleted
   * from the input; 'replace': replaced by `neutral`, default " the") and the
   * next-token distribution after the input compared with the plain run's
   * (KL); beside it the last layer's head average, attention rollout and
   * attention flow to the last position, with their rank correlations.
   * @param {{mode?: 'column'|'delete'|'replace', knockout?: 'renorm'|'zero', neutral?: string|number,
   *   onProgress?: Function, signal?: AbortSignal}} [options]
   */
  tokenKnockout(input, options) { return this.#runJob(measures.tokenJob(this.#m, input, options)); }

  /**
   * Head importance and the pruning curve under three ways of removing a head:
   * zero (its output set to 0), mean (its output replaced by its mean over the
   * reference text's positions) and resample (its output at each position
   * taken from the run of a second text); and how much the rankings agree.
   * @param {{reference?: string|ArrayLike<number>, resample?: string|ArrayLike<number>, draws?: number,
   *   seed?: number, onProgress?: Function, signal?: AbortSignal}} [options]
   *   reference: default a held-out passage of the built-in model's corpus
   *   (REFERENCE_TEXT, cut at n_positions); without `resample`, the resample
   *   ablation averages `draws` (default 20) windows of the reference at
   *   offsets drawn with `seed` (default 1; alab_resample_draws, as the CLI),
   *   with a bootstrap interval per head over the draws; with `resample`, one
   *   run of that text, aligned (it must have at least as many tokens as input)
   */
  ablationSemantics(input, options) { return this.#runJob(measures.ablationJob(this.#m, input, options)); }

  /** For worker.js: the stepwise form of an evidence method (steps, finish), options without callbacks. */
  [EVIDENCE_JOB](kind, input, options) { return measures.evidenceJob(this.#m, kind, input, options); }

  #runJob(job) {
    return job.finish(runSteps(job.steps, { ...job.progress, alive: () => this.#w !== null }));
  }







  /**
   * The inputs of a set: 'heldout' (held-out sentences of the built-in model's corpus), 'repeated' (random
   * tokens repeated twice; GPT-2 vocabulary ids), or a list of strings / id arrays. Each becomes ids, cut
   * at n_positions; inputs of fewer than 2 tokens are an error naming their index.
   */
  evidenceSet(set, options) { return measures.evidenceSet(this.#m, set, options); }

  /**
   * Edge knockout of one layer over a set of inputs: the mean per-input rank correlation of attention with
   * the knockout effects, each with a 95 % bootstrap interval over inputs, a within-row permutation null and
   * its p-value, the uniform and row-permuted baselines, and the noise floor (docs/evidence.md § 5, over a set of inputs).
   * @param {string|Array<string|ArrayLike<number>>} set 'heldout', 'repeated' or a list of inputs
   * @param {{layer?: number, head?: number|'all', knockout?: 'renorm'|'zero', limit?: number, nBoot?: number,
   *   nPerm?: number, seed?: number, level?: number, epsilon?: number, onProgress?: Function, signal?: AbortSignal}} [options]
   */
  edgeKnockoutSet(set, options) { return this.#runJob(measures.edgeSetJob(this.#m, set, options)); }



  /**
   * Token knockout over a set of inputs: the mean per-input rank correlation of each reading (last layer,
   * rollout, flow) with the token-knockout effects, with a bootstrap interval, a permutation null and its
   * p-value, and the noise floor (docs/evidence.md § 5, over a set of inputs).
   * @param {string|Array<string|ArrayLike<number>>} set
   * @param {{mode?: 'column'|'delete'|'replace', knockout?: 'renorm'|'zero', neutral?: string|number, limit?: number,
   *   nBoot?: number, nPerm?: number, seed?: number, level?: number, epsilon?: number, onProgress?: Function, signal?: AbortSignal}} [options]
   */
  tokenKnockoutSet(set, options) { return this.#runJob(measures.tokenSetJob(this.#m, set, options)); }


  /**
   * Head ablation over a set of inputs: each head's loss increase under zero, mean and resample ablation
   * (resample averaged over `draws` windows of the reference), with bootstrap intervals over inputs, and how
   * far the three rankings agree (docs/evidence.md § 5, over a set of inputs).
   * @param {{draws?: number, reference?: string|ArrayLike<number>, limit?: number, nBoot?: number, seed?: number,
   *   level?: number, onProgress?: Function, signal?: AbortSignal}} [options] draws: default 20
   */
  ablationSet(set, options) { return this.#runJob(measures.ablationSetJob(this.#m, set, options)); }



  /**
   * Activation patching over clean/corrupted pairs: 'pairs' (the built-in minimal pairs, with their one-token
   * answers) or a list of [clean, corrupted] or [clean, corrupted, [answerClean, answerCorrupt]]; without
   * answers each run's top next token. Each head's patching score and the last position's residual stream
   * per layer, averaged over pairs with bootstrap intervals; pairs whose runs give the same logit difference
   * are skipped and listed.
   * @param {{limit?: number, minGap?: number, nBoot?: number, seed?: number, level?: number, onProgress?: Function,
   *   signal?: AbortSignal}} [options] minGap: pairs whose two logit differences are closer than this (default
   *   1 nat) are skipped, since the normalised score divides by that gap
   */
  patchingSet(pairs, options) { return this.#runJob(measures.patchingSetJob(this.#m, pairs, options)); }




  // ---- where a head looks versus what it moves (docs/evidence.md § 6–11) ----




  /**
   * Pattern versus value patching of every head, denoising and noising: the head's attention pattern alone,
   * its values alone, or both taken from the other run (docs/evidence.md § 6). grid.denoise.pattern etc. are
   * Float32Array (nLayer * nHead) of normalised logit differences (0 = corrupted, 1 = clean).
   * @param {{answers?: [string|number, string|number]}} [options]
   */
  patternValuePatching(clean, corrupt, options) { return measures.patternValuePatching(this.#m, clean, corrupt, options); }

  /**
   * Path patching (Wang et al. 2022): each sender head's output patched only along its path into each
   * receiver — a head's 'q', 'k' or 'v' input, or the 'logits' (docs/evidence.md § 7 for the freezing rule).
   * @param {{answers?: Array, receivers: Array<{layer?: number, head?: number, input: 'q'|'k'|'v'|'logits'}>,
   *   direction?: 'denoise'|'noise', freezeMlp?: boolean}} options
   */
  pathPatching(clean, corrupt, options) { return measures.pathPatching(this.#m, clean, corrupt, options); }

  /**
   * Direct logit attribution at the last position, the final norm's scale frozen at the plain run's (docs/evidence.md § 8).
   * @param {{answers: [string|number] | [string|number, string|number]}} options u = W_U[a] (- W_U[b])
   */
  directLogitAttribution(input, options) { return measures.directLogitAttribution(this.#m, input, options); }

  /** ||v_j W_O^h|| per (layer, head, position) (Kobayashi et al. 2020): Float32Array (nLayer * nHead * T). */
  valueNorms(input) { return measures.valueNorms(this.#m, input); }

  /** Causal tracing by component: the clean run's attention or MLP output restored at each (layer, position). */
  componentTracing(clean, corrupt, options) { return measures.componentTracing(this.#m, clean, corrupt, options); }

  /**
   * Q-, K- and V-composition scores of every head pair in adjacent layers (Elhage et al. 2021), with the scores
   * of Gaussian matrices of the same shapes as a null (nNull draws, default 200).
   * @param {{nNull?: number, seed?: number}} [options]
   */
  compositionScores(options) { return measures.compositionScores(this.#m, options); }

  /** patternValuePatching over a set of pairs (patchingSet's forms), with intervals and the pattern's share of each head's effect. */
  patternValueSet(pairs, options) { return this.#runJob(measures.circuitSetJob(this.#m, 'patternValueSet', pairs, options)); }
  /** pathPatching over a set of pairs, options.receivers as pathPatching. */
  pathPatchingSet(pairs, options) { return this.#runJob(measures.circuitSetJob(this.#m, 'pathPatchingSet', pairs, options)); }
  /** componentTracing over a set of pairs: per layer at the corrupted positions, the last and the others. */
  componentTracingSet(pairs, options) { return this.#runJob(measures.circuitSetJob(this.#m, 'componentTracingSet', pairs, options)); }
  /** directLogitAttribution of each pair's clean input along W_U[answer clean] - W_U[answer corrupted]. */
  attributionSet(pairs, options) { return this.#runJob(measures.circuitSetJob(this.#m, 'attributionSet', pairs, options)); }




  /**
   * Activation patching from a clean into a corrupted input of equal length:
   * the residual stream entering each layer at each position, and each head's
   * output at every position, taken from the clean run. Metric: the logit
   * difference of two answers at the last position, 0 = corrupted, 1 = clean.
   * @param {{answers?: [string|number, string|number]}} [options] default: the
   *   top next token of each run; a string answer must be exactly one token
   */
  activationPatching(clean, corrupt, options) { return measures.activationPatching(this.#m, clean, corrupt, options); }

  /**
   * A seeded random token sequence r of length n, repeated: r ++ r (2n ids),
   * the input of the induction score. Ids are uniform in [lo, hi) (default
   * [0, V - 1): every id but the last, GPT-2's <|endoftext|>), drawn with
   * mulberry32(seed), so the same seed gives the same ids everywhere.
   * @param {number} n length of r, 2 ≤ n ≤ floor(n_positions / 2)
   * @param {{seed?: number, lo?: number, hi?: number}} [options]
   * @returns {Int32Array}
   */
  repeatedTokens(n, options) {
    this.#live();
    return repeatedTokens(n, options, this.config);
  }
}

/** For tests: the AttnlabWasm and handle behind a Model (wasm is null after dispose). */
export function modelInternals(model) {
  return internals(model);
}

// ---------------------------------------------------------------------------
// loadModel
// ---------------------------------------------------------------------------

/**
 * Load a GPT-2-family model into its own WebAssembly instance.
 * @param {undefined|null|string|URL|object|FileList|File[]} [source] see sources.js
 * @param {{onProgress?: (e: object) => void, wasm?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          threads?: 'auto'|number, wasmMT?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          wasmRelaxed?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          wasmRelaxedMT?: string|URL|BufferSource|WebAssembly.Module|Response,
 *          backend?: 'auto'|'relaxed-simd'|'simd128',
 *          threadWorker?: string|URL, signal?: AbortSignal, timeoutMs?: number,
 *          redirects?: 'same-origin'|'any'|'none'}} [options]
 *   backend: 'auto' (default) runs the relaxed-SIMD build (attnlab-relaxed.wasm, -mt: every multiply-add
 *   of the kernels one f32x4.relaxed_madd) where WebAssembly.validate accepts a relaxed instruction, else
 *   the SIMD128 build; 'relaxed-simd' or 'simd128' asks for one (EWASM where relaxed SIMD does not run).
 *   wasmRelaxed, wasmRelaxedMT: where the relaxed builds are. model.backend says which runs.
 *   signal: aborts the load (EABORT); timeoutMs: a download that goes this long without a byte is
 *   ended (ETIMEDOUT; default 30000, 0 for none); redirects: which HTTP redirects are followed
 *   (default 'same-origin': only within the origin of the URL given). See sources.js.
 *   threads: split runs over this many threads ('auto', the default: min(cores, 4) on a cross-origin
 *   isolated page, 1 elsewhere and in Node); wasmMT: where attnlab-mt.wasm is; threadWorker: the URL
 *   of core/thread.js where a bundler cannot find it. Numbers are bit for bit the same either way.
 * @returns {Promise<Model>}
 */
export async function loadModel(source, options) {
  const { onProgress, wasm, threads, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threadWorker, signal, timeoutMs, redirects,
          weights } = checkLoadOptions(options);
  const readOpts = checkReadOptions({ signal, timeoutMs, redirects });
  const emit = onProgress ? (e) => onProgress(e) : () => {};
  const src = await resolveSource(source);
  const t0 = performance.now();
  const { w, engine } = await instanceFor({ wasm, wasmMT, wasmRelaxed, wasmRelaxedMT, backend, threads, threadWorker }, WHERE);
  const t1 = performance.now();
  let files;
  try {
    files = await readModelInto(w, src, emit, readOpts);
  } catch (e) {
    w.stopThreads();
    throw e;
  }
  const t2 = performance.now();
  let handle;
  try {
    // GPT-2's four files take the path they always took; any other folder the general loader
    // (shards, index, tokenizer.json). Both own the weight buffers from here.
    const legacy = weights === 'auto' && files.shards.length === 1 && !files.index && !files.tokenizer && files.vocab && files.merges;
    handle = legacy ? w.loadModelFromHeap(files, files.stPtr, files.stLen) : w.loadModelFiles(files, files.shards, { weights });
  } catch (e) {
    w.stopThreads();
    throw e;
  }
  const t3 = performance.now();
  let model;
  try {
    model = new Model(NEW, w, handle, files.name, engine);
  } catch (e) {
    w.modelFree(handle);
    w.stopThreads();
    throw e;
  }
  try {
    // where the load's time went (the page's benchmark reports it): the engine's wasm compiled and
    // started (0 when an earlier load did it), the files read into wasm memory, the model built from them
    const ms = (x) => Math.round(x * 10) / 10;
    emit({ status: 'ready', file: null, timing: { wasmMs: ms(t1 - t0), readMs: ms(t2 - t1), buildMs: ms(t3 - t2) } });
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}
