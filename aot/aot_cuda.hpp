// aot_cuda: hedra-aot's cuda target. The cuda backend's partition and lowering give the kernels
// and their launches; NVRTC compiles them into the image (PTX or cubin) the library embeds; the
// C function loads it through the driver API (libcuda opened with dlopen, so the library links
// no CUDA) and launches the kernels in order on the caller's stream, over device pointers.
#pragma once

#include <string>

#include "aot/aot_program.hpp"
#include "polyhedral/kernel_ir.hpp"

namespace hedra::aot {

// Fills `program`'s source, image, architecture, launches and scratch sizes (in scratch_offset,
// which lower_aot turns into offsets) and returns the partitioned program. Throws hedra::Error
// when hedra was built without the CUDA toolkit, NVRTC cannot be loaded or fails, or the
// program has symbolic sizes (the cuda backend compiles a program per size).
poly::ProgramIR lower_cuda_program(const AotRequest& request, const AotTarget& target,
                                   AotProgram& program);

// "<name>.cpp" of the cuda target (aot_files.hpp's aot_wrapper for openmp).
std::string aot_cuda_wrapper(const AotProgram& program);

} // namespace hedra::aot
