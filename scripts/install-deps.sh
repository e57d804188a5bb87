#!/usr/bin/env bash
# Installs podcheck's build and test dependencies from Debian 12 packages, only those missing.
# Runs `apt-get update` once, and only when something has to be installed. Needs root (or sudo).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config git
      libhdf5-dev catch2 libboost-dev libopenblas-dev nlohmann-json3-dev libcli11-dev libfmt-dev
      python3 python3-h5py python3-numpy hdf5-tools
      python3-dev pybind11-dev python3-pytest  # the Python module (python/) and its pytest suite
      libpng-dev   # the heat map pictures (app/png_image.cpp)
      chromium     # the HTML report's browser test (cli/tests/html_browser_test.py; skipped without it)
      clang-14 libclang-rt-14-dev libomp-14-dev llvm-14)  # the sanitizer build and the fuzz targets (libFuzzer)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
