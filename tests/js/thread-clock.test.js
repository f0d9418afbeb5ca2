// thread-clock.test.js — the browser tests' task clocks (tests/e2e/thread-clock.js) on made-up data: the /proc
// fallback's window arithmetic against an exact thread, the choice of measure and what a forced one does, and,
// where the machine has /proc, the sampler against a thread of this process whose CPU time is known.
import { describe, it, expect } from 'vitest';
import { cpuInWindow, timeTasks, mainThreadTasks, forcedMeasure, procClockAvailable, startProcSampler } from '../e2e/thread-clock.js';

/** A thread that runs (1 µs of CPU per µs) inside `busy` intervals and sleeps outside; samples at `times`. */
function series(busy, times) {
  const cpuAt = (x) => busy.reduce((s, [a, b]) => s + Math.max(0, Math.min(b, x) - a), 0);
  return { t: times, cpu: times.map(cpuAt), cpuAt };
}
const range = (a, b, step) => Array.from({ length: Math.floor((b - a) / step) + 1 }, (_, k) => a + k * step);

describe('cpuInWindow', () => {
  const s = series([[1000, 31000], [50000, 52000]], range(0, 60000, 1000));
  it('is exact where samples fall on the window\'s ends', () => {
    expect(cpuInWindow(s, 0, 40000)).toEqual({ est: 30000, lo: 30000, hi: 30000 });
    expect(cpuInWindow(s, 40000, 60000)).toEqual({ est: 2000, lo: 2000, hi: 2000 });
  });
  it('bounds the true time between samples, and the estimate interpolates', () => {
    for (const [a, b] of [[1500, 20700], [500, 31200], [30400, 50900], [12345, 54321]]) {
      const w = cpuInWindow(s, a, b);
      const truth = s.cpuAt(b) - s.cpuAt(a);
      expect(w.lo).toBeLessThanOrEqual(truth);
      expect(w.hi).toBeGreaterThanOrEqual(truth);
      expect(w.hi - w.lo).toBeLessThanOrEqual(2000 + 1e-9);   // one sample gap at each end
      expect(Math.abs(w.est - truth)).toBeLessThanOrEqual(1000);
    }
  });
  it('sparse samples (a starved sampler) widen the bounds but keep them true', () => {
    const sp = series([[1000, 31000]], [0, 700, 25000, 33000, 60000]);
    const w = cpuInWindow(sp, 500, 31000);
    expect(w.lo).toBeLessThanOrEqual(30000);
    expect(w.hi).toBeGreaterThanOrEqual(30000);
    expect(w.lo).toBe(24000);   // the samples at 700 and 25000 lie inside: at least 24 ms ran
  });
  it('a read that began before the window and ended after it bounds nothing inside it (a sampler descheduled mid-read)', () => {
    // the thread runs 5–18 ms; one read starts at 0 (before it ran) and ends at 36 ms (its midpoint lies after the
    // task): taken as a read "after the end" by its midpoint, it would claim no CPU time was used
    const busy = [[5000, 18000]];
    const cpuAt = (x) => busy.reduce((acc, [a, b]) => acc + Math.max(0, Math.min(b, x) - a), 0);
    const reads = [[-2000, -1000], [0, 36000], [40000, 41000]];
    const sr = { a: reads.map((r) => r[0]), b: reads.map((r) => r[1]), cpu: reads.map((r) => cpuAt(r[0])) };
    const w = cpuInWindow(sr, 5000, 18000);
    expect(w.hi).toBeGreaterThanOrEqual(13000);   // from the read ended before 5 ms to the one begun after 18 ms
    expect(w.lo).toBe(0);
    expect(w.est).toBeGreaterThanOrEqual(w.lo);
    expect(w.est).toBeLessThanOrEqual(w.hi);
  });
  it('the lag allowance widens both bounds; no bound exceeds the window plus the lag', () => {
    const w = cpuInWindow(s, 0, 40000, 4000);
    expect(w).toEqual({ est: 30000, lo: 26000, hi: 34000 });
    const full = cpuInWindow(series([[0, 60000]], range(0, 60000, 1000)), 10000, 20000, 4000);
    expect(full.hi).toBe(14000);
    expect(full.est).toBe(10000);
  });
  it('is null where the samples do not surround the window', () => {
    expect(cpuInWindow(s, -5, 100)).toBeNull();
    expect(cpuInWindow(s, 59000, 61000)).toBeNull();
    expect(cpuInWindow({ t: [0], cpu: [0] }, 0, 0)).toBeNull();
  });
});

describe('timeTasks', () => {
  const ev = [
    { ph: 'M', name: 'thread_name', pid: 7, tid: 7, args: { name: 'CrRendererMain' } },
    { ph: 'M', name: 'thread_name', pid: 7, tid: 9, args: { name: 'Compositor' } },
    { ph: 'X', name: 'RunTask', pid: 7, tid: 7, ts: 1000, dur: 60000, tdur: 20000 },
    { ph: 'X', name: 'RunTask', pid: 7, tid: 9, ts: 1000, dur: 90000, tdur: 90000 },
    { ph: 'X', name: 'FunctionCall', pid: 7, tid: 7, ts: 2000, dur: 5000 },
    { ph: 'X', name: 'RunTask', pid: 7, tid: 7, ts: 70000, dur: 10000, tdur: 9000 },
  ];
  const samples = new Map([[7, series([[1000, 15000], [70000, 79000]], range(0, 90000, 1000))]]);
  it('finds the renderer main thread\'s tasks only', () => {
    expect(mainThreadTasks(ev).map((x) => x.ts)).toEqual([1000, 70000]);
  });
  it('prefers the trace\'s thread time, then /proc, then wall time, and says why', () => {
    const tasks = mainThreadTasks(ev);
    expect(timeTasks(tasks, { samples }).measure).toBe('trace');
    expect(timeTasks(tasks, { samples }).tasks.map((x) => x.ms)).toEqual([20, 9]);
    const noTdur = tasks.map(({ tdur, ...x }) => x);   // eslint-disable-line no-unused-vars
    const p = timeTasks(noTdur, { samples, lagUs: 0 });
    expect(p.measure).toBe('proc');
    expect(p.why).toEqual(['the trace has no thread time (tdur)']);
    expect(p.tasks.map((x) => x.ms)).toEqual([14, 9]);
    const w = timeTasks(noTdur, {});
    expect(w.measure).toBe('wall');
    expect(w.why).toEqual(['the trace has no thread time (tdur)', 'no /proc samples']);
    expect(w.tasks.map((x) => x.ms)).toEqual([60, 10]);
    // samples that end before a task: that task counts at its wall time (its CPU time cannot exceed it)
    const short = new Map([[7, series([[1000, 15000]], range(0, 65000, 1000))]]);
    const e = timeTasks(noTdur, { samples: short, lagUs: 0 });
    expect(e.measure).toBe('proc');
    expect(e.tasks.map((x) => [x.ms, x.lo, x.hi, !!x.edge])).toEqual([[14, 14, 14, false], [10, 0, 10, true]]);
    expect(e.why).toEqual(['the trace has no thread time (tdur)', '1 task(s) at the trace\'s edges counted at wall time']);
    // samples of another process only: not proc
    const other = new Map([[8, samples.get(7)]]);
    expect(timeTasks(noTdur, { samples: other }).measure).toBe('wall');
  });
  it('a forced measure is used, or is an error where its data is missing', () => {
    const tasks = mainThreadTasks(ev);
    expect(timeTasks(tasks, { samples, forced: 'wall' }).tasks.map((x) => x.ms)).toEqual([60, 10]);
    expect(timeTasks(tasks, { samples, forced: 'proc', lagUs: 0 }).tasks.map((x) => x.ms)).toEqual([14, 9]);
    const noTdur = tasks.map(({ tdur, ...x }) => x);   // eslint-disable-line no-unused-vars
    expect(() => timeTasks(noTdur, { samples, forced: 'trace' })).toThrow(/no thread time/);
    expect(() => timeTasks(tasks, { forced: 'proc' })).toThrow(/no \/proc samples/);
    expect(timeTasks(tasks, { samples, forced: 'proc' }).why).toEqual(['forced by ATTNLAB_TASK_CLOCK']);
  });
  it('ATTNLAB_TASK_CLOCK names a measure or is refused', () => {
    expect(forcedMeasure({})).toBeNull();
    expect(forcedMeasure({ ATTNLAB_TASK_CLOCK: 'proc' })).toBe('proc');
    expect(() => forcedMeasure({ ATTNLAB_TASK_CLOCK: 'cpu' })).toThrow(/expected one of trace, proc, wall/);
  });
});

// The sampler reads the renderers' main threads; here a child process stands in for one: a Node process whose
// command line carries --type=renderer, busy for a known stretch. Only where /proc has per-thread counts.
describe.runIf(procClockAvailable())('the /proc sampler', () => {
  it('bounds a busy process\'s main-thread CPU time as the process itself counts it, and reads an idle stretch as idle', async () => {
    const { spawn } = await import('node:child_process');
    // the stand-in spins until its main thread has run 150 ms (by its own count, so a loaded machine only
    // stretches the wall time), then writes the CPU time its own /proc entry gives for the spin
    const code = `const fs = require('node:fs');
      const own = () => Number(fs.readFileSync('/proc/self/task/' + process.pid + '/schedstat', 'latin1').split(' ')[0]) / 1000;
      process.stdin.once('data', () => { const a = own(); while (own() - a < 150000); const b = own();
        process.stdout.write(String(b - a)); setTimeout(() => process.exit(0), 300); });
      process.stdout.write('r');`;
    const child = spawn(process.execPath, ['-e', code, '--', '--type=renderer'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const next = () => new Promise((r) => child.stdout.once('data', (d) => r(String(d))));
    await next();   // ready
    const sampler = startProcSampler();
    await sampler.ready;                            // the first round of samples is taken (the stand-in among them)
    await new Promise((r) => setTimeout(r, 150));   // an idle stretch to read
    const t0 = Number(process.hrtime.bigint() / 1000n);
    child.stdin.write('go');
    const spun = Number(await next());
    const t1 = Number(process.hrtime.bigint() / 1000n);
    await new Promise((r) => setTimeout(r, 30));
    const samples = await sampler.stop();
    child.kill();
    const s = samples.get(child.pid);
    expect(s, 'the sampler found the stand-in renderer').toBeTruthy();
    const w = cpuInWindow(s, t0, t1, 4000);
    expect(w, 'samples before and after the spin').not.toBeNull();
    console.log(`[thread-clock] spin of ${(spun / 1000).toFixed(1)} ms CPU: /proc sampler ${(w.est / 1000).toFixed(1)} ms in ` +
                `[${(w.lo / 1000).toFixed(1)}, ${(w.hi / 1000).toFixed(1)}], wall ${((t1 - t0) / 1000).toFixed(1)} ms, ${s.cpu.length} samples`);
    expect(spun).toBeGreaterThanOrEqual(150_000);
    // the window holds the spin and a little of the stand-in's reading and writing around it
    expect(w.hi).toBeGreaterThanOrEqual(spun);
    expect(w.lo).toBeLessThanOrEqual(spun + 10_000);
    expect(Math.abs(w.est - spun)).toBeLessThanOrEqual(15_000);
    // the stretch before 'go': idle
    const idle = cpuInWindow(s, s.b[0], t0 - 5000, 4000);
    expect(idle, 'samples over the idle stretch').not.toBeNull();
    expect(idle.lo).toBeLessThan(10_000);
  });
});
