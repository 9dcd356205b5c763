// lower: the openmp backend's pass list, in order, for a partitioned program:
//   per kernel: build_scop -> compute_dependences -> compute_schedule -> tile_schedule
//               -> build_loop_ast;  then print_program (one translation unit).
// With HEDRA_DUMP=1 every stage is written to stderr (kernel IR, isl schedule before and after
// tiling, loop AST, C++ source), the first tool for debugging a schedule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

struct LowerOptions {
    std::vector<std::int64_t> tile_sizes; // empty: the scheduler's defaults
    bool tile = true;
    std::string entry = "hedra_program";
    std::int64_t min_parallel_work = 32768; // see PrintOptions
    bool dump = false;                      // also on with HEDRA_DUMP=1
};

struct LoweredProgram {
    std::string source;
    std::vector<sched::AstNode> asts; // per kernel
    int fallbacks = 0;                // kernels scheduled in program order (isl quota)
    double isl_ms = 0;                // time in the polyhedral passes
};

LoweredProgram lower(const poly::ProgramIR& program, const LowerOptions& options = {});

} // namespace hedra::backend
