#!/usr/bin/env bash
# One device call: configure + build on the GPU machine, run the GPU tests, optionally podcheck run /
# sanitizers / bench, everything logged under $OUT. Usage: kernels/tools/device_run.sh [steps...]
# steps: tests | sanitize | run-quick | run-default | run-full (traces by id, then replay) | golden | bench
#        faulty (traces of the two broken test ports: a crashed launch, a guard overwrite) | captures (real
#        FlashInfer API-logging dumps; carry traces/captures/.flashinfer)
#        check-quick | check-default | check-full | port | profiles | ncu | wgmma | sweep | gather | loop   (default: tests)
# gather: podcheck_gather_bench (kernels/bench/gather_bench.cu) with GATHER_ARGS, $OUT/gather.log
# loop: podcheck_loop_bench (kernels/bench/loop_bench.cu, the prefill's inner loop alone) with LOOP_ARGS, $OUT/loop.log
# sweep: SWEEP="default;PODCHECK_CUDA_PREFILL_CTAS=0;PODCHECK_CUDA_DECODE_CHUNK=512" times each setting of the
# kernel's experiment knobs on SWEEP_MIXES (default "A B C"), one bench call each ($OUT/sweep_N.log); SWEEP_ROUNDS=n
# runs the settings n times, alternating (a split-form launch's speed varies between processes: notebook step 31)
# port: build libpodcheck_flashinfer.so (kernels/ports/flashinfer, docs/PORTS.md) from FLASHINFER_DIR (default
# ./.flashinfer, else ../.flashinfer; carry .flashinfer) into /tmp/build-fi (kept while the machine stays warm), then KERNEL_LIB and PEER point to it.
# PORT_INSTANCES=bench builds only the benchmark's 8 instantiations (a peer for `bench`, not for sweeps).
# KERNEL_LIB=path.so: check-*, run-* and golden run that port (--kernel-lib) instead of podcheck-cuda;
# PEER=path.so: bench also times that port (--peer); BENCH_MIXES="A-ps1 Sd" times those mixes, one call each. FULL_SHARDS="a/n b/n": check-full runs each shard in turn.
# profiles: the cases check-* found incorrect, recorded again by id and replayed under flashinfer-pod and
# flashinfer ($OUT/profile_<tier>_<profile>.json). GOLDEN_IDS / GOLDEN_OUT: the golden step's id list and file.
# check-*: the tier judged by `podcheck run --check` (no traces kept), cut into PROCS x SUB (default 4) shards
# that PROCS processes take from a queue until CHECK_TIMEOUT (check-full: full-tier shard FULL_SHARD, default
# 0/11, ~2,046 cases; SHARDS="a/n b/n ..." runs exactly those shards instead). Results: per shard its last
# counts line and its rc (or "not started") in $OUT/check_<tier>.txt, the merged verdicts in
# $OUT/check_<tier>.json, every not-passed case's report in $OUT/bad_<tier>.txt.
# PREBUILT=DIR: use DIR/podcheck, DIR/libpodcheck_gpu.so, DIR/kernels_tests, DIR/podcheck_stub_port.so built elsewhere (e.g. this
# machine's Debian build, carried), instead of configuring and building here. A DIR/bin.tgz holding them
# (stripped, to fit the transfer limit) is unpacked first: carried folders arrive afresh on every call.
# CLI_ONLY=1: configure without CUDA and build the CLI alone (~35 s on 16 cores against ~150 s with the kernels),
# for calls that time or check modules built elsewhere (variant_module.sh, carried): PODCHECK_GPU_MODULE must name
# one (SWEEP's "default" entry then means that module); steps needing kernels_tests or the port are refused.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
STEPS=${*:-tests}
PROCS=${PROCS:-16}
if [ "${CLI_ONLY:-0}" = 1 ]; then
  case " $STEPS " in *" tests "*|*sanitize*|*wgmma*|*faulty*|*gather*|*loop*|*" port "*)
    echo "device_run: CLI_ONLY=1 builds no kernels_tests, benches or port: steps '$STEPS' need them" >&2; exit 2;; esac
  [ -f "${PODCHECK_GPU_MODULE:-}" ] || { echo "device_run: CLI_ONLY=1 needs PODCHECK_GPU_MODULE naming a module" >&2; exit 2; }
fi
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/summary.txt"; }
# The logs in $OUT added to logs.tgz (created or extended: an earlier invocation's, or the caller's; session 39 lost
# six sweep logs to an overwrite). A name the archive already holds (a second invocation's loop.log, tests.log, ...)
# goes in as NAME_2.log, NAME_3.log, ...: nothing in the archive is ever replaced. Run before the steps when an
# earlier invocation of the same call left logs here (so this one's, written under the same names, replace none),
# and after them when more than 8 files would come back.
pack_logs() {
  (cd "$OUT" && rm -rf .logs && mkdir .logs && { [ ! -f logs.tgz ] || tar xzf logs.tgz -C .logs; } &&
    { for f in *.log; do
        [ -e "$f" ] || continue
        g=$f; n=1; while [ -e ".logs/$g" ]; do n=$((n + 1)); g=${f%.log}_$n.log; done
        mv "$f" ".logs/$g"
      done; tar czf logs.tgz -C .logs .; }; rm -rf .logs)
}
ls "$OUT"/*.log > /dev/null 2>&1 && pack_logs
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$OUT/summary.txt" 2>&1
# the port's build (step `port`) runs in the background beside the main build; the step waits for it
# a carried .fi.tgz (`tar czf .fi.tgz .flashinfer`: 1.8 MB instead of 17) or .fi.txz (`tar cf - .flashinfer | xz -9e >
# .fi.txz`: 1.2 MB, room for a module beside it under the tree's 64 MiB transfer limit) is unpacked to /tmp/fi and
# used unless FLASHINFER_DIR is set
for a in .fi.txz .fi.tgz; do
  if [ -f $a ] && [ -z "${FLASHINFER_DIR:-}" ]; then mkdir -p /tmp/fi && tar xf $a -C /tmp/fi && FLASHINFER_DIR=/tmp/fi/.flashinfer; fi
done
FI=${FLASHINFER_DIR:-$([ -d .flashinfer ] && echo $PWD/.flashinfer || echo $PWD/../.flashinfer)}; BF=/tmp/build-fi
SO=$BF/kernels/ports/flashinfer/libpodcheck_flashinfer.so
port_build() {
  if [ -f $SO ] && [ -z "${REBUILD_PORT:-}" ]; then log "port: reusing $SO (warm machine)"; return 0; fi
  log "port: configure with PODCHECK_FLASHINFER_DIR=$FI"
  cmake -S . -B $BF -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPODCHECK_BUILD_TESTS=OFF \
    -DPODCHECK_FLASHINFER_DIR=$FI -DPODCHECK_FLASHINFER_INSTANCES=${PORT_INSTANCES:-all} > "$OUT/port_configure.log" 2>&1 || return 1
  local t0=$(date +%s)
  cmake --build $BF -j16 --target podcheck_flashinfer > "$OUT/port_build.log" 2>&1 || return 1
  echo "port build: $(( $(date +%s) - t0 )) s, $(stat -c %s $SO) bytes" | tee -a "$OUT/summary.txt"
}
case " $STEPS " in *" port "*) port_build & PORT_PID=$!;; esac
if [ -n "${PREBUILT:-}" ]; then
  [ -f "$PREBUILT/bin.tgz" ] && [ ! -x "$PREBUILT/podcheck" ] && tar xzf "$PREBUILT/bin.tgz" -C "$PREBUILT"
  PODCHECK=$PREBUILT/podcheck; KTESTS=$PREBUILT/kernels_tests; FAULTY_DIR=$PREBUILT
  export PODCHECK_STUB_PORT=$PWD/$PREBUILT/podcheck_stub_port.so
  export PODCHECK_GPU_MODULE=$PWD/$PREBUILT/libpodcheck_gpu.so  # podcheck loads it for run / bench kernel
elif [ "${CLI_ONLY:-0}" = 1 ]; then
  B=${B:-/tmp/build-cli}
  log "configure (CLI only, module $PODCHECK_GPU_MODULE)"
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DPODCHECK_ENABLE_CUDA=OFF -DPODCHECK_BUILD_TESTS=OFF \
    -DPODCHECK_PYTHON=OFF > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  log "build podcheck"
  cmake --build $B -j16 --target podcheck > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
  PODCHECK=$B/cli/podcheck; KTESTS=/nonexistent; FAULTY_DIR=/nonexistent
else
  B=${B:-/tmp/build-dev}
  log "configure"
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS:-90a-real} > "$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; exit 1; }
  TARGETS="kernels_tests"
  case " $STEPS " in *run-*|*check-*|*bench*|*sweep*|*golden*|*sanitize*|*profiles*|*faulty*|*ncu*) TARGETS="$TARGETS podcheck";; esac
  case " $STEPS " in *faulty*) TARGETS="$TARGETS podcheck_faulty_crash podcheck_faulty_guard";; esac
  case " $STEPS " in *gather*) TARGETS="$TARGETS podcheck_gather_bench";; esac
  case " $STEPS " in *loop*) TARGETS="$TARGETS podcheck_loop_bench";; esac
  TARGETS=${BUILD_TARGETS:-$TARGETS}  # e.g. "podcheck podcheck_gpu": no kernels_tests when no step runs them
  log "build $TARGETS"
  cmake --build $B -j16 --target $TARGETS > "$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
  PODCHECK=$B/cli/podcheck; KTESTS=$B/kernels/kernels_tests; FAULTY_DIR=$B/kernels
fi
GATHER=${PREBUILT:-$B/kernels}/podcheck_gather_bench
LOOPB=${PREBUILT:-$B/kernels}/podcheck_loop_bench
KSEL="--kernel podcheck-cuda"
[ -n "${KERNEL_LIB:-}" ] && KSEL="--kernel-lib $KERNEL_LIB"
for s in $STEPS; do
  case $s in
    port)
      if [ -n "${PORT_PID:-}" ]; then wait $PORT_PID || { grep -E "error|FAILED" "$OUT/port_build.log" | head -40; tail -30 "$OUT/port_configure.log"; exit 1; }; fi
      KERNEL_LIB=${KERNEL_LIB:-$SO}; PEER=${PEER:-$SO}; KSEL="--kernel-lib $KERNEL_LIB";;
    tests)
      log "kernels_tests"
      $KTESTS "~[provenance]" > "$OUT/tests.log" 2>&1; echo "kernels_tests rc=$?" | tee -a "$OUT/summary.txt"
      tail -5 "$OUT/tests.log" | tee -a "$OUT/summary.txt";;
    gather)
      log "podcheck_gather_bench ${GATHER_ARGS:-}"
      timeout ${GATHER_TIMEOUT:-240} $GATHER ${GATHER_ARGS:-} > "$OUT/gather.log" 2>&1; echo "gather rc=$?" | tee -a "$OUT/summary.txt"
      cat "$OUT/gather.log";;
    loop)
      log "podcheck_loop_bench ${LOOP_ARGS:-}"
      timeout ${LOOP_TIMEOUT:-240} $LOOPB ${LOOP_ARGS:-} > "$OUT/loop.log" 2>&1; echo "loop rc=$?" | tee -a "$OUT/summary.txt"
      cat "$OUT/loop.log";;
    wgmma)
      # the sm_90a building blocks (kernels/tests/test_wgmma.cpp), in a process of their own
      log "kernels_tests [.wgmma]"
      $KTESTS "[.wgmma]" > "$OUT/wgmma.log" 2>&1; echo "wgmma rc=$?" | tee -a "$OUT/summary.txt"
      grep "wgmma probe" "$OUT/wgmma.log" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/wgmma.log" | tee -a "$OUT/summary.txt";;
    sanitize)
      # 6 tier cases: 4 without and 2 with RoPE / ALiBi / soft cap (none of the 16k-KV ones: too slow)
      { grep -v 16384 kernels/tools/golden_ids.txt | grep -v -E 'rope|alibi|cap=' | head -4
        grep -v 16384 kernels/tools/golden_ids.txt | grep -E 'rope|alibi|cap=' | head -2; } | sed 's/^/--case=/' > /tmp/san_ids.txt
      # SANITIZE_TOOLS (default "memcheck racecheck"), SANITIZE_TESTS (a kernels_tests filter, default "[sanitize]";
      # e.g. "warp-specialised fused launch*"), SANITIZE_TIMEOUT (s per tool and run, default 600; rc 124: not finished,
      # not a result), SANITIZE_RUN=0: no tier cases
      for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
        log "compute-sanitizer $tool"
        timeout ${SANITIZE_TIMEOUT:-600} compute-sanitizer --tool $tool --error-exitcode 9 $KTESTS "${SANITIZE_TESTS:-[sanitize]}" \
          > "$OUT/sanitize_$tool.log" 2>&1
        echo "$tool kernels_tests ${SANITIZE_TESTS:-[sanitize]} rc=$?" | tee -a "$OUT/summary.txt"; tail -2 "$OUT/sanitize_$tool.log" | tee -a "$OUT/summary.txt"
        [ "${SANITIZE_RUN:-1}" = 0 ] && continue
        timeout ${SANITIZE_TIMEOUT:-600} compute-sanitizer --tool $tool --error-exitcode 9 $PODCHECK run $(cat /tmp/san_ids.txt) \
          -o /tmp/san.h5 --force > "$OUT/sanitize_run_$tool.log" 2>&1
        echo "$tool podcheck run (6 tier cases) rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/sanitize_run_$tool.log" | tee -a "$OUT/summary.txt"
      done;;
    check-quick|check-default|check-full)
      tier=${s#check-}
      for k0 in $( [ $tier = full ] && echo ${FULL_SHARDS:-${FULL_SHARD:-0/11}} || echo all ); do
      t=$tier; [ $tier = full ] && [ -n "${FULL_SHARDS:-}" ] && t=full_${k0%/*}_${k0#*/}
      mkdir -p /tmp/ck; pids=""; shards=""
      rm -f /tmp/ck/${t}_* /tmp/ck/rc_$t.txt  # a warm machine keeps /tmp: no verdicts or rc lines of an earlier call
      if [ -n "${SHARDS:-}" ]; then
        shards=" $SHARDS"  # explicit list, e.g. the sub-shards of a shard that did not finish
      elif [ $tier = full ]; then
        k=${k0%/*}; n=${k0#*/}; m=$((PROCS * ${SUB:-4}))
        for ((p = 0; p < m; ++p)); do shards="$shards $((k + p * n))/$((n * m))"; done
      else
        m=$((PROCS * ${SUB:-4}))
        for ((p = 0; p < m; ++p)); do shards="$shards $p/$m"; done
      fi
      # a queue: PROCS processes at a time take the next shard (more shards than processes balances
      # heavy and light ones); at the time box, running shards stop and unstarted ones are listed
      # which kernel it judges (a `port` step earlier in the same invocation points KSEL at FlashInfer's port: stop 45
      # judged that port's bench-only build by mistake, 462 of 531 not supported)
      log "check tier $t ($KSEL): shards$shards, $PROCS at a time, until ${CHECK_TIMEOUT:-560} s"
      deadline=$(( $(date +%s) + ${CHECK_TIMEOUT:-560} ))
      export PODCHECK t tier deadline KSEL
      printf '%s\n' $shards | cat -n | xargs -P $PROCS -L 1 bash -c '
        left=$(( deadline - $(date +%s) )); name=/tmp/ck/${t}_$0.log
        if [ $left -le 0 ]; then echo "shard $1 not started (time box)" >> /tmp/ck/rc_$t.txt; exit 0; fi
        OMP_NUM_THREADS=1 timeout $left $PODCHECK run $KSEL --tier $tier --shard $1 --check --json /tmp/ck/${t}_$0.json > $name 2>&1
        echo "$t shard $1 rc=$?" >> /tmp/ck/rc_$t.txt'
      for f in /tmp/ck/${t}_*.log; do grep -E "^podcheck run:|^  \.\.\." $f | tail -1; done > "$OUT/check_$t.txt"
      cat /tmp/ck/rc_$t.txt >> "$OUT/check_$t.txt"
      # the finished shards' verdicts joined into one report (counts per status, every case with metrics)
      $PODCHECK merge /tmp/ck/${t}_*.json -o "$OUT/check_$t.json" --force >> "$OUT/check_$t.txt" 2>&1
      grep -h -v -E "^podcheck run:|^  \.\.\.|^\[NS\]" /tmp/ck/${t}_*.log | cut -c1-400 | head -400 > "$OUT/bad_$t.txt"
      grep -h "^\[NS\]" /tmp/ck/${t}_*.log | sed 's/^\[NS\] *[^:]*: //' | sort | uniq -c > "$OUT/ns_$t.txt"
      # shards the time box cut off or never started: the list to finish the tier with in a later call (SHARDS=...;
      # a finished shard's json is in check_$t.json, so the two calls together cover the tier)
      unfinished=$(grep -E "rc=(124|137)$|not started" /tmp/ck/rc_$t.txt | sed -E 's/.*shard ([0-9]+\/[0-9]+).*/\1/' | sort -n | tr '\n' ' ')
      [ -n "$unfinished" ] && echo "$t: not finished in the box: SHARDS=\"${unfinished% }\"" >> "$OUT/check_$t.txt"
      log "check tier $t done"; tail -n 4 "$OUT/check_$t.txt"; head -c 1500 "$OUT/bad_$t.txt"
      done;;
    profiles)
      # incorrect cases of every check_*.json here, recorded again by id and replayed under the POD profiles
      for j in "$OUT"/check_*.json; do
        t=$(basename $j .json); t=${t#check_}
        python3 -c 'import json,sys; [print("--case=" + c["id"]) for c in json.load(open(sys.argv[1]))["cases"] if c["status"] == "incorrect"]' $j > /tmp/prof_$t.ids
        [ -s /tmp/prof_$t.ids ] || continue
        log "profiles $t: $(wc -l < /tmp/prof_$t.ids) incorrect cases"
        timeout ${PROFILE_TIMEOUT:-300} $PODCHECK run $KSEL $(cat /tmp/prof_$t.ids | tr '\n' ' ') -o /tmp/prof_$t.h5 --force --inputs-by-id > "$OUT/prof_run_$t.log" 2>&1
        for p in flashinfer-pod flashinfer; do
          timeout ${PROFILE_TIMEOUT:-300} $PODCHECK replay /tmp/prof_$t.h5 --profile $p -q --no-artifacts --json "$OUT/profile_${t}_$p.json" --force > "$OUT/profile_${t}_$p.log" 2>&1
          echo "profile $p on $t: $(tail -1 "$OUT/profile_${t}_$p.log" | cut -c1-200)" | tee -a "$OUT/summary.txt"
        done
      done;;
    run-quick|run-default|run-full)
      # traces for replay elsewhere: recorded by id (no judging here), then judged once by replay
      t=${s#run-}; mkdir -p /tmp/tr; extra=""
      [ $t = full ] && extra="--shard ${FULL_SHARD:-0/11}"
      log "podcheck run tier $t $extra"
      $PODCHECK run $KSEL --tier $t $extra -o /tmp/tr/$t.h5 --force --inputs-by-id > "$OUT/run_$t.log" 2>&1
      echo "run $t rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/run_$t.log" | tee -a "$OUT/summary.txt"
      log "podcheck replay $t"
      $PODCHECK replay /tmp/tr/$t.h5 -q --no-artifacts --json "$OUT/replay_$t.json" --force > "$OUT/replay_$t.log" 2>&1
      echo "replay $t rc=$?" | tee -a "$OUT/summary.txt"; tail -6 "$OUT/replay_$t.log" | cut -c1-300 | tee -a "$OUT/summary.txt";;
    golden)
      # the cases of kernels/tools/golden_ids.txt (pick_golden.py: every supported feature, ~1.7 MB of
      # outputs), stored by id; copy the file to traces/golden/podcheck-cuda/ to have CI replay it
      log "golden traces"
      ids=$(grep -v '^#' ${GOLDEN_IDS:-kernels/tools/golden_ids.txt} | sed 's/^/--case=/' | tr '\n' ' ')
      GO=${GOLDEN_OUT:-podcheck_cuda_golden_h200.h5}
      $PODCHECK run $KSEL $ids -o "$OUT/$GO" --force --inputs-by-id --check > "$OUT/golden.log" 2>&1
      echo "golden rc=$?" | tee -a "$OUT/summary.txt"; tail -2 "$OUT/golden.log" | tee -a "$OUT/summary.txt"; ls -la "$OUT"/*.h5;;
    captures)
      # real FlashInfer API-logging dumps (traces/tools/capture_flashinfer_dumps.py; carry traces/captures/.flashinfer)
      log "FlashInfer API-logging captures"
      PYTHONUNBUFFERED=1 timeout ${CAPTURE_TIMEOUT:-180} python3 traces/tools/capture_flashinfer_dumps.py \
        --api-logging traces/captures/.flashinfer/api_logging.py --out "$OUT" > "$OUT/captures.log" 2>&1
      echo "captures rc=$?" | tee -a "$OUT/summary.txt"; tail -5 "$OUT/captures.log" | tee -a "$OUT/summary.txt";;
    faulty)
      # golden traces of a crashed launch and of a guard-band overwrite (kernels/tests/faulty_port.cu), for
      # traces/golden/faulty-ports/: two small cases each, stored by id
      log "faulty ports"
      ids="--case=pod_bf16_h8kv8d64_ps16_hnd(qo_p=1,kv_p=1000,bs_d=17,kv_d=ragged1000,seed=0) --case=decode_bf16_h8kv8d128_ps1_nhd(bs_d=1,kv_d=128,seed=0)"
      for f in crash guard; do
        $PODCHECK run --kernel-lib $FAULTY_DIR/podcheck_faulty_$f.so $ids -o "$OUT/faulty_$f.h5" --force --inputs-by-id > "$OUT/faulty_$f.log" 2>&1
        echo "faulty $f: run rc=$?" | tee -a "$OUT/summary.txt"; tail -3 "$OUT/faulty_$f.log" | tee -a "$OUT/summary.txt"
        $PODCHECK replay "$OUT/faulty_$f.h5" --no-artifacts >> "$OUT/faulty_$f.log" 2>&1
        echo "faulty $f: replay rc=$? (expected 1)" | tee -a "$OUT/summary.txt"
      done;;
    ncu)
      # Nsight Compute (hardware counters, clocks left alone: --clock-control none) on one launch each: our
      # fused kernel on mix A's decode alone and prefill alone, and, with PEER set, the peer's kernel on the same
      # decode case (NCU_PEER=0: not). Reports as text in $OUT/ncu.tgz.
      mkdir -p /tmp/ncu; rm -f /tmp/ncu/*
      prof() {  # name, kernel selection, kernel-name regex, case id
        log "ncu $1"
        timeout ${NCU_TIMEOUT:-240} ncu --clock-control none --set full -k "regex:$3" -c 1 -f -o /tmp/ncu/$1 \
          $PODCHECK run $2 --case "$4" --check > /tmp/ncu/$1.log 2>&1
        echo "ncu $1 rc=$?" | tee -a "$OUT/summary.txt"
        ncu -i /tmp/ncu/$1.ncu-rep --page details --print-details all > /tmp/ncu/$1.txt 2>&1 ||
          ncu -i /tmp/ncu/$1.ncu-rep --page details > /tmp/ncu/$1.txt 2>&1
        ncu -i /tmp/ncu/$1.ncu-rep --page raw --csv > /tmp/ncu/$1_raw.csv 2>&1  # every counter collected
        ncu -i /tmp/ncu/$1.ncu-rep --page source --csv --print-source sass > /tmp/ncu/$1_sass.csv 2>&1
        grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|L2 Hit Rate|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible" /tmp/ncu/$1.txt | head -14 | tee -a "$OUT/summary.txt"
        rm -f /tmp/ncu/$1.ncu-rep
      }
      DEC_A="decode_bf16_h32kv8d128_ps16_nhd(bs_d=128,kv_d=2048,seed=0)"
      PRE_A="prefill_bf16_h32kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,seed=0)"
      DEC1_A="decode_bf16_h32kv8d128_ps1_nhd(bs_d=128,kv_d=2048,seed=0)"  # A-ps1's decode: page size 1
      FUS_A="pod_bf16_h32kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,bs_d=128,kv_d=2048,seed=0)"  # mix A fused
      DEC8_A="decode_bf16_e4m3_h32kv8d128_ps16_nhd(bs_d=128,kv_d=2048,seed=0)"  # A-e4m3's decode: fp8 e4m3 KV
      # NCU_SIDES: which launches (default "dec pre"; dec1: the decode at page size 1; dec8: with fp8 e4m3 KV;
      # fus: mix A's fused launch);
      # the prefill alone runs pod_ws_kernel on sm_90a
      for side in ${NCU_SIDES:-dec pre}; do
        case $side in dec) c="$DEC_A";; dec1) c="$DEC1_A";; dec8) c="$DEC8_A";; pre) c="$PRE_A";; fus) c="$FUS_A";;
          *) echo "NCU_SIDES: '$side' is not dec, dec1, dec8, pre or fus" | tee -a "$OUT/summary.txt"; exit 2;; esac
        prof ${side}_ours "--kernel podcheck-cuda" "pod_fused|pod_ws" "$c"
        [ -n "${PEER:-}" ] && [ "${NCU_PEER:-1}" = 1 ] && prof ${side}_peer "--kernel-lib $PEER" "BatchPrefill|POD|Decode|SinglePrefill" "$c"
      done
      tar czf "$OUT/ncu.tgz" -C /tmp/ncu .;;
    sweep)
      # the planner's experiment knobs (docs/KERNEL.md): one `bench kernel` call per setting in SWEEP (settings
      # separated by ';', each "default" or space-separated VAR=value), on the mixes SWEEP_MIXES (default A B C)
      # logs numbered on from those already in $OUT and in logs.tgz, so a call's sweeps number their logs in the order
      # they ran, across steps and invocations (stop 37 lost a first sweep's to a second's)
      IFS=';' read -ra settings <<< "${SWEEP:-default}"; n=0
      k=$( { ls "$OUT"; [ ! -f "$OUT/logs.tgz" ] || tar tzf "$OUT/logs.tgz"; } 2>/dev/null | grep -c 'sweep_[0-9]*\.log$')
      all=(); for ((r = 0; r < ${SWEEP_ROUNDS:-1}; ++r)); do all+=("${settings[@]}"); done
      for set in "${all[@]}"; do
        n=$((n + 1)); envs=""; [ "$set" != default ] && envs="$set"
        sl="$OUT/sweep_$((k + n)).log"
        log "sweep $n: ${set} ($(basename $sl))"
        mixargs=$(for m in ${SWEEP_MIXES:-A B C}; do printf -- '--mix %s ' $m; done)
        peer_arg=""; [ $n = 1 ] && [ -n "${PEER:-}" ] && peer_arg="--peer $PEER"  # the peer in the first setting only
        env $envs timeout ${BENCH_TIMEOUT:-300} $PODCHECK bench kernel $mixargs --reps ${SWEEP_REPS:-20} $peer_arg \
          > "$sl" 2>&1
        echo "sweep $n ($set) rc=$?" | tee -a "$OUT/summary.txt"
        grep -E "^[A-Z][A-Za-z0-9-]* .* [0-9]+\.[0-9]+ +[0-9]" "$sl" | head -${SWEEP_ROWS:-3} | tee -a "$OUT/summary.txt"
      done;;
    bench)
      if [ -n "${BENCH_MIXES:-}" ]; then
        # BENCH_MIXES="A-ps1 Sd ...": one `bench kernel --mix` call each (its own ceilings), cheapest first, so
        # a time box keeps what finished; no SDPA peer
        for m in $BENCH_MIXES; do
          log "bench kernel --mix $m"
          timeout ${BENCH_TIMEOUT:-300} $PODCHECK bench kernel --mix "$m" ${PEER:+--peer $PEER} > "$OUT/bench_$m.log" 2>&1
          echo "bench $m rc=$?" | tee -a "$OUT/summary.txt"
        done
        continue
      fi
      log "bench kernel"
      $PODCHECK bench kernel ${PEER:+--peer $PEER} > "$OUT/bench.log" 2>&1; echo "bench rc=$?" | tee -a "$OUT/summary.txt"
      PYTHONUNBUFFERED=1 python3 kernels/bench/sdpa_peer.py > "$OUT/sdpa.log" 2>&1; echo "sdpa rc=$?" | tee -a "$OUT/summary.txt"
      cat "$OUT/bench.log" "$OUT/sdpa.log";;
  esac
done
log "done"
# at most 8 files come back from a device call: past that, the logs travel as one archive (pack_logs, above)
[ "$(ls "$OUT" | wc -l)" -gt 8 ] && pack_logs
exit 0
