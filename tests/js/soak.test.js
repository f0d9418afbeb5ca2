// soak.test.js — "load held" at a small size (issue 21): random valid runs with random interventions through
// attnlab/worker, random invalid calls mixed in (each must reject with its code and leave the model usable),
// and the memory flat from start to end. `make bench` runs the same soak at 10 000 runs (bench/bench_soak.mjs).
import { describe, it, expect } from 'vitest';
import { soak } from './helpers/soak.js';

describe('soak through the worker', () => {
  it('343 random runs and 57 invalid calls leave wasm memory and the malloc heap exactly flat', async () => {
    const s = await soak({ runs: 400, seed: 21, invalidEvery: 7 });
    console.log(`soak: ${s.runs} runs + ${s.invalid} invalid calls in ${s.ms} ms; wasm ${s.start.wasmBytes} -> ${s.end.wasmBytes} B, ` +
      `heap ${s.start.heapBytes} -> ${s.end.heapBytes} B, RSS ${(s.start.rss / 2 ** 20).toFixed(1)} -> ${(s.end.rss / 2 ** 20).toFixed(1)} MiB`);
    expect(s.runs).toBe(400 - Math.floor(400 / 7));
    expect(s.invalid).toBe(Math.floor(400 / 7));
    expect(Object.keys(s.codes).length).toBeGreaterThanOrEqual(5); // a mix of codes, not one case repeated
    expect(s.end.wasmBytes).toBe(s.start.wasmBytes);
    expect(s.end.heapBytes).toBe(s.start.heapBytes);
    // RSS moves with V8's garbage collector, so it is reported and only loosely bounded here; the exact
    // flatness checks are the two above (the wasm instance is where a leak of the engine would show)
    expect(s.end.rss - s.start.rss).toBeLessThan(64 * 2 ** 20);
  }, 120000);
});
