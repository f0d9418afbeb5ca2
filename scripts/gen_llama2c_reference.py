#!/usr/bin/python3
"""gen_llama2c_reference.py — the outputs of llama2.c's own run.c on a llama2.c checkpoint, as a JSON fixture.

    /usr/bin/python3 scripts/gen_llama2c_reference.py --run-c /tmp/l2c/run.c \
        [--checkpoint tests/fixtures/trained/stories260K/stories260K.bin] \
        [--out tests/fixtures/trained/stories260K/reference.json] [--workdir DIR]

run.c is llama2.c's reference runner (github.com/karpathy/llama2.c, MIT licence); fetch it yourself, it is not
part of this repository. This script writes a small harness (harness.c, in --workdir or a temporary directory,
never in the repository) that #includes run.c with its main() renamed, so the numbers come from run.c's own
build_transformer() and forward() (and sample_argmax() for greedy steps), compiles it with

    gcc -O3 -o harness harness.c -lm

(the flags of llama2.c's `make run`; on x86-64 without -march there is no FMA contraction, and without
-ffast-math the float32 sums keep run.c's order, so the output does not depend on the machine), and records:

  generations  greedy continuations: the prompt ids are fed one position at a time, then `steps` tokens are
               taken with sample_argmax (what run.c's generate() does at temperature 0), each fed back. Unlike
               run.c's generate() it does not stop at BOS (id 1); a "bos_at" field gives the first step that
               produced id 1, or null.
  logits       for fixed id sequences, the full logits vector (vocab_size float32 values) at chosen positions.
  encodings    texts and the ids run.c's encode() gives them with tok512.bin (bos 1 prepended, no eos): what
               a tokenizer.json made from tok512 must reproduce.
  generations[0] also gets "text": run.c's decode() of its ids, each piece after the previous id, as run.c's
               generate() prints them.

Floats are written as the shortest decimal text that reads back to the same float32. The sequences are fixed
here: BOS alone, a BOS + pseudo-random prompt (ids from a fixed LCG), and a full-context sequence
(seq_len ids) to reach the last RoPE position.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

HARNESS = r"""
/* harness.c — written by attnlab's scripts/gen_llama2c_reference.py; drives llama2.c's run.c. */
#define main llama2c_run_main
#include RUN_C
#undef main

static int read_ids(int *ids, int T) {
    for (int i = 0; i < T; i++) if (scanf("%d", &ids[i]) != 1) return 0;
    return 1;
}

int main(int argc, char *argv[]) {
    if (argc != 3) { fprintf(stderr, "usage: harness model.bin tokenizer.bin < requests\n"); return 2; }
    Transformer t;
    build_transformer(&t, argv[1]);
    const int V = t.config.vocab_size, S = t.config.seq_len;
    Tokenizer tok;
    build_tokenizer(&tok, argv[2], V);
    printf("C %d %d %d %d %d %d %d\n", t.config.dim, t.config.hidden_dim, t.config.n_layers, t.config.n_heads,
           t.config.n_kv_heads, V, S);
    char kind[8];
    while (scanf("%7s", kind) == 1) {
        int steps = 0, T = 0;
        if (kind[0] == 'E') { /* E <n bytes>\n<bytes>: run.c's encode(text, bos 1, eos 0) */
            int n = 0;
            if (scanf("%d", &n) != 1 || n < 0 || getchar() != '\n') return 3;
            char *text = malloc((size_t)n + 1);
            int *out = malloc(sizeof(int) * ((size_t)n + 3));
            if (!text || !out || fread(text, 1, (size_t)n, stdin) != (size_t)n) return 3;
            text[n] = '\0';
            int n_out = 0;
            encode(&tok, text, 1, 0, out, &n_out);
            printf("E");
            for (int i = 0; i < n_out; i++) printf(" %d", out[i]);
            printf("\n");
            free(text);
            free(out);
            fflush(stdout);
            continue;
        }
        if (kind[0] == 'G' && scanf("%d %d", &steps, &T) != 2) return 3;
        if (kind[0] == 'L' && scanf("%d", &T) != 1) return 3;
        if (T < 1 || T + steps > S) { fprintf(stderr, "bad request\n"); return 3; }
        int *ids = malloc(sizeof(int) * (size_t)T);
        if (!ids || !read_ids(ids, T)) return 3;
        float *logits = NULL;
        for (int pos = 0; pos < T; pos++) {
            logits = forward(&t, ids[pos], pos);
            if (kind[0] == 'L') {
                printf("P %d", pos);
                for (int v = 0; v < V; v++) printf(" %.9g", logits[v]);
                printf("\n");
            }
        }
        if (kind[0] == 'G') {
            printf("G");
            for (int s = 0, pos = T; s < steps; s++, pos++) {
                int next = sample_argmax(logits, V);
                printf(" %d", next);
                if (pos < S) logits = forward(&t, next, pos);
            }
            printf("\n");
        }
        free(ids);
        fflush(stdout);
    }
    free_tokenizer(&tok);
    free_transformer(&t);
    return 0;
}
"""

CFLAGS = ["-O3"]


def lcg_ids(n, seed, lo, hi):
    """n ids in [lo, hi) from a fixed 32-bit LCG (Numerical Recipes constants); the same on every platform."""
    out, x = [], seed & 0xFFFFFFFF
    for _ in range(n):
        x = (1664525 * x + 1013904223) & 0xFFFFFFFF
        out.append(lo + (x >> 8) % (hi - lo))
    return out


def f32(x):
    """Shortest decimal text that reads back to the same float32 (numpy's float32 str is shortest-unique)."""
    s = str(np.float32(x))
    assert np.float32(float(s)) == np.float32(x), s
    return s


def decode_text(tok_path, V, ids):
    """run.c's decode(prev, token) of ids[1:], concatenated: a piece after bos loses its leading space,
    "<0xNN>" pieces are raw bytes. Written here from run.c's rules (the harness prints ids only)."""
    import struct
    with open(tok_path, "rb") as f:
        buf = f.read()
    pos, pieces = 4, []
    for _ in range(V):
        _, n = struct.unpack_from("<fi", buf, pos)
        pos += 8
        pieces.append(buf[pos:pos + n])
        pos += n
    out = b""
    for prev, tok in zip(ids, ids[1:]):
        p = pieces[tok]
        if prev == 1 and p.startswith(b" "):
            p = p[1:]
        if len(p) == 6 and p.startswith(b"<0x") and p.endswith(b">"):
            p = bytes([int(p[3:5], 16)])
        out += p
    return out.decode("utf-8", errors="replace")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run-c", required=True, help="llama2.c's run.c")
    ap.add_argument("--checkpoint", default=os.path.join(ROOT, "tests/fixtures/trained/stories260K/stories260K.bin"))
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "tests/fixtures/trained/stories260K/tok512.bin"))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/fixtures/trained/stories260K/reference.json"))
    ap.add_argument("--workdir", help="where harness.c and the binary go (default: a temporary directory)")
    ap.add_argument("--llama2c-commit", default="", help="the llama2.c commit run.c came from (recorded only)")
    a = ap.parse_args()

    work = a.workdir or tempfile.mkdtemp(prefix="llama2c-ref-")
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "harness.c")
    with open(src, "w") as f:
        f.write('#define RUN_C "%s"\n' % os.path.abspath(a.run_c).replace("\\", "\\\\").replace('"', '\\"'))
        f.write(HARNESS)
    exe = os.path.join(work, "harness")
    cmd = ["gcc"] + CFLAGS + ["-o", exe, src, "-lm"]
    subprocess.run(cmd, check=True)
    gcc = subprocess.run(["gcc", "--version"], capture_output=True, text=True, check=True).stdout.split("\n")[0]

    with open(a.checkpoint, "rb") as f:
        hdr = np.frombuffer(f.read(28), dtype="<i4")
    V, S = abs(int(hdr[5])), int(hdr[6])

    # The requests (fixed): greedy from BOS and from BOS + a pseudo-random prompt; logits along the greedy
    # text itself (filled in below), along a pseudo-random sequence of the full context length.
    prompt = [1] + lcg_ids(9, 7, 3, V)
    full = [1] + lcg_ids(S - 1, 2024, 0, V)
    generations = [{"name": "bos_128", "prompt": [1], "steps": 128},
                   {"name": "random_prompt_64", "prompt": prompt, "steps": 64}]

    def run(requests):
        text = "".join(requests)
        p = subprocess.run([exe, a.checkpoint, a.tokenizer], input=text.encode("utf-8"), capture_output=True,
                           check=True)
        return p.stdout.decode("utf-8").split("\n")

    lines = run(["G %d %d %s\n" % (g["steps"], len(g["prompt"]), " ".join(map(str, g["prompt"])))
                 for g in generations])
    assert lines[0].startswith("C "), lines[0]
    header = list(map(int, lines[0].split()[1:]))
    outs = [ln for ln in lines[1:] if ln.startswith("G")]
    assert len(outs) == len(generations)
    for g, ln in zip(generations, outs):
        g["ids"] = list(map(int, ln.split()[1:]))
        assert len(g["ids"]) == g["steps"]
        g["bos_at"] = g["ids"].index(1) if 1 in g["ids"] else None

    greedy_seq = [1] + generations[0]["ids"]
    sequences = [
        {"name": "bos_greedy", "ids": greedy_seq, "positions": [0, 1, 2, 3, 31, 64, len(greedy_seq) - 1]},
        {"name": "random_prompt", "ids": prompt, "positions": list(range(len(prompt)))},
        {"name": "random_full_context", "ids": full, "positions": [0, 1, 2, 5, 50, 199, 398, S - 2, S - 1]},
    ]
    lines = run(["L %d %s\n" % (len(s["ids"]), " ".join(map(str, s["ids"]))) for s in sequences])
    rows = [ln.split() for ln in lines[1:] if ln.startswith("P ")]
    k = 0
    for s in sequences:
        by_pos = {}
        for _ in range(len(s["ids"])):
            r = rows[k]
            k += 1
            by_pos[int(r[1])] = r[2:]
        s["logits"] = []
        for pos in s["positions"]:
            vals = by_pos[pos]
            assert len(vals) == V
            s["logits"].append([f32(float(v)) for v in vals])
    assert k == len(rows)

    texts = ["Once upon a time", "Once upon a time, there was a little girl named Lily.",
             "  two  spaces, a tab\tand\nnewlines\n\n", "Tom's dog said \u201cHi!\u201d \u2014 3 + 4 = 7?",
             "caf\u00e9 na\u00efve \u65e5\u672c \U0001F642 \u00a7", ""]
    reqs = ["E %d\n%s" % (len(x.encode("utf-8")), x) for x in texts]
    lines = run(reqs)
    outs = [ln for ln in lines[1:] if ln.startswith("E")]
    assert len(outs) == len(texts)
    encodings = [{"text": x, "ids": list(map(int, ln.split()[1:]))} for x, ln in zip(texts, outs)]
    generations[0]["text"] = decode_text(a.tokenizer, V, [1] + generations[0]["ids"])

    run_c_commit = a.llama2c_commit or None
    doc = {
        "what": "outputs of llama2.c's run.c (float32) on this checkpoint; written by "
                "scripts/gen_llama2c_reference.py",
        "checkpoint": os.path.basename(a.checkpoint),
        "checkpoint_sha256": sha256(a.checkpoint),
        "run_c_sha256": sha256(a.run_c),
        "llama2c_commit": run_c_commit,
        "compiler": gcc,
        "command": " ".join(["gcc"] + CFLAGS + ["-o", "harness", "harness.c", "-lm"]),
        "config": dict(zip(["dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"],
                           header)),
        "generations": generations,
        "encodings": encodings,
        "logits": sequences,
    }
    # A fixed serializer: one line per list of ids or of logits, so diffs stay readable.
    def dump(v, ind):
        pad = " " * ind
        if isinstance(v, dict):
            items = ['%s  "%s": %s' % (pad, key, dump(v[key], ind + 2)) for key in v]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, list) and v and isinstance(v[0], (dict, list)):
            return "[\n" + ",\n".join(pad + "  " + dump(x, ind + 2) for x in v) + "\n" + pad + "]"
        if isinstance(v, list):
            return "[" + ", ".join(x if isinstance(x, str) else json.dumps(x) for x in v) + "]"
        return json.dumps(v)
    text = dump(doc, 0) + "\n"
    json.loads(text)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    print("wrote %s (%d generations, %d logit rows)" % (a.out, len(generations),
                                                         sum(len(s["positions"]) for s in sequences)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
