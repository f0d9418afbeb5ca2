// worker.js — the Web Worker entry: holds one Model and answers the calls of
// worker-client.js. Runs in a browser (dedicated module worker) and in Node
// (worker_threads). Not imported by pages: worker-client.js starts it.
//
// The messages are ui/protocol.js's. Methods: load | tokenize | decode | tokenBytes | run |
// generate | memoryUsage | headImportance | headRoles | tokenLosses | repeatedTokens | dagProfile |
// counterfactual | edgeKnockout | tokenKnockout | ablationSemantics | activationPatching | edgeKnockoutSet |
// tokenKnockoutSet | ablationSet | patchingSet | dispose,
// each with the arguments of the Model method of that name (load: [source, options]).
// Progress comes from load and the evidence computations, which a cancel stops between two
// of their parts (EABORT). Requests are handled one at a time, in order: a model is not reentrant;
// but a run, tokenize, decode or tokenBytes that arrives while an evidence computation pauses between
// two parts is answered in that pause (the model is idle there), so the page's figures stay live.
// Big result buffers are transferred, never copied.

import { AttnlabError } from './core/errors.js';
import { loadModel, EVIDENCE_JOB } from './model.js';
import { resultToMessage, counterfactualToMessage } from './result.js';
import { runStepsAsync } from './evidence.js';
import { serve, reply } from './ui/protocol.js';

let model = null;

function needModel() {
  if (!model) throw new AttnlabError('ESTATE', 'no model: send load first');
  return model;
}

// A Model method whose answer crosses as it is (plain data, cloned).
const plain = (name) => (args) => needModel()[name](...args);

// The evidence computations run in parts, so progress and a cancel can come between them.
// Between two parts the model is idle: a short call (PREEMPT) may be answered there, so a figure's run does not
// wait behind a whole evidence set (ui/protocol.js).
const evidence = (name) => async (args, { progress, cancelled, pause }) => {
  const m = needModel(), job = m[EVIDENCE_JOB](name, ...args);
  return job.finish(await runStepsAsync(job.steps, { onProgress: progress, cancelled, pause, alive: () => model === m }));
};

/** The calls answered between two parts of a stepwise computation: short, and each its own whole model call. */
const PREEMPT = Object.freeze(['run', 'tokenize', 'decode', 'tokenBytes']);

const HANDLERS = {
  async load([source, options], { progress }) {
    if (model) model.dispose();
    model = null;
    model = await loadModel(source, { ...options, onProgress: progress });
    return { config: model.config, source: model.source, engine: model.engine, weights: model.weights };
  },
  tokenize(args) {
    const r = needModel().tokenize(...args);
    return reply(r, [r.ids.buffer]);
  },
  decode: plain('decode'),
  tokenBytes: plain('tokenBytes'),
  run(args) {
    const { data, transfer } = resultToMessage(needModel().run(...args));
    return reply(data, transfer);
  },
  generate(args) {
    const r = needModel().generate(...args);
    return reply(r, [r.ids.buffer]);
  },
  memoryUsage: () => needModel().memoryUsage(),
  // heads (docs/heads.md)
  headImportance: plain('headImportance'),
  headRoles: plain('headRoles'),
  tokenLosses(args) {
    const r = needModel().tokenLosses(...args);
    return reply(r, [r.losses.buffer]);
  },
  repeatedTokens: plain('repeatedTokens'),
  dagProfile: plain('dagProfile'),
  counterfactual(args) {
    const { data, transfer } = counterfactualToMessage(needModel().counterfactual(...args));
    return reply(data, transfer);
  },
  // evidence (docs/evidence.md)
  edgeKnockout: evidence('edgeKnockout'),
  tokenKnockout: evidence('tokenKnockout'),
  ablationSemantics: evidence('ablationSemantics'),
  edgeKnockoutSet: evidence('edgeKnockoutSet'),
  tokenKnockoutSet: evidence('tokenKnockoutSet'),
  ablationSet: evidence('ablationSet'),
  patchingSet: evidence('patchingSet'),
  activationPatching: plain('activationPatching'),
  // where a head looks versus what it moves (docs/evidence.md § 6–11)
  patternValueSet: evidence('patternValueSet'),
  pathPatchingSet: evidence('pathPatchingSet'),
  componentTracingSet: evidence('componentTracingSet'),
  attributionSet: evidence('attributionSet'),
  patternValuePatching: plain('patternValuePatching'),
  pathPatching: plain('pathPatching'),
  directLogitAttribution: plain('directLogitAttribution'),
  valueNorms: plain('valueNorms'),
  componentTracing: plain('componentTracing'),
  compositionScores: plain('compositionScores'),
  dispose() {
    if (model) model.dispose();
    model = null;
  },
};

serve(HANDLERS, { ordered: true, preempt: PREEMPT });
