// dom.js — the few DOM helpers of the page, the widget and the lineage page. Text goes in as text nodes only: there is
// no innerHTML anywhere in the page, so a token like `<img src=x onerror=…>` is
// always shown as the characters it is.

export const $ = (id) => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page: no element #${id}`);
  return el;
};

/**
 * el('tag', {class, attrs..., on: {event: fn}}, ...children) — children are
 * nodes or strings (text nodes); null/false are skipped.
 */
export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'text') e.textContent = v;
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  append(e, children);
  return e;
}

function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replace all children of parent. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  append(parent, children);
}

/** Fill a <select> with [{value, label}], keeping `selected` (a string). */
export function setOptions(select, options, selected) {
  select.replaceChildren(...options.map(({ value, label }) => {
    const o = document.createElement('option');
    o.value = String(value);
    o.textContent = label;
    return o;
  }));
  if (selected !== undefined && options.some((o) => String(o.value) === String(selected))) select.value = String(selected);
}
