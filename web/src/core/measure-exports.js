// measure-exports.js — the methods of AttnlabWasm (wasm.js installs them) for the exports of the measures:
// the statistics (c/src/stats.c, evidence_set.c), the readings of a whole attention tensor (readings.c), the
// interventional measurements (evidence.c) and the circuit measures (circuits.c). One method per export, in
// the C's argument order, each returning the checked return code (AttnlabError on a negative one, EWASM on a
// trap, as every export of this instance).
//
// Unlike the rest of AttnlabWasm these take and give wasm addresses: the measures (web/src/evidence.js,
// circuits.js) keep their buffers across the parts of a stepwise computation and pass one run's output to the
// next call, so allocating, copying in and reading out stays theirs (w.malloc / w.scoped, w.readF32 …). Seeds
// are uint32 (`seed >>> 0`). No module outside core/ calls an export itself (tests/js/structure.test.js).

export const MEASURE_METHODS = {
  // ---- statistics (stats.c, evidence_set.c) ----
  /** alab_spearman: Spearman's rho of the n doubles at pa and pb, into the double at out. */
  spearman(out, pa, pb, n) { return this.check(this.fn.alab_spearman(out, pa, pb, n)); },
  /** alab_kendall_tau_b: Kendall's tau-b of the same, into the double at out. */
  kendallTauB(out, pa, pb, n) { return this.check(this.fn.alab_kendall_tau_b(out, pa, pb, n)); },
  /** alab_top_k_overlap: the overlap of the k largest of each, into the double at out. */
  topKOverlap(out, pa, pb, n, k) { return this.check(this.fn.alab_top_k_overlap(out, pa, pb, n, k)); },
  /** alab_bootstrap_mean: the mean of the finite doubles at px and its percentile interval, into three doubles. */
  bootstrapMean(mean, lo, hi, px, n, nBoot, level, seed) {
    return this.check(this.fn.alab_bootstrap_mean(mean, lo, hi, px, n, nBoot, level, seed >>> 0));
  },
  /** alab_corr_dataset_flat: a correlation over n inputs (offsets, readings, effects, groups), 11 doubles into out. */
  corrDatasetFlat(out, per, n, off, reading, effect, group, stat, eps, minPoints, nBoot, nPerm, level, seed) {
    return this.check(this.fn.alab_corr_dataset_flat(out, per, n, off, reading, effect, group, stat, eps, minPoints,
      nBoot, nPerm, level, seed >>> 0));
  },
  /** alab_edge_set_summary_flat: the edge-knockout verdict over n inputs' grids (arrays of addresses), 97 doubles into out. */
  edgeSetSummaryFlat(out, per, pA, pE, pL, pT, n, lastLayer, eps, nBoot, nPerm, level, seed) {
    return this.check(this.fn.alab_edge_set_summary_flat(out, per, pA, pE, pL, pT, n, lastLayer, eps, nBoot, nPerm, level,
      seed >>> 0));
  },
  /** alab_permute_within_groups: each input's doubles (offsets: nInputs + 1 ints) shuffled in place, within its groups (0: one). */
  permuteWithinGroups(values, offsets, groups, nInputs, seed) {
    return this.check(this.fn.alab_permute_within_groups(values, offsets, groups, nInputs, seed >>> 0));
  },

  // ---- readings of a whole attention tensor (readings.c) ----
  /** The address of the last run's attention (L, NH, T, T) in wasm memory, valid until the next run; 0 before any. */
  resultAttentionAt(m) { return this.fn.alab_result_attention(m); },
  /** alab_attention_rollout: rollout (T, T) of the attention at att. */
  attentionRollout(out, att, L, NH, T) { return this.check(this.fn.alab_attention_rollout(out, att, L, NH, T)); },
  /** alab_attention_flow: flow (T) into position `to` of the attention at att. */
  attentionFlow(out, att, L, NH, T, to) { return this.check(this.fn.alab_attention_flow(out, att, L, NH, T, to)); },

  // ---- interventional measurements (evidence.c) ----
  /** alab_edge_knockout: query rows [r0, r1) of the knockout grids A, E, E at the last position (each T x T). */
  edgeKnockout(pA, pE, pL, m, ids, T, layer, head, r0, r1, mode) {
    return this.check(this.fn.alab_edge_knockout(pA, pE, pL, m, ids, T, layer, head, r0, r1, mode));
  },
  /** alab_token_knockout: the effects (T) of removing tokens [j0, j1) in `mode`. */
  tokenKnockout(out, m, ids, T, j0, j1, mode, neutral) {
    return this.check(this.fn.alab_token_knockout(out, m, ids, T, j0, j1, mode, neutral));
  },
  /** alab_knockout_noise: the largest KL a no-op knockout of `layer` (-1: every layer) leaves, into the double at out. */
  knockoutNoise(out, m, ids, T, layer) { return this.check(this.fn.alab_knockout_noise(out, m, ids, T, layer)); },
  /** alab_capture_head_outputs: the head outputs (L, T, NH * HD) of a plain run. */
  captureHeadOutputs(out, m, ids, T) { return this.check(this.fn.alab_capture_head_outputs(out, m, ids, T)); },
  /** alab_head_importance_mode: each head's loss increase under an ablation mode (reference outputs ref, tRef positions). */
  headImportanceMode(delta, base, m, ids, T, mode, ref, tRef) {
    return this.check(this.fn.alab_head_importance_mode(delta, base, m, ids, T, mode, ref, tRef));
  },
  /** alab_pruning_curve_mode: the pruning curve (L*NH + 1) and its order for the deltas at delta. */
  pruningCurveMode(loss, order, m, ids, T, delta, mode, ref, tRef) {
    return this.check(this.fn.alab_pruning_curve_mode(loss, order, m, ids, T, delta, mode, ref, tRef));
  },
  /** alab_resample_draws: resample ablation over `draws` seeded windows of the reference: the mean, each draw, the offsets. */
  resampleDraws(delta, all, offsets, base, m, ids, T, ref, tRef, draws, seed) {
    return this.check(this.fn.alab_resample_draws(delta, all, offsets, base, m, ids, T, ref, tRef, draws, seed >>> 0));
  },
  /** alab_activation_patching: the residual (L x T) and head (L x NH) grids, and the two runs' logit differences. */
  activationPatching(resid, heads, ldClean, ldCorrupt, m, clean, corrupt, T, a, b) {
    return this.check(this.fn.alab_activation_patching(resid, heads, ldClean, ldCorrupt, m, clean, corrupt, T, a, b));
  },

  // ---- circuits (circuits.c) ----
  /** alab_pattern_value_patching: the 6 grids (L * NH each) of pattern / value / both, denoising then noising. */
  patternValuePatching(grid, ldClean, ldCorrupt, m, clean, corrupt, T, a, b) {
    return this.check(this.fn.alab_pattern_value_patching(grid, ldClean, ldCorrupt, m, clean, corrupt, T, a, b));
  },
  /** alab_path_patching: sender scores (L * NH) for each of nR receivers (three ints each at receivers). */
  pathPatching(out, ldClean, ldCorrupt, m, clean, corrupt, T, a, b, receivers, nR, direction, freezeMlp) {
    return this.check(this.fn.alab_path_patching(out, ldClean, ldCorrupt, m, clean, corrupt, T, a, b, receivers, nR, direction,
      freezeMlp));
  },
  /** alab_direct_logit_attribution: heads, sources, the other terms and ld along W_U[a] (- W_U[b] unless b = -1). */
  directLogitAttribution(heads, sources, terms, ld, m, ids, T, a, b) {
    return this.check(this.fn.alab_direct_logit_attribution(heads, sources, terms, ld, m, ids, T, a, b));
  },
  /** alab_value_norms: ||v_j W_O^h|| (L * NH * T) of a plain run, which stays the last run. */
  valueNorms(out, m, ids, T) { return this.check(this.fn.alab_value_norms(out, m, ids, T)); },
  /** alab_component_tracing: the attention and MLP grids (L * T each), the clean run's output restored. */
  componentTracing(attn, mlp, ldClean, ldCorrupt, m, clean, corrupt, T, a, b) {
    return this.check(this.fn.alab_component_tracing(attn, mlp, ldClean, ldCorrupt, m, clean, corrupt, T, a, b));
  },
  /** alab_composition_scores: Q, K, V composition ((L-1) * NH * NH each) and their null (9 doubles). */
  compositionScores(scores, nul, m, nNull, seed) { return this.check(this.fn.alab_composition_scores(scores, nul, m, nNull, seed >>> 0)); },
};
