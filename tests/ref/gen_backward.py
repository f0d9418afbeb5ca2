#!/usr/bin/python3
"""gen_backward.py — golden gradients of every family fixture from the float64 autograd reference
(backward_ref.py), for tests/c/test_backward.c and tests/js/backward.test.js.

    /usr/bin/python3 tests/ref/gen_backward.py

Reads the checkpoints gen_families.py wrote (tests/fixtures/families/*) and GPT-2's tiny (tests/fixtures/tiny),
writes tests/fixtures/backward_golden.json and backward_golden.bin (float32, little-endian): per model its ids and
cases, each case its options (families_ref's form: interventions, mask, window, layer_mask, layer_window, scale),
metric (logit_diff, logprob, kl, loss), answers a and b, its own ids where they are not the model's (T = 40), the metric's value, and per gradient part [offset, count]
in floats of the .bin, in attnlab's layout (c/include/attnlab.h, ALAB_GRAD_*).
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import backward_ref  # noqa: E402
import families_ref  # noqa: E402
from gen_families import IDS, IDS_LONG, SLIDING, iv  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MODELS = [("tiny", "tests/fixtures/tiny")] + [
    (n, "tests/fixtures/families/" + n)
    for n in ("gpt2-untied", "gpt2-noscale", "neox", "llama", "smollm2", "qwen2", "qwen3", "mistral", "gemma3")]


LONG = ("tiny", "llama")


def cases(NH, T, sliding):
    last = T - 1
    out = [
        ("plain_ld", {}, "logit_diff", 81, 33),
        ("plain_logprob", {}, "logprob", 200, None),
        ("plain_loss", {}, "loss", None, None),
        ("combined_kl", {"interventions": [iv("soft", 1, 0, last, last - 2, lam=-1.5), iv("scaleQ", 1, 0, alpha=0.5),
                                           iv("hard", 0, NH - 1, 3, 1), iv("ablate", 0, 0)]}, "kl", None, None),
        ("edits_ld", {"interventions": [iv("scaleK", 0, -1, alpha=1.7), iv("swapQK", 1, NH - 1),
                                        iv("soft", 0, 1, 4, 2, lam=2.0)]}, "logit_diff", 40, 17),
        ("swap_all_logprob", {"interventions": [iv("swapQK", 0, -1), iv("scaleK", 1, 0, alpha=-0.5)]}, "logprob", 33,
         None),
    ]
    if sliding:
        out += [("full_loss", {"mask": "full"}, "loss", None, None),
                ("window_ld", {"mask": "window", "window": T}, "logit_diff", 81, 33),
                ("hard_outside_kl", {"interventions": [iv("hard", 0, 1, last, 0)]}, "kl", None, None)]
    else:
        out += [("layer_mask_ld", {"layer_mask": ["full", "window"], "layer_window": [0, 2]}, "logit_diff", 81, 33),
                ("scale_loss", {"scale": 0.2}, "loss", None, None)]
    return out


def main():
    torch.set_default_dtype(torch.float64)
    models, blob = {}, []
    for key, d in MODELS:
        cfg, W = families_ref.read_dir(os.path.join(ROOT, d))
        a = families_ref.Arch(cfg)
        ids = IDS_LONG if key in SLIDING else IDS
        runs = []
        todo = [(ids, c) for c in cases(a.NH, len(ids), key in SLIDING)]
        if key in LONG:  # T = 40: the backward's products take the packed kernel from 32 rows on (backward.c)
            long_ids = [(t * 37 + 11) % a.V for t in range(40)]
            todo += [(long_ids, ("long_loss", {}, "loss", None, None)),
                     (long_ids, ("long_combined_ld", {"interventions": [iv("hard", 0, 1, 30, 3), iv("ablate", 1, 0),
                                                                        iv("soft", 1, 1, 39, 20, lam=1.0)]},
                                 "logit_diff", 81, 33))]
        for ids_c, (name, opts, metric, x, y) in todo:
            if a.L > 2 and opts.get("layer_mask"):  # tiny has three layers
                opts = dict(opts, layer_mask=opts["layer_mask"] + ["causal"] * (a.L - 2),
                            layer_window=opts["layer_window"] + [0] * (a.L - 2))
            # the reference's forward is families_ref's: its last logits agree
            logits, _ = backward_ref.run(cfg, W, ids_c, opts)
            want = families_ref.forward(cfg, W, ids_c, opts)["logits"]
            assert np.max(np.abs(logits[-1].detach().numpy() - want)) < 1e-5, (key, name)
            value, grads = backward_ref.gradients(cfg, W, ids_c, opts, metric, x, y)
            case = {"name": name, "opts": opts, "metric": metric, "a": x, "b": y, "value": value, "parts": {}}
            if ids_c is not ids:
                case["ids"] = ids_c
            for part in backward_ref.PARTS:
                g = grads[part].reshape(-1)
                case["parts"][part] = [len(blob), int(g.size)]
                blob.extend(float(v) for v in g)
            runs.append(case)
        models[key] = {"dir": d, "ids": ids, "n_layer": a.L, "n_head": a.NH, "n_kv_head": a.NKV, "head_dim": a.HS,
                       "cases": runs}
    out = os.path.join(ROOT, "tests", "fixtures")
    np.asarray(blob, dtype="<f4").tofile(os.path.join(out, "backward_golden.bin"))
    with open(os.path.join(out, "backward_golden.json"), "w", encoding="utf-8") as f:
        f.write('{"generator":"tests/ref/gen_backward.py","data":"backward_golden.bin (float32 little-endian)",'
                '"parts":' + json.dumps(list(backward_ref.PARTS)) + ',"models":{\n')
        f.write(",\n".join(json.dumps(k) + ":" + json.dumps(v, sort_keys=True) for k, v in models.items()))
        f.write("\n}}\n")
    print("wrote %d cases, %d floats" % (sum(len(m["cases"]) for m in models.values()), len(blob)))


if __name__ == "__main__":
    main()
