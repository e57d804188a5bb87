#!/usr/bin/env bash
# The installed package stands on its own: `cmake --install --component python` into a fresh prefix, then
# from a folder far from the source and build trees, the interpreter imports podcheck from that prefix
# (not from the build tree) and judges a case.
# usage: install_test.sh BUILD_DIR PYTHON SITE_SUBDIR
set -u
build=$1 python=$2 site=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --component python --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; exit 1; }
cd / && PYTHONPATH="$tmp/prefix/$site" "$python" - "$tmp/prefix/$site" <<'PY'
import sys
import numpy as np
import podcheck
assert podcheck.__file__.startswith(sys.argv[1]), podcheck.__file__
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal(s).astype(np.float16) for s in [(3, 2, 16), (5, 2, 16), (5, 2, 16)])
case = podcheck.single_prefill_case(q, k, v, causal=True)
ref = podcheck.reference(case)
verdict = podcheck.judge(case, out_p=ref["out_p"].astype(np.float16), lse_p=ref["lse_p"].astype(np.float32))
assert verdict.passed, repr(verdict)
print("ok: installed package at", podcheck.__file__, "judged:", verdict.line)
PY
