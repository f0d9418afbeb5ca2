// fold.js — on one column (a phone, ≤ 860 px) the page's controls other than the sentence fold under one
// button, so the first figure is on the reader's first screen (issue 38 item 6). The fold is a state of the DOM
// (data-collapsed on #controls-more, aria-expanded on the button); the CSS applies it only on one column, so a
// wide window never hides anything. The button carries a one-line summary of what the folded controls hold.

import { $ } from '../ui/dom.js';

/** True when the folded controls are open. */
export function controlsOpen() {
  return !$('controls-more').hasAttribute('data-collapsed');
}

/** Open (true) or fold (false) the controls. */
export function setControlsOpen(open) {
  const more = $('controls-more');
  if (open) more.removeAttribute('data-collapsed');
  else more.setAttribute('data-collapsed', '');
  $('controls-toggle').setAttribute('aria-expanded', String(open));
}

/** The button opens and folds the controls. */
export function wireFold() {
  $('controls-toggle').addEventListener('click', () => setControlsOpen(!controlsOpen()));
}

/** The button's summary line (the model, layer and head in use). */
export function foldSummary(text) {
  $('controls-summary').textContent = text;
}
