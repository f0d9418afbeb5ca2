// png-meta.test.js — figures/png-meta.js: the pHYs and iTXt chunks written into a PNG are well formed (CRC
// checked against zlib's crc32 through Node), read back, replace an old pHYs, keep every other chunk in order,
// and bad input is refused with a code.
import { describe, it, expect } from 'vitest';
import { crc32 as zcrc } from 'node:zlib';
import { crc32, pngChunks, pngWithMeta, pngMeta } from '../../web/src/figures/png-meta.js';
import { svgToPng, pngSize } from '../../web/src/figures/export.js';

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#c00"/></svg>';

describe('png-meta', () => {
  it('CRC-32 matches zlib on random bytes', () => {
    let seed = 7;
    const rnd = () => { seed = (seed * 1103515245 + 12345) >>> 0; return seed >>> 24; };
    for (const n of [0, 1, 13, 1000]) {
      const b = Uint8Array.from({ length: n }, rnd);
      if (typeof zcrc === 'function') expect(crc32(b)).toBe(zcrc(b));
    }
    expect(crc32(new TextEncoder().encode('IEND'))).toBe(0xae426082);   // the CRC every PNG ends with
  });

  it('writes dpi and UTF-8 text after IHDR, keeps the image, reads them back', async () => {
    const { png } = await svgToPng(SVG, { scale: 2, text: { Description: '模型 brown-gpt2 · layer 5 · “.”' } });
    const meta = pngMeta(png);
    expect(Math.abs(meta.dpi - 192)).toBeLessThanOrEqual(0.0127);
    expect(meta.text.Description).toBe('模型 brown-gpt2 · layer 5 · “.”');
    expect(pngSize(png)).toEqual({ width: 80, height: 40 });
    const types = pngChunks(png).map((c) => c.type);
    expect(types[0]).toBe('IHDR');
    expect(types[types.length - 1]).toBe('IEND');
    expect(types.filter((t) => t === 'pHYs').length).toBe(1);
    for (const c of pngChunks(png)) {
      const body = png.subarray(c.start + 4, c.end - 4);
      const stored = png.readUInt32BE(c.end - 4);
      expect(crc32(body), c.type).toBe(stored);
    }
    // a second pass replaces the resolution (one pHYs), adds text, and keeps the image data byte for byte
    const again = pngWithMeta(png, { dpi: 300, text: { Software: 'attnlab' } });
    expect(pngChunks(again).filter((c) => c.type === 'pHYs').length).toBe(1);
    expect(Math.abs(pngMeta(again).dpi - 300)).toBeLessThanOrEqual(0.0127);
    expect(pngMeta(again).text).toEqual({ Software: 'attnlab', Description: '模型 brown-gpt2 · layer 5 · “.”' });
    const idat = (b) => pngChunks(b).filter((c) => c.type === 'IDAT').map((c) => Buffer.from(b.subarray(c.start, c.end)).toString('hex')).join('');
    expect(idat(again)).toBe(idat(png));
  });

  it('refuses what is not a PNG, a truncated one, a bad dpi and a bad keyword, with codes', async () => {
    const { png } = await svgToPng(SVG);
    expect(() => pngWithMeta(new Uint8Array(40))).toThrow(expect.objectContaining({ code: 'EFORMAT' }));
    expect(() => pngChunks(png.subarray(0, png.length - 3))).toThrow(expect.objectContaining({ code: 'EFORMAT' }));
    expect(() => pngWithMeta(png, { dpi: 0 })).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => pngWithMeta(png, { dpi: NaN })).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => pngWithMeta(png, { text: { '': 'x' } })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => pngWithMeta(png, { text: { 'a\u0000b': 'x' } })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => pngWithMeta(png, { text: { 描述: 'x' } })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
});
