"""Checks a trace written with its reference (a failure file) with h5py alone: every diff/<name> equals
observed/<name> - reference/<name>, element for element (NaN where observed is NaN).
usage: check_diff.py FILE CASE_ID"""
import sys

import h5py
import numpy as np

path, case_id = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    g = f["cases"][case_id]
    names = sorted(g["diff"].keys())
    assert names, "no diff datasets"
    for name in names:
        obs = g["observed"][name]
        if obs.attrs["dtype"] == "bfloat16":
            o = (obs[()].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            o = obs[()].astype(np.float64)
        want = o - g["reference"][name][()]
        got = g["diff"][name][()]
        assert got.shape == want.shape, (name, got.shape, want.shape)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (name, np.argwhere(~same)[:5])
    print("diff datasets:", ", ".join(names))
