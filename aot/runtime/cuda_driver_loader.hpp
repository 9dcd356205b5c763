// The CUDA driver loader of hedra-aot's cuda libraries: libcuda opened with dlopen (so a library
// links no CUDA and needs no toolkit), its entry points (cuda_driver_entries.def, the table the
// cuda backend's loader is made from too), device 0's primary context (the CUDA runtime's), and
// one module: the library's kernels, their functions and the data it embeds, uploaded once.
// hedra-aot embeds this file's text, with its two includes in place, into every generated
// <name>.cpp (aot/CMakeLists.txt makes the text at configure time), so a library is
// self-contained: it needs neither hedra nor its install tree. The repository compiles it as it
// is in tests/cuda/test_aot_cuda_loader.cpp, against the fake driver. C++17 (the generated
// code's standard); its definitions have internal linkage, so each library has its own copy.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <mutex>

#include "aot/runtime/cuda_status.hpp"

namespace hedra_aot_cuda {
namespace {

// The driver API's types, as the ABI passes them (no cuda.h here).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUevent = void*;
using CUjit_option = int;
using CUdevice_attribute = int;
using CUgraph = void*;
using CUgraphExec = void*;
using CUstreamCaptureMode = int;
using std::size_t;

// The driver's entry points; optional ones may be null.
struct CudaDriverApi {
#define HEDRA_CUDA_DRIVER_ENTRY(name, symbol, older, required, result, parameters)                 \
    result(*name) parameters = nullptr;
#include "backends/cuda/runtime/cuda_driver_entries.def"
};

// A library's kernels: the image (PTX text or a cubin), the functions it launches and the data
// it embeds, with room for their handles.
struct CudaModuleImage {
    const void* image;
    const char* const* function_names;
    int functions;
    const void* const* embedded_data;
    const size_t* embedded_bytes;
    int embedded;
    CUfunction* function_handles; // `functions` of them
    CUdeviceptr* embedded_copies; // `embedded` of them: the data's device copies
};

// The loaded driver and module: status is 0 or why they could not be loaded.
struct CudaDriver : CudaDriverApi {
    CUcontext context = nullptr;
    CUfunction* functions = nullptr;
    CUdeviceptr* embedded = nullptr;
    int status = 0;
};

// Opens $HEDRA_CUDA_DRIVER (tests) or libcuda.so.1 (kept open for the process) and fills `api`;
// false when the library or a required entry point is missing.
bool open_cuda_driver(CudaDriverApi& api) {
    const char* path = std::getenv("HEDRA_CUDA_DRIVER");
    void* lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
#define HEDRA_CUDA_DRIVER_ENTRY(name, symbol, older, required, result, parameters)                 \
    api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, symbol));                           \
    if (const char* alt = older; !api.name && alt)                                                 \
        api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, alt));                          \
    if (!api.name && required) return false;
#include "backends/cuda/runtime/cuda_driver_entries.def"
    return true;
}

// Loads the driver, device 0's primary context and `module` into `d`; 0 or a status code.
int load_cuda_driver(CudaDriver& d, const CudaModuleImage& module) {
    d.functions = module.function_handles;
    d.embedded = module.embedded_copies;
    if (!open_cuda_driver(d)) return kNoDriverCode;
    CUdevice device = 0;
    if (d.cuInit(0) || d.cuDeviceGet(&device, 0) || d.cuDevicePrimaryCtxRetain(&d.context, device))
        return kNoDeviceCode;
    if (d.cuCtxSetCurrent(d.context)) return kDriverCallCode;
    CUmodule loaded = nullptr;
    if (d.cuModuleLoadDataEx(&loaded, module.image, 0, nullptr, nullptr)) return kNoModuleCode;
    for (int f = 0; f < module.functions; ++f)
        if (d.cuModuleGetFunction(&d.functions[f], loaded, module.function_names[f])) {
            d.cuModuleUnload(loaded);
            return kNoModuleCode;
        }
    for (int e = 0; e < module.embedded; ++e)
        if (d.cuMemAlloc(&d.embedded[e], module.embedded_bytes[e]) ||
            d.cuMemcpyHtoDAsync(d.embedded[e], module.embedded_data[e], module.embedded_bytes[e],
                                nullptr) ||
            d.cuStreamSynchronize(nullptr))
            return kDriverCallCode;
    return 0;
}

// The driver with `module` loaded, on first use (thread-safe); a library has one module.
CudaDriver& loaded_cuda_driver(const CudaModuleImage& module) {
    static CudaDriver d;
    static std::once_flag once;
    std::call_once(once, [&] { d.status = load_cuda_driver(d, module); });
    return d;
}

} // namespace
} // namespace hedra_aot_cuda
