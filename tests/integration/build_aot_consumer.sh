#!/usr/bin/env bash
# build_aot_consumer.sh SOURCE_DIR INSTALL_PREFIX BUILD_DIR JIT_LOSSES: builds examples/aot
# against the install tree (its generator runs hedra-aot at build time), checks that the
# application links no LLVM, clang, isl or hedra, trains 100 steps and compares the losses with
# the JIT's (tests/aot/test_aot_mlp_step.cpp wrote them) bit for bit, and times the whole process
# from its start to the end of its first step.
set -euo pipefail
src=$1 prefix=$2 build=$3 jit_losses=$4
rm -rf "$build"
cmake -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$build.log" 2>&1 \
  || { cat "$build.log"; exit 1; }
cmake --build "$build" -j2 >> "$build.log" 2>&1 || { cat "$build.log"; exit 1; }
bin=$build/train_mlp

echo "ldd $bin:"
ldd "$bin"
if ldd "$bin" | grep -Ei 'llvm|clang|libisl|hedra'; then
  echo "FAIL: the application links LLVM, clang, isl or hedra"
  exit 1
fi
echo "binary: $(stat -c %s "$bin") bytes; library: $(stat -c %s "$build/mlp_step.aot/libmlp_step.a") bytes"

"$bin" --steps 100 --losses "$build/losses.txt"
if ! cmp -s "$build/losses.txt" "$jit_losses"; then
  echo "FAIL: the losses differ from the JIT's ($jit_losses)"
  diff "$build/losses.txt" "$jit_losses" | head -20
  exit 1
fi
echo "losses: the JIT's, bit for bit, over 100 steps"

# Start to first step: the whole process (exec, dynamic loading, one step), best of 5.
best=1000000
for _ in 1 2 3 4 5; do
  t0=$(date +%s%N)
  "$bin" --steps 1 --synthetic > /dev/null
  t1=$(date +%s%N)
  us=$(( (t1 - t0) / 1000 ))
  (( us < best )) && best=$us
done
echo "process start to first step done: $((best / 1000)).$(printf %03d $((best % 1000))) ms (best of 5)"
if (( best > 10000 )); then
  echo "FAIL: more than 10 ms"
  exit 1
fi
