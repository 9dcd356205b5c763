// NVRTC, CUDA's runtime compiler, opened with dlopen: $HEDRA_NVRTC_LIBRARY if set, else
// libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12 on the loader's path, then the same names in the
// toolkit's library directory found when hedra was configured. It compiles one CUDA C++
// translation unit to PTX (a virtual architecture, compute_XY: loads on any newer GPU) or to a
// cubin (a real one, sm_XY: no JIT at load time). Compiled images are cached on disk through
// the KernelCache of the CPU backend, keyed by a SHA-256 of (source, options, NVRTC version,
// hedra version), so a program compiled once loads in microseconds afterwards.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hedra::backend::cuda {

struct NvrtcImage {
    std::string image; // PTX text or cubin bytes
    bool cubin = false;
    std::string log; // NVRTC's warnings, if any
    std::string key; // the cache key
    bool from_cache = false;
};

class Nvrtc {
public:
    // The process-wide compiler; throws hedra::Error("cannot load NVRTC: ...") when no library
    // can be opened.
    static Nvrtc& instance();
    // Why NVRTC cannot be used ("" when it can). Never throws.
    static std::string unavailable_reason();

    int major = 0, minor = 0; // NVRTC's version
    std::string library;      // the path or name that was opened

    // Compiles for `architecture` ("compute_90": PTX; "sm_90": cubin) with hedra's options
    // (C++17, unannotated functions as device functions, no FMA contraction, so results match
    // the reference backend) plus `extra`. Throws hedra::Error with NVRTC's log and the path of
    // a saved copy of the source when compilation fails. Thread-safe.
    NvrtcImage compile(const std::string& source, const std::string& architecture,
                       const std::vector<std::string>& extra = {}) const;

    // The options compile() passes to NVRTC.
    static std::vector<std::string> options(const std::string& architecture,
                                            const std::vector<std::string>& extra);

    // Architectures (as numbers, 90 for sm_90) this NVRTC can generate code for.
    std::vector<int> supported_architectures() const;

private:
    Nvrtc() = default;
    void* handle_ = nullptr;
};

// The architecture to compile for: $HEDRA_CUDA_ARCH if set ("sm_80", "compute_90"); else the
// device's own (sm_XY, when NVRTC supports it, else compute_XY); else "compute_90".
std::string default_architecture(const std::string& device_architecture);

// The compute capability an architecture names, major * 10 + minor ("sm_80", "compute_90a":
// 80, 90), the mapping passes' GpuTarget::compute_capability; 0 when it names none.
int compute_capability_of(const std::string& architecture);

// Writes `source` to <dir>/hedra_cuda_<key>.cu (dir: the kernel cache's scratch directory) and
// returns the path.
std::string dump_cuda_source(const std::string& key, const std::string& source);

} // namespace hedra::backend::cuda
