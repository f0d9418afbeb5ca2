// worker.js (test page) — exposes window.attnlabTest(spec): load a model with
// 'attnlab/worker' (web/src/worker-client.js, served at /src/), run it, and
// return plain numbers for tests/js/browser-worker.test.js and
// bench/bench_api.mjs to compare with Node. Typed arrays are returned as
// plain arrays so they survive page.evaluate.

import { loadModel, AttnlabError, dagScore } from '/src/worker-client.js';

const plain = (a) => (a ? Array.from(a) : a);

// {files: dirURL} -> the four files as File objects (as from <input type=file>)
async function sourceOf(model) {
  if (!model || typeof model !== 'object') return model;
  const names = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
  return Promise.all(names.map(async (name) => {
    const res = await fetch(new URL(name, new URL(model.files, location.href)));
    return new File([await res.arrayBuffer()], name);
  }));
}

async function attnlabTest({ model, text, runs = [], errors = [], timing = false, backend }) {
  const events = [];
  const source = await sourceOf(model);
  const t0 = performance.now();
  const m = await loadModel(source, { onProgress: (e) => events.push({ status: e.status, file: e.file, loaded: e.loaded, total: e.total }),
                                      ...(backend ? { backend } : {}) });
  const loadMs = performance.now() - t0;
  try {
    const out = { config: m.config, engine: m.engine, events, loadMs, runs: [], errors: [], runMs: [] };
    for (const opts of runs) {
      const t1 = performance.now();
      const r = await m.run(text, opts);
      out.runMs.push(performance.now() - t1);
      if (timing) continue;
      out.runs.push({
        T: r.T, ids: plain(r.ids), tokens: r.tokens, attentions: plain(r.attentions), headAverages: plain(r.headAverages),
        logits: plain(r.logits), q: plain(r.q), k: plain(r.k), top: r.top, dagScore: r.dagScore,
        dagScores: r.dagScores, nullDagScore: r.nullDagScore,
        // a method of the rebuilt Result and a pure analysis function, in the page
        lastAvgDag: dagScore(r.attention(m.config.nLayer - 1, 'avg')),
        isFloat32: r.attentions instanceof Float32Array,
      });
    }
    for (const opts of errors) {
      try {
        await m.run(text, opts);
        out.errors.push({ code: null });
      } catch (e) {
        out.errors.push({ code: e.code, isAttnlabError: e instanceof AttnlabError, message: e.message });
      }
    }
    out.memory = await m.memoryUsage();
    return out;
  } finally {
    await m.dispose();
  }
}

window.attnlabTest = attnlabTest;
window.attnlabReady = true;
document.getElementById('status').textContent = 'ready';
