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
from evidence_ref import FamilyModel, ablation_semantics, edge_knockout, patching, resample_draws, token_knockout  # noqa: E402,E501
from gen_fixtures import CHAPTER, FOX, LONG, fmt  # noqa: E402
from gpt2_ref import forward, load_model  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
CLEAN = "The cat saw the dog, and the dog"
CORRUPT = "The cat saw the dog, and the cat"


NEUTRAL = 11  # the replacement token of the token-knockout "replace" mode in the golden (any id of the tiny vocabulary)

# The sliding-window families (window 4; mistral: both layers, gemma3: layer 0 of 2): T = 10 token ids below 277
# (the byte-level ids their tokenizer names), so the window cuts rows 4..9; a reference text for mean ablation, one
# of T + 3 ids for resample ablation, and a clean/corrupt pair differing at position 5 (within every window's
# reach of the last position).
FAMILY_IDS = [84, 104, 101, 32, 99, 97, 116, 32, 115, 97]
FAMILY_REF_MEAN = [65, 32, 113, 117, 105, 99, 107, 32, 98, 114, 111, 119, 110, 32, 102, 111, 120]
FAMILY_REF_RESAMPLE = [74, 117, 109, 112, 115, 32, 111, 118, 101, 114, 32, 105, 116]
FAMILY_CLEAN = [84, 104, 101, 32, 99, 97, 116, 32, 115, 97]
FAMILY_CORRUPT = [84, 104, 101, 32, 99, 111, 116, 32, 115, 97]
FAMILIES = [("mistral", "families/mistral", "mistral"), ("gemma3", "families/gemma3", "gemma3_text")]


def edge_entry(r, layer, head):
    return {"layer": layer, "head": head, "A": r["A"].astype(np.float32),
            "E": np.nan_to_num(r["E"], nan=-1.0).astype(np.float32),
            "E_last": np.nan_to_num(r["E_last"], nan=-1.0).astype(np.float32),
            "spearman": r["spearman"], "kendall": r["kendall"], "spearman_last": r["spearman_last"],
            "row_spearman": [None if x != x else x for x in r["row_spearman"]],
            "top_k": r["top_k"], "top_k_overlap": r["top_k_overlap"]}


def answers_of(m, clean, corrupt):
    """The clean run's most likely next token and the corrupted run's (the clean run's second when equal)."""
    lc = forward(m, clean)["logits64"] if not isinstance(m, FamilyModel) else m.forward(clean)["logits64"]
    ld = forward(m, corrupt)["logits64"] if not isinstance(m, FamilyModel) else m.forward(corrupt)["logits64"]
    a_clean, a_corrupt = int(np.argmax(lc)), int(np.argmax(ld))
    if a_clean == a_corrupt:
        a_corrupt = int(np.argsort(-lc, kind="stable")[1])
    return a_clean, a_corrupt


def family_entry(name, rel, model_type, fixtures):
    """Edge knockouts (renorm: one head of the sliding layer, all heads of the last; zero: one head), token
    knockouts in the four modes with the three readings, the three ablation semantics and activation patching."""
    m = FamilyModel(os.path.join(fixtures, rel))
    assert m.M.mt == model_type and m.M.a.windows[0] == 4
    ids = FAMILY_IDS
    e = {"name": name, "dir": "tests/fixtures/" + rel, "model_type": model_type, "L": m.L, "NH": m.NH,
         "windows": [0 if w is None else w for w in m.M.a.windows], "ids": ids}
    e["edge"] = [edge_entry(edge_knockout(m, ids, layer, head), layer, head) for layer, head in ((0, 1), (1, -1))]
    r = edge_knockout(m, ids, 0, 2, mode="zero")
    e["edge_zero"] = {"layer": 0, "head": 2, "E": np.nan_to_num(r["E"], nan=-1.0).astype(np.float32),
                      "E_last": np.nan_to_num(r["E_last"], nan=-1.0).astype(np.float32)}
    # a key outside a sliding row's window has no weight and is no pair: NaN (written -1), like j > i
    W = e["windows"][0]
    for i in range(len(ids)):
        for j in range(i + 1):
            outside = W and i - j >= W
            assert (not outside) or (e["edge"][0]["A"][i, j] == 0.0 and np.isnan(r["E"][i, j]))
    t = token_knockout(m, ids)
    e["token"] = {"effect": t["effect"].astype(np.float32),
                  "readings": {k: np.asarray(v, np.float32) for k, v in t["readings"].items()},
                  "spearman": t["spearman"], "kendall": t["kendall"]}
    e["token_modes"] = {"neutral": NEUTRAL}
    for mode in ("column_zero", "delete", "replace"):
        e["token_modes"][mode] = token_knockout(m, ids, mode, NEUTRAL)["effect"].astype(np.float32)
    ab = ablation_semantics(m, ids, FAMILY_REF_MEAN, FAMILY_REF_RESAMPLE)
    e["ablation"] = {"reference_mean_ids": FAMILY_REF_MEAN, "reference_resample_ids": FAMILY_REF_RESAMPLE,
                     "base_loss": ab["base_loss"]}
    for mode in ("zero", "mean", "resample"):
        e["ablation"][mode] = {"delta": ab[mode]["delta"].astype(np.float32), "order": ab[mode]["order"],
                               "pruning": ab[mode]["pruning"].astype(np.float32)}
    a_clean, a_corrupt = answers_of(m, FAMILY_CLEAN, FAMILY_CORRUPT)
    p = patching(m, FAMILY_CLEAN, FAMILY_CORRUPT, a_clean, a_corrupt)
    assert abs(p["ld_clean"] - p["ld_corrupt"]) > 0.2
    e["patching"] = {"clean_ids": FAMILY_CLEAN, "corrupt_ids": FAMILY_CORRUPT, "answer_clean": a_clean,
                     "answer_corrupt": a_corrupt, "ld_clean": p["ld_clean"], "ld_corrupt": p["ld_corrupt"],
                     "resid": p["resid"].astype(np.float32), "heads": p["heads"].astype(np.float32)}
    print("%-7s edge rho %.3f  token rho(last) %.3f  ld %.3f / %.3f" % (
        name, e["edge"][0]["spearman"], t["spearman"]["last_layer"], p["ld_clean"], p["ld_corrupt"]))
    return e


def close(x, y, what, tol=1e-9):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if not (np.array_equal(np.isnan(x), np.isnan(y)) and (x.size == 0 or np.nanmax(np.abs(x - y)) <= tol)):
        raise AssertionError("%s: the two references differ" % what)


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

    # the family forward (circuits_ref.run under FamilyModel) against gpt2_ref.forward on the same GPT-2: two
    # implementations of the knockout, ablation, head-output and residual hooks
    fm = FamilyModel(d)
    r = edge_knockout(fm, ids, 1, 2)
    close(np.nan_to_num(r["E"], nan=-1.0), out["edge"][0]["E"], "edge knockout", 1e-6)
    close(token_knockout(fm, ids, "column_zero")["effect"], out["token_modes"]["column_zero"], "token knockout", 1e-6)
    close(token_knockout(fm, ids)["effect"], out["token"]["effect"], "token knockout", 1e-6)
    abf = ablation_semantics(fm, ids, ref_mean, ref_resample[:len(ids) + 3])
    for mode in ("zero", "mean", "resample"):
        close(abf[mode]["delta"], ab[mode]["delta"], "ablation " + mode)
    pf = patching(fm, clean, corrupt, a_clean, a_corrupt)
    close(pf["resid"], p["resid"], "patching")
    close(pf["heads"], p["heads"], "patching")

    out["families"] = [family_entry(*f, a.fixtures) for f in FAMILIES]

    path = os.path.join(a.fixtures, "evidence_golden.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write("{\n" + ",\n".join(json.dumps(k) + ": " + fmt(v) for k, v in out.items()) + "\n}\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
