// raster.test.js — bitmap heatmaps (web/src/figures/raster.js setRasterThreshold,
// svg.js rasterNode/toElement): off by default; above the threshold one empty
// <foreignObject> per heatmap carries the values; vectorOnly restores the cells;
// figure code still cannot make a <foreignObject> itself.
import { describe, it, expect, afterEach } from 'vitest';
import { figAttentionAsymmetry, figDoIntervention, toString } from '../../web/src/figures/index.js';
import { setRasterThreshold, vectorOnly, rasterize } from '../../web/src/figures/raster.js';
import { h, walk } from '../../web/src/figures/svg.js';

const T = 40;
const A = new Float64Array(T * T);
for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) A[i * T + j] = 1 / (i + 1);
const tokens = Array.from({ length: T }, (_, k) => `t${k}`);

afterEach(() => setRasterThreshold(Infinity));

describe('bitmap heatmaps', () => {
  it('are off by default: every cell a rect', () => {
    expect(rasterize(256, 256)).toBe(false);
    const fig = figAttentionAsymmetry({ tokens, A });
    expect(walk(fig).filter((n) => n.tag === 'rect' && n.attrs['data-i'] !== undefined).length).toBe(2 * T * T);
    expect(walk(fig).some((n) => n.tag === 'foreignObject')).toBe(false);
  });

  it('above the threshold: one raster node per heatmap with the values, the scale and the tooltips', () => {
    expect(setRasterThreshold(1024)).toBe(Infinity);
    const fig = figDoIntervention({ tokens, A, row: 5, col: 2 });
    const rasters = walk(fig).filter((n) => n.raster);
    expect(rasters.length).toBe(3);
    for (const r of rasters) {
      expect(r.tag).toBe('foreignObject');
      expect(r.children).toEqual([]);
      expect([r.raster.R, r.raster.C]).toEqual([T, T]);
      expect(typeof r.raster.color(0.5)).toBe('string');
      expect(r.raster.title(7, 3)).toMatch(/7/);
    }
    expect(Array.from(rasters[0].raster.values)).toEqual(Array.from(A));
    expect(walk(fig).filter((n) => n.tag === 'rect' && n.attrs['data-i'] !== undefined).length).toBe(0);
    // the export path: vector cells whatever the threshold
    const vec = vectorOnly(() => figDoIntervention({ tokens, A, row: 5, col: 2 }));
    expect(walk(vec).filter((n) => n.tag === 'rect' && n.attrs['data-i'] !== undefined).length).toBe(3 * T * T);
    expect(toString(vec)).not.toContain('foreignObject');
    expect(rasterize(T, T)).toBe(true);   // the threshold is back after vectorOnly
  });

  it('figure code still cannot make a foreignObject', () => {
    expect(() => h('foreignObject', null)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
});
