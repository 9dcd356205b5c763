#!/usr/bin/env bash
# Installs the peers the benchmarks measure hedra against, so that bench/run_all.sh and the
# side-by-side scripts print every peer on a fresh Debian 12 machine:
#   in process (Debian's packages): OpenBLAS (bench/matmul) and libtorch 1.13 (bench/train_step);
#   a Python venv from PyPI:         PyTorch 2 (eager and torch.compile), JAX (jit) and numpy
#                                    (bench/peers/*.py, bench/gpt_side_by_side.sh).
# Then reconfigure the build (cmake -S . -B build) so that the benches link the new peers.
# Takes about 3 minutes and 6 GB (the PyPI torch wheel pulls its CUDA libraries; nothing CUDA
# runs). Idempotent: a second run only checks and prints the versions.
#   scripts/install_bench_peers.sh
# Env: PEERS_VENV (default /opt/hedra-peers), PEERS_PYTHON (default: a python3.12+ on PATH or
#      in pyenv, else python3), TORCH_SPEC, JAX_SPEC (pip requirement strings).
set -euo pipefail
packages=(libopenblas-dev libtorch-dev python3-venv)
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

venv=${PEERS_VENV:-/opt/hedra-peers}
python=${PEERS_PYTHON:-}
if [ -z "$python" ]; then
  # The first that runs (a pyenv shim may name a version it cannot start); an existing venv's
  # version wins.
  want=""
  [ -x "$venv/bin/python" ] && want=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  pyenv_root=$(pyenv root 2> /dev/null || echo "$HOME/.pyenv")
  for candidate in ${want:+python$want} ${want:+$pyenv_root/versions/$want.*/bin/python3} \
      python3.13 python3.12 $pyenv_root/versions/3.1[23].*/bin/python3 python3; do
    if "$candidate" -c 'import venv' > /dev/null 2>&1; then python=$candidate; break; fi
  done
fi
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# JAX 0.12 needs Python 3.12; on Debian's 3.11 pip takes the newest JAX that supports it.
if [ -z "${JAX_SPEC:-}" ]; then
  if "$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    JAX_SPEC='jax[cpu]==0.12.0.1'
  else
    JAX_SPEC='jax[cpu]'
  fi
fi
TORCH_SPEC=${TORCH_SPEC:-torch==2.15.0}
if [ -x "$venv/bin/python" ]; then
  have=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ "$have" != "$version" ]; then
    echo "install_bench_peers: $venv has Python $have, wanted $version: remove it or set" \
         "PEERS_VENV" >&2
    exit 1
  fi
else
  echo "creating $venv (Python $version)"
  "$python" -m venv "$venv"
fi
export PIP_NO_CACHE_DIR=${PIP_NO_CACHE_DIR:-1} PIP_DISABLE_PIP_VERSION_CHECK=1
"$venv/bin/python" -m pip install -q --upgrade pip
# One resolver run, so that the shared dependencies (numpy, ml_dtypes) agree.
"$venv/bin/python" -m pip install -q numpy "$TORCH_SPEC" "$JAX_SPEC"
JAX_PLATFORMS=cpu "$venv/bin/python" - <<'PY'
import jax, jax.numpy as jnp, numpy, torch
assert float(torch.ones(3).add(1).sum()) == 6.0
assert float(jnp.ones(3).sum()) == 3.0
print(f"peers: numpy {numpy.__version__}, torch {torch.__version__}, jax {jax.__version__}")
PY
echo "peers: OpenBLAS $(pkg-config --modversion openblas 2>/dev/null || echo '?')," \
     "libtorch $(dpkg-query -W -f='${Version}' libtorch-dev)"
echo "peers: reconfigure the build (cmake -S . -B build) so that the benches link them"
