#!/usr/bin/env bash
# One device call: configure + build on the GPU machine, run the GPU tests, optionally podcheck run /
# sanitizers / bench, everything logged under $OUT. Usage: kernels/tools/device_run.sh [steps...]
# steps: tests | sanitize | run-quick | run-default | run-full-shard | bench   (default: tests)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
B=/tmp/build-dev
STEPS=${*:-tests}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$OUT/summary.txt" 2>&1
log "configure"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
TARGETS="kernels_tests"
case " $STEPS " in *run-*|*bench*) TARGETS="$TARGETS podcheck";; esac
log "build $TARGETS"
cmake --build $B -j16 --target $TARGETS > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
for s in $STEPS; do
  case $s in
    tests)
      log "kernels_tests"
      $B/kernels/kernels_tests > "$OUT/tests.log" 2>&1; echo "kernels_tests rc=$?" | tee -a "$OUT/summary.txt"
      tail -5 "$OUT/tests.log" | tee -a "$OUT/summary.txt";;
    sanitize)
      for tool in memcheck racecheck; do
        log "compute-sanitizer $tool"
        compute-sanitizer --tool $tool --error-exitcode 9 $B/kernels/kernels_tests "[sanitize]" > "$OUT/sanitize_$tool.log" 2>&1
        echo "$tool rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/sanitize_$tool.log" | tee -a "$OUT/summary.txt"
      done;;
    run-quick|run-default)
      t=${s#run-}; log "podcheck run tier $t"
      $B/cli/podcheck run --kernel podcheck-cuda --tier $t -o "$OUT/trace_$t.h5" --check > "$OUT/run_$t.log" 2>&1
      echo "run $t rc=$?" | tee -a "$OUT/summary.txt"; tail -4 "$OUT/run_$t.log" | tee -a "$OUT/summary.txt";;
    run-full-shard)
      log "podcheck run tier full shard"
      $B/cli/podcheck run --kernel podcheck-cuda --tier full --shard ${FULL_SHARD:-0/20} --limit ${FULL_LIMIT:-2000} -o "$OUT/trace_full.h5" --check > "$OUT/run_full.log" 2>&1
      echo "run full rc=$?" | tee -a "$OUT/summary.txt"; tail -4 "$OUT/run_full.log" | tee -a "$OUT/summary.txt";;
    bench)
      log "bench kernel"
      $B/cli/podcheck bench kernel > "$OUT/bench.log" 2>&1; echo "bench rc=$?" | tee -a "$OUT/summary.txt"
      PYTHONUNBUFFERED=1 python3 kernels/bench/sdpa_peer.py > "$OUT/sdpa.log" 2>&1; echo "sdpa rc=$?" | tee -a "$OUT/summary.txt"
      cat "$OUT/bench.log" "$OUT/sdpa.log";;
  esac
done
log "done"
