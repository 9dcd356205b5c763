// The dlopen'ed CUDA driver API and its RAII handles (see cuda_driver.hpp).
#include "backends/cuda/runtime/cuda_driver.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cuda.h>
#include <dlfcn.h>
#include <mutex>
#include <type_traits>
#include <vector>

#include "core/error.hpp"

namespace hedra::backend::cuda {

namespace {

// The driver entry points (cuda_driver_entries.def, the table hedra-aot's loader is made from
// too), each checked against cuda.h's declaration.
struct Api {
#define HEDRA_CUDA_DRIVER_ENTRY(name, symbol, older, required, result, parameters)                 \
    result(*name) parameters = nullptr;                                                            \
    static_assert(std::is_same_v<decltype(&::name), result(*) parameters>,                         \
                  "cuda_driver_entries.def: " symbol " differs from cuda.h's declaration");
#include "backends/cuda/runtime/cuda_driver_entries.def"
};

Api g_api;
std::atomic<bool> g_alive{false};
Device* g_device = nullptr;
std::string g_reason;
std::once_flag g_once;

std::string error_name(CUresult r) {
    const char* name = nullptr;
    if (g_api.cuGetErrorName && g_api.cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
    return "CUDA error " + std::to_string(static_cast<int>(r));
}

void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) throw Error(std::string("cuda: ") + what + " failed: " + error_name(r));
}

// Loads libcuda and initialises device `ordinal`; returns why not, or "" on success.
std::string initialise(Device& d) {
    const char* env = std::getenv("HEDRA_CUDA_DRIVER"); // another driver library (tests)
    std::string path = env && *env ? env : "libcuda.so.1";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        const char* e = dlerror();
        return path + " cannot be loaded (" + std::string(e ? e : "unknown") + ")";
    }
#define HEDRA_CUDA_DRIVER_ENTRY(name, symbol, older, required, result, parameters)                 \
    g_api.name = reinterpret_cast<decltype(g_api.name)>(dlsym(lib, symbol));                       \
    if (const char* alt = older; !g_api.name && alt)                                               \
        g_api.name = reinterpret_cast<decltype(g_api.name)>(dlsym(lib, alt));                      \
    if (!g_api.name && (required)) return path + " lacks " + symbol;
#include "backends/cuda/runtime/cuda_driver_entries.def"
    if (CUresult r = g_api.cuInit(0); r != CUDA_SUCCESS) return "cuInit failed: " + error_name(r);
    int count = 0;
    if (CUresult r = g_api.cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0)
        return "the driver reports no device";
    if (const char* env = std::getenv("HEDRA_CUDA_DEVICE")) d.ordinal = std::atoi(env);
    if (d.ordinal < 0 || d.ordinal >= count)
        return "HEDRA_CUDA_DEVICE=" + std::to_string(d.ordinal) + " but there are " +
               std::to_string(count) + " devices";
    CUdevice dev = 0;
    if (CUresult r = g_api.cuDeviceGet(&dev, d.ordinal); r != CUDA_SUCCESS)
        return "cuDeviceGet failed: " + error_name(r);
    char name[256] = {0};
    g_api.cuDeviceGetName(name, sizeof name - 1, dev);
    d.name = name;
    auto attr = [&](CUdevice_attribute a) {
        int v = 0;
        g_api.cuDeviceGetAttribute(&v, a, dev);
        return v;
    };
    d.compute_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.compute_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.shared_memory_per_block =
        static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    d.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    d.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d.max_grid_x = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    d.max_grid_y = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    d.max_grid_z = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    g_api.cuDriverGetVersion(&d.driver_version);
    CUcontext ctx = nullptr;
    if (CUresult r = g_api.cuDevicePrimaryCtxRetain(&ctx, dev); r != CUDA_SUCCESS)
        return "cuDevicePrimaryCtxRetain failed: " + error_name(r);
    d.context = ctx;
    std::atexit([] { g_alive = false; });
    g_alive = true;
    return "";
}

} // namespace

bool driver_alive() {
    return g_alive.load();
}

std::string Device::unavailable_reason() {
    std::call_once(g_once, [] {
        Device* d = new Device(); // leaked on purpose: no driver calls at exit
        g_reason = initialise(*d);
        if (g_reason.empty()) {
            g_device = d;
        } else {
            delete d;
        }
    });
    return g_reason;
}

Device& Device::instance() {
    std::string reason = unavailable_reason();
    if (!reason.empty()) throw Error("no CUDA device: " + reason);
    return *g_device;
}

void Device::make_current() const {
    check(g_api.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
}

std::string Device::architecture() const {
    return "sm_" + std::to_string(compute_major) + std::to_string(compute_minor);
}

sched::GpuTarget Device::target(sched::GpuTarget base) const {
    if (multiprocessors > 0) base.multiprocessors = multiprocessors;
    if (warp_size > 0) base.warp_size = warp_size;
    if (max_threads_per_block > 0) base.max_threads_per_block = max_threads_per_block;
    if (max_grid_x > 0) base.max_grid_x = max_grid_x;
    if (max_grid_y > 0) base.max_grid_y = max_grid_y;
    if (max_grid_z > 0) base.max_grid_z = max_grid_z;
    if (compute_major > 0) base.compute_capability = compute_major * 10 + compute_minor;
    if (shared_memory_per_block > 0)
        base.shared_memory_per_block =
            std::min(base.shared_memory_per_block, shared_memory_per_block);
    return base;
}

DevicePtr raw_allocate(std::size_t bytes) {
    DevicePtr p = 0;
    if (!try_raw_allocate(bytes, p)) {
        auto [free, total] = memory_info();
        throw Error("cuda: out of device memory allocating " + std::to_string(bytes) + " bytes (" +
                    std::to_string(free) + " of " + std::to_string(total) + " bytes free)");
    }
    return p;
}

bool try_raw_allocate(std::size_t bytes, DevicePtr& out) {
    CUdeviceptr p = 0;
    CUresult r = g_api.cuMemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return false;
    check(r, "cuMemAlloc");
    out = p;
    return true;
}

void raw_free(DevicePtr p) {
    if (p && driver_alive()) g_api.cuMemFree(static_cast<CUdeviceptr>(p));
}

std::array<std::size_t, 2> memory_info() {
    std::size_t free = 0, total = 0;
    g_api.cuMemGetInfo(&free, &total);
    return {free, total};
}

Stream::Stream() {
    CUstream s = nullptr;
    check(g_api.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    stream_ = s;
}

Stream::~Stream() {
    if (stream_ && driver_alive()) g_api.cuStreamDestroy(static_cast<CUstream>(stream_));
}

void Stream::synchronize() const {
    check(g_api.cuStreamSynchronize(static_cast<CUstream>(stream_)), "cuStreamSynchronize");
}

bool Stream::query() const {
    const CUresult r = g_api.cuStreamQuery(static_cast<CUstream>(stream_));
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(r, "cuStreamQuery");
    return true;
}

void Stream::copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) const {
    if (bytes == 0) return;
    check(g_api.cuMemcpyHtoDAsync(static_cast<CUdeviceptr>(dst), src, bytes,
                                  static_cast<CUstream>(stream_)),
          "cuMemcpyHtoDAsync");
}

void Stream::copy_to_host(void* dst, DevicePtr src, std::size_t bytes) const {
    if (bytes == 0) return;
    check(g_api.cuMemcpyDtoHAsync(dst, static_cast<CUdeviceptr>(src), bytes,
                                  static_cast<CUstream>(stream_)),
          "cuMemcpyDtoHAsync");
}

Module::Module(const std::string& image) {
    std::vector<char> log(16384, '\0');
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
    CUmodule m = nullptr;
    CUresult r = g_api.cuModuleLoadDataEx(&m, image.c_str(), 2, opts, values);
    if (r != CUDA_SUCCESS)
        throw Error("cuda: cannot load the compiled kernels (" + error_name(r) +
                    "): " + std::string(log.data()));
    module_ = m;
}

Module::~Module() {
    if (module_ && driver_alive()) g_api.cuModuleUnload(static_cast<CUmodule>(module_));
}

void* Module::function(const std::string& name) const {
    CUfunction f = nullptr;
    check(g_api.cuModuleGetFunction(&f, static_cast<CUmodule>(module_), name.c_str()),
          ("cuModuleGetFunction(" + name + ")").c_str());
    return f;
}

Event::Event() {
    CUevent e = nullptr;
    check(g_api.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    event_ = e;
}

Event::~Event() {
    if (event_ && driver_alive()) g_api.cuEventDestroy(static_cast<CUevent>(event_));
}

void Event::record(const Stream& stream) {
    check(g_api.cuEventRecord(static_cast<CUevent>(event_), static_cast<CUstream>(stream.get())),
          "cuEventRecord");
}

void Event::synchronize() const {
    check(g_api.cuEventSynchronize(static_cast<CUevent>(event_)), "cuEventSynchronize");
}

float Event::milliseconds_since(const Event& start) const {
    check(g_api.cuEventSynchronize(static_cast<CUevent>(event_)), "cuEventSynchronize");
    float ms = 0;
    check(g_api.cuEventElapsedTime(&ms, static_cast<CUevent>(start.event_),
                                   static_cast<CUevent>(event_)),
          "cuEventElapsedTime");
    return ms;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    check(g_api.cuMemHostAlloc(&data_, bytes, 0), "cuMemHostAlloc");
}

PinnedBuffer::~PinnedBuffer() {
    if (data_ && driver_alive()) g_api.cuMemFreeHost(data_);
}

bool Graph::available() {
    return g_api.cuMemHostAlloc && g_api.cuMemFreeHost && g_api.cuStreamBeginCapture &&
           g_api.cuStreamEndCapture && g_api.cuGraphInstantiate && g_api.cuGraphLaunch &&
           g_api.cuGraphExecDestroy && g_api.cuGraphDestroy;
}

Graph::Graph(const Stream& stream, const std::function<void()>& enqueue) {
    auto s = static_cast<CUstream>(stream.get());
    // Thread-local: other threads may allocate or synchronize meanwhile (deferred downloads).
    check(g_api.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    CUgraph graph = nullptr;
    try {
        enqueue();
    } catch (...) {
        g_api.cuStreamEndCapture(s, &graph); // the stream leaves capture mode either way
        if (graph) g_api.cuGraphDestroy(graph);
        throw;
    }
    check(g_api.cuStreamEndCapture(s, &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    CUresult r = g_api.cuGraphInstantiate(&exec, graph, 0);
    g_api.cuGraphDestroy(graph); // the instantiated graph does not need it
    check(r, "cuGraphInstantiate");
    exec_ = exec;
}

Graph::~Graph() {
    if (exec_ && driver_alive()) g_api.cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
}

void Graph::launch(const Stream& stream) const {
    check(g_api.cuGraphLaunch(static_cast<CUgraphExec>(exec_), static_cast<CUstream>(stream.get())),
          "cuGraphLaunch");
}

void launch(void* function, const std::array<unsigned, 3>& grid,
            const std::array<unsigned, 3>& block, const Stream& stream, DevicePtr* args,
            std::size_t num_args) {
    std::vector<void*> params(num_args);
    for (std::size_t i = 0; i < num_args; ++i)
        params[i] = &args[i];
    check(g_api.cuLaunchKernel(static_cast<CUfunction>(function), grid[0], grid[1], grid[2],
                               block[0], block[1], block[2], 0, static_cast<CUstream>(stream.get()),
                               params.data(), nullptr),
          "cuLaunchKernel");
}

} // namespace hedra::backend::cuda
