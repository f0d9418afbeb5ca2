#!/usr/bin/python3
"""export_onnx.py — export a GPT-2 checkpoint (Hugging Face layout, safetensors) to ONNX for the peer benchmark.

    OMP_NUM_THREADS=1 /usr/bin/python3 tests/ref/export_onnx.py MODEL_DIR OUT.onnx [--check-T 11]

The graph: input_ids int64 [1, T] (T dynamic) -> logits float32 [1, 1, V] of the LAST position only, the same thing
attnlab's alab_forward computes (and what issue 8's peer figures were measured on). Written as a plain torch module
from the math (as tests/ref/gpt2_ref.py, but float32 and batched the way an exporter sees GPT-2):

    x = wte[ids] + wpe[0..T);  per layer: x += c_proj(attn(LN1 x));  x += mlp_proj(gelu_new(c_fc(LN2 x)))
    attn: causal softmax(q k^T / sqrt(HS)) v per head;  logits = LN_f(x[:, -1]) @ wte^T

The tied embedding is stored once: the LM head is a Gemm(transB = 1) (TiedHead's symbolic) reading the same `wte`
initializer the Gather reads (torch's own F.linear export is Transpose + MatMul, which constant folding turns into a
second, transposed copy of wte). The causal mask is a
[P, P] bool buffer sliced to [T, T] (as Hugging Face's GPT-2 does). Opset 14. torch 1.13 exports without the `onnx`
python package; --check-T runs the module itself on a T-token input and prints the max |torch - gpt2_ref| so the
export's source is known to be right (the ONNX file is then checked against attnlab in bench/peer/peer_bench.mjs).
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpt2_ref import load_model  # noqa: E402


class TiedHead(torch.autograd.Function):
    """logits = x @ w^T, exported as one Gemm(transB = 1) on w itself: without it torch emits Transpose(wte) + MatMul,
    and constant folding then stores a transposed copy of the 154 MB embedding."""

    @staticmethod
    def forward(ctx, x, w):
        return torch.matmul(x, w.t())

    @staticmethod
    def symbolic(g, x, w):
        return g.op("Gemm", x, w, alpha_f=1.0, beta_f=1.0, transA_i=0, transB_i=1)


class GPT2LastLogits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        W = model.w
        self.L, self.NH, self.C, self.HS, self.eps = model.L, model.NH, model.C, model.HS, model.eps

        def p(name):
            return torch.nn.Parameter(W[name].to(torch.float32).contiguous(), requires_grad=False)

        self.wte = p("wte.weight")
        self.wpe = p("wpe.weight")
        self.lnf_w, self.lnf_b = p("ln_f.weight"), p("ln_f.bias")
        self.layers = torch.nn.ModuleList()
        for l in range(self.L):
            m = torch.nn.Module()
            pre = "h.%d." % l
            for attr, name in (("ln1_w", "ln_1.weight"), ("ln1_b", "ln_1.bias"),
                               ("attn_w", "attn.c_attn.weight"), ("attn_b", "attn.c_attn.bias"),
                               ("proj_w", "attn.c_proj.weight"), ("proj_b", "attn.c_proj.bias"),
                               ("ln2_w", "ln_2.weight"), ("ln2_b", "ln_2.bias"),
                               ("fc_w", "mlp.c_fc.weight"), ("fc_b", "mlp.c_fc.bias"),
                               ("fcproj_w", "mlp.c_proj.weight"), ("fcproj_b", "mlp.c_proj.bias")):
                setattr(m, attr, p(pre + name))
            self.layers.append(m)
        P = model.P
        self.register_buffer("causal", torch.tril(torch.ones(P, P, dtype=torch.bool)), persistent=True)

    def forward(self, input_ids):                                     # (1, T) int64
        T = input_ids.shape[1]
        C, NH, HS = self.C, self.NH, self.HS
        x = F.embedding(input_ids, self.wte) + self.wpe[:T].unsqueeze(0)     # (1, T, C)
        mask = self.causal[:T, :T]
        neg = torch.tensor(float("-inf"), dtype=torch.float32)
        for m in self.layers:
            h = F.layer_norm(x, (C,), m.ln1_w, m.ln1_b, self.eps)
            qkv = torch.matmul(h, m.attn_w) + m.attn_b                # (1, T, 3C)
            q, k, v = qkv.split(C, dim=2)
            q = q.reshape(1, T, NH, HS).transpose(1, 2)               # (1, NH, T, HS)
            k = k.reshape(1, T, NH, HS).transpose(1, 2)
            v = v.reshape(1, T, NH, HS).transpose(1, 2)
            s = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(HS))
            s = torch.where(mask, s, neg)
            a = torch.softmax(s, dim=-1)
            y = torch.matmul(a, v).transpose(1, 2).reshape(1, T, C)
            x = x + torch.matmul(y, m.proj_w) + m.proj_b
            h = F.layer_norm(x, (C,), m.ln2_w, m.ln2_b, self.eps)
            u = torch.matmul(h, m.fc_w) + m.fc_b
            u = 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * torch.pow(u, 3.0))))
            x = x + torch.matmul(u, m.fcproj_w) + m.fcproj_b
        last = F.layer_norm(x[:, -1, :], (C,), self.lnf_w, self.lnf_b, self.eps)   # (1, C)
        return TiedHead.apply(last, self.wte).unsqueeze(1)            # (1, 1, V): Gemm transB=1 on wte


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--check-T", type=int, default=11, help="compare the module with gpt2_ref on T tokens (0: skip)")
    a = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    model = load_model(a.model_dir)
    mod = GPT2LastLogits(model).eval()
    V = model.V
    if a.check_T > 0:
        from gpt2_ref import forward as ref_forward
        ids = [(t * 7919 + 13) % V for t in range(a.check_T)]
        with torch.no_grad():
            got = mod(torch.tensor([ids], dtype=torch.long)).numpy().reshape(-1)
        want = ref_forward(model, ids)["logits"]
        print("export_onnx: torch module vs gpt2_ref (float64) at T=%d: max |diff| %.3g" %
              (a.check_T, float(np.max(np.abs(got - want)))))
    dummy = torch.zeros((1, 8), dtype=torch.long)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(mod, (dummy,), a.out, opset_version=14, input_names=["input_ids"],
                          output_names=["logits"], dynamic_axes={"input_ids": {1: "T"}},
                          do_constant_folding=True)
    size = os.path.getsize(a.out)
    st = os.path.getsize(os.path.join(a.model_dir, "model.safetensors"))
    print("export_onnx: wrote %s (%.1f MB; model.safetensors %.1f MB)" % (a.out, size / 1e6, st / 1e6))
    # the tied embedding must be stored once: the file cannot be much larger than the weights
    if size > 1.05 * st:
        raise SystemExit("export_onnx: %s is %.2fx the safetensors file: an initializer is duplicated" % (a.out, size / st))


if __name__ == "__main__":
    main()
