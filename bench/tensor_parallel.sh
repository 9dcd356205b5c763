#!/usr/bin/env bash
# Tensor parallelism side by side: examples/gpt_char alone (one rank, one thread) against two
# ranks of one thread under mpirun with --grid tp2 (each layer split over both) and, for
# comparison, --grid dp2 (the batch split), alternately, `--rounds` times; prints each run's
# median step and the ratios of tokens per second to the one rank.
#   bash bench/tensor_parallel.sh [build-dir] [--rounds N] [--config w7|w8] [--steps N]
set -euo pipefail
build=${1:-build}
shift || true
rounds=3 config=w7 steps=40
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) echo "tensor_parallel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export OMPI_MCA_btl_vader_single_copy_mechanism=none HEDRA_NUM_THREADS=1
gpt=("$build/examples/gpt_char" --config "$config" --steps "$steps" --threads 1 --eval-every 0
     --eval-iters 1)
median() { sed -E -n 's/.*step_ms median=([0-9.]+).*/\1/p' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for ((r = 1; r <= rounds; ++r)); do
  one=$("${gpt[@]}" | grep '^gpt_char: steps=')
  tp=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "${gpt[@]}" --grid tp2 |
       grep '^gpt_char: steps=')
  dp=$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "${gpt[@]}" --grid dp2 |
       grep '^gpt_char: steps=')
  echo "round $r ($config): 1 rank $(median "$one") ms, tp 2 $(median "$tp") ms, dp 2 $(median "$dp") ms"\
       "per step; tp 2 / 1 rank = $(ratio "$(median "$one")" "$(median "$tp")")x,"\
       "dp 2 / 1 rank = $(ratio "$(median "$one")" "$(median "$dp")")x tokens per second"
done
