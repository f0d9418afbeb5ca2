# bench/peer/peer.mk — attnlab against ONNX Runtime Web on the same GPT-2 (issue 8). Included by the top-level
# Makefile (uses its B, EMCC and the wasm target).
#
#   make bench-peer                     distilgpt2-shaped f32, one thread each, T = 11, 32, 128, 512
#   make bench-peer PEER_RUNS=20 PEER_T=11,128
#   make bench-peer-threads             2 threads each: attnlab-mt.wasm against ORT-web (see bench/peer/README.md)
#   make bench-threads                  attnlab alone, 1 against 2 threads (BENCH_THREADS=n)
#   make bench-decode DECODE_THREADS=2  generation with the KV cache, on 2 threads
#
# Needs PyTorch once (Debian: apt-get install python3-torch libopenblas0-pthread) to write the checkpoint
# (tests/ref/make_checkpoint.py) and its ONNX export (tests/ref/export_onnx.py); both are cached in build/bench/.

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

.PHONY: bench-peer bench-peer-threads
bench-peer: web/dist/attnlab.wasm $(PEER_ONNX)
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
