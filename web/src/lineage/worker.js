// worker.js — the lineage page's Web Worker: the long computations (the
// timing sweep of softmax against linear attention, the capacity experiment)
// run here, on their own wasm instance, so the page stays responsive.
// The messages are ui/protocol.js's. Methods:
//   timing    [{Ts, d, featureMap, m}] -> the points, one per T (progress: each point as it is measured)
//   capacity  [{N, loads, trials}]     -> the capacity curve, with ms: how long it took

import { loadLineage } from '../lineage.js';
import { serve } from '../ui/protocol.js';

const lab = loadLineage();

serve({
  async timing([{ Ts, d, featureMap, m }], { progress }) {
    const L = await lab;
    const points = [];
    for (const T of Ts) {
      const p = L.timeAttention({ T, d, featureMap, m, minMs: 15 });
      points.push(p);
      progress(p);
    }
    return points;
  },
  async capacity([{ N, loads, trials }]) {
    const L = await lab;
    const t0 = performance.now();
    const r = L.hopfieldCapacity({ N, loads, trials, seed: 1 });
    return { ...r, ms: performance.now() - t0 };
  },
});
