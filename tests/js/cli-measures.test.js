// cli-measures.test.js — the CLI's measures come from the JS measure table. c/cli/measures.h is generated from
// web/src/measure-table.js (scripts/gen-cli-measures.mjs) and committed; this test regenerates it and fails
// while the two differ, feeds the generator a changed table to show each part of a row is seen, and checks
// the rows against what measures.c expands them into (a handler ev_<id> per row, ev_<id>_set for a row over a set).

import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { cliMeasuresHeader } from '../../scripts/gen-cli-measures.mjs';
import { MEASURES } from '../../web/src/measure-table.js';

const read = (p) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');
const committed = read('c/cli/measures.h');

/** The table with one row's cli part changed. */
function withCli(name, change) {
  return { ...MEASURES, [name]: { ...MEASURES[name], cli: change(MEASURES[name].cli) } };
}

describe('c/cli/measures.h', () => {
  it('is exactly what scripts/gen-cli-measures.mjs makes of measure-table.js (run `make` if not)', () => {
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
