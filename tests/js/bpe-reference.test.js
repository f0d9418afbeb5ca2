// bpe-reference.test.js — proves the tokenizer case table and the character
// tables the C tokenizer is built from, against two independent JS
// implementations of GPT-2's tokenizer:
//   * js-tiktoken (getEncoding('gpt2')): tiktoken's rank-based merge loop;
//   * gpt-3-encoder: a line-by-line port of OpenAI's encoder.py.
// tests/c/test_bpe.c then checks c/src/bpe.c against the same table.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { getEncoding } from 'js-tiktoken';

const require = createRequire(import.meta.url);
const gpt3 = require('gpt-3-encoder');
const tiktoken = getEncoding('gpt2');

const root = fileURLToPath(new URL('../../', import.meta.url));
const cases = JSON.parse(readFileSync(root + 'tests/fixtures/bpe_cases.json', 'utf8'));

const utf8 = new TextEncoder();
const td = new TextDecoder('utf-8', { ignoreBOM: true }); // replacement mode, keeps U+FEFF
const hexToBytes = (h) => Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
const textOf = (row) => row.text ?? td.decode(hexToBytes(row.bytes_hex));

// Token bytes from the very vocab.json the C code loads, through GPT-2's
// byte <-> unicode alphabet (encoder.py bytes_to_unicode).
const vocab = JSON.parse(readFileSync(root + 'models/brown-gpt2/vocab.json', 'utf8'));
const charToByte = new Map();
{
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    charToByte.set(String.fromCodePoint(printable ? b : 256 + n++), b);
  }
}
const tokenBytes = [];
for (const [tok, id] of Object.entries(vocab)) tokenBytes[id] = Uint8Array.from([...tok], (c) => charToByte.get(c));
const decodeIds = (ids) => {
  const parts = ids.map((id) => tokenBytes[id]);
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { all.set(p, o); o += p.length; }
  return td.decode(all);
};

describe('the tokenizer case table', () => {
  test('has at least 80 rows with unique names, text or bytes_hex, ids and decoded', () => {
    expect(cases.length).toBeGreaterThanOrEqual(80);
    expect(new Set(cases.map((r) => r.name)).size).toBe(cases.length);
    for (const r of cases) {
      expect(typeof r.name).toBe('string');
      expect((r.text === undefined) !== (r.bytes_hex === undefined)).toBe(true);
      expect(Array.isArray(r.ids)).toBe(true);
      expect(typeof r.decoded).toBe('string');
    }
    expect(cases.filter((r) => r.bytes_hex !== undefined).length).toBeGreaterThanOrEqual(10);
  });

  test.each(cases.map((r) => [r.name, r]))('%s: js-tiktoken gives the table ids', (_, row) => {
    expect(tiktoken.encode(textOf(row), [], [])).toEqual(row.ids);
  });

  test.each(cases.map((r) => [r.name, r]))('%s: gpt-3-encoder gives the table ids', (_, row) => {
    expect(gpt3.encode(textOf(row))).toEqual(row.ids);
  });

  test.each(cases.map((r) => [r.name, r]))('%s: the ids decode to the text', (_, row) => {
    expect(decodeIds(row.ids)).toBe(row.decoded);
    expect(row.decoded).toBe(textOf(row));
  });

  test('bytes_hex rows are really not UTF-8 and decode with U+FFFD', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    for (const r of cases.filter((x) => x.bytes_hex !== undefined)) {
      expect(() => fatal.decode(hexToBytes(r.bytes_hex))).toThrow();
      expect(r.decoded).toContain('\ufffd');
    }
  });

  test('text rows survive a UTF-8 round trip unchanged', () => {
    for (const r of cases.filter((x) => x.text !== undefined)) expect(td.decode(utf8.encode(r.text))).toBe(r.text);
  });
});

// The C pre-tokenizer's classes must be the JS engine's, code point by code point.
describe('c/src/unicode_tables.h', () => {
  const header = readFileSync(root + 'c/src/unicode_tables.h', 'utf8');
  const rangesOf = (name) => {
    const body = header.match(new RegExp(`${name}\\[\\d+\\]\\[2\\] = \\{([^;]*)\\};`))[1];
    return [...body.matchAll(/\{0x([0-9A-F]+),0x([0-9A-F]+)\}/g)].map((m) => [parseInt(m[1], 16), parseInt(m[2], 16)]);
  };
  const member = (ranges) => {
    const set = new Uint8Array(0x110000);
    for (const [lo, hi] of ranges) set.fill(1, lo, hi + 1);
    return set;
  };
  const tables = [
    ['uni_letter_ranges', /\p{L}/u, 'UNI_LETTER'],
    ['uni_number_ranges', /\p{N}/u, 'UNI_NUMBER'],
    ['uni_space_ranges', /\s/u, 'UNI_SPACE'],
  ];

  test.each(tables)('%s holds exactly the code points that match %s in this JS engine', (name, re) => {
    const ranges = rangesOf(name);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThan(ranges[i - 1][1] + 1);
    const set = member(ranges);
    const wrong = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if ((set[cp] === 1) !== re.test(String.fromCodePoint(cp))) wrong.push(cp.toString(16));
    }
    expect(wrong.slice(0, 20)).toEqual([]);
  });

  test('the Latin-1 direct table agrees with the ranges', () => {
    const body = header.match(/uni_latin1_class\[256\] = \{([^;]*)\};/)[1].replace(/\/\*[^*]*\*\//g, '');
    const cls = body.split(',').map((s) => s.trim()).filter(Boolean);
    expect(cls.length).toBe(256);
    for (let cp = 0; cp < 256; cp++) {
      const s = String.fromCodePoint(cp);
      const want = /\p{L}/u.test(s) ? 'UNI_LETTER' : /\p{N}/u.test(s) ? 'UNI_NUMBER' : /\s/u.test(s) ? 'UNI_SPACE' : 'UNI_OTHER';
      expect(cls[cp]).toBe(want);
    }
  });
});
