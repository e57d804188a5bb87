#!/usr/bin/env bash
# The binaries a device call runs without building there (modules_call.sh BIN=..., device_run.sh PREBUILT=DIR after
# unpacking), built and packed on this machine: podcheck, the GPU module libpodcheck_gpu.so, kernels_tests and the stub
# port, stripped, in one xz'd tar (3.5 MB for v3.19; the call's carry is 64 MiB with the tree). The build folder must
# target the device's sm_90a (configured with CUDAARCHS=90a-real, the device's kernels; ~3 min on 2 cores). The Debian 12
# binaries run on the device's Ubuntu 24.04 (notebook step 39).
#   kernels/tools/pack_bin.sh [BUILD=build] [OUT=.wip/bin.txz]
set -eu
B=${1:-build}; O=${2:-.wip/bin.txz}
grep -q "^CMAKE_CUDA_ARCHITECTURES:.*90a" "$B/CMakeCache.txt" ||
  { echo "pack_bin: $B does not build for sm_90a (configure it with CUDAARCHS=90a-real)" >&2; exit 2; }
cmake --build "$B" --target podcheck podcheck_gpu kernels_tests podcheck_stub_port > /dev/null
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cp "$B/cli/podcheck" "$B/kernels/libpodcheck_gpu.so" "$B/kernels/kernels_tests" "$B/kernels/podcheck_stub_port.so" "$W/"
strip -s "$W"/*
mkdir -p "$(dirname "$O")" && tar cf - -C "$W" . | xz -9 -T0 > "$O"
echo "$O ($(stat -c %s "$O") bytes)"
