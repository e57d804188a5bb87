#!/usr/bin/env python3
"""Writes the blob files that the workloads of a flashinfer-bench dataset folder reference, with index tensors
consistent with each workload's axes (numpy only).

flashinfer-bench keeps its blobs (blob/workloads/**.safetensors) in Git LFS / on Hugging Face; where they are
not at hand, this makes stand-ins so the workload lines can be imported as they are: for every input of type
safetensors it writes an int32 tensor under the input's tensor_key:
  qo_indptr / kv_indptr   [len_indptr]: 0 ... total, the total (total_q, num_kv_indices or total_kv) split over
                          the requests (the same split for q and kv of one workload)
  kv_indices              [num_kv_indices]: distinct page ids drawn from [0, num_pages)
  kv_last_page_len        [batch_size]: in [1, page_size]
The values are ours (seeded by the workload's uuid); the axes, which the definitions' constraints tie them to,
are flashinfer-bench's. traces/captures/README.md says which files were made this way.

usage: make_fib_blobs.py DATASET_DIR
"""
import glob
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_numpy as st  # noqa: E402


def split(total, parts, rng):
    if parts == 1:
        return [0, total]
    cuts = sorted(rng.choice(np.arange(1, total), size=parts - 1, replace=False).tolist()) if total > parts else list(range(1, parts))
    return [0] + cuts + [total]


def tensors_for(w, defn, rng):
    ax = dict(w["axes"])
    for name, a in defn["axes"].items():
        if a["type"] == "const":
            ax[name] = a["value"]
    parts = ax["len_indptr"] - 1
    total_kv = ax.get("num_kv_indices", ax.get("total_kv"))
    kv = split(total_kv, parts, rng)
    q = split(ax["total_q"], parts, rng) if "total_q" in ax else None
    if q is not None and "total_kv" in ax and ax["total_q"] == ax["total_kv"]:
        q = kv  # ragged causal prefill: each request's q and kv of equal length
    out = {}
    for name, spec in w["inputs"].items():
        if spec["type"] != "safetensors":
            continue
        key = spec["tensor_key"]
        if key == "qo_indptr":
            out[key] = np.array(q, np.int32)
        elif key == "kv_indptr":
            out[key] = np.array(kv, np.int32)
        elif key == "kv_indices":
            out[key] = rng.choice(ax["num_pages"], size=ax["num_kv_indices"], replace=False).astype(np.int32)
        elif key == "kv_last_page_len":
            out[key] = rng.integers(1, ax["page_size"] + 1, size=ax["batch_size"]).astype(np.int32)
        else:
            sys.exit(f"make_fib_blobs: no rule for tensor '{key}' (workload {w['uuid']})")
    return out


def main():
    root = sys.argv[1]
    defs = {}
    for p in glob.glob(os.path.join(root, "definitions", "**", "*.json"), recursive=True):
        d = json.load(open(p))
        defs[d["name"]] = d
    for p in sorted(glob.glob(os.path.join(root, "workloads", "**", "*.jsonl"), recursive=True)):
        for line in open(p):
            if not line.strip():
                continue
            t = json.loads(line)
            w = t["workload"]
            rng = np.random.default_rng(int(hashlib.sha256(w["uuid"].encode()).hexdigest()[:15], 16))
            files = {}
            for name, spec in w["inputs"].items():
                if spec["type"] == "safetensors":
                    files.setdefault(spec["path"], {})
            tensors = tensors_for(w, defs[t["definition"]], rng)
            for path in files:
                keys = {s["tensor_key"] for s in w["inputs"].values() if s["type"] == "safetensors" and s["path"] == path}
                full = os.path.join(root, path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                st.save(full, {k: tensors[k] for k in sorted(keys)})
                print("wrote", os.path.relpath(full, root))


if __name__ == "__main__":
    main()
