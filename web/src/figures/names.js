// names.js — file names of the chapter's figures (safe to import anywhere; the page
// uses them for downloads, the CLI and export.js for files).

/** Base names as the chapter's script saves them (add .svg / .png). */
export const FIGURE_FILES = Object.freeze({
  fig1: 'ch09_causal_fig1_attention_asymmetry',
  fig2: 'ch09_causal_fig2_outer_product',
  fig3: 'ch09_causal_fig3_dag',
  fig4: 'ch09_causal_fig4_do_intervention',
});

/** The chapter saves at dpi=150; our SVG user unit is a 96-dpi pixel. */
export const CHAPTER_SCALE = 150 / 96;
