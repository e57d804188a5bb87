#!/usr/bin/env bash
# One device call that judges the tree as a candidate default against a baseline module, inside a time box, the
# most needed first (sessions often get one call): build and the GPU tests; the tree against BASE in alternating
# `bench kernel` processes; a mutated module that must fail a quick-tier shard; mix A's prefill phases; the default
# tier in the time left; then compute-sanitizer on SANITIZE_TESTS if time remains. Each step prints one or two
# lines; logs and the spans land in $OUT (device_run.sh packs its logs past 8 files).
#   BASE=.wip/modules/v316.so.xz MUTANT=.wip/modules/ostbad.so.xz LIMIT=560 bash kernels/tools/candidate_call.sh
# BASE, MUTANT: modules built here with variant_module.sh (xz'd; carried, e.g. `.wip/modules`); either may be unset.
# TIER_SHARDS: the default tier's shards to run, e.g. those an earlier box did not finish (its check_default.txt
# ends with the list: SHARDS="50/64 51/64 ..."); unset: the whole tier.
# SWEEP_ROUNDS (default 2), SWEEP_MIXES (default "A B C"), EXTRA_SWEEP (one more device_run.sh SWEEP string, run
# after the default tier, e.g. "default;PODCHECK_GPU_MODULE=/tmp/pairm.so PODCHECK_CUDA_TAIL_SPLIT=2" with
# EXTRA_MIXES="B"), SANITIZE_TESTS (default "warp-specialised*"), SANITIZE_TOOLS (default "memcheck racecheck", in
# that order). DEVICE_RUN overrides device_run.sh (a dry run here: a stub that prints its steps).
# CAND=.wip/modules/NAME.so.xz: the candidate is that module (built here with variant_module.sh), not the tree: the
# CLI alone is built (device_run.sh CLI_ONLY=1, ~35 s against ~150 s) and the quick tier judged under CAND in place of
# kernels_tests; no sanitizers (they run kernels_tests). For timing and checking a variant before it becomes the tree.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; LIMIT=${LIMIT:-560}; T0=$(date +%s)
D=${DEVICE_RUN:-kernels/tools/device_run.sh}; PC=${B:-/tmp/build-dev}/cli/podcheck
left() { echo $(( LIMIT - ($(date +%s) - T0) )); }
say() { echo "== +$(( $(date +%s) - T0 ))s $*"; }
unpack() {  # module.so.xz -> /tmp/NAME.so (printed), or nothing
  [ -n "${1:-}" ] && [ -f "$1" ] || return 0
  local n; n=/tmp/$(basename "$1" .so.xz).so; xz -dc "$1" > "$n" && echo "$n"
}
BASE_SO=$(unpack "${BASE:-}"); MUTANT_SO=$(unpack "${MUTANT:-}"); CAND_SO=$(unpack "${CAND:-}")
if [ -n "${CAND:-}" ]; then
  [ -n "$CAND_SO" ] || { echo "candidate_call: CAND=$CAND: no such module" >&2; exit 2; }
  export CLI_ONLY=1 PODCHECK_GPU_MODULE=$CAND_SO B=${B:-/tmp/build-cli}; PC=$B/cli/podcheck; WHAT=$(basename "$CAND_SO")
  say "build the CLI; the quick tier under $WHAT"
  CHECK_TIMEOUT=${QUICK_TIMEOUT:-150} bash "$D" check-quick 2>&1 | grep -v "^run --check" | tail -4
else
  WHAT="the tree"
  say "build and GPU tests"
  BUILD_TARGETS="podcheck podcheck_gpu kernels_tests" bash "$D" tests 2>&1 | tail -4
fi
export BUILD_TARGETS=podcheck  # the later invocations: nothing left to build
if [ -n "$BASE_SO" ]; then
  say "$WHAT against $(basename "$BASE_SO"), ${SWEEP_ROUNDS:-2} rounds"
  SWEEP="default;PODCHECK_GPU_MODULE=$BASE_SO" SWEEP_ROUNDS=${SWEEP_ROUNDS:-2} SWEEP_MIXES="${SWEEP_MIXES:-A B C}" \
    bash "$D" sweep 2>&1 | grep -E "^sweep|^[A-Z][A-Za-z0-9-]* " | tail -20
fi
if [ -n "$MUTANT_SO" ]; then
  say "the mutant $(basename "$MUTANT_SO") on quick shard 0/16 (must fail: rc 1)"
  PODCHECK_GPU_MODULE=$MUTANT_SO timeout 60 "$PC" run --kernel podcheck-cuda --tier quick --shard 0/16 --check \
    > "$OUT/mutant.log" 2>&1
  rc=$?; echo "mutant rc=$rc $([ $rc = 1 ] && echo '(failed, as it must)' || echo '(NOT the failure it must give)')"
  tail -1 "$OUT/mutant.log"
fi
say "mix A's prefill phases"
PODCHECK_BENCH_TIMELINES=all PODCHECK_BENCH_SPANS=$OUT/spans_A.csv timeout 60 "$PC" bench kernel --mix A --reps 10 \
  > "$OUT/phases_bench.log" 2>&1
python3 kernels/tools/spans_fit.py --by-order "$OUT/spans_A.csv" > "$OUT/phases.log" 2>&1
grep -A1 "phases" "$OUT/phases.log" | head -8
[ -f "$OUT/spans_A.csv" ] && xz -9 "$OUT/spans_A.csv"
L=$(left); say "default tier, $L s left"
NEED=200; [ -n "${TIER_SHARDS:-}" ] && NEED=100  # a few shards in parallel need ~60 s, the whole tier ~215
[ "$L" -gt $NEED ] && SHARDS="${TIER_SHARDS:-}" CHECK_TIMEOUT=$((L - 60)) bash "$D" check-default 2>&1 \
  | grep -v "^run --check" | tail -4
if [ -n "${EXTRA_SWEEP:-}" ] && [ "$(left)" -gt 60 ]; then
  say "extra sweep"
  SWEEP="$EXTRA_SWEEP" SWEEP_MIXES="${EXTRA_MIXES:-A B C}" bash "$D" sweep 2>&1 | grep -E "^sweep|^[A-Z][A-Za-z0-9-]* " | tail -10
fi
# the sanitizers one after the other, each with the time left (memcheck first: it finished in boxes where racecheck,
# ~200 s on "warp-specialised*", did not); rc 124 is a box too short, not a result
for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
  L=$(left); { [ "$L" -gt 90 ] && [ -z "${CAND:-}" ]; } || break
  say "$tool on ${SANITIZE_TESTS:-warp-specialised*}, $L s left"
  SANITIZE_TOOLS=$tool SANITIZE_TESTS="${SANITIZE_TESTS:-warp-specialised*}" SANITIZE_RUN=0 SANITIZE_TIMEOUT=$((L - 20)) \
    bash "$D" sanitize 2>&1 | grep -E "rc=|ERROR SUMMARY|RACECHECK SUMMARY" | tail -2
done
say "done"; ls "$OUT"
