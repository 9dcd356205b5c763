// The caching device allocator (see device_allocator.hpp).
#include "backends/cuda/runtime/device_allocator.hpp"

namespace hedra::backend::cuda {

std::size_t DeviceAllocator::round_size(std::size_t bytes) {
    constexpr std::size_t kSmall = 512, kLarge = std::size_t(1) << 20;
    std::size_t unit = bytes < kLarge ? kSmall : kLarge;
    return (bytes + unit - 1) / unit * unit;
}

DeviceAllocator::~DeviceAllocator() {
    empty_cache();
}

DevicePtr DeviceAllocator::allocate(std::size_t bytes, std::size_t& granted) {
    granted = round_size(bytes);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (auto it = free_.find(granted); it != free_.end()) {
            DevicePtr p = it->second;
            free_.erase(it);
            ++stats_.cache_hits;
            stats_.bytes_cached -= granted;
            stats_.bytes_in_use += granted;
            return p;
        }
    }
    DevicePtr p = 0;
    if (!try_raw_allocate(granted, p)) {
        empty_cache();
        p = raw_allocate(granted); // throws with the device's free memory
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.driver_allocations;
    stats_.bytes_in_use += granted;
    return p;
}

void DeviceAllocator::release(DevicePtr p, std::size_t granted) {
    if (!p) return;
    std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace(granted, p);
    stats_.bytes_in_use -= granted;
    stats_.bytes_cached += granted;
}

void DeviceAllocator::empty_cache() {
    std::multimap<std::size_t, DevicePtr> blocks;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        blocks.swap(free_);
        stats_.bytes_cached = 0;
    }
    for (const auto& [size, p] : blocks)
        raw_free(p);
}

AllocatorStats DeviceAllocator::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

DeviceBuffer::DeviceBuffer(DeviceAllocator& allocator, std::size_t bytes)
    : allocator_(allocator), bytes_(bytes) {
    if (bytes > 0) ptr_ = allocator.allocate(bytes, granted_);
}

DeviceBuffer::~DeviceBuffer() {
    allocator_.release(ptr_, granted_);
}

} // namespace hedra::backend::cuda
