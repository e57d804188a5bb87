#!/usr/bin/env bash
# Build variants of the GPU module for same-call timing: each "name:flags" argument gets its own build folder
# $VDIR/name, configured with CMAKE_CUDA_FLAGS=flags (space-separated -D switches, written with '+' for spaces,
# e.g. "rs2sz0:-DPODCHECK_WS_RSUM=2+-DPODCHECK_WS_SZERO=0"), and target podcheck_gpu built there; "name:" builds
# the tree as it is. Then: PODCHECK_GPU_MODULE=$VDIR/name/kernels/libpodcheck_gpu.so podcheck bench kernel ...
# (interleave the variants over several rounds: one bench call resolves about 5 %, notebook step 15).
# Configure + build run in parallel, JOBS compile jobs each (default 4). One line per variant: its rc and time.
set -u
VDIR=${VDIR:-/tmp/variants}; JOBS=${JOBS:-4}; ARCHS=${CUDA_ARCHS:-90a-real}
pids=""
for v in "$@"; do
  n=${v%%:*}; f=${v#*:}; f=${f//+/ }; d=$VDIR/$n
  ( t0=$(date +%s); mkdir -p $d
    cmake -S . -B $d -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=$ARCHS -DPODCHECK_BUILD_TESTS=OFF \
      "-DCMAKE_CUDA_FLAGS=$f" > $d/configure.log 2>&1 && cmake --build $d -j$JOBS --target podcheck_gpu > $d/build.log 2>&1
    echo "variant $n ($f): rc=$? in $(( $(date +%s) - t0 )) s, $d/kernels/libpodcheck_gpu.so" ) &
  pids="$pids $!"
done
wait $pids
