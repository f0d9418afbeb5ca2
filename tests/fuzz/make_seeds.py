#!/usr/bin/env python3
"""make_seeds.py — build the seed corpora of the fuzz targets from real files.

    python3 tests/fuzz/make_seeds.py        (from the repository root)

Writes tests/fuzz/seeds/<target>/<name> for the six targets and
tests/fuzz/mini/ — a complete, valid, very small GPT-2 model (256 byte tokens
+ 8 merges, C=8, L=1, NH=2, P=8; F32, ~11 KB) that fuzz_model_load uses as the
three files it does not mutate, and whose variants seed the safetensors and
model targets. Only the standard library: no PyTorch needed. Deterministic.

Seeds are small on purpose (the committed corpus stays far under 2 MB):
slices of the real vocab.json / merges.txt, the real config.json files, the
texts of tests/fixtures/bpe_cases.json, and hand-made edge cases.
"""
import json
import os
import random
import struct
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "seeds")
MINI = os.path.join(ROOT, "tests", "fuzz", "mini")
SEP = b"\n--attnlab-fuzz--\n"  # fuzz_model_load's framing of four files


def rd(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- GPT-2's byte <-> unicode alphabet (encoder.py bytes_to_unicode) ----------
def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


B2U = bytes_to_unicode()


def spell(bs):
    return "".join(B2U[b] for b in bs)


# ---- safetensors writer ----------------------------------------------------
def f16(x):
    return struct.pack("<e", x)


def bf16(x):
    return struct.pack("<f", x)[2:]


def safetensors(tensors, dtype="F32", prefix="", metadata=True):
    """tensors: list of (name, shape, values)."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {"format": "pt"}
    for name, shape, vals in tensors:
        if dtype == "F32":
            blob = struct.pack("<%df" % len(vals), *vals)
        elif dtype == "F16":
            blob = b"".join(f16(v) for v in vals)
        else:
            blob = b"".join(bf16(v) for v in vals)
        header[prefix + name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # data section 8-aligned, as the Python writer does
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def mini_model(V=256 + 8, C=8, L=1, NH=2, P=8, seed=1):
    rng = random.Random(seed)

    def rnd(n, scale=0.1):
        return [round(rng.uniform(-scale, scale), 4) for _ in range(n)]

    t = [("wte.weight", (V, C), rnd(V * C)), ("wpe.weight", (P, C), rnd(P * C))]
    for l in range(L):
        p = "h.%d." % l
        t += [(p + "ln_1.weight", (C,), [1.0] * C), (p + "ln_1.bias", (C,), [0.0] * C),
              (p + "attn.c_attn.weight", (C, 3 * C), rnd(3 * C * C)), (p + "attn.c_attn.bias", (3 * C,), rnd(3 * C)),
              (p + "attn.c_proj.weight", (C, C), rnd(C * C)), (p + "attn.c_proj.bias", (C,), rnd(C)),
              (p + "ln_2.weight", (C,), [1.0] * C), (p + "ln_2.bias", (C,), [0.0] * C),
              (p + "mlp.c_fc.weight", (C, 4 * C), rnd(4 * C * C)), (p + "mlp.c_fc.bias", (4 * C,), rnd(4 * C)),
              (p + "mlp.c_proj.weight", (4 * C, C), rnd(4 * C * C)), (p + "mlp.c_proj.bias", (C,), rnd(C))]
    t += [("ln_f.weight", (C,), [1.0] * C), ("ln_f.bias", (C,), [0.0] * C)]
    config = {"activation_function": "gelu_new", "model_type": "gpt2", "n_embd": C, "n_head": NH,
              "n_inner": None, "n_layer": L, "n_positions": P, "layer_norm_epsilon": 1e-5, "vocab_size": V}
    return t, config


MINI_MERGES = [(b" ", b"t"), (b"h", b"e"), (b" t", b"he"), (b"i", b"n"), (b" ", b"a"),
               (b"e", b"r"), (b"o", b"n"), (b" ", b"s")]


def mini_tokenizer():
    vocab = {spell(bytes([b])): b for b in range(256)}
    lines = ["#version: 0.2"]
    for i, (a, b) in enumerate(MINI_MERGES):
        vocab[spell(a + b)] = 256 + i
        lines.append(spell(a) + " " + spell(b))
    return (json.dumps(vocab, ensure_ascii=False).encode(), ("\n".join(lines) + "\n").encode())


LLAMA3_PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_PATTERN = LLAMA3_PATTERN.replace("\\p{N}{1,3}", "\\p{N}")


def hf_tokenizer(pre="gpt2", pairs=False, added=(), post=None, normalizer=None, model_type="BPE", extra=None):
    """A small tokenizer.json (the mini tokenizer's vocabulary and merges) in one of
    the layouts c/src/tokenizer_json.c reads, or a variant it must refuse."""
    vocab = {spell(bytes([b])): b for b in range(256)}
    merges = []
    for i, (a, b) in enumerate(MINI_MERGES):
        vocab[spell(a + b)] = 256 + i
        merges.append([spell(a), spell(b)] if pairs else spell(a) + " " + spell(b))
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    if pre == "gpt2":
        pt = byte_level
    elif pre == "digits":
        pt = {"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, byte_level]}
    else:
        pat = {"llama3": LLAMA3_PATTERN, "qwen2": QWEN2_PATTERN}.get(pre, pre)
        pt = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pat}, "behavior": "Isolated", "invert": False},
            dict(byte_level, use_regex=False)]}
    toks = [{"id": 264 + i, "content": c, "single_word": False, "lstrip": ls, "rstrip": rs,
             "normalized": False, "special": True} for i, (c, ls, rs) in enumerate(added)]
    model = {"type": model_type, "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": pre == "llama3",
             "vocab": vocab, "merges": merges}
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": toks, "normalizer": normalizer,
           "pre_tokenizer": pt, "post_processor": post, "decoder": byte_level, "model": model}
    if extra:
        extra(doc)
    return json.dumps(doc, ensure_ascii=False).encode()


SP_SPACE = "\u2581"


def sp_tokenizer(variant="llama2"):
    """A small SentencePiece-style tokenizer.json (Llama 2's / Mistral's / Gemma 3's layouts): "\u2581" for a space,
    byte fallback to a few <0xNN> tokens, <unk> with fuse_unk."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x41>": 3, "<0xC3>": 4, "<0xA9>": 5, "<0x0A>": 6, SP_SPACE: 7}
    for w in ("a", "b", "e", "h", "t", SP_SPACE + "a", "ab", SP_SPACE + "ab", "th", SP_SPACE + "th", "the",
              SP_SPACE + "the", SP_SPACE + SP_SPACE):
        vocab[w] = len(vocab)
    merges = [SP_SPACE + " a", "a b", SP_SPACE + "a b", "t h", SP_SPACE + " th", "th e", SP_SPACE + "th e",
              SP_SPACE + " " + SP_SPACE]
    rep = {"type": "Replace", "pattern": {"String": " "}, "content": SP_SPACE}
    dec = {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": SP_SPACE}, "content": " "},
                                            {"type": "ByteFallback"}, {"type": "Fuse"},
                                            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    norm, pre = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": SP_SPACE}, rep]}, None
    if variant == "mistral":
        norm, pre = None, {"type": "Metaspace", "replacement": SP_SPACE, "prepend_scheme": "first", "split": False}
    elif variant == "gemma":
        norm, pre = rep, {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}
        dec = {"type": "Sequence", "decoders": dec["decoders"][:3]}
    toks = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
             "special": True} for i, c in enumerate(("<unk>", "<s>", "</s>"))]
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab, "merges": merges}
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": toks, "normalizer": norm,
           "pre_tokenizer": pre, "post_processor": None, "decoder": dec, "model": model}
    return json.dumps(doc, ensure_ascii=False).encode()


def vocab_slice(vocab_bytes, n_extra, rng):
    """A valid vocabulary: the 256 byte tokens of a real vocab.json plus n_extra of
    its multi-byte tokens, renumbered 0..V-1 in the file's order."""
    v = json.loads(vocab_bytes)
    singles = [k for k in v if len(k) == 1]
    multi = [k for k in v if len(k) > 1]
    pick = singles + rng.sample(multi, min(n_extra, len(multi)))
    return json.dumps({k: i for i, k in enumerate(pick)}, ensure_ascii=False).encode()


def backward_seed(model, ids, metric, a=1, b=2, want=0x1ff, mask=0, window=0, ivs=(), scale=None, slack=0):
    """fuzz_backward's framing: each value as the byte the target maps back to it (in(lo, hi) reads lo + byte %
    (hi - lo + 1); an id byte x is x * 7 % (V + 2) - 1, so small bytes are small ids)."""
    out = [model, len(ids)] + list(ids) + [metric + 1, (a + 1) & 255, (a + 1) >> 8, (b + 1) & 255, (b + 1) >> 8,
                                            want & 255, want >> 8, mask, window + 1, len(ivs)]
    for kind, layer, head, row, col, lam, alpha in ivs:  # lambda = (byte - 128) / 8, alpha = (byte - 128) / 32
        out += [kind, layer + 1, head + 2, row + 1, col + 1, int(lam * 8) + 128, int(alpha * 32) + 128]
    out += [0] if scale is None else [1, int(scale * 64) + 64]
    return bytes(out + [slack + 1])


def backward_seeds():
    ids = [5, 9, 14, 20, 3, 31]
    return [
        ("tiny_logit_diff", backward_seed(0, ids, 0)),
        ("tiny_full_mask_loss", backward_seed(0, ids, 3, mask=1)),
        ("tiny_window_logprob", backward_seed(0, ids, 1, mask=2, window=2, want=0x3)),
        ("llama_combined_kl", backward_seed(1, ids, 2, ivs=((1, 1, 0, 5, 3, -1.5, 1), (3, 1, 0, 0, 0, 0, 0.5),
                                                          (0, 0, 3, 3, 1, 0, 1), (2, 0, 0, 0, 0, 0, 1)))),
        ("llama_swap_all", backward_seed(1, ids, 0, ivs=((5, 0, -1, 0, 0, 0, 1), (4, 1, 0, 0, 0, 0, -0.5)))),
        ("gemma_loss_scale", backward_seed(2, ids + [7, 11, 2, 8], 3, scale=0.5)),
        ("gemma_hard_outside", backward_seed(2, ids + [7, 11, 2, 8], 2, ivs=((0, 0, 1, 9, 0, 0, 1),))),
        ("empty", backward_seed(0, [], 0)),
        ("block_short", backward_seed(1, ids, 0, slack=-1)),
    ]


def main():
    rng = random.Random(9)
    os.makedirs(MINI, exist_ok=True)
    tensors, config = mini_model()
    vocab, merges = mini_tokenizer()
    cfg = json.dumps(config, indent=2).encode()
    st = safetensors(tensors)
    for name, data in (("config.json", cfg), ("model.safetensors", st), ("vocab.json", vocab),
                       ("merges.txt", merges)):
        with open(os.path.join(MINI, name), "wb") as f:
            f.write(data)

    tiny_vocab, tiny_merges = rd("tests/fixtures/tiny/vocab.json"), rd("tests/fixtures/tiny/merges.txt")
    gpt2_merges = rd("models/brown-gpt2/merges.txt")
    configs = {"tiny": rd("tests/fixtures/tiny/config.json"), "brown": rd("models/brown-gpt2/config.json")}

    # ---- fuzz_json: real configs, vocab slices, headers, cases, edge cases -----
    for k, v in configs.items():
        put("fuzz_json", "config_" + k, v)
    put("fuzz_json", "mini_config", cfg)
    put("fuzz_json", "vocab_slice", vocab_slice(tiny_vocab, 40, rng))
    put("fuzz_json", "mini_vocab", vocab)
    for k, path in (("tiny", "tests/fixtures/tiny/model.safetensors"),
                    ("bf16", "tests/fixtures/tiny-bf16/model.safetensors")):
        raw = rd(path)
        n = struct.unpack("<Q", raw[:8])[0]
        put("fuzz_json", "st_header_" + k, raw[8:8 + n])
    cases = json.loads(rd("tests/fixtures/bpe_cases.json"))
    put("fuzz_json", "bpe_cases_head", json.dumps(cases[:6], ensure_ascii=False).encode())
    for i, e in enumerate([b'{"a":[1,-2.5e-3,true,false,null,"\\u00e9\\ud83d\\ude00\\n"]}',
                           b'[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
                           b'{"dup":1,"dup":2,"":{},"x":[]}', b'123456789012345678901234567890',
                           b'"\\"\\\\\\/\\b\\f\\n\\r\\t"', b'-0.0e+0', b'1.7976931348623157e308']):
        put("fuzz_json", "edge_%d" % i, e)
    # issue 21: repeated keys (refused), in a small object and past the pairwise limit (the sorted index)
    put("fuzz_json", "dup_small", b'{"a":1,"b":{"c":1,"c":2}}')
    put("fuzz_json", "dup_large", ("{" + ",".join('"k%d":%d' % (i, i) for i in range(40)) + ',"k17":0}').encode())
    put("fuzz_json", "nul_keys", b'{"a":1,"a\\u0000":2,"a\\u0000b":3,"":4}')

    # ---- fuzz_safetensors: the mini model in every dtype/prefix, a truncation --
    put("fuzz_safetensors", "mini_f32", st)
    put("fuzz_safetensors", "mini_f16", safetensors(tensors, "F16"))
    put("fuzz_safetensors", "mini_bf16", safetensors(tensors, "BF16", metadata=False))
    put("fuzz_safetensors", "mini_prefixed", safetensors(tensors, prefix="transformer."))
    small = [("a", (2, 3), [1, 2, 3, 4, 5, 6]), ("b", (0,), []), ("c", (), [7.0])]
    put("fuzz_safetensors", "three_tensors", safetensors(small))
    put("fuzz_safetensors", "empty_header", struct.pack("<Q", 2) + b"{}")
    put("fuzz_safetensors", "truncated", st[: len(st) // 2])
    # issue 21: many names (the sorted name index), and two names equal as C strings ("a" and "a\0")
    many = [("t%d" % i, (0,), []) for i in range(300)]
    put("fuzz_safetensors", "many_names", safetensors(many, metadata=False))
    h = b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a\\u0000":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}'
    put("fuzz_safetensors", "nul_twin_names", struct.pack("<Q", len(h)) + h + bytes(8))

    # ---- fuzz_bpe_load: merges alone (with the tiny vocab), vocab\0merges ------
    lines = tiny_merges.split(b"\n")
    put("fuzz_bpe_load", "tiny_merges_head", b"\n".join(lines[:60]) + b"\n")
    put("fuzz_bpe_load", "tiny_merges_all", tiny_merges)
    put("fuzz_bpe_load", "gpt2_merges_head", b"\n".join(gpt2_merges.split(b"\n")[:40]) + b"\n")
    put("fuzz_bpe_load", "crlf_merges", b"\r\n".join(lines[:30]) + b"\r\n")
    put("fuzz_bpe_load", "mini_pair", vocab + b"\0" + merges)
    put("fuzz_bpe_load", "slice_pair", vocab_slice(tiny_vocab, 20, rng) + b"\0" + b"#version: 0.2\n")

    # ---- fuzz_bpe_encode: texts of the shared cases, a sample, raw bytes -------
    for i, c in enumerate(cases):
        t = bytes.fromhex(c["bytes_hex"]) if "bytes_hex" in c else c["text"].encode("utf-8", "surrogatepass")
        if len(t) <= 2048:
            put("fuzz_bpe_encode", "case_%02d" % i, t)
    sample = rd("models/brown-gpt2/heldout_sample.txt")
    put("fuzz_bpe_encode", "heldout_head", sample[:1024])
    put("fuzz_bpe_encode", "bad_utf8", b"a\xffb\xe2\x82 \xf0\x9f\x98 \xed\xa0\x80 \xc0\xaf end")
    put("fuzz_bpe_encode", "spaces", b"a   b\t\t\n\n  \r\n \xe3\x80\x80x\xef\xbb\xbfy")

    # ---- fuzz_tokenizer_json: tokenizer.json [\0 tokenizer_config.json] -----------
    specials = (("<|begin_of_text|>", False, False), ("<|im_start|>", False, False), ("[L]", True, False),
                ("[R]", False, True))
    template = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}}],
                "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [264],
                                                          "tokens": ["<|begin_of_text|>"]}}}
    put("fuzz_tokenizer_json", "gpt2", hf_tokenizer())
    put("fuzz_tokenizer_json", "gpt2_digits", hf_tokenizer("digits"))
    put("fuzz_tokenizer_json", "llama3_template", hf_tokenizer("llama3", added=specials, post=template))
    put("fuzz_tokenizer_json", "qwen2_nfc_pairs", hf_tokenizer("qwen2", pairs=True, added=specials[1:],
                                                               normalizer={"type": "NFC"}))
    put("fuzz_tokenizer_json", "with_config", hf_tokenizer("llama3", added=specials) + b"\0" +
        b'{"add_bos_token": true, "bos_token": {"content": "<|begin_of_text|>"}}')
    put("fuzz_tokenizer_json", "bad_wordpiece", hf_tokenizer(model_type="WordPiece"))
    put("fuzz_tokenizer_json", "bad_unigram", hf_tokenizer(model_type="Unigram"))
    put("fuzz_tokenizer_json", "bad_pattern", hf_tokenizer("\\w+|\\s+"))
    put("fuzz_tokenizer_json", "bad_merge", hf_tokenizer(extra=lambda d: d["model"]["merges"].append("zq x")))
    put("fuzz_tokenizer_json", "bad_added_gap", hf_tokenizer(added=specials, extra=lambda d: d["added_tokens"][0]
                                                             .update(id=999)))
    put("fuzz_tokenizer_json", "bad_json", hf_tokenizer()[:300])
    put("fuzz_tokenizer_json", "bad_wordlevel", hf_tokenizer(model_type="WordLevel"))
    put("fuzz_tokenizer_json", "bad_single_word", hf_tokenizer(added=specials, extra=lambda d: d["added_tokens"][1]
                                                               .update(single_word=True)))
    put("fuzz_tokenizer_json", "bad_added_too_long", hf_tokenizer(added=(("<" + "x" * 1100 + ">", False, False),)))
    put("fuzz_tokenizer_json", "bad_normalizer", hf_tokenizer(normalizer={"type": "Lowercase"}))
    for v in ("llama2", "mistral", "gemma"):
        put("fuzz_tokenizer_json", "sp_" + v, sp_tokenizer(v))

    # ---- fuzz_model_load: selector byte + one file of the mini model, or all four
    for k, data in enumerate((cfg, st, vocab, merges)):
        put("fuzz_model_load", "mini_file%d" % k, bytes([k]) + data)
    put("fuzz_model_load", "mini_f16_file1", bytes([1]) + safetensors(tensors, "F16"))
    put("fuzz_model_load", "mini_framed", bytes([4]) + SEP.join((cfg, st, vocab, merges)))
    put("fuzz_model_load", "tiny_config", bytes([0]) + configs["tiny"])
    # ---- fuzz_backward: framed arguments (tests/fuzz/fuzz_backward.c says the order) -------
    for name, data in backward_seeds():
        put("fuzz_backward", name, data)
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print("seeds: %d bytes in %s; mini model in %s" % (total, OUT, MINI), file=sys.stderr)


if __name__ == "__main__":
    main()
