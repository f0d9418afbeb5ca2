// shard-names.test.js — the shard-name rule of an index (issue 36, item 1), one rule in C and JS: a property test
// over random and crafted names that the JS check (sources.js isShardName) and the C check (alab_shard_name_ok,
// in wasm) agree on every one, and that every name they accept resolves to a file in the model's folder, never to
// another origin, scheme or directory.
import { describe, it, expect, beforeAll } from 'vitest';
import { instantiateAttnlab } from '../../web/src/core/wasm.js';
import { isShardName, fileInFolder } from '../../web/src/sources.js';

let w;
beforeAll(async () => { w = await instantiateAttnlab(); });

const cOk = (name) => w.scoped((alloc) => {
  const bytes = new TextEncoder().encode(name);
  const p = alloc(Math.max(bytes.length, 1));
  w.writeBytes(p, bytes);
  return w.fn.alab_shard_name_ok(p, bytes.length) === 1;
});

// mulberry32: a seeded generator, so a failure names its case
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const ALPHABET = ['a', 'Z', '0', '9', '.', '_', '-', '+', '/', '\\', ':', '%', '2', 'e', '\0', '\x01', '\x7f', ' ', '?', '#',
  '@', 'é', '\u202e', '\ud83d\ude00', 'file:', 'https:', '..', '%2e', '%2f', '.safetensors'];

describe('one shard-name rule, in C and in JS', () => {
  it('agree on 20 000 random names, and an accepted name stays in the folder', () => {
    const r = rng(36);
    const folders = [new URL('http://127.0.0.1:8080/models/qwen3/'), new URL('https://example.org/m/'), new URL('file:///tmp/model/')];
    let accepted = 0;
    for (let k = 0; k < 20000; k++) {
      const n = Math.floor(r() * 8);
      let name = '';
      for (let i = 0; i < n; i++) name += ALPHABET[Math.floor(r() * ALPHABET.length)];
      if (r() < 0.6) name += '.safetensors';
      const js = isShardName(name), c = cOk(name);
      expect([name, js]).toEqual([name, c]);
      if (js) {
        accepted++;
        for (const f of folders) {
          const u = fileInFolder(f, name);
          expect(u.origin).toBe(f.origin);
          expect(u.pathname).toBe(f.pathname + name);
        }
      }
    }
    expect(accepted).toBeGreaterThan(500); // the generator reaches both sides of the rule
  });

  it('refuses the names that once left the folder, and keeps Hugging Face names', () => {
    for (const bad of ['https:127.0.0.1:9000.safetensors', 'file:etc.safetensors', '%2e%2e.safetensors', '..safetensors',
      '.safetensors', 'a/b.safetensors', 'a\\b.safetensors', 'x\0.safetensors', 'x.safetensors\0', `${'a'.repeat(244)}.safetensors`])
      expect([bad, isShardName(bad), cOk(bad)]).toEqual([bad, false, false]);
    for (const good of ['model-00001-of-00002.safetensors', 'diffusion_pytorch_model.safetensors', `${'a'.repeat(243)}.safetensors`])
      expect([good, isShardName(good), cOk(good)]).toEqual([good, true, true]);
    // after resolution, too: a name the rule would pass but that resolves elsewhere is refused
    expect(() => fileInFolder(new URL('http://h/m/'), '../x.safetensors')).toThrow(/does not resolve/);
    expect(() => fileInFolder(new URL('http://h/m/'), 'https://other/x.safetensors')).toThrow(/does not resolve/);
  });
});
