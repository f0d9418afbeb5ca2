// cli.test.js — the native CLI honours its JSON contract (docs/c-api.md) and reproduces the PyTorch
// reference on the golden fixtures; errors go to stderr with a non-zero exit and nothing on stdout.
import { describe, it, expect, beforeAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, existsSync, mkdtempSync, cpSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
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

// attnlab evidence: where a head looks versus what it moves (c/include/attnlab.h, docs/evidence.md §§ 6–11), on
// the built-in model. The pair differs in one token and has the same length; the answers are " he" and " she"
// (both runs' top next token is " the", so the default answers would be the same token).
describe('attnlab evidence: pattern-value, path, dla, value-norms, trace, composition', () => {
  const CLEAN = 'The man said that', CORRUPT = 'The woman said that', ANSWERS = '339,673';
  const ev = (...args) => cli(['evidence', ...args]);
  const json = (r) => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout);
  };
  let run, L, NH, T; // the plain run of CLEAN: the model's shape, its tokens, its top two next tokens
  beforeAll(() => {
    run = JSON.parse(cli(['run', '--text', CLEAN, '--json', '--top', '2']).stdout);
    ({ n_layer: L, n_head: NH } = run.model);
    T = run.ids.length;
  });
  const pair = ['--text', CLEAN, '--corrupt', CORRUPT, '--answers', ANSWERS];
  const finite = (a) => a.every((x) => typeof x === 'number' && Number.isFinite(x));
  const textFirst = (j, kind) => {
    expect(Object.keys(j).slice(0, 3)).toEqual(['kind', 'ids', 'tokens']);
    expect(j.kind).toBe(kind);
    expect(j.ids).toEqual(run.ids);
    expect(j.tokens).toEqual(run.tokens);
  };
  const pairFields = (j) => {
    expect(j.answers).toEqual([339, 673]);
    expect(Number.isFinite(j.ld_clean) && Number.isFinite(j.ld_corrupt)).toBe(true);
    expect(j.ld_clean).not.toBe(j.ld_corrupt);
    // every pair kind says what its scores divide by, and flags a gap under 1 nat (a set would skip the pair)
    expect(Math.abs(j.gap - (j.ld_clean - j.ld_corrupt))).toBeLessThan(1e-6);
    expect('warning' in j).toBe(!(j.gap >= 1));
    if ('warning' in j) expect(j.warning).toMatch(/small or negative gap/);
  };

  it('a pair the model gets the wrong way round is flagged, with its signed gap', () => {
    const swapped = json(ev('--kind', 'patch', '--text', CLEAN, '--corrupt', CORRUPT, '--answers', ANSWERS.split(',').reverse().join(',')));
    const j = json(ev('--kind', 'patch', ...pair));
    expect(Math.abs(swapped.gap + j.gap)).toBeLessThan(1e-5);
    expect(swapped.gap < 1 ? swapped.warning : 'none').toMatch(swapped.gap < 1 ? /small or negative gap/ : /none/);
  });

  it('edge in the last layer: E_last of a row before the last is null (a structural zero, not measured)', () => {
    const j = json(ev('--kind', 'edge', '--text', CLEAN));
    expect(j.layer).toBe(L - 1);
    for (let i = 0; i < T; i++)
      for (let jj = 0; jj <= i; jj++) {
        const x = j.E_last[i * T + jj];
        if (i < T - 1) expect(x).toBeNull();
        else expect(typeof x).toBe('number');
      }
    const below = json(ev('--kind', 'edge', '--text', CLEAN, '--layer', '0'));
    expect(below.E_last.filter((x, k) => Math.floor(k / T) >= k % T).every((x) => typeof x === 'number')).toBe(true);
  });

  it('ablation: resample is the mean over K windows, the one aligned window is named resample_window', () => {
    const j = json(ev('--kind', 'ablation', '--text', CLEAN, '--draws', '3'));
    expect(j.resample.K).toBe(3);
    expect(j.resample.offsets).toHaveLength(3);
    const LH = L * NH;
    for (let x = 0; x < LH; x++) {
      const mean = (j.resample.draws[x] + j.resample.draws[LH + x] + j.resample.draws[2 * LH + x]) / 3;
      expect(Math.abs(j.resample.delta[x] - mean)).toBeLessThan(1e-4);
    }
    expect(j.resample_window.delta).toHaveLength(LH);
    expect(Object.keys(j)).not.toContain('resample_draws');
  });

  it('the pair has the same number of tokens', () => {
    const a = JSON.parse(cli(['tokenize', '--text', CLEAN, '--json']).stdout);
    const b = JSON.parse(cli(['tokenize', '--text', CORRUPT, '--json']).stdout);
    expect(a.ids).toHaveLength(T);
    expect(b.ids).toHaveLength(T);
    expect(a.ids).not.toEqual(b.ids);
  });

  it('pattern-value: denoise and noise, each pattern, value and both (L*NH); both = the patch head grid', () => {
    const j = json(ev('--kind', 'pattern-value', ...pair));
    textFirst(j, 'pattern-value');
    pairFields(j);
    for (const dir of ['denoise', 'noise']) {
      expect(Object.keys(j[dir])).toEqual(['pattern', 'value', 'both']);
      for (const part of ['pattern', 'value', 'both']) {
        expect(j[dir][part]).toHaveLength(L * NH);
        expect(finite(j[dir][part])).toBe(true);
      }
    }
    const p = json(ev('--kind', 'patch', ...pair));
    expect(p.ld_clean).toBe(j.ld_clean);
    expect(maxAbsDiff(j.denoise.both, p.heads)).toBeLessThanOrEqual(1e-6);
  });

  it('path: one sender grid per receiver, null where the sender is not below the receiver', () => {
    const j = json(ev('--kind', 'path', ...pair, '--receivers', '1.0.k,logits,0.1.q,5.3.v'));
    textFirst(j, 'path');
    pairFields(j);
    expect(j.direction).toBe('denoise');
    expect(j.freeze_mlp).toBe(false);
    expect(j.receivers).toEqual([{ layer: 1, head: 0, input: 'k' }, { layer: null, head: null, input: 'logits' },
      { layer: 0, head: 1, input: 'q' }, { layer: 5, head: 3, input: 'v' }]);
    expect(j.senders).toHaveLength(4);
    for (const s of j.senders) expect(s).toHaveLength(L * NH);
    expect(j.senders[2].every((x) => x === null)).toBe(true);            // nothing below layer 0
    expect(j.senders[0].slice(0, NH).every((x) => x !== null)).toBe(true); // layer 0 → layer 1
    expect(j.senders[0].slice(NH).every((x) => x === null)).toBe(true);
    expect(finite(j.senders[1])).toBe(true);                              // every head reaches the logits
    expect(finite(j.senders[3].slice(0, 5 * NH))).toBe(true);
    expect(j.senders[3].slice(5 * NH).every((x) => x === null)).toBe(true);
    // with the MLPs recomputed, a last-layer sender into the logits is its head patching
    const p = json(ev('--kind', 'patch', ...pair));
    expect(maxAbsDiff(j.senders[1].slice((L - 1) * NH), p.heads.slice((L - 1) * NH))).toBeLessThanOrEqual(1e-6);
    // the default receiver is the logits; --direction and --freeze-mlp are reported
    const d = json(ev('--kind', 'path', ...pair, '--direction', 'noise', '--freeze-mlp'));
    expect(d.receivers).toEqual([{ layer: null, head: null, input: 'logits' }]);
    expect(d.direction).toBe('noise');
    expect(d.freeze_mlp).toBe(true);
    expect(d.senders).toHaveLength(1);
    expect(finite(d.senders[0])).toBe(true);
  });

  it.each([
    ['1.0.x', /'1\.0\.x' is not L\.H\.q, L\.H\.k, L\.H\.v or logits/],
    ['1.0', /'1\.0' is not L\.H\.q/],
    ['1.0.q,', /'' is not L\.H\.q/],
    ['', /'' is not L\.H\.q/],
    ['1.0.q.q', /is not L\.H\.q/],
    ['a.0.q', /layer 'a' is not an integer/],
    ['1.-1.k', /head -1 is out of range/],
    ['96.0.q', /layer 96 is out of range/],
    ['50.0.q', /--receivers: .*receiver 0: head \(50, 0\) outside the model's/],      // parses; beyond the model
    ['logits,1.100.v', /--receivers: .*receiver 1: head \(1, 100\) outside the model's/],
  ])('path: --receivers %j is refused with exit 2 and a message', (value, msg) => {
    const r = ev('--kind', 'path', ...pair, '--receivers', value);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--receivers');
    expect(r.stderr).toMatch(msg);
  });

  it('dla: heads and terms sum to the logit difference; one answer is its logit; default: the top two', () => {
    const sum = (j) => {
      const t = j.terms;
      const add = (a) => a.reduce((s, x) => s + x, 0);
      return t.token + t.position + t.final_bias + add(t.attn_bias) + add(t.mlp) + add(j.heads);
    };
    const j = json(ev('--kind', 'dla', '--text', CLEAN, '--answers', ANSWERS));
    textFirst(j, 'dla');
    expect(j.answers).toEqual([339, 673]);
    expect(j.heads).toHaveLength(L * NH);
    expect(j.sources).toHaveLength(L * NH * T);
    expect(Object.keys(j.terms)).toEqual(['token', 'position', 'final_bias', 'attn_bias', 'mlp']);
    expect(j.terms.attn_bias).toHaveLength(L);
    expect(j.terms.mlp).toHaveLength(L);
    expect(Math.abs(sum(j) - j.ld)).toBeLessThanOrEqual(1e-4);
    // each head's sources sum to its term
    for (let k = 0; k < L * NH; k++) {
      const s = j.sources.slice(k * T, (k + 1) * T).reduce((a, x) => a + x, 0);
      expect(Math.abs(s - j.heads[k])).toBeLessThanOrEqual(1e-4);
    }
    const one = json(ev('--kind', 'dla', '--text', CLEAN, '--answers', '339'));
    expect(one.answers).toEqual([339]);
    expect(Math.abs(sum(one) - one.ld)).toBeLessThanOrEqual(1e-4);
    const def = json(ev('--kind', 'dla', '--text', CLEAN));
    expect(def.answers).toEqual([run.top[0].id, run.top[1].id]);
    expect(Math.abs(sum(def) - def.ld)).toBeLessThanOrEqual(1e-4);
    expect(Math.abs(def.ld - (run.logits[run.top[0].id] - run.logits[run.top[1].id]))).toBeLessThanOrEqual(1e-3);
  });

  it('value-norms: L*NH*T non-negative norms', () => {
    const j = json(ev('--kind', 'value-norms', '--text', CLEAN));
    textFirst(j, 'value-norms');
    expect(j.norms).toHaveLength(L * NH * T);
    expect(j.norms.every((x) => Number.isFinite(x) && x >= 0)).toBe(true);
  });

  it('trace: attn and mlp grids (L*T)', () => {
    const j = json(ev('--kind', 'trace', ...pair));
    textFirst(j, 'trace');
    pairFields(j);
    expect(j.attn).toHaveLength(L * T);
    expect(j.mlp).toHaveLength(L * T);
    expect(finite(j.attn) && finite(j.mlp)).toBe(true);
  });

  it('composition: Q, K, V over every layer pair l1 < l2 (P·NH·NH) in [0, 1] and an ordered null; no text', () => {
    const j = json(ev('--kind', 'composition'));
    expect(Object.keys(j)).toEqual(['kind', 'n_null', 'seed', 'pairs', 'q', 'k', 'v', 'null']);
    expect(j.n_null).toBe(200);
    expect(j.seed).toBe(1);
    const P = (L * (L - 1)) / 2;
    expect(j.pairs).toHaveLength(P);
    expect(j.pairs[0]).toEqual([0, 1]);
    expect(j.pairs.at(-1)).toEqual([L - 2, L - 1]);
    for (const k of ['q', 'k', 'v']) {
      expect(j[k]).toHaveLength(P * NH * NH);
      expect(j[k].every((x) => Number.isFinite(x) && x >= 0 && x <= 1)).toBe(true);
      const n = j.null[k];
      expect(Object.keys(n)).toEqual(['mean', 'lo', 'hi']);
      expect(n.lo).toBeLessThanOrEqual(n.mean);
      expect(n.mean).toBeLessThanOrEqual(n.hi);
    }
    const s = json(ev('--kind', 'composition', '--n-null', '20', '--seed', '7'));
    expect([s.n_null, s.seed]).toEqual([20, 7]);
    expect(s.q).toEqual(j.q); // the weights' scores do not depend on the null
    const none = json(ev('--kind', 'composition', '--n-null', '0'));
    expect(none.null.k).toEqual({ mean: null, lo: null, hi: null });
  });

  it.each([
    ['a pair kind without --corrupt', 2, ['--kind', 'trace', '--text', CLEAN], /--kind trace needs --corrupt/],
    ['unequal lengths', 2, ['--kind', 'pattern-value', '--text', CLEAN, '--corrupt', 'The woman said'], /4 tokens.*3/],
    ['one answer outside dla', 2, ['--kind', 'pattern-value', ...pair.slice(0, 4), '--answers', '339'], /--answers '339'/],
    ['a bad --direction', 2, ['--kind', 'path', ...pair, '--direction', 'sideways'], /--direction 'sideways'/],
    ['--n-null out of range', 2, ['--kind', 'composition', '--n-null', '100001'], /--n-null '100001'.*out of range/],
    ['a seed beyond 32 bits', 2, ['--kind', 'composition', '--seed', '4294967296'], /32-bit/],
    ['composition with --text', 2, ['--kind', 'composition', '--text', CLEAN], /takes no --text/],
    ['--set with a new kind', 2, ['--kind', 'dla', '--set', 'heldout'], /--set works with --kind edge or tokens/],
    ['an unknown kind', 2, ['--kind', 'flow', '--text', CLEAN], /pattern-value, path, dla, value-norms, trace or composition/],
    ['the same answer twice', 1, ['--kind', 'dla', '--text', CLEAN, '--answers', '339,339'], /same token 339/],
    ['the default answers agree', 1, ['--kind', 'trace', '--text', CLEAN, '--corrupt', CORRUPT], /same token/],
  ])('%s: message on stderr, exit %i, nothing on stdout', (_name, code, args, msg) => {
    const r = ev(...args);
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(msg);
  });

  it('the usage text and the CLI section of docs/c-api.md name every kind', () => {
    const r = cli(['--help']);
    const doc = readFileSync(join(root, 'docs/c-api.md'), 'utf8').split('\n## CLI')[1].split('\n## ')[0];
    for (const k of ['pattern-value', 'path', 'dla', 'value-norms', 'trace', 'composition', '--receivers',
      '--direction', '--freeze-mlp', '--n-null']) {
      expect(r.stdout).toContain(k);
      expect(doc).toContain(k);
    }
    for (const k of ['pattern-value', 'path', 'dla', 'value-norms', 'trace', 'composition'])
      expect(doc).toMatch(new RegExp(`--kind [^\\n]*\\b${k}\\b`));
  });
});

describe('hostile input: a text past the context, a 1 KiB token label, a temperature no float holds', () => {
  it('evidence on a text longer than the context is ETOOLONG before any grid is sized, with nothing on stdout', () => {
    const r = cli(['evidence', '--kind', 'edge', '--text', ' a'.repeat(60001)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/60001 tokens, but the model's context is \d+ \(n_positions\)/);
  });

  it('a token label of 1 024 bytes prints whole, not as ""', () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-longtok-'));
    try {
      cpSync(join(root, 'tests/fixtures/families/llama'), dir, { recursive: true });
      const tj = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
      const long = `<${'x'.repeat(1022)}>`; // 1 024 bytes (the most an added token may have), in the model's padded vocabulary
      tj.added_tokens.push({ id: 278, content: long, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tj));
      const r = cli(['tokenize', '--model', dir, '--text', long, '--json']);
      expect(r.code).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.ids).toContain(278);
      expect(j.tokens[j.ids.indexOf(278)]).toBe(long);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a temperature a float cannot hold is a usage error, not a NaN', () => {
    const r = cli(['generate', '--text', 'The storm', '--temperature', '3.5e38', '--max-new', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--temperature/);
  });
});
