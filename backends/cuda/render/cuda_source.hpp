// cuda_source: CUDA as a dialect of the shared C-style kernel printer (backends/common:
// c_kernel.hpp for buffers, indices, values, folds and flat loops; c_expr.hpp for scalar
// expressions, so both backends share the exact per-dtype semantics). What is CUDA's is the
// dialect table (cuda_dialect: kernel prefix, __launch_bounds__, __restrict__, __shared__,
// __syncthreads, thread and block index names, fma and infinity spellings, the device math
// names of the prelude), the kernel signature with its emulation trampoline, and the launches.
// NVRTC runs with -default-device, so the prelude's helpers (static inline, unannotated)
// become device functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/common/c_kernel.hpp"
#include "backends/cuda/render/cuda_lower.hpp"

namespace hedra::backend::cuda {

const CDialect& cuda_dialect();

// What one lowering pass accumulates: kernel functions, launches and scratch buffers.
struct SourceBuilder : KernelBuffers {
    explicit SourceBuilder(const poly::ProgramIR& program)
        : KernelBuffers(program, cuda_dialect()) {}
    std::string functions;
    std::vector<CudaLaunch> launches;
    bool mma_helpers = false; // the tensor-core helpers are printed (before the first use)

    // Prints `extern "C" __global__ void __launch_bounds__(max_threads[, min_blocks])
    // <name>(params) { body }` (min_blocks > 0 asks ptxas to fit that many blocks per
    // multiprocessor), plus a host trampoline <name>_emu(void**) under HEDRA_CUDA_EMULATION
    // (the CPU emulator's), and appends its launch. The name is kernel k's next: k3_0, k3_1...
    void launch(int kernel, const char* strategy, std::array<unsigned, 3> grid,
                std::array<unsigned, 3> block, const KernelParams& params, int max_threads,
                const std::string& body, std::size_t shared_bytes = 0, int min_blocks = 0);
};

// A 1-D grid of `blocks` blocks (as the GPU mapping passes chose them).
std::array<unsigned, 3> grid_of(std::int64_t blocks);

// Macros and helpers printed once at the top of every CUDA program.
const std::string& cuda_prelude();

} // namespace hedra::backend::cuda
