// inmodel.js — what the page draws from the last run besides the four figures: the token chips and the row and
// column selects, the panel "The same do inside the network" (the top-10 next tokens before and after, KL, the
// change of attention per layer and its maps, the note on the default cell) and the run's JSON export.

import { $, el, replace, setOptions } from '../ui/dom.js';
import { toElement, tokenLabel } from '../figures/index.js';
import { deltaBars, deltaMaps } from '../figures/delta.js';
import { asymmetry } from '../analysis.js';
import { describeTrend, klDivergence, attentionChange, attentionChangeSliced, rankMoves } from './compare.js';
import { topTable } from './top-table.js';
import { readableToken } from './readable.js';
import { downloadBlob, runData } from './export.js';
import { S, page, t, specOf } from './state.js';
import { figArgs, boxSizes, labelsOf, changed, baseId, bigT, nextTask, nextFrame, appendInFrames } from './draw.js';

let defaultFound = null; // {text, row, col, n, tried}: the default cell the runner found for this text

/** A predicted token's label and tooltip. */
function topLabel(x) {
  const bytes = page.last && page.last.idBytes ? page.last.idBytes.get(x.id) : null;
  return bytes ? readableToken(bytes, x.token, t('tokBytes')) : { label: x.token, title: '' };
}

/** A token quoted for running text: “.” (punctuation reads as punctuation otherwise). */
function quoted(label) {
  return `“${tokenLabel(label, 24)}”`;
}

// ── the in-model panel ──────────────────────────────────────────────────────

/** The do inside the network: the top-10 before and after, KL, the mean |ΔA| per layer and the ΔA maps. */
export async function drawInModel() {
  const { base, after, plain, intervention: iv } = page.last;
  const where = iv.head === 'all' ? t('whereAll', iv.layer) : t('whereHead', iv.layer, iv.head);
  const kind = iv.kind === 'hard' ? t('kindHard') : t('kindSoft', iv.lambda);
  $('inmodel-text').textContent = page.last.masked ? t('inModelMasked', where, kind) : t('inModelText', where, kind);
  $('inmodel').dataset.masked = String(Boolean(page.last.masked));
  noteDefault();
  const kl = klDivergence(base.logits, after.logits);
  $('kl').textContent = kl === 0 ? '0' : kl < 1e-4 ? kl.toExponential(2) : kl.toFixed(4);
  $('kl-zero').hidden = kl !== 0 || Boolean(page.last.masked);
  $('kl-zero-fix').hidden = iv.layer === 0;
  $('kl').dataset.v = String(kl);
  $('inmodel').dataset.lambda = String(iv.lambda ?? '');
  $('inmodel').dataset.kind = iv.kind;
  $('inmodel').dataset.row = String(iv.row);
  $('inmodel').dataset.col = String(iv.col);
  const a = quoted(topLabel(base.top[0] ?? { token: '' }).label), b = quoted(topLabel(after.top[0] ?? { token: '' }).label);
  $('top-change').textContent = base.top[0] && after.top[0] && base.top[0].id !== after.top[0].id ? t('topChange', a, b) : '';
  topTable($('top-before'), base.top, null, t, topLabel);
  topTable($('top-after'), after.top, rankMoves(base.top, after.top), t, topLabel);
  const ref = $('ref-line');
  if (plain) {
    const klp = klDivergence(plain.logits, base.logits);
    ref.textContent = `${t('refTitle')}: ${t('refText', klp.toFixed(4), quoted(topLabel(plain.top[0] ?? { token: '' }).label), quoted(topLabel(base.top[0] ?? { token: '' }).label))}`;
    ref.hidden = false;
  } else ref.hidden = true;

  if (bigT()) {   // the ΔA charts in a frame of their own (no task over 50 ms)
    const mine = page.last;
    await (document.hidden ? nextTask() : nextFrame());
    if (page.last !== mine) return;
  }
  let t0 = performance.now();
  const drawing = page.last;   // a layer a task at big T
  const change = bigT() && !document.hidden ? await attentionChangeSliced(base, after, nextTask, () => page.last !== drawing) : attentionChange(base, after);
  if (!change) return;
  performance.measure('attnlab:inmodel:change', { start: t0 });
  page.last.change = change;
  page.last.kl = kl;
  const sizes = boxSizes();
  const boxW = sizes.deltaBars;
  $('delta-note').textContent = iv.layer === page.config.nLayer - 1 ? `${t('deltaNote')} ${t('deltaLastLayer')}` : t('deltaNote');
  t0 = performance.now();
  replace($('delta-bars'), toElement(deltaBars({ mean: change.mean, max: change.max, doLayer: iv.layer, width: boxW, lang: S.lang, t }), document));
  performance.measure('attnlab:inmodel:bars', { start: t0 });
  const n = page.config.nLayer - iv.layer;
  const size = Math.max(96, Math.min(170, Math.floor((sizes.deltaMaps - 12 * (Math.min(n, 4) - 1)) / Math.min(n, 4))));
  if (bigT()) {   // the maps (a bitmap each) in a task of their own
    const mine = page.last;
    await nextTask();
    if (page.last !== mine) return;
  }
  const { maps } = deltaMaps({ avgDelta: change.avgDelta, doLayer: iv.layer, T: base.T, tokens: labelsOf(page.last).labels, size, t, lang: S.lang });
  replace($('delta-maps'), maps.map(({ layer, node, scaleMax }) => el('figure', { class: 'dmap' }, toElement(node, document),
    el('figcaption', {}, layer === iv.layer ? `${t('deltaLayer', layer)} · ${t('deltaDoHere')}` : t('deltaLayer', layer),
      el('br'), el('span', { class: 'dmap-scale' }, t('deltaScale', fmtScale(scaleMax)))))));
  // the caption says what these maps' own scales show (a rise is said as a rise)
  $('delta-trend').textContent = t('deltaTrend', describeTrend(maps.map((x) => x.scaleMax), maps[0].layer), fmtScale);
}

/** The note under the in-model panel: the default cell of this sentence (runner.js: the strongest of a few dos), while it is the one shown. */
export function noteDefault() {
  const iv = page.last.intervention;
  if (page.last.defaultSearch && !page.last.provisional) defaultFound = { text: page.last.spec.text, row: page.last.sel.row, col: page.last.sel.col, n: page.last.defaultSearch.tried.length, tried: page.last.defaultSearch.tried };
  const dn = $('default-note');
  dn.hidden = !(defaultFound && defaultFound.text === page.last.spec.text && defaultFound.row === iv.row && defaultFound.col === iv.col);
  if (!dn.hidden) dn.textContent = t('defaultNote', defaultFound.n, iv.row, iv.col);
  $('inmodel').dataset.defaultTried = defaultFound ? JSON.stringify(defaultFound.tried) : '';
}

/** ±max of a ΔA map's colour scale, short. */
function fmtScale(m) {
  return m === 0 ? '0' : m < 1e-3 ? m.toExponential(1) : m.toPrecision(2);
}

// ── the token chips ─────────────────────────────────────────────────────────

let chipsFor = null;   // [base id, lang] of the token chips and options on screen
const CHIPS_PER_FRAME = 64;

let tokensGen = 0;
// The token list is collapsed for a new text longer than this (a <details>): 250 chips pushed Fig. 1 a screen down
const TOKENS_OPEN_MAX = 40;
let tokensText = null;   // the text the list's open state was set for (a cell or language change keeps the reader's)

/** Mark the chips of the selected row and column, and set the two selects to them. */
function markChips() {
  for (const li of $('tokens').children) {
    const k = Number(li.dataset.k);
    li.classList.toggle('is-row', k === S.sel.row);
    li.classList.toggle('is-col', k === S.sel.col);
  }
  $('row').value = String(S.sel.row);
  $('col').value = String(S.sel.col);
}

/**
 * The token list's summary: the count, and (new text) open for a short text, closed for a long one, and closed
 * on a phone, where the chips would stand between the sentence and Fig. 1 (the figures label every token).
 */
function tokensSummary(T, fresh) {
  $('tokens-count').textContent = `(${t('tokensCount', T)})`;
  if (fresh) $('tokens-box').open = T <= TOKENS_OPEN_MAX && !window.matchMedia('(max-width: 520px)').matches;
}

/** The sentence's tokens as chips (the chosen row and column marked), and the row and column selects. */
export async function drawTokens() {
  const r = page.last.base;
  if (!changed('tokens', [baseId(r), S.sel.row, S.sel.col])) return;
  const key = `${baseId(r)}|${S.lang}`;
  tokensSummary(r.T, chipsFor !== key && tokensText !== page.last.spec.text);
  tokensText = page.last.spec.text;
  // the same tokens, another cell: move the marks (rebuilding 256 chips and 512 options was a long task)
  if (chipsFor === key) return markChips();
  const mine = ++tokensGen;
  chipsFor = null;
  const { labels, titles, partial } = labelsOf(page.last);
  const chips = labels.map((tok, k) => el('li', {
    class: [k === S.sel.row ? 'is-row' : '', k === S.sel.col ? 'is-col' : '', partial[k] ? 'is-bytes' : ''].join(' ').trim() || null,
    dataset: { k: String(k) }, title: titles[k] || null,
  }, el('span', { class: 'tok-i' }, String(k)), el('span', { class: 'tok-s' }, tokenLabel(tok, 40))));
  const opts = labels.map((tok, k) => ({ value: k, label: t('tokOpt', k, tokenLabel(tok, 24)) }));
  if (!bigT() || document.hidden) {
    replace($('tokens'), chips);
    setOptions($('row'), opts, S.sel.row);
    setOptions($('col'), opts, S.sel.col);
    chipsFor = key;
    return;
  }
  // Big T: the chips a batch a frame and the two selects in a frame of their own. All of
  // them in one frame (2300 elements to style and lay out) was a task of 40-60 ms.
  const stale = () => mine !== tokensGen || !page.last;
  replace($('tokens'), chips.slice(0, CHIPS_PER_FRAME));
  if (!await appendInFrames($('tokens'), chips.slice(CHIPS_PER_FRAME), CHIPS_PER_FRAME, stale)) return;
  for (const id of ['row', 'col']) {
    await nextFrame();
    if (stale()) return;
    setOptions($(id), opts, S.sel[id]);
  }
  chipsFor = key;
  markChips();   // the selection may have moved while the chips went in
}

// ── the run's data ──────────────────────────────────────────────────────────

/** Download the run as JSON: settings, tokens, ids, all attentions before and after, q and k, top-10s, KL, ΔA. */
export function exportJson() {
  if (!page.last || !page.last.change) return;
  const settings = {
    layer: S.layer, head: S.head, row: S.sel.row, col: S.sel.col, kind: S.kind, lambda: S.lambda,
    mask: S.mask === 'window' ? `window:${S.window}` : S.mask, ablate: specOf().ablate, demo: S.demo, lang: S.lang,
  };
  const klPlain = page.last.plain ? klDivergence(page.last.plain.logits, page.last.base.logits) : null;
  const data = runData({ out: page.last, modelName: page.modelName, settings, change: page.last.change, kl: page.last.kl, klPlain });
  const cmp = figArgs.fig1 && figArgs.fig1[1].compare;
  if (cmp) { // Fig. 1's comparison as drawn: the view's attention with mask 'full', and its A − Aᵀ
    data.compare_full_mask = { layer: S.layer, head: S.head, attention: Array.from(cmp), asymmetry: Array.from(asymmetry(cmp)) };
  }
  downloadBlob(new Blob([JSON.stringify(data)], { type: 'application/json' }), 'attnlab-run.json');
}
