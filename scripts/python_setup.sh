#!/usr/bin/env bash
# Installs the Python module: the C++ library (built in build/) is installed into build/install,
# a virtual environment build/python-venv gets nanobind, scikit-build-core, NumPy and pytest from
# PyPI, and `pip install ./python` compiles the bindings against the installed library.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/python-venv
cmake --install build --prefix build/install >/dev/null
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q "nanobind>=2.0" "scikit-build-core>=0.10" "numpy>=1.22" pytest
CMAKE_PREFIX_PATH="$PWD/build/install" CMAKE_BUILD_PARALLEL_LEVEL=2 \
  "$venv/bin/python" -m pip install -q --no-build-isolation ./python
"$venv/bin/python" -c "import hedra; print('python: hedra', hedra.__version__, 'in', '$venv')"
