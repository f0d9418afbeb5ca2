// protocol-worker.js — a worker_threads entry serving small handlers through web/src/ui/protocol.js,
// for tests/js/protocol.test.js. workerData.ordered chooses the server's mode. `stats` reports what
// the spin handlers did, so a test can see that a cancel really ended one inside the worker.

import { workerData } from 'node:worker_threads';
import { serve, reply } from '../../../web/src/ui/protocol.js';
import { AttnlabError } from '../../../web/src/core/errors.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const spins = { started: 0, stoppedByCancel: 0, finished: 0 };

serve({
  // [value, delayMs] -> value, after the delay: answers can overtake each other
  async echo([value, delayMs = 0]) {
    await sleep(delayMs);
    return value;
  },
  // [n] -> n, after progress events 0 … n-1
  count([n], { progress }) {
    for (let i = 0; i < n; i++) progress(i);
    return n;
  },
  // a long computation in parts that looks at its signal between them; without a cancel it ends
  // after 20 s with 'not cancelled'
  async spin(_, { signal, progress }) {
    spins.started += 1;
    for (let i = 0; i < 10_000; i++) {
      if (signal.aborted) {
        spins.stoppedByCancel += 1;
        signal.throwIfAborted();
      }
      progress(i);
      await sleep(2);
    }
    spins.finished += 1;
    return 'not cancelled';
  },
  stats: () => ({ ...spins }),
  // [code, message, rc] -> throws that AttnlabError
  fail([code, message, rc]) {
    throw new AttnlabError(code, message, { rc });
  },
  bug() {
    throw new TypeError('x.y is not a function');
  },
  // [n] -> a Float32Array 0 … n-1, transferred
  floats([n]) {
    const a = Float32Array.from({ length: n }, (_, i) => i);
    return reply(a, [a.buffer]);
  },
  // [ArrayBuffer] -> its byteLength as the worker received it
  byteLength: ([buf]) => buf.byteLength,
  hang: () => new Promise(() => {}),
  exit([code]) {
    process.exit(code);
  },
}, { ordered: !!(workerData && workerData.ordered) });
