// roving.js — a grid of checkboxes as one stop in the Tab order (the WAI-ARIA "roving tabindex"): Tab enters
// the grid at the cell last used and leaves it at once; the arrow keys move between cells (Home / End to a row's
// ends, Ctrl+Home / Ctrl+End to the grid's corners); Space toggles, as on any checkbox. A model of 16 layers ×
// 32 heads is then one Tab stop, not 512 before the figures.

/** The grid's cells as rows: the checkboxes of each <tr> that has any. */
function cellsOf(container) {
  return [...container.querySelectorAll('tr')]
    .map((tr) => [...tr.querySelectorAll('input[type="checkbox"]')])
    .filter((r) => r.length > 0);
}

/** Make `cell` the grid's one Tab stop. */
function takeStop(rows, cell) {
  for (const r of rows) for (const c of r) c.tabIndex = c === cell ? 0 : -1;
}

/** Where a key moves from (i, j) in rows, or null for a key the grid does not use. */
function moveOf(key, ctrl, i, j, rows) {
  const last = rows.length - 1;
  switch (key) {
    case 'ArrowUp': return [Math.max(0, i - 1), j];
    case 'ArrowDown': return [Math.min(last, i + 1), j];
    case 'ArrowLeft': return [i, Math.max(0, j - 1)];
    case 'ArrowRight': return [i, j + 1];
    case 'Home': return ctrl ? [0, 0] : [i, 0];
    case 'End': return ctrl ? [last, Infinity] : [i, Infinity];
    default: return null;
  }
}

/**
 * Turn the checkboxes in `container`'s table rows into one Tab stop with arrow-key moves. Call again after
 * the grid is rebuilt (the stop goes to the cell of the same place, else the first). The key handler is
 * installed once per container.
 */
export function rovingGrid(container) {
  const rows = cellsOf(container);
  if (!rows.length) return;
  const at = container.__rovingAt || [0, 0];
  const i = Math.min(at[0], rows.length - 1);
  takeStop(rows, rows[i][Math.min(at[1], rows[i].length - 1)]);
  if (container.__roving) return;
  container.__roving = true;
  container.addEventListener('focusin', (e) => {
    const g = cellsOf(container);
    for (let a = 0; a < g.length; a++) {
      const b = g[a].indexOf(e.target);
      if (b >= 0) { container.__rovingAt = [a, b]; takeStop(g, e.target); return; }
    }
  });
  container.addEventListener('keydown', (e) => {
    const g = cellsOf(container);
    const [a, b] = container.__rovingAt || [0, 0];
    const to = moveOf(e.key, e.ctrlKey || e.metaKey, a, b, g);
    if (!to || !g[to[0]]) return;
    e.preventDefault();
    const row = g[to[0]];
    row[Math.min(to[1], row.length - 1)].focus();
  });
}
