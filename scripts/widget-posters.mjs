#!/usr/bin/env node
// widget-posters.mjs — the default view of each model figure of <attnlab-figure>
// (figure="1" | "1" compare="full" | "2" | "3" | "4", the chapter's sentence, the
// built-in model), drawn at build time by the widget's own figure code
// (widget/draw.js modelFigure, the same arguments the element computes), as SVG,
// in English and Chinese. The element shows its poster at once and replaces it
// with the live figure (docs/guide/embedding.md, "Posters").
//
//   node scripts/widget-posters.mjs [--out web/dist/widget/posters] [--model DIR] [--width 900]
//
// Writes OUT/<lang>/fig1.svg, fig1-full.svg, fig2.svg, fig3.svg, fig4.svg.

import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel } from '../web/src/index.js';
import { toString } from '../web/src/figures/index.js';
import { modelFigure } from '../web/src/widget/draw.js';
import { defaultSelection } from '../web/src/ui/selection.js';

export const CHAPTER_SENTENCE = 'Because the storm intensified , the ship finally sank .';
export const POSTERS = Object.freeze(['fig1', 'fig1-full', 'fig2', 'fig3', 'fig4']);

/** The poster views of one model: {key: node tree} for lang, drawn `width` px wide. */
export async function buildPosters(model, { lang, width = 900, maxHeight = 640, modelName = 'brown-gpt2' }) {
  const cfg = model.config;
  const layer = cfg.nLayer - 1, head = 'avg';
  const text = CHAPTER_SENTENCE;
  const base = model.run(text, { topK: 5, captureQK: { layer, head: 0 } });
  const full = model.run(text, { topK: 1, mask: 'full' });
  const { row, col } = defaultSelection(base.tokens);
  const v = { base, lang, width, maxHeight, layer, head, row, col, lambda: 3, text, modelName, config: cfg };
  return {
    fig1: modelFigure({ ...v, figure: '1' }),
    'fig1-full': modelFigure({ ...v, figure: '1', compare: full.attention(layer, head) }),
    fig2: modelFigure({ ...v, figure: '2' }),
    fig3: modelFigure({ ...v, figure: '3' }),
    fig4: modelFigure({ ...v, figure: '4' }),
  };
}

async function main(argv) {
  const o = { out: 'web/dist/widget/posters', model: undefined, width: 900 };
  for (let k = 0; k < argv.length; k++) {
    const a = argv[k];
    if (a === '--out') o.out = argv[++k];
    else if (a === '--model') o.model = argv[++k];
    else if (a === '--width') o.width = Number(argv[++k]);
    else { process.stderr.write(`widget-posters: unknown argument ${a}\n`); return 2; }
  }
  if (!(o.width >= 240)) { process.stderr.write('widget-posters: --width must be at least 240\n'); return 2; }
  const m = await loadModel(o.model === undefined ? undefined : resolve(o.model));
  try {
    for (const lang of ['en', 'zh']) {
      const dir = join(resolve(o.out), lang);
      await mkdir(dir, { recursive: true });
      const posters = await buildPosters(m, { lang, width: o.width });
      for (const [key, node] of Object.entries(posters)) await writeFile(join(dir, `${key}.svg`), toString(node));
    }
  } finally {
    m.dispose();
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((rc) => { process.exitCode = rc; }, (e) => {
    process.stderr.write(`widget-posters: ${e && e.code ? `${e.code}: ` : ''}${e && e.message || e}\n`);
    process.exitCode = 1;
  });
}
