// Which host arrays already have a copy on the device, so that data crosses the bus once:
// - the results of cuda programs: when the caller feeds a result back (a training step's new
//   parameters, or a memoized array that later graphs read), the device copy it came from is
//   used instead of an upload. Results are immutable HostArrays whose storage the backend
//   created; an entry lives as long as that storage (a weak pointer to its owner);
// - leaves of the lazy graph (host data wrapped by array()): uploaded once per node, kept while
//   the node lives.
// Entries whose owner died are dropped by sweep(), which returns their memory to the allocator.
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backends/cuda/runtime/device_allocator.hpp"
#include "core/node.hpp"

namespace hedra::backend::cuda {

class DeviceResidency {
public:
    // The device copy of `bytes` bytes at `host`, if one is registered and still alive.
    std::shared_ptr<DeviceBuffer> find_host(const void* host, std::size_t bytes) const;
    // `writable`: work on the device copy reaches the host array (its contents are copied from
    // there when read); not for a result whose host contents come from elsewhere (a graph's
    // staging).
    void add_host(const std::shared_ptr<void>& owner, const void* host,
                  std::shared_ptr<DeviceBuffer> device, bool writable = true);
    // find_host, for a writable copy only.
    std::shared_ptr<DeviceBuffer> find_writable_host(const void* host, std::size_t bytes) const;
    // Forgets the device copy of `host` (its device memory is about to be overwritten).
    void erase_host(const void* host) { host_.erase(host); }

    std::shared_ptr<DeviceBuffer> find_node(const NodePtr& node) const;
    void add_node(const NodePtr& node, std::shared_ptr<DeviceBuffer> device);

    void sweep();
    std::size_t size() const { return host_.size() + nodes_.size(); }

private:
    struct HostEntry {
        std::weak_ptr<void> owner;
        std::shared_ptr<DeviceBuffer> device;
        bool writable = true;
    };
    struct NodeEntry {
        std::weak_ptr<const Node> node;
        std::shared_ptr<DeviceBuffer> device;
    };
    std::unordered_map<const void*, HostEntry> host_;
    std::unordered_map<const Node*, NodeEntry> nodes_;
};

} // namespace hedra::backend::cuda
