// backend.js — which of attnlab's two kernel builds this engine can run.
//
//   'simd128'       attnlab.wasm, attnlab-mt.wasm: wasm SIMD128 (emcc, clang 14), runs everywhere
//                   attnlab runs (Safari included)
//   'relaxed-simd'  attnlab-relaxed.wasm, attnlab-relaxed-mt.wasm: the same C with -mrelaxed-simd
//                   (clang-19): every multiply-add of the kernels is f32x4.relaxed_madd (c/src/simd.h),
//                   fused where the CPU has FMA. Chromium runs it (since 114); Safari, and Node 20
//                   without --experimental-wasm-relaxed-simd, refuse to compile any module that
//                   holds a relaxed instruction.
//
// The test is WebAssembly.validate of RELAXED_PROBE, the smallest module with one relaxed
// instruction, so a browser that refuses it never downloads the relaxed build. Its bytes:
//
//   00 61 73 6d  01 00 00 00      "\0asm", version 1
//   01 08 01                      type section, 8 bytes, 1 type:
//     60 03 7b 7b 7b 01 7b          func (v128, v128, v128) -> v128
//   03 02 01 00                   function section, 2 bytes, 1 function of type 0
//   0a 0d 01                      code section, 13 bytes, 1 body:
//     0b 00                         11 bytes, no locals
//     20 00  20 01  20 02           local.get 0, local.get 1, local.get 2
//     fd 85 02                      f32x4.relaxed_madd (prefix 0xfd, opcode 0x105 as LEB128)
//     0b                            end
//
// (tests/js/relaxed.test.js checks that the same module with f32x4.mul + f32x4.add in place of
// the relaxed instruction validates everywhere, so a false here means "no relaxed SIMD", not
// "malformed bytes".)

/** The one-instruction relaxed-SIMD module of the feature test. */
export const RELAXED_PROBE = Object.freeze([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,
  0x03, 0x02, 0x01, 0x00,
  0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02, 0x0b,
]);

/** The backends, by the name model.engine.backend reports and loadModel's {backend} takes. */
export const BACKENDS = Object.freeze(['relaxed-simd', 'simd128']);

/** The file names of each backend's builds: [one thread, multithreaded]. */
export const BUILDS = Object.freeze({
  'relaxed-simd': Object.freeze(['attnlab-relaxed.wasm', 'attnlab-relaxed-mt.wasm']),
  simd128: Object.freeze(['attnlab.wasm', 'attnlab-mt.wasm']),
});

/** Whether this engine compiles relaxed-SIMD modules (WebAssembly.validate of RELAXED_PROBE; asked each time). */
export function relaxedSimdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(new Uint8Array(RELAXED_PROBE)) === true;
  } catch {
    return false;
  }
}

/** The backend 'auto' chooses here: 'relaxed-simd' where it validates, else 'simd128'. */
export function autoBackend() {
  return relaxedSimdSupported() ? 'relaxed-simd' : 'simd128';
}

/** The backend of a compiled instance, from the module itself (alab_wasm_simd: 2 relaxed, 1 SIMD128, 0 scalar). */
export function backendOfLevel(level) {
  return level === 2 ? 'relaxed-simd' : level === 1 ? 'simd128' : 'scalar';
}
