# scripts/docs.mk — the embeddable widget and the VitePress site,
# -included by the Makefile.
#   make widget      web/dist/widget/attnlab-widget.js (+ its worker): 'attnlab/widget' prebuilt, no build step for authors
#   make docs        the site: docs/.vitepress/dist/ (npm run docs:build)
#   make docs-dev    VitePress dev server (npm run docs:dev)
#   make test-docs   the browser tests of the widget, the plain-HTML example and the built site
# docs/public/attnlab/ (the wasm and the built-in model) is copied at build time,
# docs/public/figures/ (the chapter's four figures as static SVG and PNG, in Chinese)
# is drawn by `npm run figures`; both are gitignored (their own .gitignore files).

.PHONY: widget docs docs-prep docs-dev test-docs docs-numbers

# Every number the docs quote about the built-in model or a seeded demo, in one
# script: writes docs/generated/*.md (included by the pages) and numbers.json.
# Run it after retraining the model; tests/js/docs-numbers.test.js fails while they are stale.
docs-numbers: web/dist/attnlab.wasm $(B)/attnlab
	node scripts/docs-numbers.mjs
	node scripts/evidence-sets-numbers.mjs
	node scripts/circuits-numbers.mjs

WIDGET_OUT := web/dist/widget/attnlab-widget.js
widget: $(WIDGET_OUT)
# the posters: the default view of each model figure, drawn by the widget's own figure code from the
# built-in model (scripts/widget-posters.mjs), shown by an element until its live figure replaces it
$(WIDGET_OUT): web/dist/attnlab.wasm web/dist/attnlab-mt.wasm $(shell find web/src -type f) web/src/widget/vite.config.js \
               scripts/widget-posters.mjs $(wildcard models/brown-gpt2/*)
	npx vite build --config web/src/widget/vite.config.js
	@if [ -f models/brown-gpt2/model.safetensors ]; then node scripts/widget-posters.mjs --out web/dist/widget/posters; fi

# The files the site serves beside its pages: the wasm and the built-in model
# (the widget is configured to fetch them from /attnlab/ in docs/.vitepress/theme).
DOCS_PUBLIC := docs/public/attnlab
DOCS_FIGS := docs/public/figures/ch09_causal_fig1_attention_asymmetry.svg
CHAPTER_TEXT := Because the storm intensified , the ship finally sank .
$(DOCS_FIGS): models/brown-gpt2/model.safetensors scripts/figures.mjs $(wildcard web/src/figures/*.js) web/dist/attnlab.wasm
	@mkdir -p docs/public/figures
	node scripts/figures.mjs --text "$(CHAPTER_TEXT)" --out docs/public/figures --lang zh
	printf '*\n' > docs/public/figures/.gitignore

# (the widget looks for the relaxed-SIMD builds beside attnlab.wasm: docs/architecture.md "Two kernel builds")
docs-prep: web/dist/attnlab.wasm web/dist/attnlab-mt.wasm web/dist/attnlab-relaxed.wasm web/dist/attnlab-relaxed-mt.wasm \
           $(DOCS_FIGS) $(WIDGET_OUT)
	@mkdir -p $(DOCS_PUBLIC)/models/brown-gpt2
	cp -p web/dist/attnlab.wasm web/dist/attnlab-mt.wasm web/dist/attnlab-relaxed.wasm web/dist/attnlab-relaxed-mt.wasm \
	      $(DOCS_PUBLIC)/
	rm -rf $(DOCS_PUBLIC)/posters
	if [ -d web/dist/widget/posters ]; then cp -rp web/dist/widget/posters $(DOCS_PUBLIC)/posters; fi
	cp -p models/brown-gpt2/config.json models/brown-gpt2/model.safetensors models/brown-gpt2/vocab.json \
	      models/brown-gpt2/merges.txt $(DOCS_PUBLIC)/models/brown-gpt2/
	rm -f $(DOCS_PUBLIC)/models/brown-gpt2/README.md
	printf '*\n' > $(DOCS_PUBLIC)/.gitignore

docs: docs-prep
	npx vitepress build docs

docs-dev: docs-prep
	npx vitepress dev docs

test-docs: wasm widget docs
	npx vitest run --config tests/e2e/vitest.config.js tests/e2e/widget tests/e2e/docs

# `make test` runs these browser tests inside test-e2e (it runs every tests/e2e/*.test.js):
# the widget and the site are built first.
test-e2e: widget docs
