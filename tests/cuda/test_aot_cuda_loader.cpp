// The driver loader that hedra-aot embeds into its cuda libraries (aot/runtime/
// cuda_driver_loader.hpp), compiled here as it is and run against the fake driver
// (fake_driver/fake_libcuda.cpp): every required entry point of cuda_driver_entries.def is
// found, a module loads with its functions and embedded data, and each failure gives its code.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "aot/runtime/cuda_driver_loader.hpp"
#include "cuda/fake_driver/fake_driver_path.hpp"

using namespace hedra_aot_cuda;

namespace {

// Sets $HEDRA_CUDA_DRIVER for the scope, restoring what it was.
class DriverPath {
public:
    explicit DriverPath(const std::string& path) {
        if (const char* old = std::getenv("HEDRA_CUDA_DRIVER")) old_ = old, had_ = true;
        setenv("HEDRA_CUDA_DRIVER", path.c_str(), 1);
    }
    ~DriverPath() {
        if (had_)
            setenv("HEDRA_CUDA_DRIVER", old_.c_str(), 1);
        else
            unsetenv("HEDRA_CUDA_DRIVER");
    }

private:
    std::string old_;
    bool had_ = false;
};

// PTX text the fake driver accepts once registered: one entry with one parameter.
const char kPtx[] = ".visible .entry scale(\n.param .u64 scale_param_0\n)\n{\nret;\n}\n";
const char* const kNames[] = {"scale", nullptr};
const unsigned char kData[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const void* const kEmbeddedData[] = {kData, nullptr};
const size_t kEmbeddedBytes[] = {sizeof kData, 0};

} // namespace

TEST_CASE("aot cuda loader: every required entry point of the table, from the fake driver") {
    DriverPath path(hedra::test::fake_driver_path());
    CudaDriverApi api;
    REQUIRE(open_cuda_driver(api));
#define HEDRA_CUDA_DRIVER_ENTRY(name, symbol, older, required, result, parameters)                 \
    if (required) {                                                                                \
        const bool found = api.name != nullptr;                                                    \
        INFO(symbol);                                                                              \
        CHECK(found);                                                                              \
    }
#include "backends/cuda/runtime/cuda_driver_entries.def"
    const bool copy_found = api.cuMemcpyDtoDAsync != nullptr;
    CHECK_FALSE(copy_found); // optional, and the fake has none
}

TEST_CASE("aot cuda loader: the module, its function and its embedded data") {
    void* fake = dlopen(hedra::test::fake_driver_path().c_str(), RTLD_NOW | RTLD_GLOBAL);
    REQUIRE(fake != nullptr);
    auto reg =
        reinterpret_cast<void (*)(const char*, void*)>(dlsym(fake, "hedra_fake_cuda_register"));
    REQUIRE(reinterpret_cast<void*>(reg) != nullptr);
    reg(kPtx, nullptr);
    DriverPath path(hedra::test::fake_driver_path());
    // Static, as a library's are: the loaded driver keeps pointers to them.
    static CUfunction functions[2] = {};
    static CUdeviceptr copies[2] = {};
    const CudaModuleImage module = {kPtx,           kNames, 1,         kEmbeddedData,
                                    kEmbeddedBytes, 1,      functions, copies};
    CudaDriver& d = loaded_cuda_driver(module);
    REQUIRE(d.status == 0);
    CHECK(&loaded_cuda_driver(module) == &d); // loaded once
    CHECK(d.context != nullptr);
    CHECK(d.functions == functions);
    CHECK(functions[0] != nullptr);
    REQUIRE(copies[0] != 0);
    CHECK(std::memcmp(reinterpret_cast<const void*>(copies[0]), kData, sizeof kData) == 0);
    CHECK(d.cuMemFree(copies[0]) == 0);

    // A function the image lacks, and an image the device rejects (not registered).
    const char* const missing[] = {"absent", nullptr};
    CudaDriver other;
    CUfunction slot[2] = {};
    CHECK(load_cuda_driver(other, {kPtx, missing, 1, kEmbeddedData, kEmbeddedBytes, 0, slot,
                                   copies}) == kNoModuleCode);
    const char unknown[] = ".visible .entry other(\n)\n";
    CHECK(load_cuda_driver(other, {unknown, kNames, 0, kEmbeddedData, kEmbeddedBytes, 0, slot,
                                   copies}) == kNoModuleCode);
}

TEST_CASE("aot cuda loader: without a driver library the code says so") {
    DriverPath path("/nonexistent/libcuda.so.1");
    CudaDriver d;
    CUfunction functions[1] = {};
    CUdeviceptr copies[1] = {};
    CHECK(load_cuda_driver(d, {kPtx, kNames, 0, kEmbeddedData, kEmbeddedBytes, 0, functions,
                               copies}) == kNoDriverCode);
}
