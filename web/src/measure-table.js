// measure-table.js — every measure of the Model, declared once (docs/architecture.md, "Add a measure"). A row
// names the measure and says how it is called and how its answer travels; the code around it reads the row:
//
//   - model.js gives the Model a method of that name, which calls the body of that name in measures.js (a
//     stepwise body returns a job, run to its end there with onProgress and signal);
//   - worker.js answers a request of that name (HANDLERS), worker-client.js gives WorkerModel the method that
//     sends it, and decodes the answer;
//   - measures.js checks the options against the row's list (checkOptions), so the names a measure accepts are
//     written here only;
//   - scripts/gen-measures.mjs writes c/cli/measures.h (the CLI's kinds and usage lines) from the rows with
//     a `cli` part, and types/measures.d.ts (the methods of Model and WorkerModel: their parameters, options
//     type and result type, with the row's summary as their documentation);
//   - tests/js/typings.test.js requires that the options type declares exactly the row's option names and that
//     the result type exists (types/index.d.ts), and tests/js/recipes.test.js that every row reaches the API,
//     the worker, the worker client, the CLI and the typings.
//
// The module is data: it imports nothing, so the worker client, the generator and the tests read it without
// loading the bodies (measures.js and what it imports).
//
// A row:
//   summary   one sentence: what the method gives (its documentation in the typings)
//   args      the method's parameters, in order: 'input' (a text or ids), 'inputs' (one input or a list),
//             'inputA'/'inputB', 'clean'/'corrupt' (a pair of equal length), 'set' (a set's name or a list of
//             inputs), 'pairs' (a pair set's name or a list of pairs), 'options' (always last; optional unless
//             the measure needs one of its fields)
//   options   the option names the body accepts, in the order its "unknown option" message lists them; null:
//             it takes no options (counterfactual's are run's, which run checks: options.js's RUN_OPTIONS)
//   optionsType  the options interface in types/index.d.ts (default: the name + 'Options', e.g.
//             CompositionScoresOptions); optionsRequired: the options argument cannot be left out
//   result    the type of its value in types/index.d.ts
//   crosses   how the value crosses a worker boundary: 'clone' (structured clone), 'transfer' (cloned, with the
//             buffers of the typed arrays named in `transfer` moved, not copied), 'counterfactual' (two Results
//             and the diffs: result.js's counterfactualToMessage / counterfactualFromMessage)
//   takesSet  its first argument is a set of inputs or of pairs (sets.js)
//   stepwise  null, or the parts it runs in (a generator of evidence.js or circuits.js): it reports
//             onProgress({done, total}) after each, stops between two with EABORT when its signal aborts (in
//             the worker: a cancel message), and the worker answers the PREEMPT calls between two
//   preempt   the worker may answer it between two parts of a stepwise measure (short, a whole model call)
//   docs      the section of docs/ that defines it (docs/api.md has its line too)
//   cli       null, or its row of `attnlab evidence` (c/cli/measures.h): id (the C name: its handler is
//             ev_<id> in c/cli/measures.c), kind (--kind), set (the measure `--set` computes, or null), usage
//             (its lines of the usage text, the first after the kind's column, the others indented as printed)

// every stepwise measure: its progress, its cancel, and its work budget (web/src/work.js: ELIMIT over options.budget)
const PROGRESS = ['onProgress', 'signal', 'budget'];
const SET_STATS = ['limit', 'nBoot', 'nPerm', 'seed', 'level', 'epsilon'];
const PAIR_SET = ['limit', 'minGap', 'nBoot', 'seed', 'level', ...PROGRESS];

function row(r) {
  const cli = r.cli ? Object.freeze({ set: null, ...r.cli, usage: Object.freeze(r.cli.usage) }) : null;
  return Object.freeze({ options: null, optionsRequired: false, crosses: 'clone', transfer: null, takesSet: false, stepwise: null, preempt: false,
    ...r, args: Object.freeze(r.args), options: r.options ? Object.freeze(r.options) : null,
    transfer: r.transfer ? Object.freeze(r.transfer) : null, cli });
}

/** The rows, each with its optionsType made explicit (default: the measure's name + 'Options'). */
function named(rows) {
  return Object.freeze(Object.fromEntries(Object.entries(rows).map(([name, r]) => [name, Object.freeze({ ...r,
    optionsType: r.args.includes('options') ? (r.optionsType ?? `${name[0].toUpperCase()}${name.slice(1)}Options`) : null })])));
}

export const MEASURES = named({
  // ---- heads: importance and roles (c/src/heads.c) ----
  headImportance: row({ summary: 'Loss increase per ablated head and the pruning curve; 1 + L·NH (+ L·NH + 1) runs.',
    args: ['input', 'options'], options: ['pruning'], result: 'HeadImportance', docs: 'heads.md § 1' }),
  headRoles: row({ summary: 'Previous-token, sink, duplicate-token and induction scores of a run (plain, or under interventions / ablations).',
    args: ['input', 'options'], options: ['top', 'interventions', 'ablate'], result: 'HeadRoles', docs: 'heads.md § 2' }),
  tokenLosses: row({ summary: 'The next-token loss of every position (nats), T − 1 of them, of a run with these interventions / ablations / mask.',
    args: ['input', 'options'], options: ['interventions', 'ablate', 'mask'], result: 'TokenLosses',
    crosses: 'transfer', transfer: ['losses'], docs: 'heads.md § 5' }),
  dagProfile: row({ summary: 'DAG score per head and layer for each input, with the null of its length under the mask.',
    args: ['inputs', 'options'], options: ['mask'], result: 'DagProfile', docs: 'heads.md § 3' }),
  counterfactual: row({ summary: 'Two runs with the same options, their alignment, attention difference and next-token difference.', optionsType: 'RunOptions',
    args: ['inputA', 'inputB', 'options'], options: ['interventions', 'ablate', 'mask', 'scale', 'captureQK', 'topK'],
    result: 'Counterfactual', crosses: 'counterfactual', docs: 'heads.md § 7' }),

  // ---- does attention explain? one input (c/src/evidence.c) ----
  edgeKnockout: row({ summary: 'Edge knockout of every causal pair of one head (or all heads of a layer) against its attention (docs/evidence.md).',
    args: ['input', 'options'], options: ['layer', 'head', 'topK', 'knockout', ...PROGRESS], result: 'EdgeKnockout',
    stepwise: '4 query rows', docs: 'evidence.md § 1',
    cli: { id: 'edge', kind: 'edge', set: 'edgeKnockoutSet', usage: [
      '--layer L --head H|all           edge: the head (default: last layer, all heads)',
      '      --knockout renorm|zero           edge/tokens: renormalise the row after a knockout (default) or not'] } }),
  tokenKnockout: row({ summary: 'Token knockout effects at the last position beside the last layer, rollout and flow.',
    args: ['input', 'options'], options: ['mode', 'neutral', 'knockout', ...PROGRESS], result: 'TokenKnockout',
    stepwise: '8 tokens', docs: 'evidence.md § 2',
    cli: { id: 'tokens', kind: 'tokens', set: 'tokenKnockoutSet', usage: [
      '--token-mode column|delete|replace  tokens: knock out token j\'s column (default), delete it from',
      '                                       the input, or replace it by --neutral ID (default: " the")'] } }),
  ablationSemantics: row({ summary: 'Head importance and pruning under zero, mean and resample ablation, and their agreement.',
    args: ['input', 'options'], options: ['reference', 'resample', 'draws', 'seed', ...PROGRESS],
    result: 'AblationSemantics', stepwise: 'each ablation (zero, mean, the resample draws, their pruning curves)', docs: 'evidence.md § 3',
    cli: { id: 'ablation', kind: 'ablation', usage: [
      '--reference TEXT                 ablation: the text of the mean / resample ablation (default: the',
      '                                       held-out passage the JS API uses, web/src/evidence-reference.js)',
      '      --draws K --seed S               ablation: resample draws (default 20) and their seed (default 1)'] } }),
  activationPatching: row({ summary: 'Activation patching from a clean into a corrupted input of equal length.', optionsType: 'AnswersOptions',
    args: ['clean', 'corrupt', 'options'], options: ['answers', 'budget'], result: 'ActivationPatching', docs: 'evidence.md § 4',
    cli: { id: 'patch', kind: 'patch', usage: [
      '--corrupt TEXT --answers A,B     patch, pattern-value, path, trace: the corrupted text (as many tokens',
      '                                       as TEXT) and the two answer ids (default: each run\'s top next token)'] } }),

  // ---- over a set of inputs (docs/evidence.md § 5) ----
  edgeKnockoutSet: row({ summary: 'Edge knockout of one layer over a set of inputs: mean per-input correlations with intervals, nulls, baselines.',
    args: ['set', 'options'], options: ['layer', 'head', 'knockout', ...SET_STATS, ...PROGRESS],
    result: 'EdgeKnockoutSet', takesSet: true, stepwise: 'each input (and 4 query rows of it), each input of the noise floor', docs: 'evidence.md § 5' }),
  tokenKnockoutSet: row({ summary: 'Token knockout over a set of inputs against the last layer, rollout and flow, with intervals and nulls.',
    args: ['set', 'options'], options: ['mode', 'knockout', 'neutral', ...SET_STATS, ...PROGRESS],
    result: 'TokenKnockoutSet', takesSet: true, stepwise: 'each input (and 8 tokens of it), each input of the noise floor', docs: 'evidence.md § 5' }),
  ablationSet: row({ summary: 'Each head\'s loss increase under zero, mean and resample ablation over a set of inputs, and their agreement.',
    args: ['set', 'options'], options: ['draws', 'reference', 'limit', 'nBoot', 'seed', 'level', ...PROGRESS],
    result: 'AblationSet', takesSet: true, stepwise: 'each input (and each of its three ablations)', docs: 'evidence.md § 5' }),
  patchingSet: row({ summary: 'Activation patching over clean/corrupted pairs: \'pairs\', \'induction\', \'induction-prev\' or a list.',
    args: ['pairs', 'options'], options: PAIR_SET, result: 'PatchingSet', takesSet: true, stepwise: 'each pair',
    docs: 'evidence.md § 5' }),

  // ---- where a head looks versus what it moves: one pair or input (c/src/circuits.c) ----
  patternValuePatching: row({ summary: 'Each head\'s attention pattern, values, or both, patched from the other run, denoising and noising (docs/evidence.md § 6).', optionsType: 'AnswersOptions',
    args: ['clean', 'corrupt', 'options'], options: ['answers', 'budget'], result: 'PatternValuePatching', docs: 'evidence.md § 6',
    cli: { id: 'pattern_value', kind: 'pattern-value', usage: [
      '--kind pattern-value             each head\'s attention pattern, values, or both, patched in each',
      '                                       direction (denoise: into the corrupted run; noise: into the clean one)'] } }),
  pathPatching: row({ summary: 'Each sender head\'s output patched only along its path into each receiver (docs/evidence.md § 7).', optionsRequired: true,
    args: ['clean', 'corrupt', 'options'], options: ['answers', 'receivers', 'direction', 'freezeMlp', 'budget'],
    result: 'PathPatching', docs: 'evidence.md § 7',
    cli: { id: 'path', kind: 'path', usage: [
      '--receivers R[,R...]             path: each R is L.H.q, L.H.k, L.H.v (that input of head H of layer L)',
      '                                       or logits (default); one sender grid per receiver, null below it',
      '      --direction denoise|noise        path: patch into the corrupted run (default) or the clean one',
      '      --freeze-mlp                     path: freeze the MLPs too (only the direct residual path is left)'] } }),
  directLogitAttribution: row({ summary: 'Direct logit attribution at the last position, the final norm\'s scale frozen (docs/evidence.md § 8).', optionsRequired: true,
    args: ['input', 'options'], options: ['answers', 'budget'], result: 'DirectLogitAttribution', docs: 'evidence.md § 8',
    cli: { id: 'dla', kind: 'dla', usage: [
      '--answers A[,B]                  dla: the logit difference A - B, or the logit of A alone (default:',
      '                                       the run\'s top next token and its second)'] } }),
  valueNorms: row({ summary: '||v_j W_O^h|| per (layer, head, position) (Kobayashi et al. 2020): (nLayer · nHead · T).',
    args: ['input'], result: 'Float32Array', docs: 'evidence.md § 9',
    cli: { id: 'value_norms', kind: 'value-norms', usage: [
      '--kind value-norms               ||v_j W_O^h|| of every layer, head and position j'] } }),
  componentTracing: row({ summary: 'Causal tracing by component: the clean run\'s attention or MLP output restored at each (layer, position).', optionsType: 'AnswersOptions',
    args: ['clean', 'corrupt', 'options'], options: ['answers', 'budget'], result: 'ComponentTracing', docs: 'evidence.md § 10',
    cli: { id: 'trace', kind: 'trace', usage: [
      '--kind trace                     each layer\'s attention and MLP output at each position, denoising'] } }),
  compositionScores: row({ summary: 'Q-, K- and V-composition scores of every head pair in adjacent layers, with a Gaussian null (weights only).',
    args: ['options'], options: ['nNull', 'seed', 'budget'], result: 'CompositionScores', docs: 'evidence.md § 11',
    cli: { id: 'composition', kind: 'composition', usage: [
      '[--n-null N] [--seed S]',
      '      Q-, K- and V-composition of every head pair in adjacent layers (weights only, no --text) and',
      '      their Gaussian null over N draws (default 200, 0 to 100000) seeded S (default 1)'] } }),

  // ---- the same over a set of pairs (docs/evidence.md § 6–11) ----
  patternValueSet: row({ summary: 'patternValuePatching over a set of pairs, with intervals and the pattern\'s share of each head\'s effect.',
    args: ['pairs', 'options'], options: [...PAIR_SET, 'minEffect'], result: 'PatternValueSet', takesSet: true,
    stepwise: 'each pair', docs: 'evidence.md § 6' }),
  pathPatchingSet: row({ summary: 'pathPatching over a set of pairs.', optionsRequired: true,
    args: ['pairs', 'options'], options: [...PAIR_SET, 'receivers', 'direction', 'freezeMlp'], result: 'PathPatchingSet',
    takesSet: true, stepwise: 'each pair', docs: 'evidence.md § 7' }),
  componentTracingSet: row({ summary: 'componentTracing over a set of pairs: per layer at the corrupted positions, the last and the others.', optionsType: 'PatchingSetOptions',
    args: ['pairs', 'options'], options: PAIR_SET, result: 'ComponentTracingSet', takesSet: true,
    stepwise: 'each pair', docs: 'evidence.md § 10' }),
  attributionSet: row({ summary: 'directLogitAttribution of each pair\'s clean input along W_U[answer clean] − W_U[answer corrupted].', optionsType: 'PatchingSetOptions',
    args: ['pairs', 'options'], options: PAIR_SET, result: 'AttributionSet', takesSet: true, stepwise: 'each pair',
    docs: 'evidence.md § 8' }),
  // ---- readings from gradients: one input (c/src/backward.c) ----
  gradientReadings: row({ summary: 'Per token: gradient norm, gradient × input, integrated gradients (with its completeness error) and attention × gradient of a metric (docs/evidence.md § 12).',
    args: ['input', 'options'], options: ['metric', 'answers', 'baseline', 'steps', ...PROGRESS], result: 'GradientReadings',
    crosses: 'transfer', transfer: ['gradNorm', 'gradTimesInput', 'integratedGradients', 'attnGrad', 'attnGradSaliency'],
    stepwise: 'the input\'s backward, the baseline, each integrated-gradients step', docs: 'evidence.md § 12' }),
});
