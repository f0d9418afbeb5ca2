// fig1.js — the chapter's Fig. 1: attention heatmap (YlOrRd, rows = effect
// position i, columns = cause candidate j) beside its asymmetry A − Aᵀ (RdBu_r,
// centred at 0, symmetric limits). Saved as ch09_causal_fig1_attention_asymmetry.
//
// Under a causal (or window) mask A[j][i] = 0 for every j < i, so below the
// diagonal A − Aᵀ is A itself: all red, whatever the model learned. The panel
// then shows the mask, and its title says so. The informative picture is A − Aᵀ
// of the same model with the mask off (mask 'full'): pass it as `compare` and
// it is drawn as a third panel beside the others.

import { asMatrix, sizeOf, checkLang } from './checks.js';
import { ylOrRd, rdBuR } from './colour.js';
import { heatmapPanel } from './heatmap.js';
import { figSize, layoutFigure } from './layout.js';
import { tokenLabel, fmt2, fmtValue } from './text.js';
import { AttnlabError } from '../core/errors.js';

const TEXT = {
  en: {
    sup: (model, m) => `${model ? model + ' ' : ''}Attention, ${m}`,
    maskTitle: { causal: 'causal mask', full: 'no mask (full attention)', window: (w) => `window mask, W = ${w}`,
      model: (w) => `the model's sliding window, W = ${w}` },
    avg: (where) => `Avg Attention (${where})`,
    oneHead: (head, where) => `Head ${head} Attention (${where})`,
    last: 'last layer',
    layer: (l) => `layer ${l}`,
    avgSub: 'Query i → key j (read as effect → cause)',
    avgX: 'Key j (candidate cause)',
    avgY: 'Query i (effect)',
    asym: ['Asymmetry A − A', { sup: '⊤' }],
    asymMasked: (m) => `${m} mask: red below = the mask`,
    asymFull: 'no mask: red = i→j exceeds j→i',
    maskNote: (m) => `Under the ${m} mask Aᵀ is 0 below the diagonal, so A − Aᵀ is red there whatever the model learned: that half shows the mask, not the model.`,
    compareNote: 'Right: the same model and sentence with the mask off (mask full), where the sign means something.',
    compare: ['A − A', { sup: '⊤' }, ', mask off'],
    compareSub: 'full attention: red = i→j exceeds j→i',
    asymX: 'Key j',
    asymY: 'Query i',
    cell: (ti, tj, v) => `effect i=${ti}, cause j=${tj}: ${v}`,
  },
  zh: {
    sup: (model, m) => `${model ? model + ' ' : ''}注意力（${m}）`,
    maskTitle: { causal: '因果掩码', full: '无掩码，完全注意力', window: (w) => `窗口掩码，W = ${w}`,
      model: (w) => `模型自身的滑动窗口，W = ${w}` },
    avg: (where) => `平均注意力（${where}）`,
    oneHead: (head, where) => `注意力头 ${head}（${where}）`,
    last: '最后一层',
    layer: (l) => `第 ${l} 层`,
    avgSub: '查询 i → 键 j（读作 果 → 因）',
    avgX: '键 j（候选原因）',
    avgY: '查询 i（果）',
    asym: ['不对称矩阵 A − A', { sup: '⊤' }],
    asymMasked: (m) => `${m === 'causal' ? '因果' : '窗口'}掩码：下方红色 = 掩码`,
    asymFull: '无掩码：红色 = i→j 大于 j→i',
    maskNote: (m) => `在${m === 'causal' ? '因果' : '窗口'}掩码下，对角线以下 Aᵀ 为 0，所以无论模型学到什么，A − Aᵀ 在那里都是红色：这一半显示的是掩码，而不是模型。`,
    compareNote: '右图：同一模型、同一句子关闭掩码（full）后的结果，此时正负号才有意义。',
    compare: ['A − A', { sup: '⊤' }, '，关闭掩码'],
    compareSub: '完全注意力：红色 = i→j 大于 j→i',
    asymX: '键 j',
    asymY: '查询 i',
    cell: (ti, tj, v) => `果 i=${ti}，因 j=${tj}：${v}`,
  },
};

/**
 * Fig. 1 as an SVG node tree (svg.js; toString/toElement it).
 * @param {object} p
 * @param {string[]} p.tokens  display strings, T of them
 * @param {ArrayLike<number>|number[][]} p.A  T×T attention (row = query/effect i), usually the head average
 * @param {string} [p.title]  first suptitle line (default "<model> Attention, <the mask>": causal mask, no mask, window mask W)
 * @param {string} [p.model]  model name for the default title (the chapter: "GPT-2")
 * @param {string} [p.sentence]  second suptitle line (default: the tokens joined), shown in quotes
 * @param {number} [p.layer]  layer drawn; with nLayer, "last layer" or "layer L" in the panel title
 * @param {number} [p.nLayer]
 * @param {number|'avg'} [p.head='avg']
 * @param {'en'|'zh'} [p.lang='en']
 * @param {number} [p.width]  px (default 1248, the chapter's 13 in at 96 dpi)
 * @param {boolean} [p.tight=false]  crop the outer spare width (for files)
 * @param {string} [p.mask='causal']  the mask A was computed under ('causal', 'full', 'window:W'): the
 *   asymmetry panel's subtitle says when the mask, not the model, makes it red
 * @param {ArrayLike<number>|number[][]} [p.compare]  T×T attention of the same view with mask 'full':
 *   its A − Aᵀ is drawn as a third panel, on the same colour scale
 * @param {boolean} [p.maskFromModel=false]  a 'window:W' mask is the model's own sliding window (the title says so)
 * @param {{row: number, col: number}} [p.mark]  the chosen cell: its row's and column's labels always drawn, bold
 * @param {number} [p.minCell=0]  the smallest cell side (px): a long text makes the figure wider than `width`
 */
export function figAttentionAsymmetry({ tokens, A, title, model, sentence, layer, nLayer, head = 'avg', lang = 'en', width, tight = false,
  mask = 'causal', compare, maskFromModel = false, mark, minCell = 0 } = {}) {
  const t = TEXT[checkLang(lang)];
  const T = sizeOf(tokens, A);
  const M = asMatrix(A, T, 'A');
  const labels = tokens ? tokens.map((s) => tokenLabel(s)) : Array.from({ length: T }, (_, k) => String(k));
  const tipLabel = (k) => `${k} (${tokens ? tokenLabel(tokens[k], 40) : k})`;

  const asym = new Float64Array(T * T);
  let amax = 0, vmin = Infinity, vmax = -Infinity;
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const d = M[i * T + j] - M[j * T + i];
      asym[i * T + j] = d;
      amax = Math.max(amax, Math.abs(d));
      vmin = Math.min(vmin, M[i * T + j]);
      vmax = Math.max(vmax, M[i * T + j]);
    }
  }

  let cmp = null;
  if (compare !== undefined && compare !== null) {
    const C = asMatrix(compare, T, 'compare');
    cmp = new Float64Array(T * T);
    for (let i = 0; i < T; i++)
      for (let j = 0; j < T; j++) {
        cmp[i * T + j] = C[i * T + j] - C[j * T + i];
        amax = Math.max(amax, Math.abs(cmp[i * T + j]));
      }
  }
  const maskName = typeof mask === 'string' && mask.startsWith('window') ? 'window' : mask;
  if (maskName !== 'causal' && maskName !== 'full' && maskName !== 'window') {
    throw new AttnlabError('EINVAL', `mask must be 'causal', 'full' or 'window:W', got ${String(mask)}`);
  }
  const asymSub = maskName === 'full' ? t.asymFull : t.asymMasked(maskName);

  const where = layer === undefined || (nLayer !== undefined && layer === nLayer - 1) ? t.last : t.layer(layer);
  const attnScale = ylOrRd(vmin, vmax);
  const asymScale = rdBuR(amax);
  const common = { R: T, C: T, xLabels: labels, yLabels: labels, rotateX: true, mark: mark ?? null };
  const left = heatmapPanel({
    ...common, values: M, color: attnScale, cbar: { scale: attnScale, format: fmt2 },
    title: [head === 'avg' ? t.avg(where) : t.oneHead(head, where), t.avgSub],
    xTitle: t.avgX, yTitle: t.avgY, role: 'attention',
    cellTitle: (i, j, v) => t.cell(tipLabel(i), tipLabel(j), fmtValue(v)),
  });
  const right = heatmapPanel({
    ...common, values: asym, color: asymScale, cbar: { scale: asymScale, format: fmt2 },
    title: [t.asym, asymSub], xTitle: t.asymX, yTitle: t.asymY, role: 'asymmetry',
    cellTitle: (i, j, v) => t.cell(tipLabel(i), tipLabel(j), fmtValue(v)),
  });
  const panels = [left, right];
  if (cmp) {
    panels.push(heatmapPanel({
      ...common, values: cmp, color: asymScale, cbar: { scale: asymScale, format: fmt2 },
      title: [t.compare, t.compareSub], xTitle: t.asymX, yTitle: t.asymY, role: 'asymmetry-full',
      cellTitle: (i, j, v) => t.cell(tipLabel(i), tipLabel(j), fmtValue(v)),
    }));
  }

  const text = sentence ?? (tokens ? tokens.join('').trim() : '');
  const w = maskName === 'window' ? String(mask).slice('window:'.length) : '';
  const maskTitle = maskName === 'window' ? t.maskTitle[maskFromModel ? 'model' : 'window'](w) : t.maskTitle[maskName];
  const sup = [title ?? t.sup(model, maskTitle)];
  if (text) sup.push(`"${text}"`);
  // the caption: what the asymmetry panel can and cannot show under this mask
  const note = [maskName === 'full' ? '' : t.maskNote(maskName), cmp ? t.compareNote : ''].filter(Boolean).join(' ');
  const supAll = note ? [...sup, note] : sup;
  return layoutFigure({
    ...figSize('fig1', width), tight, lang, suptitle: supAll, panels, minPlot: minCell * T,
    figure: 'fig1', ariaLabel: sup.join(' — '), attrs: { 'data-mask': String(mask), 'data-compare': cmp ? 'full' : 'none' },
  });
}
