// structure.test.js — the shape of the JS layers (docs/architecture.md): no function in web/src
// over 80 lines, the page, the widget and the lineage page share code only through ui/ and
// figures/ (never import each other), and each figures/ module exports what docs/architecture.md
// describes (a module that grows a new export is a deliberate change to this list).

import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from '@babel/parser';

const ROOT = new URL('../../', import.meta.url).pathname;
const SRC = join(ROOT, 'web/src');

function jsFiles(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? jsFiles(p) : p.endsWith('.js') ? [p] : [];
  });
}

/** Every function, method and arrow in a module's source, with its name and length in lines. */
function functionsOf(source) {
  const ast = parse(source, { sourceType: 'module' });
  const out = [];
  const visit = (n, name) => {
    if (!n || typeof n.type !== 'string') return;
    if (/Function|ClassMethod|ClassPrivateMethod|ObjectMethod/.test(n.type)) {
      const nm = (n.id && n.id.name) || (n.key && (n.key.name || n.key.id?.name)) || name || '(anonymous)';
      out.push({ name: nm, line: n.loc.start.line, lines: n.loc.end.line - n.loc.start.line + 1 });
    }
    const inner = n.type === 'VariableDeclarator' ? n.id?.name : n.type === 'ObjectProperty' ? n.key?.name : name;
    for (const k of Object.keys(n)) {
      if (k === 'loc' || k === 'start' || k === 'end') continue;
      const v = n[k];
      if (Array.isArray(v)) v.forEach((c) => visit(c, inner));
      else if (v && typeof v.type === 'string') visit(v, inner);
    }
  };
  visit(ast.program);
  return out;
}

describe('web/src: short functions', () => {
  it('no function is longer than 80 lines', () => {
    const files = jsFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const long = files.flatMap((f) => functionsOf(readFileSync(f, 'utf8')).filter((fn) => fn.lines > 80)
      .map((fn) => `${relative(ROOT, f)}:${fn.line} ${fn.name} (${fn.lines} lines)`));
    expect(long).toEqual([]);
  });

  it('the measure finds a long function, a long method and a long arrow, with their names', () => {
    const body = Array.from({ length: 85 }, (_, k) => `  x += ${k};`).join('\n');
    const src = `export function a() {\n${body}\n}\nclass K { #m() {\n${body}\n} }\nconst f = () => {\n${body}\n};\n` +
      `function short() { return 1; }\n`;
    const long = functionsOf(src).filter((fn) => fn.lines > 80).map((fn) => [fn.name, fn.lines]);
    expect(long).toEqual([['a', 87], ['m', 87], ['f', 87]]);
  });
});

describe('page, widget and lineage share code only through ui/ and figures/', () => {
  const APPS = ['page', 'widget', 'lineage'];
  for (const app of APPS) {
    it(`${app}/ imports nothing from the other two`, () => {
      const bad = [];
      for (const f of jsFiles(join(SRC, app))) {
        const src = readFileSync(f, 'utf8');
        for (const m of src.matchAll(/(?:from|import)\s+'\.\.\/(page|widget|lineage)\//g)) {
          if (m[1] !== app) bad.push(`${relative(ROOT, f)} imports ../${m[1]}/`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});

// docs/architecture.md: every wasm export is called through a method of core/'s AttnlabWasm (wasm.js,
// measure-exports.js); nothing outside core/ reaches the raw exports (w.fn.alab_…, w.fn[name]).
const RAW_EXPORT = /fn\.alab_|\.fn\[/;

describe('one binding layer: only core/ calls a wasm export', () => {
  it('no module under web/src outside core/ mentions fn.alab_ or .fn[', () => {
    const files = jsFiles(SRC).filter((f) => !relative(SRC, f).startsWith('core/'));
    expect(files.length).toBeGreaterThan(40);
    const bad = files.flatMap((f) => readFileSync(f, 'utf8').split('\n')
      .flatMap((line, k) => (RAW_EXPORT.test(line) ? [`${relative(ROOT, f)}:${k + 1}: ${line.trim()}`] : [])));
    expect(bad).toEqual([]);
  });

  it('the check sees both spellings, and core/ has the calls it moved there', () => {
    expect(['w.check(w.fn.alab_spearman(out, a, b, n));', "w.fn['alab_x']()", 'this.fn[name]'].map((l) => RAW_EXPORT.test(l)))
      .toEqual([true, true, true]);
    expect(['w.spearman(out, a, b, n);', 'const fn = 1; fn(x);'].some((l) => RAW_EXPORT.test(l))).toBe(false);
    expect(readFileSync(join(SRC, 'core/measure-exports.js'), 'utf8')).toMatch(/this\.fn\.alab_edge_knockout\(/);
  });
});

const FIGURES_EXPORTS = {
  'axes.js': ['SIN45', 'Y_TITLE_MIN', 'colorbar', 'fitYTitle', 'labelNeed', 'labelStep', 'yTitleLines'],
  'charts.js': ['diffBars', 'gridMap', 'layerBars', 'lineChart', 'lossLines'],
  'circuits.js': ['compositionStrip', 'headGrid', 'sourceBars'],
  'checks.js': ['asMatrix', 'checkLang', 'sizeOf'],
  'colour.js': ['greensD', 'luminance', 'rdBuR', 'textColorOn', 'ylOrRd'],
  'delta.js': ['deltaBars', 'deltaMaps'],
  'display-do.js': ['hardDo', 'softDo'],
  'evidence.js': ['groupedBars', 'intervalChart', 'scatter'],
  'export.js': ['CHAPTER_SCALE', 'FIGURE_FILES', 'pngSize', 'svgToPng'],
  'fig1.js': ['figAttentionAsymmetry'],
  'fig2.js': ['figOuterProduct', 'outerProductDemo', 'softmaxScores'],
  'fig3.js': ['dagEdges', 'figDag'],
  'fig4.js': ['figDoIntervention'],
  'heatmap.js': ['MISSING_FILL', 'annotations', 'heatmapPanel', 'vectorCells'],
  'index.js': ['CHAPTER_SCALE', 'FIGSIZE', 'FIGURE_FILES', 'FONT_FAMILY', 'FONT_FAMILY_ZH', 'SVG_NS', 'dagEdges',
    'figAttentionAsymmetry', 'figDag', 'figDoIntervention', 'figOuterProduct', 'h', 'hardDo', 'outerProductDemo',
    'softDo', 'softmaxScores', 'textOf', 'toElement', 'toString', 'tokenLabel', 'walk'],
  'layout.js': ['FIGSIZE', 'PAD', 'figSize', 'layoutFigure', 'titleRoom'],
  'lineage.js': ['LINEAGE_COLORS', 'crossover', 'figGrid', 'figHistogram', 'figLines', 'figModern2D', 'toElement', 'toString'],
  'names.js': ['CHAPTER_SCALE', 'FIGURE_FILES'],
  'png-meta.js': ['crc32', 'pngChunks', 'pngMeta', 'pngWithMeta'],
  'raster.js': ['rasterImage', 'rasterize', 'setRasterThreshold', 'vectorOnly'],
  'svg.js': ['SVG_NS', 'TAGS', 'escapeAttr', 'escapeText', 'h', 'num', 'rasterNode', 'textOf', 'toElement', 'toString', 'walk'],
  'text.js': ['FONT', 'FONT_FAMILY', 'FONT_FAMILY_ZH', 'INK', 'blockHeight', 'fmt2', 'fmt3', 'fmtValue', 'lineWidth',
    'richText', 'textWidth', 'titleBlock', 'tokenLabel', 'wrapLines'],
};

describe('figures/: one concept a file, each with its export list', () => {
  it('the modules are the listed ones', () => {
    expect(readdirSync(join(SRC, 'figures')).filter((n) => n.endsWith('.js')).sort()).toEqual(Object.keys(FIGURES_EXPORTS).sort());
  });
  for (const [file, names] of Object.entries(FIGURES_EXPORTS)) {
    it(`figures/${file} exports ${names.length} names`, async () => {
      const m = await import(join(SRC, 'figures', file));
      expect(Object.keys(m).sort()).toEqual([...names].sort());
    });
  }
});
