// c_printer: one compiled program as one self-contained C++ translation unit (no #include:
// standard headers cost ~300 ms of compile time). Each kernel is a static function over the
// buffers it touches, with `__restrict` pointers; the program is one
//   extern "C" void <entry>(void** buffers, int num_threads)
// that calls the kernels in order, buffers indexed as in the ProgramIR.
// Loops come from the kernel's LoopAst: the outermost loop that passed the dependence test
// gets `#pragma omp parallel for`, and its body is outlined into a static function with
// `__restrict` parameters (g++ drops restrict inside parallel regions, 10x on matmul); the
// innermost parallel loops get `#pragma omp simd`. The accumulation of a sum, product or custom
// reduction may contract into an FMA and reassociate (`#pragma clang fp`); every value, the
// value a reduction accumulates included, is computed exactly (the program is compiled with
// -ffp-contract=off), so a map recomputed in several kernels agrees bit for bit.
#pragma once

#include <string>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

struct PrintOptions {
    std::string entry = "hedra_program";
    bool parallel = true;       // emit OpenMP parallel loops
    bool simd = true;           // emit omp simd on innermost parallel loops
    bool register_tiles = true; // contractions as register-tiled micro-kernels
    bool coalesce = true;       // contiguous loop nests as one loop (loop_coalesce.hpp)
    // Kernels with fewer statement instances run sequentially: a parallel region costs
    // microseconds, more than such a kernel.
    std::int64_t min_parallel_work = 32768;
    // Time every kernel call into `<entry>_profile` (kernel_profile.hpp, HEDRA_PROFILE).
    bool profile = false;
    int profile_clock = 1; // clock_gettime's clock id: 1 monotonic, 2 process CPU time
};

// `asts[k]` is the loop nest of program.kernels[k].
std::string print_program(const poly::ProgramIR& program, const std::vector<sched::AstNode>& asts,
                          const PrintOptions& options = {});

} // namespace hedra::backend
