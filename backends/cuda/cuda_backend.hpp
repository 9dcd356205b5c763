// The "cuda" backend: partition the graph into kernels (as the openmp backend does), generate
// CUDA C++ for them (lower_cuda), compile it with NVRTC (images cached on disk), load it with
// the driver API and run the launches in order on one stream. Buffers stay on the device: the
// program's temporaries live in an arena kept between runs; inputs are uploaded only when no
// device copy of them exists (results of earlier runs and graph leaves keep theirs: see
// device_residency.hpp); only the requested outputs are copied back. A program run again with
// the same sizes and its own results fed back is captured as a CUDA graph and replayed (see
// GraphReplay in cuda_backend.cpp, and docs/cuda.md). Compiled programs are
// cached by the graph's structure, so a training loop that rebuilds the same graph every step
// neither regenerates nor recompiles anything.
// Without a usable device, compile and compute throw hedra::Error("no CUDA device: ...").
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/common/program_cache.hpp"
#include "backends/cuda/render/cuda_lower.hpp"
#include "core/backend.hpp"

namespace hedra::backend {

struct CudaProgramCode; // one compiled graph structure (cuda_backend.cpp)
struct CudaCounters;    // the statistics, shared with the programs (cuda_backend.cpp)

struct CudaStats {
    std::uint64_t programs_compiled = 0;
    std::uint64_t program_cache_hits = 0;
    std::uint64_t images_from_disk = 0;  // NVRTC skipped: the image came from the disk cache
    std::uint64_t uploads = 0;           // host-to-device copies of inputs and leaves
    std::uint64_t resident_inputs = 0;   // inputs that already had a device copy
    std::uint64_t downloads = 0;         // device-to-host copies of outputs: on first read, or
                                         // in each graph launch for those it stages (the loss)
    std::uint64_t launches = 0;          // kernels run, those of graph launches included
    std::uint64_t graphs_captured = 0;   // CUDA graphs captured (two per replayed program)
    std::uint64_t graph_launches = 0;    // runs that launched a captured graph
    std::uint64_t tuned_kernels = 0;     // contractions tuned ($HEDRA_CUDA_AUTOTUNE)
    std::uint64_t tuning_candidates = 0; // candidate kernels timed for that
};

class CudaBackend : public Backend {
public:
    CudaBackend();
    std::string name() const override { return "cuda"; }
    std::unique_ptr<Program> compile(const std::vector<NodePtr>& outputs,
                                     const std::vector<NodePtr>& placeholders,
                                     const CompileOptions& options) override;
    std::vector<HostArray> evaluate(const std::vector<NodePtr>& outputs,
                                    const CompileOptions& options) override;
    CudaStats stats() const;

private:
    std::shared_ptr<const CudaProgramCode> code_for(const std::vector<NodePtr>& outputs,
                                                    const std::vector<NodePtr>& placeholders,
                                                    const CompileOptions& options,
                                                    std::vector<NodePtr>& leaves);

    ProgramCache<CudaProgramCode> cache_;
    std::shared_ptr<CudaCounters> counters_;
};

// Whether a CUDA device can be used here ("" if so, else why not). Never throws.
std::string cuda_unavailable_reason();

// Where a result of a cuda program lives on the device while the host has neither read nor
// changed it: its device address and the stream the programs run on (a CUstream). Work queued
// on that stream (NCCL's all-reduce of a gradient, in place) runs after the program that made
// the result and before every later run and copy to the host, which see what it wrote; the
// array then stands for the new contents. {0, nullptr} for any other array, or without a
// device. Never throws.
struct CudaDeviceArray {
    std::uint64_t address = 0;
    void* stream = nullptr;
};
CudaDeviceArray cuda_device_array(const HostArray& a);

// For tests and tools: called with every program's CUDA source and its compiled image (PTX or
// cubin) before the driver loads it (the fake-driver tests register the CPU emulation of the
// source there). Pass nullptr to remove it.
using CudaImageHook = void (*)(const std::string& source, const std::string& image);
void set_cuda_image_hook(CudaImageHook hook);

} // namespace hedra::backend
