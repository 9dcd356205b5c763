// A CPU emulator for the generated CUDA kernels, so that their semantics are tested on machines
// without a GPU: the CUDA source is compiled by the host C++ compiler with a small header that
// defines the CUDA built-ins (threadIdx, blockIdx, __shared__ as function statics, and
// __syncthreads as a std::barrier), each emulated CUDA thread of a block is a std::thread, and
// blocks run one after another. Races between blocks and missing barriers inside a block are
// not detected, but index arithmetic, tiling, staging into shared memory, tree reductions and
// split reductions all run as written. The compiled emulation is cached by the source's hash.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/cuda_lower.hpp"
#include "core/host_array.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::test {

// The host compiler used for emulation ($CXX, else c++, else g++), or "" when none runs.
std::string emulation_compiler();

// The dlopen handle of the emulation of `source` (compiled on first use), which exports
// hd_emu_launch and one <function>_emu trampoline per kernel.
void* emulation_library(const std::string& source);

// Runs `lowered` (the CUDA lowering of `program`) on the CPU; inputs come from the buffers'
// nodes (host data). Returns one HostArray per program output.
std::vector<HostArray> emulate_cuda(const poly::ProgramIR& program,
                                    const backend::CudaLoweredProgram& lowered);

} // namespace hedra::test
