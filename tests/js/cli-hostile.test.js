// cli-hostile.test.js — `attnlab evidence` against the inputs of issue 53: sliding-window layers in the one-input
// edge path, dataset files (--set FILE) that are huge, endless, hold a NUL or invalid UTF-8 or end lines with a
// lone CR, options that do not apply to the chosen --kind, and work budgets (docs/security.md, "Evidence").
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
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

describe('--set FILE is streamed: named limits, named errors with the line, every line break', () => {
  let dir;
  const file = (name, data) => { const p = join(dir, name); writeFileSync(p, data); return p; };
  const set = (path, ...more) => cli(['evidence', '--kind', 'edge', '--model', TINY, '--set', path, '--n-boot', '10', '--n-perm', '10', ...more]);
  const refused = (r, re) => {
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(re);
  };
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'alab-set-')); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('LF, CRLF and a lone CR each end a line; empty lines are skipped', () => {
    for (const [name, text] of [['lf', 'the cat sat\nthe dog ran\nthe end is near\n'], ['crlf', 'the cat sat\r\nthe dog ran\r\nthe end is near'],
      ['cr', 'the cat sat\rthe dog ran\rthe end is near\r'], ['mixed', 'the cat sat\r\n\rthe dog ran\n\nthe end is near']]) {
      const j = ok(set(file(name, text)));
      expect(j.n, name).toBe(3);
      expect(j.per_input.map((p) => p.T)).toEqual(ok(set(file('lf', 'the cat sat\nthe dog ran\nthe end is near\n'))).per_input.map((p) => p.T));
    }
  });
  it('a NUL byte is EFORMAT with its line (it silently ended the set), /dev/zero at once', () => {
    refused(set(file('nul', 'the cat sat\nthe\0dog ran\nthe end\n')), /EFORMAT: .*nul line 2 byte 4: a NUL byte/);
    refused(set(file('nul1', 'x\0\nthe cat sat\nthe dog\n')), /EFORMAT: .*line 1 byte 2: a NUL byte/);
    const t0 = Date.now();
    refused(set('/dev/zero'), /EFORMAT: \/dev\/zero line 1 byte 1: a NUL byte/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
  it('invalid UTF-8 is EFORMAT with its line and byte', () => {
    refused(set(file('utf', Buffer.concat([Buffer.from('the cat sat\nthe dog\nok '), Buffer.from([0xff, 0x0a])]))),
      /EFORMAT: .*utf line 3 byte 4: invalid UTF-8 \(0xFF\)/);
    refused(set(file('sur', Buffer.concat([Buffer.from('the cat sat\n'), Buffer.from([0xed, 0xa0, 0x80, 0x0a])]))), /line 2 byte 1: invalid UTF-8/);
  });
  it('a line over 1 MiB (ALAB_MAX_TEXT_BYTES) is ELIMIT; a file over 64 MiB is ELIMIT, read in bounded memory', () => {
    refused(set(file('long', `the cat\n${'a'.repeat((1 << 20) + 1)}\n`)), /ELIMIT: .*long line 2 is longer than 1048576 bytes/);
    refused(set(file('huge', '\n'.repeat((64 << 20) + 1))), /ELIMIT: .*huge is more than 67108864 bytes, over the limit for a dataset file/);
  });
  it('reading stops at --limit: the rest of the file is not read (a 65 MiB file with --limit 1 runs)', () => {
    const p = file('big', `the cat sat on the mat\n${'x'.repeat(1000)}\0\n${'\n'.repeat(65 << 20)}`);
    const j = ok(set(p, '--limit', '1'));
    expect(j.n).toBe(1);
  });
  it('the set\'s points are held to ALAB_EVIDENCE_MAX_N as it is read, before the first forward pass', () => {
    const line = `${Array(60).fill('the').join(' ')}\n`; // about 60 tokens on the tiny model, 1830 points each
    const p = file('many', line.repeat(3000));
    const t0 = Date.now();
    const r = set(p);
    refused(r, /ELIMIT: the set holds more than 4194304 points \(ALAB_EVIDENCE_MAX_N\) by its line \d+ .*before the first forward pass; use --limit \d+/);
    expect(Date.now() - t0).toBeLessThan(5000);
    const T = JSON.parse(cli(['tokenize', '--model', TINY, '--text', line.trim(), '--json']).stdout).ids.length;
    const lim = Number(/--limit (\d+)/.exec(r.stderr)[1]), per = (T * (T + 1)) / 2;
    expect(lim * per).toBeLessThanOrEqual(4194304);
    expect((lim + 1) * per).toBeGreaterThan(4194304);
    // token knockout counts T per input: the same file is within its cap up to the --limit asked
    refused(cli(['evidence', '--kind', 'tokens', '--model', TINY, '--set', file('many2', line.repeat(70000))]), /ELIMIT: the set holds more than 4194304 points/);
  });
  it('a pipe is read as a file (--set /dev/stdin)', () => {
    const r = spawnSync('sh', ['-c', `printf 'the cat sat\\rthe dog ran\\n' | '${bin}' evidence --kind edge --model '${TINY}' --set /dev/stdin --n-boot 10 --n-perm 10`],
      { encoding: 'utf8' });
    expect(ok({ code: r.status, stdout: r.stdout, stderr: r.stderr }).n).toBe(2);
  });
});

describe('the JS API: a set\'s points are checked before the first forward pass', async () => {
  const evidence = await import('../../web/src/evidence.js');
  const circuits = await import('../../web/src/circuits.js');
  const codeOf = (f) => { try { f(); } catch (e) { return e.code; } return null; };
  it('edgeKnockoutSet / tokenKnockoutSet: ELIMIT at once, no forward pass run', async () => {
    const m = await loadModel(TINY);
    try {
      const long = Array.from({ length: 64 }, (_, i) => 10 + (i % 50)); // n_positions = 64: 2080 points each
      const set = Array.from({ length: 2100 }, () => long);
      let runs = 0;
      const t0 = Date.now();
      expect(codeOf(() => m.edgeKnockoutSet(set, { onProgress: () => runs++ }))).toBe('ELIMIT');
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(runs).toBe(0);
      try { m.edgeKnockoutSet(set); } catch (e) { expect(e.message).toMatch(/more than 4194304 points .* by its input 2016 .*options\.limit = 2016/); }
      expect(codeOf(() => m.tokenKnockoutSet(Array.from({ length: 65600 }, () => long)))).toBe('ELIMIT');
      // within the cap, the same set runs (limit)
      expect(m.edgeKnockoutSet(set, { limit: 2, layer: 2, nBoot: 10, nPerm: 10 }).n).toBe(2);
    } finally {
      m.dispose();
    }
  });
  it('the set steps check before their first forward pass too (the model handle is never reached)', () => {
    const set = Array.from({ length: 2100 }, () => ({ length: 64 }));
    const w = new Proxy({}, { get: () => { throw new Error('the wasm instance was used'); } });
    expect(codeOf(() => evidence.edgeKnockoutSetSteps(w, 0, set, { layer: 0, head: 'all', nLayer: 3, nHead: 4 }).next())).toBe('ELIMIT');
    expect(codeOf(() => evidence.tokenKnockoutSetSteps(w, 0, Array.from({ length: 65600 }, () => ({ length: 64 })), { nLayer: 3, nHead: 4 }).next())).toBe('ELIMIT');
    const many = { length: 4194305 };
    expect(codeOf(() => evidence.ablationSetSteps(w, 0, many, { refIds: [], refOut: [], nLayer: 3, nHead: 4 }).next())).toBe('ELIMIT');
    expect(codeOf(() => evidence.patchingSetSteps(w, 0, many, { nLayer: 3, nHead: 4 }).next())).toBe('ELIMIT');
    expect(codeOf(() => circuits.componentTracingSetSteps(w, 0, many, { nLayer: 3 }).next())).toBe('ELIMIT');
    expect(codeOf(() => circuits.attributionSetSteps(w, 0, many, { nLayer: 3, nHead: 4 }).next())).toBe('ELIMIT');
  });
});
