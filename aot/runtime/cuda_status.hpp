// The status codes of a cuda-target library's C function beyond those it shares with the openmp
// target (0: no error, 1: misaligned workspace, 2: no memory for the workspace). hedra-aot
// prints their messages (aot/aot_cuda.cpp); the driver loader returns them
// (cuda_driver_loader.hpp). C++17 and no hedra include: its text is embedded into the
// generated libraries.
#pragma once

namespace hedra_aot_cuda {

constexpr int kNoDriverCode = 3;   // libcuda (or $HEDRA_CUDA_DRIVER) or an entry point is missing
constexpr int kNoDeviceCode = 4;   // cuInit failed, or there is no device 0
constexpr int kNoModuleCode = 5;   // the device cannot load the kernels' image
constexpr int kDriverCallCode = 6; // a later driver call failed

} // namespace hedra_aot_cuda
