"""Arrays in: numpy, PyTorch (CPU or CUDA), DLPack, the array interface, ml_dtypes, nested lists.

Each becomes a storage array (the element bits podcheck keeps, docs/FORMAT.md) and a logical dtype name, which
the C++ side copies into a Tensor. No value is ever converted: a bfloat16 or float8 tensor keeps its bits, and
an array whose dtype is not the one required is refused rather than cast (a cast would judge other numbers
than the kernel wrote). torch is never imported here: a torch tensor is recognised by its type and handled
through its own methods, so this module works whether or not torch is installed.
"""

import sys

import numpy as np

# numpy type holding the storage bits of each logical dtype (docs/FORMAT.md, "Tensors").
STORAGE = {
    "float16": np.float16,
    "bfloat16": np.uint16,
    "float8_e4m3fn": np.uint8,
    "float8_e5m2": np.uint8,
    "float32": np.float32,
    "float64": np.float64,
    "int32": np.int32,
    "uint8": np.uint8,
}
# Logical dtypes numpy itself has.
_NUMPY_NAMES = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32",
                np.dtype(np.float64): "float64", np.dtype(np.int32): "int32", np.dtype(np.uint8): "uint8"}
# Dtypes numpy lacks, as ml_dtypes (and torch) name them.
_BITS_ONLY = {"bfloat16", "float8_e4m3fn", "float8_e5m2"}


def _is_torch(obj):
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "detach")


def _from_torch(t):
    """A torch tensor (any device, any strides) -> (numpy array, logical name); bits kept."""
    torch = sys.modules["torch"]
    name = str(t.dtype).replace("torch.", "")
    t = t.detach()
    if name == "bfloat16":
        t = t.view(torch.int16)  # same element size: a reinterpretation, no value changes
    elif name in ("float8_e4m3fn", "float8_e5m2"):
        t = t.view(torch.uint8)
    a = t.cpu().contiguous().numpy()
    if name in _BITS_ONLY:
        a = a.view(STORAGE[name])
    return a, name


def _to_numpy(obj):
    """(numpy array, logical name or None when numpy's dtype says it)."""
    if _is_torch(obj):
        return _from_torch(obj)
    if isinstance(obj, np.ndarray):
        a = obj
    elif hasattr(obj, "__dlpack__") and not hasattr(obj, "__array_interface__"):
        try:
            a = np.from_dlpack(obj)
        except (TypeError, RuntimeError, BufferError) as e:
            raise ValueError(f"cannot read a {type(obj).__name__} through DLPack on the host ({e}); "
                             "copy it to host memory first") from None
    else:
        a = np.asarray(obj)
    if a.dtype.name in _BITS_ONLY:  # ml_dtypes arrays
        return a.view(STORAGE[a.dtype.name]), a.dtype.name
    return a, None


def storage(obj, dtype=None, what="tensor"):
    """(C-contiguous storage array, logical dtype name) of obj.

    dtype: the logical dtype required (None: the array's own). Raw-bits arrays — uint16/int16 for bfloat16,
    uint8/int8 for float8 — are read as that dtype's bits and need it said.
    """
    a, name = _to_numpy(obj)
    if name is None:
        raw = a.dtype.kind in "iu" and dtype in STORAGE and a.dtype.itemsize == np.dtype(STORAGE[dtype]).itemsize \
            and a.dtype != np.dtype(np.int32)
        if dtype in _BITS_ONLY and raw:
            name = dtype
            a = a.view(STORAGE[dtype])
        elif a.dtype in _NUMPY_NAMES:
            name = _NUMPY_NAMES[a.dtype]
        else:
            hint = " (raw bits: give dtype='bfloat16' or 'float8_e4m3fn' / 'float8_e5m2')" \
                if a.dtype.kind in "iu" and a.dtype.itemsize <= 2 else ""
            raise ValueError(f"{what}: arrays of {a.dtype} are not a podcheck tensor dtype{hint}")
    if dtype is not None and name != dtype:
        raise ValueError(f"{what}: a {name} array was given where {dtype} is required (podcheck judges and stores "
                         "what it is given; it does not convert values)")
    return np.ascontiguousarray(a), name


def indices(obj, what="index array"):
    """A 1-D int32 array of integers (torch int32/int64 tensors, numpy arrays, lists), without loss."""
    a = _to_numpy(obj)[0] if not isinstance(obj, (list, tuple)) else np.asarray(obj)
    if a.size == 0:
        a = a.astype(np.int32)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{what}: integers are required, found {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{what}: a 1-D array is required, found shape {list(a.shape)}")
    if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
        raise ValueError(f"{what}: values outside int32")
    return np.ascontiguousarray(a, dtype=np.int32)


def bool_array(obj, what="mask"):
    """A boolean array (custom masks as FlashInfer takes them), any device."""
    a = _to_numpy(obj)[0]
    if a.dtype != np.bool_:
        raise ValueError(f"{what}: a boolean array is required, found {a.dtype}")
    return a
