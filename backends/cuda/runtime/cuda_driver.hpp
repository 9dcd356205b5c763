// The CUDA driver API, opened with dlopen("libcuda.so.1") on first use, so hedra builds and runs
// on machines without a driver or a GPU; only cuda_driver.cpp includes <cuda.h>. RAII handles
// for what hedra owns (stream, module, device and pinned memory, events, graphs); the context
// is the device's primary context (the one the CUDA runtime, cuBLAS and PyTorch use, so pointers
// can be shared with them in benchmarks). Every driver error becomes a hedra::Error naming the
// call and CUDA's error name. At process exit, destructors stop calling the driver (it may
// already be gone).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "scheduler/target.hpp"

namespace hedra::backend::cuda {

using DevicePtr = std::uint64_t; // CUdeviceptr

// The device hedra runs on ($HEDRA_CUDA_DEVICE, default 0), with its primary context.
class Device {
public:
    // The device, initialising the driver on first call. Throws hedra::Error starting with
    // "no CUDA device" (and the reason: no libcuda, cuInit failed, no device) when there is none.
    static Device& instance();
    // Why there is no device ("" when there is one). Never throws.
    static std::string unavailable_reason();

    // Makes the primary context current on the calling thread.
    void make_current() const;

    int ordinal = 0;
    std::string name;
    int compute_major = 0, compute_minor = 0;
    int multiprocessors = 0;
    std::size_t shared_memory_per_block = 0;
    int warp_size = 0, max_threads_per_block = 0; // 0: the driver did not say
    int max_grid_x = 0, max_grid_y = 0, max_grid_z = 0;
    int driver_version = 0; // e.g. 13000

    void* context = nullptr; // CUcontext: the primary context, retained for the process

    // "sm_90" for compute capability 9.0.
    std::string architecture() const;
    // The machine facts the GPU mapping passes read: `base`'s, with what the device reports
    // instead (multiprocessors, warp size, threads per block, grid dimensions; shared memory per
    // block at most the device's).
    sched::GpuTarget target(sched::GpuTarget base = {}) const;

private:
    Device() = default;
};

// False once the process has started to exit: handles then leak instead of calling the driver.
bool driver_alive();

// Device memory straight from the driver (no caching: see device_allocator.hpp).
DevicePtr raw_allocate(std::size_t bytes); // throws hedra::Error on failure (out of memory)
bool try_raw_allocate(std::size_t bytes, DevicePtr& out);
void raw_free(DevicePtr p);
// (free, total) bytes of the device.
std::array<std::size_t, 2> memory_info();

class Stream {
public:
    Stream();
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    void* get() const { return stream_; }
    void synchronize() const;
    bool query() const; // whether all the work queued so far has finished
    void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes) const;
    void copy_to_host(void* dst, DevicePtr src, std::size_t bytes) const;

private:
    void* stream_ = nullptr; // CUstream
};

// A loaded PTX or cubin image.
class Module {
public:
    // Throws hedra::Error with the driver's JIT log when the image does not load.
    explicit Module(const std::string& image);
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    void* function(const std::string& name) const; // CUfunction; throws if absent

private:
    void* module_ = nullptr; // CUmodule
};

// A timing event on a stream (benchmarks).
class Event {
public:
    Event();
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    void record(const Stream& stream);
    void synchronize() const; // waits for the work recorded before it
    // Waits for this event; the time between `start` and it.
    float milliseconds_since(const Event& start) const;

private:
    void* event_ = nullptr; // CUevent
};

// Page-locked host memory (cuMemHostAlloc): copies between it and the device run asynchronously
// and can be captured into a graph, as copies from ordinary (pageable) memory cannot.
class PinnedBuffer {
public:
    explicit PinnedBuffer(std::size_t bytes); // bytes > 0
    ~PinnedBuffer();
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    void* get() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// A CUDA graph: the work that `enqueue` puts on `stream`, captured once (nothing runs then) and
// instantiated; launch() replays all of it with one driver call. `enqueue` must not allocate,
// free or synchronize (the driver rejects that during a capture).
class Graph {
public:
    // Whether the driver has the graph and pinned-memory entry points.
    static bool available();
    Graph(const Stream& stream, const std::function<void()>& enqueue);
    ~Graph();
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    void launch(const Stream& stream) const;

private:
    void* exec_ = nullptr; // CUgraphExec
};

// cuLaunchKernel with one DevicePtr argument per kernel parameter.
void launch(void* function, const std::array<unsigned, 3>& grid,
            const std::array<unsigned, 3>& block, const Stream& stream, DevicePtr* args,
            std::size_t num_args);

} // namespace hedra::backend::cuda
