#!/usr/bin/python3
"""readings_grad_ref.py — the gradient readings of one input (Model.gradientReadings, docs/evidence.md § 12) in
float64 with torch autograd, on backward_ref.py's model code, and their golden file for
tests/js/gradient-readings.test.js:

    /usr/bin/python3 tests/ref/readings_grad_ref.py

writes tests/fixtures/gradient_readings_golden.json. Per model (GPT-2's tiny and the llama family fixture) and case
(metric, answers, baseline, steps), the readings as the API defines them, m the metric and e_j the embedding row of
token j (the row looked up, before wpe / Gemma's scale):
    gradNorm[j]            ||dm/de_j||
    gradTimesInput[j]      sum_c e_jc dm/de_jc
    integratedGradients[j] sum_c (e_jc - b_jc) (1/S) sum_k dm/de_jc at b + (k + 1/2)/S (e - b), k < S (the midpoint
                           rule), b the baseline rows: 0, or the embedding row of one token at every position
    completenessError      sum_j integratedGradients[j] - (m(e) - m(b)), and the same for each S of `convergence`
    attnGrad               (L, NH, T, T) A * dm/dA, A the attention probabilities
    attnGradSaliency       (L, T) |sum_h attnGrad[l, h, T - 1, j]| (Wang et al. 2023: the head sum, then |.|)
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import backward_ref as br  # noqa: E402
import families_ref as fr  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
METRIC = {"logitDiff": "logit_diff", "logProb": "logprob", "loss": "loss"}
CONVERGENCE = [1, 4, 16, 64, 256]


def metric_and_grads(cfg, W, ids, metric, answers, rows=None):
    """m at the rows (None: embed[ids]), dm/de (T, C), the kept tensors (embed, attn)."""
    logits, kept = br.run(cfg, W, ids, None, keep=True, embed_rows=rows)
    a, b = (list(answers) + [None, None])[:2]
    m = br.metric_value(METRIC[metric], logits, ids, a, b)
    m.backward()
    g = kept["embed"].grad
    return float(m), (torch.zeros_like(kept["embed"]) if g is None else g), kept


def integrated(cfg, W, ids, metric, answers, e, base, steps):
    acc = torch.zeros_like(e)
    for k in range(steps):
        _, g, _ = metric_and_grads(cfg, W, ids, metric, answers, base + (k + 0.5) / steps * (e - base))
        acc += g
    return ((e - base) * acc / steps).sum(dim=1)


def readings(cfg, W, ids, metric, answers, baseline, steps):
    value, g, kept = metric_and_grads(cfg, W, ids, metric, answers)
    e = kept["embed"].detach()
    if baseline == "zero":
        base = torch.zeros_like(e)
    else:
        _, kb = br.run(cfg, W, [baseline] * len(ids), None, keep=True)
        base = kb["embed"].detach()
    with torch.no_grad():
        logits_b, _ = br.run(cfg, W, ids, None, embed_rows=base)
        a, b = (list(answers) + [None, None])[:2]
        value_b = float(br.metric_value(METRIC[metric], logits_b, ids, a, b))
    ig = integrated(cfg, W, ids, metric, answers, e, base, steps)
    A = torch.stack([t.detach() for t in kept["attn"]])            # (L, NH, T, T)
    G = torch.stack([torch.zeros_like(t) if t.grad is None else t.grad for t in kept["attn"]])
    ag = A * G
    conv = {}
    for s in CONVERGENCE:
        conv[str(s)] = float(integrated(cfg, W, ids, metric, answers, e, base, s).sum()) - (value - value_b)
    return {
        "value": value, "baselineValue": value_b,
        "gradNorm": g.norm(dim=1).tolist(),
        "gradTimesInput": (e * g).sum(dim=1).tolist(),
        "integratedGradients": ig.tolist(),
        "completenessError": float(ig.sum()) - (value - value_b),
        "attnGrad": ag.reshape(-1).tolist(),
        "attnGradSaliency": ag[:, :, -1, :].sum(dim=1).abs().reshape(-1).tolist(),
        "convergence": conv,
    }


MODELS = [("tiny", "tests/fixtures/tiny"), ("llama", "tests/fixtures/families/llama")]
IDS = [40, 81, 33, 200, 17, 81, 5, 250]


def main():
    torch.set_default_dtype(torch.float64)
    out = {"generator": "tests/ref/readings_grad_ref.py", "models": {}}
    for key, d in MODELS:
        cfg, W = fr.read_dir(os.path.join(ROOT, d))
        a = fr.Arch(cfg)
        with torch.no_grad():
            top = int(torch.argmax(br.run(cfg, W, IDS, None)[0][-1]))
        cases = [
            {"metric": "logitDiff", "answers": [81, 33], "baseline": "zero", "steps": 32},
            {"metric": "logProb", "answers": [top], "baseline": 7, "steps": 8},
            {"metric": "loss", "answers": [], "baseline": "zero", "steps": 4},
        ]
        for c in cases:
            c.update(readings(cfg, W, IDS, c["metric"], c["answers"], c["baseline"], c["steps"]))
        out["models"][key] = {"dir": d, "ids": IDS, "n_layer": a.L, "n_head": a.NH, "top": top, "cases": cases}
    path = os.path.join(ROOT, "tests", "fixtures", "gradient_readings_golden.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
