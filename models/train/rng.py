"""mulberry32, bit for bit the generator of web/src/core/rng.js, and model.repeatedTokens on it:
train.py's probe and evaluate.py's card measure the induction score on the very ids the page uses."""
import numpy as np


def mulberry32(seed):
    """A generator of uniform floats in [0, 1) from seed (taken mod 2^32)."""
    a = seed & 0xFFFFFFFF

    def nxt():
        nonlocal a
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = a
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296
    return nxt


def repeated_tokens(n, seed, V=50257):
    """model.repeatedTokens(n, {seed}): r ++ r with r uniform in [0, V - 1)."""
    nxt = mulberry32(seed)
    r = [int(nxt() * (V - 1)) for _ in range(n)]
    return np.array(r + r, dtype=np.int64)
