"""safetensors_io.py — write and read the safetensors format (F32, F16, BF16) with numpy.

Written from the format description, independent of the `safetensors` package:

    [8 bytes]  N, little-endian u64: length of the JSON header
    [N bytes]  JSON: {"__metadata__": {...}, "<name>": {"dtype", "shape", "data_offsets": [begin, end]}, ...}
               padded with spaces so that the data section starts at an 8-byte aligned offset
    [rest]     raw little-endian tensor bytes; offsets are relative to the start of this section

Tensors are laid out contiguously in sorted name order, and the header lists them in that order too.
BF16 has no numpy dtype: it is held as uint16 bit patterns; helpers convert to and from float32.
"""
import json
import struct

import numpy as np

DTYPE_SIZE = {"F32": 4, "F16": 2, "BF16": 2}


# ----------------------------------------------------------------------------------------------------------------
# bfloat16 <-> float32 on bit patterns

def f32_to_bf16_bits(x):
    """Round float32 -> bfloat16 to nearest, ties to even; returns uint16 bit patterns (no NaN inputs expected)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if np.any(~np.isfinite(x)):
        raise ValueError("f32_to_bf16_bits: non-finite input")
    u = x.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(bits):
    """bfloat16 bit patterns (uint16) -> float32, exactly."""
    b = np.ascontiguousarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def round_to_dtype(x, dtype):
    """The float32 values that a float32 array becomes when stored as dtype (exact upcast afterwards)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "F32":
        return x.copy()
    if dtype == "F16":
        return x.astype(np.float16).astype(np.float32)
    if dtype == "BF16":
        return bf16_bits_to_f32(f32_to_bf16_bits(x)).reshape(x.shape)
    raise ValueError("unknown dtype %r" % dtype)


def to_bytes(x, dtype):
    """float32 array -> little-endian bytes of dtype."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "F32":
        return x.astype("<f4").tobytes()
    if dtype == "F16":
        return x.astype("<f2").tobytes()
    if dtype == "BF16":
        return f32_to_bf16_bits(x).astype("<u2").tobytes()
    raise ValueError("unknown dtype %r" % dtype)


# ----------------------------------------------------------------------------------------------------------------
# writing

def build_header(specs, metadata=None):
    """specs: list of (name, dtype, shape). Returns (header_bytes_including_padding, {name: (begin, end)}).
    Names are laid out in sorted order."""
    hdr = {}
    if metadata is not None:
        hdr["__metadata__"] = metadata
    offsets = {}
    pos = 0
    for name, dtype, shape in sorted(specs, key=lambda s: s[0]):
        if name in offsets:
            raise ValueError("duplicate tensor name %r" % name)
        n = DTYPE_SIZE[dtype]
        for d in shape:
            n *= int(d)
        offsets[name] = (pos, pos + n)
        hdr[name] = {"dtype": dtype, "shape": [int(d) for d in shape], "data_offsets": [pos, pos + n]}
        pos += n
    text = json.dumps(hdr, separators=(",", ":")).encode("utf-8")
    pad = (8 - (8 + len(text)) % 8) % 8
    text += b" " * pad
    return text, offsets


def write_safetensors(path, tensors, metadata=None, produce=None):
    """Write a safetensors file.

    tensors: dict name -> (dtype, shape) when `produce` is given (then produce(name) returns the float32 array, so a
             big checkpoint is generated one tensor at a time), or dict name -> (dtype, float32 array) otherwise.
    metadata: the "__metadata__" dict (default {"format": "pt"}, as PyTorch-side writers put it).
    """
    if metadata is None:
        metadata = {"format": "pt"}
    specs = []
    for name, (dtype, v) in tensors.items():
        shape = tuple(v) if produce is not None else tuple(np.shape(v))
        specs.append((name, dtype, shape))
    header, offsets = build_header(specs, metadata)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for name in sorted(offsets):
            dtype, v = tensors[name]
            arr = produce(name) if produce is not None else v
            arr = np.asarray(arr, dtype=np.float32)
            shape = tuple(v) if produce is not None else tuple(np.shape(v))
            if tuple(arr.shape) != shape:
                raise ValueError("tensor %s: produced shape %s, declared %s" % (name, arr.shape, shape))
            data = to_bytes(arr, dtype)
            b, e = offsets[name]
            if len(data) != e - b:
                raise AssertionError("size mismatch for %s" % name)
            f.write(data)


# ----------------------------------------------------------------------------------------------------------------
# reading

def read_header(buf):
    """Parse and validate the header of a safetensors byte buffer. Returns (header dict, data start offset)."""
    if len(buf) < 8:
        raise ValueError("safetensors: file shorter than 8 bytes")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > len(buf) - 8:
        raise ValueError("safetensors: header length %d exceeds file size %d" % (n, len(buf)))
    hdr = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    start = 8 + n
    data_len = len(buf) - start
    spans = []
    for name, info in hdr.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        shape = info["shape"]
        b, e = info["data_offsets"]
        size = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4, "U8": 1, "BOOL": 1}.get(dtype)
        if size is None:
            raise ValueError("safetensors: tensor %s has unknown dtype %s" % (name, dtype))
        count = 1
        for d in shape:
            count *= d
        if not (0 <= b <= e <= data_len) or e - b != count * size:
            raise ValueError("safetensors: tensor %s has bad data_offsets %s" % (name, [b, e]))
        spans.append((b, e))
    spans.sort()
    pos = 0
    for b, e in spans:
        if b != pos:
            raise ValueError("safetensors: tensors are not contiguous (gap or overlap at %d)" % b)
        pos = e
    if pos != data_len:
        raise ValueError("safetensors: %d trailing bytes after the last tensor" % (data_len - pos))
    return hdr, start


def read_safetensors(path):
    """Read a safetensors file -> (dict name -> float32 numpy array for F32/F16/BF16 tensors, dtypes dict, metadata).
    Tensors of other dtypes are returned as-is in their numpy dtype."""
    with open(path, "rb") as f:
        buf = f.read()
    hdr, start = read_header(buf)
    out, dtypes = {}, {}
    np_of = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U8": "u1", "BOOL": "u1"}
    for name, info in hdr.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = buf[start + b:start + e]
        dtype = info["dtype"]
        if dtype == "BF16":
            arr = bf16_bits_to_f32(np.frombuffer(raw, dtype="<u2"))
        else:
            arr = np.frombuffer(raw, dtype=np_of[dtype])
            if dtype in ("F32", "F16"):
                arr = arr.astype(np.float32)
        out[name] = arr.reshape(info["shape"])
        dtypes[name] = dtype
    return out, dtypes, hdr.get("__metadata__")
