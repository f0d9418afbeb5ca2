#!/usr/bin/env node
// serve.mjs — a zero-dependency static file server for the attnlab page.
//
//   node scripts/serve.mjs [--port 8080] [--host 127.0.0.1] [--no-isolation]
//
// URL space (everything read-only, GET and HEAD only):
//   /models/...           the repo's models/ (the built-in model)
//   /tests/fixtures/...   the repo's tests/fixtures/ (the tiny test model)
//   /tests/e2e/pages/...  the repo's browser test pages (tests/js/browser-worker.test.js)
//   /web/dist/...         the repo's web/dist/ (attnlab.wasm; widget/, the prebuilt
//                         'attnlab/widget' module of `make widget`)
//   /examples/...         the repo's examples/: /examples/plain-html/ is the widget
//                         example without a build step (it loads
//                         /web/dist/widget/attnlab-widget.js, which finds
//                         /web/dist/attnlab.wasm and /models/brown-gpt2/ relative to itself)
//   /...                  the built page web/dist/page/ (`make page`: vite build), then
//                         the repo's web/ (src/ as ES modules, for test pages)
// Paths are resolved inside their root (no "..", no symlink escapes), there
// are no directory listings (a directory without its trailing slash is redirected
// to it, so that the relative URLs of its index.html resolve), and every response
// carries the page's Content-Security-Policy (the widget example works under it:
// the widgets adopt constructable stylesheets, no inline style or script). Also
// importable: startServer({port, host}), CSP, PAGE_DIR, EXAMPLE_PATH, WIDGET_BUNDLE.
//
// The CSP: scripts only from this origin (plus 'wasm-unsafe-eval' to compile the
// wasm), no inline script or style, images from here, data: and blob: (the PNG
// export draws an SVG Blob), and fetches to this origin and Hugging Face. The
// page's model picker downloads distilgpt2 / gpt2 from
// https://huggingface.co/<repo>/resolve/main/<file>; for the weights huggingface.co
// answers 302 to its LFS / Xet CDN, and CSP applies to every redirect hop, so
// connect-src also lists those hosts: cdn-lfs.huggingface.co and
// cdn-lfs-us-1.huggingface.co (older), cdn-lfs.hf.co, cdn-lfs-us-1.hf.co,
// cas-bridge.xethub.hf.co and regional *.cdn.hf.co (Xet) — as the wildcards
// https://*.huggingface.co and https://*.hf.co (a CSP "*." host matches any
// depth of subdomain).
//
// Cross-origin isolation: every response also says Cross-Origin-Opener-Policy:
// same-origin and Cross-Origin-Embedder-Policy: require-corp (and
// Cross-Origin-Resource-Policy: same-origin for what it serves), so the page is
// cross-origin isolated, SharedArrayBuffer exists and the model runs on
// min(cores, 4) threads (attnlab-mt.wasm, docs/api.md "Threads"). Downloads
// from Hugging Face still work: they are CORS fetches, which require-corp
// allows. --no-isolation (startServer({isolate: false})) leaves the three
// headers out: the page then runs the single-thread build, as on a host that
// does not send them.

import { createServer } from 'node:http';
import { createReadStream, existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { listen } from './static-server.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const HF_CONNECT = ['https://huggingface.co', 'https://*.huggingface.co', 'https://*.hf.co'];

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
  `img-src 'self' data: blob:; connect-src 'self' ${HF_CONNECT.join(' ')}; object-src 'none'; base-uri 'none'; ` +
  "form-action 'self'; frame-ancestors 'none'";

/** Where `make page` puts the built page. */
export const PAGE_DIR = path.join(REPO, 'web', 'dist', 'page');

/** The widget example's URL path (examples/plain-html/). */
export const EXAMPLE_PATH = '/examples/plain-html/';

/** The prebuilt widget module the example loads (`make widget`). */
export const WIDGET_BUNDLE = path.join(REPO, 'web', 'dist', 'widget', 'attnlab-widget.js');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.woff2': 'font/woff2',
  '.safetensors': 'application/octet-stream',
};

// Longest prefix first; the last entry catches everything else. A mount with
// several roots serves the first root that has the file.
const MOUNTS = [
  ['/models/', [path.join(REPO, 'models')]],
  ['/tests/fixtures/', [path.join(REPO, 'tests', 'fixtures')]],
  ['/tests/e2e/pages/', [path.join(REPO, 'tests', 'e2e', 'pages')]],
  ['/web/dist/', [path.join(REPO, 'web', 'dist')]],
  ['/examples/', [path.join(REPO, 'examples')]],
  ['/', [PAGE_DIR, path.join(REPO, 'web')]],
];

function mimeOf(file) {
  return MIME[path.extname(file).toLowerCase()] || 'application/octet-stream';
}

// URL path -> absolute file path inside its mount, or null.
async function resolveFile(urlPath) {
  const [prefix, roots] = MOUNTS.find(([p]) => urlPath.startsWith(p));
  const rel = urlPath.slice(prefix.length);
  if (rel.split('/').some((seg) => seg === '..' || seg === '.') || rel.includes('\\') || rel.includes('\0'))
    return null;
  for (const root of roots) {
    const found = await resolveIn(root, rel);
    if (found) return found;
  }
  return null;
}

async function resolveIn(root, rel) {
  let file = path.join(root, rel);
  let st;
  try {
    st = await stat(file);
    if (st.isDirectory()) {
      if (rel !== '' && !rel.endsWith('/')) return { redirect: true };
      file = path.join(file, 'index.html');
      st = await stat(file);
    }
    if (!st.isFile()) return null;
    const [realFile, realRoot] = await Promise.all([realpath(file), realpath(root)]);
    if (realFile !== realRoot && !realFile.startsWith(realRoot + path.sep)) return null;
    return { file: realFile, size: st.size };
  } catch {
    return null;
  }
}

function send(res, status, text) {
  const body = Buffer.from(text + '\n');
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}

async function handle(req, res, isolate) {
  res.setHeader('Content-Security-Policy', CSP);
  if (isolate) {
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  }
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(res, 405, 'method not allowed');
  }
  let urlPath;
  try {
    urlPath = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    return send(res, 400, 'bad request');
  }
  const found = await resolveFile(urlPath);
  if (!found) return send(res, 404, `not found: ${urlPath}`);
  if (found.redirect) {
    const { search } = new URL(req.url, 'http://localhost');
    // same origin only: one leading slash, every segment re-encoded
    const segs = urlPath.split('/').filter((x) => x !== '').map(encodeURIComponent);
    res.setHeader('Location', `/${segs.join('/')}/${search}`);
    return send(res, 301, 'moved permanently');
  }
  res.writeHead(200, { 'Content-Type': mimeOf(found.file), 'Content-Length': found.size });
  if (req.method === 'HEAD') return res.end();
  const stream = createReadStream(found.file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** Start the server; resolves to {server, url} once it listens. */
export function startServer({ port = 8080, host = '127.0.0.1', isolate = true } = {}) {
  const server = createServer((req, res) => {
    handle(req, res, isolate).catch(() => { if (!res.headersSent) send(res, 500, 'internal error'); else res.destroy(); });
  });
  return listen(server, port, host).then((url) => ({ server, url }));
}

function parseArgs(argv) {
  const opts = { port: Number(process.env.PORT || 8080), host: '127.0.0.1', isolate: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') opts.port = Number(argv[++i]);
    else if (a === '--host') opts.host = argv[++i];
    else if (a === '--no-isolation') opts.isolate = false;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node scripts/serve.mjs [--port N] [--host ADDR] [--no-isolation]');
      process.exit(0);
    } else {
      console.error(`serve: unknown argument ${a}`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    console.error('serve: --port must be an integer in 0..65535');
    process.exit(2);
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const opts = parseArgs(process.argv.slice(2));
  if (!existsSync(path.join(PAGE_DIR, 'index.html'))) {
    console.error('serve: the page is not built (web/dist/page/index.html is missing): run `make page` ' +
      '(make wasm && npx vite build); serving the unbuilt sources, the page will not work');
  }
  if (!existsSync(WIDGET_BUNDLE)) {
    console.error('serve: the widget is not built (web/dist/widget/attnlab-widget.js is missing): run `make widget` ' +
      `for the example at ${EXAMPLE_PATH}`);
  }
  startServer(opts).then(
    ({ url }) => {
      console.log(`attnlab: serving ${url}  (Ctrl-C to stop)` +
        (opts.isolate ? '' : ' without cross-origin isolation: the page runs on one thread'));
      console.log(`attnlab: widget example at ${new URL(EXAMPLE_PATH, url).href}`);
    },
    (e) => {
      console.error(`serve: cannot listen on ${opts.host}:${opts.port}: ${e.message}` +
        (e.code === 'EADDRINUSE' ? ' (try --port 8081)' : ''));
      process.exit(1);
    });
}
