// fit.js — the size search the page and the widget share: the figures keep the chapter's
// aspect (figsize 13 × 5 in: height ∝ width) and, with tight: true, crop their spare
// width, so the nominal width whose cropped figure just fits a box is searched for.
// Size is close to proportional to the nominal width, so a few proportional steps and
// a short bisection find it.

/**
 * The figure as large as a box cw px wide and maxH px high allows: {width, node} with
 * node = build(width). Usually the figure fits at cw (panels in a row, cropped); then it
 * grows while it fits. When at cw the panels stack (labels too wide for a row) into a
 * column taller than maxH, a wider figure in a row that CSS scales down (to at least
 * minShrink) is better than a column of panels; `widen` are the widths tried, × cw.
 */
export function fitWidth(build, cw, maxH, opts) {
  const search = fitSearch(build, cw, maxH, opts);
  for (;;) {
    const step = search.next();
    if (step.done) return step.value;
  }
}

/**
 * fitWidth as a generator: it yields after each build (cold, a build of a figure is 5-20 ms
 * and the search makes up to eight), so a page can give the browser the thread between
 * builds; its return value is fitWidth's.
 */
export function* fitSearch(build, cw, maxH, { minShrink = 0.7, widen = [1.1, 1.2, 1.32, 1.45] } = {}) {
  const width = (n) => Number(n.attrs.width), height = (n) => Number(n.attrs.height);
  const fits = (n) => width(n) <= cw + 0.5 && height(n) <= maxH;
  let lo = cw;
  let best = build(lo);
  if (!fits(best)) {
    if (height(best) <= maxH) return { width: lo, node: best };
    for (const f of widen) {
      yield;
      const n = build(cw * f);
      const shrink = Math.min(1, cw / width(n));
      if (shrink >= minShrink && height(n) * shrink <= maxH) return { width: cw * f, node: n };
    }
    return { width: lo, node: best };   // narrow screens: the panels stacked at the box width
  }
  // proportional steps up while the figure fits, then bisect the last interval
  let hi = 0;
  for (let k = 0; k < 3 && !hi; k++) {
    const f = Math.min(cw / width(best), maxH / height(best));
    if (f < 1.005) return { width: lo, node: best };
    const w = Math.min(lo * f, cw * 3);
    yield;
    const n = build(w);
    if (fits(n)) { best = n; lo = w; } else hi = w;
  }
  for (let k = 0; k < 4 && hi && hi - lo > 4; k++) {
    const mid = (lo + hi) / 2;
    yield;
    const n = build(mid);
    if (fits(n)) { best = n; lo = mid; } else hi = mid;
  }
  return { width: lo, node: best };
}
