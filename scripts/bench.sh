#!/usr/bin/env bash
# make bench — the benchmarks whose figures go to docs/BENCHMARKS.md.
#   1. kernels: matmul GFLOP/s at distilgpt2 shapes, native / wasm SIMD128 / wasm scalar (bench/bench_ops*)
#   2. forward: prefill time for T = 11 and 128 on a distilgpt2-shaped random f32 checkpoint,
#      natively and as wasm in Node (single thread), medians; one backward against one forward at T = 128
#      natively and in wasm (bench/bench_backward.c, bench_backward_wasm.mjs, rounds A B A B).
# The distilgpt2-shaped checkpoint is generated with PyTorch (tests/ref/make_checkpoint.py) into
# build/bench/distilgpt2 once; without PyTorch the forward benchmark says how to get it.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
RUNS="${RUNS:-15}"
OUT=build/bench
mkdir -p "$OUT"

echo "## kernels"
make -s bench-ops

echo
echo "## forward pass"
MODEL="$OUT/distilgpt2"
if [ ! -f "$MODEL/model.safetensors" ]; then
  if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    /usr/bin/python3 tests/ref/make_checkpoint.py --shape distilgpt2 --dtype f32 --seed 1234 --out "$MODEL"
  else
    echo "needs PyTorch to generate $MODEL: apt-get install python3-torch libopenblas0-pthread python3-regex"
    exit 1
  fi
fi
${CC:-gcc} -O3 -march=native -std=c11 -Ic/include bench/bench_forward.c build/libattnlab.a -lm -o "$OUT/bench_forward"
echo "### native (gcc -O3 -march=native, 1 thread)"
"$OUT/bench_forward" "$MODEL" "$RUNS" 11 128
echo "### wasm SIMD128 in Node $(node --version) (1 thread)"
node bench/bench_forward_wasm.mjs "$MODEL" "$RUNS" 11 128
echo "### backward (reverse mode, c/src/backward.c): one backward against one forward, A B A B (native, 1 thread)"
${CC:-gcc} -O3 -march=native -std=c11 -Ic/include bench/bench_backward.c build/libattnlab.a -lm -pthread -o "$OUT/bench_backward"
"$OUT/bench_backward" "$MODEL" "$RUNS" 128
echo "### backward in wasm SIMD128, Node $(node --version) (1 thread)"
node bench/bench_backward_wasm.mjs "$MODEL" "$RUNS" 128

echo
echo "## loaders: safetensors header and JSON object of N entries (issue 21)"
${CC:-gcc} -O3 -march=native -std=c11 -Ic/include -Ic/src bench/bench_loaders.c build/libattnlab.a -lm -pthread -o "$OUT/bench_loaders"
"$OUT/bench_loaders" 5 1000000

echo
echo "## soak: 12 000 calls through attnlab/worker (10 286 random valid runs, 1 714 invalid), memory at start and end"
node bench/bench_soak.mjs 12000

echo
echo "## evidence: knockout grids, ablation semantics, patching (wasm, Node, one thread; docs/evidence.md)"
node bench/bench_evidence.mjs "$RUNS"
node bench/bench_evidence_set.mjs "$RUNS" --chromium
node bench/bench_circuits.mjs 5 --chromium

echo
echo "## figures: build and serialise the four chapter figures (1400 px), median of 25"
node bench/bench_figures.mjs

echo
echo "## the page: navigation → figures, λ changes, long tasks (headless Chromium, medians of 7)"
node bench/bench_page.mjs --runs 7
echo
echo "## the page: click → all redrawn at T = 250, alone and beside the panels' work (issue 38)"
node bench/bench_click.mjs --runs 7
