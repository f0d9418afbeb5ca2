// Type declarations of 'attnlab/widget' (web/src/widget/index.js): custom
// elements that draw the chapter's live figures. Importing the module defines
// <attnlab-figure> and <attnlab-lab> (in a browser). Documentation:
// docs/guide/embedding.md.

/** The figures an <attnlab-figure> can draw: the chapter's Figs. 1–4 and the lineage demos. */
export type WidgetFigure = '1' | '2' | '3' | '4' | 'hopfield' | 'linear' | 'sqrtdk' | 'edge' | 'tokens';

export interface WidgetConfig {
  /** URL of a model directory (Hugging Face GPT-2 layout) for every element without a model attribute. */
  model?: string | URL | null;
  /** URL of attnlab.wasm (default: ../../dist/attnlab.wasm relative to the widget module). */
  wasm?: string | URL | null;
  /** URL of the widget's worker script, when the files were moved. */
  worker?: string | URL | null;
  /** The model's name in Fig. 1's title (default: the model directory's name). */
  modelName?: string | null;
  /** 'light' | 'dark', or 'auto'/null to follow prefers-color-scheme. An element's theme attribute wins. */
  theme?: 'light' | 'dark' | 'auto' | null;
  /** Directory of posters (scripts/widget-posters.mjs: <lang>/fig<n>[-full].svg) shown until a figure is live; false: none; null: the built-in model's, when no model is configured. */
  posters?: string | false | null;
}

export interface WidgetStats {
  /** Workers started on this page: 1 with any number of elements. */
  workersStarted: number;
  /** Model loads requested: 1 per distinct model URL. */
  modelLoads: number;
  /** Requests sent to the worker. */
  requests: number;
  workerAlive: boolean;
}

/** Set defaults for every widget on the page; returns the settings. Unknown keys throw a TypeError. */
export function configure(options?: WidgetConfig): WidgetConfig;
/** Counters of the page's shared worker. */
export function stats(): WidgetStats;

/** What both elements share: the custom-element callbacks the browser calls (not meant to be called by a page). */
declare class AttnlabElement extends HTMLElement {
  /** The attributes whose changes redraw the element. */
  static readonly observedAttributes: string[];
  /** Builds the element's contents once, starts it when it scrolls into view. */
  connectedCallback(): void;
  disconnectedCallback(): void;
  attributeChangedCallback(name: string, old: string | null, value: string | null): void;
}

/** <attnlab-figure figure text layer head row col lambda kind glyph noise beta dk feature m compare poster model model-name lang theme controls>; compare="full" (Fig. 1) adds A − Aᵀ with the mask off; poster: a picture shown until the figure is live ("" for none) */
export declare class AttnlabFigure extends AttnlabElement {}
/** <attnlab-lab text layer head row col lambda kind model model-name lang theme controls>: the four figures on one sentence. */
export declare class AttnlabLab extends AttnlabElement {}

/** 'Because the storm intensified , the ship finally sank .' — the default text. */
export const CHAPTER_SENTENCE: string;
/** Every value of the figure attribute. */
export const FIGURES: readonly WidgetFigure[];
export const VERSION: string;

/** Fired (bubbling, composed) by an element after each drawing. */
export interface AttnlabRenderEventDetail { figure: WidgetFigure | 'lab'; ms: number; renders: number }

declare global {
  interface HTMLElementTagNameMap {
    'attnlab-figure': AttnlabFigure;
    'attnlab-lab': AttnlabLab;
  }
  interface HTMLElementEventMap {
    'attnlab-render': CustomEvent<AttnlabRenderEventDetail>;
  }
  // eslint-disable-next-line no-var
  var attnlabWidget: { configure: typeof configure; stats: typeof stats; version: string } | undefined;
  // eslint-disable-next-line no-var
  var attnlabWidgetConfig: WidgetConfig | undefined;
}
