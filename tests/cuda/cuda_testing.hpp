// Helpers of the CUDA tests: lowering arrays to CUDA without a device, NVRTC availability, the
// visible "skipped: ..." message of tests that need a GPU, and tolerant comparison.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <iostream>

#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/render/cuda_lower.hpp"
#include "backends/cuda/runtime/nvrtc_compiler.hpp"
#include "hedra.hpp"
#include "scheduler/partition.hpp"

namespace hedra::test {

struct LoweredArrays {
    poly::ProgramIR ir;
    backend::CudaLoweredProgram cuda;
};

inline LoweredArrays lower_arrays(const std::vector<Array>& arrays,
                                  const backend::CudaLowerOptions& options = {},
                                  const std::vector<Array>& placeholders = {}) {
    std::vector<NodePtr> nodes, inputs;
    for (const Array& a : arrays)
        nodes.push_back(a.node());
    for (const Array& a : placeholders)
        inputs.push_back(a.node());
    LoweredArrays out;
    out.ir = sched::partition(nodes, inputs, sched::partition_options(sched::Target::for_gpu({})));
    out.cuda = backend::lower_cuda(out.ir, options);
    return out;
}

// Prints "skipped: <why>" (visible in the test log) and returns true when `reason` is set.
inline bool skip_because(const std::string& reason) {
    if (reason.empty()) return false;
    MESSAGE("skipped: " << reason);
    std::cout << "skipped: " << reason << "\n";
    return true;
}

inline bool skip_without_nvrtc() {
    return skip_because(backend::cuda::Nvrtc::unavailable_reason().empty()
                            ? ""
                            : "no NVRTC (" + backend::cuda::Nvrtc::unavailable_reason() + ")");
}

inline bool skip_without_device() {
    std::string why = backend::cuda_unavailable_reason();
    return skip_because(why.empty() ? "" : "no CUDA device (" + why + ")");
}

// Bit-for-bit for integers, bools and `exact` floats; otherwise |g - w| <= atol + rtol |w|.
inline void check_same(const HostArray& got, const HostArray& want, bool exact, double rtol = 1e-4,
                       double atol = 1e-5) {
    REQUIRE(got.sizes() == want.sizes());
    REQUIRE(got.dtype() == want.dtype());
    int bad = 0;
    for (std::int64_t i = 0; i < want.size(); ++i) {
        double g = got.flat(i), w = want.flat(i);
        bool ok;
        if (std::isnan(g) || std::isnan(w))
            ok = std::isnan(g) && std::isnan(w);
        else if (!is_float(want.dtype()) || exact)
            ok = g == w;
        else
            ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
        if (!ok && bad++ < 5) {
            INFO("element " << i << ": got " << g << ", want " << w);
            CHECK(ok);
        }
    }
    CHECK(bad == 0);
}

// A deterministic batch of `b` examples of `features` floats in [-1, 1) and labels 0..9.
struct Batch {
    HostArray x, y;
};

inline Batch batch(std::int64_t b, std::int64_t features, unsigned seed) {
    std::vector<float> x(static_cast<std::size_t>(b * features));
    std::vector<std::int32_t> y(static_cast<std::size_t>(b));
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>((i * 7919 + seed * 104729) % 2001) / 1000.0f - 1.0f;
    for (std::size_t i = 0; i < y.size(); ++i)
        y[i] = static_cast<std::int32_t>((i * 7 + seed) % 10);
    return {HostArray::from(x, {b, features}), HostArray::from(y, {b})};
}

} // namespace hedra::test
