#!/usr/bin/env bash
# Data-parallel throughput side by side: bench/data_parallel with 1 rank, 2 ranks and 2 ranks
# without overlap (one thread each), alternately, `--rounds` times; prints each line and the
# ratios of examples per second.
#   bash bench/data_parallel.sh [build-dir] [--rounds N] [--steps N]
set -euo pipefail
build=${1:-build}
shift || true
rounds=3
args=()
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
export OMPI_MCA_btl_vader_single_copy_mechanism=none HEDRA_NUM_THREADS=1
run() {
  local np=$1
  shift
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" "$build/bench/data_parallel" \
    "${args[@]}" "$@"
}
rate() { sed -E 's/.*examples_per_s=([0-9.]+).*/\1/' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# PyTorch DDP (gloo) with 2 ranks, from the peers venv when it is there.
venv=${PEERS_VENV:-/opt/hedra-peers}
here=$(cd "$(dirname "$0")" && pwd)
ddp() {
  [ -x "$venv/bin/torchrun" ] || return 0
  OMP_NUM_THREADS=1 "$venv/bin/torchrun" --standalone --nproc_per_node 2 \
    "$here/ddp_mlp_large.py" 2>/dev/null | grep '^ddp_mlp_large'
}
for ((r = 1; r <= rounds; ++r)); do
  one=$(run 1); two=$(run 2); plain=$(run 2 --no-overlap); torch=$(ddp)
  echo "$one"; echo "$two"; echo "$plain"
  [ -n "$torch" ] && echo "$torch"
  line="round $r: 2 ranks / 1 rank = $(ratio "$(rate "$two")" "$(rate "$one")")x examples per"
  line+=" second (without overlap $(ratio "$(rate "$plain")" "$(rate "$one")")x)"
  [ -n "$torch" ] && line+="; 2 ranks / PyTorch DDP 2 ranks = $(ratio "$(rate "$two")" "$(rate "$torch")")x"
  echo "$line"
done
