// worker.js — the lineage page's Web Worker: the long computations (the
// timing sweep of softmax against linear attention, the capacity experiment)
// run here, on their own wasm instance, so the page stays responsive.
// Messages in: {id, cmd: 'timing', Ts, d, featureMap, m} | {id, cmd: 'capacity', N, loads, trials}.
// Messages out: {id, type: 'point', point} per T, then {id, type: 'done', result}, or {id, type: 'error', message, code}.

import { loadLineage } from '../lineage.js';

const lab = loadLineage();

self.onmessage = async (e) => {
  const { id, cmd } = e.data;
  try {
    const L = await lab;
    if (cmd === 'timing') {
      const { Ts, d, featureMap, m } = e.data;
      const points = [];
      for (const T of Ts) {
        const p = L.timeAttention({ T, d, featureMap, m, minMs: 15 });
        points.push(p);
        self.postMessage({ id, type: 'point', point: p });
      }
      self.postMessage({ id, type: 'done', result: points });
    } else if (cmd === 'capacity') {
      const t0 = performance.now();
      const r = L.hopfieldCapacity({ N: e.data.N, loads: e.data.loads, trials: e.data.trials, seed: 1 });
      self.postMessage({ id, type: 'done', result: { ...r, ms: performance.now() - t0 } });
    } else {
      throw new Error(`unknown command ${cmd}`);
    }
  } catch (err) {
    self.postMessage({ id, type: 'error', message: err.message, code: err.code || null });
  }
};
