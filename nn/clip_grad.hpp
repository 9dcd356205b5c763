// Global-norm gradient clipping in the graph, as torch.nn.utils.clip_grad_norm_: the norm of all
// gradients together scales them down when it exceeds a bound. Computed inside the compiled step
// (a sum per gradient and a scale), so the host never reads the norm to decide.
#pragma once

#include <memory>
#include <vector>

#include "core/array.hpp"
#include "core/collective.hpp"

namespace hedra::nn {

struct ClippedGradients {
    std::vector<Array> grads; // same shapes and dtypes as the input gradients
    Array total_norm;         // rank 0, the norm before clipping
};

// total_norm = ||(||g_0||_2, ||g_1||_2, ...)||_2 (PyTorch's order: one norm per gradient, then
// the norm of those), and every gradient times min(1, max_norm / (total_norm + 1e-6)).
// max_norm must be positive and finite; `grads` must not be empty.
ClippedGradients clip_grad_norm(const std::vector<Array>& grads, double max_norm);

// Gradients of parameters some of which are split over the ranks of `group` (tensor
// parallelism): `sharded[i]` says whether gradient i is this rank's shard. The squared norms of
// the shards are summed over the group (one all-reduce in the graph), the others, equal on
// every rank, counted once, so every rank clips by the norm of the whole model's gradient.
// With pipeline stages as well, each stage's parameters are its own: `stages` sums every
// stage's squared norm, and `uncounted[i]` leaves out a gradient that another stage counts (the
// last stage's copy of a tied embedding).
struct GradientShards {
    std::shared_ptr<CollectiveGroup> group;
    std::vector<bool> sharded;
    std::shared_ptr<CollectiveGroup> stages;
    std::vector<bool> uncounted;
};
ClippedGradients clip_grad_norm(const std::vector<Array>& grads, double max_norm,
                                const GradientShards& shards);

} // namespace hedra::nn
