// The CUDA source of every test program compiles through NVRTC without errors, with the kernel
// templates (map, contraction, reductions) and with the generic isl mapping, and every launch's
// function is in the PTX. Needs NVRTC but no GPU.
#include <set>

#include "backends/cuda/render/cuda_kernels.hpp"
#include "cuda/cuda_programs.hpp"
#include "cuda/cuda_testing.hpp"

using namespace hedra;

namespace {

void check_compiles(const test::LoweredArrays& l, const std::string& arch) {
    backend::cuda::NvrtcImage image;
    try {
        image = backend::cuda::Nvrtc::instance().compile(l.cuda.source, arch);
    } catch (const Error& e) {
        FAIL(e.what());
    }
    for (const backend::CudaLaunch& launch : l.cuda.launches) {
        INFO(backend::to_string(launch, l.ir));
        CHECK(image.image.find(".entry " + launch.function) != std::string::npos);
    }
}

} // namespace

TEST_CASE("cuda: every test program compiles through NVRTC") {
    if (test::skip_without_nvrtc()) return;
    for (const test::CudaTestProgram& p : test::cuda_test_programs()) {
        CAPTURE(p.name);
        test::LoweredArrays l = test::lower_arrays(p.build());
        CHECK_FALSE(l.cuda.launches.empty());
        check_compiles(l, "compute_90");
    }
}

TEST_CASE("cuda: every test program compiles through NVRTC with the generic isl mapping") {
    if (test::skip_without_nvrtc()) return;
    backend::CudaLowerOptions options;
    options.generic_only = true;
    for (const test::CudaTestProgram& p : test::cuda_test_programs()) {
        CAPTURE(p.name);
        test::LoweredArrays l = test::lower_arrays(p.build(), options);
        for (const backend::CudaLaunch& launch : l.cuda.launches)
            CHECK(launch.strategy.rfind("generic", 0) == 0);
        check_compiles(l, "compute_90");
    }
}

TEST_CASE("cuda: the templates cover the kernel forms of the test programs") {
    std::set<std::string> strategies;
    for (const test::CudaTestProgram& p : test::cuda_test_programs()) {
        test::LoweredArrays l = test::lower_arrays(p.build());
        for (const backend::CudaLaunch& launch : l.cuda.launches) {
            // A reduction of several values over fewer than 32 terms runs on the generic
            // mapping, serially per element; so does
            const poly::Kernel& k = l.ir.kernels.at(static_cast<std::size_t>(launch.kernel));
            auto tuple = sched::tuple_reduction_form(l.ir, k);
            if (launch.strategy == "generic" && tuple && tuple->reduction_size < 32) continue;
            // scatter_add's additions at data-dependent rows: the generic mapping, its loops
            // over the rows' elements in threads.
            if (launch.strategy == "generic" && poly::has_indirect(k)) continue;
            strategies.insert(launch.strategy);
        }
    }
    for (const char* s : {"map", "contraction", "serial_reduction", "block_reduction",
                          "split_partial", "split_final", "tuple_block_reduction"})
        CHECK_MESSAGE(strategies.count(s) == 1, s);
    CHECK(strategies.count("generic") == 0);
}

TEST_CASE("cuda: real-architecture cubins for a few GPU generations") {
    if (test::skip_without_nvrtc()) return;
    auto archs = backend::cuda::Nvrtc::instance().supported_architectures();
    test::LoweredArrays l = test::lower_arrays(test::cuda_test_program("matmul").build());
    for (int a : {80, 90}) {
        if (std::find(archs.begin(), archs.end(), a) == archs.end()) continue;
        CAPTURE(a);
        backend::cuda::NvrtcImage image =
            backend::cuda::Nvrtc::instance().compile(l.cuda.source, "sm_" + std::to_string(a));
        CHECK(image.cubin);
        CHECK(image.image.substr(0, 4) == "\x7f"
                                          "ELF");
    }
}
