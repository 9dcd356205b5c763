// lower: hedra's pass list, from a lazy graph to one loop AST per kernel, in one place (Halide's
// Lower.cpp). Backends render what it returns and never run isl themselves: openmp and c print
// the ASTs as C (backends/common/c_renderer.hpp); cuda maps kernels of known forms in closed
// form and the rest through lower_kernel.
//   program passes: canonicalize, the partition's steps (partition.hpp), narrow-domains
//   gpu passes:     (cuda) gpu.forms, gpu.autotune, gpu.tile, gpu.stage, gpu.reduction,
//                   gpu.launch (gpu_mapping.hpp): each kernel's launches, for a GpuTarget; after
//                   the kernel passes, gpu.generic-threads (gpu_generic_threads.hpp)
//   kernel passes:  scop, dependences, dead-writes, schedule, tile, ast, coalesce, register-tile,
//                   lane-reduction (on cuda, for the kernels of no known form: without tile,
//                   register-tile and lane-reduction)
//   backend passes: print, then the backend's compile step (jit, cc, nvrtc)
// pass_list() is this list as data: `hedra-dump --list-passes` prints it, docs/pipeline.md shows
// it, and each name is the pass's HEDRA_TIME_PASSES timer. Every pass is shown to the
// CompileObserver or written to HEDRA_DUMP's files (docs/dumps.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "polyhedral/kernel_ir.hpp"
#include "scheduler/compile_observer.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/loop_ast.hpp"
#include "scheduler/partition.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {

struct PassInfo {
    std::string_view name;  // the HEDRA_TIME_PASSES timer
    std::string_view unit;  // "program", "gpu", "kernel" or "backend"
    std::string_view dumps; // the HEDRA_DUMP stage written after it ("" for none)
    std::string_view what;
};

// Every pass, in the order a compile runs them.
const std::vector<PassInfo>& pass_list();

// The program passes are partition() (partition.hpp): canonicalize, its steps, narrow-domains.

struct KernelPassOptions {
    std::vector<std::int64_t> tile_sizes; // empty: the scheduler's defaults (tile.hpp)
    bool tile = true;                     // false: the schedule as computed (cuda's mapping)
    CpuTarget cpu = cpu_target();         // the CPU the schedules are planned for
    // The C renderers' loop passes (register_tile.hpp, lane_reduction.hpp); not for a GPU.
    bool register_tiles = true;
    bool lane_reductions = true;
    // Sees every stage (and may replace schedules); null: the HEDRA_DUMP observer, if set.
    CompileObserver* observer = nullptr;
};

struct LoopProgram {
    std::vector<AstNode> asts; // per kernel of the program
    int fallbacks = 0;         // kernels scheduled in program order (isl's quota ran out)
    int reused = 0;            // kernels that took an earlier kernel's AST (same structure)
    double isl_ms = 0;         // time in the kernel passes
};

// The kernel passes over every kernel, after showing the program to the observer.
LoopProgram lower_kernels(const poly::ProgramIR& program, const KernelPassOptions& options = {});

// The kernel passes over one kernel; `fell_back` (if given) says whether isl's quota ran out.
AstNode lower_kernel(const poly::ProgramIR& program, const poly::Kernel& kernel,
                     const KernelPassOptions& options, bool* fell_back = nullptr);

// What a program is lowered for: the CPU's vector units (openmp, c: every kernel through the
// kernel passes, tiled) or a GPU (cuda: the gpu passes, then the kernel passes without tiling
// for the kernels of no known form).
struct Target {
    enum class Kind { Cpu, Gpu };
    Kind kind = Kind::Cpu;
    CpuTarget cpu;
    GpuTarget gpu;
    static Target for_cpu(const CpuTarget& cpu = cpu_target()) { return {Kind::Cpu, cpu, {}}; }
    static Target for_gpu(const GpuTarget& gpu) { return {Kind::Gpu, {}, gpu}; }
};

struct LowerOptions {
    std::vector<std::int64_t> tile_sizes; // empty: the scheduler's defaults (tile.hpp, gpu.tile)
    bool tile = true;                     // CPU: false keeps the schedule as computed
    // GPU: the autotuner's tilings, one kernel alone, the generic mapping for every kernel (its
    // tile_sizes are LowerOptions::tile_sizes).
    GpuMappingOptions gpu;
    // Sees every stage; null: nobody watches but HEDRA_DUMP, if set. Kernels of one structure
    // share one loop AST only while nobody watches.
    CompileObserver* observer = nullptr;
};

struct LoweredKernels {
    // Per kernel: its loop AST (on a GPU, only the kernels of the generic form have one).
    std::vector<AstNode> asts;
    std::optional<GpuMapping> gpu; // on a GPU: every kernel's mapping
    int fallbacks = 0, reused = 0;
    double isl_ms = 0;
};

// How a program is partitioned for `target` (partition.hpp): on a CPU, the defaults; on a GPU,
// any chain of up to 4 maps after a sum (SGD with momentum: the momentum, then the weight)
// joins the sum's kernel, to be applied to the contraction's accumulators one after the other,
// and none of the CPU's row-local steps (fused rows, split reductions, stencil streams, whose
// row buffers and windows only the C renderer prints).
PartitionOptions partition_options(const Target& target);

// The one entry every code-generating backend calls after partition(): the gpu passes for a GPU
// target, and the kernel passes, for `target`. The backend then renders what it returns in its
// dialect and compiles the text.
LoweredKernels lower(const poly::ProgramIR& program, const Target& target,
                     const LowerOptions& options = {});

} // namespace hedra::sched
