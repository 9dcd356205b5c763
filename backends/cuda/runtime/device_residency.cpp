// Device copies of host arrays and graph leaves (see device_residency.hpp). Not thread-safe:
// the cuda backend calls it under its device lock.
#include "backends/cuda/runtime/device_residency.hpp"

namespace hedra::backend::cuda {

std::shared_ptr<DeviceBuffer> DeviceResidency::find_host(const void* host,
                                                         std::size_t bytes) const {
    auto it = host_.find(host);
    if (it == host_.end() || it->second.owner.expired() || it->second.device->bytes() != bytes)
        return nullptr;
    return it->second.device;
}

void DeviceResidency::add_host(const std::shared_ptr<void>& owner, const void* host,
                               std::shared_ptr<DeviceBuffer> device, bool writable) {
    host_[host] = {owner, std::move(device), writable};
}

std::shared_ptr<DeviceBuffer> DeviceResidency::find_writable_host(const void* host,
                                                                  std::size_t bytes) const {
    auto it = host_.find(host);
    if (it == host_.end() || !it->second.writable) return nullptr;
    return find_host(host, bytes);
}

std::shared_ptr<DeviceBuffer> DeviceResidency::find_node(const NodePtr& node) const {
    auto it = nodes_.find(node.get());
    if (it == nodes_.end() || it->second.node.lock() != node) return nullptr;
    return it->second.device;
}

void DeviceResidency::add_node(const NodePtr& node, std::shared_ptr<DeviceBuffer> device) {
    nodes_[node.get()] = {node, std::move(device)};
}

void DeviceResidency::sweep() {
    std::erase_if(host_, [](const auto& e) { return e.second.owner.expired(); });
    std::erase_if(nodes_, [](const auto& e) { return e.second.node.expired(); });
}

} // namespace hedra::backend::cuda
