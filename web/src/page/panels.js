// panels.js — the three panels below the figures, each made here: "Heads & counterfactuals" (heads.js), "Does
// attention explain?" (evidence-panel.js) and "Where a head looks, what it moves" (circuits-panel.js, whose
// cards follow the evidence cards in #evidence). None is built on the way to the live figures: each is built
// when the reader nears it or once the page is live and idle, one a task, in this order (lazy-panels.js); until
// then a LazyPanel keeps the model for it. The page talks to them as one: setModel, setLang, sentenceChanged.

import { LazyPanel, deferPanels } from './lazy-panels.js';
import { HeadsPanel } from './heads.js';
import { EvidencePanel } from './evidence-panel.js';
import { CircuitsPanel } from './circuits-panel.js';

/**
 * The panels of the page. env: the page's translator, language and sentence ({t(), lang(), sentence()});
 * whenLive: resolves at the page's first live drawing. buildNow() builds them at once (a link into a card).
 */
export function makePanels(env, whenLive) {
  const all = [
    new LazyPanel(() => new HeadsPanel(env)),
    new LazyPanel(() => new EvidencePanel(env)),
    new LazyPanel(() => new CircuitsPanel(env)),
  ];
  const buildNow = deferPanels(all, [document.getElementById('heads'), document.getElementById('evidence')], whenLive);
  return {
    /** A new model (its config and name) for every panel: their cards start again. */
    setModel(model, config, name) { for (const p of all) p.setModel(model, config, name); },
    /** The language changed: every label and drawn card again. */
    setLang() { for (const p of all) p.setLang(); },
    /** The page drew a result: the cards on its sentence follow it. */
    sentenceChanged() { for (const p of all) p.sentenceChanged(); },
    buildNow,
  };
}
