// status.js — what the page says about itself: its state on the body (data-state loading | busy | ready | error:
// the page's, which the heads panel's lane watches; the cards have their own, card.js), the status line, and the
// error banner with the note naming refused link values.
//
// Errors about the model (a failed load, a refused ?model=, the cache) are also shown in the Model panel, beside
// the Load button: on a phone the banner above the figures is far below it. The note naming refused link values
// stays beside any later error until the view changes (a run's error used to replace it, and the reader never
// learned why the link did not open what it named).

import { $ } from '../ui/dom.js';
import { setControlsOpen } from './fold.js';

const MODEL_ERRORS = new Set(['load', 'param', 'cache']);

const shown = {
  url: null,      // the refused link values, or null
  other: null,    // {message, from}: the error of another source, or null
};

/** The page's state: 'loading' | 'busy' | 'ready' | 'error'. */
export function setState(state) { document.body.dataset.state = state; }

export function setStatus(text) { $('status').textContent = text; }

function paintError() {
  const parts = [];
  if (shown.url) parts.push(shown.url);
  if (shown.other) parts.push(shown.other.message);
  const near = $('model-error');
  if (!parts.length) {
    $('error').hidden = true;
    near.hidden = true;
    delete document.body.dataset.error;
    return;
  }
  $('error-text').textContent = parts.join(' · ');
  $('error').hidden = false;
  document.body.dataset.error = shown.other ? shown.other.from : 'url';
  const model = shown.other && MODEL_ERRORS.has(shown.other.from);
  near.hidden = !model;
  near.textContent = model ? shown.other.message : '';
  if (model) setControlsOpen(true);   // on a phone the error sits beside the Load button: unfold it
}

/** Show `message`, from 'url' | 'load' | 'param' | 'cache' | 'run' | 'export'. */
export function showError(message, from) {
  if (from === 'url') shown.url = message;
  else shown.other = { message, from };
  paintError();
}

/** Clear the error of `from` (all of them without it). */
export function clearError(from) {
  if (!from) { shown.url = null; shown.other = null; }
  else if (from === 'url') shown.url = null;
  else if (shown.other && shown.other.from === from) shown.other = null;
  else return;
  paintError();
}
