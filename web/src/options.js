// options.js — the argument checks of the API: every option object, text, id list, mask and intervention is
// checked here (AttnlabError with a stable .code) before anything reaches C, and turned into what the C wants.
// Used by model.js and measures.js.

import { C, INTERVENTION_KINDS, INTERVENTION_SHAPES, MASKS } from './core/abi.js';
import { AttnlabError } from './core/errors.js';
import { checkIndex, checkFinite } from './analysis.js';

/** Limits of c/include/attnlab.h that the JS side checks first. */
export const MAX_TEXT_BYTES = C.MAX_TEXT_BYTES;
export const INT_MAX = 2 ** 31 - 1;
/** The most token ids one call takes (4 Mi: the most one encode call gives, bpe.c's BPE_MAX_ENCODE_BYTES of normalized text). */
export const MAX_IDS = 4 * 2 ** 20;

const { ALL_HEADS, ABLATE, MASK_CAUSAL, MASK_WINDOW } = C;
const KIND = table(INTERVENTION_KINDS);
// Fields each kind takes (besides kind), from its class in interventions.c's IV_KINDS: do-operations act on
// one cell, weight edits (interventions on a mechanism) on a whole head. Every non-weight kind accepts
// row/col/lambda whether it uses them or not, so a caller may switch kinds without rebuilding the object.
const DO_FIELDS = ['layer', 'head', 'row', 'col', 'lambda'];
const KIND_FIELDS = table(Object.fromEntries(Object.entries(INTERVENTION_SHAPES).map(([kind, { on, param }]) =>
  [kind, on === 'weights' ? ['layer', 'head', ...(param === 'alpha' ? ['alpha'] : [])] : DO_FIELDS])));
const MASK = table(MASKS);
const utf8 = new TextEncoder();


// Finite inputs must give finite scores (c/include/attnlab.h: ALAB_MAX_SOFT_LAMBDA, ALAB_MAX_SCALE; the C
// also bounds the product of one head's alphas). Checked here too, so a double that would overflow a float
// is ERANGE, not ENAN.
const { MAX_SOFT_LAMBDA, MAX_SCALE, MAX_INTERVENTIONS } = C;
export function checkMagnitude(name, v, max) {
  const x = checkFinite(name, v);
  if (Math.abs(x) > max) throw new AttnlabError('ERANGE', `${name} = ${x} is outside [-${max}, ${max}]`);
  return x;
}

// ---- reading what the caller gave, without trusting ordinary objects (issue 53) ----
//
// An enumerated option (a mode, a kind, a set's name, a receiver's input) is looked up as an own property of a
// null-prototype table, never with `in` or a plain index: 'toString', 'constructor', '__proto__' and the other
// names of Object.prototype are found on every ordinary object ('toString' in {q: 0} is true, {q: 0}['__proto__']
// is an object). An options object or a field object is read once, into a null-prototype copy, its own enumerable
// keys only, each read caught: a getter or a Proxy that throws is ETYPE naming the field, and what the checks see
// is what runs (a getter cannot answer one value to the check and another to the run). Arrays are checked dense
// (a hole is EINVAL naming its index) and their length against their limit before they are walked or copied.

/** A frozen null-prototype copy of a table of enumerated values: look words up in it with lookup() or Object.hasOwn. */
export function table(entries) {
  return Object.freeze(Object.assign(Object.create(null), entries));
}

/** table[v] when v is a string naming one of its own entries, else undefined (never a property of Object.prototype). */
export function lookup(tbl, v) {
  return typeof v === 'string' && Object.hasOwn(tbl, v) ? tbl[v] : undefined;
}

/** A value for a message: strings and numbers as JSON, anything else by its type (never throws: a Symbol, a BigInt, a Proxy). */
export function show(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === undefined || v === null) return String(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return `a ${typeof v}`;
}

/** The own enumerable string keys of v, ETYPE when they cannot be listed (a Proxy's ownKeys trap that throws). */
function keysOf(name, v) {
  try {
    return Object.keys(v);
  } catch (e) {
    throw new AttnlabError('ETYPE', `${name}: its keys could not be listed (${e && e.message})`, { cause: e });
  }
}

/** v[k], ETYPE when reading it throws (a getter, a Proxy's get trap). */
export function readField(name, v, k) {
  try {
    return v[k];
  } catch (e) {
    throw new AttnlabError('ETYPE', `${name}.${k} could not be read (${e && e.message})`, { cause: e });
  }
}

/** A null-prototype copy of an object's own enumerable fields, each read once (readField), after checking that every key is known. */
function snapshot(name, v, keys, what, fields = name) {
  const ks = keysOf(name, v);
  for (const k of ks)
    if (!keys.includes(k)) throw new AttnlabError('EINVAL', `${name}: unknown ${what} '${k}' (known: ${keys.join(', ')})`);
  const out = Object.create(null);
  for (const k of ks) out[k] = readField(fields, v, k);
  return out;
}

/**
 * An array given as a list (ids, interventions, receivers, a set's inputs, answers): ETYPE unless an Array,
 * ELIMIT past `max` entries (checked before anything is walked or allocated), EINVAL at its first hole.
 */
export function denseArray(name, v, max = INT_MAX) {
  if (!Array.isArray(v)) throw new AttnlabError('ETYPE', `${name} must be an array`);
  if (v.length > max) throw new AttnlabError('ELIMIT', `${name} has ${v.length} entries, over the limit of ${max}`);
  for (let i = 0; i < v.length; i++)
    if (!Object.hasOwn(v, i)) throw new AttnlabError('EINVAL', `${name} has a hole at index ${i} (a sparse array); give every entry`);
  return v;
}

/** An options object checked against its known keys and read once: a null-prototype copy ({} for undefined / null). */
export function checkOptions(where, options, keys) {
  if (options === undefined || options === null) return Object.create(null);
  if (typeof options !== 'object' || Array.isArray(options))
    throw new AttnlabError('ETYPE', `${where}: options must be an object`);
  return snapshot(where, options, keys, 'option', `${where}: options`);
}

export function checkString(name, v) {
  if (typeof v !== 'string') throw new AttnlabError('ETYPE', `${name} must be a string, got ${v === null ? 'null' : typeof v}`);
  return v;
}

// UTF-8 bytes of text, ELIMIT above the C limit.
export function textBytes(text) {
  checkString('text', text);
  if (text.length > MAX_TEXT_BYTES) // UTF-8 never has fewer bytes than UTF-16 code units
    throw new AttnlabError('ELIMIT', `text of ${text.length} characters exceeds the limit of ${MAX_TEXT_BYTES} bytes`);
  const bytes = utf8.encode(text);
  if (bytes.length > MAX_TEXT_BYTES)
    throw new AttnlabError('ELIMIT', `text of ${bytes.length} UTF-8 bytes exceeds the limit of ${MAX_TEXT_BYTES}`);
  return bytes;
}

// An array of token ids as an Int32Array, each checked against [0, V).
export function checkIds(ids, V) {
  if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView))))
    throw new AttnlabError('ETYPE', 'token ids must be an array or a typed array of integers');
  if (ids.length > MAX_IDS) // before the copy is allocated (an array of length 2^32 - 1 had a 16 GiB Int32Array made for it)
    throw new AttnlabError('ELIMIT', `${ids.length} token ids exceed the limit of ${MAX_IDS} (the most one text encodes to)`);
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) out[i] = checkIndex(`ids[${i}]`, ids[i], 0, V - 1);
  return out;
}

/** An object of known fields (a mask, an intervention, a receiver), read once: a null-prototype copy. */
export function checkObject(name, v, keys) {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new AttnlabError('ETYPE', `${name} must be an object`);
  return snapshot(name, v, keys, 'field');
}

// head: an index or 'all'
export function checkHead(name, v, H) {
  if (v === 'all') return ALL_HEADS;
  if (typeof v === 'string') throw new AttnlabError('EINVAL', `${name} must be a head index or 'all', got ${show(v)}`);
  return checkIndex(name, v, 0, H - 1);
}

/**
 * A mask option as the C wants it. Accepted: 'causal' | 'full' | 'window:W' |
 * {mode: 'causal'|'full'|'window', window} | an array of those, one per layer.
 */
export function parseMask(mask, nLayer) {
  const one = (m, where) => {
    if (typeof m === 'string') {
      if (m === 'causal' || m === 'full') return { mode: lookup(MASK, m), window: 0 };
      const w = /^window:(.*)$/.exec(m);
      if (w) {
        if (!/^-?\d+$/.test(w[1].trim()))
          throw new AttnlabError('EINVAL', `${where}: '${m}' needs an integer window, as in 'window:4'`);
        return { mode: MASK_WINDOW, window: checkIndex(`${where} window`, Number(w[1]), 1, INT_MAX) };
      }
      throw new AttnlabError('EINVAL', `${where}: unknown mask ${show(m)} (causal, full, window:W)`);
    }
    if (m !== null && typeof m === 'object' && !Array.isArray(m)) {
      const f = checkObject(where, m, ['mode', 'window']);
      checkString(`${where}.mode`, f.mode);
      const mode = lookup(MASK, f.mode);
      if (mode === undefined) throw new AttnlabError('EINVAL', `${where}: unknown mask mode ${show(f.mode)} (causal, full, window)`);
      if (f.mode !== 'window') return { mode, window: 0 };
      return { mode: MASK_WINDOW, window: checkIndex(`${where}.window`, f.window, 1, INT_MAX) };
    }
    throw new AttnlabError('ETYPE', `${where} must be 'causal', 'full', 'window:W', {mode, window} or an array of those per layer`);
  };
  if (mask === undefined || mask === null) return { mask: MASK_CAUSAL, window: 0, layerMask: null, layerWindow: null };
  if (Array.isArray(mask)) {
    if (mask.length !== nLayer)
      throw new AttnlabError('EINVAL', `a per-layer mask needs ${nLayer} entries (one per layer), got ${mask.length}`);
    denseArray('a per-layer mask', mask);
    const parts = mask.map((m, l) => one(m, `mask[${l}]`));
    return { mask: MASK_CAUSAL, window: 0, layerMask: parts.map((p) => p.mode), layerWindow: parts.map((p) => p.window) };
  }
  const p = one(mask, 'mask');
  return { mask: p.mode, window: p.window, layerMask: null, layerWindow: null };
}

/**
 * Interventions (+ the ablate shorthand) as the C wants them. T is the number
 * of tokens; row/col ranges are checked only when 0 < T <= n_positions (else
 * the forward pass fails with EEMPTY / ETOOLONG anyway).
 */
export function parseInterventions(interventions, ablate, cfg, T) {
  const { nLayer: L, nHead: H } = cfg;
  const maxPos = T > 0 && T <= cfg.nPositions ? T - 1 : INT_MAX;
  const out = [];
  if (interventions !== undefined && interventions !== null) {
    denseArray('interventions', interventions, MAX_INTERVENTIONS);
    interventions.forEach((given, i) => {
      const name = `interventions[${i}]`;
      const x = checkObject(name, given, ['kind', 'layer', 'head', 'row', 'col', 'lambda', 'alpha']);
      checkString(`${name}.kind`, x.kind);
      if (lookup(KIND, x.kind) === undefined)
        throw new AttnlabError('EINVAL', `${name}: unknown kind ${show(x.kind)} (${Object.keys(KIND).join(', ')})`);
      for (const k of Object.keys(x))
        if (k !== 'kind' && !KIND_FIELDS[x.kind].includes(k))
          throw new AttnlabError('EINVAL', `${name}: '${k}' is not a field of kind '${x.kind}' (${KIND_FIELDS[x.kind].join(', ')})`);
      const iv = { kind: KIND[x.kind], layer: checkIndex(`${name}.layer`, x.layer, 0, L - 1),
                   head: checkHead(`${name}.head`, x.head, H), row: 0, col: 0, lambda: 0 };
      if (x.kind === 'hard' || x.kind === 'soft') {
        iv.row = checkIndex(`${name}.row`, x.row, 0, maxPos);
        iv.col = checkIndex(`${name}.col`, x.col, 0, maxPos);
      }
      if (x.kind === 'soft') iv.lambda = checkMagnitude(`${name}.lambda`, x.lambda, MAX_SOFT_LAMBDA);
      if (x.kind === 'scaleQ' || x.kind === 'scaleK') iv.alpha = checkMagnitude(`${name}.alpha`, x.alpha, MAX_SCALE);
      out.push(iv);
    });
  }
  if (ablate !== undefined && ablate !== null) {
    if (!Array.isArray(ablate)) throw new AttnlabError('ETYPE', 'ablate must be an array of [layer, head] pairs');
    denseArray('ablate', ablate, MAX_INTERVENTIONS - out.length); // with the interventions: the most one run takes
    ablate.forEach((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2)
        throw new AttnlabError('ETYPE', `ablate[${i}] must be a [layer, head] pair`);
      denseArray(`ablate[${i}]`, pair);
      out.push({ kind: ABLATE, layer: checkIndex(`ablate[${i}][0] (layer)`, pair[0], 0, L - 1),
                 head: checkHead(`ablate[${i}][1] (head)`, pair[1], H), row: 0, col: 0, lambda: 0 });
    });
  }
  return out;
}

// ---- the options of loadModel, run and generate ----

export const RUN_OPTIONS = ['interventions', 'ablate', 'mask', 'scale', 'captureQK', 'topK'];
export const GENERATE_OPTIONS = ['maxTokens', 'temperature', 'topK', 'seed'];
const WEIGHTS = table({ auto: 'auto', f32: 'f32', half: 'half' });
const LOAD_OPTIONS = ['onProgress', 'wasm', 'threads', 'wasmMT', 'wasmRelaxed', 'wasmRelaxedMT', 'backend', 'threadWorker', 'signal',
  'timeoutMs', 'redirects', 'weights'];

/** loadModel's options, checked here as far as they are not the reader's (sources.js) or the builds' (core/instance.js). */
export function checkLoadOptions(options) {
  const o = { ...checkOptions('loadModel', options, LOAD_OPTIONS) };
  o.weights = o.weights === undefined ? 'auto' : o.weights;
  if (typeof o.weights !== 'string' || lookup(WEIGHTS, o.weights) === undefined)
    throw new AttnlabError(typeof o.weights === 'string' ? 'EINVAL' : 'ETYPE', "options.weights must be 'auto', 'f32' or 'half'");
  if (o.onProgress !== undefined && o.onProgress !== null && typeof o.onProgress !== 'function')
    throw new AttnlabError('ETYPE', 'options.onProgress must be a function');
  return o;
}

/** run's options (checked by checkOptions against RUN_OPTIONS) for a run of T tokens, as the forward pass takes them. */
export function parseRunOptions(o, cfg, T) {
  const { nLayer: L, nHead: H, vocabSize: V } = cfg;
  const interventions = parseInterventions(o.interventions, o.ablate, cfg, T);
  const mask = parseMask(o.mask, L);
  const scale = o.scale === undefined || o.scale === null ? null : checkMagnitude('scale', o.scale, MAX_SCALE);
  let capture = null;
  if (o.captureQK !== undefined && o.captureQK !== null) {
    const c = checkObject('captureQK', o.captureQK, ['layer', 'head']);
    capture = { layer: checkIndex('captureQK.layer', c.layer, 0, L - 1),
                head: checkIndex('captureQK.head', c.head, 0, H - 1) };
  }
  const topK = o.topK === undefined ? 10 : Math.min(checkIndex('topK', o.topK, 0, INT_MAX), V);
  return { interventions, mask, scale, capture, topK };
}

/** generate's options (checked against GENERATE_OPTIONS): {maxNew, temperature, topK, seed (a BigInt)}. */
export function parseGenerateOptions(o) {
  const maxNew = o.maxTokens === undefined ? 20 : checkIndex('maxTokens', o.maxTokens, 0, INT_MAX);
  const temperature = o.temperature === undefined ? 0 : checkFinite('temperature', o.temperature);
  if (temperature < 0 || temperature > C.MAX_TEMPERATURE)
    throw new AttnlabError('ERANGE', `temperature must be in [0, ${C.MAX_TEMPERATURE}], got ${temperature}`);
  const topK = o.topK === undefined ? 0 : checkIndex('topK', o.topK, 0, INT_MAX);
  let seed = 0n;
  if (typeof o.seed === 'bigint') {
    if (o.seed < 0n || o.seed >= 2n ** 64n) throw new AttnlabError('ERANGE', 'seed must be in [0, 2^64)');
    seed = o.seed;
  } else if (o.seed !== undefined) {
    seed = BigInt(checkIndex('seed', o.seed, 0, Number.MAX_SAFE_INTEGER));
  }
  return { maxNew, temperature, topK, seed };
}

// ---- the options every measure shares ----

/** onProgress and signal of a stepwise measure, checked. */
export function progressOptions(where, o) {
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function')
    throw new AttnlabError('ETYPE', `${where}: options.onProgress must be a function`);
  if (o.signal !== undefined && (o.signal === null || typeof o.signal !== 'object' || typeof readField(`${where}: options.signal`, o.signal, 'aborted') !== 'boolean'))
    throw new AttnlabError('ETYPE', `${where}: options.signal must be an AbortSignal`);
  return { onProgress: o.onProgress, signal: o.signal };
}

/** The knockout option ('renorm' by default, or 'zero'). */
export function knockoutMode(where, m) {
  if (m === undefined) return 'renorm';
  if (m !== 'renorm' && m !== 'zero')
    throw new AttnlabError(typeof m === 'string' ? 'EINVAL' : 'ETYPE', `${where}: options.knockout must be 'renorm' or 'zero', not ${show(m)}`);
  return m;
}

/** The defaults of every measure over a set: resamples, permutations, interval level, seed, noise-floor factor. */
export const SET_DEFAULTS = Object.freeze({ nBoot: 1000, nPerm: 1000, level: 0.95, seed: 1, noiseFactor: 10 });

/** nBoot, nPerm, seed and level of a measure over a set (left out when not given: the defaults of SET_DEFAULTS). */
export function setStats(where, o) {
  const count = (name, v) => (v === undefined ? undefined : checkIndex(name, v, 0, 1000000));
  const r = { nBoot: count('nBoot', o.nBoot), nPerm: count('nPerm', o.nPerm),
              seed: o.seed === undefined ? undefined : checkIndex('seed', o.seed, 0, 0xffffffff), level: o.level };
  if (o.level !== undefined && !(typeof o.level === 'number' && o.level > 0 && o.level < 1))
    throw new AttnlabError('ERANGE', `${where}: options.level must be in (0, 1)`);
  for (const k of Object.keys(r)) if (r[k] === undefined) delete r[k];
  return r;
}
