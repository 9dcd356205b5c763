// The peer of bench/embedding: PyTorch's F.embedding forward and backward in its C++ API
// (libtorch), behind this interface so that only embedding_torch.cpp includes torch's headers
// (embedding_no_torch.cpp stands in without libtorch).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace hedra::bench {

class PeerEmbedding {
public:
    virtual ~PeerEmbedding() = default;
    // out = embedding(tokens, table); out.backward(cotangent); the table's gradient afterwards
    // (vocab × dim, row-major), the previous one cleared first.
    virtual const float* forward_backward() = 0;
};

// `table` vocab × dim, `tokens` n ids, `cotangent` n × dim; `threads` ATen threads. Null
// without libtorch.
std::unique_ptr<PeerEmbedding> make_torch_embedding(std::int64_t vocab, std::int64_t dim,
                                                    const float* table,
                                                    const std::vector<std::int64_t>& tokens,
                                                    const float* cotangent, int threads);

} // namespace hedra::bench
