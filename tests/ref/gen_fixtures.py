#!/usr/bin/python3
"""gen_fixtures.py — regenerate the tiny checkpoints and the golden outputs of the independent reference.

    /usr/bin/python3 tests/ref/gen_fixtures.py [--fixtures tests/fixtures]

Writes (deterministically: fixed seed, same bytes every run):
    tests/fixtures/tiny/            f32, plain names                              (seed 1234)
    tests/fixtures/tiny-f16/        the same weights rounded to F16
    tests/fixtures/tiny-bf16/       the same weights rounded to BF16
    tests/fixtures/tiny-prefixed/   f32, 'transformer.' prefix + h.{i}.attn.bias mask buffers (to be ignored)
    tests/fixtures/golden.json      cases: text, ids (from the Python BPE), options, logits, attentions, q/k, top-10

Every case is recomputed from the files as written (read back through safetensors_io), not from memory.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bpe_ref import BPE  # noqa: E402
from gpt2_ref import forward, load_model, top_k  # noqa: E402
from make_checkpoint import make_checkpoint  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SEED = 1234
VARIANTS = {
    # name: (dtype, prefix, buffers)
    "tiny": ("f32", False, False),
    "tiny-f16": ("f16", False, False),
    "tiny-bf16": ("bf16", False, False),
    "tiny-prefixed": ("f32", True, True),
}
CHAPTER = "Because the storm intensified , the ship finally sank ."
FOX = "The quick brown fox jumps over the lazy dog."
UNICODE = "In 1905, Einstein's paper changed physics \u2014 caf\u00e9 na\u00efve \u65e5\u672c \U0001F642!"
SHORT = "The"
# 64 tokens under the tiny tokenizer = n_positions (checked below)
LONG = ("Attention is a soft lookup: every query position weighs the keys before it, and the weights "
        "form a matrix that we can draw, read and change. If we force one row to look at one word")

# texts that only test the tokenizer (ids under the tiny vocabulary), no forward pass
TOKENIZE_ONLY = [
    "",
    " ",
    "hello world",
    "  leading spaces\n\nnewlines\ttabs   trailing   ",
    "I'll we've they're don't it's I'm you'd",
    "x=1+2*3; print(f'{x:>10}')",
    "\u00dcn\u00efc\u00f6d\u00e9 \u00df \ufb01 \u00bd \u00b2 \u0663",
    "<|endoftext|>",
]


def iv(kind, layer, head, row=0, col=0, lam=0.0):
    return {"kind": kind, "layer": layer, "head": head, "row": row, "col": col, "lambda": lam}


def opts(interventions=(), mask="causal", window=0, layer_mask=None, layer_window=None, scale=None, capture=None):
    o = {"interventions": list(interventions), "mask": mask, "window": window, "scale": scale, "capture": capture}
    if layer_mask is not None:
        o["layer_mask"] = list(layer_mask)
        o["layer_window"] = list(layer_window)
    return o


def case_table(T):
    """[(name, model, text, opts)]. T maps a text to its token count under the tiny tokenizer."""
    tc = T(CHAPTER)          # 19 tokens under the tiny tokenizer
    last = tc - 1
    tf = T(FOX)
    cap12 = {"layer": 1, "head": 2}
    composed = opts([iv("soft", 0, 1, last, last - 2, 3.0),        # inside the window: shifts mass to col last-2
                     iv("hard", 1, 2, last, 3),                     # a masked col under window 5: still one-hot
                     iv("hard", 2, -1, 12, 10),
                     iv("soft", 2, 3, last, last, -2.0),
                     iv("ablate", 1, 0)],
                    mask="window", window=5, scale=0.3, capture=cap12)
    cases = [
        ("plain_chapter", "tiny", CHAPTER, opts()),
        ("plain_fox", "tiny", FOX, opts()),
        ("plain_unicode", "tiny", UNICODE, opts()),
        ("plain_one_token", "tiny", SHORT, opts()),
        ("plain_max_length", "tiny", LONG, opts(capture={"layer": 2, "head": 1})),
        ("hard_one_head", "tiny", CHAPTER, opts([iv("hard", 1, 2, last, 3)])),
        ("hard_all_heads", "tiny", CHAPTER, opts([iv("hard", 1, -1, last, 3)])),
        ("hard_masked_col", "tiny", CHAPTER, opts([iv("hard", 1, 0, 4, 10)])),
        ("hard_layer0_row0", "tiny", FOX, opts([iv("hard", 0, 3, 0, tf - 1)])),
        ("soft_plus3", "tiny", CHAPTER, opts([iv("soft", 1, 0, last, 3, 3.0)])),
        ("soft_minus2_all_heads", "tiny", CHAPTER, opts([iv("soft", 1, -1, 10, 2, -2.0)])),
        ("soft_twice_adds", "tiny", CHAPTER, opts([iv("soft", 1, 0, last, 3, 1.5), iv("soft", 1, 0, last, 3, 1.5)])),
        ("ablate_one_head", "tiny", CHAPTER, opts([iv("ablate", 1, 3)])),
        ("ablate_two_heads", "tiny", CHAPTER, opts([iv("ablate", 1, 0), iv("ablate", 2, 2)])),
        ("mask_full", "tiny", CHAPTER, opts(mask="full")),
        ("mask_window3", "tiny", CHAPTER, opts(mask="window", window=3)),
        ("mask_window1", "tiny", FOX, opts(mask="window", window=1)),
        ("layer_masks", "tiny", CHAPTER, opts(layer_mask=["causal", "full", "window"], layer_window=[3, 3, 2])),
        ("scale_0.05", "tiny", CHAPTER, opts(scale=0.05)),
        ("capture_qk_1_2", "tiny", CHAPTER, opts(capture=cap12)),
        ("composed", "tiny", CHAPTER, composed),
        ("composed_full_mask", "tiny", FOX,
         opts([iv("soft", 2, -1, 5, tf - 2, -2.0), iv("soft", 0, 2, 3, 7, 3.0), iv("hard", 0, 3, 0, tf - 1),
               iv("ablate", 2, 1)], mask="full", scale=0.05, capture={"layer": 0, "head": 3})),
    ]
    for v in ("tiny-f16", "tiny-bf16", "tiny-prefixed"):
        cases.append(("plain_chapter", v, CHAPTER, opts()))
        cases.append(("composed", v, CHAPTER, composed))
    return cases


# ----------------------------------------------------------------------------------------------------------------
# a compact, deterministic JSON writer: float32 values as the shortest text that reads back to the same float32

def fmt(v):
    if v is None:
        return "null"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, np.floating):
        s = str(np.float32(v))
        if s in ("nan", "inf", "-inf"):
            raise ValueError("non-finite value in a fixture")
        return s
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("non-finite value in a fixture")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, np.ndarray):
        return fmt(list(v.reshape(-1)))
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + fmt(x) for k, x in v.items()) + "}"
    raise TypeError("cannot serialise %r" % type(v))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(REPO, "tests", "fixtures"))
    a = ap.parse_args(argv)
    fx = a.fixtures

    models, bpe = {}, None
    for name, (dtype, prefix, buffers) in VARIANTS.items():
        d = os.path.join(fx, name)
        make_checkpoint(d, "tiny", dtype, prefix, SEED, buffers)
        models[name] = load_model(d)
    bpe = BPE.from_files(os.path.join(fx, "tiny", "vocab.json"), os.path.join(fx, "tiny", "merges.txt"))
    if len(bpe.encode(LONG)) != models["tiny"].P:
        raise AssertionError("LONG has %d tokens, want n_positions=%d" % (len(bpe.encode(LONG)), models["tiny"].P))

    lines = []
    for name, model, text, o in case_table(lambda t: len(bpe.encode(t))):
        ids = bpe.encode(text)
        m = models[model]
        r = forward(m, ids, o)
        if bpe.decode(ids) != text.encode("utf-8"):
            raise AssertionError("BPE round trip failed for %r" % text)
        case = {
            "name": name, "model": model, "text": text, "ids": ids, "opts": o,
            "logits": r["logits"], "attentions": r["attentions"],
            "q": r["q"], "k": r["k"],
            "top": [{"id": i, "prob": np.float32(p)} for i, p in top_k(r["logits64"], 10)],
        }
        lines.append(fmt(case))

    tok_lines = []
    for text in TOKENIZE_ONLY + [CHAPTER, FOX, UNICODE]:
        ids = bpe.encode(text)
        tok_lines.append(fmt({"model": "tiny", "text": text, "ids": ids}))

    header = {
        "generator": "tests/ref/gen_fixtures.py (independent PyTorch float64 reference, tests/ref/gpt2_ref.py)",
        "seed": SEED,
        "tolerance": {"logits_max_abs": 1e-4, "attentions_max_abs": 1e-4, "qk_max_abs": 1e-4, "top_prob_max_abs": 1e-4},
        "layout": {"attentions": "flat [L][NH][T][T], row = query", "q": "flat [T][HS] before scaling, or null",
                   "logits": "[V] of the last position", "top": "10 most likely, ties by lower id"},
        "models": {name: {"dir": "tests/fixtures/" + name, "dtype": VARIANTS[name][0],
                          "prefixed": VARIANTS[name][1], "mask_buffers": VARIANTS[name][2],
                          "n_layer": models[name].L, "n_head": models[name].NH, "n_embd": models[name].C,
                          "n_positions": models[name].P, "vocab_size": models[name].V}
                   for name in VARIANTS},
    }
    out = ["{"]
    for k, v in header.items():
        out.append(json.dumps(k) + ": " + fmt(v) + ",")
    out.append('"tokenize": [\n' + ",\n".join(tok_lines) + "\n],")
    out.append('"cases": [\n' + ",\n".join(lines) + "\n]")
    out.append("}")
    path = os.path.join(fx, "golden.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")

    # read back: valid JSON, every float32 survives the text round trip exactly
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if len(doc["cases"]) != len(lines):
        raise AssertionError("golden.json: wrong number of cases")
    print("wrote %s: %d cases, %d tokenizer rows, %d bytes" % (path, len(lines), len(tok_lines), os.path.getsize(path)))


if __name__ == "__main__":
    main()
