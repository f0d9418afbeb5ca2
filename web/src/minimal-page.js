// minimal-page.js — the minimal page: one sentence in, the wasm forward pass,
// tokens, the last layer's head-averaged attention, the DAG score and the
// top-10 next tokens out. It uses only the low layer (core/wasm.js); the real
// page of a later issue replaces it.
//
// Model: the built-in one at /models/brown-gpt2/ when it exists, else the
// tiny random test fixture at /tests/fixtures/tiny/ (scripts/serve.mjs serves both).
// Token strings reach the DOM only as text nodes (textContent), never as HTML.

import { instantiateAttnlab } from './core/wasm.js';
import { AttnlabError } from './core/errors.js';

const MODEL_DIRS = [
  { name: 'brown-gpt2 (built-in)', url: new URL('../models/brown-gpt2/', import.meta.url) },
  { name: 'tiny random fixture', url: new URL('../tests/fixtures/tiny/', import.meta.url) },
];
const SVG_NS = 'http://www.w3.org/2000/svg';

const $ = (id) => document.getElementById(id);

function setStatus(text) { $('status').textContent = text; }

function showError(e) {
  const el = $('error');
  el.textContent = e instanceof AttnlabError ? `${e.code}: ${e.message}` : String(e && e.message || e);
  el.hidden = false;
}

async function fetchBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${url}`);
  return new Uint8Array(await res.arrayBuffer());
}

// The first model directory whose config.json exists, loaded into wasm.
async function loadFirstModel(wasm) {
  for (const dir of MODEL_DIRS) {
    const probe = await fetch(new URL('config.json', dir.url));
    if (!probe.ok) continue;
    setStatus(`Downloading ${dir.name}…`);
    const [config, safetensors, vocab, merges] = await Promise.all(
      ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].map((f) => fetchBytes(new URL(f, dir.url))));
    return { name: dir.name, handle: wasm.loadModel({ config, safetensors, vocab, merges }) };
  }
  throw new Error('no model found: neither models/brown-gpt2/ nor tests/fixtures/tiny/ is there ' +
                  '(build the model, or generate the fixtures)');
}

// ---- rendering (text nodes only) -------------------------------------------

function el(tag, props = {}, text) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

function renderTokens(labels, ids) {
  const ol = $('tokens');
  ol.replaceChildren(...labels.map((label, i) => {
    const li = el('li', { title: `position ${i}` }, label);
    li.append(el('span', { className: 'id' }, String(ids[i])));
    return li;
  }));
}

// A (T,T) matrix as an SVG heatmap: opacity of one hue = probability,
// token labels on both axes, values printed when the cells are large enough.
function renderHeatmap(A, T, labels) {
  const cell = T <= 16 ? 40 : T <= 40 ? 18 : 10;
  const short = labels.map((s) => (s.length > 14 ? s.slice(0, 13) + '…' : s));
  const margin = 8 + 7 * Math.max(1, ...short.map((s) => s.length));
  const size = margin + T * cell + 4;
  const root = svg('svg', { width: size, height: size, viewBox: `0 0 ${size} ${size}`, role: 'img' });
  root.append(svg('title', {}, 'Last-layer attention, averaged over heads'));
  for (let i = 0; i < T; i++) {
    root.append(svg('text', { class: 'label', x: margin - 6, y: margin + i * cell + cell / 2 + 4, 'text-anchor': 'end' }, short[i]));
    const x = margin + i * cell + cell / 2;
    root.append(svg('text', { class: 'label', x, y: margin - 6, transform: `rotate(-60 ${x} ${margin - 6})` }, short[i]));
    for (let j = 0; j < T; j++) {
      const v = A[i * T + j];
      const rx = margin + j * cell, ry = margin + i * cell;
      const rect = svg('rect', { x: rx, y: ry, width: cell, height: cell, fill: '#bd0026', 'fill-opacity': Math.min(1, Math.max(0, v)).toFixed(3) });
      rect.append(svg('title', {}, `${labels[i]} → ${labels[j]}: ${v.toFixed(4)}`));
      root.append(rect);
      if (cell >= 40)
        root.append(svg('text', { class: v > 0.5 ? 'cell-light' : 'cell-dark', x: rx + cell / 2, y: ry + cell / 2 + 4, 'text-anchor': 'middle' }, v.toFixed(2)));
    }
  }
  root.append(svg('rect', { class: 'grid', x: margin, y: margin, width: T * cell, height: T * cell }));
  $('heatmap').replaceChildren(root);
}

function renderDag(dag, nullDag, T) {
  $('dag').replaceChildren(
    el('dt', {}, 'last layer, head average'), el('dd', {}, dag.toFixed(4)),
    el('dt', {}, `null: uniform causal attention (T = ${T})`), el('dd', {}, nullDag.toFixed(4)),
    el('dt', {}, 'null: uniform bidirectional attention, (T−1)/2T'), el('dd', {}, ((T - 1) / (2 * T)).toFixed(4)));
}

function renderTop(rows) {
  $('top').tBodies[0].replaceChildren(...rows.map((r, i) => {
    const tr = el('tr');
    tr.append(el('td', {}, String(i + 1)), el('td', { className: 'token' }, JSON.stringify(r.token)),
              el('td', {}, String(r.id)), el('td', {}, r.prob.toFixed(4)));
    return tr;
  }));
}

// ---- the run -----------------------------------------------------------------

function run(wasm, model) {
  const text = $('text').value;
  const ids = wasm.encode(model, text);
  wasm.forward(model, ids); // an empty text fails here with EEMPTY
  const { n_layer, n_head } = wasm.config(model);
  const T = ids.length;
  const att = wasm.resultAttention(model); // (L, NH, T, T)
  const last = att.subarray((n_layer - 1) * n_head * T * T, n_layer * n_head * T * T);
  const avg = wasm.headAverage(last, n_head, T);
  const labels = Array.from(ids, (id) => wasm.tokenDisplay(model, id));
  const top = wasm.resultTopk(model, 10);
  renderTokens(labels, ids);
  renderHeatmap(avg, T, labels);
  renderDag(wasm.dagScore(avg, T), wasm.nullDagScore(T), T);
  renderTop(Array.from(top.ids, (id, i) => ({ id, token: wasm.tokenDisplay(model, id), prob: top.probs[i] })));
  $('results').hidden = false;
}

async function main() {
  const button = $('run');
  let wasm, model;
  try {
    wasm = await instantiateAttnlab();
    setStatus('Loading the model…');
    const loaded = await loadFirstModel(wasm);
    model = loaded.handle;
    const c = wasm.config(model);
    setStatus(`Model: ${loaded.name} — ${c.n_layer} layers, ${c.n_head} heads, d = ${c.n_embd}, ` +
              `vocabulary ${c.vocab_size}; attnlab ${wasm.version()}${wasm.simd() ? ', SIMD128' : ''}.`);
  } catch (e) {
    setStatus('Not ready.');
    showError(e);
    return;
  }
  button.disabled = false;
  $('run-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    $('error').hidden = true;
    try {
      run(wasm, model);
    } catch (e) {
      showError(e);
    }
  });
  run(wasm, model);
}

main();
