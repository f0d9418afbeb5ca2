#!/usr/bin/env node
// docs-preview.mjs — `npm run docs:preview`: the built site (docs/.vitepress/dist,
// `make docs`) on http://localhost:4173/, served as a host should serve it
// (scripts/static-server.mjs: model files uncompressed with their type).
//
//   node scripts/docs-preview.mjs [--port N]

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStatic } from './static-server.mjs';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', '.vitepress', 'dist');
const i = process.argv.indexOf('--port');
const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.PORT || 4173);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error('docs-preview: --port must be an integer in 0..65535');
  process.exit(2);
}
if (!existsSync(path.join(DIST, 'index.html'))) {
  console.error('docs-preview: the site is not built (docs/.vitepress/dist/index.html is missing): run `make docs`');
  process.exit(1);
}
const { url } = await startStatic({ mounts: [['/', DIST]], cleanUrls: true, port });
console.log(`attnlab docs: serving ${url}  (Ctrl-C to stop)`);
