// lower: the openmp backend's lowering of a partitioned program: the scheduler's kernel passes
// (scheduler/lower.hpp, the one pass list) and then print_program (one translation unit).
// Every stage is shown to a CompileObserver (scheduler/compile_observer.hpp): with
// HEDRA_DUMP=DIR each is written to a numbered file (docs/dumps.md), the first tool for
// debugging a schedule; hedra-dump observes the same passes. HEDRA_TIME_PASSES=1 times them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/compile_observer.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

struct LowerOptions {
    std::vector<std::int64_t> tile_sizes; // empty: the scheduler's defaults
    bool tile = true;
    std::string entry = "hedra_program";
    std::int64_t min_parallel_work = 32768; // see PrintOptions
    bool profile = false;                   // see PrintOptions (HEDRA_PROFILE)
    int units = 1;                          // see PrintOptions
    int profile_clock = 1;
    bool kernel_hooks = false; // see PrintOptions
    // Sees every stage (and may replace schedules); null: the HEDRA_DUMP observer, if set.
    sched::CompileObserver* observer = nullptr;
};

struct LoweredProgram {
    std::string source;
    std::vector<sched::AstNode> asts; // per kernel
    int fallbacks = 0;                // kernels scheduled in program order (isl quota)
    int reused = 0;                   // kernels that took an identical earlier kernel's AST
    double isl_ms = 0;                // time in the polyhedral passes
};

LoweredProgram lower(const poly::ProgramIR& program, const LowerOptions& options = {});

} // namespace hedra::backend
