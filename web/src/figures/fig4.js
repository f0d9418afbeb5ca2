// fig4.js — the chapter's Fig. 4: the do-operator in attention space. Three
// heatmaps on one YlOrRd scale [0, 1]: the original attention, the soft do (λ) and
// the hard do of one row (effect i) towards one column (cause j), computed by the
// chapter's display-level operation (display-do.js). The intervened row is boxed in
// blue in every panel, as the chapter's script does. Saved as
// ch09_causal_fig4_do_intervention.

import { asMatrix, sizeOf, checkLang } from './checks.js';
import { checkIndex } from '../analysis.js';
import { ylOrRd } from './colour.js';
import { heatmapPanel } from './heatmap.js';
import { figSize, layoutFigure } from './layout.js';
import { tokenLabel, fmt2, fmtValue } from './text.js';
import { hardDo, softDo } from './display-do.js';
import { AttnlabError } from '../core/errors.js';

const TEXT = {
  en: {
    sup: 'The do-operator applied to an attention matrix',
    sup2: (i, ti, j, tj) => `Intervening on row i=${i} (${ti}) → force cause = col j=${j} (${tj})`,
    orig: ['Original Attention', '(the chapter reads it as a soft causal posterior)'],
    softMasked: 'masked cell: display only (the model: EMASKED)',
    soft: (j, i, l) => [`Soft do(j=${j}→i=${i}), λ = ${l}`, '(boost path, keep others)'],
    hard: (j, i) => [`Hard do(j=${j}→i=${i})`, "(one-hot, Pearl's original)"],
    x: 'Key j (candidate cause)',
    y: 'Query i (effect)',
    cell: (i, j, v) => `effect i=${i}, cause j=${j}: ${v}`,
  },
  zh: {
    sup: '作用于注意力矩阵的 do 算子',
    sup2: (i, ti, j, tj) => `干预第 i=${i} 行（${ti}）→ 强制原因 = 第 j=${j} 列（${tj}）`,
    orig: ['原始注意力', '（原章将其解读为软因果后验）'],
    softMasked: '被掩码的单元：仅为图示（模型：EMASKED）',
    soft: (j, i, l) => [`软 do(j=${j}→i=${i})，λ = ${l}`, '（增强该路径，保留其余路径）'],
    hard: (j, i) => [`硬 do(j=${j}→i=${i})`, '（独热，Pearl 的原始定义）'],
    x: '键 j（候选原因）',
    y: '查询 i（果）',
    cell: (i, j, v) => `果 i=${i}，因 j=${j}：${v}`,
  },
};

/**
 * Fig. 4 as an SVG node tree.
 * @param {object} p
 * @param {string[]} p.tokens  T display strings
 * @param {ArrayLike<number>|number[][]} p.A  T×T attention (head average, as the chapter)
 * @param {number} p.row  effect position i whose row is intervened on
 * @param {number} p.col  cause position j forced
 * @param {number} [p.lambda=3]  soft-do strength λ (the chapter: 3.0)
 * @param {'en'|'zh'} [p.lang='en']
 * @param {number} [p.width]  px (default 1536, the chapter's 16 in at 96 dpi)
 * @param {boolean} [p.tight=false]
 * @param {string} [p.mask='causal']  the mask A was computed under ('causal', 'full', 'window:W'): a soft do
 *   on a cell it hides is drawn (the display operation lifts it from its 1e-9 floor) but labelled, since
 *   the model refuses it (Model#run throws EMASKED)
 * @param {number} [p.height]  px (default: the chapter's aspect, 5/16 of the width); the page asks for
 *   a taller figure so that its three heatmaps grow up to the width's limit
 * @param {boolean} [p.oneColorbar=false]  one colour bar (the last panel's) for the three panels, which
 *   share the scale 0–1: more room for the heatmaps in a narrow column (the page)
 * @param {number} [p.minCell=0]  the smallest cell side (px): a long text makes the figure wider than `width`
 *   (the chosen row's and column's labels are always drawn, bold)
 */
export function figDoIntervention({ tokens, A, row, col, lambda = 3, lang = 'en', width, height, oneColorbar = false, tight = false, mask = 'causal',
  minCell = 0 } = {}) {
  const t = TEXT[checkLang(lang)];
  const T = sizeOf(tokens, A);
  const M = asMatrix(A, T, 'A');
  checkIndex('row', row, 0, T - 1);
  checkIndex('col', col, 0, T - 1);
  if (typeof lambda !== 'number' || !Number.isFinite(lambda)) throw new AttnlabError('ENAN', `lambda must be finite, got ${lambda}`);
  const soft = softDo(M, T, row, col, lambda);
  const wm = /^window:(\d+)$/.exec(String(mask));
  if (mask !== 'causal' && mask !== 'full' && !(wm && Number(wm[1]) >= 1)) {
    throw new AttnlabError('EINVAL', `mask must be 'causal', 'full' or 'window:W', got ${String(mask)}`);
  }
  const lo = mask === 'full' ? 0 : wm ? Math.max(0, row - Number(wm[1]) + 1) : 0;
  const hi = mask === 'full' ? T : row + 1;
  const masked = col < lo || col >= hi;
  const hard = hardDo(M, T, row, col);

  const labels = tokens ? tokens.map((s) => tokenLabel(s)) : Array.from({ length: T }, (_, k) => String(k));
  const tip = (k) => `${k} (${tokens ? tokenLabel(tokens[k], 40) : k})`;
  const scale = ylOrRd(0, 1);
  const lam = fmtValue(lambda);
  const panel = (values, title, role) => heatmapPanel({
    values, R: T, C: T, color: scale, cbar: oneColorbar && role !== 'hard-do' ? null : { scale, format: fmt2 }, xLabels: labels, yLabels: labels, rotateX: true,
    title, xTitle: t.x, yTitle: t.y, role, box: { row }, boxColor: '#0000ff', mark: { row, col },
    cellTitle: (i, j, v) => t.cell(tip(i), tip(j), fmtValue(v)),
  });
  return layoutFigure({
    ...figSize('fig4', width), ...(height > 0 ? { height } : {}), tight, lang, minPlot: minCell * T,
    suptitle: [t.sup, t.sup2(row, labels[row], col, labels[col])],
    panels: [panel(M, t.orig, 'original'), panel(soft, masked ? [t.soft(col, row, lam)[0], t.softMasked] : t.soft(col, row, lam), 'soft-do'), panel(hard, t.hard(col, row), 'hard-do')],
    figure: 'fig4', ariaLabel: `${t.sup}: ${t.sup2(row, labels[row], col, labels[col])}`,
    attrs: { 'data-row': row, 'data-col': col, 'data-lambda': lam, 'data-masked': String(masked) },
  });
}
