// recipes.test.js — docs/architecture.md's recipes ("Add an intervention kind", "Add a figure") followed
// backwards: every kind and every figure that exists today is in every place its recipe names, so a
// recipe that forgets a place (or code that grew one more) fails here, not in a contributor's hands.
import { describe, it, expect } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { INTERVENTION_KINDS } from '../../web/src/core/abi.js';

const ROOT = new URL('../../', import.meta.url);
const read = (p) => readFileSync(new URL(p, ROOT), 'utf8');
const recipes = read('docs/architecture.md').split('## Recipes')[1].split('\n## ')[0];

/** One recipe: its numbered items, and the number of files its title says it touches. */
function recipe(title) {
  const text = recipes.split(`**${title}**`)[1].split('\n**')[0];
  const items = text.split('\nOptional:')[0].split(/(?:^|\s)\d+\. /).slice(1);
  return { items, written: Number((text.split('\n')[0].match(/— (\d+) files/) || [])[1]) };
}

/** The places of one recipe: the first backticked path of each numbered item. */
function placesOf(title) {
  const path = /`((?:c|web|scripts|types|tests|docs)\/[\w./-]+\.(?:h|c|js|mjs|ts|py|md|html))`/;
  return recipe(title).items.map((item) => (item.match(path) || [])[1]).filter(Boolean);
}

describe('each recipe counts its files', () => {
  for (const title of ['Add an intervention kind', 'Add a figure']) {
    it(`"${title}": the count in its title is the number of its steps`, () => {
      const { items, written } = recipe(title);
      expect(written).toBeGreaterThan(0);
      expect(items.length).toBe(written);
    });
  }
});

// the C name of each JS kind (ALAB_<C>), from the rows of IV_KINDS in interventions.c
const KINDS = Object.keys(INTERVENTION_KINDS);
const C_NAME = Object.fromEntries([...read('c/src/interventions.c').matchAll(/\{ALAB_(\w+), "(\w+)", IV_ON_/g)].map((m) => [m[2], m[1]]));

describe('the recipe "Add an intervention kind"', () => {
  const places = placesOf('Add an intervention kind');

  it('names the places it counts, and each exists', () => {
    expect(places.length).toBeGreaterThanOrEqual(7);
    expect(Object.keys(C_NAME).sort()).toEqual([...KINDS].sort());
    expect(places.filter((p) => !existsSync(new URL(p, ROOT)))).toEqual([]);
    expect(KINDS.sort()).toEqual(['ablate', 'hard', 'scaleK', 'scaleQ', 'soft', 'swapQK']);
  });

  it('every kind is in every place: its C name in the C and its docs, its JS name elsewhere', () => {
    const missing = [];
    for (const p of places) {
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
    expect(places.length).toBe(7);   // the eighth step is a browser test of the page, a file to write
    expect(places.filter((p) => !p.includes('fig5') && !existsSync(new URL(p, ROOT)))).toEqual([]);
  });

  it('every chapter figure is in every place', () => {
    const where = {
      'web/src/ui/figure-args.js': (f) => new RegExp(`\\['${f}', \\{`),
      'web/index.html': (f) => new RegExp(`id="${f}"`),
      'web/src/page/draw.js': (f) => new RegExp(`function draw${f[0].toUpperCase()}${f.slice(1)}\\b[\\s\\S]*\\['${f}', draw${f[0].toUpperCase()}${f.slice(1)}\\]`),
      'tests/js/structure.test.js': (f) => new RegExp(`'${f}\\.js'`),
    };
    expect(Object.keys(where).filter((p) => !places.includes(p))).toEqual([]);
    const missing = [];
    for (const [p, re] of Object.entries(where)) for (const f of FIGS) if (!re(f).test(read(p))) missing.push(`${p}: ${f}`);
    for (const f of FIGS) if (!existsSync(new URL(`web/src/figures/${f}.js`, ROOT))) missing.push(`web/src/figures/${f}.js`);
    expect(missing).toEqual([]);
  });
});

describe('the recipe "Add a figure", followed once: a fifth figure reaches the widget and npm run figures untouched', () => {
  it('a registered figure (entropy of each attention row) is drawn by both, from the same run', async () => {
    const { registerFigure, chapterFigures } = await import('../../web/src/ui/figure-args.js');
    const { layoutFigure } = await import('../../web/src/figures/layout.js');
    const { heatmapPanel } = await import('../../web/src/figures/heatmap.js');
    const { ylOrRd } = await import('../../web/src/figures/colour.js');
    const { toString } = await import('../../web/src/figures/svg.js');
    const { buildFigures, writeFigures, parseArgs } = await import('../../scripts/figures.mjs');
    const { modelFigure } = await import('../../web/src/widget/draw.js');
    const { mkdtempSync, readdirSync: ls, readFileSync: rd } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');

    // 1. the figure: a pure function of its arguments to an SVG node tree
    const figEntropy = ({ A, T, width = 600, lang = 'en', tight = false }) => {
      const H = Float64Array.from({ length: T }, (_, i) => {
        let h = 0;
        for (let j = 0; j < T; j++) { const p = A[i * T + j]; if (p > 0) h -= p * Math.log(p); }
        return h;
      });
      const panel = heatmapPanel({ values: H, R: 1, C: T, color: ylOrRd(0, Math.log(T)), title: ['row entropy (nats)'], role: 'entropy' });
      return layoutFigure({ width, height: 200, suptitle: [], panels: [panel], lang, tight, figure: 'fig5' });
    };
    // 2. its registry entry (draw, file name, run + view → arguments)
    const remove = registerFigure('fig5', {
      draw: figEntropy, file: 'ch09_causal_fig5_entropy',
      args: (r, v) => ({ A: r.attention(v.layer, v.head), T: r.T }),
    });
    try {
      expect(chapterFigures()).toEqual(['fig1', 'fig2', 'fig3', 'fig4', 'fig5']);
      // npm run figures: drawn and written with the others
      const o = parseArgs(['--text', 'Because the storm intensified , the ship finally sank .', '--out', mkdtempSync(join(tmpdir(), 'fig5-')),
        '--model', 'tests/fixtures/tiny', '--no-png']);
      const figs = await buildFigures(o);
      expect(Object.keys(figs)).toEqual(['fig1', 'fig2', 'fig3', 'fig4', 'fig5']);
      await writeFigures(figs, o);
      expect(ls(o.out)).toContain('ch09_causal_fig5_entropy.svg');
      const cells = [...rd(join(o.out, 'ch09_causal_fig5_entropy.svg'), 'utf8').matchAll(/data-role="entropy"/g)];
      expect(cells.length).toBe(1);
      // the widget: the same figure code, from a run's numbers
      const fig1 = toString(figs.fig1);
      expect(fig1).toContain('data-role="attention"');
      const T = Number((toString(figs.fig5).match(/data-j="(\d+)"/g) || []).length);
      expect(T).toBeGreaterThan(5);
      const r = { T, tokens: Array.from({ length: T }, (_, k) => `t${k}`), attention: () => { const A = new Float64Array(T * T); for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) A[i * T + j] = 1 / (i + 1); return A; } };
      const svg = toString(modelFigure({ figure: '5', base: r, lang: 'en', width: 600, layer: 0, head: 'avg', row: 0, col: 0, lambda: 3, modelName: 'x', config: { nLayer: 1, nHead: 1 } }));
      // uniform causal rows: the entropy of row i is ln(i + 1)
      const v = [...svg.matchAll(/data-j="(\d+)" data-v="([\d.e-]+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
      expect(v.length).toBe(T);
      for (const [j, x] of v) expect(x).toBeCloseTo(Math.log(j + 1), 5);
    } finally {
      remove();
    }
    expect(chapterFigures()).toEqual(['fig1', 'fig2', 'fig3', 'fig4']);
  });
});
