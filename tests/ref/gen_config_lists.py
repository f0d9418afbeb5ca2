#!/usr/bin/python3
"""gen_config_lists.py — tests/fixtures/configs/<model>/tensors.txt: the parameters (name and shape, as stored,
sorted by name) of each published checkpoint whose config.json is kept there (Pythia-70m, SmolLM2-135M/360M,
Qwen2.5-0.5B, Qwen3-0.6B, Llama-3.2-1B), derived from its config by tests/ref/hf_names.py, which is written from
Hugging Face's parameter naming and not from the C loader. tests/c/test_configs.c checks that the loader expects
exactly these. Non-parameter buffers some files carry (GPT-NeoX's attention.bias / masked_bias / rotary_emb.inv_freq)
are not listed: the loader ignores them.

    /usr/bin/python3 tests/ref/gen_config_lists.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from hf_names import expected_tensors, tensor_list_text  # noqa: E402

ROOT = os.path.join(HERE, "..", "fixtures", "configs")

for name in sorted(os.listdir(ROOT)):
    d = os.path.join(ROOT, name)
    if not os.path.isdir(d):
        continue
    with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    with open(os.path.join(d, "tensors.txt"), "w", encoding="utf-8") as f:
        f.write(tensor_list_text(cfg))
    n = sum(1 for _ in expected_tensors(cfg))
    params = 0
    for s in expected_tensors(cfg).values():
        p = 1
        for x in s:
            p *= x
        params += p
    print("%-14s %4d tensors, %.1f M parameters" % (name, n, params / 1e6))
