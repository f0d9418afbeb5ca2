// heads-charts.js — what the cards of the "Heads & counterfactuals" panel draw (heads.js computes them): each
// card's charts (into its boxes, kept for its SVG / PNG export), the sentence under them, the numbers of its
// JSON export and the data-* its element carries, from the worker's results and from what uniform causal
// attention would score (the reference values, docs/heads.md).

import { $, el, replace } from '../ui/dom.js';
import { klDivergence, attentionChange, rankMoves } from './compare.js';
import { deltaBars } from '../figures/delta.js';
import { topTable } from './top-table.js';
import { gridMap, lineChart, layerBars, diffBars, lossLines } from '../figures/charts.js';
import { circuitEffect, copies, COPY_MARGIN } from './circuit.js';
import { rows } from './export.js';
import { toElement, tokenLabel, walk } from '../figures/index.js';
import { ylOrRd, rdBuR } from '../figures/colour.js';
import { fmt2, fmt3 } from '../figures/text.js';

/** The top of the role grids' colour scale (YlOrRd from 0): at least this, so near-uniform heads stay pale. */
const ROLE_VMAX = 0.25;

/**
 * ΔA below this is not drawn as a change: the ΔA bars' full width is at least DELTA_FLOOR (attention
 * probability), and a ΔA map's colour scale reaches at least ±DELTA_FLOOR; when the largest |ΔA| of a card
 * is under it, the card says "no visible change" with the number (a weight moving by less than 0.01 is not
 * visible in the maps' colours).
 */
export const DELTA_FLOOR = 0.01;


/** A signed difference with 3 decimals: +0.012, −0.004, 0.000 (never −0.000). */
export const fmtS = (v) => (Math.abs(v) < 0.0005 ? '0.000' : (v > 0 ? '+' : '−') + Math.abs(v).toFixed(3));
const fmtA = (v) => (Math.abs(v) >= 0.1 ? v.toFixed(2) : Math.abs(v) < 0.0005 ? '0.000' : v.toFixed(3));
const fmtKL = (v) => (v === 0 ? '0' : v < 1e-4 ? v.toExponential(2) : v.toFixed(4));
const headName = (l, h) => `L${l}H${h}`;

// ── reference values of uniform causal attention (docs/heads.md) ─────────────

/** Role scores of uniform causal attention A[i][j] = 1/(i+1) on these ids: what "no specialisation" scores. */
export function uniformRoles(ids) {
  const T = ids.length;
  let prev = 0, sink = 0, dup = 0, nd = 0;
  for (let i = 1; i < T; i++) prev += 1 / (i + 1);
  prev = T > 1 ? prev / (T - 1) : 0;
  for (let i = 0; i < T; i++) sink += 1 / (i + 1);
  sink /= T;
  const seen = new Map();
  for (let i = 0; i < T; i++) {
    const c = seen.get(ids[i]) || 0;
    if (c > 0) { dup += c / (i + 1); nd += 1; }
    seen.set(ids[i], c + 1);
  }
  return { prev, sink, dup: nd ? dup / nd : 0 };
}

/** Induction score of uniform causal attention on r ++ r, |r| = n. */
export function uniformInduction(n) {
  let s = 0;
  for (let i = n; i < 2 * n; i++) s += 1 / (i + 1);
  return s / n;
}

/** A per-layer mask in short: one letter per layer, layer 0 first (C causal, F full, W3 window of 3). */
export function maskCode(mask) {
  return mask.map((m) => (m === 'causal' ? 'C' : m === 'full' ? 'F' : `W${m.slice(7)}`)).join('');
}

// ── the cards ───────────────────────────────────────────────────────────────

/** The drawing of the panel's cards; `panel` (heads.js) gives the model's config, the language and where the charts go. */
export class HeadsCharts {
  constructor(panel) { this.panel = panel; }

  get t() { return this.panel.t; }
  get lang() { return this.panel.lang; }
  get config() { return this.panel.config; }
  /** box id -> the svg node trees drawn in it (what the export buttons save) */
  get charts() { return this.panel.charts; }
  /** card id -> the numbers it shows (the JSON export) */
  get exportData() { return this.panel.exportData; }

  /** The width of box id (a block or a growing flex item), at least 200 px. */
  #width(id, fallback = 400) {
    return Math.max(200, Math.floor($(id).clientWidth || fallback));
  }

  /**
   * The width a content-sized box (a heatmap beside another chart) may take: a
   * share of its card's content width on a wide card, all of it on a narrow one
   * (the row wraps). Measured on the card, so it follows resizes both ways.
   */
  #share(card, share, max) {
    const c = $(card);
    const w = Math.max(200, c.clientWidth - 36);
    return Math.floor(w >= 640 ? Math.min(max, w * share) : Math.min(max, w));
  }

  #mount(id, node) {
    this.charts[id] = [node];
    replace($(id), toElement(node, document));
  }

  #headGrid({ values, role, title, color, cbar, annotate, cellTitle, maxW, attrs }) {
    const { nLayer: L, nHead: H } = this.config;
    const t = this.t;
    const maxCell = H <= 6 ? 46 : 34;
    const cellGuess = Math.min(maxCell, (maxW - 90) / H);
    return gridMap({
      values, R: L, C: H, color, cbar, role, title, maxW, maxCell, minCell: 8,
      annotate: cellGuess >= 26 ? annotate : null,
      rowLabels: Array.from({ length: L }, (_, l) => `L${l}`), colLabels: Array.from({ length: H }, (_, h) => `H${h}`),
      rowTitle: t('layer'), colTitle: t('head'), cellTitle, lang: this.lang, attrs,
    });
  }

  importance({ imp, cut }) {
    const t = this.t;
    const { nLayer: L, nHead: H } = this.config;
    const LH = L * H;
    const half = Math.floor(LH / 2);
    let m = 0;
    for (const v of imp.delta) m = Math.max(m, Math.abs(v));
    const scale = rdBuR(m > 0 ? m : 1e-6);
    const gridW = this.#share('hp-imp', 0.42, 420);
    this.#mount('hp-imp-grid', this.#headGrid({
      values: imp.delta, role: 'importance', title: t('hpImpGridTitle'), color: scale,
      cbar: { scale, format: (v) => (m < 0.01 ? v.toFixed(4) : m < 0.1 ? v.toFixed(3) : v.toFixed(2)) },
      annotate: fmtA,
      cellTitle: (i, j, v) => t('hpImpCell', i, j, v.toFixed(5), (imp.baseLoss + v).toFixed(4)),
      maxW: gridW, attrs: { 'data-base': String(imp.baseLoss), 'data-n': String(LH) },
    }));
    const curveW = this.#width('hp-imp-curve', 500);
    const atHalf = imp.lossAtHalf;
    this.#mount('hp-imp-curve', lineChart({
      loss: imp.pruning, half, base: imp.baseLoss, width: curveW, height: Math.round(Math.min(300, Math.max(220, curveW * 0.5))),
      xTitle: t('hpCurveX'), yTitle: t('hpCurveY'), lang: this.lang,
      halfLabel: t('hpHalfLabel', half, atHalf.toFixed(3), fmtS(atHalf - imp.baseLoss)),
      halfLabelShort: `k = ${half}: ${atHalf.toFixed(3)} (${fmtS(atHalf - imp.baseLoss)})`,
      baseLabel: t('hpCurveBase', imp.baseLoss.toFixed(3)),
      pointTitle: (k, v) => t('hpCurvePoint', k, v.toFixed(4), fmtS(v - imp.baseLoss)),
      attrs: { 'data-half': String(half), 'data-loss-at-half': String(atHalf), 'data-base': String(imp.baseLoss) },
    }));
    const most = Array.from(imp.order).reverse().slice(0, 3).map((k) => `${headName(Math.floor(k / H), k % H)} (${fmtS(imp.delta[k])})`);
    const least = Array.from(imp.order).slice(0, 3).map((k) => `${headName(Math.floor(k / H), k % H)} (${fmtS(imp.delta[k])})`);
    const all = imp.pruning[LH];
    $('hp-imp-summary').textContent = [
      t('hpImpBase', imp.baseLoss.toFixed(3), imp.T, cut),
      t('hpImpHalf', half, LH, atHalf.toFixed(3), fmtS(atHalf - imp.baseLoss)),
      t('hpImpAll', all.toFixed(3), fmtS(all - imp.baseLoss)),
      t('hpImpMost', most.join(', ')),
      t('hpImpLeast', least.join(', ')),
    ].join(this.lang === 'zh' ? '' : ' ');
    this.exportData['hp-imp'] = {
      text: $('hp-imp-input').value, T: imp.T, cut_to_context: cut, base_loss: imp.baseLoss,
      delta_loss: rows(imp.delta, H), pruning_order: Array.from(imp.order, (k) => headName(Math.floor(k / H), k % H)),
      pruning_loss: Array.from(imp.pruning), half, loss_at_half: atHalf, loss_all_removed: all,
    };
    const card = $('hp-imp');
    card.dataset.baseLoss = String(imp.baseLoss);
    card.dataset.lossAtHalf = String(atHalf);
    card.dataset.lossAll = String(all);
    card.dataset.t = String(imp.T);
  }

  roles({ roles, ind, ids, n }) {
    const t = this.t;
    const uni = { ...uniformRoles(Array.from(ids)), induction: uniformInduction(n) };
    const total = this.#width('hp-roles-grids', 800);
    const per = total >= 760 ? Math.floor((total - 3 * 14) / 4) : total >= 400 ? Math.floor((total - 14) / 2) : Math.min(total, 320);
    const specs = [
      ['prev', roles.prev, roles.top.prev, t('hpRolePrev'), roles.T],
      ['sink', roles.sink, roles.top.sink, t('hpRoleSink'), roles.T],
      ['dup', roles.dup, roles.top.dup, t('hpRoleDup'), roles.T],
      ['induction', ind.induction, ind.top.induction, t('hpRoleInd', n), ind.T],
    ];
    this.charts['hp-roles-grids'] = [];
    replace($('hp-roles-grids'), specs.map(([key, values, top, title]) => {
      let mx = 0;
      for (const v of values) mx = Math.max(mx, v);
      // one honest scale: a head near uniform attention stays pale whatever the largest score
      const scale = ylOrRd(0, Math.max(mx, ROLE_VMAX));
      const svg = this.#headGrid({
        values, role: `role-${key}`, title, color: scale, cbar: null, maxW: per,
        annotate: (v) => v.toFixed(3).replace(/^0/, ''),
        cellTitle: (i, j, v) => t('hpRoleCell', title, i, j, v.toFixed(4)),
        attrs: { 'data-role-name': key },
      });
      this.charts['hp-roles-grids'].push(svg);
      const tops = top.map((x) => `${headName(x.layer, x.head)} ${x.score.toFixed(3)}`).join(' · ');
      const ratio = top.length && uni[key] > 0 ? top[0].score / uni[key] : 0;
      return el('figure', { class: 'hp-role', dataset: { role: key, top: top.length ? headName(top[0].layer, top[0].head) : '' } },
        toElement(svg, document),
        el('figcaption', {},
          el('span', { class: 'hp-top' }, t('hpRoleTop', tops)),
          el('span', { class: 'muted' }, t('hpRoleUniform', uni[key].toFixed(3), ratio.toFixed(1)))));
    }));
    const byHead = (v) => rows(v, this.config.nHead);
    const tops = (list) => list.map((x) => ({ layer: x.layer, head: x.head, score: x.score }));
    this.exportData['hp-roles'] = {
      text: $('hp-imp-input').value, T: roles.T, induction_n: n, induction_seed: Number($('hp-ind-seed').value),
      scores: { prev: byHead(roles.prev), sink: byHead(roles.sink), dup: byHead(roles.dup), induction: byHead(ind.induction) },
      top: { prev: tops(roles.top.prev), sink: tops(roles.top.sink), dup: tops(roles.top.dup), induction: tops(ind.top.induction) },
      uniform: uni, induction_defined: ind.inductionDefined,
    };
    $('hp-roles').dataset.t = String(roles.T);
    $('hp-roles').dataset.inductionDefined = String(ind.inductionDefined);
  }

  /** The circuit card: the roles that name the heads, then the plain and the broken run on r ++ r. */
  circuit(r) {
    const t = this.t;
    const { nHead: H, vocabSize: V } = this.config;
    const fx = circuitEffect({ ...r, nHead: H, ablated: r.heads });
    const names = r.heads.map((x) => headName(x.layer, x.head)).join(' + ');
    const w = this.#width('hp-circ-loss', 560);
    this.#mount('hp-circ-loss', lossLines({
      a: r.plain.losses, b: r.broken.losses, n: r.n, chance: Math.log(V), width: w, height: Math.round(Math.min(300, Math.max(220, w * 0.42))),
      labelA: t('hpCircPlain'), labelB: t('hpCircBroken', names), chanceLabel: t('hpCircChance', Math.log(V).toFixed(2)),
      copyLabel: t('hpCircSecond'), xTitle: t('hpCircX'), yTitle: t('hpCircY'), lang: this.lang,
      pointTitle: (s, k, v) => t('hpCircPoint', s ? names : t('hpCircPlain'), k, v.toFixed(3)),
      attrs: { 'data-n': String(r.n) },
    }));
    this.#circuitGrid(r, names);
    $('hp-circ-summary').textContent = this.#circuitSentence(r, fx, names);
    this.exportData['hp-circ'] = {
      induction_n: r.n, induction_seed: r.seed, preset: r.preset, ablated: r.heads,
      losses_plain: Array.from(r.plain.losses), losses_ablated: Array.from(r.broken.losses),
      copy_loss: { plain: { first: fx.plain.first, second: fx.plain.second }, ablated: { first: fx.broken.first, second: fx.broken.second } },
      copy_gain: { plain: fx.plain.gain, ablated: fx.broken.gain },
      induction_plain: rows(r.ind.induction, H), induction_ablated: rows(this.#hatchAblated(r.indBroken.induction, r.heads), H),
      induction_ablated_heads_own: r.heads.map((x) => ({ layer: x.layer, head: x.head, score: r.indBroken.induction[x.layer * H + x.head] })),
      induction_others: { plain: fx.plain.others, ablated: fx.broken.others },
    };
    const others = (o) => (o ? String(o.score) : '');
    Object.assign($('hp-circ').dataset, {
      heads: names, preset: r.preset, copies: String(copies(fx)), secondPlain: String(fx.plain.second), secondBroken: String(fx.broken.second),
      firstPlain: String(fx.plain.first), firstBroken: String(fx.broken.first), gainPlain: String(fx.plain.gain), gainBroken: String(fx.broken.gain),
      inductionPlain: String(fx.plain.induction.score), inductionBroken: String(fx.broken.induction.score),
      othersPlain: others(fx.plain.others), othersBroken: others(fx.broken.others),
    });
  }

  /** The induction scores of the ablated run with the ablated heads' cells NaN (drawn hatched). */
  #hatchAblated(values, heads) {
    const H = this.config.nHead;
    const out = Float32Array.from(values);
    for (const x of heads) out[x.layer * H + x.head] = NaN;
    return out;
  }

  #circuitGrid(r, names) {
    const t = this.t;
    const H = this.config.nHead;
    let mx = 0;
    for (const v of r.ind.induction) mx = Math.max(mx, v);
    const scale = ylOrRd(0, Math.max(mx, ROLE_VMAX));
    const own = (i, j) => r.indBroken.induction[i * H + j].toFixed(4);
    this.#mount('hp-circ-grid', this.#headGrid({
      values: this.#hatchAblated(r.indBroken.induction, r.heads), role: 'circ-induction', title: t('hpCircGridTitle', names),
      color: scale, cbar: null, maxW: this.#share('hp-circ', 0.36, 360), annotate: (v) => v.toFixed(3).replace(/^0/, ''),
      cellTitle: (i, j, v) => (Number.isFinite(v) ? t('hpCircCell', headName(i, j), v.toFixed(4), r.ind.induction[i * H + j].toFixed(4), false)
        : t('hpCircCellAblated', headName(i, j), own(i, j))),
      attrs: { 'data-heads': names },
    }));
  }

  /** The card's sentence: what was ablated, the copying gain, the losses, the induction of the heads left. */
  #circuitSentence(r, fx, names) {
    const t = this.t;
    const f = (v) => v.toFixed(2), f3 = (v) => v.toFixed(3);
    const oh = (o) => (o ? headName(o.layer, o.head) : '—');
    const H = this.config.nHead;
    const best = fx.plain.induction;
    const ablatedBest = r.heads.some((x) => x.layer === best.layer && x.head === best.head);
    const own = r.indBroken.induction[best.layer * H + best.head];
    return [
      t('hpCircSumHeads', r.preset, names, r.heads.map((x) => x.score.toFixed(3)).join(', ')),
      t('hpCircSumGain', f(fx.plain.gain), f(fx.broken.gain), names, fmtS(fx.delta.gain)),
      t('hpCircSumLoss', f(fx.plain.second), f(fx.broken.second), fmtS(fx.delta.second), f(fx.plain.first), f(fx.broken.first), fmtS(fx.delta.first)),
      fx.plain.others ? t('hpCircSumOthers', oh(fx.plain.others), f3(fx.plain.others.score), oh(fx.broken.others), f3(fx.broken.others.score)) : '',
      ablatedBest ? t('hpCircOwnPattern', headName(best.layer, best.head), f3(best.score), f3(own)) : '',
      copies(fx) ? '' : t('hpCircNoCopy', f(fx.plain.first - fx.plain.second), COPY_MARGIN),
    ].filter(Boolean).join(this.lang === 'zh' ? '' : ' ');
  }

  /** ' No visible change in attention: the largest |ΔA| is …' when every |ΔA| is below DELTA_FLOOR, else ''. */
  #noChange(change) {
    const mx = Math.max(...change.max);
    return mx < DELTA_FLOOR ? ` ${this.t('hpNoChange', mx === 0 ? '0' : mx.toExponential(0), DELTA_FLOOR)}` : '';
  }

  #tokenMaps(id, mats, { T, tokens, titles, scale, cbarLast = true, role = 'attn', cellTitle, attrsOf = () => ({}) }) {
    const total = this.#width(id, 800);
    const n = mats.length;
    const stacked = total < 600;
    const per = stacked ? total : Math.floor((total - (n - 1) * 16) / n);
    const labels = tokens.map((s) => tokenLabel(s, 12));
    // side by side: one colour bar, right of the last map; stacked: one on each, so the maps keep one size
    const nodes = mats.map((values, k) => gridMap({
      values, R: T, C: T, color: scale, cbar: stacked || (cbarLast && k === n - 1) ? { scale, format: fmt2 } : null,
      role: `${role}-${k}`, title: titles[k], maxW: per, maxCell: 30, minCell: 4,
      rowLabels: labels, colLabels: labels, rotate: true, lang: this.lang,
      cellTitle: (i, j, v) => cellTitle(k, i, j, v), attrs: attrsOf(k),
    }));
    this.charts[id] = nodes;
    replace($(id), nodes.map((node) => toElement(node, document)));
  }

  #topPair(idA, idB, a, b) {
    topTable($(idA), a.top, null, this.t);
    topTable($(idB), b.top, rankMoves(a.top, b.top), this.t);
  }

  mask({ base, mixed }, s) {
    const t = this.t;
    const L = this.config.nLayer;
    const T = base.T;
    const A0 = base.attention(L - 1, 'avg'), A1 = mixed.attention(L - 1, 'avg');
    let mx = 0;
    for (let k = 0; k < T * T; k++) mx = Math.max(mx, A0[k], A1[k]);
    const scale = ylOrRd(0, mx);
    const tl = (k) => `${k} (${tokenLabel(base.tokens[k], 30)})`;
    this.#tokenMaps('hp-mask-maps', [A0, A1], {
      T, tokens: base.tokens, scale, titles: [t('hpMaskAllCausal'), t('hpMaskMixed', maskCode(s.mask))],
      cellTitle: (k, i, j, v) => t('deltaCell', tl(i), tl(j), v.toFixed(4)),
    });
    const kl = klDivergence(base.logits, mixed.logits);
    const change = attentionChange(base, mixed);
    $('hp-mask-kl').textContent = `${t('hpKlMask', fmtKL(kl))} ${topMove(t, base, mixed)}${this.#noChange(change)}`;
    this.#topPair('hp-mask-top-a', 'hp-mask-top-b', base, mixed);
    this.#mount('hp-mask-delta', deltaBars({ mean: change.mean, max: change.max, doLayer: -1, width: Math.min(520, this.#width('hp-mask-delta')),
      lang: this.lang, t, floor: DELTA_FLOOR }));
    this.exportData['hp-mask'] = {
      text: s.text, mask: s.mask, tokens: base.tokens, layer: L - 1, head: 'avg',
      attention_all_causal: rows(A0, T), attention_mixed: rows(A1, T),
      top_all_causal: plainTop(base.top), top_mixed: plainTop(mixed.top), kl_causal_mixed: kl,
      attention_change: { mean_abs: Array.from(change.mean), max_abs: Array.from(change.max) },
    };
    const card = $('hp-mask');
    card.dataset.kl = String(kl);
    card.dataset.mask = s.mask.join(',');
    card.dataset.maxDelta = String(Math.max(...change.max));
  }

  pair(cf) {
    const t = this.t;
    const { nLayer: L, nHead: H } = this.config;
    const { a, b } = cf;
    const TA = a.T;
    const layer = Math.min(Number($('hp-cf-layer').value) || 0, L - 1);
    const hv = $('hp-cf-head').value;
    const TT = TA * TA;
    const D = hv === 'avg' ? cf.attentionDiff.subarray(layer * TT, (layer + 1) * TT)
      : cf.headDiff.subarray((layer * H + Number(hv)) * TT, (layer * H + Number(hv) + 1) * TT);
    let m = 0, aligned = 0, missing = 0;
    for (const v of D) { if (Number.isFinite(v)) { m = Math.max(m, Math.abs(v)); aligned += 1; } else missing += 1; }
    const scale = rdBuR(Math.max(m, DELTA_FLOOR));   // a change of 1e-6 is not drawn in full colour
    // the aligned partner of each of A's positions
    const partner = new Map(cf.aligned.map(([i, j]) => [i, j]));
    const tl = (k) => `${k} (${tokenLabel(a.tokens[k], 30)}${partner.has(k) ? '' : ' · ' + t('hpUnaligned')})`;
    const total = this.#share('hp-cf', 0.55, 560);
    const cA = (cf.alignment || { changedA: [0, 0] }).changedA;
    const labels = a.tokens.map((s, k) => (!partner.has(k) ? `${tokenLabel(s, 12)}*`
      : k >= cA[0] && k < cA[1] ? `${tokenLabel(s, 12)}→${tokenLabel(b.tokens[partner.get(k)], 12)}` : tokenLabel(s, 12)));
    this.#mount('hp-cf-map', gridMap({
      values: D, R: TA, C: TA, color: scale, cbar: { scale, format: (v) => v.toFixed(3) },
      role: 'cf-diff', title: t('hpCfMapTitle', layer, hv === 'avg' ? t('headAvg') : t('headOpt', Number(hv))),
      maxW: total, maxCell: 32, minCell: 4, rowLabels: labels, colLabels: labels, rotate: true, lang: this.lang,
      cellTitle: (i, j, v) => (Number.isFinite(v) ? t('hpCfCell', tl(i), tl(j), v.toFixed(5)) : t('hpCfCellNaN', tl(i), tl(j))),
      attrs: { 'data-aligned': String(aligned), 'data-missing': String(missing) },
    }));
    // alignment: A's and B's tokens, the unaligned ones marked
    const alignedA = new Set(cf.aligned.map((p) => p[0])), alignedB = new Set(cf.aligned.map((p) => p[1]));
    const al = cf.alignment || { changedA: [0, 0], changedB: [0, 0] };
    const line = (r, set, [c0, c1], label) => el('div', { class: 'hp-align-row' }, el('span', { class: 'hp-align-label' }, label),
      el('ol', { class: 'tokens' }, r.tokens.map((tok, k) => {
        const cls = !set.has(k) ? 'is-unaligned' : k >= c0 && k < c1 ? 'is-changed' : null;
        return el('li', { class: cls, title: cls ? t(cls === 'is-changed' ? 'hpSubstituted' : 'hpUnaligned') : null },
          el('span', { class: 'tok-i' }, String(k)), el('span', { class: 'tok-s' }, tokenLabel(tok, 30)));
      })));
    replace($('hp-cf-align'), line(a, alignedA, al.changedA, 'A'), line(b, alignedB, al.changedB, 'B'));
    // next-token Δp
    const items = cf.next.top.slice(0, 12).map((x) => ({
      label: tokenLabel(x.token, 14), v: x.delta, note: `${x.pA.toFixed(3)} → ${x.pB.toFixed(3)}`, id: x.id,
    }));
    this.#mount('hp-cf-bars', diffBars({
      items, width: Math.min(520, this.#width('hp-cf-bars', 420)), lang: this.lang, ariaLabel: t('hpCfBarsTitle'),
      barTitle: (k, it) => t('hpCfBar', it.label, it.note, fmtS(it.v)),
    }));
    $('hp-cf-kl').textContent = `${t('hpCfKl', fmtKL(cf.next.kl), cf.next.tv.toFixed(4))} ${topMove(t, a, b)}${this.#noChange({ max: [m] })}`;
    this.exportData['hp-cf'] = {
      a: { text: $('hp-cf-a').value, tokens: a.tokens }, b: { text: $('hp-cf-b').value, tokens: b.tokens },
      aligned: cf.aligned.map(([i, j]) => [i, j]), alignment: cf.alignment || null,
      layer, head: hv === 'avg' ? 'avg' : Number(hv), attention_diff_b_minus_a: rows(D, TA),
      next: cf.next.top.slice(0, 12).map((x) => ({ id: x.id, token: x.token, p_a: x.pA, p_b: x.pB, delta: x.delta })),
      kl_a_b: cf.next.kl, total_variation: cf.next.tv,
    };
    const card = $('hp-cf');
    card.dataset.kl = String(cf.next.kl);
    card.dataset.tv = String(cf.next.tv);
    card.dataset.aligned = String(cf.aligned.length);
  }

  edit({ base, after }, s) {
    const t = this.t;
    const { iv } = s;
    const T = base.T;
    const head = iv.head === 'all' ? 'avg' : iv.head;
    const A0 = base.attention(iv.layer, head), A1 = after.attention(iv.layer, head);
    let mx = 0;
    for (let k = 0; k < T * T; k++) mx = Math.max(mx, A0[k], A1[k]);
    const scale = ylOrRd(0, mx);
    const what = iv.head === 'all' ? t('whereAll', iv.layer) : t('whereHead', iv.layer, iv.head);
    const op = iv.kind === 'swapQK' ? t('hpEdSwapShort') : t(iv.kind === 'scaleQ' ? 'hpEdScaleQShort' : 'hpEdScaleKShort', iv.alpha.toFixed(2));
    const tl = (k) => `${k} (${tokenLabel(base.tokens[k], 30)})`;
    this.#tokenMaps('hp-ed-maps', [A0, A1], {
      T, tokens: base.tokens, scale, titles: [t('hpEdBefore', what), t('hpEdAfter', op)],
      cellTitle: (k, i, j, v) => t('deltaCell', tl(i), tl(j), v.toFixed(4)),
    });
    const kl = klDivergence(base.logits, after.logits);
    const change = attentionChange(base, after);
    $('hp-ed-kl').textContent = `${t('hpKlEdit', fmtKL(kl))} ${topMove(t, base, after)}${this.#noChange(change)}`;
    this.#topPair('hp-ed-top-a', 'hp-ed-top-b', base, after);
    // an edit, not a do: the edited layer's label says so (measured by deltaBars with its " (do)", then dropped)
    const tEdit = (key, ...a) => (key === 'deltaLayer' && a[0] === iv.layer ? `${t('deltaLayer', a[0])} (${t('hpEdited')})` : t(key, ...a));
    const bars = deltaBars({ mean: change.mean, max: change.max, doLayer: iv.layer, width: Math.min(520, this.#width('hp-ed-delta')),
      lang: this.lang, t: tEdit, floor: DELTA_FLOOR });
    this.#mount('hp-ed-delta', relabel(bars, ' (do)', ''));
    this.exportData['hp-ed'] = {
      text: s.text, edit: iv, tokens: base.tokens, layer: iv.layer, head: head,
      attention_before: rows(A0, T), attention_after: rows(A1, T),
      top_before: plainTop(base.top), top_after: plainTop(after.top), kl_before_after: kl,
      attention_change: { mean_abs: Array.from(change.mean), max_abs: Array.from(change.max) },
    };
    const card = $('hp-ed');
    card.dataset.kl = String(kl);
    card.dataset.maxDelta = String(Math.max(...change.max));
    card.dataset.edit = JSON.stringify(iv);
  }

  dag(p, s) {
    const t = this.t;
    const L = this.config.nLayer;
    const w = this.#width('hp-dag-layers', 420);
    this.#mount('hp-dag-layers', layerBars({
      values: Array.from(p.mean.layer), ref: p.mean.null, labels: Array.from({ length: L }, (_, l) => `L${l}`),
      width: Math.min(520, w), height: 230, yTitle: t('hpDagY'), refLabel: t('hpDagNull', p.mean.null.toFixed(3)), lang: this.lang,
      barTitle: (k, v) => t('hpDagBar', k, v.toFixed(4), fmtS(v - p.mean.null)),
      attrs: { 'data-null': String(p.mean.null), 'data-overall': String(p.mean.overall) },
    }));
    const ex = Float64Array.from(p.mean.head, (v) => v - p.mean.null);
    let m = 0;
    for (const v of ex) m = Math.max(m, Math.abs(v));
    const scale = rdBuR(m > 0 ? m : 1e-6);
    this.#mount('hp-dag-heads', this.#headGrid({
      values: ex, role: 'dag-excess', title: t('hpDagHeadsTitle'), color: scale, cbar: { scale, format: fmt3 },
      annotate: (v) => fmtS(v), maxW: this.#share('hp-dag', 0.45, 440),
      cellTitle: (i, j, v) => t('hpDagCell', i, j, (v + p.mean.null).toFixed(4), fmtS(v)),
    }));
    const body = $('hp-dag-table').tBodies[0];
    replace(body, p.sentences.map((x, k) => el('tr', {},
      el('td', { class: 'hp-sent', title: s.list[k] }, s.list[k]),
      el('td', {}, String(x.T)), el('td', {}, x.overall.toFixed(3)), el('td', {}, x.null.toFixed(3)),
      el('td', {}, fmtS(x.overall - x.null)))));
    $('hp-dag-summary').textContent = t('hpDagSummary', p.sentences.length, p.mean.overall.toFixed(3), p.mean.null.toFixed(3),
      fmtS(p.mean.overall - p.mean.null), s.mask);
    this.exportData['hp-dag'] = {
      mask: s.mask, overall: p.mean.overall, null: p.mean.null, layer_mean: Array.from(p.mean.layer),
      head_mean: rows(p.mean.head, this.config.nHead),
      sentences: p.sentences.map((x, k) => ({ text: s.list[k], T: x.T, overall: x.overall, null: x.null })),
    };
    const card = $('hp-dag');
    card.dataset.overall = String(p.mean.overall);
    card.dataset.null = String(p.mean.null);
  }
}


/** The node tree with every text `from` at the end of a text node replaced by `to`. */
function relabel(node, from, to) {
  for (const n of walk(node)) {
    for (const c of n.children) if (typeof c.text === 'string' && c.text.endsWith(from)) c.text = c.text.slice(0, -from.length) + to;
  }
  return node;
}

/** A top-k list as plain JSON rows. */
function plainTop(top) {
  return top.map(({ id, token, prob }) => ({ id, token, prob }));
}

/** "top token x → y." or "top token x unchanged." */
function topMove(t, a, b) {
  const x = a.top[0], y = b.top[0];
  if (!x || !y) return '';
  return x.id === y.id ? t('hpTopSame', tokenLabel(x.token, 24)) : t('hpTopMove', tokenLabel(x.token, 24), tokenLabel(y.token, 24));
}
