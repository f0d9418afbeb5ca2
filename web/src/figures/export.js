// export.js — SVG → PNG in Node (and the chapter's file names, from names.js).
//
// For Node only: browser code imports figures/index.js, which does not import this
// file. @resvg/resvg-js (a native addon) is loaded lazily through a variable
// specifier that bundlers leave alone, so even a bundle that reaches this module
// does not try to pack the addon.
// resvg draws text with the fonts it is given: system fonts by default
// (/usr/share/fonts; the Chinese labels need a CJK face there, Debian
// fonts-noto-cjk or fonts-wqy-zenhei), plus any fontFiles / fontDirs.

import { AttnlabError } from '../core/errors.js';
import { FIGURE_FILES, CHAPTER_SCALE } from './names.js';
import { pngWithMeta } from './png-meta.js';

export { FIGURE_FILES, CHAPTER_SCALE };

const RESVG = '@resvg/resvg-js';

/**
 * Render an SVG string to PNG bytes.
 * @param {string} svg
 * @param {object} [o]
 * @param {number} [o.scale=150/96]  pixels per SVG unit (150/96 = the chapter's dpi)
 * @param {string[]} [o.fontFiles]  extra font files (.ttf/.otf/.ttc)
 * @param {string[]} [o.fontDirs]  extra font directories
 * @param {boolean} [o.loadSystemFonts=true]
 * @param {string} [o.background='white']
 * @param {object} [o.text]  PNG text entries ({keyword: value}); the file also states its dpi (96 × scale)
 * @returns {Promise<{png: Buffer, width: number, height: number}>}
 */
export async function svgToPng(svg, { scale = CHAPTER_SCALE, fontFiles = [], fontDirs = [], loadSystemFonts = true, background = 'white', text = {} } = {}) {
  if (typeof svg !== 'string' || !svg.includes('<svg')) throw new AttnlabError('ETYPE', 'svgToPng: expected an SVG string');
  if (typeof scale !== 'number' || !(scale > 0) || scale > 16) throw new AttnlabError('ERANGE', `svgToPng: scale must be in (0, 16], got ${scale}`);
  const { Resvg } = await import(/* @vite-ignore */ RESVG);
  const r = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: scale },
    background,
    font: { loadSystemFonts, fontFiles, fontDirs, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
    logLevel: 'off',
  });
  const img = r.render();
  return { png: Buffer.from(pngWithMeta(new Uint8Array(img.asPng()), { dpi: 96 * scale, text })), width: img.width, height: img.height };
}

/** Width and height from a PNG's IHDR chunk; throws EFORMAT if the bytes are not a PNG. */
export function pngSize(bytes) {
  const b = bytes;
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!b || b.length < 33 || sig.some((x, k) => b[k] !== x)) throw new AttnlabError('EFORMAT', 'not a PNG file');
  const ihdr = String.fromCharCode(b[12], b[13], b[14], b[15]);
  if (ihdr !== 'IHDR') throw new AttnlabError('EFORMAT', 'PNG without an IHDR chunk first');
  const u32 = (k) => ((b[k] << 24) | (b[k + 1] << 16) | (b[k + 2] << 8) | b[k + 3]) >>> 0;
  return { width: u32(16), height: u32(20) };
}
