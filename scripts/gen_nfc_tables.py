#!/usr/bin/env python3
"""gen_nfc_tables.py — write c/src/nfc_tables.h, the data of Unicode
Normalization Form C (NFC) for c/src/nfc.c (Qwen2/3's tokenizer.json
normalizer).

Three tables, all from Python's unicodedata (its Unicode version is written
into the header), packed small (about 23 KB; they ship in attnlab.wasm):
  * nfc_ccc:     canonical combining classes != 0, as (first, last, class) ranges;
  * nfc_decomp:  the one-level canonical decomposition mapping of every code
                 point that has one (Hangul syllables excluded: algorithmic),
                 one 64-bit word each, with a bit for "NFC composes it back":
                 set only if NFC itself joins the pair, so the composition
                 exclusions and singletons drop out by construction;
  * nfc_compose: the composing entries' indices sorted by their pair;
  * nfc_unsafe:  ranges of code points that are not NFC boundaries (a
                 combining mark, a character NFC changes alone, a possible
                 second of a composition), so nfc.c can skip the rest.

Usage (from the repository root):
    python3 scripts/gen_nfc_tables.py            # writes c/src/nfc_tables.h
    python3 scripts/gen_nfc_tables.py --check    # exit 1 if the file differs
    python3 scripts/gen_nfc_tables.py --cases    # writes tests/fixtures/nfc_cases.json

The cases: every code point that has a canonical decomposition or a combining
class, in contexts that exercise each step (alone, after a base letter, with
marks of other classes before and after it, doubled), joined into strings
with Python's NFC of each; tests/c/test_tokenizer_json.c checks c/src/nfc.c
against them.
"""
import json
import os
import sys
import unicodedata

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "c", "src", "nfc_tables.h")
SBASE, SCOUNT = 0xAC00, 11172


def chars():
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        yield cp


def write_cases():
    special = []
    for cp in chars():
        c = chr(cp)
        d = unicodedata.decomposition(c)
        if unicodedata.combining(c) or (d and not d.startswith("<")) or 0x1100 <= cp <= 0x11FF:
            special.append(c)
    rows = []
    chunk = []
    for c in special:
        chunk.append(c + " a" + c + "\u0323" + c + "\u0301 \u1100\u1161" + c)
        if len(chunk) == 40:
            rows.append(" | ".join(chunk))
            chunk = []
    if chunk:
        rows.append(" | ".join(chunk))
    rows += ["\uac00\u11a8 \u1100\u1161\u11a8 \u1100\u1161\u11a8\u0301", "\u0301\u0300a", "a" + "\u0301\u0323" * 40]
    out = [{"in": r, "nfc": unicodedata.normalize("NFC", r)} for r in rows]
    path = os.path.join(os.path.dirname(OUT), "..", "..", "tests", "fixtures", "nfc_cases.json")
    with open(path, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(o, ensure_ascii=False) for o in out) + "\n]\n")


def main():
    if "--cases" in sys.argv:
        write_cases()
        return
    ccc_ranges = []
    decomp = []  # (cp, d1, d2, composes)
    for cp in chars():
        c = chr(cp)
        k = unicodedata.combining(c)
        if k:
            if ccc_ranges and ccc_ranges[-1][1] == cp - 1 and ccc_ranges[-1][2] == k:
                ccc_ranges[-1][1] = cp
            else:
                ccc_ranges.append([cp, cp, k])
        if SBASE <= cp < SBASE + SCOUNT:
            continue
        d = unicodedata.decomposition(c)
        if not d or d.startswith("<"):
            continue
        full = unicodedata.normalize("NFD", c)
        assert 2 * len(full) <= 3 * len(c.encode()), hex(cp)  # nfc.c sizes its buffers on these
        assert len(full.encode()) <= 3 * len(c.encode()), hex(cp)
        parts = [int(x, 16) for x in d.split()]
        assert len(parts) in (1, 2), hex(cp)
        composes = len(parts) == 2 and unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) == c
        # composing never lengthens the UTF-8, so NFC <= NFD <= 3x the input (nfc.c's output buffer)
        assert not composes or len(c.encode()) <= len((chr(parts[0]) + chr(parts[1])).encode()), hex(cp)
        decomp.append((cp, parts[0], parts[1] if len(parts) == 2 else 0, composes))
    compose_idx = sorted((i for i, e in enumerate(decomp) if e[3]), key=lambda i: (decomp[i][1], decomp[i][2]))
    # Code points before which NFC may not cut the text: a combining mark, a
    # character NFC changes on its own, one that can be the second of a
    # composition (Hangul vowels and trailing consonants included), or one
    # whose decomposition starts with such a second. Everything else is a
    # boundary: NFC(x + c + y) = NFC(x) + NFC(c + y).
    seconds = {e[2] for e in decomp if e[3]} | set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    unsafe = []
    for cp in chars():
        c = chr(cp)
        nfd = unicodedata.normalize("NFD", c)
        bad = (unicodedata.combining(c) != 0 or unicodedata.normalize("NFC", c) != c or cp in seconds
               or ord(nfd[0]) in seconds or unicodedata.combining(nfd[0]) != 0)
        if bad:
            assert cp >= 0x300, hex(cp)  # nfc.c takes everything below U+0300 as a boundary
            if unsafe and unsafe[-1][1] == cp - 1:
                unsafe[-1][1] = cp
            else:
                unsafe.append([cp, cp])
    assert len(decomp) < 65536
    lines = [
        "/* nfc_tables.h — GENERATED by scripts/gen_nfc_tables.py; do not edit.",
        " *",
        " * Unicode NFC data for c/src/nfc.c:",
        " *   nfc_ccc      canonical combining classes != 0, as (first, last, class) ranges;",
        " *   nfc_decomp   each code point's canonical decomposition mapping (one level: one",
        " *                or two code points, applied recursively), sorted by code point:",
        " *                cp | d1 << 21 | d2 << 42 | composes << 63 (d2 = 0: a singleton;",
        " *                composes: a primary composite, NFC joins d1 d2 back into cp);",
        " *   nfc_compose  indices of the composing entries, sorted by (d1, d2);",
        " *   nfc_unsafe   ranges of code points before which NFC may not cut the text",
        " *                (all others, and everything below U+0300, are boundaries).",
        " * Hangul syllables are algorithmic (not listed).",
        " * Source: Python unicodedata, Unicode %s." % unicodedata.unidata_version,
        " */",
        "#ifndef ALAB_NFC_TABLES_H",
        "#define ALAB_NFC_TABLES_H",
        "",
        "#include <stdint.h>",
        "",
        '#define NFC_UNICODE_VERSION "%s"' % unicodedata.unidata_version,
        "",
        "static const uint32_t nfc_ccc[][3] = {",
    ]
    for a, b, k in ccc_ranges:
        lines.append("    {0x%05X, 0x%05X, %d}," % (a, b, k))
    lines.append("};")
    lines.append("")
    lines.append("static const uint64_t nfc_decomp[] = {")
    for cp, d1, d2, comp in decomp:
        lines.append("    UINT64_C(0x%016X)," % (cp | (d1 << 21) | (d2 << 42) | ((1 << 63) if comp else 0)))
    lines.append("};")
    lines.append("")
    lines.append("static const uint32_t nfc_unsafe[][2] = {")
    for a, b in unsafe:
        lines.append("    {0x%05X, 0x%05X}," % (a, b))
    lines.append("};")
    lines.append("")
    lines.append("static const uint16_t nfc_compose[] = {")
    for i in range(0, len(compose_idx), 12):
        lines.append("    " + " ".join("%d," % x for x in compose_idx[i:i + 12]))
    lines.append("};")
    lines.append("")
    lines.append("#endif")
    text = "\n".join(lines) + "\n"
    if "--check" in sys.argv:
        with open(OUT) as f:
            sys.exit(0 if f.read() == text else 1)
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
