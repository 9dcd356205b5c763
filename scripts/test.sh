#!/usr/bin/env bash
# The README's second command: build (Release, -j2) and run the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 --timeout 900
