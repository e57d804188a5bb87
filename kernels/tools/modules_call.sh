#!/usr/bin/env bash
# One device call that builds nothing there: binaries built on this machine (PREBUILT form, kernels/tools/pack_bin.sh)
# and GPU modules built here (variant_module.sh), carried in the working tree, compared on the GPU inside a time box,
# the most needed first. Each step prints a few lines (the call's output tail); logs, spans and ncu reports come back
# packed in $OUT/all.tgz beside $OUT/s.txt (a call returns at most 8 files).
#   BIN=.wip/bin.txz MODS=.wip/mods NCU="tree f0 ftail" BENCH="tree ftail f0" QUICK="ftail" LIMIT=570 \
#     bash kernels/tools/modules_call.sh
# BIN: pack_bin.sh's archive (podcheck, libpodcheck_gpu.so = the tree's module "tree", kernels_tests, the stub port).
# MODS: a folder of NAME.so.xz (variant_module.sh's output); NAME names the module in the lists below.
# Steps, each skipped when its list is empty or the box has too little time left:
#   NCU="tree NAME ...": Nsight Compute on one cold launch of mix A's prefill alone (podcheck run --case, judged)
#     under each module: speed of light, warp states (the stall reasons, "no instruction" among them), the source
#     counters (stall samples per SASS instruction, exported as CSV) and the launch statistics
#   BENCH="tree NAME ...": `bench kernel` under each module, BENCH_ROUNDS rounds (default 2) alternating, on
#     BENCH_MIXES (default "A C"); the first round also writes each side's timeline spans
#     (PODCHECK_BENCH_TIMELINES=all) and prints spans_fit.py --ends of them
#   WARM="NAME ...": mix A's timelines under each module with every timeline launch run twice and the second one's
#     spans kept (PODCHECK_BENCH_TIMELINE_REPEAT=1: code, Q and KV left in L2 by the first), spans_fit.py --ends of
#     them: against BENCH's cold spans, what a launch's cold start costs under that module (notebook step 39)
#   QUICK="NAME ...": the quick tier judged under each module (device_run.sh check-quick, 16 processes)
#   MUTANT="NAME ...": each module, built with a deliberate error, judged on quick shard 0/16: it must fail (rc 1)
#   GOLDEN="NAME ...": the golden cases recorded under each module and compared dataset by dataset with the trace
#     committed for the tree's kernel (GOLDEN_REF, default the newest traces/golden/podcheck-cuda/*.h5):
#     cmp_traces.py, for a change that must leave every output bit for bit as it was
#   FI=.fi.txz: FlashInfer's port (bench instances) built in the background from the start, then `bench kernel`
#     of the tree with it as the peer on FI_MIXES (default "A B C")
#   SHARDS="16/64 17/64 ...": those default-tier shards under the tree, in the time left
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; LIMIT=${LIMIT:-570}; T0=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
say() { echo "== +$(( $(date +%s) - T0 ))s $*" | tee -a "$OUT/s.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a "$OUT/s.txt"
[ -f "${BIN:-}" ] || { echo "modules_call: BIN=${BIN:-} is no archive of binaries (kernels/tools/pack_bin.sh)" >&2; exit 2; }
mkdir -p pb && tar xJf "$BIN" -C pb || exit 2
PC=$PWD/pb/podcheck
export PODCHECK_STUB_PORT=$PWD/pb/podcheck_stub_port.so
so_of() {  # module name -> its .so on this machine (unpacked once)
  if [ "$1" = tree ]; then echo "$PWD/pb/libpodcheck_gpu.so"; return; fi
  [ -f /tmp/mods/$1.so ] || { mkdir -p /tmp/mods && xz -dc "${MODS:-.wip/mods}/$1.so.xz" > /tmp/mods/$1.so; } || return 1
  echo /tmp/mods/$1.so
}
for m in ${NCU:-} ${BENCH:-} ${WARM:-} ${QUICK:-} ${MUTANT:-} ${GOLDEN:-}; do so_of $m > /dev/null || { echo "modules_call: no module $m" >&2; exit 2; }; done
# FlashInfer's port: the configure of device_run.sh's port step, started here in the background so that its ~40 s
# build runs beside the ncu step instead of before the bench that needs it
if [ -n "${FI:-}" ]; then
  ( mkdir -p /tmp/fi && tar xf "$FI" -C /tmp/fi && cmake -S . -B /tmp/build-fi -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DPODCHECK_BUILD_TESTS=OFF -DPODCHECK_FLASHINFER_DIR=/tmp/fi/.flashinfer \
      -DPODCHECK_FLASHINFER_INSTANCES=bench > /tmp/fi_configure.log 2>&1 &&
      nice cmake --build /tmp/build-fi -j12 --target podcheck_flashinfer > /tmp/fi_build.log 2>&1; echo $? > /tmp/fi_rc ) &
fi
PRE_A="prefill_bf16_h32kv8d128_ps16_nhd(qo_p=2048,kv_p=2048,causal,seed=0)"
mkdir -p /tmp/ncu /tmp/spans
for m in ${NCU:-}; do
  [ "$(left)" -gt 240 ] || { say "ncu $m: skipped, $(left) s left"; continue; }
  say "ncu $m: mix A's prefill alone"
  PODCHECK_GPU_MODULE=$(so_of $m) timeout 150 ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
    --section SourceCounters --section LaunchStats --section Occupancy -k "regex:pod_fused|pod_ws" -c 1 -f \
    -o /tmp/ncu/$m $PC run --kernel podcheck-cuda --case "$PRE_A" --check > /tmp/ncu/$m.log 2>&1
  echo "ncu $m rc=$? $(tail -1 /tmp/ncu/$m.log | cut -c1-150)" | tee -a "$OUT/s.txt"
  ncu -i /tmp/ncu/$m.ncu-rep --page details --print-details all > /tmp/ncu/$m.txt 2>&1
  ncu -i /tmp/ncu/$m.ncu-rep --page raw --csv > /tmp/ncu/${m}_raw.csv 2>&1
  ncu -i /tmp/ncu/$m.ncu-rep --page source --csv --print-source sass > /tmp/ncu/${m}_sass.csv 2>&1
  grep -E "Duration|Warp Cycles Per Issued|No Instruction|Issue Slots Busy" /tmp/ncu/$m.txt | head -6 | tee -a "$OUT/s.txt"
  python3 - /tmp/ncu/${m}_raw.csv <<'EOF' | tee -a "$OUT/s.txt"
import csv, sys  # the stall reasons' sample counts (pc sampling) of the one launch, largest first
rows = list(csv.reader(open(sys.argv[1])))
h = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
if h is not None and len(rows) > h + 2:
    names, vals = rows[h], rows[-1]
    got = []
    for n, v in zip(names, vals):
        if n.startswith("smsp__pcsamp_warps_issue_stalled_") and not n.endswith("_not_issued"):
            try: got.append((float(v.replace(",", "")), n[len("smsp__pcsamp_warps_issue_stalled_"):]))
            except ValueError: pass
    tot = sum(v for v, _ in got) or 1
    print("  stall samples:", ", ".join(f"{n} {v:.0f} ({100 * v / tot:.1f} %)" for v, n in sorted(got, reverse=True)[:8]))
EOF
  rm -f /tmp/ncu/$m.ncu-rep
done
[ -n "${NCU:-}" ] && xz -T0 /tmp/ncu/*.csv 2>/dev/null && tar cf "$OUT/ncu.tar" -C /tmp ncu
for ((r = 1; r <= ${BENCH_ROUNDS:-2}; ++r)); do
  for m in ${BENCH:-}; do
    [ "$(left)" -gt 200 ] || { say "bench $m round $r: skipped, $(left) s left"; continue; }
    say "bench $m, round $r"
    sp=""; [ $r = 1 ] && sp="PODCHECK_BENCH_TIMELINES=all PODCHECK_BENCH_SPANS=/tmp/spans/$m.csv"
    env PODCHECK_GPU_MODULE=$(so_of $m) $sp timeout 120 $PC bench kernel \
      $(for x in ${BENCH_MIXES:-A C}; do printf -- '--mix %s ' $x; done) --reps 20 > "$OUT/bench_${m}_$r.log" 2>&1
    echo "bench $m round $r rc=$?" | tee -a "$OUT/s.txt"
    grep -E "^[A-Z][A-Za-z0-9-]* .* [0-9]+\.[0-9]+ +[0-9]|GEMM|copy" "$OUT/bench_${m}_$r.log" | head -12 | tee -a "$OUT/s.txt"
    [ $r = 1 ] && [ -f /tmp/spans/$m.csv ] && python3 kernels/tools/spans_fit.py --ends /tmp/spans/$m.csv 2>&1 \
      | grep "tiles end at" | head -12 | tee -a "$OUT/s.txt"
  done
done
for m in ${WARM:-}; do
  [ "$(left)" -gt 150 ] || { say "warm spans under $m: skipped, $(left) s left"; continue; }
  say "warm spans under $m (each timeline launch run twice, the second kept)"
  PODCHECK_GPU_MODULE=$(so_of $m) PODCHECK_BENCH_TIMELINES=all PODCHECK_BENCH_TIMELINE_REPEAT=1 \
    PODCHECK_BENCH_SPANS=/tmp/spans/${m}_warm.csv timeout 90 $PC bench kernel --mix A --reps 5 > "$OUT/warm_$m.log" 2>&1
  echo "warm $m rc=$?" | tee -a "$OUT/s.txt"
  [ -f /tmp/spans/${m}_warm.csv ] && python3 kernels/tools/spans_fit.py --ends /tmp/spans/${m}_warm.csv 2>&1 \
    | grep "tiles end at" | head -12 | tee -a "$OUT/s.txt"
done
ls /tmp/spans/*.csv > /dev/null 2>&1 && xz -T0 /tmp/spans/*.csv && tar cf "$OUT/spans.tar" -C /tmp spans
for m in ${QUICK:-}; do
  [ "$(left)" -gt 100 ] || { say "quick tier under $m: skipped, $(left) s left"; continue; }
  say "quick tier under $m"
  mkdir -p pq && for f in podcheck kernels_tests podcheck_stub_port.so; do ln -sf ../pb/$f pq/$f; done
  cp "$(so_of $m)" pq/libpodcheck_gpu.so
  PREBUILT=pq CHECK_TIMEOUT=$(( $(left) - 40 < 150 ? $(left) - 40 : 150 )) OUT=$OUT/quick_$m \
    bash kernels/tools/device_run.sh check-quick 2>&1 | grep -v "^run --check" | tail -3 | tee -a "$OUT/s.txt"
done
for m in ${MUTANT:-}; do
  [ "$(left)" -gt 90 ] || { say "mutant $m: skipped, $(left) s left"; continue; }
  say "mutant $m on quick shard 0/16 (must fail: rc 1)"
  PODCHECK_GPU_MODULE=$(so_of $m) timeout 80 $PC run --kernel podcheck-cuda --tier quick --shard 0/16 --check \
    > "$OUT/mutant_$m.log" 2>&1
  rc=$?; echo "mutant $m rc=$rc $([ $rc = 1 ] && echo '(failed, as it must)' || echo '(NOT the failure it must give)')" \
    | tee -a "$OUT/s.txt"; tail -1 "$OUT/mutant_$m.log" | tee -a "$OUT/s.txt"
done
REF=${GOLDEN_REF:-$(ls traces/golden/podcheck-cuda/*.h5 2>/dev/null | sort | tail -1)}
for m in ${GOLDEN:-}; do
  [ "$(left)" -gt 90 ] || { say "golden under $m: skipped, $(left) s left"; continue; }
  say "golden cases under $m, against $(basename "$REF")"
  ids=$(grep -v '^#' kernels/tools/golden_ids.txt | sed 's/^/--case=/' | tr '\n' ' ')
  PODCHECK_GPU_MODULE=$(so_of $m) timeout 120 $PC run --kernel podcheck-cuda $ids -o /tmp/golden_$m.h5 --force \
    --inputs-by-id --check > "$OUT/golden_$m.log" 2>&1
  echo "golden $m rc=$? $(tail -1 "$OUT/golden_$m.log" | cut -c1-150)" | tee -a "$OUT/s.txt"
  python3 kernels/tools/cmp_traces.py "$REF" /tmp/golden_$m.h5 2>&1 | grep -v -E "kernel_version|/date" | tail -8 \
    | tee -a "$OUT/s.txt"
done
if [ -n "${FI:-}" ]; then
  for i in $(seq 90); do [ -f /tmp/fi_rc ] && break; sleep 2; done
  SO=/tmp/build-fi/kernels/ports/flashinfer/libpodcheck_flashinfer.so
  say "FlashInfer's port: build rc $(cat /tmp/fi_rc 2>/dev/null || echo 'not finished')"
  if [ -f $SO ] && [ "$(left)" -gt 100 ]; then
    PODCHECK_GPU_MODULE=$(so_of tree) timeout $(( $(left) - 30 )) $PC bench kernel \
      $(for x in ${FI_MIXES:-A B C}; do printf -- '--mix %s ' $x; done) --reps 20 --peer $SO > "$OUT/bench_fi.log" 2>&1
    echo "bench with FlashInfer rc=$?" | tee -a "$OUT/s.txt"
    grep -E "^[A-Z][A-Za-z0-9-]* |GEMM|copy|peer" "$OUT/bench_fi.log" | head -30 | tee -a "$OUT/s.txt"
  else
    tail -3 /tmp/fi_build.log /tmp/fi_configure.log 2>/dev/null
  fi
fi
if [ -n "${SHARDS:-}" ] && [ "$(left)" -gt 90 ]; then
  say "default-tier shards under the tree, $(left) s left"
  PREBUILT=pb CHECK_TIMEOUT=$(( $(left) - 30 )) OUT=$OUT/default bash kernels/tools/device_run.sh check-default 2>&1 \
    | grep -v "^run --check" | tail -4 | tee -a "$OUT/s.txt"
fi
say "done"
(cd "$OUT" && items=$(ls | grep -v -x -e s.txt -e all.tgz) && [ -n "$items" ] && tar czf all.tgz $items && rm -rf $items)
ls -la "$OUT"
