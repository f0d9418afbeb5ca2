// download.js — files offered for download by the page, the widget's host pages and the
// lineage page. Files are Blobs handed to an <a download> through a Blob URL (revoked
// after the click). PNG: the SVG string is drawn on a canvas through an <img> of a
// Blob URL (CSP img-src blob:), at the chapter's 150 dpi, on white; the file then says so (a pHYs chunk) and
// carries the caller's text entries (what the figure shows: model, layer, head, mask), figures/png-meta.js.

import { CHAPTER_SCALE } from '../figures/names.js';
import { pngWithMeta } from '../figures/png-meta.js';

/** Offer `blob` as a download named `name`. */
export function downloadBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** An SVG string as PNG bytes (Blob), scale pixels per SVG unit (96 × scale dpi), with `text` entries. */
export async function svgToPngBlob(svg, scale = CHAPTER_SCALE, text = {}) {
  const plain = await drawPng(svg, scale);
  const bytes = new Uint8Array(await plain.arrayBuffer());
  return new Blob([pngWithMeta(bytes, { dpi: 96 * scale, text })], { type: 'image/png' });
}

function drawPng(svg, scale) {
  const m = /<svg[^>]*\swidth="([\d.]+)"[^>]*\sheight="([\d.]+)"/.exec(svg);
  if (!m) return Promise.reject(new Error('the SVG has no width/height'));
  const w = Math.round(Number(m[1]) * scale), hgt = Math.round(Number(m[2]) * scale);
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      try {
        const canvas = document.createElement('canvas');
        canvas.width = w;
        canvas.height = hgt;
        const ctx = canvas.getContext('2d');
        ctx.fillStyle = '#ffffff';
        ctx.fillRect(0, 0, w, hgt);
        ctx.drawImage(img, 0, 0, w, hgt);
        canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('canvas.toBlob gave nothing'))), 'image/png');
      } catch (e) {
        reject(e);
      } finally {
        URL.revokeObjectURL(url);
      }
    };
    img.onerror = () => { URL.revokeObjectURL(url); reject(new Error('the SVG could not be drawn')); };
    img.src = url;
  });
}

/**
 * Download an SVG string as `${base}.svg`, or as `${base}.png` at the chapter's scale; `text` ({keyword: value})
 * goes into the PNG as text entries (the SVG carries its own <desc>).
 */
export async function downloadSvg(svg, base, kind, text = {}) {
  if (kind === 'svg') downloadBlob(new Blob([svg], { type: 'image/svg+xml' }), `${base}.svg`);
  else downloadBlob(await svgToPngBlob(svg, CHAPTER_SCALE, text), `${base}.png`);
}
