// runner.js — runs the model for the page's current settings, in the worker,
// never more than one job in flight and at most one waiting: a new request
// replaces the waiting one (dragging the λ slider produces many requests; only
// the latest is computed once the running one finishes).
//
// One job = up to four worker calls:
//   tokenize   only when the text changed (to place the default do cell)
//   base       the model as configured (mask, ablations), q/k of the Fig. 2 head;
//              cached: a λ change reuses it
//   after      the same plus the do(j → i) at the chosen layer and head(s)
//   plain      the unmodified model (causal, no ablation), only when the mask or
//              an ablation differs from it; cached per text
// For a new sentence the default cell is searched (strongestDo): the first candidate's result is handed to
// onResult at once with provisional: true, so the page draws while the other candidates run; the final
// result follows (the same cell or the stronger one found).
// Results are plain Result objects (see docs/api.md), kept for rendering and export.
// A soft do on a masked cell is refused by the model (EMASKED): then after = base
// and masked = true, and the page says so.

import { tokenLabel } from '../figures/index.js';
import { klDivergence } from './compare.js';
import { defaultSelection } from '../ui/selection.js';

export { defaultSelection };

/** How many cause columns the default-cell search tries (each one forward pass). */
export const DEFAULT_CANDIDATES = 6;


/**
 * The cause columns the default-cell search tries on the last row: the chapter's
 * cause ("storm") when the sentence has it, then the columns the last row attends
 * to least (the do moves the most weight there), up to k in all.
 * @param {string[]} tokens
 * @param {ArrayLike<number>} lastRow  the last row's attention (head average) at the do's layer
 */
export function defaultCandidates(tokens, lastRow, k = DEFAULT_CANDIDATES) {
  const T = tokens.length;
  const out = [];
  const storm = tokens.map((s) => tokenLabel(s, 1000).toLowerCase()).indexOf('storm');
  if (storm >= 0) out.push(storm);
  const order = Array.from({ length: T }, (_, j) => j).sort((a, b) => lastRow[a] - lastRow[b] || a - b);
  for (const j of order) {
    if (out.length >= k) break;
    if (!out.includes(j)) out.push(j);
  }
  return out;
}

/** The options of Model#run for a spec's mask setting. */
export function maskOption(spec) {
  return spec.mask === 'window' ? `window:${spec.window}` : spec.mask;
}

/** The do intervention of a spec at selection sel. */
export function doIntervention(spec, sel) {
  const iv = { kind: spec.kind, layer: spec.layer, head: spec.head === 'avg' ? 'all' : spec.head, row: sel.row, col: sel.col };
  if (spec.kind === 'soft') iv.lambda = spec.lambda;
  return iv;
}

/**
 * The default cell for a new sentence: the do (of the spec's kind, layer and
 * head) that moves the prediction most. The prediction is read at the last
 * position, so the effect row is the last token; the cause column is the one of
 * defaultCandidates() with the largest KL(before ‖ after). Computed on the live
 * model, so it follows whatever weights are loaded. model: a Model or a
 * WorkerModel (its run may return a promise); base: the run without the do.
 * @returns {Promise<{sel: {row, col, text}, search: {tried: {col, kl}[], kl, after}}>}
 */
export async function strongestDo(model, spec, base, opts = {}, onFirst = null) {
  const T = base.T;
  const row = T - 1;
  const cols = defaultCandidates(base.tokens, base.attention(spec.layer, spec.head).subarray(row * T, row * T + T));
  let best = null;
  const tried = [];
  for (const col of cols) {
    const sel = { row, col, text: spec.text };
    const after = await model.run(spec.text, { ...opts, interventions: [doIntervention(spec, sel)], topK: 10 });
    const kl = klDivergence(base.logits, after.logits);
    tried.push({ col, kl });
    if (!best || kl > best.kl) best = { sel, after, kl };
    // the first candidate (the chapter's cause when the sentence has it) can be drawn while the rest are tried
    if (onFirst && tried.length === 1 && cols.length > 1) await onFirst({ sel, after, kl, tried: tried.slice() });
  }
  return { sel: best.sel, search: { tried, kl: best.kl, after: best.after } };
}

export class Runner {
  #model;
  #busy = false;
  #pending = null;
  #cache = { tokText: null, tokens: null, tokBytes: null, baseKey: null, base: null, plainText: null, plain: null };
  #idBytes = new Map();   // token id -> its bytes (the predictions' labels)
  #handlers;

  /**
   * @param {object} model  a WorkerModel (attnlab/worker)
   * @param {{onResult(out), onError(e, spec), onBusy(busy)}} handlers
   */
  constructor(model, handlers) {
    this.#model = model;
    this.#handlers = handlers;
  }

  get busy() { return this.#busy; }

  /** Ask for a run of spec (a snapshot of the settings); replaces any waiting request. */
  request(spec) {
    this.#pending = spec;
    if (!this.#busy) this.#pump();
  }

  async #pump() {
    this.#busy = true;
    this.#handlers.onBusy(true);
    while (this.#pending) {
      const spec = this.#pending;
      this.#pending = null;
      try {
        const out = await this.#exec(spec);
        this.#handlers.onResult(out, this.#pending !== null);
      } catch (e) {
        this.#handlers.onError(e, spec);
      }
    }
    this.#busy = false;
    this.#handlers.onBusy(false);
  }

  async #exec(spec) {
    const m = this.#model;
    const c = this.#cache;
    const t0 = performance.now();
    if (c.tokText !== spec.text) {
      const { ids, tokens } = await m.tokenize(spec.text);
      // the bytes of each token: byte-level tokens holding part of a character get readable labels (readable.js)
      c.tokBytes = ids.length && m.tokenBytes ? await m.tokenBytes(ids) : null;
      c.tokText = spec.text;
      c.tokens = tokens;
    }
    const T = c.tokens.length;
    let sel = spec.sel;
    const choose = !sel || sel.text !== spec.text || sel.row >= T || sel.col >= T;
    if (choose) sel = T > 0 ? { ...defaultSelection(c.tokens), text: spec.text } : { row: 0, col: 0, text: spec.text };
    const mask = maskOption(spec);
    const ablate = spec.ablate.map(([l, h]) => [l, h]);
    const fig2Head = spec.head === 'avg' ? 0 : spec.head;
    const baseOpts = { mask, ablate, captureQK: { layer: spec.layer, head: fig2Head }, topK: 10 };
    const baseKey = JSON.stringify([spec.text, baseOpts]);
    if (c.baseKey !== baseKey) {
      c.base = await m.run(spec.text, baseOpts);
      c.baseKey = baseKey;
    }
    const base = c.base;
    const plain = await this.#plain(spec, mask, ablate);
    const out = (s, iv, after, masked, search) => ({ spec, sel: s, defaultSearch: search, fig2Head, intervention: iv, base, after, plain,
      masked, tokBytes: c.tokBytes, idBytes: this.#idBytes, ms: performance.now() - t0 });
    let search = null;
    if (choose && T > 1) {
      // the first candidate's picture goes out at once, marked provisional; the search goes on and the final
      // result says which cell won (the page redraws only when it is another one)
      const first = async (f) => {
        if (this.#pending) return;   // a newer request waits: no picture of this one
        await this.#labels([base, f.after, plain]);
        const o = out(f.sel, doIntervention(spec, f.sel), f.after, false, { tried: f.tried, kl: f.kl });
        this.#handlers.onResult({ ...o, provisional: true }, false);
      };
      ({ sel, search } = await strongestDo(m, spec, base, { mask, ablate }, first));
    }
    const iv = doIntervention(spec, sel);
    // A soft do on a cell the mask hides is refused by the model (EMASKED): the panel says so, after = base.
    let after, masked = false;
    if (search) {
      after = search.after;
      delete search.after;
    } else {
      try {
        after = await m.run(spec.text, { mask, ablate, interventions: [iv], topK: 10 });
      } catch (e) {
        if (!e || e.code !== 'EMASKED') throw e;
        after = base;
        masked = true;
      }
    }
    await this.#labels([base, after, plain]);
    return out(sel, iv, after, masked, search);
  }

  /** The unmodified model's run (causal, no ablation) when the view's mask or ablations differ from it; cached per text. */
  async #plain(spec, mask, ablate) {
    if (mask === 'causal' && ablate.length === 0) return null;
    const c = this.#cache;
    if (c.plainText !== spec.text) {
      c.plain = await this.#model.run(spec.text, { topK: 10 });
      c.plainText = spec.text;
    }
    return c.plain;
  }

  /** The bytes of the runs' top predictions not yet known (their labels). */
  async #labels(runs) {
    const m = this.#model;
    const need = [...new Set(runs.flatMap((r) => (r ? r.top.map((x) => x.id) : [])))].filter((id) => !this.#idBytes.has(id));
    if (need.length && m.tokenBytes) {
      const got = await m.tokenBytes(need);
      need.forEach((id, k) => this.#idBytes.set(id, got[k]));
    }
  }
}
