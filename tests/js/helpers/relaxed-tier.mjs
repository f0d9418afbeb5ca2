// relaxed-tier.mjs — prints, as JSON, a digest of the float bits of one run of the built-in model
// (attentions, logits) on the build loadModel picks for `--backend`, at `--threads` n. Spawned by
// tests/js/relaxed.test.js under different V8 tiers (--liftoff --no-wasm-tier-up, --no-liftoff), to
// check that V8 compiles f32x4.relaxed_madd the same way in its baseline and optimising compilers:
// a helper thread may run a function in the other tier than its caller.
import { createHash } from 'node:crypto';
import { loadModel } from '../../../web/src/index.js';

const arg = (k, d) => { const i = process.argv.indexOf(k); return i > 0 ? process.argv[i + 1] : d; };
const m = await loadModel(undefined, { backend: arg('--backend', 'auto'), threads: Number(arg('--threads', '1')) });
const h = createHash('sha256');
for (const opts of [{}, { interventions: [{ kind: 'soft', layer: 4, head: 'all', row: 9, col: 2, lambda: 2 }] }]) {
  const r = m.run('Because the storm intensified , the ship finally sank .', opts);
  h.update(new Uint8Array(r.attentions.buffer, r.attentions.byteOffset, r.attentions.byteLength));
  h.update(new Uint8Array(r.logits.buffer, r.logits.byteOffset, r.logits.byteLength));
}
console.log(JSON.stringify({ backend: m.backend, threads: m.engine.threads, digest: h.digest('hex') }));
m.dispose();
