// page-lang-walk.test.js — issue 38 item 8 in headless Chromium: every string of the page is in the reader's
// language. The page is opened in one language, drawn, switched to the other (so strings built at load time
// and kept are caught too), scrolled to the end, and every visible text node and every aria-label / title /
// placeholder is read: in Chinese no Latin word may remain but the allowed names and terms (model and file
// names, method names, units, formula letters); in English no Chinese character but the language button's.
// Text the reader typed or the model produced (tokens, sentences, predictions) is not UI and is left out.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-lang-walk

import { describe, it, expect } from 'vitest';
import { watchedPage, waitDrawn, useBrowser } from './helpers.js';

const env = useBrowser();

/** Latin words a Chinese page keeps: names of things (people, models, formats, programs) and the chapter's terms. */
const ALLOWED_LATIN = new Set([
  'attnlab', 'GPT', 'BERT', 'Hugging', 'Face', 'huggingface', 'co', 'WebAssembly', 'wasm', 'SIMD', 'threads',
  'JSON', 'SVG', 'PNG', 'KL', 'DAG', 'softmax', 'logit', 'logits', 'MLP', 'Pearl', 'Elhage', 'Spearman', 'Kendall',
  'Hopfield', 'do', 'tr', 'ij', 'English', 'MB', 'GB', 'ln',
]);

/** Every UI word of the page that is not in `lang`: [{word, where}] (first place each is seen). */
function foreignWords(page, lang, allowed) {
  return page.evaluate(([lang, allowed]) => {
    const ok = new Set(allowed);
    // not UI: what the reader typed, the tokens and predictions of the model, model names and file names
    const NOT_UI = '#tokens, textarea, script, style, #row, #col, .top tbody, #model-select, #controls-summary, #model-status, .hp-align, code, kbd';
    const typed = new Set();
    for (const e of document.querySelectorAll('textarea, input[type="text"]')) for (const w of e.value.split(/[^A-Za-z']+/)) typed.add(w);
    for (const e of document.querySelectorAll('#tokens .tok-s, [placeholder]')) for (const w of (e.textContent + ' ' + (e.getAttribute('placeholder') || '')).split(/[^A-Za-z']+/)) typed.add(w);
    const strip = (s) => s
      .replace(/“[^”]*”|"[^"]*"|‘[^’]*’/g, ' ')                              // quoted examples
      .replace(/[\w./-]+\.(json|txt|safetensors|md|html)\b/g, ' ')         // file names and paths
      .replace(/\b[\w.-]*\d[\w.-]*\b/g, ' ');                              // names with digits: gpt2, L5H0, Qwen2.5-0.5B
    const out = new Map();
    const check = (text, where) => {
      const s = strip(text);
      const found = lang === 'zh' ? (s.match(/[A-Za-z][A-Za-z'-]*[A-Za-z]/g) || []).filter((w) => !ok.has(w) && !typed.has(w))
        : (s.match(/[\u3400-\u9fff]+/g) || []);
      for (const w of found) if (!out.has(w)) out.set(w, where);
    };
    const shown = (e) => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const p = n.parentElement;
      if (!p || p.closest(NOT_UI) || !shown(p) || p.closest('#lang')) continue;
      check(n.textContent, p.closest('[id]')?.id || p.tagName);
    }
    // a menu's options are not laid out: read them when their menu is shown
    for (const o of document.querySelectorAll('select option')) {
      const sel = o.closest('select');
      if (!sel.closest(NOT_UI) && shown(sel)) check(o.textContent, `option of ${sel.id}`);
    }
    for (const e of document.querySelectorAll('[aria-label], [title]')) {
      if (e.closest(NOT_UI) || e.id === 'lang') continue;
      for (const a of ['aria-label', 'title']) if (e.hasAttribute(a)) check(e.getAttribute(a), `@${a} ${e.id || e.tagName}`);
    }
    check(document.title, 'title');
    return [...out].map(([word, where]) => ({ word, where }));
  }, [lang, allowed]);
}

async function walkAfterSwitch(from) {
  const to = from === 'en' ? 'zh' : 'en';
  const W = await watchedPage(env);
  const { page } = W;
  try {
    await page.goto(`${env.url}?lang=${from}`);
    await waitDrawn(page);
    await page.click('#lang');
    await page.waitForFunction((l) => document.documentElement.lang.startsWith(l), to);
    // to the end and back: every panel has built what it builds when seen
    for (let y = 0; y < 40; y++) {
      const done = await page.evaluate(() => { window.scrollBy(0, window.innerHeight); return window.scrollY + window.innerHeight >= document.body.scrollHeight - 2; });
      await page.waitForTimeout(60);
      if (done) break;
    }
    await page.waitForTimeout(500);
    const words = await foreignWords(page, to, [...ALLOWED_LATIN]);
    expect(W.issues.pageErrors).toEqual([]);
    return words;
  } finally {
    await W.context.close();
  }
}

describe('every UI string in the reader\'s language', () => {
  it('opened in English, switched to 中文: no Latin word but the allowed names and terms', async () => {
    expect(await walkAfterSwitch('en')).toEqual([]);
  }, 180_000);

  it('opened in 中文, switched to English: no Chinese character (the language button aside)', async () => {
    expect(await walkAfterSwitch('zh')).toEqual([]);
  }, 180_000);
});
