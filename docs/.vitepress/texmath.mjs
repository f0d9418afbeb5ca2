// texmath.mjs — formulas for the docs without a math package: a markdown-it
// plugin that turns $…$ (inline) and $$…$$ (display, on their own lines) into
// MathML, which browsers render natively (MathML Core: Chromium ≥ 109,
// Firefox, Safari). It understands the small TeX subset the chapter uses:
//   letters/digits/operators, ^ and _ with {groups}, \frac \sqrt \sum \prod \int
//   (with limits), Greek letters, \mathbf \mathbb \mathrm \text \operatorname,
//   \left( … \right), \log \exp \max \min \softmax-like names via \operatorname,
//   \top \cdot \otimes \odot \mid \approx \neq \leq \geq \in \to \infty \propto \ldots.
// Anything it does not know is shown as the TeX source in <code> (never lost,
// never HTML-injected: every text is escaped).

const GREEK = {
  alpha: 'α', beta: 'β', gamma: 'γ', delta: 'δ', epsilon: 'ε', varepsilon: 'ε', zeta: 'ζ', eta: 'η', theta: 'θ',
  iota: 'ι', kappa: 'κ', lambda: 'λ', mu: 'μ', nu: 'ν', xi: 'ξ', pi: 'π', rho: 'ρ', sigma: 'σ', tau: 'τ',
  phi: 'φ', varphi: 'φ', chi: 'χ', psi: 'ψ', omega: 'ω', Gamma: 'Γ', Delta: 'Δ', Theta: 'Θ', Lambda: 'Λ',
  Xi: 'Ξ', Pi: 'Π', Sigma: 'Σ', Phi: 'Φ', Psi: 'Ψ', Omega: 'Ω',
};
const OPS = {
  top: ['mi', '⊤'], cdot: ['mo', '·'], ast: ['mo', '∗'], times: ['mo', '×'], otimes: ['mo', '⊗'], odot: ['mo', '⊙'], mid: ['mo', '∣'],
  approx: ['mo', '≈'], neq: ['mo', '≠'], ne: ['mo', '≠'], leq: ['mo', '≤'], le: ['mo', '≤'], geq: ['mo', '≥'], ge: ['mo', '≥'],
  in: ['mo', '∈'], to: ['mo', '→'], rightarrow: ['mo', '→'], leftarrow: ['mo', '←'], infty: ['mi', '∞'], propto: ['mo', '∝'],
  ldots: ['mo', '…'], cdots: ['mo', '⋯'], partial: ['mo', '∂'], nabla: ['mo', '∇'], pm: ['mo', '±'], quad: ['mspace', ''], qquad: ['mspace', ''], ' ': ['mspace', ''], '!': ['mspace', ''],
  ',': ['mspace', ''], ';': ['mspace', ''], '{': ['mo', '{'], '}': ['mo', '}'], '|': ['mo', '‖'], langle: ['mo', '⟨'], rangle: ['mo', '⟩'],
  ell: ['mi', 'ℓ'], sim: ['mo', '∼'], equiv: ['mo', '≡'], forall: ['mo', '∀'], exists: ['mo', '∃'], lVert: ['mo', '‖'], rVert: ['mo', '‖'],
};
const BIG = { sum: '∑', prod: '∏', int: '∫' };
const FUNCS = new Set(['log', 'exp', 'max', 'min', 'sin', 'cos', 'tr', 'lse', 'softmax', 'sign', 'arg', 'det', 'diag']);
const BB = { R: 'ℝ', E: '𝔼', N: 'ℕ', Z: 'ℤ', P: 'ℙ' };

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

class TexError extends Error {}

function tokenize(src) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '\\') {
      const m = /^\\([A-Za-z]+|.)/.exec(src.slice(i));
      if (!m) throw new TexError('lone backslash');
      out.push({ t: 'cmd', v: m[1] });
      i += m[0].length;
      continue;
    }
    if (/[0-9.]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?|^\./.exec(src.slice(i));
      out.push({ t: 'num', v: m[0] });
      i += m[0].length;
      continue;
    }
    out.push({ t: 'ch', v: c });
    i++;
  }
  return out;
}

function parse(src) {
  const toks = tokenize(src);
  let p = 0;
  const peek = () => toks[p];
  const next = () => toks[p++];

  function group() {           // {…} or one atom
    const tk = peek();
    if (!tk) throw new TexError('missing argument');
    if (tk.t === 'ch' && tk.v === '{') {
      next();
      const inner = seq('}');
      next();
      return row(inner);
    }
    return atom();
  }
  function rawGroup() {        // {text} as a string (for \text, \operatorname, \mathrm …)
    const tk = next();
    if (!tk || tk.t !== 'ch' || tk.v !== '{') throw new TexError('expected {');
    let s = '';
    let depth = 1;
    for (;;) {
      const x = next();
      if (!x) throw new TexError('unclosed {');
      if (x.t === 'ch' && x.v === '{') depth++;
      if (x.t === 'ch' && x.v === '}' && --depth === 0) break;
      s += x.t === 'cmd' ? (GREEK[x.v] || (x.v.length === 1 ? x.v : `\\${x.v}`)) : x.v;
    }
    return s;
  }
  function row(items) { return items.length === 1 ? items[0] : `<mrow>${items.join('')}</mrow>`; }
  function scripts(base, big = false) {
    let sub = null, sup = null;
    for (;;) {
      const tk = peek();
      if (tk && tk.t === 'ch' && tk.v === '_' && sub === null) { next(); sub = group(); continue; }
      if (tk && tk.t === 'ch' && tk.v === '^' && sup === null) { next(); sup = group(); continue; }
      if (tk && tk.t === 'ch' && tk.v === "'") { next(); sup = '<mo>′</mo>'; continue; }
      break;
    }
    if (sub && sup) return big ? `<munderover>${base}${sub}${sup}</munderover>` : `<msubsup>${base}${sub}${sup}</msubsup>`;
    if (sub) return big ? `<munder>${base}${sub}</munder>` : `<msub>${base}${sub}</msub>`;
    if (sup) return big ? `<mover>${base}${sup}</mover>` : `<msup>${base}${sup}</msup>`;
    return base;
  }
  function atom() {
    const tk = next();
    if (tk.t === 'num') return `<mn>${esc(tk.v)}</mn>`;
    if (tk.t === 'ch') {
      if (/[A-Za-z]/.test(tk.v)) return `<mi>${esc(tk.v)}</mi>`;
      if (tk.v === '{') { const inner = seq('}'); next(); return row(inner); }
      if ('()[]|'.includes(tk.v)) return `<mo stretchy="false">${esc(tk.v)}</mo>`;
      if (tk.v === '-') return '<mo>−</mo>';                 // a real minus sign
      return `<mo>${esc(tk.v)}</mo>`;
    }
    const c = tk.v;
    if (GREEK[c]) return `<mi>${GREEK[c]}</mi>`;
    if (OPS[c]) { const [tag, ch] = OPS[c]; return tag === 'mspace' ? `<mspace width="${{ quad: '1em', qquad: '2em', '!': '0em', ' ': '0.28em' }[c] ?? '0.2em'}"/>` : `<${tag}>${ch}</${tag}>`; }
    if (BIG[c]) return `<mo largeop="true" movablelimits="false">${BIG[c]}</mo>`;
    if (FUNCS.has(c)) return `<mi mathvariant="normal">${c}</mi><mo>&#x2061;</mo>`;
    switch (c) {
      case 'frac': { const a = group(); const b = group(); return `<mfrac>${a}${b}</mfrac>`; }
      case 'sqrt': return `<msqrt>${group()}</msqrt>`;
      case 'mathbf': case 'boldsymbol': return `<mrow mathvariant="bold">${group().replace(/<mi>/g, '<mi mathvariant="bold">')}</mrow>`;
      case 'mathbb': { const s = rawGroup(); return `<mi mathvariant="normal">${esc([...s].map((x) => BB[x] || x).join(''))}</mi>`; }
      case 'mathcal': { const s = rawGroup(); return `<mi mathvariant="script">${esc(s)}</mi>`; }
      case 'mathrm': case 'operatorname': { const s = rawGroup(); return `<mi mathvariant="normal">${esc(s)}</mi>`; }
      case 'text': { const s = rawGroup(); return `<mtext>${esc(s)}</mtext>`; }
      case 'left': case 'right': case 'big': case 'Big': case 'bigl': case 'bigr': {
        const d = next();
        const v = d.t === 'cmd' ? (OPS[d.v] ? OPS[d.v][1] : d.v) : d.v;
        return v === '.' ? '' : `<mo>${esc(v)}</mo>`;
      }
      default: throw new TexError(`unknown command \\${c}`);
    }
  }
  function seq(close) {
    const items = [];
    while (p < toks.length) {
      const tk = peek();
      if (close && tk.t === 'ch' && tk.v === close) return items;
      const isBig = tk.t === 'cmd' && BIG[tk.v];
      items.push(scripts(atom(), isBig));
    }
    if (close) throw new TexError(`missing ${close}`);
    return items;
  }
  return seq(null).join('');
}

/** TeX → a <math> element (string); display: block formula. Unknown TeX → <code>. */
export function texToMathML(tex, display = false) {
  try {
    const body = parse(tex);
    return `<math xmlns="http://www.w3.org/1998/Math/MathML"${display ? ' display="block"' : ''}><semantics><mrow>${body}</mrow>` +
      `<annotation encoding="application/x-tex">${esc(tex)}</annotation></semantics></math>`;
  } catch (e) {
    if (!(e instanceof TexError)) throw e;
    return `<code class="tex-fallback" title="${esc(e.message)}">${esc(tex)}</code>`;
  }
}

/** markdown-it plugin, on pages whose frontmatter says `math: true`: $$…$$ blocks (the $$ lines alone) and $…$ inline (not after a digit or before one, no space inside the edges). */
export function texmath(md) {
  const on = (state) => !!(state.env && state.env.frontmatter && state.env.frontmatter.math);
  md.block.ruler.before('fence', 'math_block', (state, start, end, silent) => {
    if (!on(state)) return false;
    const pos = state.bMarks[start] + state.tShift[start];
    const line = state.src.slice(pos, state.eMarks[start]);
    if (!line.startsWith('$$')) return false;
    let body = line.slice(2);
    let last = start;
    if (body.trimEnd().endsWith('$$') && body.trim().length > 2) {
      body = body.trimEnd().slice(0, -2);
    } else {
      const parts = [body];
      for (last = start + 1; last < end; last++) {
        const l = state.src.slice(state.bMarks[last] + state.tShift[last], state.eMarks[last]);
        if (l.trimEnd().endsWith('$$')) { parts.push(l.trimEnd().slice(0, -2)); break; }
        parts.push(l);
      }
      if (last >= end) return false;
      body = parts.join('\n');
    }
    if (silent) return true;
    const tok = state.push('math_block', 'math', 0);
    tok.content = body.trim();
    tok.map = [start, last + 1];
    state.line = last + 1;
    return true;
  });
  md.inline.ruler.after('escape', 'math_inline', (state, silent) => {
    const s = state.src;
    const at = state.pos;
    if (s[at] !== '$' || !on(state) || s[at + 1] === '$' || s[at + 1] === ' ' || (at > 0 && /[0-9]/.test(s[at - 1]))) return false;
    let end = at + 1;
    while ((end = s.indexOf('$', end)) !== -1 && s[end - 1] === '\\') end++;
    if (end === -1 || s[end - 1] === ' ' || /[0-9]/.test(s[end + 1] || '')) return false;
    if (!silent) {
      const tok = state.push('math_inline', 'math', 0);
      tok.content = s.slice(at + 1, end);
    }
    state.pos = end + 1;
    return true;
  });
  md.renderer.rules.math_inline = (tokens, i) => texToMathML(tokens[i].content, false);
  md.renderer.rules.math_block = (tokens, i) => `<div class="math-block">${texToMathML(tokens[i].content, true)}</div>\n`;
}
