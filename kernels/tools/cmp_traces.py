# Compares every dataset of two HDF5 traces byte for byte (python3 + h5py, e.g. on the GPU machine): a re-recorded
# golden trace against the file it replaces. Usage: cmp_traces.py A.h5 B.h5; prints the datasets that differ.
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], 'r'), h5py.File(sys.argv[2], 'r')
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
same = diff = missing = 0
for n in names:
    if n not in b: missing += 1; print("missing in second:", n); continue
    x, y = a[n][()], b[n][()]
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.shape == y.shape and x.tobytes() == y.tobytes(): same += 1
    elif not isinstance(x, np.ndarray) and x == y: same += 1
    else: diff += 1; print("differs:", n, getattr(x, 'shape', ''), getattr(y, 'shape', ''))
print(f"datasets: {same} identical, {diff} differ, {missing} missing")
sys.exit(1 if diff or missing else 0)
