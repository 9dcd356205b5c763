#!/usr/bin/env bash
# gpt_char replays PyTorch: bench/peers/gpt_torch.py --export writes its initial weights, batch
# offsets, learning rates, evaluation offsets and losses of a short eager run into DIR, and
# gpt_char --replay DIR must see the same losses (its exit status: 1 when one of the first 10
# differs by more than 1e-4 relative). With PRECISION bf16 PyTorch runs under torch.autocast
# (bf16 on the CPU) and gpt_char with --precision bf16, and the bound is 1e-3. Prints "skipped:"
# and exits 0 where the peers' venv (scripts/install_bench_peers.sh) or the text
# (scripts/get_shakespeare.sh) is missing.
# VOCAB > 0 replays a synthetic stream of token ids below VOCAB instead of the text (50257:
# GPT-2's vocabulary, the embedding's gather and the tied head at that size).
#   examples/gpt_char_replay.sh GPT_CHAR DIR [STEPS] [PRECISION] [VOCAB]
set -euo pipefail
gpt_char=$1
dir=$2
steps=${3:-10}
precision=${4:-f32}
vocab=${5:-0}
autocast=none
[ "$precision" = bf16 ] && autocast=bf16
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PEERS_VENV:-/opt/hedra-peers}/bin/python
text=${HEDRA_DATA:-/var/cache/hedra-data}/shakespeare.txt
if ! "$python" -c 'import torch' > /dev/null 2>&1; then
    echo "skipped: no PyTorch at $python (scripts/install_bench_peers.sh)"
    exit 0
fi
if [ "$vocab" = 0 ] && [ ! -f "$text" ]; then
    echo "skipped: cannot open the text $text (scripts/get_shakespeare.sh)"
    exit 0
fi
rm -rf "$dir"
"$python" "$here/bench/peers/gpt_torch.py" --threads 1 --steps "$steps" --eval-every 0 \
    --eval-iters 2 --autocast "$autocast" --vocab "$vocab" --export "$dir"
"$gpt_char" --replay "$dir" --steps "$steps" --backend openmp --precision "$precision" \
    --plot '' --checkpoint ''
