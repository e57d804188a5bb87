#!/usr/bin/env bash
# podcheck inspect --check and podcheck replay on files that crash libhdf5 1.10.8: exit 2, never a signal;
# inspect says so in one error line naming the file, replay as an invalid-case verdict naming file (and
# case) with the crash.  usage: crash_isolation_cli_test.sh PODCHECK DATA_DIR
set -u
podcheck=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
for f in hdf5_crash_case hdf5_crash_file; do
  for cmd in "inspect $dir/$f.h5 --check" "replay $dir/$f.h5 --no-artifacts"; do
    (cd "$tmp" && $podcheck $cmd >"$tmp/out" 2>"$tmp/err")
    rc=$?
    # a sanitizer build also prints the report the reader process wrote before it ended (ASan sees
    # libhdf5's bad memcpy); podcheck's own output is one error line, the last one
    last=$(tail -n 1 "$tmp/err")
    if [[ $cmd == replay* ]]; then
      last=$(grep -m1 "invalid-case" "$tmp/out")
      ok=$([[ $rc -eq 2 && $last == *"'$dir/$f.h5'"*"the HDF5 library crashed reading it"* ]] && echo 1)
    else
      ok=$([[ $rc -eq 2 && $last == "podcheck: error: file '$dir/$f.h5'"* && $(grep -c '^podcheck' "$tmp/err") -eq 1 ]] && echo 1)
    fi
    if [[ -z $ok ]]; then
      echo "FAIL $cmd: exit $rc"; tail -3 "$tmp/err"; tail -3 "$tmp/out"; fails=$((fails + 1))
    else
      echo "ok   $cmd: $last"
    fi
  done
done
echo "$((4 - fails)) passed, $fails failed"
exit $((fails > 0))
