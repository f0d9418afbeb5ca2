// gen-bpe-cases.mjs — write tests/fixtures/bpe_cases.json, the tokenizer case
// table shared by the C test (tests/c/test_bpe.c) and the JS reference test
// (tests/js/bpe-reference.test.js).
//
// Each row is {name, text, ids, decoded}, or {name, bytes_hex, ids, decoded}
// for input that is not valid UTF-8. The ids come from js-tiktoken's "gpt2"
// encoding with special tokens treated as plain text; for a bytes_hex row,
// from the string a TextDecoder makes of the bytes (each ill-formed
// subsequence becomes U+FFFD), which is what c/src/bpe.c promises to match.
// `decoded` is the ids' token bytes, concatenated and decoded as UTF-8 (with
// replacement, keeping a leading U+FEFF: js-tiktoken's own decode() uses a
// TextDecoder that drops a leading byte order mark, the C decoder does not).
//
//   node tests/js/gen-bpe-cases.mjs          (from the repository root)
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getEncoding } from 'js-tiktoken';
import { mulberry32 } from '../../web/src/core/rng.js';

const enc = getEncoding('gpt2');
const OUT = fileURLToPath(new URL('../fixtures/bpe_cases.json', import.meta.url));

// The seeded generator of the JS side (mulberry32), so the random rows are stable.
const rng = mulberry32;
const pick = (r, arr) => arr[Math.floor(r() * arr.length)];

const rows = [];
const text = (name, t) => rows.push({ name, text: t });
const bytes = (name, hex) => rows.push({ name, bytes_hex: hex });

// ---- the chapter -------------------------------------------------------------
text('the chapter sentence, spaces before punctuation', 'Because the storm intensified , the ship finally sank .');
text('the chapter sentence, ordinary punctuation', 'Because the storm intensified, the ship finally sank.');

// ---- contractions ------------------------------------------------------------
text('all seven lowercase contractions', "it's don't you're we've I'm they'll he'd");
text('uppercase contractions are not contractions', "IT'S DON'T YOU'RE WE'VE I'M THEY'LL HE'D");
text('mixed-case contraction', "It'S you'Re");
text('curly apostrophes are punctuation', 'it’s don’t you’re ‘quoted’');
text('contraction after a space', "rock 'n' roll, 's and 'll");
text('apostrophes in a row', "''s '''t 'x ' '");
text('contraction glued to punctuation', "!'s ?'ll .'d");
text('contraction at the very end', "the dog'");

// ---- numbers ----------------------------------------------------------------
text('a seven-digit number', '1234567');
text('a decimal number', '3.14');
text('a number with a thousands separator', '1,000');
text('numbers in a sentence', 'In 2024 there were 365 days, 8760 hours and 525600 minutes.');
text('signs, exponents and hex', '-42 +7 1e10 0x1F 007');
text('digits of other scripts and number symbols', '٣٤٥ ۱۲ ①②③ Ⅻ ½ ¾ ²³');
text('thirty repetitions of 1234567890', '1234567890'.repeat(30));

// ---- spaces -------------------------------------------------------------------
text('two spaces before a word', 'a  b');
text('three spaces before a word', 'a   b');
text('ten spaces before a word', 'a' + ' '.repeat(10) + 'b');
text('a thousand spaces before a word', 'x' + ' '.repeat(1000) + 'word');
text('trailing spaces', 'hello   ');
text('spaces only', '     ');
text('a single space', ' ');
text('leading spaces', '   hello');
text('one leading space', ' hello');
text('spaces before punctuation and digits', 'a  !  1  ?');

// ---- newlines and tabs ----------------------------------------------------------
text('a newline between lines', 'line1\nline2');
text('a blank line between paragraphs', 'para one\n\npara two');
text('windows line endings', 'windows\r\nline\r\n');
text('spaces, a newline and spaces before a word', 'word  \n  next');
text('newlines only', '\n\n\n');
text('a trailing newline', 'end\n');
text('a newline then a space and a word', '\n word');
text('tabs', '\tindented\tcode');
text('two tabs between words', 'a\t\tb');
text('space tab space before a word', ' \t x');
text('a carriage return alone', 'a\rb');
text('vertical tab and form feed', 'a\u000bb\u000cc');

// ---- unicode whitespace -----------------------------------------------------------
text('no-break space', 'a\u00a0b a \u00a0b');
text('ideographic space', '日本\u3000語\u3000\u3000です');
text('line and paragraph separators', 'one\u2028two\u2029three');
text('a byte order mark is whitespace in JavaScript', '\ufeffBOM text a\ufeff b');
text('next line U+0085 is not whitespace in JavaScript', 'a\u0085b \u0085 c');
text('zero width space is not whitespace', 'a\u200bb \u200b c');
text('em spaces before a word', 'a\u2003\u2003\u2003b');
text('narrow no-break space and thin space', '10\u202fkm 5\u2009m');

// ---- accents and combining marks -----------------------------------------------------
text('café', 'café');
text('naïve', 'naïve');
text('Ünïcödé', 'Ünïcödé');
text('a decomposed accent splits the word', 'cafe\u0301 au lait');
text('stacked combining marks', 'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇');
text('Vietnamese with precomposed letters', 'Tiếng Việt có dấu');

// ---- scripts -----------------------------------------------------------------------
text('Chinese', '注意力就是因果');
text('Japanese', '日本語のテキストです。カタカナとひらがな、漢字。');
text('Korean', '안녕하세요 세계');
text('Arabic', 'مرحبا بالعالم');
text('Hebrew', 'שלום עולם');
text('Hindi with vowel signs', 'नमस्ते दुनिया');
text('Thai', 'สวัสดีชาวโลก');
text('Russian', 'Привет, мир!');
text('Greek', 'Καλημέρα κόσμε');
text('English and Chinese mixed', 'The 注意 mechanism is 因果.');

// ---- emoji --------------------------------------------------------------------------
text('thumbs up with a skin tone', '👍🏽');
text('a family ZWJ sequence', '👨‍👩‍👧‍👦');
text('flags', '🇺🇸🇫🇷🇯🇵');
text('a heart with a variation selector', 'I ❤️ NY');
text('three smileys', '🙂🙂🙂');
text('a keycap sequence', '1️⃣ #️⃣');
text('emoji between words', 'good 👍 job 🎉!');

// ---- symbols -----------------------------------------------------------------------
text('logic and set symbols', '∀x ∈ ℝ: x² ≥ 0');
text('a LaTeX sum', '\\sum_{i=1}^{n} i = n(n+1)/2');
text('Greek letters and arrows', 'α β γ → ∞ ⇒ ⊕');
text('currency and legal signs', '©®™ §¶ €£¥ $100.00 50%');
text('punctuation runs', 'Hello, world!!! ... ?!? --- *** ___ === ,,,, ;;');
text('quotation marks of several languages', '"double" \'single\' «guillemets» „low“ 「かぎ」');
text('controls and DEL', 'a\u0000b\u0001c\u007fd\u001be');
text('soft hyphen and zero width joiner', 'co\u00adop a\u200db');
text('a literal replacement character', 'bad \ufffd char');
text('a private use character', 'x\ue000y');
text('a character beyond the BMP that is a letter', '𝒜𝓁𝓅𝒽𝒶 𐍈');

// ---- code, URLs, markup ----------------------------------------------------------------
text('python code', 'def f(x):\n    return x ** 2\n\n\nprint(f(3))\n');
text('C code', 'int main(void) {\n\treturn 0;\n}\n');
text('JavaScript code', 'const a = [1, 2, 3].map((x) => x * 2); // doubled');
text('JSON text', '{"key": "value", "n": [1, 2], "ok": true}');
text('a URL', 'https://example.com/path/to?query=1&x=y#frag');
text('an email address', 'mailto:someone@example.org');
text('an HTML injection attempt', '<img src=x onerror=alert(1)>');
text('HTML with an entity', '<p class="a">Hello &amp; bye</p>');
text('the end-of-text marker is plain text', '<|endoftext|>');
text('the end-of-text marker between words', 'Hello<|endoftext|>World');

// ---- long inputs -------------------------------------------------------------------------
{
  const r = rng(7);
  let w = '';
  for (let i = 0; i < 500; i++) w += String.fromCharCode(97 + Math.floor(r() * 26));
  text('a 500-letter random word', w);
}
text('a 2000-character repeated pattern', 'na'.repeat(1000));
text('a 2000-character pattern of mixed classes', 'ab1! '.repeat(400));
text('one letter a thousand times', 'a'.repeat(1000));
text('a long word of real syllables', 'antidisestablishmentarianism'.repeat(20));
text('the empty string', '');

// ---- random strings from a mixed alphabet (seeded) ---------------------------------------
{
  const alphabet = [
    ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', ...'0123456789', ...'  \n\t',
    ...".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`", "'s", "'ll", ' the', ' of', 'ing', 'tion',
    'é', 'ü', 'ß', 'ñ', 'ø', 'ł', 'я', 'ж', 'λ', 'Ω', '中', '国', '日', 'の', 'ア', '한', 'ب', 'ש', 'क', '्',
    '\u0301', '\u00a0', '\u3000', '\u2028', '\ufeff', '\u0085', '\u200b',
    '😀', '👍', '🏽', '\u200d', '🇺', '\ufe0f', '①', '½', '٣', '𝒜', '\ufffd',
  ];
  const r = rng(20240917);
  for (let k = 0; k < 16; k++) {
    const n = 10 + Math.floor(r() * 190);
    let s = '';
    for (let i = 0; i < n; i++) s += pick(r, alphabet);
    text(`random mixed string ${k + 1}`, s);
  }
}

// ---- invalid UTF-8 (raw bytes) ------------------------------------------------------------
bytes('a lone 0xFF byte', 'ff');
bytes('0xFF between letters', '61ff62');
bytes('an overlong slash', 'c0af');
bytes('a UTF-8 encoded surrogate', 'eda080');
bytes('a euro sign cut off at the end', 'e282');
bytes('a euro sign cut off before a space', 'e2822061');
bytes('a code point above U+10FFFF', 'f4908080');
bytes('four continuation bytes', '80808080');
bytes('a lone lead byte at the end', '68c3');
bytes('an emoji cut off after three bytes', '68656c6c6f20f09f9120776f726c64');
bytes('latin-1 e-acute in café', '636166e9');
bytes('a UTF-16 byte order mark', 'fffe680069');
bytes('invalid bytes inside a word and between spaces', '77 6f ff 72 64 20 20 fe 20 78'.replace(/ /g, ''));
bytes('a valid replacement character among invalid bytes', 'efbfbdefbfef bf bd'.replace(/ /g, ''));
bytes('F5 to FF lead bytes', 'f5f6f7f8f9fafbfcfdfeff');
bytes('an overlong three-byte NUL', 'e08080');
bytes('forty invalid bytes', 'ff'.repeat(40));

// ---- fill in ids and decoded ----------------------------------------------------------------
// Replacement mode, like a browser's default, but keeping a leading U+FEFF:
// c/src/bpe.c never changes well-formed UTF-8.
const td = new TextDecoder('utf-8', { ignoreBOM: true });
function decodeIds(ids) {
  // js-tiktoken keeps each token's bytes in textMap (id -> Uint8Array).
  if (!(enc.textMap instanceof Map)) throw new Error('js-tiktoken internals changed: no textMap');
  const parts = ids.map((id) => enc.textMap.get(id));
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { all.set(p, o); o += p.length; }
  return td.decode(all);
}
const hexToBytes = (h) => Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
const names = new Set();
for (const row of rows) {
  if (names.has(row.name)) throw new Error(`duplicate case name: ${row.name}`);
  names.add(row.name);
  const t = row.text ?? td.decode(hexToBytes(row.bytes_hex));
  // Special tokens as plain text: nothing allowed, nothing disallowed.
  row.ids = enc.encode(t, [], []);
  row.decoded = decodeIds(row.ids);
  if (row.decoded !== t) throw new Error(`round trip failed for ${row.name}`);
}

const body = rows.map((r) => '  ' + JSON.stringify(r)).join(',\n');
writeFileSync(OUT, '[\n' + body + '\n]\n');
console.log(`wrote ${rows.length} cases to ${OUT}`);
