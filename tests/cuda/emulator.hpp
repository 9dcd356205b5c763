// A CPU emulator for the generated CUDA kernels, so that their semantics are tested on machines
// without a GPU: the CUDA source is compiled by the host C++ compiler with a small header that
// defines the CUDA built-ins (threadIdx, blockIdx, __shared__ as function statics, and
// __syncthreads as a std::barrier), each emulated CUDA thread of a block is a std::thread, and
// blocks run one after another. Races between blocks are not detected, and missing barriers
// inside a block only by race_check (ThreadSanitizer), but index arithmetic, tiling, staging into
// shared memory, tree reductions and split reductions all run as written. The compiled emulation is
// cached by the source's hash.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/render/cuda_lower.hpp"
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

// The same run in a separate process built with ThreadSanitizer, which sees the emulated
// threads of a block and their barriers: a shared-memory access of one thread that is not
// ordered by a __syncthreads against another thread's write (a missing or misplaced barrier,
// a double buffer written while it is read) is reported. Returns "" when the run is clean,
// "skipped: <why>" when the host compiler cannot build with -fsanitize=thread, else the report.
std::string race_check(const poly::ProgramIR& program, const backend::CudaLoweredProgram& lowered);

} // namespace hedra::test
