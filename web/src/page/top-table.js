// top-table.js — the next-token top-k table shared by the in-model panel and
// the heads panel: rank, token (with its move since the reference run), and a
// probability bar scaled to the table's largest probability.

import { el, replace } from '../ui/dom.js';
import { tokenLabel } from '../figures/index.js';

/** A top-10 table (the in-model panel's look): rank, token (moves), probability bar. */
export function topTable(table, top, moves, t, label = (x) => ({ label: x.token, title: '' })) {
  const body = table.tBodies[0];
  const pmax = Math.max(...top.map((x) => x.prob), 1e-9);
  replace(body, top.map((x, k) => {
    const bar = el('span', { class: 'pbar' });
    bar.style.setProperty('--w', String(Math.max(0.01, x.prob / pmax)));
    const mv = moves ? moves[k] : null;
    const mvText = { up: t('mvUp'), down: t('mvDown'), new: t('mvNew') }[mv];
    return el('tr', { dataset: { id: String(x.id), p: String(x.prob) } },
      el('td', { class: 'rank' }, String(k + 1)),
      el('td', { class: 'tok', title: label(x).title || x.token }, el('code', {}, tokenLabel(label(x).label, 24)),
        mvText ? el('span', { class: `mv mv-${mv}`, title: mvText, 'aria-label': mvText }, mv === 'up' ? '▲' : mv === 'down' ? '▼' : '★') : null),
      el('td', { class: 'prob' }, el('div', { class: 'pcell' }, el('span', { class: 'ptrack' }, bar), el('span', { class: 'pval' }, x.prob.toFixed(3)))));
  }));
}
