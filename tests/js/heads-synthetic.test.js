// heads-synthetic.test.js — the role scores on a GPT-2 checkpoint whose
// weights are constructed by hand to contain two known circuits, run through
// the real loader and forward pass (wasm):
//   layer 0, head 0: a previous-token head (query = position i shifted to
//     i − 1, key = position j) that copies the previous token's identity into
//     a "previous token" slot of the residual stream;
//   layer 1, head 0: an induction head (query = the current token, key = the
//     previous-token slot), which attends from the second occurrence of a token
//     to the position after its first occurrence.
// Every other head has zero weights (uniform attention, zero output) and the
// MLPs are zero. The test checks that headRoles finds exactly these heads with
// scores ≈ 1, and that weight edits (interventions, rung 2) break them the way the construction says.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../../web/src/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TINY = join(ROOT, 'tests/fixtures/tiny');

// Residual stream layout (C = 128): token one-hot in [TOK, TOK + NT), position
// one-hot in [POS, POS + P), previous-token slot in [PREV, PREV + NT), the
// rest unused. Four heads of HS = 32.
const V = 1257, C = 128, NH = 4, HS = C / NH, L = 2, P = 32, NT = 24;
const TOK = 0, POS = 32, PREV = 64;
const W_PREV = 3;   // query weight of the previous-token head (score gap ≈ 3 · 65 / √32 ≈ 34)
const W_IND = 5;    // query weight of the induction head (gap ≈ 5 · 44 / √32 ≈ 39)
const NULL_DIM = 31; // a head dim of the induction head used to push position 0 away
const M0 = 50;      // how far

function safetensors(tensors) {
  const header = {};
  let off = 0;
  for (const [name, shape, data] of tensors) {
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + data.byteLength] };
    off += data.byteLength;
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const out = new Uint8Array(8 + json.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  let p = 8 + json.length;
  for (const [, , data] of tensors) { out.set(new Uint8Array(data.buffer), p); p += data.byteLength; }
  return out;
}

function inductionCheckpoint() {
  const t = [];
  const wte = new Float32Array(V * C), wpe = new Float32Array(P * C);
  for (let v = 0; v < NT; v++) wte[v * C + TOK + v] = 1;
  for (let i = 0; i < P; i++) wpe[i * C + POS + i] = 1;
  t.push(['wte.weight', [V, C], wte], ['wpe.weight', [P, C], wpe]);
  const ones = () => new Float32Array(C).fill(1);
  for (let l = 0; l < L; l++) {
    const attn = new Float32Array(C * 3 * C), bias = new Float32Array(3 * C), proj = new Float32Array(C * C);
    // Conv1D layout: W[in][out]; q columns h·HS + d, k columns C + h·HS + d, v columns 2C + h·HS + d
    const W = (inp, out, x) => { attn[inp * 3 * C + out] = x; };
    if (l === 0) { // head 0: previous token
      for (let i = 1; i < P; i++) W(POS + i, 0 * HS + (i - 1), W_PREV); // q_i = e_{i−1}
      for (let j = 0; j < P; j++) W(POS + j, C + 0 * HS + j, 1);         // k_j = e_j
      for (let v = 0; v < NT; v++) W(TOK + v, 2 * C + 0 * HS + v, 1);    // v_j = token of j
      for (let v = 0; v < NT; v++) proj[(0 * HS + v) * C + PREV + v] = 1; // → previous-token slot
    } else { // head 0: induction
      for (let v = 0; v < NT; v++) W(TOK + v, 0 * HS + v, W_IND);        // q_i = token of i
      for (let v = 0; v < NT; v++) W(PREV + v, C + 0 * HS + v, 1);       // k_j = previous token of j
      W(POS + 0, C + 0 * HS + NULL_DIM, -M0);                           // position 0 has no previous token
      bias[0 * HS + NULL_DIM] = 1;
    }
    t.push([`h.${l}.ln_1.weight`, [C], ones()], [`h.${l}.ln_1.bias`, [C], new Float32Array(C)],
      [`h.${l}.attn.c_attn.weight`, [C, 3 * C], attn], [`h.${l}.attn.c_attn.bias`, [3 * C], bias],
      [`h.${l}.attn.c_proj.weight`, [C, C], proj], [`h.${l}.attn.c_proj.bias`, [C], new Float32Array(C)],
      [`h.${l}.ln_2.weight`, [C], ones()], [`h.${l}.ln_2.bias`, [C], new Float32Array(C)],
      [`h.${l}.mlp.c_fc.weight`, [C, 4 * C], new Float32Array(C * 4 * C)], [`h.${l}.mlp.c_fc.bias`, [4 * C], new Float32Array(4 * C)],
      [`h.${l}.mlp.c_proj.weight`, [4 * C, C], new Float32Array(4 * C * C)], [`h.${l}.mlp.c_proj.bias`, [C], new Float32Array(C)]);
  }
  t.push(['ln_f.weight', [C], ones()], ['ln_f.bias', [C], new Float32Array(C)]);
  const config = { model_type: 'gpt2', vocab_size: V, n_positions: P, n_ctx: P, n_embd: C, n_layer: L, n_head: NH,
                   layer_norm_epsilon: 1e-5, activation_function: 'gelu_new' };
  return {
    config: new TextEncoder().encode(JSON.stringify(config)),
    safetensors: safetensors(t),
    vocab: new Uint8Array(readFileSync(join(TINY, 'vocab.json'))),
    merges: new Uint8Array(readFileSync(join(TINY, 'merges.txt'))),
  };
}

describe('role scores on a checkpoint built with a previous-token head and an induction head', () => {
  let m;
  // r: 16 distinct tokens of [0, NT), shuffled; the input is r ++ r
  const r = [7, 19, 2, 11, 23, 0, 14, 5, 9, 16, 3, 21, 12, 1, 18, 6];
  const ids = [...r, ...r];
  beforeAll(async () => { m = await loadModel(inductionCheckpoint()); });
  afterAll(() => m && m.dispose());

  it('the previous-token head attends to i − 1 and the induction head to the token after the first occurrence', () => {
    const res = m.run(ids);
    const T = ids.length, n = r.length;
    const A0 = res.attention(0, 0), A1 = res.attention(1, 0);
    for (let i = 1; i < T; i++) expect(A0[i * T + i - 1]).toBeGreaterThan(0.999);
    for (let i = n; i < T; i++) expect(A1[i * T + i - n + 1]).toBeGreaterThan(0.999);
  });

  it('headRoles names them: prev-token score of L0H0 and induction score of L1H0 are 1 to 1e-4, every other head far below', () => {
    const roles = m.headRoles(ids, { top: 1 });
    expect(roles.inductionDefined).toBe(true);
    expect(roles.prev[0 * NH + 0]).toBeGreaterThan(1 - 1e-4);
    expect(roles.induction[1 * NH + 0]).toBeGreaterThan(1 - 1e-4);
    expect(roles.top.prev[0]).toMatchObject({ layer: 0, head: 0 });
    expect(roles.top.induction[0]).toMatchObject({ layer: 1, head: 0 });
    // uniform heads: prev score = mean over i ≥ 1 of 1/(i+1), induction = mean over i ≥ n of 1/(i+1)
    const T = ids.length, n = r.length;
    let up = 0, ui = 0;
    for (let i = 1; i < T; i++) up += 1 / (i + 1);
    for (let i = n; i < T; i++) ui += 1 / (i + 1);
    for (let h = 1; h < NH; h++) {
      expect(roles.prev[0 * NH + h]).toBeCloseTo(up / (T - 1), 5);
      expect(roles.induction[1 * NH + h]).toBeCloseTo(ui / n, 5);
    }
    // the previous-token head is not an induction head, nor the induction head a previous-token head
    expect(roles.induction[0]).toBeLessThan(0.1);
    expect(roles.prev[1 * NH + 0]).toBeLessThan(0.1);
  });

  it('a weight edit (rung 2) breaks the circuit as constructed: W_K of the previous-token head → 0 kills induction downstream', () => {
    const kill = { interventions: [{ kind: 'scaleK', layer: 0, head: 0, alpha: 0 }] };
    const res = m.run(ids, kill);
    const T = ids.length, n = r.length;
    const A1 = res.attention(1, 0);
    let ind = 0;
    for (let i = n; i < T; i++) ind += A1[i * T + i - n + 1];
    expect(ind / n).toBeLessThan(0.5);
    // ablating the induction head's upstream head has the same kind of effect (rung 2)
    const abl = m.run(ids, { ablate: [[0, 0]] }).attention(1, 0);
    let ind2 = 0;
    for (let i = n; i < T; i++) ind2 += abl[i * T + i - n + 1];
    expect(ind2 / n).toBeLessThan(0.5);
  });
});
