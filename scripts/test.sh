#!/usr/bin/env bash
# The README's second command: build (Release, -j2) and run the whole test suite with CTest,
# then install the Python module and run its tests with pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 --timeout 900
bash scripts/python_setup.sh
build/python-venv/bin/python -m pytest python/tests -q
