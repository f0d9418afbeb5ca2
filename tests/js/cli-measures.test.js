// cli-measures.test.js — the CLI's measures and the measures' typings come from the JS measure table.
// c/cli/measures.h and types/measures.d.ts are generated from web/src/measure-table.js (scripts/gen-measures.mjs)
// and committed; this test regenerates both and fails while either differs, feeds the generator a changed table
// to show each part of a row is seen, and checks the rows against what measures.c expands them into (a handler
// ev_<id> per row, ev_<id>_set for a row over a set).

import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { cliMeasuresHeader, measuresDts } from '../../scripts/gen-measures.mjs';
import { MEASURES } from '../../web/src/measure-table.js';

const read = (p) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');
const committed = read('c/cli/measures.h');

/** The table with one row's cli part changed. */
function withCli(name, change) {
  return { ...MEASURES, [name]: { ...MEASURES[name], cli: change(MEASURES[name].cli) } };
}

describe('c/cli/measures.h', () => {
  it('is exactly what scripts/gen-measures.mjs makes of measure-table.js (run `make` if not)', () => {
    expect(cliMeasuresHeader()).toBe(committed);
  });

  it('has one row per measure with a cli part, in the table\'s order', () => {
    const rows = [...committed.matchAll(/X\((\w+), "([\w-]+)", ([01]),/g)].map((m) => [m[1], m[2], Number(m[3])]);
    const want = Object.values(MEASURES).filter((s) => s.cli).map((s) => [s.cli.id, s.cli.kind, s.cli.set ? 1 : 0]);
    expect(rows).toEqual(want);
    expect(rows.map((r) => r[1])).toEqual(['edge', 'tokens', 'ablation', 'patch', 'pattern-value', 'path', 'dla', 'value-norms',
      'trace', 'composition']);
  });

  it('goes stale when a row\'s kind, --set or usage changes in the table, and refuses a bad row', () => {
    expect(cliMeasuresHeader(withCli('valueNorms', (c) => ({ ...c, kind: 'norms' })))).toContain('X(value_norms, "norms", 0,');
    expect(cliMeasuresHeader(withCli('tokenKnockout', (c) => ({ ...c, set: null })))).toContain('X(tokens, "tokens", 0,');
    const usage = cliMeasuresHeader(withCli('directLogitAttribution', (c) => ({ ...c, usage: ['--answers "A"\\B'] })));
    expect(usage).toContain('X(dla, "dla", 0, \\\n      "--answers \\"A\\"\\\\B")');
    const { compositionScores, ...rest } = MEASURES;
    expect(cliMeasuresHeader(rest)).not.toContain('composition');
    expect(() => cliMeasuresHeader(withCli('valueNorms', (c) => ({ ...c, id: 'value-norms' })))).toThrow(/C name/);
    expect(() => cliMeasuresHeader(withCli('valueNorms', (c) => ({ ...c, kind: 'dla' })))).toThrow(/two CLI rows/);
    expect(() => cliMeasuresHeader(withCli('valueNorms', (c) => ({ ...c, set: 'valueNorms' })))).toThrow(/over a set/);
    expect(() => cliMeasuresHeader(withCli('valueNorms', (c) => ({ ...c, usage: ['a\nb'] })))).toThrow(/lines/);
    expect(compositionScores.cli.id).toBe('composition');
  });

  it('every row has its handlers in measures.c: ev_<id>, and ev_<id>_set for a row over a set', () => {
    const c = read('c/cli/measures.c');
    const missing = [];
    for (const s of Object.values(MEASURES).filter((x) => x.cli)) {
      if (!new RegExp(`static int ev_${s.cli.id}\\(`).test(c)) missing.push(`ev_${s.cli.id}`);
      if (s.cli.set && !new RegExp(`static int ev_${s.cli.id}_set\\(`).test(c)) missing.push(`ev_${s.cli.id}_set`);
    }
    expect(missing).toEqual([]);
  });
});

describe('types/measures.d.ts', () => {
  it('is exactly what scripts/gen-measures.mjs makes of measure-table.js (run `make` if not)', () => {
    expect(measuresDts()).toBe(read('types/measures.d.ts'));
  });

  it('declares each row on Model and WorkerModel from its args, options type, result and summary', () => {
    const d = measuresDts();
    expect(d).toContain('  /** Q-, K- and V-composition scores of every head pair in adjacent layers, with a Gaussian null (weights only). */\n' +
      '  compositionScores(options?: CompositionScoresOptions): CompositionScores;');
    expect(d).toContain('  pathPatching(clean: Input, corrupt: Input, options: PathPatchingOptions): Promise<PathPatching>;');
    expect(d).toContain('  valueNorms(input: Input): Float32Array;');
    // a new row is declared on both, with its types imported from index.d.ts
    const added = measuresDts({ ...MEASURES, newMeasure: { ...MEASURES.valueNorms, summary: 'A new one.', args: ['pairs', 'options'],
      optionsType: 'NewMeasureOptions', result: 'NewMeasure' } });
    expect(added).toContain('  newMeasure(pairs: PairSet, options?: NewMeasureOptions): NewMeasure;');
    expect(added).toContain('  newMeasure(pairs: PairSet, options?: NewMeasureOptions): Promise<NewMeasure>;');
    expect(added).toMatch(/import type \{[^}]*\bNewMeasureOptions\b[^}]*\} from '\.\/index\.js'/);
    expect(() => measuresDts({ ...MEASURES, bad: { ...MEASURES.valueNorms, summary: '' } })).toThrow(/summary/);
    expect(() => measuresDts({ ...MEASURES, bad: { ...MEASURES.valueNorms, args: ['text'] } })).toThrow(/no type/);
  });
});
