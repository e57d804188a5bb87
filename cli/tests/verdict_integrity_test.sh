#!/usr/bin/env bash
# Verdicts that cannot lie, end to end through the CLI (issue 10's findings; each check failed on podcheck at
# 4b9db31): a crashed launch and a guard-band overwrite recorded in a trace replay as failures; outputs not
# recorded are named in the console line; --require-outputs makes them failures; one malformed case in one
# of several files does not stop the others; report targets are checked before any work; validate finds its
# golden traces from anywhere and says where.
# usage: verdict_integrity_test.sh PODCHECK_EXE PYTHON3 SOURCE_DIR
set -u
exe=$1 py=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
golden=$src/traces/golden/podcheck-cuda/podcheck_cuda_v1_h200.h5
fails=0
check() {  # check NAME EXPECTED_RC PHRASE... -- ARGS...
  local name=$1 want=$2; shift 2
  local phrases=()
  while [ "$1" != "--" ]; do phrases+=("$1"); shift; done
  shift
  local out rc
  out=$(cd "$tmp" && "$exe" "$@" 2>&1); rc=$?
  local bad=""
  [ "$rc" -eq "$want" ] || bad="rc $rc, expected $want"
  for p in "${phrases[@]}"; do [[ "$out" == *"$p"* ]] || bad="$bad; missing '$p'"; done
  if [ -n "$bad" ]; then
    echo "FAIL: $name: $bad"; echo "$out" | head -30 | sed 's/^/    /'; fails=$((fails + 1))
  else
    echo "ok: $name"
  fi
}
$py "$src/cli/tests/mutate_trace.py" "$golden" "$tmp/crash.h5" crash_and_guard || exit 1
$py "$src/cli/tests/mutate_trace.py" "$golden" "$tmp/missing.h5" three_missing || exit 1
$py "$src/cli/tests/mutate_trace.py" "$golden" "$tmp/broken.h5" break_case || exit 1

check "a crashed launch and a guard-band overwrite are failures" 1 \
  "[FAIL]" "launch-failed" "illegal memory access" "guard bands overwritten" -- replay crash.h5 --no-artifacts
check "outputs not recorded are named" 0 "(not checked: out_p, lse_p, lse_d)" "with outputs not checked" -- \
  replay missing.h5 --no-artifacts
check "--require-outputs makes a missing output a failure" 1 "required output(s) not recorded" -- \
  replay missing.h5 --no-artifacts --require-outputs out_p,out_d,lse_p,lse_d
check "one malformed case does not stop the other files and cases" 2 "[OK]" "invalid-case" "kv_indices" -- \
  replay broken.h5 "$golden" --no-artifacts
mkdir -p "$tmp/adir"
check "a report target that is a folder is refused before any work" 2 "it is a directory" -- \
  replay "$golden" --json adir --force --no-artifacts
[ -e "$tmp/adir.tmp" ] && { echo "FAIL: adir.tmp left behind"; fails=$((fails + 1)); }
check "a missing report folder is refused before any work" 2 "does not exist" -- \
  replay "$golden" --json no/such/r.json --no-artifacts
# (one case in 50 replayed: the search is what is tested here; every golden trace is replayed whole by the
# cli:validate golden/* and cli:inspect --check golden/* tests, and this replay took 111 s under the sanitizers)
check "validate from another folder finds the golden traces and says where" 0 "golden traces from" \
  "source tree of this build" "passed" -- validate --tier none -q --no-artifacts --shard 0/50
faulty=$src/traces/golden/faulty-ports
check "recorded on a GPU: a crashed launch is a failure, also for the case after it" 1 "[FAIL]" "launch-failed" \
  "cudaErrorIllegalAddress" "the CUDA context was lost" -- replay "$faulty/faulty_crash_h200.h5" --profile flashinfer --no-artifacts
check "recorded on a GPU: writes past the outputs are a failure" 1 "[FAIL]" "guard bands overwritten" \
  "out-of-bounds writes" -- replay "$faulty/faulty_guard_h200.h5" --profile flashinfer --no-artifacts
check "their expected verdicts make them xfail" 0 "[XFAIL]" "4 xfail" -- replay "$faulty/faulty_crash_h200.h5" \
  "$faulty/faulty_guard_h200.h5" --no-artifacts
exit $((fails > 0))
