// worker.js — the Web Worker entry: holds one Model and answers the calls of
// worker-client.js. Runs in a browser (dedicated module worker) and in Node
// (worker_threads). Not imported by pages: worker-client.js starts it.
//
// The messages are ui/protocol.js's. Methods: load | tokenize | decode | tokenBytes | run | generate |
// memoryUsage | repeatedTokens | dispose, and one per measure of measure-table.js (headImportance …
// attributionSet), each with the arguments of the Model method of that name (load: [source, options]).
// Progress comes from load and the stepwise measures, which a cancel stops between two of their parts
// (EABORT). Requests are handled one at a time, in order: a model is not reentrant; but a run, tokenize,
// decode or tokenBytes (or a measure whose row says preempt) that arrives while a stepwise measure pauses
// between two parts is answered in that pause (the model is idle there), so the page's figures stay live.
// Big result buffers are transferred, never copied.

import { AttnlabError } from './core/errors.js';
import { loadModel, EVIDENCE_JOB } from './model.js';
import { resultToMessage, counterfactualToMessage } from './result.js';
import { MEASURES } from './measure-table.js';
import { runStepsAsync } from './evidence.js';
import { serve, reply } from './ui/protocol.js';

let model = null;

function needModel() {
  if (!model) throw new AttnlabError('ESTATE', 'no model: send load first');
  return model;
}

// A Model method whose answer crosses as it is (plain data, cloned).
const plain = (name) => (args) => needModel()[name](...args);

// The stepwise measures run in parts, so progress and a cancel can come between them.
// Between two parts the model is idle: a short call (PREEMPT) may be answered there, so a figure's run does not
// wait behind a whole evidence set (ui/protocol.js).
const stepwise = (name) => async (args, { progress, cancelled, pause }) => {
  const m = needModel(), job = m[EVIDENCE_JOB](name, ...args);
  return job.finish(await runStepsAsync(job.steps, { onProgress: progress, cancelled, pause, alive: () => model === m }));
};

// How a measure's value crosses (its row's `crosses`): cloned, with some buffers moved, or as a counterfactual pair.
const CROSSING = {
  clone: (name) => plain(name),
  transfer: (name, spec) => (args) => {
    const r = needModel()[name](...args);
    return reply(r, spec.transfer.map((k) => r[k].buffer));
  },
  counterfactual: (name) => (args) => {
    const { data, transfer } = counterfactualToMessage(needModel()[name](...args));
    return reply(data, transfer);
  },
};

const MEASURE_HANDLERS = Object.fromEntries(Object.entries(MEASURES).map(([name, spec]) =>
  [name, spec.stepwise ? stepwise(name) : CROSSING[spec.crosses](name, spec)]));

/** The calls answered between two parts of a stepwise computation: short, and each its own whole model call. */
const PREEMPT = Object.freeze(['run', 'tokenize', 'decode', 'tokenBytes',
  ...Object.keys(MEASURES).filter((name) => MEASURES[name].preempt)]);

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
  repeatedTokens: plain('repeatedTokens'),
  ...MEASURE_HANDLERS,
  dispose() {
    if (model) model.dispose();
    model = null;
  },
};

serve(HANDLERS, { ordered: true, preempt: PREEMPT });
