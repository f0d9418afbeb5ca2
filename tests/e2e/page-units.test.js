// page-units.test.js — the page's pure modules, in Node (no browser): the run
// coalescing of runner.js, the KL divergence and attention change of compare.js,
// the model sources and error messages of models.js, and the two string tables.
//
//   npx vitest run --config tests/e2e/vitest.config.js page-units

import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { loadModel, AttnlabError } from '../../web/src/index.js';
import { Runner, defaultSelection, doIntervention, maskOption, defaultCandidates, DEFAULT_CANDIDATES } from '../../web/src/page/runner.js';
import { klDivergence, logSoftmax, attentionChange, attentionChangeSliced, rankMoves, describeTrend } from '../../web/src/page/compare.js';
import { builtinSource, pickModelFiles, explain, PageError, HUB_MODELS, MODEL_FILES } from '../../web/src/page/models.js';
import { STRINGS, translator } from '../../web/src/page/i18n.js';
import { LazyPanel } from '../../web/src/page/lazy-panels.js';
import { ROOT, CHAPTER, TINY } from './helpers.js';

const spec = (over = {}) => ({
  text: CHAPTER, layer: 2, head: 'avg', sel: null, kind: 'hard', lambda: 3, mask: 'causal', window: 4, ablate: [], ...over,
});

describe("the ΔA caption from its own numbers", () => {
  const f = (x) => x.toFixed(3);
  const say = (vals, l0, lang = 'en') => translator(lang)('deltaTrend', describeTrend(vals, l0), f);
  it('says a rise when the numbers rise (the case the old fixed caption contradicted)', () => {
    expect(describeTrend([0.024, 0.034, 0.021], 0).kind).toBe('peak');
    expect(say([0.024, 0.034, 0.021], 0)).toBe('In this run the change first grows, from 0.024 in layer 0 to 0.034 in layer 1, then falls to 0.021 in layer 2.');
    expect(say([0.024, 0.034, 0.021], 0, 'zh')).toContain('先增强');
  });
  it('fades, grows, one layer, and up-and-down', () => {
    expect(describeTrend([0.5, 0.2, 0.2, 0.1], 2)).toMatchObject({ kind: 'fades', firstLayer: 2, lastLayer: 5, first: 0.5, last: 0.1 });
    expect(say([0.5, 0.2, 0.1], 3)).toMatch(/fades .* 0\.500 in layer 3 to 0\.100 in layer 5/);
    expect(describeTrend([0.1, 0.2, 0.3], 0).kind).toBe('grows');
    expect(describeTrend([0.1], 5)).toMatchObject({ kind: 'one', firstLayer: 5 });
    expect(describeTrend([0.3, 0.1, 0.4, 0.2], 0)).toMatchObject({ kind: 'mixed', peak: 0.4, peakLayer: 2 });
    expect(describeTrend([0.3, 0.3, 0.3], 0).kind).toBe('fades'); // never rises
  });
});

describe('runner.js', () => {
  it('places the default do cell on "sank" (effect) and "storm" (cause), else the last row and column 2', () => {
    const toks = ['Because', ' the', ' storm', ' intensified', ' ,', ' the', ' ship', ' finally', ' sank', ' .'];
    expect(defaultSelection(toks)).toEqual({ row: 8, col: 2 });
    expect(defaultSelection(['a', 'b', 'c', 'd'])).toEqual({ row: 3, col: 2 });
    expect(defaultSelection(['a'])).toEqual({ row: 0, col: 0 });
  });

  it('tries the chapter\'s cause first, then the columns the last row attends to least', () => {
    expect(defaultCandidates(['a', ' storm', 'b', 'c'], [0.1, 0.5, 0.3, 0.1], 3)).toEqual([1, 0, 3]);
    expect(defaultCandidates(['a', 'b', 'c'], [0.2, 0.1, 0.7])).toEqual([1, 0, 2]);
  });

  it('maps the settings to the API\'s options', () => {
    expect(maskOption(spec({ mask: 'window', window: 3 }))).toBe('window:3');
    expect(maskOption(spec({ mask: 'full' }))).toBe('full');
    expect(doIntervention(spec(), { row: 8, col: 2 })).toEqual({ kind: 'hard', layer: 2, head: 'all', row: 8, col: 2 });
    expect(doIntervention(spec({ kind: 'soft', head: 1, lambda: 2.5 }), { row: 1, col: 0 }))
      .toEqual({ kind: 'soft', layer: 2, head: 1, row: 1, col: 0, lambda: 2.5 });
  });

  it('never has more than one request waiting: a burst of 50 requests runs the first and the last only', async () => {
    const m = await loadModel(join(ROOT, TINY));
    const calls = [];
    // the worker's async API over the main-thread model, each call a macrotask late
    const slow = {
      tokenize: async (t) => { calls.push('tokenize'); await new Promise((r) => setTimeout(r, 5)); return m.tokenize(t); },
      run: async (t, o) => { calls.push(o.interventions ? `do ${o.interventions[0].lambda}` : 'base'); await new Promise((r) => setTimeout(r, 5)); return m.run(t, o); },
    };
    const results = [];
    const busy = [];
    try {
      const done = new Promise((resolve) => {
        const runner = new Runner(slow, {
          onResult: (out) => results.push(out),
          onError: (e) => { throw e; },
          onBusy: (b) => { busy.push(b); if (!b) resolve(); },
        });
        for (let k = 0; k < 50; k++) runner.request(spec({ kind: 'soft', lambda: k / 5 }));
      });
      await done;
      const finals = results.filter((r) => !r.provisional);
      expect(finals.map((r) => r.spec.lambda)).toEqual([0, 49 / 5]);
      // one tokenize, one base run (cached for the second job), and for each job (no cell chosen yet) the
      // default-cell search: one do per candidate column, the strongest kept as the job's do run
      const k = Math.min(DEFAULT_CANDIDATES, results[0].base.T);
      expect(calls).toEqual(['tokenize', 'base', ...Array(k).fill('do 0'), ...Array(k).fill(`do ${49 / 5}`)]);
      expect(finals[1].defaultSearch.tried.length).toBe(k);
      // the first job had a newer request waiting: no provisional picture; the last one handed out its first
      // candidate (the chapter's cause) before the others ran, then the final result
      const prov = results.filter((r) => r.provisional);
      expect(prov.map((r) => r.spec.lambda)).toEqual([49 / 5]);
      expect(results.indexOf(prov[0])).toBe(1);
      expect(prov[0].defaultSearch.tried).toEqual([finals[1].defaultSearch.tried[0]]);
      expect(prov[0].sel.col).toBe(finals[1].defaultSearch.tried[0].col);
      expect(prov[0].after.logits).toBeInstanceOf(Float32Array);
      const wantFirst = m.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 2, head: 'all', row: prov[0].sel.row, col: prov[0].sel.col, lambda: 49 / 5 }] });
      expect(Array.from(prov[0].after.logits)).toEqual(Array.from(wantFirst.logits));
      expect(busy).toEqual([true, false]);
      expect(finals[1].base).toBe(finals[0].base);
      const want = m.run(CHAPTER, { interventions: [{ kind: 'soft', layer: 2, head: 'all', row: finals[1].sel.row, col: finals[1].sel.col, lambda: 49 / 5 }] });
      expect(Array.from(finals[1].after.logits)).toEqual(Array.from(want.logits));
      // a different mask reruns the base and adds the unmodified reference run
      const more = [];
      await new Promise((resolve) => {
        const runner = new Runner(slow, { onResult: (o) => more.push(o), onError: (e) => { throw e; }, onBusy: (b) => { if (!b) resolve(); } });
        runner.request(spec({ mask: 'full', ablate: [[0, 1]] }));
      });
      expect(more[0].plain).not.toBeNull();
      expect(Array.from(more[0].base.logits)).toEqual(Array.from(m.run(CHAPTER, { mask: 'full', ablate: [[0, 1]] }).logits));
    } finally {
      m.dispose();
    }
  });

  it('reports a failing run through onError and keeps serving later requests', async () => {
    const m = await loadModel(join(ROOT, TINY));
    const api = { tokenize: async (t) => m.tokenize(t), run: async (t, o) => m.run(t, o) };
    const errors = [], results = [];
    try {
      await new Promise((resolve) => {
        let n = 0;
        const runner = new Runner(api, {
          onResult: (o) => { results.push(o); },
          onError: (e) => { errors.push(e.code); },
          onBusy: (b) => { if (!b && ++n === 2) resolve(); else if (!b) runner.request(spec()); },
        });
        runner.request(spec({ text: '' }));
      });
      expect(errors).toEqual(['EEMPTY']);
      // the later request: its provisional first candidate, then its final result
      expect(results.map((r) => Boolean(r.provisional))).toEqual([true, false]);
    } finally {
      m.dispose();
    }
  });
});

describe('compare.js', () => {
  it('KL(P‖Q) is 0 for equal logits, positive otherwise, and matches the direct formula', () => {
    const p = Float32Array.from([1, 2, 3, -1]);
    const q = Float32Array.from([1.5, 0, 3, -2]);
    expect(klDivergence(p, p)).toBe(0);
    const lp = logSoftmax(p), lq = logSoftmax(q);
    let direct = 0;
    for (let k = 0; k < 4; k++) direct += Math.exp(lp[k]) * (lp[k] - lq[k]);
    expect(klDivergence(p, q)).toBeCloseTo(direct, 12);
    expect(klDivergence(p, q)).toBeGreaterThan(0);
    expect(() => klDivergence(p, Float32Array.from([1]))).toThrow(/differ/);
    const big = Float32Array.from([1000, 0]);
    expect(Number.isFinite(klDivergence(big, Float32Array.from([0, 1000])))).toBe(true);
  });

  it('KL over a GPT-2-sized vocabulary matches the float64 sum of p·(ln p − ln q), tiny and large, with -Infinity logits', () => {
    // the page's one-pass form against the two log-softmax arrays it replaced, on 50 257 random logits
    let s = 7;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
    const V = 50257;
    const p = Float32Array.from({ length: V }, () => 12 * rnd() - 6);
    for (const [scale, tol] of [[1e-4, 1e-13], [1, 1e-12], [8, 1e-11]]) {
      const q = Float32Array.from(p, (v) => v + scale * (rnd() - 0.5));
      q[5] = -Infinity;                    // a token Q rules out that P allows: the divergence is infinite
      const lp = logSoftmax(p), lq = logSoftmax(q);
      let direct = 0;
      for (let k = 0; k < V; k++) direct += Math.exp(lp[k]) * (lp[k] - lq[k]);
      expect(klDivergence(p, q)).toBe(Infinity);
      expect(direct).toBe(Infinity);
      q[5] = p[5];
      const lq2 = logSoftmax(q);
      direct = 0;
      for (let k = 0; k < V; k++) direct += Math.exp(lp[k]) * (lp[k] - lq2[k]);
      expect(Math.abs(klDivergence(p, q) - direct)).toBeLessThan(tol + 1e-9 * direct);
    }
    // a token P rules out adds nothing (0 · ln 0 = 0), whatever Q says of it
    const p2 = Float32Array.from([0, 1, -Infinity]), q2 = Float32Array.from([0.5, 1, 3]);
    const lp2 = logSoftmax(p2), lq2 = logSoftmax(q2);
    const d2 = Math.exp(lp2[0]) * (lp2[0] - lq2[0]) + Math.exp(lp2[1]) * (lp2[1] - lq2[1]);
    expect(klDivergence(p2, q2)).toBeCloseTo(d2, 14);
  });

  it('measures the attention change per layer: zero below the do layer, the one-hot row at it', async () => {
    const m = await loadModel(join(ROOT, TINY));
    try {
      const a = m.run(CHAPTER);
      const b = m.run(CHAPTER, { interventions: [{ kind: 'hard', layer: 1, head: 'all', row: 6, col: 3 }] });
      const ch = attentionChange(a, b);
      expect(ch.mean[0]).toBe(0);
      expect(ch.max[0]).toBe(0);
      expect(ch.mean[1]).toBeGreaterThan(0);
      expect(ch.mean[2]).toBeGreaterThan(0);
      const T = a.T;
      // at the do layer, the head average of row 6 became one-hot at 3
      expect(ch.avgDelta[1][6 * T + 3]).toBeCloseTo(1 - a.attention(1, 'avg')[6 * T + 3], 6);
      for (let i = 0; i < T; i++) if (i !== 6) for (let j = 0; j < T; j++) expect(ch.avgDelta[1][i * T + j]).toBe(0);
      // the page's big-T version (a layer a task) gives the same numbers, and stops when told
      let pauses = 0;
      const sliced = await attentionChangeSliced(a, b, async () => { pauses += 1; });
      expect(pauses).toBe(m.config.nLayer - 1);
      expect(sliced.mean).toEqual(ch.mean);
      expect(sliced.max).toEqual(ch.max);
      expect(sliced.avgDelta).toEqual(ch.avgDelta);
      let n = 0;
      expect(await attentionChangeSliced(a, b, async () => { n += 1; }, () => n >= 2)).toBe(null);
      expect(n).toBe(2);
      expect(() => attentionChange(a, m.run('Another text .'))).toThrow(/different texts/);
    } finally {
      m.dispose();
    }
  });

  it('says how tokens moved in the top list', () => {
    const before = [{ id: 1 }, { id: 2 }, { id: 3 }];
    const after = [{ id: 2 }, { id: 1 }, { id: 9 }];
    expect(rankMoves(before, after)).toEqual(['up', 'down', 'new']);
    expect(rankMoves(before, before)).toEqual(['same', 'same', 'same']);
  });
});

describe('models.js', () => {
  const base = 'http://localhost:8080/index.html';

  it('uses the built-in model unless ?model= names a path on this server', () => {
    expect(builtinSource('', base)).toMatchObject({ name: 'brown-gpt2', custom: false });
    expect(builtinSource('', base).url.href).toBe('http://localhost:8080/models/brown-gpt2/');
    expect(builtinSource('?model=/tests/fixtures/tiny', base)).toMatchObject({ name: 'tiny', custom: true });
    expect(builtinSource('?model=/tests/fixtures/tiny', base).url.href).toBe('http://localhost:8080/tests/fixtures/tiny/');
    for (const bad of ['?model=https://evil.example.com/m/', '?model=//evil.example.com/m/', '?model=models/x/', '?model=javascript:alert(1)']) {
      expect(() => builtinSource(bad, base), bad).toThrow(PageError);
    }
  });

  it('picks a model folder\'s files by name and names the missing ones', () => {
    const f = (name) => ({ name, size: 1 });
    const all = ['merges.txt', 'notes.md', 'model.safetensors', 'config.json', 'vocab.json'].map(f);
    expect(pickModelFiles(all).map((x) => x.name)).toEqual(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
    expect(MODEL_FILES).toEqual(['config.json', 'vocab.json', 'merges.txt', 'model.safetensors']);
    // another family's folder: tokenizer.json, its config, an index and its shards (in order), README left out
    const hf = ['model-00002-of-00002.safetensors', 'README.md', 'tokenizer.json', 'config.json', 'tokenizer_config.json',
                'model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'pytorch_model.bin'].map(f);
    expect(pickModelFiles(hf).map((x) => x.name)).toEqual(['config.json', 'tokenizer.json', 'tokenizer_config.json',
      'model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    // a path-like name (a folder's webkitRelativePath style) counts by its last part
    expect(pickModelFiles(['a/config.json', 'a/tokenizer.json', 'a/model.safetensors'].map(f)).length).toBe(3);
    for (const [given, missing] of [
      [['config.json', 'vocab.json'], ['model.safetensors (or model.safetensors.index.json and its shards)', 'vocab.json + merges.txt (or tokenizer.json)']],
      [['tokenizer.json', 'model.safetensors'], ['config.json']],
      [['config.json', 'tokenizer.json', 'model.safetensors.index.json'], ['model.safetensors (or model.safetensors.index.json and its shards)']],
    ]) {
      try {
        pickModelFiles(given.map(f));
        throw new Error('no throw');
      } catch (e) {
        expect(e).toBeInstanceOf(PageError);
        expect(e.missing).toEqual(missing);
      }
    }
  });

  it('knows the hub models by their Hugging Face URLs, their families and the files each needs', () => {
    expect(HUB_MODELS.distilgpt2.base).toBe('https://huggingface.co/distilbert/distilgpt2/resolve/main/');
    expect(HUB_MODELS.gpt2.base).toBe('https://huggingface.co/openai-community/gpt2/resolve/main/');
    expect(HUB_MODELS['pythia-70m'].base).toBe('https://huggingface.co/EleutherAI/pythia-70m/resolve/main/');
    expect(HUB_MODELS['smollm2-135m'].base).toBe('https://huggingface.co/HuggingFaceTB/SmolLM2-135M/resolve/main/');
    expect(HUB_MODELS['qwen2.5-0.5b'].base).toBe('https://huggingface.co/Qwen/Qwen2.5-0.5B/resolve/main/');
    expect(HUB_MODELS['qwen3-0.6b'].base).toBe('https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/');
    expect(HUB_MODELS['llama-3.2-1b'].base).toBe('https://huggingface.co/unsloth/Llama-3.2-1B/resolve/main/');
    expect(HUB_MODELS['tinyllama-1.1b'].base).toBe('https://huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0/resolve/main/');
    expect(HUB_MODELS['gemma-3-270m'].base).toBe('https://huggingface.co/unsloth/gemma-3-270m/resolve/main/');
    for (const m of Object.values(HUB_MODELS)) {
      const names = m.files.map((x) => x[0]);
      expect(names).toEqual(m.family === 'gpt2' ? MODEL_FILES : ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors']);
      expect(m.files.filter((x) => !x[1]).map((x) => x[0])).toEqual(m.family === 'gpt2' ? [] : ['tokenizer_config.json']);
    }
  });

  it('states each hub model\'s size as its published tensors times the bytes of its dtype', () => {
    const dirs = { 'pythia-70m': 'pythia-70m', 'smollm2-135m': 'smollm2-135m', 'qwen2.5-0.5b': 'qwen2.5-0.5b',
                   'qwen3-0.6b': 'qwen3-0.6b', 'llama-3.2-1b': 'llama-3.2-1b',
                   'tinyllama-1.1b': 'tinyllama-1.1b-chat-v0.6', 'gemma-3-270m': 'gemma-3-270m-it' };
    for (const [key, d] of Object.entries(dirs)) {
      const base = join(ROOT, 'tests/fixtures/configs', d);
      const cfg = JSON.parse(readFileSync(join(base, 'config.json'), 'utf8'));
      let n = 0;
      for (const line of readFileSync(join(base, 'tensors.txt'), 'utf8').split('\n').filter(Boolean)) {
        n += line.split(' ')[1].split(',').reduce((a, x) => a * Number(x), 1);
      }
      const bytes = n * ({ float16: 2, bfloat16: 2, float32: 4 })[cfg.torch_dtype];
      expect(Math.abs(HUB_MODELS[key].bytes - bytes) / bytes, key).toBeLessThan(0.005);
      expect(HUB_MODELS[key].family).toBe(cfg.model_type);
    }
  });

  it('turns every kind of failure into a readable sentence in both languages', () => {
    for (const lang of ['en', 'zh']) {
      const t = translator(lang);
      const cases = [
        [new PageError('network', 'Failed to fetch', { host: 'huggingface.co' }), lang === 'en' ? /Network error: huggingface\.co/ : /网络错误.*huggingface\.co/],
        [new PageError('http', 'HTTP 404', { status: 404, file: 'config.json' }), /404.*config\.json|config\.json.*404/],
        [new PageError('missing', 'x', { missing: ['merges.txt'] }), /merges\.txt/],
        [new AttnlabError('EFORMAT', 'safetensors header is not JSON'), /EFORMAT.*safetensors header is not JSON/],
        [new AttnlabError('EVOCAB', 'vocab.json is not a GPT-2 vocabulary'), /EVOCAB/],
        [new AttnlabError('ENOMEM', 'out of memory'), lang === 'en' ? /does not fit.*4 GB/ : /内存.*4 GB/],
        [new AttnlabError('ETOOLONG', 'too long'), /64/],
        [new AttnlabError('EEMPTY', 'empty'), lang === 'en' ? /Type some text/ : /请先输入文本/],
        [new AttnlabError('EWASM', 'trap'), /trap/],
        [new AttnlabError('EIO', 'the files given lack vocab.json, merges.txt (a model needs …)'), /vocab\.json, merges\.txt/],
        [new RangeError('Array buffer allocation failed'), lang === 'en' ? /does not fit/ : /内存/],
        [new Error('something odd'), /something odd/],
      ];
      for (const [e, re] of cases) expect(explain(e, t, { nPositions: 64 }), `${lang} ${e.code || e.kind || e.message}`).toMatch(re);
    }
  });
});

describe('i18n.js', () => {
  it('has every string in English and Chinese, with the same arguments', () => {
    const en = Object.keys(STRINGS.en).sort(), zh = Object.keys(STRINGS.zh).sort();
    expect(zh).toEqual(en);
    for (const k of en) {
      expect(typeof STRINGS.zh[k], k).toBe(typeof STRINGS.en[k]);
      if (typeof STRINGS.en[k] === 'function') expect(STRINGS.zh[k].length, k).toBe(STRINGS.en[k].length);
      else expect(STRINGS.zh[k].length, k).toBeGreaterThan(0);
    }
    expect(() => translator('en')('noSuchKey')).toThrow(/noSuchKey/);
  });

  it('every data-i18n key of index.html exists', async () => {
    const { readFileSync } = await import('node:fs');
    const html = readFileSync(join(ROOT, 'web/index.html'), 'utf8');
    const keys = [...html.matchAll(/data-i18n(?:-aria|-title)?="([^"]+)"/g)].map((m) => m[1]);
    expect(keys.length).toBeGreaterThan(30);
    for (const k of keys) expect(STRINGS.en[k], k).toBeDefined();
    // and the page has no inline script or style for the CSP to refuse
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
  });
});

describe('LazyPanel (lazy-panels.js): a stand-in until the panel is built', () => {
  const fake = () => {
    const calls = [];
    return { calls, setModel: (...a) => calls.push(['setModel', ...a]), sentenceChanged: () => calls.push(['sentence']), setLang: () => calls.push(['lang']) };
  };
  it('keeps only the last model before the build, applies it then with the sentence, and passes calls on after', () => {
    let made = 0;
    const panel = fake();
    const lazy = new LazyPanel(() => { made += 1; return panel; });
    lazy.sentenceChanged();
    lazy.setLang();
    lazy.setModel('m1', { nLayer: 1 }, 'one');
    lazy.setModel('m2', { nLayer: 2 }, 'two');
    expect(made).toBe(0);
    expect(lazy.built).toBe(false);
    expect(lazy.build()).toBe(panel);
    expect(lazy.build()).toBe(panel);
    expect(made).toBe(1);
    expect(panel.calls).toEqual([['setModel', 'm2', { nLayer: 2 }, 'two'], ['sentence']]);
    lazy.setLang();
    lazy.sentenceChanged();
    lazy.setModel('m3', {}, 'three');
    expect(panel.calls.slice(2)).toEqual([['lang'], ['sentence'], ['setModel', 'm3', {}, 'three']]);
  });
  it('built before any model: nothing is replayed', () => {
    const panel = fake();
    const lazy = new LazyPanel(() => panel);
    lazy.build();
    expect(panel.calls).toEqual([]);
  });
});
