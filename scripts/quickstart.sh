#!/usr/bin/env bash
# The README's quick start: installs what is missing, builds into build/, then
#   quickstart.sh validate [args...]   runs the main job (podcheck validate on its embedded default)
#   quickstart.sh test                 runs the whole test suite (ctest)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-validate}
shift || true
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
case "$what" in
  test) ctest --test-dir build --output-on-failure -j "$jobs" ;;
  *) exec build/cli/podcheck "$what" "$@" ;;
esac
