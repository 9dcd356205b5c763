#!/usr/bin/env bash
# Installs hedra's build and test dependencies from Debian 12's packages when any is missing.
set -euo pipefail
packages=(cmake g++ make pkg-config libisl-dev llvm-dev libclang-cpp-dev libclang-dev clang
          libomp-dev doctest-dev zlib1g-dev libzip-dev nlohmann-json3-dev libssl-dev
          libcli11-dev dataset-fashion-mnist libopenmpi-dev openmpi-bin python3-venv python3-dev
          ccache gnuplot-nox)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# cuobjdump and the nvdisasm it runs (the tensor-core kernels' SASS check) where a CUDA toolkit
# without them is installed: PyPI's builds of the same tools, into the project's venv
# (build/python-venv, which scripts/python_setup.sh completes); CMake looks for them there.
if command -v ptxas > /dev/null 2>&1 || [ -x /usr/local/cuda/bin/ptxas ]; then
  if ! command -v cuobjdump > /dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/cuobjdump ] &&
     ! compgen -G "build/python-venv/lib/python3*/site-packages/nvidia/cu13/bin/cuobjdump" > /dev/null; then
    mkdir -p build
    [ -x build/python-venv/bin/python ] || python3 -m venv build/python-venv
    build/python-venv/bin/python -m pip install -q nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
  fi
fi
