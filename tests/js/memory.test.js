// memory.test.js — memory stays bounded:
//   - 1,000 runs (varied lengths, interventions, masks, and failing runs in
//     between) leave the malloc heap in use (alab_wasm_heap_in_use) flat and
//     wasm memory (memory.buffer.byteLength) stops growing after warm-up;
//   - 50 load/dispose cycles: each dispose frees every byte the model
//     malloc'ed (the heap returns to a fresh instance's), every cycle looks
//     the same, and the disposed instances (and models dropped without
//     dispose) are garbage-collected (checked in a child `node --expose-gc`);
//   - a distilgpt2-sized checkpoint (build/bench/distilgpt2 when present,
//     else a synthetic one written here with the same config) loads without
//     holding the weights twice: wasm memory <= 1.15 × file + activations,
//     and no JS-side copy of the weights during the load.

import { describe, it, expect } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';
import { modelInternals } from '../../web/src/model.js';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { writeCheckpoint } from './helpers/checkpoint.js';
import { modelFiles } from './helpers/model-files.js';
import { WASM_PATH } from './helpers/builds.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');
const DISTIL = join(ROOT, 'build/bench/distilgpt2');
const CHAPTER = 'Because the storm intensified , the ship finally sank .';

const tinyFiles = () => modelFiles(TINY);

// Bytes of alab_ensure_activations (c/src/forward.c) for T tokens, each part 16-float aligned.
function activationBytes({ nLayer: L, nHead: NH, nEmbd: C, vocabSize: V, headSize: HS }, T) {
  const parts = [T * C, T * C, T * 3 * C, T * C, T * 4 * C, L * NH * T * T, T * HS, T * HS, C, V];
  return 4 * parts.reduce((s, n) => s + Math.ceil(n / 16) * 16, 0) + 64;
}

describe('1,000 runs', () => {
  it('leave the heap in use flat and stop growing wasm memory after warm-up', async () => {
    const m = await loadModel(TINY);
    const words = CHAPTER.split(' ');
    const texts = [CHAPTER, 'The', words.slice(0, 4).join(' '), `${CHAPTER} ${CHAPTER} ${CHAPTER}`.slice(0, 150)];
    const optsOf = (i) => [
      {},
      { interventions: [{ kind: 'hard', layer: i % 3, head: 'all', row: 0, col: 0 }], captureQK: { layer: 1, head: i % 4 } },
      { interventions: [{ kind: 'soft', layer: 1, head: 2, row: 0, col: 0, lambda: (i % 7) - 3 }], mask: 'window:3' },
      { ablate: [[i % 3, i % 4]], mask: ['causal', 'full', 'window:2'], scale: 0.1, topK: 50 },
    ][i % 4];
    const step = (i) => {
      const r = m.run(texts[i % texts.length], optsOf(i));
      if (i % 10 === 0) m.generate('The', { maxTokens: 3, temperature: 1, seed: i });
      if (i % 100 === 50) {
        try { m.run(new Array(65).fill(262)); } catch { /* ETOOLONG, tested in errors.test.js */ }
        try { m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 9, head: 0, row: 0, col: 0 }] }); } catch { /* ERANGE */ }
      }
      return r;
    };
    for (let i = 0; i < 20; i++) step(i); // warm-up: the activation block reaches the longest text
    const heap0 = m.memoryUsage().heapBytes;
    const wasm0 = m.memoryUsage().wasmBytes;
    const heaps = new Set();
    for (let i = 20; i < 1020; i++) {
      step(i);
      if (i % 4 === 3) heaps.add(m.memoryUsage().heapBytes); // after the longest text
    }
    expect([...heaps]).toEqual([heap0]);
    expect(m.memoryUsage().wasmBytes).toBe(wasm0);
    m.dispose();
  });
});

describe('50 load/dispose cycles', () => {
  it('each dispose frees every byte of its model, and every cycle uses the same memory', async () => {
    const fresh = await instantiateAttnlab(readFileSync(WASM_PATH));
    const baseline = fresh.heapInUse(); // a fresh instance's heap (static data only)
    const seen = [];
    for (let i = 0; i < 50; i++) {
      const m = await loadModel(i % 2 ? TINY : tinyFiles());
      m.run(CHAPTER, { captureQK: { layer: 1, head: 1 } });
      const { wasm } = modelInternals(m);
      seen.push(JSON.stringify(m.memoryUsage()));
      m.dispose();
      expect(wasm.heapInUse()).toBe(baseline);
    }
    expect(new Set(seen).size).toBe(1);
  });

  it('disposed models and models dropped without dispose are garbage-collected with their instances', () => {
    // A child process with --expose-gc: 50 cycles of a 17 MB checkpoint (each
    // instance ~40 MB of wasm memory), then 10 models never disposed.
    const script = `
      import { loadModel } from './web/src/index.js';
      import { modelInternals } from './web/src/model.js';
      import { checkpointBuffers } from './tests/js/helpers/checkpoint.js';
      const files = checkpointBuffers({ n_layer: 4, n_head: 4, n_embd: 256, n_positions: 64 });
      const refs = [];
      const settle = async () => { for (let i = 0; i < 3; i++) { await new Promise((r) => setTimeout(r, 10)); gc(); } };
      await settle();
      const rss0 = process.memoryUsage().rss;
      let rssMax = 0;
      // (each model lives in a function, so no variable of this scope keeps the last one)
      const cycle = async (dispose) => {
        const m = await loadModel(files);
        m.run('Because the storm intensified');
        refs.push(new WeakRef(modelInternals(m).wasm.memory));
        if (dispose) m.dispose();
      };
      for (let i = 0; i < 50; i++) {
        await cycle(true);
        if (i % 10 === 9) { await settle(); rssMax = Math.max(rssMax, process.memoryUsage().rss - rss0); }
      }
      for (let i = 0; i < 10; i++) await cycle(false);
      await settle();
      const alive = refs.filter((r) => r.deref() !== undefined).length;
      console.log(JSON.stringify({ alive, rssMax, rssEnd: process.memoryUsage().rss - rss0 }));
    `;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop());
    expect(out.alive).toBe(0);
    expect(out.rssMax).toBeLessThan(400 << 20); // 50 leaked instances would be ~2 GB
    expect(out.rssEnd).toBeLessThan(400 << 20);
  });
});

describe('a distilgpt2-sized checkpoint', () => {
  it('loads without holding the weights twice: wasm memory <= 1.15 × file + activations', async () => {
    let dir = DISTIL, tmp = null;
    if (process.env.ATTNLAB_SYNTHETIC === '1' || !existsSync(join(DISTIL, 'model.safetensors'))) {
      // The same config as distilgpt2 (L6 NH12 C768 P1024, GPT-2's vocabulary), pseudo-random F32 weights.
      tmp = mkdtempSync(join(tmpdir(), 'attnlab-distil-'));
      dir = tmp;
      await writeCheckpoint(tmp, { n_layer: 6, n_head: 12, n_embd: 768, n_positions: 1024 }, { tokenizer: 'gpt2' });
    }
    try {
      const fileBytes = statSync(join(dir, 'model.safetensors')).size;
      expect(fileBytes).toBeGreaterThan(300e6);
      const ab0 = process.memoryUsage().arrayBuffers;
      let jsPeak = 0;
      const m = await loadModel(dir, {
        onProgress: () => { jsPeak = Math.max(jsPeak, process.memoryUsage().arrayBuffers - ab0); },
      });
      try {
        expect(m.config).toMatchObject({ nLayer: 6, nHead: 12, nEmbd: 768, vocabSize: 50257, nPositions: 1024 });
        // No JS copy of the weights at any progress event (vocab.json is 1 MB; a read chunk 8 MB).
        expect(jsPeak).toBeLessThan(64 << 20);
        const afterLoad = m.memoryUsage();
        expect(afterLoad.heapBytes).toBeGreaterThanOrEqual(fileBytes); // F32 weights are borrowed from the file buffer
        expect(afterLoad.wasmBytes).toBeLessThanOrEqual(1.15 * fileBytes);
        const r = m.run(CHAPTER);
        expect(r.T).toBe(10);
        expect(r.nullDagScore).toBeCloseTo(0.70710, 4);
        const { wasmBytes } = m.memoryUsage();
        const act = activationBytes(m.config, r.T);
        console.log(`distilgpt2-sized (${dir === DISTIL ? 'real' : 'synthetic'}): file ${(fileBytes / 2 ** 20).toFixed(1)} MiB, ` +
                    `wasm ${(wasmBytes / 2 ** 20).toFixed(1)} MiB (${(wasmBytes / fileBytes).toFixed(3)} × file), ` +
                    `activations ${(act / 2 ** 20).toFixed(2)} MiB, JS peak during load ${(jsPeak / 2 ** 20).toFixed(1)} MiB`);
        expect(wasmBytes).toBeLessThanOrEqual(1.15 * fileBytes + act);
      } finally {
        m.dispose();
      }
    } finally {
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    }
  });
});
