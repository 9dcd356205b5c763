#!/usr/bin/env bash
# The W7 GPT training step side by side with PyTorch: examples/gpt_char and
# bench/peers/gpt_torch.py (eager and torch.compile) alternate, round after round, at 1 and 2
# threads, each a short run of the same recipe; every line is the median step time of one run
# after its first three steps, in the bench format (speedup > 1: hedra is faster). --config w8
# runs the 10.7M-parameter model instead; --impls eager leaves torch.compile out. With
# --rounds 10, the lines of one thread count show each side's spread from run to run.
#   bench/gpt_side_by_side.sh [BUILD] [--rounds N] [--steps N] [--threads 1,2] [--config w7|w8]
#                             [--impls eager,compile]
# Needs the peers' venv ($PEERS_VENV, default /opt/hedra-peers: scripts/install_bench_peers.sh)
# and the text (scripts/get_shakespeare.sh). torch.compile's first run in a fresh cache takes
# about a minute; the later rounds reuse one cache folder, so they time the step alone.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build
rounds=2
steps=60
threads=1,2
config=w7
impls=eager,compile
while (($#)); do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --impls) impls=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) build=$1; shift ;;
    esac
done
python=${PEERS_VENV:-/opt/hedra-peers}/bin/python
w7=${W7_SCRIPT:-$here/bench/peers/gpt_torch.py}
gpt=$build/examples/gpt_char
for need in "$python" "$w7" "$gpt"; do
    [ -e "$need" ] || { echo "gpt_side_by_side: $need is missing" >&2; exit 1; }
done
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

hedra_ms() { # threads
    "$gpt" --config "$config" --threads "$1" --steps "$steps" --eval-every 0 --eval-iters 1 \
        --checkpoint '' --plot '' | sed -n 's/^gpt_char: .*step_ms median=\([0-9.]*\).*/\1/p'
}
torch_ms() { # impl threads
    "$python" "$w7" --config "$config" --impl "$1" --threads "$2" --steps "$steps" \
        --eval-every 0 --eval-iters 1 --cache-dir "$cache/$1" | sed -n 's/.* step_ms median=\([0-9.]*\).*/\1/p'
}

for t in ${threads//,/ }; do
    for ((r = 1; r <= rounds; ++r)); do
        h=$(hedra_ms "$t")
        for impl in ${impls//,/ }; do
            p=$(torch_ms "$impl" "$t")
            awk -v config="$config" -v t="$t" -v h="$h" -v p="$p" -v impl="$impl" -v r="$r" 'BEGIN {
                printf "gpt_step_%s threads=%s hedra_ms=%.2f peer=torch_%s peer_ms=%.2f speedup=%.3f round=%s\n",
                       config, t, h, impl, p, p / h, r }'
        done
    done
done
