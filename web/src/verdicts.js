// verdicts.js — a set-level evidence table read the way a reviewer reads it (docs/evidence.md § 5, "Controls"):
// the trained model beside controls that could come out the same, intervals clustered by document, differences
// paired on the same inputs, and Holm's correction over the table.
//
//   controlledEvidence(model, 'edgeKnockoutSet' | 'tokenKnockoutSet', set, options) → Promise<table>
//
// runs the measure on the trained model and on its random-weight twins (twins.js: 'matched', whose attention is
// as peaked as the trained model's layer by layer, and 'gpt2-init', whose attention is near uniform), on the
// same inputs; sets each per-input correlation of the trained model against the same number of each twin and of
// the position readings (controls.js: recency, first token, diagonal, earliness), as paired differences with
// cluster-bootstrap intervals and cluster sign-flip p-values (stats.js); adjusts every p-value of the table by
// Holm; and writes the verdict sentences, which say so when a control comes out the same.
//
// Main thread only (a twin is a Model of its own, like randomTwin's). The clusters are the documents the
// sentences come from for the built-in 'heldout' set, else options.clusters (one id per input), else none (each
// input its own cluster).

import { AttnlabError } from './core/errors.js';
import { modelInternals } from './model.js';
import { randomTwin, TWIN_KINDS } from './twins.js';
import { EVIDENCE_SETS } from './evidence-sets.js';
import { clusterBootstrapMean, pairedDiff, holm } from './stats.js';
import { checkOptions } from './options.js';

export const CONTROLLED_KINDS = Object.freeze(['edgeKnockoutSet', 'tokenKnockoutSet']);
const OWN_OPTIONS = ['twins', 'twinSeed', 'clusters', 'onProgress'];

/**
 * The per-input numbers of one result, by row name: for an edge set the weights' local and last-position rho and
 * the per-row rho, each position reading's local and last rho; for a token set each reading's rho and each
 * position reading's.
 */
export function perInputRows(kind, r) {
  const rows = {};
  if (kind === 'edgeKnockoutSet') {
    rows['weights/local'] = r.perInput.map((p) => p.spearman);
    rows['weights/last'] = r.perInput.map((p) => p.spearmanLast);
    rows['weights/rows'] = r.perInput.map((p) => p.rowSpearman);
    for (const [name, p] of Object.entries(r.positions ?? {})) {
      rows[`${name}/local`] = p.perInput.map((x) => x.local);
      rows[`${name}/last`] = p.perInput.map((x) => x.last);
    }
  } else {
    for (const name of ['lastLayer', 'rollout', 'flow', 'valueWeighted']) rows[name] = r.perInput.map((p) => p[name]);
    for (const [name, p] of Object.entries(r.positions ?? {})) rows[name] = p.perInput;
  }
  return rows;
}

// the rows a verdict is about, and the position rows set against each
const FOCUS = {
  edgeKnockoutSet: [['weights/local', ['recency/local', 'first/local', 'diagonal/local', 'early/local']],
                    ['weights/last', ['recency/last', 'first/last', 'diagonal/last', 'early/last']],
                    ['weights/rows', []]],
  tokenKnockoutSet: [['lastLayer', ['recency', 'first', 'early']], ['rollout', ['recency', 'first', 'early']],
                     ['flow', ['recency', 'first', 'early']], ['valueWeighted', ['recency', 'first', 'early']]],
};

/** The clusters of a set's first n inputs: the heldout sentences' documents, the given ids, or null. */
export function clustersOf(set, n, given) {
  if (given !== undefined) {
    if (!Array.isArray(given) || given.length < n)
      throw new AttnlabError('EINVAL', `controlledEvidence: options.clusters must give one id per input (${n})`);
    return given.slice(0, n);
  }
  if (set === 'heldout') return EVIDENCE_SETS.heldout.sentences.slice(0, n).map((s) => s.doc);
  return null;
}

const f3 = (x) => (x === null || x === undefined ? '—' : x.toFixed(3));
const ci = (s) => `${f3(s.mean)} [${f3(s.lo)}, ${f3(s.hi)}]`;

/**
 * The verdict sentences of one focus row, from its comparisons (pure: the tests feed it made-up numbers).
 * focus: {name, label, trained: interval}; twin: {matched?: diff, 'gpt2-init'?: diff} (trained − twin, each
 * {mean, lo, hi, p, pHolm}) with the twins' own intervals; positions: [{name, label, value: interval, diff}].
 * A difference counts only when its interval excludes 0 in the reading's favour.
 */
export function verdictSentences({ label, trained, twins = {}, positions = [] }) {
  const out = [];
  const beats = (d) => d && d.lo !== null && d.lo > 0;
  const m = twins.matched;
  if (m) {
    out.push(beats(m.diff)
      ? `${label}: ${ci(trained)} on the trained model against ${ci(m.value)} on a random-weight twin with attention as peaked, layer by ` +
        `layer; the trained model is ahead by ${ci(m.diff)} (paired, p = ${f3(m.diff.pHolm)} after Holm).`
      : `${label}: ${ci(trained)} on the trained model against ${ci(m.value)} on a random-weight twin with attention as peaked; ` +
        (m.diff && m.diff.hi !== null && m.diff.hi < 0
          ? `the twin is ahead, by ${ci({ mean: -m.diff.mean, lo: -m.diff.hi, hi: -m.diff.lo })}`
          : `the difference ${ci(m.diff)} does not exclude 0`) +
        ', so the control comes out the same: this number says what peaked attention and the intervention\'s algebra give, not ' +
        'what training learned.');
  }
  const g = twins['gpt2-init'];
  if (g) out.push(`Beside a twin with GPT-2's initialisation (near-uniform attention): ${ci(g.value)}, difference ${ci(g.diff)}` +
    `${beats(g.diff) ? '' : ' (not in the trained model\'s favour)'}; that twin's attention is too flat to be a fair control on its own.`);
  if (positions.length) {
    const best = positions.reduce((a, p) => ((p.value.mean ?? -Infinity) > (a.value.mean ?? -Infinity) ? p : a));
    out.push(beats(best.diff)
      ? `Position alone does less: the best position reading, ${best.label}, gives ${ci(best.value)}; the weights are ahead by ${ci(best.diff)}.`
      : `Position alone does as well: ${best.label} gives ${ci(best.value)}, and the weights are not ahead of it (${ci(best.diff)}).`);
  }
  return out;
}

const LABELS = {
  'weights/local': 'attention against each edge\'s own effect (local ρ)',
  'weights/last': 'attention against the effect at the last position (last ρ)',
  'weights/rows': 'attention against the effects within each query row (per-row ρ)',
  recency: 'recency (the nearer, the higher)', first: 'the first token', diagonal: 'the query\'s own token', early: 'earliness −j',
  lastLayer: 'the last layer\'s attention', rollout: 'attention rollout', flow: 'attention flow',
  valueWeighted: 'value-weighted attention',
};
const label = (name) => LABELS[name] ?? LABELS[name.split('/')[0]] ?? name;

/**
 * The measure on the model and its twins with the comparisons and verdicts described at the top of this file.
 * options: the measure's own options (limit, layer, head, knockout, nBoot, nPerm, seed, level, …) plus
 * twins (default ['matched', 'gpt2-init']; [] for none), twinSeed (default 1), clusters, onProgress({stage}).
 */
export async function controlledEvidence(model, kind, set, options = {}) {
  if (!CONTROLLED_KINDS.includes(kind))
    throw new AttnlabError('EINVAL', `controlledEvidence: kind is ${CONTROLLED_KINDS.join(' or ')}, not ${JSON.stringify(kind)}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new AttnlabError('ETYPE', 'controlledEvidence: options must be an object');
  const own = {}, measureOptions = {};
  for (const [k, v] of Object.entries(options)) (OWN_OPTIONS.includes(k) ? own : measureOptions)[k] = v;
  checkOptions('controlledEvidence', own, OWN_OPTIONS);
  const twinKinds = own.twins === undefined ? ['matched', 'gpt2-init'] : own.twins;
  if (!Array.isArray(twinKinds) || twinKinds.some((k) => !TWIN_KINDS.includes(k)))
    throw new AttnlabError('EINVAL', `controlledEvidence: twins is a list of ${TWIN_KINDS.join(', ')}`);
  const progress = typeof own.onProgress === 'function' ? own.onProgress : () => {};
  const { nBoot = 1000, nPerm = 1000, level = 0.95, seed = 1 } = measureOptions;
  const stat = { nBoot, nPerm, level, seed };

  const inputs = model.evidenceSet(set, measureOptions.limit === undefined ? undefined : { limit: measureOptions.limit });
  const { limit, ...runOptions } = measureOptions; // the inputs are fixed now: every model runs exactly these
  const clusters = clustersOf(set, inputs.length, own.clusters);
  progress({ stage: 'trained' });
  const trained = model[kind](inputs, runOptions);
  const twins = {};
  for (const tk of twinKinds) {
    progress({ stage: `twin ${tk}` });
    const twin = await randomTwin(model, { kind: tk, seed: own.twinSeed ?? 1, set: inputs });
    try {
      twins[tk] = { result: twin[kind](inputs, runOptions), twin: twin.twin };
    } finally {
      twin.dispose();
    }
  }

  const w = modelInternals(model).wasm;
  const rows = perInputRows(kind, trained);
  const twinRows = Object.fromEntries(Object.entries(twins).map(([tk, t]) => [tk, perInputRows(kind, t.result)]));
  const interval = (v) => clusterBootstrapMean(w, v, clusters, { nBoot, level, seed });
  const diff = (x, y) => pairedDiff(w, x, y, clusters, stat);
  const focus = [];
  const pvals = []; // every p of the table, in order, for Holm
  for (const [name, posNames] of FOCUS[kind]) {
    if (!rows[name]) continue;
    const f = { name, label: label(name), trained: interval(rows[name]), twins: {}, positions: [] };
    for (const tk of Object.keys(twins)) {
      const d = diff(rows[name], twinRows[tk][name]);
      f.twins[tk] = { value: interval(twinRows[tk][name]), diff: d };
      pvals.push(d);
    }
    for (const pn of posNames) {
      if (!rows[pn]) continue;
      const d = diff(rows[name], rows[pn]);
      f.positions.push({ name: pn, label: label(pn), value: interval(rows[pn]), diff: d });
      pvals.push(d);
    }
    focus.push(f);
  }
  const adjusted = holm(w, pvals.map((d) => d.p));
  pvals.forEach((d, k) => { d.pHolm = adjusted[k]; });
  for (const f of focus) f.verdict = verdictSentences(f);
  const docs = clusters ? new Set(clusters).size : inputs.length;
  return { kind, set: typeof set === 'string' ? set : 'list', n: inputs.length, clusters: docs, clusteredBy: clusters ? 'document' : 'input',
    nBoot, nPerm, level, seed, trained, twins: Object.fromEntries(Object.entries(twins).map(([tk, t]) => [tk, { twin: t.twin, result: t.result }])),
    focus, comparisons: pvals.length };
}
