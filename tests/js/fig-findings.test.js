// fig-findings.test.js — page/fig-findings.js: each figure's one-line finding is made from the figure's own
// arguments; hand-worked matrices, the cases where the pattern differs (a row led by a later key under the full
// mask, a DAG score under its null), and the soft do's weight against analysis.js's displayDo.
import { describe, it, expect } from 'vitest';
import { rowPeak, keysOf, rankInRow, fig1Finding, fig2Finding, fig3Finding, fig4Finding } from '../../web/src/page/fig-findings.js';
import { displayDo } from '../../web/src/analysis.js';
import { translator } from '../../web/src/page/i18n.js';

const en = translator('en'), zh = translator('zh');
// 3 × 3, causal: row 2 weighs key 0 most
const A = Float32Array.from([1, 0, 0, 0.4, 0.6, 0, 0.5, 0.2, 0.3]);
const tokens = ['The', ' cat', ' sat'];

describe('fig-findings', () => {
  it('the small parts: peak, keys a row may weigh, rank', () => {
    expect(rowPeak(A, 3, 2)).toEqual({ j: 0, w: 0.5 });
    expect(rowPeak(Float32Array.from([NaN, 0.2, 0.1, 0, 0, 0, 0, 0, 0]), 3, 0)).toEqual({ j: 1, w: Math.fround(0.2) });
    expect([keysOf(2, 10, 'causal'), keysOf(2, 10, 'full'), keysOf(7, 10, 'window:3'), keysOf(1, 10, 'window:3')]).toEqual([3, 10, 3, 2]);
    expect([rankInRow(A, 3, 2, 0), rankInRow(A, 3, 2, 1), rankInRow(A, 3, 2, 2)]).toEqual([1, 3, 2]);
  });

  it('Fig. 1: the row\'s peak against 1/(keys), and the mask\'s part only when there is a mask', () => {
    const f = fig1Finding({ A, tokens, mask: 'causal' }, { row: 2 }, en);
    expect(f.found).toBe('Found: row 2 “sat” puts its largest weight, 0.500, on “The” (column 0): 1.5 × the uniform share 1/3 of its row. A − Aᵀ is one-sided because of the mask, not the model.');
    expect(f.cannot).toBe('Cannot show: that “The” is a cause of “sat”. A weight is a reading (rung 1); Fig. 4 and the panel below intervene.');
    // full mask: a later key may lead, the uniform share is 1/T and nothing is said of the mask
    const F = Float32Array.from([0.2, 0.1, 0.7, 0.3, 0.3, 0.4, 0.1, 0.1, 0.8]);
    const g = fig1Finding({ A: F, tokens, mask: 'full' }, { row: 0 }, en);
    expect(g.found).toBe('Found: row 0 “The” puts its largest weight, 0.700, on “sat” (column 2): 2.1 × the uniform share 1/3 of its row.');
    expect(fig1Finding({ A, tokens, mask: 'causal' }, { row: 2 }, zh).found).toMatch(/^本次结果：第 2 行 “sat” 的最大权重 0\.500 落在 “The”（第 0 列）/);
  });

  it('Fig. 2: q_i · k_j by hand, the weight and its rank', () => {
    const q = Float32Array.from([1, 0, 0, 1, 2, -1]);   // T = 3, d_k = 2
    const k = Float32Array.from([0.5, 0.5, 1, 1, -2, 3]);
    const f = fig2Finding({ q, k, i: 2, j: 1, attention: A, tokens, mask: 'causal' }, en);
    expect(f.found).toBe('Found: q2 · k1 = tr(q2 ⊗ k1) = 1.00; after scaling and softmax, key “cat” gets 0.200 of row “sat”, rank 3 of the 3 keys it may weigh.');
  });

  it('Fig. 3: above or not above the null, and the mask named', () => {
    const up = fig3Finding({ overallDag: 0.9, nullDagScore: 0.707, dagScores: [0.8, 0.95, 0.9], mask: 'causal' }, en);
    expect(up.found).toBe('Found: DAG score 0.900 against 0.707 for uniform attention under the causal mask (heads 0.800–0.950): more weight off the diagonal, on earlier tokens, than uniform.');
    const down = fig3Finding({ overallDag: 0.5, nullDagScore: 0.707, dagScores: [0.5], mask: 'window:4' }, en);
    expect(down.found).toMatch(/under a window of 4 .*: no more weight on earlier tokens than uniform attention gives\.$/);
    expect(down.cannot).toMatch(/the order is the mask's/);
    expect(fig3Finding({ overallDag: 0.6, nullDagScore: 0.45, dagScores: [], mask: 'full' }, en).cannot).toMatch(/does not test an intervention/);
  });

  it('Fig. 4: the soft do\'s weight is displayDo\'s; the KL is said only when given', () => {
    const soft = displayDo(A, { kind: 'soft', row: 2, col: 1, lambda: 3 })[2 * 3 + 1];
    const f = fig4Finding({ A, row: 2, col: 1, lambda: 3, tokens }, {}, en);
    expect(f.found).toBe(`Found: the soft do (λ = 3.0) moves A[2, 1] from 0.200 to ${soft.toFixed(3)}; the hard do sets it to 1 and the rest of row “sat” to 0.`);
    expect(f.cannot).toMatch(/inside the forward pass\.$/);
    expect(fig4Finding({ A, row: 2, col: 1, lambda: 3, tokens }, { kl: 0.0133 }, en).cannot).toMatch(/\(KL = 0\.0133 nats\)\.$/);
    expect(fig4Finding({ A, row: 2, col: 1, lambda: 3, tokens }, { kl: 5.8e-8 }, en).cannot).toMatch(/\(KL = 5\.8e-8 nats\)\.$/);
    expect(fig4Finding({ A, row: 2, col: 1, lambda: 3, tokens }, { kl: 0 }, en).cannot).toMatch(/\(KL = 0 nats\)\.$/);
  });
});
