// evidence-panel.js — the page's "Does attention explain?" panel
// (docs/evidence.md): four cards that set a reading of attention (rung 1,
// seeing) beside an interventional effect (rung 2, doing) on the live model.
// Each card computes when its button is pressed (the grids cost up to
// T(T+1)/2 forward passes), in the page's worker, with progress and a Cancel
// button; each exports SVG / PNG / JSON. Its strings are its own (en / zh).

import { $, el, replace, setOptions } from '../ui/dom.js';
import { makeTranslator } from '../ui/i18n.js';
import { gridMap } from '../figures/charts.js';
import { scatter, groupedBars } from '../figures/evidence.js';
import { composeSvg, exportSvgNode, exportJsonData, rows } from './export.js';
import { toElement } from '../figures/index.js';
import { ylOrRd, rdBuR } from '../figures/colour.js';
import { PATCHING_PAIRS } from '../evidence.js';

export const EVIDENCE_STRINGS = {
  en: {
    title: 'Does attention explain?',
    intro: 'The chapter reads a large attention weight as a cause. Here each reading of attention (seeing) stands beside the effect of an intervention inside the model (doing), with a rank correlation between them: 1 = the reading orders the effects perfectly, 0 = not at all.',
    rung1: 'rung 1 · seeing', rung2: 'rung 2 · doing',
    compute: 'Compute', cancel: 'Cancel', computing: 'Computing in the worker…', cancelled: 'Cancelled.',
    layer: 'layer', head: 'head', all: 'all heads',
    edgeTitle: 'Edge knockout against attention weight',
    edgeText: 'Every edge j → i of the chosen head is knocked out in turn (its weight set to 0, the row renormalised) and the next-token prediction at i compared with the plain run (KL). A high correlation means the weights rank the local effects; it says nothing about the output unless the last-position column agrees.',
    edgeA: 'attention A (plain run)', edgeE: 'effect E = KL at i (nats)', scatterX: 'attention weight A[i][j]', scatterY: 'effect KL at i',
    edgeSum: (r) => `Spearman ρ(A, E) = ${f(r.spearman)}, Kendall τ = ${f(r.kendall)}, top-${r.topK} overlap ${f(r.topKOverlap)}; against the effect on the last position ρ = ${f(r.spearmanLast)}. ${r.pairs} knockouts.`,
    tokTitle: 'Token knockout against rollout and flow',
    tokText: 'Each token is made unreadable (its column knocked out in every head of every layer) and the change of the last next-token prediction measured. Beside it three readings of attention: the last layer, rollout and flow. Bars are scaled to each series\' maximum.',
    tokEffect: 'knockout effect (KL)', tokLast: 'last layer', tokRoll: 'rollout', tokFlow: 'flow',
    tokSum: (r) => `Spearman ρ with the effects: last layer ${f(r.spearman.lastLayer)}, rollout ${f(r.spearman.rollout)}, flow ${f(r.spearman.flow)}.`,
    ablTitle: 'Three ways to remove a head',
    ablText: 'Head importance (loss increase when the head is removed) under zero ablation, mean ablation (its output replaced by its mean over a held-out passage) and resampling (its output taken from that passage\'s run). If the rankings disagree, "this head matters" depends on how it was removed.',
    ablZero: 'zero', ablMean: 'mean', ablRes: 'resample',
    ablSum: (r) => `Agreement of the rankings (Spearman ρ): zero–mean ${f(r.agreement['zero-mean'].spearman)}, zero–resample ${f(r.agreement['zero-resample'].spearman)}, mean–resample ${f(r.agreement['mean-resample'].spearman)}.`,
    patTitle: 'Activation patching',
    patText: 'A clean and a corrupted sentence of equal length. Each cell copies one piece of the clean run into the corrupted one — the residual stream at a layer and position, or one head\'s output — and shows how much of the clean answer comes back: 0 = corrupted, 1 = clean.',
    patClean: 'clean', patCorrupt: 'corrupted', patResid: 'residual stream (layer × position)', patHeads: 'head outputs (layer × head)',
    patSum: (r) => `Answers ${JSON.stringify(r.answerTokens[0])} (clean) vs ${JSON.stringify(r.answerTokens[1])} (corrupted); logit difference ${f(r.ldClean)} clean, ${f(r.ldCorrupt)} corrupted.`,
    noPair: 'None of the example pairs changes this model\'s next token; type your own pair.',
    exportSvg: 'SVG', exportPng: 'PNG', exportJson: 'JSON', position: 'position', layerAxis: 'layer', headAxis: 'head',
  },
  zh: {
    title: '注意力能解释吗？',
    intro: '本章把大的注意力权重读作原因。这里每一种对注意力的读法（观察）都与模型内部干预的效果（干预）并排，并给出二者的秩相关：1 表示读法完全排对了效果的大小，0 表示毫无关系。',
    rung1: '第一阶 · 观察', rung2: '第二阶 · 干预',
    compute: '计算', cancel: '取消', computing: '正在 worker 中计算…', cancelled: '已取消。',
    layer: '层', head: '头', all: '所有头',
    edgeTitle: '逐边敲除与注意力权重',
    edgeText: '依次敲除所选头的每条边 j → i（权重置 0，该行重新归一化），比较位置 i 的下一词分布与原始运行的 KL。相关高说明权重排对了局部效果；除非最后位置那一列也一致，它并不说明输出的原因。',
    edgeA: '注意力 A（原始运行）', edgeE: '效果 E = 位置 i 的 KL（nats）', scatterX: '注意力权重 A[i][j]', scatterY: '位置 i 的 KL',
    edgeSum: (r) => `Spearman ρ(A, E) = ${f(r.spearman)}，Kendall τ = ${f(r.kendall)}，前 ${r.topK} 重合率 ${f(r.topKOverlap)}；与最后位置效果的 ρ = ${f(r.spearmanLast)}。共 ${r.pairs} 次敲除。`,
    tokTitle: '逐词敲除与 rollout、flow',
    tokText: '让每个词无法被读取（在每层每个头中敲除它的列），测量最后一个下一词预测的变化。旁边是三种注意力读法：最后一层、rollout 与 flow。每组条形按各自最大值缩放。',
    tokEffect: '敲除效果（KL）', tokLast: '最后一层', tokRoll: 'rollout', tokFlow: 'flow',
    tokSum: (r) => `与效果的 Spearman ρ：最后一层 ${f(r.spearman.lastLayer)}，rollout ${f(r.spearman.rollout)}，flow ${f(r.spearman.flow)}。`,
    ablTitle: '移除一个头的三种方式',
    ablText: '头的重要性（移除后损失的增加），分别用置零、均值替换（输出换成它在一段留出文本上的均值）与重采样（输出取自该文本的运行）。若三种排序不一致，“这个头重要”就取决于怎样移除它。',
    ablZero: '置零', ablMean: '均值', ablRes: '重采样',
    ablSum: (r) => `排序一致性（Spearman ρ）：置零–均值 ${f(r.agreement['zero-mean'].spearman)}，置零–重采样 ${f(r.agreement['zero-resample'].spearman)}，均值–重采样 ${f(r.agreement['mean-resample'].spearman)}。`,
    patTitle: '激活修补',
    patText: '一对等长的干净句与污染句。每个格子把干净运行的一部分（某层某位置的残差流，或某个头的输出）复制进污染运行，显示干净答案恢复了多少：0 = 污染，1 = 干净。',
    patClean: '干净', patCorrupt: '污染', patResid: '残差流（层 × 位置）', patHeads: '头输出（层 × 头）',
    patSum: (r) => `答案 ${JSON.stringify(r.answerTokens[0])}（干净）对 ${JSON.stringify(r.answerTokens[1])}（污染）；logit 差：干净 ${f(r.ldClean)}，污染 ${f(r.ldCorrupt)}。`,
    noPair: '示例句对都不改变这个模型的下一个词；请输入你自己的句对。',
    exportSvg: 'SVG', exportPng: 'PNG', exportJson: 'JSON', position: '位置', layerAxis: '层', headAxis: '头',
  },
};

const evidenceTranslator = makeTranslator(EVIDENCE_STRINGS, 'evidence panel');

const f = (x) => (x === null || x === undefined || Number.isNaN(x) ? '—' : x.toFixed(3));
const CARDS = ['ev-edge', 'ev-tok', 'ev-abl', 'ev-pat'];
const FILES = { 'ev-edge': 'attnlab_evidence_edge_knockout', 'ev-tok': 'attnlab_evidence_token_knockout',
                'ev-abl': 'attnlab_evidence_ablation', 'ev-pat': 'attnlab_evidence_patching' };

export class EvidencePanel {
  /** @param {{lang(): string, sentence(): string}} env */
  constructor(env) {
    this.env = env;
    this.model = null;
    this.config = null;
    this.charts = {};
    this.data = {};
    this.abort = {};
    this.sentence = null;
    this.#build();
  }

  get t() { return evidenceTranslator(this.env.lang()); }

  setModel(model, config) {
    this.model = model;
    this.config = config;
    for (const id of CARDS) this.#reset(id);
    const L = config.nLayer;
    setOptions($('ev-edge-layer'), Array.from({ length: L }, (_, l) => ({ value: String(l), label: String(l) })), String(L - 1));
    this.#fillHeads();
    this.#pickPair();
  }

  setLang() {
    this.#texts();
    for (const id of CARDS) if (this.data[id]) this.#draw(id);
  }

  /** Called after each drawn result of the page: the cards on the sentence are cleared only when it changed. */
  sentenceChanged() {
    const text = this.env.sentence();
    if (text === this.sentence) return;
    this.sentence = text;
    for (const id of ['ev-edge', 'ev-tok', 'ev-abl']) this.#reset(id);
  }

  // ── building ─────────────────────────────────────────────────────────────

  #build() {
    const root = $('evidence');
    if (!root) return;
    const card = (id, rung, controls) => el('section', { class: 'fig hp', id, dataset: { state: 'idle' } },
      el('header', { class: 'fig-head' }, el('h2', { id: `${id}-h` }), el('span', { class: `rung rung-${rung}`, id: `${id}-rung` })),
      el('p', { class: 'fig-text', id: `${id}-text` }),
      el('div', { class: 'hp-form hp-inline' }, ...controls,
        el('button', { class: 'btn btn-primary', type: 'button', id: `${id}-go` }),
        el('button', { class: 'btn', type: 'button', id: `${id}-stop`, disabled: true })),
      el('p', { class: 'hp-status', id: `${id}-status`, role: 'status', 'aria-live': 'polite' }),
      el('div', { class: 'hp-row', id: `${id}-charts` }),
      el('p', { class: 'hp-summary', id: `${id}-sum` }),
      el('div', { class: 'hp-presets' }, ...['svg', 'png', 'json'].map((k) =>
        el('button', { class: 'btn btn-small', type: 'button', id: `${id}-x-${k}`, disabled: true }))));
    const field = (id, child) => el('label', { class: 'field' }, el('span', { id: `${id}-label` }), child);
    replace(root,
      el('header', { class: 'heads-head' }, el('h2', { id: 'ev-title' }), el('p', { class: 'fig-text', id: 'ev-intro' })),
      card('ev-edge', 2, [field('ev-edge-layer', el('select', { id: 'ev-edge-layer' })), field('ev-edge-head', el('select', { id: 'ev-edge-head' }))]),
      card('ev-tok', 2, []),
      card('ev-abl', 2, []),
      card('ev-pat', 2, [field('ev-pat-clean', el('input', { id: 'ev-pat-clean', type: 'text', spellcheck: 'false' })),
        field('ev-pat-corrupt', el('input', { id: 'ev-pat-corrupt', type: 'text', spellcheck: 'false' }))]));
    $('ev-edge-layer').addEventListener('change', () => this.#fillHeads());
    for (const id of CARDS) {
      $(`${id}-go`).addEventListener('click', () => this.#compute(id));
      $(`${id}-stop`).addEventListener('click', () => this.abort[id]?.abort());
      for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).addEventListener('click', () => this.#export(id, k));
    }
    this.#texts();
  }

  #texts() {
    const t = this.t;
    const set = (id, v) => { const n = $(id); if (n) n.textContent = v; };
    set('ev-title', t('title'));
    set('ev-intro', t('intro'));
    for (const [id, key] of [['ev-edge', 'edge'], ['ev-tok', 'tok'], ['ev-abl', 'abl'], ['ev-pat', 'pat']]) {
      set(`${id}-h`, t(`${key}Title`));
      set(`${id}-text`, t(`${key}Text`));
      set(`${id}-rung`, `${t('rung1')} → ${t('rung2')}`);
      set(`${id}-go`, t('compute'));
      set(`${id}-stop`, t('cancel'));
      set(`${id}-x-svg`, t('exportSvg'));
      set(`${id}-x-png`, t('exportPng'));
      set(`${id}-x-json`, t('exportJson'));
    }
    set('ev-edge-layer-label', t('layer'));
    set('ev-edge-head-label', t('head'));
    set('ev-pat-clean-label', t('patClean'));
    set('ev-pat-corrupt-label', t('patCorrupt'));
  }

  #fillHeads() {
    if (!this.config) return;
    const cur = $('ev-edge-head').value || 'all';
    setOptions($('ev-edge-head'), [{ value: 'all', label: this.t('all') },
      ...Array.from({ length: this.config.nHead }, (_, h) => ({ value: String(h), label: String(h) }))], cur);
  }

  // the first example pair whose two sentences get different next tokens from this model
  async #pickPair() {
    const model = this.model;
    for (const [a, b] of PATCHING_PAIRS) {
      try {
        const [ra, rb] = [await model.run(a), await model.run(b)];
        if (model !== this.model) return;
        if (ra.T === rb.T && ra.top[0].id !== rb.top[0].id) {
          $('ev-pat-clean').value = a;
          $('ev-pat-corrupt').value = b;
          return;
        }
      } catch { return; }
    }
    $('ev-pat-clean').value = PATCHING_PAIRS[0][0];
    $('ev-pat-corrupt').value = PATCHING_PAIRS[0][1];
    $('ev-pat-status').textContent = this.t('noPair');
  }

  // ── computing ────────────────────────────────────────────────────────────

  #reset(id) {
    this.abort[id]?.abort(); // a computation on the old sentence or model stops and is forgotten
    delete this.abort[id];
    delete this.data[id];
    delete this.charts[id];
    const card = $(id);
    if (!card) return;
    card.dataset.state = 'idle';
    replace($(`${id}-charts`));
    $(`${id}-sum`).textContent = '';
    $(`${id}-status`).textContent = '';
    for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).disabled = true;
    $(`${id}-go`).disabled = false;
    $(`${id}-stop`).disabled = true;
  }

  async #compute(id) {
    if (!this.model) return;
    this.abort[id]?.abort();
    const ac = new AbortController();
    this.abort[id] = ac;
    const model = this.model, text = this.env.sentence();
    const card = $(id), status = $(`${id}-status`);
    card.dataset.state = 'busy';
    $(`${id}-go`).disabled = true;
    $(`${id}-stop`).disabled = false;
    status.textContent = this.t('computing');
    const onProgress = (e) => { if (this.abort[id] === ac) status.textContent = `${this.t('computing')} ${e.done} / ${e.total}`; };
    try {
      let r;
      if (id === 'ev-edge') {
        const head = $('ev-edge-head').value;
        r = await model.edgeKnockout(text, { layer: Number($('ev-edge-layer').value), head: head === 'all' ? 'all' : Number(head), onProgress, signal: ac.signal });
      } else if (id === 'ev-tok') {
        r = await model.tokenKnockout(text, { onProgress, signal: ac.signal });
      } else if (id === 'ev-abl') {
        r = await model.ablationSemantics(text, { onProgress, signal: ac.signal });
      } else {
        r = await model.activationPatching($('ev-pat-clean').value, $('ev-pat-corrupt').value);
      }
      if (this.abort[id] !== ac || model !== this.model) return;
      this.data[id] = r;
      status.textContent = '';
      card.dataset.state = 'done';
      this.#draw(id);
    } catch (e) {
      if (this.abort[id] !== ac) return;
      card.dataset.state = 'error';
      status.textContent = e && e.code === 'EABORT' ? this.t('cancelled') : `${e.code ? e.code + ': ' : ''}${e.message}`;
    } finally {
      if (this.abort[id] === ac) {
        $(`${id}-go`).disabled = false;
        $(`${id}-stop`).disabled = true;
      }
    }
  }

  // ── drawing ──────────────────────────────────────────────────────────────

  #draw(id) {
    const r = this.data[id], t = this.t, lang = this.env.lang();
    const box = $(`${id}-charts`);
    const maxW = Math.max(240, Math.min(520, (box.clientWidth || 900) / 2 - 12));
    let charts = [], sum = '', json = {};
    const labels = (toks) => toks.map((t, i) => `${i} ${JSON.stringify(t).slice(1, -1)}`);
    if (id === 'ev-edge') {
      const T = r.T, tl = labels(r.tokens);
      const vmaxA = Math.max(1e-9, ...r.A), vmaxE = Math.max(1e-9, ...Array.from(r.E).filter(Number.isFinite));
      const grid = (values, title, vmax) => {
        const scale = ylOrRd(0, vmax);
        return gridMap({ values, R: T, C: T, color: scale, maxW, maxH: maxW, rowLabels: tl, colLabels: tl, rotate: true, title, lang,
          cbar: { scale, format: (v) => v.toFixed(2) } });
      };
      const pts = [];
      for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++)
        pts.push({ x: r.A[i * T + j], y: r.E[i * T + j], title: `${tl[j]} → ${tl[i]}: A ${r.A[i * T + j].toFixed(3)}, KL ${r.E[i * T + j].toFixed(4)}` });
      charts = [grid(r.A, t('edgeA'), vmaxA), grid(r.E, t('edgeE'), vmaxE), scatter({ points: pts, xTitle: t('scatterX'), yTitle: t('scatterY'), width: maxW, height: maxW * 0.8, lang })];
      sum = t('edgeSum', r);
      json = { layer: r.layer, head: r.head, tokens: r.tokens, A: rows(r.A, T), E: rows(r.E, T), E_last: rows(r.ELast, T),
               spearman: r.spearman, kendall: r.kendall, spearmanLast: r.spearmanLast, topK: r.topK, topKOverlap: r.topKOverlap, rows: r.rows };
    } else if (id === 'ev-tok') {
      charts = [groupedBars({ labels: labels(r.tokens), width: Math.min(620, maxW * 2), lang, series: [
        { name: t('tokEffect'), values: Array.from(r.effect), color: '#d7301f' },
        { name: t('tokLast'), values: Array.from(r.readings.lastLayer), color: '#fdae61' },
        { name: t('tokRoll'), values: Array.from(r.readings.rollout), color: '#74add1' },
        { name: t('tokFlow'), values: Array.from(r.readings.flow), color: '#4575b4' }] })];
      sum = t('tokSum', r);
      json = { tokens: r.tokens, effect: Array.from(r.effect), readings: Object.fromEntries(Object.entries(r.readings).map(([k, v]) => [k, Array.from(v)])), spearman: r.spearman, kendall: r.kendall };
    } else if (id === 'ev-abl') {
      const { nLayer: L, nHead: H } = r;
      const all = ['zero', 'mean', 'resample'].flatMap((k) => Array.from(r[k].delta));
      const vmax = Math.max(1e-6, ...all.map(Math.abs));
      const color = rdBuR(vmax);
      charts = ['zero', 'mean', 'resample'].map((k) => gridMap({ values: r[k].delta, R: L, C: H, color,
        cell: 30, rowLabels: Array.from({ length: L }, (_, l) => String(l)), colLabels: Array.from({ length: H }, (_, h) => String(h)),
        rowTitle: t('layerAxis'), colTitle: t('headAxis'), title: t({ zero: 'ablZero', mean: 'ablMean', resample: 'ablRes' }[k]),
        annotate: (v) => v.toFixed(2), lang }));
      sum = t('ablSum', r);
      json = { nLayer: L, nHead: H, agreement: r.agreement, ...Object.fromEntries(['zero', 'mean', 'resample'].map((k) =>
        [k, { baseLoss: r[k].baseLoss, delta: rows(r[k].delta, H), pruning: Array.from(r[k].pruning) }])) };
    } else {
      const { nLayer: L, nHead: H, T } = r;
      const color = rdBuR(1); // 0 = corrupted (white), 1 = clean (red), clamped
      const lab = Array.from({ length: L }, (_, l) => String(l));
      charts = [
        gridMap({ values: r.resid, R: L, C: T, color, maxW: maxW * 1.3, rowLabels: lab, colLabels: labels(r.tokens), rotate: true,
          rowTitle: t('layerAxis'), title: t('patResid'), annotate: T <= 16 ? (v) => v.toFixed(2) : null, lang }),
        gridMap({ values: r.heads, R: L, C: H, color, cell: 30, rowLabels: lab, colLabels: Array.from({ length: H }, (_, h) => String(h)),
          rowTitle: t('layerAxis'), colTitle: t('headAxis'), title: t('patHeads'), annotate: (v) => v.toFixed(2), lang }),
      ];
      sum = t('patSum', r);
      json = { tokens: r.tokens, corruptTokens: r.corruptTokens, answers: r.answerTokens, ldClean: r.ldClean, ldCorrupt: r.ldCorrupt,
               resid: rows(r.resid, T), heads: rows(r.heads, H) };
    }
    this.charts[id] = charts;
    this.data[`${id}:json`] = json;
    replace(box, ...charts.map((c) => el('div', { class: 'hp-svg' }, toElement(c, document))));
    $(`${id}-sum`).textContent = sum;
    for (const k of ['svg', 'png', 'json']) $(`${id}-x-${k}`).disabled = false;
  }

  async #export(id, kind) {
    const charts = this.charts[id];
    if (!charts) return;
    if (kind === 'json') return exportJsonData(this.data[`${id}:json`], FILES[id]);
    const title = $(`${id}-h`).textContent;
    await exportSvgNode(composeSvg(charts, { title, lang: this.env.lang() }), FILES[id], kind);
  }
}
