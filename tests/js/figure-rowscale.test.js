// figure-rowscale.test.js — panels side by side keep a readable plot when the width is moderate: the figure's
// height follows the width (the chapter's aspect) while its titles and labels do not, so at 600–960 px a
// three-line title used to leave heatmap cells of 4–5 px. Now the plot side is at least min(200, 3/4 of what the
// width allows) and the figure grows taller; at the chapter's own size nothing changes.

import { describe, it, expect } from 'vitest';
import { figAttentionAsymmetry, figDoIntervention, toString } from '../../web/src/figures/index.js';

const T = 10;
const tokens = ['Because', ' the', ' storm', ' intensified', ' ,', ' the', ' ship', ' finally', ' sank', ' .'];
const A = Float32Array.from({ length: T * T }, (_, k) => ((k % T) <= Math.floor(k / T) ? 1 / (Math.floor(k / T) + 1) : 0));
const cell = (svg, role) => Number(svg.match(new RegExp(`<g data-role="${role}"[^>]*>\\s*<rect[^>]*? height="([\\d.]+)"`))[1]);

describe('panels in a row at moderate widths', () => {
  for (const width of [720, 800, 900, 960]) {
    it(`Fig. 1 at ${width} px: cells of at least 12 px under the three-line title`, () => {
      const n = figAttentionAsymmetry({ tokens, A, model: 'm', sentence: tokens.join(''), layer: 5, nLayer: 6, width, tight: true });
      const s = toString(n);
      expect(cell(s, 'attention')).toBeGreaterThanOrEqual(12);
      expect(Number(n.attrs.height)).toBeLessThan(Number(n.attrs.width));   // still wider than tall
    });
  }

  it('Fig. 1 at 640 px stacks its panels (each a full-width plot)', () => {
    const n = figAttentionAsymmetry({ tokens, A, model: 'm', layer: 5, nLayer: 6, width: 640, tight: true });
    expect(cell(toString(n), 'attention')).toBeGreaterThanOrEqual(30);
  });

  it('Fig. 4 (three panels) at 900 px keeps cells of at least 10 px', () => {
    const s = toString(figDoIntervention({ tokens, A, row: 8, col: 2, lambda: 3, width: 900, tight: true }));
    expect(cell(s, 'original')).toBeGreaterThanOrEqual(10);
  });

  it('at the chapter\'s width (1344 px) the height bound rules, as before: the chapter\'s 14 × 6 aspect', () => {
    const n = figAttentionAsymmetry({ tokens, A, model: 'm', layer: 5, nLayer: 6 });
    expect(Number(n.attrs.height) / Number(n.attrs.width)).toBeLessThanOrEqual(6 / 14 + 1e-9);
  });
});

// Issue 38 item 2: a long text, a minimum cell size. At T = 256 in a 900 px box Fig. 1's cells were under 1 px
// (196 px plots); with minCell the figure grows wider than its box (the page scrolls the box) and Fig. 1 and
// Fig. 4 get the same cell side, at a phone's width too; the chosen row's and column's labels are always drawn.
describe('a long text with a minimum cell size', () => {
  const N = 120;
  const words = ['the', 'storm', 'grew', 'ship', 'sank', 'crew', 'sea', 'coast'];
  const toks = Array.from({ length: N }, (_, k) => ` ${words[k % words.length]}${k}`);
  const M = Float32Array.from({ length: N * N }, (_, k) => ((k % N) <= Math.floor(k / N) ? 1 / (Math.floor(k / N) + 1) : 0));
  const plot = (svg, role) => cell(svg, role) * N;
  for (const width of [940, 330]) {
    it(`at ${width} px: cells of minCell px in Fig. 1 and Fig. 4, the figure wider than the box, nothing cropped`, () => {
      const f1 = figAttentionAsymmetry({ tokens: toks, A: M, model: 'm', width, tight: true, minCell: 4, mark: { row: 117, col: 3 } });
      const f4 = figDoIntervention({ tokens: toks, A: M, row: 117, col: 3, width, height: width / 2, oneColorbar: true, tight: true, minCell: 4 });
      const s1 = toString(f1), s4 = toString(f4);
      expect(cell(s1, 'attention')).toBeCloseTo(4, 6);
      expect(cell(s4, 'original')).toBeCloseTo(4, 6);
      expect(Number(f1.attrs.width)).toBeGreaterThan(width);
      // every panel's plot lies inside the figure
      for (const [s, f, roles] of [[s1, f1, ['attention', 'asymmetry']], [s4, f4, ['original', 'soft-do', 'hard-do']]]) {
        for (const role of roles) {
          const x = Number(s.match(new RegExp(`<g data-role="${role}"[^>]*>\\s*<rect x="([\\d.]+)"`))[1]);
          expect(x).toBeGreaterThanOrEqual(0);
          expect(x + plot(s, role)).toBeLessThanOrEqual(Number(f.attrs.width));
        }
      }
      // the chosen row and column are labelled (bold) though most labels are skipped
      for (const s of [s1, s4]) {
        expect(s).toMatch(/<text [^>]*data-i="117" font-weight="bold"[^>]*>crew117<\/text>/);
        expect(s).toMatch(/<text [^>]*data-j="3" font-weight="bold"[^>]*>ship3<\/text>/);
        expect((s.match(/data-i="\d+"[^>]*>[a-z]+\d+<\/text>/g) || []).length).toBeLessThan(2 * 3 * N);
      }
    });
  }

  it('without minCell (files, short texts) nothing changes: the figure keeps its width', () => {
    const f = figAttentionAsymmetry({ tokens: toks, A: M, model: 'm', width: 940, tight: true });
    expect(Number(f.attrs.width)).toBeLessThanOrEqual(940);
    expect(cell(toString(f), 'attention')).toBeLessThan(4);
    const short = figAttentionAsymmetry({ tokens, A, model: 'm', width: 940, tight: true, minCell: 4 });
    expect(toString(short)).toBe(toString(figAttentionAsymmetry({ tokens, A, model: 'm', width: 940, tight: true })));
  });
});
