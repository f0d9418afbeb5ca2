// protocol.test.js — web/src/ui/protocol.js, the one message protocol of attnlab's workers, with a
// real worker_threads Worker (tests/js/helpers/protocol-worker.js): answers matched to their calls
// by id when they come back out of order, progress delivered in order, a cancel that ends a long
// handler inside the worker and rejects with EABORT, error codes (and rc) kept across, buffers
// transferred both ways, and every pending call rejected when the worker dies or is terminated.

import { describe, it, expect, afterEach } from 'vitest';
import { Worker } from 'node:worker_threads';
import { connect, createServer } from '../../web/src/ui/protocol.js';
import { AttnlabError } from '../../web/src/core/errors.js';
import { caughtAsync } from './helpers/errors.js';

const ENTRY = new URL('./helpers/protocol-worker.js', import.meta.url);
const started = [];

function start(ordered = false, options = {}) {
  const w = new Worker(ENTRY, { workerData: { ordered } });
  const client = connect(w, options);
  started.push(client);
  return { w, client };
}

afterEach(async () => {
  for (const c of started.splice(0)) await c.terminate();
});

describe('requests and answers', () => {
  it('matches each answer to its call by id when the answers come back out of order', async () => {
    const { client } = start(false);
    const order = [];
    const calls = [['slow', 300], ['middle', 120], ['fast', 0]].map(([v, ms]) =>
      client.call('echo', [v, ms]).then((x) => { order.push(x); return x; }));
    expect(await Promise.all(calls)).toEqual(['slow', 'middle', 'fast']);
    expect(order).toEqual(['fast', 'middle', 'slow']); // they did overtake each other
    expect(client.pending).toBe(0);
  });

  it('an ordered server answers one call at a time, in the order sent', async () => {
    const { client } = start(true);
    const order = [];
    const calls = [['slow', 200], ['fast', 0]].map(([v, ms]) => client.call('echo', [v, ms]).then((x) => order.push(x)));
    await Promise.all(calls);
    expect(order).toEqual(['slow', 'fast']);
  });

  it('delivers progress events in order before the answer', async () => {
    const { client } = start();
    const events = [];
    const value = await client.call('count', [5], { onProgress: (e) => events.push(e) });
    expect(events).toEqual([0, 1, 2, 3, 4]);
    expect(value).toBe(5);
  });

  it('moves buffers both ways when asked to', async () => {
    const { client } = start();
    const a = await client.call('floats', [4]);
    expect(a).toBeInstanceOf(Float32Array);
    expect(Array.from(a)).toEqual([0, 1, 2, 3]);
    const copied = new ArrayBuffer(24), moved = new ArrayBuffer(40);
    expect(await client.call('byteLength', [copied])).toBe(24);
    expect(copied.byteLength).toBe(24);
    expect(await client.call('byteLength', [moved], { transfer: [moved] })).toBe(40);
    expect(moved.byteLength).toBe(0); // detached: it went to the worker
  });
});

describe('errors keep their code', () => {
  it('an AttnlabError thrown in a handler arrives with its code, message and rc', async () => {
    const { client } = start();
    const e = await caughtAsync(client.call('fail', ['ERANGE', 'layer 9 is out of range [0, 5]', -5]));
    expect(e).toBeInstanceOf(AttnlabError);
    expect([e.code, e.message, e.rc]).toEqual(['ERANGE', 'layer 9 is out of range [0, 5]', -5]);
    // and the worker goes on answering
    expect(await client.call('echo', ['still here'])).toBe('still here');
  });

  it('any other thrown value is EINTERNAL, an unknown method EINVAL, an uncloneable argument ETYPE', async () => {
    const { client } = start();
    const bug = await caughtAsync(client.call('bug'));
    expect([bug.code, bug.message]).toEqual(['EINTERNAL', 'TypeError: x.y is not a function']);
    const unknown = await caughtAsync(client.call('nope', [1]));
    expect(unknown.code).toBe('EINVAL');
    expect(unknown.message).toMatch(/unknown method 'nope'.*echo/);
    const clone = await caughtAsync(client.call('echo', [() => 1]));
    expect(clone).toBeInstanceOf(AttnlabError);
    expect(clone.code).toBe('ETYPE');
    expect(client.pending).toBe(0);
  });
});

describe('cancel', () => {
  it('an aborted signal stops a long handler inside the worker and rejects with EABORT', async () => {
    const { client } = start(true);
    const ac = new AbortController();
    let events = 0;
    const e = await caughtAsync(client.call('spin', [], { signal: ac.signal, onProgress: () => { if (++events === 3) ac.abort(); } }));
    expect(e).toBeInstanceOf(AttnlabError);
    expect(e.code).toBe('EABORT');
    // ordered: this answer comes after the spin has really ended, stopped by the cancel, not run to its end
    // (the worker's own count, not a wall-clock bound: a loaded machine cannot make it pass or fail)
    expect(await client.call('stats')).toEqual({ started: 1, stoppedByCancel: 1, finished: 0 });
  });

  it('a call cancelled while it waits in the queue never runs; one aborted before it is sent is not sent', async () => {
    const { client } = start(true);
    const first = client.call('echo', ['first', 150]);
    const ac = new AbortController();
    const queued = caughtAsync(client.call('spin', [], { signal: ac.signal }));
    ac.abort();
    expect(await first).toBe('first');
    expect((await queued).code).toBe('EABORT');
    const pre = await caughtAsync(client.call('spin', [], { signal: AbortSignal.abort() }));
    expect(pre.code).toBe('EABORT');
    expect(await client.call('stats')).toEqual({ started: 0, stoppedByCancel: 0, finished: 0 });
  });

  it('an onProgress that throws rejects its call with what it threw and cancels it in the worker', async () => {
    const { client } = start(true);
    const oops = new Error('the listener broke');
    const e = await caughtAsync(client.call('spin', [], { onProgress: (i) => { if (i === 2) throw oops; } }));
    expect(e).toBe(oops);
    expect(await client.call('stats')).toEqual({ started: 1, stoppedByCancel: 1, finished: 0 });
  });
});

describe('a worker that dies or is terminated', () => {
  it('terminate() rejects every pending call with EDISPOSED, and every later one', async () => {
    const { client } = start();
    const pending = [client.call('hang'), client.call('spin'), client.call('echo', ['late', 5000])].map(caughtAsync);
    expect(client.pending).toBe(3);
    await client.terminate();
    const errors = await Promise.all(pending);
    expect(errors.map((e) => e instanceof AttnlabError && e.code)).toEqual(['EDISPOSED', 'EDISPOSED', 'EDISPOSED']);
    expect(client.pending).toBe(0);
    expect((await caughtAsync(client.call('echo', ['x']))).code).toBe('EDISPOSED');
  });

  it('terminate(err) rejects with the error given', async () => {
    const { client } = start();
    const p = caughtAsync(client.call('hang'));
    await client.terminate(new AttnlabError('EABORT', 'stopped by the test'));
    expect(await p).toMatchObject({ code: 'EABORT', message: 'stopped by the test' });
  });

  it('a worker that exits rejects every pending call with EWASM and tells onFail once', async () => {
    const failures = [];
    const { client } = start(false, { name: 'test worker', onFail: (e) => failures.push(e) });
    const pending = [client.call('hang'), client.call('spin')].map(caughtAsync);
    await client.call('echo', ['ready']); // both requests have reached the worker
    const exit = caughtAsync(client.call('exit', [3]));
    const errors = await Promise.all([...pending, exit]);
    for (const e of errors) {
      expect(e).toBeInstanceOf(AttnlabError);
      expect(e.code).toBe('EWASM');
      expect(e.message).toBe('the test worker failed: the worker exited (code 3)');
    }
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBe(errors[0]);
    expect(client.failed).toBe(errors[0]);
    expect((await caughtAsync(client.call('echo', ['x']))).code).toBe('EWASM');
  });

  it('a worker terminated behind the client\'s back rejects its pending calls with EWASM', async () => {
    const { w, client } = start();
    const p = caughtAsync(client.call('hang'));
    await client.call('echo', ['ready']);
    await w.terminate();
    const e = await p;
    expect(e.code).toBe('EWASM');
    expect(e.message).toMatch(/exited \(code 1\)/);
  });
});

describe('createServer without a worker', () => {
  it('answers through the post function it is given, with the ids it was sent', async () => {
    const posted = [];
    let done;
    const all = new Promise((r) => { done = r; });
    const on = createServer({ add: ([a, b]) => a + b }, (msg) => { posted.push(msg); if (posted.length === 2) done(); });
    on({ id: 7, method: 'add', args: [2, 3] });
    on({ id: 8, method: 'missing', args: [] });
    await all;
    const byId = new Map(posted.map((m) => [m.id, m]));
    expect(byId.get(7)).toEqual({ id: 7, ok: true, value: 5 });
    expect(byId.get(8)).toMatchObject({ id: 8, ok: false, error: { code: 'EINVAL', rc: 0 } });
  });
});

describe('createServer: a short call answered in the pause of a stepwise one', () => {
  /** A server whose `long` handler works in `parts` parts with ctx.pause between them, logging what runs when. */
  function server(preempt) {
    const log = [];
    const posted = [];
    const handlers = {
      async long([parts], ctx) {
        for (let k = 0; k < parts; k++) { log.push(`long ${k}`); await ctx.pause(); }
        return 'long done';
      },
      short: ([x]) => { log.push(`short ${x}`); return x; },
      other: ([x]) => { log.push(`other ${x}`); return x; },
    };
    const on = createServer(handlers, (msg) => posted.push(msg), { ordered: true, preempt });
    return { on, log, posted };
  }
  const settle = () => new Promise((r) => setTimeout(r, 40));

  it('a preempting method runs in the first pause; others wait their turn; the long one ends as alone', async () => {
    const s = server(['short']);
    s.on({ id: 1, method: 'long', args: [4] });
    s.on({ id: 2, method: 'other', args: ['a'] });
    await new Promise((r) => setTimeout(r, 0));   // the long handler is now in a pause
    s.on({ id: 3, method: 'short', args: ['b'] });
    await settle();
    expect(s.log).toEqual(['long 0', 'short b', 'long 1', 'long 2', 'long 3', 'other a']);
    expect(s.posted.map((m) => m.id)).toEqual([3, 1, 2]);
    expect(s.posted.find((m) => m.id === 1).value).toBe('long done');
  });

  it('without preempt (or with no handler pausing) the order is the arrival order', async () => {
    const s = server([]);
    s.on({ id: 1, method: 'long', args: [3] });
    await new Promise((r) => setTimeout(r, 0));
    s.on({ id: 2, method: 'short', args: ['b'] });
    await settle();
    expect(s.log).toEqual(['long 0', 'long 1', 'long 2', 'short b']);
    const t = server(['short']);
    t.on({ id: 1, method: 'other', args: ['a'] });
    t.on({ id: 2, method: 'short', args: ['b'] });
    await settle();
    expect(t.log).toEqual(['other a', 'short b']);
  });
});
