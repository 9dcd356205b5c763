// Global-norm gradient clipping in the graph, as torch.nn.utils.clip_grad_norm_: the norm of all
// gradients together scales them down when it exceeds a bound. Computed inside the compiled step
// (a sum per gradient and a scale), so the host never reads the norm to decide.
#pragma once

#include <vector>

#include "core/array.hpp"

namespace hedra::nn {

struct ClippedGradients {
    std::vector<Array> grads; // same shapes and dtypes as the input gradients
    Array total_norm;         // rank 0, the norm before clipping
};

// total_norm = ||(||g_0||_2, ||g_1||_2, ...)||_2 (PyTorch's order: one norm per gradient, then
// the norm of those), and every gradient times min(1, max_norm / (total_norm + 1e-6)).
// max_norm must be positive and finite; `grads` must not be empty.
ClippedGradients clip_grad_norm(const std::vector<Array>& grads, double max_norm);

} // namespace hedra::nn
