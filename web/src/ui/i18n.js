// i18n.js — the one translator of the page, the widget and the lineage page. Each has
// its own string tables ({en: {...}, zh: {...}}, a value is a string or a function of
// the call's arguments); tests/js/i18n-keys.test.js checks that every language has every
// key with the same arity, so a missing key is a bug and is thrown, never shown.

/**
 * A translator factory over `tables`: translator(lang) → t(key, ...args).
 * @param {Record<string, Record<string, string | Function>>} tables
 * @param {string} name  whose tables (named in the errors)
 */
export function makeTranslator(tables, name) {
  return (lang) => {
    const table = tables[lang];
    if (!table) throw new Error(`${name} i18n: unknown language ${lang}`);
    return (key, ...args) => {
      const v = table[key];
      if (v === undefined) throw new Error(`${name} i18n: no string '${key}' for ${lang}`);
      return typeof v === 'function' ? v(...args) : v;
    };
  };
}

/** Fill the static labels under root (data-i18n, data-i18n-aria, data-i18n-title, data-i18n-alt). */
export function applyStatic(root, t) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.setAttribute('title', t(el.dataset.i18nTitle));
  for (const el of root.querySelectorAll('[data-i18n-alt]')) el.setAttribute('alt', t(el.dataset.i18nAlt));
}
