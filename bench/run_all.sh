#!/bin/sh
# Runs every hedra benchmark and prints their lines (also saved to <build-dir>/bench/results.txt).
#   bench/run_all.sh [BUILD_DIR] [--quick] [other flags for every bench, e.g. --threads 1]
# BUILD_DIR defaults to ./build; build it first with -DCMAKE_BUILD_TYPE=Release, e.g.
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2 \
#     --target hedra_bench_matmul hedra_bench_jacobi hedra_bench_compile hedra_bench_train_step \
#     hedra_bench_fused
# The machines are shared and noisy: each bench times hedra and its peer alternately in one
# process and prints medians; the load average before each bench is printed to judge a run.
# OpenBLAS's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE overrides are removed for the benches only.
set -eu
BUILD=build
case "${1:-}" in
  -*|"") ;;
  *) BUILD=$1; shift ;;
esac
OUT="$BUILD/bench/results.txt"
: > "$OUT"
for b in matmul jacobi compile train_step fused; do
  exe="$BUILD/bench/$b"
  if [ ! -x "$exe" ]; then
    echo "# $b: $exe not built (cmake --build $BUILD --target hedra_bench_$b)" | tee -a "$OUT"
    continue
  fi
  echo "# $b $* ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$OUT"
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$exe" "$@" | tee -a "$OUT"
done
echo "# results in $OUT"
