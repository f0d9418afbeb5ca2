// figure_rowscale.test.js — panels side by side keep a readable plot when the width is moderate: the figure's
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
