// widget/style.js — the widgets' stylesheet, adopted by each shadow root as a
// constructable stylesheet (no <style> element, so a page whose CSP forbids
// inline styles still styles them). Nothing leaks in or out of the shadow DOM
// but the custom properties listed in docs/embedding.md (--attnlab-*).

export const CSS = `
:host { display: block; box-sizing: border-box; margin: 1.25rem 0; max-width: 100%; min-width: 0;
  font: 14px/1.5 system-ui, -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK SC', 'PingFang SC', sans-serif;
  contain: inline-size; }
:host([hidden]) { display: none; }
*, *::before, *::after { box-sizing: border-box; }
.frame { --bg: var(--attnlab-bg, #ffffff); --fg: var(--attnlab-fg, #213547); --muted: var(--attnlab-muted, #5f6b7a);
  --border: var(--attnlab-border, #d9dee4); --accent: var(--attnlab-accent, #1f4fd1); --field: #ffffff; --err: #b42318;
  color-scheme: light; background: var(--bg); color: var(--fg); border: 1px solid var(--border); border-radius: 8px;
  padding: 10px; overflow: hidden; }
.frame[data-theme="dark"] { --bg: var(--attnlab-bg-dark, #1e1e22); --fg: var(--attnlab-fg-dark, #dfdfd6);
  --muted: var(--attnlab-muted-dark, #a3a8b0); --border: var(--attnlab-border-dark, #3c3f44); --accent: var(--attnlab-accent-dark, #8fb0ff);
  --field: #2a2a30; --err: #ff8a80; color-scheme: dark; }
.controls { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: end; margin-bottom: 8px; }
.controls:empty { display: none; }
label { display: flex; flex-direction: column; gap: 2px; font-size: 12px; color: var(--muted); min-width: 0; }
label.grow { flex: 1 1 220px; }
label.inline { flex-direction: row; align-items: center; gap: 6px; }
input[type="text"], select { font: inherit; font-size: 13px; color: var(--fg); background: var(--field);
  border: 1px solid var(--border); border-radius: 5px; padding: 3px 6px; min-width: 0; max-width: 100%; }
input[type="text"] { width: 100%; }
input[type="range"] { width: 120px; accent-color: var(--accent); }
button { font: inherit; font-size: 13px; color: var(--fg); background: var(--field); border: 1px solid var(--border);
  border-radius: 5px; padding: 3px 10px; cursor: pointer; }
button:hover { border-color: var(--accent); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
output { font-variant-numeric: tabular-nums; color: var(--fg); }
.figure { position: relative; min-height: var(--reserve, 120px); display: flex; flex-wrap: wrap; gap: 10px;
  justify-content: center; align-items: flex-start; }
.figure.has-svg { min-height: 0; }
.figure svg { display: block; max-width: 100%; height: auto; background: #ffffff; border-radius: 4px; }
.figure .cellable rect[data-i] { cursor: pointer; }
.placeholder { position: absolute; inset: 0; display: flex; flex-direction: column; align-items: center;
  justify-content: center; gap: 10px; padding: 16px; text-align: center; color: var(--muted);
  background: repeating-linear-gradient(135deg, transparent 0 12px, color-mix(in srgb, var(--border) 35%, transparent) 12px 24px);
  border-radius: 6px; }
.placeholder p { margin: 0; font-size: 13px; }
.placeholder.with-poster { background: none; padding: 0; justify-content: flex-end; }
.poster { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: contain; object-position: center top;
  background: #ffffff; border-radius: 4px; }
.placeholder.with-poster p, .placeholder.with-poster progress { position: relative; margin-bottom: 6px; }
.placeholder.with-poster p { padding: 1px 8px; border-radius: 4px; background: color-mix(in srgb, var(--bg) 85%, transparent); }
progress { width: min(320px, 80%); height: 8px; accent-color: var(--accent); }
.note { margin: 8px 0 0; font-size: 12.5px; color: var(--muted); overflow-wrap: anywhere; }
.note:empty { display: none; }
.note b { color: var(--fg); font-weight: 600; }
.error { color: var(--err); }
figcaption { margin-top: 8px; font-size: 13.5px; color: var(--fg); overflow-wrap: anywhere; }
figcaption[hidden] { display: none; }
figure.wrap { margin: 0; }
.tops { display: flex; flex-wrap: wrap; gap: 8px 24px; margin-top: 8px; font-size: 12.5px; }
.tops table { border-collapse: collapse; }
.tops th { text-align: left; color: var(--muted); font-weight: 500; padding: 0 8px 2px 0; }
.tops td { padding: 1px 8px 1px 0; font-variant-numeric: tabular-nums; }
.tops code { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; background: color-mix(in srgb, var(--border) 40%, transparent); padding: 0 3px; border-radius: 3px; white-space: pre; }
.lab-fig + .lab-fig { margin-top: 14px; }
.lab-fig h4 { margin: 0 0 4px; font-size: 13px; color: var(--muted); font-weight: 600; }
.hint { font-size: 12px; color: var(--muted); margin: 0 0 6px; }
`;

let sheet = null;
/** The shared CSSStyleSheet (one object for every widget on the page). */
export function styleSheet() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}
