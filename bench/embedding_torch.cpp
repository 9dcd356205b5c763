// The libtorch peer of bench/embedding: torch::embedding and its backward (a dense gradient,
// as nn.Embedding's default sparse=False gives). Only this file includes torch.
#include "bench/embedding_peer.hpp"

#include <torch/torch.h>

namespace hedra::bench {
namespace {

class TorchEmbedding : public PeerEmbedding {
public:
    TorchEmbedding(torch::Tensor table, torch::Tensor tokens, torch::Tensor cotangent, int threads)
        : table_(std::move(table)), tokens_(std::move(tokens)), cotangent_(std::move(cotangent)),
          threads_(threads) {}

    const float* forward_backward() override {
        at::set_num_threads(threads_);
        if (table_.grad().defined()) table_.mutable_grad().zero_();
        torch::Tensor out = torch::nn::functional::embedding(tokens_, table_);
        out.backward(cotangent_);
        return table_.grad().data_ptr<float>();
    }

private:
    torch::Tensor table_, tokens_, cotangent_;
    int threads_;
};

} // namespace

std::unique_ptr<PeerEmbedding> make_torch_embedding(std::int64_t vocab, std::int64_t dim,
                                                    const float* table,
                                                    const std::vector<std::int64_t>& tokens,
                                                    const float* cotangent, int threads) {
    at::set_num_threads(threads);
    auto n = static_cast<std::int64_t>(tokens.size());
    torch::Tensor t = torch::from_blob(const_cast<float*>(table), {vocab, dim}).clone();
    t.set_requires_grad(true);
    torch::Tensor ids = torch::from_blob(const_cast<std::int64_t*>(tokens.data()), {n},
                                         torch::TensorOptions().dtype(torch::kInt64))
                            .clone();
    torch::Tensor c = torch::from_blob(const_cast<float*>(cotangent), {n, dim}).clone();
    return std::make_unique<TorchEmbedding>(t, ids, c, threads);
}

} // namespace hedra::bench
