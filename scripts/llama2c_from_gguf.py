#!/usr/bin/python3
"""llama2c_from_gguf.py — rebuild llama2.c's stories260K.bin and tok512.bin from the float32 GGUF copy of the same
model (ggml-org's tinyllamas/stories260K.gguf), because no unaltered stories260K.bin or tok512.bin is reachable here
(tests/fixtures/README.md says why).

    /usr/bin/python3 scripts/llama2c_from_gguf.py stories260K.gguf OUT_DIR [--seq-len 512]

writes OUT_DIR/stories260K.bin (llama2.c's legacy version-0 checkpoint, as llama2.c's export.py legacy_export
writes it) and OUT_DIR/tok512.bin (llama2.c's tokenizer format, as its tokenizer.py export writes it).

GGUF (read here from the format description, no gguf package): "GGUF", u32 version (2 or 3), u64 tensor count,
u64 metadata count; metadata as (string key, u32 type, value); tensor infos as (string name, u32 n_dims,
u64 dims[n_dims] fastest first, u32 ggml type, u64 offset); the data after padding to general.alignment (32).
Every tensor of this file is F32 (ggml type 0). A ggml matrix with dims [in, out] is row-major [out, in], which is
llama2.c's layout too, and llama.cpp's LLaMA graph rotates interleaved pairs (2i, 2i+1) as run.c does, so a
llama2.c -> GGUF conversion copies q and k unpermuted: the tensors go back unchanged.

The .bin (run.c's read_checkpoint): 7 int32 dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size (negative
if the classifier is not the embedding), seq_len; then token embedding, rms_att [L], wq [L], wk [L], wv [L],
wo [L], rms_ffn [L], w1 [L], w2 [L], w3 [L], rms_final, freq_cis_real and freq_cis_imag [seq_len, head_size/2]
(as llama2.c's model.py precompute_freqs_cis computes them in float32 torch; run.c skips them), and the
classifier only when it is not the embedding. seq_len is not in the GGUF (its llama.context_length is the
converter's default 2048): stories260K was trained with max_seq_len 512 (llama2.c doc/stories260K.md).

tok512.bin (run.c's build_tokenizer): u32 max_token_length, then per token f32 score, i32 length, bytes; the
pieces as tokenizer.py export writes them: '\\n<s>\\n' for bos, '\\n</s>\\n' for eos, U+2581 replaced by ' '.
"""
import argparse
import os
import struct

import numpy as np

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


class Reader:
    def __init__(self, buf):
        self.buf, self.p = buf, 0

    def get(self, fmt):
        v = struct.unpack_from("<" + fmt, self.buf, self.p)
        self.p += struct.calcsize("<" + fmt)
        return v[0]

    def string(self):
        n = self.get("Q")
        s = self.buf[self.p:self.p + n].decode("utf-8")
        self.p += n
        return s

    def value(self, t):
        if t in SCALAR:
            return self.get(SCALAR[t])
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.get("I"), self.get("Q")
            return [self.value(et) for _ in range(n)]
        raise ValueError("GGUF: unknown metadata type %d" % t)


def read_gguf(path):
    """(metadata dict, {name: float32 array in row-major [out, in] order})."""
    with open(path, "rb") as f:
        buf = f.read()
    r = Reader(buf)
    if buf[:4] != b"GGUF":
        raise ValueError("%s: not a GGUF file" % path)
    r.p = 4
    version = r.get("I")
    if version not in (2, 3):
        raise ValueError("%s: GGUF version %d (2 or 3 expected)" % (path, version))
    n_tensors, n_kv = r.get("Q"), r.get("Q")
    meta = {}
    for _ in range(n_kv):
        k = r.string()
        meta[k] = r.value(r.get("I"))
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.get("Q") for _ in range(r.get("I"))]
        infos.append((name, dims, r.get("I"), r.get("Q")))
    align = meta.get("general.alignment", 32)
    start = (r.p + align - 1) // align * align
    tensors = {}
    for name, dims, ty, off in infos:
        if ty != 0:
            raise ValueError("%s: tensor %s has ggml type %d; only F32 (0) is handled" % (path, name, ty))
        n = int(np.prod(dims))
        if start + off + 4 * n > len(buf):
            raise ValueError("%s: tensor %s runs past the end" % (path, name))
        tensors[name] = np.frombuffer(buf, "<f4", count=n, offset=start + off).reshape(list(reversed(dims)))
    return meta, tensors


def freqs_cis(head_size, seq_len):
    """llama2.c model.py precompute_freqs_cis(head_size, seq_len), float32 (torch, as the export computed it)."""
    import torch
    freqs = 1.0 / (10000.0 ** (torch.arange(0, head_size, 2)[: (head_size // 2)].float() / head_size))
    t = torch.arange(seq_len, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.cos(freqs).numpy(), torch.sin(freqs).numpy()


def write_bin(path, meta, t, seq_len):
    dim = meta["llama.embedding_length"]
    hidden = meta["llama.feed_forward_length"]
    L = meta["llama.block_count"]
    nh = meta["llama.attention.head_count"]
    nkv = meta.get("llama.attention.head_count_kv", nh)
    emb = t["token_embd.weight"]
    V = emb.shape[0]
    out = t.get("output.weight")
    shared = out is None or np.array_equal(out, emb)
    cos, sin = freqs_cis(dim // nh, seq_len)
    parts = [struct.pack("<7i", dim, hidden, L, nh, nkv, V if shared else -V, seq_len), emb]
    blk = lambda name: [t["blk.%d.%s.weight" % (i, name)] for i in range(L)]  # noqa: E731
    for name in ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_down",
                 "ffn_up"):
        parts += blk(name)
    parts += [t["output_norm.weight"], cos, sin]
    if not shared:
        parts.append(out)
    with open(path, "wb") as f:
        for p in parts:
            f.write(p if isinstance(p, bytes) else np.ascontiguousarray(p, dtype="<f4").tobytes())
    return dict(dim=dim, hidden=hidden, n_layers=L, n_heads=nh, n_kv_heads=nkv, vocab=V, shared=shared)


def write_tokenizer_bin(path, meta):
    tokens, scores = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"]
    bos, eos = meta.get("tokenizer.ggml.bos_token_id", 1), meta.get("tokenizer.ggml.eos_token_id", 2)
    pieces = []
    for i, tok in enumerate(tokens):
        if i == bos:
            tok = "\n<s>\n"
        elif i == eos:
            tok = "\n</s>\n"
        pieces.append(tok.replace("\u2581", " ").encode("utf-8"))
    with open(path, "wb") as f:
        f.write(struct.pack("<I", max(len(b) for b in pieces)))
        for b, s in zip(pieces, scores):
            f.write(struct.pack("<fI", s, len(b)))
            f.write(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gguf")
    ap.add_argument("out")
    ap.add_argument("--seq-len", type=int, default=512)
    a = ap.parse_args()
    meta, t = read_gguf(a.gguf)
    if meta.get("general.architecture") != "llama":
        raise SystemExit("%s: general.architecture is %r, not llama" % (a.gguf, meta.get("general.architecture")))
    os.makedirs(a.out, exist_ok=True)
    cfg = write_bin(os.path.join(a.out, "stories260K.bin"), meta, t, a.seq_len)
    write_tokenizer_bin(os.path.join(a.out, "tok512.bin"), meta)
    print("wrote %s/stories260K.bin (%s) and tok512.bin (%d tokens)" % (a.out, cfg, len(meta["tokenizer.ggml.tokens"])))


if __name__ == "__main__":
    main()
