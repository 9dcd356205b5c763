#!/usr/bin/env bash
# Sanitizer runs, documented in the README:
#   scripts/sanitize.sh asan   builds build-asan with -DHEDRA_SANITIZE=ON (AddressSanitizer and
#                              UndefinedBehaviorSanitizer, -fno-sanitize-recover) and runs the
#                              whole CTest suite under it;
#   scripts/sanitize.sh ci     the part of asan that CI runs (scripts/test.sh): builds in
#                              build-asan only the test executables of the core, scheduler,
#                              differential and nn (with nn/io) suites and runs those tests;
#   scripts/sanitize.sh tsan   builds build-tsan with -DHEDRA_TSAN=ON and runs under
#                              ThreadSanitizer the concurrency tests (compute, compile and grad
#                              from several threads on shared graphs), the kernel cache fault
#                              tests, the backend tests and the in-process data-parallel tests;
#   scripts/sanitize.sh        asan and tsan.
# Kernels compiled at run time by the in-process clang are not instrumented; libLLVM, libclang,
# libomp and OpenMPI are not either, so their reports are suppressed (scripts/sanitizers.supp,
# scripts/lsan.supp). Environment: HEDRA_JOBS (build and test parallelism, default 2),
# HEDRA_CTEST_ARGS (extra ctest arguments, e.g. "-R fuzz").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${HEDRA_JOBS:-2}
what=${1:-all}

# A kernel cache of its own: sanitizer builds must not reuse objects linked by another build.
export HEDRA_CACHE_DIR="$root/build-sanitize-cache"

# The suites CI runs under ASan+UBSan: their executables and the CTest names they register.
ci_targets=(hedra_core_tests hedra_scheduler_tests hedra_differential_tests hedra_nn_tests
    hedra_nn_io_tests)
ci_tests='^(core|scheduler|differential|nn)/'

configure_asan() {
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEDRA_SANITIZE=ON \
        -DHEDRA_BUILD_EXAMPLES=ON
}

# ctest under ASan+UBSan with the options every asan run uses; arguments go to ctest.
ctest_asan() {
    # allocator_may_return_null: a failed huge allocation returns null as malloc does, so the
    # tests of hedra's out-of-memory errors test them instead of stopping in ASan's allocator.
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1" \
    LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 1800 "$@" \
        ${HEDRA_CTEST_ARGS:-}
}

run_asan() {
    configure_asan
    cmake --build build-asan -j"$jobs"
    ctest_asan
}

run_asan_ci() {
    configure_asan
    cmake --build build-asan -j"$jobs" --target "${ci_targets[@]}"
    ctest_asan -R "$ci_tests"
}

# The suites run under TSan: several host threads on shared graphs (concurrency), the kernel
# cache's faults, the backends (openmp kernels in OpenMP teams) and data parallelism with ranks
# as threads of one process. Not the MPI ranks (distributed/mpi_data_parallel_np*): OpenMPI is
# not instrumented and its components take and release mutexes across libraries, which TSan
# reports as lock-order inversions and unlocks of unlocked mutexes inside OpenMPI.
tsan_targets=(hedra_concurrency_tests hedra_fault_tests hedra_backend_tests
    hedra_distributed_tests)
tsan_tests='^(concurrency|faults|backends)/|^distributed/test_'

run_tsan() {
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEDRA_TSAN=ON \
        -DHEDRA_BUILD_EXAMPLES=OFF
    cmake --build build-tsan -j"$jobs" --target "${tsan_targets[@]}"
    # Archer (LLVM's OMPT tool for TSan) tells TSan about libomp's barriers, task queues and
    # locks, which it cannot see in the uninstrumented runtime.
    local libomp archer
    libomp=$(sed -n 's/^HEDRA_LIBOMP:FILEPATH=//p' build-tsan/CMakeCache.txt)
    archer=$(dirname "$libomp")/libarcher.so
    if [ -f "$archer" ]; then
        export OMP_TOOL_LIBRARIES="$archer"
    fi
    export TSAN_OPTIONS="suppressions=$root/scripts/sanitizers.supp:halt_on_error=1:second_deadlock_stack=1"
    ctest --test-dir build-tsan --output-on-failure -j1 --timeout 1800 -R "$tsan_tests" \
        ${HEDRA_CTEST_ARGS:-}
}

case "$what" in
asan) run_asan ;;
ci) run_asan_ci ;;
tsan) run_tsan ;;
all)
    run_asan
    run_tsan
    ;;
*)
    echo "usage: scripts/sanitize.sh [asan|ci|tsan|all]" >&2
    exit 2
    ;;
esac
