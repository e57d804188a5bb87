#!/usr/bin/env bash
# On the GPU machine, from the repository root: builds the CLI, the GPU module and the Python module for the
# python3 that holds PyTorch there, then runs the whole pytest suite (CPU tests and tests/test_gpu_pod.py) and
# prints the GPU test's per-case times beside the CLI's. Logs, JUnit XML and the timing table go to $OUT.
# usage: bash python/tools/gpu_pytest.sh            (PODCHECK_GPU_GRID=full for FlashInfer's whole grid)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
PY=${PY:-$(command -v python3)}
B=${B:-/tmp/build-py}
"$PY" -c 'import sys, torch, numpy, h5py, pytest; print(sys.executable, sys.version.split()[0], "torch", torch.__version__,
           "cuda devices", torch.cuda.device_count(), "numpy", numpy.__version__)' 2>&1 | tee "$OUT/env.txt"
inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$inc/Python.h" ] || { echo "no Python.h under $inc: the Python module cannot be built here" | tee -a "$OUT/env.txt"; exit 3; }
pb=$("$PY" -m pybind11 --cmakedir 2>/dev/null) || pb=""
echo "pybind11 cmake dir: ${pb:-(none from pip; CMake searches the system)}" | tee -a "$OUT/env.txt"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPython_EXECUTABLE="$PY" \
      ${pb:+-Dpybind11_DIR="$pb"} > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
grep "podcheck:" "$OUT/configure.log" | tee -a "$OUT/env.txt"
cmake --build "$B" -j16 --target podcheck podcheck_gpu podcheck_python > "$OUT/build.log" 2>&1 \
  || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
export PYTHONPATH=$B/python PODCHECK_CLI=$B/cli/podcheck PODCHECK_TIMINGS=$OUT/timings.txt PYTHONDONTWRITEBYTECODE=1
"$PY" -m pytest -q -s -rs -p no:cacheprovider python/tests --basetemp=/tmp/pytest-py --junitxml="$OUT/pytest.xml" \
  > "$OUT/pytest.log" 2>&1
rc=$?
echo "pytest rc=$rc" | tee -a "$OUT/env.txt"
grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" "$OUT/pytest.log" | tail -30
[ -f "$OUT/timings.txt" ] && cat "$OUT/timings.txt"
exit $rc
