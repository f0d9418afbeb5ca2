// abi.test.js — the C↔JS boundary has one source. web/src/core/abi.js is
// generated from the C (scripts/gen-abi.mjs: attnlab.h, parallel.h, errors.c,
// wasm_api.c, wasm_exports.json, attention.c's IV_KINDS) and committed; this test regenerates it and
// fails when the two disagree: a constant, an error code, a config or
// intervention field or an export changed on one side only. The generator is
// fed modified C text to show that each such change is seen; the built
// modules are checked against the export list, and every export the JS calls
// against it too.
//
// Needs web/dist/attnlab.wasm and web/dist/attnlab-mt.wasm (make wasm).

import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateAbi, generateMeasureExports, exportNames, readSources } from '../../scripts/gen-abi.mjs';
import * as abi from '../../web/src/core/abi.js';
import * as wasmJs from '../../web/src/core/wasm.js';
import { C_ERROR_CODES, ERROR_CODES } from '../../web/src/core/errors.js';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sources = readSources(ROOT);
const committed = readFileSync(join(ROOT, 'web/src/core/abi.js'), 'utf8');
const committedMeasures = readFileSync(join(ROOT, 'web/src/core/measure-exports.js'), 'utf8');

// The generator's output for the sources with `from` replaced by `to` in one of them.
function withEdit(key, from, to) {
  expect(sources[key], `${key} should contain ${from}`).toContain(from);
  return generateAbi({ ...sources, [key]: sources[key].replace(from, to) });
}

describe('web/src/core/abi.js', () => {
  it('is exactly what scripts/gen-abi.mjs makes of the C sources (run `make wasm` if not)', () => {
    expect(generateAbi(sources)).toBe(committed);
  });

  it('goes stale when a constant changes in attnlab.h only', () => {
    const text = withEdit('header', 'ALAB_DO_SOFT = 1', 'ALAB_DO_SOFT = 7');
    expect(text).not.toBe(committed);
    expect(text).toContain('DO_SOFT: 7');
    expect(text).toMatch(/soft: 7/);
    expect(withEdit('header', '#define ALAB_MAX_TEXT_BYTES (1u << 20)', '#define ALAB_MAX_TEXT_BYTES (1u << 21)'))
      .toContain('MAX_TEXT_BYTES: 2097152');
    // hexadecimal constants too (0x1ffu)
    expect(withEdit('header', '#define ALAB_MAX_TEXT_BYTES (1u << 20)', '#define ALAB_MAX_TEXT_BYTES (0x1ffu)'))
      .toContain('MAX_TEXT_BYTES: 511');
  });

  it('goes stale when an error code or its message changes in C only', () => {
    expect(withEdit('header', 'ALAB_EMASKED = -19', 'ALAB_EMASKED = -20')).toContain('EMASKED: Object.freeze({ rc: -20');
    expect(withEdit('errorsC', '"soft do on a masked cell"', '"masked"')).toContain('EMASKED: Object.freeze({ rc: -19, message: "masked" })');
  });

  it('goes stale when wasm_api.c reorders the config or intervention fields', () => {
    const cfg = withEdit('wasmApiC', 'case 0: return c->n_layer;\n    case 1: return c->n_head;',
      'case 1: return c->n_layer;\n    case 0: return c->n_head;');
    expect(cfg).toContain('CONFIG_FIELDS = Object.freeze(["n_head", "n_layer",');
    const iv = withEdit('wasmApiC', 'enum { IV_KIND, IV_LAYER,', 'enum { IV_LAYER, IV_KIND,');
    expect(iv).toContain('INTERVENTION_FIELDS = Object.freeze(["layer", "kind",');
  });

  it('goes stale when a row of IV_KINDS in attention.c changes, and refuses a kind without a row', () => {
    expect(withEdit('interventionsC', '{ALAB_SWAP_QK, "swapQK",', '{ALAB_SWAP_QK, "swapQandK",')).toContain('  swapQandK: 5,');
    expect(withEdit('interventionsC', '{ALAB_SCALE_K, "scaleK", IV_ON_WEIGHTS, IV_PARAM_ALPHA}', '{ALAB_SCALE_K, "scaleK", IV_ON_WEIGHTS, IV_PARAM_NONE}'))
      .toContain('scaleK: Object.freeze({ on: "weights", param: "none" })');
    expect(() => withEdit('interventionsC', '{ALAB_ABLATE, "ablate", IV_ON_HEAD_OUT, IV_PARAM_NONE},', ''))
      .toThrow(/ALAB_ABLATE has no row in IV_KINDS/);
    expect(abi.INTERVENTION_SHAPES.soft).toEqual({ on: 'cell', param: 'lambda' });
  });

  it('goes stale when the export list changes', () => {
    const text = withEdit('exportsJson', '"_alab_glyph",', '');
    expect(text).not.toBe(committed);
    expect(text).not.toContain('"alab_glyph"');
  });

  it('refuses a boundary it cannot map instead of guessing', () => {
    expect(() => withEdit('exportsJson', '"_alab_glyph"', '"_alab_glyf"')).toThrow(/alab_glyf, which neither/);
    expect(() => withEdit('header', 'ALAB_LIN_QUADRATIC = 2', 'ALAB_LIN_QUADRATIC = 2, ALAB_LIN_CHUNKED = 3'))
      .toThrow(/ALAB_LIN_CHUNKED has no JS name/);
    expect(() => withEdit('header', 'ALAB_EMASKED = -19', 'ALAB_EMASKED = -19, ALAB_ENEW = -20'))
      .toThrow(/no alab_strerror message for ALAB_ENEW/);
    expect(() => withEdit('wasmApiC', 'EMSCRIPTEN_KEEPALIVE int alab_wasm_simd(void)', 'EMSCRIPTEN_KEEPALIVE int alab_wasm_simd2(void)'))
      .toThrow(/alab_wasm_simd, which neither/);
    expect(() => withEdit('wasmApiC', 'case 7: return c->head_dim;', 'case 9: return c->head_dim;'))
      .toThrow(/without gaps/);
  });
});

describe('web/src/core/measure-exports.js: a method for every ALAB_MEASURE function', () => {
  it('is exactly what scripts/gen-abi.mjs makes of the C sources (run `make wasm` if not)', () => {
    expect(generateMeasureExports(sources)).toBe(committedMeasures);
  });

  it('a function marked ALAB_MEASURE in attnlab.h is exported and gets its method, with nothing else edited', () => {
    const decl = '\n/* A new measure: its numbers into out. */\nALAB_MEASURE int alab_new_measure(float *out, alab_model *m, const int *ids, int T,\n' +
      '                                   uint32_t seed, double *null);\n';
    const header = sources.header.replace('#endif /* ATTNLAB_H */', `${decl}#endif /* ATTNLAB_H */`);
    expect(header).not.toBe(sources.header);
    const edited = { ...sources, header };
    expect(exportNames(edited)).toContain('alab_new_measure');
    expect(generateAbi(edited)).toContain('"alab_new_measure"');
    const text = generateMeasureExports(edited);
    expect(text).toContain('  /** alab_new_measure (attnlab.h): A new measure: its numbers into out. */\n' +
      '  newMeasure(out, m, ids, T, seed, null_) {\n' +
      '    return this.check(this.fn.alab_new_measure(out, m, ids, T, seed >>> 0, null_));\n  },');
    // not marked: neither exported nor bound
    const plain = { ...sources, header: header.replace('ALAB_MEASURE int alab_new_measure', 'int alab_new_measure') };
    expect(exportNames(plain)).not.toContain('alab_new_measure');
    expect(generateMeasureExports(plain)).not.toContain('newMeasure');
  });

  it('refuses a measure listed in wasm_exports.json too, or one that does not return a code', () => {
    expect(() => withEdit('exportsJson', '"_alab_glyph",', '"_alab_glyph", "_alab_spearman",')).toThrow(/alab_spearman, which is ALAB_MEASURE/);
    expect(() => generateMeasureExports({ ...sources,
      header: sources.header.replace('ALAB_MEASURE int alab_spearman(', 'ALAB_MEASURE double alab_spearman(') })).toThrow(/returns double, not int/);
  });

  it('every measure export is bound, and the built modules export them', async () => {
    const { MEASURE_METHODS } = await import('../../web/src/core/measure-exports.js');
    const bound = Object.values(MEASURE_METHODS).map((f) => /this\.fn\.(\w+)\(/.exec(String(f))[1]);
    expect(bound.length).toBeGreaterThanOrEqual(23);
    expect(bound.filter((n) => !abi.EXPORTS.includes(n))).toEqual([]);
    expect(JSON.parse(sources.exportsJson).filter((n) => bound.includes(n.slice(1)))).toEqual([]);
  });
});

describe('the JS layer reads the boundary from abi.js', () => {
  it('wasm.js and errors.js give the generated values', () => {
    for (const k of ['DO_HARD', 'DO_SOFT', 'ABLATE', 'SCALE_Q', 'SCALE_K', 'SWAP_QK', 'MASK_CAUSAL', 'MASK_FULL', 'MASK_WINDOW', 'ALL_HEADS'])
      expect(wasmJs[k], k).toBe(abi.C[k]);
    expect(wasmJs.CONFIG_FIELDS).toBe(abi.CONFIG_FIELDS);
    expect(wasmJs.KERNELS).toBe(abi.KERNELS);
    expect(wasmJs.LINATTN_FORMS).toBe(abi.LINATTN_FORMS);
    for (const [code, e] of Object.entries(abi.C_ERRORS)) expect(C_ERROR_CODES[e.rc]).toBe(code);
    expect(ERROR_CODES.slice(0, Object.keys(abi.C_ERRORS).length)).toEqual(Object.keys(abi.C_ERRORS));
  });

  it('every export the JS calls (fn.NAME) is in the export list', () => {
    const files = [];
    const walk = (d) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.js')) files.push(p);
      }
    };
    walk(join(ROOT, 'web/src'));
    const called = new Set();
    for (const f of files) for (const m of readFileSync(f, 'utf8').matchAll(/\bfn\.(\w+)\(/g)) called.add(m[1]);
    expect(called.size).toBeGreaterThan(40);
    expect([...called].filter((n) => !abi.EXPORTS.includes(n))).toEqual([]);
  });
});

describe('the built modules', () => {
  for (const file of ['attnlab.wasm', 'attnlab-mt.wasm']) {
    it(`${file} exports exactly the list's functions`, async () => {
      const mod = await WebAssembly.compile(readFileSync(join(ROOT, 'web/dist', file)));
      const names = WebAssembly.Module.exports(mod).map((e) => e.name);
      expect(abi.EXPORTS.filter((n) => !names.includes(n))).toEqual([]);
      expect(names.filter((n) => n.startsWith('alab_') && !abi.EXPORTS.includes(n))).toEqual([]);
    });
  }

  it('alab_strerror names each code as abi.js does, and the kernel numbering is that of wasm_api.c', async () => {
    const w = await instantiateAttnlab(new Uint8Array(readFileSync(join(ROOT, 'web/dist/attnlab.wasm'))));
    for (const e of Object.values(abi.C_ERRORS)) expect(w.strerror(e.rc)).toBe(e.message);
    for (const op of Object.values(abi.KERNELS)) expect(w.fn.alab_wasm_kernel(op, 0, 0, 0, 0, 0, 0, 0, 0)).toBe(0);
    expect(w.fn.alab_wasm_kernel(Object.keys(abi.KERNELS).length, 0, 0, 0, 0, 0, 0, 0, 0)).toBe(abi.C.EINVAL);
  });
});
