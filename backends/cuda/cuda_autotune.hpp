// Autotuning of the contraction tilings ($HEDRA_CUDA_AUTOTUNE=1), the measurement of the
// gpu.autotune pass (scheduler/gpu_mapping.hpp). The policy (gpu.tile) picks a contraction's
// tile and split from the problem size alone, but which one is fastest depends on the device.
// With autotuning on, the pass hands each contraction kernel of a new program here with its
// candidate tilings (contraction_candidates: the policy's first); each is lowered alone, every
// distinct source compiled and timed on the device with CUDA events, on device
// buffers of the program's sizes (a dense contraction does the same work whatever the values),
// and the fastest is used. The choice is cached on disk beside the NVRTC images (key: the
// device, the NVRTC architecture and the kernel's source under the policy), so a program tunes
// once per machine; $HEDRA_CUDA_AUTOTUNE=verbose also prints each kernel's timings to stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/render/cuda_lower.hpp"
#include "backends/cuda/runtime/device_allocator.hpp"

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

// The fastest of kernel `kernel`'s candidate tilings (the gpu.autotune pass's measurement):
// each lowered alone with `base`'s target, the distinct sources compiled and timed on `stream`;
// candidates that fail to compile or launch are skipped. Nothing when all lower to one source.
std::optional<ContractionTiling>
autotune_kernel(const poly::ProgramIR& ir, const CudaLowerOptions& base, int kernel,
                const std::vector<ContractionTiling>& candidates, const Device& device,
                DeviceAllocator& allocator, const Stream& stream, const ImageObserver& observe,
                AutotuneStats& stats);

// The measurement gpu.autotune calls (autotune_kernel over these), for CudaLowerOptions::measure.
std::function<std::optional<ContractionTiling>(int, const std::vector<ContractionTiling>&)>
autotune_measure(const poly::ProgramIR& ir, const CudaLowerOptions& base, const Device& device,
                 DeviceAllocator& allocator, const Stream& stream, const ImageObserver& observe,
                 AutotuneStats& stats);

// The fastest tiling of every contraction kernel of `ir` (autotune_kernel for each).
std::map<int, ContractionTiling>
autotune_contractions(const poly::ProgramIR& ir, const CudaLowerOptions& base, const Device& device,
                      DeviceAllocator& allocator, const Stream& stream,
                      const ImageObserver& observe, AutotuneStats& stats);

} // namespace hedra::backend::cuda
