// tooltip.js — one floating tooltip element shared by the charts under some boxes: it
// follows the pointer, stays inside the window, and shows plain text (textContent).

/** The text of the SVG <title> of the nearest ancestor of `target` matching `selector`, or null. */
export function titleText(target, selector = '[data-v]') {
  const el = target && target.closest ? target.closest(selector) : null;
  const title = el ? el.querySelector(':scope > title') : null;
  return title ? title.textContent : null;
}

/**
 * Show `tip` (an element) over each of `boxes` while the pointer is on something
 * textAt(event) names (a string); hide it otherwise and when the pointer leaves.
 */
export function attachTooltip(tip, boxes, textAt = (e) => titleText(e.target)) {
  const show = (e) => {
    const text = textAt(e);
    if (text === null || text === undefined) { tip.hidden = true; return; }
    tip.textContent = text;
    tip.hidden = false;
    const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = e.clientY + 18 + tip.offsetHeight > window.innerHeight ? e.clientY - tip.offsetHeight - 10 : e.clientY + 18;
    tip.style.setProperty('left', `${Math.max(4, x)}px`);
    tip.style.setProperty('top', `${Math.max(4, y)}px`);
  };
  for (const box of boxes) {
    box.addEventListener('pointermove', show);
    box.addEventListener('pointerleave', () => { tip.hidden = true; });
  }
}
