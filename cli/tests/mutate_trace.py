"""Edits a copy of a podcheck trace the way the verdict-integrity tests need (issue 10's findings).
Usage: mutate_trace.py SRC DST MODE
  crash_and_guard  case 0: outputs removed, provenance/scheduling/run_failed = a CUDA error (a crashed launch as
                   version 1 of `podcheck run` recorded it); case 1: run_failed = "out-of-bounds writes: ..." (a
                   guard-band overwrite, outputs kept). Version 1 files only.
  three_missing    every case keeps only out_d (3 of a POD case's 4 outputs not recorded)
  break_case       the first case loses a dataset it needs (decode/kv_indices)
  plant_faults     (podcheck_cuda_v1_h200.h5) decode_..._ps1_hnd(bs_d=7,...): out_d request 3, head 5 += 0.5;
                   pod_f16_h16kv1d64_...: lse_p rows 10-13 (every head) NaN. The other cases are left as recorded."""
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
    elif mode == "plant_faults":
        import numpy as np
        d = f["cases"]["decode_f16_h32kv8d128_ps1_hnd(bs_d=7,kv_d=1,seed=0)"]["observed"]["out_d"]
        v = d[...]
        v[3, 5, :] += np.float16(0.5)
        d[...] = v
        p = f["cases"]["pod_f16_h16kv1d64_ps16_nhd(qo_p=33,kv_p=100,causal,bs_d=9,kv_d=ragged80,seed=0)"]["observed"]["lse_p"]
        v = p[...]
        v[10:14, :] = np.nan
        p[...] = v
    else:
        sys.exit("unknown mode " + mode)
