#!/usr/bin/env bash
# Rebuilds the seed corpus of the fuzz targets (fuzz/corpus/, committed): small real files of each kind,
# written by podcheck (HDF5 1.10 format, checksums) and by h5py (HDF5's oldest format, no checksums).
# usage: fuzz/make_corpus.sh PODCHECK   (run from the repository root; needs python3 with h5py)
set -euo pipefail
podcheck=$(realpath "$1")
py=${PODCHECK_PYTHON3:-/usr/bin/python3}
out=fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"/fuzz_fixture_reader "$out"/fuzz_trace_reader "$out"/fuzz_flashinfer_import
"$podcheck" generate --case 'decode_f16_h8kv8d64_ps5_nhd(bs_d=2,kv_d=5,seed=0)' \
  -o "$out"/fuzz_fixture_reader/decode.h5 --force 2>/dev/null
"$podcheck" generate --case 'pod_f16_h8kv8d64_ps16_nhd(qo_p=1,kv_p=1,bs_d=2,kv_d=ragged20,seed=0)' \
  -o "$out"/fuzz_fixture_reader/pod.h5 --force --float32 2>/dev/null
"$py" traces/tests/write_trace_h5py.py "$out"/fuzz_trace_reader/h5py_trace.h5
"$py" traces/tests/write_flashinfer_like.py "$tmp"
for f in pod batch_pod features pod_missing_attr; do cp "$tmp/$f.h5" "$out"/fuzz_flashinfer_import/; done
"$podcheck" import flashinfer "$tmp"/features.h5 "$tmp"/batch_pod.h5 -o "$out"/fuzz_trace_reader/imported.h5 --force >/dev/null
ls -l "$out"/*/
