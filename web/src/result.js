// result.js — the outcome of a run as plain data (Result), and the messages that carry a Result or a
// counterfactual pair across a worker boundary (its big buffers transferred, not copied). worker-client.js and
// widget/client.js decode answers with it without loading the model's code.

import { AttnlabError } from './core/errors.js';
import { checkIndex } from './analysis.js';

const RESULT_BUFFERS = ['ids', 'attentions', 'headAverages', 'logits', 'q', 'k'];

/**
 * The outcome of one Model#run: plain JS data, independent of the model.
 * Fields: model, T, ids, tokens, attentions, headAverages, logits, top,
 * dagScore, dagScores, layerDagScores, nullDagScore (the last layer's, as dagScore),
 * layerNullDagScores (the null of each layer's mask), captureQK, q, k.
 */
export class Result {
  constructor(data) {
    Object.assign(this, data);
  }

  /**
   * The attention matrix (T×T, row = query) of one head, or the head average
   * with head = 'avg'. A view into this.attentions / this.headAverages.
   */
  attention(layer, head = 'avg') {
    const { nLayer: L, nHead: H } = this.model;
    const T = this.T;
    checkIndex('layer', layer, 0, L - 1);
    if (head === 'avg') return this.headAverages.subarray(layer * T * T, (layer + 1) * T * T);
    if (typeof head === 'string') throw new AttnlabError('EINVAL', `head must be a head index or 'avg', got '${head}'`);
    checkIndex('head', head, 0, H - 1);
    const off = (layer * H + head) * T * T;
    return this.attentions.subarray(off, off + T * T);
  }

  /** The mean over heads of one layer's attention (T×T): a view into this.headAverages. */
  headAverage(layer) {
    return this.attention(layer, 'avg');
  }
}

/** A Result as a structured-clonable message plus the buffers to transfer. */
export function resultToMessage(r) {
  const data = { ...r };
  const transfer = RESULT_BUFFERS.filter((k) => r[k]).map((k) => r[k].buffer);
  return { data, transfer };
}

/** The Result of resultToMessage's data (after postMessage). */
export function resultFromMessage(data) {
  return new Result(data);
}

/** A counterfactual() value as a message (its two Results and diffs transferred). */
export function counterfactualToMessage(c) {
  const a = resultToMessage(c.a), b = resultToMessage(c.b);
  return { data: { ...c, a: a.data, b: b.data },
           transfer: [...a.transfer, ...b.transfer, c.attentionDiff.buffer, c.headDiff.buffer] };
}

/** The counterfactual() value of counterfactualToMessage's data. */
export function counterfactualFromMessage(data) {
  return { ...data, a: new Result(data.a), b: new Result(data.b) };
}
