// lazy-panels.js — the panels below the figures (panels.js: heads, evidence, circuits) are built (their JS state,
// the evidence and circuits cards' DOM, their handlers) only when the reader comes near them or the page is idle
// after its first live drawing, whichever is first: on the way to the live figures the page does none of that
// work. Until then a LazyPanel stands in for a panel: it keeps the last setModel and passes nothing else on (a
// panel reads the language and the sentence when it is built). The panels are built together (the heads panel
// links into the circuits cards), each in its own task; #figures carries data-panels="built" after.

/** A stand-in for a panel made by make() on first need: setModel, sentenceChanged, setLang like the panel's. */
export class LazyPanel {
  constructor(make) {
    this.make = make;
    this.panel = null;
    this.modelArgs = null;
  }

  get built() { return this.panel !== null; }

  build() {
    if (this.panel) return this.panel;
    this.panel = this.make();
    if (this.modelArgs) {
      this.panel.setModel(...this.modelArgs);
      this.panel.sentenceChanged();   // the sentence the page shows now: the panel's cards start from it
      this.modelArgs = null;
    }
    return this.panel;
  }

  setModel(...args) { if (this.panel) this.panel.setModel(...args); else this.modelArgs = args; }
  sentenceChanged() { if (this.panel) this.panel.sentenceChanged(); }
  setLang() { if (this.panel) this.panel.setLang(); }
}

/**
 * Build the panels when one of sections comes within margin of the viewport, or idle after whenLive resolves
 * (requestIdleCallback, else a timeout), or when buildNow() is called; one panel per task, in the order given.
 * Returns buildNow: builds whatever is left at once (a link into a panel needs its DOM now).
 */
export function deferPanels(panels, sections, whenLive, { margin = '1200px 0px', mark = document.getElementById('figures') } = {}) {
  let scheduled = false, finished = false, observer = null;
  const done = () => {   // once, whichever way the panels were built (buildNow during the stepwise build)
    if (finished) return;
    finished = true;
    if (observer) observer.disconnect();
    if (mark) mark.dataset.panels = 'built';
    performance.mark('attnlab:panels');
  };
  // why they were built, on the mark (data-panels-why: near, live or link; data-panels-near: the section that
  // came near and its distance below the viewport then, in px): a slow first layout can bring a section near
  const why = (reason) => { if (mark && !mark.dataset.panelsWhy) mark.dataset.panelsWhy = reason; };
  const buildNow = () => {
    why('link');
    for (const p of panels) p.build();
    done();
  };
  const later = (fn) => (typeof requestIdleCallback === 'function' ? requestIdleCallback(fn, { timeout: 1500 }) : setTimeout(fn, 50));
  const stepwise = (reason) => {
    if (scheduled) return;
    scheduled = true;
    why(reason);
    const next = (k) => {
      if (k === panels.length) { done(); return; }
      panels[k].build();
      later(() => next(k + 1));
    };
    later(() => next(0));
  };
  if (typeof IntersectionObserver === 'function') {
    observer = new IntersectionObserver((entries) => {
      const near = entries.find((e) => e.isIntersecting);
      if (!near) return;
      if (mark && !scheduled) mark.dataset.panelsNear = `${near.target.id}:${Math.round(near.boundingClientRect.top - innerHeight)}`;
      stepwise('near');
    }, { rootMargin: margin });
    for (const s of sections) if (s) observer.observe(s);
  }
  whenLive.then(() => stepwise('live'));
  return buildNow;
}
