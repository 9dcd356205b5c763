#!/usr/bin/env bash
# bench/peers/lstm_torch.py --export DIR writes torch.nn.LSTM's initial weights (its state dict,
# unchanged) and a few batches with PyTorch's losses; bench/lstm_step --replay DIR trains hedra's
# LSTM from them and compares the losses. Skipped without the peers' venv ($PEERS_VENV, default
# /opt/hedra-peers: scripts/install_bench_peers.sh).
#   bench/lstm_replay.sh LSTM_STEP DIR [--pixels]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step=$1
dir=$2
shift 2
python=${PEERS_VENV:-/opt/hedra-peers}/bin/python
[ -x "$python" ] || { echo "skipped: $python is missing"; exit 0; }
"$python" -c 'import torch, numpy' 2>/dev/null || { echo "skipped: no torch in $python"; exit 0; }
rm -rf "$dir"
"$python" "$here/peers/lstm_torch.py" --impls "" --export "$dir" "$@"
"$step" --replay "$dir"
