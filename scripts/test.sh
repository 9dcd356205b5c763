#!/usr/bin/env bash
# The README's second command: build (Release, -j2) and run the whole test suite with CTest,
# then build the CUDA-only configuration and run its tests that need no GPU (where the CUDA
# toolkit is), then install the Python module and run its tests with pytest, then build the
# core, scheduler, differential and nn suites with ASan+UBSan and run them (scripts/sanitize.sh
# ci); last, checks that the tests left the source tree as they found it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# With ccache, the CUDA-only build below compiles the same sources with the same flags as the
# main build, so it takes the main build's objects from the cache instead of compiling them again.
# (The variables set a new build folder's launcher; an existing folder keeps its own.)
if command -v ccache > /dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER-ccache}
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 --timeout 900
# The CUDA-only configuration (backends/cuda/standalone, build-gpu/), which bench/gpu_check.sh
# carries to the GPU machine: built here so that it keeps building, with its tests that need no
# device. QUICK=1 leaves out the CPU emulation suite, which ctest has just run in the main build.
if [ -x build/tests/hedra_cuda_tests ]; then
  QUICK=1 bash bench/gpu_check.sh build
else
  echo "test.sh: the main build found no CUDA toolkit; the CUDA-only build (bench/gpu_check.sh build) is skipped"
fi
bash scripts/python_setup.sh
build/python-venv/bin/python -m pytest python/tests -q
# Memory errors, leaks and undefined behaviour in the compiler, the kernels' host side and nn.
bash scripts/sanitize.sh ci
# The tests write only into their build and temporary folders: a file they leave in the
# source tree (new, changed or deleted) fails the run.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  left=$(git status --porcelain --untracked-files=all)
  if [ -n "$left" ]; then
    echo "test.sh: the tests changed the source tree:" >&2
    echo "$left" >&2
    exit 1
  fi
fi
