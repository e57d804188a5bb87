#!/usr/bin/env bash
# An installed podcheck stands on its own: `cmake --install` into a fresh prefix, then from a folder far from
# the source tree, validate replays the installed golden traces and says so, --version works, and the binary
# does not load any CUDA library (only `run` and `bench kernel` load the GPU module).
# usage: installed_test.sh BUILD_DIR
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
exe=$tmp/prefix/bin/podcheck
# one case in 8 (--shard 0/8): finding and reading the installed traces is what is tested here; cli:validate
# golden/* judges every case of them (the whole replay took 30 s of CI's 64 s of main-build tests)
out=$(cd / && "$exe" validate --tier none -q --no-artifacts --shard 0/8 2>&1); rc=$?
if [ $rc -ne 0 ] || [[ "$out" != *"golden traces from $tmp/prefix/share/podcheck/golden (installed beside the executable)"* ]]; then
  echo "FAIL: installed validate: rc $rc"; echo "$out" | tail -5; fails=$((fails + 1))
else
  echo "ok: installed validate replays the installed golden traces"
fi
if ldd "$exe" | grep -E -q "libcuda|libcublas|libcudart"; then
  echo "FAIL: the CLI links a CUDA library:"; ldd "$exe" | grep -E "cuda|cublas"; fails=$((fails + 1))
else
  echo "ok: the CLI links no CUDA library"
fi
loaded=$(LD_DEBUG=files "$exe" --version 2>&1 | grep -c -E "file=.*(libcuda|libcublas|libcudart|libpodcheck_gpu)")
if [ "$loaded" -ne 0 ]; then
  echo "FAIL: podcheck --version loaded CUDA ($loaded libraries)"; fails=$((fails + 1))
else
  echo "ok: podcheck --version loads no CUDA library"
fi
exit $((fails > 0))
