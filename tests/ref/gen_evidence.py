#!/usr/bin/python3
"""gen_evidence.py — golden numbers of docs/evidence.md on the tiny checkpoint, from evidence_ref.py.

    /usr/bin/python3 tests/ref/gen_evidence.py [--fixtures tests/fixtures]

Writes tests/fixtures/evidence_golden.json: edge knockouts (one head, all heads of a layer), token knockouts with
the last-layer / rollout / flow readings, the three ablation semantics and activation patching, each with the
ids it ran on, so the engine's tests need no tokenizer agreement to use them (tests/c/test_evidence.c and
tests/js/evidence.test.js compare within 1e-4).
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bpe_ref import BPE  # noqa: E402
from evidence_ref import ablation_semantics, edge_knockout, patching, resample_draws, token_knockout  # noqa: E402
from gen_fixtures import CHAPTER, FOX, LONG, fmt  # noqa: E402
from gpt2_ref import forward, load_model  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
CLEAN = "The cat saw the dog, and the dog"
CORRUPT = "The cat saw the dog, and the cat"


NEUTRAL = 11  # the replacement token of the token-knockout "replace" mode in the golden (any id of the tiny vocabulary)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(REPO, "tests", "fixtures"))
    a = ap.parse_args(argv)
    d = os.path.join(a.fixtures, "tiny")
    m = load_model(d)
    bpe = BPE.from_files(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
    ids = bpe.encode(CHAPTER)[:12]                 # 12 tokens keep the Python loops short
    out = {"generator": "tests/ref/gen_evidence.py (tests/ref/evidence_ref.py over gpt2_ref.forward, float64)",
           "model": "tests/fixtures/tiny", "tolerance": 1e-4, "ids": ids}

    out["edge"] = []
    for layer, head in ((1, 2), (2, -1)):
        r = edge_knockout(m, ids, layer, head)
        out["edge"].append({"layer": layer, "head": head, "A": r["A"].astype(np.float32),
                            "E": np.nan_to_num(r["E"], nan=-1.0).astype(np.float32),
                            "E_last": np.nan_to_num(r["E_last"], nan=-1.0).astype(np.float32),
                            "spearman": r["spearman"], "kendall": r["kendall"], "spearman_last": r["spearman_last"],
                            "row_spearman": [None if x != x else x for x in r["row_spearman"]],
                            "top_k": r["top_k"], "top_k_overlap": r["top_k_overlap"]})

    # knockout without renormalisation (the row's sum drops below 1)
    r = edge_knockout(m, ids, 1, 2, mode="zero")
    out["edge_zero"] = {"layer": 1, "head": 2, "E": np.nan_to_num(r["E"], nan=-1.0).astype(np.float32),
                        "E_last": np.nan_to_num(r["E_last"], nan=-1.0).astype(np.float32)}
    out["token_modes"] = {"neutral": NEUTRAL}
    for mode in ("column_zero", "delete", "replace"):
        out["token_modes"][mode] = token_knockout(m, ids, mode, NEUTRAL)["effect"].astype(np.float32)

    t = token_knockout(m, ids)
    out["token"] = {"effect": t["effect"].astype(np.float32),
                    "readings": {k: np.asarray(v, np.float32) for k, v in t["readings"].items()},
                    "spearman": t["spearman"], "kendall": t["kendall"]}

    ref_mean = bpe.encode(LONG)
    ref_resample = bpe.encode(FOX) + bpe.encode(FOX)
    ab = ablation_semantics(m, ids, ref_mean, ref_resample[:len(ids) + 3])
    rd = resample_draws(m, ids, ref_mean, K=3, seed=7)
    out["resample_draws"] = {"reference_ids": ref_mean, "K": 3, "seed": 7, "offsets": rd["offsets"],
                             "base_loss": rd["base_loss"], "draws": rd["draws"].astype(np.float32).ravel(),
                             "mean": rd["mean"].astype(np.float32)}
    out["ablation"] = {"reference_mean_ids": ref_mean, "reference_resample_ids": ref_resample[:len(ids) + 3],
                       "base_loss": ab["base_loss"]}
    for mode in ("zero", "mean", "resample"):
        out["ablation"][mode] = {"delta": ab[mode]["delta"].astype(np.float32), "order": ab[mode]["order"],
                                 "pruning": ab[mode]["pruning"].astype(np.float32)}
    for k, v in ab.items():
        if k.startswith("spearman_") or k.startswith("kendall_"):
            out["ablation"][k] = v

    clean, corrupt = bpe.encode(CLEAN), bpe.encode(CORRUPT)
    if len(clean) != len(corrupt):
        raise AssertionError("patching pair: %d vs %d tokens" % (len(clean), len(corrupt)))
    lc = forward(m, clean)["logits64"]
    ld = forward(m, corrupt)["logits64"]
    a_clean, a_corrupt = int(np.argmax(lc)), int(np.argmax(ld))
    if a_clean == a_corrupt:
        a_corrupt = int(np.argsort(-lc, kind="stable")[1])
    p = patching(m, clean, corrupt, a_clean, a_corrupt)
    out["patching"] = {"clean_ids": clean, "corrupt_ids": corrupt, "answer_clean": a_clean,
                       "answer_corrupt": a_corrupt, "ld_clean": p["ld_clean"], "ld_corrupt": p["ld_corrupt"],
                       "resid": p["resid"].astype(np.float32), "heads": p["heads"].astype(np.float32)}

    path = os.path.join(a.fixtures, "evidence_golden.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(json.dumps(k) + ": " + fmt(v) for k, v in out.items()) + "\n}\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
