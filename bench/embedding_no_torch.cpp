// Stands in for embedding_torch.cpp where libtorch was not found: no peer.
#include "bench/embedding_peer.hpp"

namespace hedra::bench {

std::unique_ptr<PeerEmbedding> make_torch_embedding(std::int64_t, std::int64_t, const float*,
                                                    const std::vector<std::int64_t>&,
                                                    const float*, int) {
    return nullptr;
}

} // namespace hedra::bench
