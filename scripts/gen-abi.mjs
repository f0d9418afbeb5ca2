// gen-abi.mjs — writes web/src/core/abi.js, everything the JS layer knows about
// the C side of the wasm boundary, from the C sources that define it:
//
//   c/include/attnlab.h      constants (enums, numeric #defines), error codes,
//                            the return types of the functions it declares
//   c/src/parallel.h         ALAB_MAX_THREADS
//   c/src/errors.c           each error code's alab_strerror message
//   c/src/wasm_api.c         the config fields (alab_wasm_config_get's cases),
//                            the intervention layout (IV_*), the kernels
//                            (KERNEL_*), its EMSCRIPTEN_KEEPALIVE functions
//   c/src/wasm_exports.json  the exports that are not measures (libc's malloc
//                            and free, the model, the tokenizer, the figures)
//
// and web/src/core/measure-exports.js, a method of AttnlabWasm for every
// function marked ALAB_MEASURE (attnlab.h, wasm_api.c), which every build also
// exports: a measure is declared once, in C, and no list names it again.
//
//   node scripts/gen-abi.mjs             write abi.js and measure-exports.js (make wasm runs it first)
//   node scripts/gen-abi.mjs --check     exit 1 if either committed file differs
//   node scripts/gen-abi.mjs --exports F write the builds' export list (both kinds) to F, for emcc and wasm-ld
//
// It throws instead of guessing: an export that no C file declares, a
// KEEPALIVE function missing from the export list, an error code without a
// message, a C enum member without a JS name (JS_NAMES below), a #define it
// cannot evaluate. tests/js/abi.test.js runs generateAbi on the sources and
// fails while the committed file is stale.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const OUT = 'web/src/core/abi.js';
export const MEASURE_OUT = 'web/src/core/measure-exports.js';
export const SOURCES = Object.freeze({
  header: 'c/include/attnlab.h',
  parallelHeader: 'c/src/parallel.h',
  errorsC: 'c/src/errors.c',
  wasmApiC: 'c/src/wasm_api.c',
  exportsJson: 'c/src/wasm_exports.json',
  interventionsC: 'c/src/interventions.c',
});

// The JS API's names for the members of some C enums (string options of the
// friendly layer). The one place where a JS spelling differs from C's: 'prefix'
// is ALAB_LIN_ASSOC (causal: prefix sums), 'async' ALAB_HOPFIELD_ASYNC_RANDOM.
// Every member of each enum must be named here (checked), so a new C member
// cannot go unnoticed.
export const JS_NAMES = Object.freeze({
  MASKS: { causal: 'MASK_CAUSAL', full: 'MASK_FULL', window: 'MASK_WINDOW' },
  WEIGHTS: { auto: 'WEIGHTS_AUTO', f32: 'WEIGHTS_F32', half: 'WEIGHTS_HALF' },
  HOPFIELD_MODES: { sync: 'HOPFIELD_SYNC', async: 'HOPFIELD_ASYNC_RANDOM', sequential: 'HOPFIELD_ASYNC_SEQ' },
  FEATURE_MAPS: { elu: 'FEATURE_ELU1', relu: 'FEATURE_RELU', favor: 'FEATURE_FAVOR' },
  LINATTN_FORMS: { prefix: 'LIN_ASSOC', rnn: 'LIN_RNN', quadratic: 'LIN_QUADRATIC' },
  ABLATION_MODES: { zero: 'ABLATE_ZERO', mean: 'ABLATE_MEAN', resample: 'ABLATE_RESAMPLE' },
});

// libc's, exported for the JS side to allocate: (name, returns a pointer)
const LIBC = { malloc: true, free: false };

/** Source text without comments (string and character literals kept). */
export function stripComments(src) {
  return src.replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g,
    (m) => (m[0] === '/' ? (m[1] === '*' ? m.replace(/[^\n]/g, ' ') : '') : m));
}

/** The value of a C constant expression of the kinds attnlab.h uses: 96, (-1), (1u << 20), 1e30f, (16ull << 30). */
function evalC(expr, name) {
  let e = expr.trim();
  if (/^"[^"]*"$/.test(e)) return e.slice(1, -1);
  e = e.replace(/\b0x([0-9a-f]+)(?:ull|ul|ll|u|l)?\b/gi, (_, h) => String(parseInt(h, 16)));
  e = e.replace(/(\d+(?:\.\d*)?(?:e[+-]?\d+)?)(?:ull|ul|ll|u|l|f)\b/gi, '$1');
  e = e.replace(/(\d+)\s*<<\s*(\d+)/g, '($1 * 2 ** $2)');
  if (!/^[\d\s()+\-*.e]+$/i.test(e)) throw new Error(`gen-abi: cannot evaluate ${name} = ${expr}`);
  const v = Function(`"use strict"; return (${e});`)();
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`gen-abi: ${name} = ${expr} is not a finite number`);
  return v;
}

/** Enums of src as [{names: [...], values: {NAME: n}}], members that start with prefix. */
export function parseEnums(src, prefix) {
  const out = [];
  for (const m of stripComments(src).matchAll(/\benum\s*\{([^}]*)\}/g)) {
    const block = { names: [], values: {} };
    let next = 0;
    for (const item of m[1].split(',').map((s) => s.trim()).filter(Boolean)) {
      const [, name, expr] = item.match(/^(\w+)\s*(?:=\s*(.+))?$/s) ?? [];
      if (!name) throw new Error(`gen-abi: cannot read the enum member "${item}"`);
      const v = expr === undefined ? next : evalC(expr, name);
      next = v + 1;
      if (name.startsWith(prefix)) {
        block.names.push(name);
        block.values[name] = v;
      }
    }
    if (block.names.length) out.push(block);
  }
  return out;
}

/** Numeric and string #defines of src whose names start with prefix: {NAME: value}. */
export function parseDefines(src, prefix) {
  const out = {};
  for (const m of stripComments(src).matchAll(/^[ \t]*#define[ \t]+(\w+)[ \t]+(.+?)[ \t]*$/gm))
    if (m[1].startsWith(prefix)) out[m[1]] = evalC(m[2], m[1]);
  return out;
}

/** Return types of the functions src declares or defines, {name: 'const char *'}; keepalive: only EMSCRIPTEN_KEEPALIVE ones. */
export function parseFunctions(src, { keepalive = false } = {}) {
  const out = {};
  const re = keepalive
    ? /EMSCRIPTEN_KEEPALIVE\s+([A-Za-z_][\w\s*]*?)\s*\b(alab_\w+)\s*\(/g
    : /(?:^|[;{}])\s*([A-Za-z_][\w\s*]*?)\s*\b(alab_\w+)\s*\(/gm;
  for (const m of stripComments(src).matchAll(re)) {
    const type = m[1].replace(/\bALAB_MEASURE\b/g, ' ').replace(/\s+/g, ' ').trim();
    if (!type || /\b(return|typedef)\b/.test(type)) continue;
    out[m[2]] = type;
  }
  return out;
}

function isUnsigned(type) {
  return type.includes('*') || /\b(size_t|uint32_t)\b/.test(type);
}

/** The text of abi.js from the sources' texts (the keys of SOURCES). */
export function generateAbi({ header, parallelHeader, errorsC, wasmApiC, exportsJson, interventionsC }) {
  // ---- constants of attnlab.h (and the thread limit of parallel.h) ----
  const enums = parseEnums(header, 'ALAB_');
  const C = {};
  for (const b of enums) Object.assign(C, b.values);
  Object.assign(C, parseDefines(header, 'ALAB_'));
  const par = parseDefines(parallelHeader, 'ALAB_MAX_THREADS');
  if (par.ALAB_MAX_THREADS === undefined) throw new Error('gen-abi: parallel.h has no ALAB_MAX_THREADS');
  C.ALAB_MAX_THREADS = par.ALAB_MAX_THREADS;
  const consts = Object.fromEntries(Object.entries(C).map(([k, v]) => [k.slice(5), v]));

  // ---- error codes and their alab_strerror messages ----
  const messages = {};
  for (const m of stripComments(errorsC).matchAll(/case\s+(ALAB_\w+)\s*:\s*return\s+"((?:\\.|[^"\\])*)"\s*;/g))
    messages[m[1]] = m[2];
  const errors = {};
  for (const [name, rc] of Object.entries(C)) {
    if (!/^ALAB_E[A-Z]+$/.test(name) || typeof rc !== 'number' || rc >= 0) continue;
    if (messages[name] === undefined) throw new Error(`gen-abi: c/src/errors.c has no alab_strerror message for ${name}`);
    errors[name.slice(5)] = { rc, message: messages[name] };
  }
  for (const name of Object.keys(messages))
    if (!(name in C)) throw new Error(`gen-abi: c/src/errors.c names ${name}, which attnlab.h does not define`);
  if (!Object.keys(errors).length) throw new Error('gen-abi: no ALAB_E* error codes in attnlab.h');

  // ---- JS names of C enums ----
  const named = {};
  for (const [group, map] of Object.entries(JS_NAMES)) {
    const block = enums.find((b) => b.names.includes(`ALAB_${Object.values(map)[0]}`));
    if (!block) throw new Error(`gen-abi: ${group}: attnlab.h has no enum with ALAB_${Object.values(map)[0]}`);
    for (const cname of Object.values(map))
      if (!block.names.includes(`ALAB_${cname}`)) throw new Error(`gen-abi: ${group}: ALAB_${cname} is not in the enum of ALAB_${Object.values(map)[0]}`);
    for (const cname of block.names)
      if (!Object.values(map).includes(cname.slice(5)))
        throw new Error(`gen-abi: ${cname} has no JS name: add it to JS_NAMES.${group} in scripts/gen-abi.mjs`);
    named[group] = Object.fromEntries(Object.entries(map).map(([js, cname]) => [js, C[`ALAB_${cname}`]]));
  }

  // ---- intervention kinds: their JS names and what they act on, from interventions.c's IV_KINDS ----
  const { kinds, shapes } = interventionKinds(interventionsC, enums, C);
  named.INTERVENTION_KINDS = kinds;

  // ---- the layouts of wasm_api.c ----
  const api = stripComments(wasmApiC);
  const cfgBody = api.match(/alab_wasm_config_get\s*\([^)]*\)\s*\{([\s\S]*?)\n\}/);
  if (!cfgBody) throw new Error('gen-abi: c/src/wasm_api.c has no alab_wasm_config_get');
  const configFields = [];
  for (const m of cfgBody[1].matchAll(/case\s+(\d+)\s*:\s*return\s+c->(\w+)\s*;/g)) configFields[Number(m[1])] = m[2];
  const cfgStruct = stripComments(header).match(/typedef\s+struct\s*\{([^}]*)\}\s*alab_config\s*;/);
  if (!configFields.length || configFields.includes(undefined) || configFields.length !== [...configFields].filter(Boolean).length)
    throw new Error('gen-abi: alab_wasm_config_get must number its fields 0, 1, 2, ... without gaps');
  for (const f of configFields)
    if (!cfgStruct || !new RegExp(`\\b${f}\\b`).test(cfgStruct[1])) throw new Error(`gen-abi: alab_config has no field ${f}`);

  const ivBlock = parseEnums(wasmApiC, 'IV_')[0];
  if (!ivBlock || ivBlock.names.at(-1) !== 'IV_FLOATS') throw new Error('gen-abi: wasm_api.c needs enum { IV_..., IV_FLOATS }');
  const ivFields = ivBlock.names.slice(0, -1).map((n) => n.slice(3).toLowerCase());
  ivBlock.names.forEach((n, i) => { if (ivBlock.values[n] !== i) throw new Error(`gen-abi: ${n} must be ${i}`); });
  const ivStruct = stripComments(header).match(/typedef\s+struct\s*\{([^}]*)\}\s*alab_intervention\s*;/);
  for (const f of ivFields)
    if (!ivStruct || !new RegExp(`\\b${f}\\b`).test(ivStruct[1])) throw new Error(`gen-abi: alab_intervention has no field ${f}`);

  const kBlock = parseEnums(wasmApiC, 'KERNEL_')[0];
  if (!kBlock) throw new Error('gen-abi: wasm_api.c has no enum of KERNEL_*');
  const kernels = Object.fromEntries(kBlock.names.map((n) => [n.slice(7).toLowerCase(), kBlock.values[n]]));

  // ---- exports ----
  const names = exportNames({ header, wasmApiC, exportsJson });
  const kept = parseFunctions(wasmApiC, { keepalive: true });
  const types = { ...parseFunctions(header), ...kept };
  for (const n of names)
    if (!(n in LIBC) && !(n in types)) throw new Error(`gen-abi: wasm_exports.json lists ${n}, which neither attnlab.h nor wasm_api.c declares`);
  for (const n of Object.keys(kept))
    if (!names.includes(n)) throw new Error(`gen-abi: ${n} is EMSCRIPTEN_KEEPALIVE in wasm_api.c but not in wasm_exports.json`);
  const unsigned = names.filter((n) => (n in LIBC ? LIBC[n] : isUnsigned(types[n])));

  const j = (v) => JSON.stringify(v);
  const obj = (o, indent = '  ') => `Object.freeze({\n${Object.entries(o).map(([k, v]) => `${indent}${/^\w+$/.test(k) ? k : j(k)}: ${j(v)},`).join('\n')}\n})`;
  const wrapList = (arr) => {
    const lines = [];
    let line = '';
    for (const s of arr.map(j)) {
      if (line && line.length + s.length + 2 > 110) { lines.push(line.trimEnd()); line = ''; }
      line += `${s}, `;
    }
    if (line) lines.push(line.trimEnd());
    return `Object.freeze([\n${lines.map((l) => `  ${l}`).join('\n')}\n])`;
  };
  const errObj = `Object.freeze({\n${Object.entries(errors).map(([k, e]) => `  ${k}: Object.freeze({ rc: ${e.rc}, message: ${j(e.message)} }),`).join('\n')}\n})`;

  return `// abi.js — GENERATED by scripts/gen-abi.mjs: do not edit. Everything the JS layer
// knows about the C side of the wasm boundary, read from c/include/attnlab.h,
// c/src/parallel.h, c/src/errors.c, c/src/wasm_api.c, c/src/wasm_exports.json and c/src/interventions.c.
// Change those and run \`make wasm\` (or \`node scripts/gen-abi.mjs\`);
// tests/js/abi.test.js fails while this file is stale.

/** The integer and string constants of attnlab.h (enums and #defines), without ALAB_. */
export const C = ${obj(consts)};

/** The ALAB_E* codes: stable name -> {rc, message (alab_strerror)}. */
export const C_ERRORS = ${errObj};

/** The JS API's names for C enum members (scripts/gen-abi.mjs JS_NAMES; intervention kinds: IV_KINDS of interventions.c). */
${Object.entries(named).map(([g, m]) => `export const ${g} = ${obj(m)};`).join('\n')}

/** What each intervention kind acts on (cell, head_out, weights) and its parameter (none, lambda, alpha). */
export const INTERVENTION_SHAPES = Object.freeze({
${Object.entries(shapes).map(([k, s]) => `  ${k}: Object.freeze({ on: ${j(s.on)}, param: ${j(s.param)} }),`).join('\n')}
});

/** Fields of alab_wasm_config_get, in its numbering. */
export const CONFIG_FIELDS = ${j(configFields).replace(/,/g, ', ').replace(/^\[/, 'Object.freeze([').replace(/\]$/, '])')};

/** One intervention at the boundary (alab_wasm_forward): these floats, in this order. */
export const INTERVENTION_FIELDS = ${j(ivFields).replace(/,/g, ', ').replace(/^\[/, 'Object.freeze([').replace(/\]$/, '])')};

/** Kernels of alab_wasm_kernel, in its numbering. */
export const KERNELS = ${obj(kernels)};

/** Every export of attnlab.wasm and attnlab-mt.wasm: c/src/wasm_exports.json's, then the ALAB_MEASURE functions. */
export const EXPORTS = ${wrapList(names)};

/** The exports that return a pointer, a size_t or a uint32_t: read as unsigned. */
export const UNSIGNED_RESULTS = ${wrapList(unsigned)};
`;
}

/**
 * The functions marked ALAB_MEASURE in src (attnlab.h's declarations, wasm_api.c's definitions), in the order
 * they appear: {name, params: [{type, name}], doc} — doc is the first sentence of the comment right above the
 * declaration. Every one returns int (a checked code); a parameter's name is required.
 */
export function parseMeasures(src) {
  const out = [];
  const code = stripComments(src);
  for (const m of code.matchAll(/\bALAB_MEASURE\s+([A-Za-z_][\w\s*]*?)\s*\b(alab_\w+)\s*\(([^)]*)\)/g)) {
    const [, ret, name, list] = m;
    if (/^\s*#\s*define\b/.test(code.slice(code.lastIndexOf('\n', m.index) + 1, m.index))) continue;
    if (ret.replace(/\bEMSCRIPTEN_KEEPALIVE\b/, '').trim() !== 'int')
      throw new Error(`gen-abi: ${name} is ALAB_MEASURE but returns ${ret.trim()}, not int (a checked code)`);
    const params = list.split(',').map((p) => p.replace(/\s+/g, ' ').trim()).filter((p) => p && p !== 'void').map((p) => {
      const pm = p.match(/^(.*?)\b([A-Za-z_]\w*)$/);
      if (!pm || !pm[1].trim()) throw new Error(`gen-abi: ${name}: cannot read the parameter "${p}" (a type and a name)`);
      return { type: pm[1].replace(/\s+/g, ' ').trim(), name: pm[2] };
    });
    // the comment that ends right above the declaration (only blank space between), in the raw text
    const before = src.slice(0, m.index).replace(/(?:EMSCRIPTEN_KEEPALIVE\s*)$/, '');
    const c = before.match(/\/\*((?:(?!\*\/)[\s\S])*)\*\/\s*$/);
    const text = c ? c[1].split('\n').map((l, k) => (k ? l.replace(/^\s*\*(?!\w)\s?/, ' ') : l)).join(' ').replace(/\s+/g, ' ').trim() : '';
    const first = text.match(/^.*?(?<!\b(?:al|e\.g|i\.e|cf))[.;](?=\s|$)/);
    let doc = first ? first[0] : text;
    if (doc.length > 150) doc = `${doc.slice(0, doc.lastIndexOf(' ', 148))} …`;
    out.push({ name, params, doc });
  }
  return out;
}

/** The names every wasm build exports, without emcc's "_": wasm_exports.json's list, then the ALAB_MEASURE functions. */
export function exportNames({ header, wasmApiC, exportsJson }) {
  const list = JSON.parse(exportsJson);
  if (!Array.isArray(list) || list.some((n) => typeof n !== 'string' || !n.startsWith('_')))
    throw new Error('gen-abi: wasm_exports.json must be a list of names that start with "_"');
  const names = list.map((n) => n.slice(1));
  for (const f of [...parseMeasures(header), ...parseMeasures(wasmApiC)]) {
    if (names.includes(f.name)) throw new Error(`gen-abi: wasm_exports.json lists ${f.name}, which is ALAB_MEASURE (exported as such): remove it from the list`);
    names.push(f.name);
  }
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`gen-abi: ${dup} is exported twice`);
  return names;
}

// JS's reserved words a C parameter may be named (the generated method renames them with a trailing _).
const RESERVED = new Set(['null', 'true', 'false', 'new', 'delete', 'default', 'this', 'var', 'function', 'in', 'class',
  'case', 'do', 'for', 'if', 'return', 'switch', 'throw', 'try', 'void', 'while', 'with', 'const', 'let', 'enum']);
const camel = (s) => s.replace(/_+([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * The text of web/src/core/measure-exports.js: one method of AttnlabWasm per ALAB_MEASURE function, named by
 * its C name without alab_ in camelCase, taking its C parameters in order (wasm addresses and numbers) and
 * returning this.check of its code; a uint32_t parameter passes as `x >>> 0`.
 */
export function generateMeasureExports({ header, wasmApiC }) {
  const fns = [...parseMeasures(header).map((f) => ({ ...f, from: 'attnlab.h' })),
    ...parseMeasures(wasmApiC).map((f) => ({ ...f, from: 'wasm_api.c' }))];
  const methods = new Set();
  const body = fns.map((f) => {
    const method = camel(f.name.replace(/^alab_/, ''));
    if (methods.has(method)) throw new Error(`gen-abi: two ALAB_MEASURE functions make the method ${method}`);
    methods.add(method);
    const args = f.params.map((p) => { const n = camel(p.name); return RESERVED.has(n) ? `${n}_` : n; });
    const pass = f.params.map((p, k) => (/^(const )?uint32_t$/.test(p.type) ? `${args[k]} >>> 0` : args[k]));
    const doc = `${f.name} (${f.from})${f.doc ? `: ${f.doc}` : ''}`.replace(/\s+/g, ' ');
    return `  /** ${doc} */\n  ${method}(${args.join(', ')}) {\n    return this.check(this.fn.${f.name}(${pass.join(', ')}));\n  },`;
  });
  return `// measure-exports.js — GENERATED by scripts/gen-abi.mjs: do not edit. The methods of AttnlabWasm (wasm.js
// installs them) for every C function marked ALAB_MEASURE in c/include/attnlab.h and c/src/wasm_api.c: one
// method per export, named by the C name without alab_ in camelCase, in the C's argument order, each
// returning the checked return code (AttnlabError on a negative one, EWASM on a trap, as every export of this
// instance). Mark a new measure ALAB_MEASURE and \`make wasm\` exports it and writes its method here;
// tests/js/abi.test.js fails while this file is stale.
//
// These take and give wasm addresses: the measures (web/src/measures.js, evidence.js, circuits.js) keep their
// buffers across the parts of a stepwise computation and pass one run's output to the next call, so
// allocating, copying in and reading out stays theirs (w.malloc / w.scoped, w.readF32 …). No module outside
// core/ calls an export itself (tests/js/structure.test.js).

export const MEASURE_METHODS = {
${body.join('\n')}
};
`;
}

/**
 * The rows of IV_KINDS in interventions.c — {ALAB_<KIND>, "jsName", IV_ON_<CLASS>, IV_PARAM_<P>} — checked
 * against the enum of attnlab.h: every member has exactly one row.
 */
function interventionKinds(interventionsC, enums, C) {
  const table = stripComments(interventionsC).match(/IV_KINDS\s*\[\s*\]\s*=\s*\{([\s\S]*?)\n\};/);
  if (!table) throw new Error('gen-abi: c/src/interventions.c has no IV_KINDS table');
  const rows = [...table[1].matchAll(/\{\s*ALAB_(\w+)\s*,\s*"(\w+)"\s*,\s*IV_ON_(\w+)\s*,\s*IV_PARAM_(\w+)\s*\}/g)];
  if (!rows.length) throw new Error('gen-abi: IV_KINDS has no rows');
  const block = enums.find((b) => b.names.includes(`ALAB_${rows[0][1]}`));
  if (!block) throw new Error(`gen-abi: attnlab.h has no enum with ALAB_${rows[0][1]}`);
  const kinds = {}, shapes = {};
  for (const [, cname, js, on, param] of rows) {
    if (!block.names.includes(`ALAB_${cname}`)) throw new Error(`gen-abi: IV_KINDS row ALAB_${cname} is not in the enum of ALAB_${rows[0][1]}`);
    if (js in kinds) throw new Error(`gen-abi: IV_KINDS names ${js} twice`);
    kinds[js] = C[`ALAB_${cname}`];
    shapes[js] = { on: on.toLowerCase(), param: param.toLowerCase() };
  }
  for (const n of block.names)
    if (!rows.some((r) => `ALAB_${r[1]}` === n)) throw new Error(`gen-abi: ${n} has no row in IV_KINDS (c/src/interventions.c)`);
  return { kinds, shapes };
}

/** The sources' texts, read from the repository. */
export function readSources(root = ROOT) {
  return Object.fromEntries(Object.entries(SOURCES).map(([k, p]) => [k, readFileSync(join(root, p), 'utf8')]));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sources = readSources();
  const outputs = { [OUT]: generateAbi(sources), [MEASURE_OUT]: generateMeasureExports(sources) };
  const at = process.argv.indexOf('--exports');
  if (at > 0) {
    // the export list for emcc (-sEXPORTED_FUNCTIONS=@FILE) and wasm-ld: a build product, not committed
    writeFileSync(process.argv[at + 1], `${JSON.stringify(exportNames(sources).map((n) => `_${n}`), null, 1)}\n`);
  } else if (process.argv.includes('--check')) {
    for (const [file, text] of Object.entries(outputs)) {
      let old = '';
      try { old = readFileSync(join(ROOT, file), 'utf8'); } catch { /* missing: stale */ }
      if (old !== text) {
        console.error(`${file} is stale: run node scripts/gen-abi.mjs`);
        process.exit(1);
      }
    }
  } else {
    for (const [file, text] of Object.entries(outputs)) writeFileSync(join(ROOT, file), text);
  }
}
