// docs-author.test.js — what "done" means for issue 7, literally: an author with
// a fresh VitePress site installs the packed attnlab (npm pack → npm install
// --prefer-offline of the tarball), copies the setup and the one snippet from
// docs/guide/embedding.md (read from the guide itself, so the guide is what is
// tested), builds the site, and a reader gets a live figure.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/docs-author.test.js
// Runs `npm pack` (prepack: make wasm widget). VitePress comes from this
// repository's node_modules (linked into the fresh site: no network).

import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARTIFACTS, BUILTIN_WEIGHTS, CHAPTER, ROOT } from './helpers.js';
import { startStatic, launch, waitWidgets, widgetInfo } from './docs-helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
function run(cmd, args, cwd, timeout = 300_000) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** The code block of language `lang` that follows the first occurrence of `after` in the guide. */
function blockAfter(md, after, lang) {
  const at = md.indexOf(after);
  if (at < 0) throw new Error(`the guide no longer says "${after}"`);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(md.slice(at));
  if (!m) throw new Error(`no ${lang} block after "${after}"`);
  return m[1];
}

let tmp, site, srv, browser;

beforeAll(async () => {
  if (!HAVE_MODEL) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  tmp = mkdtempSync(join(tmpdir(), 'attnlab-author-'));
  const out = run('npm', ['pack', '--json', '--pack-destination', tmp], ROOT);
  const packed = JSON.parse(out.slice(out.search(/^\[/m)))[0];   // prepack's make output comes first
  site = join(tmp, 'site');
  mkdirSync(join(site, 'docs/.vitepress/theme'), { recursive: true });
  writeFileSync(join(site, 'package.json'), JSON.stringify({ name: 'someones-book', private: true, type: 'module' }));
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(tmp, packed.filename)], site);
  // VitePress and its dependencies from this repository (what `npm install vitepress` would bring)
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name === 'attnlab' || existsSync(join(site, 'node_modules', name))) continue;
    symlinkSync(join(ROOT, 'node_modules', name), join(site, 'node_modules', name));
  }
  // the guide's setup, as written
  const guide = readFileSync(join(ROOT, 'docs/guide/embedding.md'), 'utf8');
  writeFileSync(join(site, 'docs/.vitepress/config.mjs'),
    `import { defineConfig } from 'vitepress';\n${blockAfter(guide, 'Once, in `.vitepress/config.mjs`', 'js')}`);
  writeFileSync(join(site, 'docs/.vitepress/theme/index.js'), blockAfter(guide, 'Once, in `.vitepress/theme/index.js`', 'js'));
  run('bash', ['-e', '-c', blockAfter(guide, 'Copy the wasm and the model', 'sh')], site);
  const snippet = blockAfter(guide, 'One tag puts one of', 'html').trim();
  writeFileSync(join(site, 'docs/index.md'), `# Someone's chapter\n\nSome running text.\n\n${snippet}\n`);
  run(join(site, 'node_modules/.bin/vitepress'), ['build', 'docs'], site, 300_000);
  srv = await startStatic({ mounts: [['/', join(site, 'docs/.vitepress/dist')]], cleanUrls: true });
  browser = await launch();
}, 900_000);

afterAll(async () => {
  if (browser) await browser.close();
  if (srv) await srv.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!HAVE_MODEL)('an author following docs/guide/embedding.md', () => {
  it('gets a live figure in a fresh VitePress site from the one snippet', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(srv.url);
    await waitWidgets(page);
    const [w] = await widgetInfo(page);
    expect(w).toMatchObject({ figure: '1', state: 'ready', svgs: 1, figures: ['fig1'] });
    expect(w.cells).toBe(2 * 10 * 10);                  // the chapter's 10 tokens, attention + asymmetry
    expect(w.texts).toContain(CHAPTER);
    expect(await page.evaluate(() => globalThis.attnlabWidget.stats().workersStarted)).toBe(1);
    expect(errors).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-author-site.png') });
  });
});
