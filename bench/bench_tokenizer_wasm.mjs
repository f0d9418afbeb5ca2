// bench_tokenizer_wasm.mjs — vocabulary load time in wasm (web/dist/attnlab.wasm
// through web/src/core/wasm.js), random vs crafted to collide under the old
// unkeyed FNV-1a (issue 21 item 2 measured 15.1 s for 100k crafted tokens in
// wasm). The sets come from `build/bench/bench_tokenizer --dump DIR`, wrapped
// as a tokenizer.json (the same tables as vocab.json). Wall time, median of 3.
//   node bench/bench_tokenizer_wasm.mjs DIR        (make bench-tokenizer runs it)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instantiateAttnlab } from '../web/src/core/wasm.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const dir = process.argv[2];
const w = await instantiateAttnlab(readFileSync(join(ROOT, 'web/dist/attnlab.wasm')));
console.log('### vocabulary load in wasm (tokenizer.json, wall ms, median of 3)\n');
console.log('| tokens | random (ms) | crafted (ms) |\n|---:|---:|---:|');
for (const n of [100000, 999000]) {
  const row = [];
  for (const kind of ['random', 'crafted']) {
    const vocab = readFileSync(join(dir, `vocab_${kind}_${n}.json`), 'utf8');
    const json = `{"normalizer": null, "pre_tokenizer": {"type": "ByteLevel"}, "decoder": null, "post_processor": null, ` +
      `"added_tokens": [], "model": {"type": "BPE", "merges": [], "vocab": ${vocab}}}`;
    const bytes = new TextEncoder().encode(json);
    const t = [];
    for (let r = 0; r < 3; r++) {
      const t0 = performance.now();
      const h = w.bpeLoadHf(bytes);
      t.push(performance.now() - t0);
      w.bpeFree(h);
    }
    t.sort((a, b) => a - b);
    row.push(t[1].toFixed(0));
  }
  console.log(`| ${n} | ${row.join(' | ')} |`);
}
