// recipes.test.js — docs/architecture.md's recipes ("Add an intervention kind", "Add a figure") followed
// backwards: every kind and every figure that exists today is in every place its recipe names, so a
// recipe that forgets a place (or code that grew one more) fails here, not in a contributor's hands.
import { describe, it, expect } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { INTERVENTION_KINDS } from '../../web/src/core/abi.js';

const ROOT = new URL('../../', import.meta.url);
const read = (p) => readFileSync(new URL(p, ROOT), 'utf8');
const recipes = read('docs/architecture.md').split('## Recipes')[1].split('\n## ')[0];

/** The numbered places of one recipe: the backticked paths of its items. */
function placesOf(title) {
  const text = recipes.split(`**${title}**`)[1].split('\n**')[0].split('\nOptional:')[0];
  return [...new Set([...text.matchAll(/`((?:c|web|scripts|types|tests|docs)\/[\w./-]+\.(?:h|c|js|mjs|ts|py|md|html))`/g)].map((m) => m[1]))];
}

// the C name of each JS kind (ALAB_<C>), from the generated boundary
const KINDS = Object.keys(INTERVENTION_KINDS);
const C_NAME = Object.fromEntries(read('scripts/gen-abi.mjs').match(/INTERVENTION_KINDS: \{([^}]*)\}/)[1]
  .split(',').map((kv) => kv.split(':').map((x) => x.trim().replace(/'/g, ''))));

describe('the recipe "Add an intervention kind"', () => {
  const places = placesOf('Add an intervention kind');

  it('names the places it counts, and each exists', () => {
    expect(places.length).toBeGreaterThanOrEqual(9);
    expect(places.filter((p) => !existsSync(new URL(p, ROOT)))).toEqual([]);
    expect(KINDS.sort()).toEqual(['ablate', 'hard', 'scaleK', 'scaleQ', 'soft', 'swapQK']);
  });

  it('every kind is in every place: its C name in the C and its docs, its JS name elsewhere', () => {
    const missing = [];
    for (const p of places.filter((x) => x !== 'web/src/core/abi.js')) {   // abi.js is generated
      const text = read(p);
      const cSide = /\.(h|c)$/.test(p) || p === 'docs/c-api.md';
      for (const k of KINDS) {
        const name = cSide ? `ALAB_${C_NAME[k]}` : k;
        const found = cSide ? text.includes(name) : new RegExp(`['"\`]${k}['"\`]|\\b${k}:`).test(text);
        if (!found) missing.push(`${p}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the recipe "Add a figure"', () => {
  const places = placesOf('Add a figure');
  const FIGS = ['fig1', 'fig2', 'fig3', 'fig4'];

  it('names the places it counts, and each exists (fig5.js is the one to write)', () => {
    expect(places.length).toBeGreaterThanOrEqual(12);
    expect(places.filter((p) => !p.includes('fig5') && !existsSync(new URL(p, ROOT)))).toEqual([]);
  });

  it('every chapter figure is in every place', () => {
    const where = {
      'web/src/figures/index.js': (f) => new RegExp(`from '\\./${f}\\.js'`),
      'web/src/figures/names.js': (f) => new RegExp(`\\b${f}:`),
      'web/src/ui/figure-args.js': (f) => new RegExp(`case '${f}'`),
      'web/index.html': (f) => new RegExp(`id="${f}"`),
      'web/src/page/main.js': (f) => new RegExp(`function draw${f[0].toUpperCase()}${f.slice(1)}\\b`),
      'web/src/widget/draw.js': (f) => new RegExp(`\\b${f}:`),
      'scripts/figures.mjs': (f) => new RegExp(`figureArgs\\('${f}'`),
      'tests/js/structure.test.js': (f) => new RegExp(`'${f}\\.js'`),
    };
    expect(Object.keys(where).filter((p) => !places.includes(p))).toEqual([]);
    const missing = [];
    for (const [p, re] of Object.entries(where)) for (const f of FIGS) if (!re(f).test(read(p))) missing.push(`${p}: ${f}`);
    for (const f of FIGS) if (!existsSync(new URL(`web/src/figures/${f}.js`, ROOT))) missing.push(`web/src/figures/${f}.js`);
    expect(missing).toEqual([]);
  });
});
