"""twins_ref.py — an independent float64 reference of the random-weight twins (web/src/twins.js, docs/evidence.md
"Random-weight twins"), written from the documented rules with numpy only (Debian's python3-numpy).

The generator: splitmix64 on Python integers, seeded with state = seed (a uint32); per draw
    state += 0x9E3779B97F4A7C15; z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB; draw = z ^ (z >> 31)          (mod 2^64)
u = (draw >> 11) * 2^-53; a normal from two uniforms u1, u2: sqrt(-2 ln(1 - u1)) cos(2 pi u2); a weight is
float32(sigma * z). The matrices in order wte [V, E], wpe [P, E], then per layer c_attn.weight [E, 3E],
attn.c_proj.weight [E, E], mlp.c_fc.weight [E, 4E], mlp.c_proj.weight [4E, E], each row-major; sigma 0.02, and
0.02 / sqrt(2 L) for the two c_proj; biases 0, LayerNorm 1 and 0, the LM head tied.
The matched twin: the query columns [0, E) of each layer's c_attn.weight (and its bias, 0) become float32(w * s_l).

The entropy of a layer over a set: per input, the mean over heads and query rows 1..T-1 of -sum_j A ln A; the mean
over inputs. The calibration: layer by layer from the bottom, bisection on ln s in [-8, 12], 50 halvings, s the
last midpoint; here the entropy at each trial s is computed by a float64 forward pass of the layers up to l.

    /usr/bin/python3 tests/ref/twins_ref.py golden          writes tests/fixtures/twins_golden.json (tiny fixture)
    /usr/bin/python3 tests/ref/twins_ref.py entropies MODEL_DIR SEED 's0,s1,..' IDS_JSON
                                                             prints {"entropies": [...]}: the twin's per-layer
                                                             entropies, float64, at those scales on those inputs
"""
import hashlib
import json
import math
import os
import sys

import numpy as np

from safetensors_io import read_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TINY = os.path.join(ROOT, "tests", "fixtures", "tiny")
GOLDEN = os.path.join(ROOT, "tests", "fixtures", "twins_golden.json")
M64 = (1 << 64) - 1
BRACKET = (-8.0, 12.0)
STEPS = 50


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1 = self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def twin_weights(cfg, seed, scales=None):
    """name -> float32 array: the gpt2-init twin of cfg from seed, its query columns scaled by scales if given."""
    V, P, E, L = cfg["vocab_size"], cfg["n_positions"], cfg["n_embd"], cfg["n_layer"]
    rng = SplitMix64(seed)
    resid = 0.02 / math.sqrt(2 * L)

    def draw(shape, sigma):
        n = int(np.prod(shape))
        return np.array([sigma * rng.normal() for _ in range(n)], dtype=np.float64).astype(np.float32).reshape(shape)

    w = {"wte.weight": draw((V, E), 0.02), "wpe.weight": draw((P, E), 0.02)}
    for l in range(L):
        h = "h.%d." % l
        w[h + "attn.c_attn.weight"] = draw((E, 3 * E), 0.02)
        w[h + "attn.c_proj.weight"] = draw((E, E), resid)
        w[h + "mlp.c_fc.weight"] = draw((E, 4 * E), 0.02)
        w[h + "mlp.c_proj.weight"] = draw((4 * E, E), resid)
        for name, n in (("ln_1", E), ("ln_2", E)):
            w[h + name + ".weight"] = np.ones(n, np.float32)
            w[h + name + ".bias"] = np.zeros(n, np.float32)
        w[h + "attn.c_attn.bias"] = np.zeros(3 * E, np.float32)
        w[h + "attn.c_proj.bias"] = np.zeros(E, np.float32)
        w[h + "mlp.c_fc.bias"] = np.zeros(4 * E, np.float32)
        w[h + "mlp.c_proj.bias"] = np.zeros(E, np.float32)
    w["ln_f.weight"] = np.ones(E, np.float32)
    w["ln_f.bias"] = np.zeros(E, np.float32)
    if scales is not None:
        for l, s in enumerate(scales):
            W = w["h.%d.attn.c_attn.weight" % l]
            W[:, :E] = (W[:, :E].astype(np.float64) * s).astype(np.float32)
            b = w["h.%d.attn.c_attn.bias" % l]
            b[:E] = (b[:E].astype(np.float64) * s).astype(np.float32)
    return w


def load_trained(model_dir):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    tensors, _, _ = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    w = {}
    for name, arr in tensors.items():
        if name.startswith("transformer."):
            name = name[len("transformer."):]
        if name.endswith(".attn.bias") or name.endswith(".attn.masked_bias") or name == "lm_head.weight":
            continue
        w[name] = arr
    return cfg, w


# ---- a float64 GPT-2 forward, as far as the attention of a layer --------------------------------------------

def layernorm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def layer_entropies(cfg, w, ids, upto=None, q_scale=None):
    """Per-layer entropy (mean over heads and rows 1..T-1) of one input, float64; layers 0..upto (all if None);
    q_scale: (layer, s) multiplies that layer's q by s (the calibration's trial)."""
    L, E, NH = cfg["n_layer"], cfg["n_embd"], cfg["n_head"]
    HS = E // NH
    eps = float(cfg.get("layer_norm_epsilon", 1e-5))
    f = lambda k: w[k].astype(np.float64)
    T = len(ids)
    x = f("wte.weight")[ids] + f("wpe.weight")[:T]
    out = []
    last = L - 1 if upto is None else upto
    mask = np.tril(np.ones((T, T), dtype=bool))
    for l in range(last + 1):
        p = "h.%d." % l
        h = layernorm(x, f(p + "ln_1.weight"), f(p + "ln_1.bias"), eps)
        qkv = h @ f(p + "attn.c_attn.weight") + f(p + "attn.c_attn.bias")
        q = qkv[:, :E].reshape(T, NH, HS).transpose(1, 0, 2)
        k = qkv[:, E:2 * E].reshape(T, NH, HS).transpose(1, 0, 2)
        v = qkv[:, 2 * E:].reshape(T, NH, HS).transpose(1, 0, 2)
        if q_scale is not None and q_scale[0] == l:
            q = q * q_scale[1]
        scale = 1.0 / math.sqrt(HS) if cfg.get("scale_attn_weights", True) else 1.0
        if cfg.get("scale_attn_by_inverse_layer_idx", False):
            scale /= l + 1
        s = (q @ k.transpose(0, 2, 1)) * scale
        s = np.where(mask, s, -np.inf)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a = a / a.sum(-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0).sum(-1)   # (NH, T)
        out.append(float(ent[:, 1:].mean()))
        if l == last:
            break
        y = (a @ v).transpose(1, 0, 2).reshape(T, E)
        x = x + y @ f(p + "attn.c_proj.weight") + f(p + "attn.c_proj.bias")
        h2 = layernorm(x, f(p + "ln_2.weight"), f(p + "ln_2.bias"), eps)
        x = x + gelu_new(h2 @ f(p + "mlp.c_fc.weight") + f(p + "mlp.c_fc.bias")) @ f(p + "mlp.c_proj.weight") + f(p + "mlp.c_proj.bias")
    return out


def set_entropies(cfg, w, inputs, upto=None, q_scale=None):
    per = [layer_entropies(cfg, w, ids, upto, q_scale) for ids in inputs]
    return [float(np.mean([e[l] for e in per])) for l in range(len(per[0]))]


def calibrate(cfg, seed, inputs, target):
    """The matched twin's scales: bottom-up bisection on ln s (float64 forward passes at each trial)."""
    L = cfg["n_layer"]
    scales = []
    for l in range(L):
        w = twin_weights(cfg, seed, scales + [1.0] * (L - len(scales)))
        H = lambda s: set_entropies(cfg, w, inputs, upto=l, q_scale=(l, s))[l]
        lo, hi = BRACKET
        for _ in range(STEPS):
            mid = (lo + hi) / 2
            if H(math.exp(mid)) > target[l]:
                lo = mid
            else:
                hi = mid
        scales.append(math.exp((lo + hi) / 2))
    return scales


def tensor_summary(w):
    return {name: {"sha256": hashlib.sha256(a.astype("<f4").tobytes()).hexdigest(), "sum": float(a.astype(np.float64).sum()),
                   "first": [float(x) for x in a.reshape(-1)[:4]]}
            for name, a in w.items()}


def golden():
    cfg, trained = load_trained(TINY)
    V, P = cfg["vocab_size"], cfg["n_positions"]
    rng = SplitMix64(2024)
    # six inputs of 8..40 ids drawn from [0, V) (the test passes them as the set)
    inputs = [[rng.next() % (V - 1) for _ in range(n)] for n in (8, 13, 21, 27, 34, 40)]
    assert all(len(x) <= P for x in inputs)
    trained_h = set_entropies(cfg, trained, inputs)
    out = {"model": "tests/fixtures/tiny", "inputs": inputs, "bracket": list(BRACKET), "steps": STEPS,
           "weights": {}, "matched": {}}
    r = SplitMix64(1)
    out["draws_seed1"] = [str(r.next()) for _ in range(4)]
    r = SplitMix64(1)
    out["normals_seed1"] = [r.normal() for _ in range(8)]
    for seed in (1, 7):
        out["weights"][str(seed)] = tensor_summary(twin_weights(cfg, seed))
    init = set_entropies(cfg, twin_weights(cfg, 1), inputs)
    scales = calibrate(cfg, 1, inputs, trained_h)
    matched = set_entropies(cfg, twin_weights(cfg, 1, scales), inputs)
    out["matched"] = {"seed": 1, "trained": trained_h, "init": init, "scales": scales, "entropies": matched}
    with open(GOLDEN, "w", encoding="utf-8") as f:   # one top-level key a line
        f.write("{\n" + ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v)) for k, v in out.items()) + "\n}\n")
    print("wrote", GOLDEN, "scales", scales, "trained", trained_h, "matched", matched)


def main(argv):
    if len(argv) >= 2 and argv[1] == "golden":
        golden()
    elif len(argv) == 6 and argv[1] == "entropies":
        model_dir, seed, scales, ids_json = argv[2], int(argv[3]), [float(s) for s in argv[4].split(",")], argv[5]
        cfg, _ = load_trained(model_dir)
        inputs = json.loads(ids_json)
        print(json.dumps({"entropies": set_entropies(cfg, twin_weights(cfg, seed, scales), inputs)}))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
