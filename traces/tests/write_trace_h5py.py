#!/usr/bin/env python3
"""Write a podcheck trace with h5py and numpy alone, following docs/FORMAT.md (the test that the format
is documented well enough). Values are small multiples of 1/8, exact in every storage dtype used.

usage: write_trace_h5py.py OUT.h5
The C++ test (traces/tests/trace_io_test.cpp) recomputes the same values and compares exactly.
"""
import sys

import h5py
import numpy as np

H, HK, D = 4, 2, 8


def values(n, salt):
    i = np.arange(n, dtype=np.int64)
    return ((i * 7 + salt) % 13 - 6) / 8.0


def bf16_bits(x):
    # exact here: the values have 4 significant bits
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def tensor(group, name, data, dtype):
    if dtype == "float16":
        ds = group.create_dataset(name, data=np.asarray(data, dtype=np.float16))
    elif dtype == "bfloat16":
        ds = group.create_dataset(name, data=bf16_bits(data))
    elif dtype == "float32":
        ds = group.create_dataset(name, data=np.asarray(data, dtype=np.float32))
    elif dtype == "int32":
        ds = group.create_dataset(name, data=np.asarray(data, dtype=np.int32))
    else:
        raise ValueError(dtype)
    ds.attrs["dtype"] = dtype


def side_attrs(g, **kw):
    attrs = dict(num_requests=1, kv_storage="dense", layout="NHD", stacked=0, mask_mode="none", window_left=-1,
                 logits_soft_cap=0.0, pos_encoding="NONE", rope_scale=1.0, rope_theta=1e4, q_scale=1.0,
                 k_scale=1.0, v_scale=1.0)
    attrs.update(kw)
    for k, v in attrs.items():
        g.attrs[k] = v


with h5py.File(sys.argv[1], "w") as f:
    f.attrs["format"] = "podcheck-trace"
    f.attrs["format_version"] = 1
    c = f.create_group("cases").create_group("py_single_h4k2d8")
    for k, v in dict(format="podcheck-trace", format_version=1, num_qo_heads=H, num_kv_heads=HK, head_dim=D,
                     dtype_q="bfloat16", dtype_kv="bfloat16", dtype_o="bfloat16", lse_base="2",
                     fp8_overflow="saturate", seed=7, distribution="eighths").items():
        c.attrs[k] = v
    # prefill: dense, causal, 6 query rows over 9 keys
    p = c.create_group("prefill")
    side_attrs(p, mask_mode="causal", sm_scale=0.25)
    tensor(p, "qo_indptr", [0, 6], "int32")
    tensor(p, "q", values(6 * H * D, 1).reshape(6, H, D), "bfloat16")
    tensor(p, "k", values(9 * HK * D, 2).reshape(9, HK, D), "bfloat16")
    tensor(p, "v", values(9 * HK * D, 3).reshape(9, HK, D), "bfloat16")
    # decode: 2 requests, page size 4, pages [2, 0] and [1], lengths 7 and 2
    d = c.create_group("decode")
    side_attrs(d, num_requests=2, kv_storage="paged", page_size=4, window_left=3)
    tensor(d, "qo_indptr", [0, 1, 2], "int32")
    tensor(d, "q", values(2 * H * D, 4).reshape(2, H, D), "bfloat16")
    tensor(d, "k", values(3 * 4 * HK * D, 5).reshape(3, 4, HK, D), "bfloat16")
    tensor(d, "v", values(3 * 4 * HK * D, 6).reshape(3, 4, HK, D), "bfloat16")
    tensor(d, "kv_indptr", [0, 2, 3], "int32")
    tensor(d, "kv_indices", [2, 0, 1], "int32")
    tensor(d, "kv_last_page_len", [3, 2], "int32")
    o = c.create_group("observed")
    tensor(o, "out_p", values(6 * H * D, 8).reshape(6, H, D), "bfloat16")
    tensor(o, "lse_d", values(2 * H, 9).reshape(2, H), "float32")
    pr = c.create_group("provenance")
    for k, v in dict(kernel_name="my-port", kernel_version="v0.1", device="Some GPU", driver="1.2.3",
                     date="2026-11-29T12:00:00Z", source="write_trace_h5py.py").items():
        pr.attrs[k] = v
    pr.create_group("scheduling").attrs["num_splits"] = "3"
    e = c.create_group("expected").create_group("0")
    for k, v in dict(profile="intended", status="incorrect", diagnosis="never written", reason="a test").items():
        e.attrs[k] = v
