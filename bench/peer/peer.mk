# bench/peer/peer.mk — attnlab against ONNX Runtime Web on the same weights, for GPT-2 and the other families.
# Included by the top-level Makefile (uses its B, EMCC and the wasm target).
#
#   make bench-peer                     bench-peer-gpt2, then bench-peer-families
#   make bench-peer-gpt2                distilgpt2-shaped f32, one thread each, T = 11, 32, 128, 512
#   make bench-peer-gpt2 PEER_RUNS=20 PEER_T=11,128
#   make bench-peer-families            SmolLM2-135M-shaped (llama) and Pythia-160m-shaped (gpt_neox) f32, one thread,
#                                       T = 11, 128 (PEER_FAMILY_T), then their KV-cache decode (bench-decode-families)
#   make bench-peer-families PEER_FAMILIES=smollm2-135m PEER_RUNS=9
#   make bench-peer-families PEER_WASM=web/dist/attnlab-relaxed.wasm PEER_DECODE=0   the relaxed build, no decode
#   make bench-peer-relaxed3 PEER_RUNS=9  the relaxed build, the three shapes at T = 11 and 128, 3 rounds
#   make profile-peer                   V8 CPU profile of the relaxed build per wasm function, the three shapes
#   make bench-peer-threads             2 threads each: attnlab-mt.wasm against ORT-web (see bench/peer/README.md)
#   make bench-threads                  attnlab alone, 1 against 2 threads (BENCH_THREADS=n)
#   make bench-decode DECODE_THREADS=2  generation with the KV cache, on 2 threads
#
# Needs PyTorch once (Debian: apt-get install python3-torch libopenblas0-pthread) to write the checkpoints
# (tests/ref/make_checkpoint.py, tests/ref/export_onnx_families.py checkpoint) and their ONNX exports
# (tests/ref/export_onnx.py, tests/ref/export_onnx_families.py export); all are cached in build/bench/.

PEER_PY     ?= /usr/bin/python3
PEER_MODEL  := $(B)/bench/distilgpt2
PEER_ONNX   := $(B)/bench/peer/distilgpt2.onnx
PEER_RUNS   ?= 15
PEER_RUNS_LONG ?= 7
PEER_T      ?= 11,32,128,512
PEER_TORCH_HINT := PyTorch is needed once to write the benchmark model: apt-get install python3-torch libopenblas0-pthread

$(PEER_MODEL)/model.safetensors:
	@$(PEER_PY) -c 'import torch' 2>/dev/null || { echo "$(PEER_TORCH_HINT)"; exit 1; }
	OMP_NUM_THREADS=1 $(PEER_PY) tests/ref/make_checkpoint.py --shape distilgpt2 --dtype f32 --seed 1234 --out $(PEER_MODEL)

$(PEER_ONNX): $(PEER_MODEL)/model.safetensors tests/ref/export_onnx.py
	@$(PEER_PY) -c 'import torch' 2>/dev/null || { echo "$(PEER_TORCH_HINT)"; exit 1; }
	@mkdir -p $(dir $@)
	OMP_NUM_THREADS=1 $(PEER_PY) -W ignore tests/ref/export_onnx.py $(PEER_MODEL) $@

.PHONY: bench-peer bench-peer-gpt2 bench-peer-threads
bench-peer: bench-peer-gpt2 bench-peer-families

bench-peer-gpt2: web/dist/attnlab.wasm $(PEER_ONNX)
	node bench/peer/peer_bench.mjs --model $(PEER_MODEL) --onnx $(PEER_ONNX) --runs $(PEER_RUNS) \
	  --runs-long $(PEER_RUNS_LONG) --T $(PEER_T) --threads 1 --json $(B)/bench/peer/result-1thread.json

bench-peer-threads: web/dist/attnlab.wasm web/dist/attnlab-mt.wasm $(PEER_ONNX)
	node bench/peer/peer_bench.mjs --model $(PEER_MODEL) --onnx $(PEER_ONNX) --runs $(PEER_RUNS) \
	  --runs-long $(PEER_RUNS_LONG) --T $(PEER_T) --threads 2 --json $(B)/bench/peer/result-2threads.json

# Generation with the KV cache: tokens/s at f32 and f16 weights, decode step vs a T = 1 prefill.
PEER_MODEL_F16 := $(B)/bench/distilgpt2-f16
$(PEER_MODEL_F16)/model.safetensors:
	@$(PEER_PY) -c 'import torch' 2>/dev/null || { echo "$(PEER_TORCH_HINT)"; exit 1; }
	OMP_NUM_THREADS=1 $(PEER_PY) tests/ref/make_checkpoint.py --shape distilgpt2 --dtype f16 --seed 1234 --out $(PEER_MODEL_F16)

.PHONY: bench-threads
# attnlab alone with 1 and BENCH_THREADS threads on the same checkpoint (bit-for-bit check included)
BENCH_THREADS ?= 2
bench-threads: web/dist/attnlab.wasm web/dist/attnlab-mt.wasm $(PEER_MODEL)/model.safetensors
	node bench/peer/threads_bench.mjs $(PEER_MODEL) --threads $(BENCH_THREADS) --T 11,32,128,512 --runs 9

.PHONY: bench-decode
DECODE_THREADS ?= 1
bench-decode: web/dist/attnlab.wasm web/dist/attnlab-mt.wasm $(PEER_MODEL)/model.safetensors $(PEER_MODEL_F16)/model.safetensors
	node bench/peer/decode_bench.mjs $(PEER_MODEL) $(PEER_MODEL_F16) --prompt 11 --new 32 --runs 5 --threads $(DECODE_THREADS)

# ---- the families: SmolLM2-135M-shaped llama and Pythia-160m-shaped gpt_neox, random f32 ------
# build/bench/<shape>/ (config.json, model.safetensors, tokenizer.json) and build/bench/peer/<shape>.onnx, each
# written once; the export checks its torch module against tests/ref/families_ref.py first.
PEER_FAMILIES  ?= smollm2-135m pythia-160m
PEER_FAMILY_T  ?= 11,128
PEER_FAMILY_SHAPES := smollm2-135m pythia-160m
PEER_FAMILIES_PY := tests/ref/export_onnx_families.py

$(foreach s,$(PEER_FAMILY_SHAPES),$(B)/bench/$(s)/model.safetensors): $(B)/bench/%/model.safetensors:
	@$(PEER_PY) -c 'import torch' 2>/dev/null || { echo "$(PEER_TORCH_HINT)"; exit 1; }
	OMP_NUM_THREADS=1 $(PEER_PY) $(PEER_FAMILIES_PY) checkpoint --shape $* --seed 1234 --out $(B)/bench/$*

$(foreach s,$(PEER_FAMILY_SHAPES),$(B)/bench/peer/$(s).onnx): $(B)/bench/peer/%.onnx: $(B)/bench/%/model.safetensors $(PEER_FAMILIES_PY)
	@$(PEER_PY) -c 'import torch' 2>/dev/null || { echo "$(PEER_TORCH_HINT)"; exit 1; }
	@mkdir -p $(dir $@)
	OMP_NUM_THREADS=1 $(PEER_PY) -W ignore $(PEER_FAMILIES_PY) export $(B)/bench/$* $@

.PHONY: bench-peer-families bench-decode-families
# PEER_WASM=web/dist/attnlab-relaxed.wasm runs the relaxed build (Node gets --experimental-wasm-relaxed-simd
# always: harmless for the plain build); PEER_DECODE=0 skips the decode runs.
PEER_WASM ?= web/dist/attnlab.wasm
PEER_DECODE ?= 1
bench-peer-families: $(PEER_WASM) $(foreach s,$(PEER_FAMILIES),$(B)/bench/peer/$(s).onnx)
	@for s in $(PEER_FAMILIES); do \
	  node --experimental-wasm-relaxed-simd bench/peer/peer_bench.mjs --model $(B)/bench/$$s --onnx $(B)/bench/peer/$$s.onnx \
	    --runs $(PEER_RUNS) --runs-long $(PEER_RUNS_LONG) --T $(PEER_FAMILY_T) --threads 1 --wasm $(PEER_WASM) \
	    --json $(B)/bench/peer/result-$$s-$(notdir $(basename $(PEER_WASM)))-1thread.json || exit 1; \
	done
	@if [ "$(PEER_DECODE)" != 0 ]; then $(MAKE) --no-print-directory bench-decode-families; fi

# KV-cache generation of the families (f32, one thread unless DECODE_THREADS): tokens/s, decode step vs T = 1 prefill
bench-decode-families: web/dist/attnlab.wasm web/dist/attnlab-mt.wasm $(foreach s,$(PEER_FAMILIES),$(B)/bench/$(s)/model.safetensors)
	node bench/peer/decode_bench.mjs $(foreach s,$(PEER_FAMILIES),$(B)/bench/$(s)) --prompt 11 --new 32 --runs 5 --threads $(DECODE_THREADS)

# The relaxed-SIMD build (attnlab-relaxed.wasm; Node 20 needs --experimental-wasm-relaxed-simd) against ORT-web,
# and its KV-cache decode against attnlab.wasm's on the three shapes, f32 and half storage (F16 copies made by
# bench/peer/to_f16.mjs), alternating the builds (docs/BENCHMARKS.md "Relaxed SIMD").
.PHONY: bench-peer-relaxed bench-decode-relaxed
bench-peer-relaxed: web/dist/attnlab-relaxed.wasm $(PEER_ONNX)
	node --experimental-wasm-relaxed-simd bench/peer/peer_bench.mjs --model $(PEER_MODEL) --onnx $(PEER_ONNX) \
	  --runs $(PEER_RUNS) --runs-long $(PEER_RUNS_LONG) --T $(PEER_T) --threads 1 --wasm web/dist/attnlab-relaxed.wasm \
	  --json $(B)/bench/peer/result-relaxed-1thread.json
DECODE_SHAPES := $(PEER_MODEL) $(foreach s,$(PEER_FAMILY_SHAPES),$(B)/bench/$(s))
$(B)/bench/%-f16/model.safetensors: $(B)/bench/%/model.safetensors bench/peer/to_f16.mjs
	node bench/peer/to_f16.mjs $(B)/bench/$* $(B)/bench/$*-f16
# the three shapes against ORT-web, T = 11 and 128, PEER_ROUNDS rounds in a row (docs/BENCHMARKS.md, issue 39 item 2)
PEER_ROUNDS ?= 3
.PHONY: bench-peer-relaxed3
bench-peer-relaxed3: web/dist/attnlab-relaxed.wasm $(PEER_ONNX) $(foreach s,$(PEER_FAMILY_SHAPES),$(B)/bench/peer/$(s).onnx)
	@for r in $$(seq $(PEER_ROUNDS)); do echo "## round $$r, $$(date -u +%FT%TZ), load $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  $(MAKE) --no-print-directory bench-peer-relaxed PEER_T=11,128 PEER_RUNS=$(PEER_RUNS) || exit 1; \
	  $(MAKE) --no-print-directory bench-peer-families PEER_WASM=web/dist/attnlab-relaxed.wasm PEER_DECODE=0 \
	    PEER_FAMILIES="$(PEER_FAMILY_SHAPES)" PEER_RUNS=$(PEER_RUNS) || exit 1; done
bench-decode-relaxed: web/dist/attnlab.wasm web/dist/attnlab-relaxed.wasm $(addsuffix /model.safetensors,$(DECODE_SHAPES)) \
                      $(addsuffix -f16/model.safetensors,$(DECODE_SHAPES))
	@for wt in f32 half; do for b in attnlab attnlab-relaxed attnlab attnlab-relaxed; do \
	  dirs="$(DECODE_SHAPES)"; [ $$wt = half ] && dirs="$(addsuffix -f16,$(DECODE_SHAPES))"; \
	  node --experimental-wasm-relaxed-simd bench/peer/decode_bench.mjs $$dirs --wasm web/dist/$$b.wasm --weights $$wt \
	    --prompt 11 --new 32 --runs 5 || exit 1; done; done

# The relaxed build with its function names kept (wasm-opt -g), for V8's CPU profiler: where a forward's time goes,
# per wasm function, on the three shapes (bench/peer/profile_forward.mjs; docs/BENCHMARKS.md).
.PHONY: wasm-prof profile-peer
$(B)/prof/attnlab-relaxed-prof.wasm: web/dist/attnlab-relaxed.wasm
	@mkdir -p $(dir $@)
	$(WASM_OPT_NPM) $(filter-out --strip-debug,$(RELAXED_OPT)) -g -O3 $(B)/wasm-relaxed/attnlab-relaxed.wasm -o $@
wasm-prof: $(B)/prof/attnlab-relaxed-prof.wasm
profile-peer: $(B)/prof/attnlab-relaxed-prof.wasm $(addsuffix /model.safetensors,$(DECODE_SHAPES))
	@for d in $(DECODE_SHAPES); do \
	  node --experimental-wasm-relaxed-simd bench/peer/profile_forward.mjs $< --model $$d --T 11,128 --runs 15 || exit 1; done
