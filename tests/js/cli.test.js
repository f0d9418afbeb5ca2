// cli.test.js — the native CLI honours its JSON contract (docs/c-api.md) and reproduces the PyTorch
// reference on the golden fixtures; errors go to stderr with a non-zero exit and nothing on stdout.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, cpSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

// Issue 21 item 14: every number is the whole token, in the flag's range, with
// no wrap; the refusal names the flag and the value (exit 2, nothing on stdout).
describe('attnlab parses every number strictly', () => {
  const tiny = join(root, 'tests/fixtures/tiny');
  const base = ['run', '--model', tiny, '--text', 'a b c', '--json'];
  const cases = [
    // [flag, value, what the message must also say]
    ['--do', '1,,0,3,2,hard', /head .*'' is not an integer/], // was read as layer 1 head 0
    ['--do', '0,0,1,0,hard,', /expected \.\.\.,hard/],     // a trailing comma
    ['--do', ',0,0,1,0,hard', /layer '' is not an integer/],
    ['--do', '0,0,1,0,soft,1e39', /does not fit a float/],
    ['--do', '0,0,1,0,soft,0x10', /not a finite decimal/],
    ['--do', '0,0,1,0,soft,inf', /not a finite decimal/],
    ['--do', '0,0, 1,0,hard', /row ' 1' is not an integer/],
    ['--ablate', ',', /'' is not L\.H/],                  // did nothing
    ['--ablate', '0.0,', /'' is not L\.H/],
    ['--ablate', '0.0x', /head '0x' is not an integer/],
    ['--ablate', '', /'' is not L\.H/],
    ['--capture', '0,0junk', /head '0junk' is not an integer/], // was accepted
    ['--capture', '99999999999,0', /layer 99999999999 is out of range/], // sscanf overflow (UB)
    ['--capture', '0,0,0', /expects L,H/],
    ['--capture', '-1,0', /layer -1 is out of range/],
    ['--seed', '-1', /not an integer in \[0, 2\^64 - 1\]/], // became 2^64 - 1
    ['--seed', '18446744073709551616', /out of range/],
    ['--seed', '1e3', /not an integer/],
    ['--model', '', /empty directory name/],              // read /config.json
    ['--top', '0', /out of range \[1, /],
    ['--top', '4294967306', /out of range/],              // 2^32 + 10 must not wrap to 10
    ['--top', '10 ', /not an integer/],
    ['--top', '+5', /not an integer/],
    ['--scale', 'nan', /not a finite decimal/],
    ['--scale', '1e39', /does not fit a float/],
    ['--mask', 'window:0', /window 0 is out of range/],
    ['--mask', 'window:3x', /window '3x' is not an integer/],
    ['--threads', '17', /out of range \[1, 16\]/],
    ['--max-new', '2147483648', /out of range/],
    ['--temperature', '-1', /out of range/],
    ['--top-k', '-1', /out of range/],
  ];
  it.each(cases)('%s %j is refused, naming the flag and the value', (flag, value, msg) => {
    const args = flag === '--model' ? ['run', '--model', value, '--text', 'a'] : [...base, flag, value];
    const cmd = ['--seed', '--max-new', '--temperature', '--top-k'].includes(flag)
      ? ['generate', '--model', tiny, '--text', 'a b c', flag, value] : args;
    const r = cli(cmd);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${flag} '${value}'`);
    expect(r.stderr).toMatch(msg);
  });
  it('the edges of each range are accepted', () => {
    for (const extra of [['--top', '1'], ['--capture', '0,0'], ['--mask', 'window:1'], ['--scale', '-0.5'],
      ['--do', '0,all,1,0,soft,-3.5e-3'], ['--ablate', '0.0,1.1'], ['--threads', '16']]) {
      const r = cli([...base, ...extra]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    const g = cli(['generate', '--model', tiny, '--text', 'a', '--seed', '18446744073709551615', '--max-new', '2', '--json']);
    expect(g.stderr).toBe('');
    expect(g.code).toBe(0);
  });
});

// Issue 21 item 8: a FIFO (or a directory) where a model file should be is
// refused before any read; before the fix the FIFO case never returned.
describe('attnlab refuses non-regular model files', () => {
  const tiny = join(root, 'tests/fixtures/tiny');
  it.each([['a FIFO', 'vocab.json', /vocab\.json is a FIFO, not a regular file/],
    ['a directory', 'config.json', /config\.json is a directory, not a regular file/]])(
    '%s as %s', (_what, file, msg) => {
      const dir = mkdtempSync(join(tmpdir(), 'attnlab-cli-'));
      try {
        cpSync(tiny, dir, { recursive: true });
        rmSync(join(dir, file));
        if (file === 'vocab.json') expect(spawnSync('mkfifo', [join(dir, file)]).status).toBe(0);
        else mkdirSync(join(dir, file));
        const r = spawnSync(bin, ['run', '--model', dir, '--text', 'a'], { encoding: 'utf8', timeout: 20000 });
        expect(r.signal).toBe(null); // not killed by the timeout
        expect(r.status).toBe(1);
        expect(r.stderr).toMatch(msg);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
});
