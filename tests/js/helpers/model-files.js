// model-files.js (test helper) — a model folder's four files as the JS tests pass them to a loader,
// and what the progress events of one load must be.

import { expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The GPT-2 files of folder `dir` as Uint8Arrays: {config, safetensors, vocab, merges}. */
export function modelFiles(dir) {
  const read = (f) => new Uint8Array(readFileSync(join(dir, f)));
  return { config: read('config.json'), safetensors: read('model.safetensors'), vocab: read('vocab.json'), merges: read('merges.txt') };
}

/** The files of a load in the order the loader reads them. */
export const LOAD_ORDER = ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors'];

/**
 * The progress events of one load of a GPT-2 folder: an 'initiate' and a 'done' for each file in
 * LOAD_ORDER, and last 'ready' with its timing (readMs, wasmMs, buildMs: each finite and >= 0).
 */
export function expectLoadEvents(events) {
  expect(events.filter((e) => e.status === 'initiate').map((e) => e.file)).toEqual(LOAD_ORDER);
  expect(events.filter((e) => e.status === 'done').map((e) => e.file)).toEqual(LOAD_ORDER);
  expect(events.at(-1)).toMatchObject({ status: 'ready', file: null });
  const { timing } = events.at(-1);
  expect(Object.keys(timing).sort()).toEqual(['buildMs', 'readMs', 'wasmMs']);
  for (const v of Object.values(timing)) expect(v >= 0 && Number.isFinite(v)).toBe(true);
}
