// readable.test.js — labels for byte-level tokens (web/src/page/readable.js) and
// Model#tokenBytes on the built-in model: the bytes of the tokens concatenate to
// the text's UTF-8, and no label of a partial token is "�".
import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readableTokens, readableToken, utf8Spans } from '../../web/src/page/readable.js';
import { loadModel } from '../../web/src/index.js';

const enc = (s) => new TextEncoder().encode(s);
const MODEL = fileURLToPath(new URL('../../models/brown-gpt2/', import.meta.url));

describe('readableTokens', () => {
  it('shows a character at the token that completes it, and the bytes of a token that completes none', () => {
    const b = enc('泳🌧 a');
    const r = readableTokens([b.subarray(0, 2), b.subarray(2, 3), b.subarray(3, 5), b.subarray(5, 7), b.subarray(7)]);
    expect(r.labels).toEqual(['⟨e6 b3⟩', '泳', '⟨f0 9f⟩', '🌧', ' a']);
    expect(r.partial).toEqual([true, true, true, true, false]);
    expect(r.titles[0]).toBe('bytes e6 b3 · 泳');
    expect(r.titles[4]).toBe('');
  });
  it('shows invalid bytes as bytes and whole tokens unchanged', () => {
    const r = readableTokens([new Uint8Array([0xff]), enc(' hi'), new Uint8Array([0xed, 0xa0, 0x80])], '字节');
    expect(r.labels).toEqual(['⟨ff⟩', ' hi', '⟨ed a0 80⟩']);
    expect(r.titles[0]).toBe('字节 ff · ⟨ff⟩');
    expect(readableToken(new Uint8Array([0xe6]), '\uFFFD')).toEqual({ label: '⟨e6⟩', title: 'bytes e6 · ⟨e6⟩' });
    expect(readableToken(enc(' the'), ' the')).toEqual({ label: ' the', title: '' });
  });
  it('utf8Spans rejects overlong and surrogate forms', () => {
    expect(utf8Spans(new Uint8Array([0xc0, 0x80])).map((s) => s.text)).toEqual([null, null]);
    expect(utf8Spans(new Uint8Array([0xe0, 0x80, 0x80])).every((s) => s.text === null)).toBe(true);
    expect(utf8Spans(enc('aé中😀')).map((s) => s.text)).toEqual(['a', 'é', '中', '😀']);
  });
});

describe.skipIf(!existsSync(`${MODEL}model.safetensors`))('Model#tokenBytes', () => {
  it('gives bytes that concatenate to the text, and readable labels without U+FFFD', async () => {
    const m = await loadModel(MODEL);
    try {
      const text = 'The 🌧 storm over 泳池 made שלום sink .';
      const { ids, tokens } = m.tokenize(text);
      const bytes = m.tokenBytes(ids);
      expect(bytes.length).toBe(ids.length);
      const all = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
      let o = 0;
      for (const b of bytes) { all.set(b, o); o += b.length; }
      expect(Array.from(all)).toEqual(Array.from(enc(text)));
      expect(tokens.some((s) => s.includes('\uFFFD'))).toBe(true);   // the display strings the page used to show
      const { labels } = readableTokens(bytes);
      for (const l of labels) expect(l).not.toContain('\uFFFD');
      expect(() => m.tokenBytes([m.config.vocabSize])).toThrow(expect.objectContaining({ code: expect.any(String) }));
    } finally {
      m.dispose();
    }
  });
});
