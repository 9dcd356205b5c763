// Where a step's gradients are on the device: results of the cuda backend that the host has not
// read (cuda_device_array, backends/cuda/cuda_backend.hpp), with the stream their program ran on,
// so that a communicator that sums device memory (NCCL) sums them there, in place, on that
// stream: no copy to the host and back, and the update's program that reads them next finds the
// sums on the device.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/host_array.hpp"

namespace hedra::distributed {

struct DeviceGradients {
    std::vector<std::uint64_t> address; // per gradient
    void* stream = nullptr;             // a CUstream
};

// Nothing when any gradient is not such a result (another backend, one read on the host) or
// hedra was built without the cuda backend.
std::optional<DeviceGradients> device_gradients(const std::vector<HostArray>& grads);

} // namespace hedra::distributed
