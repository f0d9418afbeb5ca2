#!/usr/bin/python3
"""convert_llama2c.py — a llama2.c checkpoint (its legacy "version 0" .bin, as run.c reads it) to a Hugging Face
Llama folder (config.json, model.safetensors, tokenizer.json) that attnlab loads as family "llama".

    /usr/bin/python3 scripts/convert_llama2c.py stories260K.bin OUT_DIR [--tokenizer tok512.bin]
        [--bytes-tokenizer PATH] [--no-permute]

The .bin format, from llama2.c's run.c (read_checkpoint, memory_map_weights):
    header   7 int32: dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
             (vocab_size < 0 flags a classifier of its own, stored after everything else; > 0: the classifier
             is the token embedding)
    float32  token_embedding_table [V, dim]
             rms_att_weight [L, dim]
             wq [L, dim, dim]       (row-major [out, in]: run.c's matmul computes out[i] = sum_j w[i*n + j] x[j],
             wk [L, kv_dim, dim]     the layout of torch.nn.Linear.weight, so no transposition is needed)
             wv [L, kv_dim, dim]
             wo [L, dim, dim]
             rms_ffn_weight [L, dim]
             w1 [L, hidden, dim]    gate: out = w2(silu(w1 x) * w3 x)
             w2 [L, dim, hidden]    down
             w3 [L, hidden, dim]    up
             rms_final_weight [dim]
             freq_cis_real, freq_cis_imag [seq_len, head_size/2] each (unused by run.c; skipped)
             wcls [V, dim]          only when vocab_size < 0
    head_size = dim / n_heads, kv_dim = dim * n_kv_heads / n_heads.

The math run.c applies, and how it maps onto Hugging Face's LlamaForCausalLM:
  - RMSNorm  w * x / sqrt(mean(x^2) + 1e-5)            -> rms_norm_eps 1e-5, weight used as is (no 1 + w offset)
  - RoPE     run.c rotates the interleaved pairs (q[2i], q[2i+1]) of each head by the angle
             pos * 10000^(-2i / head_size); Hugging Face rotates the pairs (q[i], q[i + head_size/2]) by the
             same angle (inv_freq = 1 / theta^(arange(0, d, 2) / d), rotate_half). So the rows of q_proj and
             k_proj are permuted within each head: HF row i <- run.c row 2i, HF row head_size/2 + i <- run.c
             row 2i + 1 (the permutation of transformers' convert_llama_weights_to_hf and of llama2.c's own
             export.py). Attention scores are dot products within a head, so permuting q and k alike leaves them
             unchanged; v and o are not permuted. --no-permute skips it (a deliberately wrong conversion, for
             showing that the tests catch it).
  - attention  scores / sqrt(head_size), causal softmax, grouped-query: query head h reads kv head
             h / (n_heads / n_kv_heads)                -> num_key_value_heads (HF's repeat_kv has the same grouping)
  - MLP      w2(silu(w1 x) * w3 x)                     -> gate_proj = w1, up_proj = w3, down_proj = w2
  - no biases anywhere                                 -> attention_bias false, mlp_bias false

tokenizer.json (with --tokenizer tok512.bin): llama2.c's tokenizer file (run.c's build_tokenizer: u32
max_token_length, then per id f32 score, i32 length, bytes; tokenizer.py export wrote the SentencePiece pieces with
U+2581 as ' ', bos as "\n<s>\n", eos as "\n</s>\n") as a Llama-2-style Hugging Face tokenizer.json: normalizer
Prepend U+2581 then Replace ' ' -> U+2581 (run.c's encode adds the dummy-prefix " " and reads spaces as U+2581
pieces), no pre-tokenizer, BPE with byte_fallback (ids 3..258 are <0x00>..<0xFF>) and unk "<unk>", the merges
every (left, right) pair of vocabulary pieces whose concatenation is a piece, ranked by the merged piece's id (its
SentencePiece score falls as its id rises, so this is run.c's "merge the best-scoring pair first"), bos "<s>"
prepended by the post-processor, the decoder Replace U+2581 -> ' ', ByteFallback, Fuse, Strip one leading space.

--bytes-tokenizer PATH writes a STAND-IN byte-level tokenizer (GPT-2's byte alphabet, byte b -> id 3 + b, the
three specials, no merges) for engines that read only byte-level BPE: with it a folder loads and every id
0..258 shows its true bytes, but text tokenized with it is NOT what tok512 gives (compare on token ids).

Output is deterministic (sorted keys, fixed layout): converting twice gives identical bytes.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref"))
from safetensors_io import write_safetensors  # noqa: E402

HEADER = struct.Struct("<7i")


def read_llama2c(path):
    """The config and float32 tensors of a llama2.c version-0 checkpoint, in run.c's names and shapes."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < HEADER.size:
        raise ValueError("%s: shorter than the 28-byte header" % path)
    dim, hidden, n_layers, n_heads, n_kv_heads, vocab, seq_len = HEADER.unpack_from(buf, 0)
    shared = vocab > 0
    V = abs(vocab)
    for name, v in (("dim", dim), ("hidden_dim", hidden), ("n_layers", n_layers), ("n_heads", n_heads),
                    ("n_kv_heads", n_kv_heads), ("vocab_size", V), ("seq_len", seq_len)):
        if v <= 0:
            raise ValueError("%s: header field %s = %d is not positive" % (path, name, v))
    if dim % n_heads or n_heads % n_kv_heads:
        raise ValueError("%s: dim %d, n_heads %d, n_kv_heads %d do not divide" % (path, dim, n_heads, n_kv_heads))
    hs = dim // n_heads
    if hs % 2:
        raise ValueError("%s: head size %d is odd (RoPE rotates pairs)" % (path, hs))
    kv_dim = dim * n_kv_heads // n_heads
    L = n_layers
    layout = [
        ("token_embedding_table", (V, dim)),
        ("rms_att_weight", (L, dim)),
        ("wq", (L, dim, dim)),
        ("wk", (L, kv_dim, dim)),
        ("wv", (L, kv_dim, dim)),
        ("wo", (L, dim, dim)),
        ("rms_ffn_weight", (L, dim)),
        ("w1", (L, hidden, dim)),
        ("w2", (L, dim, hidden)),
        ("w3", (L, hidden, dim)),
        ("rms_final_weight", (dim,)),
        ("freq_cis_real", (seq_len, hs // 2)),
        ("freq_cis_imag", (seq_len, hs // 2)),
    ]
    if not shared:
        layout.append(("wcls", (V, dim)))
    n_floats = sum(int(np.prod(s)) for _, s in layout)
    want = HEADER.size + 4 * n_floats
    if len(buf) != want:
        raise ValueError("%s: %d bytes, but the header's sizes (%s classifier) make %d"
                         % (path, len(buf), "shared" if shared else "own", want))
    data = np.frombuffer(buf, dtype="<f4", offset=HEADER.size)
    t, pos = {}, 0
    for name, shape in layout:
        n = int(np.prod(shape))
        t[name] = data[pos:pos + n].reshape(shape).astype(np.float32)
        pos += n
    cfg = dict(dim=dim, hidden_dim=hidden, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads,
               vocab_size=V, seq_len=seq_len, shared_classifier=shared, head_size=hs, kv_dim=kv_dim)
    return cfg, t


def interleaved_to_halves(w, n_heads):
    """Rows of a q or k projection [n_heads * hs, in], from llama2.c's interleaved RoPE pairs (2i, 2i+1) to
    Hugging Face's halves (i, i + hs/2): within each head, new row i = old row 2i, new row hs/2 + i = old 2i + 1."""
    out_dim, in_dim = w.shape
    hs = out_dim // n_heads
    return np.ascontiguousarray(w.reshape(n_heads, hs // 2, 2, in_dim).transpose(0, 2, 1, 3).reshape(out_dim, in_dim))


def hf_tensors(cfg, t, permute=True):
    """Hugging Face LlamaForCausalLM state dict (names -> float32 arrays)."""
    nh, nkv = cfg["n_heads"], cfg["n_kv_heads"]
    qk = (lambda w, n: interleaved_to_halves(w, n)) if permute else (lambda w, n: np.ascontiguousarray(w))
    out = {"model.embed_tokens.weight": t["token_embedding_table"], "model.norm.weight": t["rms_final_weight"]}
    for i in range(cfg["n_layers"]):
        p = "model.layers.%d." % i
        out[p + "input_layernorm.weight"] = t["rms_att_weight"][i]
        out[p + "self_attn.q_proj.weight"] = qk(t["wq"][i], nh)
        out[p + "self_attn.k_proj.weight"] = qk(t["wk"][i], nkv)
        out[p + "self_attn.v_proj.weight"] = t["wv"][i]
        out[p + "self_attn.o_proj.weight"] = t["wo"][i]
        out[p + "post_attention_layernorm.weight"] = t["rms_ffn_weight"][i]
        out[p + "mlp.gate_proj.weight"] = t["w1"][i]
        out[p + "mlp.up_proj.weight"] = t["w3"][i]
        out[p + "mlp.down_proj.weight"] = t["w2"][i]
    if not cfg["shared_classifier"]:
        out["lm_head.weight"] = t["wcls"]
    return out


def hf_config(cfg):
    """config.json as transformers' LlamaConfig writes it for this model (float32 weights)."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": cfg["head_size"],
        "hidden_act": "silu",
        "hidden_size": cfg["dim"],
        "initializer_range": 0.02,
        "intermediate_size": cfg["hidden_dim"],
        "max_position_embeddings": cfg["seq_len"],
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": cfg["n_heads"],
        "num_hidden_layers": cfg["n_layers"],
        "num_key_value_heads": cfg["n_kv_heads"],
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": cfg["shared_classifier"],
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": cfg["vocab_size"],
    }


def bytes_to_unicode():
    """GPT-2's printable stand-in character for each byte (the byte-level BPE alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


SPECIALS = ["<unk>", "<s>", "</s>"]
SP = "\u2581"


def read_tok512(path, vocab_size):
    """Pieces (SentencePiece spelling, U+2581 for spaces) and scores of a llama2.c tokenizer file."""
    with open(path, "rb") as f:
        buf = f.read()
    (max_len,) = struct.unpack_from("<I", buf, 0)
    pos, pieces, scores = 4, [], []
    for i in range(vocab_size):
        score, n = struct.unpack_from("<fi", buf, pos)
        pos += 8
        if n < 0 or n > max_len or pos + n > len(buf):
            raise ValueError("%s: token %d has a bad length %d" % (path, i, n))
        text = buf[pos:pos + n].decode("utf-8")
        pos += n
        if i < len(SPECIALS):
            text = SPECIALS[i]
        elif text.startswith("<0x") and len(text) == 6:
            if int(text[3:5], 16) != i - len(SPECIALS):
                raise ValueError("%s: byte piece %s at id %d" % (path, text, i))
        pieces.append(text.replace(" ", SP))
        scores.append(score)
    if pos != len(buf):
        raise ValueError("%s: %d bytes after %d tokens" % (path, len(buf) - pos, vocab_size))
    if len(set(pieces)) != len(pieces):
        raise ValueError("%s: a piece occurs twice" % path)
    return pieces, scores


def llama2_tokenizer(pieces):
    """tokenizer.json in the form of Llama 2's (SentencePiece BPE with byte fallback), from tok512's pieces."""
    vocab = {p: i for i, p in enumerate(pieces)}
    merges = []
    for i, p in enumerate(pieces):
        if i < len(SPECIALS) + 256:
            continue
        for k in range(1, len(p)):
            a, b = p[:k], p[k:]
            if a in vocab and b in vocab and vocab[a] >= len(SPECIALS) + 256 and vocab[b] >= len(SPECIALS) + 256:
                merges.append((i, vocab[a], vocab[b], a, b))
    merges.sort()
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, s in enumerate(SPECIALS)]
    bos = {"SpecialToken": {"id": "<s>", "type_id": 0}}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SP},
            {"type": "Replace", "pattern": {"String": " "}, "content": SP}]},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SP}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for _, _, _, a, b in merges]},
    }


def standin_tokenizer():
    """The stand-in byte-level tokenizer.json described in the module docstring (ids 0..258 only)."""
    b2u = bytes_to_unicode()
    vocab = {s: i for i, s in enumerate(SPECIALS)}
    for b in range(256):
        vocab[b2u[b]] = len(SPECIALS) + b
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, s in enumerate(SPECIALS)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": None,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def convert(src, out, permute=True, tokenizer=None, bytes_tokenizer=None):
    cfg, t = read_llama2c(src)
    os.makedirs(out, exist_ok=True)
    write_json(os.path.join(out, "config.json"), hf_config(cfg))
    tensors = {k: ("F32", v) for k, v in hf_tensors(cfg, t, permute).items()}
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    if tokenizer:
        pieces, _ = read_tok512(tokenizer, cfg["vocab_size"])
        write_json(os.path.join(out, "tokenizer.json"), llama2_tokenizer(pieces))
    if bytes_tokenizer:
        write_json(bytes_tokenizer, standin_tokenizer())
    return cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint", help="llama2.c version-0 .bin (e.g. stories260K.bin)")
    ap.add_argument("out", help="output folder")
    ap.add_argument("--no-permute", action="store_true",
                    help="keep llama2.c's interleaved q/k rows (a WRONG conversion, for negative checks)")
    ap.add_argument("--tokenizer", help="llama2.c tokenizer file (tok512.bin): write tokenizer.json from it")
    ap.add_argument("--bytes-tokenizer", help="also write the stand-in byte-level tokenizer.json to this path")
    a = ap.parse_args()
    cfg = convert(a.checkpoint, a.out, permute=not a.no_permute, tokenizer=a.tokenizer,
                  bytes_tokenizer=a.bytes_tokenizer)
    print("wrote %s: dim %d, hidden %d, %d layers, %d heads (%d kv), vocab %d (%s classifier), seq_len %d%s"
          % (a.out, cfg["dim"], cfg["hidden_dim"], cfg["n_layers"], cfg["n_heads"], cfg["n_kv_heads"],
             cfg["vocab_size"], "shared" if cfg["shared_classifier"] else "own", cfg["seq_len"],
             "" if not a.no_permute else " [q/k NOT permuted]"))


if __name__ == "__main__":
    main()
