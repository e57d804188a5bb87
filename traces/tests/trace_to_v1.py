"""Rewrites a podcheck trace (format version 2) as version 1 wrote it, for the reader's mapping tests:
format_version 1 on the file and every case, no run/ group, and the run record as version 1 kept it in
provenance/scheduling (`not_supported` = reason; `run_failed` = message, "out-of-bounds writes: ..." for guards).
Other modes corrupt the run record instead.
Usage: trace_to_v1.py SRC DST MODE     MODE: v1 | bad_status | no_run | bad_expectation"""
import shutil
import sys

import h5py
import numpy as np

src, dst, mode = sys.argv[1:4]
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    for name, g in f["cases"].items():
        if mode == "v1":
            f.attrs["format_version"] = np.int64(1)
            g.attrs["format_version"] = np.int64(1)
            status = g["run"].attrs["status"]
            status = status.decode() if isinstance(status, bytes) else status
            message = g["run"].attrs["message"]
            message = message.decode() if isinstance(message, bytes) else message
            del g["run"]
            sched = g["provenance/scheduling"]
            if status == "not-supported":
                sched.attrs["not_supported"] = message
            elif status == "launch-failed":
                sched.attrs["run_failed"] = message
            elif status == "guards-overwritten":
                sched.attrs["run_failed"] = "out-of-bounds writes: " + message
        elif mode == "bad_status":
            g["run"].attrs["status"] = "exploded"
        elif mode == "no_run":
            del g["run"]
        elif mode == "bad_expectation":
            g["expected/0"].attrs["status"] = "pased"
        else:
            sys.exit("unknown mode " + mode)
