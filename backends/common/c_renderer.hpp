// c_renderer: the C-style renderer that code-generating CPU backends share (openmp, c): one
// compiled program as one self-contained C++ translation unit (no #include: standard headers
// cost ~300 ms of compile time). Each kernel is a static function over the buffers it touches,
// with `__restrict` pointers; the program is one
//   extern "C" void <entry>(void** buffers, int num_threads)
// that calls the kernels in order, buffers indexed as in the ProgramIR. A backend's dialect is
// a CDialect (c_kernel.hpp; tinygrad's renderer attributes): with OpenMP's, the outermost loop that
// passed the dependence test gets `#pragma omp parallel for`, and its body is outlined into a
// static function with `__restrict` parameters (g++ drops restrict inside parallel regions, 10x on
// matmul); the innermost parallel loops get `#pragma omp simd`. It prints what the passes chose:
// register tiles (register_tile.hpp), lane reductions, contiguous nests as one loop. The
// accumulation of a sum, product or custom reduction may contract into an FMA and reassociate
// (`#pragma clang fp`); every value, the value a reduction accumulates included, is computed
// exactly (the program is compiled with -ffp-contract=off), so a map recomputed in several kernels
// agrees bit for bit.
#pragma once

#include <string>
#include <vector>

#include "backends/common/c_kernel.hpp"
#include "polyhedral/kernel_ir.hpp"
#include "scheduler/loop_ast.hpp"

namespace hedra::backend {

// The CPU backends' dialects (c_kernel.hpp's CDialect): OpenMP's pragmas, and plain loops (no
// threads, vectorized by the compiler alone).
CDialect openmp_dialect();
CDialect serial_dialect();

struct PrintOptions {
    CDialect dialect = openmp_dialect();
    std::string entry = "hedra_program";
    bool parallel = true; // emit the dialect's parallel loops
    bool simd = true;     // emit the dialect's simd pragma on innermost parallel loops
    bool coalesce = true; // contiguous loop nests as one loop (loop_coalesce.hpp)
    // The target's vector register (sched::CpuTarget::vector_bytes of the target the program
    // was lowered for): the prelude's vector types. The register tiles and lane reductions are
    // the passes' (scheduler/register_tile.hpp, lane_reduction.hpp).
    int vector_bytes = 32;
    // Kernels with fewer statement instances run sequentially: a parallel region costs
    // microseconds, more than such a kernel.
    std::int64_t min_parallel_work = 32768;
    // Up to this many translation units for the kernels, plus one for the entry function,
    // separated by kTranslationUnitMarker lines, so that a compiler can take them in parallel
    // (the JIT compiles one per core). Each unit repeats the prelude; a kernel function is
    // then extern "C" and declared in the entry's unit. Programs of few kernels stay one unit.
    int units = 1;
    // Time every kernel call into `<entry>_profile` (kernel_profile.hpp, HEDRA_PROFILE).
    bool profile = false;
    int profile_clock = 1; // clock_gettime's clock id: 1 monotonic, 2 process CPU time
    // After kernel k the entry calls hook->fn(hook->ctx, k), where hook = buffers[number of
    // buffers + 1] (a `struct { void (*fn)(void*, int); void* ctx; }`, or null).
    bool kernel_hooks = false;
};

inline constexpr const char* kTranslationUnitMarker = "\n// hedra: next translation unit\n";

// `asts[k]` is the loop nest of program.kernels[k].
std::string print_program(const poly::ProgramIR& program, const std::vector<sched::AstNode>& asts,
                          const PrintOptions& options = {});

} // namespace hedra::backend
