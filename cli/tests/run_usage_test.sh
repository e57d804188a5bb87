#!/usr/bin/env bash
# `podcheck run` refuses bad option combinations with exit 2 and a message naming the problem, before it
# looks for a GPU (so this runs everywhere), and leaves existing files alone.
# usage: run_usage_test.sh PODCHECK_EXE
set -u
exe=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {  # expect "phrase" args...
  local phrase=$1; shift
  local out rc
  out=$("$exe" run "$@" 2>&1); rc=$?
  if [ $rc -ne 2 ] || [[ "$out" != *"$phrase"* ]]; then
    echo "FAIL: podcheck run $* -> rc $rc, output: $out (expected rc 2 and '$phrase')"; fails=$((fails + 1))
  else
    echo "ok: podcheck run $* -> $phrase"
  fi
}
echo keep > "$tmp/kept.json"
echo keep > "$tmp/kept.h5"
expect "give -o TRACE.h5 (or --check" --tier quick
expect "give exactly one of --tier, --fixtures, --case" --tier quick --case x --check
expect "--shard needs --tier" --case x --shard 1/2 --check
expect "--json / --junit / --html report verdicts: give --check too" --tier quick -o "$tmp/t.h5" --json "$tmp/r.json"
expect "--json / --junit / --html report verdicts: give --check too" --tier quick -o "$tmp/t.h5" --html "$tmp/r.html"
expect "kept.json': it exists (use --force to replace it)" --tier quick --check --html "$tmp/kept.json"
expect "kept.json': it exists (use --force to replace it)" --tier quick --check --json "$tmp/kept.json"
expect "kept.h5': it exists (use --force to replace it)" --tier quick -o "$tmp/kept.h5"
expect "does not exist" --tier quick -o "$tmp/no/such/dir/t.h5"
expect "it is a directory" --tier quick --check --json "$tmp" --force
# a fixture file is needed for the next one: any existing path passes CLI11's ExistingFile check
expect "--inputs-by-id needs generated cases" --fixtures "$tmp/kept.h5" -o "$tmp/t.h5" --inputs-by-id
# a module named by PODCHECK_GPU_MODULE that is not there is an error, never a silent fall back to another module
# (an experiment timing a variant module would time the default one instead)
for cmd in "run --case decode_bf16_h8kv8d128_ps1_nhd(bs_d=1,kv_d=128,seed=0) -o $tmp/m.h5" "bench kernel --mix A"; do
  out=$(PODCHECK_GPU_MODULE="$tmp/no_such_module.so" "$exe" $cmd 2>&1); rc=$?
  if [ $rc -ne 2 ] || [[ "$out" != *"PODCHECK_GPU_MODULE='$tmp/no_such_module.so': no such file"* ]]; then
    echo "FAIL: PODCHECK_GPU_MODULE=<missing> podcheck $cmd -> rc $rc, output: $out"; fails=$((fails + 1))
  else
    echo "ok: PODCHECK_GPU_MODULE=<missing> podcheck $cmd -> refused"
  fi
done
[ ! -e "$tmp/m.h5" ] || { echo "FAIL: m.h5 was created"; fails=$((fails + 1)); }
for f in kept.json kept.h5; do
  [ "$(cat "$tmp/$f")" = keep ] || { echo "FAIL: $f was changed"; fails=$((fails + 1)); }
done
[ ! -e "$tmp/t.h5" ] && [ ! -e "$tmp/r.json" ] && [ ! -e "$tmp/r.html" ] || { echo "FAIL: an output was created"; fails=$((fails + 1)); }
exit $((fails > 0))
