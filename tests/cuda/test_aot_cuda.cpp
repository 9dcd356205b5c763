// hedra-aot's cuda target without a GPU: the library built by hedra_add_aot_library(cuda_demo
// ... TARGET cuda) is called in child processes whose $HEDRA_CUDA_DRIVER is the fake driver
// (fake_driver/fake_libcuda.cpp, launches run the CPU emulation of the kernels), or a library
// that does not exist. Its results equal the cuda backend's on the same fake device, bit for bit.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cuda/cuda_testing.hpp"
#include "cuda/emulator.hpp"
#include "cuda_demo.h"
#include "hedra.hpp"

using namespace hedra;

namespace {

std::string text_of(const std::string& path) {
    std::stringstream s;
    s << std::ifstream(path, std::ios::binary).rdbuf();
    return s.str();
}

bool in_aot_child() {
    return std::getenv("HEDRA_AOT_CUDA_CHILD") != nullptr;
}

// Runs test case `name` of this executable in a child whose driver is `driver`.
void run_aot_child(const std::string& name, const std::string& driver) {
    char self[4096] = {0};
    REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
    std::string log = std::filesystem::temp_directory_path() /
                      ("hedra_aot_cuda_" + std::to_string(getpid()) + ".log");
    std::string cmd = "HEDRA_AOT_CUDA_CHILD=1 HEDRA_CUDA_DRIVER=" + driver +
                      " HEDRA_CUDA_ARCH=compute_90 " + self + " --test-case='" + name + "' > " +
                      log + " 2>&1";
    int rc = std::system(cmd.c_str());
    INFO(text_of(log));
    CHECK(rc == 0);
    CHECK(text_of(log).find("Status: SUCCESS") != std::string::npos);
}

using Register = void (*)(const char*, void*);
using Alloc = int (*)(unsigned long long*, std::size_t);
using Free = int (*)(unsigned long long);
using Counters = void (*)(std::uint64_t*, std::uint64_t*, std::uint64_t*, std::uint64_t*);

void* fake_driver() {
    static void* handle = dlopen(HEDRA_FAKE_CUDA_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    REQUIRE(handle != nullptr);
    return handle;
}

// The fake device's allocations not freed yet.
std::uint64_t live_allocations() {
    std::uint64_t launches = 0, h2d = 0, d2h = 0, live = 0;
    reinterpret_cast<Counters>(dlsym(fake_driver(), "hedra_fake_cuda_counters"))(&launches, &h2d,
                                                                                 &d2h, &live);
    return live;
}

// `values` in the fake device's memory (host memory it hands out), freed with the object as a
// caller frees the device arrays it passes to the library.
class DeviceFloats {
public:
    explicit DeviceFloats(const std::vector<float>& values) {
        auto alloc = reinterpret_cast<Alloc>(dlsym(fake_driver(), "cuMemAlloc_v2"));
        unsigned long long p = 0;
        REQUIRE(alloc(&p, values.size() * sizeof(float)) == 0);
        data_ = reinterpret_cast<float*>(p);
        std::copy(values.begin(), values.end(), data_);
    }
    ~DeviceFloats() {
        auto free = reinterpret_cast<Free>(dlsym(fake_driver(), "cuMemFree_v2"));
        free(reinterpret_cast<unsigned long long>(data_));
    }
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;
    float* get() const { return data_; }

private:
    float* data_ = nullptr;
};

} // namespace

TEST_CASE("aot cuda: the library through the fake driver equals the cuda backend bit for bit") {
    if (!in_aot_child())
        return run_aot_child(
            "aot cuda: the library through the fake driver equals the cuda backend bit for bit",
            HEDRA_FAKE_CUDA_LIBRARY);
    if (test::skip_without_nvrtc()) return;
    if (test::skip_because(test::emulation_compiler().empty() ? "no host C++ compiler" : ""))
        return;
    const std::string dir = HEDRA_AOT_CUDA_DEMO_DIR;
    auto reg = reinterpret_cast<Register>(dlsym(fake_driver(), "hedra_fake_cuda_register"));
    reg(text_of(dir + "/cuda_demo.ptx").c_str(),
        test::emulation_library(text_of(dir + "/cuda_demo.program.cu")));

    std::vector<float> x(8 * 16), w(16 * 4);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = 0.125f * static_cast<float>(i % 13) - 0.7f;
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = 0.25f * static_cast<float>(i % 7) - 0.6f;
    // cuda_demo embeds no data: once the caller has freed its arrays, no device memory is left,
    // neither what the first call loads for the life of the process nor a call's workspace.
    const std::uint64_t live_before = live_allocations();
    std::vector<float> y(8 * 4), total(1);
    {
        DeviceFloats x_device(x), w_device(w), y_device(std::vector<float>(8 * 4, -1.0f)),
            total_device({0.0f});
        for (int call = 0; call < 2; ++call)
            REQUIRE(cuda_demo_c(x_device.get(), w_device.get(), y_device.get(), total_device.get(),
                                nullptr, nullptr) == 0);
        std::copy(y_device.get(), y_device.get() + y.size(), y.begin());
        total[0] = *total_device.get();
    }
    CHECK(live_allocations() == live_before);

    Array xp = placeholder(Shape::of({8, 16}), DType::F32, "x");
    Array wp = placeholder(Shape::of({16, 4}), DType::F32, "w");
    ComputeOptions cuda;
    cuda.backend = "cuda";
    CompiledProgram backend =
        compile({lazy([](auto v) { return max(v, 0.0f); }, matmul(xp, wp)), sum(xp, {0, 1})},
                {xp, wp}, cuda);
    auto want = backend({HostArray::from(x, {8, 16}), HostArray::from(w, {16, 4})});
    auto want_y = want[0].values<float>();
    CHECK(std::equal(want_y.begin(), want_y.end(), y.begin()));
    CHECK(want[1].values<float>()[0] == total[0]);
}

TEST_CASE("aot cuda: without a driver the library returns an error that says so") {
    if (!in_aot_child())
        return run_aot_child("aot cuda: without a driver the library returns an error that says so",
                             "/nonexistent/libcuda.so.1");
    float dummy[64] = {};
    const int code = cuda_demo_c(dummy, dummy, dummy, dummy, nullptr, nullptr);
    CHECK(code == 3);
    CHECK(std::string(cuda_demo_error_message(code)).find("cannot load the CUDA driver") == 0);
    CHECK_THROWS_WITH(
        hedra_aot::cuda_demo(dummy, dummy, dummy, dummy),
        "cuda_demo: cannot load the CUDA driver (libcuda.so.1, or $HEDRA_CUDA_DRIVER)");
}
