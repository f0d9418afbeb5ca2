// bench_figures.mjs — median time to build and serialise the four chapter figures (1400 px, the built-in
// model, last layer) at T = 10 and T = 60, for one tree: node bench/bench_figures.mjs [TREE] (default: this one).
const tree = process.argv[2] ? (await import('node:path')).resolve(process.argv[2]) : new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const { loadModel } = await import(`${tree}/web/src/index.js`);
const F = await import(`${tree}/web/src/figures/index.js`);
const m = await loadModel(`${tree}/models/brown-gpt2`);
const texts = { 10: 'Because the storm intensified , the ship finally sank .', 64: Array(8).fill('Because the storm intensified , the ship finally sank .').join(' ').split(' ').slice(0, 60).join(' ') };
const out = {};
for (const [T, text] of Object.entries(texts)) {
  const r = await m.run(text, { captureQK: { layer: 5, head: 0 } });
  const A = r.attention(5, 'avg');
  const build = () => [
    F.figAttentionAsymmetry({ tokens: r.tokens, A, layer: 5, nLayer: 6, width: 1400, tight: true }),
    F.figOuterProduct({ q: r.q, k: r.k, i: r.T - 1, j: 2, tokens: r.tokens, attention: r.attention(5, 0), width: 1400, tight: true }),
    F.figDag({ tokens: r.tokens, A, dagScores: r.dagScores[5], nullDagScore: r.nullDagScore, overallDag: r.layerDagScores[5], width: 1400, tight: true }),
    F.figDoIntervention({ tokens: r.tokens, A, row: r.T - 1, col: 2, lambda: 3, width: 1400, tight: true }),
  ].map((n) => F.toString(n).length);
  for (let k = 0; k < 5; k++) build();
  const ms = [];
  for (let k = 0; k < 25; k++) { const t0 = performance.now(); build(); ms.push(performance.now() - t0); }
  ms.sort((a, b) => a - b);
  out[`T${r.T}`] = +ms[12].toFixed(2);
}
console.log(JSON.stringify(out));
m.dispose();
