"""Minimal safetensors reading and writing with numpy alone (no torch, no safetensors package).

The format: an 8-byte little-endian header length N, N bytes of JSON ({key: {dtype, shape, data_offsets}},
optionally "__metadata__"), then the raw little-endian tensor bytes. bfloat16 and the fp8 types have no numpy
dtype: they are held as Raw(bits, dtype_name) (uint16 / uint8 bit patterns).

Used by the podcheck test scripts (traces/tests/write_fi_dumps.py) and traces/tools/edit_dump_head.py.
"""
import json
import struct

import numpy as np

# safetensors dtype name <-> (torch name, numpy storage dtype)
DTYPES = {
    "F16": ("float16", np.float16),
    "BF16": ("bfloat16", np.uint16),
    "F32": ("float32", np.float32),
    "F64": ("float64", np.float64),
    "F8_E4M3": ("float8_e4m3fn", np.uint8),
    "F8_E5M2": ("float8_e5m2", np.uint8),
    "I32": ("int32", np.int32),
    "I64": ("int64", np.int64),
    "U8": ("uint8", np.uint8),
    "BOOL": ("bool", np.bool_),
}
BY_TORCH = {v[0]: k for k, v in DTYPES.items()}


class Raw:
    """Bits of a dtype numpy has no type for (bfloat16, float8_*): `bits` is uint16/uint8."""

    def __init__(self, bits, dtype):
        self.bits = np.ascontiguousarray(bits)
        self.dtype = dtype

    @property
    def shape(self):
        return self.bits.shape


def torch_dtype(a):
    """The torch dtype name of an array or Raw ("float16", "bfloat16", "int64", ...)."""
    if isinstance(a, Raw):
        return a.dtype
    for st, (name, npd) in DTYPES.items():
        if a.dtype == npd and st not in ("BF16", "F8_E4M3", "F8_E5M2"):
            return name
    raise ValueError(f"no safetensors dtype for numpy {a.dtype}")


def to_bf16(x):
    """float array -> Raw bfloat16, round to nearest even."""
    f = np.ascontiguousarray(np.asarray(x, np.float32))
    u = f.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(f)
    bits = np.where(nan, (u >> 16) | 0x40, rounded).astype(np.uint16)
    return Raw(bits, "bfloat16")


def from_bf16(r):
    return (r.bits.astype(np.uint32) << 16).view(np.float32)


def as_float(a):
    """Decoded float64 values of an F16/BF16/F32/F64 array."""
    if isinstance(a, Raw):
        if a.dtype != "bfloat16":
            raise ValueError("only bfloat16 is decoded here")
        return from_bf16(a).astype(np.float64)
    return np.asarray(a, np.float64)


def encode(x, dtype):
    """float64 values -> stored array of the torch dtype name (round to nearest even)."""
    if dtype == "bfloat16":
        return to_bf16(x)
    return np.asarray(x).astype({"float16": np.float16, "float32": np.float32}[dtype])


def save(path, tensors, metadata=None):
    header = {}
    blobs = []
    offset = 0
    for key, a in tensors.items():
        if isinstance(a, Raw):
            st = BY_TORCH[a.dtype]
            data = a.bits.tobytes()
        else:
            st = BY_TORCH[torch_dtype(a)]
            data = np.ascontiguousarray(a).tobytes()
        header[key] = {"dtype": st, "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def load(path):
    """{key: array or Raw} in header order."""
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8 : 8 + n])
    out = {}
    base = 8 + n
    for key, info in header.items():
        if key == "__metadata__":
            continue
        name, npd = DTYPES[info["dtype"]]
        b, e = info["data_offsets"]
        arr = np.frombuffer(buf[base + b : base + e], dtype=npd).reshape(info["shape"]).copy()
        out[key] = Raw(arr, name) if info["dtype"] in ("BF16", "F8_E4M3", "F8_E5M2") else arr
    return out
