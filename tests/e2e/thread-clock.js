// thread-clock.js — how long the page's main-thread tasks ran, on any machine.
//
// A long task in the browser's sense is wall time, which other processes on a loaded machine inflate. What a
// test may hold the page to is the time the renderer's main thread itself ran. Three measures, best first:
//
//   trace  the Chrome trace's own thread time (tdur of each RunTask). Chromium records it only where the
//          platform's per-thread CPU clock is usable: some virtual machines have traces without it.
//   proc   the kernel's count of the thread's CPU time (/proc/PID/task/TID/schedstat, first field, ns),
//          sampled about every millisecond by a Node worker while the action runs, and read over each task's
//          window. Trace timestamps and Node's hrtime are both CLOCK_MONOTONIC on Linux, so the two line up.
//          The kernel updates a running thread's count at context switches and ticks, so a reading may lag by
//          one tick (4 ms at HZ = 250); each task gets bounds [lo, hi] from the samples around and inside its
//          window, and an estimate by linear interpolation between them.
//   wall   the task's wall time: the last resort, where neither clock exists (no /proc, a PID namespace).
//
// ATTNLAB_TASK_CLOCK=trace|proc|wall forces one (a test of the fallbacks on a machine that has all three); a
// forced measure that the machine lacks is an error, never a silent switch.

import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';

export const MEASURES = ['trace', 'proc', 'wall'];

/** The measure asked for by the environment, or null for the best available. */
export function forcedMeasure(env = process.env) {
  const v = env.ATTNLAB_TASK_CLOCK;
  if (!v) return null;
  if (!MEASURES.includes(v)) throw new Error(`ATTNLAB_TASK_CLOCK=${v}: expected one of ${MEASURES.join(', ')}`);
  return v;
}

/** Whether this machine lets a process read another thread's CPU time from /proc. */
export function procClockAvailable() {
  try {
    const line = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8');
    return /^\d+ /.test(line) && Number(line.split(' ')[0]) > 0;
  } catch {
    return false;
  }
}

// The sampler: a worker that reads the main thread's CPU count of every Chromium renderer process (its main
// thread is the process's first thread, tid = pid) until told to stop. It looks for new renderers every 20 ms.
const SAMPLER = `
const { workerData, parentPort } = require('node:worker_threads');
const { readFileSync, readdirSync } = require('node:fs');
const flag = new Int32Array(workerData.flag);
const series = new Map();   // pid -> { a: [], b: [], cpu: [] }  (the read's start and end, µs of CLOCK_MONOTONIC; µs of CPU)
let pids = [], lastScan = -1e9, told = false;
function scan() {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\\d+$/.test(d)) continue;
    let cmd;
    try { cmd = readFileSync('/proc/' + d + '/cmdline', 'latin1'); } catch { continue; }
    if (cmd.includes('--type=renderer')) out.push(Number(d));
  }
  return out;
}
// a round after the stop flag is seen too, so the samples always reach past the moment stop() was called
for (;;) {
  const stopping = Atomics.load(flag, 0) !== 0;
  const now = Number(process.hrtime.bigint() / 1000n);
  if (now - lastScan > 20000) { pids = scan(); lastScan = now; }
  for (const pid of pids) {
    const a = Number(process.hrtime.bigint() / 1000n);
    let v;
    try { v = readFileSync('/proc/' + pid + '/task/' + pid + '/schedstat', 'latin1'); } catch { continue; }
    const b = Number(process.hrtime.bigint() / 1000n);
    // the count was read at some moment between a and b (a descheduled sampler can make that a long stretch)
    let s = series.get(pid);
    if (!s) series.set(pid, s = { a: [], b: [], cpu: [] });
    s.a.push(a);
    s.b.push(b);
    s.cpu.push(Number(v.slice(0, v.indexOf(' '))) / 1000);
  }
  if (!told) { told = true; parentPort.postMessage('ready'); }
  if (stopping) break;
  Atomics.wait(flag, 0, 0, 1);
}
parentPort.postMessage([...series]);
`;

/**
 * Start sampling: `await ready` (the first round of samples is taken), then `await stop()` ends it and gives
 * Map(pid → {t: µs[], cpu: µs[]}).
 */
export function startProcSampler() {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(SAMPLER, { eval: true, workerData: { flag } });
  let readyNow, result, failed;
  const ready = new Promise((r) => { readyNow = r; });
  const done = new Promise((resolve, reject) => { result = resolve; failed = reject; });
  worker.on('message', (m) => { if (m === 'ready') readyNow(); else result(new Map(m)); });
  worker.once('error', (e) => { readyNow(); failed(e); });
  return {
    ready,
    async stop() {
      Atomics.store(new Int32Array(flag), 0, 1);
      Atomics.notify(new Int32Array(flag), 0);
      const out = await done;
      await worker.terminate();
      return out;
    },
  };
}

/**
 * CPU time (µs) of one thread's sampled series over the window [start, end] (µs): { est, lo, hi }, or null
 * where the samples do not surround the window. Each count was read at an unknown moment of [a[k], b[k]], so
 * hi takes the last read that ended by `start` and the first that began at or after `end`, lo the reads that
 * lay wholly inside; the estimate interpolates between the reads' midpoints. lo and hi bound the true value
 * up to the kernel's lag in updating a running thread's count (one tick), which `lagUs` adds to hi and takes
 * from lo. A series may give `t` (exact read times) in place of a and b.
 */
export function cpuInWindow(series, start, end, lagUs = 0) {
  const { cpu } = series;
  const A = series.a || series.t, B = series.b || series.t;
  const n = cpu.length;
  const last = (arr, x) => {   // the last k with arr[k] <= x, or -1 (arr ascending)
    let lo = -1, hi = n - 1;
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (arr[m] <= x) lo = m; else hi = m - 1; }
    return lo;
  };
  const first = (arr, x) => {  // the first k with arr[k] >= x, or n
    let lo = 0, hi = n;
    while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] >= x) hi = m; else lo = m + 1; }
    return lo;
  };
  const ka = last(B, start), kb = first(A, end);
  if (n < 2 || ka < 0 || kb >= n) return null;
  const upper = cpu[kb] - cpu[ka];
  const i = first(A, start), j = last(B, end);
  const lower = j > i ? cpu[j] - cpu[i] : 0;
  // the estimate: the count at time x, interpolated between the reads' midpoints
  const mid = (k) => (A[k] + B[k]) / 2;
  const at = (x) => {
    let k = ka;
    while (k + 1 < n && mid(k + 1) <= x) k++;
    if (k + 1 >= n || mid(k) >= x) return cpu[k];
    return cpu[k] + ((cpu[k + 1] - cpu[k]) * (x - mid(k))) / (mid(k + 1) - mid(k));
  };
  const wall = end - start;
  const lo = Math.max(0, lower - lagUs), hi = Math.min(wall + lagUs, upper + lagUs);
  return { est: Math.min(hi, Math.max(lo, at(end) - at(start))), lo, hi };
}

/** The renderer main threads' RunTask events of a Chrome trace: [{pid, tid, ts, dur, tdur?}] (µs). */
export function mainThreadTasks(ev) {
  const mains = new Set(ev.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args.name === 'CrRendererMain')
    .map((e) => `${e.pid}:${e.tid}`));
  return ev.filter((e) => e.ph === 'X' && e.name === 'RunTask' && mains.has(`${e.pid}:${e.tid}`));
}

/**
 * Each task's time by one measure. Returns { measure, why, tasks: [{task, ms, lo?, hi?}] }: `measure` is the one
 * used (the forced one, else trace, proc, wall, the first the data allows), `why` says why the better ones
 * were not. Throws where a forced measure has no data.
 */
export function timeTasks(tasks, { samples = null, forced = null, lagUs = 4000 } = {}) {
  const haveTrace = tasks.length > 0 && tasks.every((x) => typeof x.tdur === 'number');
  const series = (x) => (samples && x.pid === x.tid ? samples.get(x.pid) : undefined);
  // a task the samples do not surround (one at the trace's edges) counts at its wall time, which its CPU time
  // cannot exceed: the conservative reading
  const windows = samples ? tasks.map((x) => { const s = series(x); return s ? cpuInWindow(s, x.ts, x.ts + x.dur, lagUs) : null; }) : null;
  const covered = windows ? windows.filter((w) => w !== null).length : 0;
  const haveProc = tasks.length > 0 && covered > 0 && tasks.every((x) => series(x));
  const why = [];
  if (!haveTrace) why.push('the trace has no thread time (tdur)');
  if (!haveProc) why.push(samples ? 'the /proc samples miss the renderer\'s main thread' : 'no /proc samples');
  let measure = forced;
  if (!measure) measure = haveTrace ? 'trace' : haveProc ? 'proc' : 'wall';
  if (measure === 'trace' && !haveTrace) throw new Error(`task clock 'trace' forced, but ${why[0]}`);
  if (measure === 'proc' && !haveProc) throw new Error(`task clock 'proc' forced, but ${why[why.length - 1]}`);
  const out = tasks.map((x, k) => {
    if (measure === 'trace') return { task: x, ms: x.tdur / 1000 };
    if (measure === 'proc') {
      const w = windows[k];
      if (!w) return { task: x, ms: x.dur / 1000, lo: 0, hi: x.dur / 1000, edge: true };
      return { task: x, ms: w.est / 1000, lo: w.lo / 1000, hi: w.hi / 1000 };
    }
    return { task: x, ms: x.dur / 1000 };
  });
  const notes = forced ? ['forced by ATTNLAB_TASK_CLOCK'] : why;
  if (measure === 'proc' && covered < tasks.length) notes.push(`${tasks.length - covered} task(s) at the trace's edges counted at wall time`);
  return { measure, why: notes, tasks: out };
}

/**
 * Run `action` under a Chrome trace of `page` (with the /proc sampler beside it where the machine has one) and
 * time the renderer main thread's tasks: { measure, why, timed: [{task, ms, lo?, hi?}], ev (the trace's events),
 * samples }. Where both the trace's thread time and the samples exist, each timed task also gets `proc`
 * ({est, lo, hi} in ms): the agreement of the two clocks can then be checked.
 */
export async function traceTaskTimes(browser, page, action, categories) {
  const forced = forcedMeasure();
  const sampler = procClockAvailable() && forced !== 'trace' && forced !== 'wall' ? startProcSampler() : null;
  let buf, samples = null;
  if (sampler) await sampler.ready;
  await browser.startTracing(page, { categories });
  try {
    await action();
  } finally {
    buf = await browser.stopTracing();
    if (sampler) samples = await sampler.stop();
  }
  const parsed = JSON.parse(buf.toString());
  const ev = parsed.traceEvents || parsed;
  const tasks = mainThreadTasks(ev);
  const r = timeTasks(tasks, { samples, forced });
  if (samples && r.measure === 'trace') {
    for (const x of r.tasks) {
      const s = x.task.pid === x.task.tid ? samples.get(x.task.pid) : undefined;
      const w = s && cpuInWindow(s, x.task.ts, x.task.ts + x.task.dur, 4000);
      if (w) x.proc = { est: w.est / 1000, lo: w.lo / 1000, hi: w.hi / 1000 };
    }
  }
  return { ...r, timed: r.tasks, ev, samples };
}
