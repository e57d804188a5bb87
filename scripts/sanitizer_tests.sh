#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer, and the reader fuzz targets
# (libFuzzer, fuzz/) for a fixed number of executions each, in build-asan/ (clang-14; no CUDA).
#   scripts/sanitizer_tests.sh [FUZZ_RUNS [FUZZ_SECONDS]]   per target, default 20000 runs; FUZZ_SECONDS
#   (default 600) is only a safety limit: a fuzz test that reaches it before its runs are done fails
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20000}
seconds=${2:-600}
jobs=$(nproc 2>/dev/null || echo 2)
# -O1 with line tables only: symbolized reports, at a fraction of a full debug build's compile time
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_COMPILER=clang++-14 -DPODCHECK_ENABLE_CUDA=OFF -DPODCHECK_PYTHON=OFF -DPODCHECK_FUZZ=ON -DPODCHECK_FUZZ_RUNS="$runs" \
  -DPODCHECK_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build build-asan -j "$jobs"
# symbolized reports; a leak, a sanitizer report or an undefined behaviour fails the test
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || true)}
# max_allocation_size_mb: an allocation over 4 GB is a sanitizer report (with the stack that asked for it: libhdf5's
# is isolated, ours is a bug) on every machine alike, instead of succeeding or failing by the machine's free
# memory (the kernel refuses 30-400 GB mmaps here, libhdf5 asks for them on corrupt files) and, where it
# succeeds and gets written, taking memory that two fuzz targets side by side may not have
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:max_allocation_size_mb=4096}
# libhdf5's own allocations are not ours to free (fuzz/lsan.supp says why)
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# (the install test copies the golden traces and replays them: packaging, nothing a sanitizer adds to; the browser
# test's time is Chromium's, and the report it renders is written sanitized by cli:report pages)
ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE "gpu|install|browser"
