#!/usr/bin/env bash
# One variant of the GPU module built from an existing, configured build folder without a second configure: the
# build's own compile commands for pod_attention.cu and the six kernel sets (kernels/CMakeLists.txt) rerun with extra
# flags, in parallel, the kernels archive copied with those objects replaced, the module relinked with the build's own
# link command. For a device call: the stripped module, xz'd (1.85 MB from a 90a-real build; the tracked tree is
# ~63 MB of the 64 MiB a call carries, so one may fit; variant_builds.sh builds several on the device instead). Then there: xz -dc NAME.so.xz > /tmp/NAME.so; PODCHECK_GPU_MODULE=/tmp/NAME.so podcheck ...
#   kernels/tools/variant_module.sh NAME "FLAGS" [BUILD=build] [OUTDIR=.wip/modules]
# e.g. variant_module.sh fsum "-DPODCHECK_WS_FSUM=1 -Xptxas -v" (the ptxas report goes to OUTDIR/NAME.log: look for C7514)
set -eu
n=$1; flags=$2; B=$(realpath "${3:-build}"); O=$(mkdir -p "${4:-.wip/modules}" && realpath "${4:-.wip/modules}")
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$B"
objs=$(ninja -t query kernels/libpodcheck_kernels.a | grep -E "podcheck_kernels\.dir/(pod/pod_attention|kernel_sets/)" | sed 's/^ *//')
[ -n "$objs" ] || { echo "variant_module: no kernel objects of kernels/libpodcheck_kernels.a in $B" >&2; exit 2; }
: > "$O/$n.log"; pids=""
for obj in $objs; do
  cmd=$(ninja -t commands $obj | tail -1 | sed 's#-MD -MT [^ ]* -MF [^ ]*##')
  [ -n "$cmd" ] || { echo "variant_module: no compile command for $obj in $B" >&2; exit 2; }
  ( eval "${cmd/-o $obj/-o $W/$(basename $obj) $flags}" > "$W/$(basename $obj).log" 2>&1 ) & pids="$pids $!"
done
fail=0; for p in $pids; do wait $p || fail=1; done
cat "$W"/*.log >> "$O/$n.log"; [ $fail = 0 ] || { tail -20 "$O/$n.log" >&2; exit 1; }
cp kernels/libpodcheck_kernels.a "$W/" && (cd "$W" && ar r libpodcheck_kernels.a *.cu.o)
link=$(ninja -t commands kernels/libpodcheck_gpu.so | tail -1)
link=${link//kernels\/libpodcheck_kernels.a/$W\/libpodcheck_kernels.a}
eval "${link/-o kernels\/libpodcheck_gpu.so/-o $W/$n.so}" >> "$O/$n.log" 2>&1 || { tail -20 "$O/$n.log" >&2; exit 1; }
strip -s "$W/$n.so" && xz -9 -c "$W/$n.so" > "$O/$n.so.xz"
grep -q C7514 "$O/$n.log" && echo "variant_module: ptxas serialised wgmma (C7514) in $n: see $O/$n.log" >&2
echo "$O/$n.so.xz ($(stat -c %s "$O/$n.so.xz") bytes)"
