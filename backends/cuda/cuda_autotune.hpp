// Autotuning of the contraction tilings ($HEDRA_CUDA_AUTOTUNE=1). The policy
// (cuda_contraction.cpp) picks a contraction's tile and split from the problem size alone, but
// which one is fastest depends on the device. With autotuning on, each contraction kernel of a
// new program is lowered alone with each candidate tiling (contraction_candidates: the policy's
// first), every distinct source compiled and timed on the device with CUDA events, on device
// buffers of the program's sizes (a dense contraction does the same work whatever the values),
// and the fastest is used. The choice is cached on disk beside the NVRTC images (key: the
// device, the NVRTC architecture and the kernel's source under the policy), so a program tunes
// once per machine; $HEDRA_CUDA_AUTOTUNE=verbose also prints each kernel's timings to stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "backends/cuda/cuda_lower.hpp"
#include "backends/cuda/device_allocator.hpp"

namespace hedra::backend::cuda {

struct AutotuneStats {
    std::uint64_t kernels = 0;    // contractions with a choice to make (timed, or from the cache)
    std::uint64_t candidates = 0; // distinct candidate sources timed
    std::uint64_t from_cache = 0; // kernels whose choice came from the disk cache
};

// $HEDRA_CUDA_AUTOTUNE is set to 1 or verbose.
bool autotune_enabled();

// Called with each candidate's source and image before the driver loads it (the backend's
// image hook: the fake-driver tests register the emulation there).
using ImageObserver = std::function<void(const std::string& source, const std::string& image)>;

// The fastest tiling of every contraction kernel of `ir`, lowered with `base` (its
// multiprocessors and shared-memory limit), timed on `stream`. Candidates that fail to compile
// or launch are skipped.
std::map<int, ContractionTiling>
autotune_contractions(const poly::ProgramIR& ir, const CudaLowerOptions& base, const Device& device,
                      DeviceAllocator& allocator, const Stream& stream,
                      const ImageObserver& observe, AutotuneStats& stats);

} // namespace hedra::backend::cuda
