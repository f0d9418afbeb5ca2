#!/usr/bin/env node
// figures.mjs — the chapter's four figures from a live model, without a browser.
//
//   npm run figures -- --text "Because the storm intensified , the ship finally sank ." --out DIR
//        [--model DIR] [--layer L] [--head H] [--lang en|zh] [--row I --col J] [--lambda 3]
//        [--threshold 0.05] [--demo-qk] [--title TEXT] [--width PX] [--scale S] [--font-dir DIR]... [--no-png]
//        [--page-view]
//
// Writes DIR/ch09_causal_fig{1..4}_*.svg and .png (file names as the chapter's
// script). Defaults follow the chapter: the last layer, the head average for
// Figs. 1, 3 and 4; for Fig. 2 the q and k of head --head (default 0) of that layer
// at i = min(5, T−1), j = min(2, T−1) (or the chapter's random vectors with
// --demo-qk); Fig. 4 intervenes on the row of "sank" towards the column of "storm"
// when the sentence has them (else rows 7 and 2, as the chapter's script).
// PNGs are rendered at 150 dpi (the chapter's) unless --scale is given.
// --page-view draws the page's opening view instead (the static figures the page
// shows while its worker starts, `make page`): the do cell the page finds on the
// live model (runner.js strongestDo: the last row, the cause column whose hard do
// moves the prediction most), Fig. 2 at that cell, the sentence in Fig. 1's title.

import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel } from '../web/src/index.js';
import {
  figOuterProduct, outerProductDemo, toString, tokenLabel,
} from '../web/src/figures/index.js';
import { CHAPTER_SCALE, svgToPng } from '../web/src/figures/export.js';
import { strongestDo } from '../web/src/page/runner.js';
import { chapterFigures, drawFigure, figureFile } from '../web/src/ui/figure-args.js';

const USAGE = `usage: npm run figures -- --text TEXT --out DIR [--model DIR] [--layer L] [--head H]
       [--lang en|zh] [--row I --col J] [--lambda X] [--threshold X] [--demo-qk] [--title TEXT]
       [--width PX] [--scale S] [--font-dir DIR]... [--no-png] [--page-view]`;

const FLAGS = new Set(['demo-qk', 'no-png', 'page-view', 'help']);
const VALUES = new Set(['text', 'out', 'model', 'layer', 'head', 'lang', 'row', 'col', 'lambda', 'threshold', 'title', 'width', 'scale', 'font-dir']);

class UsageError extends Error {}

/** argv → options; throws UsageError on anything unknown or malformed. */
export function parseArgs(argv) {
  const o = { fontDirs: [] };
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    const name = a.slice(2);
    if (FLAGS.has(name)) { o[name] = true; continue; }
    if (!VALUES.has(name)) throw new UsageError(`unknown option --${name}`);
    if (k + 1 >= argv.length) throw new UsageError(`--${name} needs a value`);
    const v = argv[++k];
    if (name === 'font-dir') o.fontDirs.push(v);
    else o[name] = v;
  }
  if (o.help) return o;
  if (o.text === undefined || o.text === '') throw new UsageError('--text is required');
  if (o.out === undefined) throw new UsageError('--out is required');
  const int = (name) => {
    if (o[name] === undefined) return undefined;
    if (!/^\d+$/.test(o[name])) throw new UsageError(`--${name} must be a non-negative integer, got ${o[name]}`);
    return Number(o[name]);
  };
  const real = (name, def) => {
    if (o[name] === undefined) return def;
    const x = Number(o[name]);
    if (o[name].trim() === '' || !Number.isFinite(x)) throw new UsageError(`--${name} must be a number, got ${o[name]}`);
    return x;
  };
  o.layer = int('layer');
  o.head = int('head') ?? 0;
  o.row = int('row');
  o.col = int('col');
  o.lambda = real('lambda', 3);
  o.threshold = real('threshold', 0.05);
  o.width = real('width', undefined);
  o.scale = real('scale', CHAPTER_SCALE);
  o.lang = o.lang ?? 'en';
  if (o.lang !== 'en' && o.lang !== 'zh') throw new UsageError(`--lang must be en or zh, got ${o.lang}`);
  if ((o.row === undefined) !== (o.col === undefined)) throw new UsageError('--row and --col go together');
  if (o['page-view'] && (o.row !== undefined || o['demo-qk'])) throw new UsageError('--page-view chooses its own cell and q, k');
  return o;
}

// The chapter's choice of row and column for Fig. 4: "sank" and "storm" when present.
function defaultDo(tokens) {
  const labels = tokens.map((t) => tokenLabel(t, 1000));
  const T = tokens.length;
  const row = labels.indexOf('sank') >= 0 ? labels.indexOf('sank') : Math.min(7, T - 1);
  const col = labels.indexOf('storm') >= 0 ? labels.indexOf('storm') : Math.min(2, T - 1);
  return { row, col };
}

function modelName(m, dir) {
  const src = String(dir ?? m.source ?? '');
  const parts = src.replace(/\/+$/, '').split(/[\\/]/);
  return parts[parts.length - 1] || 'attnlab';
}

/** Compute the four figures (SVG node trees) for one run of the model. */
export async function buildFigures(o) {
  const m = await loadModel(o.model === undefined ? undefined : resolve(o.model));
  try {
    const { nLayer, nHead } = m.config;
    const layer = o.layer ?? nLayer - 1;
    if (layer >= nLayer) throw new UsageError(`--layer ${layer} is out of range: the model has ${nLayer} layers`);
    if (o.head >= nHead) throw new UsageError(`--head ${o.head} is out of range: the model has ${nHead} heads`);
    const r = await m.run(o.text, { captureQK: { layer, head: o.head } });
    const tokens = r.tokens;
    const T = tokens.length;
    const avg = r.attention(layer, 'avg');
    const { row, col } = o.row !== undefined ? { row: o.row, col: o.col }
      : o['page-view'] ? (await strongestDo(m, { text: o.text, kind: 'hard', layer, head: 'avg' }, r)).sel
        : defaultDo(tokens);
    const common = { lang: o.lang, width: o.width, tight: true };
    const pageView = o['page-view'];
    const view = {
      tokens, A: avg, layer, head: 'avg', row, col, lambda: o.lambda, model: modelName(m, o.model), nLayer,
      title: o.title, threshold: o.threshold, at: pageView ? { i: row, j: col } : { i: Math.min(5, T - 1), j: Math.min(2, T - 1) },
      ...(pageView ? { sentence: o.text, mask: 'causal' } : {}),
    };
    const figs = {};
    for (const key of chapterFigures()) figs[key] = drawFigure(key, r, view, common);
    if (o['demo-qk']) figs.fig2 = figOuterProduct({ ...outerProductDemo({ dK: 16, T: 8, seed: 0 }), ...common });
    return figs;
  } finally {
    m.dispose();
  }
}

/** Write DIR/<chapter name>.svg (+ .png); returns the paths written. */
export async function writeFigures(figs, o) {
  const out = resolve(o.out);
  await mkdir(out, { recursive: true });
  const written = [];
  for (const [key, node] of Object.entries(figs)) {
    const base = join(out, figureFile(key));
    const svg = toString(node);
    await writeFile(base + '.svg', svg);
    written.push(base + '.svg');
    if (!o['no-png']) {
      const { png } = await svgToPng(svg, { scale: o.scale, fontDirs: o.fontDirs });
      await writeFile(base + '.png', png);
      written.push(base + '.png');
    }
  }
  return written;
}

async function main(argv) {
  let o;
  try {
    o = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) { process.stderr.write(`figures: ${e.message}\n${USAGE}\n`); return 2; }
    throw e;
  }
  if (o.help) { process.stdout.write(USAGE + '\n'); return 0; }
  try {
    const figs = await buildFigures(o);
    for (const p of await writeFigures(figs, o)) process.stdout.write(p + '\n');
    return 0;
  } catch (e) {
    const msg = e && e.code ? `${e.code}: ${e.message}` : String(e && e.message || e);
    process.stderr.write(`figures: ${msg}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((rc) => { process.exitCode = rc; });
}
