// cli.test.js — the native CLI honours the JSON contract of shared/DESIGN.md and reproduces the PyTorch
// reference on the golden fixtures; errors go to stderr with a non-zero exit and nothing on stdout.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(root, 'build', 'attnlab');
const golden = JSON.parse(readFileSync(join(root, 'tests/fixtures/golden.json'), 'utf8'));
const TOL = 1e-4;

function cli(args) {
  const r = spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 256 << 20, env: { ...process.env, ATTNLAB_MODEL_DIR: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// The CLI flags that express one golden case's options, or null if the CLI cannot express them.
function flagsOf(opts) {
  if (opts.layer_mask) return null; // per-layer masks are an API feature, not a CLI flag
  const f = [];
  for (const v of opts.interventions) {
    const head = v.head === -1 ? 'all' : String(v.head);
    if (v.kind === 'hard') f.push('--do', `${v.layer},${head},${v.row},${v.col},hard`);
    else if (v.kind === 'soft') f.push('--do', `${v.layer},${head},${v.row},${v.col},soft,${v.lambda}`);
    else f.push('--ablate', `${v.layer}.${v.head}`);
  }
  if (opts.mask === 'full') f.push('--mask', 'full');
  if (opts.mask === 'window') f.push('--mask', `window:${opts.window}`);
  if (opts.scale !== null && opts.scale !== undefined) f.push('--scale', String(opts.scale));
  if (opts.capture) f.push('--capture', `${opts.capture.layer},${opts.capture.head}`);
  return f;
}

function maxAbsDiff(a, b) {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

describe('attnlab run --json', () => {
  it('the binary has been built', () => {
    expect(existsSync(bin)).toBe(true);
  });

  const cases = golden.cases.filter((c) => flagsOf(c.opts) !== null);
  it.each(cases.map((c) => [c.name, c.model, c]))('%s on %s reproduces the reference within 1e-4', (_n, model, c) => {
    const r = cli(['run', '--model', join(root, 'tests/fixtures', model), '--text', c.text, '--json', ...flagsOf(c.opts)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const T = c.ids.length;
    expect(out.ids).toEqual(c.ids);
    expect(out.tokens).toHaveLength(T);
    const { n_layer: L, n_head: NH } = out.model;
    expect(out.attentions).toHaveLength(L);
    expect(out.attentions[0]).toHaveLength(NH);
    expect(out.attentions[0][0]).toHaveLength(T);
    expect(maxAbsDiff(out.attentions.flat(3), c.attentions)).toBeLessThanOrEqual(TOL);
    expect(maxAbsDiff(out.logits, c.logits)).toBeLessThanOrEqual(TOL);
    expect(out.top).toHaveLength(10);
    expect(out.top.map((t) => t.id)).toEqual(c.top.map((t) => t.id));
    expect(maxAbsDiff(out.top.map((t) => t.prob), c.top.map((t) => t.prob))).toBeLessThanOrEqual(TOL);
    expect(out.dag_scores_last_layer).toHaveLength(NH);
    // the null DAG score of uniform attention over T tokens under the case's mask: row i sees n keys, n − 1 below
    let s = 0;
    for (let i = 0; i < T; i++) {
      if (c.opts.mask === 'full') { s += i / T; continue; }
      const n = c.opts.mask === 'window' ? Math.min(i + 1, c.opts.window) : i + 1;
      s += (n - 1) / n;
    }
    expect(out.null_dag_score).toBeCloseTo(s / T, 7);
    // the DAG score is that of the head-averaged last layer, recomputed here
    const last = out.attentions[L - 1];
    let below = 0, total = 0;
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) {
      let a = 0;
      for (let h = 0; h < NH; h++) a += last[h][i][j];
      total += a / NH;
      if (j < i) below += a / NH;
    }
    expect(out.dag_score).toBeCloseTo(below / total, 6);
    if (c.q) {
      expect(maxAbsDiff(out.capture.q, c.q)).toBeLessThanOrEqual(TOL);
      expect(maxAbsDiff(out.capture.k, c.k)).toBeLessThanOrEqual(TOL);
    }
  });

  it('null_dag_score is the null of the mask used (causal, full, window:W)', () => {
    const text = 'Because the storm intensified , the ship finally sank .';
    const nul = (mask) => JSON.parse(cli(['run', '--model', join(root, 'tests/fixtures/tiny'), '--text', text, '--mask', mask,
                                          '--json']).stdout);
    const causal = nul('causal');
    const T = causal.ids.length;
    let s = 0, w = 0;
    for (let i = 0; i < T; i++) { s += i / (i + 1); const n = Math.min(i + 1, 3); w += (n - 1) / n; }
    expect(causal.null_dag_score).toBeCloseTo(s / T, 8);
    expect(nul('full').null_dag_score).toBeCloseTo((T - 1) / (2 * T), 8);
    expect(nul('window:3').null_dag_score).toBeCloseTo(w / T, 8);
    expect(nul('window:3').null_dag_score).not.toBeCloseTo(s / T, 3);
  });

  it('tokens are display strings with the leading space kept', () => {
    const r = cli(['tokenize', '--model', join(root, 'tests/fixtures/tiny'), '--text', 'Hello world', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ids: [39, 695, 78, 995], tokens: ['H', 'ell', 'o', ' world'] });
  });
});

describe('attnlab errors', () => {
  const tiny = join(root, 'tests/fixtures/tiny');
  const bad = [
    ['empty text', ['run', '--model', tiny, '--text', '', '--json'], /empty/],
    ['too-long text', ['run', '--model', tiny, '--text', 'word '.repeat(100), '--json'], /context/],
    ['layer out of range', ['run', '--model', tiny, '--text', 'a b c', '--do', '9,0,1,0,hard', '--json'], /layer 9/],
    ['row out of range', ['run', '--model', tiny, '--text', 'a b c', '--do', '0,0,7,0,hard', '--json'], /row 7/],
    ['NaN lambda', ['run', '--model', tiny, '--text', 'a b c', '--do', '0,0,1,0,soft,nan', '--json'], /finite/],
    ['bad mask', ['run', '--model', tiny, '--text', 'a b c', '--mask', 'diagonal', '--json'], /--mask/],
    ['missing model dir', ['run', '--model', '/nonexistent', '--text', 'a', '--json'], /config\.json/],
    ['unknown option', ['run', '--model', tiny, '--text', 'a', '--frobnicate'], /unknown option/],
    ['malformed --do', ['run', '--model', tiny, '--text', 'a', '--do', '1,2,3'], /--do/],
    ['soft do on a masked cell', ['run', '--model', tiny, '--text', 'a b c', '--do', '0,0,1,2,soft,2', '--json'],
      /soft do on a masked cell.*row 1 sees columns 0\.\.1/],
    ['soft do outside the window', ['run', '--model', tiny, '--text', 'a b c d e', '--mask', 'window:2', '--do', '0,all,4,1,soft,2'],
      /soft do on a masked cell/],
  ];
  it.each(bad)('%s: message on stderr, non-zero exit, nothing on stdout', (_name, args, msg) => {
    const r = cli(args);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(msg);
  });
});
