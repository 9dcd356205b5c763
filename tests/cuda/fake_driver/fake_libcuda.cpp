// A fake CUDA driver (libcuda's entry points that hedra calls) for testing the cuda backend's
// run-time path on machines without a GPU: "device memory" is host memory, copies are memcpy,
// and a launch runs the kernel through the CPU emulation of its CUDA source (tests/cuda/
// emulator.hpp), which the test registers for the PTX image it expects the backend to load.
// It checks what a real driver would reject: pointers that are not live allocations, copies
// out of bounds, launches of functions the module lacks, more than 1024 threads per block.
// Stream capture records the launches and copies made on the stream instead of running them
// (with the kernel arguments' values, as the driver copies them); cuGraphLaunch replays them in
// order. During a capture it refuses what a real driver refuses (allocating, freeing and
// synchronizing), and copies captured to or from host memory must use pinned memory
// (cuMemHostAlloc), which is what keeps such copies asynchronous on a device.
// Loaded by the backend through $HEDRA_CUDA_DRIVER (see tests/cuda/test_fake_driver.cpp).
#include <chrono>
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Function;
struct Module {
    std::string ptx;
    void* emulation = nullptr;                        // dlopen handle of the emulated kernels
    std::vector<std::unique_ptr<Function>> functions; // owned, as a real module's are
};
struct Function {
    Module* module;
    std::string name;
    int params;
};

// A launch or a copy made on a capturing stream, as a graph replays it.
struct Operation {
    enum class Kind { Launch, HostToDevice, DeviceToHost } kind;
    Function* function = nullptr;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    std::vector<CUdeviceptr> args;
    CUdeviceptr device = 0;
    void* host = nullptr;
    std::size_t bytes = 0;
};
struct Graph {
    std::vector<Operation> operations;
};

std::mutex g_mutex;
std::map<std::uintptr_t, std::size_t> g_allocations; // address -> bytes
std::map<std::uintptr_t, std::size_t> g_pinned;      // cuMemHostAlloc'ed address -> bytes
std::map<std::string, void*> g_emulations;           // PTX -> emulation library
std::uint64_t g_launches = 0, g_h2d = 0, g_d2h = 0;
std::uint64_t g_h2d_bytes = 0, g_graphs = 0, g_graph_launches = 0;
std::atomic<bool> g_capturing{false};
std::vector<Operation> g_captured;
int g_context = 0, g_stream = 0;
// HEDRA_FAKE_CUDA_NOOP=1: any module loads and launches only check their arguments, so that
// what remains is the backend's own host time per launch (docs/cuda.md, "Host time per step").
const bool g_noop = std::getenv("HEDRA_FAKE_CUDA_NOOP") != nullptr;

bool in_allocation(std::uintptr_t p, std::size_t bytes) {
    auto it = g_allocations.upper_bound(p);
    if (it == g_allocations.begin()) return false;
    --it;
    return p >= it->first && p + bytes <= it->first + it->second;
}

bool in_pinned(const void* host, std::size_t bytes) {
    auto p = reinterpret_cast<std::uintptr_t>(host);
    auto it = g_pinned.upper_bound(p);
    if (it == g_pinned.begin()) return false;
    --it;
    return p >= it->first && p + bytes <= it->first + it->second;
}

// The copies and the launch, run now (g_mutex held by the caller for the copies).
CUresult copy_to_device(CUdeviceptr dst, const void* src, std::size_t n) {
    if (!in_allocation(static_cast<std::uintptr_t>(dst), n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(reinterpret_cast<void*>(dst), src, n);
    ++g_h2d;
    g_h2d_bytes += n;
    return CUDA_SUCCESS;
}

CUresult copy_to_host(void* dst, CUdeviceptr src, std::size_t n) {
    if (!in_allocation(static_cast<std::uintptr_t>(src), n)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(dst, reinterpret_cast<void*>(src), n);
    ++g_d2h;
    return CUDA_SUCCESS;
}

CUresult run_kernel(Function* fn, const unsigned* grid, const unsigned* block,
                    const std::vector<CUdeviceptr>& values) {
    std::vector<void*> args;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        for (CUdeviceptr p : values) {
            if (p != 0 && !in_allocation(static_cast<std::uintptr_t>(p), 1))
                return CUDA_ERROR_ILLEGAL_ADDRESS;
            args.push_back(reinterpret_cast<void*>(p));
        }
        ++g_launches;
    }
    if (g_noop) return CUDA_SUCCESS;
    using Launcher = void (*)(void (*)(void**), void**, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned);
    auto launch = reinterpret_cast<Launcher>(dlsym(fn->module->emulation, "hd_emu_launch"));
    auto kernel = reinterpret_cast<void (*)(void**)>(
        dlsym(fn->module->emulation, (fn->name + "_emu").c_str()));
    if (!launch || !kernel) return CUDA_ERROR_NOT_FOUND;
    launch(kernel, args.data(), grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    return CUDA_SUCCESS;
}

} // namespace

extern "C" {

// Test hooks (not driver API).
void hedra_fake_cuda_register(const char* ptx, void* emulation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_emulations[ptx] = emulation;
}
void hedra_fake_cuda_counters(std::uint64_t* launches, std::uint64_t* h2d, std::uint64_t* d2h,
                              std::uint64_t* live_allocations) {
    std::lock_guard<std::mutex> lock(g_mutex);
    *launches = g_launches;
    *h2d = g_h2d;
    *d2h = g_d2h;
    *live_allocations = g_allocations.size();
}
void hedra_fake_cuda_graph_counters(std::uint64_t* graphs, std::uint64_t* graph_launches,
                                    std::uint64_t* h2d_bytes) {
    std::lock_guard<std::mutex> lock(g_mutex);
    *graphs = g_graphs;
    *graph_launches = g_graph_launches;
    *h2d_bytes = g_h2d_bytes;
}

CUresult cuInit(unsigned) {
    return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int* v) {
    *v = 13000;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int* n) {
    *n = 1;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
    *d = ordinal;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
    std::strncpy(name, "hedra fake device", static_cast<std::size_t>(len));
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *v = 49152;
        break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *v = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *v = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *v = 2147483647;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        *v = 65535;
        break;
    default:
        *v = 0;
    }
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
    *c = reinterpret_cast<CUcontext>(&g_context);
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
    return c == reinterpret_cast<CUcontext>(&g_context) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
CUresult cuMemAlloc(CUdeviceptr* p, std::size_t bytes) {
    if (g_capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    void* m = std::malloc(bytes);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    std::memset(m, 0xcd, bytes);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_allocations[reinterpret_cast<std::uintptr_t>(m)] = bytes;
    *p = reinterpret_cast<CUdeviceptr>(m);
    return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (!g_allocations.erase(static_cast<std::uintptr_t>(p))) return CUDA_ERROR_INVALID_VALUE;
    std::free(reinterpret_cast<void*>(p));
    return CUDA_SUCCESS;
}
CUresult cuMemGetInfo(std::size_t* free, std::size_t* total) {
    *free = *total = std::size_t(1) << 34;
    return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void** p, std::size_t bytes, unsigned) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    void* m = std::malloc(bytes);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    g_pinned[reinterpret_cast<std::uintptr_t>(m)] = bytes;
    *p = m;
    return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void* p) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (!g_pinned.erase(reinterpret_cast<std::uintptr_t>(p))) return CUDA_ERROR_INVALID_VALUE;
    std::free(p);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, std::size_t n, CUstream) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_capturing) {
        if (!in_pinned(src, n) || !in_allocation(static_cast<std::uintptr_t>(dst), n))
            return CUDA_ERROR_INVALID_VALUE;
        Operation op{Operation::Kind::HostToDevice};
        op.device = dst;
        op.host = const_cast<void*>(src);
        op.bytes = n;
        g_captured.push_back(op);
        return CUDA_SUCCESS;
    }
    return copy_to_device(dst, src, n);
}
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, std::size_t n, CUstream) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_capturing) {
        if (!in_pinned(dst, n) || !in_allocation(static_cast<std::uintptr_t>(src), n))
            return CUDA_ERROR_INVALID_VALUE;
        Operation op{Operation::Kind::DeviceToHost};
        op.device = src;
        op.host = dst;
        op.bytes = n;
        g_captured.push_back(op);
        return CUDA_SUCCESS;
    }
    return copy_to_host(dst, src, n);
}
CUresult cuStreamCreate(CUstream* s, unsigned) {
    *s = reinterpret_cast<CUstream>(&g_stream);
    return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream) {
    return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) {
    return g_capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream) { // launches run when made: nothing is ever pending
    return g_capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}
CUresult cuStreamBeginCapture(CUstream, CUstreamCaptureMode) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_capturing) return CUDA_ERROR_ILLEGAL_STATE;
    g_capturing = true;
    g_captured.clear();
    return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream, CUgraph* graph) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_capturing) return CUDA_ERROR_ILLEGAL_STATE;
    g_capturing = false;
    *graph = reinterpret_cast<CUgraph>(new Graph{std::move(g_captured)});
    g_captured.clear();
    return CUDA_SUCCESS;
}
CUresult cuGraphInstantiate(CUgraphExec* exec, CUgraph graph, unsigned long long) {
    std::lock_guard<std::mutex> lock(g_mutex);
    *exec = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph*>(graph)));
    ++g_graphs;
    return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph graph) {
    delete reinterpret_cast<Graph*>(graph);
    return CUDA_SUCCESS;
}
CUresult cuGraphExecDestroy(CUgraphExec exec) {
    delete reinterpret_cast<Graph*>(exec);
    return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec exec, CUstream) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        ++g_graph_launches;
    }
    for (const Operation& op : reinterpret_cast<Graph*>(exec)->operations) {
        CUresult r = CUDA_SUCCESS;
        if (op.kind == Operation::Kind::Launch) {
            r = run_kernel(op.function, op.grid, op.block, op.args);
        } else {
            std::lock_guard<std::mutex> lock(g_mutex);
            r = op.kind == Operation::Kind::HostToDevice
                    ? copy_to_device(op.device, op.host, op.bytes)
                    : copy_to_host(op.host, op.device, op.bytes);
        }
        if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned, CUjit_option*, void**) {
    std::string ptx(static_cast<const char*>(image));
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_emulations.find(ptx);
    if (it == g_emulations.end() && !g_noop) return CUDA_ERROR_INVALID_IMAGE; // not registered
    *m = reinterpret_cast<CUmodule>(
        new Module{ptx, it == g_emulations.end() ? nullptr : it->second, {}});
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
    delete reinterpret_cast<Module*>(m);
    return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
    auto* mod = reinterpret_cast<Module*>(m);
    std::string entry = std::string(".entry ") + name + "(";
    if (mod->ptx.find(entry) == std::string::npos) return CUDA_ERROR_NOT_FOUND;
    int params = 0;
    std::string tag = std::string(name) + "_param_";
    for (std::size_t at = mod->ptx.find(tag); at != std::string::npos;
         at = mod->ptx.find(tag, at + 1))
        params = std::max(params, std::atoi(mod->ptx.c_str() + at + tag.size()) + 1);
    mod->functions.push_back(std::make_unique<Function>(Function{mod, name, params}));
    *f = reinterpret_cast<CUfunction>(mod->functions.back().get());
    return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream, void** params,
                        void** extra) {
    auto* fn = reinterpret_cast<Function*>(f);
    if (gx == 0 || gy == 0 || gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024 || gy > 65535 ||
        gz > 65535 || shared != 0 || extra)
        return CUDA_ERROR_INVALID_VALUE;
    std::vector<CUdeviceptr> values;
    for (int i = 0; i < fn->params; ++i)
        values.push_back(*static_cast<CUdeviceptr*>(params[i]));
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_capturing) {
            Operation op{Operation::Kind::Launch};
            op.function = fn;
            std::copy(grid, grid + 3, op.grid);
            std::copy(block, block + 3, op.block);
            op.args = std::move(values);
            g_captured.push_back(std::move(op));
            return CUDA_SUCCESS;
        }
    }
    return run_kernel(fn, grid, block, values);
}
// Events hold the host time they were recorded at (fake launches run synchronously).
CUresult cuEventCreate(CUevent* e, unsigned) {
    *e = reinterpret_cast<CUevent>(new double(0));
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
    delete reinterpret_cast<double*>(e);
    return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream) {
    *reinterpret_cast<double*>(e) = std::chrono::duration<double, std::milli>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count();
    return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent) {
    return g_capturing ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent stop) {
    *ms = static_cast<float>(*reinterpret_cast<double*>(stop) - *reinterpret_cast<double*>(start));
    return CUDA_SUCCESS;
}
CUresult cuGetErrorName(CUresult r, const char** name) {
    static thread_local std::string s;
    s = "CUDA_ERROR_" + std::to_string(static_cast<int>(r));
    *name = s.c_str();
    return CUDA_SUCCESS;
}

} // extern "C"
