#!/usr/bin/env bash
# The capture importers and exporter through the CLI: exit codes (0 ok, 1 parity failure, 2 bad input), nothing
# written on a refusal, and replay of imported dumps (passing, and failing on an edited head).
# usage: cli_captures_test.sh PODCHECK PYTHON3 SOURCE_DIR
set -u
pc=$1 py=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect RC CMD...: runs CMD, checks its exit status, keeps its output in $tmp/out
  local want=$1; shift
  "$@" >"$tmp/out" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || { cat "$tmp/out"; fail "exit $rc (expected $want): $*"; }
}
cd "$tmp" || exit 1
"$py" "$src/traces/tests/write_fi_dumps.py" dumps >/dev/null || fail "write_fi_dumps.py"

expect 0 "$pc" import flashinfer-dump dumps/pod_session dumps/serving dumps/batch_pod dumps/graph -o all.h5
grep -q "imported 14 call(s) from 4 dump folder(s)" out || { cat out; fail "import count"; }
expect 0 "$pc" inspect all.h5 --check
expect 0 "$pc" replay all.h5 --no-artifacts
expect 2 "$pc" import flashinfer-dump dumps/serving -o all.h5  # exists, no --force
grep -q "it exists (use --force" out || { cat out; fail "overwrite refused"; }

# one wrong head in layer 1: replay fails (exit 1) and names that call
run2=$(ls -d dumps/pod_session/*PODWithPagedKVCacheWrapper.run_call0002)
"$py" "$src/traces/tools/edit_dump_head.py" "$run2" --tensor result_1 --head 2 --add 0.25 >/dev/null || fail "edit"
expect 0 "$pc" import flashinfer-dump dumps/pod_session -o edited.h5
expect 1 "$pc" replay edited.h5 --no-artifacts
grep -q "FAIL.*fi_dump_PODWithPagedKVCacheWrapper.run_call0002" out || { cat out; fail "failing call not named"; }
grep -q "FAIL.*run_call0001\|FAIL.*run_call0003" out && fail "other layers fail"
grep -q "capture summary" out || { cat out; fail "no capture summary"; }
grep -qi "first failing call.*PODWithPagedKVCacheWrapper.run.*call 2\|first failing call.*run_call0002" out || { cat out; fail "first failing call not named in the summary"; }

# bad dumps: exit 2, no output file
rm -rf "$(ls -d dumps/pod_session/*PODWithPagedKVCacheWrapper.plan_call0001)"
expect 2 "$pc" import flashinfer-dump dumps/pod_session -o noplan.h5
grep -q "a run with no plan" out || { cat out; fail "no-plan message"; }
[ -e noplan.h5 ] && fail "noplan.h5 written"
expect 2 "$pc" import flashinfer-dump dumps/pt_dump -o pt.h5
grep -q "FLASHINFER_DUMP_SAFETENSORS=1" out || { cat out; fail ".pt message"; }
[ -e pt.h5 ] && fail "pt.h5 written"
expect 2 "$pc" import flashinfer-dump dumps/ambiguous -o amb.h5
grep -q "pass --kv-layout" out || { cat out; fail "layout message"; }
expect 0 "$pc" import flashinfer-dump dumps/ambiguous -o amb.h5 --kv-layout HND
expect 0 "$pc" replay amb.h5 --no-artifacts

# flashinfer-bench: import the committed real files, export, import back
expect 0 "$pc" import fib "$src/traces/captures/fib" -o fib.h5
grep -q "imported 9 workload(s)" out || { cat out; fail "fib import count"; }
expect 0 "$pc" inspect fib.h5 --check
expect 0 "$pc" export fib fib.h5 -o fibout
expect 0 "$pc" import fib fibout -o back.h5
expect 2 "$pc" export fib fib.h5 -o fibout  # not empty
expect 2 "$pc" export fib 'decode_f16_h32kv4d128_ps1_hnd(bs_d=1,kv_d=1,seed=0)x' -o x
# the real dumps FlashInfer's own api_logging.py wrote on the H200 (traces/captures/fi_dumps): every scenario
# imports and replays clean; the same capture in torch.save format is refused
real=$src/traces/captures/fi_dumps
if [ -d "$real/pod_layers" ]; then
  for sc in pod_layers batch_pod serving prefill graph pt_converted; do
    expect 0 "$pc" import flashinfer-dump "$real/$sc" -o "real_$sc.h5"
    expect 0 "$pc" replay "real_$sc.h5" --no-artifacts --require-outputs out
  done
  expect 0 "$pc" replay real_serving.h5 --no-artifacts --fib-trace real_serving.jsonl
  grep -q "all 9 calls of the capture pass" out || { cat out; fail "serving capture summary"; }
  [ "$(wc -l < real_serving.jsonl)" -eq 9 ] || fail "fib trace lines"
  [ "$(grep -c '"status":"PASSED"' real_serving.jsonl)" -eq 9 ] || fail "fib trace statuses"
  expect 2 "$pc" import flashinfer-dump "$real/pt_raw" -o real_pt.h5
  grep -q "FLASHINFER_DUMP_SAFETENSORS=1" out || { cat out; fail "real .pt message"; }
fi
echo "cli captures: all checks passed"
