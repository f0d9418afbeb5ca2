// pack.test.js — `npm pack` gives a tarball that installs into a fresh folder
// (`npm install --prefer-offline`: the tarballs come from the npm cache that
// `npm ci` of this repo filled; the registry is asked only for what the cache
// lacks, such as the dependencies' version lists on a fresh machine), and
// there the README example (the first js block of docs/npm-readme-section.md)
// runs in Node on the built-in model shipped in the tarball and prints the
// chapter sentence's attention. A second script checks both entries of the
// installed package against this repository's numbers.
//
// Runs `npm pack`, whose prepack script is `make wasm widget`.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHAPTER = 'Because the storm intensified , the ship finally sank .';
const BUILTIN_FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];

// npm without the npm_* variables of the `npx vitest` that runs us.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
function run(cmd, args, cwd, timeout = 300_000) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout || '', stderr: r.stderr || '', error: r.error };
}

let tmp, tgz, packed, fresh;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'attnlab-pack-'));
  const r = run('npm', ['pack', '--json', '--pack-destination', tmp], ROOT);
  if (r.code !== 0) throw new Error(`npm pack failed (${r.code}): ${r.stderr}`);
  // prepack's output (make) precedes the JSON on stdout
  const json = r.stdout.slice(r.stdout.search(/^\[/m));
  packed = JSON.parse(json)[0];
  tgz = join(tmp, packed.filename);
  fresh = join(tmp, 'fresh');
  mkdirSync(fresh);
  writeFileSync(join(fresh, 'package.json'), JSON.stringify({ name: 'fresh', private: true, type: 'module' }));
  const i = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tgz], fresh);
  if (i.code !== 0) throw new Error(`npm install of the tarball failed (${i.code}): ${i.stderr}`);
}, 600_000);
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('packs the entries, the wasm, the declarations and the built-in model, and nothing else', () => {
    const paths = packed.files.map((f) => f.path).sort();
    for (const p of ['package.json', 'README.md', 'web/src/index.js', 'web/src/worker-client.js', 'web/src/worker.js',
      'web/src/model.js', 'web/src/sources.js', 'web/src/analysis.js', 'web/src/core/wasm.js', 'web/src/core/errors.js',
      'web/dist/attnlab.wasm', 'web/dist/attnlab-mt.wasm', 'web/dist/attnlab-relaxed.wasm', 'web/dist/attnlab-relaxed-mt.wasm',
      'web/src/core/thread.js', 'web/src/core/threads.js',
      'web/src/core/imports.js', 'types/index.d.ts', 'types/worker.d.ts',
      // 'attnlab/widget': its sources for bundlers, the prebuilt module for pages without a build step
      'web/src/widget/index.js', 'web/src/widget/worker.js', 'web/dist/widget/attnlab-widget.js', 'web/dist/widget/attnlab-widget-worker.js', 'types/widget.d.ts',
      // its posters: the default views drawn from the built-in model (make widget)
      'web/dist/widget/posters/en/fig1.svg', 'web/dist/widget/posters/zh/fig4.svg'])
      expect(paths).toContain(p);
    for (const f of BUILTIN_FILES)
      expect(paths, `the tarball lacks the built-in model's ${f}: built-in model missing (train it: make model)`).toContain(`models/brown-gpt2/${f}`);
    const allowed = /^(package\.json|README\.md|LICENSE|web\/src\/[\w-]+\.js|web\/src\/core\/[\w-]+\.js|web\/src\/(widget|figures|ui)\/[\w-]+\.js|web\/dist\/attnlab(-relaxed)?(-mt)?\.wasm|web\/dist\/widget\/[\w.-]+\.(js|wasm)|web\/dist\/widget\/posters\/(en|zh)\/fig[1-4](-full)?\.svg|types\/\w+\.d\.ts|models\/brown-gpt2\/(evidence\/)?[\w.-]+)$/;
    expect(paths.filter((p) => !allowed.test(p))).toEqual([]);
    expect(paths.some((p) => p.startsWith('tests/') || p.startsWith('c/') || p.startsWith('build/'))).toBe(false);
    const wasm = packed.files.find((f) => f.path === 'web/dist/attnlab.wasm');
    expect(wasm.size).toBeLessThanOrEqual(440 * 1024); // the limit of wasm-forward.test.js (docs/BENCHMARKS.md)
  });

  it('installs with no install scripts', () => {
    const pkg = JSON.parse(readFileSync(join(fresh, 'node_modules/attnlab/package.json'), 'utf8'));
    expect(pkg.name).toBe('attnlab');
    for (const k of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts?.[k]).toBeUndefined();
    expect(existsSync(join(fresh, 'node_modules/attnlab/web/dist/attnlab.wasm'))).toBe(true);
  });
});

describe('in the fresh folder', () => {
  it('the README example runs on the built-in model and prints the chapter sentence attention', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const md = readme.slice(readme.indexOf('## npm'));  // the README's npm section: its first example
    const example = /```js\n([\s\S]*?)```/.exec(md)[1];
    expect(example).toMatch(/from 'attnlab'/);
    writeFileSync(join(fresh, 'example.mjs'), example);
    const r = run(process.execPath, ['example.mjs'], fresh, 120_000);
    const present = BUILTIN_FILES.every((f) => existsSync(join(fresh, 'node_modules/attnlab/models/brown-gpt2', f)));
    if (!present) expect(r.stderr).toMatch(/built-in model missing/);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('Because| the| storm| intensified| ,| the| ship| finally| sank| .');
    // the " sank" row of the last layer's head average: 10 probabilities, zero above the diagonal, summing to 1
    const row = lines[1].replace('row of " sank":', '').trim().split(' ').map(Number);
    expect(row).toHaveLength(10);
    expect(row[9]).toBe(0);
    expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1)).toBeLessThanOrEqual(0.06); // printed to 2 decimals
    const dag = /^DAG score (\d\.\d{3}) \(uniform causal attention: (\d\.\d{3})\)$/.exec(lines[2]);
    expect(dag).not.toBeNull();
    expect(dag[2]).toBe('0.707');
    expect(lines[3]).toMatch(/^next token: ".*" → after do\(\): ".*"$/);
  });

  it("both entries of the installed package give this repository's numbers (tiny model, main thread and worker)", async () => {
    cpSync(join(ROOT, 'tests/fixtures/tiny'), join(fresh, 'tiny'), { recursive: true });
    const script = `
      import { loadModel, dagScore } from 'attnlab';
      import * as worker from 'attnlab/worker';
      const text = ${JSON.stringify(CHAPTER)};
      const opts = { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 18, col: 3 }], captureQK: { layer: 2, head: 1 } };
      const m = await loadModel('./tiny');
      const r = m.run(text, opts);
      m.dispose();
      const wm = await worker.loadModel('./tiny');
      const wr = await wm.run(text, opts);
      await wm.dispose();
      console.log(JSON.stringify({ att: Array.from(r.attention(2, 1)), q: Array.from(r.q), watt: Array.from(wr.attention(2, 1)),
                                   dag: r.dagScore, check: dagScore(r.attention(2, 'avg')) }));
    `;
    writeFileSync(join(fresh, 'check.mjs'), script);
    const r = run(process.execPath, ['check.mjs'], fresh, 120_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const m = await loadModel(join(ROOT, 'tests/fixtures/tiny'));
    const ref = m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 18, col: 3 }], captureQK: { layer: 2, head: 1 } });
    m.dispose();
    expect(out.att).toEqual(Array.from(ref.attention(2, 1)));
    expect(out.watt).toEqual(out.att);
    expect(out.q).toEqual(Array.from(ref.q));
    expect(out.dag).toBe(ref.dagScore);
    expect(out.check).toBe(ref.dagScore);
  });
});
