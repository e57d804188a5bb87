#!/usr/bin/env python3
"""Write tiny recordings in FlashInfer's three recorded layouts (single POD, BatchPOD, features), as the
importer test's input. Shapes are small; values are multiples of 1/16; attributes follow the recorded
layout, plus unknown extra ones the importer must ignore.

usage: write_flashinfer_like.py OUT_DIR
writes OUT_DIR/pod.h5, OUT_DIR/batch_pod.h5, OUT_DIR/features.h5, OUT_DIR/pod_missing_attr.h5
"""
import os
import sys

import h5py
import numpy as np

out_dir = sys.argv[1]
rng = np.random.default_rng(5)
D = 8


def vals(*shape):
    return (rng.integers(-16, 17, size=shape) / 16.0)


def ds(g, name, data, dtype):
    if dtype == "float16":
        x = g.create_dataset(name, data=np.asarray(data, np.float16))
    elif dtype == "bfloat16":
        x = g.create_dataset(name, data=(np.asarray(data, np.float32).view(np.uint32) >> 16).astype(np.uint16))
    elif dtype == "float32":
        x = g.create_dataset(name, data=np.asarray(data, np.float32))
    elif dtype == "int32":
        x = g.create_dataset(name, data=np.asarray(data, np.int32))
    elif dtype == "uint8":
        x = g.create_dataset(name, data=np.asarray(data, np.uint8))
    x.attrs["dtype"] = dtype


def file_attrs(f):
    f.attrs["flashinfer_commit"] = "0123abc"
    f.attrs["gpu"] = "NVIDIA H200"
    f.attrs["device"] = '{"gpu_name": "NVIDIA H200", "cc": "9.0", "num_sms": 132}'
    f.attrs["nvidia_smi"] = "NVIDIA H200, 580.159.04, 143771 MiB"
    f.attrs["date_utc"] = "2026-11-29T13:37:16Z"
    f.attrs["nvcc_flags"] = "-O3 -use_fast_math"
    f.attrs["some_future_attribute"] = 42


def pod_case(f, name, hq, hk, qo, kv, mask, nan_heads=None, drop=None):
    g = f.create_group(name)
    attrs = dict(dtype_q="float16", dtype_kv="float16", dtype_o="float16", head_dim=D, num_qo_heads=hq,
                 num_kv_heads=hk, qo_len_p=qo, kv_len_p=kv, mask_mode_p=mask, causal_p=int(mask == 1), mask_mode_d=0,
                 layout_p="NHD", layout_d="NHD", window_left_p=-1, window_left_d=2, batch_size_d=2, page_size_d=4,
                 sm_scale_p=0.3, sm_scale_d=0.2, sm_scale_p_f32=float(np.float32(0.3)),
                 sm_scale_d_f32=float(np.float32(0.2)), logits_soft_cap=0.0, pos_encoding_mode="NONE",
                 rope_scale=1.0, rope_theta=1e4, seed=99, special="none",
                 plan_info_d=np.arange(15, dtype=np.int64), cta_tile_q_p=128, unknown_new_field="ignored")
    for k, v in attrs.items():
        if k != drop:
            g.attrs[k] = v
    ds(g, "q_p", vals(qo, hq, D), "float16")
    ds(g, "k_p", vals(kv, hk, D), "float16")
    ds(g, "v_p", vals(kv, hk, D), "float16")
    if mask == 2:
        ds(g, "custom_mask_p_packed", rng.integers(0, 256, size=(qo * kv + 7) // 8), "uint8")
    ds(g, "q_d", vals(2, hq, D), "float16")
    ds(g, "paged_k_cache", vals(4, 4, hk, D), "float16")
    ds(g, "paged_v_cache", vals(4, 4, hk, D), "float16")
    ds(g, "kv_indptr_d", [0, 2, 3], "int32")
    ds(g, "kv_indices_d", [3, 1, 0], "int32")
    ds(g, "kv_last_page_len_d", [1, 4], "int32")
    ds(g, "qo_indptr_d", [0, 1, 2], "int32")
    out_d = vals(2, hq, D).astype(np.float16)
    lse_d = vals(2, hq).astype(np.float32)
    if nan_heads is not None:
        out_d[:, nan_heads, :] = np.float16(np.nan)
        lse_d[:, nan_heads] = np.float32(np.nan)
    ds(g, "out_p", vals(qo, hq, D), "float16")
    ds(g, "lse_p", vals(qo, hq), "float32")
    ds(g, "out_d", out_d, "float16")
    ds(g, "lse_d", lse_d, "float32")
    g.create_dataset("some_extra_dataset", data=np.zeros(3))


with h5py.File(os.path.join(out_dir, "pod.h5"), "w") as f:
    file_attrs(f)
    pod_case(f, "f16_tiny_causal", 4, 2, 3, 5, 1)
    pod_case(f, "f16_tiny_custom", 2, 2, 3, 5, 2)
    pod_case(f, "defect_tiny_g32", 32, 1, 2, 3, 1, nan_heads=slice(16, 32))

with h5py.File(os.path.join(out_dir, "pod_missing_attr.h5"), "w") as f:
    file_attrs(f)
    pod_case(f, "f16_tiny_no_heads", 4, 2, 3, 5, 1, drop="num_kv_heads")

with h5py.File(os.path.join(out_dir, "batch_pod.h5"), "w") as f:
    file_attrs(f)
    g = f.create_group("bf16_tiny_batch_hnd")
    for k, v in dict(dtype_q="bfloat16", dtype_kv="bfloat16", dtype_o="bfloat16", head_dim=D, num_qo_heads=4,
                     num_kv_heads=2, kv_layout="HND", page_size=2, causal_p=1, mask_mode_p=1, mask_mode_d=0,
                     window_left=3, sm_scale=0.125, sm_scale_f32=0.125, pos_encoding_mode="NONE",
                     logits_soft_cap=0, num_colocated_ctas=2, plan_info_p=np.arange(15), seed=3).items():
        g.attrs[k] = v
    ds(g, "q_p", vals(4, 4, D), "bfloat16")
    ds(g, "paged_k_cache_p", vals(3, 2, 2, D), "bfloat16")
    ds(g, "paged_v_cache_p", vals(3, 2, 2, D), "bfloat16")
    ds(g, "qo_indptr_p", [0, 3, 4], "int32")
    ds(g, "kv_indptr_p", [0, 2, 3], "int32")
    ds(g, "kv_indices_p", [2, 0, 1], "int32")
    ds(g, "kv_last_page_len_p", [2, 1], "int32")
    ds(g, "q_d", vals(1, 4, D), "bfloat16")
    ds(g, "paged_k_cache_d", vals(2, 2, 2, D), "bfloat16")
    ds(g, "paged_v_cache_d", vals(2, 2, 2, D), "bfloat16")
    ds(g, "qo_indptr_d", [0, 1], "int32")
    ds(g, "kv_indptr_d", [0, 2], "int32")
    ds(g, "kv_indices_d", [1, 0], "int32")
    ds(g, "kv_last_page_len_d", [1], "int32")
    ds(g, "out_p", vals(4, 4, D), "bfloat16")
    ds(g, "out_d", vals(1, 4, D), "bfloat16")
    ds(g, "lse_p", vals(4, 4), "float32")
    ds(g, "lse_d", vals(1, 4), "float32")

with h5py.File(os.path.join(out_dir, "features.h5"), "w") as f:
    file_attrs(f)
    g = f.create_group("f16_tiny_alibi_softcap30")
    for k, v in dict(kind="single_prefill", dtype_q="float16", dtype_kv="float16", dtype_o="float16", head_dim=D,
                     num_qo_heads=4, num_kv_heads=1, qo_len=3, kv_len=6, causal=1, mask_mode=1, layout="HND",
                     window_left=-1, pos_encoding_mode="ALIBI", rope_scale=1, rope_theta=10000, logits_soft_cap=30,
                     sm_scale=0.35355339059327373, sm_scale_f32=float(np.float32(0.35355339059327373)),
                     kernel="SinglePrefill", seed=4).items():
        g.attrs[k] = v
    ds(g, "q", vals(3, 4, D), "float16")
    ds(g, "k", vals(1, 6, D), "float16")
    ds(g, "v", vals(1, 6, D), "float16")
    ds(g, "alibi_slopes", [0.5, 0.25, 0.125, 0.0625], "float32")
    ds(g, "out", vals(3, 4, D), "float16")
    ds(g, "lse", vals(3, 4), "float32")
    g = f.create_group("f16_tiny_decode_rope")
    for k, v in dict(kind="batch_decode", dtype_q="float16", dtype_kv="float16", dtype_o="float16", head_dim=D,
                     num_qo_heads=2, num_kv_heads=2, batch_size=2, layout="NHD", page_size=4, window_left=-1,
                     pos_encoding_mode="ROPE_LLAMA", rope_scale=2.0, rope_theta=5e5, logits_soft_cap=0,
                     sm_scale=0.25, sm_scale_f32=0.25, split_kv=1, seed=5).items():
        g.attrs[k] = v
    ds(g, "q", vals(2, 2, D), "float16")
    ds(g, "paged_k_cache", vals(3, 4, 2, D), "float16")
    ds(g, "paged_v_cache", vals(3, 4, 2, D), "float16")
    ds(g, "kv_indptr", [0, 1, 3], "int32")
    ds(g, "kv_indices", [2, 0, 1], "int32")
    ds(g, "kv_last_page_len", [4, 2], "int32")
    ds(g, "out", vals(2, 2, D), "float16")
    ds(g, "lse", vals(2, 2), "float32")
