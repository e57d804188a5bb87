#!/usr/bin/env bash
# One device call: configure + build on the GPU machine, run the GPU tests, optionally podcheck run /
# sanitizers / bench, everything logged under $OUT. Usage: kernels/tools/device_run.sh [steps...]
# steps: tests | sanitize | run-quick | run-default | run-full | golden | bench   (default: tests)
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
case " $STEPS " in *run-*|*par-*|*bench*|*golden*|*sanitize*) TARGETS="$TARGETS podcheck";; esac
log "build $TARGETS"
cmake --build $B -j16 --target $TARGETS > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
for s in $STEPS; do
  case $s in
    tests)
      log "kernels_tests"
      $B/kernels/kernels_tests > "$OUT/tests.log" 2>&1; echo "kernels_tests rc=$?" | tee -a "$OUT/summary.txt"
      tail -5 "$OUT/tests.log" | tee -a "$OUT/summary.txt";;
    sanitize)
      head -6 kernels/tools/golden_ids.txt | sed 's/^/--case=/' > /tmp/san_ids.txt
      for tool in memcheck racecheck; do
        log "compute-sanitizer $tool"
        compute-sanitizer --tool $tool --error-exitcode 9 $B/kernels/kernels_tests "[sanitize]" > "$OUT/sanitize_$tool.log" 2>&1
        echo "$tool kernels_tests[sanitize] rc=$?" | tee -a "$OUT/summary.txt"; tail -2 "$OUT/sanitize_$tool.log" | tee -a "$OUT/summary.txt"
        compute-sanitizer --tool $tool --error-exitcode 9 $B/cli/podcheck run $(cat /tmp/san_ids.txt) -o /tmp/san.h5 --force > "$OUT/sanitize_run_$tool.log" 2>&1
        echo "$tool podcheck run (6 tier cases) rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/sanitize_run_$tool.log" | tee -a "$OUT/summary.txt"
      done;;
    par-default-full)
      # default tier in 10 shards + full tier shard 0/10 (= shards 0,10,..,50 of 60): 16 processes at once,
      # each stopped after RUN_TIMEOUT s (its last progress line then gives the partial counts)
      mkdir -p /tmp/tr; pids=""
      log "parallel runs: default (10 shards) + full shard 0/10 (6 sub-shards)"
      for k in 0 1 2 3 4 5 6 7 8 9; do
        OMP_NUM_THREADS=1 timeout ${RUN_TIMEOUT:-400} $B/cli/podcheck run --tier default --shard $k/10 -o /tmp/tr/default_$k.h5 --force --check > /tmp/tr/default_$k.log 2>&1 & pids="$pids $!"
      done
      for k in 0 10 20 30 40 50; do
        OMP_NUM_THREADS=1 timeout ${RUN_TIMEOUT:-400} $B/cli/podcheck run --tier full --shard $k/60 -o /tmp/tr/full_$k.h5 --force --check > /tmp/tr/full_$k.log 2>&1 & pids="$pids $!"
      done
      for p in $pids; do wait $p; echo "pid $p rc=$?" >> "$OUT/summary.txt"; done
      for f in /tmp/tr/default_*.log /tmp/tr/full_*.log; do echo "## $f"; grep -E "^podcheck run:|^  \.\.\.|^\[(BAD|FAIL)" $f | tail -3; done > "$OUT/parity.txt"
      cat "$OUT/parity.txt"
      grep -h -E "^\[(BAD|FAIL)" /tmp/tr/*.log | cut -c1-600 > "$OUT/bad.txt";;
    run-quick|run-default|run-full)
      t=${s#run-}; mkdir -p /tmp/tr; extra=""
      [ $t = full ] && extra="--shard ${FULL_SHARD:-0/10} --limit ${FULL_LIMIT:-2000}"
      log "podcheck run tier $t $extra"
      $B/cli/podcheck run --kernel podcheck-cuda --tier $t $extra -o /tmp/tr/$t.h5 --force --check > "$OUT/run_$t.log" 2>&1
      echo "run $t rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/run_$t.log" | tee -a "$OUT/summary.txt"
      grep -E "^\[(BAD|FAIL)" "$OUT/run_$t.log" | head -5 | cut -c1-400 | tee -a "$OUT/summary.txt"
      log "podcheck replay $t"
      $B/cli/podcheck replay /tmp/tr/$t.h5 -q --no-artifacts > "$OUT/replay_$t.log" 2>&1
      echo "replay $t rc=$?" | tee -a "$OUT/summary.txt"; tail -6 "$OUT/replay_$t.log" | cut -c1-300 | tee -a "$OUT/summary.txt";;
    golden)
      log "golden traces"
      ids=$(sed 's/^/--case=/' kernels/tools/golden_ids.txt | tr '\n' ' ')
      $B/cli/podcheck run --kernel podcheck-cuda $ids -o "$OUT/podcheck_cuda_golden.h5" --force --check > "$OUT/golden.log" 2>&1
      echo "golden rc=$?" | tee -a "$OUT/summary.txt"; tail -2 "$OUT/golden.log" | tee -a "$OUT/summary.txt"; ls -la "$OUT"/*.h5;;
    bench)
      log "bench kernel"
      $B/cli/podcheck bench kernel > "$OUT/bench.log" 2>&1; echo "bench rc=$?" | tee -a "$OUT/summary.txt"
      PYTHONUNBUFFERED=1 python3 kernels/bench/sdpa_peer.py > "$OUT/sdpa.log" 2>&1; echo "sdpa rc=$?" | tee -a "$OUT/summary.txt"
      cat "$OUT/bench.log" "$OUT/sdpa.log";;
  esac
done
log "done"
