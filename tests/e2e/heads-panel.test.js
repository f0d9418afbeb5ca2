// heads-panel.test.js — the page's "Heads & counterfactuals" panel (web/src/page/heads.js)
// in headless Chromium on the built-in model (models/brown-gpt2), served with the
// page's CSP. The numbers the panel draws are compared with the API's numbers for the
// same inputs, computed here in Node with web/src/index.js on the same model files.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/heads-panel.test.js
//
// The tests of the first describe share one page, in order (run the file, not single
// tests). Skipped when the built-in model's weights are missing.

import { describe, it, expect, beforeAll } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../web/src/index.js';
import {
  DEFAULT_IMP_TEXT, DEFAULT_PAIR, DEFAULT_DAG, DEFAULT_EDIT, EDIT_MIN_KL, DELTA_FLOOR, maskPreset, maskCode, uniformRoles, uniformInduction, fmtS,
} from '../../web/src/page/heads.js';
import { klDivergence } from '../../web/src/page/compare.js';
import { gridMap, lineChart, diffBars, lossLines } from '../../web/src/figures/charts.js';
import { deltaBars } from '../../web/src/figures/delta.js';
import { breakHeads, circuitEffect, copies } from '../../web/src/page/circuit.js';
import { walk, toString } from '../../web/src/figures/svg.js';
import { ROOT, TINY, ARTIFACTS, BUILTIN_WEIGHTS, watchedPage, waitDrawn, useBrowser } from './helpers.js';

const HAVE_MODEL = existsSync(BUILTIN_WEIGHTS);
const suite = HAVE_MODEL ? describe : describe.skip;

// the page keeps the built-in model's F16 weights in 16 bits (weights: 'half'): env.ref the same, for equal numbers;
// env.main: the page on it
const env = useBrowser({
  when: HAVE_MODEL, artifacts: true, ref: () => loadModel(join(ROOT, 'models/brown-gpt2'), { weights: 'half' }), open: '',
});
let L, H;
beforeAll(() => { if (HAVE_MODEL) ({ nLayer: L, nHead: H } = env.ref.config); });

/** Each card's Compute button (the weight-edit card sits inside the pair's card, with its own). */
const COMPUTE = { 'hp-imp': 'imp', 'hp-roles': 'roles', 'hp-circ': 'circ', 'hp-mask': 'mask', 'hp-cf': 'cf', 'hp-ed': 'edit', 'hp-dag': 'dag' };

/** Press card `id`'s Compute button (every card waits for it: nothing computes because it was scrolled to). */
async function compute(page, id) {
  await page.click(`#${id} [data-compute="${COMPUTE[id]}"]`);
}

/**
 * Scroll card `id` into view and wait until it has drawn (data-state="done") and
 * `pred(dataset)` holds. Polled from Node: the page's CSP forbids eval, so no
 * predicate source is sent into the page.
 */
async function ready(page, id, pred = () => true, timeout = 90_000) {
  await page.locator(`#${id}`).scrollIntoViewIfNeeded();
  const t0 = Date.now();
  for (;;) {
    const d = await page.evaluate((i) => ({ ...document.getElementById(i).dataset }), id);
    if (d.state === 'done' && pred(d)) return d;
    if (d.state === 'error') throw new Error(`${id}: ${await page.textContent(`#${id}-status`)}`);
    if (Date.now() - t0 > timeout) throw new Error(`${id}: not ready (state ${d.state})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** data-v of the cells of `sel` (rect[data-i][data-j]) as numbers (NaN for 'NaN'), with data-missing. */
function cellsOf(page, sel) {
  return page.evaluate((s) => [...document.querySelectorAll(`${s} rect[data-i][data-j]`)]
    .map((r) => ({ i: Number(r.dataset.i), j: Number(r.dataset.j), v: Number(r.dataset.v), missing: r.dataset.missing === '1' })), sel);
}

const close = (a, b, tol = 1e-4) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

suite('the heads panel on the built-in model', () => {
  it('says which rung of the ladder each card is', async () => {
    const { page } = env.main;
    expect(await page.textContent('#heads-h')).toBe('Heads & counterfactuals');
    const badge = (id) => page.locator(`#${id} .fig-head .rung`).textContent();
    expect(await badge('hp-imp')).toMatch(/^Rung 2/);
    expect(await badge('hp-roles')).toMatch(/^Rung 1/);
    expect(await badge('hp-mask')).toMatch(/^Rung 2/);
    // a deterministic network given its whole input: the chapter's counterfactuals compute interventions
    expect(await badge('hp-cf')).toMatch(/^Rung 2/);
    expect(await page.locator('.hp-sub .rung').textContent()).toMatch(/^Rung 2/);
    expect(await badge('hp-dag')).toMatch(/^Rung 1/);
  });

  it('scrolling through the panel starts no forward pass: every card waits for its Compute button', async () => {
    const { page } = env.main;
    const ids = ['hp-imp', 'hp-roles', 'hp-circ', 'hp-mask', 'hp-cf', 'hp-ed', 'hp-dag'];
    for (const id of ids) {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      await page.waitForTimeout(150);
    }
    await page.waitForTimeout(1000);
    // the panel counts its worker calls on #heads (data-calls): none yet
    expect(await page.getAttribute('#heads', 'data-calls')).toBeNull();
    for (const id of ids) {
      expect(await page.getAttribute(`#${id}`, 'data-state'), id).toBe('idle');
      expect(await page.textContent(`#${id}-status`), id).toBe('Press Compute to run this card in the worker.');
      expect(await page.locator(`#${id} [data-compute="${COMPUTE[id]}"]`).count(), id).toBe(1);
    }
  });

  it('draws the importance grid (L×H finite Δ) and the pruning curve (L·H + 1 points) with the API\'s numbers', async () => {
    const { page } = env.main;
    await compute(page, 'hp-imp');
    const d = await ready(page, 'hp-imp');
    // 2·L·H + 1 short calls (one forward each), all done
    expect(Number(d.runs)).toBe(2 * L * H + 1);
    expect(d.progress).toBe(d.runs);
    expect(Number(await page.getAttribute('#heads', 'data-calls'))).toBeGreaterThanOrEqual(2 * L * H + 1);
    const cells = await cellsOf(page, '#hp-imp-grid g[data-role="importance"]');
    expect(cells.length).toBe(L * H);
    expect(cells.every((c) => Number.isFinite(c.v))).toBe(true);
    const points = await page.$$eval('#hp-imp-curve g[data-role="points"] circle', (cs) => cs.map((c) => Number(c.dataset.v)));
    expect(points.length).toBe(L * H + 1);
    expect(points.every(Number.isFinite)).toBe(true);
    // the same text through the API in Node
    const ids = env.ref.tokenize(DEFAULT_IMP_TEXT).ids;
    const api = env.ref.headImportance(ids);
    expect(Number(d.t)).toBe(ids.length);
    expect(close(Number(d.baseLoss), api.baseLoss, 1e-5)).toBe(true);
    expect(close(Number(d.lossAtHalf), api.lossAtHalf, 1e-5)).toBe(true);
    for (const c of cells) expect(close(c.v, api.delta[c.i * H + c.j], 1e-3), `Δ L${c.i}H${c.j}`).toBe(true);
    expect(close(points[0], api.baseLoss, 1e-5)).toBe(true);
    expect(close(points[L * H], api.pruning[L * H], 1e-5)).toBe(true);
    // "half the heads removed" is stated, with its loss
    const summary = await page.textContent('#hp-imp-summary');
    expect(summary).toContain(`Half the heads removed (${Math.floor((L * H) / 2)} of ${L * H}): ${api.lossAtHalf.toFixed(3)} nats`);
    expect(await page.getAttribute('#hp-imp-curve svg', 'data-half')).toBe(String(Math.floor((L * H) / 2)));
  });

  it('draws the four role grids in [0, 1] and names the top heads as the API does', async () => {
    const { page } = env.main;
    await compute(page, 'hp-roles');
    const d = await ready(page, 'hp-roles');
    expect(d.inductionDefined).toBe('true');
    const ids = env.ref.tokenize(DEFAULT_IMP_TEXT).ids;
    const api = env.ref.headRoles(ids, { top: 3 });
    const ind = env.ref.headRoles(env.ref.repeatedTokens(50, { seed: 1 }), { top: 3 });
    for (const role of ['prev', 'sink', 'dup', 'induction']) {
      const cells = await cellsOf(page, `#hp-roles-grids g[data-role="role-${role}"]`);
      expect(cells.length, role).toBe(L * H);
      expect(cells.every((c) => c.v >= 0 && c.v <= 1), role).toBe(true);
      const want = role === 'induction' ? ind : api;
      for (const c of cells) expect(close(c.v, want[role][c.i * H + c.j], 1e-3), `${role} L${c.i}H${c.j}`).toBe(true);
      const top = want.top[role][0];
      expect(await page.getAttribute(`.hp-role[data-role="${role}"]`, 'data-top')).toBe(`L${top.layer}H${top.head}`);
      expect(await page.textContent(`.hp-role[data-role="${role}"] .hp-top`)).toContain(`L${top.layer}H${top.head} ${top.score.toFixed(3)}`);
    }
    // the built-in model's circuits are what a new reader lands on: a previous-token head on the default
    // text (score >= 0.5) and an induction head on the default r ++ r (20 times uniform attention's score)
    expect(api.top.prev[0].score).toBeGreaterThanOrEqual(0.5);
    expect(ind.top.induction[0].score).toBeGreaterThan(20 * uniformInduction(50));
    await page.locator('#hp-roles').screenshot({ path: join(ARTIFACTS, 'heads-roles.png') });
  });

  it('break the circuit: each preset ablates the heads the roles name; the curves, grid and sentence are the API\'s numbers', async () => {
    const { page } = env.main;
    const rep = env.ref.repeatedTokens(50, { seed: 1 });
    const text = env.ref.headRoles(env.ref.tokenize(DEFAULT_IMP_TEXT).ids, { top: 3 });
    const ind = env.ref.headRoles(rep, { top: 3 });
    const plain = env.ref.tokenLosses(rep);
    for (const preset of ['prev', 'induction', 'induction2']) {
      if (preset === 'prev') await compute(page, 'hp-circ');
      else await page.click(`#hp-circ [data-break="${preset}"]`);
      const d = await ready(page, 'hp-circ', (x) => x.preset === preset);
      expect(await page.getAttribute(`#hp-circ [data-break="${preset}"]`, 'aria-pressed')).toBe('true');
      // the pressed preset looks pressed: another background and border than the others
      const look = (sel) => page.$eval(sel, (b) => { const c = getComputedStyle(b); return `${c.backgroundColor} ${c.borderColor} ${c.fontWeight}`; });
      const other = ['prev', 'induction', 'induction2'].find((x) => x !== preset);
      expect(await look(`#hp-circ [data-break="${preset}"]`)).not.toBe(await look(`#hp-circ [data-break="${other}"]`));
      const heads = breakHeads(preset, text, ind);
      const ablate = heads.map((x) => [x.layer, x.head]);
      expect(d.heads).toBe(heads.map((x) => `L${x.layer}H${x.head}`).join(' + '));
      const fx = circuitEffect({ plain, broken: env.ref.tokenLosses(rep, { ablate }), ind,
        indBroken: env.ref.headRoles(rep, { ablate }), n: 50, nHead: H, ablated: heads });
      // measured on what the ablated model does: the copying gain (first − second copy) and the heads left working
      expect(close(Number(d.gainPlain), fx.plain.gain, 1e-5)).toBe(true);
      expect(close(Number(d.gainBroken), fx.broken.gain, 1e-5)).toBe(true);
      expect(close(Number(d.othersBroken), fx.broken.others.score, 1e-4)).toBe(true);
      // every preset breaks the copying on the built-in model: most of the gain is gone
      expect(fx.broken.gain).toBeLessThan(0.25 * fx.plain.gain);
      // the ablated heads' cells are hatched (their own pattern is computed as before), the others drawn
      const grid = await cellsOf(page, '#hp-circ-grid g[data-role="circ-induction"]');
      for (const c of grid) expect(c.missing, `L${c.i}H${c.j}`).toBe(ablate.some(([l, h]) => l === c.i && h === c.j));
      expect(close(Number(d.secondPlain), fx.plain.second, 1e-5)).toBe(true);
      expect(close(Number(d.secondBroken), fx.broken.second, 1e-5)).toBe(true);
      expect(close(Number(d.firstBroken), fx.broken.first, 1e-5)).toBe(true);
      expect(close(Number(d.inductionBroken), fx.broken.induction.score, 1e-4)).toBe(true);
      // the two curves: 99 points each, the page's points are the API's losses
      const pts = await page.$$eval('#hp-circ-loss g[data-role="points-b"] circle', (cs) => cs.map((c) => Number(c.dataset.v)));
      expect(pts.length).toBe(99);
      const want = env.ref.tokenLosses(rep, { ablate }).losses;
      for (const k of [0, 49, 60, 98]) expect(close(pts[k], want[k], 1e-4), `point ${k}`).toBe(true);
      expect((await cellsOf(page, '#hp-circ-grid g[data-role="circ-induction"]')).length).toBe(L * H);
      // the summary states the same numbers
      const summary = await page.textContent('#hp-circ-summary');
      expect(summary).toContain(`${fx.plain.second.toFixed(2)} → ${fx.broken.second.toFixed(2)} nats`);
      expect(summary).toContain(`the second copy is ${fx.plain.gain.toFixed(2)} nats easier than the first with every head, ${fx.broken.gain.toFixed(2)} with`);
      const o = (x) => `${x.score.toFixed(3)} (L${x.layer}H${x.head})`;
      expect(summary).toContain(`Best induction score of the heads left working: ${o(fx.plain.others)} → ${o(fx.broken.others)}`);
      // when the ablated heads include the best induction head, the card says in its text why its score did not move
      const best = fx.plain.induction;
      const ownSaid = summary.includes(`L${best.layer}H${best.head} itself still scores`);
      expect(ownSaid).toBe(ablate.some(([l, h]) => l === best.layer && h === best.head));
      if (preset !== 'prev') expect(ownSaid).toBe(true);
      // the dashed line's label is a legend entry above the plot: it covers no line
      const box = (sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; });
      const label = await box('#hp-circ-loss [data-role="chance-label"]');
      const plot = await box('#hp-circ-loss [data-role="plot"]');
      expect(label.bottom).toBeLessThanOrEqual(plot.top);
      // whether the model copies at all is said, not left to the reader
      expect(d.copies).toBe(String(copies(fx)));
      expect(summary.includes('This model does not copy')).toBe(!copies(fx));
      if (preset === 'prev') {
        // the default preset, one click for a new reader: the built-in model copies, and breaking its
        // previous-token head breaks the induction (score below half) and the copying (second copy harder)
        expect(copies(fx)).toBe(true);
        expect(fx.broken.induction.score).toBeLessThan(0.5 * fx.plain.induction.score);
        expect(fx.delta.second).toBeGreaterThan(0.5);
      }
    }
    await page.locator('#hp-circ').screenshot({ path: join(ARTIFACTS, 'heads-break-circuit.png') });
  });

  it('per-layer masks: "lower full, upper causal" changes the prediction and the attention; "all causal" changes nothing', async () => {
    const { page } = env.main;
    const text = await page.inputValue('#text');
    const mixed = maskPreset('lowerFull', L);
    await compute(page, 'hp-mask');
    let d = await ready(page, 'hp-mask', (x) => x.mask === mixed.join(','));
    const kl = Number(d.kl);
    expect(kl).toBeGreaterThan(0);
    const a = env.ref.run(text, { topK: 10 }), b = env.ref.run(text, { mask: mixed, topK: 10 });
    const apiTopB = b.top.map((x) => x.id);
    const pageTopB = await page.$$eval('#hp-mask-top-b tbody tr', (rs) => rs.map((r) => Number(r.dataset.id)));
    expect(pageTopB).toEqual(apiTopB);
    // the two last-layer maps differ, and are the API's
    const m0 = await cellsOf(page, '#hp-mask-maps g[data-role="attn-0"]');
    const m1 = await cellsOf(page, '#hp-mask-maps g[data-role="attn-1"]');
    const T = a.T;
    expect(m0.length).toBe(T * T);
    const A1 = b.attention(L - 1, 'avg');
    expect(m1.every((c) => close(c.v, A1[c.i * T + c.j], 1e-3))).toBe(true);
    expect(Math.max(...m0.map((c, k) => Math.abs(c.v - m1[k].v)))).toBeGreaterThan(1e-3);
    // a per-layer select, then the all-causal preset
    await page.selectOption('#hp-mask-layers select[data-layer="0"]', 'causal');
    d = await ready(page, 'hp-mask', (x) => x.mask.startsWith('causal,'));
    await page.click('#hp-mask [data-preset="causal"]');
    d = await ready(page, 'hp-mask', (x) => x.mask === Array(L).fill('causal').join(','));
    expect(Number(d.kl)).toBe(0);
    expect(Number(d.maxDelta)).toBe(0);
    // nothing changed, and the card says so instead of drawing bars
    expect(await page.textContent('#hp-mask-kl')).toContain('No visible change in attention: the largest |ΔA| is 0');
    expect(Number(await page.getAttribute('#hp-mask-delta svg', 'data-scale-max'))).toBe(DELTA_FLOOR);
  });

  it('a sentence pair: KL > 0, the diff heatmap on aligned cells, unaligned cells marked', async () => {
    const { page } = env.main;
    await compute(page, 'hp-cf');
    let d = await ready(page, 'hp-cf');
    const api = env.ref.counterfactual(DEFAULT_PAIR[0], DEFAULT_PAIR[1], { topK: 10 });
    expect(Number(d.kl)).toBeGreaterThan(0);
    expect(close(Number(d.kl), api.next.kl, 1e-3)).toBe(true);
    expect(Number(d.aligned)).toBe(api.aligned.length);
    const T = api.a.T;
    let cells = await cellsOf(page, '#hp-cf-map g[data-role="cf-diff"]');
    expect(cells.length).toBe(T * T);
    const D = api.attentionDiff.subarray((L - 1) * T * T, L * T * T);
    for (const c of cells) {
      const want = D[c.i * T + c.j];
      if (Number.isFinite(want)) expect(close(c.v, want, 1e-3)).toBe(true);
      else expect(c.missing).toBe(true);
    }
    expect(await page.locator('#hp-cf-bars g[data-role="bars"] > g').count()).toBeGreaterThan(0);
    // a pair of different lengths: the changed span of A has no partner
    const B = 'Because the storm grew much weaker , the ship finally sank .';
    await page.fill('#hp-cf-b', B);
    await page.click('#hp-cf-form button[type="submit"]');
    d = await ready(page, 'hp-cf', (x) => x.aligned !== d.aligned);
    const api2 = env.ref.counterfactual(DEFAULT_PAIR[0], B, { topK: 10 });
    const unpaired = new Set(Array.from({ length: T }, (_, i) => i).filter((i) => !api2.aligned.some((p) => p[0] === i)));
    expect(unpaired.size).toBeGreaterThan(0);
    cells = await cellsOf(page, '#hp-cf-map g[data-role="cf-diff"]');
    for (const c of cells) {
      const miss = unpaired.has(c.i) || unpaired.has(c.j);
      expect(c.missing, `cell ${c.i},${c.j}`).toBe(miss);
      expect(Number.isFinite(c.v), `cell ${c.i},${c.j}`).toBe(!miss);
    }
    expect(await page.locator('#hp-cf-map path[data-role="hatch"]').count()).toBe(1);
    expect(await page.locator('#hp-cf-align li.is-unaligned').count()).toBeGreaterThan(0);
    expect(Number(d.kl)).toBeGreaterThan(0);
  });

  it('a head weight edit: the default moves the prediction visibly; α = 1 changes nothing and says so; the swap is the API\'s', async () => {
    const { page } = env.main;
    const text = await page.inputValue('#text');
    await compute(page, 'hp-ed');
    let d = await ready(page, 'hp-ed');
    // the default edit (swap W_Q ↔ W_K of L0H0): KL above EDIT_MIN_KL and another top token, as the API computes it
    const want = { kind: DEFAULT_EDIT.kind, layer: DEFAULT_EDIT.layer, head: DEFAULT_EDIT.head };
    expect(JSON.parse(d.edit)).toEqual(want);
    const base = env.ref.run(text, { topK: 10 }), api = env.ref.run(text, { interventions: [want], topK: 10 });
    const klApi = klDivergence(base.logits, api.logits);
    expect(klApi).toBeGreaterThan(EDIT_MIN_KL);
    expect(api.top[0].id).not.toBe(base.top[0].id);
    expect(close(Number(d.kl), klApi, 1e-3)).toBe(true);
    expect(await page.textContent('#hp-ed-kl')).toContain(`top token ${base.top[0].token.trim()} → ${api.top[0].token.trim()}`);
    const A = api.attention(0, 0);
    const swapped = await cellsOf(page, '#hp-ed-maps g[data-role="attn-1"]');
    expect(swapped.every((c) => close(c.v, A[c.i * api.T + c.j], 1e-3))).toBe(true);
    // the layers below the edited one cannot change: the bar of layer 0 is the only one that may be the edit's
    let bars = await page.$$eval('#hp-ed-delta g[data-role="delta-bar"]', (gs) => gs.map((g) => Number(g.dataset.v)));
    expect(bars.length).toBe(L);
    expect(bars[0]).toBeGreaterThan(0);
    // α = 1 on W_Q: the identity (changing the inputs recomputes: the card was asked once)
    await page.click('label[for="hp-ed-q"]');
    expect(await page.isChecked('#hp-ed-q')).toBe(true);
    await page.locator('#hp-ed-alpha').fill('1');
    d = await ready(page, 'hp-ed', (x) => JSON.parse(x.edit).alpha === 1 && JSON.parse(x.edit).kind === 'scaleQ');
    // zero up to float rounding: the engine applies the edit as q ← α(q − b_q) + b_q
    expect(Number(d.kl)).toBeLessThan(1e-9);
    expect(Number(d.maxDelta)).toBeLessThan(1e-6);
    const before = await cellsOf(page, '#hp-ed-maps g[data-role="attn-0"]');
    const after = await cellsOf(page, '#hp-ed-maps g[data-role="attn-1"]');
    expect(after.length).toBe(before.length);
    // equal to the 6 significant digits drawn (one step of the last digit at most)
    after.forEach((c, k) => expect(Math.abs(c.v - before[k].v), `cell ${c.i},${c.j}`).toBeLessThanOrEqual(1.01e-5 * Math.abs(c.v) + 1e-9));
    // the card says it saw no change
    expect(await page.textContent('#hp-ed-kl')).toContain('No visible change in attention: the largest |ΔA| is 0 (below 0.01)');
    // and the old default, W_Q × 2 of L0H0: a change of about 1e-6 said as none, not drawn as full bars
    await page.locator('#hp-ed-alpha').fill('2');
    d = await ready(page, 'hp-ed', (x) => JSON.parse(x.edit).alpha === 2);
    expect(Number(d.maxDelta)).toBeLessThan(DELTA_FLOOR);
    // rounding noise (mean |ΔA| about 1e-5) is not drawn as full bars: the scale is at least DELTA_FLOOR
    expect(Number(await page.getAttribute('#hp-ed-delta svg', 'data-scale-max'))).toBeGreaterThanOrEqual(DELTA_FLOOR);
    const widths = await page.$$eval('#hp-ed-delta g[data-role="delta-bar"]', (gs) => gs.map((g) => {
      const [track, bar] = g.querySelectorAll('rect');
      return Number(bar.getAttribute('width')) / Number(track.getAttribute('width'));
    }));
    expect(Math.max(...widths)).toBeLessThan(0.02);
    expect(await page.textContent('#hp-ed-kl')).toMatch(/No visible change in attention: the largest \|ΔA\| is \de-\d \(below 0\.01\)/);
  });

  it('the DAG profile: per-layer bars and per-head excess against the null, as the API computes them', async () => {
    const { page } = env.main;
    await compute(page, 'hp-dag');
    const d = await ready(page, 'hp-dag');
    const api = env.ref.dagProfile(DEFAULT_DAG);
    expect(close(Number(d.overall), api.mean.overall, 1e-5)).toBe(true);
    expect(close(Number(d.null), api.mean.null, 1e-9)).toBe(true);
    const bars = await page.$$eval('#hp-dag-layers g[data-role="bars"] rect', (rs) => rs.map((r) => Number(r.dataset.v)));
    expect(bars.length).toBe(L);
    bars.forEach((v, l) => expect(close(v, api.mean.layer[l], 1e-4)).toBe(true));
    const cells = await cellsOf(page, '#hp-dag-heads g[data-role="dag-excess"]');
    expect(cells.length).toBe(L * H);
    for (const c of cells) expect(close(c.v, api.mean.head[c.i * H + c.j] - api.mean.null, 1e-3)).toBe(true);
    expect(await page.locator('#hp-dag-table tbody tr').count()).toBe(DEFAULT_DAG.length);
    // the full mask: the null of bidirectional attention
    await page.selectOption('#hp-dag-mask', 'full');
    const f = await ready(page, 'hp-dag', (x) => Number(x.null) < 0.6);
    const apiFull = env.ref.dagProfile(DEFAULT_DAG, { mask: 'full' });
    expect(close(Number(f.null), apiFull.mean.null, 1e-9)).toBe(true);
  });

  it('screenshots', async () => {
    const { page } = env.main;
    await page.locator('#heads').screenshot({ path: join(ARTIFACTS, 'heads-panel-1400-light.png') });
    for (const id of ['hp-imp', 'hp-roles', 'hp-mask', 'hp-cf', 'hp-dag']) {
      await page.locator(`#${id}`).screenshot({ path: join(ARTIFACTS, `heads-${id}.png`) });
    }
  });

  it('a click on a figure while the importance grid computes is not queued behind it: drawn first, then the grid resumes', async () => {
    const { page } = env.main;
    // a longer text (about 180 tokens): 49 calls of one forward each
    const long = `${DEFAULT_IMP_TEXT} ${DEFAULT_IMP_TEXT}`;
    await page.fill('#hp-imp-input', long);
    // record, in order, the grid's progress, its state and the figures' renders (a MutationObserver in the page)
    await page.evaluate(() => {
      window.__order = [];
      const imp = document.getElementById('hp-imp');
      new MutationObserver(() => window.__order.push(['imp', Number(imp.dataset.progress || 0), Number(imp.dataset.runs || 0), imp.dataset.state]))
        .observe(imp, { attributes: true, attributeFilter: ['data-progress', 'data-state'] });
      new MutationObserver(() => window.__order.push(['render', Number(document.body.dataset.renders)]))
        .observe(document.body, { attributes: true, attributeFilter: ['data-renders'] });
      // each worker call the panel starts, with the figures' state at that moment
      const heads = document.getElementById('heads');
      new MutationObserver(() => window.__order.push(['call', Number(heads.dataset.calls), document.body.dataset.state]))
        .observe(heads, { attributes: true, attributeFilter: ['data-calls'] });
    });
    const renders = Number(await page.getAttribute('body', 'data-renders'));
    await compute(page, 'hp-imp');
    await page.waitForFunction(() => Number(document.getElementById('hp-imp').dataset.progress || 0) >= 2, null, { timeout: 60_000 });
    await page.click('#fig1 g[data-role="attention"] rect[data-i="6"][data-j="3"]');
    await waitDrawn(page, renders + 1);
    const d = await ready(page, 'hp-imp', (x) => Number(x.t) > 100);
    const order = await page.evaluate(() => window.__order);
    const at = order.findIndex((e) => e[0] === 'render' && e[1] > renders);
    const done = order.findIndex((e) => e[0] === 'imp' && e[3] === 'done');
    expect(at).toBeGreaterThan(-1);
    // the figure was drawn while the grid was still computing: before it was ready, with calls still to come
    expect(done).toBeGreaterThan(at);
    const before = order.slice(0, at).filter((e) => e[0] === 'imp' && e[2] > 0).at(-1);
    expect(before[1]).toBeLessThan(before[2]);
    // the panel started no call while the figures were computing (it waits for them between its calls)
    const calls = order.filter((e) => e[0] === 'call');
    expect(calls.length).toBeGreaterThan(2 * L * H);
    expect(calls.filter((e) => e[2] === 'busy')).toEqual([]);
    // and the grid resumed after the figure and finished with the API's numbers
    expect(order.slice(at).some((e) => e[0] === 'imp' && e[1] > before[1])).toBe(true);
    const ids = env.ref.tokenize(long).ids;
    expect(Number(d.t)).toBe(ids.length);
    expect(Number(d.baseLoss)).toBe(env.ref.headImportance(ids, { pruning: false }).baseLoss);
    expect(close(Number(d.lossAtHalf), env.ref.headImportance(ids).lossAtHalf, 1e-5)).toBe(true);
    await page.fill('#hp-imp-input', DEFAULT_IMP_TEXT);
  });

  it('another model (local files: the tiny one): every card waits for Compute again, then computes with its shape', async () => {
    const { page } = env.main;
    const tinyDir = join(ROOT, TINY);
    const tiny = await loadModel(tinyDir);
    try {
      const { nLayer: tl, nHead: th, nPositions } = tiny.config;
      await page.selectOption('#model-select', 'local');
      await page.setInputFiles('#model-files', ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']
        .map((n) => ({ name: n, mimeType: 'application/octet-stream', buffer: readFileSync(join(tinyDir, n)) })));
      await page.waitForFunction(() => /3 layers/.test(document.getElementById('model-status').textContent) && document.body.dataset.state === 'ready');
      // nothing of the old model is drawn, and nothing of the new one is computed before the reader asks
      for (const id of ['hp-imp', 'hp-dag']) expect(await page.getAttribute(`#${id}`, 'data-state')).toBe('idle');
      expect(await page.locator('#hp-imp-grid svg').count()).toBe(0);
      await compute(page, 'hp-imp');
      const d = await ready(page, 'hp-imp', (x) => Number(x.t) > 0);
      expect(await page.locator('#hp-imp-grid g[data-role="importance"] rect').count()).toBe(tl * th);
      expect(await page.locator('#hp-imp-curve g[data-role="points"] circle').count()).toBe(tl * th + 1);
      // the default text is longer than the tiny model's context: cut to n_positions, and said so
      const ids = tiny.tokenize(DEFAULT_IMP_TEXT).ids.slice(0, nPositions);
      expect(Number(d.t)).toBe(ids.length);
      expect(close(Number(d.baseLoss), tiny.headImportance(ids).baseLoss, 1e-5)).toBe(true);
      expect(await page.textContent('#hp-imp-summary')).toContain('cut to the model');
      await compute(page, 'hp-dag');
      const dd = await ready(page, 'hp-dag', (x) => close(Number(x.overall), tiny.dagProfile(DEFAULT_DAG, { mask: 'full' }).mean.overall, 1e-5));
      expect(Number(dd.null)).toBeLessThan(0.6);   // the mask chosen before is kept
      expect(await page.locator('#hp-dag-heads g[data-role="dag-excess"] rect').count()).toBe(tl * th);
      expect(await page.locator('#hp-mask-layers select').count()).toBe(tl);
      expect(await page.locator('#hp-ed-layer option').count()).toBe(tl);
    } finally {
      tiny.dispose();
    }
  });

  it('no console error, page error, CSP violation or foreign request', async () => {
    const { issues } = env.main;
    expect(issues.pageErrors).toEqual([]);
    expect(issues.consoleErrors).toEqual([]);
    expect(await env.main.cspViolations()).toEqual([]);
    expect(issues.foreign).toEqual([]);
  });
});

suite('the heads panel in Chinese, narrow and dark', () => {
  it('labels every card in Chinese and computes', async () => {
    const P = await watchedPage(env, { viewport: { width: 1400, height: 900 } });
    try {
      await P.page.goto(`${env.url}?lang=zh`);
      await waitDrawn(P.page);
      expect(await P.page.textContent('#heads-h')).toBe('注意力头与反事实');
      expect(await P.page.textContent('#hp-imp-h')).toBe('头的重要性与剪枝曲线');
      expect(await P.page.textContent('#hp-cf .fig-head .rung')).toBe('第二阶 · 干预');
      expect(await P.page.textContent('#hp-dag .fig-head .rung')).toBe('第一阶 · 观察');
      await compute(P.page, 'hp-dag');
      await ready(P.page, 'hp-dag');
      expect(await P.page.textContent('#hp-dag-summary')).toMatch(/个句子，因果掩码：平均 DAG/);
      await compute(P.page, 'hp-cf');
      await ready(P.page, 'hp-cf');
      expect(await P.page.textContent('#hp-cf-kl')).toContain('总变差');
      // switching the language redraws without recomputing
      await P.page.click('#lang');
      expect(await P.page.textContent('#heads-h')).toBe('Heads & counterfactuals');
      expect(await P.page.textContent('#hp-dag-summary')).toMatch(/sentences, causal mask: mean DAG/);
      await P.page.click('#lang');
      await P.page.locator('#heads').screenshot({ path: join(ARTIFACTS, 'heads-panel-1400-zh.png') });
      expect(P.issues.pageErrors).toEqual([]);
      expect(P.issues.consoleErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await P.context.close();
    }
  });

  it('works at 360 px in the dark scheme', async () => {
    const P = await watchedPage(env, { viewport: { width: 360, height: 780 }, colorScheme: 'dark' });
    try {
      await P.page.goto(env.url);
      await waitDrawn(P.page);
      for (const id of ['hp-imp', 'hp-roles', 'hp-circ', 'hp-mask', 'hp-cf', 'hp-ed', 'hp-dag']) {
        await compute(P.page, id);
        await ready(P.page, id);
      }
      // nothing wider than the viewport
      const overflow = await P.page.evaluate(() => document.documentElement.scrollWidth);
      expect(overflow).toBeLessThanOrEqual(360);
      await P.page.locator('#heads').screenshot({ path: join(ARTIFACTS, 'heads-panel-360-dark.png') });
      expect(P.issues.pageErrors).toEqual([]);
      expect(P.issues.consoleErrors).toEqual([]);
      expect(await P.cspViolations()).toEqual([]);
    } finally {
      await P.context.close();
    }
  });
});

describe('the panel\'s pure parts (Node)', () => {
  it('uniform causal attention scores what docs/heads.md says, hand-computed on a small case', () => {
    const ids = [5, 6, 5, 7, 6, 5];
    const u = uniformRoles(ids);
    expect(u.prev).toBeCloseTo((1 / 2 + 1 / 3 + 1 / 4 + 1 / 5 + 1 / 6) / 5, 14);
    expect(u.sink).toBeCloseTo((1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5 + 1 / 6) / 6, 14);
    // repeated positions 2 (one earlier 5), 4 (one earlier 6), 5 (two earlier 5s)
    expect(u.dup).toBeCloseTo((1 / 3 + 1 / 5 + 2 / 6) / 3, 14);
    expect(uniformRoles([1, 2, 3]).dup).toBe(0);
    expect(uniformInduction(2)).toBeCloseTo((1 / 3 + 1 / 4) / 2, 14);
    expect(uniformInduction(50)).toBeCloseTo(0.0138, 4);   // docs/heads.md
  });

  it('mask presets per layer and their short code', () => {
    expect(maskCode(maskPreset('lowerFull', 6))).toBe('FFFCCC');
    expect(maskCode(maskPreset('lowerFull', 5))).toBe('FFFCC');
    expect(maskCode(maskPreset('lowerCausal', 4))).toBe('CCFF');
    expect(maskCode(maskPreset('causal', 3))).toBe('CCC');
    expect(maskCode(maskPreset('full', 2))).toBe('FF');
    expect(maskCode(['causal', 'window:3', 'full'])).toBe('CW3F');
  });

  it('signed differences never print −0.000', () => {
    expect(fmtS(0.0123)).toBe('+0.012');
    expect(fmtS(-0.004)).toBe('−0.004');
    expect(fmtS(-0.0001)).toBe('0.000');
    expect(fmtS(0)).toBe('0.000');
  });

  it('gridMap draws NaN cells grey, hatched and marked, the others with their value', () => {
    const values = [0.1, NaN, -0.2, 0.3];
    const node = gridMap({ values, R: 2, C: 2, color: (v) => (v > 0 ? '#ff0000' : '#0000ff'), cell: 20, rowLabels: ['a', 'b'], colLabels: ['a', 'b'], annotate: (v) => v.toFixed(1), lang: 'en' });
    const rects = walk(node).filter((n) => n.tag === 'rect' && n.attrs['data-i'] !== undefined);
    expect(rects.map((r) => r.attrs['data-v'])).toEqual(['0.1', 'NaN', '-0.2', '0.3']);
    expect(rects.map((r) => r.attrs['data-missing'] === '1')).toEqual([false, true, false, false]);
    expect(rects[1].attrs.fill).toBe('#d9d9d9');
    expect(walk(node).filter((n) => n.attrs['data-role'] === 'hatch').length).toBe(1);
    // three annotations (none on the missing cell), and the SVG serialises
    const ann = walk(node).find((n) => n.attrs['data-role'] === 'annotations');
    expect(ann.children.length).toBe(3);
    expect(toString(node)).toContain('<svg ');
  });

  it('lossLines puts the ln V label in the legend above the plot, wrapping the legend when narrow', () => {
    const losses = Array.from({ length: 99 }, (_, k) => 10 + Math.sin(k));
    for (const width of [300, 700]) {
      const node = lossLines({ a: losses, b: losses.map((v) => v + 0.5), n: 50, chance: Math.log(50257), width, height: 240,
        labelA: 'every head', labelB: 'L0H0 ablated', chanceLabel: 'guessing: ln V = 10.82', copyLabel: 'second copy',
        xTitle: 'x', yTitle: 'y', lang: 'en' });
      const plot = walk(node).find((n) => n.attrs['data-role'] === 'plot');
      const label = walk(node).find((n) => n.attrs['data-role'] === 'chance-label');
      const ys = walk(label).filter((n) => n.tag === 'text').map((n) => Number(n.attrs.y));
      expect(Math.max(...ys), `width ${width}`).toBeLessThan(Number(plot.attrs.y));
      // the legend needs two rows at 300 px and one at 700 px; the plot keeps its height
      expect(Number(plot.attrs.y)).toBe(width === 300 ? 48 : 30);
      expect(Number(plot.attrs.height)).toBe(240 - 30 - 38);
    }
  });

  it('deltaBars with a floor does not draw a change of 6e-6 as a full bar; without one (the in-model panel) it does', () => {
    const t = (k, ...a) => `${k} ${a.join(' ')}`;
    const mean = [6e-6, 8e-6, 4e-6], max = [1e-3, 3e-4, 2e-4];
    const ratio = (node) => walk(node).filter((n) => n.attrs['data-role'] === 'delta-bar').map((g) => {
      const [track, bar] = g.children.filter((c) => c.tag === 'rect');
      return bar.attrs.width / track.attrs.width;
    });
    const floored = deltaBars({ mean, max, doLayer: 0, width: 400, lang: 'en', t, floor: DELTA_FLOOR });
    expect(Math.max(...ratio(floored))).toBeLessThan(0.02);
    expect(Number(floored.attrs['data-scale-max'])).toBe(DELTA_FLOOR);
    expect(Math.max(...ratio(deltaBars({ mean, max, doLayer: 0, width: 400, lang: 'en', t })))).toBe(1);
  });

  it('lineChart has one point per k and marks the half; diffBars one bar per item, red up and blue down', () => {
    const c = lineChart({ loss: [6.5, 6.4, 6.45, 6.6, 6.7], half: 2, base: 6.5, width: 400, height: 200, xTitle: 'k', yTitle: 'loss', halfLabel: 'half', lang: 'en' });
    const pts = walk(c).filter((n) => n.tag === 'circle');
    expect(pts.map((p) => Number(p.attrs['data-k']))).toEqual([0, 1, 2, 3, 4]);
    expect(walk(c).some((n) => n.attrs['data-role'] === 'half')).toBe(true);
    const b = diffBars({ items: [{ label: 'a', v: 0.02, note: '' }, { label: 'b', v: -0.01, note: '' }], width: 300, lang: 'en' });
    const bars = walk(b).filter((n) => n.tag === 'rect' && n.attrs.rx !== undefined);
    expect(bars.map((r) => r.attrs.fill)).toEqual(['#b2182b', '#2166ac']);
  });
});
