"""Export a training checkpoint to the Hugging Face GPT-2 layout: config.json + model.safetensors (F16).

  /usr/bin/python3 models/train/export.py [--ckpt models/train/runs/main/final.pt] [--out models/brown-gpt2]

The safetensors file is written by hand: 8-byte little-endian header length N, N bytes of JSON
({name: {dtype, shape, data_offsets [begin, end)}, "__metadata__": {"format": "pt"}}, padded
with spaces so the data starts on an 8-byte boundary), then the tensors back to back.
Names and layouts are GPT2Model's (no "transformer." prefix, no lm_head: it is tied to wte):
Conv1D weights are stored in x out, so every nn.Linear weight (out x in) is transposed.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MAX_BYTES = 16_000_000


def hf_tensors(state, n_layer):
    """PyTorch state dict of model.GPT2 -> ordered list of (HF name, float32 numpy array)."""
    def t(name):
        return state[name].detach().float().cpu().numpy()

    wte = t("wte.weight")
    if "id_map" in state:  # shared unseen row: expand to the full (V, C) matrix
        wte = wte[state["id_map"].cpu().numpy()]
    out = [("wte.weight", wte), ("wpe.weight", t("wpe.weight"))]
    for i in range(n_layer):
        p = f"h.{i}."
        out += [
            (p + "ln_1.weight", t(p + "ln_1.weight")), (p + "ln_1.bias", t(p + "ln_1.bias")),
            (p + "attn.c_attn.weight", t(p + "attn.c_attn.weight").T),   # (C, 3C)
            (p + "attn.c_attn.bias", t(p + "attn.c_attn.bias")),
            (p + "attn.c_proj.weight", t(p + "attn.c_proj.weight").T),   # (C, C)
            (p + "attn.c_proj.bias", t(p + "attn.c_proj.bias")),
            (p + "ln_2.weight", t(p + "ln_2.weight")), (p + "ln_2.bias", t(p + "ln_2.bias")),
            (p + "mlp.c_fc.weight", t(p + "mlp.c_fc.weight").T),         # (C, 4C)
            (p + "mlp.c_fc.bias", t(p + "mlp.c_fc.bias")),
            (p + "mlp.c_proj.weight", t(p + "mlp.c_proj.weight").T),     # (4C, C)
            (p + "mlp.c_proj.bias", t(p + "mlp.c_proj.bias")),
        ]
    out += [("ln_f.weight", t("ln_f.weight")), ("ln_f.bias", t("ln_f.bias"))]
    return out


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors:
        assert np.isfinite(a).all() and np.abs(a).max() < 65504, f"{name} does not fit in F16"
        b = np.ascontiguousarray(a.astype("<f2")).tobytes()
        header[name] = {"dtype": "F16", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    return 8 + len(h) + off


def hf_config(cfg):
    """config.json as transformers writes it for GPT2LMHeadModel (gpt2's, with this model's sizes)."""
    return {
        "_name_or_path": "brown-gpt2",
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": cfg["attn_dropout"],
        "bos_token_id": 50256,
        "embd_pdrop": cfg["dropout"],
        "eos_token_id": 50256,
        "initializer_range": 0.02,
        "layer_norm_epsilon": cfg["layer_norm_epsilon"],
        "model_type": "gpt2",
        "n_ctx": cfg["n_positions"],
        "n_embd": cfg["n_embd"],
        "n_head": cfg["n_head"],
        "n_inner": None,
        "n_layer": cfg["n_layer"],
        "n_positions": cfg["n_positions"],
        "reorder_and_upcast_attn": False,
        "resid_pdrop": cfg["dropout"],
        "scale_attn_by_inverse_layer_idx": False,
        "scale_attn_weights": True,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "tie_word_embeddings": True,
        "torch_dtype": "float16",
        "use_cache": True,
        "vocab_size": cfg["vocab_size"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(HERE, "runs", "main", "final.pt"))
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "brown-gpt2"))
    a = ap.parse_args()
    ck = torch.load(a.ckpt, map_location="cpu")
    cfg = ck["config"]
    tensors = hf_tensors(ck["model"], cfg["n_layer"])
    os.makedirs(a.out, exist_ok=True)
    st = os.path.join(a.out, "model.safetensors")
    n = write_safetensors(st, tensors)
    if n > MAX_BYTES:
        sys.exit(f"model.safetensors is {n} bytes > {MAX_BYTES}")
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(hf_config(cfg), f, indent=2, sort_keys=True)
        f.write("\n")
    n_params = sum(x.size for _, x in tensors)
    print(f"wrote {st}: {n} bytes, {len(tensors)} tensors, {n_params} parameters (F16)")


if __name__ == "__main__":
    main()
