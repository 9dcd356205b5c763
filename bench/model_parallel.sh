#!/usr/bin/env bash
# Model parallelism side by side: bench/parallel_gpt alone (one rank, one thread, the plain
# fused step) against two ranks of one thread under mpirun with --grid tp2 (each layer split),
# pp2 (two stages, 1F1B over --micro-batches, default 4), pp2 interleaved (--chunks stages per
# rank, default one layer each: 3 for W8, 2 for W7) and dp2 (the batch split), alternately,
# `--rounds` times; prints each run's median step and the ratios of tokens per second. Each round
# also runs two one-rank steps at once as separate processes: how much slower each is than one
# alone is the host's contention (hedra-plan --contention), the ceiling of every 2-rank grid.
#   bash bench/model_parallel.sh [build-dir] [--rounds N] [--config w7|w8] [--steps N]
#                                [--micro-batches M] [--chunks V]
set -euo pipefail
build=${1:-build}
shift || true
rounds=3 config=w8 steps=5 micro=4 chunks=
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --micro-batches) micro=$2; shift 2 ;;
    --chunks) chunks=$2; shift 2 ;;
    *) echo "model_parallel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z $chunks ]]; then if [[ $config == w8 ]]; then chunks=3; else chunks=2; fi; fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none HEDRA_NUM_THREADS=1
gpt=("$build/bench/parallel_gpt" --config "$config" --steps "$steps" --micro-batches "$micro")
two() { mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "${gpt[@]}" --grid "$@"; }
median() { sed -E -n 's/.*step_ms median=([0-9.]+).*/\1/p' <<<"$1" | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
for ((r = 1; r <= rounds; ++r)); do
  one=$("${gpt[@]}")
  "${gpt[@]}" > "${TMPDIR:-/tmp}/model_parallel_other.$$" &
  both=$("${gpt[@]}")
  wait
  other=$(cat "${TMPDIR:-/tmp}/model_parallel_other.$$")
  rm -f "${TMPDIR:-/tmp}/model_parallel_other.$$"
  tp=$(two tp2); pp=$(two pp2); ppi=$(two pp2 --chunks "$chunks"); dp=$(two dp2)
  echo "$pp" | grep 'stage'
  echo "$ppi" | grep 'stage' | sed 's/^/  interleaved /'
  echo "round $r ($config): 1 rank $(median "$one") ms, tp 2 $(median "$tp") ms, pp 2"\
       "($micro micro-batches) $(median "$pp") ms, pp 2 interleaved ($chunks chunks)"\
       "$(median "$ppi") ms, dp 2 $(median "$dp") ms per step; against 1"\
       "rank: tp 2 $(ratio "$(median "$one")" "$(median "$tp")")x, pp 2"\
       "$(ratio "$(median "$one")" "$(median "$pp")")x, pp 2 interleaved"\
       "$(ratio "$(median "$one")" "$(median "$ppi")")x, dp 2"\
       "$(ratio "$(median "$one")" "$(median "$dp")")x tokens per second; two 1-rank runs at once"\
       "$(median "$both") and $(median "$other") ms (contention"\
       "$(awk -v a="$(median "$both")" -v b="$(median "$other")" -v c="$(median "$one")" \
           'BEGIN { printf "%.2f", (a + b) / 2 / c }'))"
done
