#!/usr/bin/python3
"""check_large.py — a full-size spot check, on demand (too big to commit).

    /usr/bin/python3 tests/ref/check_large.py [--shape distilgpt2|gpt2|gpt2-medium] [--dtype f32|f16|bf16]
        [--text TEXT | --ids 464,2068,...] [--keep DIR] [--attnlab build/attnlab] [--json-out FILE]

Generates a seeded random checkpoint of the real model's shape (HF layout, real GPT-2 tokenizer files, the
h.{i}.attn.bias mask buffers included) into a temporary directory (or --keep DIR, which is kept), runs the float64
reference on the ids and prints a summary: ids, the first logits, the top-10, attention checksums.
With --attnlab BIN it also runs `BIN run --model DIR --text TEXT --json` and compares ids, logits and
attentions (exit 1 if the max abs difference exceeds --tol, default 1e-4).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bpe_ref import BPE  # noqa: E402
from gpt2_ref import forward, load_model, top_k  # noqa: E402
from make_checkpoint import make_checkpoint  # noqa: E402

CHAPTER = "Because the storm intensified , the ship finally sank ."


def flatten(x):
    return np.array(x, dtype=np.float64).reshape(-1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="distilgpt2", choices=["distilgpt2", "gpt2", "gpt2-medium"])
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--text", default=CHAPTER)
    ap.add_argument("--ids", default=None, help="comma-separated ids instead of --text")
    ap.add_argument("--keep", default=None, help="write the checkpoint here and keep it")
    ap.add_argument("--attnlab", default=None, help="path of the attnlab CLI to compare against")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--json-out", default=None, help="write ids, full logits and attentions here")
    a = ap.parse_args(argv)

    d = a.keep or tempfile.mkdtemp(prefix="attnlab-%s-" % a.shape)
    rc = 0
    try:
        t0 = time.time()
        make_checkpoint(d, a.shape, a.dtype, False, a.seed, True)
        t1 = time.time()
        model = load_model(d)
        bpe = BPE.from_files(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
        ids = [int(x) for x in a.ids.split(",")] if a.ids else bpe.encode(a.text)
        r = forward(model, ids)
        t2 = time.time()
        A = r["attentions"].astype(np.float64)
        summary = {
            "shape": a.shape, "dtype": a.dtype, "seed": a.seed, "dir": d if a.keep else "(temporary)",
            "n_layer": model.L, "n_head": model.NH, "n_embd": model.C, "vocab_size": model.V,
            "ids": ids,
            "logits_first8": [float(np.float32(x)) for x in r["logits"][:8]],
            "logits_sum": float(r["logits"].astype(np.float64).sum()),
            "top": [{"id": i, "prob": p} for i, p in top_k(r["logits64"], 10)],
            "attention_last_layer_head_avg_last_row": [float(x) for x in A[-1].mean(0)[-1]],
            "attention_sum_of_i_times_a": float((A * np.arange(A.shape[-1])).sum()),
            "seconds": {"checkpoint": round(t1 - t0, 1), "reference": round(t2 - t1, 1)},
        }
        print(json.dumps(summary, indent=1))
        if a.json_out:
            with open(a.json_out, "w") as f:
                json.dump({"ids": ids, "logits": [float(x) for x in r["logits"]],
                           "attentions": [float(x) for x in r["attentions"].reshape(-1)]}, f)
        if a.attnlab:
            if a.ids:
                print("--attnlab compares on --text (the CLI tokenizes), not --ids", file=sys.stderr)
                return 2
            p = subprocess.run([a.attnlab, "run", "--model", d, "--text", a.text, "--json"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print("attnlab failed (%d): %s" % (p.returncode, p.stderr.strip()), file=sys.stderr)
                return 1
            out = json.loads(p.stdout)
            dl = float(np.abs(flatten(out["logits"]) - r["logits"].astype(np.float64)).max())
            da = float(np.abs(flatten(out["attentions"]) - A.reshape(-1)).max())
            same_ids = out["ids"] == ids
            print("attnlab vs reference: ids %s, max |dlogits| = %.3g, max |dattention| = %.3g (tol %g)"
                  % ("equal" if same_ids else "DIFFER", dl, da, a.tol))
            rc = 0 if (same_ids and dl <= a.tol and da <= a.tol) else 1
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
