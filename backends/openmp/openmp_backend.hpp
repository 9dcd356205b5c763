// The "openmp" backend: partition the graph into kernels, schedule each with isl, print one C++
// translation unit with OpenMP and compile it in process (JitCompiler). Compiled programs are
// cached by the graph's structure (graph_key.hpp), so compute() on a rebuilt identical graph
// binds the new leaves to the old code without rescheduling or recompiling; across processes
// the plan cache (plan_cache.hpp) and the kernel object cache skip isl and clang.
// Threads: CompileOptions::num_threads, else $HEDRA_NUM_THREADS, else the hardware's.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/program_cache.hpp"
#include "core/backend.hpp"

namespace hedra::backend {

struct HostProgramCode; // the compiled code of one graph structure (common/host_program.hpp)

struct OpenMPStats {
    std::uint64_t programs_compiled = 0; // graphs not in the program cache: built
    std::uint64_t programs_lowered = 0;  // of those, lowered through isl (not in the plan cache)
    std::uint64_t program_cache_hits = 0;
};

class OpenMPBackend : public Backend {
public:
    std::string name() const override { return "openmp"; }
    std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>& placeholders,
                                     const CompileOptions& options) override;
    std::vector<HostArray> evaluate(const std::vector<NodePtr>& outputs,
                                    const CompileOptions& options) override;
    // Inputs and outputs whose symbolic axis leads (their layout does not depend on it).
    bool compiles_symbolic_extents(const std::vector<NodePtr>& outputs,
                                   const std::vector<NodePtr>& placeholders) const override;

    OpenMPStats stats() const;

private:
    std::shared_ptr<const HostProgramCode> code_for(const std::vector<NodePtr>& outputs,
                                                    const std::vector<NodePtr>& placeholders,
                                                    const CompileOptions& options,
                                                    std::vector<NodePtr>& leaves);

    ProgramCache<HostProgramCode> cache_;
    mutable std::mutex mutex_; // guards stats_
    OpenMPStats stats_;        // but program_cache_hits: the cache's
};

// The number of threads a program runs with: `requested` if > 0, else $HEDRA_NUM_THREADS,
// else the hardware concurrency.
int openmp_thread_count(int requested);

// What the backend compiles a program with: the printer's parallel-work threshold
// ($HEDRA_MIN_PARALLEL_WORK, else PrintOptions' default) and the full list of clang flags.
// hedra-aot uses the same, so that its libraries compute what the JIT's programs do, bit for bit.
std::int64_t openmp_min_parallel_work();
std::vector<std::string> openmp_compile_flags();

} // namespace hedra::backend
