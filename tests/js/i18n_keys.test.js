// i18n_keys.test.js — every string table has the same keys in English and Chinese (the page's is checked in
// tests/e2e/page-units.test.js too): a key missing in one language is listed by name, and a function-valued
// label takes the same arguments in both.

import { describe, it, expect } from 'vitest';
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
