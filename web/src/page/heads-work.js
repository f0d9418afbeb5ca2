// heads-work.js — how the Heads panel (heads.js) shares the page's one worker
// with the chapter's figures: its work runs as short worker calls, one at a time,
// and none starts while the figures are computing, so a click on a figure waits
// for at most one short call of the panel, never for a whole card.
//
//   Lane               one call at a time; before each, waits until the
//                      foreground (the figures) is idle
//   importanceInSteps  headImportance (docs/heads.md §1) as 2·L·H + 1 calls of
//                      tokenLosses, equal to the API's numbers bit for bit
//   dagInSteps         dagProfile one sentence per call, the means as the API
//                      forms them
//
// Pure of the DOM (the page passes the foreground test in), so they are tested in
// Node (tests/js/heads-work.test.js).

/**
 * Runs async calls one at a time, each only when `busy()` is false; `subscribe(wake)`
 * registers a callback for when busy() may have changed and returns an unsubscribe.
 */
export class Lane {
  #tail = Promise.resolve();
  #busy;
  #subscribe;

  /** @param {{busy?: () => boolean, subscribe?: (wake: () => void) => (() => void)}} [o] */
  constructor({ busy = () => false, subscribe = () => () => {} } = {}) {
    this.#busy = busy;
    this.#subscribe = subscribe;
    /** How many calls have started (for tests and the page's data-*). */
    this.started = 0;
  }

  /** Resolves when the foreground is idle (at once if it is). onWait() is called if it has to wait. */
  idle(onWait) {
    if (!this.#busy()) return Promise.resolve();
    if (onWait) onWait();
    return new Promise((resolve) => {
      const off = this.#subscribe(() => {
        if (this.#busy()) return;
        off();
        resolve();
      });
    });
  }

  /**
   * fn() after every call queued before it and once the foreground is idle.
   * @param {() => Promise<any>} fn
   * @param {{onWait?: () => void, alive?: () => boolean}} [o] alive() false: skip fn, reject with {code: 'ESTALE'}
   */
  run(fn, { onWait, alive = () => true } = {}) {
    const p = this.#tail.then(() => this.idle(onWait)).then(() => {
      if (!alive()) throw Object.assign(new Error('stale: the panel moved on'), { code: 'ESTALE' });
      this.started += 1;
      return fn();
    });
    this.#tail = p.catch(() => {});
    return p;
  }
}

/**
 * Head importance and the pruning curve from single runs (docs/heads.md §1):
 * the base loss, each head ablated alone, then the k least important together,
 * k = 1 … L·H (k = 0 is the base run). `loss(ablate)` is the mean next-token loss
 * with the heads [[layer, head], …] ablated — tokenLosses(ids, {ablate}).mean,
 * which is alab_head_importance's loss to the last bit (the same per-position
 * losses summed in the same order), so delta and pruning equal headImportance's.
 * @param {(ablate: number[][]) => Promise<number>} loss
 * @param {{nLayer: number, nHead: number, T: number, onStep?: (done: number, total: number) => void}} o
 * @returns {Promise<{baseLoss, delta: Float32Array, order: Int32Array, pruning: Float32Array, lossAtHalf, nLayer, nHead, T}>}
 */
export async function importanceInSteps(loss, { nLayer, nHead, T, onStep = () => {} }) {
  const LH = nLayer * nHead;
  const total = importanceRuns(nLayer, nHead);
  let done = 0;
  const step = async (ablate) => {
    const v = await loss(ablate);
    onStep(++done, total);
    return v;
  };
  const baseLoss = await step([]);
  const delta = new Float32Array(LH);
  for (let k = 0; k < LH; k++) delta[k] = (await step([[Math.floor(k / nHead), k % nHead]])) - baseLoss;
  const order = Int32Array.from(delta.keys()).sort((a, b) => delta[a] - delta[b] || a - b);
  const pruning = new Float32Array(LH + 1);
  pruning[0] = baseLoss;
  for (let k = 1; k <= LH; k++) pruning[k] = await step(Array.from(order.subarray(0, k), (i) => [Math.floor(i / nHead), i % nHead]));
  return { baseLoss, delta, order, pruning, lossAtHalf: pruning[Math.floor(LH / 2)], nLayer, nHead, T };
}

/** The worker calls of importanceInSteps: the base run, L·H single ablations, L·H pruning runs. */
export function importanceRuns(nLayer, nHead) {
  return 2 * nLayer * nHead + 1;
}

/**
 * dagProfile of a list, one sentence per call (`one(sentence)` is dagProfile(sentence, {mask})),
 * the means formed as Model#dagProfile forms them (the same sums in the same order).
 * @returns {Promise<{mask, sentences, mean: {head: Float64Array, layer: Float64Array, overall, null}, nLayer, nHead}>}
 */
export async function dagInSteps(one, list, { mask, nLayer, nHead, onStep = () => {} }) {
  const n = list.length;
  const mean = { head: new Float64Array(nLayer * nHead), layer: new Float64Array(nLayer), overall: 0, null: 0 };
  const sentences = [];
  for (const text of list) {
    const s = (await one(text)).sentences[0];
    s.head.forEach((x, i) => { mean.head[i] += x / n; });
    s.layer.forEach((x, i) => { mean.layer[i] += x / n; });
    mean.overall += s.overall / n;
    mean.null += s.null / n;
    sentences.push(s);
    onStep(sentences.length, n);
  }
  return { mask, sentences, mean, nLayer, nHead };
}
