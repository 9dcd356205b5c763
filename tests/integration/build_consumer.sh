#!/usr/bin/env bash
# build_consumer.sh SOURCE_DIR INSTALL_PREFIX BUILD_DIR [LAUNCHER...]: configure, build and run
# the consumer, under LAUNCHER when given (mpirun and its options).
set -euo pipefail
src=$1 prefix=$2 build=$3
shift 3
rm -rf "$build"
cmake -S "$src" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$build.log" 2>&1 \
  || { cat "$build.log"; exit 1; }
cmake --build "$build" -j2 >> "$build.log" 2>&1 || { cat "$build.log"; exit 1; }
"$@" "$build/consumer"
