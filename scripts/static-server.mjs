// static-server.mjs — serve directories as they are: no compression, the right
// Content-Type for every file the site and the widget fetch (model.safetensors as
// application/octet-stream, attnlab.wasm as application/wasm), ETags with
// Cache-Control: no-cache (a warm reload revalidates with 304s), clean URLs
// (/a → a.html, as VitePress links its pages) and 404.html when asked.
//
// Used by `npm run docs:preview` (scripts/docs-preview.mjs), the browser tests of
// the widget and the site (tests/e2e/docs-helpers.js) and bench/bench_docs.mjs.
// Why not `vitepress preview`: it gzips every response on the fly, so the 15 MB
// weights cost tens of seconds of CPU per load, and it sends .safetensors with no
// Content-Type.

import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';

export const MIME = Object.freeze({
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.txt': 'text/plain; charset=utf-8', '.md': 'text/markdown; charset=utf-8',
  '.woff2': 'font/woff2', '.safetensors': 'application/octet-stream', '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
});

async function resolveIn(root, rel, cleanUrls) {
  const tries = [rel];
  if (cleanUrls && !path.extname(rel)) tries.push(`${rel}.html`);
  for (const r of tries) {
    let file = path.join(root, r);
    try {
      let st = await stat(file);
      if (st.isDirectory()) { file = path.join(file, 'index.html'); st = await stat(file); }
      if (!st.isFile()) continue;
      const [rf, rr] = await Promise.all([realpath(file), realpath(root)]);
      if (rf !== rr && !rf.startsWith(rr + path.sep)) continue;
      return { file: rf, st };
    } catch { /* next */ }
  }
  return null;
}

/**
 * Serve mounts [[urlPrefix, dir], …] (longest prefix first).
 * csp: a Content-Security-Policy header value or null. cleanUrls: /a → a.html and 404.html for a miss.
 * Counts requests and bytes sent (stats) for the benchmark.
 * @returns {Promise<{server, url, stats: {requests, bytes, notModified}, close()}>}
 */
export function startStatic({ mounts, csp = null, cleanUrls = false, port = 0, host = '127.0.0.1' }) {
  const stats = { requests: 0, bytes: 0, notModified: 0 };
  const sorted = [...mounts].sort((a, b) => b[0].length - a[0].length);
  const server = createServer(async (req, res) => {
    stats.requests += 1;
    if (csp) res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405, { Allow: 'GET, HEAD' }).end(); return; }
    let p;
    try { p = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { res.writeHead(400).end(); return; }
    const m = sorted.find(([pre]) => p.startsWith(pre));
    const rel = m ? p.slice(m[0].length) : null;
    if (!m || rel.split('/').some((s) => s === '..') || rel.includes('\0')) { res.writeHead(404).end('not found'); return; }
    const found = await resolveIn(m[1], rel, cleanUrls);
    if (!found) {
      const nf = cleanUrls ? await resolveIn(m[1], '404.html', false) : null;
      res.writeHead(404, { 'Content-Type': 'text/html; charset=utf-8' });
      if (nf) createReadStream(nf.file).pipe(res); else res.end('not found');
      return;
    }
    const etag = `"${found.st.size.toString(16)}-${Math.floor(found.st.mtimeMs).toString(16)}"`;
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'no-cache');
    if (req.headers['if-none-match'] === etag) { stats.notModified += 1; res.writeHead(304).end(); return; }
    res.writeHead(200, { 'Content-Type': MIME[path.extname(found.file).toLowerCase()] || 'application/octet-stream',
                         'Content-Length': found.st.size });
    if (req.method === 'HEAD') { res.end(); return; }
    stats.bytes += found.st.size;
    const s = createReadStream(found.file);
    s.on('error', () => res.destroy());
    s.pipe(res);
  });
  return listen(server, port, host).then((url) => ({ server, stats, url, close: () => new Promise((r) => server.close(r)) }));
}

/** server.listen(port, host); resolves to its URL (http://localhost:PORT/ for a loopback host). */
export function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const { port: actual } = server.address();
      const name = host === '127.0.0.1' || host === '::1' ? 'localhost' : host;
      resolve(`http://${name}:${actual}/`);
    });
  });
}
