# tests/fuzz/fuzz.mk — fuzzing and sanitizers (included by the Makefile).
#
#   make fuzz              every libFuzzer target for FUZZ_SECONDS (default 600) each;
#                          `make -j2 fuzz` runs two at a time. Logs, corpora and any
#                          crash inputs go to build/fuzz/; the summary table to
#                          build/fuzz/summary.md (the figures of docs/BENCHMARKS.md).
#   make test-fuzz-smoke   every target for FUZZ_SMOKE_SECONDS (default 30) each
#   make test-asan         the cmocka suite under AddressSanitizer + UBSan (clang)
#   make test-valgrind     the CLI on the fixtures under valgrind memcheck
#   make test-tsan         the thread pool and the threaded forward under ThreadSanitizer
#   make fuzz-seeds        regenerate tests/fuzz/seeds and tests/fuzz/mini
#
# Needs (Debian): clang-14 and libclang-rt-14-dev (libFuzzer, ASan, UBSan
# runtimes), valgrind, libcmocka-dev.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_TARGETS := fuzz_json fuzz_safetensors fuzz_bpe_load fuzz_bpe_encode fuzz_model_load fuzz_shard_index fuzz_tokenizer_json \
                fuzz_backward fuzz_lines
FZ := $(B)/fuzz
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 -march=native -std=c11 -D_POSIX_C_SOURCE=200809L -Ic/include -Ic/src \
               -DALAB_ROOT='"$(CURDIR)"' $(SAN)
# per input: 10 s is a hang; 2 GB is a leak or an unbounded allocation
FUZZ_RUN_FLAGS := -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1
FUZZ_DICT_fuzz_json := -dict=tests/fuzz/json.dict
FUZZ_DICT_fuzz_safetensors := -dict=tests/fuzz/json.dict
FUZZ_DICT_fuzz_model_load := -dict=tests/fuzz/json.dict
FUZZ_DICT_fuzz_shard_index := -dict=tests/fuzz/json.dict
FUZZ_DICT_fuzz_tokenizer_json := -dict=tests/fuzz/json.dict
# NATIVE_SRC: the targets read their fixtures with io.c's alab_read_whole_file
FUZZ_CORE_OBJ := $(patsubst c/src/%.c,$(FZ)/obj/%.o,$(NATIVE_SRC))
# built by pattern rules, but kept (make would delete them as intermediates)
.SECONDARY: $(FUZZ_CORE_OBJ) $(addprefix $(FZ)/,$(FUZZ_TARGETS))

.PHONY: fuzz fuzz-build test-fuzz-smoke test-asan test-tsan test-valgrind fuzz-seeds
test-extra: test-asan test-tsan test-fuzz-smoke test-valgrind

$(FZ)/obj/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FZ)/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(FUZZ_CORE_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_CORE_OBJ) -lm -o $@

fuzz-build: $(addprefix $(FZ)/,$(FUZZ_TARGETS))

# One run: fresh inputs go to build/fuzz/<mode>-corpus/<target>, the committed
# seeds are only read. A crash, sanitizer report, leak or timeout ends the run
# with a non-zero status and leaves the input in build/fuzz/crashes/.
define fuzz_run
	@mkdir -p $(FZ)/$(2)-corpus/$(1) $(FZ)/crashes
	@echo "== $(1): $(3) s"
	@nice -n 10 $(FZ)/$(1) $(FUZZ_RUN_FLAGS) $(FUZZ_DICT_$(1)) -max_total_time=$(3) \
	    -artifact_prefix=$(FZ)/crashes/$(1)- $(FZ)/$(2)-corpus/$(1) tests/fuzz/seeds/$(1) \
	    > $(FZ)/$(1).$(2).log 2>&1 \
	  || { tail -40 $(FZ)/$(1).$(2).log; echo "FUZZ FAILURE in $(1): see $(FZ)/$(1).$(2).log and $(FZ)/crashes/"; exit 1; }
	@grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|^stat::average_exec_per_sec' $(FZ)/$(1).$(2).log | tr '\n' ' '; echo
endef

FUZZ_LONG := $(addprefix fuzz-long-,$(FUZZ_TARGETS))
FUZZ_SMOKE := $(addprefix fuzz-smoke-,$(FUZZ_TARGETS))
.PHONY: $(FUZZ_LONG) $(FUZZ_SMOKE)
$(FUZZ_LONG): fuzz-long-%: $(FZ)/%
	$(call fuzz_run,$*,long,$(FUZZ_SECONDS))
$(FUZZ_SMOKE): fuzz-smoke-%: $(FZ)/%
	$(call fuzz_run,$*,smoke,$(FUZZ_SMOKE_SECONDS))

fuzz: $(FUZZ_LONG)
	bash tests/fuzz/summary.sh long $(FUZZ_TARGETS) > $(FZ)/summary.md
	cat $(FZ)/summary.md

test-fuzz-smoke: $(FUZZ_SMOKE)
	bash tests/fuzz/summary.sh smoke $(FUZZ_TARGETS)

fuzz-seeds:
	/usr/bin/python3 tests/fuzz/make_seeds.py

# ---- the cmocka suite under AddressSanitizer + UndefinedBehaviorSanitizer ----
ASAN_DIR := $(B)/asan
ASAN_CFLAGS := -g -O2 -march=native -std=c11 -D_POSIX_C_SOURCE=200809L -Ic/include -Ic/src -Itests/c $(SAN)
ASAN_OBJ := $(patsubst c/src/%.c,$(ASAN_DIR)/obj/%.o,$(NATIVE_SRC))
ASAN_TESTS := $(patsubst tests/c/%.c,$(ASAN_DIR)/%,$(TEST_SRC))
.SECONDARY: $(ASAN_OBJ)

$(ASAN_DIR)/obj/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(ASAN_CFLAGS) -c $< -o $@

$(ASAN_DIR)/test_%: tests/c/test_%.c $(wildcard tests/c/*.h) $(ASAN_OBJ)
	$(FUZZ_CC) $(ASAN_CFLAGS) $< $(ASAN_OBJ) -lcmocka -lm -o $@

# the tokenizer.json test reads files made from GPT-2's (see the Makefile)
$(ASAN_DIR)/test_tokenizer_json: $(B)/fixtures/gpt2-tokenizer.json $(B)/fixtures/gpt2-digits-tokenizer.json

# one target per suite (make -j2 -Otarget runs two at once, each one's output whole)
RUN_ASAN := $(patsubst $(ASAN_DIR)/%,run-asan-%,$(ASAN_TESTS))
.PHONY: $(RUN_ASAN)
$(RUN_ASAN): run-asan-%: $(ASAN_DIR)/%
	@echo "== asan $<"; ATTNLAB_ROOT=$(CURDIR) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $<
test-asan: $(RUN_ASAN)

# ---- ThreadSanitizer: the pool's protocol (c/src/parallel.c) and the threaded forward ----
TSAN_DIR := $(B)/tsan
TSAN_CFLAGS := -g -O1 -march=native -std=c11 -pthread -D_POSIX_C_SOURCE=200809L -Ic/include -Ic/src -Itests/c \
               -fsanitize=thread -fno-omit-frame-pointer
TSAN_OBJ := $(patsubst c/src/%.c,$(TSAN_DIR)/obj/%.o,$(NATIVE_SRC))
.SECONDARY: $(TSAN_OBJ)
$(TSAN_DIR)/obj/%.o: c/src/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(TSAN_CFLAGS) -c $< -o $@
$(TSAN_DIR)/test_parallel: tests/c/test_parallel.c $(wildcard tests/c/*.h) $(TSAN_OBJ)
	$(FUZZ_CC) $(TSAN_CFLAGS) $< $(TSAN_OBJ) -lcmocka -lm -o $@
test-tsan: $(TSAN_DIR)/test_parallel
	ATTNLAB_ROOT=$(CURDIR) TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $<

# ---- the CLI under valgrind memcheck -----------------------------------------
VALGRIND := valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            --show-leak-kinds=definite,indirect
VG_TEXT := Because the storm intensified , the ship finally sank .
VG_BAD := $(B)/valgrind-bad
# valgrind 3.19 decodes AVX2 but not AVX-512, which -march=native emits on CPUs that have it
# (gcc vectorises memset with it): the binary under test is built without AVX-512.
VG_CLI := $(B)/vg/attnlab
$(VG_CLI): $(CLI_SRC) $(CLI_HDR) $(NATIVE_SRC) $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -mno-avx512f -g -DALAB_DEFAULT_MODEL_DIR='"$(abspath models/brown-gpt2)"' $(CLI_SRC) $(NATIVE_SRC) $(LDLIBS) -o $@
test-valgrind: $(VG_CLI)
	@set -e; for d in truncated png; do mkdir -p $(VG_BAD)/$$d; \
	  cp tests/fixtures/tiny/{config.json,vocab.json,merges.txt} $(VG_BAD)/$$d/; done; \
	head -c 100000 tests/fixtures/tiny/model.safetensors > $(VG_BAD)/truncated/model.safetensors; \
	cp docs/img/page.png $(VG_BAD)/png/model.safetensors
	@set -e; vg() { echo "== valgrind attnlab $$*"; $(VALGRIND) $(VG_CLI) "$$@" > /dev/null; }; \
	vg run --model tests/fixtures/tiny --text "$(VG_TEXT)" --json; \
	vg run --model tests/fixtures/tiny-f16 --text "$(VG_TEXT)" --do 2,all,9,2,hard --do 1,0,5,3,soft,3.5 \
	   --ablate 0.1,2.3 --mask window:4 --capture 2,1 --top 5 --json; \
	vg run --model tests/fixtures/tiny-bf16 --text "$(VG_TEXT)" --mask full --scale 0 --json; \
	vg run --model tests/fixtures/tiny --text "$(VG_TEXT)" --threads 3 --do 2,all,9,2,hard --json; \
	vg run --model tests/fixtures/tiny-prefixed --text $$'a\xffb \xe2\x82 \xc3\xa9' --json; \
	vg tokenize --model tests/fixtures/tiny --text "$(VG_TEXT)" --json; \
	vg generate --model tests/fixtures/tiny --text "$(VG_TEXT)" --max-new 5 --temperature 0.8 --top-k 20 --seed 7 --json; \
	vg run --model tests/fuzz/mini --text "the thin" --json; \
	for bad in "run --model tests/fixtures/tiny --text 'the storm sank' --do 9,0,0,0,hard --json" \
	           "run --model tests/fixtures/tiny --text x --do 0,0,0,0,soft,nan --json" \
	           "run --model $(VG_BAD)/truncated --text x --json" \
	           "run --model $(VG_BAD)/png --text x --json" \
	           "run --model /nonexistent --text x --json" \
	           "run --model tests/fixtures/tiny --text '' --json"; do \
	  echo "== valgrind attnlab $$bad (must fail cleanly)"; \
	  set +e; eval $(VALGRIND) $(VG_CLI) $$bad > /dev/null 2> $(B)/vg.err; rc=$$?; set -e; \
	  if [ $$rc -eq 0 ]; then echo "expected a failure"; exit 1; fi; \
	  if grep -q '^==[0-9]*==' $(B)/vg.err; then cat $(B)/vg.err; exit 1; fi; \
	  head -1 $(B)/vg.err; \
	done
