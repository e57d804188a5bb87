#!/usr/bin/env python3
"""Plants a wrong head in one call of a FlashInfer API-logging dump (to check that replay finds it).

Adds DELTA to every element of one head of one output tensor of a call folder's outputs.safetensors, in
place, keeping the tensor's dtype (float16, bfloat16, float32). The outputs of an attention call are
[rows, heads, head_dim]: `--head H` picks the head. Needs numpy only.

  edit_dump_head.py DUMP/<call folder> --tensor result_1 --head 2 --add 0.25

Used to make traces/captures/*_wrong_head (see traces/captures/README.md) and by the importer's tests.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_numpy as st  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="a call folder (it holds outputs.safetensors)")
    ap.add_argument("--tensor", required=True, help="output key: result, result_0, result_1, result_0__1, ...")
    ap.add_argument("--head", type=int, required=True)
    ap.add_argument("--add", type=float, default=0.25, help="value added to the head's elements (default 0.25)")
    a = ap.parse_args()
    path = os.path.join(a.folder, "outputs.safetensors")
    tensors = st.load(path)
    if a.tensor not in tensors:
        sys.exit(f"edit_dump_head: {path} has no tensor '{a.tensor}' (it has {', '.join(tensors)})")
    t = tensors[a.tensor]
    if len(t.shape) != 3 or not 0 <= a.head < t.shape[1]:
        sys.exit(f"edit_dump_head: tensor '{a.tensor}' has shape {list(t.shape)}, expected [rows, heads, head_dim] with head {a.head}")
    if isinstance(t, st.Raw):
        if t.dtype != "bfloat16":
            sys.exit(f"edit_dump_head: tensor '{a.tensor}' is {t.dtype}; float16, bfloat16 and float32 are edited")
        vals = st.from_bf16(t).astype(np.float64)
        vals[:, a.head, :] += a.add
        tensors[a.tensor] = st.to_bf16(vals)
    else:
        vals = t.astype(np.float64)
        vals[:, a.head, :] += a.add
        tensors[a.tensor] = vals.astype(t.dtype)
    st.save(path, tensors)
    print(f"edit_dump_head: {path}: tensor '{a.tensor}' head {a.head} += {a.add}")


if __name__ == "__main__":
    main()
