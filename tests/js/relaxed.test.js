// relaxed.test.js — the relaxed-SIMD builds (issue 39): the feature test's module is what its
// comment says it is; the twins import and export exactly what the SIMD128 builds do (names,
// kinds and function signatures, read from the binaries, so the clang-19 link cannot drift from
// emcc's); loadModel's backend option picks, forces and reports the build; where relaxed SIMD
// runs, the relaxed numbers are within the golden tolerance of the SIMD128 ones and bit for bit
// the same on 1, 2 and 3 threads and in both of V8's compilers (Liftoff, TurboFan).
//
// Runs in both projects of `make test-js`: without --experimental-wasm-relaxed-simd (Node 20 then
// refuses relaxed modules: 'auto' must choose SIMD128) and with it (tests/js/vitest.relaxed.config.js).

import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { loadModel } from '../../web/src/index.js';
import { AttnlabError } from '../../web/src/core/errors.js';
import { RELAXED_PROBE, BUILDS, relaxedSimdSupported, autoBackend } from '../../web/src/core/backend.js';
import { BACKEND } from './helpers/builds.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, 'web/dist');
const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const FLAG = '--experimental-wasm-relaxed-simd';
const flagged = process.execArgv.includes(FLAG);
const golden = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/golden.json'), 'utf8'));

// ---- a reader of the sections that say what a module imports and exports --------------------

function reader(bytes, pos = 0) {
  const r = {
    pos,
    byte() { return bytes[r.pos++]; },
    u32() { let x = 0, s = 0, b; do { b = bytes[r.pos++]; x += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80); return x; },
    name() { const n = r.u32(); const s = Buffer.from(bytes.subarray(r.pos, r.pos + n)).toString('utf8'); r.pos += n; return s; },
    limits() { const f = r.u32(); const min = r.u32(); const max = f & 1 ? r.u32() : null; return { shared: !!(f & 2), min, max }; },
  };
  return r;
}
const VAL = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128', 0x70: 'funcref', 0x6f: 'externref' };

/** {imports: ['module.name func (i32 i32)->(i32)', ...], exports: [...], memory} of a wasm binary. */
function signatures(bytes) {
  const types = [], funcs = [], imports = [], exports = [], globals = [];
  let importedFuncs = 0, memory = null;
  const r = reader(bytes, 8);
  while (r.pos < bytes.length) {
    const id = r.byte(), size = r.u32(), end = r.pos + size;
    if (id === 1) {
      for (let n = r.u32(); n--;) {
        expect(r.byte()).toBe(0x60);
        const p = Array.from({ length: r.u32() }, () => VAL[r.byte()]);
        const q = Array.from({ length: r.u32() }, () => VAL[r.byte()]);
        types.push(`(${p.join(' ')})->(${q.join(' ')})`);
      }
    } else if (id === 2) {
      for (let n = r.u32(); n--;) {
        const mod = r.name(), name = r.name(), kind = r.byte();
        let desc;
        if (kind === 0) { desc = `func ${types[r.u32()]}`; importedFuncs++; funcs.push(null); } else if (kind === 1) { desc = `table ${VAL[r.byte()]}`; r.limits(); } else if (kind === 2) { memory = r.limits(); desc = `memory shared=${memory.shared} max=${memory.max}`; } else { desc = `global ${VAL[r.byte()]} mut=${r.byte()}`; }
        imports.push(`${mod}.${name} ${desc}`);
      }
    } else if (id === 3) {
      for (let n = r.u32(); n--;) funcs.push(r.u32());
    } else if (id === 5) {
      for (let n = r.u32(); n--;) memory = r.limits();
    } else if (id === 6) {
      // globals are read only for their types; their init expressions end at 0x0b
      for (let n = r.u32(); n--;) { globals.push(`${VAL[r.byte()]} mut=${r.byte()}`); while (r.byte() !== 0x0b); }
    } else if (id === 7) {
      for (let n = r.u32(); n--;) {
        const name = r.name(), kind = r.byte(), index = r.u32();
        const desc = kind === 0 ? `func ${types[funcs[index]] ?? `import ${index}`}` : ['func', 'table', 'memory', 'global'][kind];
        exports.push(`${name} ${desc}`);
      }
    }
    r.pos = end;
  }
  return { imports: imports.sort(), exports: exports.sort(), memory, importedFuncs };
}

const read = (f) => new Uint8Array(readFileSync(join(DIST, f)));

describe('the feature test', () => {
  it('is a valid module exactly where relaxed SIMD runs, and the same module without the relaxed instruction is valid everywhere', () => {
    const probe = new Uint8Array(RELAXED_PROBE);
    expect(WebAssembly.validate(probe)).toBe(flagged);
    expect(relaxedSimdSupported()).toBe(flagged);
    expect(autoBackend()).toBe(flagged ? 'relaxed-simd' : 'simd128');
    // the control: f32x4.mul, f32x4.add (fd e6 01, fd e4 01) where the probe has f32x4.relaxed_madd (fd 85 02);
    // the code section grows by 3 bytes (0d -> 10) and the body by 3 (0b -> 0e)
    const at = probe.indexOf(0x85) - 1;
    expect(Array.from(probe.subarray(at, at + 3))).toEqual([0xfd, 0x85, 0x02]);
    const control = new Uint8Array([...probe.subarray(0, at), 0xfd, 0xe6, 0x01, 0xfd, 0xe4, 0x01, 0x0b]);
    control[23] = 0x10; control[25] = 0x0e;
    expect(Array.from(control.subarray(22, 26))).toEqual([0x0a, 0x10, 0x01, 0x0e]);
    expect(WebAssembly.validate(control)).toBe(true);
  });

  it('decides whether the relaxed builds compile', () => {
    for (const f of BUILDS['relaxed-simd']) expect(WebAssembly.validate(read(f)), f).toBe(flagged);
    for (const f of BUILDS.simd128) expect(WebAssembly.validate(read(f)), f).toBe(true);
  });
});

describe('the relaxed twins', () => {
  it('import and export what the SIMD128 builds do: names, kinds, signatures, memory', () => {
    for (const i of [0, 1]) {
      const plain = signatures(read(BUILDS.simd128[i])), relaxed = signatures(read(BUILDS['relaxed-simd'][i]));
      expect(relaxed.imports, BUILDS['relaxed-simd'][i]).toEqual(plain.imports);
      expect(relaxed.exports, BUILDS['relaxed-simd'][i]).toEqual(plain.exports);
      expect(relaxed.memory).toEqual(plain.memory);
      expect(plain.exports.length).toBeGreaterThan(100);
    }
    // the mt builds import a shared 4 GB memory; the others own theirs
    expect(signatures(read('attnlab-relaxed-mt.wasm')).imports).toContain('env.memory memory shared=true max=65536');
  });

  it('hold relaxed_madd in their code (and the SIMD128 builds do not)', () => {
    // f32x4.relaxed_madd is fd 85 02; count it in the code section only
    const count = (bytes) => {
      const r = reader(bytes, 8);
      while (r.pos < bytes.length) {
        const id = r.byte(), size = r.u32();
        if (id === 10) {
          let n = 0;
          for (let i = r.pos; i < r.pos + size - 2; i++) if (bytes[i] === 0xfd && bytes[i + 1] === 0x85 && bytes[i + 2] === 0x02) n++;
          return n;
        }
        r.pos += size;
      }
      return 0;
    };
    for (const f of BUILDS['relaxed-simd']) expect(count(read(f)), f).toBeGreaterThan(50);
    for (const f of BUILDS.simd128) expect(count(read(f)), f).toBe(0);
  });
});

describe("loadModel's backend option", () => {
  it("'auto' runs the relaxed build where it validates, SIMD128 elsewhere, and says which", async () => {
    const m = await loadModel(undefined);
    try {
      expect(m.backend).toBe(BACKEND);
      expect(m.engine.backend).toBe(BACKEND);
      expect(m.engine.build).toBe(BUILDS[BACKEND][0]);
      if (flagged) expect(m.engine.backendNote).toBe(null);
      else expect(m.engine.backendNote).toMatch(/does not run relaxed SIMD/);
    } finally {
      m.dispose();
    }
  });

  it("'simd128' forces the SIMD128 build; 'relaxed-simd' the relaxed one, or EWASM where it cannot run", async () => {
    const p = await loadModel(undefined, { backend: 'simd128', threads: 2 });
    expect(p.engine).toMatchObject({ backend: 'simd128', build: 'attnlab-mt.wasm', threads: 2, backendNote: null });
    p.dispose();
    if (flagged) {
      const r = await loadModel(undefined, { backend: 'relaxed-simd', threads: 2 });
      expect(r.engine).toMatchObject({ backend: 'relaxed-simd', build: 'attnlab-relaxed-mt.wasm', threads: 2 });
      r.dispose();
    } else {
      const e = await loadModel(undefined, { backend: 'relaxed-simd' }).catch((x) => x);
      expect(e).toBeInstanceOf(AttnlabError);
      expect(e.code).toBe('EWASM');
      expect(e.message).toMatch(/--experimental-wasm-relaxed-simd/);
    }
  });

  it('refuses a backend that is not one', async () => {
    for (const [v, code] of [['relaxed', 'EINVAL'], ['avx2', 'EINVAL'], [2, 'ETYPE']]) {
      const e = await loadModel(undefined, { backend: v }).catch((x) => x);
      expect(e).toBeInstanceOf(AttnlabError);
      expect(e.code).toBe(code);
    }
  });

  it("'auto' keeps to SIMD128 when the caller moved attnlab.wasm but not its relaxed twin", async () => {
    const m = await loadModel(undefined, { wasm: join(DIST, 'attnlab.wasm') });
    try {
      expect(m.backend).toBe('simd128');
      expect(m.engine.backendNote).toMatch(flagged ? /options\.wasm was given without options\.wasmRelaxed/ : /relaxed SIMD/);
    } finally {
      m.dispose();
    }
  });

  it.runIf(flagged)("'auto' falls back to SIMD128, and says why, when the relaxed build cannot be had", async () => {
    const m = await loadModel(undefined, { wasmRelaxed: join(DIST, 'nope-relaxed.wasm') });
    try {
      expect(m.backend).toBe('simd128');
      expect(m.engine.backendNote).toMatch(/relaxed-SIMD build could not start \(EWASM/);
      expect(m.run(CHAPTER).top.length).toBeGreaterThan(0);
    } finally {
      m.dispose();
    }
  });
});

describe.runIf(flagged)('the relaxed numbers', () => {
  it('are within the golden tolerance of the SIMD128 ones, and bit for bit the same on 1, 2 and 3 threads', async () => {
    const plain = await loadModel(undefined, { backend: 'simd128' });
    const runs = [{}, { interventions: [{ kind: 'hard', layer: 5, head: 'all', row: 9, col: 2 }], captureQK: { layer: 2, head: 1 } }];
    const want = runs.map((o) => plain.run(CHAPTER, o));
    plain.dispose();
    let first = null;
    for (const threads of [1, 2, 3]) {
      const m = await loadModel(undefined, { backend: 'relaxed-simd', threads });
      const got = runs.map((o) => m.run(CHAPTER, o));
      m.dispose();
      const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
      if (!first) {
        first = got;
        for (let k = 0; k < runs.length; k++) {
          let da = 0, dl = 0;
          for (let i = 0; i < got[k].attentions.length; i++) da = Math.max(da, Math.abs(got[k].attentions[i] - want[k].attentions[i]));
          for (let i = 0; i < got[k].logits.length; i++) dl = Math.max(dl, Math.abs(got[k].logits[i] - want[k].logits[i]));
          console.log(`relaxed vs SIMD128, run ${k}: max |Δ attention| ${da.toExponential(2)}, max |Δ logit| ${dl.toExponential(2)}`);
          expect(da).toBeLessThanOrEqual(golden.tolerance.attentions_max_abs);
          expect(dl).toBeLessThanOrEqual(golden.tolerance.logits_max_abs);
        }
      } else {
        for (let k = 0; k < runs.length; k++) {
          expect(bits(got[k].attentions)).toEqual(bits(first[k].attentions));
          expect(bits(got[k].logits)).toEqual(bits(first[k].logits));
        }
      }
    }
  });
});

describe("V8's two compilers", () => {
  it('run relaxed_madd alike: the same bits with Liftoff only and TurboFan only, on 1 and 2 threads', () => {
    const run = (flags, threads) => JSON.parse(execFileSync(process.execPath,
      [FLAG, ...flags, join(ROOT, 'tests/js/helpers/relaxed-tier.mjs'), '--backend', 'relaxed-simd', '--threads', String(threads)],
      { encoding: 'utf8', timeout: 60_000 }).trim().split('\n').at(-1));
    const seen = [];
    for (const flags of [['--liftoff', '--no-wasm-tier-up'], ['--no-liftoff']])
      for (const threads of [1, 2]) seen.push(run(flags, threads));
    for (const s of seen) expect(s.backend).toBe('relaxed-simd');
    expect(seen.map((s) => s.threads)).toEqual([1, 2, 1, 2]);
    expect(new Set(seen.map((s) => s.digest)).size).toBe(1);
  });
});
