// png-meta.js — what a PNG file says about itself: its resolution (a pHYs chunk, so a word processor or a
// book's toolchain places a 150-dpi figure at its size and not at 72 dpi) and text entries (iTXt chunks,
// UTF-8: a figure's model, layer, head and mask, in any language). Pure byte work on Uint8Arrays, for the
// browser (ui/download.js) and Node (figures/export.js) alike.

import { AttnlabError } from '../core/errors.js';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const INCH = 0.0254;   // metres

let CRC_TABLE = null;
function crcTable() {
  if (CRC_TABLE) return CRC_TABLE;
  CRC_TABLE = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    CRC_TABLE[n] = c >>> 0;
  }
  return CRC_TABLE;
}

/** The CRC-32 of PNG chunks (ISO 3309), over `bytes`. */
export function crc32(bytes) {
  const tab = crcTable();
  let c = 0xffffffff;
  for (let k = 0; k < bytes.length; k++) c = tab[(c ^ bytes[k]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const u32 = (b, k) => ((b[k] << 24) | (b[k + 1] << 16) | (b[k + 2] << 8) | b[k + 3]) >>> 0;
function putU32(b, k, v) { b[k] = v >>> 24; b[k + 1] = (v >>> 16) & 255; b[k + 2] = (v >>> 8) & 255; b[k + 3] = v & 255; }

/** One chunk: length, type, data, CRC over type and data. */
function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  putU32(out, 0, data.length);
  for (let k = 0; k < 4; k++) out[4 + k] = type.charCodeAt(k);
  out.set(data, 8);
  putU32(out, 8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** The chunks of a PNG as [{type, start, end}] (end past the CRC); EFORMAT when it is not a well-formed PNG. */
export function pngChunks(bytes) {
  const b = bytes;
  if (!b || b.length < 33 || SIGNATURE.some((x, k) => b[k] !== x)) throw new AttnlabError('EFORMAT', 'not a PNG file');
  const out = [];
  for (let k = 8; k < b.length;) {
    if (k + 12 > b.length) throw new AttnlabError('EFORMAT', 'PNG: a chunk runs past the end of the file');
    const len = u32(b, k);
    const end = k + 12 + len;
    if (end > b.length) throw new AttnlabError('EFORMAT', 'PNG: a chunk runs past the end of the file');
    out.push({ type: String.fromCharCode(b[k + 4], b[k + 5], b[k + 6], b[k + 7]), start: k, end });
    k = end;
  }
  if (!out.length || out[0].type !== 'IHDR') throw new AttnlabError('EFORMAT', 'PNG without an IHDR chunk first');
  return out;
}

const KEYWORD = /^[\x20-\x7e\xa1-\xff]{1,79}$/;

/**
 * The PNG `bytes` with its resolution set to `dpi` (a pHYs chunk in pixels per metre, replacing any) and the
 * `text` entries ({keyword: value}, UTF-8 iTXt chunks) added after IHDR. Returns a new Uint8Array.
 */
export function pngWithMeta(bytes, { dpi = null, text = {} } = {}) {
  const chunks = pngChunks(bytes);
  const enc = new TextEncoder();
  const extra = [];
  if (dpi !== null) {
    if (!(dpi > 0 && dpi < 1e5)) throw new AttnlabError('ERANGE', `pngWithMeta: dpi must be in (0, 100000), got ${dpi}`);
    const d = new Uint8Array(9);
    const ppm = Math.round(dpi / INCH);
    putU32(d, 0, ppm);
    putU32(d, 4, ppm);
    d[8] = 1;   // unit: the metre
    extra.push(chunk('pHYs', d));
  }
  for (const [key, value] of Object.entries(text)) {
    if (!KEYWORD.test(key) || key !== key.trim() || key.includes('  ')) throw new AttnlabError('EINVAL', `pngWithMeta: "${key}" is not a PNG keyword`);
    const v = enc.encode(String(value));
    // keyword, NUL, compression flag 0, method 0, language tag "" NUL, translated keyword "" NUL, text
    const d = new Uint8Array(key.length + 5 + v.length);
    for (let k = 0; k < key.length; k++) d[k] = key.charCodeAt(k);
    d.set(v, key.length + 5);
    extra.push(chunk('iTXt', d));
  }
  const ihdr = chunks[0];
  const keep = chunks.slice(1).filter((c) => !(dpi !== null && c.type === 'pHYs'));
  const parts = [bytes.subarray(0, ihdr.end), ...extra, ...keep.map((c) => bytes.subarray(c.start, c.end))];
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

/** What a PNG says about itself: {dpi (x axis; null without pHYs in metres), text: {keyword: value}}. */
export function pngMeta(bytes) {
  const dec = new TextDecoder();
  const out = { dpi: null, text: {} };
  for (const c of pngChunks(bytes)) {
    const d = bytes.subarray(c.start + 8, c.end - 4);
    if (c.type === 'pHYs' && d[8] === 1) out.dpi = u32(d, 0) * INCH;
    if (c.type === 'iTXt' || c.type === 'tEXt') {
      const z = d.indexOf(0);
      const key = String.fromCharCode(...d.subarray(0, z));
      if (c.type === 'tEXt') { out.text[key] = String.fromCharCode(...d.subarray(z + 1)); continue; }
      let k = z + 3;                      // past the flag and the method
      k = d.indexOf(0, k) + 1;            // past the language tag
      k = d.indexOf(0, k) + 1;            // past the translated keyword
      if (d[z + 1] === 0) out.text[key] = dec.decode(d.subarray(k));
    }
  }
  return out;
}
