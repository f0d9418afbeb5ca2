// Type declarations of 'attnlab/worker' (web/src/worker-client.js): the API of
// 'attnlab' with the model in a Web Worker (Node: worker_threads). Every model
// method returns a Promise. Documentation: docs/api.md.

import type {
  ModelSource, LoadOptions, Engine, ModelConfig, RunOptions, Result, GenerateOptions, Generated, MemoryUsage, Input,
  HeadImportance, HeadImportanceOptions, HeadRoles, HeadRolesOptions, TokenLosses, TokenLossesOptions, RepeatedTokensOptions,
  DagProfile, DagProfileOptions, Counterfactual, EdgeKnockout, EdgeKnockoutOptions,
  TokenKnockout, TokenKnockoutOptions, AblationSemantics, AblationSemanticsOptions, ActivationPatching, AnswersOptions,
  EvidenceSet, PairSet, EdgeKnockoutSet, EdgeKnockoutSetOptions, TokenKnockoutSet, TokenKnockoutSetOptions,
  AblationSet, AblationSetOptions, PatchingSet, PatchingSetOptions, PatternValuePatching, PathPatching, PathPatchingOptions,
  DirectLogitAttribution, DirectLogitAttributionOptions, ComponentTracing, CompositionScores, CompositionScoresOptions,
  PatternValueSet, PatternValueSetOptions, PathPatchingSet, PathPatchingSetOptions, ComponentTracingSet, AttributionSet,
} from './index.js';
import type { WorkerModelMeasures } from './measures.js';

export type {
  AttnlabErrorCode, FileData, ModelFiles, ModelSource, WasmSource, LoadProgressEvent, ModelFileName, LoadOptions, Engine,
  ModelConfig, HeadSelector, Intervention, MaskSpec, RunOptions, TopToken, Result, GenerateOptions, Generated,
  MemoryUsage, Matrix, HeadImportance, HeadRoles, TokenLosses, DagProfile, Alignment, NextTokenDiff, Counterfactual,
  EvidenceProgress, EdgeKnockout, EdgeKnockoutOptions, KnockoutMode, TokenKnockout, TokenKnockoutOptions, TokenKnockoutMode,
  TokenKnockoutResultMode, AblationSemantics, AblationSemanticsOptions, AblationRun, ActivationPatching,
  EvidenceInput, EvidenceSetName, EvidenceSet, PatchingPair, SetOptions, CorrSetOptions, Interval, CorrSummary, NoiseFloor,
  EdgeSetReadings, EdgeKnockoutSet, EdgeKnockoutSetOptions, TokenSetReading, TokenKnockoutSet, TokenKnockoutSetOptions,
  AblationPair, AblationSet, AblationSetOptions, PatchingSet, PatchingSetOptions, Input, HeadImportanceOptions,
  HeadRolesOptions, TokenLossesOptions, DagProfileOptions, RepeatedTokensOptions, PairSet, EvidenceSetOptions, ResampleDraws,
  AnswersOptions, Receiver, PatchDirection, PathPatchingOptions, DirectLogitAttributionOptions, CompositionScoresOptions,
  PatternValueSetOptions, PathPatchingSetOptions, PairInfo, PatchKind, PatternValuePatching, PathPatching,
  DirectLogitAttribution, ComponentTracing, CompositionScores, PairSetInfo, PairOfSet, PatternValueSet, PathPatchingSet,
  TracingByPosition, ComponentTracingSet, AttributionSet, NamedHead,
} from './index.js';
export {
  AttnlabError, ERROR_CODES, dagScore, nullDagScore, asymmetry, headAverage, outerProduct, entropy, displayDo,
  alignTokens, nextTokenDiff,
} from './index.js';

/** The part of a Node worker_threads Worker that is used (no dependency on @types/node). */
export interface NodeWorkerLike {
  postMessage(value: unknown, transferList?: readonly unknown[]): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
  ref(): void;
  unref(): void;
  terminate(): Promise<number> | unknown;
}

export interface WorkerLoadOptions extends LoadOptions {
  /**
   * The worker to use: a Worker you created (browser: new Worker(new URL('attnlab/worker.js', ...), {type: 'module'});
   * Node: a worker_threads Worker of web/src/worker.js), or the URL of web/src/worker.js. Default: a new
   * module worker of the package's worker.js.
   */
  worker?: Worker | NodeWorkerLike | string | URL;
  /** true: ArrayBuffers of a buffer source are transferred to the worker (yours become detached); default false: copied. */
  transfer?: boolean;
}

/** A model running in its own worker. Results are transferred from the worker, not copied. */
export interface WorkerModel extends WorkerModelMeasures {
  /** Set once loaded. */
  readonly config: ModelConfig;
  readonly source: string;
  /** The threads and the wasm build of the model in the worker (set once loaded). */
  readonly engine: Engine;
  /** The kernels the worker's model runs (engine.backend). */
  readonly backend: Engine['backend'];
  /** How the weights are held: 'f32' or 'half' (set once loaded). */
  readonly weights: 'f32' | 'half';
  readonly disposed: boolean;
  tokenize(text: string): Promise<{ ids: Int32Array; tokens: string[] }>;
  decode(ids: ArrayLike<number>): Promise<string>;
  tokenBytes(ids: ArrayLike<number>): Promise<Uint8Array[]>;
  run(input: Input, options?: RunOptions): Promise<Result>;
  generate(input: Input, options?: GenerateOptions): Promise<Generated>;
  /** As Model#repeatedTokens. */
  repeatedTokens(n: number, options?: RepeatedTokensOptions): Promise<Int32Array>;
  // The measures (types/measures.d.ts: WorkerModelMeasures, generated from web/src/measure-table.js) are
  // inherited. (Model#evidenceSet is not one of them.)
  /** The worker's wasm memory. */
  memoryUsage(): Promise<MemoryUsage>;
  /** Frees the model and terminates the worker; idempotent. Later calls reject with EDISPOSED. */
  dispose(): Promise<void>;
}

/** Load a model in a new worker. */
export function loadModel(source?: ModelSource, options?: WorkerLoadOptions): Promise<WorkerModel>;
