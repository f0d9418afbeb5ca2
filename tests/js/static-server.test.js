// static-server.test.js — scripts/static-server.mjs, which `npm run docs:preview` and the browser tests serve
// the built site with: the weights and the wasm go out as they are on disk (no Content-Encoding even when the
// client accepts gzip), with their types and lengths; clean URLs, 404.html, ETag revalidation, no escape.

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { startStatic } from '../../scripts/static-server.mjs';

const ROOT = new URL('../../', import.meta.url).pathname;
let dir, srv;

function get(path, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    const u = new URL(path, srv.url);
    const req = request({ host: '127.0.0.1', port: u.port, path: u.pathname, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attnlab-static-'));
  mkdirSync(join(dir, 'attnlab/models/m'), { recursive: true });
  writeFileSync(join(dir, 'attnlab/models/m/model.safetensors'), Buffer.alloc(100_000, 7));
  writeFileSync(join(dir, 'attnlab/attnlab.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  writeFileSync(join(dir, 'index.html'), '<p>home</p>');
  writeFileSync(join(dir, 'guide.html'), '<p>guide</p>');
  writeFileSync(join(dir, '404.html'), '<p>lost</p>');
  symlinkSync('/etc', join(dir, 'out'));
  srv = await startStatic({ mounts: [['/', dir]], cleanUrls: true });
});

afterAll(async () => {
  if (srv) await srv.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the static server of the docs preview', () => {
  it('sends the weights and the wasm uncompressed, with their type and length, even to a gzip client', async () => {
    const st = await get('/attnlab/models/m/model.safetensors', { 'accept-encoding': 'gzip, deflate, br' });
    expect(st.status).toBe(200);
    expect(st.headers['content-type']).toBe('application/octet-stream');
    expect(st.headers['content-encoding']).toBeUndefined();
    expect(Number(st.headers['content-length'])).toBe(100_000);
    expect(st.body.equals(Buffer.alloc(100_000, 7))).toBe(true);
    const w = await get('/attnlab/attnlab.wasm', { 'accept-encoding': 'gzip' });
    expect(w.headers['content-type']).toBe('application/wasm');
    expect(w.headers['content-encoding']).toBeUndefined();
  });

  it('revalidates with 304, serves clean URLs and 404.html, and refuses escapes and other methods', async () => {
    const a = await get('/attnlab/attnlab.wasm');
    const b = await get('/attnlab/attnlab.wasm', { 'if-none-match': a.headers.etag });
    expect(b.status).toBe(304);
    expect(b.body.length).toBe(0);
    expect((await get('/guide')).body.toString()).toBe('<p>guide</p>');
    expect((await get('/')).body.toString()).toBe('<p>home</p>');
    const miss = await get('/nowhere');
    expect(miss.status).toBe(404);
    expect(miss.body.toString()).toBe('<p>lost</p>');
    expect((await get('/out/passwd')).status).toBe(404);          // a symlink out of the root
    expect((await get('/%2e%2e/%2e%2e/etc/passwd')).status).toBe(404);
    expect((await get('/index.html', {}, 'POST')).status).toBe(405);
  });

  it('is what npm run docs:preview runs (not vitepress preview, which gzips on the fly)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts['docs:preview']).toBe('make docs && node scripts/docs-preview.mjs');
    expect(readFileSync(join(ROOT, 'scripts/docs-preview.mjs'), 'utf8')).toContain("from './static-server.mjs'");
  });
});
