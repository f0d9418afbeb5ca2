// docs-numbers.test.js — every number the docs quote comes from one script
// (scripts/docs-numbers.mjs, `make docs-numbers`):
//   1. the committed snippets in docs/generated/ are what the script computes now
//      (stale after a retraining until `make docs-numbers` is run);
//   2. each snippet is included by a page, and each include names a snippet;
//   3. no page quotes a decimal that is neither in the script's output, nor a
//      closed-form constant computed here, nor a cited figure listed below.

import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { computeNumbers, renderSnippets, numbersJson, ROOT, OUT_DIR } from '../../scripts/docs-numbers.mjs';
import { nullDagScore } from '../../web/src/index.js';
import { uniformRoles, uniformInduction } from '../../web/src/page/heads.js';

let numbers, files;

beforeAll(async () => {
  numbers = await computeNumbers();
  files = { ...renderSnippets(numbers), 'numbers.json': numbersJson(numbers) };
}, 180_000);

// docs/**/*.md (not the generated snippets, the build output or public/) and the README
function pages(dir = 'docs', out = ['README.md']) {
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) { if (!e.name.startsWith('.') && !['generated', 'public', 'node_modules'].includes(e.name)) pages(p, out); }
    else if (e.name.endsWith('.md')) out.push(p);
  }
  return out;
}

describe('docs/generated is what scripts/docs-numbers.mjs computes', () => {
  it('every snippet and numbers.json are up to date (else: make docs-numbers)', () => {
    // evidence-sets.*: scripts/evidence-sets-numbers.mjs,
    // minutes of forward passes over the built-in sets (its numbers are the API's and the CLI's, which
    // tests/js/evidence-sets-api.test.js checks against each other and the float64 reference); circuits.*:
    // scripts/circuits-numbers.mjs, a minute of forward passes over the pair sets (its functions are checked
    // against the float64 reference in tests/js/circuits.test.js); none is recomputed here
    const committed = readdirSync(OUT_DIR).filter((f) => f !== '.gitignore' &&
      !f.startsWith('evidence-sets.') && !f.startsWith('circuits.')).sort();
    expect(committed).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files))
      expect(readFileSync(join(OUT_DIR, name), 'utf8'), `docs/generated/${name} is stale: run make docs-numbers`).toBe(text);
  });

  it('the numbers are the model\'s: a few checked against the API directly', () => {
    expect(numbers.chapter.null).toBeCloseTo(nullDagScore(numbers.chapter.T), 12);
    expect(numbers.chapter.fullNull).toBeCloseTo((numbers.chapter.T - 1) / (2 * numbers.chapter.T), 12);
    expect(numbers.chapter.lowerPos).toBe(numbers.chapter.lower);      // the causal mask makes the lower half positive
    expect(numbers.importance.curve[0]).toBeCloseTo(numbers.importance.baseLoss, 5);
    expect(numbers.importance.lossMin).toBe(Math.min(...numbers.importance.curve));
  });

  it('each snippet is included by a page, and each include names an existing snippet', () => {
    const included = new Set();
    for (const p of pages()) {
      const text = readFileSync(join(ROOT, p), 'utf8');
      for (const m of text.matchAll(/<!--@include:\s*([^\s]+?)\s*-->/g)) {
        const target = join(ROOT, dirname(p), m[1]);
        expect(existsSync(target), `${p} includes ${m[1]}`).toBe(true);
        included.add(target);
      }
    }
    for (const name of Object.keys(files).filter((n) => n.endsWith('.md'))) expect(included.has(join(OUT_DIR, name)), name).toBe(true);
  });
});

// Decimals a page may state without the script: closed forms (computed here) and cited figures.
function closedForms() {
  const v = [];
  for (const T of [10, 20, 100, 129]) v.push(nullDagScore(T), (T - 1) / (2 * T), nullDagScore(T, 'window:3'));
  const ramp = (T) => Array.from({ length: T }, (_, k) => k);     // distinct ids: the uniform prev/sink scores
  for (const T of [100, 129]) { const u = uniformRoles(ramp(T)); v.push(u.prev, u.sink); }
  v.push(uniformInduction(50), Math.log(64), 0.138 /* Amit–Gutfreund–Sompolinsky α_c */, 0.97 /* their overlap at α_c */);
  return v;
}
const CITED = new Map([
  ['0.810', "the chapter's reported GPT-2 DAG score, cited as its claim"],
  ['1.02', 'wasm memory / file size for a distilgpt2-sized checkpoint, printed by tests/js/memory.test.js'],
  ['1.15', 'the bound tests/js/memory.test.js asserts'],
  ['0.95', 'a threshold (a setting, not a measurement)'],
  ['0.15', 'a threshold of the lineage page (a setting)'],
  ['0.25', 'the top of the role grids\' colour scale (a setting)'],
  ['1.03', 'half storage: wasm memory / weights for Llama-3.2-1B, from its published size (architecture.md, reasoned, not measured)'],
  ['2.47', 'Llama-3.2-1B\'s published BF16 weights in GB'],
]);

describe('no page quotes a number that the script did not produce', () => {
  it('every decimal with two or more places is generated, closed-form or a listed citation', () => {
    const known = [];
    const collect = (x) => {
      if (typeof x === 'number') known.push(x);
      else if (x && typeof x === 'object') Object.values(x).forEach(collect);
    };
    collect(numbers);
    known.push(...closedForms());
    const matches = (s) => {
      const d = s.split('.')[1].length, x = Number(s);
      return known.some((k) => Math.abs(k - x) <= 0.5 * 10 ** -d + 1e-12);
    };
    const bad = [];
    for (const p of pages()) {
      if (p === 'docs/BENCHMARKS.md') continue;      // timings: make bench, by design not here
      const text = readFileSync(join(ROOT, p), 'utf8')
        .replace(/```[\s\S]*?```/g, '')                // code blocks (API examples)
        .replace(/arXiv[:\s]*\d{4}\.\d{4,5}/gi, '');   // citations
      for (const m of text.matchAll(/(?<![\d.])\d+\.\d{2,}(?![\d.])/g)) {
        if (CITED.has(m[0]) || matches(m[0])) continue;
        bad.push(`${p}: ${m[0]}`);
      }
    }
    expect(bad, 'numbers not from `make docs-numbers` (or add the closed form / citation here)').toEqual([]);
  });
});
