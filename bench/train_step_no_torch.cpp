// Stands in for train_step_torch.cpp where libtorch was not found: no peer.
#include "bench/train_step_peer.hpp"

namespace hedra::bench {

std::unique_ptr<PeerStep> make_torch_step(const PeerModel&, std::int64_t, const float*,
                                          const std::int64_t*, int, int) {
    return nullptr;
}

std::string torch_description() {
    return "";
}

} // namespace hedra::bench
