"""Edits a copy of a podcheck trace the way the verdict-integrity tests need (issue 10's findings).
Usage: mutate_trace.py SRC DST MODE
  crash_and_guard  case 0: outputs removed, provenance/scheduling/run_failed = a CUDA error (a crashed launch as
                   version 1 of `podcheck run` recorded it); case 1: run_failed = "out-of-bounds writes: ..." (a
                   guard-band overwrite, outputs kept). Version 1 files only.
  three_missing    every case keeps only out_d (3 of a POD case's 4 outputs not recorded)
  break_case       the first case loses a dataset it needs (decode/kv_indices)"""
import shutil
import sys

import h5py

src, dst, mode = sys.argv[1:4]
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    cases = [f["cases"][k] for k in sorted(f["cases"].keys())]
    if mode == "crash_and_guard":
        assert int(f.attrs["format_version"]) == 1, "crash_and_guard edits a version 1 trace"
        c0, c1 = cases[0], cases[1]
        for k in list(c0["observed"].keys()):
            del c0["observed"][k]
        c0["provenance/scheduling"].attrs["run_failed"] = "kernel failed: an illegal memory access was encountered"
        c1["provenance/scheduling"].attrs["run_failed"] = "out-of-bounds writes: out_d: 12 guard elements overwritten"
    elif mode == "three_missing":
        for c in cases:
            for k in list(c["observed"].keys()):
                if k != "out_d":
                    del c["observed"][k]
    elif mode == "break_case":
        g = cases[0]
        side = "decode" if "decode" in g else "prefill"
        del g[side + "/kv_indices"]
    else:
        sys.exit("unknown mode " + mode)
