// The gradients' device copies (see device_gradients.hpp).
#include "distributed/device_gradients.hpp"

#if HEDRA_HAS_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace hedra::distributed {

std::optional<DeviceGradients> device_gradients(const std::vector<HostArray>& grads) {
#if HEDRA_HAS_CUDA
    DeviceGradients out;
    for (const HostArray& g : grads) {
        const backend::CudaDeviceArray d = backend::cuda_device_array(g);
        if (d.address == 0 || (out.stream && d.stream != out.stream)) return std::nullopt;
        out.address.push_back(d.address);
        out.stream = d.stream;
    }
    return out;
#else
    (void)grads;
    return std::nullopt;
#endif
}

} // namespace hedra::distributed
