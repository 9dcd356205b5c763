// A caching device allocator (as PyTorch's): freed blocks go to per-size free lists instead of
// back to the driver, so a program run, or a training step, that needs the same sizes again
// allocates nothing (cuMemAlloc/cuMemFree synchronize the device and cost tens of microseconds).
// Sizes are rounded up (512 B granules below 1 MiB, 1 MiB granules above) so that nearby sizes
// share blocks. On out-of-memory the cache is returned to the driver and the allocation retried.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cuda/runtime/cuda_driver.hpp"

namespace hedra::backend::cuda {

struct AllocatorStats {
    std::uint64_t driver_allocations = 0; // cuMemAlloc calls
    std::uint64_t cache_hits = 0;         // allocations served from the cache
    std::size_t bytes_in_use = 0;
    std::size_t bytes_cached = 0;
};

class DeviceAllocator {
public:
    DeviceAllocator() = default;
    ~DeviceAllocator();
    DeviceAllocator(const DeviceAllocator&) = delete;
    DeviceAllocator& operator=(const DeviceAllocator&) = delete;

    // At least `bytes` (> 0); `granted` receives the rounded size to pass back to release.
    // Throws hedra::Error when the device is out of memory even after emptying the cache.
    DevicePtr allocate(std::size_t bytes, std::size_t& granted);
    void release(DevicePtr p, std::size_t granted);
    // Returns every cached block to the driver.
    void empty_cache();
    AllocatorStats stats() const;

    static std::size_t round_size(std::size_t bytes);

private:
    mutable std::mutex mutex_;
    std::multimap<std::size_t, DevicePtr> free_;
    AllocatorStats stats_;
};

// Device memory from a DeviceAllocator, returned to it on destruction (0 bytes: no memory).
class DeviceBuffer {
public:
    DeviceBuffer(DeviceAllocator& allocator, std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DevicePtr get() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    DeviceAllocator& allocator_;
    DevicePtr ptr_ = 0;
    std::size_t bytes_ = 0, granted_ = 0;
};

} // namespace hedra::backend::cuda
