// figures.test.js — the chapter's four figures as pure functions data → SVG
// (web/src/figures/), their safe SVG builder, the display-level do, PNG export and
// the `npm run figures` CLI. Figures are tested on data built here, not on a model
// (except the CLI's end-to-end run on the tiny fixture model).
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { interpolateYlOrRd, interpolateRdBu } from 'd3-scale-chromatic';
import { Resvg } from '@resvg/resvg-js';
import {
  figAttentionAsymmetry, figOuterProduct, outerProductDemo, figDag, dagEdges, figDoIntervention,
  hardDo, softDo, h, toString, toElement, walk, textOf, FIGURE_FILES, FIGSIZE,
} from '../../web/src/figures/index.js';
import { TAGS } from '../../web/src/figures/svg.js';
import { labelStep } from '../../web/src/figures/axes.js';
import { luminance } from '../../web/src/figures/colour.js';
import { wrapLines } from '../../web/src/figures/text.js';
import { svgToPng, pngSize } from '../../web/src/figures/export.js';
import { dagScore, nullDagScore } from '../../web/src/analysis.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// ── data built here ─────────────────────────────────────────────────────────

const TOKENS = ['Because', ' the', ' storm', ' intensified', ' ,', ' the', ' ship', ' finally', ' sank', ' .'];
const XSS = '<img src=x onerror=alert(1)>';

/** A causal, peaked attention matrix: row i softmax over j ≤ i of fixed logits. */
function causalMatrix(T, seed = 1) {
  const A = new Float32Array(T * T);
  for (let i = 0; i < T; i++) {
    const l = [];
    for (let j = 0; j <= i; j++) l.push((j === 0 ? 2.5 : 0) + (j === i ? 1 : 0) + Math.sin(seed * 7 + i * 3 + j * 5));
    const m = Math.max(...l), e = l.map((x) => Math.exp(x - m)), z = e.reduce((a, b) => a + b);
    for (let j = 0; j <= i; j++) A[i * T + j] = e[j] / z;
  }
  return A;
}

const byRole = (node, role) => walk(node).filter((n) => n.attrs['data-role'] === role);
const one = (node, role) => {
  const r = byRole(node, role);
  expect(r.length).toBe(1);
  return r[0];
};
const cellsOf = (group) => walk(group).filter((n) => n.tag === 'rect' && n.attrs['data-i'] !== undefined);
const cellAt = (group, i, j) => cellsOf(group).find((c) => c.attrs['data-i'] === String(i) && c.attrs['data-j'] === String(j));

// Tags and attribute names of a serialised SVG, read by a small XML tokenizer
// (text content is skipped, so an escaped token cannot fake a tag).
function xmlTags(xml) {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const tags = [];
  const re = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0, m;
  while ((m = re.exec(body)) !== null) {
    expect(body.slice(last, m.index)).not.toMatch(/[<>]/); // text between tags has no raw < or >
    last = re.lastIndex;
    if (m[1]) continue;
    const attrs = [...m[3].matchAll(/\s+([\w:.-]+)="([^"<]*)"/g)].map((a) => a[1]);
    tags.push({ tag: m[2], attrs });
  }
  expect(body.slice(last)).toBe('');
  return tags;
}

// ── the SVG builder ─────────────────────────────────────────────────────────

describe('svg builder', () => {
  it('escapes text and attribute values strictly in toString', () => {
    const s = toString(h('svg', { 'data-x': `a"b'c<d>&e` }, h('text', null, `${XSS} & "q"`)));
    expect(s).toContain('data-x="a&quot;b&apos;c&lt;d&gt;&amp;e"');
    expect(s).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; "q"');
    expect(s).not.toContain('<img');
  });

  it('refuses tags and attributes that could carry script or remote content', () => {
    for (const tag of ['script', 'foreignObject', 'image', 'a', 'use', 'style', 'iframe']) {
      expect(() => h(tag, null)).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    }
    for (const name of ['onclick', 'onload', 'ONERROR', 'href', 'xlink:href', 'style', 'a b', '"x', '']) {
      expect(() => h('rect', { [name]: '1' })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    }
    expect(() => h('rect', { x: NaN })).toThrow(expect.objectContaining({ code: 'ENAN' }));
    expect(() => h('g', null, { evil: true })).toThrow(expect.objectContaining({ code: 'ETYPE' }));
  });

  it('drops characters XML cannot carry, so the output always parses', () => {
    const s = toString(h('text', { 'data-t': 'a\u0001b' }, 'x\u0000y\u001Fz\uD800'));
    expect(s).toBe('<text data-t="ab">xyz</text>');
  });

  it('writes numbers in attributes with at most two decimals', () => {
    expect(toString(h('rect', { x: 1 / 3, y: -0.0001, width: 12 }))).toBe('<rect x="0.33" y="0" width="12"/>');
  });

  it('builds real DOM with createElementNS and text nodes only (no innerHTML)', () => {
    const made = [];
    const doc = {
      createElementNS(ns, tag) {
        const el = {
          ns, tag, attrs: {}, children: [],
          setAttribute(k, v) { this.attrs[k] = v; },
          appendChild(c) { this.children.push(c); return c; },
          set innerHTML(_) { throw new Error('innerHTML used'); },
        };
        made.push(el);
        return el;
      },
      createTextNode(text) { return { text }; },
    };
    const fig = figAttentionAsymmetry({ tokens: [XSS, ' b', ' c'], A: causalMatrix(3) });
    const el = toElement(fig, doc);
    expect(el.tag).toBe('svg');
    expect(made.every((e) => e.ns === 'http://www.w3.org/2000/svg' && TAGS.has(e.tag))).toBe(true);
    expect(made.every((e) => Object.keys(e.attrs).every((k) => !/^on/i.test(k) && k !== 'xmlns'))).toBe(true);
    const texts = [];
    (function collect(n) { if (n.text !== undefined) texts.push(n.text); else n.children.forEach(collect); })(el);
    expect(texts).toContain('<img src=x on…'); // the tick label: the token, shortened, as one text node
    expect(texts.some((t) => t.includes(XSS))).toBe(true); // the hover title holds it whole
  });
});

// ── Fig. 1 ──────────────────────────────────────────────────────────────────

describe('fig1 attention and asymmetry', () => {
  const A = causalMatrix(10);
  const fig = figAttentionAsymmetry({ tokens: TOKENS, A, model: 'GPT-2' });

  it('says on the figure that under a causal or window mask the red below the diagonal is the mask', () => {
    const sub = (f) => byRole(f, 'panel-title').map(textOf)[1];
    const sup = (f) => one(f, 'suptitle').children.map(textOf).join(' ').replace(/\s+/g, ' ');
    expect(sub(fig)).toMatch(/causal mask: red below = the mask/);
    expect(sup(fig)).toMatch(/Under the causal mask Aᵀ is 0 below the diagonal, .* that half shows the mask, not the model/);
    expect(sub(fig) + sup(fig)).not.toMatch(/flow dominates/);
    const win = figAttentionAsymmetry({ tokens: TOKENS, A, mask: 'window:3' });
    expect(sub(win)).toMatch(/window mask/);
    expect(sup(win)).toMatch(/Under the window mask/);
    expect(sup(figAttentionAsymmetry({ tokens: TOKENS, A, lang: 'zh' }))).toMatch(/显示的是掩码/);
    const full = figAttentionAsymmetry({ tokens: TOKENS, A, mask: 'full' });
    expect(sub(full)).toMatch(/^.*no mask/);
    expect(sup(full)).not.toMatch(/shows the mask/);
    // and it is true: every lower cell of A − Aᵀ of a causal matrix is A ≥ 0
    for (let i = 1; i < 10; i++) for (let j = 0; j < i; j++)
      expect(Number(cellAt(one(fig, 'asymmetry'), i, j).attrs['data-v'])).toBeCloseTo(A[i * 10 + j], 6);
    expect(() => figAttentionAsymmetry({ tokens: TOKENS, A, mask: 'diagonal' })).toThrow(/mask/);
  });

  it('names the mask the attention was computed under in its title, never "causal" under another', () => {
    const first = (f) => textOf(one(f, 'suptitle').children[0]);
    expect(first(figAttentionAsymmetry({ tokens: TOKENS, A, model: 'm' }))).toBe('m Attention, causal mask');
    const full = first(figAttentionAsymmetry({ tokens: TOKENS, A, model: 'm', mask: 'full' }));
    expect(full).toBe('m Attention, no mask (full attention)');
    const win = first(figAttentionAsymmetry({ tokens: TOKENS, A, model: 'm', mask: 'window:3' }));
    expect(win).toBe('m Attention, window mask, W = 3');
    expect(first(figAttentionAsymmetry({ tokens: TOKENS, A, model: 'm', mask: 'window:512', maskFromModel: true })))
      .toBe("m Attention, the model's sliding window, W = 512");
    for (const t of [full, win]) expect(t).not.toMatch(/causal/i);
    expect(first(figAttentionAsymmetry({ tokens: TOKENS, A, model: 'm', mask: 'full', lang: 'zh' }))).toBe('m 注意力（无掩码，完全注意力）');
    expect(first(figAttentionAsymmetry({ tokens: TOKENS, A, model: 'm', mask: 'window:3', lang: 'zh' }))).not.toMatch(/因果/);
  });

  it('draws A − Aᵀ of the full-mask attention beside it when given, on the same colour scale', () => {
    const F = Array.from({ length: 100 }, (_, k) => ((k * 37) % 11) / 110);
    const f = figAttentionAsymmetry({ tokens: TOKENS, A, compare: F });
    expect(f.attrs['data-compare']).toBe('full');
    expect(textOf(one(f, 'suptitle')).replace(/\s+/g, '')).toContain('Right:thesamemodelandsentencewiththemaskoff');
    const cmp = one(f, 'asymmetry-full');
    expect(cellsOf(cmp)).toHaveLength(100);
    expect(Number(cellAt(cmp, 7, 2).attrs['data-v'])).toBeCloseTo(F[72] - F[27], 6);
    const zeroA = cellsOf(one(f, 'asymmetry')).find((c) => Number(c.attrs['data-v']) === 0);
    const zeroF = cellsOf(cmp).find((c) => Number(c.attrs['data-v']) === 0);
    expect(zeroF.attrs.fill).toBe(zeroA.attrs.fill);
    expect(fig.attrs['data-compare']).toBe('none');
    expect(() => figAttentionAsymmetry({ tokens: TOKENS, A, compare: [1, 2] })).toThrow();
  });

  it('draws T×T cells in each heatmap with the values of A and A − Aᵀ', () => {
    const att = one(fig, 'attention'), asym = one(fig, 'asymmetry');
    expect(cellsOf(att)).toHaveLength(100);
    expect(cellsOf(asym)).toHaveLength(100);
    expect(Number(cellAt(att, 7, 2).attrs['data-v'])).toBeCloseTo(A[72], 5);
    expect(Number(cellAt(asym, 7, 2).attrs['data-v'])).toBeCloseTo(A[72] - A[27], 5);
    expect(Number(cellAt(asym, 2, 7).attrs['data-v'])).toBeCloseTo(A[27] - A[72], 5);
  });

  it('colours the largest attention with the darkest YlOrRd colour and zero asymmetry with the centre of RdBu', () => {
    const att = cellsOf(one(fig, 'attention'));
    let kmax = 0;
    for (let k = 1; k < 100; k++) if (A[k] > A[kmax]) kmax = k;
    const top = cellAt(one(fig, 'attention'), Math.floor(kmax / 10), kmax % 10);
    expect(top.attrs.fill).toBe(interpolateYlOrRd(1));
    const darkest = Math.min(...att.map((c) => luminance(c.attrs.fill)));
    expect(luminance(top.attrs.fill)).toBe(darkest);
    // the smallest value gets the lightest end of the map
    let kmin = 0;
    for (let k = 1; k < 100; k++) if (A[k] < A[kmin]) kmin = k;
    expect(cellAt(one(fig, 'attention'), Math.floor(kmin / 10), kmin % 10).attrs.fill).toBe(interpolateYlOrRd(0));
    // the diagonal of A − Aᵀ is 0: the centre colour of the diverging map
    for (let i = 0; i < 10; i++) expect(cellAt(one(fig, 'asymmetry'), i, i).attrs.fill).toBe(interpolateRdBu(0.5));
    // positive (row → col dominates) is red, negative blue
    const pos = cellAt(one(fig, 'asymmetry'), 9, 0), neg = cellAt(one(fig, 'asymmetry'), 0, 9);
    const rgb = (c) => c.match(/\d+/g).map(Number);
    expect(rgb(pos.attrs.fill)[0]).toBeGreaterThan(rgb(pos.attrs.fill)[2]);
    expect(rgb(neg.attrs.fill)[2]).toBeGreaterThan(rgb(neg.attrs.fill)[0]);
  });

  it('gives the asymmetry colour bar symmetric limits', () => {
    const bars = byRole(fig, 'colorbar');
    expect(bars).toHaveLength(2);
    const asymBar = bars[1];
    let amax = 0;
    for (let i = 0; i < 10; i++) for (let j = 0; j < 10; j++) amax = Math.max(amax, Math.abs(A[i * 10 + j] - A[j * 10 + i]));
    expect(Number(asymBar.attrs['data-max'])).toBeCloseTo(amax, 5);
    expect(Number(asymBar.attrs['data-min'])).toBeCloseTo(-amax, 5);
    expect(Number(bars[0].attrs['data-min'])).toBeCloseTo(Math.min(...A), 5);
  });

  it('labels both axes with the trimmed tokens and carries the chapter titles', () => {
    const xl = byRole(fig, 'xlabels')[0], yl = byRole(fig, 'ylabels')[0];
    const trimmed = TOKENS.map((t) => t.trim());
    expect(xl.children.map(textOf)).toEqual(trimmed);
    expect(yl.children.map(textOf)).toEqual(trimmed);
    const titles = byRole(fig, 'panel-title').map(textOf).join('|');
    expect(titles).toContain('Avg Attention (last layer)');
    expect(titles).toContain('Query i → key j (read as effect → cause)');
    expect(titles).toContain('Asymmetry A − A⊤');
    expect(textOf(one(fig, 'suptitle'))).toContain('GPT-2 Attention, causal mask');
    expect(textOf(one(fig, 'suptitle'))).toContain('"Because the storm intensified , the ship finally sank ."');
    expect(byRole(fig, 'xtitle').map(textOf)).toEqual(['Key j (candidate cause)', 'Key j']);
    expect(byRole(fig, 'ytitle').map(textOf)).toEqual(['Query i (effect)', 'Query i']);
  });

  it('has Chinese labels with lang zh and a CJK-first font stack', () => {
    const zh = figAttentionAsymmetry({ tokens: TOKENS, A, lang: 'zh', layer: 2, nLayer: 12 });
    expect(byRole(zh, 'panel-title').map(textOf).join('|')).toContain('平均注意力（第 2 层）');
    expect(byRole(zh, 'xtitle').map(textOf)).toContain('键 j（候选原因）');
    expect(zh.attrs['font-family']).toMatch(/^'Noto Sans CJK SC'/);
    expect(fig.attrs['font-family']).toMatch(/^'DejaVu Sans'/);
  });

  it('puts a hover title with the value on every cell', () => {
    for (const c of cellsOf(one(fig, 'attention'))) {
      expect(c.children).toHaveLength(1);
      expect(c.children[0].tag).toBe('title');
      expect(textOf(c.children[0])).toContain(c.attrs['data-v']);
    }
  });

  it('is sized like the chapter (13 in at 96 dpi) and stacks the panels on a phone', () => {
    expect(fig.attrs.width).toBe(String(FIGSIZE.fig1[0]));
    const narrow = figAttentionAsymmetry({ tokens: TOKENS, A, width: 360 });
    expect(narrow.attrs.width).toBe('360');
    const boxOf = (g) => {
      const cs = cellsOf(g);
      const xs = cs.map((c) => Number(c.attrs.x)), ys = cs.map((c) => Number(c.attrs.y));
      const w = Number(cs[0].attrs.width);
      return { x0: Math.min(...xs), x1: Math.max(...xs) + w, y0: Math.min(...ys), y1: Math.max(...ys) + w };
    };
    const a = boxOf(one(narrow, 'attention')), b = boxOf(one(narrow, 'asymmetry'));
    expect(a.x0).toBeGreaterThanOrEqual(0);
    expect(a.x1).toBeLessThanOrEqual(360);
    expect(b.y0).toBeGreaterThan(a.y1); // one above the other
    expect(a.x1 - a.x0).toBeGreaterThan(100);
    expect(Number(narrow.attrs.height)).toBeGreaterThan(b.y1);
  });

  it('rejects malformed input with AttnlabError codes', () => {
    expect(() => figAttentionAsymmetry({ tokens: TOKENS, A: new Float32Array(99) })).toThrow(expect.objectContaining({ code: 'ESHAPE' }));
    const bad = causalMatrix(10);
    bad[5] = NaN;
    expect(() => figAttentionAsymmetry({ tokens: TOKENS, A: bad })).toThrow(expect.objectContaining({ code: 'ENAN' }));
    expect(() => figAttentionAsymmetry({ tokens: TOKENS, A, lang: 'fr' })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
    expect(() => figAttentionAsymmetry({ tokens: TOKENS, A, width: 50 })).toThrow(expect.objectContaining({ code: 'ERANGE' }));
  });

  it('accepts an array of rows as well as a flat matrix', () => {
    const rows = Array.from({ length: 10 }, (_, i) => Array.from(A.subarray(i * 10, i * 10 + 10)));
    expect(toString(figAttentionAsymmetry({ tokens: TOKENS, A: rows, model: 'GPT-2' }))).toBe(toString(fig));
  });
});

// ── Fig. 2 ──────────────────────────────────────────────────────────────────

describe('fig2 outer product and causal posterior', () => {
  const demo = outerProductDemo();
  const fig = figOuterProduct(demo);
  const HS = 16, T = 8;

  it('the demo is the chapter case: d_k = 16, T = 8, i = 5, j = 2, seeded and row-stochastic', () => {
    expect(demo.q).toHaveLength(T * HS);
    expect([demo.i, demo.j, demo.HS, demo.T]).toEqual([5, 2, 16, 8]);
    expect(outerProductDemo().q).toEqual(demo.q);
    expect(outerProductDemo({ seed: 1 }).q).not.toEqual(demo.q);
    for (let i = 0; i < T; i++) {
      let s = 0;
      for (let j = 0; j < T; j++) s += demo.attention[i * T + j];
      expect(s).toBeCloseTo(1, 12);
    }
  });

  it('draws HS×HS outer-product cells with q_a·k_b and T×T posterior cells', () => {
    const outer = one(fig, 'outer-product'), post = one(fig, 'posterior');
    expect(cellsOf(outer)).toHaveLength(HS * HS);
    expect(cellsOf(post)).toHaveLength(T * T);
    expect(Number(cellAt(outer, 3, 11).attrs['data-v'])).toBeCloseTo(demo.q[5 * HS + 3] * demo.k[2 * HS + 11], 4);
  });

  it('states tr(q ⊗ k) = q·k with the value of the dot product, and the scaled score', () => {
    let dot = 0;
    for (let c = 0; c < HS; c++) dot += demo.q[5 * HS + c] * demo.k[2 * HS + c];
    const title = byRole(fig, 'panel-title').map(textOf)[0];
    expect(title).toContain(`tr(q ⊗ k) = q·k = ${dot.toFixed(3).replace('-', '−')}`);
    expect(title).toContain(`= ${(dot / 4).toFixed(3).replace('-', '−')}`);
    expect(Number(fig.attrs['data-trace'])).toBeCloseTo(dot, 4);
    // the diverging map is centred: |min| = |max| on its colour bar
    const bar = byRole(fig, 'colorbar')[0];
    expect(Number(bar.attrs['data-min'])).toBeCloseTo(-Number(bar.attrs['data-max']), 9);
  });

  it('prints every posterior value with 2 decimals in its cell, white on dark cells', () => {
    const ann = walk(one(fig, 'annotations')).filter((n) => n.tag === 'text');
    expect(ann).toHaveLength(T * T);
    for (const a of ann) {
      const v = demo.attention[Number(a.attrs['data-i']) * T + Number(a.attrs['data-j'])];
      expect(textOf(a)).toBe(v.toFixed(2));
    }
    let kmax = 0;
    for (let k = 1; k < T * T; k++) if (demo.attention[k] > demo.attention[kmax]) kmax = k;
    const onMax = ann.find((a) => Number(a.attrs['data-i']) * T + Number(a.attrs['data-j']) === kmax);
    expect(onMax.attrs.fill).toBe('#ffffff');
    let kmin = 0;
    for (let k = 1; k < T * T; k++) if (demo.attention[k] < demo.attention[kmin]) kmin = k;
    const onMin = ann.find((a) => Number(a.attrs['data-i']) * T + Number(a.attrs['data-j']) === kmin);
    expect(onMin.attrs.fill).toBe('#262626');
  });

  it('shrinks the printed values for a longer sequence', () => {
    const big = outerProductDemo({ T: 24 });
    const f = figOuterProduct(big);
    const size = (g) => Number(walk(one(g, 'annotations')).find((n) => n.tag === 'text').attrs['font-size']);
    expect(walk(one(f, 'annotations')).filter((n) => n.tag === 'text')).toHaveLength(24 * 24);
    expect(size(f)).toBeLessThan(size(fig));
  });

  it('boxes the chosen (i, j) cell and uses tokens as labels when given', () => {
    const box = one(fig, 'box');
    expect([box.attrs['data-row'], box.attrs['data-col']]).toEqual(['5', '2']);
    expect(byRole(fig, 'xlabels')[1].children.map(textOf)).toEqual(Array.from({ length: T }, (_, c) => `j=${c}`));
    const Tk = TOKENS.length;
    const q = Float32Array.from({ length: Tk * 4 }, (_, x) => Math.sin(x));
    const k = Float32Array.from({ length: Tk * 4 }, (_, x) => Math.cos(x));
    const f = figOuterProduct({ q, k, i: 8, j: 2, tokens: TOKENS, attention: causalMatrix(Tk) });
    expect(cellsOf(one(f, 'outer-product'))).toHaveLength(16);
    expect(byRole(f, 'panel-title').map(textOf)[0]).toContain('(i=8 sank, j=2 storm)');
  });

  it('rejects q/k of the wrong shape and indices out of range', () => {
    expect(() => figOuterProduct({ ...demo, k: demo.k.slice(1) })).toThrow(expect.objectContaining({ code: 'ESHAPE' }));
    expect(() => figOuterProduct({ ...demo, i: 8 })).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => figOuterProduct({ q: demo.q, k: demo.k, i: 0, j: 0 })).toThrow(expect.objectContaining({ code: 'EINVAL' }));
  });
});

// ── Fig. 3 ──────────────────────────────────────────────────────────────────

describe('fig3 DAG scores and causal graph', () => {
  const T = 10;
  const heads = [0, 1, 2, 3, 4, 5].map((s) => causalMatrix(T, s));
  const scores = heads.map((m) => dagScore(m));
  const A = causalMatrix(T, 9);
  const fig = figDag({ tokens: TOKENS, A, dagScores: scores, nullDagScore: nullDagScore(T) });

  it('a head with a DAG score of ~0 still has a visible bar and its value printed', () => {
    const f = figDag({ tokens: TOKENS, A, dagScores: [0.9, 0, 0.0004, 0.5], nullDagScore: nullDagScore(T) });
    const bars = walk(one(f, 'bars')).filter((n) => n.tag === 'rect');
    expect(bars.map((b) => Number(b.attrs.height) >= 2)).toEqual([true, true, true, true]);
    expect(Number(bars[0].attrs.height)).toBeGreaterThan(Number(bars[3].attrs.height));
    const vals = walk(one(f, 'bar-values')).filter((n) => n.tag === 'text').map(textOf);
    expect(vals).toEqual(['0.90', '0.00', '0.00', '0.50']);
  });

  it('a long text keeps the 40 strongest edges (said in the caption), dots with the token on hover', () => {
    const N = 120;
    const toks = Array.from({ length: N }, (_, k) => ` w${k}`);
    const M = causalMatrix(N, 3);
    const f = figDag({ tokens: toks, A: M, dagScores: [0.9], nullDagScore: nullDagScore(N) });
    const all = dagEdges(M, N, 0.05);
    expect(all.length).toBeGreaterThan(40);
    const drawn = byRole(f, 'edge');
    expect(drawn).toHaveLength(40);
    // the strongest ones
    const weakestDrawn = Math.min(...drawn.map((e) => Number(e.attrs['data-w'])));
    expect(all.filter((e) => e.w > weakestDrawn + 1e-6).length).toBeLessThan(40);
    expect(byRole(f, 'panel-title').map(textOf).join(' ')).toContain(`the 40 strongest of ${all.length} edges`);
    const nodes = byRole(f, 'node');
    expect(nodes).toHaveLength(N);
    expect(textOf(nodes[17].children[0])).toBe('17 w17');
    // labels only at the drawn edges' ends, never two closer than a line
    const ends = new Set(drawn.flatMap((e) => [Number(e.attrs['data-i']), Number(e.attrs['data-j'])]));
    const named = walk(one(f, 'node-labels')).filter((n) => n.tag === 'text');
    expect(named.length).toBeGreaterThan(0);
    for (const n of named) expect(ends.has(Number(n.attrs['data-k']))).toBe(true);
    const ys = named.map((n) => Number(n.attrs.y));
    for (let k = 1; k < ys.length; k++) expect(ys[k] - ys[k - 1]).toBeGreaterThanOrEqual(10);
    // a short text keeps the chapter's labelled boxes and every edge above the threshold
    expect(byRole(fig, 'node')).toHaveLength(0);
    expect(byRole(fig, 'edge')).toHaveLength(dagEdges(A, T, 0.05).length);
  });

  it('draws one bar per head whose height is its DAG score', () => {
    const bars = walk(one(fig, 'bars')).filter((n) => n.tag === 'rect');
    expect(bars).toHaveLength(6);
    const hgt = bars.map((b) => Number(b.attrs.height));
    const ratio = hgt.map((x, k) => x / scores[k]);
    for (const r of ratio) expect(r).toBeCloseTo(ratio[0], 1);
    expect(bars.map((b) => Number(b.attrs['data-v']))).toEqual(scores.map((s) => Number(s.toPrecision(6))));
  });

  it('draws and labels both baselines: 0.5 (bidirectional) and the null DAG score of causal attention', () => {
    const rnd = one(fig, 'baseline-random'), nul = one(fig, 'baseline-null');
    expect(rnd.attrs['data-v']).toBe('0.5');
    expect(Number(nul.attrs['data-v'])).toBeCloseTo(0.7071, 4);
    // drawn at their heights on the same axis as the bars (y grows downwards)
    const frame = walk(fig).find((n) => n.tag === 'rect' && n.attrs.fill === 'none' && n.attrs.stroke === '#262626');
    const y = (v) => Number(frame.attrs.y) + Number(frame.attrs.height) * (1 - v);
    expect(Number(rnd.attrs.y1)).toBeCloseTo(y(0.5), 1);
    expect(Number(nul.attrs.y1)).toBeCloseTo(y(nullDagScore(T)), 1);
    expect(textOf(one(fig, 'legend-random'))).toBe("the chapter's 0.5 (uniform attention without a mask, T → ∞)");
    expect(textOf(one(fig, 'legend-null'))).toBe('null: uniform attention, mask causal, T = 10 (0.707)');
  });

  it('never reads 0.5 as "forward causal flow"; the null line follows the mask', () => {
    for (const lang of ['en', 'zh']) {
      const all = walk(figDag({ tokens: TOKENS, A, dagScores: scores, lang })).filter((n) => typeof n.text === 'string')
        .map((n) => n.text).join(' ');
      expect(all).not.toMatch(/> 0\.5|forward causal flow|正向因果流/);
    }
    for (const [mask, want] of [['full', 0.45], ['window:3', 0.58333], [{ mode: 'window', window: 3 }, 0.58333]]) {
      const f = figDag({ tokens: TOKENS, A, dagScores: scores, mask });
      expect(Number(one(f, 'baseline-null').attrs['data-v'])).toBeCloseTo(want, 5);
      expect(textOf(one(f, 'legend-null'))).toContain(`mask ${typeof mask === 'string' ? mask : 'window:3'}`);
    }
    expect(() => figDag({ tokens: TOKENS, A, dagScores: scores, mask: 'diagonal' })).toThrow(/unknown mask/);
  });

  it('draws exactly the off-diagonal edges above the threshold, from cause j to effect i', () => {
    let mx = 0;
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (i !== j) mx = Math.max(mx, A[i * T + j]);
    const expected = [];
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (i !== j && A[i * T + j] / mx > 0.05) expected.push(`${i},${j}`);
    const edges = byRole(fig, 'edge');
    expect(edges.map((e) => `${e.attrs['data-i']},${e.attrs['data-j']}`).sort()).toEqual(expected.sort());
    expect(edges.length).toBeGreaterThan(0);
    expect(edges.length).toBeLessThan(45); // some lower-triangle weights are below the threshold
    expect(edges.every((e) => e.attrs['data-i'] !== e.attrs['data-j'])).toBe(true);
    // the curve starts on the border of the cause's box and the arrowhead's tip is on the effect's box
    const nodes = walk(one(fig, 'nodes')).filter((n) => n.attrs['data-k'] !== undefined);
    const near = (p, k, pad) => {
      const r = nodes[k].children[0];
      const [x, y, w, hh] = ['x', 'y', 'width', 'height'].map((a) => Number(r.attrs[a]));
      return p[0] >= x - pad && p[0] <= x + w + pad && p[1] >= y - pad && p[1] <= y + hh + pad;
    };
    for (const e of edges) {
      const [i, j] = [Number(e.attrs['data-i']), Number(e.attrs['data-j'])];
      const path = e.children.find((c) => c.tag === 'path');
      const start = path.attrs.d.match(/^M([\d.-]+),([\d.-]+)/).slice(1).map(Number);
      const tip = e.children.find((c) => c.tag === 'polygon').attrs.points.split(' ')[0].split(',').map(Number);
      expect(near(start, j, 4)).toBe(true);
      expect(near(start, j, 0)).toBe(false);
      expect(near(tip, i, 4)).toBe(true);
      expect(near(tip, i, 0)).toBe(false);
    }
    // a higher threshold keeps only a subset; dagEdges agrees with the drawing
    const hi = figDag({ tokens: TOKENS, A, dagScores: scores, threshold: 0.5 });
    expect(byRole(hi, 'edge').length).toBe(dagEdges(Float64Array.from(A), T, 0.5).length);
    expect(byRole(hi, 'edge').length).toBeLessThan(edges.length);
  });

  it('draws backward edges too when attention is not causal (full mask)', () => {
    const full = new Float32Array(T * T).fill(1 / T);
    const f = figDag({ tokens: TOKENS, A: full, dagScores: [0.45] });
    const edges = byRole(f, 'edge');
    expect(edges).toHaveLength(T * (T - 1));
    expect(edges.some((e) => Number(e.attrs['data-j']) > Number(e.attrs['data-i']))).toBe(true);
  });

  it('lays the tokens out on the diagonal as the chapter and puts the overall DAG score in the title', () => {
    const nodes = walk(one(fig, 'nodes')).filter((n) => n.attrs['data-k'] !== undefined);
    expect(nodes.map((n) => textOf(n))).toEqual(TOKENS.map((t) => t.trim()));
    const xs = nodes.map((n) => Number(n.children[1].attrs.x)), ys = nodes.map((n) => Number(n.children[1].attrs.y));
    for (let k = 1; k < T; k++) {
      expect(xs[k] - xs[k - 1]).toBeCloseTo(xs[1] - xs[0], 1);
      expect(ys[k]).toBeGreaterThan(ys[k - 1]);
    }
    expect(byRole(fig, 'panel-title').map(textOf)[1]).toContain(`DAG score = ${dagScore(A).toFixed(3)}`);
    expect(Number(fig.attrs['data-dag'])).toBeCloseTo(dagScore(A), 5);
  });

  it('checks its inputs', () => {
    expect(() => figDag({ tokens: TOKENS, A, dagScores: [] })).toThrow(expect.objectContaining({ code: 'ETYPE' }));
    expect(() => figDag({ tokens: TOKENS, A, dagScores: [NaN] })).toThrow(expect.objectContaining({ code: 'ENAN' }));
    expect(() => figDag({ tokens: TOKENS, A, dagScores: [0.5], threshold: 1 })).toThrow(expect.objectContaining({ code: 'ERANGE' }));
  });
});

// ── display-level do and Fig. 4 ─────────────────────────────────────────────

describe('display-level do (the chapter\'s do_intervene / soft_do_intervene)', () => {
  // 3×3, row 1 = [0.5, 0.3, 0.2]
  const A = [1, 0, 0, 0.5, 0.3, 0.2, 0.2, 0.3, 0.5];

  it('hard do makes the row one-hot at col and leaves the other rows alone', () => {
    const out = hardDo(A, 3, 1, 2);
    expect(Array.from(out)).toEqual([1, 0, 0, 0, 0, 1, Math.fround(0.2), Math.fround(0.3), 0.5]);
    expect(A[4]).toBe(0.3); // input untouched
  });

  it('soft do with λ = ln 4 multiplies the weight at col by 4 and renormalises: [0.5, 0.3, 0.8] / 1.6', () => {
    const out = softDo(A, 3, 1, 2, Math.log(4));
    expect(out[3]).toBeCloseTo(0.3125, 6);
    expect(out[4]).toBeCloseTo(0.1875, 6);
    expect(out[5]).toBeCloseTo(0.5, 6);
    expect(out[0]).toBe(1);
    expect(out[8]).toBe(0.5);
  });

  it('soft do with λ = 3 on a zero weight uses the 1e-9 floor, and λ = 0 changes nothing', () => {
    const out = softDo(A, 3, 0, 1, 3); // row 0 = [1, 0, 0]: w1 = e^3·1e-9 / (1 + e^3·1e-9 + 1e-9)
    expect(out[1]).toBeCloseTo(Math.exp(3) * 1e-9, 12);
    expect(out[0]).toBeCloseTo(1 - Math.exp(3) * 1e-9, 6);
    const same = softDo(A, 3, 1, 0, 0);
    for (let j = 0; j < 3; j++) expect(same[3 + j]).toBeCloseTo(A[3 + j], 6);
  });

  it('rejects bad rows, columns, λ and negative weights', () => {
    expect(() => hardDo(A, 3, 3, 0)).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => softDo(A, 3, 0, -1, 1)).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => softDo(A, 3, 0, 1, NaN)).toThrow(expect.objectContaining({ code: 'ENAN' }));
    expect(() => softDo([1, -0.5, 0, 1], 2, 0, 1, 1)).toThrow(expect.objectContaining({ code: 'ERANGE' }));
    expect(() => hardDo(A, 4, 0, 0)).toThrow(expect.objectContaining({ code: 'ESHAPE' }));
  });
});

describe('fig4 do-intervention', () => {
  const T = 10, row = 8, col = 2;
  const A = causalMatrix(T);
  const fig = figDoIntervention({ tokens: TOKENS, A, row, col, lambda: 3 });

  it('draws three T×T heatmaps: original, soft do (λ) and hard do', () => {
    for (const role of ['original', 'soft-do', 'hard-do']) expect(cellsOf(one(fig, role))).toHaveLength(T * T);
    const soft = softDo(A, T, row, col, 3);
    for (let j = 0; j < T; j++) {
      expect(Number(cellAt(one(fig, 'soft-do'), row, j).attrs['data-v'])).toBeCloseTo(soft[row * T + j], 5);
      expect(Number(cellAt(one(fig, 'original'), row, j).attrs['data-v'])).toBeCloseTo(A[row * T + j], 5);
    }
    expect(Number(cellAt(one(fig, 'soft-do'), row, col).attrs['data-v'])).toBeGreaterThan(A[row * T + col]);
  });

  it('makes the hard panel\'s row one-hot at the cause, darkest colour there', () => {
    const hard = one(fig, 'hard-do');
    for (let j = 0; j < T; j++) {
      const c = cellAt(hard, row, j);
      expect(c.attrs['data-v']).toBe(j === col ? '1' : '0');
      expect(c.attrs.fill).toBe(interpolateYlOrRd(j === col ? 1 : 0));
    }
    // other rows are the original ones
    expect(cellAt(hard, 5, 2).attrs['data-v']).toBe(cellAt(one(fig, 'original'), 5, 2).attrs['data-v']);
  });

  it('boxes the intervened row in each panel at that row\'s cells', () => {
    const boxes = byRole(fig, 'box');
    expect(boxes).toHaveLength(3);
    const panels = byRole(fig, 'panel');
    for (const [k, role] of ['original', 'soft-do', 'hard-do'].entries()) {
      const box = byRole(panels[k], 'box')[0];
      const first = cellAt(one(panels[k], role), row, 0), last = cellAt(one(panels[k], role), row, T - 1);
      expect(box.attrs['data-row']).toBe(String(row));
      expect(Number(box.attrs.y)).toBeCloseTo(Number(first.attrs.y), 2);
      expect(Number(box.attrs.x)).toBeCloseTo(Number(first.attrs.x), 2);
      expect(Number(box.attrs.width)).toBeCloseTo(Number(last.attrs.x) + Number(last.attrs.width) - Number(first.attrs.x), 1);
      expect(Number(box.attrs.height)).toBeCloseTo(Number(first.attrs.height), 2);
      expect(box.attrs.fill).toBe('none');
    }
  });

  it('titles name the row, the column, their tokens and λ', () => {
    expect(textOf(one(fig, 'suptitle'))).toContain('Intervening on row i=8 (sank) → force cause = col j=2 (storm)');
    const titles = byRole(fig, 'panel-title').map(textOf);
    expect(titles[1]).toContain('Soft do(j=2→i=8), λ = 3');
    expect(titles[2]).toContain('Hard do(j=2→i=8)');
    expect(fig.attrs.width).toBe(String(FIGSIZE.fig4[0]));
  });

  it('labels a soft do on a cell the mask hides as display only (the model refuses it)', () => {
    expect(fig.attrs['data-masked']).toBe('false');
    const future = figDoIntervention({ tokens: TOKENS, A, row: 2, col: 8 });
    expect(future.attrs['data-masked']).toBe('true');
    expect(byRole(future, 'panel-title').map(textOf)[1]).toContain('display only');
    expect(byRole(future, 'panel-title').map(textOf)[1]).toContain('EMASKED');
    expect(figDoIntervention({ tokens: TOKENS, A, row: 2, col: 8, mask: 'full' }).attrs['data-masked']).toBe('false');
    expect(figDoIntervention({ tokens: TOKENS, A, row: 8, col: 2, mask: 'window:3' }).attrs['data-masked']).toBe('true');
    expect(figDoIntervention({ tokens: TOKENS, A, row: 8, col: 6, mask: 'window:3' }).attrs['data-masked']).toBe('false');
    expect(() => figDoIntervention({ tokens: TOKENS, A, row: 8, col: 6, mask: 'window:0' })).toThrow(/mask/);
  });
});

// ── safety of the whole output ──────────────────────────────────────────────

describe('token strings are text, never markup', () => {
  it('an XSS token appears escaped and no element other than the figure tags exists', () => {
    const tokens = ['x', XSS, ' "quoted" & \'single\'', ' </svg><script>alert(1)</script>'];
    const A = causalMatrix(4);
    const demo = outerProductDemo({ T: 4, dK: 4 });
    const figs = [
      figAttentionAsymmetry({ tokens, A }),
      figOuterProduct({ q: demo.q, k: demo.k, i: 1, j: 0, tokens, attention: A }),
      figDag({ tokens, A, dagScores: [0.8] }),
      figDoIntervention({ tokens, A, row: 1, col: 0 }),
    ];
    for (const f of figs) {
      const s = toString(f);
      expect(s).not.toContain('<img');
      expect(s).not.toContain('<script');
      expect(s).toContain('&lt;img src=x on…'); // the (shortened) tick or node label
      const tags = xmlTags(s);
      expect(tags[0].tag).toBe('svg');
      for (const t of tags) {
        expect(TAGS.has(t.tag)).toBe(true);
        for (const a of t.attrs) expect(a).not.toMatch(/^on|href|^style$/i);
      }
    }
  });
});

// ── helpers of the layout ───────────────────────────────────────────────────

describe('layout helpers', () => {
  it('wraps a long plain title at spaces and leaves rich lines whole', () => {
    const long = 'word '.repeat(60).trim();
    const lines = wrapLines([long, ['A', { sub: 'ij' }]], 15, 300);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.slice(0, -1).every((l) => typeof l === 'string' && l.length < long.length)).toBe(true);
    expect(lines[lines.length - 1]).toEqual(['A', { sub: 'ij' }]);
    expect(lines.slice(0, -1).join(' ')).toBe(long);
  });

  it('thins tick labels to nice steps only when they would overlap', () => {
    expect(labelStep(30, 12)).toBe(1);
    expect(labelStep(5, 12)).toBe(4);
    expect(labelStep(4.7, 17)).toBe(4);
  });
});

// ── export ──────────────────────────────────────────────────────────────────

describe('export', () => {
  it('names files as the chapter\'s script', () => {
    expect(FIGURE_FILES).toEqual({
      fig1: 'ch09_causal_fig1_attention_asymmetry',
      fig2: 'ch09_causal_fig2_outer_product',
      fig3: 'ch09_causal_fig3_dag',
      fig4: 'ch09_causal_fig4_do_intervention',
    });
  });

  it('keeps the Node-only PNG exporter out of the browser entry (a bundler would try to pack the native addon)', () => {
    const dir = join(root, 'web/src/figures');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.js') && n !== 'export.js')) {
      const src = readFileSync(join(dir, f), 'utf8');
      expect(src).not.toMatch(/from '\.\/export\.js'|import\('\.\/export\.js'\)|@resvg/);
    }
  });

  it('renders a PNG that contains the drawing: right size, colours of the cells', async () => {
    const A = causalMatrix(10);
    const fig = figAttentionAsymmetry({ tokens: TOKENS, A });
    const svg = toString(fig);
    const { png, width, height } = await svgToPng(svg, { scale: 1 });
    expect(Array.from(png.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(pngSize(png)).toEqual({ width, height });
    expect(width).toBe(Number(fig.attrs.width));
    expect(height).toBe(Number(fig.attrs.height));
    const blank = await svgToPng(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff"/></svg>`, { scale: 1 });
    expect(png.length).toBeGreaterThan(10 * blank.png.length);
    // sample the pixel at the centre of the top-left cell (A[0][0] = 1, darkest YlOrRd)
    const c = cellAt(one(fig, 'attention'), 0, 0);
    const x = Math.round(Number(c.attrs.x) + Number(c.attrs.width) / 2), y = Math.round(Number(c.attrs.y) + Number(c.attrs.height) / 2);
    const px = new Resvg(svg).render().pixels;
    const at = (4 * (y * width + x));
    const want = interpolateYlOrRd(1).match(/\d+/g).map(Number);
    for (let k = 0; k < 3; k++) expect(Math.abs(px[at + k] - want[k])).toBeLessThanOrEqual(2);
    // and text was drawn: the tick-label column left of the heatmap is not all white
    let dark = 0;
    for (let yy = Math.round(Number(c.attrs.y)); yy < y + 200; yy++) {
      for (let xx = x - 60; xx < x - 10; xx++) if (px[4 * (yy * width + xx)] < 128) dark++;
    }
    expect(dark).toBeGreaterThan(20);
  });

  it('scales the PNG (150 dpi by default, as the chapter) and refuses bad input', async () => {
    const svg = toString(figDag({ tokens: TOKENS, A: causalMatrix(10), dagScores: [0.7, 0.8] }));
    const { png } = await svgToPng(svg);
    const size = pngSize(png);
    expect(size.width).toBe(Math.round(1248 * 150 / 96));
    await expect(svgToPng('not svg')).rejects.toMatchObject({ code: 'ETYPE' });
    await expect(svgToPng(svg, { scale: 0 })).rejects.toMatchObject({ code: 'ERANGE' });
    expect(() => pngSize(Buffer.from('GIF89a not a png at all, padding to 40 bytes...'))).toThrow(expect.objectContaining({ code: 'EFORMAT' }));
  });
});

// ── the CLI ─────────────────────────────────────────────────────────────────

describe('npm run figures (scripts/figures.mjs)', () => {
  const script = join(root, 'scripts', 'figures.mjs');
  const run = (args) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', cwd: root });

  it('writes the four figures as SVG and PNG, named as the chapter, from a model', () => {
    const out = mkdtempSync(join(tmpdir(), 'attnlab-figs-'));
    try {
      const r = run(['--text', 'Because the storm intensified , the ship finally sank .', '--out', out,
        '--model', join(root, 'tests/fixtures/tiny'), '--row', '3', '--col', '1', '--lambda', '2']);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const names = Object.values(FIGURE_FILES).flatMap((b) => [`${b}.png`, `${b}.svg`]).sort();
      expect(readdirSync(out).sort()).toEqual(names);
      for (const b of Object.values(FIGURE_FILES)) {
        const svg = readFileSync(join(out, `${b}.svg`), 'utf8');
        expect(svg.startsWith('<?xml')).toBe(true);
        for (const t of xmlTags(svg)) expect(TAGS.has(t.tag)).toBe(true);
        const png = readFileSync(join(out, `${b}.png`));
        const { width } = pngSize(png);
        expect(width).toBeGreaterThan(800);
        expect(png.length).toBeGreaterThan(20000);
      }
      const fig4 = readFileSync(join(out, `${FIGURE_FILES.fig4}.svg`), 'utf8');
      expect(fig4).toContain('data-row="3"');
      expect(fig4).toContain('data-lambda="2"');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('fails with a usage message and exit 2 on bad arguments', () => {
    for (const args of [[], ['--text', 'x'], ['--text', 'x', '--out', '/tmp/x', '--lang', 'fr'], ['--bogus'],
      ['--text', 'x', '--out', '/tmp/x', '--row', '1'], ['--text', 'x', '--out', '/tmp/x', '--layer', '-1']]) {
      const r = run(args);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^figures: .*\nusage: npm run figures/);
    }
  });

  it('reports a missing model directory with its error code and exit 1', () => {
    const r = run(['--text', 'x', '--out', join(tmpdir(), 'attnlab-never'), '--model', join(root, 'no-such-model'), '--no-png']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^figures: E[A-Z]+: /);
  });
});
