// kernel_profile: per-kernel run times of compiled programs (HEDRA_PROFILE=1), the first tool
// for finding which kernel of a training step is slow. With profiling on, the printer wraps
// each kernel call of the entry function in a clock read and accumulates nanoseconds and calls
// into an exported array `<entry>_profile` (2 longs per kernel); the backend registers that
// array with the kernels' descriptions, and at exit a table per program is printed to standard
// error: kernel, calls, total ms, ms per call, share, GFLOP/s (from a count of the scalar
// operations of each statement), and what the kernel computes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"

namespace hedra::backend {

// Whether $HEDRA_PROFILE asks for kernel timing (unset, "" and "0": no). Read once.
bool profile_enabled();
// The clock the timing reads: CLOCK_MONOTONIC (wall time), or with HEDRA_PROFILE=cpu
// CLOCK_PROCESS_CPUTIME_ID (CPU time of all threads: robust on a loaded machine with one thread).
int profile_clock();

struct KernelProfileInfo {
    std::string name;    // "k7"
    std::string summary; // "b16 update sum [64,32,14,14,16,5,5] <- b15 b2"
    double flops = 0;    // scalar operations per call
};

// One entry per kernel of `program` (the printer's kernel numbering).
std::vector<KernelProfileInfo> describe_kernels(const poly::ProgramIR& program);

// Registers the counters of one compiled program (2 per kernel: ns, calls), kept readable by
// holding `owner` (the compiled module) until exit, when the table is printed.
// `clock` names the time in the table's header ("" : the wall or cpu time of profile_clock();
// the cuda backend passes "gpu": CUDA events around each launch).
void register_profile(std::vector<KernelProfileInfo> kernels, const long long* counters,
                      std::shared_ptr<const void> owner, std::string clock = "");

// The table of every registered program with at least one call; "" when none.
std::string profile_table();

} // namespace hedra::backend
