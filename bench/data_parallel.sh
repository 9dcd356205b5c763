#!/usr/bin/env bash
# Data-parallel throughput side by side: bench/data_parallel with 1 and 2 ranks (one thread
# each), alternately, `--rounds` times; prints each line and the ratio of examples per second.
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
run() { mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$1" "$build/bench/data_parallel" "${args[@]}"; }
for ((r = 1; r <= rounds; ++r)); do
  one=$(run 1); two=$(run 2)
  echo "$one"; echo "$two"
  e1=$(sed -E 's/.*examples_per_s=([0-9.]+).*/\1/' <<<"$one")
  e2=$(sed -E 's/.*examples_per_s=([0-9.]+).*/\1/' <<<"$two")
  echo "round $r: 2 ranks / 1 rank = $(awk -v a="$e2" -v b="$e1" 'BEGIN { printf "%.3f", a / b }')x examples per second"
done
