// cli-hostile.test.js — `attnlab evidence` against the inputs of issue 53: sliding-window layers in the one-input
// edge path, dataset files (--set FILE) that are huge, endless, hold a NUL or invalid UTF-8 or end lines with a
// lone CR, options that do not apply to the chosen --kind, and work budgets (docs/security.md, "Evidence").
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { loadModel } from '../../web/src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'build', 'attnlab');
const FAM = join(root, 'tests/fixtures/families');
const TINY = join(root, 'tests/fixtures/tiny');

function cli(args, opts = {}) {
  const r = spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 256 << 20, env: { ...process.env, ATTNLAB_MODEL_DIR: '' }, ...opts });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const ok = (r) => {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
};

describe('edge knockout on sliding-window layers: one rule for out-of-window pairs (no pair)', () => {
  const TEXT = 'the cat sat on the mat and the dog ran far away';
  // mistral: every layer has a window of 4; gemma3_text: layer 0 is a sliding layer (window 4), layer 1 global
  for (const [model, layer, W] of [['mistral', 0, 4], ['mistral', 1, 4], ['gemma3', 0, 4], ['gemma3', 1, 0]]) {
    it(`${model} layer ${layer}: the one-input path skips the pairs outside the window, as --set and the JS API do`, async () => {
      const j = ok(cli(['evidence', '--kind', 'edge', '--model', join(FAM, model), '--layer', String(layer), '--text', TEXT]));
      const T = j.ids.length;
      expect(T).toBeGreaterThan(W); // the window is exceeded
      let pairs = 0;
      for (let i = 0; i < T; i++)
        for (let j2 = 0; j2 <= i; j2++) {
          const inside = W === 0 || i - j2 < W;
          pairs += inside;
          expect(j.E[i * T + j2] === null).toBe(!inside); // outside the window: null in the grid, and no pair
        }
      expect(j.pairs).toBe(pairs);
      expect(Number.isFinite(j.A_vs_E.spearman)).toBe(true);
      expect(Number.isFinite(j.A_vs_E.kendall)).toBe(true);
      // the JS API over the same input: the same pairs and correlations
      const m = await loadModel(join(FAM, model));
      try {
        const e = m.edgeKnockout(TEXT, { layer });
        expect(e.pairs).toBe(j.pairs);
        expect(e.spearman).toBeCloseTo(j.A_vs_E.spearman, 6);
        expect(e.kendall).toBeCloseTo(j.A_vs_E.kendall, 6);
      } finally {
        m.dispose();
      }
      // the --set path over the same one input (no noise floor) gives the same correlation
      const dir = mkdtempSync(join(tmpdir(), 'alab-win-'));
      try {
        writeFileSync(join(dir, 'one.txt'), `${TEXT}\n`);
        const s = ok(cli(['evidence', '--kind', 'edge', '--model', join(FAM, model), '--layer', String(layer), '--set', join(dir, 'one.txt'),
          '--epsilon', '0', '--n-boot', '10', '--n-perm', '10']));
        expect(s.per_input[0].T).toBe(T);
        expect(s.per_input[0].spearman).toBeCloseTo(j.A_vs_E.spearman, 6);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
