// recipes.test.js — docs/architecture.md's recipes ("Add an intervention kind", "Add a figure", "Add a measure",
// "Add a model family") followed backwards: every kind, figure, measure and family that exists today is in every
// place its recipe names, so a recipe that forgets a place (or code that grew one more) fails here, not in a
// contributor's hands.
import { describe, it, expect } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { INTERVENTION_KINDS } from '../../web/src/core/abi.js';
import { MEASURES } from '../../web/src/measure-table.js';

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
  const path = /`((?:c|web|scripts|types|tests|docs)\/[\w./-]+\.(?:h|c|json|js|mjs|ts|py|md|html)|README\.md)`/;
  return recipe(title).items.map((item) => (item.match(path) || [])[1]).filter(Boolean);
}

describe('each recipe counts its files', () => {
  for (const title of ['Add an intervention kind', 'Add a figure', 'Add a measure', 'Add a model family']) {
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

describe('the recipe "Add a measure"', () => {
  const places = placesOf('Add a measure');
  const NAMES = Object.keys(MEASURES);
  // the measures' methods of both typings are generated into types/measures.d.ts, which both extend
  const generated = read('types/measures.d.ts');
  const dts = {
    model: generated.split('export interface WorkerModelMeasures')[0],
    worker: generated.split('export interface WorkerModelMeasures')[1],
  };

  it('names the files it counts, and each exists', () => {
    expect(places).toEqual(['c/src/circuits.c', 'c/include/attnlab.h', 'web/src/measure-table.js', 'web/src/measures.js',
      'types/index.d.ts', 'docs/api.md', 'docs/evidence.md', 'tests/c/test_circuits.c', 'tests/ref/circuits_ref.py',
      'tests/ref/gen_circuits.py', 'tests/js/circuits.test.js']);
    expect(places.filter((p) => !existsSync(new URL(p, ROOT)))).toEqual([]);
    expect(NAMES.length).toBeGreaterThanOrEqual(23);
  });

  it('every measure has its body in measures.js, of its name (a job where it runs in parts)', async () => {
    const bodies = await import('../../web/src/measures.js');
    expect(NAMES.filter((n) => typeof bodies[n] !== 'function')).toEqual([]);
    // what else measures.js exports is a helper of the Model, not a measure without a row
    expect(Object.keys(bodies).filter((n) => !NAMES.includes(n))).toEqual(['evidenceSet']);
  });

  it('every measure reaches the Model, the worker, the worker client and both typings', async () => {
    const { Model } = await import('../../web/src/model.js');
    const workerApi = await import('../../web/src/worker-client.js');
    const { connect } = await import('../../web/src/ui/protocol.js');
    // the worker's HANDLERS, as its answer to an unknown method lists them
    const raw = connect(new Worker(fileURLToPath(new URL('web/src/worker.js', ROOT))), { name: 'recipes' });
    const handlers = await raw.call('noSuchMethod', []).then(() => [], (e) => /\(known: ([^)]*)\)/.exec(e.message)[1].split(', '));
    await raw.terminate();
    const wm = await workerApi.loadModel(fileURLToPath(new URL('tests/fixtures/tiny', ROOT)));
    const missing = [];
    try {
      for (const n of NAMES) {
        if (typeof Model.prototype[n] !== 'function') missing.push(`Model#${n}`);
        if (!handlers.includes(n)) missing.push(`worker.js HANDLERS.${n}`);
        if (typeof wm[n] !== 'function') missing.push(`WorkerModel#${n}`);
        if (!new RegExp(`\\n\\s+${n}\\(`).test(dts.model)) missing.push(`types/measures.d.ts ModelMeasures#${n}`);
        if (!new RegExp(`\\n\\s+${n}\\(`).test(dts.worker)) missing.push(`types/measures.d.ts WorkerModelMeasures#${n}`);
      }
      // and a measure's answer crosses: (L·NH·T) norms from the worker
      const { nLayer, nHead } = wm.config, { ids } = await wm.tokenize('the storm sank');
      expect(await wm.valueNorms('the storm sank')).toHaveLength(nLayer * nHead * ids.length);
    } finally {
      await wm.dispose();
    }
    expect(handlers).toContain('run');
    expect(missing).toEqual([]);
  });

  it('every ALAB_MEASURE function of the C is exported by the builds and bound as a method of AttnlabWasm', async () => {
    const { parseMeasures, readSources } = await import('../../scripts/gen-abi.mjs');
    const { EXPORTS } = await import('../../web/src/core/abi.js');
    const { AttnlabWasm } = await import('../../web/src/core/wasm.js');
    const src = readSources(fileURLToPath(ROOT));
    const marked = [...parseMeasures(src.header), ...parseMeasures(src.wasmApiC)].map((f) => f.name);
    expect(marked).toContain('alab_composition_scores');
    const camel = (c) => c.replace(/^alab_/, '').replace(/_+([a-z0-9])/g, (_, x) => x.toUpperCase());
    expect(marked.filter((n) => !EXPORTS.includes(n))).toEqual([]);
    expect(marked.filter((n) => typeof AttnlabWasm.prototype[camel(n)] !== 'function')).toEqual([]);
    // and the Model interface both typings use is the generated one
    expect(read('types/index.d.ts')).toMatch(/export interface Model extends ModelMeasures \{/);
    expect(read('types/worker.d.ts')).toMatch(/export interface WorkerModel extends WorkerModelMeasures \{/);
  });

  it('every measure with a CLI part is a row of c/cli/measures.h; a measure over a set is reached by --set', () => {
    const h = read('c/cli/measures.h');
    const rows = Object.fromEntries([...h.matchAll(/X\((\w+), "([\w-]+)", ([01]),/g)].map((m) => [m[1], { kind: m[2], set: m[3] === '1' }]));
    const missing = [];
    for (const [n, s] of Object.entries(MEASURES)) {
      if (s.cli && !(rows[s.cli.id] && rows[s.cli.id].kind === s.cli.kind && rows[s.cli.id].set === !!s.cli.set)) missing.push(`${n}: ${s.cli.id}`);
      if (s.cli && s.cli.set && !MEASURES[s.cli.set].takesSet) missing.push(`${n}: --set computes ${s.cli.set}, not a set measure`);
    }
    expect(missing).toEqual([]);
    expect(Object.keys(rows).length).toBe(Object.values(MEASURES).filter((s) => s.cli).length);
    // the measures the CLI computes over a set: edge and tokens
    expect(Object.values(MEASURES).filter((s) => s.cli && s.cli.set).map((s) => s.cli.set)).toEqual(['edgeKnockoutSet', 'tokenKnockoutSet']);
  });

  it('every measure is in docs/api.md, and the section its row names exists', () => {
    const api = read('docs/api.md');
    const missing = [];
    for (const [n, s] of Object.entries(MEASURES)) {
      if (!api.includes(`\`${n}(`) && !api.includes(`\`${n}\``) && !api.includes(`### ${n}(`)) missing.push(`docs/api.md: ${n}`);
      const [file, section] = s.docs.split(' § ');
      if (!new RegExp(`^## ${section}\\. `, 'm').test(read(`docs/${file}`))) missing.push(`docs/${s.docs}: ${n}`);
    }
    expect(missing).toEqual([]);
  });
});

/** The rows of tests/c/families.h: {key, family, dir, published, refs}. */
function familyRows() {
  const h = read('tests/c/families.h');
  return [...h.matchAll(/\{"([\w-]+)", "(\w+)", "([^"]+)", (NULL|"[^"]+"),([^}]*)\}/g)].map((m) => ({
    key: m[1], family: m[2], dir: m[3], published: m[4] === 'NULL' ? null : m[4].slice(1, -1), refs: m[5].split(',').at(-1).trim() }));
}

describe('the recipe "Add a model family"', () => {
  const places = placesOf('Add a model family');
  const rows = familyRows();
  const configOf = (dir) => JSON.parse(read(`${dir}/config.json`));

  it('names the files it counts, and each exists (a published config is the one to add)', () => {
    expect(places.length).toBe(11);
    expect(places.filter((p) => !p.includes('NAME') && !existsSync(new URL(p, ROOT)))).toEqual([]);
  });

  it('tests/c/families.h has a row for every family of c/src/family.c, each with its fixture', () => {
    const types = [...read('c/src/family.c').matchAll(/^\s*\{"(\w+)", NORM_/gm)].map((m) => m[1]);
    expect(types.length).toBeGreaterThanOrEqual(7);
    expect([...new Set(rows.map((r) => r.family))].sort()).toEqual([...types].sort());
    expect(rows.filter((r) => configOf(r.dir).model_type !== r.family).map((r) => r.key)).toEqual([]);
  });

  it('every family of tests/c/families.h is in every place the recipe names', () => {
    const text = (p) => read(p);
    const where = {
      'c/src/family.c': (r) => text('c/src/family.c').includes(`{"${r.family}", NORM_`),
      'tests/c/families.h': (r) => existsSync(new URL(`${r.dir}/config.json`, ROOT)),
      'tests/ref/gen_families.py': (r) => !r.refs.includes('REF_FAMILIES') || new RegExp(`"${r.key}"`).test(text('tests/ref/gen_families.py')),
      'tests/fixtures/configs/NAME/config.json': (r) => !r.published ||
        (configOf(`tests/fixtures/configs/${r.published}`).model_type === r.family && existsSync(new URL(`tests/fixtures/configs/${r.published}/tensors.txt`, ROOT))),
      'tests/c/test_configs.c': (r) => !r.published || text('tests/c/test_configs.c').includes(`{"${r.published}", "${r.family}",`),
      'types/index.d.ts': (r) => /readonly family: ([^;]+);/.exec(text('types/index.d.ts'))[1].includes(`'${r.family}'`),
      'web/src/page/i18n.js': (r) => /const FAMILY = \{([^}]*)\}/.exec(text('web/src/page/i18n.js'))[1].includes(`${r.family}: '`),
      'docs/architecture.md': (r) => /^\| \| gpt2 \|.*$/m.exec(text('docs/architecture.md'))[0].includes(`| ${r.family} `),
      'docs/api.md': (r) => text('docs/api.md').includes(`\`${r.family}\``),
      'README.md': (r) => text('README.md').includes(`\`${r.family}\``),
      'c/include/attnlab.h': (r) => text('c/include/attnlab.h').includes(`"${r.family}"`),
    };
    expect([...places].sort()).toEqual(Object.keys(where).sort());
    const missing = [];
    for (const [p, has] of Object.entries(where)) for (const r of rows) if (!has(r)) missing.push(`${p}: ${r.key} (${r.family})`);
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
