// typings.test.js — types/*.d.ts against the running code (issue 49 item 5). exports.test.js holds the
// modules' export lists; this test reads the declarations with @babel/parser (TypeScript) and compares the
// members of each declared class or interface with the objects the code makes: the methods and getters of
// the classes' prototypes and their instances' own fields (Model, Result, WorkerModel, Lineage, AttnlabError,
// the widget's elements), failing on a name missing from either side. Then every measure of measure-table.js
// must be declared on Model and on WorkerModel with its parameters (same names, same count), its result type,
// and an options type whose keys are the row's option names; and every `options` parameter anywhere must
// declare exactly the option names the code accepts, read from the code's own "unknown option … (known: …)"
// message.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from '@babel/parser';
import { loadModel } from '../../web/src/model.js';
import { AttnlabError, loadLineage, randomTwin } from '../../web/src/index.js';
import * as workerApi from '../../web/src/worker-client.js';
import * as widget from '../../web/src/widget/index.js';
import { MEASURES } from '../../web/src/measure-table.js';
import { RUN_OPTIONS } from '../../web/src/options.js';

const ROOT = new URL('../../', import.meta.url);
const TINY = fileURLToPath(new URL('tests/fixtures/tiny', ROOT));

// ---- the declarations ----------------------------------------------------------------------------------------

/** name -> its declaration nodes (interfaces merge), over the given files. */
function declarations(...files) {
  const decl = new Map();
  for (const f of files) {
    const program = parse(readFileSync(new URL(f, ROOT), 'utf8'), { sourceType: 'module', plugins: [['typescript', { dts: true }]] }).program;
    for (const st of program.body) {
      const d = st.type === 'ExportNamedDeclaration' ? st.declaration : st;
      if (!d || !d.id || !d.id.name) continue;
      if (!decl.has(d.id.name)) decl.set(d.id.name, []);
      decl.get(d.id.name).push(d);
    }
  }
  return decl;
}

const keyName = (k) => (k.type === 'Identifier' ? k.name : k.value);
const typeArgs = (t) => (t.typeParameters || t.typeArguments || { params: [] }).params;
const literals = (t) => (t.type === 'TSUnionType' ? t.types : [t]).map((x) => x.literal.value);
const paramsOf = (m) => m.parameters || m.params;
const returnOf = (m) => (m.typeAnnotation || m.returnType).typeAnnotation;

/**
 * The members of a type: name -> {node, optional, static}. Follows interfaces (merged, with what they extend),
 * classes (with a superclass declared in the same files), type aliases, type literals, intersections, Pick and
 * Omit; a name declared elsewhere (Error, HTMLElement) contributes nothing.
 */
function membersOf(decl, t) {
  const out = new Map();
  const add = (m, isStatic = false) => {
    if (m.type === 'TSIndexSignature' || (m.kind === 'constructor') || m.accessibility === 'private') return;
    out.set(keyName(m.key), { node: m, optional: !!m.optional, static: isStatic || !!m.static });
  };
  const merge = (other) => { for (const [k, v] of other) if (!out.has(k)) out.set(k, v); };
  if (t.type === 'TSTypeLiteral') t.members.forEach((m) => add(m));
  else if (t.type === 'TSIntersectionType') t.types.forEach((x) => merge(membersOf(decl, x)));
  else if (t.type === 'TSParenthesizedType') merge(membersOf(decl, t.typeAnnotation));
  else if (t.type === 'TSTypeReference' || t.type === 'TSExpressionWithTypeArguments') {
    const name = (t.typeName || t.expression).name, args = typeArgs(t);
    if (name === 'Pick' || name === 'Omit') {
      const keys = new Set(literals(args[1])), of = membersOf(decl, args[0]);
      for (const [k, v] of of) if (keys.has(k) === (name === 'Pick')) out.set(k, v);
    }
    for (const d of name === 'Pick' || name === 'Omit' ? [] : decl.get(name) || []) {
      if (d.type === 'TSInterfaceDeclaration') {
        d.body.body.forEach((m) => add(m));
        for (const e of d.extends || []) merge(membersOf(decl, e));
      } else if (d.type === 'ClassDeclaration') {
        d.body.body.forEach((m) => add(m, m.static));
        if (d.superClass) merge(membersOf(decl, { type: 'TSTypeReference', typeName: d.superClass }));
      } else if (d.type === 'TSTypeAliasDeclaration') merge(membersOf(decl, d.typeAnnotation));
    }
  }
  return out;
}

const ref = (name) => ({ type: 'TSTypeReference', typeName: { name } });
const declaredNames = (decl, name, { statics = false } = {}) =>
  [...membersOf(decl, ref(name))].filter(([, v]) => v.static === statics).map(([k]) => k).sort();

// ---- the runtime ---------------------------------------------------------------------------------------------

/** The public names of an object: its own enumerable fields and the methods and getters of its prototypes. */
function runtimeNames(obj, stop = Object.prototype) {
  const names = new Set(Object.keys(obj));
  for (let p = Object.getPrototypeOf(obj); p && p !== stop && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const n of Object.getOwnPropertyNames(p)) names.add(n);
  return [...names].filter((n) => n !== 'constructor' && !n.startsWith('_')).sort();
}

/** What one list lacks of another, both ways: {undeclared: in the code only, absent: in the types only}. */
function differ(declared, actual) {
  return { undeclared: actual.filter((n) => !declared.includes(n)), absent: declared.filter((n) => !actual.includes(n)) };
}
const SAME = { undeclared: [], absent: [] };

/** The option names a call accepts, from its "unknown option '…' (known: …)" error. */
async function knownOptions(call) {
  try {
    await call({ __unknownOption__: 1 });
  } catch (e) {
    const m = /unknown option '__unknownOption__' \(known: ([^)]*)\)/.exec(e.message);
    if (m) return m[1].split(', ').sort();
    throw e;
  }
  throw new Error('an unknown option was accepted');
}

const API = declarations('types/index.d.ts', 'types/worker.d.ts', 'types/measures.d.ts');
const WIDGET = declarations('types/widget.d.ts');

let model, wmodel, lineage, result, twin;
beforeAll(async () => {
  model = await loadModel(TINY);
  wmodel = await workerApi.loadModel(TINY);
  lineage = await loadLineage();
  result = model.run('Because the storm intensified');
  twin = await randomTwin(model, { kind: 'gpt2-init', set: ['Because the storm intensified'] });
}, 60_000);
afterAll(async () => {
  twin?.dispose();
  model?.dispose();
  await wmodel?.dispose();
  lineage?.dispose();
});

describe('every public member is declared, and every declared member exists', () => {
  const cases = [
    ['Model', () => runtimeNames(model)],
    ['TwinModel', () => runtimeNames(twin)],
    ['Result', () => runtimeNames(result)],
    ['WorkerModel', () => runtimeNames(wmodel)],
    ['Lineage', () => runtimeNames(lineage)],
    ['AttnlabError', () => runtimeNames(new AttnlabError('ERANGE', 'x'), Error.prototype)],
  ];
  for (const [name, names] of cases)
    it(`${name}: its methods, getters and fields`, () => {
      expect(names().length).toBeGreaterThan(1);
      expect(differ(declaredNames(API, name), names())).toEqual(SAME);
    });

  for (const name of ['AttnlabFigure', 'AttnlabLab'])
    it(`the widget's ${name}: its methods and static members (the browser's callbacks)`, () => {
      const C = widget[name];
      expect(differ(declaredNames(WIDGET, name), runtimeNames(Object.create(C.prototype)))).toEqual(SAME);
      const statics = Object.getOwnPropertyNames(C).filter((n) => !['length', 'name', 'prototype'].includes(n)).sort();
      expect(statics).toEqual(['observedAttributes']);
      expect(differ(declaredNames(WIDGET, name, { statics: true }), statics)).toEqual(SAME);
    });

  it('the check sees a missing and an extra name, through extends, Pick and merged interfaces', () => {
    const d = declarations('types/index.d.ts', 'types/measures.d.ts');
    const toy = parse('interface A extends Pick<B, "x" | "y"> { f(): void } interface A { g?: number } interface B { x: 1; y: 2; z: 3 }',
      { sourceType: 'module', plugins: ['typescript'] }).program.body;
    for (const n of toy) d.set(n.id.name, [...(d.get(n.id.name) || []), n]);
    expect(declaredNames(d, 'A')).toEqual(['f', 'g', 'x', 'y']);
    expect(declaredNames(API, 'Model')).toContain('disposed');
    expect(declaredNames(API, 'Model')).not.toContain('evidenceJob');
  });
});

describe('every measure of measure-table.js is declared on Model and WorkerModel', () => {
  const model = membersOf(API, ref('Model')), worker = membersOf(API, ref('WorkerModel'));

  for (const [name, spec] of Object.entries(MEASURES))
    it(`${name}(${spec.args.join(', ')}) → ${spec.result}`, () => {
      const m = model.get(name), w = worker.get(name);
      expect(m, `Model#${name} is not declared in types/index.d.ts`).toBeDefined();
      expect(w, `WorkerModel#${name} is not declared in types/worker.d.ts`).toBeDefined();
      const params = (x) => paramsOf(x.node).map((p) => p.name);
      expect(params(m)).toEqual(spec.args);
      expect(params(w)).toEqual(spec.args);
      const ret = returnOf(m.node), wret = returnOf(w.node);
      expect(ret.typeName.name).toBe(spec.result);
      expect(wret.typeName.name).toBe('Promise');
      expect(typeArgs(wret)[0].typeName.name).toBe(spec.result);
      // the options: the row's names, declared the same way on both; optional unless one of them is required
      const opts = (x) => paramsOf(x.node).find((p) => p.name === 'options');
      if (!spec.options) { expect(opts(m)).toBeUndefined(); return; }
      for (const p of [opts(m), opts(w)]) {
        const keys = membersOf(API, p.typeAnnotation.typeAnnotation);
        expect([...keys.keys()].sort()).toEqual([...spec.options].sort());
        expect(!!p.optional).toBe([...keys.values()].every((k) => k.optional));
      }
    });

  it('the runtime methods take the row\'s parameters', () => {
    for (const [name, spec] of Object.entries(MEASURES)) {
      expect(model.has(name) && worker.has(name)).toBe(true);
      expect([name, Object.getPrototypeOf(wmodel)[name].length]).toEqual([name, spec.args.length]);
    }
  });
});

describe('every options parameter declares exactly the options the code accepts', () => {
  // the placeholder arguments before the options: each call checks its options first
  const before = (node) => paramsOf(node).slice(0, -1).map(() => 'x');
  const methodsWithOptions = (name) => [...membersOf(API, ref(name))]
    .filter(([, v]) => v.node.type === 'TSMethodSignature' || v.node.type === 'TSDeclareMethod')
    .filter(([, v]) => paramsOf(v.node).at(-1)?.name === 'options');
  const declaredOptions = (p) => [...membersOf(API, p.typeAnnotation.typeAnnotation).keys()].sort();

  for (const [cls, obj] of [['Model', () => model], ['WorkerModel', () => wmodel], ['Lineage', () => lineage]])
    it(`${cls}: each method's options`, async () => {
      const list = methodsWithOptions(cls);
      expect(list.length).toBeGreaterThan(cls === 'Lineage' ? 10 : 20);
      const wrong = [];
      for (const [name, { node }] of list) {
        const known = await knownOptions((o) => obj()[name](...before(node), o));
        const declared = declaredOptions(paramsOf(node).at(-1));
        const d = differ(declared, known);
        if (d.undeclared.length || d.absent.length) wrong.push(`${cls}#${name}: ${JSON.stringify(d)}`);
      }
      expect(wrong).toEqual([]);
    }, 60_000);

  it('loadModel, the worker\'s loadModel, loadLineage, randomTwin and the widget\'s configure', async () => {
    const fn = (decl, name) => decl.get(name).find((d) => d.type === 'TSDeclareFunction');
    const opts = (decl, name) => [...membersOf(decl, paramsOf(fn(decl, name)).at(-1).typeAnnotation.typeAnnotation).keys()].sort();
    const WORKER = declarations('types/worker.d.ts', 'types/index.d.ts', 'types/measures.d.ts');
    expect(await knownOptions((o) => loadModel(TINY, o))).toEqual(opts(API, 'loadModel'));
    expect(await knownOptions((o) => workerApi.loadModel(TINY, o))).toEqual(opts(WORKER, 'loadModel'));
    expect(await knownOptions((o) => loadLineage(o))).toEqual(opts(API, 'loadLineage'));
    expect(await knownOptions((o) => randomTwin(model, o))).toEqual(opts(API, 'randomTwin'));
    expect(await knownOptions((o) => widget.configure(o))).toEqual(opts(WIDGET, 'configure'));
  });

  it('counterfactual takes the run options (run checks them)', () => {
    expect([...MEASURES.counterfactual.options]).toEqual(RUN_OPTIONS);
  });
});
