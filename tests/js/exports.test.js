// exports.test.js — the public API is deliberate: the exact export lists of
// 'attnlab' (web/src/index.js) and 'attnlab/worker' (web/src/worker-client.js),
// the package.json exports map that names them, and the TypeScript
// declarations, which must declare exactly the same values.

import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as main from '../../web/src/index.js';
import * as worker from '../../web/src/worker-client.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

const WORKER_PUBLIC = [
  'AttnlabError', 'ERROR_CODES', 'alignTokens', 'asymmetry', 'dagScore', 'displayDo', 'entropy', 'headAverage',
  'loadModel', 'nextTokenDiff', 'nullDagScore', 'outerProduct',
];
// The lineage demos (web/src/lineage.js) are in the main entry only: they run
// on their own small wasm instance, synchronously, and need no worker.
// randomTwin (web/src/twins.js) too: it builds a Model on the main thread from the trained one's files; and
// controlledEvidence (web/src/verdicts.js), which builds twins.
const PUBLIC = [...WORKER_PUBLIC, 'GLYPH_SIDE', 'HOPFIELD_CAPACITY', 'Lineage', 'loadLineage', 'randomTwin', 'controlledEvidence'].sort();
// 'attnlab/widget' (web/src/widget/index.js): the custom elements and their configuration.
const WIDGET_PUBLIC = ['AttnlabFigure', 'AttnlabLab', 'CHAPTER_SENTENCE', 'FIGURES', 'VERSION', 'configure', 'stats'];

// Value names a .d.ts exports: `export function|const|class X` and `export { X, ... } from`.
function declaredValues(file) {
  const src = readFileSync(join(ROOT, file), 'utf8').replace(/\/\/.*$/gm, '');
  const names = new Set();
  for (const m of src.matchAll(/^export\s+(?:declare\s+)?(?:function|const|class)\s+(\w+)/gm)) names.add(m[1]);
  for (const m of src.matchAll(/^export\s*\{([^}]*)\}\s*from/gm))
    for (const n of m[1].split(',').map((s) => s.trim()).filter(Boolean)) names.add(n.split(/\s+as\s+/).pop());
  return [...names].sort();
}

describe('the public export lists', () => {
  it("'attnlab' exports exactly the public API", () => {
    expect(Object.keys(main).sort()).toEqual(PUBLIC);
  });

  it("'attnlab/worker' exports the same names but the lineage demos and randomTwin, with its own loadModel", () => {
    expect(Object.keys(worker).sort()).toEqual(WORKER_PUBLIC);
    expect(worker.loadModel).not.toBe(main.loadModel);
    for (const name of WORKER_PUBLIC.filter((n) => n !== 'loadModel')) expect(worker[name]).toBe(main[name]);
  });

  it('every export has the kind the docs give it', () => {
    expect(typeof main.loadModel).toBe('function');
    expect(new main.AttnlabError('ERANGE', 'x')).toBeInstanceOf(Error);
    expect(Object.isFrozen(main.ERROR_CODES)).toBe(true);
    expect([...main.ERROR_CODES].sort()).toEqual([
      'EABORT', 'EDISPOSED', 'EDTYPE', 'EEMPTY', 'EFORMAT', 'EINVAL', 'EIO', 'EJSON', 'ELIMIT', 'EMERGES', 'EMISSING',
      'ENAN', 'ENOMEM', 'ERANGE', 'ESHAPE', 'ESTATE', 'ETHREAD', 'ETOOLONG', 'ETYPE', 'EVOCAB', 'EWASM', 'ECONFIG',
      'ETIMEDOUT', 'EINTERNAL', 'EMASKED',
    ].sort());
  });
});

describe('package.json', () => {
  it('maps ., ./worker and ./widget to their files, with their declarations', () => {
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({ types: './types/index.d.ts', default: './web/src/index.js' });
    expect(pkg.exports['./worker']).toEqual({ types: './types/worker.d.ts', default: './web/src/worker-client.js' });
    expect(pkg.exports['./widget']).toEqual({ types: './types/widget.d.ts', default: './web/src/widget/index.js' });
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './package.json', './widget', './worker']);
    expect(pkg.main).toBe('./web/src/index.js');
    expect(pkg.types).toBe('./types/index.d.ts');
    expect(pkg.scripts.prepack).toBe('make wasm widget');   // the prebuilt widget (web/dist/widget/) is packed
    for (const k of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts[k]).toBeUndefined();
  });

  it('lists in "files" every module the entries import', () => {
    const listed = (f) => pkg.files.some((p) => f === p || (p.endsWith('/') && f.startsWith(p)));
    const seen = new Set();
    const visit = (rel) => {
      if (seen.has(rel)) return;
      seen.add(rel);
      expect(listed(rel), `${rel} is imported but not in "files"`).toBe(true);
      const src = readFileSync(join(ROOT, rel), 'utf8');
      for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/g))
        visit(join(rel, '..', m[1]).replace(/\\/g, '/'));
      for (const m of src.matchAll(/new URL\('(\.[^']+\.js)'/g)) visit(join(rel, '..', m[1]).replace(/\\/g, '/'));
    };
    visit('web/src/index.js');
    visit('web/src/worker-client.js');
    visit('web/src/widget/index.js');
    expect(seen.has('web/src/worker.js')).toBe(true);
    expect(seen.has('web/src/widget/worker.js')).toBe(true);
    expect(listed('web/dist/widget/attnlab-widget.js') && listed('types/widget.d.ts')).toBe(true);
    expect(seen.size).toBeGreaterThanOrEqual(7);
    expect(listed('web/dist/attnlab.wasm')).toBe(true);
    expect(listed('types/index.d.ts') && listed('types/worker.d.ts')).toBe(true);
    for (const f of ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'])
      expect(listed(`models/brown-gpt2/${f}`)).toBe(true);
  });

  it("Node resolves 'attnlab', 'attnlab/worker' and 'attnlab/widget' through the exports map", () => {
    const script = `import * as a from 'attnlab'; import * as b from 'attnlab/worker'; import * as c from 'attnlab/widget';
      console.log(JSON.stringify([Object.keys(a).sort(), Object.keys(b).sort(), Object.keys(c).sort()]));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([PUBLIC, WORKER_PUBLIC, WIDGET_PUBLIC]);
  });
});

describe('TypeScript declarations', () => {
  it('types/index.d.ts declares exactly the values of index.js', () => {
    expect(existsSync(join(ROOT, 'types/index.d.ts'))).toBe(true);
    expect(declaredValues('types/index.d.ts')).toEqual(PUBLIC);
  });

  it('types/worker.d.ts declares exactly the values of worker-client.js', () => {
    expect(declaredValues('types/worker.d.ts')).toEqual(WORKER_PUBLIC);
  });

  it('types/widget.d.ts declares exactly the values of widget/index.js', () => {
    expect(declaredValues('types/widget.d.ts')).toEqual(WIDGET_PUBLIC);
  });

  it('declare every method of Model and Result and every run option', () => {
    const d = readFileSync(join(ROOT, 'types/index.d.ts'), 'utf8');
    const w = readFileSync(join(ROOT, 'types/worker.d.ts'), 'utf8');
    for (const m of ['tokenize', 'decode', 'tokenBytes', 'run', 'generate', 'memoryUsage', 'dispose']) {
      expect(d).toMatch(new RegExp(`\\n\\s+${m}\\(`));
      expect(w).toMatch(new RegExp(`\\n\\s+${m}\\(`));
    }
    for (const o of ['interventions', 'ablate', 'mask', 'scale', 'captureQK', 'topK', 'maxTokens', 'temperature', 'seed',
      'onProgress', 'wasm', 'attention', 'headAverage', 'dagScores', 'layerDagScores', 'nullDagScore'])
      expect(d).toMatch(new RegExp(`\\b${o}\\??[(:]`));
  });
});
