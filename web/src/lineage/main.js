// main.js — the lineage page (web/lineage.html): classical Hopfield → modern
// Hopfield = attention → linear attention → √d_k → the chapter's table.
//
// Reads top to bottom: settings → helpers (drawing, export) → one section per
// demo (each a draw function reading the controls) → the table → boot.
// The quick demos call the wasm synchronously on the main thread (each takes
// a few ms); the slow ones (the timing sweep up to T = 8192 and the capacity
// experiment) run in a Web Worker (worker.js) and draw as results arrive.
// Figures are the pure functions of web/src/figures/lineage.js, turned into
// DOM with toElement (text nodes only).
//
// body data-*: state (loading | ready | error), renders (a counter of drawn
// figures), timing (running | done), capacity (running | done).

import '../ui/page.css';
import './lineage.css';
import { loadLineage } from '../lineage.js';
import { modernPlane, equivalence2d, linearForms, entropyCurve, maxAbsDiff } from '../lineage-demos.js';
import { connect } from '../ui/protocol.js';
import { figGrid, figLines, figHistogram, figModern2D, crossover, LINEAGE_COLORS as C, toElement, toString } from '../figures/lineage.js';
import { applyStatic } from '../ui/i18n.js';
import { $, el, replace } from '../ui/dom.js';
import { downloadSvg } from '../ui/download.js';
import { lineageTranslator } from './i18n.js';

// ── settings ────────────────────────────────────────────────────────────────

const params = new URLSearchParams(location.search);
const storedLang = (() => { try { return localStorage.getItem('attnlab-lang'); } catch { return null; } })();
let lang = params.get('lang') === 'zh' || (params.get('lang') === null && storedLang === 'zh') ? 'zh' : 'en';
let t = lineageTranslator(lang);

const TIMING_TS = [64, 128, 256, 512, 1024, 2048, 4096, 8192];
const TIMING_D = 64;
const CAP_N = 200, CAP_TRIALS = 2;
const CAP_LOADS = Array.from({ length: 15 }, (_, k) => Number((0.02 * (k + 1)).toFixed(2)));


const S = {
  glyph: 3, store: new Set([0, 1, 3]), corrupt: 0.2, mode: 'async', noiseSeed: 1,
  beta: 1, feature: 'elu', m: 64, dk: 64,
};

let lab = null;                // Lineage (main thread)
const figs = {};               // key -> svg node tree on screen (export)
const live = { classical: null, modern: null, linear: null, capHalf: null, timing: [], cross: null };
let H = null;                  // classical state: {W, state, step, energies, flipped, converged, cycle}
let renders = 0;

// ── helpers ─────────────────────────────────────────────────────────────────

/**
 * A chart's size: its nominal width, or the section's width when that is
 * narrower (a phone), with the height shrunk less than the width. The charts used
 * to be drawn at their nominal width and scaled down by CSS, so their text was
 * 5–6 px on a phone.
 */
function fitSize(width, height) {
  const box = document.querySelector('.lineage .fig');
  const avail = box ? Math.floor(box.clientWidth - 34) : width;
  if (!(avail > 0) || avail >= width) return { width, height };
  const w = Math.max(260, avail);
  return { width: w, height: Math.round(height * Math.max(0.8, w / width)) };
}

function show(key, node) {
  figs[key] = node;
  replace($(`fig-${key}`), toElement(node, document));
  document.body.dataset.renders = String(++renders);
}

function addExportButtons() {
  for (const box of document.querySelectorAll('.fig-actions[data-fig]')) {
    const key = box.dataset.fig;
    for (const kind of ['svg', 'png']) {
      box.appendChild(el('button', {
        type: 'button', class: 'btn btn-small', dataset: { export: kind, fig: key },
        on: { click: () => exportFigure(key, kind) },
      }, kind.toUpperCase()));
    }
  }
}

async function exportFigure(key, kind) {
  const node = figs[key];
  if (node) await downloadSvg(toString(node), `attnlab_lineage_${key}`, kind);
}

function showError(e) {
  $('error-text').textContent = String(e && e.message ? e.message : e);
  $('error').hidden = false;
  document.body.dataset.state = 'error';
}

const f4 = (x) => Number(x.toPrecision(4)).toString();

// ── 1. classical Hopfield ─────────────────────────────────────────────────

function storedPatterns() { return [...S.store].sort((a, b) => a - b).map((g) => lab.glyph(g)); }

function resetClassical() {
  if (S.store.size === 0) {
    H = null;
    $('h-status').textContent = t('noStore');
    return;
  }
  const W = lab.hebbian(storedPatterns());
  const state = lab.corrupt(lab.glyph(S.glyph), S.corrupt, { seed: S.noiseSeed });
  H = { W, state, prev: null, step: 0, energies: [lab.energy(W, state)], flipped: 0, converged: false, cycle: false };
  drawClassical();
}

/** One update of the classical network; a synchronous update that returns to the state before last is a 2-cycle. */
function advance() {
  const r = lab.hopfieldStep(H.W, H.state, { mode: S.mode, seed: S.noiseSeed * 1000 + H.step + 1 });
  H.cycle = S.mode === 'sync' && H.prev !== null && maxAbsDiff(r.state, H.prev) === 0 && r.flipped > 0;
  H.prev = H.state;
  H.state = r.state;
  H.step++;
  H.flipped = r.flipped;
  H.converged = r.flipped === 0;
  H.energies.push(r.energy);
}

function stepClassical() {
  if (!H || H.converged) return;
  advance();
  drawClassical();
}

function runClassical() {
  if (!H) return;
  for (let k = 0; k < 50 && !H.converged && !H.cycle; k++) advance();
  drawClassical();
}

function drawClassical() {
  if (!H) return;
  const target = lab.glyph(S.glyph);
  show('hstate', figGrid({ values: H.state, diff: target, title: t('glyphTitle'), lang, figure: 'hopfield-state' }));
  show('htarget', figGrid({ values: target, title: t('targetTitle', S.glyph), lang, figure: 'hopfield-target' }));
  const steps = H.energies.map((_, k) => k);
  show('henergy', figLines({
    series: [{ name: t('energyY'), xs: steps, ys: H.energies, color: C.energy, role: 'energy' }],
    title: t('energyTitle'), xLabel: t('energyX'), yLabel: 'E', ...fitSize(460, 250),
    xDomain: [0, Math.max(4, H.step)], lang, figure: 'hopfield-energy',
  }));
  const overlap = lab.overlap(H.state, target);
  const st = { step: H.step, energy: H.energies[H.energies.length - 1], glyph: S.glyph, overlap, flipped: H.flipped, converged: H.converged, cycle: H.cycle };
  $('h-status').textContent = t('hStatus', st);
  $('h-status').dataset.overlap = String(overlap);
  $('h-status').dataset.energy = String(st.energy);
  live.classical = { glyph: S.glyph, noise: Math.round(S.corrupt * 100), overlap, steps: H.step, e0: H.energies[0], e1: st.energy };
  drawTable();
}

function drawCapacity(r) {
  const xs = Array.from(r.loads), succ = Array.from(r.success);
  let half = null;
  for (let k = 1; k < xs.length; k++)
    if (succ[k - 1] >= 0.5 && succ[k] < 0.5) { half = xs[k - 1] + ((succ[k - 1] - 0.5) / (succ[k - 1] - succ[k])) * (xs[k] - xs[k - 1]); break; }
  live.capHalf = half;
  show('capacity', figLines({
    series: [
      { name: t('capSuccess'), xs, ys: succ, color: C.capacity, role: 'success' },
      { name: t('capOverlap'), xs, ys: Array.from(r.overlap), color: C.muted, dash: '5 3', role: 'overlap' },
    ],
    vlines: [{ at: 0.138, label: t('capLine'), role: 'capacity-line' }],
    title: t('capacityTitle'), xLabel: t('capacityX'), yLabel: t('capacityY'), ...fitSize(620, 340),
    yDomain: [0, 1.02], xDomain: [0, 0.31], lang, figure: 'hopfield-capacity', legendAt: 'below',
  }));
  drawTable();
}

// ── 2. modern Hopfield = attention ────────────────────────────────────────

function drawModern() {
  const beta = S.beta;
  const run = modernPlane(lab, beta);
  const { fixed, mean } = run;
  const distMean = Math.hypot(fixed[0] - mean[0], fixed[1] - mean[1]);
  const wmax = Math.max(...run.weights);
  const regime = distMean < 0.15 ? 'global' : wmax > 0.95 ? 'single' : 'meta';
  $('regime').textContent = t(regime === 'global' ? 'regimeGlobal' : regime === 'single' ? 'regimeSingle' : 'regimeMeta');
  $('regime').dataset.regime = regime;
  show('modern2d', figModern2D({
    patterns: run.patterns, start: run.start, oneStep: run.oneStep, path: run.path, fixed, mean, weights: run.weights,
    labels: { patterns: t('lPatterns'), start: t('lStart'), oneStep: t('lOne'), fixed: t('lFixed'), mean: t('lMean') },
    title: `${t('modernFig')} (β = ${f4(beta)})`, lang, figure: 'modern-hopfield-2d', size: Math.min(360, fitSize(420, 420).width - 60),
  }));
  $('m-status').textContent = t('mStatus', {
    beta, steps: run.steps, e0: run.energies[0], e1: run.energies[run.energies.length - 1],
    move: run.move,
  });
  drawEquivalence();
}

function drawEquivalence() {
  // 2-D, β = 1/√2
  const { hopfield: hop, attention: att, diff: d2 } = equivalence2d(lab);
  // 100-D: the ten glyphs as the memory, a corrupted 3 as the query, β = 1/√100
  const G = new Float32Array(1000);
  for (let g = 0; g < 10; g++) G.set(lab.glyph(g), 100 * g);
  const q = lab.corrupt(lab.glyph(3), 0.3, { seed: 5 });
  const hopG = lab.modernStep(G, q, { beta: 0.1, d: 100 }).state;
  const attG = lab.attention(q, G, G).out;
  const d100 = maxAbsDiff(hopG, attG);
  const rows = [
    el('tr', null, el('th', null, t('eqRow')), el('th', null, t('eqHop')), el('th', null, t('eqAtt'))),
    ...[0, 1].map((k) => el('tr', null, el('td', null, `ξ[${k}] (d = 2)`), el('td', { class: 'num', dataset: { hop: hop[k] } }, hop[k].toFixed(7)), el('td', { class: 'num', dataset: { att: att[k] } }, att[k].toFixed(7)))),
    el('tr', null, el('td', null, `${t('eqDiff')} (d = 2)`), el('td', { class: 'num', colspan: '2', id: 'eq-diff2', dataset: { v: d2 } }, d2.toExponential(2))),
    el('tr', null, el('td', null, `${t('eqDiff')} (d = 100, 10 glyphs)`), el('td', { class: 'num', colspan: '2', id: 'eq-diff100', dataset: { v: d100 } }, d100.toExponential(2))),
  ];
  replace($('equiv').tBodies[0], rows);
  live.modern = { diff: Math.max(d2, d100) };
  drawTable();
}

// ── 3. linear attention ───────────────────────────────────────────────────

function drawLinear() {
  const { prefixDiff: dp, rnnDiff: dr, softmaxError: err } = linearForms(lab, { featureMap: S.feature, m: S.m });
  const [h0, h1, h2] = t('formsHead');
  replace($('forms').tBodies[0], [
    el('tr', null, el('th', null, h0), el('th', null, h1), el('th', null, h2)),
    el('tr', null, el('td', null, t('formPrefix')), el('td', null, 'O(T·m·d)'), el('td', { class: 'num', id: 'diff-prefix', dataset: { v: dp } }, dp.toExponential(2))),
    el('tr', null, el('td', null, t('formRnn')), el('td', null, 'O(T·m·d)'), el('td', { class: 'num', id: 'diff-rnn', dataset: { v: dr } }, dr.toExponential(2))),
    el('tr', null, el('td', null, t('formQuad')), el('td', null, 'O(T²·m)'), el('td', { class: 'num' }, '0')),
    el('tr', null, el('td', null, t('formSoftmax')), el('td', null, 'O(T²·d)'), el('td', { class: 'num', id: 'err-softmax', dataset: { v: err } }, t('errSoftmax', err))),
  ]);
  live.linear = { diff: Math.max(dp, dr) };
  // error against softmax as m grows (FAVOR+), with elu+1 and relu for reference
  const ms = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048];
  const fav = ms.map((m) => lab.linearError({ m, seed: 8 }).error);
  const elu = lab.linearError({ featureMap: 'elu', seed: 8 }).error;
  const relu = lab.linearError({ featureMap: 'relu', seed: 8 }).error;
  show('favor', figLines({
    series: [{ name: t('favorSeries'), xs: ms, ys: fav, color: C.linear, role: 'favor' }],
    hlines: [{ at: elu, label: t('eluSeries'), role: 'elu', color: C.softmax }, { at: relu, label: t('reluSeries'), role: 'relu', color: C.muted }],
    vlines: S.feature === 'favor' ? [{ at: S.m, label: `m = ${S.m}`, role: 'm-line', color: C.linear }] : [],
    title: t('favorTitle'), xLabel: t('favorX'), yLabel: t('favorY'), xLog: true, yLog: true, ...fitSize(560, 300), lang, figure: 'linear-error',
  }));
  drawTable();
}

// ── timing (in the worker) ────────────────────────────────────────────────

// Two workers: the capacity experiment and the timing sweep, so that a new
// sweep (which terminates its worker to stop the old one) never kills the other.
// Each is a ui/protocol.js client; a worker that fails rejects its call (shown by the caller) and is
// replaced at the next ask.
const workers = { capacity: null, timing: null };
function newWorker(kind) {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: `attnlab-lineage-${kind}` });
  workers[kind] = connect(w, { name: 'attnlab lineage worker' });
  return workers[kind];
}

/** The worker's method `kind` (timing | capacity) on params; onPoint gets its progress. */
function ask(kind, params, onPoint) {
  const worker = workers[kind] && !workers[kind].failed ? workers[kind] : newWorker(kind);
  return worker.call(kind, [params], { onProgress: onPoint });
}

let timingRun = 0;
async function runTiming() {
  const run = ++timingRun;
  // a running sweep cannot be interrupted inside the wasm: start a fresh worker
  if (workers.timing && document.body.dataset.timing === 'running') { workers.timing.terminate(); newWorker('timing'); }
  live.timing = [];
  live.cross = null;
  document.body.dataset.timing = 'running';
  drawTiming();
  try {
    await ask('timing', { Ts: TIMING_TS, d: TIMING_D, featureMap: S.feature, m: S.m }, (p) => {
      if (run !== timingRun) return;
      live.timing.push(p);
      drawTiming();
    });
    if (run !== timingRun) return;
    document.body.dataset.timing = 'done';
    drawTiming();
  } catch (e) {
    if (run === timingRun) showError(e);
  }
}

function drawTiming() {
  const pts = live.timing;
  const xs = pts.map((p) => p.T);
  const soft = pts.map((p) => p.softmaxMs), lin = pts.map((p) => p.linearMs);
  live.cross = pts.length > 1 ? crossover(xs, soft, lin) : null;
  const fname = { elu: 'elu+1', relu: 'relu', favor: `FAVOR+ m=${S.m}` }[S.feature];
  show('timing', figLines({
    series: [
      { name: t('tSoftmax'), xs, ys: soft, color: C.softmax, role: 'softmax' },
      { name: t('tLinear', fname), xs, ys: lin, color: C.linear, role: 'linear' },
    ],
    vlines: live.cross ? [{ at: live.cross, label: t('crossLabel', live.cross), role: 'crossover' }] : [],
    title: t('timingTitle'), xLabel: t('timingX'), yLabel: t('timingY'), xLog: true, yLog: true,
    xDomain: [48, 11000], ...fitSize(620, 350), lang, figure: 'attention-timing', legendAt: 'below',
  }));
  $('t-status').textContent = document.body.dataset.timing === 'done' ? t('tDone', live.cross, TIMING_D) : t('tStatus', pts.length, TIMING_TS.length, TIMING_D);
  drawTable();
}

// ── 4. √d_k ────────────────────────────────────────────────────────────────

let entropy = null;   // the d_k sweep does not depend on the controls: computed once
function drawSqrtDk() {
  const dk = S.dk;
  const raw = lab.qkSamples(4000, dk, { seed: 6 });
  const scaled = raw.map((v) => v / Math.sqrt(dk));
  const s = lab.qkStats(4000, dk, { seed: 6 });
  $('qk-stats').textContent = t('qkStats', s, dk);
  $('qk-stats').dataset.variance = String(s.variance);
  $('qk-stats').dataset.scaledVariance = String(s.scaledVariance);
  const lim = Math.max(4.5, 4.5 * Math.sqrt(dk));
  show('qkhist', figHistogram({
    series: [
      { name: t('histRaw'), values: raw, color: C.raw, role: 'raw' },
      { name: t('histScaled'), values: scaled, color: C.scaled, role: 'scaled' },
    ],
    bins: 60, range: [-lim, lim], title: t('histTitle', dk), xLabel: t('histX'), ...fitSize(560, 280), lang, figure: 'qk-histogram',
  }));
  if (!entropy) entropy = entropyCurve(lab);
  show('entropy', figLines({
    series: [
      { name: t('entScaled'), xs: entropy.dks, ys: entropy.scaled, color: C.scaled, role: 'scaled' },
      { name: t('entRaw'), xs: entropy.dks, ys: entropy.raw, color: C.raw, role: 'raw' },
    ],
    hlines: [{ at: Math.log(64), label: t('entMax'), role: 'log-t' }],
    vlines: [{ at: dk, label: `d_k = ${dk}`, role: 'dk-line', color: C.muted }],
    title: t('entropyTitle'), xLabel: t('entropyX'), yLabel: t('entropyY'), xLog: true, yDomain: [0, 4.5],
    // the legend below the plot: inside, at the top left, it covered the curves
    ...fitSize(520, 280), lang, figure: 'softmax-entropy', legendAt: 'below',
  }));
}

// ── 5. the chapter's table ────────────────────────────────────────────────

function drawTable() {
  const body = $('frameworks').tBodies[0];
  if (!lab) return;
  const at = (T) => live.timing.find((p) => p.T === T) || null;
  const last = live.timing.length ? live.timing[live.timing.length - 1] : null;
  const Tshow = last ? last.T : TIMING_TS[TIMING_TS.length - 1];
  const cells = [
    ['classical', 'rowClassical', live.classical ? t('liveClassical', { ...live.classical, half: live.capHalf }) : '…'],
    ['modern', 'rowModern', live.modern ? t('liveModern', { diff: live.modern.diff, T: Tshow, ms: at(Tshow)?.softmaxMs ?? null }) : '…'],
    ['linear', 'rowLinear', live.linear ? t('liveLinear', { diff: live.linear.diff, T: Tshow, ms: at(Tshow)?.linearMs ?? null, cross: live.cross }) : '…'],
  ];
  replace(body, cells.map(([key, row, liveText]) => el('tr', { dataset: { row: key } },
    ...t(row).map((c) => el('td', null, c)), el('td', { class: 'live' }, liveText))));
}

// ── controls ──────────────────────────────────────────────────────────────

function buildControls() {
  const sel = $('glyph');
  sel.replaceChildren(...Array.from({ length: 10 }, (_, g) => el('option', { value: String(g) }, String(g))));
  sel.value = String(S.glyph);
  sel.addEventListener('change', () => { S.glyph = Number(sel.value); resetClassical(); });
  replace($('store'), Array.from({ length: 10 }, (_, g) => el('label', null,
    el('input', { type: 'checkbox', value: String(g), checked: S.store.has(g), dataset: { glyph: String(g) },
      on: { change: (e) => { if (e.target.checked) S.store.add(g); else S.store.delete(g); resetClassical(); } } }), String(g))));
  $('corrupt').addEventListener('input', (e) => {
    S.corrupt = Number(e.target.value) / 100;
    $('corrupt-out').textContent = `${e.target.value} %`;
    resetClassical();
  });
  $('mode').addEventListener('change', (e) => { S.mode = e.target.value; resetClassical(); });
  $('h-new').addEventListener('click', () => { S.noiseSeed++; resetClassical(); });
  $('h-step').addEventListener('click', stepClassical);
  $('h-run').addEventListener('click', runClassical);
  $('beta').addEventListener('input', (e) => {
    S.beta = 10 ** Number(e.target.value);
    $('beta-out').textContent = f4(S.beta);
    drawModern();
  });
  $('feature').addEventListener('change', (e) => { S.feature = e.target.value; drawLinear(); runTiming(); });
  $('m').addEventListener('input', (e) => {
    S.m = 2 ** Number(e.target.value);
    $('m-out').textContent = String(S.m);
    drawLinear();
  });
  $('m').addEventListener('change', () => { if (S.feature === 'favor') runTiming(); });
  $('t-run').addEventListener('click', runTiming);
  $('dk').addEventListener('input', (e) => {
    S.dk = 2 ** Number(e.target.value);
    $('dk-out').textContent = String(S.dk);
    drawSqrtDk();
  });
  $('lang').addEventListener('click', () => {
    lang = lang === 'en' ? 'zh' : 'en';
    try { localStorage.setItem('attnlab-lang', lang); } catch { /* private mode */ }
    setLanguage();
    drawAll();
    capStatus();
  });
  // a phone turning, a window resized: the charts follow the section's width
  let lastW = 0, raf = 0;
  new ResizeObserver((entries) => {
    const w = Math.round(entries[0].contentRect.width);
    if (!lab || Math.abs(w - lastW) < 24) return;
    const first = lastW === 0;
    lastW = w;
    if (first) return;
    cancelAnimationFrame(raf);
    raf = requestAnimationFrame(drawAll);
  }).observe(document.querySelector('.lineage'));
}

function setLanguage() {
  t = lineageTranslator(lang);
  document.documentElement.lang = lang === 'zh' ? 'zh-Hans' : 'en';
  document.title = t('docTitle');
  applyStatic(document, t);
}

function drawAll() {
  drawClassical();
  drawModern();
  drawLinear();
  drawSqrtDk();
  if (capResult) drawCapacity(capResult);
  drawTiming();
}

// ── boot ──────────────────────────────────────────────────────────────────

let capResult = null;

/** The capacity experiment's status line, in the page's language (also after a switch). */
function capStatus() {
  $('cap-status').textContent = capResult ? t('capStatus', CAP_N, CAP_TRIALS, capResult.ms) : t('capRunning');
}
async function boot() {
  setLanguage();
  buildControls();
  addExportButtons();
  try {
    lab = await loadLineage();
  } catch (e) {
    showError(t('loadError', e.message));
    return;
  }
  resetClassical();
  drawModern();
  drawLinear();
  drawSqrtDk();
  document.body.dataset.backend = lab.backend;   // the build running the demos (relaxed SIMD where the browser has it)
  document.body.dataset.state = 'ready';
  document.body.dataset.capacity = 'running';
  capStatus();
  ask('capacity', { N: CAP_N, loads: CAP_LOADS, trials: CAP_TRIALS }).then((r) => {
    capResult = r;
    drawCapacity(r);
    document.body.dataset.capacity = 'done';
    capStatus();
    workers.capacity.terminate(); // done: free its wasm memory
    workers.capacity = null;
  }).catch(showError);
  runTiming();
}

boot();
