// i18n-keys.test.js — every string table has the same keys in English and Chinese (the page's is checked in
// tests/e2e/page-units.test.js too): a key missing in one language is listed by name, and a function-valued
// label takes the same arguments in both.

import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { STRINGS as PAGE } from '../../web/src/page/i18n.js';
import { WIDGET_STRINGS } from '../../web/src/widget/i18n.js';
import { LINEAGE_STRINGS } from '../../web/src/lineage/i18n.js';

const TABLES = { page: PAGE, widget: WIDGET_STRINGS, lineage: LINEAGE_STRINGS };

describe('string tables: the same keys in both languages', () => {
  for (const [name, t] of Object.entries(TABLES)) {
    it(`${name}: en and zh have the same keys, types and arities`, () => {
      expect(Object.keys(t).sort()).toEqual(['en', 'zh']);
      const en = Object.keys(t.en), zh = Object.keys(t.zh);
      expect(en.length).toBeGreaterThan(10);
      const missing = { zh: en.filter((k) => !(k in t.zh)), en: zh.filter((k) => !(k in t.en)) };
      expect(missing, `${name}: keys missing per language`).toEqual({ zh: [], en: [] });
      for (const k of en) {
        expect(typeof t.zh[k], `${name}.${k}`).toBe(typeof t.en[k]);
        if (typeof t.en[k] === 'function') expect(t.zh[k].length, `${name}.${k} arity`).toBe(t.en[k].length);
        if (typeof t.en[k] === 'string') expect(t.zh[k].length > 0 || t.en[k].length === 0, `${name}.${k} empty in zh`).toBe(true);
      }
    });
  }
});

// Every key the code asks for (t('key', …) in the sources, data-i18n* in the HTML) is in the tables:
// the one translator (web/src/ui/i18n.js) throws on a missing key rather than show the key.
const SOURCES = {
  page: { dir: 'web/src/page', html: 'web/index.html' },
  widget: { dir: 'web/src/widget', html: null },
  lineage: { dir: 'web/src/lineage', html: 'web/lineage.html' },
};
const ROOT = new URL('../../', import.meta.url);

function keysUsed({ dir, html, not = [], only = null }) {
  const files = readdirSync(new URL(dir, ROOT)).filter((f) => f.endsWith('.js') && f !== 'i18n.js' && !not.includes(f) &&
    (!only || only.includes(f)));
  const code = files.map((f) => readFileSync(new URL(`${dir}/${f}`, ROOT), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')).join('\n');
  const markup = html ? readFileSync(new URL(html, ROOT), 'utf8') : '';
  return new Set([...code.matchAll(/\bt\('([A-Za-z0-9_]+)'/g), ...markup.matchAll(/data-i18n(?:-aria|-title|-alt)?="([A-Za-z0-9_]+)"/g)].map((m) => m[1]));
}

describe('string tables: every key the code uses', () => {
  for (const [name, src] of Object.entries(SOURCES)) {
    it(`${name}: no key used in the code is missing from en or zh`, () => {
      const used = keysUsed(src);
      expect(used.size).toBeGreaterThan(10);
      const t = TABLES[name];
      expect({ en: [...used].filter((k) => !(k in t.en)), zh: [...used].filter((k) => !(k in t.zh)) }).toEqual({ en: [], zh: [] });
    });
  }

  // card.js asks for a card's words as its panel's prefix and the word (t(p + 'Computing')), or 'card' and the word
  // for the words every card says alike (cardCompute): no literal key to find in the code
  it('page: every panel has the words its cards ask for (card.js: prefix + word, card + word)', () => {
    const PRESSED = ['Title', 'Intro', 'Computing', 'Source', 'SrcSet', 'Of', 'ListBad', 'ListEmpty', 'PairsLabel'];
    const words = {
      card: ['Compute', 'Cancel', 'Cancelled', 'Rung1', 'Rung2', 'SrcList', 'SetLabel', 'Limit', 'NameList', 'PairCount'],
      ev: [...PRESSED, 'SrcSentence', 'SrcPair', 'ListLabel', 'ListCount', 'NameSentence'],
      cx: PRESSED,
      hp: ['PressCompute', 'Progress', 'WaitFigures', 'Computing', 'ExportAria', 'ExportFailed'],
    };
    const missing = Object.entries(words).flatMap(([p, ws]) => ws.map((w) => `${p}${w}`)).filter((k) => !(k in PAGE.en) || !(k in PAGE.zh));
    expect(missing).toEqual([]);
  });

  it('the translator throws on a missing key and an unknown language, naming them', async () => {
    const { makeTranslator } = await import('../../web/src/ui/i18n.js');
    const tr = makeTranslator({ en: { a: 'A', f: (x) => `F${x}` }, zh: { a: '甲', f: (x) => `乙${x}` } }, 'test');
    expect(tr('zh')('f', 3)).toBe('乙3');
    expect(() => tr('en')('nope')).toThrow("test i18n: no string 'nope' for en");
    expect(() => tr('fr')).toThrow('test i18n: unknown language fr');
  });
});
