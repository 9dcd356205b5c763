// The peer of bench/train_step: the same training step in PyTorch's C++ API (libtorch), kept
// behind this small interface so that only train_step_torch.cpp includes torch's headers (and
// train_step_no_torch.cpp stands in when libtorch is not installed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hedra::bench {

class PeerStep {
public:
    virtual ~PeerStep() = default;
    // One SGD step (forward, cross-entropy, backward, update) on the batch; returns the loss.
    virtual double step() = 0;
};

// The model of a step: an MLP of dense layers sizes[0] -> ... -> sizes.back() with ReLU
// between them, or (sizes empty) the MNIST CNN with c0 and c1 channels and 10 classes.
struct PeerModel {
    std::vector<std::int64_t> sizes;
    std::int64_t c0 = 16, c1 = 32;
};

// The step over `batch` examples: images (batch, 784) f32 in row-major order (the CNN reads
// them as (batch, 1, 28, 28)), labels (batch) in [0, 10); `threads` intra-op threads (ATen's
// pool) and `blas_threads` OpenBLAS threads. Null when libtorch was not found.
std::unique_ptr<PeerStep> make_torch_step(const PeerModel& model, std::int64_t batch,
                                          const float* images, const std::int64_t* labels,
                                          int threads, int blas_threads);

// "libtorch <version>", or "" without libtorch.
std::string torch_description();

} // namespace hedra::bench
