// cli-hostile.test.js — `attnlab evidence` against the inputs of issue 53: sliding-window layers in the one-input
// edge path, dataset files (--set FILE) that are huge, endless, hold a NUL or invalid UTF-8 or end lines with a
// lone CR, options that do not apply to the chosen --kind, and work budgets (docs/security.md, "Evidence"); and
// the JS API's side of the same: a set's points and each measure's work checked before the first forward pass.
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

describe('evidence options: only those of the chosen kind; -0 is 0; receivers once', () => {
  const ev = (...args) => cli(['evidence', '--model', TINY, ...args]);
  const TEXT = 'the cat sat on the mat';
  const usage = (r, re) => {
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(re);
  };
  it.each([
    [['--kind', 'tokens', '--layer', '1'], /--layer does not apply to --kind tokens \(EINVAL\): it is for --kind edge/],
    [['--kind', 'edge', '--token-mode', 'delete'], /--token-mode does not apply to --kind edge \(EINVAL\): it is for --kind tokens/],
    [['--kind', 'dla', '--knockout', 'zero'], /--knockout does not apply to --kind dla \(EINVAL\): it is for --kind edge\/tokens/],
    [['--kind', 'edge', '--n-perm', '10'], /--n-perm does not apply to --kind edge without --set \(EINVAL\)/],
    [['--kind', 'edge', '--epsilon', '0'], /--epsilon does not apply to --kind edge without --set/],
    [['--kind', 'value-norms', '--answers', '1,2'], /--answers does not apply to --kind value-norms \(EINVAL\)/],
    [['--kind', 'tokens', '--seed', '3'], /--seed does not apply to --kind tokens \(EINVAL\)/],
    [['--kind', 'edge', '--do', '0,0,1,0,hard'], /--do does not apply to --kind edge \(EINVAL\): it is an option of run or generate/],
    [['--kind', 'ablation', '--top', '3'], /--top does not apply to --kind ablation/],
    [['--kind', 'patch', '--corrupt', 'the dog sat on the mat', '--receivers', 'logits'], /--receivers does not apply to --kind patch.*--kind path/],
  ])('%j is refused with exit 2', (args, re) => usage(ev('--text', TEXT, ...args), re));
  it('the options of a kind still pass, with and without --set', () => {
    ok(ev('--kind', 'edge', '--text', TEXT, '--layer', '1', '--head', '0', '--knockout', 'zero', '--budget', '1e9'));
    ok(ev('--kind', 'tokens', '--text', TEXT, '--token-mode', 'replace', '--neutral', '5'));
    ok(ev('--kind', 'composition', '--n-null', '5', '--seed', '2'));
    const dir = mkdtempSync(join(tmpdir(), 'alab-opt-'));
    try {
      writeFileSync(join(dir, 's.txt'), 'the cat sat\nthe dog ran\n');
      ok(ev('--kind', 'tokens', '--set', join(dir, 's.txt'), '--limit', '2', '--n-boot', '5', '--n-perm', '5', '--seed', '3', '--epsilon', '0'));
      // --epsilon -0 is 0, printed as 0 (it was -0)
      const r = ev('--kind', 'edge', '--set', join(dir, 's.txt'), '--n-boot', '5', '--n-perm', '5', '--epsilon', '-0');
      expect(r.stdout).toMatch(/"eps":0[,}]/);
      expect(ok(r).eps).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('a receiver given twice is refused (EINVAL), not computed twice', () => {
    const r = ev('--kind', 'path', '--text', TEXT, '--corrupt', 'the dog sat on the mat', '--receivers', '1.0.k,logits,0.1.q,1.0.k');
    usage(r, /--receivers .*EINVAL: receiver 4 repeats receiver 1; give each receiver once/);
    usage(ev('--kind', 'path', '--text', TEXT, '--corrupt', 'the dog sat on the mat', '--receivers', 'logits,logits'), /receiver 2 repeats receiver 1/);
    usage(ev('--kind', 'path', '--text', TEXT, '--corrupt', 'the dog sat on the mat', '--receivers', Array(4096).fill('0.0.q').join(',')),
      /receiver 2 repeats receiver 1/);
    // the same head with another input is another receiver
    const j = ok(ev('--kind', 'path', '--text', TEXT, '--corrupt', 'the dog sat on the mat', '--receivers', '1.0.k,1.0.q,1.0.v,logits'));
    expect(j.receivers).toHaveLength(4);
  });
});

describe('a work budget: each kind estimates its work from its arguments before it starts', () => {
  const B = join(root, 'models/brown-gpt2'); // the built-in model, where the issue measured
  const ev = (...args) => cli(['evidence', '--model', B, ...args]);
  const over = (r, re) => {
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/ELIMIT: --kind .* would do about [\d.e+]+ multiply-adds \(estimated from its arguments before it starts, on .*\), over the budget of 2e\+12; raise it with --budget N/);
    if (re) expect(r.stderr).toMatch(re);
  };
  const words = (n) => 'the storm grew and the ship sank '.repeat(40).split(' ').slice(0, n).join(' ');
  it('over the default, refused at once: edge --layer 0 at T = 256, --n-null 1e5, --n-perm 1e6 over a set', () => {
    const t0 = Date.now();
    over(ev('--kind', 'edge', '--layer', '0', '--text', words(250)), /on 25\d tokens/);
    over(ev('--kind', 'composition', '--n-null', '100000'), /on the weights alone/);
    over(ev('--kind', 'edge', '--set', 'heldout', '--n-perm', '1000000'), /on 125 inputs/);
    over(ev('--kind', 'ablation', '--draws', '10000', '--text', words(40)));
    expect(Date.now() - t0).toBeLessThan(10000);
  });
  it('--budget raises it (and lowers it); the estimate grows with the work', () => {
    const est = (args) => Number(/about ([\d.e+]+) multiply-adds/.exec(ev(...args, '--budget', '1').stderr)[1]);
    const e64 = est(['--kind', 'edge', '--layer', '0', '--text', words(64)]), e128 = est(['--kind', 'edge', '--layer', '0', '--text', words(128)]);
    expect(e128 / e64).toBeGreaterThan(5); // T^3 in layer 0
    expect(est(['--kind', 'edge', '--text', words(128)])).toBeLessThan(e128 / 3); // the last layer recomputes one row
    expect(est(['--kind', 'composition', '--n-null', '100000'])).toBeGreaterThan(50 * est(['--kind', 'composition']));
    ok(ev('--kind', 'composition', '--n-null', '10', '--budget', '1e12'));
    const low = ev('--kind', 'composition', '--n-null', '10', '--budget', '1000');
    expect(low.code).toBe(1);
    expect(low.stderr).toMatch(/over the budget of 1e\+03/);
    for (const bad of ['0', '-1', 'x', '1e31', 'inf', 'nan', '0x10'])
      expect(ev('--kind', 'composition', '--budget', bad).stderr).toMatch(/--budget '.*' *: *expects a number of multiply-adds/);
  });
  it('the defaults of the docs and the page run under the default budget', () => {
    const est = (args) => Number(/about ([\d.e+]+) multiply-adds/.exec(ev(...args, '--budget', '1').stderr)[1]);
    for (const layer of ['0', '5']) // scripts/evidence-sets-numbers.mjs
      expect(est(['--kind', 'edge', '--set', 'heldout', '--limit', '100', '--layer', layer])).toBeLessThan(2e12);
    expect(est(['--kind', 'tokens', '--set', 'heldout', '--limit', '100'])).toBeLessThan(2e12);
    expect(est(['--kind', 'edge', '--text', words(250)])).toBeLessThan(2e12); // the default layer at the full context
    expect(est(['--kind', 'ablation', '--text', words(60)])).toBeLessThan(2e12);
    expect(est(['--kind', 'composition', '--n-null', '1000'])).toBeLessThan(2e12);
  });
});

describe('the JS API: the same work budget, receivers once, -0 is 0', async () => {
  const work = await import('../../web/src/work.js');
  const codeOf = (f) => { try { f(); } catch (e) { return e.code; } return null; };
  const msgOf = (f) => { try { f(); } catch (e) { return e.message; } return ''; };
  const words = (n) => 'the storm grew and the ship sank '.repeat(40).split(' ').slice(0, n).join(' ');
  let b, t;
  beforeAll(async () => { b = await loadModel(join(root, 'models/brown-gpt2')); t = await loadModel(TINY); });
  afterAll(() => { b.dispose(); t.dispose(); });

  it('over the default budget: ELIMIT with the estimate, at once, before any forward pass', () => {
    const t0 = Date.now();
    let runs = 0;
    expect(codeOf(() => b.edgeKnockout(words(250), { layer: 0, onProgress: () => runs++ }))).toBe('ELIMIT');
    expect(msgOf(() => b.edgeKnockout(words(250), { layer: 0 }))).toMatch(
      /edgeKnockout would do about [\d.e+]+ multiply-adds \(estimated from its arguments before it starts, on 25\d tokens\), over the budget of 2\.00e\+12; raise it with options\.budget/);
    expect(codeOf(() => b.compositionScores({ nNull: 100000 }))).toBe('ELIMIT');
    expect(codeOf(() => b.edgeKnockoutSet('heldout', { nPerm: 1000000, onProgress: () => runs++ }))).toBe('ELIMIT');
    expect(codeOf(() => b.ablationSemantics(words(40), { draws: 10000 }))).toBe('ELIMIT');
    expect(runs).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
  it('options.budget raises or lowers it, and is checked', () => {
    expect(codeOf(() => t.compositionScores({ nNull: 10, budget: 1000 }))).toBe('ELIMIT');
    expect(t.compositionScores({ nNull: 10, budget: 1e12 }).nNull).toBe(10);
    expect(codeOf(() => t.edgeKnockout('the cat sat on the mat', { budget: 10 }))).toBe('ELIMIT');
    expect(codeOf(() => t.pathPatching('the cat sat', 'the dog sat', { receivers: [{ input: 'logits' }], budget: 10 }))).toBe('ELIMIT');
    expect(codeOf(() => t.patchingSet([['the cat sat', 'the dog sat']], { budget: 10 }))).toBe('ELIMIT');
    for (const [v, code] of [['1e13', 'ETYPE'], [null, 'ETYPE'], [0, 'ERANGE'], [-1, 'ERANGE'], [NaN, 'ERANGE'], [Infinity, 'ERANGE'], [1e31, 'ERANGE']])
      expect(codeOf(() => t.compositionScores({ nNull: 1, budget: v }))).toBe(code);
  });
  it('the JS estimates are the CLI\'s where the work is the same (edge knockout, composition)', () => {
    const cliEst = (...args) => Number(/about ([\d.e+]+) multiply-adds/.exec(cli(['evidence', '--model', join(root, 'models/brown-gpt2'), ...args, '--budget', '1']).stderr)[1]);
    const s = work.shapeOf(b.config);
    for (const [n, layer] of [[40, 0], [120, 3], [200, 5]]) {
      const T = b.tokenize(words(n)).ids.length;
      expect(work.edgeWork(s, T, layer) / cliEst('--kind', 'edge', '--layer', String(layer), '--text', words(n))).toBeCloseTo(1, 1);
    }
    expect(work.WORK.compositionScores(s, [], { nNull: 5000 }) / cliEst('--kind', 'composition', '--n-null', '5000')).toBeCloseTo(1, 1);
  });
  it('the docs\' and the page\'s calls fit the default', () => {
    const s = work.shapeOf(b.config);
    const held = b.evidenceSet('heldout', { limit: 100 }).map((x) => x.length);
    for (const layer of [0, 5])
      expect(work.WORK.edgeKnockoutSet(s, held, { layer, noise: 10, resamples: 2000 })).toBeLessThan(work.DEFAULT_BUDGET);
    expect(work.WORK.tokenKnockoutSet(s, b.evidenceSet('heldout').map((x) => x.length), { noise: 10, resamples: 2000 })).toBeLessThan(work.DEFAULT_BUDGET);
    expect(work.WORK.edgeKnockout(s, [256], { layer: 5 })).toBeLessThan(work.DEFAULT_BUDGET);
    expect(work.WORK.ablationSemantics(s, [60], { refT: 256, draws: 20 })).toBeLessThan(work.DEFAULT_BUDGET);
    expect(work.WORK.compositionScores(s, [], { nNull: 1000 })).toBeLessThan(work.DEFAULT_BUDGET);
  });
  it('a receiver given twice is EINVAL in pathPatching and pathPatchingSet (a bad receiver in a set is an error, not n: 0)', () => {
    const pairArgs = ['the cat sat on the mat', 'the dog sat on the mat'];
    expect(msgOf(() => t.pathPatching(...pairArgs, { receivers: [{ input: 'logits' }, { layer: 1, head: 0, input: 'k' }, { input: 'logits' }] })))
      .toMatch(/receiver 2 repeats receiver 0; give each receiver once/);
    // more receivers than the model has (3 per head and the logits) is ELIMIT, checked before any is read (issue 53)
    expect(codeOf(() => t.pathPatching(...pairArgs, { receivers: Array(4096).fill({ layer: 1, head: 0, input: 'q' }) }))).toBe('ELIMIT');
    expect(codeOf(() => t.pathPatching(...pairArgs, { receivers: Array(3).fill({ layer: 1, head: 0, input: 'q' }) }))).toBe('EINVAL');
    expect(t.pathPatching(...pairArgs, { receivers: [{ layer: 1, head: 0, input: 'q' }, { layer: 1, head: 0, input: 'k' }] }).senders).toHaveLength(2);
    const pairs = [[...pairArgs, [5, 6]]];
    expect(codeOf(() => t.pathPatchingSet(pairs, { receivers: [{ input: 'logits' }, { input: 'logits' }] }))).toBe('EINVAL');
    expect(codeOf(() => t.pathPatchingSet(pairs, { receivers: [{ layer: 1, head: 0, input: 'x' }] }))).toBe('EINVAL');
  });
  it('epsilon -0 is reported as 0', () => {
    const set = ['the cat sat on the mat', 'the dog ran far away'];
    expect(Object.is(t.edgeKnockoutSet(set, { epsilon: -0, nBoot: 5, nPerm: 5 }).eps, 0)).toBe(true);
    expect(Object.is(t.tokenKnockoutSet(set, { epsilon: -0, nBoot: 5, nPerm: 5 }).eps, 0)).toBe(true);
  });
});
