// lower_cuda: the CUDA renderer of a partitioned program (kernel IR). The GPU mapping passes of
// the pass list (scheduler/gpu_mapping.hpp: gpu.forms, gpu.tile, gpu.stage, gpu.reduction,
// gpu.launch) decide each kernel's launches; this prints them: every kernel of the IR becomes
// one or more __global__ functions of one CUDA C++ translation unit and a list of launches, run
// in order on one stream, by the template of its form (cuda_kernels.hpp: map, contraction,
// reduction, reduction of several values, generic), in CUDA's dialect of the shared C-style
// printer (cuda_source.hpp). The source ends with the list of launches as comments. Every
// stage is shown to a CompileObserver (scheduler/compile_observer.hpp): the partition, the isl
// stages of kernels on the generic path, and the emitted source (extension "cu"); by default
// HEDRA_DUMP's observer, which also writes the mapping passes' stages.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/common/c_kernel.hpp"
#include "polyhedral/kernel_ir.hpp"
#include "scheduler/gpu_mapping.hpp"
#include "scheduler/lower.hpp"
#include "scheduler/partition.hpp"
#include "scheduler/target.hpp"

namespace hedra::sched {
class CompileObserver;
}

namespace hedra::backend {

struct CudaLaunch {
    std::string function; // the __global__ function (extern "C")
    std::string strategy; // "map", "contraction", "serial_reduction", "block_reduction",
                          // "split_partial", "split_final", "tuple_block_reduction",
                          // "generic", "generic_serial"
    int kernel = -1;      // index in ProgramIR::kernels
    std::array<unsigned, 3> grid{1, 1, 1};
    std::array<unsigned, 3> block{1, 1, 1};
    // Kernel arguments in order: program buffer indices, then scratch buffers numbered
    // program.buffers.size() + s.
    std::vector<int> buffers;
    std::size_t shared_bytes = 0; // static __shared__ memory of the function
};

struct CudaLoweredProgram {
    std::string source;
    std::string mapping; // the GPU mapping passes' decisions, as their dump stages show them
    std::vector<CudaLaunch> launches;
    std::vector<ScratchBuffer> scratch; // device temporaries the launches need besides buffers
};

using sched::ContractionTiling;

// The mapping passes' options (tile sizes, the autotuner's tilings, one kernel alone, the
// generic mapping for every kernel), the observer and the target the passes map for.
struct CudaLowerOptions : sched::GpuMappingOptions {
    // Sees every stage; null: the HEDRA_DUMP observer, if HEDRA_DUMP is set.
    sched::CompileObserver* observer = nullptr;
    // The device's facts (the backend fills them from the device when one is present): the
    // only machine facts the mapping passes read.
    sched::GpuTarget gpu;
};

CudaLoweredProgram lower_cuda(const poly::ProgramIR& program, const CudaLowerOptions& options = {});

// One launch per line ("k0_0 contraction grid(2,2,1) block(16,16,1) smem 8704 args b0 b1 b2").
std::string to_string(const CudaLaunch& launch, const poly::ProgramIR& program);

} // namespace hedra::backend
