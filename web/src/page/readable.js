// readable.js — labels for byte-level BPE tokens. GPT-2 splits characters outside
// its common byte pairs (Chinese, emoji, many accented and RTL letters) into tokens
// that each hold only part of a UTF-8 character; their display strings are "�".
// Here every token gets a readable label from the bytes of the whole row:
//   - a token that holds whole characters shows them;
//   - a token that completes a character begun in earlier tokens shows the
//     character (the partial tokens are merged for display where they complete one);
//   - a token that completes no character shows its bytes, e.g. ⟨e6 b3⟩;
// and a tooltip with the bytes and the full text of the characters it is part of.
// Pure functions, no DOM.

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' ');

/** ⟨e6 b3⟩ */
export const byteLabel = (bytes) => `⟨${hex(bytes)}⟩`;

/**
 * The UTF-8 characters of bytes as spans: [{start, end, text}], text null for an
 * invalid byte (one span per byte).
 */
export function utf8Spans(bytes) {
  const spans = [];
  let p = 0;
  while (p < bytes.length) {
    const b = bytes[p];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let ok = n > 0 && p + n <= bytes.length;
    for (let k = 1; ok && k < n; k++) ok = (bytes[p + k] & 0xc0) === 0x80;
    if (ok && n >= 3) {
      // overlong, surrogate and out-of-range forms are invalid
      const b1 = bytes[p + 1];
      if (n === 3) ok = !(b === 0xe0 && b1 < 0xa0) && !(b === 0xed && b1 >= 0xa0);
      else ok = !(b === 0xf0 && b1 < 0x90) && !(b === 0xf4 && b1 >= 0x90);
    }
    if (!ok) { spans.push({ start: p, end: p + 1, text: null }); p += 1; continue; }
    let cp = n === 1 ? b : b & (0xff >> (n + 1));
    for (let k = 1; k < n; k++) cp = (cp << 6) | (bytes[p + k] & 0x3f);
    spans.push({ start: p, end: p + n, text: String.fromCodePoint(cp) });
    p += n;
  }
  return spans;
}

/**
 * Readable labels for a row of tokens.
 * @param {ArrayLike<number>[]} bytes  the bytes of each token, in order (Model#tokenBytes)
 * @param {string} [word='bytes']  the tooltip's word for bytes (translated by the page)
 * @returns {{labels: string[], titles: string[], partial: boolean[]}} labels to draw
 *   (instead of the display strings), tooltips (the bytes and the whole text of
 *   partial tokens; '' for whole ones) and which tokens hold part of a character
 */
export function readableTokens(bytes, word = 'bytes') {
  const n = bytes.length;
  const starts = new Array(n + 1);
  starts[0] = 0;
  for (let k = 0; k < n; k++) starts[k + 1] = starts[k] + bytes[k].length;
  const all = new Uint8Array(starts[n]);
  for (let k = 0; k < n; k++) all.set(bytes[k], starts[k]);
  const spans = utf8Spans(all);
  const labels = [], titles = [], partial = [];
  let s = 0;   // first span that ends after token k's start
  for (let k = 0; k < n; k++) {
    const a = starts[k], b = starts[k + 1];
    while (s < spans.length && spans[s].end <= a) s++;
    let whole = true, text = '', full = '';
    for (let q = s; q < spans.length && spans[q].start < b; q++) {
      const sp = spans[q];
      const inside = sp.start >= a && sp.end <= b;
      if (!inside || sp.text === null) whole = false;
      full += sp.text === null ? byteLabel(all.subarray(sp.start, sp.end)) : sp.text;
      // a character is shown at the token holding its last byte
      if (sp.end <= b && sp.end > a) text += sp.text === null ? byteLabel(all.subarray(sp.start, sp.end)) : sp.text;
    }
    partial.push(!whole);
    if (whole) {
      labels.push(text);
      titles.push('');
    } else {
      const mine = bytes[k];
      const readable = text.length > 0 && /[^\s]/u.test(text) && !/^⟨/.test(text);
      labels.push(readable ? text : byteLabel(mine));
      titles.push(`${word} ${hex(mine)} · ${full}`);
    }
  }
  return { labels, titles, partial };
}

/** A label for one token on its own (a prediction): its text, or its bytes when it holds part of a character. */
export function readableToken(bytes, display, word = 'bytes') {
  const { labels, titles, partial } = readableTokens([bytes], word);
  return partial[0] ? { label: labels[0], title: titles[0] } : { label: display ?? labels[0], title: '' };
}
