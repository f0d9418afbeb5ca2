"""bpe_ref.py — an independent Python implementation of GPT-2's byte-level BPE (encode and decode).

The algorithm, from the GPT-2 paper's description and the published vocab/merges files:
  1. Split the text into pieces with GPT-2's pre-tokenizer pattern (contractions, optional-space letter runs,
     optional-space digit runs, optional-space runs of other symbols, whitespace runs).
  2. Map each byte of a piece's UTF-8 encoding to a printable unicode character (the reversible byte <-> unicode
     table: printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100.. in byte order).
  3. Repeatedly merge the adjacent pair with the lowest merge rank until no pair has a rank.
  4. Look each resulting symbol up in vocab.json.
Needs Debian's python3-regex for \\p{L} / \\p{N}.
"""
import json

import regex

PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def byte_to_unicode():
    """The GPT-2 byte -> character table (a bijection of 256 bytes onto printable characters)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table = {}
    extra = 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


class BPE:
    def __init__(self, vocab, merges):
        """vocab: dict token string -> id; merges: list of (a, b) in rank order."""
        self.encoder = dict(vocab)
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        self.b2u = byte_to_unicode()
        self.u2b = {c: b for b, c in self.b2u.items()}
        self.cache = {}

    @classmethod
    def from_files(cls, vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as f:
            vocab = json.load(f)
        with open(merges_path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        merges = []
        for line in lines:
            if not line or line.startswith("#version"):
                continue
            a, b = line.split(" ")
            merges.append((a, b))
        return cls(vocab, merges)

    def bpe(self, piece):
        """piece: a string of byte-characters. Returns the list of merged symbols."""
        if piece in self.cache:
            return self.cache[piece]
        symbols = list(piece)
        while len(symbols) > 1:
            best, best_rank = None, None
            for i in range(len(symbols) - 1):
                r = self.ranks.get((symbols[i], symbols[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = (symbols[i], symbols[i + 1]), r
            if best is None:
                break
            # merge every occurrence of the best pair, left to right, without overlap
            merged = []
            i = 0
            while i < len(symbols):
                if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        self.cache[piece] = symbols
        return symbols

    def encode(self, text):
        """text: str (or bytes, which may be invalid UTF-8; then the pattern runs on the surrogate-escaped text)."""
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="surrogateescape")
        ids = []
        for m in PATTERN.finditer(text):
            raw = m.group(0).encode("utf-8", errors="surrogateescape")
            piece = "".join(self.b2u[b] for b in raw)
            for sym in self.bpe(piece):
                ids.append(self.encoder[sym])
        return ids

    def token_bytes(self, i):
        return bytes(self.u2b[c] for c in self.decoder[i])

    def decode(self, ids):
        return b"".join(self.token_bytes(i) for i in ids)
