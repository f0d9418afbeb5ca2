// honest-figures.test.js — what the page's figures tell a reader about the mask
// (issue 18), in headless Chromium on the tiny model:
//   Fig. 1 says that under the causal mask the red of A − Aᵀ below the diagonal
//          is the mask, and one click draws A − Aᵀ of the full-mask run beside it
//          (and it is exported);
//   Fig. 3's null line is the null of the mask in use, and nothing reads 0.5 as
//          "forward causal flow";
//   a soft do on a cell the mask hides is refused by the model (EMASKED): the
//          in-model panel says so and Fig. 4 labels its soft panel display only.
//
//   npx vitest run --config tests/e2e/vitest.config.js tests/e2e/honest-figures.test.js

import { describe, it, expect, beforeAll } from 'vitest';
import { join } from 'node:path';
import { loadModel, nullDagScore, asymmetry } from '../../web/src/index.js';
import { ROOT, CHAPTER, TINY, afterRender, useBrowser, figMatrix, downloadOf } from './helpers.js';

// env.ref: the tiny model in Node; env.main: the page on it
const env = useBrowser({ ref: () => loadModel(join(ROOT, TINY)), open: `?model=${TINY}` });
let L, T;
beforeAll(() => {
  L = env.ref.config.nLayer;
  T = env.ref.tokenize(CHAPTER).tokens.length;
});

const cells = figMatrix;

const panelTitles = (page, fig) => page.evaluate((f) =>
  [...document.querySelectorAll(`#${f} .fig-svg [data-role="panel-title"]`)].map((n) => n.textContent), fig);

function expectClose(got, want, tol, what) {
  expect(got.length, what).toBe(want.length);
  for (let k = 0; k < want.length; k++) expect(Math.abs(got[k] - want[k]), `${what} [${k}]`).toBeLessThanOrEqual(tol);
}

describe('the figures say what the mask does (tiny model)', () => {
  it('Fig. 1 states, on the figure and in its text, that the lower half of A − Aᵀ shows the causal mask', async () => {
    const { page } = env.main;
    const titles = await panelTitles(page, 'fig1');
    expect(titles[1]).toMatch(/causal mask: red below = the mask/);
    expect((await page.textContent('#fig1 svg [data-role="suptitle"]')).replace(/\s+/g, ''))
      .toContain('UnderthecausalmaskAᵀis0belowthediagonal,soA−Aᵀisredtherewhateverthemodellearned:thathalfshowsthemask,notthemodel');
    expect(titles.join(' ')).not.toMatch(/flow dominates/);
    expect(await page.textContent('#fig1 .fig-text')).toMatch(/red below it by construction: that half shows the mask/);
    // and it is so: every lower cell of the drawn A − Aᵀ is ≥ 0
    const asym = await cells(page, 'fig1', 'asymmetry');
    for (let i = 1; i < T; i++) for (let j = 0; j < i; j++) expect(asym[i * T + j]).toBeGreaterThanOrEqual(0);
  });

  it('one click draws A − Aᵀ of the full-mask run beside it, and the exports carry it', async () => {
    const { page } = env.main;
    expect(await page.getAttribute('#fig1 svg', 'data-compare')).toBe('none');
    await page.click('#fig1-compare');
    await page.waitForSelector('#fig1 svg[data-compare="full"]');
    expect(await page.getAttribute('#fig1-compare', 'aria-pressed')).toBe('true');
    const full = env.ref.run(CHAPTER, { mask: 'full' });
    const want = Array.from(asymmetry(full.attention(L - 1, 'avg')));
    const got = await cells(page, 'fig1', 'asymmetry-full');
    expectClose(got, want, 1e-5, 'full-mask A − Aᵀ');
    // with the mask off the lower half is no longer all ≥ 0 on this model
    let negative = 0;
    for (let i = 1; i < T; i++) for (let j = 0; j < i; j++) if (want[i * T + j] < 0) negative += 1;
    expect(negative).toBeGreaterThan(0);
    expect((await panelTitles(page, 'fig1'))[2]).toMatch(/mask off/);
    expect((await page.textContent('#fig1 svg [data-role="suptitle"]')).replace(/\s+/g, '')).toContain('Right:thesamemodelandsentencewiththemaskoff');
    const svg = await downloadOf(page, () => page.click('#fig1 button[data-export="svg"]'));
    expect(svg.bytes.toString('utf8')).toMatch(/data-role="asymmetry-full"/);
    const json = await downloadOf(page, () => page.click('#export-json'));
    const data = JSON.parse(json.bytes.toString('utf8'));
    expectClose(data.compare_full_mask.asymmetry, want, 1e-6, 'exported full-mask A − Aᵀ');
    expect(data.layer_null_dag_scores).toHaveLength(L);
    // the button turns it off again
    await page.click('#fig1-compare');
    await page.waitForSelector('#fig1 svg[data-compare="none"]');
  });

  it("Fig. 3's null line is the null of the mask in use; no 0.5 reading", async () => {
    const { page } = env.main;
    const nul = async () => Number(await page.getAttribute('#fig3 svg', 'data-null-dag'));
    expect(await nul()).toBeCloseTo(nullDagScore(T), 5);
    const text = await page.textContent('#fig3');
    expect(text).not.toMatch(/forward causal flow|> 0\.5/);
    await afterRender(page, () => page.selectOption('#mask', 'full'));
    expect(await nul()).toBeCloseTo((T - 1) / (2 * T), 5);
    expect(await page.getAttribute('#fig3 svg', 'data-mask')).toBe('full');
    expect(await page.textContent('#fig3 [data-role="legend-null"]')).toMatch(/mask full/);
    // with no mask Fig. 1 says its asymmetry is informative
    expect((await panelTitles(page, 'fig1'))[1]).toMatch(/no mask/);
    await afterRender(page, () => page.selectOption('#mask', 'window'));
    await afterRender(page, () => page.fill('#window', '3'));
    expect(await nul()).toBeCloseTo(nullDagScore(T, 'window:3'), 5);
    expect(await nul()).toBeCloseTo(env.ref.run(CHAPTER, { mask: 'window:3' }).nullDagScore, 5);
    await afterRender(page, () => page.selectOption('#mask', 'causal'));
    expect(await nul()).toBeCloseTo(nullDagScore(T), 5);
  });

  it('a soft do on a masked cell: the model refuses it, the panel and Fig. 4 say so, nothing errors', async () => {
    const { page } = env.main;
    await afterRender(page, () => page.check('#kind-soft'));
    await afterRender(page, () => page.selectOption('#row', '1'));
    await afterRender(page, () => page.selectOption('#col', String(T - 1)));
    expect(await page.getAttribute('#inmodel', 'data-masked')).toBe('true');
    expect(await page.textContent('#inmodel-text')).toMatch(/EMASKED/);
    expect(await page.isVisible('#error')).toBe(false);
    expect(await page.getAttribute('#fig4 svg', 'data-masked')).toBe('true');
    expect((await panelTitles(page, 'fig4'))[1]).toMatch(/display only/);
    // a visible cell is an ordinary soft do again
    await afterRender(page, () => page.selectOption('#col', '0'));
    expect(await page.getAttribute('#inmodel', 'data-masked')).toBe('false');
    expect(await page.getAttribute('#fig4 svg', 'data-masked')).toBe('false');
    expect(env.main.issues.pageErrors).toEqual([]);
    expect(env.main.issues.consoleErrors).toEqual([]);
  });
});
