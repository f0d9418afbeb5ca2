// Type declarations of 'attnlab' (web/src/index.js). Documentation: docs/api.md.
// They use the DOM's Blob, File, FileList, Response and Worker types: compile with the "dom" (or "webworker")
// lib, also in Node projects. Checked with TypeScript 5 (strict; nodenext and bundler resolution).

import type { ModelMeasures } from './measures.js';
export type { ModelMeasures, WorkerModelMeasures } from './measures.js';

/** Stable error codes: the ALAB_E* names of the C library, and six of the JS side. */
export type AttnlabErrorCode =
  | 'EINVAL' | 'ENOMEM' | 'EIO' | 'EJSON' | 'ECONFIG' | 'EFORMAT' | 'EDTYPE' | 'EMISSING' | 'ESHAPE'
  | 'EVOCAB' | 'EMERGES' | 'EEMPTY' | 'ETOOLONG' | 'ERANGE' | 'ENAN' | 'ELIMIT' | 'ESTATE' | 'ETHREAD' | 'EMASKED'
  | 'ETYPE' | 'EWASM' | 'EDISPOSED' | 'EABORT' | 'ETIMEDOUT' | 'EINTERNAL';

/** Everything attnlab throws (or rejects with) is an AttnlabError. */
export class AttnlabError extends Error {
  constructor(code: AttnlabErrorCode | string, message: string, extra?: { rc?: number; cause?: unknown });
  readonly name: 'AttnlabError';
  /** Stable code, e.g. 'ERANGE'. */
  readonly code: AttnlabErrorCode;
  /** The C return code (negative) for C failures, 0 for JS-side ones. */
  readonly rc: number;
}

/** Every code an AttnlabError can carry. */
export const ERROR_CODES: readonly AttnlabErrorCode[];

/** Bytes of one model file. Strings are accepted for config, vocab and merges. */
export type FileData = ArrayBuffer | ArrayBufferView | Blob;

/** The four files of a Hugging Face GPT-2 directory, in memory. */
export interface ModelFiles {
  config: FileData | string;
  safetensors: FileData;
  vocab: FileData | string;
  merges: FileData | string;
}

/**
 * The files of any Hugging Face model folder (gpt2, gpt_neox, llama, qwen2, qwen3), in memory: the weights as
 * model.safetensors or as model.safetensors.index.json (index) + the shards it names ({fileName: data}); the
 * tokenizer as vocab.json + merges.txt or tokenizer.json (+ tokenizer_config.json).
 */
export interface HFModelFiles {
  config: FileData | string;
  safetensors?: FileData;
  index?: FileData | string;
  shards?: Record<string, FileData>;
  vocab?: FileData | string;
  merges?: FileData | string;
  tokenizer?: FileData | string;
  tokenizerConfig?: FileData | string;
}

/**
 * Where a model comes from:
 *  - undefined / null: the built-in model (models/brown-gpt2/ of the package);
 *  - a URL (or string) of a Hugging Face model folder (config.json, model.safetensors
 *    or its index and shards, vocab.json + merges.txt or tokenizer.json; in Node also a file path);
 *  - the files as buffers / Blobs (ModelFiles, HFModelFiles);
 *  - File objects (a FileList or an array), matched by file name.
 */
export type ModelSource = undefined | null | string | URL | ModelFiles | HFModelFiles | FileList | File[] | Blob[];

/** Where attnlab.wasm comes from (default: web/dist/attnlab.wasm of the package). */
export type WasmSource = string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module;

/** A loading progress event (transformers.js style). */
export type LoadProgressEvent =
  | { status: 'initiate'; file: ModelFileName }
  | { status: 'download'; file: ModelFileName; total: number | null; url?: string }
  | { status: 'progress'; file: ModelFileName; loaded: number; total: number | null; progress: number | null }
  | { status: 'waiting'; file: ModelFileName; loaded: number; total: number | null; idleMs: number }
  | { status: 'done'; file: ModelFileName; loaded: number; total: number; url?: string }
  | { status: 'ready'; file: null };

export type ModelFileName = 'config.json' | 'vocab.json' | 'merges.txt' | 'model.safetensors' | 'tokenizer.json' |
  'tokenizer_config.json' | 'model.safetensors.index.json' | string /* a shard: model-0000k-of-0000n.safetensors */;

export interface LoadOptions {
  /** Called for every progress event; throwing from it aborts the load. */
  onProgress?: (event: LoadProgressEvent) => void;
  /** Override the location of attnlab.wasm. */
  wasm?: WasmSource;
  /**
   * Threads to split every run over (1–16, the calling thread included). 'auto' (default): min(cores, 4)
   * on a cross-origin isolated page, 1 elsewhere and in Node. Results are bit for bit the same.
   */
  threads?: 'auto' | number;
  /** Override the location of attnlab-mt.wasm (used with more than one thread). */
  wasmMT?: WasmSource;
  /**
   * Which kernels: 'auto' (default) runs the relaxed-SIMD build (attnlab-relaxed.wasm, -mt.wasm: every
   * multiply-add one f32x4.relaxed_madd) where WebAssembly.validate accepts a relaxed instruction, else the
   * SIMD128 build; 'relaxed-simd' or 'simd128' asks for one (EWASM where relaxed SIMD does not run).
   */
  backend?: 'auto' | Backend;
  /** Override the location of attnlab-relaxed.wasm. */
  wasmRelaxed?: WasmSource;
  /** Override the location of attnlab-relaxed-mt.wasm. */
  wasmRelaxedMT?: WasmSource;
  /** The URL of the helper threads' worker script (web/src/core/thread.js), where a bundler cannot find it. */
  threadWorker?: string | URL;
  /** Aborting it ends the load (EABORT), freeing what it held. */
  signal?: AbortSignal;
  /** A download that goes this long without a byte is ended (ETIMEDOUT). Default 30000; 0: no stall timeout. */
  timeoutMs?: number;
  /** Which HTTP redirects are followed (default 'same-origin': only within the origin of the URL given). */
  redirects?: 'same-origin' | 'any' | 'none';
  /**
   * How F16/BF16 weights are held: 'f32' (converted at load), 'half' (16-bit, converted inside each product:
   * about half the memory, slower), 'auto' (default: 'f32' unless that copy would exceed 3 GiB).
   */
  weights?: 'auto' | 'f32' | 'half';
}

/** The kernel builds: wasm SIMD128 with relaxed SIMD (f32x4.relaxed_madd), or SIMD128 alone. */
export type Backend = 'relaxed-simd' | 'simd128';

/** What a model runs on (docs/api.md, Threads). */
export interface Engine {
  /** Threads every run is split over. */
  readonly threads: number;
  /** The threads option as given ('auto' when omitted). */
  readonly asked: 'auto' | number;
  readonly build: 'attnlab.wasm' | 'attnlab-mt.wasm' | 'attnlab-relaxed.wasm' | 'attnlab-relaxed-mt.wasm';
  /** The kernels that run: 'relaxed-simd' (the relaxed builds) or 'simd128'. */
  readonly backend: Backend;
  /** Why 'auto' did not run the relaxed build (this engine refuses it, or it could not start), or null. */
  readonly backendNote: string | null;
  /** Why fewer threads run than could have been asked for, or null. */
  readonly note: string | null;
}

/** The model's shape. */
export interface ModelConfig {
  readonly nLayer: number;
  readonly nHead: number;
  readonly nEmbd: number;
  readonly vocabSize: number;
  readonly nPositions: number;
  /** The size of one head (nEmbd / nHead except where config.json says otherwise, e.g. Qwen3); = headDim. */
  readonly headSize: number;
  /** The norm's epsilon (LayerNorm, or RMSNorm for Llama/Qwen). */
  readonly layerNormEpsilon: number;
  /** config.json's model_type. */
  readonly family: 'gpt2' | 'gpt_neox' | 'llama' | 'qwen2' | 'qwen3' | 'mistral' | 'gemma3_text';
  /** Key/value heads: nHead / nKvHead query heads share one (grouped-query attention); = nHead otherwise. */
  readonly nKvHead: number;
  /** The size of one head. */
  readonly headDim: number;
  /**
   * The mask each layer runs under by default: 'causal', or 'window:W' (causal within a sliding window of W keys,
   * from config.json: Mistral's sliding_window, Gemma 3's sliding layers). The run option mask 'causal' means these.
   */
  readonly layerMasks: readonly string[];
}

/** A head index, or 'all' for every head of the layer. */
export type HeadSelector = number | 'all';

/** A do-operation inside the network (0-based indices; row = query/effect, col = key/cause). */
export type Intervention =
  /** After softmax, row `row` of the head's attention becomes one-hot at `col`. */
  | { kind: 'hard'; layer: number; head: HeadSelector; row: number; col: number; lambda?: number }
  /** λ is added to the pre-softmax score (row, col), then softmax as usual. */
  | { kind: 'soft'; layer: number; head: HeadSelector; row: number; col: number; lambda: number }
  /** The head's output is zeroed before the output projection. */
  | { kind: 'ablate'; layer: number; head: HeadSelector }
  /** An intervention on a mechanism (rung 2): the head's W_Q becomes α·W_Q (bias kept) and the pass is re-inferred. */
  | { kind: 'scaleQ'; layer: number; head: HeadSelector; alpha: number }
  /** An intervention on a mechanism (rung 2): the head's W_K becomes α·W_K (bias kept). */
  | { kind: 'scaleK'; layer: number; head: HeadSelector; alpha: number }
  /** An intervention on a mechanism (rung 2): the head's W_Q and W_K are swapped (biases kept). */
  | { kind: 'swapQK'; layer: number; head: HeadSelector };

/** 'causal' (default), 'full' (no mask), 'window:W' (causal, the last W positions). */
export type MaskSpec =
  | 'causal' | 'full' | `window:${number}`
  | { mode: 'causal' | 'full' }
  | { mode: 'window'; window: number };

export interface RunOptions {
  interventions?: Intervention[];
  /** Shorthand for ablate interventions: [[layer, head], ...]. */
  ablate?: Array<[number, HeadSelector]>;
  /** One mask for every layer, or an array with one per layer. */
  mask?: MaskSpec | MaskSpec[];
  /** The score scale instead of 1/√headSize (0 = uniform attention). */
  scale?: number | null;
  /** Capture q and k of one head. */
  captureQK?: { layer: number; head: number } | null;
  /** How many next tokens to report in `top` (default 10; clamped to the vocabulary; 0 = none). */
  topK?: number;
}

export interface TopToken {
  id: number;
  /** Display string (Ġ shown as a space, invalid UTF-8 as U+FFFD). */
  token: string;
  prob: number;
}

/** The outcome of one run: plain data, valid after the model is disposed. */
export interface Result {
  readonly model: ModelConfig;
  /** Number of tokens. */
  readonly T: number;
  readonly ids: Int32Array;
  /** Display strings, one per token. */
  readonly tokens: string[];
  /** Every attention probability, (nLayer, nHead, T, T), row = query. One copy. */
  readonly attentions: Float32Array;
  /** The mean over heads of each layer, (nLayer, T, T). */
  readonly headAverages: Float32Array;
  /** Logits of the last position, (vocabSize). */
  readonly logits: Float32Array;
  /** The topK most likely next tokens after the interventions, descending. */
  readonly top: TopToken[];
  /** DAG score of the last layer's head average. */
  readonly dagScore: number;
  /** DAG score of every head, [nLayer][nHead]. */
  readonly dagScores: number[][];
  /** DAG score of every layer's head average, [nLayer]. */
  readonly layerDagScores: number[];
  /** The null of dagScore: uniform attention over T tokens under the last layer's mask (causal 0.7071, full 0.45 for T = 10). */
  readonly nullDagScore: number;
  /** The null of each layer's mask, [nLayer]. */
  readonly layerNullDagScores: number[];
  /** The captured head, or null. */
  readonly captureQK: { layer: number; head: number } | null;
  /** q of the captured head, (T, headSize), before scaling; null if none. */
  readonly q: Float32Array | null;
  /** k of the captured head, (T, headSize); null if none. */
  readonly k: Float32Array | null;
  /** One head's T×T attention, or the head average with 'avg' (default). A view into attentions / headAverages. */
  attention(layer: number, head?: number | 'avg'): Float32Array;
  /** The head average of one layer (T×T), a view into headAverages. */
  headAverage(layer: number): Float32Array;
}

export interface GenerateOptions {
  /** New tokens (default 20). */
  maxTokens?: number;
  /** 0 (default) = greedy; > 0 samples from softmax(logits / temperature). */
  temperature?: number;
  /** Sample among the k most likely tokens (0 = all, the default). */
  topK?: number;
  /** RNG seed (default 0): the same seed gives the same text. */
  seed?: number | bigint;
}

export interface Generated {
  /** The new tokens only. */
  ids: Int32Array;
  tokens: string[];
  /** The new text (decoded new tokens). */
  text: string;
}

export interface MemoryUsage {
  /** Size of the model's wasm memory (grows, never shrinks). */
  wasmBytes: number;
  /** Bytes malloc'ed in it. */
  heapBytes: number;
}

/** A loaded model, with its own WebAssembly instance. */
export interface Model {
  readonly config: ModelConfig;
  /** The model directory URL, or 'buffers'. */
  readonly source: string;
  /** The threads and the wasm build it runs on. */
  readonly engine: Engine;
  /** The kernels this model runs (engine.backend). */
  readonly backend: Backend;
  /** How the weights are held: 'f32', or 'half' (LoadOptions.weights). */
  readonly weights: 'f32' | 'half';
  readonly disposed: boolean;
  tokenize(text: string): { ids: Int32Array; tokens: string[] };
  decode(ids: ArrayLike<number>): string;
  /** The bytes of each token (a byte-level token may hold part of a UTF-8 character). */
  tokenBytes(ids: ArrayLike<number>): Uint8Array[];
  run(input: string | ArrayLike<number>, options?: RunOptions): Result;
  generate(input: string | ArrayLike<number>, options?: GenerateOptions): Generated;
  memoryUsage(): MemoryUsage;
  /** Frees the model and its instance; idempotent. Later calls throw EDISPOSED. */
  dispose(): void;
}

/** Load a GPT-2-family model. */
export function loadModel(source?: ModelSource, options?: LoadOptions): Promise<Model>;

// ---------------------------------------------------------------------------
// Random-weight twins (web/src/twins.js; docs/evidence.md "Random-weight twins")
// ---------------------------------------------------------------------------

/** 'gpt2-init': GPT-2's initialisation; 'matched': the same draws, each layer's queries scaled to the trained entropy. */
export type TwinKind = 'gpt2-init' | 'matched';
export interface RandomTwinOptions {
  /** default 'matched' */
  kind?: TwinKind;
  /** an integer in [0, 2^32), the splitmix64 seed of the weights (default 1) */
  seed?: number;
  /** the inputs the entropies are measured on: a set name or a list of inputs (default 'heldout') */
  set?: EvidenceSet;
  /** the first `limit` inputs (default 20 for a named set, all of a list) */
  limit?: number;
  /** how close, in nats, each layer of a matched twin must come to the trained model's entropy (default 1e-3, in (0, 1]) */
  tolerance?: number;
}
/** What a twin is: its kind, seed, query scales and per-layer mean attention entropies (nats, rows 1..T-1, over the set). */
export interface TwinInfo {
  kind: TwinKind;
  seed: number;
  /** s_l per layer (all 1 for 'gpt2-init') */
  scales: readonly number[];
  /** trained and twin per layer; uniform: the entropy of uniform attention, mean over inputs of mean_{i≥1} ln(i+1) */
  entropies: { trained: readonly number[]; twin: readonly number[]; uniform: number };
  /** how many inputs the entropies are over */
  inputs: number;
  tolerance: number;
}
/** A twin: a Model (dispose it as any) that says what it is. */
export interface TwinModel extends Model {
  readonly twin: TwinInfo;
}
/**
 * A random-weight twin of a gpt2-family model (same config, shapes and tokenizer; weights drawn from the seed),
 * loaded through loadModel. ECONFIG for another family.
 */
export function randomTwin(model: Model, options?: RandomTwinOptions): Promise<TwinModel>;

/** The set measures controlledEvidence runs (web/src/verdicts.js). */
export type ControlledKind = 'edgeKnockoutSet' | 'tokenKnockoutSet';
export interface ControlledEvidenceOptions {
  /** the twins to run beside the trained model (default both; [] for none) */
  twins?: TwinKind[];
  /** the twins' seed (default 1) */
  twinSeed?: number;
  /** one cluster id per input (default: the documents of 'heldout', else each input its own) */
  clusters?: (string | number)[];
  onProgress?: (e: { stage: string }) => void;
  /** the measure's own options (limit, layer, head, knockout, mode, nBoot, nPerm, seed, level, epsilon, …) */
  [measureOption: string]: unknown;
}
/** A mean over inputs with its cluster-bootstrap interval (stats.js clusterBootstrapMean). */
export interface ClusteredInterval {
  mean: number | null; lo: number | null; hi: number | null;
  /** inputs with a value, and the clusters they fall in */
  n: number; nClusters: number;
}
/** x − y on the same inputs (stats.js pairedDiff), with Holm's adjustment over the table. */
export interface PairedDifference {
  mean: number | null; lo: number | null; hi: number | null;
  /** two-sided, cluster sign-flip permutations */
  p: number | null;
  /** p adjusted by Holm over every comparison of the table */
  pHolm: number | null;
  nPairs: number; nClusters: number;
}
export interface ControlledComparison { value: ClusteredInterval; diff: PairedDifference }
/** One reading of the trained model against its controls. */
export interface ControlledFocus {
  /** e.g. 'weights/local' (edges) or 'rollout' (tokens) */
  name: string;
  label: string;
  trained: ClusteredInterval;
  /** the same number on each twin, and trained − twin */
  twins: Partial<Record<TwinKind, ControlledComparison>>;
  /** each position reading, and the reading − it */
  positions: (ControlledComparison & { name: string; label: string })[];
  /** the sentences that say what the comparisons show, including when a control comes out the same */
  verdict: string[];
}
export interface ControlledEvidence {
  kind: ControlledKind;
  set: EvidenceSetName | 'list';
  n: number;
  /** how many clusters the inputs fall in */
  clusters: number;
  clusteredBy: 'document' | 'input';
  nBoot: number; nPerm: number; level: number; seed: number;
  trained: EdgeKnockoutSet | TokenKnockoutSet;
  twins: Partial<Record<TwinKind, { twin: TwinInfo; result: EdgeKnockoutSet | TokenKnockoutSet }>>;
  focus: ControlledFocus[];
  /** how many paired comparisons Holm adjusted over */
  comparisons: number;
}
/**
 * A set measure on the model and on its random-weight twins, on the same inputs, with position controls, intervals
 * clustered by document, paired differences, Holm's correction and verdict sentences (docs/evidence.md § 5).
 */
export function controlledEvidence(model: Model, kind: ControlledKind, set: EvidenceSet, options?: ControlledEvidenceOptions): Promise<ControlledEvidence>;

/** Matrices are flat, row-major T×T arrays (row = query). */
export type Matrix = ArrayLike<number>;

/** Sum strictly below the diagonal / sum of all entries. */
export function dagScore(A: Matrix): number;
/** The DAG score of uniform attention under a mask: causal (1/T) Σ_{i<T} i/(i+1), full (T−1)/(2T), window:W (1/T) Σ (n−1)/n, n = min(i+1, W). */
export function nullDagScore(T: number, mask?: 'causal' | 'full' | `window:${number}` | { mode: 'causal' | 'full' | 'window'; window?: number }): number;
/** A − Aᵀ. */
export function asymmetry(A: Matrix): Float32Array;
/** Mean over heads of att (nHead, T, T). */
export function headAverage(att: ArrayLike<number>, nHead: number): Float32Array;
/** q ⊗ k (HS × HS) and its trace q·k. */
export function outerProduct(q: ArrayLike<number>, k: ArrayLike<number>): { matrix: Float32Array; trace: number };
/** Mean row entropy in nats. */
export function entropy(A: Matrix): number;
/** The chapter's display-level do on a drawn matrix, on a copy. */
export function displayDo(A: Matrix, op: { kind: 'hard' | 'soft'; row: number; col: number; lambda?: number }): Float32Array;

// ── Lineage demos: Hopfield and linear attention (web/src/lineage.js, docs/lineage.md) ──

/** Side of the built-in glyphs (10×10 digits 0–9). */
export const GLYPH_SIDE: 10;
/** The classical Hebbian capacity, patterns per neuron: 0.138. */
export const HOPFIELD_CAPACITY: 0.138;

/** A uint64 RNG seed: a non-negative safe integer or a BigInt. */
export type Seed = number | bigint;
export type HopfieldMode = 'async' | 'sequential' | 'sync';
export type FeatureMapName = 'elu' | 'relu' | 'favor';
export type LinearForm = 'prefix' | 'rnn' | 'quadratic';
/** A list of ±1 patterns: arrays of N values, or one flat P·N array (with the N option). */
export type Patterns = ArrayLike<number>[] | ArrayLike<number>;

export interface HopfieldRunResult {
  state: Float32Array;
  /** energies[0] is the start, energies[k] the energy after step k. */
  energies: Float64Array;
  steps: number;
  converged: boolean;
}
export interface ModernRunResult extends HopfieldRunResult {
  /** softmax(β X ξ) of the last step (N). */
  weights: Float32Array;
}
export interface CapacityResult {
  N: number;
  loads: Float32Array;
  /** Fraction of retrievals ending with overlap ≥ threshold, per load. */
  success: Float32Array;
  /** Mean final overlap, per load. */
  overlap: Float32Array;
  capacity: 0.138;
}
export interface FeatureOptions { featureMap?: FeatureMapName; m?: number; W?: ArrayLike<number>; seed?: Seed }

/** The lineage demos on one WebAssembly instance; every method is synchronous. */
export class Lineage {
  private constructor();
  /** The build that runs ('auto' takes the relaxed-SIMD one where the engine runs it, like loadModel). */
  readonly backend: Backend;
  /** Why 'auto' runs the SIMD128 build (null when it runs the relaxed one, or a backend was named). */
  readonly backendNote: string | null;
  dispose(): void;
  /** Glyph g (0–9): 100 ±1 values, row-major, +1 = ink. */
  glyph(g: number): Float32Array;
  /** W = (1/N) Σ p pᵀ, zero diagonal (N×N). */
  hebbian(patterns: Patterns, options?: { N?: number }): Float32Array;
  /** −½ sᵀ W s. */
  energy(W: ArrayLike<number>, state: ArrayLike<number>): number;
  overlap(a: ArrayLike<number>, b: ArrayLike<number>): number;
  corrupt(pattern: ArrayLike<number>, fraction: number, options?: { seed?: Seed }): Float32Array;
  hopfieldStep(W: ArrayLike<number>, state: ArrayLike<number>, options?: { mode?: HopfieldMode; seed?: Seed }):
    { state: Float32Array; flipped: number; energy: number };
  hopfieldRun(W: ArrayLike<number>, state: ArrayLike<number>, options?: { mode?: HopfieldMode; seed?: Seed; maxSteps?: number }): HopfieldRunResult;
  hopfieldCapacity(options?: { N?: number; loads?: ArrayLike<number>; noise?: number; threshold?: number; trials?: number; seed?: Seed }): CapacityResult;
  /** X: N patterns of size d as rows (N×d). */
  modernEnergy(X: ArrayLike<number>, xi: ArrayLike<number>, options?: { beta?: number; d?: number }): number;
  modernStep(X: ArrayLike<number>, xi: ArrayLike<number>, options?: { beta?: number; d?: number }):
    { state: Float32Array; weights: Float32Array; energyBefore: number; energyAfter: number };
  modernRun(X: ArrayLike<number>, xi: ArrayLike<number>, options?: { beta?: number; d?: number; maxSteps?: number; tol?: number }): ModernRunResult;
  /** softmax(q Kᵀ·scale) V for one query; scale defaults to 1/√d. */
  attention(q: ArrayLike<number>, K: ArrayLike<number>, V: ArrayLike<number>, options?: { scale?: number }): { out: Float32Array; weights: Float32Array };
  softmaxAttention(Q: ArrayLike<number>, K: ArrayLike<number>, V: ArrayLike<number>, options: { d: number; causal?: boolean; scale?: number }): Float32Array;
  favorWeights(m: number, d: number, options?: { seed?: Seed }): Float32Array;
  featureMap(x: ArrayLike<number>, options: { d: number } & FeatureOptions): Float32Array;
  linearAttention(Q: ArrayLike<number>, K: ArrayLike<number>, V: ArrayLike<number>,
                  options: { d: number; causal?: boolean; form?: LinearForm } & FeatureOptions): Float32Array;
  randomQKV(T: number, d: number, dv?: number, options?: { seed?: Seed; sd?: number }): { Q: Float32Array; K: Float32Array; V: Float32Array };
  linearError(options?: { T?: number; d?: number; featureMap?: FeatureMapName; m?: number; seed?: number; sd?: number }): { error: number; T: number; d: number };
  timeAttention(options: { T: number; d?: number; featureMap?: FeatureMapName; m?: number; minMs?: number; seed?: Seed }):
    { T: number; d: number; softmaxMs: number; linearMs: number; reps: number; batches: number };
  qkSamples(n: number, dk: number, options?: { seed?: Seed }): Float32Array;
  qkStats(n: number, dk: number, options?: { seed?: Seed }): { mean: number; variance: number; scaledMean: number; scaledVariance: number };
  softmaxEntropy(options: { T?: number; dk: number; queries?: number; scaled?: boolean; seed?: Seed }): number;
}

/** A Lineage on its own WebAssembly instance. */
export function loadLineage(options?: { wasm?: WasmSource; wasmRelaxed?: WasmSource; backend?: 'auto' | Backend }): Promise<Lineage>;

// ---------------------------------------------------------------------------
// Heads: importance and roles (docs/heads.md). Merged into Model; the worker
// client's Model has the same methods returning Promises.
// ---------------------------------------------------------------------------

export interface HeadImportance {
  /** Mean next-token loss (nats) of the plain run. */
  baseLoss: number;
  /** (L·NH): loss with head l·NH + h ablated alone − baseLoss. */
  delta: Float32Array;
  /** Head indices l·NH + h by delta ascending (ties: lower index first). */
  order: Int32Array;
  /** (L·NH + 1): loss with order[0..k) ablated together; null with pruning: false. */
  pruning: Float32Array | null;
  /** pruning[floor(L·NH / 2)]; null with pruning: false. */
  lossAtHalf: number | null;
  nLayer: number;
  nHead: number;
  T: number;
}

export interface NamedHead { layer: number; head: number; score: number }

export interface TokenLosses {
  /** losses[t] = −log p(ids[t+1] | ids[0..t]) in nats, t = 0 … T − 2. */
  losses: Float64Array;
  /** Their mean. */
  mean: number;
  T: number;
}

export interface HeadRoles {
  /** Each (L·NH), index l·NH + h. */
  prev: Float32Array;
  sink: Float32Array;
  dup: Float32Array;
  /** Zeros unless the ids are two copies of one sequence (inductionDefined). */
  induction: Float32Array;
  inductionDefined: boolean;
  /** The highest-scoring heads of each role (induction: [] when undefined). */
  top: { prev: NamedHead[]; sink: NamedHead[]; dup: NamedHead[]; induction: NamedHead[] };
  nLayer: number;
  nHead: number;
  T: number;
}

/** One input of a measure: a text or token ids. */
export type Input = string | ArrayLike<number>;

export interface HeadImportanceOptions {
  /** false skips the pruning curve (L·NH + 1 runs): pruning and lossAtHalf are then null */
  pruning?: boolean;
}
export interface HeadRolesOptions extends Pick<RunOptions, 'interventions' | 'ablate'> {
  /** how many heads to name per role (default 3) */
  top?: number;
}
export interface TokenLossesOptions extends Pick<RunOptions, 'interventions' | 'ablate' | 'mask'> {}
export interface DagProfileOptions {
  mask?: 'causal' | 'full';
}
export interface RepeatedTokensOptions {
  /** mulberry32's seed (default 0) */
  seed?: number;
  /** ids are uniform in [lo, hi) (default [0, V − 1)) */
  lo?: number;
  hi?: number;
}

/**
 * The measures: ModelMeasures (types/measures.d.ts, generated from web/src/measure-table.js, one method per row;
 * docs/api.md), and the two helpers of the sets. attnlab/worker's WorkerModel has each measure with the same
 * parameters, returning a Promise.
 */
export interface Model extends ModelMeasures {
  /** r ++ r for a seeded random r of length n (mulberry32), ids in [lo, hi) (default [0, V − 1)). */
  repeatedTokens(n: number, options?: RepeatedTokensOptions): Int32Array;
  /**
   * The token ids of a set of inputs, as the set methods read them: 'heldout', 'repeated' or a list. Each input
   * is cut at nPositions; one of fewer than 2 tokens is EEMPTY, an id outside the vocabulary ERANGE (both name
   * the input's index). Not on the worker client.
   */
  evidenceSet(set: EvidenceSet, options?: EvidenceSetOptions): Int32Array[];
}

/** Progress and cancellation of a long evidence computation (EABORT when the signal aborts). */
export interface EvidenceProgress {
  onProgress?: (e: { done: number; total: number }) => void;
  signal?: AbortSignal;
  /** the work the measure may do, in multiply-adds estimated from its arguments before it starts, 1 to 1e30
   *  (default 2e12, about two minutes on one core): over it, ELIMIT with the estimate (docs/security.md) */
  budget?: number;
}
/** The work budget of a measure: as EvidenceProgress.budget. */
export interface WorkBudget {
  budget?: number;
}
/**
 * How a knocked-out attention entry is removed (ALAB_KO_*): 'renorm' (default) divides the row by its new sum, so
 * the other keys keep their proportions; 'zero' leaves the row summing to 1 − A[i][j].
 */
export type KnockoutMode = 'renorm' | 'zero';
/**
 * How tokenKnockout removes token j: 'column' (default) knocks column j out of every head of every layer; 'delete'
 * runs the input without token j (T − 1 tokens); 'replace' puts the `neutral` token in its place.
 */
export type TokenKnockoutMode = 'column' | 'delete' | 'replace';
/** The mode a token-knockout result reports: 'columnZero' is 'column' with knockout: 'zero'. */
export type TokenKnockoutResultMode = 'column' | 'columnZero' | 'delete' | 'replace';
export interface EdgeKnockoutOptions extends EvidenceProgress {
  /** default: the last layer */
  layer?: number;
  /** default 'all' */
  head?: number | 'all';
  /** the k of the top-k overlap (default T) */
  topK?: number;
  /** default 'renorm' */
  knockout?: KnockoutMode;
}
export interface TokenKnockoutOptions extends EvidenceProgress {
  /** default 'column' */
  mode?: TokenKnockoutMode;
  /** the replacement for mode 'replace': a token id or a one-token string (default ' the' if it is one token, else id 0) */
  neutral?: number | string;
  /** with mode 'column' only: 'zero' leaves the rows unrenormalised (default 'renorm'); ignored by the other modes */
  knockout?: KnockoutMode;
}
export interface AblationSemanticsOptions extends EvidenceProgress {
  /** the text of the mean ablation (default: a held-out passage of the built-in model's corpus) */
  reference?: string | ArrayLike<number>;
  /** one text for the resample ablation, its run aligned with the input (at least as long); without it the
   *  resample ablation averages `draws` windows of the reference */
  resample?: string | ArrayLike<number>;
  /** windows of the reference for the resample ablation (default 20; not with `resample`) */
  draws?: number;
  /** the seed of the windows' offsets (default 1; splitmix64, as the CLI's --seed) */
  seed?: number;
}
export interface EdgeKnockout {
  layer: number; head: number | 'all'; T: number; ids: Int32Array; tokens: string[];
  /** (T, T) the attention of the plain run (the heads' mean for 'all') */
  A: Float32Array;
  /** (T, T) KL at position i with edge j -> i knocked out; NaN above the diagonal */
  E: Float32Array;
  /** (T, T) the same at the last position */
  ELast: Float32Array;
  /** The knockout used. */
  mode: KnockoutMode;
  /** Causal pairs, T(T+1)/2: the points of spearman and kendall. */
  pairs: number;
  /**
   * The points of spearmanLast and kendallLast: every causal pair, or in the model's last layer only the T pairs
   * of row T − 1 (an edge of an earlier row cannot reach the last position there: its ELast is exactly 0).
   */
  pairsLast: number;
  spearman: number | null; kendall: number | null; spearmanLast: number | null; kendallLast: number | null;
  topK: number; topKOverlap: number | null;
  /** Spearman and Kendall per row (null where undefined: fewer than 2 pairs or a constant row), the mean of the first */
  rows: (number | null)[]; rowsKendall: (number | null)[]; meanRowSpearman: number | null;
}
export interface TokenKnockout {
  T: number; ids: Int32Array; tokens: string[];
  /** The removal used. */
  mode: TokenKnockoutResultMode;
  /** The replacement token's id with mode 'replace', else null. */
  neutral: number | null;
  /** (T) KL of the next-token distribution after the whole input, plain against token j removed (by `mode`) */
  effect: Float32Array;
  /** the last position's row of each: the last layer's head average, rollout, flow, and the last layer's
   *  value-weighted head average (A_h[T−1][j] ‖v_j W_O^h‖, docs/evidence.md § 9) */
  readings: { lastLayer: Float32Array; rollout: Float32Array; flow: Float32Array; valueWeighted: Float32Array };
  spearman: { lastLayer: number | null; rollout: number | null; flow: number | null; valueWeighted: number | null };
  kendall: { lastLayer: number | null; rollout: number | null; flow: number | null; valueWeighted: number | null };
}
export interface AblationRun { baseLoss: number; delta: Float32Array; order: Int32Array; pruning: Float32Array }
/** the resample ablation over K windows: delta and pruning are means over the draws */
export interface ResampleDraws extends AblationRun {
  draws: number; seed: number;
  /** the first position of each draw's window in the reference */
  offsets: number[];
  /** per head (l * nHead + h): the mean loss increase with its bootstrap interval over the draws */
  intervals: Interval[];
}
export interface AblationSemantics {
  T: number; nLayer: number; nHead: number; referenceT: number; resampleT: number; ids: Int32Array; tokens: string[];
  zero: AblationRun; mean: AblationRun;
  /** ResampleDraws without options.resample (the default), AblationRun with it */
  resample: AblationRun | ResampleDraws;
  agreement: Record<'zero-mean' | 'zero-resample' | 'mean-resample', { spearman: number | null; kendall: number | null }>;
}
export interface ActivationPatching {
  T: number; nLayer: number; nHead: number; answers: number[]; answerTokens: string[];
  tokens: string[]; corruptTokens: string[];
  ldClean: number; ldCorrupt: number;
  /** ldClean − ldCorrupt, what every score divides by (signed) */
  gap: number;
  /** present when gap < 1 nat: the scores divide by a small or negative gap, and a set would skip the pair */
  warning?: string;
  /** (L, T): the residual stream entering layer l at position p from the clean run; 0 = corrupted, 1 = clean */
  resid: Float32Array;
  /** (L, NH): head (l, h)'s output from the clean run */
  heads: Float32Array;
}

// ---------------------------------------------------------------------------
// Evidence over a set of inputs (docs/api.md, "Evidence over a set of inputs").
// Every aggregate is the mean over inputs of a per-input value, with a
// percentile bootstrap interval over the inputs; the correlations also carry a
// permutation null. null wherever the code gives NaN (no defined input, no
// resamples asked for).
// ---------------------------------------------------------------------------

/** One input of a set: a text or token ids (= Input). */
export type EvidenceInput = Input;
/** The built-in sets: 'heldout' (held-out sentences of the built-in model's corpus), 'repeated' (random GPT-2 ids, twice). */
export type EvidenceSetName = 'heldout' | 'repeated';
/** A built-in set, or a non-empty list of inputs. */
export type EvidenceSet = EvidenceSetName | EvidenceInput[];
/** A clean and a corrupted input of equal token length, optionally with the two answers (one-token strings or ids). */
export type PatchingPair =
  | [clean: EvidenceInput, corrupt: EvidenceInput]
  | [clean: EvidenceInput, corrupt: EvidenceInput, answers: [string | number, string | number]];
/**
 * A set of pairs: 'pairs' (the built-in minimal pairs, with their answers), 'induction' (random GPT-2 ids, the
 * answer changed in the first copy), 'induction-prev' (the token before the copied one moved), or a list.
 */
export type PairSet = 'pairs' | 'induction' | 'induction-prev' | PatchingPair[];
/** Model#evidenceSet's options. */
export interface EvidenceSetOptions {
  /** only the first `limit` inputs */
  limit?: number;
}

/** Options of every set method. */
export interface SetOptions extends EvidenceProgress {
  /** only the first `limit` inputs (or pairs) */
  limit?: number;
  /** bootstrap resamples of each interval, 0 to 1000000 (default 1000; 0: no interval; ablationSet and patchingSet need ≥ 1) */
  nBoot?: number;
  /** seed of the bootstrap (and of the null and the permuted baseline), 0 to 2^32 − 1 (default 1) */
  seed?: number;
  /** the intervals' level, in (0, 1) (default 0.95) */
  level?: number;
}
/** Options of the set methods that correlate a reading with an effect. */
export interface CorrSetOptions extends SetOptions {
  /** permutations of the null, 0 to 1000000 (default 1000; 0: no null, p and the null fields null) */
  nPerm?: number;
  /** the noise floor, ≥ 0: effects with |effect| < epsilon count as 0 (default: 10 × the noise measured on the first 10 inputs) */
  epsilon?: number;
}
export interface EdgeKnockoutSetOptions extends CorrSetOptions {
  /** default: the last layer */
  layer?: number;
  /** default 'all' */
  head?: number | 'all';
  /** default 'renorm' */
  knockout?: KnockoutMode;
}
export interface TokenKnockoutSetOptions extends CorrSetOptions {
  /** default 'column' */
  mode?: TokenKnockoutMode;
  /** as TokenKnockoutOptions.neutral */
  neutral?: number | string;
  /** with mode 'column' only (default 'renorm') */
  knockout?: KnockoutMode;
}
export interface AblationSetOptions extends SetOptions {
  /** windows of the reference each resample ablation averages over, 1 to 10000 (default 20) */
  draws?: number;
  /** the text of the mean and resample ablations (default: a held-out passage of the built-in model's corpus); at least as long as every input */
  reference?: EvidenceInput;
}
export interface PatchingSetOptions extends SetOptions {
  /** pairs whose two logit differences are less than this apart are skipped (default 1) */
  minGap?: number;
}

/** A mean over inputs with its bootstrap interval. */
export interface Interval {
  /** the mean of the defined values (null if none) */
  mean: number | null;
  /** the interval's ends (null if no value is defined) */
  lo: number | null;
  hi: number | null;
  /** how many values were defined (finite) */
  n: number;
}

/** A correlation over a set: the mean per-input correlation, its interval, its permutation null. */
export interface CorrSummary {
  /** the mean over inputs whose correlation is defined */
  mean: number | null;
  /** its bootstrap interval (null with nBoot 0) */
  lo: number | null;
  hi: number | null;
  /** the null (readings permuted within each group, effects fixed): the mean of the nPerm null means and its interval */
  nullMean: number | null;
  nullLo: number | null;
  nullHi: number | null;
  /** two-sided: (1 + #{|null − nullMean| ≥ |mean − nullMean|}) / (1 + nPerm) */
  p: number | null;
  /** one-sided, the reading ranks the effect better than the null: (1 + #{null ≥ mean}) / (1 + nPerm) */
  pGreater: number | null;
  /** inputs with a defined correlation */
  nDefined: number;
  /** points over all inputs */
  nPoints: number;
  /** points with |effect| ≥ eps */
  nAboveFloor: number;
}

/** The noise floor measured on the first inputs (null in a result when options.epsilon was given). */
export interface NoiseFloor {
  /** the largest KL a no-op renormalisation left */
  maxKL: number;
  /** eps = factor × maxKL (10) */
  factor: number;
  /** how many inputs it was measured on (the first min(10, n)) */
  inputs: number;
}

/** One kind of point of edgeKnockoutSet, four readings of it. */
export interface EdgeSetReadings {
  /** attention against the effect, Spearman */
  spearman: CorrSummary;
  /** the same, Kendall's tau-b */
  kendall: CorrSummary;
  /** the baseline 1/(i+1) in row i (knows only each row's length), Spearman */
  uniform: CorrSummary;
  /** attention shuffled once within each row, Spearman */
  permuted: CorrSummary;
}

export interface EdgeKnockoutSet {
  /** the set's name, or 'list' */
  set: EvidenceSetName | 'list';
  layer: number; head: number | 'all'; mode: KnockoutMode;
  /** inputs */
  n: number;
  /** the noise floor used */
  eps: number;
  noise: NoiseFloor | null;
  seed: number; nBoot: number; nPerm: number; level: number;
  /** true in the model's last layer: `last` then has the points of row T − 1 only */
  lastRowOnly: boolean;
  /** attention against E (the KL at the query's own position), every causal pair */
  local: EdgeSetReadings;
  /** attention against E_last (the KL at the last position) */
  last: EdgeSetReadings;
  /** the value-weighted reading A_h[i][j] ‖v_j W_O^h‖ against E and E_last (docs/evidence.md § 9) */
  valueWeighted: Record<'local' | 'last', { spearman: CorrSummary; kendall: CorrSummary }>;
  /** readings that know only positions: recency −(i − j), the first token, the diagonal, earliness −j */
  positions: Record<'recency' | 'first' | 'diagonal' | 'early', EdgePositionReading>;
  /** the sizes of E (local) and E_last (last; row T − 1 only in the last layer) */
  effects: { local: EffectSizes; last: EffectSizes };
  /** attention against only the local effects of at least `threshold` nats */
  aboveThreshold: { threshold: number; local: TokenSetReading };
  /** attention against the local effects with recency held fixed: per input the partial Spearman ρ of A and E
   * given −(i − j) over the causal pairs, and its mean over inputs with the bootstrap interval */
  partial: { given: 'recency'; mean: number | null; lo: number | null; hi: number | null; n: number; perInput: (number | null)[] };
  /** the mean per-row Spearman (rows of at least 4 keys), averaged over inputs */
  rows: Omit<Interval, 'n'>;
  /** the top-T overlap of attention and E over all causal pairs, averaged over inputs */
  topKOverlap: Omit<Interval, 'n'>;
  /** each input's mean local effect (KL at i, nats, after the floor), averaged over inputs */
  meanEffect: Omit<Interval, 'n'>;
  perInput: { T: number; spearman: number | null; spearmanLast: number | null; rowSpearman: number | null; topKOverlap: number | null }[];
}

/** One reading of tokenKnockoutSet: a CorrSummary with each input's correlation. */
export interface TokenSetReading extends CorrSummary {
  stat: 'spearman';
  perInput: (number | null)[];
}
/** How large the effects are, pooled over every point of every input (nats, |effect|). */
export interface EffectSizes {
  n: number; median: number | null; p90: number | null; p99: number | null; max: number | null;
  /** the practical threshold (1e-3 nats) and how many points reach it */
  threshold: number; nAbove: number;
}
/** A position reading of the edges, through the same summary as the weights (local and last rho, per input). */
export interface EdgePositionReading {
  local: Omit<CorrSummary, never>;
  last: Omit<CorrSummary, never>;
  perInput: { local: number | null; last: number | null }[];
}
export interface TokenKnockoutSet {
  set: EvidenceSetName | 'list';
  n: number;
  mode: TokenKnockoutResultMode;
  neutral: number | null;
  eps: number;
  noise: NoiseFloor | null;
  seed: number; nBoot: number; nPerm: number; level: number;
  readings: { lastLayer: TokenSetReading; rollout: TokenSetReading; flow: TokenSetReading; valueWeighted: TokenSetReading };
  /** Jain & Wallace's baseline: the last layer's reading shuffled once within each input (seed + 2) */
  baselines: { permuted: TokenSetReading };
  /** readings that know only where a token is: recency j − (T − 1), the first token, earliness −j */
  positions: Record<'recency' | 'first' | 'early', TokenSetReading>;
  /** the sizes of the effects, pooled */
  effects: EffectSizes;
  /** each reading against only the effects of at least `threshold` nats */
  aboveThreshold: { threshold: number; lastLayer: TokenSetReading; rollout: TokenSetReading; flow: TokenSetReading; valueWeighted: TokenSetReading };
  perInput: { T: number; lastLayer: number | null; rollout: number | null; flow: number | null; valueWeighted: number | null }[];
}

export type AblationPair = 'zero-mean' | 'zero-resample' | 'mean-resample';
export interface AblationSet {
  set: EvidenceSetName | 'list';
  n: number; draws: number; seed: number; nBoot: number; level: number;
  nLayer: number; nHead: number;
  /** tokens of the reference */
  referenceT: number;
  /** each (L·NH), head l·NH + h: the loss increase (nats) over inputs */
  delta: { zero: Interval[]; mean: Interval[]; resample: Interval[] };
  /** the per-input Spearman between two rankings of the heads, over inputs */
  agreement: Record<AblationPair, Interval>;
  perInput: { T: number; agreement: Record<AblationPair, number | null>; zero: number[]; mean: number[]; resample: number[] }[];
}

export interface PatchingSet {
  /** the set's name, or 'list' */
  set: 'pairs' | 'induction' | 'induction-prev' | 'list';
  /** pairs that entered the aggregates */
  n: number;
  /** pairs left out, with why (logit differences less than minGap apart, equal answers, ...) */
  skipped: { index: number; reason: string }[];
  minGap: number; nLayer: number; nHead: number; seed: number; nBoot: number; level: number;
  /** (L·NH): head (l, h)'s output patched from the clean run; 0 = corrupted, 1 = clean */
  heads: Interval[];
  /** (L): the residual stream entering layer l at the last position patched from the clean run */
  residLast: Interval[];
  /** the logit differences of the clean and the corrupted runs */
  ldClean: Interval;
  ldCorrupt: Interval;
  perInput: {
    /** the pair's index in the list */
    index: number; T: number; answers: number[]; answerTokens: string[]; clean: string; corrupt: string;
    ldClean: number; ldCorrupt: number; heads: number[]; residLast: number[];
  }[];
}

/** Positions of two token sequences that correspond (see alignTokens). */
export interface Alignment {
  /** [i in a, j in b]: the common prefix, the middle when both differing spans have one length, the common suffix. */
  pairs: [number, number][];
  prefix: number;
  suffix: number;
  /** The differing spans [begin, end) of a and of b. */
  changedA: [number, number];
  changedB: [number, number];
  /** True when the differing spans have the same length and are aligned position by position. */
  substituted: boolean;
}

export interface NextTokenDiff {
  /** KL(p_a ‖ p_b) in nats. */
  kl: number;
  /** ½ Σ |p_a − p_b|. */
  tv: number;
  /** The union of both top-k tokens, by |delta| descending; delta = pB − pA. */
  top: { id: number; token: string; pA: number; pB: number; delta: number }[];
}

export interface Counterfactual {
  a: Result;
  b: Result;
  alignment: Alignment;
  /** = alignment.pairs */
  aligned: [number, number][];
  /** (L, TA, TA): head-averaged B − A on A's positions; NaN where a row or column has no partner. */
  attentionDiff: Float32Array;
  /** (L, NH, TA, TA): the same per head. */
  headDiff: Float32Array;
  next: NextTokenDiff;
}

export function alignTokens(a: ArrayLike<number>, b: ArrayLike<number>): Alignment;
export function nextTokenDiff(logitsA: ArrayLike<number>, logitsB: ArrayLike<number>,
                              options?: { k?: number; token?: (id: number) => string }): NextTokenDiff;

export interface DagProfile {
  mask: 'causal' | 'full';
  /** Per input: head (L·NH), layer (L, mean of its heads), overall (mean of the layers), null(T). */
  sentences: { T: number; head: Float32Array; layer: Float32Array; overall: number; null: number }[];
  /** Averages over the inputs. */
  mean: { head: Float64Array; layer: Float64Array; overall: number; null: number };
  nLayer: number;
  nHead: number;
}

// ---------------------------------------------------------------------------
// Where a head looks versus what it moves (docs/api.md; docs/evidence.md § 6–11). Scores are normalised logit
// differences: 0 = the corrupted run, 1 = the clean run.
// ---------------------------------------------------------------------------

/** The two answers of a pair: one-token strings or ids (default: the top next token of each run). */
export interface AnswersOptions extends WorkBudget {
  answers?: [string | number, string | number];
}
/** A receiver of path patching: that input of head (layer, head), or the logits. */
export type Receiver = { layer: number; head: number; input: 'q' | 'k' | 'v' } | { input: 'logits' };
/** Patch into the corrupted run ('denoise', default) or into the clean one ('noise'). */
export type PatchDirection = 'denoise' | 'noise';
export interface PathPatchingOptions extends AnswersOptions {
  receivers: Receiver[];
  direction?: PatchDirection;
  /** freeze the MLPs too (only the direct residual path is left) */
  freezeMlp?: boolean;
}
export interface DirectLogitAttributionOptions extends WorkBudget {
  /** u = W_U[a] − W_U[b], or W_U[a] alone */
  answers: [string | number] | [string | number, string | number];
}
export interface CompositionScoresOptions extends WorkBudget {
  /** Gaussian draws of the null, 0 to 100000 (default 200) */
  nNull?: number;
  /** their seed (default 1) */
  seed?: number;
}
export interface PatternValueSetOptions extends PatchingSetOptions {
  /** the whole-head effect a head needs for its pattern share (default 0.1) */
  minEffect?: number;
}
export interface PathPatchingSetOptions extends PatchingSetOptions {
  receivers: Receiver[];
  direction?: PatchDirection;
  freezeMlp?: boolean;
}

/** What every one-pair measure returns besides its scores. */
export interface PairInfo {
  T: number;
  answers: number[];
  answerTokens: string[];
  tokens: string[];
  corruptTokens: string[];
  /** the logit differences of the clean and the corrupted runs */
  ldClean: number;
  ldCorrupt: number;
  /** ldClean − ldCorrupt, what every normalised score divides by (signed) */
  gap: number;
  /** present when gap < 1 nat: the scores divide by a small or negative gap, and a set would skip the pair */
  warning?: string;
}
export type PatchKind = 'pattern' | 'value' | 'both';
export interface PatternValuePatching extends PairInfo {
  nLayer: number; nHead: number;
  /** grid[direction][kind]: (L·NH) */
  grid: Record<PatchDirection, Record<PatchKind, Float32Array>>;
}
export interface PathPatching extends PairInfo {
  nLayer: number; nHead: number;
  direction: PatchDirection; freezeMlp: boolean; receivers: Receiver[];
  /** senders[k]: (L·NH) for receivers[k], NaN where the sender is not below the receiver */
  senders: Float32Array[];
}
export interface DirectLogitAttribution {
  T: number; nLayer: number; nHead: number; answers: number[]; answerTokens: string[]; tokens: string[];
  /** the logit difference (or logit) the terms sum to */
  ld: number;
  /** (L·NH): each head's direct term */
  heads: Float32Array;
  /** (L·NH·T): each head's term by source position */
  sources: Float32Array;
  terms: { token: number; position: number; finalBias: number; attnBias: number[]; mlp: number[] };
}
export interface ComponentTracing extends PairInfo {
  nLayer: number;
  /** (L·T): the clean run's attention output restored at (layer, position) */
  attn: Float32Array;
  /** (L·T): the same for the MLP output */
  mlp: Float32Array;
}
/** Model.gradientReadings' metric (backward.c's ALAB_METRIC_*): logit[a] − logit[b], log p(a) at the last
 *  position, or the mean next-token loss of the input. */
export type GradientMetric = 'logitDiff' | 'logProb' | 'loss';
export interface GradientReadingsOptions extends EvidenceProgress {
  /** default 'logitDiff' with two answers, else 'logProb' */
  metric?: GradientMetric;
  /** [a, b] for 'logitDiff', [a] for 'logProb' (default: the run's top next token); ids or one-token texts */
  answers?: [string | number] | [string | number, string | number];
  /** the integrated gradients' start: 'zero' (default: the zero embedding) or a token (id or one-token text)
   *  whose embedding row stands at every position */
  baseline?: 'zero' | string | number;
  /** midpoint-rule steps along the straight path, 1 to 4096 (default 32) */
  steps?: number;
}
export interface GradientReadings {
  metric: GradientMetric;
  /** the answer ids the metric read ([] for 'loss') and their tokens */
  answers: number[]; answerTokens: string[];
  baseline: 'zero' | number; steps: number;
  /** m(x) and m(baseline) */
  value: number; baselineValue: number;
  /** (T) ‖∂m/∂e_j‖, e_j the embedding row of token j (before position embedding / Gemma's scale) */
  gradNorm: Float64Array;
  /** (T) Σ_c e_jc ∂m/∂e_jc */
  gradTimesInput: Float64Array;
  /** (T) Σ_c (e_jc − b_jc) · mean over the steps of ∂m/∂e_jc on the straight path from the baseline b */
  integratedGradients: Float64Array;
  /** Σ_j integratedGradients[j] − (value − baselineValue): 0 for exact integrated gradients */
  completenessError: number;
  /** (L, NH, T, T) A ⊙ ∂m/∂A */
  attnGrad: Float32Array;
  /** (L, T) |Σ_h attnGrad[l, h, T − 1, j]| (Wang et al. 2023) */
  attnGradSaliency: Float64Array;
  nLayer: number; nHead: number; T: number;
  ids: Int32Array | number[]; tokens: string[];
}
export interface CompositionScores {
  nLayer: number; nHead: number; nNull: number; seed: number;
  /** ((L−1)·NH·NH), index (l·NH + h₁)·NH + h₂ for sender (l, h₁) and receiver (l + 1, h₂) */
  q: Float32Array; k: Float32Array; v: Float32Array;
  /** the scores of nNull Gaussian draws: their mean and interval, per kind */
  null: Record<'q' | 'k' | 'v', { mean: number | null; lo: number | null; hi: number | null }>;
}

/** What every measure over a set of pairs returns besides its aggregates. */
export interface PairSetInfo {
  /** the set's name, or 'list' */
  set: 'pairs' | 'induction' | 'induction-prev' | 'list';
  /** pairs that entered the aggregates */
  n: number;
  nLayer: number; seed: number; nBoot: number; level: number;
}
/** One pair of a set, as a set measure reports it. */
export interface PairOfSet {
  /** the pair's index in the list */
  index: number; T: number; answers: number[]; answerTokens: string[]; clean: string; corrupt: string;
}
export interface PatternValueSet extends PairSetInfo {
  nHead: number; minGap: number; minEffect: number;
  skipped: { index: number; reason: string }[];
  /** grid[direction][kind]: an Interval per head */
  grid: Record<PatchDirection, Record<PatchKind, Interval[]>>;
  /** per direction, per head: the pattern's share of the head's effect, or null where that effect is below minEffect */
  patternShare: Record<PatchDirection, (Interval | null)[]>;
  perInput: (PairOfSet & { ldClean: number; ldCorrupt: number; grid: Record<PatchDirection, Record<PatchKind, number[]>> })[];
}
export interface PathPatchingSet extends PairSetInfo {
  nHead: number; minGap: number; direction: PatchDirection; freezeMlp: boolean; receivers: Receiver[];
  skipped: { index: number; reason: string }[];
  /** senders[k]: an Interval per sender head for receivers[k] (mean null where no path exists) */
  senders: Interval[][];
  perInput: (PairOfSet & { ldClean: number; ldCorrupt: number; senders: (number | null)[][] })[];
}
/** Per layer: at the positions where the pair differs (their mean), at the last position, at the others. */
export interface TracingByPosition { corrupted: Interval[]; last: Interval[]; other: Interval[] }
export interface ComponentTracingSet extends PairSetInfo {
  minGap: number;
  skipped: { index: number; reason: string }[];
  attn: TracingByPosition;
  mlp: TracingByPosition;
  perInput: (PairOfSet & { ldClean: number; ldCorrupt: number; corrupted: number[]; attn: number[]; mlp: number[] })[];
}
export interface AttributionSet extends PairSetInfo {
  nHead: number;
  /** per head: the direct term along W_U[answer clean] − W_U[answer corrupted] */
  heads: Interval[];
  /** per head: the part of that term read from the positions where the pair differs */
  fromDiff: Interval[];
  /** per layer: the MLP's direct term */
  mlp: Interval[];
  ld: Interval;
  perInput: (PairOfSet & { ld: number; heads: number[]; fromDiff: number[]; terms: DirectLogitAttribution['terms'] })[];
}
